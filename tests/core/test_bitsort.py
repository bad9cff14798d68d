"""presort on nearly-distinct confidences (one sort of int64 keys) gives exactly what sorting the items gives."""

import numpy as np
import pytest
from helpers.core import ATTRIBUTES
from helpers.core import _assert_identical as assert_same_attributes
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._engine import bitsort as _bitsort
from valuecore._engine import sorting as _sorted


def _sorting_the_items(p, monkeypatch):
    """presort as it was before the keys: a stable argsort of the items, cumulative sums in that order."""
    monkeypatch.setattr(_sorted, "descending_counts", lambda *args: None)
    monkeypatch.setattr(_sorted, "stable_descending_order", lambda c: np.argsort(-c, kind="stable"))
    return vc.presort(p)


def _assert_identical(got, expected):
    assert_same_attributes(got, expected)
    for name in ATTRIBUTES:  # bit for bit: the signs of zeros too
        a, b = getattr(got, name), getattr(expected, name)
        if b is not None and b.dtype.kind == "f":
            assert np.array_equal(a.view(np.int64), b.view(np.int64)), name


def _confidences(rng, n, kind):
    if kind == "distinct":
        return rng.random(n)
    if kind == "some_ties":  # full precision, with a few repeated values and the ends of [0, 1]
        values = rng.random(n)
        repeat = rng.random(n) < 0.2
        values[repeat] = rng.choice(np.r_[0.0, 1.0, values[: max(1, n // 10)]], int(repeat.sum()))
        return values
    if kind == "rounded":
        return np.round(rng.random(n), 2)
    return rng.choice([0.25, 0.5, 1.0], n)  # "few"


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(0, 2000),
    n_classes=st.integers(2, 6),
    kind=st.sampled_from(["distinct", "some_ties", "rounded", "few"]),
    labelled=st.booleans(),
)
def test_sorted_keys_give_exactly_what_sorting_the_items_gives(seed, n, n_classes, kind, labelled):
    rng = np.random.default_rng(seed)
    confidence = _confidences(rng, n, kind)
    classes = [str(c) for c in range(n_classes)]
    y_pred = rng.integers(0, n_classes, n).astype(str)
    y_true = rng.integers(0, n_classes, n).astype(str) if labelled else None
    p = vc.Predictions.from_top_label(y_pred, confidence, y_true, classes=classes)
    fast = vc.presort(p)
    if n:
        assert fast._rank is None and "order" not in vars(fast)  # the keys' path was taken: no item sorted
    with pytest.MonkeyPatch.context() as monkeypatch:
        expected = _sorting_the_items(p, monkeypatch)
    _assert_identical(fast, expected)


@pytest.mark.parametrize("labelled", [True, False])
def test_a_large_run_of_distinct_scores_takes_the_keys_path_and_matches(labelled, monkeypatch):
    rng = np.random.default_rng(7)
    n = 200_000
    proba = rng.dirichlet(np.ones(10) * 0.3, n)  # full-precision probabilities, nearly all distinct
    p = vc.Predictions.from_proba(proba, rng.integers(0, 10, n) if labelled else None)
    fast = vc.presort(p)
    assert fast._rank is None and "order" not in vars(fast)
    _assert_identical(fast, _sorting_the_items(p, monkeypatch))
    if labelled:
        use_case = vc.UseCase(1.0, 0.0, -4.0)
        assert vc.fit_policy("threshold", fast, use_case).threshold == vc.fit_policy(
            "threshold", _sorting_the_items(p, monkeypatch), use_case).threshold  # fmt: skip


def test_weights_other_than_one_sort_the_items(monkeypatch):
    rng = np.random.default_rng(2)
    n = 3000
    confidence = rng.random(n)
    for weight in (rng.integers(0, 4, n), rng.random(n)):
        p = vc.Predictions.from_top_label(["0"] * n, confidence, rng.integers(0, 2, n).astype(str),
                                          classes=["0", "1"], sample_weight=weight)  # fmt: skip
        got = vc.presort(p)
        assert "order" in vars(got)  # the items were sorted: keys count items, not weights
        with pytest.MonkeyPatch.context() as patch:
            _assert_identical(got, _sorting_the_items(p, patch))


def test_negative_zero_is_left_to_the_sort(monkeypatch):
    confidence = np.array([0.0, -0.0, 0.5, 0.25, -0.0, 0.0, 0.75] * 5)
    p = vc.Predictions.from_top_label(["0"] * 35, confidence, ["0", "1"] * 17 + ["0"], classes=["0", "1"])
    assert _bitsort.descending_counts(confidence, None) is None
    _assert_identical(vc.presort(p), _sorting_the_items(p, monkeypatch))


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(0, 3000),
    kind=st.sampled_from(["distinct", "some_ties", "rounded", "few", "zeros", "special"]),
)
def test_stable_descending_order_is_the_stable_argsort(seed, n, kind):
    rng = np.random.default_rng(seed)
    if kind == "zeros":
        confidence = rng.choice([0.0, -0.0, 0.5], n)
    elif kind == "special":
        confidence = rng.choice([np.nan, np.inf, 3.0, -1.0, 0.5, 0.5000000000000001], n)
    else:
        confidence = _confidences(rng, n, kind)
    got = _bitsort.stable_descending_order(confidence)
    np.testing.assert_array_equal(got, np.argsort(-confidence, kind="stable"))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 2000), kind=st.sampled_from(["distinct", "some_ties", "few"]))
def test_descending_counts_are_the_counts_by_definition(seed, n, kind):
    rng = np.random.default_rng(seed)
    confidence = _confidences(rng, n, kind)
    correct = rng.random(n) < 0.7
    counts = _bitsort.descending_counts(confidence, correct)
    distinct = np.unique(confidence)[::-1]
    np.testing.assert_array_equal(counts.thresholds, distinct)
    accepted = np.array([np.count_nonzero(confidence >= t) for t in distinct])
    wrong = np.array([np.count_nonzero((confidence >= t) & ~correct) for t in distinct])
    np.testing.assert_array_equal(counts.group_end, accepted)
    np.testing.assert_array_equal(counts.cum_wrong_at_end, wrong)
