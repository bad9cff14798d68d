"""A decision paired with another run's threshold rules on the same items, counted in that run's class order,
equals the dense pairing bit for bit.

``valuecore._engine.tally.joint_tallies`` gathers one decision's categories on split a into the class order of
run b's ``_Prefixes`` (the same items, the same rows) once for all of b's threshold rules (``_Crossed``); a
threshold rule of b (one threshold, one per class, accept all, hand all over) hands over a prefix of each of
b's predicted classes in that order, so its categories there are slices of two kept arrays. With whole-number
weights every sum is an integer, the same in any order, so each joint tally must equal the one counted in
item order (the dense path it replaces) bit for bit; b's prefix sums run at tiny strides too. The verdict of
several runs on the same items is compared with the verdict through the dense path.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.core import labelled_runs, whole_number_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._decide import verdict as _verdict
from valuecore._engine import tally as _tally

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

JOINT_FIELDS = ("cell_a", "cell_b", "count", "weight", "weight_sq")


def _rules(predictions, draw) -> list:
    """Threshold rules of every family (the last, the expected-value rule, is tallied from its own order)."""
    confidences = sorted(set(predictions.confidence.tolist()))
    options = st.sampled_from([None, 0.0, 1.0, *confidences, *(c + 1e-9 for c in confidences)])
    per_class = {c: draw(options) for c in predictions.classes}
    return [vc.Policy("accept_all"), vc.Policy("threshold"), vc.Policy("threshold", threshold=draw(options) or 0.5),
            vc.Policy("class_thresholds", class_thresholds=per_class), vc.Policy("expected_value")]


@st.composite
def same_items(draw):
    """(a, b, weight kind): two runs on the same items (labels and weights), with their own confidences."""
    a, kind = draw(labelled_runs(max_n=70))
    proba = draw(whole_number_rows(a.n, a.n_classes, draw(st.integers(1, 6))))
    b = vc.Predictions.from_proba(proba / proba.sum(axis=1, keepdims=True), y_true=a.y_true,
                                  sample_weight=a.sample_weight)
    return a, b, kind


def _dense(tally: _tally.Tally) -> _tally.Tally:
    """The same tally without its prefix sums: paired item by item, through the dense count."""
    return _tally.Tally(tally.count, tally.weight, tally.weight_sq, known=tally.categories,
                        weight_max=tally.weight_max)


class _Counted(_tally._Crossed):
    """``_Crossed``, counting the runs it is built for (the path was taken)."""

    built: list = []

    def __init__(self, categories, cache, prefixes):
        super().__init__(categories, cache, prefixes)
        _Counted.built.append(prefixes)


def _crossings(patch) -> list:
    _Counted.built = []
    patch.setattr(_tally, "_Crossed", _Counted)
    return _Counted.built


def _pairings(a, decided_a, b, decided_b) -> None:
    """Each decision of a with every decision of b at once, against the dense pairing of each pair."""
    for key_a, tally_a in decided_a:
        got = _tally.joint_tallies(a, key_a, tally_a, [(b, key_b, tally_b, None) for key_b, tally_b in decided_b])
        for joint, (key_b, tally_b) in zip(got, decided_b):
            _same_joint(joint, _tally.joint_tally(a, ("dense", key_a), _dense(tally_a), b, ("dense", key_b),
                                                  _dense(tally_b), None))


def _same_joint(got: _tally.JointTally, want: _tally.JointTally) -> None:
    for name in JOINT_FIELDS:
        got_array, want_array = getattr(got, name), getattr(want, name)
        assert got_array.dtype == want_array.dtype and got_array.shape == want_array.shape, name
        assert got_array.tobytes() == want_array.tobytes(), name  # bit for bit
    assert got.weight_max == want.weight_max


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_decision_paired_with_another_runs_threshold_rules_equals_the_dense_pairing(data):
    a, b, kind = data.draw(same_items())
    stride = data.draw(st.sampled_from([1, 2, 3, 7, 64]))
    matrix = vc.UseCase(1, 0, -3).for_classes(a.classes)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_tally, "_STRIDE", stride)
        built = _crossings(patch)
        decided_a = [_tally.decision_tally(policy, a, matrix) for policy in _rules(a, data.draw)]
        decided_b = [_tally.decision_tally(policy, b, matrix) for policy in _rules(b, data.draw)]
        _pairings(a, decided_a, b, decided_b)
    # whole-number weights are counted in b's class order (fractional ones in item order, as before)
    assert bool(built) == (kind != "fractional")


def _runs_on_the_same_items(n: int, weights: str, seed: int = 5) -> dict:
    rng = np.random.default_rng(seed)
    n_classes = 4
    y = rng.integers(0, n_classes, n)
    weight = {"unit": None, "integer": rng.integers(0, 4, n).astype(float),
              "fractional": rng.uniform(0.1, 2.0, n)}[weights]
    runs = {}
    for m in range(3):
        logits = rng.normal(size=(n, n_classes)) + (1.0 + 0.5 * m) * np.eye(n_classes)[y]
        proba = np.exp(logits).round(2) + 0.01
        predictions = vc.Predictions.from_proba(proba / proba.sum(axis=1, keepdims=True), y_true=y,
                                                sample_weight=weight)
        for kind, policy in (("accept_all", vc.Policy("accept_all")),
                             ("threshold", vc.Policy("threshold", threshold=0.45 + 0.05 * m)),
                             ("class_thresholds", vc.Policy("class_thresholds", class_thresholds={
                                 c: 0.3 + 0.1 * ((i + m) % 3) for i, c in enumerate(predictions.classes)})),
                             ("expected_value", vc.Policy("expected_value"))):
            runs[(f"m{m}", kind)] = (policy, predictions)
    return runs


@pytest.mark.parametrize("weights", ["unit", "integer", "fractional"])
@pytest.mark.parametrize("wrong", [-2.0, -9.0])
def test_a_verdict_over_runs_on_the_same_items_equals_the_dense_pairing(weights, wrong):
    values = vc.UseCase(1.0, 0.0, wrong)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_tally, "_STRIDE", 3)
        built = _crossings(patch)
        got = _verdict.verdict(_runs_on_the_same_items(3_000, weights), values)
        assert bool(built) == (weights != "fractional")
        patch.setattr(_tally, "_crossable", lambda *_: False)
        want = _verdict.verdict(_runs_on_the_same_items(3_000, weights), values)
    assert repr(got) == repr(want)  # every number, bit for bit in its shortest repr (NaNs included)
    assert [s.basis for s in got.standings[1:]] == ["paired"] * (len(got.standings) - 1)


def test_a_run_that_codes_its_classes_in_another_order_is_paired_as_before():
    # The same items and labels, b's classes in the reverse order: its class codes and cells differ from a's.
    rng = np.random.default_rng(11)
    n, n_classes = 400, 3
    y = rng.integers(0, n_classes, n)
    proba_a, proba_b = (rng.dirichlet(np.ones(n_classes), size=n).round(2) + 0.01 for _ in range(2))
    classes = [str(c) for c in range(n_classes)]
    a = vc.Predictions.from_proba(proba_a / proba_a.sum(axis=1, keepdims=True), y_true=y, classes=classes)
    b = vc.Predictions.from_proba((proba_b / proba_b.sum(axis=1, keepdims=True))[:, ::-1], y_true=y,
                                  classes=classes[::-1])
    assert list(a.classes) != list(b.classes)
    for_a, for_b = (vc.UseCase(1, 0, -3).for_classes(p.classes) for p in (a, b))
    with pytest.MonkeyPatch.context() as patch:
        built = _crossings(patch)
        decided_a = [_tally.decision_tally(vc.Policy("threshold", threshold=0.5), a, for_a)]
        decided_b = [_tally.decision_tally(policy, b, for_b) for policy in (
            vc.Policy("threshold", threshold=0.45), vc.Policy("accept_all"),
            vc.Policy("class_thresholds", class_thresholds={c: 0.4 for c in b.classes}))]
        _pairings(a, decided_a, b, decided_b)
    assert built  # counted in b's class order


def test_sums_that_depend_on_their_order_are_paired_in_item_order():
    # b's weights are whole numbers (its threshold rules are read from its prefix sums) and a's differ from them by
    # less than the pairing tolerates: a's sums are not exact in any order, so they are added in item order.
    rng = np.random.default_rng(12)
    n, n_classes = 3_000, 3
    y = rng.integers(0, n_classes, n)
    whole = rng.integers(1, 4, n).astype(float)
    proba_a, proba_b = (rng.dirichlet(np.ones(n_classes), size=n).round(2) + 0.01 for _ in range(2))
    a = vc.Predictions.from_proba(proba_a / proba_a.sum(axis=1, keepdims=True), y_true=y,
                                  sample_weight=whole * (1 + 1e-11 * rng.random(n)))
    b = vc.Predictions.from_proba(proba_b / proba_b.sum(axis=1, keepdims=True), y_true=y, sample_weight=whole)
    take, unpaired = _verdict.pairing(a, b, ("a", "b"))
    assert take is None and unpaired is None
    matrix = vc.UseCase(1, 0, -3).for_classes(a.classes)
    with pytest.MonkeyPatch.context() as patch:
        built = _crossings(patch)
        decided_a = [_tally.decision_tally(vc.Policy("expected_value"), a, matrix)]
        decided_b = [_tally.decision_tally(policy, b, matrix) for policy in (
            vc.Policy("threshold", threshold=0.45), vc.Policy("accept_all"))]
        assert all(tally_b.prefixes is not None for _, tally_b in decided_b)
        _pairings(a, decided_a, b, decided_b)
    assert not built
