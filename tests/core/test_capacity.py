"""Review capacity: the engine against exhaustive, exact searches."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference as ref
import reference_constraints as refc
import valuecore as vc

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
BUDGET_SHARES = (0.0, 0.125, 0.25, 0.5, 0.75, 1.0)


def build(case, vals):
    p = case.predictions()
    return p, vc.presort(p), vals.engine(case.classes), case.ref(), vals.ref(case.n_classes)


@pytest.mark.heavy
@settings(max_examples=150, **SETTINGS)
@given(ref.case_and_values(exact=True), st.sampled_from(BUDGET_SHARES))
def test_global_capacity_is_the_exhaustive_optimum(case_vals, share):
    case, vals = case_vals
    p, run, values, r, M = build(case, vals)
    budget = Fraction(share) * r.total  # dyadic: exact in floating point
    result = vc.constraints.fit_capacity(run, values, max_handoffs=float(budget))
    t, best = refc.capacity_search(r, M, budget)
    assert result.policy.threshold == t
    assert Fraction(result.value_total) == best
    assert Fraction(result.handoffs) <= budget
    # a ratio: exact up to one rounding
    assert result.marginal_value == pytest.approx(float(refc.marginal_value(r, M, budget)), rel=1e-12, abs=0)
    # without a binding limit it is the unconstrained tuned policy
    unconstrained = vc.fit_policy("threshold", run, values)
    assert Fraction(result.unconstrained_value_total) == Fraction(vc.evaluate(unconstrained, p, values).value_total)
    assert result.binding == (result.policy.threshold != unconstrained.threshold)
    if p.n:
        assert vc.evaluate(result.policy, p, values).value_total == pytest.approx(result.value_total, abs=1e-9)


@pytest.mark.heavy
@settings(max_examples=80, **SETTINGS)
@given(ref.case_and_values(exact=True))
def test_capacity_curve_is_the_best_value_for_each_budget(case_vals):
    case, vals = case_vals
    _, run, values, r, M = build(case, vals)
    curve = vc.constraints.capacity_curve(run, values)
    expected = refc.capacity_curve(r, M)
    assert [Fraction(h) for h in curve.handoffs] == [h for h, _ in expected]
    got = [Fraction(v) for v in curve.best_gain + curve.abstain_value]
    assert got == [v for _, v in expected]
    # value_at agrees on every candidate budget, and is non-decreasing in the budget
    assert [Fraction(v) for v in curve.value_at(curve.handoffs)] == got
    assert np.all(np.diff(curve.value_at(np.sort(curve.handoffs))) >= 0)


@pytest.mark.heavy
@settings(max_examples=120, **SETTINGS)
@given(ref.case_and_values(exact=True, max_n=8, max_classes=3), st.sampled_from(BUDGET_SHARES))
def test_class_capacity_is_feasible_and_within_its_bound_of_the_exhaustive_optimum(case_vals, share):
    case, vals = case_vals
    p, run, values, r, M = build(case, vals)
    budget = Fraction(share) * r.total
    result = vc.constraints.fit_capacity(run, values, max_handoffs=float(budget), kind="class_thresholds")
    optimum = refc.class_capacity_optimum(r, M, budget)
    thresholds = dict(result.policy.class_thresholds)
    actions = ref.class_threshold_actions(r, [thresholds[c] for c in case.classes])
    assert refc.handoffs(r, actions) <= budget, "the solution must respect the capacity"
    achieved = ref.realised_value(r, actions, M)
    assert Fraction(result.value_total) == achieved
    assert achieved <= optimum <= Fraction(result.upper_bound)
    if result.exact:
        assert achieved == optimum
    # never worse than the best single threshold within the same capacity
    assert achieved >= refc.capacity_search(r, M, budget)[1]
    # the value of one more slot: the concave majorant's slope, as for one threshold
    assert result.marginal_value == pytest.approx(float(refc.class_marginal_value(r, M, budget)), rel=1e-9, abs=1e-12)
    if not result.binding:
        unconstrained = vc.fit_policy("class_thresholds", run, values)
        assert result.policy.class_thresholds == unconstrained.class_thresholds


def test_class_capacity_is_exact_at_hull_vertices_and_reports_the_gap_between():
    # two classes, each with one sure item (gain +1) and one bad item (gain -4): the
    # unconstrained best accepts 2 items; a budget of 1 hand-off forces a bad one in.
    p = vc.Predictions.from_top_label(
        ["a", "a", "b", "b"], [0.9, 0.5, 0.8, 0.4], ["a", "b", "b", "a"], classes=["a", "b"]
    )
    run = vc.presort(p)
    use_case = vc.UseCase(1, 0, -4)
    result = vc.constraints.fit_capacity(run, use_case, max_handoffs=1, kind="class_thresholds")
    assert result.binding and result.exact
    assert result.value_total == -2.0 and result.handoffs == 1.0
    assert result.marginal_value == 4.0  # one more slot hands the bad item off again: +4
    loose = vc.constraints.fit_capacity(run, use_case, max_handoffs=2, kind="class_thresholds")
    assert not loose.binding and loose.value_total == 2.0 and loose.marginal_value == 0.0


def test_class_capacity_between_vertices_is_flagged_inexact_with_its_bound():
    # Each class has one right item on top, then 2 units of wrong weight at one confidence.
    p = vc.Predictions.from_top_label(
        ["a", "a", "a", "b", "b"],
        [0.9, 0.5, 0.5, 0.8, 0.3],
        ["a", "b", "b", "b", "a"],
        classes=["a", "b"],
        sample_weight=[1, 1, 1, 1, 2],
    )
    run = vc.presort(p)
    result = vc.constraints.fit_capacity(run, vc.UseCase(1, 0, -1), max_handoffs=3, kind="class_thresholds")
    # unconstrained: accept a@0.9 and b@0.8 (2 items, 4 hand-offs); one more item must be accepted:
    # either class's wrong block (2 units, -2) overshoots, so the answer is not on a hull vertex.
    assert result.binding and not result.exact
    assert result.value_total == 0.0 and result.handoffs == 2.0
    assert result.upper_bound == 1.0  # the linear relaxation: half of a slope -1 segment of 2 items


def test_rate_and_count_agree_and_bad_limits_are_refused():
    p = vc.Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.55, 0.45]], y_true=[0, 0, 1, 1])
    run = vc.presort(p)
    use_case = vc.UseCase(1, 0, -4)
    by_rate = vc.constraints.fit_capacity(run, use_case, max_handoff_rate=0.25)
    by_count = vc.constraints.fit_capacity(run, use_case, max_handoffs=1)
    assert by_rate.policy == by_count.policy and by_rate.max_handoff_rate == 0.25
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="max_handoff_rate"):
            vc.constraints.fit_capacity(run, use_case, max_handoff_rate=bad)
    with pytest.raises(ValueError, match="exactly one"):
        vc.constraints.fit_capacity(run, use_case)
    with pytest.raises(ValueError, match="kinds"):
        vc.constraints.fit_capacity(run, use_case, max_handoffs=1, kind="expected_value")
    record = by_rate.to_dict()
    assert record["type"] == "review_capacity" and record["binding"] is True


def test_weights_count_as_repeated_items():
    p = vc.Predictions.from_top_label(["a", "b", "a"], [0.9, 0.7, 0.6], ["a", "a", "a"], classes=["a", "b"],
                                      sample_weight=[2, 1, 3])
    q = vc.Predictions.from_top_label(["a"] * 2 + ["b"] + ["a"] * 3, [0.9] * 2 + [0.7] + [0.6] * 3, ["a"] * 6,
                                      classes=["a", "b"])
    use_case = vc.UseCase(1, 0, -4)
    for budget in range(0, 7):
        for kind in ("threshold", "class_thresholds"):
            a = vc.constraints.fit_capacity(vc.presort(p), use_case, max_handoffs=budget, kind=kind)
            b = vc.constraints.fit_capacity(vc.presort(q), use_case, max_handoffs=budget, kind=kind)
            assert a.policy == b.policy and a.value_total == b.value_total and a.marginal_value == b.marginal_value


def test_class_capacity_never_loses_to_one_threshold_on_every_three_item_run():
    """Exhaustive: 3 items, 2 classes, every prediction, truth, confidence order and budget (issue 19, 4b)."""
    import itertools

    use_case = vc.UseCase(1, 0, -4)
    checked = 0
    for predicted in itertools.product("ab", repeat=3):
        for truth in itertools.product("ab", repeat=3):
            for confidence in ((0.9, 0.8, 0.6), (0.9, 0.6, 0.6), (0.7, 0.7, 0.7)):
                p = vc.Predictions.from_top_label(list(predicted), list(confidence), list(truth), classes=["a", "b"])
                run = vc.presort(p)
                for budget in (0, 1, 2, 3):
                    single = vc.constraints.fit_capacity(run, use_case, max_handoffs=budget)
                    both = vc.constraints.fit_capacity(run, use_case, max_handoffs=budget, kind="class_thresholds")
                    assert both.handoffs <= budget
                    assert vc.evaluate(both.policy, p, use_case).value_total == pytest.approx(both.value_total)
                    assert both.value_total >= single.value_total, (predicted, truth, confidence, budget)
                    assert both.value_total <= both.upper_bound + 1e-12
                    checked += 1
    assert checked == 8 * 8 * 3 * 4


def test_whether_a_class_capacity_is_exact_does_not_depend_on_the_scale_of_the_values():
    """Scaling every value by a power of two (exact in floating point) changes no result, the flag that says the
    value reaches the relaxation's bound included: its round-off tolerance was 1e-12 absolute below totals of 1."""
    import itertools

    flags = {}
    for scale in (1.0, 2.0**-60, 2.0**60):
        use_case = vc.UseCase(scale, 0, -4 * scale)
        for predicted in itertools.product("ab", repeat=3):
            for truth in itertools.product("ab", repeat=3):
                for confidence in ((0.9, 0.8, 0.6), (0.9, 0.6, 0.6)):
                    p = vc.Predictions.from_top_label(list(predicted), list(confidence), list(truth),
                                                      classes=["a", "b"])
                    run = vc.presort(p)
                    for budget in (0, 1, 2):
                        both = vc.constraints.fit_capacity(run, use_case, max_handoffs=budget, kind="class_thresholds")
                        flags.setdefault((predicted, truth, confidence, budget), set()).add(
                            (both.exact, both.value_total / scale, both.upper_bound / scale))
    assert all(len(seen) == 1 for seen in flags.values()), [k for k, v in flags.items() if len(v) > 1][:3]
