"""Language-model evaluation logs as runs: lm-evaluation-harness's per-sample logs (``--log_samples``).

A source ``lmeval:PATH`` (options in brackets, ``lmeval[split=val-test,idk=I don't know]:PATH``) names
one model: a folder the harness wrote (``OUTPUT/<model>/samples_<task>_<date>.jsonl``, one file per task)
or one such file; the model is named after the folder. Each logged sample becomes one item:

* **Multiple choice** (one log-likelihood per choice, ``filtered_resps`` = ``[[ll, is_greedy], ...]``):
  the probabilities over the choices are the softmax of the log-likelihoods (``acc`` style), or of the
  log-likelihoods divided by each choice's length in characters (``scoring=acc_norm``, the harness's
  ``acc_norm``); the prediction is the most probable choice (the first on ties, as the harness's
  argmax), its confidence that probability, the truth the logged ``target``. Classes are the choice
  positions ``"0"``, ``"1"``, ... The harness's own per-sample ``acc`` / ``acc_norm`` must agree with
  the recomputed answer: a disagreement means the log was not read as written, and is an error.
* **Generated answers** (text in ``filtered_resps``): right or wrong from a logged 0/1 metric
  (``exact_match``, ``acc`` or ``metric=NAME``), the confidence from a logged field (``confidence=FIELD``,
  a top-level key or ``doc.FIELD``) in [0, 1]. Classes are ``"answer"`` (every prediction) and ``"not the
  answer"`` (the truth of a wrong one), so a rule per class is one threshold, as it should be.

An answer the model itself declined is its own abstention, always a hand-off
(``Predictions.model_abstained``): in a multiple-choice task, its most probable choice is an "I don't
know" option (``idk=TEXT``, a choice whose text is TEXT; several with ``|``); the probabilities are then
those of the other choices, and its prediction the best of them, so that a false abstention (declined,
yet that choice was right) can be counted. A generated answer equal to ``refusal=TEXT`` is declined.

Tasks become splits (``split=task``, the default), or ``split=doc.FIELD`` (e.g. ``doc.subject``),
``split=val-test`` (each question to ``val`` or ``test`` by a hash of its task and ``doc_id``, the same for
every model), or ``split=NAME`` (everything in one split). Several filters of one task (e.g. gsm8k's
``strict-match`` and ``flexible-extract``) need ``filter=NAME``. Anything that cannot be scored is an
error naming the file, the field and the lines.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._model.predictions import Predictions
from .limits import clip_text
from .log_sources import _SOURCE, is_log_source, log_source_inputs, split_log_source
from .format import max_file_bytes, too_large_message
from .runfiles import LoadProblem, LoadReport, ModelRun

__all__ = ["LmLogOptions", "abstention_counts", "abstention_notes", "is_log_source", "log_source_inputs",
           "parse_log_source", "read_lmeval", "split_log_source"]

LMEVAL = "lmeval"
GENERATED_CLASSES = ("answer", "not the answer")
# The harness names its per-task logs samples_<task>_<date>.jsonl, <date> being isoformat() with '-' for ':'.
_SAMPLES_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl$")
_LINES_SHOWN = 5
# Per-sample correctness of a generated answer, in the order tried when no metric= is given.
_CORRECTNESS_METRICS = ("exact_match", "acc", "em")


@dataclass(frozen=True)
class LmLogOptions:
    """How a log is read (see the module's text)."""

    split: str = "task"
    scoring: str = "acc"
    filter: str | None = None
    idk: tuple[str, ...] = ()
    refusal: tuple[str, ...] = ()
    metric: str | None = None
    confidence: str | None = None

    @classmethod
    def parse(cls, text: str | None) -> "LmLogOptions":
        """From ``key=value,key=value`` (``idk`` and ``refusal`` take several texts joined by ``|``)."""
        given: dict = {}
        for part in filter(None, (text or "").split(",")):
            key, sep, value = part.partition("=")
            key = key.strip()
            if not sep or key not in cls.__dataclass_fields__:
                raise ValueError(f"unknown log option {clip_text(part)!r}; expected key=value with a key among "
                                 f"{sorted(cls.__dataclass_fields__)}")
            given[key] = tuple(v.strip() for v in value.split("|") if v.strip()) if key in ("idk", "refusal") \
                else value.strip()
        options = cls(**given)
        if options.scoring not in ("acc", "acc_norm"):
            raise ValueError(f"scoring must be acc or acc_norm, got {clip_text(options.scoring)!r}")
        if not options.split:
            raise ValueError("split needs a value: task, doc.FIELD, val-test or a split name")
        return options


def parse_log_source(text: str) -> tuple[str, LmLogOptions, str]:
    """(kind, options, path) of a log source; ValueError for bad options."""
    found = _SOURCE.match(text)
    if found is None:
        raise ValueError(f"{clip_text(text)}: not an evaluation-log source (lmeval:PATH or inspect:PATH)")
    return found["kind"], LmLogOptions.parse(found["options"]), found["path"]


# ---------------------------------------------------------------------------------------- one sample
class _Unscorable(Exception):
    """A sample that cannot be scored: ``field`` (as the log names it) and why."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


@dataclass
class _Item:
    task: str
    doc_id: str
    split: str
    truth: str
    predicted: str
    confidence: float
    declined: bool
    kind: str  # "choice" or "generated"
    n_choices: int = 0


def _number(value, where: str) -> float:
    if isinstance(value, bool):
        raise _Unscorable(where, f"holds {value!r}, not a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise _Unscorable(where, f"holds {clip_text(repr(value))}, not a number") from None
    except OverflowError:  # an integer beyond the largest float: as infinite as 1e400
        raise _Unscorable(where, f"holds an integer of {len(str(abs(value)))} digits, not a finite number") from None
    if not math.isfinite(number):
        raise _Unscorable(where, f"holds {number}, not a finite number")
    return number


def _position_number(text: str) -> int | None:
    """The whole number ``text`` writes in ASCII digits (surrounding spaces aside), None for anything else:
    ``str.isdigit`` also passes "²" and other digits ``int`` refuses, and ``int`` refuses more digits than
    ``sys.get_int_max_str_digits()``; no position of a choice needs as many as 18."""
    text = text.strip()
    return int(text) if 0 < len(text) <= 18 and text.isascii() and text.isdecimal() else None


def _request_order(key: str) -> int:
    """``gen_args_i`` in the order of ``i``; a key without a number first."""
    number = _position_number(key.rsplit("_", 1)[-1])
    return -1 if number is None else number


def _choices(sample: dict) -> list[str] | None:
    """The continuation of each request (``arguments.gen_args_i.arg_1``), None when not a choice task."""
    arguments = sample.get("arguments")
    if isinstance(arguments, dict):  # as save_results_samples writes it
        requests = [arguments[k] for k in sorted(arguments, key=_request_order)]
        texts = [r.get("arg_1") if isinstance(r, dict) else None for r in requests]
    elif isinstance(arguments, list):  # the in-memory layout (evaluate(..., log_samples=True))
        texts = [r[1] if isinstance(r, (list, tuple)) and len(r) > 1 else None for r in arguments]
    else:
        return None
    return texts if texts and all(isinstance(t, str) for t in texts) else None


def _loglikelihoods(sample: dict) -> np.ndarray | None:
    """``filtered_resps`` as one log-likelihood per choice (``[ll, is_greedy]`` pairs); None for text answers."""
    responses = sample.get("filtered_resps")
    if not isinstance(responses, list) or not responses:
        raise _Unscorable("filtered_resps", "is missing or empty")
    if all(isinstance(r, (list, tuple)) and len(r) == 2 for r in responses):
        return np.array([_number(r[0], "filtered_resps") for r in responses])
    return None


def _gold_index(target, choices: list[str]) -> int:
    if isinstance(target, bool):
        raise _Unscorable("target", f"holds {target!r}, neither a choice number nor a choice text")
    if isinstance(target, int) and 0 <= target < len(choices):
        return target
    if isinstance(target, str):
        # The harness reads a text target as a choice's text (choices.index(gold)); the log holds each choice
        # after the target delimiter, which the strip removes. A number written as text is a position.
        stripped = [c.strip() for c in choices]
        if target.strip() in stripped:
            return stripped.index(target.strip())
        position = _position_number(target)
        if position is not None and position < len(choices):
            return position
    if isinstance(target, list):
        raise _Unscorable("target", f"names several right choices {clip_text(repr(target))}; one answer is scored "
                                    "against one right choice")
    raise _Unscorable("target", f"holds {clip_text(repr(target))}, neither a choice number (0 to "
                                f"{len(choices) - 1}) nor one of the choices")


def _softmax(scores: np.ndarray) -> np.ndarray:
    # Finite scores more than the largest float apart (-1e308 and 1e308) differ by -inf: exp gives the 0.0 that
    # the exact exp(-2e308) rounds to, so the overflow changes nothing and is not worth a warning.
    with np.errstate(over="ignore"):
        shifted = np.exp(scores - scores.max())
    return shifted / shifted.sum()


def _choice_item(sample: dict, choices: list[str], lls: np.ndarray, options: LmLogOptions) -> tuple:
    """(truth, predicted, confidence, declined) of a multiple-choice sample."""
    if lls.shape[0] != len(choices):
        raise _Unscorable("filtered_resps", f"holds {lls.shape[0]} log-likelihoods for {len(choices)} choices")
    if len(choices) < 2:
        raise _Unscorable("filtered_resps", "holds one log-likelihood: a loglikelihood task has no choice to score")
    scores = lls
    if options.scoring == "acc_norm":
        # The harness divides by len(choice); the log holds the continuation, the target delimiter (default
        # " ") before the choice, which the strip removes.
        lengths = np.array([max(len(c.lstrip()), 1) for c in choices], dtype=float)
        scores = lls / lengths
    gold = _gold_index(sample.get("target"), choices)
    logged = sample.get(options.scoring)
    top = int(np.argmax(scores))
    if logged is not None and _number(logged, options.scoring) != float(top == gold):
        raise _Unscorable(options.scoring, f"is {logged} in the log, but the highest {options.scoring}-style "
                                           f"score picks choice {top} against target {gold}: the log was not "
                                           "written as the harness writes it (or another scoring was logged)")
    idk = {t.casefold() for t in options.idk}
    is_idk = np.array([c.strip().casefold() in idk for c in choices])
    if is_idk.all():
        raise _Unscorable("arguments", "every choice is an 'I don't know' option")
    answer = np.flatnonzero(~is_idk)
    proba = _softmax(scores[answer])
    best = int(np.argmax(proba))
    return str(gold), str(int(answer[best])), float(proba[best]), bool(is_idk[top])


def _field(sample: dict, name: str):
    if name.startswith("doc."):
        doc = sample.get("doc")
        return doc.get(name[4:]) if isinstance(doc, dict) else None
    return sample.get(name)


def _generated_item(sample: dict, options: LmLogOptions) -> tuple:
    """(truth, predicted, confidence, declined) of a generated answer."""
    names = (options.metric,) if options.metric else _CORRECTNESS_METRICS
    metric = next((name for name in names if sample.get(name) is not None), None)
    if metric is None:
        raise _Unscorable(options.metric or "exact_match",
                          "is not logged: a generated answer needs a per-sample 0/1 metric "
                          f"({', '.join(names)}; name another with metric=NAME)")
    value = _number(sample[metric], metric)
    if value not in (0.0, 1.0):
        raise _Unscorable(metric, f"is {value}: right or wrong needs 0 or 1 (name a 0/1 metric with metric=NAME)")
    if options.confidence is None:
        raise _Unscorable("confidence", "is not logged for a generated answer: name the logged field with "
                                        "confidence=FIELD (or confidence=none: every answer equally sure, "
                                        "so a rule can only answer all or none)")
    if options.confidence == "none":
        confidence = 1.0
    else:
        confidence = _number(_field(sample, options.confidence), options.confidence)
        if not 0.0 <= confidence <= 1.0:
            raise _Unscorable(options.confidence, f"is {confidence}, outside [0, 1]")
    answer = sample.get("filtered_resps")[0]
    refused = {t.casefold() for t in options.refusal}
    declined = isinstance(answer, str) and answer.strip().casefold() in refused
    return GENERATED_CLASSES[0] if value == 1.0 else GENERATED_CLASSES[1], GENERATED_CLASSES[0], confidence, declined


def _split_of(sample: dict, task: str, doc_id: str, options: LmLogOptions) -> str:
    if options.split == "task":
        return task
    if options.split == "val-test":  # by the question, not the model: every model's halves hold the same items
        return "val" if hashlib.sha256(f"{task}\x00{doc_id}".encode()).digest()[0] % 2 == 0 else "test"
    if options.split.startswith("doc."):
        value = _field(sample, options.split)
        if value is None or isinstance(value, (dict, list)):
            raise _Unscorable(options.split, "is missing, or not a single value to name a split by")
        return str(value)
    return options.split


def _item(sample, task: str, options: LmLogOptions) -> _Item:
    if not isinstance(sample, dict):
        raise _Unscorable("(line)", "is not a JSON object")
    if "doc_id" not in sample:
        raise _Unscorable("doc_id", "is missing")
    doc_id = str(sample["doc_id"])
    choices = _choices(sample)
    lls = _loglikelihoods(sample)
    if lls is not None and choices is not None:
        kind, (truth, predicted, confidence, declined) = "choice", _choice_item(sample, choices, lls, options)
    elif lls is None:
        kind, (truth, predicted, confidence, declined) = "generated", _generated_item(sample, options)
    else:
        raise _Unscorable("arguments", "has no continuation (arg_1) for each log-likelihood")
    return _Item(task, doc_id, _split_of(sample, task, doc_id, options), truth, predicted, confidence, declined,
                 kind, len(choices) if kind == "choice" else 0)


# ---------------------------------------------------------------------------------------- files
@dataclass
class _FileErrors:
    display: str
    lines: dict = field(default_factory=dict)  # (field, message) -> line numbers

    def add(self, line: int, error: _Unscorable) -> None:
        self.lines.setdefault((error.field, error.message), []).append(line)

    def problems(self) -> list[LoadProblem]:
        found = []
        for (name, message), lines in self.lines.items():
            shown = ", ".join(str(n) for n in lines[:_LINES_SHOWN])
            more = f" (and {len(lines) - _LINES_SHOWN} more)" if len(lines) > _LINES_SHOWN else ""
            label = "line" if len(lines) == 1 else "lines"
            found.append(LoadProblem(self.display, f"{label} {shown}{more}: field {name} {message}", column=name))
        return found


def _samples_files(path: Path, display: str) -> tuple[list[tuple[str, Path]], list[LoadProblem]]:
    """(task, file) of each per-task log of a folder (or the one file), in name order."""
    files = sorted(path.glob("samples_*.jsonl")) if path.is_dir() else [path]
    found, problems, dates = [], [], {}
    for file in files:
        match = _SAMPLES_FILE.match(file.name)
        if match is None:
            problems.append(LoadProblem(f"{display}/{file.name}" if path.is_dir() else display,
                                        "is not named as lm-evaluation-harness names its per-sample logs "
                                        "(samples_<task>_<date>.jsonl)"))
            continue
        task = match["task"]
        if task in dates:
            problems.append(LoadProblem(display, f"holds two logs of task {task!r} ({dates[task]} and "
                                                 f"{match['date']}): keep the one to read"))
            continue
        dates[task] = match["date"]
        found.append((task, file))
    if path.is_dir() and not files:
        problems.append(LoadProblem(display, "holds no samples_<task>_<date>.jsonl file (run lm-evaluation-harness "
                                             "with --log_samples and --output_path)"))
    return found, problems


def _read_file(task: str, file: Path, shown_as: str, options: LmLogOptions, digest) -> tuple[list, list]:
    size = file.stat().st_size
    if size > max_file_bytes():
        return [], [LoadProblem(shown_as, too_large_message(size))]
    data = file.read_bytes()
    digest.update(file.name.encode() + b"\x00" + data)
    errors, items, seen, filters = _FileErrors(shown_as), [], {}, set()
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            sample = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.add(number, _Unscorable("(line)", f"is not JSON ({exc.msg})"))
            continue
        except RecursionError:
            errors.add(number, _Unscorable("(line)", "is nested too deeply to be a logged sample"))
            continue
        except ValueError:  # json's only other refusal: an integer longer than int() reads
            errors.add(number, _Unscorable("(line)", f"holds an integer of more than {sys.get_int_max_str_digits()} "
                                                     "digits, not a number a log holds"))
            continue
        logged_filter = sample.get("filter") if isinstance(sample, dict) else None
        if isinstance(logged_filter, (list, dict)):
            errors.add(number, _Unscorable("filter", f"holds {clip_text(repr(logged_filter))}, not a filter's name"))
            continue
        if options.filter is not None and logged_filter is not None and logged_filter != options.filter:
            continue
        filters.add(logged_filter)
        try:
            item = _item(sample, task, options)
        except _Unscorable as error:
            errors.add(number, error)
            continue
        key = (logged_filter, item.doc_id)
        if key in seen:
            errors.add(number, _Unscorable("doc_id", f"{clip_text(item.doc_id)} was logged already at line "
                                                     f"{seen[key]}"))
            continue
        seen[key] = number
        items.append(item)
    problems = errors.problems()
    if len(filters) > 1:
        names = ", ".join(sorted(repr(f) for f in filters))
        return [], [LoadProblem(shown_as, f"logs each answer under several filters ({names}): choose one "
                                          "with filter=NAME", column="filter")]
    if options.filter is not None and not filters and not problems:
        problems.append(LoadProblem(shown_as, f"holds no sample of filter {clip_text(options.filter)!r}",
                                    column="filter"))
    return items, problems


def read_lmeval(path, options: LmLogOptions | None = None, display: str | None = None) -> LoadReport:
    """One model's lm-evaluation-harness per-sample logs (a folder or one file) as a :class:`LoadReport`.

    The model is named after the folder (the harness's ``<output_path>/<model>``); a file with an error
    is reported (file, field, lines) and the model is not loaded.
    """
    options = options or LmLogOptions()
    path = Path(path)
    display = display or str(path)
    if not path.exists():
        return LoadReport({}, (LoadProblem(display, "no such file or folder"),))
    files, problems = _samples_files(path, display)
    digest = hashlib.sha256()
    items: list[_Item] = []
    for task, file in files:
        shown_as = f"{display}/{file.name}" if path.is_dir() else display
        read, found = _read_file(task, file, shown_as, options, digest)
        items += read
        problems += found
    model = (path if path.is_dir() else path.parent).resolve().name or "model"
    if any(p.severity == "error" for p in problems):
        return LoadReport({}, tuple(problems))
    kinds = {item.kind for item in items}
    if len(kinds) > 1:
        mixed = sorted({item.task for item in items if item.kind == "generated"})
        return LoadReport({}, (*problems, LoadProblem(display, "mixes multiple-choice tasks with tasks of generated "
                                                               f"answers ({', '.join(mixed)}); read them as two "
                                                               "sources, each with its own tasks")))
    if not items:
        return LoadReport({}, (*problems, LoadProblem(display, "holds no sample to score")))
    run = _model_run(model, display, digest.hexdigest(), items)
    return LoadReport({model: run}, tuple(problems))


def _model_run(model: str, display: str, sha: str, items: list[_Item]) -> ModelRun:
    if items[0].kind == "generated":
        classes = GENERATED_CLASSES
    else:
        classes = tuple(str(k) for k in range(max(i.n_choices for i in items)))
    splits: dict[str, Predictions] = {}
    for split in dict.fromkeys(item.split for item in items):
        mine = [item for item in items if item.split == split]
        splits[split] = Predictions.from_top_label(
            [i.predicted for i in mine], [i.confidence for i in mine], [i.truth for i in mine], classes=classes,
            ids=np.array([f"{i.task}/{i.doc_id}" for i in mine], dtype=object),
            model_abstained=np.array([i.declined for i in mine], dtype=bool),
        )
    return ModelRun(model=model, path=display, sha256=sha, classes=classes, splits=splits)


# ---------------------------------------------------------------------------------------- summaries
def abstention_counts(predictions: Predictions) -> tuple[float, float, float]:
    """(items, the model's own abstentions, false abstentions: declined yet its top choice was right),
    weighted; a false abstention needs labels (NaN without)."""
    declined = predictions.model_abstained
    weight = predictions.sample_weight
    false = float(weight[declined & predictions.correct].sum()) if predictions.has_labels else float("nan")
    return predictions.total_weight, float(weight[declined].sum()), false


def abstention_notes(models) -> list[str]:
    """One line per split of a model holding its own abstentions: how many, and how many were false."""
    notes = []
    for run in models.values():
        for split, predictions in run.splits.items():
            if not predictions.has_model_abstentions:
                continue
            n, declined, false = abstention_counts(predictions)
            notes.append(f"model {run.model}, split {split}: the model itself declined {declined:g} of {n:g} "
                         f"questions (always handed over; thresholds apply to its answers); of them {false:g} "
                         f"false abstention{'' if false == 1 else 's'} (its top choice was right)")
    return notes
