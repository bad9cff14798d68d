"""Charts as plain Vega-Lite dicts: one picture and one colour per model, in the app and in the report.

Each function takes tidy records (a DataFrame or a list of dicts) and returns
a Vega-Lite specification as a plain ``dict``: no Altair, no Streamlit. The
dashboard draws these dicts as they are (``st.vega_lite_chart``) and the HTML
report (:mod:`valuecore.report`) renders the same dicts to SVG, so a chart
reads the same in both and model *i* has the same colour everywhere.

Data sit in the spec's top-level ``datasets`` under fixed names, each layer
naming its own (``{"name": "curves"}``); numbers that are missing or
infinite become ``null``.

What lives here
---------------
``PALETTE``: Okabe & Ito's colour-blind-safe colours, yellow last (weak on white). :func:`model_palette`
gives each model of a list its colour, :func:`model_color` the colour encoding over *all* loaded models
(so a model keeps its colour on a chart that shows only some), :func:`records` turns a frame into
JSON-ready rows. Thresholds in tooltips are exact: :func:`with_exact` adds ``<name>`` + ``EXACT``, the
value as text with every digit (the axis keeps short labels; the page's words round, the tooltip and the
policy JSON do not).

Charts: :func:`voc_spec` (value against the penalty ω, seed 000's VOC curves),
:func:`value_threshold_spec` (value per item against the threshold), :func:`confidence_histogram_spec`
(confidence of right and wrong answers) and :func:`reliability_spec` (reliability diagrams, one panel per
model, before and after recalibration; rows with ``RELIABILITY_COLUMNS``), :func:`calibration_value_spec`
(value against ω per threshold rule, seed 003's Table 5; either as one chart per panel, as wide as the page:
:func:`facet_panels`), :func:`value_interval_spec`,
:func:`difference_spec` and :func:`stability_spec` (two models compared on the same items),
:func:`monitor_spec` and :func:`monitor_band_spec` (production chunk by chunk), :func:`capacity_spec`,
:func:`certified_risk_spec`, :func:`tiers_spec` and :func:`reviewer_value_spec` (capacity and guarantees,
reviewers who are not always right), :func:`value_matrix_spec`
and :func:`confusion_value_spec` (values per class), :func:`segments_spec` (each segment's hand-off rate,
error rate and value per item side by side, ``SEGMENT_MEASURES``; its rows: :func:`segment_chart_rows`; the
same three panels as charts as wide as the page: :func:`segment_panel_specs`).

The rows each expects: ``CALIBRATION_VALUE_COLUMNS``, ``INTERVAL_COLUMNS``, ``DIFFERENCE_COLUMNS``,
``STABILITY_COLUMNS``, ``MONITOR_LONG_COLUMNS`` (with ``MONITOR_MEASURES``, the measures a monitor chart
can show, and ``MONITOR_SOURCES``); the legends' vocabularies: ``CALIBRATION_RULES`` (the dash of each
threshold rule), ``CERTIFIED_RATES`` (the two rates of a guarantee) and ``CORRECT_WRONG`` (the colours of
right and wrong answers). Axis words: ``OMEGA_TITLE``, ``VALUE_TITLE``, ``THRESHOLD_TITLE``;
``THRESHOLD_DASHES``: the dash of each marked threshold; ``BOTTOM_LEGENDS``: legends under a row of
panels (beside them they ran off a laptop screen).

Examples
--------
>>> spec = voc_spec([{"model": "a", "omega": 0.0, "value": 0.9}], models=["b", "a"])
>>> line = spec["layer"][1]
>>> line["encoding"]["color"]["scale"]["range"], line["data"]
(['#0072B2', '#E69F00'], {'name': 'curves'})
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import wording

__all__ = [
    "SEGMENT_MEASURES",
    "segment_chart_rows",
    "segments_spec",
    "segment_panel_specs",
    "PALETTE",
    "OMEGA_TITLE",
    "VALUE_TITLE",
    "THRESHOLD_TITLE",
    "THRESHOLD_DASHES",
    "model_palette",
    "model_color",
    "records",
    "EXACT",
    "with_exact",
    "voc_spec",
    "value_threshold_spec",
    "RELIABILITY_COLUMNS",
    "BOTTOM_LEGENDS",
    "reliability_spec",
    "facet_panels",
    "CORRECT_WRONG",
    "confidence_histogram_spec",
    "CALIBRATION_VALUE_COLUMNS",
    "CALIBRATION_RULES",
    "calibration_value_spec",
    "INTERVAL_COLUMNS",
    "DIFFERENCE_COLUMNS",
    "STABILITY_COLUMNS",
    "value_interval_spec",
    "difference_spec",
    "stability_spec",
    "MONITOR_MEASURES",
    "MONITOR_SOURCES",
    "MONITOR_LONG_COLUMNS",
    "monitor_spec",
    "monitor_band_spec",
    "capacity_spec",
    "CERTIFIED_RATES",
    "certified_risk_spec",
    "tiers_spec",
    "reviewer_value_spec",
    "confusion_value_spec",
    "value_matrix_spec",
]

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
# Okabe & Ito's colour-blind-safe palette, yellow moved last (weak on white).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")

OMEGA_TITLE = f"{wording.OMEGA_LABEL} (an error costs ω times what a correct answer earns)"
# Short enough to fit the chart's height at 1280 px (a longer title lost its closing bracket).
VALUE_TITLE = "Value per item (0 = no model, 1 = perfect)"
THRESHOLD_TITLE = "Threshold: act when confidence ≥ this (0 = accept all)"
_GREY, _DARK = "#999999", "#333333"


# ------------------------------------------------------------------ pieces
def model_palette(models) -> list[str]:
    """The colour of each model, in order (model *i* gets ``PALETTE[i % 8]``)."""
    return [PALETTE[i % len(PALETTE)] for i in range(len(list(models)))]


def model_color(models, *, title: str = "Model", legend: bool = True) -> dict:
    """The colour channel that gives each of ``models`` (all loaded, in a fixed order) its one colour."""
    models = [str(m) for m in models]
    channel = {"field": "model", "type": "nominal", "title": title,
               "scale": {"domain": models, "range": model_palette(models)}}
    if not legend:
        channel["legend"] = None
    return channel


def _plain(value):
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def _plain_column(column) -> list:
    """``_plain`` of each cell of a Series: a column of numbers at once (a chart's curves have thousands)."""
    if not isinstance(column.dtype, np.dtype):  # pandas' own types (nullable numbers, categories) cell by cell
        return [_plain(value) for value in column]
    if column.dtype.kind in "iub":
        return column.to_numpy().tolist()
    if column.dtype.kind == "f":
        numbers = column.to_numpy()
        cells = numbers.tolist()
        for i in np.flatnonzero(~np.isfinite(numbers)):
            cells[i] = None
        return cells
    return [_plain(value) for value in column]


def records(rows, columns=None) -> list[dict]:
    """Rows as JSON-ready dicts: a DataFrame or an iterable of dicts in, NaN and infinity out as ``None``."""
    if rows is None:
        return []
    if hasattr(rows, "to_dict"):
        frame = rows if columns is None else rows.loc[:, [c for c in columns if c in rows.columns]]
        names = [str(c) for c in frame.columns]
        return [dict(zip(names, row)) for row in zip(*(_plain_column(frame.iloc[:, i]) for i in range(len(names))))]
    return [{str(k): _plain(v) for k, v in row.items() if columns is None or k in columns} for row in rows]


def _field(name: str, kind: str = "quantitative", **more) -> dict:
    return {"field": name, "type": kind, **more}


def _tip(name: str, title: str, kind: str = "quantitative", fmt: str | None = None) -> dict:
    tip = {"field": name, "type": kind, "title": title}
    if fmt is not None:
        tip["format"] = fmt
    return tip


# A threshold decides which items are acted on: its tooltip shows it exactly, as text (a number format
# rounds: ".3f" printed 0.534 for 0.5340621214869945, and Vega's default keeps 12 digits), while the axis
# keeps short labels. The text is valuecore.wording.threshold without data: the shortest decimal that reads
# back as the same float, the value the policy JSON holds.
EXACT = "_exact"


@functools.lru_cache(maxsize=1 << 16)
def _exact_text(value: float) -> str:
    return wording.threshold(value)


def with_exact(rows: list[dict], *names: str) -> list[dict]:
    """``rows`` with ``<name>_exact`` beside each of ``names`` it has: the value as text, every digit kept."""

    def exact(value):
        # A threshold repeats along a curve, and a curve's thresholds are the same at every new value: each
        # distinct one is written once per process (the text is a function of the float alone).
        if not isinstance(value, float) or value == 0.0:  # 0.0 and -0.0 are equal keys
            return wording.threshold(value)
        return _exact_text(value)

    return [{**row, **{name + EXACT: exact(row[name]) for name in names if name in row}} for row in rows]


def _exact_tip(name: str, title: str) -> dict:
    return _tip(name + EXACT, title, "nominal")


def _view(data: str, mark: str, mark_props: dict | None = None, **encoding) -> dict:
    return {"data": {"name": data}, "mark": {"type": mark, **(mark_props or {})}, "encoding": encoding}


def _domain(models, rows: list[dict]) -> list[str]:
    """All loaded models in order, plus any model of ``rows`` not among them."""
    domain = [str(m) for m in models] if models is not None else []
    for row in rows:
        name = str(row.get("model"))
        if "model" in row and name not in domain:
            domain.append(name)
    return domain


def _spec(layers: list, datasets: dict, **top) -> dict:
    return {"$schema": SCHEMA, "datasets": datasets, "layer": layers, **top}


# ---------------------------------------------------------------------- VOC
def _value_scale(curves: list[dict], bands: list[dict], y_min: float | None) -> dict:
    lows = [r["value"] for r in curves if r.get("value") is not None]
    highs = list(lows)
    lows += [r["low"] for r in bands if r.get("low") is not None]
    highs += [r["high"] for r in bands if r.get("high") is not None]
    # Zero (no model) is always on the axis: a value chart without it misleads (curves between 0.53 and 1.0
    # drawn from 0.53 read as a model worth nothing at ω = 10), and a model worth less than nothing must be
    # seen below the zero line. The axis runs from the lower of 0 and the lowest curve or band to the highest.
    low = min([0.0, *lows])
    high = max([0.0, *highs]) if highs else 1.0
    high = max(high, low + 0.02)
    # A little room above, and below when a curve or band falls under zero, so none of them sits on the frame.
    pad = 0.04 * (high - low)
    if low < 0.0:
        low = low - pad if y_min is None else max(low - pad, min(y_min, 0.0))
    return {"domain": [low, min(high + pad, 1.0) if high <= 1.0 else high + pad], "nice": False}


def voc_spec(
    curves,
    *,
    models=None,
    omega_now: float | None = None,
    omega_sup=None,
    bands=None,
    y_min: float | None = None,
    height: int = 380,
) -> dict:
    """VOC curves of several models overlaid: dimensionless value per item against the penalty ω.

    Parameters
    ----------
    curves : DataFrame or list of dict
        ``model, omega, value`` and optionally ``threshold`` (e.g. from ``valuecore.voc_frame``).
    models : sequence of str, optional
        All loaded models: the colour domain.
    omega_now : float, optional
        The user's ω: a dashed vertical rule with a label.
    omega_sup : DataFrame or list of dict, optional
        ``model, omega_sup, value``: where each curve stops being worth more than no model (diamonds).
    bands : DataFrame or list of dict, optional
        ``model, omega, low, high``: bootstrap bands, faint areas with dashed edges.
    y_min : float, optional
        Lowest end of the value axis, for curves that dive far below zero (the axis still starts at 0 or
        below: zero, no model, is always on it). By default the axis runs from the lower of 0 and the lowest
        curve or band value to the highest.
    height : int

    Returns
    -------
    dict
        A layered Vega-Lite spec: a zero rule, bands, curves, band edges, ω_sup diamonds, your ω.
    """
    curve_rows = with_exact(records(curves), "threshold")
    band_rows = records(bands)
    sup_rows = records(omega_sup)
    color = model_color(_domain(models, curve_rows))
    band_color = model_color(_domain(models, curve_rows), legend=False)  # the legend follows the curves
    y_scale = _value_scale(curve_rows, band_rows, y_min)
    x = _field("omega", title=OMEGA_TITLE)
    datasets = {"zero": [{"value": 0.0}], "curves": curve_rows}
    layers = [_view("zero", "rule", {"color": _GREY, "clip": True}, y=_field("value", scale=y_scale))]
    if band_rows:
        datasets["bands"] = band_rows
        layers.append(_view(
            "bands", "area", {"opacity": 0.08, "clip": True},
            x=x, y=_field("low", title=VALUE_TITLE, scale=y_scale), y2={"field": "high"}, color=band_color,
            tooltip=[_tip("model", "Model", "nominal"), _tip("omega", "ω", fmt=".2f"),
                     _tip("low", "Band low", fmt=".3f"), _tip("high", "Band high", fmt=".3f")],
        ))
    tooltip = [_tip("model", "Model", "nominal"), _tip("omega", "ω", fmt=".2f"),
               _tip("value", "Value per item (dimensionless)", fmt=".3f")]
    if any("threshold" in row for row in curve_rows[:1]):
        tooltip.append(_exact_tip("threshold", "Threshold in force"))
    layers.append(_view("curves", "line", {"clip": True},
                        x=x, y=_field("value", title=VALUE_TITLE, scale=y_scale), color=color, tooltip=tooltip))
    if band_rows:
        # Light fills with thin dashed edges: five overlapping bands stay readable, each in its model's colour.
        for edge in ("low", "high"):
            layers.append(_view(
                "bands", "line", {"clip": True, "strokeWidth": 1, "strokeDash": [2, 3], "opacity": 0.6},
                x=x, y=_field(edge, scale=y_scale), color=band_color, detail=_field("model", "nominal"),
            ))
    if sup_rows:
        datasets["omega_sup"] = sup_rows
        layers.append(_view(
            "omega_sup", "point", {"shape": "diamond", "size": 110, "filled": True, "stroke": "white"},
            x=_field("omega_sup", title=OMEGA_TITLE), y=_field("value", scale=y_scale), color=color,
            tooltip=[_tip("model", "Model", "nominal"), _tip("omega_sup", "ω_sup (worth nothing beyond)", fmt=".3f")],
        ))
    return with_omega_now(_spec(layers, datasets, height=height), omega_now)


def with_omega_now(spec: dict, omega_now: float | None) -> dict:
    """A :func:`voc_spec` drawn without ``omega_now``, with the user's ω marked (a new dict; ``spec`` is kept as
    it is, so an app can keep the curves' spec, which no value changes, and mark each new ω on it)."""
    if omega_now is None or not math.isfinite(float(omega_now)):
        return spec
    datasets = {**spec["datasets"],
                "omega_now": [{"omega": float(omega_now), "label": f"your ω = {wording.omega(omega_now)}"}]}
    layers = [*spec["layer"],
              _view("omega_now", "rule", {"color": _DARK, "strokeDash": [4, 3], "strokeWidth": 2},
                    x=_field("omega"), tooltip=[_tip("omega", "Your ω", fmt=".3g")]),
              _view("omega_now", "text", {"align": "left", "dx": 4, "dy": -6, "color": _DARK},
                    x=_field("omega"), y={"value": 8}, text=_field("label", "nominal"))]
    return {**spec, "datasets": datasets, "layer": layers}


# ------------------------------------------------------ value per threshold
THRESHOLD_DASHES = {"tuned": [1, 0], "calibrated": [6, 3], "your threshold": [2, 2]}
_SHAPES = {"tuned": "circle", "calibrated": "diamond"}


def _present_scale(table: dict, labels) -> dict:
    """A scale over the labels present only (so the legend lists no absent one)."""
    present = [label for label in table if label in set(labels)]
    return {"domain": present, "range": [table[label] for label in present]}


def value_threshold_spec(
    curves,
    markers=None,
    *,
    models=None,
    currency: str = "",
    manual_threshold: float | None = None,
    height: int = 340,
) -> dict:
    """Value per item against the acceptance threshold, one step line per model.

    Parameters
    ----------
    curves : DataFrame or list of dict
        ``model, threshold, value_per_item`` and optionally ``coverage`` and ``split`` (a second split is
        drawn dashed), e.g. from ``ThresholdCurve.to_frame``.
    markers : DataFrame or list of dict, optional
        ``model, marker, threshold, value_per_item``; ``marker`` is "tuned" or "calibrated": a rule and a
        point per model.
    models : sequence of str, optional
        All loaded models: the colour domain.
    currency : str
        In the axis title; tooltips read amounts as :func:`valuecore.wording.money` writes them.
    manual_threshold : float, optional
        A "what if" threshold: a grey dotted rule.
    height : int
    """
    curve_rows = [{**row, "value_text": wording.money(row.get("value_per_item"), currency)}
                  for row in with_exact(records(curves), "threshold")]
    unit = currency.strip() or "value units"
    color = model_color(_domain(models, curve_rows))
    x = _field("threshold", title=THRESHOLD_TITLE, scale={"domain": [0, 1]})
    y = _field("value_per_item", title=f"Value per item ({unit})", axis={"format": ",.2f"})
    tooltip = [_tip("model", "Model", "nominal"), _exact_tip("threshold", "Threshold"),
               _tip("value_text", f"Value per item ({unit})", "nominal")]
    if any("coverage" in row for row in curve_rows[:1]):
        tooltip.append(_tip("coverage", "Acted on", fmt=".1%"))
    channels = dict(x=x, y=y, color=color, tooltip=tooltip)
    splits = list(dict.fromkeys(row["split"] for row in curve_rows if "split" in row))
    if len(splits) > 1:
        tooltip.insert(1, _tip("split", "Split", "nominal"))
        channels["strokeDash"] = _field("split", "nominal", title="Split",
                                        scale={"domain": splits, "range": [[1, 0], [4, 3]][: len(splits)]})
    datasets = {"zero": [{"zero": 0.0}], "curves": curve_rows}
    layers = [
        _view("zero", "rule", {"color": _GREY, "strokeWidth": 1}, y=_field("zero")),
        _view("curves", "line", {"interpolate": "step-before", "clip": True}, **channels),
    ]
    mark_rows = [{**row, "value_text": wording.money(row.get("value_per_item"), currency)}
                 for row in with_exact(records(markers), "threshold")]
    if mark_rows:
        datasets["markers"] = mark_rows
        labels = [row["marker"] for row in mark_rows]
        marker_tooltip = [_tip("model", "Model", "nominal"), _tip("marker", "Threshold", "nominal"),
                          _exact_tip("threshold", "Value"),
                          _tip("value_text", f"Value per item ({unit})", "nominal")]
        layers.append(_view(
            "markers", "rule", {"opacity": 0.6}, x=_field("threshold"), color=color,
            strokeDash=_field("marker", "nominal", title="Marked threshold",
                              scale=_present_scale(THRESHOLD_DASHES, labels)),
            tooltip=marker_tooltip,
        ))
        layers.append(_view(
            "markers", "point", {"size": 90, "filled": True, "stroke": "white"}, x=_field("threshold"),
            y=_field("value_per_item"), color=color,
            shape=_field("marker", "nominal", title="Marked threshold", scale=_present_scale(_SHAPES, labels)),
            tooltip=marker_tooltip,
        ))
    if manual_threshold is not None:
        datasets["manual"] = with_exact([{"threshold": float(manual_threshold)}], "threshold")
        layers.append(_view(
            "manual", "rule", {"color": "#555555", "strokeDash": [2, 2], "strokeWidth": 2}, x=_field("threshold"),
            tooltip=[_exact_tip("threshold", "Your threshold")],
        ))
    return _spec(layers, datasets, height=height)


# ------------------------------------------------------------ confidence histogram
CORRECT_WRONG = {"domain": ["correct", "wrong"], "range": [PALETTE[2], PALETTE[3]]}


def confidence_histogram_spec(histogram, thresholds=None, *, title: str = "", height: int = 260) -> dict:
    """Confidence of correct and of wrong predictions (seed 000, Figure 2), with marked thresholds.

    Parameters
    ----------
    histogram : DataFrame or list of dict
        ``bin_start, bin_end, outcome, count, share`` (``valuecore.curves.confidence_histogram``).
    thresholds : DataFrame or list of dict, optional
        ``label, threshold``: vertical rules dashed as ``THRESHOLD_DASHES`` (e.g. tuned, your threshold).
    title : str
    height : int

    Returns
    -------
    dict
        Bars of each outcome's share per bin, each outcome normalised on its own (wrong answers are usually
        few, and on a shared scale their distribution would be invisible), the two side by side in each bin.
    """
    rows = records(histogram)
    totals = {}
    for row in rows:
        totals[row["outcome"]] = totals.get(row["outcome"], 0) + (row["count"] or 0)
    # Side by side: each bin's correct answers left of its middle, its wrong answers right of it, a gap between
    # bins. Drawn over each other with opacity, the two colours mixed into a brown where both were tall.
    side = {outcome: i for i, outcome in enumerate(CORRECT_WRONG["domain"])}
    data = []
    for row in rows:
        start, end = float(row["bin_start"]), float(row["bin_end"])
        middle, width = (start + end) / 2, 0.45 * (end - start)
        left = middle - width if side.get(row["outcome"], 0) == 0 else middle
        data.append({**row, "bar_start": left, "bar_end": left + width,
                     "share_of_outcome": row["count"] / totals[row["outcome"]] if totals[row["outcome"]] > 0 else 0.0})
    layers = [_view(
        "histogram", "bar",
        x=_field("bar_start", title="Confidence of the predicted class", scale={"domain": [0, 1]}),
        x2={"field": "bar_end"},
        y=_field("share_of_outcome", title="Share of its outcome (%)", stack=None, axis={"format": "%"}),
        y2={"datum": 0},  # with a range on x, a bar without it is a horizontal tick at its height
        color=_field("outcome", "nominal", title="Prediction", scale=dict(CORRECT_WRONG)),
        order=_field("outcome", "nominal", sort="ascending"),
        tooltip=[_tip("outcome", "Prediction", "nominal"), _tip("bin_start", "Confidence from", fmt=".2f"),
                 _tip("bin_end", "to", fmt=".2f"), _tip("count", "Items", fmt=",.0f"),
                 _tip("share_of_outcome", "Share of this outcome", fmt=".1%"),
                 _tip("share", "Share of all items", fmt=".1%")],
    )]
    datasets = {"histogram": data}
    marks = with_exact(records(thresholds, ("label", "threshold")), "threshold")
    if marks:
        datasets["thresholds"] = marks
        layers.append(_view(
            "thresholds", "rule", {"color": _DARK, "strokeWidth": 2}, x=_field("threshold"),
            strokeDash=_field("label", "nominal", title="Threshold",
                              scale=_present_scale(THRESHOLD_DASHES, [row["label"] for row in marks])),
            tooltip=[_tip("label", "Threshold", "nominal"), _exact_tip("threshold", "Value")],
        ))
    return _spec(layers, datasets, height=height, **({"title": title} if title else {}))


# -------------------------------------------------------------- reliability
# One row per (model, stage, bin): valuecore.calibration.reliability_diagram plus "model" and "stage".
RELIABILITY_COLUMNS = ("model", "stage", "bin_lower", "bin_upper", "mean_confidence", "accuracy", "count",
                       "accuracy_low", "accuracy_high")
_STAGES = ("before", "after")
_STAGE_DASH = ([1, 0], [5, 3])
# Shorter than a panel is wide: each panel of a row repeats it, and longer titles ran into each other.
_MEAN_CONFIDENCE = "Mean confidence in the bin"
_SHARE_RIGHT = "Accuracy in the bin (share correct)"
# Legends under the panels, not beside them: beside three panels they ran out of the page at 1280 px
# ("random_fore", "calibrated threshold, rec…").
BOTTOM_LEGENDS = {"orient": "bottom", "direction": "vertical", "labelLimit": 0}


def reliability_spec(rows, models, *, columns: int = 3, size: int = 180) -> dict:
    """Reliability diagrams, one panel per model, before ("raw") and after recalibration.

    Parameters
    ----------
    rows : DataFrame or list of dict
        With ``RELIABILITY_COLUMNS``; ``stage`` is "before" (raw confidence) or "after" (recalibrated).
    models : sequence of str
        All loaded models (the colour domain; panels in this order).
    columns, size : int
        Panels per row; width and height of one panel in pixels.

    Returns
    -------
    dict
        A faceted Vega-Lite spec; per panel the diagonal of perfect calibration, each bin's 95% interval
        of accuracy (a rule), a point per bin sized by its weighted count, and a line through the points
        dashed by stage.

    Raises
    ------
    ValueError
        When a column of ``RELIABILITY_COLUMNS`` is missing.
    """
    data = records(rows)
    given = [str(c) for c in rows.columns] if hasattr(rows, "columns") else list(data[0]) if data else []
    missing = [c for c in RELIABILITY_COLUMNS if c not in given]
    if missing and (data or hasattr(rows, "columns")):
        raise ValueError(f"a reliability chart needs the columns {missing}; got {given}")
    data = [{c: row[c] for c in RELIABILITY_COLUMNS} | {"stage": str(row["stage"])} for row in data]
    present = {row["stage"] for row in data}
    color = model_color(models)
    unit = {"domain": [0, 1]}
    tooltip = [
        _tip("model", "Model", "nominal"), _tip("stage", "Confidence", "nominal"),
        _tip("bin_lower", "Bin from", fmt=".3f"), _tip("bin_upper", "Bin to", fmt=".3f"),
        _tip("mean_confidence", "Mean confidence", fmt=".3f"), _tip("accuracy", "Accuracy", fmt=".3f"),
        _tip("accuracy_low", "Accuracy, 95% interval, low", fmt=".3f"),
        _tip("accuracy_high", "Accuracy, 95% interval, high", fmt=".3f"),
        _tip("count", "Items (weighted)", fmt=",.0f"),
    ]
    x = _field("mean_confidence", title=_MEAN_CONFIDENCE, scale=unit)
    y = _field("accuracy", title=_SHARE_RIGHT, scale=unit)
    dash = _field("stage", "nominal", title="Confidence",
                  scale={"domain": list(_STAGES), "range": [list(d) for d in _STAGE_DASH]},
                  legend={"labelExpr": "datum.label == 'before' ? 'raw (before)' : 'recalibrated (after)'"})
    diagonal = {
        "transform": [{"aggregate": [{"op": "count", "as": "rows"}]}, {"calculate": "0", "as": "low"},
                      {"calculate": "1", "as": "high"}],
        "mark": {"type": "rule", "color": _GREY, "strokeDash": [2, 2]},
        "encoding": {"x": _field("low", title=_MEAN_CONFIDENCE, scale=unit),
                     "y": _field("low", title=_SHARE_RIGHT, scale=unit),
                     "x2": {"field": "high"}, "y2": {"field": "high"}},
    }
    intervals = {"mark": {"type": "rule", "opacity": 0.5},
                 "encoding": {"x": x, "y": _field("accuracy_low", title=_SHARE_RIGHT, scale=unit),
                              "y2": {"field": "accuracy_high"}, "color": color, "tooltip": tooltip}}
    line = {"mark": {"type": "line"},
            "encoding": {"x": x, "y": y, "color": color, "strokeDash": dash, "detail": _field("stage", "nominal")}}
    points = {"mark": {"type": "circle", "opacity": 0.85},
              "encoding": {"x": x, "y": y, "color": color, "tooltip": tooltip,
                           "size": _field("count", title="Items in the bin", scale={"range": [15, 250]}),
                           "opacity": _field("stage", "nominal", legend=None,
                                             scale={"domain": list(_STAGES), "range": [0.45, 0.95]})}}
    shown = {row["model"] for row in data}
    return {
        "$schema": SCHEMA,
        "datasets": {"reliability": data},
        "data": {"name": "reliability"},
        "facet": _field("model", "nominal", title=None, sort=[str(m) for m in models if str(m) in shown]),
        "columns": columns,
        "spec": {"layer": [diagonal, intervals, line, points], "width": size, "height": size},
        "title": "Reliability: accuracy against confidence" + (" (raw and recalibrated)" if len(present) > 1 else ""),
        "config": {"legend": dict(BOTTOM_LEGENDS)},
    }


# ------------------------------------------------------------- calibration and value
# One row per (model, ω, threshold rule): value per item on the evaluated split (seed 003, Table 5).
CALIBRATION_VALUE_COLUMNS = ("model", "k", "rule", "value", "threshold")
CALIBRATION_RULES = {
    "calibrated threshold, raw": [2, 2],
    "calibrated threshold, recalibrated": [6, 3],
    "tuned threshold, raw": [1, 0],
    "tuned threshold, recalibrated": [8, 2, 2, 2],
}


def _check(rows, data: list[dict], columns, what: str) -> None:
    """Refuse rows that lack a column (a frame is checked even when empty)."""
    given = [str(c) for c in rows.columns] if hasattr(rows, "columns") else list(data[0]) if data else []
    missing = [c for c in columns if c not in given]
    if missing and (data or hasattr(rows, "columns")):
        raise ValueError(f"{what} needs the columns {missing}; got {given}")


def calibration_value_spec(
    rows,
    models,
    *,
    value_title: str = "Value per item (correct 1, wrong −ω)",
    columns: int = 3,
    size: int = 220,
) -> dict:
    """Value per item against the penalty ω (column ``k``), one panel per model, one line per threshold rule.

    Parameters
    ----------
    rows : DataFrame or list of dict
        ``CALIBRATION_VALUE_COLUMNS``: ``k`` (ω), ``rule`` (a key of ``CALIBRATION_RULES`` or another
        name, drawn dotted), ``value`` and ``threshold`` (missing: always abstain).
    models : sequence of str
        All loaded models (the colour domain; panels in this order).
    value_title : str
        Axis title with the unit of ``value``.
    columns, size : int
        Panels per row; width and height of a panel in pixels.

    Returns
    -------
    dict
        A faceted spec: per panel a zero line (always abstaining) and one line with points per rule; colour
        is the model, dash the rule.
    """
    data = records(rows, CALIBRATION_VALUE_COLUMNS)
    _check(rows, data, CALIBRATION_VALUE_COLUMNS, "a calibration value chart")
    data = with_exact(data, "threshold")
    present = list(dict.fromkeys(row["rule"] for row in data))
    rules = [r for r in CALIBRATION_RULES if r in present] + [r for r in present if r not in CALIBRATION_RULES]
    tooltip = [_tip("model", "Model", "nominal"), _tip("rule", "Threshold", "nominal"),
               _tip("k", wording.OMEGA_LABEL, fmt="g"), _exact_tip("threshold", "Threshold used"),
               _tip("value", "Value per item", fmt=".3f")]
    x = _field("k", title=f"{wording.OMEGA_LABEL} (errors cost ω×)")
    y = _field("value", title=value_title)
    color = model_color(models)
    dash = _field("rule", "nominal", title="Threshold",
                  scale={"domain": rules, "range": [CALIBRATION_RULES.get(r, [1, 1]) for r in rules]})
    zero = {"transform": [{"aggregate": [{"op": "count", "as": "rows"}]}, {"calculate": "0", "as": "zero"}],
            "mark": {"type": "rule", "color": _GREY}, "encoding": {"y": _field("zero", title=value_title)}}
    lines = {"mark": {"type": "line"}, "encoding": {"x": x, "y": y, "color": color, "tooltip": tooltip,
                                                    "strokeDash": dash}}
    points = {"mark": {"type": "point", "filled": True, "size": 40},
              "encoding": {"x": x, "y": y, "color": color, "tooltip": tooltip, "detail": _field("rule", "nominal")}}
    shown = {row["model"] for row in data}
    return {
        "$schema": SCHEMA,
        "datasets": {"calibration_value": data},
        "data": {"name": "calibration_value"},
        "facet": _field("model", "nominal", title=None, sort=[str(m) for m in models if str(m) in shown]),
        "columns": columns,
        "spec": {"layer": [zero, lines, points], "width": size, "height": size},
        # Short lines: in one line of 100 characters the title ran past two panels (cut at 800 px).
        "title": {"text": "Value against the penalty ω",
                  "subtitle": ["The threshold ω/(1+ω) before and after recalibration,", "and the tuned threshold"]},
        "config": {"legend": dict(BOTTOM_LEGENDS)},
    }


# ------------------------------------------------------------------ small multiples as wide as the page
def _numbers_in(rows: list[dict], fields) -> list[float]:
    return [float(row[f]) for row in rows for f in fields
            if isinstance(row.get(f), (int, float)) and not isinstance(row.get(f), bool) and math.isfinite(row[f])]


def facet_panels(spec: dict, *, height: int = 220) -> list[dict]:
    """A faceted spec (:func:`reliability_spec`, :func:`calibration_value_spec`) as one chart per panel, each as
    wide as its container, for a page to lay out in columns (``width="stretch"``).

    A faceted chart has panels of a fixed width: two a row (three ran past the page at 800 px wide) filled half
    the page at 1280 px. Apart, each panel takes its column's width at any size. What the panels shared stays
    shared: the colour and dash scales have fixed domains already; the value axis gets the domain of every
    panel's values (0 included), so panels still compare at a glance. The dash's legend goes under the last panel
    only (the colour is the panel's title, a point's size is for the page to say); the title is left to the page
    (``spec["title"]``).
    """
    facet = spec["facet"]
    field = facet["field"]
    (name, rows), = spec["datasets"].items()
    # The facet's order, then any panel it does not name, as Vega's facet draws them: no rows dropped.
    order = list(facet.get("sort") or [])
    named = {str(v) for v in order}
    for row in rows:
        if str(row.get(field)) not in named:
            named.add(str(row.get(field)))
            order.append(row.get(field))
    layers = spec["spec"]["layer"]
    y_fields = {f for layer in layers for channel in ("y", "y2")
                if (f := layer.get("encoding", {}).get(channel, {}).get("field")) and any(f in r for r in rows)}
    domain = None
    if not any("domain" in (layer.get("encoding", {}).get("y", {}).get("scale") or {}) for layer in layers):
        values = _numbers_in(rows, y_fields)
        domain = [min([0.0, *values]), max([0.0, *values])] if values else None

    def panel_layer(layer: dict, legends: bool) -> dict:
        encoding = dict(layer.get("encoding", {}))
        if domain is not None and "y" in encoding:
            encoding["y"] = {**encoding["y"], "scale": {**(encoding["y"].get("scale") or {}), "domain": domain}}
        for channel in ("color", "strokeDash", "size", "opacity"):
            # The colour is the panel's model, named in its title; the line's dash (the rule, raw or recalibrated)
            # once, under the last panel. No legend for the points' size: beside the dash's, under a panel half
            # the page wide, it ran past the edge at 800 px (the page's text says what the size means).
            if channel in encoding and (channel != "strokeDash" or not legends):
                encoding[channel] = {**encoding[channel], "legend": None}
        return {**layer, "encoding": encoding}

    panels = []
    for i, value in enumerate(order):
        last = i == len(order) - 1
        panel = {
            "$schema": SCHEMA,
            "datasets": {name: [row for row in rows if str(row.get(field)) == str(value)]},
            "data": {"name": name},
            "layer": [panel_layer(layer, legends=last) for layer in layers],
            "height": height,
            # Fit the width only: fitted both ways (Streamlit's default when stretched) the axes and legends took
            # their room out of the height, and a panel's plot shrank to a strip.
            "autosize": {"type": "fit-x", "contains": "padding"},
            "title": {"text": str(value), "anchor": "start"},
        }
        if last and "config" in spec:
            panel["config"] = spec["config"]
        panels.append(panel)
    return panels


# ------------------------------------------------------------------ compare two models
INTERVAL_COLUMNS = ("model", "mean", "low", "high")
DIFFERENCE_COLUMNS = ("difference", "items")
STABILITY_COLUMNS = ("model", "threshold", "resamples")


def _unit(currency: str) -> str:
    return f" ({currency})" if currency else ""


def _zero_rule(title: str, channel: str = "x") -> dict:
    return _view("zero", "rule", {"color": _GREY, "strokeDash": [3, 3]}, **{channel: _field("zero", title=title)})


def value_interval_spec(rows, models, *, currency: str = "$") -> dict:
    """Each model's value per item with its 95% interval, one row per model, and a zero line.

    ``rows``: ``INTERVAL_COLUMNS`` (``model, mean, low, high``) in the currency; ``models``: all loaded
    models (the colour domain). The y axis names the models, so the colour has no legend.
    """
    data = records(rows, INTERVAL_COLUMNS)
    _check(rows, data, INTERVAL_COLUMNS, "a value interval chart")
    # Tooltips read as the page's words (wording.money for the value, wording.amount for the interval).
    data = [{**row, "mean_text": wording.money(row["mean"], currency), "low_text": wording.amount(row["low"], currency),
             "high_text": wording.amount(row["high"], currency)} for row in data]
    title = f"Value per item{_unit(currency)}"
    common = dict(
        y=_field("model", "nominal", title="Model", sort=[row["model"] for row in data]),
        color=model_color(models, legend=False),
        tooltip=[_tip("model", "Model", "nominal"), _tip("mean_text", title, "nominal"),
                 _tip("low_text", "95% interval, low", "nominal"), _tip("high_text", "95% interval, high", "nominal")],
    )
    layers = [
        _zero_rule(title),
        _view("intervals", "rule", {"strokeWidth": 3}, x=_field("low", title=title), x2={"field": "high"}, **common),
        _view("intervals", "point", {"filled": True, "size": 120}, x=_field("mean", title=title), **common),
    ]
    return _spec(layers, {"zero": [{"zero": 0.0}], "intervals": data},
                 title="Value per item with its 95% interval", height={"step": 48})


def difference_spec(rows, *, model_a: str, model_b: str, currency: str = "$", models=None) -> dict:
    """How the per-item difference A − B is spread over the items (a paired comparison).

    Parameters
    ----------
    rows : DataFrame or list of dict
        ``DIFFERENCE_COLUMNS``: each distinct difference in value on one item (A's minus B's, in the
        currency) and how many items (weighted) have it.
    model_a, model_b : str
    currency : str
    models : sequence of str, optional
        All loaded models: each side then takes its model's colour, as on every other chart.

    Returns
    -------
    dict
        Bars of items per difference on a linear count axis, each labelled with its count (a 1-item bar
        beside a 428-item one says "1", where a log scale made them look alike), coloured by who earned
        more, and a line at zero.
    """
    data = records(rows, DIFFERENCE_COLUMNS)
    _check(rows, data, DIFFERENCE_COLUMNS, "a difference chart")
    better_a, better_b, same = f"{model_a} earns more", f"{model_b} earns more", "same value"
    data = [{**row, "who": better_a if row["difference"] > 0 else better_b if row["difference"] < 0 else same,
             "label": wording.count(row["items"])} for row in data]
    names = [str(m) for m in models] if models is not None else []
    if model_a in names and model_b in names:
        palette = model_palette(names)
        sides = (palette[names.index(model_a)], palette[names.index(model_b)])
    else:
        sides = (PALETTE[0], PALETTE[3])
    x_title = f"Value of {model_a} − value of {model_b} on one item{_unit(currency)}"
    axes = dict(x=_field("difference", title=x_title),
                y=_field("items", title="Items (weighted, linear)", scale={"type": "linear", "zero": True}))
    bars = _view(
        "differences", "bar", {"size": 14}, **axes,
        color=_field("who", "nominal", scale={"domain": [better_a, same, better_b],
                                              "range": [sides[0], "#BBBBBB", sides[1]]},
                     # Below the bars: beside them, a long model name pushed the legend out of a half column.
                     legend={"orient": "bottom", "direction": "vertical", "title": None, "labelLimit": 0}),
        tooltip=[_tip("difference", f"Difference{_unit(currency)}", fmt=",.4g"),
                 _tip("items", "Items", fmt=",.0f"), _tip("who", "On these items", "nominal")],
    )
    counts = _view("differences", "text", {"dy": -7, "fontSize": 12, "color": _DARK}, **axes,
                   text=_field("label", "nominal"))
    # Taller than the chart beside it: the legend under the bars takes its share of the height.
    return _spec([_zero_rule(x_title), bars, counts], {"zero": [{"zero": 0.0}], "differences": data},
                 title="Where the two models differ, item by item", height=320,
                 padding={"left": 5, "top": 10, "right": 5, "bottom": 5})


def stability_spec(rows, models, *, tuned=None) -> dict:
    """Spread of the tuned threshold over bootstrap resamples of the tuning split, one row per model.

    ``rows``: ``STABILITY_COLUMNS`` (a re-tuned threshold and how many resamples chose it; missing
    thresholds, "always abstain", are left out); ``tuned``: ``model, threshold`` tuned on the whole split,
    a black tick.
    """
    data = with_exact([row for row in records(rows, STABILITY_COLUMNS) if row.get("threshold") is not None],
                      "threshold")
    _check(rows, data, STABILITY_COLUMNS, "a threshold stability chart")
    x = _field("threshold", title="Tuned threshold (confidence)", scale={"zero": False})
    y = _field("model", "nominal", title="Model")
    layers = [_view(
        "resampled", "circle", {"opacity": 0.7}, x=x, y=y, color=model_color(models, legend=False),
        size=_field("resamples", title="Resamples", scale={"range": [20, 400]}),
        tooltip=[_tip("model", "Model", "nominal"), _exact_tip("threshold", "Tuned threshold"),
                 _tip("resamples", "Resamples that chose it", fmt=",.0f")],
    )]
    datasets = {"resampled": data}
    marks = with_exact([row for row in records(tuned, ("model", "threshold")) if row.get("threshold") is not None],
                       "threshold")
    if marks:
        datasets["tuned"] = marks
        layers.append(_view(
            "tuned", "tick", {"color": "black", "thickness": 2, "size": 26}, x=x, y=y,
            tooltip=[_tip("model", "Model", "nominal"),
                     _exact_tip("threshold", "Threshold tuned on the whole split")],
        ))
    return _spec(layers, datasets, title="Tuned threshold over bootstrap resamples", height={"step": 56})


# ---------------------------------------------------------------------- monitoring
# measure -> (estimated column, realised column or None, axis title, tooltip format; None: exact, as text)
MONITOR_MEASURES = {
    "value_per_item": ("estimated_value_per_item", "realised_value_per_item", "Value per item{unit}", ",.4f"),
    "value_total": ("estimated_value_total", "realised_value_total", "Value of the chunk{unit}", ",.2f"),
    "coverage": ("estimated_coverage", "realised_coverage", "Acted on (share of items)", ".1%"),
    "best_threshold": ("estimated_best_threshold", None, "Best threshold (confidence)", None),
}
MONITOR_SOURCES = ("estimated", "realised")
MONITOR_LONG_COLUMNS = ("model", "position", "chunk", "start", "end", "n", "measure", "source", "amount")


def _is_time(value) -> bool:
    """A point in time (a datetime or pandas Timestamp, not NaT)."""
    return hasattr(value, "isoformat") and hasattr(value, "year") and value == value


def monitor_spec(
    rows,
    models,
    *,
    measure: str = "value_per_item",
    by_time: bool = True,
    currency: str = "$",
    reference: float | None = None,
    legend: bool = True,
    height: int = 320,
) -> dict:
    """One measure per chunk: estimated (solid) and realised (dashed) per model.

    Parameters
    ----------
    rows : DataFrame or list of dict
        Long rows ``MONITOR_LONG_COLUMNS`` (``dashboard.views.monitor.monitor_long``): one per (model,
        chunk, measure, source) with its ``amount``.
    models : sequence of str
        All loaded models (the colour domain).
    measure : str
        A key of ``MONITOR_MEASURES``.
    by_time : bool
        Chunks at their start time when every ``start`` is a time (chunks by period), else by number.
    currency : str
    reference : float, optional
        A horizontal reference line (e.g. the value on the labelled test split).
    legend : bool
        Legends below the plot; False for a small chart beside one that has them.
    height : int

    Raises
    ------
    ValueError
        For an unknown measure or a missing column.
    """
    if measure not in MONITOR_MEASURES:
        raise ValueError(f"unknown measure {measure!r}; choose one of {list(MONITOR_MEASURES)}")
    rows = rows if hasattr(rows, "columns") else list(rows or [])
    _check(rows, rows[:1] if isinstance(rows, list) else [], MONITOR_LONG_COLUMNS, "a monitor chart")
    if isinstance(rows, list):
        chosen = [row for row in rows if row.get("measure") == measure]
        starts = [row.get("start") for row in chosen]
    else:
        chosen = rows.loc[rows["measure"] == measure]
        starts = list(chosen["start"])
    use_time = by_time and bool(starts) and all(map(_is_time, starts))
    data = records(chosen, [c for c in MONITOR_LONG_COLUMNS if use_time or c not in ("start", "end")])
    _, _, title, fmt = MONITOR_MEASURES[measure]
    title = title.format(unit=_unit(currency))
    if fmt is None:
        data = with_exact(data, "amount")
    if use_time:
        x = _field("start", "temporal", title="Chunk start (time)", axis={"format": "%b %d"})
    else:
        x = _field("position", "ordinal", title="Chunk (in order)", axis={"labelAngle": 0})
    tooltip = [_tip("model", "Model", "nominal"), _tip("source", "Figure", "nominal"),
               _tip("chunk", "Chunk", "ordinal"), _tip("n", "Items", fmt=",.0f"),
               _tip("amount", title, fmt=fmt) if fmt is not None else _exact_tip("amount", title)]
    if use_time:
        tooltip[3:3] = [_tip("start", "From", "temporal", "%Y-%m-%d %H:%M"),
                        _tip("end", "To", "temporal", "%Y-%m-%d %H:%M")]
    # Legends below the plot: beside it, Streamlit's theme clips them on a short chart.
    color = model_color(models)
    color["legend"] = {"orient": "bottom", "direction": "horizontal"} if legend else None
    common = dict(x=x, y=_field("amount", title=title, scale={"zero": False}), color=color, tooltip=tooltip)
    # The dashes keep one meaning on every chart (the domain is fixed); the legend lists only the figures drawn:
    # "realised" under a production split without labels named a line that is not there.
    drawn = {row["source"] for row in data}
    dash = _field("source", "nominal", title="Figure", scale={"domain": list(MONITOR_SOURCES),
                                                               "range": [[1, 0], [5, 3]]},
                  legend={"orient": "bottom", "direction": "horizontal", "symbolStrokeWidth": 2,
                          "values": [s for s in MONITOR_SOURCES if s in drawn]} if legend else None)
    layers = [_view("chunks", "line", None, strokeDash=dash, **common),
              _view("chunks", "point", {"filled": True, "size": 45}, detail=_field("source", "nominal"), **common)]
    datasets = {"chunks": data}
    if reference is not None:
        datasets["reference"] = with_exact([{"reference": float(reference)}], "reference")
        tip = _tip("reference", "Reference", fmt=fmt) if fmt is not None else _exact_tip("reference", "Reference")
        layers.insert(0, _view("reference", "rule", {"color": _GREY, "strokeDash": [2, 2]},
                               y=_field("reference", title=title), tooltip=[tip]))
    return _spec(layers, datasets, height=height)


def monitor_band_spec(rows, currency: str = "$", height: int = 300) -> dict:
    """Estimated value per item per chunk with its band, the reference band, flags and realised values.

    ``rows``: ``valuecore.monitoring.monitor_bands(...).frame``, one row per chunk with ``chunk``,
    ``estimated_value_per_item``, ``band_low``/``band_high``, ``reference_low``/``reference_high``,
    ``alert``, ``drift``, ``drift_p_value`` and ``realised_value_per_item`` (missing without labels).
    """
    # Tooltips read as the page's words: estimates and their bands in three significant digits (wording.amount).
    texts = {name: name + "_text" for name in ("estimated_value_per_item", "band_low", "band_high",
                                               "realised_value_per_item")}
    data = [{**row, "position": i + 1, "status": "alert" if row["alert"] else "drift" if row["drift"] else "ok",
             **{text: wording.amount(row.get(name), currency) for name, text in texts.items()},
             "drift_p_text": wording.p_value(row.get("drift_p_value"))}
            for i, row in enumerate(records(rows))]
    x = _field("position", title="Chunk", axis={"tickMinStep": 1})
    tooltip = [_tip("chunk", "Chunk", "nominal"), _tip(texts["estimated_value_per_item"], "Estimated", "nominal"),
               _tip(texts["band_low"], "Band from", "nominal"), _tip(texts["band_high"], "Band to", "nominal"),
               _tip("status", "Status", "nominal"), _tip("drift_p_text", "Drift", "nominal")]
    layers = [
        _view("chunks", "area", {"color": "#000000", "interpolate": "step", "opacity": 0.15}, x=x,
              y=_field("reference_low", title=f"Value per item{_unit(currency)}"), y2={"field": "reference_high"}),
        _view("chunks", "area", {"color": PALETTE[0], "opacity": 0.3}, x=x, y=_field("band_low"),
              y2={"field": "band_high"}),
        _view("chunks", "line", {"color": PALETTE[0], "point": True}, x=x, y=_field("estimated_value_per_item"),
              tooltip=tooltip),
    ]
    datasets = {"chunks": data}
    flags = [row for row in data if row["status"] != "ok"]
    if flags:  # an empty layer made the browser warn of an infinite extent
        datasets["flags"] = flags
        layers.append(_view("flags", "point", {"filled": True, "size": 120}, x=x, y=_field("estimated_value_per_item"),
                            tooltip=tooltip, color=_field("status", "nominal", title="Flag", scale={
                                "domain": ["alert", "drift"], "range": [PALETTE[3], PALETTE[1]]})))
    realised = [row for row in data if row.get("realised_value_per_item") is not None]
    if realised:
        datasets["realised"] = realised
        layers.append(_view("realised", "point", {"color": "#000000", "shape": "diamond", "size": 60}, x=x,
                            y=_field("realised_value_per_item"),
                            tooltip=[_tip(texts["realised_value_per_item"], "Realised", "nominal")]))
    return _spec(layers, datasets, height=height)


# ------------------------------------------------------------- capacity and guarantees
_TITLE_PADDING = {"left": 5, "top": 10, "right": 5, "bottom": 5}


def _scale_with_zero(values: list) -> dict:
    """A value axis that holds 0 (as the VOC chart's does): a value per day drawn from 880 to 940 read as a
    rule worth nothing at the bottom of the chart. A curve flat at 0 gets room around it (a domain of one point
    drew a single tick)."""
    values = [v for v in values if v is not None]
    low, high = min([0.0, *values]), max([0.0, *values])
    if high - low > 0:
        return {"zero": True}
    return {"zero": True, "domain": [-1.0, 1.0]}


def capacity_spec(rows, capacity: float, currency: str = "$", height: int = 300) -> dict:
    """Best value per day against the reviews a day the team can do (a step curve), the team's capacity a rule.

    ``rows``: ``reviews_per_day, value_per_day, threshold`` (``dashboard.views.capacity``). The value axis
    holds 0, as every value chart's does (issue 33: fitted to the curve, 880 to 940, it read as worth nothing at
    the bottom); the steps stay readable in the tooltip and the sentence's figures.
    """
    data = sorted(records(rows, ("reviews_per_day", "value_per_day", "threshold")),
                  key=lambda row: row["reviews_per_day"])
    data = [{**row, "value_text": wording.money(row["value_per_day"], currency.strip())}
            for row in with_exact(data, "threshold")]
    line = _view(
        "curve", "line", {"color": PALETTE[0], "interpolate": "step-after"},
        x=_field("reviews_per_day", title="Reviews the team can do per day"),
        y=_field("value_per_day", title=f"Best value per day ({currency}, tuning split)",
                 scale=_scale_with_zero([row["value_per_day"] for row in data])),
        tooltip=[_tip("reviews_per_day", "Reviews per day", fmt=",.0f"),
                 _tip("value_text", "Value per day", "nominal"), _exact_tip("threshold", "Threshold")],
    )
    rule = _view("team", "rule", {"color": PALETTE[3], "strokeDash": [4, 3]}, x=_field("capacity"),
                 tooltip=[_tip("capacity", "Your team", fmt=",.0f")])
    return _spec([line, rule], {"curve": data, "team": [{"capacity": _plain(capacity)}]}, height=height,
                 title="Value against review capacity", padding=_TITLE_PADDING)


CERTIFIED_RATES = {"error_rate": "Error rate on the tuning split", "upper_bound": "At most, on new items"}


def certified_risk_spec(rows, max_risk: float, height: int = 300) -> dict:
    """Error rate and its certified upper bound against coverage at the tested thresholds, the limit a rule.

    ``rows``: ``threshold, coverage, error_rate, upper_bound, certified``.
    """
    data = with_exact([{"threshold": row["threshold"], "coverage": row["coverage"], "certified": row["certified"],
                        "what": label, "rate": row[column]}
                       for column, label in CERTIFIED_RATES.items() for row in records(rows)], "threshold")
    line = _view(
        "rates", "line", {"point": True},
        x=_field("coverage", title="Share of items automated", axis={"format": "%"}),
        # A title shorter than the plot is tall: a longer one shrank the plot and pushed the chart's title out.
        y=_field("rate", title="Wrong among automated", axis={"format": "%"}),
        # The legend under the chart, labels whole: beside it "Error rate on the tuning split" was cut.
        color=_field("what", "nominal", title=None, scale={"range": [PALETTE[0], PALETTE[1]]},
                     legend={"orient": "bottom", "labelLimit": 0}),
        tooltip=[_exact_tip("threshold", "Threshold"), _tip("coverage", "Automated", fmt=".1%"),
                 _tip("rate", "Rate", fmt=".2%"), _tip("certified", "Keeps the promise", "nominal")],
    )
    limit = _view("limit", "rule", {"color": PALETTE[3], "strokeDash": [4, 3]}, y=_field("max_risk"),
                  tooltip=[_tip("max_risk", "Your limit", fmt=".1%")])
    # Room above the title: without it the title's first pixels were cut by the element's top edge.
    return _spec([line, limit], {"rates": data, "limit": [{"max_risk": _plain(max_risk)}]}, height=height,
                 title="Error rate and what can be guaranteed", padding=_TITLE_PADDING)


def tiers_spec(rows, height: int = 160) -> dict:
    """Items per day in each tier (``tier, items_per_day``), in the order given."""
    data = records(rows, ("tier", "items_per_day"))
    order = [row["tier"] for row in data]
    return {
        "$schema": SCHEMA, "datasets": {"tiers": data}, "data": {"name": "tiers"}, "mark": {"type": "bar"},
        "encoding": {
            "x": _field("items_per_day", title="Items per day"),
            "y": _field("tier", "nominal", sort=order, title=None, axis={"labelLimit": 0}),  # whole labels
            "color": _field("tier", "nominal", sort=order, legend=None,
                            scale={"domain": order, "range": [PALETTE[2], PALETTE[1], PALETTE[3]]}),
            "tooltip": [_tip("tier", "Tier", "nominal"), _tip("items_per_day", "Per day", fmt=",.0f")],
        },
        "height": height,
    }


def reviewer_value_spec(curve, chosen, currency: str = "$", height: int = 280) -> dict:
    """Value per day against the share of items handed over, one line per way of pricing a hand-off.

    ``curve``: ``handoff_rate, value_per_day, pricing`` (one row per candidate threshold); ``chosen``: the same
    columns, one row per threshold marked (its ``pricing`` names the rule), drawn as points.
    """
    columns = ("handoff_rate", "value_per_day", "pricing")
    lines, points = records(curve, columns), records(chosen, columns)
    order = list(dict.fromkeys(row["pricing"] for row in lines))
    tooltip = [_tip("pricing", "Hand-offs priced", "nominal"), _tip("handoff_rate", "Handed over", fmt=".1%"),
               _tip("value_per_day", f"Value per day ({currency})", fmt=",.2f")]
    line = _view(
        "curve", "line", {"interpolate": "step-after"},
        x=_field("handoff_rate", title="Share of items handed to the reviewers (tuning split)", axis={"format": "%"}),
        y=_field("value_per_day", title=f"Value per day ({currency})", scale={"zero": False}),
        color=_field("pricing", "nominal", title=None, sort=order,
                     scale={"domain": order, "range": [PALETTE[0], PALETTE[1]][:len(order)]},
                     legend={"orient": "bottom", "labelLimit": 0}),
        tooltip=tooltip,
    )
    marked = _view("chosen", "point", {"size": 90, "filled": True, "color": PALETTE[3]},
                   x=_field("handoff_rate"), y=_field("value_per_day"), tooltip=tooltip)
    return _spec([line, marked], {"curve": lines, "chosen": points}, height=height,
                 title="Value against the share handed over")


# ---------------------------------------------------------------- values per class
def _order(values) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values))


def _extent(values) -> float:
    values = [abs(v) for v in values if v is not None]
    extent = max(values) if values else 1.0
    return extent if extent > 0 else 1.0


HAND_OFF_LABEL = "hand off"  # the action column's name in the matrices' rows (dashboard.views.values_per_class)


def _matrix_layers(data: list[dict], x_title: str, tooltip: list, color_title: str, text: dict) -> list[dict]:
    rows, columns = _order(r["true"] for r in data), _order(r["predicted"] for r in data)
    extent = _extent(r["value"] for r in data)
    # Every class labelled: at 800 px the default overlap rule dropped every other label ("hand off", wider than its
    # cell, overlapped "9"); it now wraps onto two lines, and no label is dropped.
    axis = {"labelAngle": 0, "orient": "top", "labelOverlap": False,
            "labelExpr": f"datum.value == {HAND_OFF_LABEL!r} ? ['hand', 'off'] : datum.value"}
    axes = dict(x=_field("predicted", "nominal", title=x_title, sort=columns, axis=axis),
                y=_field("true", "nominal", title="True class", sort=rows), tooltip=tooltip)
    color = _field("value", title=color_title, scale={"scheme": "redblue", "domain": [-extent, extent],
                                                      "domainMid": 0})
    # White text on the darkest cells, dark text elsewhere.
    ink = {"condition": {"test": f"abs(datum.value) > {0.6 * extent!r}", "value": "white"}, "value": "#222222"}
    return [_view("cells", "rect", {"stroke": "white"}, color=color, **axes),
            _view("cells", "text", {"fontSize": 11}, text=text, color=ink, **axes)]


def confusion_value_spec(rows, *, currency: str = "$", height: int | None = None) -> dict:
    """The confusion matrix with a hand-off column, each cell coloured by the value it brings.

    ``rows``: ``true, predicted, count, value``, one per (true class, action) cell, hand-off last; ``value``
    is the cell's contribution (count × the outcome's value) in the currency.
    """
    data = [{**row, "value_text": wording.money(row["value"], currency.strip(), 0)}
            for row in records(rows, ("true", "predicted", "count", "value"))]
    tooltip = [_tip("true", "True class", "nominal"), _tip("predicted", "Action", "nominal"),
               _tip("count", "Items", fmt=",.0f"), _tip("value_text", f"Value contributed ({currency})", "nominal")]
    layers = _matrix_layers(data, "Action taken (predicted class, or hand off)", tooltip,
                            f"Value contributed ({currency})", _field("count", format=",.0f"))
    return _spec(layers, {"cells": data}, height=height or max(160, 34 * len(_order(r["true"] for r in data))))


def value_matrix_spec(rows, *, currency: str = "$") -> dict:
    """The value matrix itself: what each (true class, action) outcome is worth (``true, predicted, value``)."""
    data = [{**row, "value_text": wording.money(row["value"], currency.strip())}
            for row in records(rows, ("true", "predicted", "value"))]
    tooltip = [_tip("true", "True class", "nominal"), _tip("predicted", "Action", "nominal"),
               _tip("value_text", f"Worth ({currency})", "nominal")]
    layers = _matrix_layers(data, "Action taken", tooltip, f"Worth per item ({currency})",
                            _field("value_text", "nominal"))
    return _spec(layers, {"cells": data}, height=max(140, 30 * len(_order(r["true"] for r in data))))


# The panels, left to right: (the page's numbers column, its panel title). The value panel's title names the
# currency (see :func:`segment_rows`).
SEGMENT_MEASURES = (("handoff_rate", "Hand-off rate"), ("error_rate", "Error rate"),
                    ("value_per_item", "Value per item"))
_BOUNDS = {"error_rate": (None, "error_bound"), "value_per_item": ("low", "high")}


def _number(value) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def segment_chart_rows(numbers, currency: str = "$") -> list[dict]:
    """One row per (segment, measure): the figure, its range (the value's 95% interval, the error rate's
    certified bound) and the tooltip's text as every page writes it. ``numbers``: the view's
    ``SegmentsPage.numbers`` (a frame or records with ``segment`` and each of ``SEGMENT_MEASURES``)."""
    rows = []
    for record in records(numbers):
        for measure, title in SEGMENT_MEASURES:
            value = _number(record.get(measure))
            low_name, high_name = _BOUNDS.get(measure, (None, None))
            low = _number(record.get(low_name)) if low_name else value
            high = _number(record.get(high_name)) if high_name else value
            if measure == "value_per_item":
                title = f"Value per item ({currency})" if currency else title
                shown = wording.amount(value, currency)
            else:
                # A rate's axis reads in percent, as its table and tooltip do (0.05 under "5.0%" before).
                shown = wording.percent(value)
                title = f"{title} (%)"
                value, low, high = (None if x is None else 100.0 * x for x in (value, low, high))
            rows.append({"segment": str(record["segment"]), "measure": title, "value": value,
                         "low": low if value is not None else None, "high": high if value is not None else None,
                         "shown": shown})
    return rows


SEGMENT_PANEL_WIDTH = 340  # px: with the segment names beside it, fits the page at 800 px wide


def _segment_layers(data: list[dict]) -> list[dict]:
    """A bar per segment and its range (the rows of :func:`segment_chart_rows`)."""
    order = list(dict.fromkeys(row["segment"] for row in data))
    y = {"field": "segment", "type": "nominal", "title": None, "sort": order}
    tooltip = [{"field": "segment", "type": "nominal", "title": "Segment"},
               {"field": "measure", "type": "nominal", "title": "Measure"},
               {"field": "shown", "type": "nominal", "title": "Figure"}]
    bars = {"mark": {"type": "bar", "color": "#0072B2", "opacity": 0.75},
            "encoding": {"y": y, "x": {"field": "value", "type": "quantitative", "title": None},
                         "tooltip": tooltip}}
    ranges = {"mark": {"type": "rule", "color": "#333333", "strokeWidth": 2},
              "encoding": {"y": y, "x": {"field": "low", "type": "quantitative"}, "x2": {"field": "high"},
                           "tooltip": tooltip}}
    return [bars, ranges]


SEGMENTS_TITLE = {"text": "Each segment, measure by measure",
                  "subtitle": "Lines: the value's 95% interval, the error rate's bound"}


def segment_panel_specs(numbers, currency: str = "$") -> list[dict]:
    """:func:`segments_spec`'s three panels as three charts, each as wide as its container (the page draws them
    one under the other with ``width="stretch"``: a faceted chart has a fixed width, and its 340 px panels filled
    half the page at 1280 px). The first carries the title; each its measure's name."""
    data = segment_chart_rows(numbers, currency)
    measures = list(dict.fromkeys(row["measure"] for row in data))
    specs = []
    for i, measure in enumerate(measures):
        rows = [row for row in data if row["measure"] == measure]
        title = ({**SEGMENTS_TITLE, "subtitle": [SEGMENTS_TITLE["subtitle"], measure]} if i == 0 else
                 {"text": measure, "fontWeight": "normal", "fontSize": 11})
        specs.append({"$schema": SCHEMA, "datasets": {"segments": rows}, "data": {"name": "segments"},
                      "layer": _segment_layers(rows), "height": {"step": 28}, "title": title})
    return specs


def segments_spec(numbers, currency: str = "$") -> dict:
    """Three panels one under the other (hand-off rate, error rate, value per item), one bar per segment, each
    with its range (the HTML report's chart; the page draws :func:`segment_panel_specs`, as wide as the page).

    A segment that acts on no item has no error rate: no bar in that panel. Each panel has its own x scale.
    """
    data = segment_chart_rows(numbers, currency)
    return {
        "$schema": SCHEMA,
        "datasets": {"segments": data},
        "data": {"name": "segments"},
        "facet": {"field": "measure", "type": "nominal", "title": None,
                  "sort": list(dict.fromkeys(row["measure"] for row in data))},
        # One panel under the other and a short title: three panels of 200 px in a row, and the title on one
        # line, ran past the page's edge at 800 px wide (a laptop with the sidebar open), cutting off the value.
        "columns": 1,
        "spec": {"layer": _segment_layers(data), "width": SEGMENT_PANEL_WIDTH, "height": {"step": 28}},
        "resolve": {"scale": {"x": "independent"}},
        "title": SEGMENTS_TITLE,
    }
