"""A threshold per segment decides the same on every surface, item by item: the policy document, the serving
runtime, the scikit-learn wrapper (segment from a column or a function of the row) and ``apply`` (the MLflow
model: test_segments_mlflow.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import valuecore as vc
from valuecore.cli import main
from valuecore.policy_json import PolicyDocument
from valuecore.serving import RejectOptionClassifier, load_policy

from segment_fixtures import FEATURES, segment_case


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return segment_case(tmp_path_factory.mktemp("segments"))


def test_the_document_the_runtime_and_the_wrapper_agree_item_by_item(case):
    model, _, policy_path, new = case
    document = PolicyDocument.from_json(policy_path.read_text())
    assert json.loads(policy_path.read_text())["schema_version"] == 3
    entry = document.entry("logreg")
    proba = model.predict_proba(new[FEATURES])
    predictions = vc.Predictions.from_proba(proba, classes=entry.classes)
    # the reference: each item against the threshold of its own segment, written out by hand
    thresholds = dict(entry.segments["thresholds"])
    by_hand = np.array([
        str(int(np.argmax(p))) if thresholds.get(r) is not None and p.max() >= thresholds[r] else "abstain"
        for p, r in zip(proba, new["region"])
    ], dtype=object)
    assert "west" not in thresholds and (by_hand[new["region"] == "west"] == "abstain").all()
    assert len(set(thresholds.values())) > 1  # the segments really have thresholds of their own
    codes = document.decide("logreg", predictions, new["region"])
    from_document = np.where(codes < 2, codes.astype(str), "abstain")
    served = load_policy(policy_path).decide(proba, segments=new["region"].to_numpy())
    by_column = RejectOptionClassifier(model, policy=str(policy_path), abstain_label="abstain").predict(new)
    # a function of the rows: here the region looked up by the row's index; the features alone reach the model
    by_function = RejectOptionClassifier(model, policy=str(policy_path), abstain_label="abstain",
                                         segment=lambda X: new.loc[X.index, "region"]).predict(new[FEATURES])
    for actions in (from_document, served, by_column, by_function):
        assert [str(a) for a in actions] == by_hand.tolist()


def test_apply_scores_the_stored_thresholds_on_the_run_file_item_by_item(case, capsys):
    _, run_path, policy_path, _ = case
    document = PolicyDocument.from_json(policy_path.read_text())
    run = vc.load_runs([str(run_path)], segment_column="region").models["logreg"]
    test = run.splits["test"]
    regions = run.segments["test"]
    served = load_policy(policy_path).decisions(test.proba, segments=regions).action
    confusion = np.zeros((2, 3))
    np.add.at(confusion, (test.y_true, served), 1)
    applied = vc.apply_policy_document(document, {"logreg": run}, "test")[0]
    assert np.array_equal(applied.result.confusion, confusion)
    for region, figures in applied.evaluation["segments"].items():
        mine = regions == region
        assert figures["n_acted"] == np.count_nonzero(served[mine] < 2)
        assert figures["n_wrong"] == np.count_nonzero((served[mine] < 2) & (served[mine] != test.y_true[mine]))
    # the command line prints the same figures, reading the column the document names
    assert main(["apply", str(policy_path), str(run_path), "--split", "test"]) == 0
    out = capsys.readouterr().out
    assert f"coverage              {vc.wording.percent(applied.evaluation['coverage'])}" in out


def test_serving_without_the_segments_is_refused_in_words(case):
    model, _, policy_path, new = case
    with pytest.raises(ValueError, match="sets a threshold per segment, which fit does not tune"):
        RejectOptionClassifier(model, policy=str(policy_path)).fit(new[FEATURES], np.zeros(len(new), dtype=int))
    proba = model.predict_proba(new[FEATURES])
    with pytest.raises(ValueError, match="sets a threshold per segment.*'region'"):
        load_policy(policy_path).decide(proba)
    with pytest.raises(ValueError, match="column 'region' of X, which X does not have"):
        RejectOptionClassifier(model, policy=str(policy_path)).predict(new[FEATURES])
    with pytest.raises(ValueError, match=r"region is empty at rows 0, 2"):
        regions = new["region"].to_numpy(dtype=object).copy()
        regions[[0, 2]] = None
        load_policy(policy_path).decide(proba, segments=regions)
