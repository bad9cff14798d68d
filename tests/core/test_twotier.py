"""Two-tier automation: exhaustive search over every pair of thresholds."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference as ref
import reference_constraints as refc
import valuecore as vc

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
numbers = st.integers(-5, 5).map(float)


@settings(max_examples=150, **SETTINGS)
@given(ref.case_and_values(exact=True, max_n=14), numbers, numbers, st.integers(0, 3).map(float))
def test_two_tier_is_the_exhaustive_optimum_over_threshold_pairs(case_vals, v_ok, v_bad, cost):
    case, vals = case_vals
    p = case.predictions()
    values = vals.engine(case.classes)
    r, M = case.ref(), vals.ref(case.n_classes)
    assisted = vc.constraints.AssistedValues(v_ok, v_bad, cost)
    policy = vc.constraints.fit_two_tier(vc.presort(p), values, assisted)
    t_auto, t_assist, best = refc.two_tier_search(r, M, (v_ok, v_bad, cost))
    got = (policy.threshold, policy.assist_threshold)
    assert refc.two_tier_value(r, M, *got, (v_ok, v_bad, cost)) == best
    assert got == (t_auto, t_assist), "ties: the highest automatic threshold, then the highest assist threshold"
    result = vc.constraints.evaluate_two_tier(policy, p, values)
    assert Fraction(result.value_total) == best
    assert result.n_auto + result.n_assisted + result.n_handoff == pytest.approx(p.total_weight)


@pytest.mark.heavy
@settings(max_examples=100, **SETTINGS)
@given(ref.case_and_values(exact=True), st.integers(0, 4).map(float), st.integers(0, 4).map(float))
def test_an_assisted_tier_worth_no_more_than_a_handoff_reduces_to_one_threshold(case_vals, below_ok, below_bad):
    case, vals = case_vals
    if vals.kind != "use_case":
        return
    v_abstain = vals.data[1]
    p = case.predictions()
    run = vc.presort(p)
    values = vals.engine(case.classes)
    # confirming is worth at most a hand-off whether the answer is right or wrong
    assisted = vc.constraints.AssistedValues(v_abstain - below_ok, v_abstain - below_bad, 0.0)
    policy = vc.constraints.fit_two_tier(run, values, assisted)
    single = vc.fit_policy("threshold", run, values)
    assert policy.threshold == single.threshold
    assert policy.assist_threshold == policy.threshold, "nothing is assisted"
    if p.n:
        assert (
            vc.constraints.evaluate_two_tier(policy, p, values).value_total
            == vc.evaluate(single, p, values).value_total
        )


def test_two_tier_round_trips_and_refuses_bad_input():
    assisted = {"v_confirmed_correct": 0.9, "v_confirmed_wrong": -0.5, "cost": 0.1}
    policy = vc.Policy("two_tier", threshold=0.9, assist_threshold=0.6, assisted=assisted)
    assert vc.Policy.from_dict(policy.to_dict()) == policy
    p = vc.Predictions.from_proba([[0.95, 0.05], [0.7, 0.3], [0.5, 0.5]], y_true=[0, 1, 0])
    assert policy.tiers(p).tolist() == [0, 1, 2]
    assert policy.decide(p).tolist() == [0, 2, 2]  # the machine acts alone on the automatic tier only
    with pytest.raises(ValueError, match="must not exceed"):
        vc.Policy("two_tier", threshold=0.5, assist_threshold=0.6, assisted=assisted)
    with pytest.raises(ValueError, match="assisted tier"):
        vc.Policy("two_tier", threshold=None, assist_threshold=0.6)
    with pytest.raises(ValueError, match="takes no assist"):
        vc.Policy("threshold", threshold=0.5, assist_threshold=0.4)
    with pytest.raises(ValueError, match="evaluate_two_tier"):
        vc.evaluate(policy, p, vc.UseCase(1, 0, -1))
    with pytest.raises(ValueError, match="finite"):
        vc.constraints.AssistedValues(float("nan"), 0, 0)
    fitted = vc.fit_policy("two_tier", vc.presort(p), vc.UseCase(1, 0, -1), assisted=assisted)
    assert fitted.kind == "two_tier" and dict(fitted.assisted) == assisted


def test_assisted_values_beyond_the_value_limit_are_refused_in_words():
    # 1.7e308 - (-1.7e308) overflows: the assisted gains would be inf and nan, the thresholds nonsense.
    p = vc.Predictions.from_top_label(["a"] * 4, [0.9, 0.8, 0.7, 0.6], ["a", "a", "b", "a"], classes=["a", "b"])
    for values in (vc.UseCase(1, 0, -4), vc.ValueMatrix(("a", "b"), [[1, -4, 0], [-4, 1, 0]])):
        with pytest.raises(ValueError, match="the values of the assisted tier must be at most 1e\\+100"):
            vc.constraints.fit_two_tier(vc.presort(p), values, vc.constraints.AssistedValues(1.7e308, 0.0, -1.7e308))
