"""Issue 36, part A, the serving runtime as strict as the loader: duplicate keys, reserved action labels,
parameters in range, probabilities' dtype, columns matched by name, bounded reads, save-time checks and a
shortlist that does not sort every class."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers.serving import document, fitted

import valuecore as vc
from valuecore.cli import main
from valuecore.policy_json import PolicyDocument
from valuecore.serving import RejectOptionClassifier, load_policy

ROOT = Path(__file__).resolve().parents[2]
CANCER = ROOT / "sample_runs" / "breast_cancer" / "logreg.csv"
def refused_by_both(data: dict, *words: str, loader_words=()) -> None:
    """The runtime (load_policy, no jsonschema) refuses what the loader (PolicyDocument, the schema) refuses;
    ``words`` must be in the runtime's message, ``loader_words`` in the loader's."""
    for read, wanted in ((load_policy, words), (PolicyDocument.from_dict, loader_words)):
        with pytest.raises(ValueError) as caught:
            read(copy.deepcopy(data))
        for word in wanted:
            assert word in str(caught.value), (read.__name__, str(caught.value))


# ------------------------------------------------------------------ duplicate keys
DUPLICATED = ('{"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4}, "models": '
              '[{"model": "m", "classes": ["a", "b"], "policy": {"kind": "threshold", "threshold": 0.99, '
              '"threshold": 0.0, "class_thresholds": null, "calibration": {"method": "none"}}}]}')


def test_a_key_given_twice_is_refused_by_name_wherever_a_policy_is_read(tmp_path, capsys):
    path = tmp_path / "twice.json"
    path.write_text(DUPLICATED)
    with pytest.raises(ValueError, match="'threshold' more than once"):
        load_policy(path)
    with pytest.raises(ValueError, match="'threshold' more than once"):
        PolicyDocument.from_json(DUPLICATED)
    assert main(["apply", str(path), str(CANCER)]) == 2
    assert "'threshold' more than once" in capsys.readouterr().err
    matrix = tmp_path / "values.json"
    matrix.write_text('{"v_correct": 1, "v_abstain": 0, "v_wrong": -4, "v_wrong": 4}')
    assert main(["report", str(CANCER), "--value-matrix", str(matrix), "--no-interval"]) == 2
    assert "'v_wrong' more than once" in capsys.readouterr().err


# ------------------------------------------------------------------ reserved action labels
def test_a_class_named_like_an_action_cannot_be_told_from_it():
    policy = load_policy(document(classes=("abstain", "benign")))
    proba = [[0.9, 0.1], [0.5, 0.5]]
    with pytest.raises(ValueError, match="'abstain'.*is also a class"):
        policy.decide(proba)
    assert policy.decide(proba, abstain="person").tolist() == ["abstain", "person"]
    with pytest.raises(ValueError, match="is also a class"):
        load_policy(document(classes=("1", "2"))).decide(proba, abstain=1)  # the label 1 is the class "1"
    two_tier = load_policy(document(classes=("confirm", "b"), kind="two_tier", threshold=0.9, assist_threshold=0.6,
                                    assisted={"v_confirmed_correct": 0.5, "v_confirmed_wrong": -1, "cost": 0}))
    with pytest.raises(ValueError, match="'confirm'.*is also a class"):
        two_tier.decide(proba)
    assert two_tier.decide(proba, confirm="check").tolist() == ["confirm", "abstain"]
    with pytest.raises(ValueError, match="must differ"):
        two_tier.decide(proba, abstain="x", confirm="x")
    # a threshold rule never confirms: a class "confirm" is no clash there
    assert load_policy(document(classes=("confirm", "b"))).decide(proba).tolist() == ["confirm", "abstain"]


@pytest.mark.parametrize("classes, label", [((-1, 1), True), ((-1, 1), 1.0), ((0, 1), np.int8(0)), ((1, 2), "1"),
                                            ((False, True), 1), (("a", "b"), "a")])
def test_the_wrapper_refuses_an_abstain_label_equal_to_a_class_as_value_or_text(classes, label):
    model, X, y = fitted(classes)
    clf = RejectOptionClassifier(model, use_case=vc.UseCase(1, 0, -4), abstain_label=label)
    with pytest.raises(ValueError, match="is one of the classes"):
        clf.fit(X, y)
    stored = RejectOptionClassifier(model, use_case=vc.UseCase(1, 0, -4), abstain_label=99).fit(X, y).document_
    with pytest.raises(ValueError, match="is one of the classes"):
        RejectOptionClassifier(model, stored, abstain_label=label).predict(X)


def test_an_abstain_label_that_is_no_class_keeps_every_abstention_apart():
    model, X, y = fitted((-1, 1))
    clf = RejectOptionClassifier(model, use_case=vc.UseCase(1, 0, -20), abstain_label=0).fit(X, y)
    actions = clf.predict(X)
    assert set(actions.tolist()) == {-1, 0, 1}
    assert np.array_equal(actions == 0, clf.decisions(X).action == 2)


# ------------------------------------------------------------------ parameters the loader refuses
@pytest.mark.parametrize("calibration, words", [
    ({"method": "temperature", "temperature": 1e-320}, ("temperature", "1e-06")),
    ({"method": "temperature", "temperature": 1e308}, ("temperature", "1e+06")),
    ({"method": "temperature", "temperature": 0.0}, ("temperature",)),
    ({"method": "isotonic", "x": ["0.1", "0.9"], "y": [0.2, 0.8]}, ("policy.calibration.x[0]: '0.1' is not",
                                                                    "a number in [0, 1]")),
    ({"method": "isotonic", "x": [0.1, 0.9], "y": [True, True]}, ("policy.calibration.y[0]: True is not a number",)),
    ({"method": "isotonic", "x": [-3, 9], "y": [0.2, 0.8]}, ("policy.calibration.x[0]: -3 is not a number in [0, 1]",)),
    ({"method": "platt", "a": 1e7, "b": 0}, ("policy.calibration.a: 10000000.0 is not a number from -1e+06 to 1e+06",)),
])
def test_calibration_parameters_out_of_the_schema_s_range_are_refused_by_the_runtime(calibration, words):
    refused_by_both(document(calibration=calibration), *words)


def test_the_runtime_refuses_what_the_schema_refuses_in_words():
    refused_by_both(document(kind="class_thresholds", threshold=None, class_thresholds=[0.5, 0.5]),
                    "class_thresholds")
    shortlist = {"rule": "top_k", "k": 1, "list_threshold": -1, "values": {"1": [0.5, -0.1]}}
    refused_by_both(document(classes=("a", "b", "c"), kind="shortlist", threshold=0.9, shortlist=shortlist),
                    "list_threshold")
    refused_by_both(document(classes=[f"c{k}" for k in range(2000)]), "2,000 classes", "VALUECORE_MAX_CLASSES",
                    loader_words=("2,000 classes",))
    refused_by_both(document(classes=("", "b")), "classes")


@pytest.mark.parametrize("temperature", [1e-6, 1e6])
def test_the_ends_of_the_temperature_range_give_finite_confidences(temperature):
    policy = load_policy(document(calibration={"method": "temperature", "temperature": temperature}))
    decisions = policy.decisions(np.array([[0.999999, 1e-6], [0.3, 0.7], [0.5, 0.5], [1.0, 0.0]]))
    assert np.isfinite(decisions.confidence).all() and (decisions.confidence <= 1).all()


# ------------------------------------------------------------------ what the model gives
@pytest.mark.parametrize("proba, words", [
    (np.array([[0.9 + 0j, 0.1], [0.4, 0.6]]), "complex"),
    (np.ma.masked_array([[0.9, 0.1], [0.4, 0.6]], mask=[[False, False], [True, False]]), "masked"),
    (np.array([[True, False], [False, True]]), "true/false"),
    (np.array([["0.9", "0.1"], ["0.4", "0.6"]]), "text"),
    (np.array([[0.9, 0.1], [0.4, 0.6]], dtype=object), "text or objects"),
])
def test_probabilities_of_the_wrong_kind_are_refused(proba, words):
    policy = load_policy(document())
    with pytest.raises(ValueError, match=words):
        policy.decide(proba)


def test_confidences_and_logits_of_the_wrong_kind_are_refused():
    policy = load_policy(document())
    with pytest.raises(ValueError, match="confidence.*text"):
        policy.decide(y_pred=["benign"], confidence=["0.9"])
    with pytest.raises(ValueError, match="confidence.*true/false"):
        policy.decide(y_pred=["benign"], confidence=[True])
    with pytest.raises(ValueError, match="logits.*complex"):
        policy.decide([[0.9, 0.1]], logits=np.array([[1 + 1j, 0]]))


def test_a_frame_s_class_columns_are_matched_by_name():
    policy = load_policy(document())
    proba = np.array([[0.01, 0.99], [0.95, 0.05], [0.5, 0.5]])
    expected = policy.decide(proba).tolist()
    assert expected == ["malignant", "benign", "abstain"]
    for columns in (["benign", "malignant"], ["proba_benign", "proba_malignant"]):
        frame = pd.DataFrame(proba, columns=columns)
        assert policy.decide(frame).tolist() == expected
        assert policy.decide(frame[columns[::-1]]).tolist() == expected  # reordered: still by name
    assert policy.decide(pd.DataFrame(proba)).tolist() == expected  # no names (0, 1): in the order of classes
    with pytest.raises(ValueError, match=r"columns \['x', 'y'\].*benign"):
        policy.decide(pd.DataFrame(proba, columns=["x", "y"]))
    logits = pd.DataFrame(np.log(proba + 1e-9)[:, ::-1], columns=["logit_malignant", "logit_benign"])
    temperature = load_policy(document(calibration={"method": "temperature", "temperature": 2.0}))
    assert (temperature.decide(pd.DataFrame(proba, columns=["benign", "malignant"]), logits=logits).tolist()
            == temperature.decide(proba, logits=np.log(proba + 1e-9)).tolist())


# ------------------------------------------------------------------ bounded reads
def refusal_in_a_child(path: Path, env=None) -> subprocess.CompletedProcess:
    code = ("from valuecore.serving import load_policy\n"
            f"try:\n    load_policy(r'{path}')\nexcept ValueError as exc:\n    print('REFUSED', exc)\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env={**os.environ, **(env or {})})


def test_load_policy_refuses_a_fifo_and_an_endless_device_without_waiting(tmp_path):
    fifo = tmp_path / "policy.json"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        done = refusal_in_a_child(path)
        assert "REFUSED" in done.stdout and "not a regular file" in done.stdout, done.stderr[-2000:]


def test_load_policy_reads_no_more_than_its_limit(tmp_path):
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as handle:  # 64 GB, sparse: reading it all would take minutes and all memory
        handle.truncate(64 * 2**30)
    done = refusal_in_a_child(huge, {"VALUECORE_MAX_JSON_MB": "1"})
    assert "REFUSED" in done.stdout and "too large" in done.stdout, done.stderr[-2000:]


def test_apply_and_a_value_matrix_refuse_a_fifo_without_waiting(tmp_path):
    fifo = tmp_path / "values.json"
    os.mkfifo(fifo)
    for args in (["apply", fifo, CANCER], ["report", CANCER, "--value-matrix", fifo]):
        code = f"from valuecore.cli import main\nprint('CODE', main({[str(a) for a in args]!r}))\n"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert "CODE 2" in done.stdout and "not a regular file" in done.stderr, done.stderr[-2000:]


# ------------------------------------------------------------------ a shortlist lists only what it shows
def shortlist_policy(n_classes: int, rule: str, **spec):
    rest = {"k": 3} if rule == "top_k" else {"level": 0.6}
    values = {str(k): [0.5, -0.1] for k in range(1, 6)}
    return load_policy(document(classes=[f"c{k}" for k in range(n_classes)], kind="shortlist", threshold=0.5,
                                shortlist={"rule": rule, "list_threshold": 0.1, "values": values, **rest, **spec}))


def reference_lists(proba: np.ndarray, policy) -> list[tuple]:
    """The lists by a full stable sort of every class (the rule as documented)."""
    order = np.argsort(-proba, axis=1, kind="stable")
    confidence = proba.max(axis=1)
    spec = policy.policy.shortlist
    out = []
    for row, ranked, top in zip(proba, order, confidence):
        if top >= policy.policy.threshold or top < spec["list_threshold"]:
            out.append(())
            continue
        if spec["rule"] == "top_k":
            size = spec["k"]
        else:
            levels = np.cumsum(row[ranked])
            size = min(int((levels < spec["level"]).sum()) + 1, len(row))
        out.append(tuple(policy.classes[i] for i in ranked[:size]) if str(size) in spec["values"] else ())
    return out


@pytest.mark.parametrize("rule", ["top_k", "cumulative"])
def test_shortlists_with_ties_are_the_full_sort_s(rule):
    rng = np.random.default_rng(3)
    grid = rng.integers(0, 4, size=(3000, 12)).astype(float)  # a coarse grid: ties everywhere
    grid[grid.sum(axis=1) == 0, 0] = 1
    proba = grid / grid.sum(axis=1, keepdims=True)
    policy = shortlist_policy(12, rule)
    decisions = policy.decisions(proba)
    assert policy.shortlists(proba) == reference_lists(proba, policy)
    assert decisions.list_order.shape == (3000, int(decisions.list_size.max()))


def test_a_shortlist_over_many_classes_holds_no_sorted_copy_of_them():
    code = (
        "import numpy as np\n"
        "from test_serving_round3 import shortlist_policy\n"
        "rng = np.random.default_rng(0)\n"
        "proba = rng.dirichlet(np.full(200, 0.05), size=100_000)\n"
        "proba_mb = proba.nbytes / 2**20\n"
        "hwm = lambda: int([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]) / 1024\n"
        "import resource\n"
        "base = hwm()\n"
        "for rule in ('top_k', 'cumulative'):\n"
        "    shortlist_policy(200, rule).decisions(proba)\n"
        "print('EXTRA', hwm() - base, 'PROBA', proba_mb)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "PYTHONPATH": f"{ROOT / 'tests' / 'serving'}:{ROOT / 'tests'}:{ROOT}"})
    line = [x for x in done.stdout.splitlines() if x.startswith("EXTRA")]
    assert line, done.stderr[-2000:]
    _, extra, _, proba_mb = line[0].split()
    # A full sort holds the negated copy and the int64 order of every class (2x the probabilities, 305 MB).
    assert float(extra) < 0.5 * float(proba_mb), line[0]


def test_the_runtime_s_bounds_are_the_schema_s():
    from valuecore._model.recalibration import PLATT_BOUND, TEMPERATURE_RANGE

    rules = {rule["if"]["properties"]["method"]["const"]: rule["then"]["properties"]
             for rule in vc.policy_json.policy_schema()["$defs"]["calibration"]["allOf"]}
    temperature = rules["temperature"]["temperature"]
    assert (temperature["minimum"], temperature["maximum"]) == TEMPERATURE_RANGE
    assert rules["platt"]["a"]["maximum"] == rules["platt"]["b"]["maximum"] == PLATT_BOUND
    assert rules["platt"]["a"]["minimum"] == rules["platt"]["b"]["minimum"] == -PLATT_BOUND


def test_thresholds_and_class_thresholds_of_the_wrong_shape_are_sentences():
    with pytest.raises(ValueError, match="class_thresholds must map each class"):
        vc.Policy("class_thresholds", class_thresholds=[0.5, 0.5])
    with pytest.raises(ValueError, match="threshold must be a number"):
        vc.Policy("threshold", threshold="0.5")
    with pytest.raises(ValueError, match="threshold must be a number"):
        vc.Policy("threshold", threshold=True)


def test_logits_too_large_for_a_small_temperature_are_refused_not_nan():
    policy = load_policy(document(calibration={"method": "temperature", "temperature": 1e-6, "use_logits": True}))
    with pytest.raises(ValueError, match="largest number a float holds"):
        policy.decide([[0.9, 0.1]], logits=[[1e303, -1e303]])
    assert policy.decide([[0.9, 0.1]], logits=[[3.0, -2.0]]).tolist() == ["benign"]


def test_a_folder_a_bad_file_and_nullable_frames_in_the_runtime(tmp_path):
    with pytest.raises(ValueError, match="is a folder, not a regular file"):
        load_policy(tmp_path)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(ValueError) as caught:
        load_policy(latin)
    assert str(caught.value).count(str(latin)) == 1, str(caught.value)
    policy = load_policy(document())
    frame = pd.DataFrame({"benign": [0.2, 0.9], "malignant": [0.8, 0.1]}, dtype="Float64")  # pandas' nullable
    assert policy.decide(frame).tolist() == ["malignant", "benign"]
    frame.iloc[1, 0] = None
    with pytest.raises(ValueError, match="NaN or infinite values at rows 1"):
        policy.decide(frame)


def test_the_wrapper_s_decide_refuses_a_class_named_confirm_and_predict_serves_it():
    model, X, y = fitted(("confirm", "yes"))
    assisted = {"v_confirmed_correct": 0.5, "v_confirmed_wrong": -1, "cost": 0}
    clf = RejectOptionClassifier(model, use_case=vc.UseCase(1, 0, -4), kind="two_tier", assisted=assisted,
                                 abstain_label="person").fit(X, y)
    with pytest.raises(ValueError, match="'confirm' is also a class.*use predict"):
        clf.decide(X)
    assert set(clf.predict(X).tolist()) <= {"confirm", "yes", "person"}
