"""Charts of the Calibration page: reliability diagrams and value against k.

Pure functions: a tidy DataFrame in, an Altair chart out (no Streamlit).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from valuecore import chartspecs

from ._style import from_spec

__all__ = [
    "RELIABILITY_COLUMNS",
    "CALIBRATION_VALUE_COLUMNS",
    "reliability_chart",
    "calibration_value_long",
    "calibration_value_chart",
]

RELIABILITY_COLUMNS = chartspecs.RELIABILITY_COLUMNS
# One row per (model, k, threshold rule): value per item on the evaluation split.
CALIBRATION_VALUE_COLUMNS = chartspecs.CALIBRATION_VALUE_COLUMNS


def reliability_chart(frame: pd.DataFrame, models, *, columns: int = 3, size: int = 180) -> alt.FacetChart:
    """Reliability diagrams, one panel per model, before and after recalibration (the report's spec too).

    Parameters
    ----------
    frame : DataFrame
        Columns :data:`RELIABILITY_COLUMNS`; ``stage`` is "before" (raw
        confidence) or "after" (recalibrated). Probabilities in [0, 1].
    models : sequence of str
        All loaded models, for the shared colour scale.
    columns : int
        Panels per row.
    size : int
        Width and height of one panel in pixels.

    Returns
    -------
    altair.FacetChart
        Per panel: the diagonal of perfect calibration (grey), the 95%
        interval of each bin's accuracy (vertical rule), a point per bin at
        (mean confidence, accuracy) sized by its weighted count, and a line
        through the points; the stage is the line dash.
    """
    return from_spec(chartspecs.reliability_spec(frame, models, columns=columns, size=size))


BOTTOM_LEGENDS = chartspecs.BOTTOM_LEGENDS




def calibration_value_long(table: pd.DataFrame, *, recalibrated: bool = True) -> pd.DataFrame:
    """Seed 003 Table 5 (``valuecore.monitoring.calibration_value_tables``) in long form.

    Parameters
    ----------
    table : DataFrame
        One row per (model, k) with ``threshold``, ``value_calibrated_before``,
        ``value_calibrated_after``, ``value_tuned_before``,
        ``value_tuned_after``, ``threshold_tuned_before`` and
        ``threshold_tuned_after``.
    recalibrated : bool
        Include the "after recalibration" rules (False when no recalibration
        is chosen: they would repeat the raw ones).

    Returns
    -------
    DataFrame
        Columns :data:`CALIBRATION_VALUE_COLUMNS`.
    """
    rules = [
        ("calibrated threshold, raw", "value_calibrated_before", "threshold"),
        ("tuned threshold, raw", "value_tuned_before", "threshold_tuned_before"),
    ]
    if recalibrated:
        rules[1:1] = [("calibrated threshold, recalibrated", "value_calibrated_after", "threshold")]
        rules.append(("tuned threshold, recalibrated", "value_tuned_after", "threshold_tuned_after"))
    parts = []
    for rule, value, threshold in rules:
        part = table.loc[:, ["model", "k"]].copy()
        part["rule"] = rule
        part["value"] = table[value].astype(float)
        part["threshold"] = table[threshold].astype(float)
        parts.append(part)
    if not parts or table.empty:
        return pd.DataFrame(columns=list(CALIBRATION_VALUE_COLUMNS))
    return pd.concat(parts, ignore_index=True).loc[:, list(CALIBRATION_VALUE_COLUMNS)]


def calibration_value_chart(frame: pd.DataFrame, models, *, value_title: str = "Value per item (correct 1, wrong −ω)",
                            columns: int = 3, size: int = 220) -> alt.FacetChart:
    """Value per item against the penalty ω (column ``k``), one panel per model, one line per threshold rule.

    ``frame``: columns :data:`CALIBRATION_VALUE_COLUMNS` (:func:`calibration_value_long`); the rest as
    :func:`valuecore.chartspecs.calibration_value_spec`, which draws it: per panel a zero line (always
    abstaining) and one line per rule, the colour the model and the dash the rule.
    """
    return from_spec(chartspecs.calibration_value_spec(frame, models, value_title=value_title, columns=columns,
                                                       size=size))
