"""inspect_ai evaluation logs as runs, read through ``inspect_ai.log`` (the optional extra: ``pip install -r
requirements-inspect.txt``).

A source ``inspect:PATH`` (options as for ``lmeval:``, see ``lm_logs``) names a log file (``.eval`` or
``.json``) or a folder of them; each model of the logs (``eval.model``) is one run, each task a split (or
``split=...`` as for lm-evaluation-harness). Per sample and epoch, one item:

* right or wrong from the score of the scorer (``scorer=NAME``, default the log's first): ``C``/``I``, 1/0 or
  true/false; ``N`` (inspect's NOANSWER: the model gave no answer) is the model's own abstention; a
  partial score (``P``, 0.5) is an error, naming the log, the sample and the scorer.
* multiple choice (the sample has ``choices``): the prediction is the letter the scorer read (its
  ``answer``), the truth the target letter; classes are the choice positions ``"0"``, ``"1"``, ... A wrong
  score with no letter read (an output without "ANSWER: X") is an error: there is no choice to act on.
  A choice whose text is ``idk=TEXT`` is the model declining. A declined question's prediction is its top
  real choice, so that a false abstention (that choice was right) is counted: with ``confidence=logprobs``
  the most probable letter other than "I don't know", else the real letter it answered; a NOANSWER (empty
  answer) without log-probabilities naming a letter has no top choice and is never a false abstention.
* the confidence: ``confidence=logprobs`` reads the output's log-probabilities (generated with
  ``logprobs=True, top_logprobs=K``): for a choice, the softmax over the real choices' letters (not
  "I don't know", as for lm-evaluation-harness) among the top log-probabilities at the answer's letter
  token; for a generated answer, the probability of the whole completion (the exponential of the sum of its
  tokens' log-probabilities). ``confidence=FIELD`` reads a number in [0, 1] from the score's or the sample's
  metadata; ``confidence=none``: every answer equally sure.
* ``refusal=TEXT``: an answer (the output's completion) equal to TEXT is declined.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

from .lm_logs import GENERATED_CLASSES, LmLogOptions, _FileErrors, _Item, _model_run, _split_of, _Unscorable
from .runfiles import LoadProblem, LoadReport

__all__ = ["read_inspect"]

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_RIGHT = {"C": True, "I": False, 1: True, 0: False}  # 1.0 and True are the key 1, 0.0 and False 0


def _log_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in (".eval", ".json"))
    return [path]


def _score(sample, options: LmLogOptions):
    scores = sample.scores or {}
    if not scores:
        raise _Unscorable("scores", "is empty: the sample was not scored")
    name = options.metric or next(iter(scores))
    if name not in scores:
        raise _Unscorable(f"scores.{name}", f"is missing (the sample has {', '.join(sorted(scores))})")
    return name, scores[name]


def _right(value, name: str):
    """True / False for a right / wrong answer, None for NOANSWER."""
    if value == "N":
        return None
    try:
        return _RIGHT[value]
    except (KeyError, TypeError):
        raise _Unscorable(f"scores.{name}", f"is {value!r}: right or wrong needs C/I, 1/0 or true/false "
                                            "(N: no answer)") from None


def _position(letter: str, letters: str) -> int | None:
    """The choice position of one letter, None for anything else (an empty answer is no letter)."""
    return letters.index(letter) if len(letter) == 1 and letter in letters else None


def _letter_probabilities(sample, letters: str, is_idk: list[bool]) -> list[float]:
    """Softmax over the real choices' letters (the "I don't know" ones get 0) at the answer's letter token, from
    its top log-probabilities: the probability over the real choices only, renormalised, as for
    lm-evaluation-harness."""
    choices = sample.output.choices
    logprobs = choices[0].logprobs if choices else None
    if logprobs is None or not logprobs.content:
        raise _Unscorable("output.choices[0].logprobs", "is not logged (generate with logprobs=True and "
                                                        "top_logprobs=K, or give confidence=FIELD)")
    for token in reversed(logprobs.content):
        if _position(token.token.strip(), letters) is not None and token.top_logprobs:
            found = {}
            for top in token.top_logprobs:
                k = _position(top.token.strip(), letters)
                if k is not None and not is_idk[k] and k not in found:
                    found[k] = top.logprob
            if not found:
                break
            peak = max(found.values())
            if not math.isfinite(peak) or any(math.isnan(v) for v in found.values()):
                shown = ", ".join(f"{_LETTERS[k]} {v}" for k, v in sorted(found.items()))
                raise _Unscorable("output.choices[0].logprobs", f"holds top log-probabilities {shown}: the letters' "
                                                                "probabilities need numbers, one of them finite")
            # -inf (a letter of probability 0) is allowed: its weight is exp(-inf) = 0.0.
            weights = [math.exp(found[k] - peak) if k in found else 0.0 for k in range(len(letters))]
            total = sum(weights)
            return [w / total for w in weights]
    raise _Unscorable("output.choices[0].logprobs", "holds no answer letter with top log-probabilities")


def _confidence(sample, score, options: LmLogOptions) -> float:
    wanted = options.confidence
    if wanted is None:
        raise _Unscorable("confidence", "is not chosen: give confidence=logprobs, confidence=FIELD (score or "
                                        "sample metadata) or confidence=none")
    if wanted == "none":
        return 1.0
    if wanted == "logprobs":
        choices = sample.output.choices
        logprobs = choices[0].logprobs if choices else None
        if logprobs is None or not logprobs.content:
            raise _Unscorable("output.choices[0].logprobs", "is not logged (generate with logprobs=True)")
        total = sum(token.logprob for token in logprobs.content)
        if not total <= 0.0:  # NaN, or a probability above 1 (math.exp overflows beyond 709)
            raise _Unscorable("output.choices[0].logprobs", f"sums to {total}: the log-probability of a completion "
                                                            "is a number of at most 0")
        return math.exp(total)
    for where, metadata in (("score.metadata", score.metadata), ("metadata", sample.metadata)):
        if metadata and wanted in metadata:
            value = metadata[wanted]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise _Unscorable(f"{where}.{wanted}", f"is {value!r}, not a number in [0, 1]")
            return float(value)
    raise _Unscorable(wanted, "is in neither the score's nor the sample's metadata")


def _declined_prediction(sample, letters: str, answer: str, truth: int, is_idk: list[bool],
                         options: LmLogOptions) -> int:
    """The letter a declining model would have given, so that a false abstention (it was right) is counted: the
    most probable real choice (not "I don't know"; the first on ties) by the log-probabilities, as for
    lm-evaluation-harness; without them the real choice it answered. A model that named no real choice (inspect's
    NOANSWER, an empty answer) has no top choice: it gets a position other than the right one ("I don't know"
    first), so that the question counts neither as right nor as a false abstention."""
    if options.confidence == "logprobs":
        try:
            probabilities = _letter_probabilities(sample, letters, is_idk)
        except _Unscorable:  # a decline needs no confidence: it is handed over whatever the threshold
            probabilities = None
        if probabilities is not None:
            return max((k for k in range(len(letters)) if not is_idk[k]), key=lambda k: (probabilities[k], -k))
    answered = _position(answer, letters)
    if answered is not None and not is_idk[answered]:
        return answered
    return min((k for k in range(len(letters)) if k != truth), key=lambda k: (not is_idk[k], k))


def _item(sample, task: str, options: LmLogOptions) -> _Item:
    name, score = _score(sample, options)
    right = _right(score.value, name)
    completion = (sample.output.completion or "").strip().casefold() if sample.output else ""
    declined = right is None or completion in {t.casefold() for t in options.refusal}
    doc_id = f"{sample.id}" if sample.epoch in (None, 1) else f"{sample.id}#{sample.epoch}"
    split = _split_of({"doc": sample.metadata or {}}, task, doc_id, options)
    if sample.choices:
        letters = _LETTERS[: len(sample.choices)]
        target = sample.target if isinstance(sample.target, str) else "".join(sample.target)
        truth = _position(target, letters)
        if truth is None:
            raise _Unscorable("target", f"is {target!r}: one choice letter ({letters[0]} to {letters[-1]}) is scored")
        idk = {t.casefold() for t in options.idk}
        is_idk = [text.casefold() in idk for text in sample.choices]
        if len(letters) < 2 or all(is_idk):
            raise _Unscorable("choices", "hold no two choices, or only 'I don't know' options: nothing is chosen")
        answer = (score.answer or "").strip()
        answered = _position(answer, letters)
        declined = declined or (answered is not None and is_idk[answered])
        if declined:
            predicted, confidence = _declined_prediction(sample, letters, answer, truth, is_idk, options), 0.0
        elif answered is None:
            read = "is empty: the scorer read no choice letter in the output" if not answer else \
                f"is {answer!r}, not one of the choice letters {letters}"
            raise _Unscorable(f"scores.{name}.answer", read)
        else:
            predicted = answered
            if options.confidence == "logprobs":
                confidence = _letter_probabilities(sample, letters, is_idk)[predicted]
            else:
                confidence = _confidence(sample, score, options)
            if right != (answered == truth):
                raise _Unscorable(f"scores.{name}", f"says {score.value!r} for answer {answer} and target {target}")
        return _Item(task, doc_id, split, str(truth), str(predicted), confidence, declined, "choice", len(letters))
    confidence = 0.0 if declined else _confidence(sample, score, options)
    truth = GENERATED_CLASSES[0] if right else GENERATED_CLASSES[1]
    return _Item(task, doc_id, split, truth, GENERATED_CLASSES[0], confidence, declined, "generated")


def read_inspect(path, options: LmLogOptions | None = None, display: str | None = None) -> LoadReport:
    """The models of inspect_ai logs (a log file or a folder of them) as a :class:`LoadReport`."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ImportError("reading inspect_ai logs needs inspect_ai: pip install -r requirements-inspect.txt") \
            from None
    options = options or LmLogOptions()
    path = Path(path)
    display = display or str(path)
    if not path.exists():
        return LoadReport({}, (LoadProblem(display, "no such file or folder"),))
    by_model: dict[str, list[_Item]] = {}
    digests: dict[str, "hashlib._Hash"] = {}
    problems: list[LoadProblem] = []
    for file in _log_files(path):
        shown_as = f"{display}/{file.name}" if path.is_dir() else display
        try:
            log = read_eval_log(str(file))
        except Exception as exc:  # inspect_ai raises its own and pydantic's errors for a file it cannot read
            problems.append(LoadProblem(shown_as, f"cannot be read as an inspect_ai log ({type(exc).__name__})"))
            continue
        if log.status != "success" or not log.samples:
            problems.append(LoadProblem(shown_as, f"is a log of status {log.status!r} with "
                                                  f"{len(log.samples or [])} samples: only a finished evaluation "
                                                  "is read"))
            continue
        errors, items = _FileErrors(shown_as), []
        for number, sample in enumerate(log.samples, start=1):
            try:
                if sample.error is not None:
                    raise _Unscorable("error", "is set: the sample failed to run")
                items.append(_item(sample, log.eval.task, options))
            except _Unscorable as error:
                errors.add(number, error)
        found = errors.problems()
        problems += [LoadProblem(p.file, p.message.replace("line", "sample", 1), p.column) for p in found]
        if not found:
            by_model.setdefault(log.eval.model, []).extend(items)
            digests.setdefault(log.eval.model, hashlib.sha256()).update(file.read_bytes())
    if any(p.severity == "error" for p in problems):
        return LoadReport({}, tuple(problems))
    models = {}
    for model, items in by_model.items():
        if len({item.kind for item in items}) > 1:
            problems.append(LoadProblem(display, f"model {model} mixes multiple-choice and generated tasks; read "
                                                 "them as two sources"))
            continue
        models[model] = _model_run(model, display, digests[model].hexdigest(), items)
    if not models and not problems:
        problems.append(LoadProblem(display, "holds no inspect_ai log (.eval or .json)"))
    return LoadReport(models, tuple(problems))
