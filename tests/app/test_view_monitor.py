"""The Monitor page's view model (dashboard.views.monitor), without Streamlit: one estimate everywhere,
and its figures are valuecore's (monitor_bands for the estimate, monitor for coverage)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import valuecore as vc
from dashboard.data import Workspace
from dashboard.settings import Settings
from dashboard.state import Selection
from dashboard.views import monitor as view

ROOT = Path(__file__).resolve().parents[2]
VALUES = vc.UseCase(1, 0, -4)


def setup(sample="breast_cancer", calibration="none", models=None):
    """A selection of ``models`` (all by default) of a sample, its workspace and the page's top."""
    report = vc.load_runs([str(ROOT / "sample_runs" / sample)])
    selection = Selection(settings=Settings(source=f"sample:{sample}", calibration=calibration), report=report,
                          models=tuple(models or report.models), use_case=VALUES, tune_split="val", eval_split="test",
                          calibration=calibration)
    ws = Workspace(report, "val", "test", calibration)
    return report, selection, ws, view.build(selection, ws, "threshold", ["breast_cancer"])


def policy_of(run):
    return vc.fit_policy("threshold", vc.presort(run.splits["val"]), VALUES)


def test_the_production_chart_shows_the_bands_estimate():
    report, selection, ws, page = setup(models=("logreg", "random_forest"))
    assert page.unlabelled == {"prod": ("logreg", "random_forest")} and page.labelled == ("test", "val")
    shown = view.production(selection, page, ws, "prod", {"period": "W"})
    for model in page.models:
        run = report.models[model]
        policy = policy_of(run)
        bands = vc.monitoring.monitor_bands(run.splits["val"], run.splits["prod"], policy, VALUES, period="W")
        part = shown.frame[shown.frame["model"] == model]
        assert part["estimated_value_per_item"].tolist() == pytest.approx(
            bands.frame["estimated_value_per_item"].tolist())
        raw = vc.monitoring.monitor(run.splits["prod"], policy, VALUES, period="W")
        assert part["estimated_coverage"].tolist() == pytest.approx(raw["estimated_coverage"].tolist())
        row = shown.summary.set_index("Model").loc[model]
        n = bands.frame["n"].to_numpy()
        assert row["Estimated value ($)"] == pytest.approx(float(n @ bands.frame["estimated_value_per_item"]))
        assert row["Estimated value per item ($)"] == pytest.approx(
            float(n @ bands.frame["estimated_value_per_item"] / n.sum()))
        assert f"{model.replace('_', chr(92) + '_')}** {bands.n_alerts} of {len(bands.frame)} chunks" in shown.alerts
    assert "the same estimate as the bands" in shown.estimate_note
    # the bands section on the charted model and split: the very numbers of the chart
    charted = shown.charted_model
    bands = view.bands(selection, page, ws, charted, "val", "prod", {"period": "W"},
                       charted_model=charted, charted_split="prod")
    part = shown.frame[shown.frame["model"] == charted]
    assert bands.frame["estimated_value_per_item"].tolist() == pytest.approx(
        part["estimated_value_per_item"].tolist())
    assert bands.mismatch == "" and bands.backtest.startswith("Back-test on the labelled split 'test'")


def test_uncalibrated_the_estimate_is_monitor_s_on_the_probabilities_the_policy_acts_on():
    # "none" values the policy's decisions under the probabilities it acts on: valuecore.monitor's estimate,
    # with the sidebar's temperature scaling applied as the policy applies it.
    report, selection, ws, page = setup("digits", calibration="temperature")
    shown = view.backtest(selection, page, ws, "test", 4, calibration="none")
    for model in report.models:
        policy = page.policies[model]
        assert dict(policy.calibration)["method"] == "temperature"
        expected = vc.monitoring.monitor(report.models[model].splits["test"], policy, VALUES, n_chunks=4)
        part = shown.frame[shown.frame["model"] == model]
        assert part["estimated_value_per_item"].tolist() == pytest.approx(
            expected["estimated_value_per_item"].tolist())
        assert part["realised_value_per_item"].tolist() == pytest.approx(expected["realised_value_per_item"].tolist())
    calibrated = view.backtest(selection, page, ws, "test", 4, calibration="auto")
    assert not np.allclose(calibrated.frame["estimated_value_per_item"], shown.frame["estimated_value_per_item"])


def test_the_back_test_table_is_the_bands_estimate_against_the_truth():
    report, selection, ws, page = setup("digits", models=("logreg", "mlp"))
    shown = view.backtest(selection, page, ws, "test", 5)
    table = shown.table.set_index("Model")
    assert list(table.index) == ["logreg", "mlp"]
    for model in page.models:
        run = report.models[model]
        policy = policy_of(run)
        bands = vc.monitoring.monitor_bands(run.splits["val"], run.splits["test"], policy, VALUES, n_chunks=5)
        n = bands.frame["n"].to_numpy()
        estimated = float(n @ bands.frame["estimated_value_per_item"] / n.sum())
        realised = vc.evaluate(policy, run.splits["test"], VALUES).value_total / run.splits["test"].total_weight
        assert table.loc[model, "Estimated per item ($)"] == pytest.approx(estimated)
        assert table.loc[model, "Realised per item ($)"] == pytest.approx(realised)
        assert table.loc[model, "Estimate − realised ($)"] == pytest.approx(estimated - realised)
    assert shown.in_sample == ""
    assert view.backtest(selection, page, ws, "val", 5).in_sample.startswith("Split 'val' is also where")


def test_re_tuned_chunks_say_their_estimate_is_not_the_bands():
    report, selection, ws, page = setup()
    shown = view.production(selection, page, ws, "prod", {"n_chunks": 3}, retune=True)
    model = next(iter(report.models))
    expected = vc.monitoring.monitor(report.models[model].splits["prod"], page.policies[model], VALUES, n_chunks=3,
                                     retune=True)
    part = shown.frame[shown.frame["model"] == model]
    assert part["estimated_value_per_item"].tolist() == pytest.approx(expected["estimated_value_per_item"].tolist())
    assert "not calibrated on the reference split like the bands" in shown.estimate_note
    assert shown.alerts == ""


def test_the_class_mix_is_the_core_s():
    report, selection, ws, page = setup()
    candidates = view.class_mix_candidates(ws, page.models)
    assert candidates == {m: ["prod"] for m in report.models}
    shown = view.class_mix(selection, page, ws, "logreg", "prod", 4, "threshold")
    run = report.models["logreg"]
    expected = view.mix_table(run.splits["val"], run.splits["prod"], policy_of(run), VALUES, "threshold", 4)
    assert shown.table["As tuned"].tolist() == pytest.approx(expected["As tuned"].tolist())
    assert list(shown.table["Share of benign"]) == list(expected["Share of benign"])
    assert ("would earn up to" in shown.verdict) == (expected["Gain"].max() > 0)


def test_without_a_production_split_the_sample_is_offered():
    _, selection, ws, page = setup("digits")
    assert page.unlabelled == {} and page.offer_sample
    options = view.bands_options(selection, ws, page.models)
    assert options.candidates == page.models and options.labelled["mlp"] == ("val", "test")
    assert options.watched(ws, "mlp", "val", None) == ["test"]
