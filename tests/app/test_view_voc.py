"""The VOC page's view model (dashboard.views.voc), without Streamlit: its curves and words are the core's."""

import math

import pandas as pd
import pytest

import valuecore as vc
from dashboard.data import workspace
from dashboard.views import voc as view
from view_fixtures import pipeline, selection


def core_curves(chosen, mode):
    core = pipeline(chosen)
    tune = {m: vc.presort(core.predictions(m, "val")) for m in chosen.models}
    return {m: vc.voc_curve(vc.presort(core.predictions(m, "test")), mode,
                            tune_run=tune[m] if mode == "tuned" else None) for m in chosen.models}


@pytest.mark.parametrize("mode", ["tuned", "oracle", "calibrated"])
def test_value_at_omega_and_omega_sup_are_the_core_curves(mode):
    chosen = selection("digits", values=(1.0, 0.0, -4.0))
    ws = workspace(chosen)
    page = view.build(chosen, ws, mode, 0.0, 10.0)
    areas = view.areas(page, chosen.omega, pd.DataFrame({"from": [0.0], "to": [10.0]}))
    summary = areas.summary.set_index("model")
    for model, curve in core_curves(chosen, mode).items():
        assert summary.loc[model, "value_at_omega"] == pytest.approx(float(curve.value_at(4.0)), abs=1e-12)
        assert summary.loc[model, "omega_sup"] == curve.omega_sup or (
            math.isinf(curve.omega_sup) and math.isinf(summary.loc[model, "omega_sup"]))
        assert summary.loc[model, view.range_label(0.0, 10.0)] == pytest.approx(curve.area(0.0, 10.0), abs=1e-12)
        drawn = page.frame[page.frame["model"] == model]
        at = drawn.iloc[(drawn["omega"] - 4.0).abs().argmin()]
        assert at["value"] == pytest.approx(float(curve.value_at(float(at["omega"]))), abs=1e-12)
    assert page.omega_now == 4.0
    assert page.chart_caption.startswith("The dashed line is your use case (ω = 4).")


def test_the_champion_is_above_every_other_model_by_the_cores_dominance():
    chosen = selection("digits")
    page = view.build(chosen, workspace(chosen), "tuned", 0.0, 10.0)
    curves = core_curves(chosen, "tuned")
    above_all = [a for a in curves if all(vc.dominance(curves[a], curves[b], omega_max=10.0).dominant == "a"
                                          for b in curves if b != a)]
    assert page.champion == (above_all[0] if above_all else None)
    assert len(page.dominance) == len(curves) * (len(curves) - 1) // 2


def test_a_large_penalty_reads_1000_not_1e03():
    chosen = selection("digits", values=(1.0, 0.0, -1000.0))
    page = view.build(chosen, workspace(chosen), "calibrated", 0.0, 10.0)
    assert "ω = 1000) is outside the range drawn" in page.chart_caption  # no dashed line is promised
    assert view.areas(page, chosen.omega, pd.DataFrame({"from": [], "to": []})).value_label.endswith("ω = 1000")
    assert page.omega_now is None  # outside the range drawn


def test_bad_ranges_are_skipped_and_said():
    chosen = selection("digits")
    page = view.build(chosen, workspace(chosen), "oracle", 0.0, 10.0)
    areas = view.areas(page, chosen.omega, pd.DataFrame({"from": [5.0, 1.0], "to": [2.0, float("nan")]}))
    assert areas.ranges == ((1.0, math.inf),)
    assert len(areas.problems) == 1 and "row 1" in areas.problems[0]


def test_unlabelled_evaluation_draws_nothing_and_says_why():
    chosen = selection("digits", evaluate="nosuch")
    page = view.build(chosen, workspace(chosen), "tuned", 0.0, 10.0)
    assert page.empty_message is not None and page.curves == {}
