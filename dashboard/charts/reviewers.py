"""Chart of the reviewers panel (Capacity & guarantees): value against the share handed over.

A pure function: a tidy DataFrame in, an Altair chart out (no Streamlit).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ._style import OKABE_ITO

__all__ = ["reviewer_value_chart"]


def reviewer_value_chart(curve: pd.DataFrame, chosen: pd.DataFrame, currency: str = "$",
                         height: int = 280) -> alt.Chart:
    """Value per day against the share of items handed over, one line per way of pricing a hand-off.

    ``curve``: ``handoff_rate``, ``value_per_day``, ``pricing`` (one row per candidate threshold);
    ``chosen``: the same columns, one row per threshold marked (its ``pricing`` names the rule).
    """
    order = list(dict.fromkeys(curve["pricing"]))
    color = alt.Color("pricing:N", title=None, sort=order,
                      scale=alt.Scale(domain=order, range=[OKABE_ITO[0], OKABE_ITO[1]][:len(order)]),
                      legend=alt.Legend(orient="bottom", labelLimit=0))
    tooltip = [alt.Tooltip("pricing:N", title="Hand-offs priced"),
               alt.Tooltip("handoff_rate:Q", title="Handed over", format=".1%"),
               alt.Tooltip("value_per_day:Q", title=f"Value per day ({currency})", format=",.2f")]
    lines = alt.Chart(curve).mark_line(interpolate="step-after").encode(
        x=alt.X("handoff_rate:Q", title="Share of items handed to the reviewers (tuning split)",
                axis=alt.Axis(format="%")),
        y=alt.Y("value_per_day:Q", title=f"Value per day ({currency})", scale=alt.Scale(zero=False)),
        color=color, tooltip=tooltip)
    points = alt.Chart(chosen).mark_point(size=90, filled=True, color=OKABE_ITO[3]).encode(
        x="handoff_rate:Q", y="value_per_day:Q", tooltip=tooltip)
    return (lines + points).properties(height=height, title="Value against the share handed over")
