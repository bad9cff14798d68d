"""Charts of the Values per class page: the confusion matrix with an abstain column, and the value matrix
(specs of :mod:`valuecore.chartspecs` wrapped in Altair)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from valuecore import chartspecs

from ._style import from_spec


def confusion_value_chart(cells: pd.DataFrame, *, currency: str = "$", height: int | None = None) -> alt.LayerChart:
    """Confusion matrix with an abstain column, coloured by the value each cell contributes.

    Parameters
    ----------
    cells : DataFrame
        ``true, predicted, count, value``: one row per (true class, action)
        cell, abstain last; ``value`` is the cell's contribution (count x
        value of that outcome) in the currency.
    """
    return from_spec(chartspecs.confusion_value_spec(cells, currency=currency, height=height))


def value_matrix_chart(matrix: pd.DataFrame, *, currency: str = "$") -> alt.LayerChart:
    """The value matrix itself: what each (true class, action) outcome is worth.

    Parameters
    ----------
    matrix : DataFrame
        ``true, predicted, value`` in the currency (one row per cell).
    """
    return from_spec(chartspecs.value_matrix_spec(matrix, currency=currency))
