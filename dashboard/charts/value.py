"""Charts of the Value page: value per item against the threshold (the spec the report draws too), and
confidence histograms."""

from __future__ import annotations

from typing import Sequence

import altair as alt
import pandas as pd

from valuecore import chartspecs

from ._style import from_spec, layer, view

CORRECT_WRONG = alt.Scale(domain=["correct", "wrong"], range=["#009E73", "#D55E00"])
DASHES = chartspecs.THRESHOLD_DASHES


def _dashes(labels) -> alt.Scale:
    """Dash per marked threshold, for the labels present only (so the legend lists no absent one)."""
    present = [label for label in DASHES if label in set(labels)]
    return alt.Scale(domain=present, range=[DASHES[label] for label in present])


THRESHOLD_TITLE = chartspecs.THRESHOLD_TITLE


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
    return from_spec(chartspecs.value_threshold_spec(curves, markers, models=models, currency=currency,
                                                     manual_threshold=manual_threshold, height=height))


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
