"""The Compare page draws its threshold stability after the result's charts (so the browser lays those out while
the server resamples): what it shows is, bit for bit, what ``build`` computed when the stability was drawn inside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
from streamlit.testing.v1 import AppTest
from view_selection import selection

import valuecore as vc
from dashboard.views import compare as view

ROOT = Path(__file__).resolve().parents[2]


def _shown_stability(at: AppTest):
    """The page's stability table and chart (the last chart): its frame, its spec and each dataset's rows."""
    assert not at.exception, [e.value for e in at.exception]
    table = next(f.value for f in at.dataframe if "Tuned threshold" in f.value.columns)
    charts = at.get("vega_lite_chart")
    assert len(charts) == 3  # the two of the result, then the stability
    chart = charts[-1].proto
    datasets = {d.name: pa.ipc.open_stream(d.data.data).read_pandas().to_dict("records") for d in chart.datasets}
    return table, json.loads(chart.spec), datasets


def _expected(at: AppTest, wrong: float):
    """The page as ``build`` makes it with the stability inside (the path the page took before), for the pair,
    rule, resamples and seed the page shows."""
    chosen, ws = selection("digits", use_case=vc.UseCase(1, 0, wrong))
    pair = at.selectbox(key="compare_model_a").value, at.selectbox(key="compare_model_b").value
    page = view.build(chosen, ws, model_a=pair[0], model_b=pair[1], kind=at.selectbox(key="compare_policy_kind").value,
                      n_resamples=at.select_slider(key="compare_resamples").value,
                      seed=int(at.number_input(key="compare_seed").value))
    spec = vc.chartspecs.stability_spec(page.stability.counts, list(chosen.report.models), tuned=page.stability.tuned)
    return page, spec


def test_the_stability_shown_is_the_one_build_computes_bit_for_bit():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params.update({"src": "sample:digits"})
    at.run()
    at.switch_page("pages/compare.py").run()
    for wrong in (-4.0, -7.25):  # the default values, then a new value typed in the sidebar
        if wrong != -4.0:
            at.sidebar.number_input(key="sidebar_v_wrong_input").set_value(wrong)
            at.run()
        table, spec, datasets = _shown_stability(at)
        page, expected = _expected(at, wrong)
        assert table.equals(page.stability.table), (table, page.stability.table)
        assert set(datasets) == set(expected["datasets"]) == {"resampled", "tuned"}
        for name, rows in expected["datasets"].items():
            assert datasets[name] == rows, name  # every threshold and count, to the bit
        assert {k: spec[k] for k in ("layer", "title", "height")} == {k: expected[k] for k in ("layer", "title",
                                                                                               "height")}


def test_build_without_the_stability_is_the_same_page_less_it():
    chosen, ws = selection("digits")
    options = dict(model_a="logreg", model_b="mlp", kind="threshold", n_resamples=300, seed=2)
    whole, without = view.build(chosen, ws, **options), view.build(chosen, ws, **options, with_stability=False)
    assert without.stability is None and whole.stability is not None
    for name in ("model_a", "model_b", "stop", "notes", "heading", "tiles", "sentences", "caption", "comparison"):
        assert getattr(without, name) == getattr(whole, name), name
    assert without.intervals.equals(whole.intervals) and without.differences.equals(whole.differences)
    separately = view.threshold_stability(ws, ("logreg", "mlp"), chosen.values, n_resamples=300, seed=2)
    assert separately.table.equals(whole.stability.table) and separately.counts.equals(whole.stability.counts)
