"""One chart path, one colour: the app draws the Vega-Lite specs of valuecore.chartspecs as they are
(st.vega_lite_chart), the very specs the HTML report draws.

The report is built on the digits sample runs (eight and more models would wrap the palette; five show
that model i gets colour i in both); its chart specs are caught on their way to the SVG renderer, and the
spec functions the app calls are called on the very rows the report drew.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import valuecore as vc
import valuecore.report as report
from valuecore.chartspecs import (
    PALETTE, model_color, model_palette, records, reliability_spec, value_threshold_spec, voc_spec,
)
from vegalite import valid

ROOT = Path(__file__).resolve().parents[2]
# What only the report sets: its title and its page width (the app sizes to its container).
REPORT_ONLY = ("title", "width", "$schema", "config")


@pytest.fixture(scope="module")
def report_specs():
    """The specs the report rendered for the digits runs at ω = 5, by their title, and the model order."""
    models = vc.load_runs(ROOT / "sample_runs" / "digits").models
    drawn = []
    original = report._svg
    report._svg = lambda spec: drawn.append(spec) or "<svg></svg>"
    try:
        report.html_report(models, vc.UseCase.from_omega(5), currency="€")
    finally:
        report._svg = original
    return {spec["title"]["text"]: spec for spec in drawn}, list(models)


def _shared(spec: dict) -> dict:
    return {k: v for k, v in spec.items() if k not in REPORT_ONLY}


def _views(spec: dict) -> list[dict]:
    """Every single view of a layered or faceted spec."""
    inner = spec.get("spec", spec)
    return [view for layer in inner.get("layer", [inner]) for view in _views(layer)] if "layer" in inner else [inner]


def _colors(spec: dict) -> dict:
    """model -> colour, from every colour scale over models in the spec."""
    found = {}
    for layer in _views(spec):
        color = layer.get("encoding", {}).get("color", {})
        if color.get("field") == "model":
            scale = color["scale"]
            for model, colour in zip(scale["domain"], scale["range"]):
                assert found.setdefault(model, colour) == colour, "a model with two colours on one chart"
    return found


def test_the_app_and_the_report_draw_the_same_voc_spec(report_specs):
    specs, models = report_specs
    spec = specs["Value for every mistake cost (VOC curves)"]
    omega_now = spec["datasets"]["omega_now"][0]["omega"]
    assert omega_now == 5
    app = valid(voc_spec(pd.DataFrame(spec["datasets"]["curves"]), models=models, omega_now=omega_now,
                         height=spec["height"]))
    assert _shared(app) == _shared(spec)


def test_the_app_and_the_report_draw_the_same_value_threshold_spec(report_specs):
    specs, models = report_specs
    spec = specs["Value per item against the threshold"]
    curves = pd.DataFrame(spec["datasets"]["curves"]).drop(columns="value_text")
    markers = pd.DataFrame(spec["datasets"]["markers"]).drop(columns="value_text")
    # Under the recommended rules (the report's default) a model's marker is its own rule's: tuned or calibrated.
    assert set(markers["marker"]) <= {"tuned", "calibrated"} and len(markers) == len(set(markers["model"]))
    app = valid(value_threshold_spec(curves, markers, models=models, currency="€", height=spec["height"]))
    assert _shared(app) == _shared(spec)


def test_the_app_and_the_report_draw_the_same_reliability_spec(report_specs):
    specs, models = report_specs
    spec = specs["Calibration at a glance"]
    rows = pd.DataFrame(spec["datasets"]["reliability"])
    assert set(rows["stage"]) == {"before"}  # no recalibration asked: the raw confidence only
    app = valid(reliability_spec(rows, models, size=spec["spec"]["width"]))
    assert _shared(app) == _shared(spec)
    assert app["config"]["legend"] == spec["config"]["legend"]


def test_model_i_has_colour_i_in_the_app_and_in_the_report(report_specs):
    specs, models = report_specs
    assert len(models) >= 5
    expected = {model: PALETTE[i] for i, model in enumerate(models)}
    for title, spec in specs.items():
        assert _colors(spec) == expected, title
    app = voc_spec(pd.DataFrame(specs["Value for every mistake cost (VOC curves)"]["datasets"]["curves"]),
                   models=models)
    assert _colors(app) == expected


def test_the_palette_wraps_after_eight_and_keeps_yellow_last():
    names = [f"m{i}" for i in range(10)]
    assert model_palette(names) == [*PALETTE, *PALETTE[:2]]
    assert PALETTE[-1] == "#F0E442" and len(set(PALETTE)) == 8
    assert model_color(names, legend=False)["legend"] is None


def test_records_turn_missing_and_infinite_numbers_into_null():
    frame = pd.DataFrame({"model": ["a", "b"], "value": [float("nan"), float("inf")], "n": [1, 2]})
    rows = records(frame)
    assert rows == [{"model": "a", "value": None, "n": 1}, {"model": "b", "value": None, "n": 2}]
    assert type(rows[0]["n"]) is int


# ------------------------------------------------ every other chart of the app: one spec, drawn as it is
@pytest.fixture(scope="module")
def digits_charts():
    """name -> the spec the app draws, from the frames of the pages' views on the digits runs, and the models."""
    from view_selection import selection

    from dashboard.views import calibration as calibration_view
    from dashboard.views import capacity as capacity_view
    from dashboard.views import compare as compare_view
    from dashboard.views import monitor as monitor_view
    from dashboard.views import reviewers as reviewers_view
    from dashboard.views import values_per_class as values_view
    from valuecore import chartspecs as cs

    chosen, ws = selection("digits")
    models = list(chosen.models)
    paired = compare_view.build(chosen, ws, model_a="logreg", model_b="svm_rbf", kind="threshold",
                                n_resamples=100, seed=0)
    capacity = capacity_view.build(chosen, ws, models[0], capacity_view.Inputs())
    per_class = values_view.build(chosen, ws, chosen.report.models[models[0]].classes)
    detail = per_class.detail(per_class.models[0], per_class.rules(per_class.models[0])[0])
    calibrated = calibration_view.build(chosen, calibration_view.options(chosen), "temperature", 10, "uniform")
    frames = []
    for model in models:
        run = chosen.report.models[model].splits["test"]
        frame = vc.monitoring.monitor(run, ws.policy(model, "threshold", chosen.values), chosen.values, n_chunks=4)
        frames.append(frame.assign(model=model))
    long = monitor_view.monitor_long(pd.concat(frames, ignore_index=True))
    run = chosen.report.models[models[0]]
    bands = vc.monitoring.monitor_bands(run.splits["val"], run.splits["test"],
                                        ws.policy(models[0], "threshold", chosen.values), chosen.values, n_chunks=4)
    assert capacity.risk.chart is not None and capacity.tiers.chart is not None
    histogram = vc.curves.confidence_histogram(chosen.report.models["logreg"].splits["test"], bins=20)
    marks = pd.DataFrame({"label": ["tuned", "your threshold"], "threshold": [0.6, 0.5]})
    reviewers = reviewers_view.build(ws, models[0], chosen, workload=((0.05, 0.95), (0.5, 0.8)),
                                     v_person_wrong=None, volume=1000).answer
    charts = {
        "interval": cs.value_interval_spec(paired.intervals, models, currency="€"),
        "difference": cs.difference_spec(paired.differences, model_a="logreg", model_b="svm_rbf", currency="€",
                                         models=models),
        "stability": cs.stability_spec(paired.stability.counts, models, tuned=paired.stability.tuned),
        "monitor": cs.monitor_spec(long, models, measure="coverage", legend=False, height=240),
        "bands": cs.monitor_band_spec(bands.frame, "€"),
        "capacity": cs.capacity_spec(capacity.capacity.chart, 40, "€"),
        "risk": cs.certified_risk_spec(capacity.risk.chart, 0.05),
        "tiers": cs.tiers_spec(capacity.tiers.chart),
        "reviewers": cs.reviewer_value_spec(reviewers.curve, reviewers.chosen, "€"),
        "value matrix": cs.value_matrix_spec(per_class.cells, currency="€"),
        "confusion": cs.confusion_value_spec(detail.cells, currency="€"),
        "calibration value": cs.calibration_value_spec(calibrated.value_long, models),
        "histogram": cs.confidence_histogram_spec(histogram, marks, title="logreg"),
    }
    return charts, models


@pytest.mark.parametrize("name", ["interval", "difference", "stability", "monitor", "bands", "capacity", "risk",
                                  "tiers", "reviewers", "value matrix", "confusion", "calibration value",
                                  "histogram"])
def test_every_chart_of_the_app_is_valid_vega_lite_drawn_from_real_rows(digits_charts, name):
    charts, _ = digits_charts
    spec = valid(charts[name])
    assert all(spec["datasets"].values()), name


def test_the_app_has_one_chart_path():
    """Every chart of the app is a spec of valuecore.chartspecs drawn by st.vega_lite_chart: nothing of the
    app imports Altair or calls st.altair_chart (issue 35: two chart paths, 681 lines of Altair around the specs)."""
    import ast

    files = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "dashboard").rglob("*.py"))]
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.name}: import {n}" for n in names if n.split(".")[0] == "altair"]
            if isinstance(node, ast.Attribute) and node.attr == "altair_chart":
                found.append(f"{path.name}:{node.lineno}: altair_chart")
    assert not found, found
    assert not (ROOT / "dashboard" / "charts").exists()


@pytest.mark.parametrize("name", ["interval", "stability", "monitor", "calibration value"])
def test_model_i_has_colour_i_on_every_chart_that_shows_models(digits_charts, name):
    charts, models = digits_charts
    spec = charts[name]
    assert len(models) >= 5
    assert _colors(spec) == {model: PALETTE[i] for i, model in enumerate(models)}


def test_each_side_of_a_paired_comparison_has_its_models_colour(digits_charts):
    charts, models = digits_charts
    bars = next(view for view in _views(charts["difference"]) if view["mark"]["type"] == "bar")
    scale = bars["encoding"]["color"]["scale"]
    assert scale["domain"] == ["logreg earns more", "same value", "svm_rbf earns more"]
    assert scale["range"] == [PALETTE[models.index("logreg")], "#BBBBBB", PALETTE[models.index("svm_rbf")]]


def test_capacitys_value_axis_holds_zero():
    """As the VOC chart's does (issue 33's walk): fitted to its curve, 880 to 940 a day, the Capacity chart drew a
    rule worth $880 a day at the bottom of the chart, where a reader looks for nothing."""
    from valuecore.chartspecs import capacity_spec

    def y_scale(values):
        rows = [{"reviews_per_day": 10.0 * i, "value_per_day": v, "threshold": 0.5} for i, v in enumerate(values)]
        line = next(view for view in _views(capacity_spec(rows, 20, "€")) if view["mark"]["type"] == "line")
        return line["encoding"]["y"]["scale"]

    # Steps from 608 to 826 a day (logreg on the digits at ω = 10), a flat curve, a loss: 0 is on the axis.
    assert y_scale([608.0, 700.0, 826.0]) == {"zero": True}
    assert y_scale([910.9, 910.9]) == {"zero": True}
    assert y_scale([-40.0, -12.0]) == {"zero": True}
    # A curve flat at 0 gets room around it, not a domain of one point.
    assert y_scale([0.0, 0.0]) == {"zero": True, "domain": [-1.0, 1.0]}


def test_specs_take_plain_records_as_they_take_frames():
    from valuecore import chartspecs as cs

    start = pd.to_datetime(["2024-03-04", "2024-03-11"])
    frame = pd.DataFrame({"model": "mlp", "position": [1, 2], "chunk": ["w1", "w2"], "start": start,
                          "end": start + pd.Timedelta(days=7), "n": [50, 50], "measure": "value_per_item",
                          "source": "estimated", "amount": [0.8, 0.7]})
    as_rows = frame.to_dict("records")
    by_frame, by_rows = cs.monitor_spec(frame, ["logreg", "mlp"]), cs.monitor_spec(as_rows, ["logreg", "mlp"])
    assert by_frame == by_rows
    line = next(view for view in _views(by_rows) if view["mark"]["type"] == "line")
    assert line["encoding"]["x"]["type"] == "temporal" and by_rows["datasets"]["chunks"][0]["start"].startswith(
        "2024-03-04")
    # Without times (chunks by count), the chunks are numbered in order.
    numbered = cs.monitor_spec(frame.assign(start=pd.NaT), ["mlp"])
    assert next(v for v in _views(numbered) if v["mark"]["type"] == "line")["encoding"]["x"]["field"] == "position"
    with pytest.raises(ValueError, match="amount"):
        cs.monitor_spec([{k: v for k, v in row.items() if k != "amount"} for row in as_rows], ["mlp"])
    cells = [{"true": "a", "predicted": "a", "value": 1.0}, {"true": "a", "predicted": "abstain", "value": 0.0}]
    assert cs.value_matrix_spec(cells) == cs.value_matrix_spec(pd.DataFrame(cells))


def test_a_difference_bars_label_reads_its_weighted_items_as_every_count_does():
    """A bar of items weighing 0.02 was labelled "0.0", one of 1e50 items with some 50 digits (head 2565fbe)."""
    from valuecore.chartspecs import difference_spec

    items = [3.0, 2.5, 0.02, 1e-50, 1e50]
    spec = difference_spec(pd.DataFrame({"difference": [-1.0, 0.0, 1.0, 2.0, 3.0], "items": items}),
                           model_a="a", model_b="b")
    labels = [row["label"] for row in spec["datasets"]["differences"]]
    assert labels == ["3", "2.5", "0.02", "1e-50", "1.00e+50"]
