"""Slider moves on the hull (``valuecore._engine.hull``) against the linear scan and the exact references.

The hull answers a new value in O(log n); it must choose what the scan over every group chooses, bit for
bit: the first maximum of the rounded gains ``a * correct + b * wrong`` (minus a class's base), ties to
the highest threshold. Three levels: the search itself on cumulative counts drawn to be hard (collinear
points, values on a hull edge's slope, tiny weights that round gains together, omega 0 and 1e300, both
signs of both gains); ``fit_policy`` with the hull forced on against the same call with the scan forced;
and ``fit_policy`` on the hull against the Fraction brute force of ``tests/core/reference.py``.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
import valuecore as vc
from valuecore._engine import fitting, hull

from helpers.hull import SETTINGS, cumulative_counts, gains_for, scan


@contextlib.contextmanager
def groups_for_the_hull(minimum: int):
    """``fit_policy`` takes the hull from ``minimum`` groups on (0: always; huge: never, the scan)."""
    saved = fitting.HULL_MIN_GROUPS
    fitting.HULL_MIN_GROUPS = minimum
    try:
        yield
    finally:
        fitting.HULL_MIN_GROUPS = saved


@settings(max_examples=600, **SETTINGS)
@given(cumulative_counts().flatmap(lambda cw: st.tuples(st.just(cw), gains_for(*cw))),
       st.sampled_from((hull._ROUNDS, 1)))
def test_the_hull_finds_the_scans_first_maximum(counts_gains, rounds):
    (correct, wrong), (a, b) = counts_gains
    saved = hull._ROUNDS
    hull._ROUNDS = rounds  # 1: the exact integer chain takes over after one round of pruning
    try:
        found = hull.first_best({}, "t", a, correct, b, wrong, 0, correct.size)
    finally:
        hull._ROUNDS = saved
    if found is None:  # left to the scan only where the gains come near overflow
        assert abs(a) * correct[-1] + abs(b) * wrong[-1] > 1e290
        return
    assert found == scan(a, b, correct, wrong), (a, b, correct.tolist(), wrong.tolist())


@settings(max_examples=400, **SETTINGS)
@given(cumulative_counts().flatmap(lambda cw: st.tuples(st.just(cw), gains_for(*cw), st.data())))
def test_the_hull_of_a_segment_finds_the_scans_first_maximum_above_its_base(counts_gains_data):
    """A class's thresholds: a segment of counts cumulated over every class, its gains minus the base before it."""
    (correct, wrong), (a, b), data = counts_gains_data
    start, stop = sorted(data.draw(st.lists(st.integers(0, correct.size), min_size=2, max_size=2)))
    if start == stop:
        return
    base = a * float(correct[start - 1]) + b * float(wrong[start - 1]) if start else 0.0
    found = hull.first_best({}, "c", a, correct, b, wrong, start, stop, base)
    assert found == scan(a, b, correct, wrong, start, stop, base)


def test_omega_on_a_long_edge_takes_the_edges_first_point():
    # 2,000 groups each one correct and one wrong: every point on one line of slope 1, a tie at omega 1.
    correct = np.r_[0.0, np.cumsum(np.r_[np.full(5, 3.0), np.ones(2000)])]
    wrong = np.r_[0.0, np.cumsum(np.r_[np.zeros(5), np.ones(2000)])]
    for a, b in ((1.0, -1.0), (0.1, -0.1), (1.0, -1.0 + 2**-50), (1.0, -1.0 - 2**-50)):
        assert hull.first_best({}, "t", a, correct, b, wrong, 0, correct.size) == scan(a, b, correct, wrong)


def test_gains_rounded_together_take_the_first():
    # The last groups add weights far below an ulp of the total: their rounded gains tie with the point
    # before them, and the scan keeps the first (the highest threshold); the exact optimum lies later.
    correct = np.r_[0.0, np.cumsum([1.0, 1e-17, 1e-17, 0.0, 2.0, 1e-300])]
    wrong = np.r_[0.0, np.cumsum([0.0, 0.0, 0.0, 1e-17, 1.0, 0.0])]
    for b in (-0.0, -1e-3, -1.0, -2.0, -2.0000000000000004):
        expected = scan(1.0, b, correct, wrong)
        assert hull.first_best({}, "t", 1.0, correct, b, wrong, 0, correct.size) == expected


def test_counts_that_decrease_are_left_to_the_scan():
    correct, wrong = np.array([0.0, 2.0, 1.0]), np.array([0.0, 0.0, 1.0])
    assert hull.first_best({}, "t", 1.0, correct, -1.0, wrong, 0, 3) is None


# ------------------------------------------------------------------ fit_policy: hull against scan, reference
def fitted(kind: str, run, values, minimum: int):
    with groups_for_the_hull(minimum):
        policy = vc.fit_policy(kind, run, values)
    return policy.threshold if kind == "threshold" else policy.class_thresholds


@settings(max_examples=300, **SETTINGS)
@given(ref.cases(max_n=30).flatmap(lambda c: st.tuples(st.just(c), ref.use_cases(c.exact))))
def test_fit_policy_on_the_hull_is_the_scan_bit_for_bit(case_vals):
    case, vals = case_vals
    run = vc.presort(case.predictions())
    values = vals.engine(case.classes)
    for kind in ("threshold", "class_thresholds"):
        assert repr(fitted(kind, run, values, 0)) == repr(fitted(kind, run, values, 10**18)), kind


@settings(max_examples=200, **SETTINGS)
@given(ref.cases(max_n=16).flatmap(lambda c: st.tuples(st.just(c), ref.use_cases(c.exact))))
def test_fit_policy_on_the_hull_is_the_exhaustive_optimum(case_vals):
    case, vals = case_vals
    run = vc.presort(case.predictions())
    values, r, M = vals.engine(case.classes), case.ref(), vals.ref(case.n_classes)
    search = ref.search_threshold(r, M)
    t = fitted("threshold", run, values, 0)
    assert float(search.best_value - search.value_of(t)) <= 1e-9 * case.scale(vals)
    if case.exact and vals.exact:  # exact sums: among maximisers the highest threshold
        assert t == search.best_threshold, (t, search.maximisers())
    got = dict(fitted("class_thresholds", run, values, 0))
    for j, class_search in enumerate(ref.search_class_thresholds(r, M)):
        t = got[str(j)]
        assert float(class_search.best_value - class_search.value_of(t)) <= 1e-9 * case.scale(vals)
        if case.exact and vals.exact:
            assert t == class_search.best_threshold, (j, t, class_search.maximisers())


@pytest.mark.parametrize("weights", ["unit", "integer", "float"])
def test_a_large_run_takes_the_hull_and_chooses_as_the_scan(weights):
    rng = np.random.default_rng(7)
    n = 20_000
    confidence = rng.uniform(0.3, 1.0, n)
    y_pred = rng.integers(0, 4, n)
    y_true = np.where(rng.random(n) < confidence, y_pred, (y_pred + 1) % 4)
    weight = {"unit": None, "integer": rng.integers(0, 4, n).astype(float), "float": rng.uniform(0, 2, n)}[weights]
    classes = ["a", "b", "c", "d"]
    p = vc.Predictions.from_top_label(np.array(classes)[y_pred], confidence, np.array(classes)[y_true],
                                      classes=classes, sample_weight=weight)
    run = vc.presort(p)
    assert run.n_groups >= fitting.HULL_MIN_GROUPS
    for v_correct, v_wrong in [(1.0, -omega) for omega in (0.0, 0.5, 1.0, 2.0, 4.0, 9.0, 1e3, 1e100)] + [
            (1e-100, -1e100), (-1.0, 2.0), (2.0, 1.0), (-1.0, -3.0)]:
        values = vc.UseCase(v_correct, 0.0, v_wrong)
        for kind in ("threshold", "class_thresholds"):
            assert repr(fitted(kind, run, values, fitting.HULL_MIN_GROUPS)) == repr(
                fitted(kind, run, values, 10**18))
    assert any(isinstance(chain, hull.Chain) for chain in hull.run_cache(run).values()), "the hull answered"
