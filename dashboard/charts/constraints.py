"""Charts of the "Capacity & guarantees" page.

Pure functions: a tidy DataFrame in, an Altair chart out (no Streamlit).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ._style import OKABE_ITO

__all__ = ["capacity_chart", "certified_risk_chart", "tiers_chart"]

TITLE_PADDING = {"left": 5, "top": 10, "right": 5, "bottom": 5}


def capacity_chart(curve: pd.DataFrame, capacity: float, currency: str = "$", height: int = 300) -> alt.Chart:
    """Best value per day against the reviews a day the team can do (a step curve).

    ``curve``: ``reviews_per_day``, ``value_per_day``, ``threshold`` (see
    ``dashboard.constraints.capacity_view``); a rule marks ``capacity``.
    """
    frame = curve.sort_values("reviews_per_day").assign(
        value_text=lambda f: [f"{currency}{v:,.2f}" for v in f["value_per_day"]]
    )
    line = alt.Chart(frame).mark_line(interpolate="step-after", color=OKABE_ITO[0]).encode(
        x=alt.X("reviews_per_day:Q", title="Reviews the team can do per day"),
        y=alt.Y("value_per_day:Q", title=f"Best value per day ({currency}, tuning split)"),
        tooltip=[
            alt.Tooltip("reviews_per_day:Q", title="Reviews per day", format=",.0f"),
            alt.Tooltip("value_text:N", title="Value per day"),
            alt.Tooltip("threshold:Q", title="Threshold", format=".3f"),
        ],
    )
    rule = alt.Chart(pd.DataFrame({"capacity": [capacity]})).mark_rule(color=OKABE_ITO[3], strokeDash=[4, 3]).encode(
        x="capacity:Q", tooltip=[alt.Tooltip("capacity:Q", title="Your team", format=",.0f")]
    )
    return (line + rule).properties(height=height, title="Value against review capacity", padding=TITLE_PADDING)


def certified_risk_chart(table: pd.DataFrame, max_risk: float, height: int = 300) -> alt.Chart:
    """Error rate and its certified upper bound against coverage, at the tested thresholds.

    ``table``: ``threshold``, ``coverage``, ``error_rate``, ``upper_bound``, ``certified``.
    """
    long = table.melt(
        id_vars=["threshold", "coverage", "certified"], value_vars=["error_rate", "upper_bound"],
        var_name="what", value_name="rate",
    ).replace({"what": {"error_rate": "Error rate on the tuning split", "upper_bound": "Certified upper bound"}})
    points = alt.Chart(long).mark_line(point=True).encode(
        x=alt.X("coverage:Q", title="Share of items automated", axis=alt.Axis(format="%")),
        # A title shorter than the plot is tall: a longer one shrank the plot and pushed the chart's title out.
        y=alt.Y("rate:Q", title="Wrong among automated", axis=alt.Axis(format="%")),
        # The legend under the chart, labels whole: beside it "Error rate on the tuning split" was cut.
        color=alt.Color("what:N", title=None, scale=alt.Scale(range=[OKABE_ITO[0], OKABE_ITO[1]]),
                        legend=alt.Legend(orient="bottom", labelLimit=0)),
        tooltip=[
            alt.Tooltip("threshold:Q", title="Threshold", format=".3f"),
            alt.Tooltip("coverage:Q", title="Automated", format=".1%"),
            alt.Tooltip("rate:Q", title="Rate", format=".2%"),
            alt.Tooltip("certified:N", title="Certified"),
        ],
    )
    target = alt.Chart(pd.DataFrame({"max_risk": [max_risk]})).mark_rule(color=OKABE_ITO[3], strokeDash=[4, 3]).encode(
        y="max_risk:Q", tooltip=[alt.Tooltip("max_risk:Q", title="Your limit", format=".1%")]
    )
    # Room above the title: without it the title's first pixels were cut by the element's top edge.
    return (points + target).properties(height=height, title="Error rate and what can be guaranteed",
                                        padding=TITLE_PADDING)


def tiers_chart(tiers: pd.DataFrame, height: int = 160) -> alt.Chart:
    """Items per day in each tier (``tier``, ``items_per_day``)."""
    order = list(tiers["tier"])
    return alt.Chart(tiers).mark_bar().encode(
        x=alt.X("items_per_day:Q", title="Items per day"),
        y=alt.Y("tier:N", sort=order, title=None, axis=alt.Axis(labelLimit=0)),  # "Confirmed by a person", whole
        color=alt.Color("tier:N", sort=order, legend=None,
                        scale=alt.Scale(domain=order, range=[OKABE_ITO[2], OKABE_ITO[1], OKABE_ITO[3]])),
        tooltip=[alt.Tooltip("tier:N", title="Tier"), alt.Tooltip("items_per_day:Q", title="Per day", format=",.0f")],
    ).properties(height=height)
