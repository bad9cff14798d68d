"""Charts of the Compare page: two models on the same items.

Pure functions: a tidy DataFrame in, an Altair chart out (no Streamlit). Each chart is a spec of
:mod:`valuecore.chartspecs` wrapped in Altair; the frames' helpers (:func:`difference_counts`,
:func:`stability_counts`) live here.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from valuecore import chartspecs

from ._style import from_spec

__all__ = [
    "INTERVAL_COLUMNS",
    "DIFFERENCE_COLUMNS",
    "STABILITY_COLUMNS",
    "difference_counts",
    "stability_counts",
    "value_interval_chart",
    "difference_chart",
    "stability_chart",
]

# One row per model (or per "A − B"): mean value per item and its 95% interval.
INTERVAL_COLUMNS = chartspecs.INTERVAL_COLUMNS
# One row per distinct per-item difference (value of A − value of B on one item).
DIFFERENCE_COLUMNS = chartspecs.DIFFERENCE_COLUMNS
# One row per (model, tuned threshold): how many bootstrap resamples chose it.
STABILITY_COLUMNS = chartspecs.STABILITY_COLUMNS


def difference_counts(difference, weight=None) -> pd.DataFrame:
    """Per-item differences A − B grouped by value: the frame of :func:`difference_chart`.

    Parameters
    ----------
    difference : array-like of shape (n,)
        Value of A minus value of B on each (paired) item.
    weight : array-like of shape (n,), optional
        Item weights (ones by default).

    Returns
    -------
    DataFrame
        Columns :data:`DIFFERENCE_COLUMNS`, one row per distinct difference
        (rounded to 12 significant decimals), increasing.
    """
    difference = np.round(np.asarray(difference, dtype=np.float64), 12)
    weight = np.ones_like(difference) if weight is None else np.asarray(weight, dtype=np.float64)
    frame = pd.DataFrame({"difference": difference, "items": weight})
    return frame.groupby("difference", as_index=False)["items"].sum().loc[:, list(DIFFERENCE_COLUMNS)]


def stability_counts(thresholds: dict) -> pd.DataFrame:
    """Bootstrap thresholds per model counted by value: the frame of :func:`stability_chart`.

    Parameters
    ----------
    thresholds : dict of model name -> array-like of re-tuned thresholds
        NaN means "always abstain" and is left out.

    Returns
    -------
    DataFrame
        Columns :data:`STABILITY_COLUMNS`.
    """
    parts = []
    for model, values in thresholds.items():
        values = np.asarray(values, dtype=np.float64)
        values = values[~np.isnan(values)]
        unique, counts = np.unique(values, return_counts=True)
        parts.append(pd.DataFrame({"model": model, "threshold": unique, "resamples": counts}))
    if not parts:
        return pd.DataFrame(columns=list(STABILITY_COLUMNS))
    return pd.concat(parts, ignore_index=True).loc[:, list(STABILITY_COLUMNS)]


def value_interval_chart(frame: pd.DataFrame, models, *, currency: str = "$") -> alt.LayerChart:
    """Each model's value per item with its 95% interval, side by side
    (:func:`valuecore.chartspecs.value_interval_spec`).

    Parameters
    ----------
    frame : DataFrame
        Columns :data:`INTERVAL_COLUMNS`, in the currency.
    models : sequence of str
        All loaded models (colour domain).
    currency : str

    Returns
    -------
    altair.LayerChart
        A horizontal interval (rule) and a point per model, and a zero line.
    """
    return from_spec(chartspecs.value_interval_spec(frame, models, currency=currency))


def difference_chart(
    frame: pd.DataFrame, *, model_a: str, model_b: str, currency: str = "$", models=None
) -> alt.LayerChart:
    """How the per-item difference A − B is distributed over the items (:func:`valuecore.chartspecs.difference_spec`).

    Parameters
    ----------
    frame : DataFrame
        Columns :data:`DIFFERENCE_COLUMNS`: each distinct difference in value
        on one item (A's value minus B's, in the currency) and how many items
        (weighted) have it.
    model_a, model_b : str
        Names used in the legend.
    currency : str
    models : sequence of str, optional
        All loaded models: each side then takes its model's colour, as on every other chart.

    Returns
    -------
    altair.LayerChart
        Bars of items per difference on a linear count axis, each labelled
        with its count, coloured by who earned more, with a line at zero.
    """
    return from_spec(chartspecs.difference_spec(frame, model_a=model_a, model_b=model_b, currency=currency,
                                                models=models))


def stability_chart(frame: pd.DataFrame, models, *, tuned: pd.DataFrame | None = None) -> alt.LayerChart:
    """Spread of the tuned threshold over bootstrap resamples of the tuning split
    (:func:`valuecore.chartspecs.stability_spec`).

    Parameters
    ----------
    frame : DataFrame
        Columns :data:`STABILITY_COLUMNS`: a tuned threshold (probability;
        NaN rows, "always abstain", are left out) and the number of resamples
        that chose it.
    models : sequence of str
        All loaded models (colour domain).
    tuned : DataFrame, optional
        Columns ``model`` and ``threshold``: the threshold tuned on the whole
        split, drawn as a black tick.

    Returns
    -------
    altair.LayerChart
        One row per model: a circle per threshold sized by its resamples.
    """
    return from_spec(chartspecs.stability_spec(frame, models, tuned=tuned))
