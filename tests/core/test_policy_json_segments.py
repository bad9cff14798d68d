"""Policy JSON version 3: per-segment entries round-trip, are checked against the schema and by the serving
runtime's own checks, and versions 1 and 2 still read (documents without segments are still written as 2)."""

from __future__ import annotations

import copy
import json

import pytest

import valuecore as vc
from valuecore.constraints import SegmentCaps, fit_segments
from valuecore.policy_json import PolicyDocument, PolicyEntry, validate_policy_document
from valuecore.serving import load_policy


def segment_document():
    p = vc.Predictions.from_top_label(["a", "a", "b", "a", "b", "a"], [0.9, 0.8, 0.6, 0.9, 0.7, 0.6],
                                      ["a", "a", "b", "a", "a", "a"], classes=["a", "b"])
    values = {"x": vc.UseCase(1, 0, -1), "y": vc.UseCase(2, 0, -5)}
    fit = fit_segments(p, ["x", "x", "x", "y", "y", "y"], values, caps=SegmentCaps(handoff_gap=0.5),
                       column="region")
    entry = PolicyEntry("m", None, ("a", "b"), vc.Policy("threshold", threshold=None), segments=fit.to_dict())
    return PolicyDocument(vc.UseCase(1, 0, -1), (entry,)), fit


def test_a_segment_document_round_trips_as_version_3_and_plain_ones_stay_version_2():
    document, fit = segment_document()
    data = json.loads(document.to_json())
    assert data["schema_version"] == 3
    segments = data["models"][0]["segments"]
    assert segments["column"] == "region" and segments["unseen"] == "abstain"
    assert segments["thresholds"] == dict(fit.policy.thresholds)
    assert segments["use_cases"]["y"] == {"v_correct": 2, "v_abstain": 0, "v_wrong": -5, "omega": 2.5}
    again = PolicyDocument.from_json(document.to_json())
    assert again == document and again.entry("m").segment_policy == fit.policy
    assert again.entry("m").segment_values(again.values)["y"] == vc.UseCase(2, 0, -5)
    plain = PolicyDocument(vc.UseCase(1, 0, -1), (PolicyEntry("m", None, ("a", "b"), vc.Policy("threshold",
                                                                                                threshold=0.7)),))
    assert json.loads(plain.to_json())["schema_version"] == 2


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(schema_version=2), "segments need schema_version 3"),
    (lambda d: d["models"][0]["policy"].update(threshold=0.5), "the rule for unseen segments"),
    (lambda d: d["models"][0]["segments"]["thresholds"].update(x=1.5), "thresholds"),
    (lambda d: d["models"][0]["segments"]["thresholds"].update(x="0.5"), "thresholds"),
    (lambda d: d["models"][0]["segments"].update(unseen="accept"), "unseen"),
    (lambda d: d["models"][0]["segments"].pop("column"), "column"),
    (lambda d: d["models"][0]["segments"]["use_cases"].update(x={"v_correct": 1}), "use_cases|v_abstain"),
])
def test_a_bad_segment_entry_is_refused_naming_the_key_by_the_schema_and_the_runtime(change, message):
    data = json.loads(segment_document()[0].to_json())
    change(data)
    with pytest.raises(ValueError, match=message):
        validate_policy_document(data)
        PolicyDocument.from_dict(data)
    with pytest.raises(ValueError):
        load_policy(copy.deepcopy(data))


def test_versions_1_and_2_still_read():
    for version in (1, 2):
        data = {"schema_version": version, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
                "models": [{"model": "m", "run_sha256": None, "classes": ["a", "b"],
                            "tuned_on": {"split": None, "n": 0}, "evaluation": None,
                            "policy": vc.Policy("threshold", threshold=0.8).to_dict()}]}
        assert PolicyDocument.from_dict(data).entry("m").policy.threshold == 0.8
        assert load_policy(data).decide([[0.9, 0.1], [0.7, 0.3]]).tolist() == ["a", "abstain"]
