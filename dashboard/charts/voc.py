"""Charts of the VOC page: value operating characteristic curves (seed 000)."""

from __future__ import annotations

from typing import Sequence

import altair as alt
import pandas as pd

from ._style import layer, model_color, model_domain, view

OMEGA_TITLE = "Penalty ω (an error costs ω times what a correct answer earns)"
# Short enough to fit the chart's height at 1280 px (a longer title lost its closing bracket).
VALUE_TITLE = "Value per item (0 = no model, 1 = perfect)"


def voc_chart(
    curves: pd.DataFrame,
    *,
    models: Sequence[str] | None = None,
    omega_now: float | None = None,
    omega_sup: pd.DataFrame | None = None,
    bands: pd.DataFrame | None = None,
    y_min: float | None = None,
    height: int = 380,
) -> alt.LayerChart:
    """VOC curves of several models overlaid.

    Parameters
    ----------
    curves : DataFrame
        ``model, omega, value`` (and optionally ``threshold``), e.g. from
        ``valuecore.voc_frame``.
    models : sequence of str
        All loaded models (the colour domain).
    omega_now : float, optional
        The user's current omega: a vertical rule.
    omega_sup : DataFrame, optional
        ``model, omega_sup, value``: where each curve stops being worth more
        than no model, drawn as points on the zero line.
    bands : DataFrame, optional
        ``model, omega, low, high``: bootstrap bands, drawn as shaded areas.
    y_min : float, optional
        Lower end of the value axis; values below are clipped (they mean
        "far worse than no model"). By default the axis follows the data:
        from the lowest curve or band value (or 0) to the highest.
    """
    color = model_color(model_domain(models, curves))
    band_color = model_color(model_domain(models, curves))
    band_color.legend = None  # the legend follows the curves, not the faint bands
    lows = [float(curves["value"].min())] if len(curves) else []
    highs = [float(curves["value"].max())] if len(curves) else []
    if bands is not None and len(bands):
        lows.append(float(bands["low"].min()))
        highs.append(float(bands["high"].max()))
    # Fit the axis to the curves: four curves between 0.83 and 1.0 were squeezed into the top of a 0-1 axis.
    # Zero (no model) stays in view when the data come near it, so a fall below it is never hidden.
    low = min(lows) if lows else 0.0
    high = max(highs) if highs else 1.0
    if low > 0.0 and low < 0.25 * max(high, 1e-12):
        low = 0.0
    high = max(high, low + 0.02)
    # A little room below and above, so neither the lowest band nor the top curve sits on the frame.
    pad = 0.04 * (high - low)
    low = low - pad if y_min is None else max(low - pad, y_min)
    y_scale = alt.Scale(domain=[low, min(high + pad, 1.0) if high <= 1.0 else high + pad], nice=False)
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("omega:Q", title="ω", format=".2f"),
        alt.Tooltip("value:Q", title="Value per item (dimensionless)", format=".3f"),
    ]
    if "threshold" in curves.columns:
        tooltip.append(alt.Tooltip("threshold:Q", title="Threshold in force", format=".3f"))
    x = alt.X("omega:Q", title=OMEGA_TITLE)
    layers = [view(pd.DataFrame({"value": [0.0]}), "rule", {"color": "#999999", "clip": True},
                   y=alt.Y("value:Q", scale=y_scale))]
    if bands is not None and len(bands):
        layers.append(view(
            bands, "area", {"opacity": 0.08, "clip": True},
            x=x, y=alt.Y("low:Q", title=VALUE_TITLE, scale=y_scale), y2=alt.Y2("high:Q"), color=band_color,
            tooltip=[
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("omega:Q", title="ω", format=".2f"),
                alt.Tooltip("low:Q", title="Band low", format=".3f"),
                alt.Tooltip("high:Q", title="Band high", format=".3f"),
            ],
        ))
    layers.append(view(
        curves, "line", {"clip": True},
        x=x, y=alt.Y("value:Q", title=VALUE_TITLE, scale=y_scale), color=color, tooltip=tooltip,
    ))
    if bands is not None and len(bands):
        # Light fills with thin dashed edges: five overlapping bands stay readable, each in its model's colour.
        for edge in ("low", "high"):
            layers.append(view(
                bands, "line", {"clip": True, "strokeWidth": 1, "strokeDash": [2, 3], "opacity": 0.6},
                x=x, y=alt.Y(f"{edge}:Q", scale=y_scale), color=band_color, detail=alt.Detail("model:N"),
            ))
    if omega_sup is not None and len(omega_sup):
        layers.append(view(
            omega_sup, "point", {"shape": "diamond", "size": 110, "filled": True, "stroke": "white"},
            x=alt.X("omega_sup:Q", title=OMEGA_TITLE), y=alt.Y("value:Q", scale=y_scale), color=color,
            tooltip=[
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("omega_sup:Q", title="ω_sup (worth nothing beyond)", format=".3f"),
            ],
        ))
    if omega_now is not None:
        now = pd.DataFrame({"omega": [float(omega_now)], "label": [f"your ω = {omega_now:.3g}"]})
        layers.append(view(
            now, "rule", {"color": "#333333", "strokeDash": [4, 3], "strokeWidth": 2},
            x=alt.X("omega:Q"), tooltip=[alt.Tooltip("omega:Q", title="Your ω", format=".3g")],
        ))
        layers.append(view(
            now, "text", {"align": "left", "dx": 4, "dy": -6, "color": "#333333"},
            x=alt.X("omega:Q"), y=alt.value(8), text=alt.Text("label:N"),
        ))
    return layer(*layers, height=height)
