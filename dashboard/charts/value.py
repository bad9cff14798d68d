"""Charts of the Value page: value per item against the threshold, and confidence histograms."""

from __future__ import annotations

from typing import Sequence

import altair as alt
import pandas as pd

from ._style import layer, model_color, model_domain, money_text, view

CORRECT_WRONG = alt.Scale(domain=["correct", "wrong"], range=["#009E73", "#D55E00"])
DASHES = {"tuned": [1, 0], "calibrated": [6, 3], "your threshold": [2, 2]}
SHAPES = {"tuned": "circle", "calibrated": "diamond"}


def _dashes(labels) -> alt.Scale:
    """Dash per marked threshold, for the labels present only (so the legend lists no absent one)."""
    present = [label for label in DASHES if label in set(labels)]
    return alt.Scale(domain=present, range=[DASHES[label] for label in present])


def _shapes(labels) -> alt.Scale:
    present = [label for label in SHAPES if label in set(labels)]
    return alt.Scale(domain=present, range=[SHAPES[label] for label in present])
THRESHOLD_TITLE = "Threshold: act when confidence ≥ this (0 = accept all)"


def value_threshold_chart(
    curves: pd.DataFrame,
    markers: pd.DataFrame | None = None,
    *,
    models: Sequence[str] | None = None,
    currency: str = "$",
    manual_threshold: float | None = None,
    height: int = 340,
) -> alt.LayerChart:
    """Value per item against the acceptance threshold, one line per model.

    Parameters
    ----------
    curves : DataFrame
        ``model, threshold, value_per_item, coverage`` and optionally ``split``
        (drawn dashed for a second split), from ``ThresholdCurve.to_frame``.
    markers : DataFrame, optional
        ``model, marker, threshold, value_per_item``; ``marker`` is "tuned"
        or "calibrated". Drawn as vertical rules and points.
    models : sequence of str
        All loaded models (the colour domain, so colours match every page).
    currency : str
        Shown in the axis title and tooltips.
    manual_threshold : float, optional
        A "what if" threshold, drawn as a grey dotted rule.
    """
    color = model_color(model_domain(models, curves))
    data = curves.assign(value_text=money_text(curves["value_per_item"], currency))
    x = alt.X("threshold:Q", title=THRESHOLD_TITLE, scale=alt.Scale(domain=[0, 1]))
    y = alt.Y("value_per_item:Q", title=f"Value per item ({currency})", axis=alt.Axis(format=",.2f"))
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("threshold:Q", title="Threshold", format=".3f"),
        alt.Tooltip("value_text:N", title=f"Value per item ({currency})"),
        alt.Tooltip("coverage:Q", title="Acted on", format=".1%"),
    ]
    channels = dict(x=x, y=y, color=color, tooltip=tooltip)
    if "split" in data.columns and data["split"].nunique() > 1:
        tooltip.insert(1, alt.Tooltip("split:N", title="Split"))
        splits = list(dict.fromkeys(data["split"]))
        channels["strokeDash"] = alt.StrokeDash(
            "split:N", title="Split", scale=alt.Scale(domain=splits, range=[[1, 0], [4, 3]][: len(splits)])
        )
    layers = [
        view(pd.DataFrame({"zero": [0.0]}), "rule", {"color": "#999999", "strokeWidth": 1}, y=alt.Y("zero:Q")),
        view(data, "line", {"interpolate": "step-before", "clip": True}, **channels),
    ]
    if markers is not None and len(markers):
        marks = markers.assign(value_text=money_text(markers["value_per_item"], currency))
        marker_tooltip = [
            alt.Tooltip("model:N", title="Model"),
            alt.Tooltip("marker:N", title="Threshold"),
            alt.Tooltip("threshold:Q", title="Value", format=".3f"),
            alt.Tooltip("value_text:N", title=f"Value per item ({currency})"),
        ]
        layers.append(view(
            marks, "rule", {"opacity": 0.6}, x=alt.X("threshold:Q"), color=color,
            strokeDash=alt.StrokeDash("marker:N", title="Marked threshold", scale=_dashes(marks["marker"])),
            tooltip=marker_tooltip,
        ))
        layers.append(view(
            marks, "point", {"size": 90, "filled": True, "stroke": "white"}, x=alt.X("threshold:Q"),
            y=alt.Y("value_per_item:Q"), color=color,
            shape=alt.Shape("marker:N", title="Marked threshold", scale=_shapes(marks["marker"])),
            tooltip=marker_tooltip,
        ))
    if manual_threshold is not None:
        manual = pd.DataFrame({"threshold": [float(manual_threshold)]})
        layers.append(view(
            manual, "rule", {"color": "#555555", "strokeDash": [2, 2], "strokeWidth": 2}, x=alt.X("threshold:Q"),
            tooltip=[alt.Tooltip("threshold:Q", title="Your threshold", format=".3f")],
        ))
    return layer(*layers, height=height)


def confidence_histogram_chart(
    histogram: pd.DataFrame,
    thresholds: pd.DataFrame | None = None,
    *,
    title: str = "",
    height: int = 260,
) -> alt.LayerChart:
    """Confidence of correct and of wrong predictions (seed 000, Figure 2), with thresholds.

    Parameters
    ----------
    histogram : DataFrame
        ``bin_start, bin_end, outcome, count, share`` from ``confidence_histogram``.
    thresholds : DataFrame, optional
        ``label, threshold``: vertical rules (e.g. tuned, calibrated, your threshold).
    """
    step = float((histogram["bin_end"] - histogram["bin_start"]).iloc[0]) if len(histogram) else 0.05
    # Each outcome is normalised on its own (as in seed 000's Figure 2): wrong answers are
    # usually few, and on a shared scale their distribution would be invisible.
    totals = histogram.groupby("outcome")["count"].transform("sum")
    data = histogram.assign(share_of_outcome=(histogram["count"] / totals.where(totals > 0)).fillna(0.0))
    layers = [view(
        data, "bar", {"opacity": 0.6, "binSpacing": 1},
        x=alt.X("bin_start:Q", title="Confidence of the predicted class", bin=alt.Bin(binned=True, step=step),
                scale=alt.Scale(domain=[0, 1])),
        x2=alt.X2("bin_end:Q"),
        y=alt.Y("share_of_outcome:Q", title="Share of its outcome (%)", stack=None,
                axis=alt.Axis(format="%")),
        color=alt.Color("outcome:N", title="Prediction", scale=CORRECT_WRONG),
        order=alt.Order("outcome:N", sort="ascending"),
        tooltip=[
            alt.Tooltip("outcome:N", title="Prediction"),
            alt.Tooltip("bin_start:Q", title="Confidence from", format=".2f"),
            alt.Tooltip("bin_end:Q", title="to", format=".2f"),
            alt.Tooltip("count:Q", title="Items", format=",.0f"),
            alt.Tooltip("share_of_outcome:Q", title="Share of this outcome", format=".1%"),
            alt.Tooltip("share:Q", title="Share of all items", format=".1%"),
        ],
    )]
    if thresholds is not None and len(thresholds):
        layers.append(view(
            thresholds, "rule", {"color": "#333333", "strokeWidth": 2},
            x=alt.X("threshold:Q"),
            strokeDash=alt.StrokeDash("label:N", title="Threshold", scale=_dashes(thresholds["label"])),
            tooltip=[alt.Tooltip("label:N", title="Threshold"),
                     alt.Tooltip("threshold:Q", title="Value", format=".3f")],
        ))
    properties = {"height": height}
    if title:
        properties["title"] = title
    return layer(*layers, **properties)
