"""The serving runtime reads a policy document without jsonschema: a key of the wrong JSON type, or a number no
float holds (a 400-digit integer given in a dict), is a ValueError naming the key, as the schema would refuse it,
never a TypeError or OverflowError from deep inside."""

from __future__ import annotations

import copy
import json

import pytest

from valuecore.serving import load_policy

BASE = {"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
        "models": [{"model": "m", "classes": ["a", "b"], "run_sha256": None, "tuned_on": {"split": "val", "n": 3},
                    "evaluation": None,
                    "policy": {"kind": "threshold", "threshold": 0.5, "class_thresholds": None,
                               "calibration": {"method": "none"}}}]}
HUGE = 10**400  # a JSON file cannot hold it (its reader refuses the number), a dict can
ASSISTED = {"v_confirmed_correct": 0.8, "v_confirmed_wrong": -2, "cost": 0.1}


def _document(change) -> dict:
    document = copy.deepcopy(BASE)
    change(document)
    return document


def _entry(**keys):
    return lambda d: d["models"][0].update(keys)


def _policy(**keys):
    return lambda d: d["models"][0]["policy"].update(keys)


def _segments(record):
    def change(d):
        d["schema_version"] = 3
        d["models"][0]["policy"]["threshold"] = None
        d["models"][0]["segments"] = record
    return change


WRONG_TYPES = {
    "tuned_on": (_entry(tuned_on=5), r"at models\[0\]\.tuned_on: must be an object, got 5"),
    "evaluation": (_entry(evaluation=[1]), r"at models\[0\]\.evaluation: must be an object or null, got \[1\]"),
    "notes": (_entry(notes=5), r"at models\[0\]\.notes: must be a list of strings, got 5"),
    "a note": (_entry(notes=["ok", 5]), r"at models\[0\]\.notes\[1\]: must be a string, got 5"),
    "constraints": (_entry(constraints=True), r"at models\[0\]\.constraints: must be a list of objects, got True"),
    "a constraint": (_entry(constraints=[1]), r"at models\[0\]\.constraints\[0\]: must be an object, got 1"),
    "run_sha256": (_entry(run_sha256=5), r"at models\[0\]\.run_sha256: must be a string or null, got 5"),
    "monitoring": (_entry(monitoring=5), r"at models\[0\]\.monitoring: must be an object, got 5"),
    "prior_shift": (_entry(prior_shift="x"), r"at models\[0\]\.prior_shift: must be an object, got 'x'"),
    "segments": (_segments("x"), r"at models\[0\]\.segments: must be an object, got 'x'"),
}


@pytest.mark.parametrize("name", WRONG_TYPES)
def test_a_key_of_the_wrong_type_is_refused_naming_it(name, tmp_path):
    change, message = WRONG_TYPES[name]
    document = _document(change)
    with pytest.raises(ValueError, match=r"invalid policy document " + message):
        load_policy(document)
    path = tmp_path / "policy.json"  # the same from a file
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_policy(path)


HUGE_NUMBERS = {
    "threshold": (_policy(threshold=HUGE), r"at models\[0\]\.policy\.threshold: 1000000.*… is not a number in"),
    "assist_threshold": (_policy(kind="two_tier", threshold=0.9, assist_threshold=HUGE, assisted=ASSISTED),
                         r"at models\[0\]\.policy\.assist_threshold: 1000000.*… is not a number in"),
    "class_thresholds": (_policy(kind="class_thresholds", threshold=None, class_thresholds={"a": HUGE, "b": 0.5}),
                         r"at models\[0\]\.policy\.class_thresholds\.a: 1000000.*… is not a number in"),
    "v_correct": (lambda d: d["use_case"].update(v_correct=HUGE), r"at use_case: use case v_correct must be a "
                                                                  r"finite number, got 1000000.*…$"),
    "temperature": (_policy(calibration={"method": "temperature", "temperature": HUGE}),
                    r"at models\[0\]\.policy\.calibration\.temperature: 1000000.*… is not a temperature from 1e-06"),
    "segment threshold": (_segments({"column": "seg", "unseen": "abstain", "thresholds": {"s": HUGE}}),
                          r"at models\[0\]\.segments\.thresholds\.s: 1000000.*… is not a number in \[0, 1\] or null"),
}


@pytest.mark.parametrize("name", HUGE_NUMBERS)
def test_an_integer_no_float_holds_is_refused_naming_the_key(name):
    change, message = HUGE_NUMBERS[name]
    with pytest.raises(ValueError, match=message):
        load_policy(_document(change))


def test_the_documents_refused_here_are_refused_by_apply_too():
    """The runtime is as strict as ``apply``'s reader (the schema, then the reading) on these keys: it refuses each
    document at the same key, and takes them all when well typed."""
    from valuecore._pipeline.policy_json import PolicyDocument

    for name, (change, message) in [*WRONG_TYPES.items(), *HUGE_NUMBERS.items()]:
        with pytest.raises(ValueError) as refused:
            PolicyDocument.from_dict(_document(change))
        key = APPLY_KEYS.get(name) or message.split(":")[0].removeprefix("at ").replace("\\", "")
        assert key in str(refused.value), (name, str(refused.value))
    full = _document(_entry(notes=["n"], constraints=[]))
    PolicyDocument.from_dict(full)
    assert load_policy(full).decide([[0.2, 0.8], [0.6, 0.4]]).tolist() == ["b", "a"]


# Where apply's reader words the key otherwise than the runtime.
APPLY_KEYS = {"v_correct": "at use_case: use case v_correct", "temperature": "calibration.temperature",
              "segment threshold": "at models[0].segments.thresholds.s"}
