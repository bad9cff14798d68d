"""The Segments page's chart: each segment's hand-off rate, error rate and value per item side by side.

:func:`segments_spec` is pure (the page's numbers in, a Vega-Lite dict out, no Altair, no Streamlit), in the
style of :mod:`valuecore.chartspecs`; :func:`segments_chart` wraps it for ``st.altair_chart``.
"""

from __future__ import annotations

import math

import pandas as pd

import valuecore as vc
from valuecore.chartspecs import SCHEMA, records

from ._style import from_spec

__all__ = ["SEGMENT_MEASURES", "segment_rows", "segments_spec", "segments_chart"]

# The panels, left to right: (the page's numbers column, its panel title). The value panel's title names the
# currency (see :func:`segment_rows`).
SEGMENT_MEASURES = (("handoff_rate", "Hand-off rate"), ("error_rate", "Error rate"),
                    ("value_per_item", "Value per item"))
_BOUNDS = {"error_rate": (None, "error_bound"), "value_per_item": ("low", "high")}


def _number(value) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def segment_rows(numbers: pd.DataFrame, currency: str = "$") -> list[dict]:
    """One row per (segment, measure): the figure, its range (the value's 95% interval, the error rate's
    certified bound) and the tooltip's text as every page writes it. ``numbers``: the view's
    ``SegmentsPage.numbers``."""
    rows = []
    for record in records(numbers):
        for measure, title in SEGMENT_MEASURES:
            value = _number(record.get(measure))
            low_name, high_name = _BOUNDS.get(measure, (None, None))
            low = _number(record.get(low_name)) if low_name else value
            high = _number(record.get(high_name)) if high_name else value
            if measure == "value_per_item":
                title = f"Value per item ({currency})" if currency else title
                shown = vc.wording.amount(value, currency)
            else:
                shown = vc.wording.percent(value)
            rows.append({"segment": str(record["segment"]), "measure": title, "value": value,
                         "low": low if value is not None else None, "high": high if value is not None else None,
                         "shown": shown})
    return rows


def segments_spec(numbers: pd.DataFrame, currency: str = "$") -> dict:
    """Three panels (hand-off rate, error rate, value per item), one bar per segment, each with its range.

    A segment that acts on no item has no error rate: no bar in that panel. Each panel has its own x scale.
    """
    data = segment_rows(numbers, currency)
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
    return {
        "$schema": SCHEMA,
        "datasets": {"segments": data},
        "data": {"name": "segments"},
        "facet": {"field": "measure", "type": "nominal", "title": None,
                  "sort": list(dict.fromkeys(row["measure"] for row in data))},
        "columns": len(SEGMENT_MEASURES),
        "spec": {"layer": [bars, ranges], "width": 200, "height": {"step": 28}},
        "resolve": {"scale": {"x": "independent"}},
        "title": "Each segment side by side (lines: the value's 95% interval, the error rate's bound)",
    }


def segments_chart(numbers: pd.DataFrame, currency: str = "$"):
    """:func:`segments_spec` as an Altair chart."""
    return from_spec(segments_spec(numbers, currency))
