"""``evaluate``, ``estimate`` and item gains (``valuecore/_engine/evaluate.py``, ``sorting.item_gains``)
against the exact references of ``tests/core/reference.py``.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import reference as ref
from helpers.engine_reference import SETTINGS, build, check_result, close, label_free_values, policies_for, ref_actions
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it


# ------------------------------------------------------------------------ evaluation
@settings(max_examples=150, **SETTINGS)
@given(ref.case_and_values().flatmap(lambda cv: st.tuples(st.just(cv), policies_for(cv[0]))))
def test_evaluate_matches_the_reference(args):
    (case, vals), policy = args
    p, _, values, r, M = build(case, vals)
    actions = ref_actions(policy, r, M)
    if policy.kind == "expected_value" and not (case.exact and vals.exact):
        # Round-off may break near-ties of expected values either way: that rule is
        # checked in test_expected_value_rule_is_the_brute_force_argmax; here take its actions.
        actions = policy.decide(p, values).tolist()
    assert policy.decide(p, values).tolist() == actions
    result = vc.evaluate(policy, p, values)
    expected = ref.evaluate(r, actions, M)
    check_result(result, expected, case.scale(vals))
    assert not result.estimated
    # Per-item values, unweighted.
    per_item = vc.item_values(policy, p, values)
    assert [Fraction(float(v)) for v in per_item] == ref.item_values(r, actions, M)
    # Seed 000 eq. 4: for a use case with v_correct > v_abstain the dimensionless value
    # is (N_correct - omega N_wrong) / N.
    if vals.kind == "use_case" and vals.data[0] > vals.data[1] and expected["n_items"] > 0:
        c, a, w = (Fraction(v) for v in vals.data)
        omega = (a - w) / (c - a)
        eq4 = (expected["n_correct"] - omega * expected["n_wrong"]) / expected["n_items"]
        if abs(omega) < Fraction(10) ** 300:  # beyond, the exact omega has no float to compare with
            assert close(result.value_dimensionless, eq4, case.scale(vals) * (1 + abs(float(omega))))


@pytest.mark.parametrize("which", ["evaluate", "estimate"])
def test_a_policy_that_abstains_on_everything_accepts_nothing(which):
    """Always abstaining accepts no item: n_wrong = 0, coverage = 0 and the selective
    accuracy / risk are None ("None when none is accepted"). The engine derives
    n_wrong = N - n_correct - n_abstain, so summation round-off shows up as a wrong
    mass of 4.4e-16 and the result reports selective_risk = 1.0."""
    never = vc.Policy("threshold", threshold=None)
    if which == "evaluate":
        p = vc.Predictions.from_top_label(
            ["0"] * 4, [0.5] * 4, ["1", "2", "0", "0"], classes=["0", "1", "2", "3"],
            sample_weight=[1 / 3, 0.7, 1.1, 0.7],
        )
        result = vc.evaluate(never, p, vc.UseCase(1, 0, -1))
    else:
        p = vc.Predictions.from_proba([[0.3, 0.7]] * 3)
        result = vc.estimate(never, p, vc.UseCase(1, 0, -1))
    assert result.n_correct == 0.0
    assert result.n_wrong == 0.0  # engine: 4.440892098500626e-16
    assert result.coverage == 0.0
    assert result.selective_accuracy is None  # engine: 0.0
    assert result.selective_risk is None  # engine: 1.0


@settings(max_examples=100, **SETTINGS)
@given(
    ref.cases(labeled=False)
    .flatmap(lambda c: st.tuples(
        st.just(c),
        label_free_values(c),
        policies_for(c),
    ))
)
def test_estimate_is_the_double_loop_expectation(args):
    case, vals, policy = args
    p, _, values, r, M = build(case, vals)
    actions = policy.decide(p, values).tolist()
    if policy.kind != "expected_value" or (case.exact and vals.exact):
        assert actions == ref_actions(policy, r, M)
    result = vc.estimate(policy, p, values)
    assert result.estimated
    expected = ref.estimate(r, actions, M)
    # A top-label run knows only the mass of the predicted class: its confusion rows
    # are not defined, but counts and value are.
    check_result(result, expected, case.scale(vals), confusion=case.proba is not None)
    assert close(result.value_total, ref.expected_value(r, actions, M), case.scale(vals))


@settings(max_examples=80, **SETTINGS)
@given(ref.cases().flatmap(lambda c: st.tuples(st.just(c), label_free_values(c), st.booleans())))
def test_item_gains(args):
    case, vals, estimate = args
    p, _, values, r, M = build(case, vals)
    got = vc.curves.item_gains(p, values, estimate=estimate)
    want = ref.item_gains(r, M, estimate=estimate)
    assert got.shape == (case.n,)
    for g, w in zip(got.tolist(), want):
        assert close(g, w, case.scale(vals))
