"""One chart, one colour: the app's Altair charts and the HTML report draw the same Vega-Lite specs.

The report is built on the digits sample runs (eight and more models would wrap the palette; five show
that model i gets colour i in both); its chart specs are caught on their way to the SVG renderer, and the
app's chart functions are called on the very rows the report drew.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import valuecore as vc
import valuecore.report as report
from dashboard.charts.calibration import reliability_chart
from dashboard.charts.value import value_threshold_chart
from dashboard.charts.voc import voc_chart
from valuecore.chartspecs import PALETTE, model_color, model_palette, records

ROOT = Path(__file__).resolve().parent.parent
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
    app = voc_chart(pd.DataFrame(spec["datasets"]["curves"]), models=models, omega_now=omega_now,
                    height=spec["height"]).to_dict(validate=True)
    assert _shared(app) == _shared(spec)


def test_the_app_and_the_report_draw_the_same_value_threshold_spec(report_specs):
    specs, models = report_specs
    spec = specs["Value per item against the threshold"]
    curves = pd.DataFrame(spec["datasets"]["curves"]).drop(columns="value_text")
    markers = pd.DataFrame(spec["datasets"]["markers"]).drop(columns="value_text")
    assert set(markers["marker"]) == {"tuned"} and len(markers) == len(models)
    app = value_threshold_chart(curves, markers, models=models, currency="€",
                                height=spec["height"]).to_dict(validate=True)
    assert _shared(app) == _shared(spec)


def test_the_app_and_the_report_draw_the_same_reliability_spec(report_specs):
    specs, models = report_specs
    spec = specs["Calibration at a glance"]
    rows = pd.DataFrame(spec["datasets"]["reliability"])
    assert set(rows["stage"]) == {"before"}  # no recalibration asked: the raw confidence only
    app = reliability_chart(rows, models, size=spec["spec"]["width"]).to_dict(validate=True)
    assert _shared(app) == _shared(spec)
    assert app["config"]["legend"] == spec["config"]["legend"]


def test_model_i_has_colour_i_in_the_app_and_in_the_report(report_specs):
    specs, models = report_specs
    assert len(models) >= 5
    expected = {model: PALETTE[i] for i, model in enumerate(models)}
    for title, spec in specs.items():
        assert _colors(spec) == expected, title
    app = voc_chart(pd.DataFrame(specs["Value for every mistake cost (VOC curves)"]["datasets"]["curves"]),
                    models=models).to_dict()
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
