"""Charts of the Compare page: two models on the same items.

Pure functions: a tidy DataFrame in, an Altair chart out (no Streamlit).
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from ._style import model_color, model_palette

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
INTERVAL_COLUMNS = ("model", "mean", "low", "high")
# One row per distinct per-item difference (value of A − value of B on one item).
DIFFERENCE_COLUMNS = ("difference", "items")
# One row per (model, tuned threshold): how many bootstrap resamples chose it.
STABILITY_COLUMNS = ("model", "threshold", "resamples")


def _check(frame: pd.DataFrame, columns, what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} needs the columns {missing}; got {list(frame.columns)}")


def _unit(currency: str) -> str:
    return f" ({currency})" if currency else ""


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
    """Each model's value per item with its 95% interval, side by side.

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
    _check(frame, INTERVAL_COLUMNS, "a value interval chart")
    data = frame.loc[:, list(INTERVAL_COLUMNS)].copy()
    title = f"Value per item{_unit(currency)}"
    y = alt.Y("model:N", title="Model", sort=list(data["model"]))
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("mean:Q", title=f"Value per item{_unit(currency)}", format=",.4f"),
        alt.Tooltip("low:Q", title="95% interval, low", format=",.4f"),
        alt.Tooltip("high:Q", title="95% interval, high", format=",.4f"),
    ]
    # The y axis names the models, so the colour needs no legend (a long one would be clipped).
    color = model_color(models)
    color.legend = None
    base = alt.Chart(data).encode(y=y, color=color, tooltip=tooltip)
    interval = base.mark_rule(strokeWidth=3).encode(x=alt.X("low:Q", title=title), x2="high:Q")
    point = base.mark_point(filled=True, size=120).encode(x=alt.X("mean:Q", title=title))
    zero = (
        alt.Chart(pd.DataFrame({"zero": [0.0]}))
        .mark_rule(color="#999999", strokeDash=[3, 3])
        .encode(x=alt.X("zero:Q", title=title))
    )
    return (zero + interval + point).properties(title="Value per item with its 95% interval", height=alt.Step(48))


def difference_chart(
    frame: pd.DataFrame, *, model_a: str, model_b: str, currency: str = "$", models=None
) -> alt.LayerChart:
    """How the per-item difference A − B is distributed over the items.

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
    _check(frame, DIFFERENCE_COLUMNS, "a difference chart")
    data = frame.loc[:, list(DIFFERENCE_COLUMNS)].copy()
    better_a, better_b, same = f"{model_a} earns more", f"{model_b} earns more", "same value"
    data["who"] = [better_a if d > 0 else better_b if d < 0 else same for d in data["difference"]]
    x_title = f"Value of {model_a} − value of {model_b} on one item{_unit(currency)}"
    if models is not None and model_a in models and model_b in models:
        palette = model_palette(models)
        side_colors = (palette[list(models).index(model_a)], palette[list(models).index(model_b)])
    else:
        side_colors = ("#0072B2", "#D55E00")
    # A linear count axis, every bar labelled with its count: a 1-item bar is drawn 1/428 as tall as a
    # 428-item bar and says "1", instead of a log scale that makes the two look alike.
    data["label"] = [f"{items:,.0f}" if float(items).is_integer() else f"{items:,.1f}" for items in data["items"]]
    base = alt.Chart(data).encode(
        x=alt.X("difference:Q", title=x_title),
        y=alt.Y("items:Q", title="Items (weighted, linear)", scale=alt.Scale(type="linear", zero=True)),
    )
    bars = base.mark_bar(size=14).encode(
        color=alt.Color(
            "who:N",
            scale=alt.Scale(domain=[better_a, same, better_b], range=[side_colors[0], "#BBBBBB", side_colors[1]]),
            # Below the bars: beside them, a long model name pushed the legend out of a half-width column.
            legend=alt.Legend(orient="bottom", direction="vertical", title=None, labelLimit=0),
        ),
        tooltip=[
            alt.Tooltip("difference:Q", title=f"Difference{_unit(currency)}", format=",.4g"),
            alt.Tooltip("items:Q", title="Items", format=",.0f"),
            alt.Tooltip("who:N", title="On these items"),
        ],
    )
    counts = base.mark_text(dy=-7, fontSize=12, color="#333333").encode(text=alt.Text("label:N"))
    bars = bars + counts
    zero = (
        alt.Chart(pd.DataFrame({"zero": [0.0]}))
        .mark_rule(color="#999999", strokeDash=[3, 3])
        .encode(x=alt.X("zero:Q", title=x_title))
    )
    # Taller than the chart beside it: the legend under the bars takes its share of the height.
    return (zero + bars).properties(title="Where the two models differ, item by item", height=320,
                                    padding={"left": 5, "top": 10, "right": 5, "bottom": 5})


def stability_chart(frame: pd.DataFrame, models, *, tuned: pd.DataFrame | None = None) -> alt.LayerChart:
    """Spread of the tuned threshold over bootstrap resamples of the tuning split.

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
    _check(frame, STABILITY_COLUMNS, "a threshold stability chart")
    data = frame.loc[:, list(STABILITY_COLUMNS)].dropna(subset=["threshold"]).copy()
    x = alt.X("threshold:Q", title="Tuned threshold (confidence)", scale=alt.Scale(zero=False))
    y = alt.Y("model:N", title="Model")
    color = model_color(models)
    color.legend = None  # the y axis names the models
    points = (
        alt.Chart(data)
        .mark_circle(opacity=0.7)
        .encode(
            x=x,
            y=y,
            color=color,
            size=alt.Size("resamples:Q", title="Resamples", scale=alt.Scale(range=[20, 400])),
            tooltip=[
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("threshold:Q", title="Tuned threshold", format=".4f"),
                alt.Tooltip("resamples:Q", title="Resamples that chose it", format=",.0f"),
            ],
        )
    )
    chart = points
    if tuned is not None and len(tuned):
        ticks = (
            alt.Chart(tuned.loc[:, ["model", "threshold"]].dropna())
            .mark_tick(color="black", thickness=2, size=26)
            .encode(
                x=x,
                y=y,
                tooltip=[
                    alt.Tooltip("model:N", title="Model"),
                    alt.Tooltip("threshold:Q", title="Threshold tuned on the whole split", format=".4f"),
                ],
            )
        )
        chart = points + ticks
    return chart.properties(title="Tuned threshold over bootstrap resamples", height=alt.Step(56))
