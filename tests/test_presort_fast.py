"""The grouped presort gives exactly the order of a stable comparison sort."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore import _sorted


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), decimals=st.sampled_from([1, 2, 4]), n=st.integers(0, 3000))
def test_grouped_order_equals_the_stable_argsort(seed, decimals, n):
    rng = np.random.default_rng(seed)
    confidence = np.round(rng.random(n), decimals)
    saved = _sorted._FAST_SORT_MIN_ITEMS
    _sorted._FAST_SORT_MIN_ITEMS = 0  # exercise the grouped path on small inputs too
    try:
        got = _sorted._descending_order(confidence)
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
