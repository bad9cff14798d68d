"""Charts as plain Vega-Lite dicts: one picture and one colour per model, in the app and in the report.

Each function takes tidy records (a DataFrame or a list of dicts) and returns
a Vega-Lite specification as a plain ``dict``: no Altair, no Streamlit. The
dashboard wraps these dicts in Altair (``dashboard/charts/``) and the HTML
report (:mod:`valuecore.report`) renders the same dicts to SVG, so a chart
reads the same in both and model *i* has the same colour everywhere.

Data sit in the spec's top-level ``datasets`` under fixed names, each layer
naming its own (``{"name": "curves"}``); numbers that are missing or
infinite become ``null``.

What lives here
---------------
``PALETTE``: Okabe & Ito's colour-blind-safe colours, yellow last (weak on
white). :func:`model_palette` gives each model of a list its colour,
:func:`model_color` the colour encoding over *all* loaded models (so a model
keeps its colour on a chart that shows only some), :func:`records` turns a
frame into JSON-ready rows. Charts: :func:`voc_spec` (value against the
penalty ω, seed 000's VOC curves), :func:`value_threshold_spec` (value per
item against the threshold) and :func:`reliability_spec` (reliability
diagrams, one panel per model, before and after recalibration; rows with
``RELIABILITY_COLUMNS``). Axis words: ``OMEGA_TITLE``, ``VALUE_TITLE``,
``THRESHOLD_TITLE``; ``THRESHOLD_DASHES``: the dash of each marked threshold;
``BOTTOM_LEGENDS``: legends under a row of panels (beside them they ran off a laptop screen).

Examples
--------
>>> spec = voc_spec([{"model": "a", "omega": 0.0, "value": 0.9}], models=["b", "a"])
>>> line = spec["layer"][1]
>>> line["encoding"]["color"]["scale"]["range"], line["data"]
(['#0072B2', '#E69F00'], {'name': 'curves'})
"""

from __future__ import annotations

import math

from . import wording

__all__ = [
    "PALETTE",
    "OMEGA_TITLE",
    "VALUE_TITLE",
    "THRESHOLD_TITLE",
    "THRESHOLD_DASHES",
    "model_palette",
    "model_color",
    "records",
    "voc_spec",
    "value_threshold_spec",
    "RELIABILITY_COLUMNS",
    "BOTTOM_LEGENDS",
    "reliability_spec",
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


def records(rows, columns=None) -> list[dict]:
    """Rows as JSON-ready dicts: a DataFrame or an iterable of dicts in, NaN and infinity out as ``None``."""
    if rows is None:
        return []
    if hasattr(rows, "to_dict"):
        frame = rows if columns is None else rows.loc[:, [c for c in columns if c in rows.columns]]
        names = [str(c) for c in frame.columns]
        return [dict(zip(names, map(_plain, row))) for row in frame.itertuples(index=False, name=None)]
    return [{str(k): _plain(v) for k, v in row.items() if columns is None or k in columns} for row in rows]


def _field(name: str, kind: str = "quantitative", **more) -> dict:
    return {"field": name, "type": kind, **more}


def _tip(name: str, title: str, kind: str = "quantitative", fmt: str | None = None) -> dict:
    tip = {"field": name, "type": kind, "title": title}
    if fmt is not None:
        tip["format"] = fmt
    return tip


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
    # Fit the axis to the curves: four curves between 0.83 and 1.0 were squeezed into the top of a 0-1 axis.
    # Zero (no model) stays in view when the data come near it, so a fall below it is never hidden.
    low = min(lows) if lows else 0.0
    high = max(highs) if highs else 1.0
    if 0.0 < low < 0.25 * max(high, 1e-12):
        low = 0.0
    high = max(high, low + 0.02)
    # A little room below and above, so neither the lowest band nor the top curve sits on the frame.
    pad = 0.04 * (high - low)
    low = low - pad if y_min is None else max(low - pad, y_min)
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
        Lower end of the value axis. By default the axis follows the data, from the lowest curve or band
        value (or 0 when the data come near it) to the highest.
    height : int

    Returns
    -------
    dict
        A layered Vega-Lite spec: a zero rule, bands, curves, band edges, ω_sup diamonds, your ω.
    """
    curve_rows = records(curves)
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
        tooltip.append(_tip("threshold", "Threshold in force", fmt=".3f"))
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
    if omega_now is not None and math.isfinite(float(omega_now)):
        datasets["omega_now"] = [{"omega": float(omega_now), "label": f"your ω = {wording.omega(omega_now)}"}]
        layers.append(_view("omega_now", "rule", {"color": _DARK, "strokeDash": [4, 3], "strokeWidth": 2},
                            x=_field("omega"), tooltip=[_tip("omega", "Your ω", fmt=".3g")]))
        layers.append(_view("omega_now", "text", {"align": "left", "dx": 4, "dy": -6, "color": _DARK},
                            x=_field("omega"), y={"value": 8}, text=_field("label", "nominal")))
    return _spec(layers, datasets, height=height)


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
                  for row in records(curves)]
    unit = currency.strip() or "value units"
    color = model_color(_domain(models, curve_rows))
    x = _field("threshold", title=THRESHOLD_TITLE, scale={"domain": [0, 1]})
    y = _field("value_per_item", title=f"Value per item ({unit})", axis={"format": ",.2f"})
    tooltip = [_tip("model", "Model", "nominal"), _tip("threshold", "Threshold", fmt=".3f"),
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
                 for row in records(markers)]
    if mark_rows:
        datasets["markers"] = mark_rows
        labels = [row["marker"] for row in mark_rows]
        marker_tooltip = [_tip("model", "Model", "nominal"), _tip("marker", "Threshold", "nominal"),
                          _tip("threshold", "Value", fmt=".3f"),
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
        datasets["manual"] = [{"threshold": float(manual_threshold)}]
        layers.append(_view(
            "manual", "rule", {"color": "#555555", "strokeDash": [2, 2], "strokeWidth": 2}, x=_field("threshold"),
            tooltip=[_tip("threshold", "Your threshold", fmt=".3f")],
        ))
    return _spec(layers, datasets, height=height)


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
        _tip("accuracy_low", "Accuracy, 95% low", fmt=".3f"), _tip("accuracy_high", "Accuracy, 95% high", fmt=".3f"),
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
