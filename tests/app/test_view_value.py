"""The Value page's view model (dashboard.views.value), without Streamlit: its numbers are the core's."""

import math

import pytest

import valuecore as vc
from dashboard.data import workspace
from dashboard.views import value as view
from view_fixtures import pipeline, selection


@pytest.fixture(scope="module")
def digits():
    chosen = selection("digits")
    return chosen, workspace(chosen)


@pytest.mark.parametrize("kind", ["threshold", "calibrated_threshold", "accept_all", "expected_value"])
def test_each_models_value_is_the_core_evaluation_of_its_policy(digits, kind):
    chosen, ws = digits
    page = view.build(chosen, ws, kind)
    core = pipeline(chosen)
    table = page.numbers.set_index("model")
    for model in chosen.models:
        policy = core.policy(model, kind, chosen.values)
        expected = vc.evaluate(policy, core.predictions(model, "test"), chosen.values)
        assert table.loc[model, "value_per_item"] == pytest.approx(expected.value_per_item, abs=1e-12)
        assert table.loc[model, "value_total"] == pytest.approx(expected.value_total, abs=1e-9)
        assert table.loc[model, "coverage"] == pytest.approx(expected.coverage, abs=1e-12)
    best = max(chosen.models, key=lambda m: table.loc[m, "value_per_item"])
    assert page.best == best and table.loc[best, "best"] == "★"
    # No model hands every item over: the hand-off value on every item.
    assert table.loc["no model (hand off all)", "value_per_item"] == pytest.approx(chosen.use_case.v_abstain)
    assert page.tiles[2].value == chosen.money(table.loc[best, "value_per_item"])


def test_the_what_if_tiles_are_the_best_model_at_the_picked_threshold(digits):
    chosen, ws = digits
    page = view.build(chosen, ws, "threshold", what_if=0.7)
    core = pipeline(chosen)
    picked = vc.evaluate(vc.Policy("threshold", threshold=0.7), core.predictions(page.best, "test"), chosen.values)
    yours, per_item, acted = page.what_if_tiles
    assert yours.value == "0.7" or float(yours.value) == 0.7
    assert per_item.value == chosen.money(picked.value_per_item)
    assert acted.value == vc.wording.percent(picked.coverage)
    table = page.numbers.set_index("model")
    assert table.loc[page.best, "what_if_per_item"] == pytest.approx(picked.value_per_item, abs=1e-12)
    assert set(view.WHAT_IF_SHOWN) <= set(page.shown_columns)
    assert view.build(chosen, ws, "threshold").what_if_tiles == ()


def test_a_missing_split_is_said_not_raised():
    chosen = selection("digits", evaluate="nosuch")
    page = view.build(chosen, workspace(chosen), "threshold")
    assert page.failure is not None and page.failure.startswith("No selected model could be evaluated")
    assert page.numbers is None and page.best is None


def test_the_intro_names_the_values_and_omega_as_everywhere():
    chosen = selection("digits", values=(1.0, 0.0, -1000.0))
    intro = view.intro(chosen, workspace(chosen))
    assert "ω = 1000" in intro.caption and "e+" not in intro.caption
    assert intro.what_if_default == pytest.approx(1000 / 1001)


def test_the_curves_pass_through_the_tuned_threshold_at_its_value(digits):
    chosen, ws = digits
    page = view.build(chosen, ws, "threshold")
    chart = view.curves(chosen, ws, page)
    table = page.numbers.set_index("model")
    tuned = chart.markers[chart.markers["marker"] == "tuned"].set_index("model")
    for model in chosen.models:
        assert tuned.loc[model, "value_per_item"] == pytest.approx(table.loc[model, "value_per_item"], abs=1e-12)
        assert math.isclose(tuned.loc[model, "threshold"], table.loc[model, "threshold"])


def test_the_value_in_all_has_no_cents(digits):
    # issue 35: "$423.00 in all on 450 items"; an amount over many items reads as on the first page ($423).
    chosen, ws = digits
    page = view.build(chosen, ws, "threshold")
    table = page.numbers.set_index("model")
    total = chosen.projected(table.loc[page.best, "value_total"])
    assert f"({total} in all on 450 items)" in page.sentences[0] and ".00 in all" not in page.sentences[0]
