"""Per-sample logs laid out exactly as lm-evaluation-harness writes them (``--log_samples``).

``evaluator.evaluate`` builds one dict per document and filter (``doc_id, doc, target, arguments, resps,
filtered_resps, filter, metrics, doc_hash, prompt_hash, target_hash``, then the per-sample metrics), and
``EvaluationTracker.save_results_samples`` writes it: ``arguments`` become ``{"gen_args_i": {"arg_j": ...}}``,
``resps`` and ``filtered_resps`` go through ``sanitize_list`` (every number and bool becomes a string,
tuples stay sequences), one ``json.dumps(..., ensure_ascii=False)`` line per sample, appended to
``<output_path>/<model>/samples_<task>_<date>.jsonl``. The harness itself is not installed (it pulls in
torch); this module follows its writer step by step.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

DATE = "2026-11-28T10-11-12.123456"


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sanitize_list(sub):  # lm_eval.utils.sanitize_list
    if isinstance(sub, list):
        return [_sanitize_list(item) for item in sub]
    if isinstance(sub, tuple):
        return tuple(_sanitize_list(item) for item in sub)
    return str(sub)


def choice_sample(doc_id: int, doc: dict, target, context: str, choices: list[str], lls: list[float],
                  delimiter: str = " ") -> dict:
    """A multiple-choice document as evaluate() logs it: one loglikelihood request per choice, and the
    metrics ConfigurableTask.process_results computes (acc, acc_norm by the choice's length)."""
    arguments = [(context, delimiter + choice) for choice in choices]
    greedy = [False] * len(choices)
    resps = [[(ll, g)] for ll, g in zip(lls, greedy)]
    filtered = [(ll, g) for ll, g in zip(lls, greedy)]
    gold = target if isinstance(target, int) else choices.index(target)
    lengths = np.array([float(len(c)) for c in choices])
    metrics = {"acc": 1.0 if int(np.argmax(lls)) == gold else 0.0,
               "acc_norm": 1.0 if int(np.argmax(np.array(lls) / lengths)) == gold else 0.0}
    return _example(doc_id, doc, target, arguments, resps, filtered, metrics, "none")


def generated_sample(doc_id: int, doc: dict, target: str, prompt: str, answer: str, filtered: str,
                     filter_key: str = "none", extra: dict | None = None) -> dict:
    """A generate_until document: one request, its text, the filtered answer and exact_match."""
    arguments = [(prompt, {"until": ["\n\n"], "do_sample": False})]
    metrics = {"exact_match": 1.0 if filtered.strip() == target.strip() else 0.0, **(extra or {})}
    return _example(doc_id, doc, target, arguments, [[answer]], [filtered], metrics, filter_key)


def _example(doc_id, doc, target, arguments, resps, filtered, metrics, filter_key) -> dict:
    example = {
        "doc_id": doc_id,
        "doc": doc,
        "target": target,
        "arguments": arguments,
        "resps": resps,
        "filtered_resps": filtered,
        "filter": filter_key,
        "metrics": list(metrics.keys()),
        "doc_hash": _hash(json.dumps(doc, indent=2, default=str, ensure_ascii=False)),
        "prompt_hash": _hash(arguments[0][0]),
        "target_hash": _hash(str(target)),
    }
    example.update(metrics)
    return example


def save_samples(output_path: Path, model: str, task: str, samples: list[dict], date: str = DATE) -> Path:
    """EvaluationTracker.save_results_samples: one sanitised JSON line per sample, appended."""
    folder = Path(output_path) / model
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / f"samples_{task}_{date}.jsonl"
    for sample in samples:
        sample = dict(sample)
        arguments = {}
        for i, arg in enumerate(sample["arguments"]):
            arguments[f"gen_args_{i}"] = {}
            for j, tmp in enumerate(arg):
                arguments[f"gen_args_{i}"][f"arg_{j}"] = tmp
        sample["resps"] = _sanitize_list(sample["resps"])
        sample["filtered_resps"] = _sanitize_list(sample["filtered_resps"])
        sample["arguments"] = arguments
        with open(file, "a") as handle:
            handle.write(json.dumps(sample, default=str, ensure_ascii=False) + "\n")
    return file


# A log someone else wrote (or broke): per case, the field its error names and words of the message.
HOSTILE = {
    "deep": ("(line)", "nested too deeply"),                  # one line of 200,000 '['
    "filterlist": ("filter", "not a filter's name"),          # "filter": ["none"]
    "overflow_ll": ("filtered_resps", "not a finite number"),  # a log-likelihood of 401 digits
    "target_sup": ("target", "neither a choice number"),      # "²" passes str.isdigit, int() refuses it
    "bigint": ("(line)", "digits"),                           # an integer longer than int() reads
}


def save_hostile_samples(output_path: Path, model: str, case: str) -> Path:
    """A two-question log of ``model`` whose first line is the hostile ``case`` of :data:`HOSTILE`, the second
    as the harness writes it."""
    choices = ["A", "B"]
    file = save_samples(output_path, model, "qa", [choice_sample(i, {"q": i}, 0, "Q", choices, [-1.0, -2.0])
                                                    for i in range(2)])
    first, second = file.read_text().splitlines()
    sample = json.loads(first)
    if case == "deep":
        first = "[" * 200_000 + "]" * 200_000
    elif case == "bigint":
        first = first[:-1] + ', "seed": ' + "9" * 5000 + "}"
    else:
        if case == "filterlist":
            sample["filter"] = ["none"]
        elif case == "overflow_ll":
            sample["filtered_resps"][0][0] = -(10 ** 400)
        elif case == "target_sup":
            sample["target"] = "²"
        first = json.dumps(sample, ensure_ascii=False)
    file.write_text(first + "\n" + second + "\n")
    return file
