"""Charts of the "Capacity & guarantees" page.

Pure functions: a tidy DataFrame in, an Altair chart out (no Streamlit); the charts are specs of
:mod:`valuecore.chartspecs` wrapped in Altair.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from valuecore import chartspecs

from ._style import from_spec

__all__ = ["capacity_chart", "certified_risk_chart", "tiers_chart"]


def capacity_chart(curve: pd.DataFrame, capacity: float, currency: str = "$", height: int = 300) -> alt.LayerChart:
    """Best value per day against the reviews a day the team can do (a step curve).

    ``curve``: ``reviews_per_day``, ``value_per_day``, ``threshold`` (see
    ``dashboard.views.capacity.capacity_view``); a rule marks ``capacity``. The value axis fits the curve.
    """
    return from_spec(chartspecs.capacity_spec(curve, capacity, currency, height))


def certified_risk_chart(table: pd.DataFrame, max_risk: float, height: int = 300) -> alt.LayerChart:
    """Error rate and its certified upper bound against coverage, at the tested thresholds.

    ``table``: ``threshold``, ``coverage``, ``error_rate``, ``upper_bound``, ``certified``.
    """
    return from_spec(chartspecs.certified_risk_spec(table, max_risk, height))


def tiers_chart(tiers: pd.DataFrame, height: int = 160) -> alt.Chart:
    """Items per day in each tier (``tier``, ``items_per_day``)."""
    return from_spec(chartspecs.tiers_spec(tiers, height))
