"""Threshold rules tallied from prefix sums along the class order equal tallies counted item by item.

``valuecore._engine.tally._Prefixes`` keeps, every ``_STRIDE`` items of a split's class order, the
sums by true class of the items of positive weight, their weights and squared weights. A
threshold rule (one threshold, one per class, accept all, hand all over) hands over a prefix
of each predicted class, so its tally, and the joint tally of two such rules, is read from
those sums. With whole-number weights every sum is an integer, so these must equal the tallies
counted item by item bit for bit; the stride is made tiny here so that the kept sums, not only
the items added after them, are exercised. The per-class threshold fit's loop over classes is
checked against the vectorised formula it replaced.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.core import labelled_runs  # the same runs as the tally's other tests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._engine import sorting as _sorted
from valuecore._engine import tally as _tally

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it


def runs(max_n=80):
    """(Predictions, weight kind): few distinct confidences (ties), unit, whole-number or fractional weights."""
    return labelled_runs(max_n=max_n)


def _threshold_rules(predictions, draw) -> list:
    confidences = sorted(set(predictions.confidence.tolist()))
    options = st.sampled_from([None, 0.0, 1.0, *confidences, *(c + 1e-9 for c in confidences)])
    per_class = {c: draw(options) for c in predictions.classes}
    return [vc.Policy("accept_all"), vc.Policy("threshold"), vc.Policy("threshold", threshold=draw(options) or 0.5),
            vc.Policy("class_thresholds", class_thresholds=per_class)]


def _same_tally(got: _tally.Tally, want: _tally.Tally) -> None:
    for name in ("count", "weight", "weight_sq"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes(), name  # bit for bit (also the sign of a zero)
    assert np.array_equal(got.categories, want.categories)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_threshold_rule_tallied_from_prefix_sums_equals_counting_every_item(data):
    predictions, kind = data.draw(runs())
    stride = data.draw(st.sampled_from([1, 2, 3, 7, 64]))
    matrix = vc.UseCase(1, 0, -3).for_classes(predictions.classes)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_tally, "_STRIDE", stride)
        for policy in _threshold_rules(predictions, data.draw):
            _, tally = _tally.decision_tally(policy, predictions, matrix)
            assert (tally.prefixes is not None) == (kind != "fractional")  # fractional sums: item by item
            _same_tally(tally, _tally.tally_of_actions(predictions, policy.decide(predictions, matrix)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_two_threshold_rules_paired_from_prefix_sums_equal_pairing_every_item(data):
    predictions, kind = data.draw(runs())
    if kind == "fractional":
        predictions = vc.Predictions.from_proba(predictions.proba, y_true=predictions.y_true)
    stride = data.draw(st.sampled_from([1, 2, 5, 64]))
    matrix = vc.UseCase(1, 0, -3).for_classes(predictions.classes)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_tally, "_STRIDE", stride)
        rules = _threshold_rules(predictions, data.draw)
        decided = [_tally.decision_tally(policy, predictions, matrix) for policy in rules]
        for key_a, a in decided:
            for key_b, b in decided:
                joint = _tally.joint_tally(predictions, key_a, a, predictions, key_b, b, None)
                # the same tallies without their ranks: paired item by item, through the dense count
                plain_a = _tally.Tally(a.count, a.weight, a.weight_sq, known=a.categories)
                plain_b = _tally.Tally(b.count, b.weight, b.weight_sq, known=b.categories)
                want = _tally.joint_tally(predictions, ("plain", key_a), plain_a, predictions, ("plain", key_b),
                                          plain_b, None)
                for name in ("cell_a", "cell_b", "count", "weight", "weight_sq"):
                    got_array, want_array = getattr(joint, name), getattr(want, name)
                    assert np.array_equal(got_array, want_array), name
                    assert got_array.astype(np.float64).tobytes() == want_array.astype(np.float64).tobytes()


def test_a_large_split_reads_the_kept_sums_and_equals_counting():
    rng = np.random.default_rng(3)
    n, n_classes = 20_000, 6
    proba = rng.dirichlet(np.ones(n_classes), size=n).round(3) + 1e-3
    predictions = vc.Predictions.from_proba(proba / proba.sum(axis=1, keepdims=True),
                                            y_true=rng.integers(0, n_classes, n),
                                            sample_weight=rng.integers(0, 3, n).astype(float))
    matrix = vc.UseCase(1, 0, -4).for_classes(predictions.classes)
    thresholds = np.quantile(predictions.confidence, [0.1, 0.5, 0.93])
    rules = [vc.Policy("threshold", threshold=float(t)) for t in thresholds] + [
        vc.Policy("class_thresholds", class_thresholds={c: float(t) for c, t in zip(predictions.classes,
                                                                                    np.resize(thresholds, n_classes))})]
    for policy in rules:
        _, tally = _tally.decision_tally(policy, predictions, matrix)
        assert tally.known is None  # counted without a pass over the items
        _same_tally(tally, _tally.tally_of_actions(predictions, policy.decide(predictions, matrix)))


def _best_prefix_per_class_vectorised(at_end, run):
    """The formula the loop over classes replaced (one pass over every group with index arrays)."""
    n_classes = run.predictions.n_classes
    thresholds = np.full(n_classes, np.nan)
    best_gain = np.zeros(n_classes)
    if run.class_group_end.size == 0:
        return thresholds, best_gain
    group_class = run.class_group_class
    first = np.r_[0, np.flatnonzero(group_class[1:] != group_class[:-1]) + 1]
    before = np.r_[0.0, at_end][first]
    segment = np.repeat(np.arange(first.size), np.diff(np.r_[first, group_class.size]))
    prefix = at_end - before[segment]
    segment_max = np.maximum.reduceat(prefix, first)
    hits = np.flatnonzero(prefix == segment_max[segment])
    _, first_hit = np.unique(segment[hits], return_index=True)
    best_group = hits[first_hit]
    present = group_class[first]
    worth_it = segment_max > 0
    thresholds[present[worth_it]] = run.class_group_threshold[best_group[worth_it]]
    best_gain[present[worth_it]] = segment_max[worth_it]
    return thresholds, best_gain


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_per_class_thresholds_fitted_class_by_class_equal_the_vectorised_formula(data):
    predictions, _ = data.draw(runs())
    run = _sorted.presort(predictions)
    # values that make ties between groups (dyadic steps), and a gain of -0.0 against 0.0
    gains = np.array(data.draw(st.lists(st.sampled_from([-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0]),
                                        min_size=predictions.n, max_size=predictions.n)))
    at_end = _sorted._class_cumulative(gains * predictions.sample_weight, run)
    got = _sorted.best_prefix_per_class_cumulative(at_end, run)
    want = _best_prefix_per_class_vectorised(at_end, run)
    for a, b in zip(got, want):
        assert a.tobytes() == b.tobytes()



@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_expected_value_rule_tallied_from_prefix_sums_equals_counting_every_item(data):
    predictions, kind = data.draw(runs())
    stride = data.draw(st.sampled_from([1, 2, 3, 7, 1024]))
    policy = vc.Policy("expected_value")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_tally, "_EV_STRIDE", stride)
        for _ in range(data.draw(st.integers(1, 4))):  # several plans on the same kept sums
            use_case = vc.UseCase(1, data.draw(st.sampled_from([0.0, -0.5, 0.25])),
                                  data.draw(st.integers(-500, 50).map(lambda k: k / 100)))
            matrix = use_case.for_classes(predictions.classes)
            _, tally = _tally.decision_tally(policy, predictions, matrix)
            _same_tally(tally, _tally.tally_of_actions(predictions, policy.decide(predictions, matrix)))


def test_a_large_split_reads_the_expected_value_rules_kept_sums():
    rng = np.random.default_rng(5)
    n, n_classes = 30_000, 5
    proba = rng.dirichlet(np.ones(n_classes) * 0.7, size=n).round(3) + 1e-3
    for weight in (None, rng.integers(0, 4, n).astype(float)):
        predictions = vc.Predictions.from_proba(proba / proba.sum(axis=1, keepdims=True),
                                                y_true=rng.integers(0, n_classes, n), sample_weight=weight)
        policy = vc.Policy("expected_value")
        for wrong in (-0.5, -3.0, -3.0 - 2.0**-20, -9.0, -1.25):
            matrix = vc.UseCase(1, 0, wrong).for_classes(predictions.classes)
            _, tally = _tally.decision_tally(policy, predictions, matrix)
            assert tally.known is None  # counted without a pass over the items
            _same_tally(tally, _tally.tally_of_actions(predictions, policy.decide(predictions, matrix)))


@pytest.mark.parametrize("weighted", [False, True])
def test_many_classes_keep_their_sums_further_apart_and_count_the_same(weighted):
    rng = np.random.default_rng(11)
    n, n_classes = 6000, 40
    proba = rng.dirichlet(np.ones(n_classes) * 0.3, size=n).round(3) + 1e-3
    predictions = vc.Predictions.from_proba(proba / proba.sum(axis=1, keepdims=True),
                                            y_true=rng.integers(0, n_classes, n),
                                            sample_weight=rng.integers(0, 3, n).astype(float) if weighted else None)
    matrix = vc.UseCase(1, 0, -2.5).for_classes(predictions.classes)
    thresholds = np.quantile(predictions.confidence, np.linspace(0.05, 0.95, n_classes))
    rules = [vc.Policy("threshold", threshold=float(thresholds[7])), vc.Policy("expected_value"),
             vc.Policy("class_thresholds", class_thresholds=dict(zip(predictions.classes, map(float, thresholds))))]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_tally, "_STRIDE", 2)
        patch.setattr(_tally, "_EV_STRIDE", 4)
        for policy in rules:
            _, tally = _tally.decision_tally(policy, predictions, matrix)
            assert tally.known is None
            _same_tally(tally, _tally.tally_of_actions(predictions, policy.decide(predictions, matrix)))
    kept = _tally.split_cache(predictions).screens
    strides = {key[0]: found.stride for key, found in kept.items() if isinstance(key, tuple)}
    assert strides == {"prefixes": 2 * (40 * (3 if weighted else 1) // 16 + 1),
                       "plan prefixes": 4 * -(-40 * 41 * (3 if weighted else 1) // 128)}
