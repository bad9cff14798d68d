"""Per-class thresholds per segment decide the same on every surface, item by item: the fit itself, the policy
document, the serving runtime, the scikit-learn wrapper and ``apply`` (the MLflow model: test_segments_mlflow.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import valuecore as vc
from valuecore.cli import main
from valuecore.constraints import SegmentCaps, fit_segments
from valuecore.policy_json import PolicyDocument
from valuecore.serving import RejectOptionClassifier, load_policy

from segment_fixtures import FEATURES, segment_case

PER_CLASS = ("--segment-rule", "class_thresholds")


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return segment_case(tmp_path_factory.mktemp("class_segments"), options=PER_CLASS)


def test_every_surface_takes_the_same_action_on_every_item(case, capsys):
    model, run_path, policy_path, new = case
    data = json.loads(policy_path.read_text())
    assert data["schema_version"] == 3
    segments = data["models"][0]["segments"]
    assert segments["rule"] == "class_thresholds" and "thresholds" not in segments
    per_class = segments["class_thresholds"]
    assert any(len(set(t.values())) > 1 for t in per_class.values())  # the classes really differ somewhere
    # the fit itself, on the tuning split the report used, with the same values and cap
    run = vc.load_runs([str(run_path)], segment_column="region").models["logreg"]
    fit = fit_segments(run.splits["val"], run.segments["val"], vc.UseCase(1, 0, -4),
                       caps=SegmentCaps(handoff_gap=0.05), column="region", rule="class_thresholds")
    document = PolicyDocument.from_json(policy_path.read_text())
    assert document.entry("logreg").segment_policy == fit.policy
    proba = model.predict_proba(new[FEATURES])
    predictions = vc.Predictions.from_proba(proba, classes=("0", "1"))
    # the reference: each item against the threshold of its segment and predicted class, written out by hand
    by_hand = []
    for p, region in zip(proba, new["region"]):
        label = str(int(np.argmax(p)))
        threshold = per_class.get(region, {}).get(label)
        by_hand.append(label if threshold is not None and p.max() >= threshold else "abstain")
    assert "abstain" in by_hand and {"0", "1"} <= set(by_hand)
    from_fit = fit.policy.decide(predictions, new["region"])
    from_document = document.decide("logreg", predictions, new["region"])
    served = load_policy(policy_path).decide(proba, segments=new["region"].to_numpy())
    by_column = RejectOptionClassifier(model, policy=str(policy_path), abstain_label="abstain").predict(new)
    for actions in (np.where(from_fit < 2, from_fit.astype(str), "abstain"),
                    np.where(from_document < 2, from_document.astype(str), "abstain"), served, by_column):
        assert [str(a) for a in actions] == by_hand
    # apply: the stored thresholds on the run file, counted per segment from the runtime's own actions
    test = run.splits["test"]
    regions = run.segments["test"]
    actions = load_policy(policy_path).decisions(test.proba, segments=regions).action
    applied = vc.apply_policy_document(document, {"logreg": run}, "test")[0]
    for region, figures in applied.evaluation["segments"].items():
        mine = regions == region
        assert figures["class_thresholds"] == per_class[region]
        assert figures["n_acted"] == np.count_nonzero(actions[mine] < 2)
        assert figures["n_wrong"] == np.count_nonzero((actions[mine] < 2) & (actions[mine] != test.y_true[mine]))
    assert main(["apply", str(policy_path), str(run_path), "--split", "test"]) == 0
    out = capsys.readouterr().out
    assert "per-class thresholds per segment" in out
    assert f"coverage              {vc.wording.percent(applied.evaluation['coverage'])}" in out


def test_a_per_class_segment_document_is_checked_by_the_schema_and_the_runtime(case):
    _, _, policy_path, _ = case
    data = json.loads(policy_path.read_text())
    segments = data["models"][0]["segments"]
    for change, message in (
        (lambda s: s.update(thresholds={"north": 0.5}), "thresholds"),
        (lambda s: s.pop("class_thresholds"), "class_thresholds"),
        (lambda s: s["class_thresholds"]["north"].update({"0": 1.5}), "class_thresholds"),
        (lambda s: s["class_thresholds"]["north"].update({"cat": 0.5}), "cat"),
    ):
        broken = json.loads(json.dumps(data))
        change(broken["models"][0]["segments"])
        with pytest.raises(ValueError, match=message):
            PolicyDocument.from_dict(broken)
        with pytest.raises(ValueError):
            load_policy(broken)
    assert PolicyDocument.from_dict(data).entry("logreg").segment_policy.rule == "class_thresholds"
    assert segments["unconstrained_class_thresholds"].keys() == segments["class_thresholds"].keys()
