"""Charts of the Value page: value per item against the threshold (the spec the report draws too), and
confidence histograms (specs of :mod:`valuecore.chartspecs` wrapped in Altair)."""

from __future__ import annotations

from typing import Sequence

import altair as alt
import pandas as pd

from valuecore import chartspecs

from ._style import from_spec

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
    return from_spec(chartspecs.confidence_histogram_spec(histogram, thresholds, title=title, height=height))
