"""The "Calibration" view model (dashboard.views.calibration), without Streamlit: the metrics are
valuecore's diagnostics of the raw and recalibrated confidences, and Table 5 is the core's."""

from __future__ import annotations

import numpy as np
import pytest
from view_selection import selection

import valuecore as vc
from dashboard.safetext import md_text
from dashboard.views import calibration as view


@pytest.fixture(scope="module")
def digits():
    chosen, _ = selection("digits")
    return chosen, view.options(chosen)


def test_the_options_offer_what_can_be_examined(digits):
    chosen, opts = digits
    assert opts.stop is None and set(opts.labelled) == set(chosen.models)
    assert opts.methods[opts.first_examined] == "temperature"  # none in the sidebar: the first recalibration
    unlabelled, _ = selection("breast_cancer", evaluate="prod")
    stopped = view.options(unlabelled)
    assert stopped.stop_severity == "warning" and "has no labels" in stopped.stop
    no_split, _ = selection("digits", evaluate=None)
    assert view.options(no_split).stop.startswith("The selected models have no split to evaluate on")


def test_the_metrics_are_the_diagnostics_before_and_after(digits):
    chosen, opts = digits
    page = view.build(chosen, opts, "temperature", 10, "uniform")
    metrics = page.metrics.set_index(["Model", "Confidence"])
    for model in ("logreg", "naive_bayes"):
        test = chosen.report.models[model].splits["test"]
        raw = vc.calibration.calibration_diagnostics(test, 10).summary()
        assert metrics.loc[(model, "raw"), "ECE, equal width"] == pytest.approx(raw["ece_uniform"])
        assert metrics.loc[(model, "raw"), "Brier"] == pytest.approx(raw["brier"])
        calibrator = vc.calibration.fit_calibration(chosen.report.models[model].splits["val"], "temperature")
        after = vc.calibration.calibration_diagnostics(calibrator.apply(test), 10).summary()
        assert metrics.loc[(model, "temperature"), "NLL"] == pytest.approx(after["nll"])
        assert metrics.loc[(model, "temperature"), "Fitted"].startswith("T = ")
    # Every reliability bin belongs to a model and a stage, both stages drawn.
    assert set(page.reliability["stage"]) == {"before", "after"}
    assert page.reliability.groupby(["model", "stage"]).ngroups == 2 * len(chosen.models)


def test_table5_is_the_cores_and_the_sentence_quotes_it(digits):
    chosen, opts = digits
    page = view.build(chosen, opts, "temperature", 15, "uniform")
    model = "naive_bayes"
    run = chosen.report.models[model]
    expected = vc.monitoring.calibration_value_table(run.splits["val"], run.splits["test"], method="temperature",
                                                     ks=vc.DEFAULT_KS)
    table = page.table[page.table["Model"] == model]
    assert np.allclose(table["Value, tuned raw"], expected["value_tuned_before"])
    assert np.allclose(table["Value, ω/(1+ω) recalibrated"], expected["value_calibrated_after"])
    assert list(table["Penalty ω"]) == list(vc.DEFAULT_KS)
    top = page.table[page.table["Penalty ω"] == max(vc.DEFAULT_KS)].set_index("Model")
    gains = top["Value, ω/(1+ω) recalibrated"] - top["Value, ω/(1+ω) raw"]
    best = gains.idxmax()
    assert f"**{md_text(best)}** from {top.loc[best, 'Value, ω/(1+ω) raw']:.3f}" in page.meaning
    # Without a recalibration, no "after" column and a note that says how to get one.
    raw = view.build(chosen, opts, "none", 15, "uniform")
    assert not any(c.endswith("recalibrated") for c in raw.table.columns)
    assert raw.value_notes[0][0] == "info" and set(raw.metrics["Confidence"]) == {"raw"}


def test_the_fitted_recalibration_reads_in_words():
    assert view.fitted_text({"method": "temperature", "temperature": 1.7}).endswith("confidences are softened)")
    assert view.fitted_text({"method": "isotonic", "x": [0.1, 0.5, 0.9]}) == "monotone map with 3 breakpoints"
    assert view.fitted_text(None) == "not fitted"
