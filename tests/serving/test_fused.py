"""`decide` and `RejectOptionClassifier.predict` for a threshold rule read the probabilities in one pass
(`valuecore/_serve/fused.py`): the same labels as the general path (`decisions(...).action`), bit for bit,
and the same refusals, with the rows at fault named by the general path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, ClassifierMixin

from valuecore._serve import fused
from valuecore.serving import RejectOptionClassifier, load_policy

from helpers.serving import served

KINDS = ["threshold", "calibrated_threshold", "class_thresholds", "two_tier", "accept_all"]


def general(policy, proba):
    """What ``decide`` gave before the one-pass path: the labels of ``decisions(...).action``."""
    return policy.labels()[policy.decisions(proba).action]


def one_pass(policy, proba):
    """``decide``'s labels by the one-pass path itself (failing when it declined)."""
    got, _ = policy._fused(proba, policy.labels())
    assert got is not None, "the one-pass path declined"
    return got


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few rows, so that a small input spans many blocks and a partial last one."""
    monkeypatch.setattr(fused, "_ROWS_TWO_CLASSES", 64)
    monkeypatch.setattr(fused, "_ROWS_PER_TILE", 48)
    monkeypatch.setattr(fused, "_ROWS_FEW_REACH", 40)
    monkeypatch.setattr(fused, "_DOUBTFUL_BATCH", 50)  # screened rows kept over several blocks


def rows_with_ties(rng, rows, n_classes, alpha, dtype):
    proba = rng.dirichlet(np.full(n_classes, alpha), size=rows)
    for row in range(rows // 3, 2 * rows // 3):  # m classes at 1 / m, the others at 0: equal maxima
        proba[row] = 0.0
        proba[row, rng.choice(n_classes, rng.integers(1, n_classes + 1), replace=False)] = 1.0
        proba[row] /= proba[row].sum()
    proba = proba.astype(dtype)
    proba[:5] = proba[5:10]  # repeated rows: ties in confidence
    proba[10, :2] = [0.5 + 4e-4, 0.5 + 4e-4]  # a tied maximum, the row's sum off by its (allowed) most
    proba[10, 2:] = 0
    if n_classes == 2:
        proba[11] = [1.0 + 5e-4, 0.0]  # above 1 (allowed within the tolerance): the confidence is capped at 1
    return proba


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_classes", [2, 3, 10, 32])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_one_pass_gives_the_general_labels_at_ties(kind, n_classes, dtype):
    rng = np.random.default_rng(n_classes)
    classes = [f"c{k}" for k in range(n_classes)]
    proba = rows_with_ties(rng, 500, n_classes, 0.3, dtype)
    confidence = np.minimum(proba.max(axis=1).astype(np.float64), 1.0)
    chosen = confidence[[0, 10, 11, *rng.choice(500, 3, replace=False)]]
    for threshold in np.unique(np.concatenate([chosen, np.nextafter(chosen, 2.0), np.nextafter(chosen, -1.0)])):
        threshold = float(min(threshold, 1.0))
        policy = served(kind, classes, None, threshold, threshold * 0.8)
        expected = general(policy, proba)
        assert np.array_equal(one_pass(policy, proba), expected)
        assert np.array_equal(policy.decide(proba), expected)


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("n_classes", [2, 7])
def test_any_memory_layout(n_classes):
    rng = np.random.default_rng(3)
    base = rows_with_ties(rng, 400, n_classes, 0.5, np.float64)
    policy = served("threshold", [f"c{k}" for k in range(n_classes)], None, 0.6, 0.4)
    wide = np.zeros((800, n_classes + 3))
    wide[::2, 1:n_classes + 1] = base
    for proba in (np.asfortranarray(base), wide[::2, 1:n_classes + 1], base[::-1]):
        assert np.array_equal(one_pass(policy, proba), general(policy, np.ascontiguousarray(proba)))


@pytest.fixture
def no_argmax(monkeypatch):
    """The path that takes no argmax (every threshold above half of 1 + the tolerance) is to decide alone."""
    def tile(*args):
        raise AssertionError("the argmax path ran")

    monkeypatch.setattr(fused, "_tile_codes", tile)


def rows_above_half(rng, rows, n_classes, dtype):
    """Rows with the cases the path without argmax turns on: tied maxima at half the sum (row 10), an entry
    above 1 within the tolerance, near one-hot rows and rows whose top entries are nearly tied."""
    proba = rows_with_ties(rng, rows, n_classes, 0.3, np.float64)
    proba[11] = 0.0
    proba[11, 1] = 1.0 + 5e-4
    proba[12:40] = rng.dirichlet(np.full(n_classes, 0.02), size=28)
    proba[40:60, :2] = 0.499, 0.501
    proba[40:60, 2:] = 0
    return proba.astype(dtype)


@pytest.mark.usefixtures("small_blocks", "no_argmax")
@pytest.mark.parametrize("kind", ["threshold", "class_thresholds", "two_tier"])
@pytest.mark.parametrize("n_classes", [3, 32])
@pytest.mark.parametrize("temperature", [None, 0.8, 2.5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_without_argmax_the_general_labels(kind, n_classes, temperature, dtype):
    rng = np.random.default_rng(n_classes)
    proba = rows_above_half(rng, 400, n_classes, dtype)
    if dtype == np.float32:  # any memory layout
        proba = np.asfortranarray(proba)
    classes = [f"c{k}" for k in range(n_classes)]
    confidence = served("threshold", classes, temperature, 0.5, 0.5).decisions(proba).confidence
    high = confidence[confidence >= 0.9]
    chosen = np.concatenate([[0.9, 1.0], high[rng.choice(high.size, min(high.size, 2), replace=False)]])
    for threshold in np.unique(np.concatenate([chosen, np.nextafter(chosen, 2.0), np.nextafter(chosen, -1.0)])):
        threshold = float(min(threshold, 1.0))
        policy = served(kind, classes, temperature, threshold, threshold * 0.93)
        assert np.array_equal(one_pass(policy, proba), general(policy, proba))


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("temperature", [None, 0.8])
def test_negative_zeros_decide_as_the_general_path(temperature):
    """-0.0 is not below 0 (the general path accepts it) but has its sign bit set: the path without argmax
    declines it, and the general path decides."""
    proba = np.random.default_rng(6).dirichlet(np.full(5, 0.3), size=300)
    proba[proba < 0.01] = -0.0
    proba /= proba.sum(axis=1, keepdims=True)
    policy = served("threshold", [f"c{k}" for k in range(5)], temperature, 0.8, 0.5)
    assert np.signbit(proba).any() and fused._lowest_reach is not None
    assert np.array_equal(policy.decide(proba), general(policy, proba))


@settings(max_examples=60, deadline=None)
@given(n_classes=st.integers(2, 12), rows=st.integers(1, 200), alpha=st.sampled_from([0.05, 0.5, 3.0]),
       temperature=st.sampled_from([None, 0.1, 0.8, 1.0, 2.5]), pick=st.integers(0, 10**6),
       kind=st.sampled_from(KINDS), float32=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_one_pass_gives_the_general_labels(n_classes, rows, alpha, temperature, pick, kind, float32, seed):
    rng = np.random.default_rng(seed)
    proba = rows_with_ties(rng, max(rows, 12), n_classes, alpha, np.float32 if float32 else np.float64)
    if kind == "accept_all" and temperature is not None:
        kind = "threshold"
    classes = [f"c{k}" for k in range(n_classes)]
    probe = served("threshold", classes, temperature, 0.5, 0.5)  # the (recalibrated) confidences, to pick from
    confidence = probe.decisions(proba).confidence
    threshold = float(confidence[pick % len(confidence)])
    policy = served(kind, classes, temperature, threshold, threshold * 0.7)
    sizes = ("_ROWS_TWO_CLASSES", "_ROWS_PER_TILE", "_ROWS_FEW_REACH", "_DOUBTFUL_BATCH")
    saved = [getattr(fused, name) for name in sizes]
    try:
        for name in sizes:
            setattr(fused, name, 1 + pick % 50)
        assert np.array_equal(one_pass(policy, proba), general(policy, proba))
    finally:
        for name, size in zip(sizes, saved):
            setattr(fused, name, size)


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("n_classes", [2, 5])
@pytest.mark.parametrize("fault", ["nan", "inf", "negative", "sum", "sum by a hair", "zeros"])
@pytest.mark.parametrize("temperature", [None, 0.8])
@pytest.mark.parametrize("threshold", [0.3, 0.9])  # the argmax taken, or not (n_classes > 2)
def test_bad_rows_are_refused_as_before(n_classes, fault, temperature, threshold):
    proba = np.random.default_rng(5).dirichlet(np.ones(n_classes), size=300)
    row = 250  # in a later block than the first
    proba[row] = {"nan": np.nan, "inf": np.inf, "negative": 0.0, "sum": 0.9 / n_classes, "zeros": 0.0,
                  "sum by a hair": (1 + 1.2e-3) / n_classes}[fault]
    if fault == "negative":  # the row sums to 1
        proba[row, :2] = [1.05, -0.05]
    policy = served("threshold", [f"c{k}" for k in range(n_classes)], temperature, threshold, 0.2)
    assert policy._fused(proba, policy.labels())[0] is None
    with pytest.raises(ValueError) as general_error:
        policy.decisions(proba)
    with pytest.raises(ValueError) as error:
        policy.decide(proba)
    assert str(error.value) == str(general_error.value)
    assert "250" in str(error.value)


class Float32Model(ClassifierMixin, BaseEstimator):
    """A fitted classifier whose probabilities are float32 (as some models give them)."""

    def __init__(self, n_classes=3):
        self.n_classes = n_classes

    def fit(self, X, y=None):
        self.classes_ = np.arange(self.n_classes)
        self.n_features_in_ = X.shape[1]
        return self

    def predict_proba(self, X):
        scores = np.exp(np.asarray(X, dtype=np.float64)[:, :self.n_classes] * 3)
        return (scores / scores.sum(axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("calibration", [{"method": "none"},
                                         {"method": "temperature", "temperature": 0.7, "use_logits": False}])
def test_float32_probabilities_decide_as_their_float64_copy(n_classes, calibration):
    X = np.random.default_rng(2).normal(size=(3000, 5))
    model = Float32Model(n_classes).fit(X)
    proba64 = model.predict_proba(X).astype(np.float64)
    document = {"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
                "models": [{"model": "m", "classes": [str(c) for c in range(n_classes)],
                            "policy": {"kind": "threshold", "threshold": float(np.median(proba64.max(axis=1))),
                                       "calibration": calibration}}]}
    wrapped = RejectOptionClassifier(model, policy=document, abstain_label=-1)
    codes = load_policy(document).decisions(proba64).action
    expected = np.append(np.arange(n_classes), -1)[np.minimum(codes, n_classes)]
    got = wrapped.predict(X)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)
    assert (got == -1).any() and (got != -1).any()
    assert np.array_equal(wrapped.decide(X), np.array([*range(n_classes), -1], dtype=object)[codes])
