"""The value primitive of valuecore._engine.sorting, the macro F1 and the acceptance limits.

Each against a slow reference: exact Fractions (tests/core/reference.py), scikit-learn's
``f1_score``, and the calibrated rule's own float test.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score

import reference as ref
import valuecore as vc
from valuecore._engine.sorting import (
    acceptance_limits,
    class_cumulative_gain,
    class_cumulative_weight,
    cumulative_gain,
    dimensionless_value,
    group_cumulative,
)

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def close(engine: float, expected: Fraction, scale: float) -> bool:
    return abs(Fraction(float(engine)) - expected) <= Fraction(1e-9) * Fraction(max(1.0, scale))


# ------------------------------------------------------------ cumulative gain
@settings(max_examples=120, **SETTINGS)
@given(ref.case_and_values(), st.booleans())
def test_cumulative_gain_is_the_sum_of_item_gains_over_each_prefix(case_vals, estimate):
    case, vals = case_vals
    predictions, run = case.predictions(), vc.presort(case.predictions())
    values, matrix, r = vals.engine(case.classes), vals.ref(case.n_classes), case.ref()
    if estimate and vals.kind == "matrix" and r.proba is None:
        return  # label-free estimation of a per-class matrix needs probabilities (refused, tested elsewhere)
    gains = ref.item_gains(r, matrix, estimate=estimate)
    got = cumulative_gain(run, values, estimate=estimate)
    assert got.shape == (run.n_groups + 1,)
    assert got[0] == 0
    scale = case.scale(vals)
    for k, threshold in enumerate(ref.candidates(r)):  # candidates[0] is "accept nothing"
        accepted = [i for i in r.items() if ref.accepts(r.conf[i], threshold)]
        assert close(got[k], sum((gains[i] for i in accepted), Fraction(0)), scale)
    assert predictions.n == r.n


@pytest.mark.heavy
@settings(max_examples=120, **SETTINGS)
@given(ref.case_and_values())
def test_class_cumulative_gain_restarts_nowhere_and_ends_each_group(case_vals):
    case, vals = case_vals
    run = vc.presort(case.predictions())
    values, matrix, r = vals.engine(case.classes), vals.ref(case.n_classes), case.ref()
    gains = ref.item_gains(r, matrix)
    got = class_cumulative_gain(run, values)
    assert got.shape == run.class_group_end.shape
    # Order by (predicted class, decreasing confidence): the cumulative gain up to
    # each group's end is the gain of every item strictly before it in that order.
    for g, (cls, threshold) in enumerate(zip(run.class_group_class, run.class_group_threshold)):
        before = [
            i for i in r.items()
            if r.y_pred[i] < cls or (r.y_pred[i] == cls and r.conf[i] >= threshold)
        ]
        assert close(got[g], sum((gains[i] for i in before), Fraction(0)), case.scale(vals))


@settings(max_examples=120, **SETTINGS)
@given(ref.cases(), st.integers(0, 2**32 - 1))
def test_group_cumulative_and_class_cumulative_weight_sum_what_each_prefix_accepts(case, seed):
    run, r = vc.presort(case.predictions()), case.ref()
    amounts = np.random.default_rng(seed).integers(-9, 10, r.n).astype(float)  # exact in any order
    got = group_cumulative(run, amounts)
    assert got.shape == (run.n_groups + 1,)
    for k, threshold in enumerate(ref.candidates(r)):  # candidates[0] is "accept nothing"
        assert got[k] == sum(amounts[i] for i in r.items() if ref.accepts(r.conf[i], threshold))
    weight = class_cumulative_weight(run)
    assert weight.shape == run.class_group_end.shape
    for g, (cls, threshold) in enumerate(zip(run.class_group_class, run.class_group_threshold)):
        before = [i for i in r.items() if r.y_pred[i] < cls or (r.y_pred[i] == cls and r.conf[i] >= threshold)]
        assert close(weight[g], sum((Fraction(r.weight[i]) for i in before), Fraction(0)), 1.0 + float(r.total))


def test_use_case_fast_path_equals_the_matrix_path():
    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.ones(3), 300).round(2)
    proba[:, 2] = 1 - proba[:, :2].sum(axis=1).clip(max=1)  # ties of confidence, rows summing to 1
    proba = proba.clip(min=0)
    proba /= proba.sum(axis=1, keepdims=True)
    p = vc.Predictions.from_proba(proba, y_true=rng.integers(0, 3, 300), sample_weight=rng.integers(0, 4, 300))
    run = vc.presort(p)
    use_case = vc.UseCase(2.0, -0.5, -7.0)
    np.testing.assert_allclose(
        cumulative_gain(run, use_case), cumulative_gain(run, use_case.for_classes(p.classes)), atol=1e-9
    )
    np.testing.assert_allclose(
        class_cumulative_gain(run, use_case), class_cumulative_gain(run, use_case.for_classes(p.classes)), atol=1e-9
    )


# ------------------------------------------------------------ value at a threshold
@pytest.mark.heavy
@settings(max_examples=120, **SETTINGS)
@given(ref.cases(), st.sampled_from([0.0, 0.5, 1.0, 3.0, 9.0]))
def test_value_and_coverage_at_every_candidate_threshold(case, omega):
    run, r = vc.presort(case.predictions()), case.ref()
    for threshold in ref.candidates(r) + [1.5, -0.5]:
        value, coverage = run.value_at(threshold, omega), run.coverage_at(threshold)
        if r.total <= 0:
            assert math.isnan(value) and math.isnan(coverage)
            continue
        accepted, correct, wrong = ref.counts(r, threshold)
        assert close(value, (correct - Fraction(omega) * wrong) / r.total, 1.0 + omega)
        assert close(coverage, accepted / r.total, 1.0)


def test_dimensionless_value_broadcasts_and_is_the_seed_formula():
    correct, wrong = np.array([[3.0], [1.0]]), np.array([[1.0], [0.0]])
    got = dimensionless_value(correct, wrong, np.array([0.0, 2.0]), np.array([[4.0], [2.0]]))
    assert got.tolist() == [[0.75, 0.25], [0.5, 0.5]]


def test_every_caller_reads_the_same_value():
    """Tuning, the VOC curve, the comparison table and monitoring agree on one run."""
    rng = np.random.default_rng(3)
    conf = rng.uniform(0.5, 1, 400).round(2)
    y_pred = rng.integers(0, 2, 400)
    y_true = np.where(rng.random(400) < conf, y_pred, 1 - y_pred)
    proba = np.where(y_pred[:, None] == np.arange(2), conf[:, None], 1 - conf[:, None])
    p = vc.Predictions.from_proba(proba, y_true=y_true)
    run = vc.presort(p)
    omega = 3.0
    use_case = vc.UseCase.from_omega(omega)
    tuned = vc.fit_policy("threshold", run, use_case).threshold
    table = vc.comparison_table({"m": run}, ks=(omega,)).metrics
    assert table.loc["m", "value_tuned_k3"] == run.value_at(tuned, omega)
    assert table.loc["m", "value_calibrated_k3"] == run.value_at(use_case.calibrated_threshold, omega)
    oracle = vc.voc_curve(run, "oracle").value_at(omega)
    assert oracle == pytest.approx(run.value_at(tuned, omega), abs=1e-12)
    curve = vc.threshold_curve(run, use_case)
    assert curve.value_per_item[curve.best_index] == pytest.approx(run.value_at(tuned, omega), abs=1e-12)


# ------------------------------------------------------------ macro F1
@pytest.mark.heavy
@settings(max_examples=150, **SETTINGS)
@given(ref.cases(min_n=1))
def test_macro_f1_is_scikit_learns(case):
    p = case.predictions()
    if p.total_weight <= 0:
        assert math.isnan(p.macro_f1)
        return
    expected = f1_score(
        p.y_true, p.y_pred, labels=np.arange(p.n_classes), average="macro",
        sample_weight=p.sample_weight, zero_division=0,
    )
    assert p.macro_f1 == pytest.approx(expected, abs=1e-12)


def test_macro_f1_counts_a_class_never_seen_as_zero():
    p = vc.Predictions.from_top_label(["a", "a", "b"], [0.9, 0.8, 0.7], ["a", "b", "b"], classes=["a", "b", "c"])
    # F1(a) = 2/3, F1(b) = 2/3, F1(c) = 0 (never true, never predicted)
    assert p.macro_f1 == pytest.approx((2 / 3 + 2 / 3 + 0) / 3)


# ------------------------------------------------------------ acceptance limits
def accepted(omega: float, confidence: float) -> bool:
    """The calibrated rule's own float test: accept iff confidence >= omega / (1 + omega)."""
    return omega / (1.0 + omega) <= confidence


@pytest.mark.heavy
@settings(max_examples=400, **SETTINGS)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_acceptance_limit_is_the_last_float_the_rule_accepts(confidences):
    limits = acceptance_limits(confidences)
    assert limits.shape == (len(confidences),)
    for c, limit in zip(confidences, limits):
        if c == 1.0:
            assert limit == math.inf
            continue
        assert accepted(limit, c)
        assert not accepted(float(np.nextafter(limit, math.inf)), c)
        # and it is the exact quotient w = c / (1 - c) up to the rounding of the
        # test: an error of 2 ulps in w / (1 + w) moves the flip by 2^-52 w (1 + w).
        exact = Fraction(c) / (1 - Fraction(c))
        bound = 4 * Fraction(2) ** -52 * exact * (1 + exact) + Fraction(2) ** -1074
        assert abs(Fraction(float(limit)) - exact) <= bound


def test_acceptance_limits_edges():
    assert acceptance_limits([0.0, 1.0]).tolist() == [0.0, math.inf]
    assert acceptance_limits(np.zeros((2, 2))).shape == (2, 2)


def test_voc_curve_and_band_share_the_limits():
    """The calibrated VOC breaks are the limits; the bootstrap's untuned values use the same ones."""
    from helpers.core import voc_values
    from valuecore._stats.uncertainty import _run_tables

    rng = np.random.default_rng(1)
    conf = rng.uniform(0.5, 1, 200)
    y_pred = rng.integers(0, 2, 200)
    y_true = np.where(rng.random(200) < conf, y_pred, 1 - y_pred)
    proba = np.where(y_pred[:, None] == np.arange(2), conf[:, None], 1 - conf[:, None])
    run = vc.presort(vc.Predictions.from_proba(proba, y_true=y_true))
    curve = vc.voc_curve(run, "calibrated")
    limits = acceptance_limits(run.thresholds)
    assert set(curve.breaks[1:-1].tolist()) <= set(limits.tolist())
    omegas = limits[np.isfinite(limits)]
    ones = voc_values("calibrated", omegas, _run_tables(run, "test"), np.ones((1, run.predictions.n), np.int64))
    np.testing.assert_array_equal(ones[0], curve.value_at(omegas))
