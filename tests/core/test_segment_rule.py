"""Thresholds per segment as a candidate of the one recommendation.

With a segment column, each model gets one more candidate, "a threshold per segment", fitted on the tuning
split (``fit_segments``) and judged on the evaluated items item by item like every other rule. It wins where
the segments' best thresholds differ a lot, loses to the simpler rule where they do not, and its value per
item is the one ``evaluate_segments`` gives; items of a segment never seen in tuning are handed off.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import valuecore as vc
from valuecore._decide.recommend import RULE_SIMPLICITY

from helpers.segments import frame_alike, frame_far_apart

SEG = vc.recommendation.SEGMENT_RULE
VALUES = vc.UseCase(1, 0, -4)


def loaded(tmp_path, frame, name="m"):
    path = tmp_path / f"{name}.csv"
    frame.to_csv(path, index=False)
    return vc.load_runs([str(path)], segment_column="region").models


def recommended(runs, values=VALUES, caps=None, kinds=None):
    pipeline = vc.Pipeline(runs)
    rules, skipped = vc.recommendation.segment_rules(pipeline, values, column="region", caps=caps)
    return pipeline, rules, skipped, vc.recommend(pipeline, values, kinds=kinds, segment_rules=rules)


def test_far_apart_segments_make_the_segment_thresholds_win(tmp_path):
    runs = loaded(tmp_path, frame_far_apart())
    _, rules, skipped, r = recommended(runs)
    assert skipped == [] and set(rules) == {"m"}
    assert (r.model, r.kind, r.status) == ("m", SEG, "deploy")
    thresholds = dict(r.policy.policy.thresholds)
    assert thresholds["hard"] is None or thresholds["hard"] > thresholds["easy"] + 0.2
    ours = next(c for c in r.candidates if c.kind == SEG)
    one = next(c for c in r.candidates if c.kind == "threshold")
    assert ours.gain_low > one.gain_low and ours.per_item > one.per_item
    reason = vc.wording.recommendation_reason(r, "$")
    assert reason.startswith("m with a threshold per segment of region earns")
    assert "a threshold per segment of region" in vc.wording.recommendation_headline(r)


def test_without_the_segment_rules_nothing_changes(tmp_path):
    runs = loaded(tmp_path, frame_far_apart())
    pipeline = vc.Pipeline(runs)
    plain = vc.recommend(pipeline, VALUES)
    assert plain.kind != SEG and all(c.kind != SEG for c in plain.candidates)
    _, rules, _, _ = recommended(runs)
    # an explicit rule is the only one weighed; the segment rule alone when it is the one named
    assert {c.kind for c in vc.recommend(pipeline, VALUES, kinds=("threshold",), segment_rules=rules).candidates} \
        == {"threshold"}
    only = vc.recommend(pipeline, VALUES, kinds=(SEG,), segment_rules=rules)
    assert {c.kind for c in only.candidates} == {SEG} and only.kind == SEG
    capped = vc.recommend(pipeline, VALUES, segment_rules=rules, max_handoff_rate=0.5)
    assert all(c.kind != SEG for c in capped.candidates)
    assert any("thresholds per segment: they do not take max_handoff_rate" in s for s in capped.skipped)


def test_alike_segments_leave_the_simpler_rule_recommended(tmp_path):
    runs = loaded(tmp_path, frame_alike())
    _, rules, _, r = recommended(runs)
    assert dict(rules["m"].policy.thresholds) == {"north": 0.8, "south": 0.8}
    ours = next(c for c in r.candidates if c.kind == SEG)
    assert ours.gain_low == r.candidates[0].gain_low or ours.gain_low <= max(c.gain_low for c in r.candidates)
    assert r.kind == "threshold" and r.threshold == pytest.approx(0.8)
    # the same decisions, so the same bound: the tie goes to the simpler rule, ranked after class thresholds
    one = next(c for c in r.candidates if c.kind == "threshold")
    assert ours.per_item == one.per_item and ours.gain_low == one.gain_low
    assert RULE_SIMPLICITY["class_thresholds"] < RULE_SIMPLICITY[SEG] < RULE_SIMPLICITY["expected_value"]


def test_not_yet_can_name_the_segment_thresholds_as_closest(tmp_path):
    # few items and a costly wrong answer: nothing is shown to earn, and the per-segment rule is the closest
    runs = loaded(tmp_path, frame_far_apart(seed=2, n=300))
    _, _, _, r = recommended(runs, values=vc.UseCase(1, 0, -15))
    assert r.status == "not_yet" and r.alternative.kind == SEG
    assert "a threshold per segment" in vc.wording.recommendation_reason(r, "$")
    assert r.to_dict("why")["would_settle"]["policy"] == SEG


def brute_force_values(frame: pd.DataFrame, thresholds: dict, values: vc.UseCase) -> np.ndarray:
    """Each evaluated item's value, one item at a time: its segment's threshold (none: handed off)."""
    out = []
    for row in frame[frame.split == "test"].itertuples():
        confidence = max(row.proba_a, row.proba_b)
        predicted = "a" if row.proba_a >= row.proba_b else "b"
        threshold = thresholds.get(row.region)
        if threshold is None or confidence < threshold:
            out.append(values.v_abstain)
        else:
            out.append(values.v_correct if predicted == row.y_true else values.v_wrong)
    return np.array(out)


@pytest.mark.parametrize("caps", [None, vc.constraints.SegmentCaps(handoff_gap=0.1)])
def test_the_candidates_value_is_evaluate_segments_and_item_by_item(tmp_path, caps):
    frame = frame_far_apart(seed=5, n=800, unseen=40)
    runs = loaded(tmp_path, frame)
    pipeline, rules, _, r = recommended(runs, caps=caps)
    rule = rules["m"]
    tune = runs["m"].splits["val"]
    fit = vc.constraints.fit_segments(tune, runs["m"].segments["val"], VALUES, caps=caps, column="region")
    assert rule.policy == fit.policy and "new" not in dict(rule.policy.thresholds)
    evaluated = runs["m"].splits["test"]
    evaluation = vc.constraints.evaluate_segments(fit.policy, evaluated, runs["m"].segments["test"], VALUES)
    ours = next(c for c in r.candidates if c.kind == SEG)
    assert ours.per_item == pytest.approx(evaluation.value_per_item, abs=1e-12)
    assert evaluation.n_unseen == 40
    by_hand = brute_force_values(frame, dict(fit.policy.thresholds), VALUES)
    assert ours.per_item == pytest.approx(by_hand.mean(), abs=1e-12)
    np.testing.assert_array_equal(rule.item_values(evaluated, VALUES), by_hand)
    assert (by_hand[:40] == VALUES.v_abstain).all()  # the unseen segment is handed off
    acted = sum(r.n_acted for r in evaluation.segments)
    assert ours.coverage == pytest.approx(acted / evaluated.n)


def test_the_document_names_the_segment_entry_as_version_3_and_serving_takes_its_actions(tmp_path):
    frame = frame_far_apart(seed=3, n=1000, unseen=25)
    runs = loaded(tmp_path, frame)
    pipeline, rules, _, r = recommended(runs)
    assert r.kind == SEG
    document, _ = pipeline.document(["m"], vc.RECOMMENDED_RULE, VALUES)
    document, notes = vc.recommended_document(pipeline, document, r, VALUES, "why")
    data = json.loads(json.dumps(document.to_dict()))
    vc.policy_json.validate_policy_document(data)
    assert data["schema_version"] == 3 and data["recommendation"]["policy"] == SEG
    assert data["models"][0]["segments"]["thresholds"] == dict(r.policy.policy.thresholds)
    serving = vc.serving.load_policy(data)
    test = frame[frame.split == "test"]
    decided = serving.decisions(test[["proba_a", "proba_b"]].to_numpy(), segments=test.region.to_numpy())
    np.testing.assert_array_equal(decided.action, r.policy.decide(runs["m"].splits["test"]))
    # a document without segments stays version 2 and names its own rule
    plain = vc.recommend(pipeline, VALUES)
    document, _ = pipeline.document(["m"], vc.RECOMMENDED_RULE, VALUES)
    document, _ = vc.recommended_document(pipeline, document, plain, VALUES, "why")
    assert document.to_dict()["schema_version"] == 2


def test_a_recommendation_naming_segments_for_an_entry_without_them_is_refused(tmp_path):
    runs = loaded(tmp_path, frame_far_apart(seed=3, n=400))
    pipeline = vc.Pipeline(runs)
    document, _ = pipeline.document(["m"], "threshold", VALUES)
    data = document.to_dict()
    data["recommendation"] = {"model": "m", "policy": SEG, "reason": "x", "status": "deploy"}
    with pytest.raises(ValueError, match="names the 'segment_thresholds' policy of model 'm'"):
        vc.policy_json.PolicyDocument.from_dict(data)


def test_a_model_without_the_column_on_a_split_is_skipped_in_words(tmp_path):
    runs = loaded(tmp_path, frame_far_apart(seed=3, n=300))
    pipeline = vc.Pipeline(runs)
    rules, skipped = vc.recommendation.segment_rules(pipeline, VALUES, column="region",
                                                     labels={"m": {"val": runs["m"].segments["val"]}})
    assert rules == {} and skipped == ["m, thresholds per segment: its split 'test' has no segment column 'region'"]
