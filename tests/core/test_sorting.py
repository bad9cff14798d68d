"""The grouped presort gives exactly the order of a stable comparison sort."""

import numpy as np
import pytest
from helpers.core import ATTRIBUTES, _assert_identical, descending_order
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._engine import sorting as _sorted


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), decimals=st.sampled_from([1, 2, 4]), n=st.integers(0, 3000))
def test_grouped_order_equals_the_stable_argsort(seed, decimals, n):
    rng = np.random.default_rng(seed)
    confidence = np.round(rng.random(n), decimals)
    saved = _sorted._FAST_SORT_MIN_ITEMS
    _sorted._FAST_SORT_MIN_ITEMS = 0  # exercise the grouped path on small inputs too
    try:
        got = descending_order(confidence)
    finally:
        _sorted._FAST_SORT_MIN_ITEMS = saved
    np.testing.assert_array_equal(got, np.argsort(-confidence, kind="stable"))


@pytest.mark.parametrize("kind", ["rounded", "float32", "two_values"])
def test_presort_is_identical_with_and_without_grouping(kind, monkeypatch):
    rng = np.random.default_rng(1)
    n = 50_000
    a = {"rounded": np.round(rng.random(n), 3), "float32": rng.random(n).astype(np.float32).astype(float),
         "two_values": rng.choice([0.6, 0.9], n)}[kind]  # fmt: skip
    p = vc.Predictions.from_proba(np.c_[a, 1 - a], y_true=rng.integers(0, 2, n), sample_weight=rng.random(n))
    fast = vc.presort(p)
    monkeypatch.setattr(_sorted, "_FAST_SORT_MIN_ITEMS", 10**9)
    slow = vc.presort(p)
    for name in ("order", "thresholds", "group_end", "cum_accepted", "cum_correct", "class_order", "class_group_end"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)


def _both_ways(p, monkeypatch):
    """presort by group sums (grouping forced on small runs) and by a full sort of the items."""
    monkeypatch.setattr(_sorted, "_FAST_SORT_MIN_ITEMS", 0)
    grouped = vc.presort(p)
    monkeypatch.setattr(_sorted, "_FAST_SORT_MIN_ITEMS", 10**9)
    return grouped, vc.presort(p)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(20, 600),
    n_classes=st.integers(2, 6),
    n_values=st.integers(1, 6),
    weights=st.sampled_from(["none", "integers", "zeros_and_ones", "large"]),
    labelled=st.booleans(),
)
def test_group_sums_give_exactly_what_the_full_sort_gives(seed, n, n_classes, n_values, weights, labelled):
    rng = np.random.default_rng(seed)
    grid = np.unique(np.r_[1.0, np.round(rng.uniform(0.2, 1.0, n_values), 2)])  # ties; 1.0 included
    confidence = rng.choice(grid, n)
    classes = [str(c) for c in range(n_classes)]
    y_pred = rng.integers(0, n_classes, n).astype(str)
    y_true = rng.integers(0, n_classes, n).astype(str) if labelled else None
    weight = {"none": None, "integers": rng.integers(0, 5, n), "zeros_and_ones": rng.integers(0, 2, n),
              "large": rng.integers(0, 2**40, n)}[weights]  # fmt: skip
    p = vc.Predictions.from_top_label(y_pred, confidence, y_true, classes=classes, sample_weight=weight)
    with pytest.MonkeyPatch.context() as monkeypatch:
        grouped, sorted_items = _both_ways(p, monkeypatch)
    assert grouped._rank is not None and sorted_items._rank is None  # both paths were taken
    _assert_identical(grouped, sorted_items)
    # Each attribute again from a fresh run, first touched in another order (the caches are independent).
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(_sorted, "_FAST_SORT_MIN_ITEMS", 0)
        fresh = vc.presort(p)
    for name in reversed(ATTRIBUTES):
        getattr(fresh, name)
    _assert_identical(fresh, sorted_items)


def test_fractional_weights_are_cumulated_in_sorted_order(monkeypatch):
    rng = np.random.default_rng(3)
    n = 2000
    p = vc.Predictions.from_top_label(rng.integers(0, 3, n).astype(str), rng.choice([0.5, 0.7, 0.9], n),
                                      rng.integers(0, 3, n).astype(str), classes=["0", "1", "2"],
                                      sample_weight=rng.random(n))  # fmt: skip
    grouped, sorted_items = _both_ways(p, monkeypatch)
    assert grouped._rank is None  # per-group sums would round differently: the items are sorted
    _assert_identical(grouped, sorted_items)


def test_a_total_weight_beyond_exact_integers_is_cumulated_in_sorted_order(monkeypatch):
    n = 100
    weight = np.full(n, 2.0**50)
    p = vc.Predictions.from_top_label(["0", "1"] * 50, [0.6, 0.8] * 50, ["0"] * n, classes=["0", "1"],
                                      sample_weight=weight)  # fmt: skip
    grouped, sorted_items = _both_ways(p, monkeypatch)
    assert grouped._rank is None
    _assert_identical(grouped, sorted_items)


def test_zero_and_negative_zero_confidences_are_one_group_named_as_the_sort_names_it(monkeypatch):
    confidence = np.array([0.0, -0.0, 0.5, -0.0, 0.0, 0.5] * 10)
    p = vc.Predictions.from_top_label(["0"] * 60, confidence, ["0", "1"] * 30, classes=["0", "1"])
    grouped, sorted_items = _both_ways(p, monkeypatch)
    _assert_identical(grouped, sorted_items)
    assert np.signbit(grouped.thresholds).tolist() == np.signbit(sorted_items.thresholds).tolist()
