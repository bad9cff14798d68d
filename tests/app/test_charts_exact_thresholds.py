"""Thresholds in chart tooltips are exact (issue 23, item 2): the tooltip reads a text field holding every digit
of the threshold (the value the policy JSON holds), never a number format that rounds it; axes keep short labels.

Every chart spec of valuecore.chartspecs that shows a threshold is built on a threshold with 16 significant
digits, and each of its tooltips is checked: no tooltip shows a threshold through a number format, and the
text it shows reads back as the very float.
"""

from __future__ import annotations

import pytest

import valuecore as vc
from valuecore import chartspecs

SHARP = 0.5340621214869945  # a threshold tuned on real data ("0.534" under ".3f")
AFTER = 0.8068202921772314  # one after temperature scaling ("0.8068" under ".4f")


def _histogram():
    predictions = vc.Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.6, 0.4]], y_true=[0, 1, 0, 0])
    return vc.curves.confidence_histogram(predictions, bins=5)


def _monitor_rows():
    return [{"model": "a", "position": i + 1, "chunk": f"c{i}", "start": None, "end": None, "n": 10.0,
             "measure": "best_threshold", "source": "estimated", "amount": amount}
            for i, amount in enumerate((SHARP, AFTER))]


SPECS = {
    "voc": lambda: chartspecs.voc_spec([{"model": "a", "omega": 1.0, "value": 0.4, "threshold": SHARP},
                                        {"model": "a", "omega": 2.0, "value": 0.3, "threshold": AFTER}]),
    "value_threshold": lambda: chartspecs.value_threshold_spec(
        [{"model": "a", "threshold": SHARP, "value_per_item": 0.1, "coverage": 0.5},
         {"model": "a", "threshold": AFTER, "value_per_item": 0.2, "coverage": 0.3}],
        [{"model": "a", "marker": "tuned", "threshold": SHARP, "value_per_item": 0.1}],
        models=["a"], manual_threshold=AFTER),
    "confidence_histogram": lambda: chartspecs.confidence_histogram_spec(
        _histogram(), [{"label": "tuned", "threshold": SHARP}, {"label": "your threshold", "threshold": AFTER}]),
    "calibration_value": lambda: chartspecs.calibration_value_spec(
        [{"model": "a", "k": 1.0, "rule": "tuned threshold, raw", "value": 0.2, "threshold": SHARP},
         {"model": "a", "k": 2.0, "rule": "tuned threshold, raw", "value": 0.1, "threshold": AFTER}], ["a"]),
    "stability": lambda: chartspecs.stability_spec(
        [{"model": "a", "threshold": SHARP, "resamples": 3}, {"model": "a", "threshold": AFTER, "resamples": 1}],
        ["a"], tuned=[{"model": "a", "threshold": SHARP}]),
    "monitor_best_threshold": lambda: chartspecs.monitor_spec(_monitor_rows(), ["a"], measure="best_threshold",
                                                             by_time=False, reference=AFTER),
    "capacity": lambda: chartspecs.capacity_spec(
        [{"reviews_per_day": 0.0, "value_per_day": 1.0, "threshold": AFTER},
         {"reviews_per_day": 5.0, "value_per_day": 2.0, "threshold": SHARP}], 3.0),
    "certified_risk": lambda: chartspecs.certified_risk_spec(
        [{"threshold": SHARP, "coverage": 0.5, "error_rate": 0.01, "upper_bound": 0.02, "certified": True},
         {"threshold": AFTER, "coverage": 0.3, "error_rate": 0.005, "upper_bound": 0.01, "certified": True}], 0.05),
}


def _leaves(spec: dict):
    """Every unit view of a spec (layers, facets and concatenations walked), with the data it reads."""
    stack = [(spec, spec.get("data", {}).get("name"))]
    while stack:
        node, data = stack.pop()
        data = node.get("data", {}).get("name", data)
        if "encoding" in node and "mark" in node:
            yield node, data
        for key in ("layer", "hconcat", "vconcat", "concat"):
            stack.extend((child, data) for child in node.get(key, []))
        if "spec" in node:
            stack.append((node["spec"], data))


def _tooltips(spec: dict):
    for leaf, data in _leaves(spec):
        tips = leaf["encoding"].get("tooltip", [])
        for tip in tips if isinstance(tips, list) else [tips]:
            yield tip, spec["datasets"][data]


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_threshold_in_a_tooltip_is_exact(name):
    spec = SPECS[name]()
    exact = [(tip, rows) for tip, rows in _tooltips(spec) if tip["field"].endswith(chartspecs.EXACT)]
    assert exact, f"{name}: no tooltip shows a threshold exactly"
    for tip, rows in exact:
        assert tip["type"] == "nominal" and "format" not in tip
        number = tip["field"].removesuffix(chartspecs.EXACT)
        for row in rows:
            if row.get(number) is not None:
                assert float(row[tip["field"]]) == row[number], (name, tip["field"])  # bit for bit
    texts = {row[tip["field"]] for tip, rows in exact for row in rows}
    assert {"0.5340621214869945", "0.8068202921772314"} & texts, texts
    # and no tooltip shows a threshold through a number format (which rounds)
    for tip, _ in _tooltips(spec):
        shows_threshold = tip["field"] == "threshold" or (
            name == "monitor_best_threshold" and tip["field"] in ("amount", "reference"))
        assert not (shows_threshold and "format" in tip), (name, tip)


def test_a_threshold_axis_keeps_short_labels():
    spec = SPECS["value_threshold"]()
    line = next(leaf for leaf, _ in _leaves(spec) if leaf["mark"]["type"] == "line")
    assert line["encoding"]["x"]["field"] == "threshold"  # the number, so the axis ticks stay short
    assert line["encoding"]["x"]["type"] == "quantitative"


def test_a_missing_threshold_reads_as_a_dash():
    rows = chartspecs.with_exact([{"threshold": None}, {"threshold": 0.5}, {"other": 1.0}], "threshold")
    assert [row.get("threshold_exact") for row in rows] == [vc.wording.DASH, "0.500", None]
