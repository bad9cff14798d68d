"""Charts of the VOC page: value operating characteristic curves (seed 000), the spec the report draws too."""

from __future__ import annotations

from typing import Sequence

import altair as alt
import pandas as pd

from valuecore import chartspecs

from ._style import from_spec

OMEGA_TITLE = chartspecs.OMEGA_TITLE
VALUE_TITLE = chartspecs.VALUE_TITLE


def voc_chart(
    curves: pd.DataFrame,
    *,
    models: Sequence[str] | None = None,
    omega_now: float | None = None,
    omega_sup: pd.DataFrame | None = None,
    bands: pd.DataFrame | None = None,
    y_min: float | None = None,
    height: int = 380,
) -> alt.LayerChart:
    """VOC curves of several models overlaid.

    Parameters
    ----------
    curves : DataFrame
        ``model, omega, value`` (and optionally ``threshold``), e.g. from
        ``valuecore.voc_frame``.
    models : sequence of str
        All loaded models (the colour domain).
    omega_now : float, optional
        The user's current omega: a vertical rule.
    omega_sup : DataFrame, optional
        ``model, omega_sup, value``: where each curve stops being worth more
        than no model, drawn as points on the zero line.
    bands : DataFrame, optional
        ``model, omega, low, high``: bootstrap bands, drawn as shaded areas.
    y_min : float, optional
        Lower end of the value axis; values below are clipped (they mean
        "far worse than no model"). By default the axis follows the data:
        from the lowest curve or band value (or 0) to the highest.
    """
    return from_spec(chartspecs.voc_spec(curves, models=models, omega_now=omega_now, omega_sup=omega_sup,
                                         bands=bands, y_min=y_min, height=height))
