"""The Monitor page's bands section, through the whole app with AppTest: the
sentences carry the figures of valuecore.monitor_bands, and say which calibration."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import valuecore as vc

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def _monitor(source: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    if source:
        at.sidebar.selectbox(key="sidebar_source").set_value(source).run()
    at.switch_page("pages/monitor.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _text(at) -> str:
    return "\n".join(m.value for m in at.markdown) + "\n" + "\n".join(c.value for c in at.caption)


def _expected(at, sample: str, watched: str, **how):
    model = at.selectbox(key="monitor_bands_model").value
    runs = vc.load_runs([str(ROOT / "sample_runs" / sample)]).models
    run = runs[model]
    # the page's rule: "Recommended", the rule the recommendation chooses for this model
    pipeline = vc.Pipeline(runs)
    rule = vc.recommended_rules(pipeline, vc.UseCase(1, 0, -4))[model]
    policy = pipeline.policy(model, rule, vc.UseCase(1, 0, -4))
    reference = run.splits["val"]
    how = how or {"n_chunks": 8}
    return (vc.monitoring.monitor_bands(reference, run.splits[watched], policy, vc.UseCase(1, 0, -4), **how),
            vc.monitoring.monitor_bands(reference, run.splits["test"], policy, vc.UseCase(1, 0, -4), n_chunks=8))


def test_bands_on_a_labelled_sample_say_the_calibration_and_the_backtest():
    at = _monitor()
    text = _text(at)
    watched, backtest = _expected(at, "digits", at.selectbox(key="monitor_bands_split").value)
    assert f"Estimate calibrated with: {watched.calibration_text}." in text
    assert "isotonic calibration fitted on the labelled reference split (449 items)" in text
    covered = int(backtest.frame["covered"].astype(bool).sum())
    assert f"covered the realised value in **{covered} of {backtest.n_backtest} chunks**" in text


def test_production_chunks_raise_the_alerts_valuecore_finds():
    at = _monitor("sample:breast_cancer")
    assert at.selectbox(key="monitor_bands_split").value == "prod"  # unlabelled splits are offered first
    watched, _ = _expected(at, "breast_cancer", "prod", period="W")  # the production chart's weeks
    text = _text(at)
    if watched.n_alerts:
        assert f"**{watched.n_alerts} of {len(watched.frame)} chunks raised an alert**" in text
    else:
        assert "No alert" in text
    drift = re.search(r"drifted away from the reference on (\d+) of", text)
    assert (int(drift.group(1)) if drift else 0) == watched.n_drift


def test_raw_probabilities_can_be_chosen_and_are_named():
    at = _monitor()
    at.radio(key="monitor_bands_calibration").set_value("none").run()
    assert not at.exception
    assert "raw model probabilities (no calibration)" in _text(at)


def test_alerts_watch_the_model_split_and_chunks_the_production_chart_shows():
    at = _monitor("sample:breast_cancer")
    charted = at.selectbox(key="monitor_split").value
    assert at.selectbox(key="monitor_bands_split").value == charted
    # every charted model's alerts, as valuecore counts them on the chart's weekly chunks
    summary = next(m.value for m in at.markdown if m.value.startswith("Alerts on the charted split"))
    runs = vc.load_runs([str(ROOT / "sample_runs" / "breast_cancer")]).models
    pipeline = vc.Pipeline(runs, "val", "test")
    for model, run in runs.items():  # each with the pages' default rule: its recommended one
        policy = pipeline.policy(model, vc.RECOMMENDED_RULE, vc.UseCase(1, 0, -4))
        bands = vc.monitoring.monitor_bands(run.splits["val"], run.splits[charted], policy, vc.UseCase(1, 0, -4),
                                            period="W")
        assert f"**{model.replace('_', chr(92) + '_')}** {bands.n_alerts} of {len(bands.frame)} chunks" in summary
    # the chart cuts the production split by week: the alerts count the same chunks
    at.radio(key="monitor_chunking").set_value("count").run()
    at.slider(key="monitor_n_chunks").set_value(5).run()
    assert not at.exception
    text = _text(at)
    assert "Chunks as in the production chart above." in text
    assert re.search(r"(of|the) 5 chunks", text), text
    # another model on the charted split: the chart's chunks still, the words name the model shown
    others = [m for m in at.selectbox(key="monitor_bands_model").options
              if m != at.selectbox(key="monitor_bands_model").value]
    at.selectbox(key="monitor_bands_model").set_value(others[0]).run()
    text = _text(at)
    assert "Chunks as in the production chart above." in text
    assert f"for **{others[0].replace('_', chr(92) + '_')}**" in text
    # another split: said in words, with its own chunks
    watched = next(s for s in at.selectbox(key="monitor_bands_split").options if s != charted)
    at.selectbox(key="monitor_bands_split").set_value(watched).run()
    assert "these alerts watch" in _text(at)


def test_the_back_test_does_not_advise_recalibrating_when_recalibration_is_on():
    # With temperature scaling in force the back-test used to say "recalibrate (sidebar)" all the same.
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["src"] = "sample:digits"
    at.query_params["cal"] = "temperature"
    at.run()
    at.switch_page("pages/monitor.py").run()
    assert not at.exception, [e.value for e in at.exception]
    text = _text(at)
    assert "The estimate is furthest off for" in text
    # calibrated on the reference split (the default), a gap says the calibration does not carry over
    assert "recalibrate (sidebar)" not in text and "does not carry over" in text
    at.radio(key="monitor_bands_calibration").set_value("none").run()
    text = _text(at)
    assert "recalibrate (sidebar)" not in text and "even after temperature recalibration" in text
    at = _monitor("sample:digits")
    at.radio(key="monitor_bands_calibration").set_value("none").run()
    assert "recalibrate (sidebar), or calibrate the estimate" in _text(at)


def test_the_bands_model_and_split_chosen_are_kept_by_a_link():
    at = _monitor("sample:breast_cancer")
    opened = at.selectbox(key="monitor_bands_model").value
    assert "bmodel" not in at.query_params  # following the model that alerts most
    other = next(m for m in at.selectbox(key="monitor_bands_model").options if m != opened)
    at.selectbox(key="monitor_bands_model").set_value(other).run()
    watched = at.selectbox(key="monitor_bands_split").options[-1]
    at.selectbox(key="monitor_bands_split").set_value(watched).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["bmodel"] == other and at.query_params["bsplit"] == watched
    again = AppTest.from_file(APP, default_timeout=120)
    for key in ("src", "bmodel", "bsplit"):
        again.query_params[key] = at.query_params[key]
    again.run()
    again.switch_page("pages/monitor.py").run()
    assert (again.selectbox(key="monitor_bands_model").value, again.selectbox(key="monitor_bands_split").value) == (
        other, watched)
