"""Charts of the Cost matrix page: the confusion matrix with an abstain column, and the value matrix."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ._style import layer, money_text, view


def _order(values) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values))


def _extent(values: pd.Series) -> float:
    extent = float(values.abs().max()) if len(values) else 1.0
    return extent if extent > 0 else 1.0


def _diverging(values: pd.Series, title: str) -> alt.Color:
    extent = _extent(values)
    return alt.Color("value:Q", title=title, scale=alt.Scale(scheme="redblue", domain=[-extent, extent], domainMid=0))


def _ink(values: pd.Series):
    """White text on the darkest cells, dark text elsewhere."""
    return alt.condition(f"abs(datum.value) > {0.6 * _extent(values)!r}", alt.value("white"), alt.value("#222222"))


def confusion_value_chart(cells: pd.DataFrame, *, currency: str = "$", height: int | None = None) -> alt.LayerChart:
    """Confusion matrix with an abstain column, coloured by the value each cell contributes.

    Parameters
    ----------
    cells : DataFrame
        ``true, predicted, count, value``: one row per (true class, action)
        cell, abstain last; ``value`` is the cell's contribution (count x
        value of that outcome) in the currency.
    """
    data = cells.assign(value_text=money_text(cells["value"], currency, digits=0))
    rows, columns = _order(data["true"]), _order(data["predicted"])
    axes = dict(
        x=alt.X("predicted:N", title="Action taken (predicted class, or abstain)", sort=columns,
                axis=alt.Axis(labelAngle=0, orient="top")),
        y=alt.Y("true:N", title="True class", sort=rows),
        tooltip=[
            alt.Tooltip("true:N", title="True class"),
            alt.Tooltip("predicted:N", title="Action"),
            alt.Tooltip("count:Q", title="Items", format=",.0f"),
            alt.Tooltip("value_text:N", title=f"Value contributed ({currency})"),
        ],
    )
    return layer(
        view(data, "rect", {"stroke": "white"}, color=_diverging(data["value"], f"Value contributed ({currency})"),
             **axes),
        view(data, "text", {"fontSize": 11}, text=alt.Text("count:Q", format=",.0f"), color=_ink(data["value"]),
             **axes),
        height=height or max(160, 34 * len(rows)),
    )


def value_matrix_chart(matrix: pd.DataFrame, *, currency: str = "$") -> alt.LayerChart:
    """The value matrix itself: what each (true class, action) outcome is worth.

    Parameters
    ----------
    matrix : DataFrame
        ``true, predicted, value`` in the currency (one row per cell).
    """
    data = matrix.assign(value_text=money_text(matrix["value"], currency))
    rows, columns = _order(data["true"]), _order(data["predicted"])
    axes = dict(
        x=alt.X("predicted:N", title="Action taken", sort=columns, axis=alt.Axis(labelAngle=0, orient="top")),
        y=alt.Y("true:N", title="True class", sort=rows),
        tooltip=[
            alt.Tooltip("true:N", title="True class"),
            alt.Tooltip("predicted:N", title="Action"),
            alt.Tooltip("value_text:N", title=f"Worth ({currency})"),
        ],
    )
    return layer(
        view(data, "rect", {"stroke": "white"}, color=_diverging(data["value"], f"Worth per item ({currency})"),
             **axes),
        view(data, "text", {"fontSize": 11}, text=alt.Text("value_text:N"), color=_ink(data["value"]), **axes),
        height=max(140, 30 * len(rows)),
    )
