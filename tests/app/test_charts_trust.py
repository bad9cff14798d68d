"""Chart specs of the Calibration, Compare and Monitor pages (valuecore.chartspecs), and the frames the views
shape for them, on small frames.

Each spec must be valid Vega-Lite with encodings of explicit types, formatted
tooltips, axis titles with units, and the model colour scale whose domain is
*all* loaded models (one colour per model everywhere).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.views.calibration import calibration_value_long
from dashboard.views.compare import difference_counts, stability_counts
from dashboard.views.monitor import monitor_long
from valuecore.chartspecs import (
    CALIBRATION_VALUE_COLUMNS,
    MONITOR_LONG_COLUMNS,
    MONITOR_MEASURES as MEASURES,
    MONITOR_SOURCES,
    calibration_value_spec,
    difference_spec,
    model_palette,
    monitor_spec,
    reliability_spec,
    stability_spec,
    value_interval_spec,
)
from vegalite import valid

ALL_MODELS = ["logreg", "mlp", "svm"]


# ------------------------------------------------------------------ helpers
def _units(spec: dict) -> list[dict]:
    """Every single-view spec (with a mark) inside a chart spec, layers and facets included."""
    found = []
    if "mark" in spec:
        found.append(spec)
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for child in spec.get(key, []):
            found.extend(_units(child))
    if "spec" in spec:
        found.extend(_units(spec["spec"]))
    return found


def _mark(unit: dict) -> str:
    mark = unit["mark"]
    return mark if isinstance(mark, str) else mark["type"]


def _encodings(spec: dict) -> list[dict]:
    return [u.get("encoding", {}) for u in _units(spec)]


def _check_types_and_tooltips(spec: dict) -> None:
    """Every field encoding has an explicit type; every quantitative tooltip a format.

    ``x2``/``y2`` take the type of ``x``/``y`` (Vega-Lite has no type on them).
    """
    for encoding in _encodings(spec):
        for channel, value in encoding.items():
            if channel in ("x2", "y2"):
                continue
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, dict) and "field" in item:
                    assert "type" in item, f"{channel} {item['field']} has no explicit type"
                    if channel == "tooltip" and item["type"] == "quantitative":
                        assert "format" in item, f"tooltip {item['field']} is not formatted"


def _color_domain(spec: dict) -> list | None:
    for encoding in _encodings(spec):
        color = encoding.get("color")
        if isinstance(color, dict) and color.get("field") == "model":
            return color["scale"]["domain"]
    return None


def _reliability_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": ["logreg", "logreg", "mlp", "mlp"],
            "stage": ["before", "after", "before", "after"],
            "bin_lower": [0.5, 0.5, 0.0, 0.5],
            "bin_upper": [1.0, 1.0, 0.5, 1.0],
            "mean_confidence": [0.9, 0.8, 0.4, 0.7],
            "accuracy": [0.7, 0.75, 0.3, 0.72],
            "count": [40.0, 40.0, 10.0, 30.0],
            "accuracy_low": [0.55, 0.6, 0.1, 0.55],
            "accuracy_high": [0.82, 0.86, 0.6, 0.85],
        }
    )


def _table5() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": ["logreg", "logreg"],
            "k": [0, 4],
            "threshold": [0.0, 0.8],
            "value_calibrated_before": [0.9, 0.5],
            "value_calibrated_after": [0.9, 0.7],
            "value_tuned_before": [0.9, 0.72],
            "value_tuned_after": [0.9, 0.71],
            "threshold_tuned_before": [0.3, np.nan],
            "threshold_tuned_after": [0.35, 0.85],
        }
    )


def _monitor_frame(times: bool = True) -> pd.DataFrame:
    start = pd.to_datetime(["2024-03-04", "2024-03-11"]) if times else [0, 50]
    end = pd.to_datetime(["2024-03-11", "2024-03-18"]) if times else [50, 100]
    frame = pd.DataFrame(
        {
            "split": "prod",
            "chunk": ["2024-03-04/2024-03-10", "2024-03-11/2024-03-17"],
            "start": start,
            "end": end,
            "n": [50.0, 50.0],
            "estimated_value_total": [40.0, 35.0],
            "estimated_value_per_item": [0.8, 0.7],
            "estimated_coverage": [0.9, 0.85],
            "estimated_best_threshold": [0.7, np.nan],
            "realised_value_total": [np.nan, 30.0],
            "realised_value_per_item": [np.nan, 0.6],
            "realised_coverage": [np.nan, 0.85],
            "has_labels": [False, True],
        }
    )
    frame.insert(0, "model", "mlp")
    return frame


# --------------------------------------------------------------- calibration
def test_reliability_chart_facets_models_with_diagonal_intervals_and_points():
    spec = valid(reliability_spec(_reliability_frame(), ALL_MODELS))
    assert spec["facet"]["field"] == "model"
    marks = sorted(_mark(u) for u in _units(spec["spec"]))
    assert marks == ["circle", "line", "rule", "rule"]  # diagonal, 95% intervals, line, points
    points = next(u for u in _units(spec["spec"]) if _mark(u) == "circle")["encoding"]
    assert points["x"]["field"] == "mean_confidence" and points["x"]["type"] == "quantitative"
    assert points["y"]["field"] == "accuracy" and "share correct" in points["y"]["title"]
    assert points["size"]["field"] == "count"
    intervals = [u["encoding"] for u in _units(spec["spec"]) if _mark(u) == "rule" and "y2" in u["encoding"]]
    assert any(e["y"]["field"] == "accuracy_low" and e["y2"]["field"] == "accuracy_high" for e in intervals)
    assert _color_domain(spec["spec"]) == ALL_MODELS
    line = next(u for u in _units(spec["spec"]) if _mark(u) == "line")["encoding"]
    assert line["strokeDash"]["field"] == "stage"
    _check_types_and_tooltips(spec["spec"])


def test_reliability_chart_refuses_a_frame_without_the_columns():
    with pytest.raises(ValueError, match="accuracy_low"):
        reliability_spec(_reliability_frame().drop(columns="accuracy_low"), ALL_MODELS)


def test_calibration_value_long_has_one_row_per_model_k_and_rule():
    long = calibration_value_long(_table5())
    assert list(long.columns) == list(CALIBRATION_VALUE_COLUMNS)
    assert len(long) == 2 * 4
    raw_only = calibration_value_long(_table5(), recalibrated=False)
    assert set(raw_only["rule"]) == {"calibrated threshold, raw", "tuned threshold, raw"}
    tuned = long[(long["rule"] == "tuned threshold, raw") & (long["k"] == 4)].iloc[0]
    assert tuned["value"] == 0.72 and np.isnan(tuned["threshold"])


def test_calibration_value_chart_draws_value_against_k_per_rule():
    spec = valid(calibration_value_spec(calibration_value_long(_table5()), ALL_MODELS))
    line = next(u for u in _units(spec["spec"]) if _mark(u) == "line")["encoding"]
    assert line["x"]["field"] == "k" and line["x"]["type"] == "quantitative"
    assert line["y"]["field"] == "value" and "per item" in line["y"]["title"]
    assert line["strokeDash"]["field"] == "rule"
    assert _color_domain(spec["spec"]) == ALL_MODELS
    _check_types_and_tooltips(spec["spec"])
    # Its title fits two panels of 180 px (the Calibration page at 800 px): no line longer than 60 characters.
    title = spec["title"]
    lines = [title["text"], *title["subtitle"]] if isinstance(title, dict) else [title]
    assert max(map(len, lines)) <= 60, lines


# ------------------------------------------------------------------- compare
def test_value_interval_chart_shows_each_model_with_its_interval():
    frame = pd.DataFrame({"model": ["mlp", "logreg"], "mean": [1.0, 0.5], "low": [0.8, 0.2], "high": [1.2, 0.8]})
    spec = valid(value_interval_spec(frame, ALL_MODELS, currency="€"))
    rule = next(u for u in _units(spec) if _mark(u) == "rule" and "x2" in u["encoding"])["encoding"]
    assert rule["x"]["field"] == "low" and rule["x2"]["field"] == "high"
    assert rule["x"]["title"] == "Value per item (€)"
    assert _color_domain(spec) == ALL_MODELS
    _check_types_and_tooltips(spec)


def test_difference_counts_groups_items_by_difference():
    counts = difference_counts([0.0, 0.0, 5.0, -1.0, 5.0], weight=[1, 1, 2, 1, 1])
    assert counts.to_dict("list") == {"difference": [-1.0, 0.0, 5.0], "items": [1.0, 2.0, 3.0]}


def test_difference_chart_colours_who_earns_more():
    spec = valid(difference_spec(difference_counts([0.0, 5.0, -1.0]), model_a="logreg", model_b="mlp", currency="$"))
    bars = next(u for u in _units(spec) if _mark(u) == "bar")["encoding"]
    assert bars["x"]["field"] == "difference" and "($)" in bars["x"]["title"]
    assert bars["y"]["field"] == "items"
    assert bars["color"]["scale"]["domain"] == ["logreg earns more", "same value", "mlp earns more"]
    _check_types_and_tooltips(spec)


def test_difference_chart_counts_on_an_honest_labelled_scale():
    counts = difference_counts([0.0] * 428 + [5.0])
    spec = valid(difference_spec(counts, model_a="logreg", model_b="mlp"))
    units = _units(spec)
    bars = next(u for u in units if _mark(u) == "bar")["encoding"]
    assert bars["y"]["scale"]["type"] == "linear" and "linear" in bars["y"]["title"]
    text = next(u for u in units if _mark(u) == "text")
    assert text["encoding"]["text"]["field"] == "label"
    rows = next(rows for rows in spec["datasets"].values() if "label" in rows[0])
    labels = [row["label"] for row in rows]
    assert labels == ["428", "1"]


def test_stability_chart_counts_resampled_thresholds_and_marks_the_tuned_one():
    counts = stability_counts({"logreg": [0.5, 0.5, 0.6, np.nan], "mlp": [0.7]})
    assert counts.to_dict("list") == {
        "model": ["logreg", "logreg", "mlp"],
        "threshold": [0.5, 0.6, 0.7],
        "resamples": [2, 1, 1],
    }
    tuned = pd.DataFrame({"model": ["logreg", "mlp"], "threshold": [0.5, None]}).astype({"threshold": float})
    spec = valid(stability_spec(counts, ALL_MODELS, tuned=tuned))
    assert sorted(_mark(u) for u in _units(spec)) == ["circle", "tick"]
    circles = next(u for u in _units(spec) if _mark(u) == "circle")["encoding"]
    assert circles["x"]["field"] == "threshold" and circles["size"]["field"] == "resamples"
    assert _color_domain(spec) == ALL_MODELS
    _check_types_and_tooltips(spec)


# ------------------------------------------------------------------- monitor
def test_monitor_long_keeps_realised_rows_only_where_labels_exist():
    long = monitor_long(_monitor_frame())
    assert list(long.columns) == list(MONITOR_LONG_COLUMNS)
    per_item = long[long["measure"] == "value_per_item"]
    assert sorted(per_item["source"]) == ["estimated", "estimated", "realised"]
    assert per_item["position"].tolist() == [1, 2, 2]
    threshold = long[long["measure"] == "best_threshold"]
    assert threshold["amount"].tolist() == [0.7]  # NaN (always abstain) dropped


@pytest.mark.parametrize("measure", list(MEASURES))
def test_monitor_chart_by_time_overlays_estimated_and_realised(measure):
    spec = valid(monitor_spec(monitor_long(_monitor_frame()), ALL_MODELS, measure=measure, currency="€"))
    line = next(u for u in _units(spec) if _mark(u) == "line")["encoding"]
    assert line["x"]["field"] == "start" and line["x"]["type"] == "temporal"
    assert line["y"]["field"] == "amount" and line["y"]["title"]
    assert line["strokeDash"]["field"] == "source"
    assert _color_domain(spec) == ALL_MODELS
    _check_types_and_tooltips(spec)
    if measure.startswith("value"):
        assert "(€)" in line["y"]["title"]


def _titles(node) -> list[str]:
    """Every title a reader sees in a spec: axis, legend, tooltip and chart titles."""
    if isinstance(node, list):
        return [t for item in node for t in _titles(item)]
    if not isinstance(node, dict):
        return []
    found = [node["title"]] if isinstance(node.get("title"), str) else []
    return found + [t for key, value in node.items() if key != "data" and key != "datasets" for t in _titles(value)]


def test_the_monitor_chart_says_acted_on_as_every_page_does():
    """Every page says "Acted on" for the share of items a rule acts on; the Monitor chart's axis and tooltip said
    "Coverage (share acted on)". The JSON and the CLI keep the field name ``coverage``."""
    spec = valid(monitor_spec(monitor_long(_monitor_frame()), ALL_MODELS, measure="coverage"))
    line = next(u for u in _units(spec) if _mark(u) == "line")["encoding"]
    assert line["y"]["title"].startswith("Acted on (")
    assert any(tip.get("title", "").startswith("Acted on (") for tip in line["tooltip"])
    for measure in MEASURES:
        shown = _titles(monitor_spec(monitor_long(_monitor_frame()), ALL_MODELS, measure=measure))
        assert shown and not [t for t in shown if "coverage" in t.lower()], (measure, shown)


def test_monitor_chart_by_chunk_number_without_times():
    spec = valid(monitor_spec(monitor_long(_monitor_frame(times=False)), ALL_MODELS, by_time=True, reference=0.5))
    line = next(u for u in _units(spec) if _mark(u) == "line")["encoding"]
    assert line["x"]["field"] == "position" and line["x"]["type"] == "ordinal"
    assert any(u["encoding"].get("y", {}).get("field") == "reference" for u in _units(spec))


def test_the_monitor_legend_lists_only_the_figures_drawn():
    """A production split without labels has no realised line: its legend named one ("realised", dashed)."""
    unlabelled = _monitor_frame().assign(realised_value_total=np.nan, realised_value_per_item=np.nan,
                                         realised_coverage=np.nan, has_labels=False)
    for frame, drawn in ((unlabelled, ["estimated"]), (_monitor_frame(), ["estimated", "realised"])):
        spec = valid(monitor_spec(monitor_long(frame), ALL_MODELS, measure="value_per_item"))
        dash = next(u for u in _units(spec) if _mark(u) == "line")["encoding"]["strokeDash"]
        assert dash["legend"]["values"] == drawn
        assert dash["scale"]["domain"] == list(MONITOR_SOURCES)  # the dashes keep their meaning


def test_monitor_chart_refuses_an_unknown_measure():
    with pytest.raises(ValueError, match="unknown measure"):
        monitor_spec(monitor_long(_monitor_frame()), ALL_MODELS, measure="accuracy")


def test_difference_chart_gives_each_model_its_colour_on_every_chart():
    # svm_rbf is the third loaded model: green in the interval chart, so green here too (it was orange).
    models = ["logreg", "mlp", "svm_rbf"]
    spec = valid(difference_spec(difference_counts([0.0, 5.0, -1.0]), model_a="logreg", model_b="svm_rbf",
                                 models=models))
    bars = next(u for u in _units(spec) if _mark(u) == "bar")["encoding"]
    palette = model_palette(models)
    assert bars["color"]["scale"]["range"] == [palette[0], "#BBBBBB", palette[2]]
    assert bars["color"]["legend"]["orient"] == "bottom"  # never beside the bars, out of a half-width column
