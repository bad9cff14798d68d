"""Charts of the Calibration page: reliability diagrams and value against k.

Pure functions: a tidy DataFrame in, an Altair chart out (no Streamlit).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ._style import model_color

__all__ = [
    "RELIABILITY_COLUMNS",
    "CALIBRATION_VALUE_COLUMNS",
    "reliability_chart",
    "calibration_value_long",
    "calibration_value_chart",
]

# One row per (model, stage, bin): the output of
# ``valuecore.calibration.reliability_diagram`` plus "model" and "stage".
RELIABILITY_COLUMNS = (
    "model",
    "stage",
    "bin_lower",
    "bin_upper",
    "mean_confidence",
    "accuracy",
    "count",
    "accuracy_low",
    "accuracy_high",
)
# One row per (model, k, threshold rule): value per item on the evaluation split.
CALIBRATION_VALUE_COLUMNS = ("model", "k", "rule", "value", "threshold")

STAGE_ORDER = ("before", "after")
# Shorter than a panel is wide: each panel of a row repeats it, and longer titles ran into each other.
X_TITLE = "Mean confidence in the bin"
Y_TITLE = "Accuracy in the bin (share correct)"
STAGE_DASH = ([1, 0], [5, 3])


def _check(frame: pd.DataFrame, columns, what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} needs the columns {missing}; got {list(frame.columns)}")


def reliability_chart(frame: pd.DataFrame, models, *, columns: int = 3, size: int = 180) -> alt.FacetChart:
    """Reliability diagrams, one panel per model, before and after recalibration.

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
    _check(frame, RELIABILITY_COLUMNS, "a reliability chart")
    data = frame.loc[:, list(RELIABILITY_COLUMNS)].copy()
    data["stage"] = data["stage"].astype(str)
    stages = [s for s in STAGE_ORDER if s in set(data["stage"])] or sorted(set(data["stage"]))
    dash = alt.StrokeDash(
        "stage:N",
        scale=alt.Scale(domain=list(STAGE_ORDER), range=list(STAGE_DASH)),
        title="Confidence",
        legend=alt.Legend(labelExpr="datum.label == 'before' ? 'raw (before)' : 'recalibrated (after)'"),
    )
    x = alt.X("mean_confidence:Q", title=X_TITLE, scale=alt.Scale(domain=[0, 1]))
    y = alt.Y("accuracy:Q", title=Y_TITLE, scale=alt.Scale(domain=[0, 1]))
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("stage:N", title="Confidence"),
        alt.Tooltip("bin_lower:Q", title="Bin from", format=".3f"),
        alt.Tooltip("bin_upper:Q", title="Bin to", format=".3f"),
        alt.Tooltip("mean_confidence:Q", title="Mean confidence", format=".3f"),
        alt.Tooltip("accuracy:Q", title="Accuracy", format=".3f"),
        alt.Tooltip("accuracy_low:Q", title="Accuracy, 95% low", format=".3f"),
        alt.Tooltip("accuracy_high:Q", title="Accuracy, 95% high", format=".3f"),
        alt.Tooltip("count:Q", title="Items (weighted)", format=",.0f"),
    ]
    color = model_color(models)
    base = alt.Chart().encode(x=x)
    diagonal = (
        alt.Chart()
        .transform_aggregate(rows="count()")
        .transform_calculate(low="0", high="1")
        .mark_rule(color="#999999", strokeDash=[2, 2])
        .encode(
            x=alt.X("low:Q", title=X_TITLE, scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("low:Q", title=Y_TITLE, scale=alt.Scale(domain=[0, 1])),
            x2="high:Q",
            y2="high:Q",
        )
    )
    intervals = base.mark_rule(opacity=0.5).encode(
        y=alt.Y("accuracy_low:Q", title=Y_TITLE, scale=alt.Scale(domain=[0, 1])),
        y2="accuracy_high:Q",
        color=color,
        tooltip=tooltip,
    )
    line = base.mark_line().encode(y=y, color=color, strokeDash=dash, detail="stage:N")
    points = base.mark_circle(opacity=0.85).encode(
        y=y,
        color=color,
        size=alt.Size("count:Q", title="Items in the bin", scale=alt.Scale(range=[15, 250])),
        opacity=alt.Opacity("stage:N", scale=alt.Scale(domain=list(STAGE_ORDER), range=[0.45, 0.95]), legend=None),
        tooltip=tooltip,
    )
    layered = alt.layer(diagonal + intervals + line + points, data=data).properties(width=size, height=size)
    return layered.facet(
        facet=alt.Facet("model:N", title=None, sort=[m for m in models if m in set(data["model"])]),
        columns=columns,
    ).properties(
        title="Reliability: accuracy against confidence" + (" (raw and recalibrated)" if len(stages) > 1 else "")
    ).configure_legend(**BOTTOM_LEGENDS)


# Legends under the panels, not beside them: beside three panels they ran out of the page at 1280 px
# ("random_fore", "calibrated threshold, rec…").
BOTTOM_LEGENDS = {"orient": "bottom", "direction": "vertical", "labelLimit": 0}


RULE_ORDER = (
    "calibrated threshold, raw",
    "calibrated threshold, recalibrated",
    "tuned threshold, raw",
    "tuned threshold, recalibrated",
)
RULE_DASH = ([2, 2], [6, 3], [1, 0], [8, 2, 2, 2])


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


def calibration_value_chart(
    frame: pd.DataFrame,
    models,
    *,
    value_title: str = "Value per item (correct 1, wrong −ω)",
    columns: int = 3,
    size: int = 220,
) -> alt.FacetChart:
    """Value per item against the cost factor k, one panel per model, one line per threshold rule.

    Parameters
    ----------
    frame : DataFrame
        Columns :data:`CALIBRATION_VALUE_COLUMNS`: ``k`` (omega), ``rule``
        (e.g. "calibrated threshold, raw", "calibrated threshold,
        recalibrated", "tuned threshold"), ``value`` and ``threshold``
        (may be NaN: always abstain).
    models : sequence of str
        All loaded models (colour domain).
    value_title : str
        Axis title with the unit of ``value``.
    columns, size : int
        Panels per row; width and height of a panel in pixels.

    Returns
    -------
    altair.FacetChart
        Per panel: a zero line (the value of always abstaining) and one line
        per rule; colour is the model, dash the rule.
    """
    _check(frame, CALIBRATION_VALUE_COLUMNS, "a calibration value chart")
    data = frame.loc[:, list(CALIBRATION_VALUE_COLUMNS)].copy()
    present = list(dict.fromkeys(data["rule"]))
    rules = [r for r in RULE_ORDER if r in present] + [r for r in present if r not in RULE_ORDER]
    dash_of = dict(zip(RULE_ORDER, RULE_DASH))
    dashes = [dash_of.get(r, [1, 1]) for r in rules]
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("rule:N", title="Threshold"),
        alt.Tooltip("k:Q", title="Penalty ω", format="g"),
        alt.Tooltip("threshold:Q", title="Threshold used", format=".3f"),
        alt.Tooltip("value:Q", title="Value per item", format=".3f"),
    ]
    base = alt.Chart().encode(
        x=alt.X("k:Q", title="Penalty ω (errors cost ω×)"),
        y=alt.Y("value:Q", title=value_title),
        color=model_color(models),
        tooltip=tooltip,
    )
    lines = base.mark_line().encode(
        strokeDash=alt.StrokeDash("rule:N", scale=alt.Scale(domain=rules, range=dashes), title="Threshold"),
    )
    points = base.mark_point(filled=True, size=40).encode(detail="rule:N")
    zero = (
        alt.Chart()
        .transform_aggregate(rows="count()")
        .transform_calculate(zero="0")
        .mark_rule(color="#999999")
        .encode(y=alt.Y("zero:Q", title=value_title))
    )
    layered = alt.layer(zero + lines + points, data=data)
    return (
        layered.properties(width=size, height=size)
        .facet(
            facet=alt.Facet("model:N", title=None, sort=[m for m in models if m in set(data["model"])]),
            columns=columns,
        )
        .properties(
            title="Value against the penalty ω: the threshold ω/(1+ω) before and after recalibration, and the "
            "tuned threshold"
        )
        .configure_legend(**BOTTOM_LEGENDS)
    )
