"""Chart specs of the Value, VOC and Values per class pages: tidy frame in, Vega-Lite spec out (valuecore.chartspecs,
drawn as it is by st.vega_lite_chart).

Each test builds a small frame, calls the spec function and checks the
spec, valid Vega-Lite: encodings with explicit types, tooltips
with formats, axis titles with units, the shared model colours.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import valuecore as vc
from valuecore.chartspecs import (
    PALETTE as OKABE_ITO, confidence_histogram_spec, confusion_value_spec, value_matrix_spec, value_threshold_spec,
    voc_spec,
)
from vegalite import valid

ALL_MODELS = ["logreg", "mlp", "svm"]


def layers(spec: dict) -> list[dict]:
    """Every single-view layer of a (possibly nested) layered spec."""
    if "layer" in spec:
        return [leaf for layer in spec["layer"] for leaf in layers(layer)]
    return [spec]


def mark_type(layer: dict) -> str:
    mark = layer["mark"]
    return mark["type"] if isinstance(mark, dict) else mark


def tooltip_fields(layer: dict) -> dict[str, dict]:
    tooltip = layer["encoding"].get("tooltip", [])
    tooltip = tooltip if isinstance(tooltip, list) else [tooltip]
    return {t["field"]: t for t in tooltip}


def dataset(spec: dict, layer: dict) -> pd.DataFrame:
    name = layer.get("data", spec.get("data", {})).get("name")
    return pd.DataFrame(spec["datasets"][name])


@pytest.fixture
def curve_frame() -> pd.DataFrame:
    p = vc.Predictions.from_proba([[0.9, 0.1], [0.7, 0.3], [0.4, 0.6], [0.2, 0.8]], y_true=[0, 1, 1, 1])
    frame = vc.threshold_curve(vc.presort(p), vc.UseCase(1, 0, -2)).to_frame(max_points=None)
    frame = frame.dropna(subset=["threshold"])
    return pd.concat([frame.assign(model="mlp", split="test"), frame.assign(model="svm", split="test")])


def test_value_threshold_chart_encodes_threshold_value_and_model(curve_frame):
    markers = pd.DataFrame(
        {"model": ["mlp", "svm"], "marker": ["tuned", "calibrated"], "threshold": [0.7, 0.667],
         "value_per_item": [0.5, 0.25]}
    )
    spec = valid(value_threshold_spec(curve_frame, markers, models=ALL_MODELS, currency="€", manual_threshold=0.5))
    leaves = layers(spec)
    line = next(leaf for leaf in leaves if mark_type(leaf) == "line")
    encoding = line["encoding"]
    assert encoding["x"]["field"] == "threshold" and encoding["x"]["type"] == "quantitative"
    assert encoding["y"]["field"] == "value_per_item" and encoding["y"]["type"] == "quantitative"
    assert "€" in encoding["y"]["title"]
    assert encoding["color"]["field"] == "model" and encoding["color"]["type"] == "nominal"
    # One colour per model everywhere: the domain is all loaded models, not the two drawn here.
    assert encoding["color"]["scale"]["domain"] == ALL_MODELS
    assert encoding["color"]["scale"]["range"] == list(OKABE_ITO[:3])
    tips = tooltip_fields(line)
    # the threshold exactly, as text (no number format rounds it); the axis keeps its short labels
    assert tips["threshold_exact"]["type"] == "nominal" and "threshold" not in tips
    assert "format" not in encoding["x"].get("axis", {})
    assert tips["coverage"]["format"] == ".1%"
    assert tips["value_text"]["type"] == "nominal"
    assert all(text.startswith(("€", "-€")) for text in dataset(spec, line)["value_text"])
    points = [leaf for leaf in leaves if mark_type(leaf) == "point"]
    assert len(points) == 1 and points[0]["encoding"]["shape"]["field"] == "marker"
    rules = [leaf for leaf in leaves if mark_type(leaf) == "rule"]
    assert any(r["encoding"].get("x", {}).get("field") == "threshold" for r in rules)
    # zero line + marker rules + the manual threshold
    assert len(rules) == 3


def test_value_threshold_chart_dashes_a_second_split(curve_frame):
    both = pd.concat([curve_frame, curve_frame.assign(split="val")])
    spec = valid(value_threshold_spec(both, models=ALL_MODELS, currency="$"))
    line = next(leaf for leaf in layers(spec) if mark_type(leaf) == "line")
    assert line["encoding"]["strokeDash"]["field"] == "split"
    assert "split" in tooltip_fields(line)


def test_confidence_histogram_chart_splits_correct_and_wrong():
    p = vc.Predictions.from_proba([[0.9, 0.1], [0.7, 0.3], [0.4, 0.6], [0.2, 0.8]], y_true=[0, 1, 1, 1])
    histogram = vc.curves.confidence_histogram(p, bins=10)
    thresholds = pd.DataFrame({"label": ["tuned", "your threshold"], "threshold": [0.7, 0.5]})
    spec = valid(confidence_histogram_spec(histogram, thresholds))
    leaves = layers(spec)
    bar = next(leaf for leaf in leaves if mark_type(leaf) == "bar")
    encoding = bar["encoding"]
    assert encoding["x"]["field"] == "bar_start" and encoding["x2"]["field"] == "bar_end"
    assert encoding["y"]["field"] == "share_of_outcome" and encoding["y"]["axis"]["format"] == "%"
    assert encoding["color"]["field"] == "outcome" and encoding["color"]["scale"]["domain"] == ["correct", "wrong"]
    tips = tooltip_fields(bar)
    assert tips["count"]["format"] == ",.0f" and tips["share"]["format"] == ".1%"
    rule = next(leaf for leaf in leaves if mark_type(leaf) == "rule")
    assert rule["encoding"]["x"]["field"] == "threshold"
    assert list(dataset(spec, rule)["label"]) == ["tuned", "your threshold"]


def test_confidence_histogram_draws_correct_and_wrong_side_by_side():
    """Two outcomes' bars over each other, at opacity 0.6, mixed into a brown where both were tall: each bin's
    bars now sit side by side within it, each in its own colour at full opacity, none over another."""
    rng = np.random.default_rng(0)
    proba = rng.dirichlet([1, 1, 1], size=400)
    p = vc.Predictions.from_proba(proba, y_true=rng.integers(0, 3, size=400))
    histogram = vc.curves.confidence_histogram(p, bins=20)
    spec = valid(confidence_histogram_spec(histogram))
    bar = next(leaf for leaf in layers(spec) if mark_type(leaf) == "bar")
    assert bar["mark"].get("opacity", 1) == 1
    assert bar["encoding"]["y2"] == {"datum": 0}  # drawn up from zero, not as a tick at its height
    bars = dataset(spec, bar)
    assert set(bars["outcome"]) == {"correct", "wrong"}
    for (start, end), in_bin in bars.groupby(["bin_start", "bin_end"]):
        assert list(in_bin.sort_values("bar_start")["outcome"]) == ["correct", "wrong"]  # the legend's order
        assert (start <= in_bin["bar_start"]).all() and (in_bin["bar_end"] <= end).all()  # in its own bin
        spans = sorted(zip(in_bin["bar_start"], in_bin["bar_end"]))
        assert spans[0][1] <= spans[1][0] and all(a < b for a, b in spans)  # side by side, none over another
    # the heights are each outcome's share, as before: the bars sum to 1 per outcome
    assert bars.groupby("outcome")["share_of_outcome"].sum().tolist() == pytest.approx([1.0, 1.0])


def test_voc_chart_marks_omega_now_omega_sup_and_bands():
    p = vc.Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.6, 0.4]], y_true=[0, 1, 0, 0])
    curves = {"logreg": vc.voc_curve(vc.presort(p)), "svm": vc.voc_curve(vc.presort(p), "accept_all")}
    frame = vc.voc_frame(curves, np.linspace(0, 5, 11))
    sup = pd.DataFrame({"model": ["svm"], "omega_sup": [curves["svm"].omega_sup], "value": [0.0]})
    bands = frame.assign(low=frame["value"] - 0.1, high=frame["value"] + 0.1)[["model", "omega", "low", "high"]]
    spec = valid(voc_spec(frame, models=ALL_MODELS, omega_now=2.0, omega_sup=sup, bands=bands))
    leaves = layers(spec)
    line = next(leaf for leaf in leaves if mark_type(leaf) == "line")
    assert line["encoding"]["x"] == {**line["encoding"]["x"], "field": "omega", "type": "quantitative"}
    assert "ω" in line["encoding"]["x"]["title"]
    assert line["encoding"]["y"]["field"] == "value"
    assert line["encoding"]["color"]["scale"]["domain"] == ALL_MODELS
    tips = tooltip_fields(line)
    assert tips["value"]["format"] == ".3f" and tips["threshold_exact"]["type"] == "nominal"
    area = next(leaf for leaf in leaves if mark_type(leaf) == "area")
    assert area["encoding"]["y"]["field"] == "low" and area["encoding"]["y2"]["field"] == "high"
    point = next(leaf for leaf in leaves if mark_type(leaf) == "point")
    assert point["encoding"]["x"]["field"] == "omega_sup"
    assert list(dataset(spec, point)["model"]) == ["svm"]
    rules = [leaf for leaf in leaves if mark_type(leaf) == "rule"]
    now = [r for r in rules if r["encoding"].get("x", {}).get("field") == "omega"]
    assert len(now) == 1 and list(dataset(spec, now[0])["omega"]) == [2.0]
    text = next(leaf for leaf in leaves if mark_type(leaf) == "text")
    assert "your ω = 2" in dataset(spec, text)["label"][0]


def test_voc_chart_without_extras_has_line_and_zero_rule_only():
    frame = pd.DataFrame({"model": ["mlp"] * 3, "omega": [0.0, 1.0, 2.0], "value": [0.9, 0.5, 0.1]})
    leaves = layers(valid(voc_spec(frame, models=ALL_MODELS)))
    assert sorted(mark_type(leaf) for leaf in leaves) == ["line", "rule"]


def test_confusion_value_chart_orders_classes_then_abstain():
    p = vc.Predictions.from_proba(
        [[0.9, 0.1], [0.6, 0.4], [0.3, 0.7]], y_true=["ok", "fraud", "fraud"], classes=["ok", "fraud"]
    )
    matrix = vc.ValueMatrix.binary(tp=10, tn=1, fp=-5, fn=-50, abstain=0, classes=["ok", "fraud"])
    result = vc.evaluate(vc.Policy("threshold", threshold=0.65), p, matrix)
    from dashboard.views.values_per_class import confusion_frame

    cells = confusion_frame(result)
    assert list(cells["predicted"].unique()) == ["ok", "fraud", "hand off"]
    assert cells["value"].sum() == pytest.approx(result.value_total)
    spec = valid(confusion_value_spec(cells, currency="$"))
    leaves = layers(spec)
    rect = next(leaf for leaf in leaves if mark_type(leaf) == "rect")
    encoding = rect["encoding"]
    assert encoding["x"]["field"] == "predicted" and encoding["x"]["type"] == "nominal"
    assert encoding["x"]["sort"] == ["ok", "fraud", "hand off"]
    assert encoding["y"]["field"] == "true" and encoding["y"]["sort"] == ["ok", "fraud"]
    assert encoding["color"]["field"] == "value" and encoding["color"]["type"] == "quantitative"
    assert encoding["color"]["scale"]["domainMid"] == 0
    assert "$" in encoding["color"]["title"]
    tips = tooltip_fields(rect)
    assert tips["count"]["format"] == ",.0f" and "value_text" in tips
    text = next(leaf for leaf in leaves if mark_type(leaf) == "text")
    assert text["encoding"]["text"]["field"] == "count"


def test_value_matrix_chart_shows_each_cell_in_the_currency():
    cells = pd.DataFrame(
        {"true": ["a", "a", "a", "b", "b", "b"], "predicted": ["a", "b", "abstain"] * 2,
         "value": [1.0, -4.0, 0.0, -4.0, 1.0, 0.0]}
    )
    spec = valid(value_matrix_spec(cells, currency="CHF "))
    text = next(leaf for leaf in layers(spec) if mark_type(leaf) == "text")
    assert text["encoding"]["text"]["field"] == "value_text"
    assert "-4.00 CHF" in list(dataset(spec, text)["value_text"])  # a code after the number, as on every page


def test_voc_chart_axis_follows_the_data_and_the_bands():
    frame = pd.DataFrame({"model": ["mlp"] * 3, "omega": [0.0, 1.0, 2.0], "value": [0.9, 0.5, -0.15]})
    bands = frame.assign(low=frame["value"] - 0.3, high=frame["value"] + 0.05)[["model", "omega", "low", "high"]]
    spec = valid(voc_spec(frame, models=ALL_MODELS, bands=bands))
    line = next(leaf for leaf in layers(spec) if mark_type(leaf) == "line")
    low, high = line["encoding"]["y"]["scale"]["domain"]
    assert low < -0.45 and low > -0.6  # the lowest band edge (-0.45) is in view, with a little room
    assert 0.95 <= high <= 1.0
    edges = [leaf for leaf in layers(spec) if mark_type(leaf) == "line" and leaf["encoding"]["y"]["field"] in
             ("low", "high")]
    assert len(edges) == 2
    # Without bands, a curve that dips to -3 is not clipped at -1.
    deep = frame.assign(value=[0.9, -1.0, -3.0])
    line = next(leaf for leaf in layers(valid(voc_spec(deep, models=ALL_MODELS)))
                if mark_type(leaf) == "line")
    assert line["encoding"]["y"]["scale"]["domain"][0] < -3.0


@pytest.mark.parametrize("values", [[1.0, 0.9, 0.83], [0.98, 0.7, 0.53], [0.9, 0.4, 0.1], [0.9, 0.0, -0.4]])
def test_voc_chart_axis_always_includes_zero(values):
    """A value chart without zero misleads: curves between 0.53 and 1.0 drawn on an axis from 0.53 read as a
    model worth nothing at ω = 10, and a model worth less than nothing must be seen below the zero line. The
    axis starts at zero (no model) when every curve is above it, below zero when one falls under it."""
    frame = pd.DataFrame({"model": ["mlp"] * 3, "omega": [0.0, 1.0, 2.0], "value": values})
    spec = valid(voc_spec(frame, models=ALL_MODELS))
    line = next(leaf for leaf in layers(spec) if mark_type(leaf) == "line")
    low, high = line["encoding"]["y"]["scale"]["domain"]
    assert low <= 0.0 <= high and low <= min(values) and max(values) <= high <= 1.0
    assert low == 0.0 if min(values) >= 0 else low < min(values)  # room below the lowest curve under zero
    zero = next(leaf for leaf in layers(spec) if mark_type(leaf) == "rule")
    assert list(dataset(spec, zero)["value"]) == [0.0]  # the zero line, on the same axis
    assert zero["encoding"]["y"]["scale"] == line["encoding"]["y"]["scale"]
    assert ")" == line["encoding"]["y"]["title"][-1] and len(line["encoding"]["y"]["title"]) <= 45
