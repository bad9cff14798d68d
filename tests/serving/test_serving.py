"""valuecore.serving: the numpy-only runtime decides exactly as the pipeline and `apply` score a policy."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from valuecore import Predictions, UseCase, ValueMatrix, apply_policy_document
from valuecore.policy_json import ALL_POLICY_KINDS
from valuecore.constraints import evaluate_two_tier
from valuecore.policy_json import PolicyDocument, build_policy_document
from valuecore.runs import ModelRun
from valuecore.serving import ABSTAIN, CONFIRM, SHORTLIST, load_policy

ROOT = Path(__file__).resolve().parents[2]
ASSISTED = {"v_confirmed_correct": 0.5, "v_confirmed_wrong": -1.0, "cost": 0.25}


def docs_reference_decide():
    """The numpy reference implementation printed in docs/policy-json.md, run as written."""
    text = (ROOT / "docs" / "policy-json.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(import json\n.*?)```", text, re.S).group(1)
    namespace: dict = {}
    exec(compile(block, "docs/policy-json.md", "exec"), namespace)  # noqa: S102
    return namespace["decide"]


REFERENCE = docs_reference_decide()


# ------------------------------------------------------------------ random runs and policies
CASES = [(kind, method) for kind in ALL_POLICY_KINDS for method in ("none", "temperature", "isotonic", "platt")
         if (kind, method) != ("expected_value", "isotonic")]  # refused: isotonic recalibrates the top label only


@st.composite
def runs_and_settings(draw, kind, calibration):
    n_classes = 2 if calibration == "platt" else draw(st.sampled_from((2, 3, 4)))  # Platt: binary only
    with_logits = draw(st.booleans())
    # Probabilities on a coarse grid: equal confidences (and equal expected values) are common.
    grid = draw(st.sampled_from((4, 8, 10)))
    classes = tuple(f"c{k}" for k in range(n_classes))

    def split(size):
        counts = draw(st.lists(st.lists(st.integers(0, grid), min_size=n_classes, max_size=n_classes)
                               .map(lambda row: row if sum(row) else [1, *row[1:]]), min_size=size, max_size=size))
        proba = np.array(counts, dtype=float)
        proba /= proba.sum(axis=1, keepdims=True)
        labels = draw(st.lists(st.integers(0, n_classes - 1), min_size=size, max_size=size))
        logits = None
        if with_logits:  # logits that rank like the probabilities, with noise (not log p)
            logits = np.log(np.clip(proba, 1e-3, 1)) * draw(st.sampled_from((0.5, 1.0, 3.0)))
        return Predictions.from_proba(proba, y_true=np.array(classes)[labels], classes=classes, logits=logits)

    splits = {"val": split(draw(st.integers(2, 30))), "test": split(draw(st.integers(1, 30)))}
    run = ModelRun("m", "m.csv", hashlib.sha256(b"m").hexdigest(), classes, splits)
    if draw(st.booleans()):
        values = UseCase(1.0, draw(st.sampled_from((0.0, -0.5))), -float(draw(st.integers(0, 9))))
    else:
        entries = draw(st.lists(st.integers(-6, 4), min_size=n_classes * (n_classes + 1),
                                max_size=n_classes * (n_classes + 1)))
        matrix = np.array(entries, dtype=float).reshape(n_classes, n_classes + 1)
        matrix[np.arange(n_classes), np.arange(n_classes)] = np.abs(matrix.diagonal()) + 1
        values = ValueMatrix(classes, matrix)
    return run, kind, calibration, values


def served_codes(document: PolicyDocument, predictions: Predictions):
    served = load_policy(json.loads(document.to_json()))  # through the JSON text, as a server reads it
    return served, served.decisions(predictions.proba, logits=predictions.logits)


@pytest.mark.heavy
@pytest.mark.parametrize(("kind", "calibration"), CASES)
@settings(max_examples=25)
@given(data=st.data())
def test_decide_agrees_with_the_pipeline_and_apply_on_every_item(kind, calibration, data):
    run, kind, calibration, values = data.draw(runs_and_settings(kind, calibration))
    extra = {"assisted": ASSISTED} if kind == "two_tier" else {}
    if kind == "shortlist":  # the listed tier is served as "shortlist", with its list (shortlists())
        extra = {"shortlist_values": {"1": [0.5, -1.0], "2": [0.25, -0.5]}}
    try:
        document, _ = build_policy_document({"m": run}, values, kind=kind, calibration_method=calibration,
                                            with_interval=False, **extra)
    except ValueError as exc:  # e.g. a calibration that cannot be fitted on this draw
        assert "no policy could be built" in str(exc)
        event("no policy could be built")
        return
    event(f"{kind} + {document.entry('m').policy.calibration['method']}")
    entry = document.entry("m")
    test = run.splits["test"]
    served, decisions = served_codes(document, test)
    n_classes = len(run.classes)
    # 1. item by item against the pipeline's own decision (what apply scores)
    pipeline = document.decide("m", test)
    if kind == "two_tier":
        tiers = entry.policy.tiers(test)
        expected = np.where(tiers == 1, n_classes + 1, pipeline)
    elif kind == "shortlist":
        expected = np.where(decisions.list_size > 0, n_classes + 2, pipeline)
        assert np.all(pipeline[decisions.list_size > 0] == n_classes)  # listed items are not acted on
    else:
        expected = pipeline
    np.testing.assert_array_equal(decisions.action, expected)
    calibrated = entry.policy.calibrate(test)
    np.testing.assert_array_equal(decisions.confidence, calibrated.confidence)
    np.testing.assert_array_equal(decisions.predicted, calibrated.y_pred)
    # 2. item by item against the independent numpy code printed in docs/policy-json.md
    reference = REFERENCE(json.loads(document.to_json()), "m", test.proba, test.logits)
    automatic = np.where(decisions.action > n_classes, n_classes, decisions.action)
    np.testing.assert_array_equal(np.where(automatic == n_classes, -1, automatic), reference)
    # 3. counts: the confusion matrix `apply` reports, and the stored evaluation
    if kind == "two_tier":
        result = evaluate_two_tier(entry.policy, test, values)
        assert (result.n_auto, result.n_assisted, result.n_handoff) == (
            np.sum(decisions.action < n_classes), np.sum(decisions.action == n_classes + 1),
            np.sum(decisions.action == n_classes))
        assert entry.evaluation["two_tier"]["n_assisted"] == np.sum(decisions.action == n_classes + 1)
    else:
        applied = apply_policy_document(document, {"m": run}, with_interval=False)[0]
        cells = test.y_true * (n_classes + 1) + automatic
        confusion = np.bincount(cells, minlength=n_classes * (n_classes + 1)).reshape(n_classes, -1)
        np.testing.assert_array_equal(applied.result.confusion, confusion)
        assert entry.evaluation["n_abstain"] == np.sum(automatic == n_classes)
    if kind == "shortlist":  # 3b. the lists served, priced by hand, are worth what apply stored
        assert entry.evaluation["shortlist"]["n_listed"] == np.sum(decisions.action == n_classes + 2)
        lists = served.shortlists(test.proba, logits=test.logits)
        assert [len(items) for items in lists] == decisions.list_size.tolist()
        matrix = served._matrix.values
        prices = {int(k): pair for k, pair in entry.policy.shortlist["values"].items()}
        total = 0.0
        for action, items, truth in zip(decisions.action, lists, test.y_true):
            if action == n_classes + 2:
                total += prices[len(items)][0 if run.classes[truth] in items else 1]
            else:
                total += matrix[truth, min(action, n_classes)]
        assert total == pytest.approx(entry.evaluation["value_total"], abs=1e-9)
    else:
        assert decisions.list_order is None and decisions.list_size is None
    # 4. labels, and the top-label input where the rule allows it
    labels = served.decide(test.proba, logits=test.logits)
    names = [*run.classes, ABSTAIN, CONFIRM, SHORTLIST]
    assert labels.tolist() == [names[a] for a in decisions.action]
    if kind == "shortlist":  # the lists are read off the probability vector: the top label is not enough
        with pytest.raises(ValueError, match="probability vector"):
            served.decide(y_pred=np.array(run.classes)[test.y_pred], confidence=test.confidence)
    elif calibration in ("none", "isotonic") and kind != "expected_value":
        top = served.decide(y_pred=np.array(run.classes)[test.y_pred], confidence=test.confidence)
        assert top.tolist() == labels.tolist()


@given(threshold=st.floats(0, 1), assist=st.floats(0, 1), temperature=st.floats(0.05, 20),
       proba=st.lists(st.integers(0, 5).map(lambda k: k / 5), min_size=1, max_size=20))
def test_thresholds_drawn_anywhere_and_stored_as_json_decide_as_the_policy_says(threshold, assist, temperature,
                                                                                 proba):
    """Random parameters (not fitted): two tiers and temperature scaling, item by item."""
    assist, threshold = sorted((assist, threshold))
    policy = {"kind": "two_tier", "threshold": threshold, "assist_threshold": assist, "assisted": ASSISTED,
              "calibration": {"method": "temperature", "temperature": temperature, "use_logits": False}}
    document = {"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -3},
                "models": [{"model": "m", "classes": ["a", "b"], "policy": policy}]}
    matrix = np.column_stack([1 - np.array(proba), proba])
    served = load_policy(document)
    got = served.decide(matrix)
    confidence = served.decisions(matrix).confidence
    predicted = np.where(matrix[:, 1] > matrix[:, 0], "b", "a")
    want = np.where(confidence >= threshold, predicted, np.where(confidence >= assist, CONFIRM, ABSTAIN))
    assert got.tolist() == want.tolist()


# ------------------------------------------------------------------ choosing the model, refusing bad documents
def two_model_document(**top):
    entry = {"classes": ["a", "b"], "policy": {"kind": "accept_all", "calibration": {"method": "none"}}}
    return {"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -1},
            "models": [{"model": "x", **entry}, {"model": "y", **entry}], **top}


def test_several_models_need_a_name_or_a_recommendation(tmp_path):
    with pytest.raises(ValueError, match=r"2 models \['x', 'y'\] and recommends none: say which one"):
        load_policy(two_model_document())
    names_y = {"model": "y", "policy": "accept_all", "reason": "y earns more"}
    assert load_policy(two_model_document(recommendation=names_y)).model == "y"
    assert load_policy(two_model_document(recommendation=names_y), model="x").model == "x"
    with pytest.raises(ValueError, match="recommendation: it names the 'threshold' policy of model 'y'"):
        load_policy(two_model_document(recommendation={**names_y, "policy": "threshold"}))
    with pytest.raises(ValueError, match=r"no model 'z'; it has \['x', 'y'\]"):
        load_policy(two_model_document(), model="z")
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(two_model_document()), encoding="utf-8")
    assert load_policy(path, "x").decide([[0.2, 0.8]]).tolist() == ["b"]


@pytest.mark.parametrize("recommendation", [
    {"model": None, "policy": None, "reason": "No model earns more than handing every item to a person."},
    {"model": None, "policy": None, "reason": "No model is shown to earn more yet.", "status": "not_yet",
     "would_settle": {"model": "y", "policy": "threshold", "labelled_items": 4305}},
])
def test_a_document_recommending_no_model_hands_every_item_over_by_default_and_says_why(recommendation):
    document = two_model_document(recommendation=recommendation)
    for single in (False, True):  # with one model too: the recommendation, not the count, decides
        if single:
            document = {**document, "models": document["models"][-1:]}
        with pytest.warns(UserWarning, match="recommends no model, so every item is handed to a person: "
                                             + re.escape(recommendation["reason"])):
            served = load_policy(document)
        assert served.model is None and served.reason == recommendation["reason"]
        assert served.classes == ("a", "b")
        assert served.decide([[0.2, 0.8], [1.0, 0.0]]).tolist() == ["abstain", "abstain"]
        # asking for a model by name serves it, as before
        assert load_policy(document, "y").decide([[0.2, 0.8]]).tolist() == ["b"]


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(schema_version=4), "schema_version 4 is not supported"),
    (lambda d: d.pop("models"), "at models: must be a non-empty list"),
    (lambda d: d["models"][0].pop("classes"), r"at models\[0\]: 'classes' is a required property"),
    (lambda d: d["models"][0]["policy"].update(kind="threshold", threshold=1.5),
     r"models\[0\].policy.threshold: 1.5 is not in \[0, 1\]"),
    (lambda d: d["models"][0]["policy"].update(kind="best"), "unknown policy kind 'best'"),
    (lambda d: d["models"][0]["policy"].update(calibration={"method": "temperature", "temperature": -1}),
     r"policy\.calibration\.temperature: -1 is not a temperature from 1e-06 to 1e\+06 \(positive"),
    (lambda d: d["models"][1].update(model="x"), r"repeated: \['x'\]"),
    (lambda d: d.update(use_case={"v_correct": 1}), "at use_case: the use case misses"),
])
def test_a_bad_document_is_refused_naming_the_key(change, message):
    document = two_model_document()
    change(document)
    with pytest.raises(ValueError, match=message):
        load_policy(document, "x")


def test_bad_inputs_are_refused_with_rows():
    served = load_policy(two_model_document(), "x")
    with pytest.raises(ValueError, match="3 columns but model 'x' has 2 classes"):
        served.decide([[0.2, 0.3, 0.5]])
    with pytest.raises(ValueError, match="rows must sum to 1.*at rows 1"):
        served.decide([[0.2, 0.8], [0.5, 0.6]])
    with pytest.raises(ValueError, match=r"not among the classes \['a', 'b'\].*\['q'\] at rows 1"):
        served.decide(y_pred=["a", "q"], confidence=[0.5, 0.5])
    with pytest.raises(ValueError, match="in \\[0, 1\\]; it is not at rows 0"):
        served.decide(y_pred=["a"], confidence=[1.5])


def test_the_decision_path_loads_neither_pandas_nor_scipy(tmp_path):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({
        "schema_version": 2, "use_case": {"classes": ["a", "b"], "value_matrix": [[1, -5, 0], [-9, 2, 0]]},
        "models": [{"model": "m", "classes": ["a", "b"], "policy": {
            "kind": "expected_value", "calibration": {"method": "platt", "a": 1.3, "b": -0.2}}}]}))
    code = (
        "import sys, numpy as np\nimport valuecore.serving as s\n"
        f"p = s.load_policy({str(path)!r})\n"
        "print(p.decide(np.random.default_rng(0).dirichlet([1, 1], 1000))[:3].tolist())\n"
        "print(sorted(m for m in ('pandas', 'scipy', 'sklearn', 'jsonschema', 'mlflow') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[-1] == "[]", lines
    assert len(json.loads(lines[0].replace("'", '"'))) == 3  # it did decide
    # the check can fail: the pipeline's own reading of a document does load jsonschema
    out = subprocess.run([sys.executable, "-c", f"import sys\nfrom valuecore.policy_json import PolicyDocument\n"
                          f"try:\n    PolicyDocument.from_json(open({str(path)!r}).read())\n"
                          "except ValueError:\n    pass\n"
                          "print('jsonschema' in sys.modules)"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
