"""Tests of valuecore._pipeline.policy_json: the policy JSON written for serving systems."""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from importlib import resources

import numpy as np
import pytest
from helpers.cli import ROOT, _docs_reference_code
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from scipy.special import softmax

from valuecore import Policy, Predictions, UseCase, ValueMatrix, fit_policy, presort
from valuecore.policy_json import (
    ACCEPT_RULE,
    POLICY_KINDS,
    PolicyDocument,
    PolicyEntry,
    align_values,
    build_policy_document,
    check_against_runs,
    check_classes,
    choose_splits,
    policy_schema,
    validate_policy_document,
    values_from_dict,
)
from valuecore.runs import ModelRun, load_runs

SAMPLE_RUNS = ROOT / "sample_runs"
CALIBRATIONS = ("none", "temperature", "isotonic", "platt")


# --------------------------------------------------------------------------
# synthetic runs
# --------------------------------------------------------------------------
def _split(rng, n, n_classes, classes, *, labelled=True, logits=False):
    true_logits = rng.normal(0.0, 2.0, size=(n, n_classes))
    y = np.array([rng.choice(n_classes, p=p) for p in softmax(true_logits, axis=1)])
    scores = true_logits * 1.7  # overconfident
    proba = softmax(scores, axis=1)
    return Predictions.from_proba(
        proba,
        y_true=np.asarray(classes, dtype=object)[y] if labelled else None,
        classes=classes,
        logits=scores if logits else None,
    )


def make_run(name, classes, splits=("val", "test"), *, seed=0, n=120, unlabeled=(), logits=False) -> ModelRun:
    rng = np.random.default_rng(seed)
    parts = {s: _split(rng, n, len(classes), classes, labelled=s not in unlabeled, logits=logits) for s in splits}
    sha = hashlib.sha256(f"{name}-{seed}".encode()).hexdigest()
    return ModelRun(model=name, path=f"{name}.csv", sha256=sha, classes=tuple(classes), splits=parts)


ASSISTED = {"v_confirmed_correct": 0.8, "v_confirmed_wrong": -1.0, "cost": 0.1}
BINARY = ("neg", "pos")
TERNARY = ("a", "b", "c")


@functools.cache
def _runs(n_classes: int) -> dict:
    if n_classes == 2:
        return {"lr": make_run("lr", BINARY, seed=1), "nn": make_run("nn", BINARY, seed=2, logits=True)}
    return {"tree": make_run("tree", TERNARY, seed=3), "knn": make_run("knn", TERNARY, seed=4)}


@pytest.fixture(scope="module")
def binary_runs():
    return _runs(2)


@pytest.fixture(scope="module")
def ternary_runs():
    return _runs(3)


def binary_matrix():
    return ValueMatrix.binary(tp=5, tn=1, fp=-3, fn=-20, abstain=-0.5, classes=BINARY)


def ternary_matrix():
    values = [[2, -1, -6, 0], [-1, 1, -2, 0], [-8, -1, 3, -0.5]]
    return ValueMatrix(TERNARY, np.array(values, dtype=float))


def _cases():
    for kind in POLICY_KINDS:
        for calibration in CALIBRATIONS:
            if kind == "expected_value" and calibration == "isotonic":
                continue  # refused: see test_expected_value_with_isotonic_is_refused
            for values in ("use_case", "matrix"):
                for n_classes in (2, 3):
                    if n_classes == 3 and calibration == "platt":
                        continue  # Platt scaling is binary only
                    yield kind, calibration, values, n_classes


def _values(values_kind: str, n_classes: int):
    if values_kind == "use_case":
        return UseCase(1.0, 0.0, -4.0)
    return binary_matrix() if n_classes == 2 else ternary_matrix()


@functools.cache
def _built(kind: str, calibration: str, values_kind: str, n_classes: int):
    """The document of one case, built once for the whole module."""
    values = _values(values_kind, n_classes)
    extra = {"assisted": ASSISTED} if kind == "two_tier" else {}
    return build_policy_document(_runs(n_classes), values, kind=kind, calibration_method=calibration, **extra)


def _strict_loads(text: str):
    def refuse(name):
        raise AssertionError(f"{name} written to the policy JSON")

    return json.loads(text, parse_constant=refuse)


def _schema_validator():
    return Draft202012Validator(policy_schema())


# --------------------------------------------------------------------------
# the schema
# --------------------------------------------------------------------------
def test_schema_file_ships_in_the_package_and_is_a_valid_draft_2020_12_schema():
    resource = resources.files("valuecore").joinpath("policy.schema.json")
    assert resource.is_file()
    schema = json.loads(resource.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


# --------------------------------------------------------------------------
# every kind x calibration x values: valid JSON, no NaN, same decisions after a round trip
# --------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "calibration", "values_kind", "n_classes"), list(_cases()))
def test_every_policy_round_trips_through_valid_json(kind, calibration, values_kind, n_classes):
    runs = _runs(n_classes)
    values = _values(values_kind, n_classes)
    document, notes = _built(kind, calibration, values_kind, n_classes)
    text = document.to_json()
    data = _strict_loads(text)  # no NaN / Infinity anywhere
    assert json.dumps(data, allow_nan=False)
    errors = list(_schema_validator().iter_errors(data))
    assert not errors, [e.message for e in errors]
    validate_policy_document(data)

    assert data["schema_version"] == 2
    assert data["generated_by"].startswith("valuecore ")
    assert data["accept_rule"] == ACCEPT_RULE
    assert [m["model"] for m in data["models"]] == list(runs)
    for item, run in zip(data["models"], runs.values()):
        assert item["run_sha256"] == run.sha256
        assert item["classes"] == list(run.classes)
        assert item["policy"]["kind"] == kind
        assert item["policy"]["calibration"]["method"] == calibration
        expected_tuning = (
            "val"
            if (
                kind not in ("accept_all", "calibrated_threshold", "calibrated_class_thresholds", "expected_value")
                or calibration != "none"
            )
            else None
        )
        assert item["tuned_on"]["split"] == expected_tuning
        assert item["evaluation"]["split"] == "test"
        assert item["evaluation"]["n"] == 120
        low, high = item["evaluation"]["ci95"]
        assert low <= item["evaluation"]["value_per_item"] <= high

    again = PolicyDocument.from_json(text)
    assert again == document
    assert again.values == values if isinstance(values, UseCase) else again.values.to_dict() == values.to_dict()
    for name, run in runs.items():
        assert again.entry(name).policy == document.entry(name).policy
        for predictions in run.splits.values():
            np.testing.assert_array_equal(again.decide(name, predictions), document.decide(name, predictions))
    # and the text itself is stable
    assert again.to_json() == text


def test_round_trip_on_the_sample_runs_with_the_loader():
    if not SAMPLE_RUNS.is_dir():
        pytest.skip("sample_runs/ not generated")
    report = load_runs([SAMPLE_RUNS / "breast_cancer"])
    assert report.models
    document, _ = build_policy_document(
        report.models, UseCase(1, 0, -4), kind="threshold", calibration_method="temperature"
    )
    again = PolicyDocument.from_json(document.to_json())
    assert check_against_runs(again, report.models) == []
    for name, run in report.models.items():
        for predictions in run.splits.values():  # prod is unlabeled: decisions need no labels
            np.testing.assert_array_equal(again.decide(name, predictions), document.decide(name, predictions))


@settings(max_examples=40, deadline=None)
@given(
    threshold=st.one_of(st.none(), st.floats(0.0, 1.0)),
    temperature=st.floats(0.05, 20.0),
    v=st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)),
)
def test_any_threshold_policy_and_use_case_round_trip_exactly(threshold, temperature, v):
    calibration = {"method": "temperature", "temperature": temperature, "use_logits": False}
    policy = Policy("threshold", threshold=threshold, calibration=calibration)
    entry = PolicyEntry("m", None, BINARY, policy, {"split": "val", "n": 10}, None)
    document = PolicyDocument(UseCase(*v), (entry,))
    again = PolicyDocument.from_json(document.to_json())
    assert again.entries[0].policy == policy
    assert again.values == document.values


# --------------------------------------------------------------------------
# the pipeline's choices
# --------------------------------------------------------------------------
def test_without_a_tuning_split_the_policy_is_tuned_on_the_evaluated_split_and_says_so():
    run = make_run("solo", BINARY, splits=("all",), seed=5)
    document, notes = build_policy_document({"solo": run}, UseCase(1, 0, -4), kind="threshold")
    entry = document.entry("solo")
    assert entry.tuned_on["split"] == "all"
    assert entry.evaluation["split"] == "all"
    assert any("no separate tuning split" in n and "optimistic" in n for n in notes)
    assert entry.notes and entry.notes[0] in notes
    assert "notes" in document.to_dict()["models"][0]


def test_data_free_kind_without_calibration_is_tuned_on_nothing():
    run = make_run("solo", BINARY, splits=("all",), seed=5)
    document, notes = build_policy_document({"solo": run}, UseCase(1, 0, -4), kind="calibrated_threshold")
    assert document.entry("solo").tuned_on == {"split": None, "n": 0}
    assert document.entry("solo").policy.threshold == pytest.approx(0.8)
    assert notes == []


def test_unlabeled_evaluation_split_is_estimated_without_interval():
    run = make_run("m", BINARY, splits=("val", "test", "prod"), unlabeled=("prod",), seed=6)
    document, notes = build_policy_document({"m": run}, UseCase(1, 0, -4), kind="threshold", eval_split="prod")
    evaluation = document.entry("m").evaluation
    assert evaluation["estimated"] is True
    assert evaluation["ci95"] is None
    assert evaluation["n"] == 120
    assert any("no labels" in n for n in notes)
    validate_policy_document(document.to_dict())


def test_choose_splits_defaults_and_errors():
    run = make_run("m", BINARY, splits=("val", "test", "prod"), unlabeled=("prod",))
    assert (choose_splits(run).tune, choose_splits(run).evaluate) == ("val", "test")
    assert choose_splits(run, eval_split="prod").tune == "val"
    assert choose_splits(run, eval_split="val").tune is None
    solo = make_run("s", BINARY, splits=("all",))
    assert (choose_splits(solo).tune, choose_splits(solo).evaluate) == (None, "all")
    with pytest.raises(ValueError, match=r"model 'm' has no split 'holdout'.*'val', 'test', 'prod'"):
        choose_splits(run, eval_split="holdout")
    with pytest.raises(ValueError, match="to tune on"):
        choose_splits(run, tune_split="train")
    ambiguous = make_run("x", BINARY, splits=("a", "b", "c"))
    with pytest.raises(ValueError, match="--eval-split"):
        choose_splits(ambiguous)


def test_a_model_that_cannot_get_a_policy_is_skipped_with_a_note(binary_runs, ternary_runs):
    runs = {**binary_runs, **ternary_runs}
    document, notes = build_policy_document(runs, binary_matrix(), kind="threshold")
    assert document.models == tuple(binary_runs)
    assert any(n.startswith("tree: skipped") and "value matrix" in n for n in notes)


def test_a_calibration_that_cannot_be_fitted_falls_back_to_raw_confidences_and_says_so(ternary_runs):
    # One rule on screen, in the CLI and in the JSON (valuecore._pipeline.pipeline): raw confidences, with a note.
    document, notes = build_policy_document(ternary_runs, UseCase(1, 0, -4), kind="threshold",
                                            calibration_method="platt")
    for entry in document.entries:
        assert entry.policy.calibration["method"] == "none"
        assert any("platt recalibration cannot be fitted" in n and "binary runs only" in n for n in entry.notes)


def test_nothing_usable_raises_with_every_reason(ternary_runs):
    with pytest.raises(ValueError, match=r"no policy could be built.*tree: skipped.*no split 'holdout'"):
        build_policy_document(ternary_runs, UseCase(1, 0, -4), kind="threshold", eval_split="holdout")


def test_expected_value_with_isotonic_is_refused(binary_runs):
    with pytest.raises(ValueError, match="isotonic"):
        build_policy_document(binary_runs, UseCase(1, 0, -4), kind="expected_value", calibration_method="isotonic")


def test_unknown_kind_or_method_is_refused(binary_runs):
    with pytest.raises(ValueError, match="unknown policy kind 'best'"):
        build_policy_document(binary_runs, UseCase(1, 0, -4), kind="best")
    with pytest.raises(ValueError, match="unknown calibration method 'beta'"):
        build_policy_document(binary_runs, UseCase(1, 0, -4), calibration_method="beta")


def test_value_matrix_in_another_class_order_gives_the_same_policy(ternary_runs):
    matrix = ternary_matrix()
    order = [2, 0, 1]
    shuffled = ValueMatrix(tuple(TERNARY[i] for i in order), matrix.values[np.ix_(order, order + [3])])
    assert align_values(shuffled, TERNARY).to_dict() == matrix.to_dict()
    a, _ = build_policy_document(ternary_runs, matrix, kind="class_thresholds")
    b, _ = build_policy_document(ternary_runs, shuffled, kind="class_thresholds")
    assert [e.policy for e in a.entries] == [e.policy for e in b.entries]
    with pytest.raises(ValueError, match=r"value matrix is for classes \['neg', 'pos'\]"):
        align_values(binary_matrix(), TERNARY)


# --------------------------------------------------------------------------
# reading refuses what it cannot trust
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def good_document(binary_runs):
    document, _ = build_policy_document(binary_runs, UseCase(1, 0, -4), kind="threshold")
    return document.to_dict()


def test_unknown_schema_version_is_refused(good_document):
    from valuecore import __version__

    data = copy.deepcopy(good_document)
    data["schema_version"] = 4
    message = f"schema_version 4 is not supported; this is valuecore {__version__} which reads versions 1, 2 and 3"
    with pytest.raises(ValueError) as info:
        PolicyDocument.from_dict(data)
    assert str(info.value) == message
    with pytest.raises(ValueError, match="schema_version 4 is not supported"):
        PolicyDocument.from_json(json.dumps(data))
    del data["schema_version"]
    with pytest.raises(ValueError, match="no schema_version"):
        PolicyDocument.from_dict(data)


@pytest.mark.parametrize(
    "text",
    ["", "{", "not json", '{"schema_version": 1,}', "[1, 2"],
)
def test_not_json_is_refused(text):
    with pytest.raises(ValueError, match="not valid JSON"):
        PolicyDocument.from_json(text)


def test_nan_in_the_file_is_refused(good_document):
    text = json.dumps(good_document).replace('"value_total": ', '"value_total": NaN, "x": ', 1)
    with pytest.raises(ValueError, match="NaN is not a JSON number"):
        PolicyDocument.from_json(text)


def test_not_an_object_is_refused():
    with pytest.raises(ValueError, match="must be a JSON object"):
        PolicyDocument.from_json("[]")


def _broken(document, path, value=None, delete=False):
    data = copy.deepcopy(document)
    target = data
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "delete", "expected"),
    [
        (("models", 0, "policy", "threshold"), "high", False, r"models\[0\]\.policy\.threshold"),
        (("models", 0, "policy", "threshold"), 1.5, False, r"models\[0\]\.policy\.threshold"),
        (("models", 0, "policy", "kind"), "best", False, r"models\[0\]\.policy\.kind"),
        (("models", 0, "policy", "kind"), None, True, r"models\[0\]\.policy: 'kind' is a required property"),
        (("models", 1, "classes"), ["only"], False, r"models\[1\]\.classes"),
        (("models", 0, "run_sha256"), "abc", False, r"models\[0\]\.run_sha256"),
        (("models", 0, "policy", "calibration", "method"), "beta", False, r"calibration\.method"),
        (("models", 0, "policy", "class_thresholds"), {"neg": 0.5}, False, r"models\[0\]\.policy\.class_thresholds"),
        (("models", 0, "tuned_on"), None, True, r"models\[0\]: 'tuned_on' is a required property"),
        (("models", 0, "evaluation", "ci95"), [0.1], False, r"evaluation\.ci95"),
        (("use_case", "v_wrong"), "-4", False, r"use_case\.v_wrong"),
        (("models",), [], False, r"at models"),
        (("models",), None, True, "the top level: 'models' is a required property"),
    ],
)
def test_schema_violations_name_the_key(good_document, path, value, delete, expected):
    data = _broken(good_document, path, value, delete)
    with pytest.raises(ValueError, match=expected):
        validate_policy_document(data)
    with pytest.raises(ValueError, match="invalid policy document"):
        PolicyDocument.from_json(json.dumps(data))


def test_calibration_parameters_are_checked(good_document):
    data = _broken(good_document, ("models", 0, "policy", "calibration"), {"method": "temperature"})
    with pytest.raises(ValueError, match=r"calibration: 'temperature' is a required property"):
        validate_policy_document(data)
    data = _broken(good_document, ("models", 0, "policy", "calibration"), {"method": "temperature", "temperature": 0})
    with pytest.raises(ValueError, match="calibration.temperature"):
        validate_policy_document(data)
    data = _broken(good_document, ("models", 0, "policy", "calibration"), {"method": "none", "temperature": 2})
    with pytest.raises(ValueError, match="calibration"):
        validate_policy_document(data)
    # the calibrator's own checks run on reading as well
    bad = {"method": "isotonic", "x": [0.2, 0.1], "y": [0.3, 0.4]}
    data = _broken(good_document, ("models", 0, "policy", "calibration"), bad)
    validate_policy_document(data)
    with pytest.raises(ValueError, match=r"policy of model 'lr' is invalid.*sorted"):
        PolicyDocument.from_dict(data)


def test_class_thresholds_must_name_exactly_the_classes(binary_runs):
    document, _ = build_policy_document(binary_runs, UseCase(1, 0, -4), kind="class_thresholds")
    data = document.to_dict()
    data["models"][0]["policy"]["class_thresholds"] = {"neg": 0.9, "maybe": 0.5}
    with pytest.raises(ValueError, match=r"model 'lr'.*unknown \['maybe'\].*missing \['pos'\]"):
        PolicyDocument.from_dict(data)


def test_unknown_keys_are_allowed_for_forward_compatibility(good_document):
    data = _broken(good_document, ("comment",), "added later")
    data["models"][0]["extra"] = {"anything": 1}
    assert PolicyDocument.from_dict(data).models == ("lr", "nn")


def test_value_matrix_classes_must_match_the_entries(binary_runs):
    document, _ = build_policy_document(binary_runs, binary_matrix(), kind="threshold")
    data = document.to_dict()
    assert data["use_case"] == binary_matrix().to_dict()
    data["use_case"]["classes"] = ["x", "y"]
    with pytest.raises(ValueError, match="value matrix is for classes"):
        PolicyDocument.from_dict(data)


# --------------------------------------------------------------------------
# class checks against runs
# --------------------------------------------------------------------------
def test_class_mismatch_is_refused_naming_the_model_and_both_lists(binary_runs):
    document, _ = build_policy_document(binary_runs, UseCase(1, 0, -4), kind="threshold")
    entry = document.entry("lr")
    check_classes(entry, BINARY)
    with pytest.raises(ValueError, match=r"model 'lr'.*\['neg', 'pos'\].*\['a', 'b', 'c'\].*different classes"):
        check_classes(entry, TERNARY)
    with pytest.raises(ValueError, match="another order"):
        check_classes(entry, ("pos", "neg"))

    other = dict(binary_runs)
    other["lr"] = make_run("lr", TERNARY, seed=1)
    with pytest.raises(ValueError, match=r"model 'lr' was made for classes \['neg', 'pos'\]"):
        check_against_runs(document, other)
    with pytest.raises(ValueError, match="different classes"):
        document.decide("lr", other["lr"].splits["test"])


def test_check_against_runs_warns_about_changed_or_missing_runs(binary_runs):
    document, _ = build_policy_document(binary_runs, UseCase(1, 0, -4), kind="threshold")
    assert check_against_runs(document, binary_runs) == []
    changed = {"lr": make_run("lr", BINARY, seed=99)}
    warnings = check_against_runs(document, changed)
    assert any("'lr'" in w and "not the one" in w for w in warnings)
    assert any("'nn'" in w and "not among the runs" in w for w in warnings)


# --------------------------------------------------------------------------
# NaN and infinities never reach the file
# --------------------------------------------------------------------------
def test_nan_and_infinity_are_written_as_null():
    policy = Policy("threshold", threshold=0.7)
    evaluation = {
        "split": "test",
        "n": 3,
        "value_total": float("nan"),
        "value_per_item": np.float64("inf"),
        "value_dimensionless": None,
        "coverage": np.float32(0.5),
        "n_correct": np.int64(1),
        "n_wrong": 0,
        "n_abstain": 2.0,
        "ci95": [float("-inf"), np.nan],
    }
    entry = PolicyEntry("m", None, BINARY, policy, {"split": "val", "n": 3}, evaluation)
    document = PolicyDocument(UseCase(1.0, 1.0, 0.0), (entry,))  # omega infinite
    text = document.to_json()
    data = _strict_loads(text)
    assert data["use_case"]["omega"] is None
    assert data["models"][0]["evaluation"]["value_total"] is None
    assert data["models"][0]["evaluation"]["value_per_item"] is None
    assert data["models"][0]["evaluation"]["ci95"] == [None, None]
    validate_policy_document(data)
    assert PolicyDocument.from_json(text).values == UseCase(1.0, 1.0, 0.0)


def test_values_from_dict_reads_both_forms_and_refuses_others():
    assert values_from_dict({"v_correct": 1, "v_abstain": 0, "v_wrong": -4, "omega": 99}) == UseCase(1, 0, -4)
    matrix = values_from_dict(binary_matrix().to_dict())
    assert matrix.to_dict() == binary_matrix().to_dict()
    with pytest.raises(ValueError, match="misses"):
        values_from_dict({"v_correct": 1})
    with pytest.raises(ValueError, match="classes"):
        values_from_dict({"value_matrix": [[1, 0, 0], [0, 1, 0]]})


def test_documents_need_unique_models():
    entry = PolicyEntry("m", None, BINARY, fit_policy("accept_all", None, UseCase(1, 0, -1)))
    with pytest.raises(ValueError, match="repeated"):
        PolicyDocument(UseCase(1, 0, -1), (entry, entry))


def test_fit_policy_on_presorted_calibrated_run_matches_document(binary_runs):
    # The document's policy is exactly what fit_policy gives on the calibrated, presorted tuning split.
    from valuecore._model.recalibration import fit_calibration

    run = binary_runs["lr"]
    document, _ = build_policy_document(
        {"lr": run}, UseCase(1, 0, -4), kind="threshold", calibration_method="temperature"
    )
    calibrator = fit_calibration(run.splits["val"], "temperature")
    expected = fit_policy(
        "threshold", presort(calibrator.apply(run.splits["val"])), UseCase(1, 0, -4), calibration=calibrator.to_dict()
    )
    assert document.entry("lr").policy == expected


@pytest.mark.parametrize("values", [UseCase(0, -2, -1.9375), "symmetric"])
def test_reference_implementation_in_the_docs_keeps_exact_expected_value_ties(values):
    # Classes 0, 1 and 3 have the same probability and symmetric values, so their expected values
    # are exactly equal and the tie goes to the predicted class 0. A plain matrix product adds the
    # terms in different orders and puts class 3 (use case) or class 1 (matrix) one ulp ahead.
    classes = ("a", "b", "c", "d")
    if values == "symmetric":  # not a use case: class c is charged differently
        values = ValueMatrix(classes, [[2.75, -0.875, -1.375, -0.875, -3.0], [-0.875, 2.75, -1.375, -0.875, -3.0],
                                       [-1.0, -1.0, 2.75, -1.0, -3.0], [-0.875, -0.875, -1.375, 2.75, -3.0]])
    proba = np.array([[2 / 7, 2 / 7, 1 / 7, 2 / 7]])
    document = {
        "schema_version": 2, "use_case": values.to_dict(),
        "models": [{"model": "m", "classes": list(classes),
                    "policy": {"kind": "expected_value", "calibration": {"method": "none"}}}],
    }
    got = _docs_reference_code()["decide"](document, "m", proba)
    engine = Policy("expected_value").decide(Predictions.from_proba(proba, classes=list(classes)), values)
    assert got.tolist() == engine.tolist() == [0]


@pytest.mark.parametrize(
    ("kind", "calibration"),
    # expected_value with isotonic is refused when the document is built (tested above).
    [(k, c) for k in POLICY_KINDS for c in CALIBRATIONS if (k, c) != ("expected_value", "isotonic")],
)
def test_reference_implementation_in_the_docs_matches_valuecore(kind, calibration):
    reference = _docs_reference_code()
    cases = [("use_case", 2), ("matrix", 2)] + ([("matrix", 3)] if calibration != "platt" else [])
    for values_kind, n_classes in cases:
        runs = _runs(n_classes)
        document, _ = _built(kind, calibration, values_kind, n_classes)
        data = json.loads(document.to_json())
        for name, run in runs.items():
            for predictions in run.splits.values():
                expected = document.decide(name, predictions)
                expected = np.where(expected == predictions.n_classes, -1, expected)
                got = reference["decide"](data, name, predictions.proba, predictions.logits)
                np.testing.assert_array_equal(got, expected)


# ----------------------------------------------------------- recommendation
def _two_model_document():
    runs = {name: make_run(name, BINARY, seed=seed) for seed, name in enumerate(("a", "b"))}
    document, _ = build_policy_document(runs, UseCase(1, 0, -4), kind="threshold")
    return runs, document


def test_the_recommendation_round_trips_and_the_schema_accepts_it():
    import dataclasses

    _, document = _two_model_document()
    for recommendation in ({"model": "b", "policy": "threshold", "reason": "b earns more."},
                           {"model": None, "policy": None, "reason": "No model earns more."}):
        stated = dataclasses.replace(document, recommendation=recommendation)
        data = json.loads(stated.to_json())
        Draft202012Validator(policy_schema()).validate(data)
        assert data["schema_version"] == 2 and data["recommendation"] == recommendation
        again = PolicyDocument.from_json(stated.to_json())
        assert again.recommendation == recommendation and again == stated
    assert "recommendation" not in document.to_dict()  # optional: absent when not stated


@pytest.mark.parametrize("recommendation, words", [
    ({"model": "zeta", "policy": "threshold", "reason": ""}, "no entry"),
    ({"model": "a", "policy": "expected_value", "reason": ""}, "holds a 'threshold' policy"),
    ({"model": None, "policy": "threshold", "reason": ""}, "must be null"),
    ({"model": "a", "policy": "threshold"}, "recommendation"),
    ({"model": "a", "policy": "threshold", "reason": "", "extra": 1}, "recommendation"),
])
def test_a_recommendation_the_entries_cannot_honour_is_refused(recommendation, words):
    _, document = _two_model_document()
    data = document.to_dict()
    data["recommendation"] = recommendation
    with pytest.raises(ValueError, match=words):
        PolicyDocument.from_dict(data)


def test_apply_marks_the_recommended_policy():
    import dataclasses

    import valuecore as vc

    runs, document = _two_model_document()
    stated = dataclasses.replace(document, recommendation={"model": "b", "policy": "threshold", "reason": "x"})
    applied = vc.apply_policy_document(PolicyDocument.from_json(stated.to_json()), runs)
    assert [a.recommended for a in applied] == [False, True]
    assert not any(a.recommended for a in vc.apply_policy_document(document, runs))
