"""Charts of the Monitor page: estimated (label-free) against realised value per chunk.

Pure functions: a tidy DataFrame in, an Altair chart out (no Streamlit).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ._style import model_color

__all__ = ["MEASURES", "MONITOR_LONG_COLUMNS", "monitor_long", "monitor_chart"]

# measure -> (estimated column, realised column or None, axis title, tooltip format)
MEASURES = {
    "value_per_item": ("estimated_value_per_item", "realised_value_per_item", "Value per item{unit}", ",.4f"),
    "value_total": ("estimated_value_total", "realised_value_total", "Value of the chunk{unit}", ",.2f"),
    "coverage": ("estimated_coverage", "realised_coverage", "Coverage (share acted on)", ".1%"),
    "best_threshold": ("estimated_best_threshold", None, "Best threshold (confidence)", ".4f"),
}
SOURCES = ("estimated", "realised")
MONITOR_LONG_COLUMNS = ("model", "position", "chunk", "start", "end", "n", "measure", "source", "amount")


def monitor_long(frame: pd.DataFrame) -> pd.DataFrame:
    """Turn ``valuecore`` monitor output (plus a ``model`` column) into long form.

    Parameters
    ----------
    frame : DataFrame
        One row per (model, chunk) with ``chunk``, ``start``, ``end``, ``n``
        and the ``estimated_*`` / ``realised_*`` columns of
        ``valuecore.monitoring.monitor``.

    Returns
    -------
    DataFrame
        Columns :data:`MONITOR_LONG_COLUMNS`: one row per (model, chunk,
        measure, source) with a finite ``amount``; ``position`` numbers each
        model's chunks from 1 in the order given; realised rows exist only
        for chunks with labels.
    """
    missing = [c for c in ("model", "chunk", "n") if c not in frame.columns]
    if missing:
        raise ValueError(f"monitor output needs the columns {missing}; got {list(frame.columns)}")
    keys = frame.loc[:, ["model", "chunk", "n"]].copy()
    keys.insert(1, "position", frame.groupby("model", sort=False).cumcount().to_numpy() + 1)
    for column in ("start", "end"):
        keys[column] = frame[column] if column in frame.columns else pd.NaT
    parts = []
    for measure, (estimated, realised, _, _) in MEASURES.items():
        for source, column in zip(SOURCES, (estimated, realised)):
            if column is None or column not in frame.columns:
                continue
            part = keys.copy()
            part["measure"] = measure
            part["source"] = source
            part["amount"] = pd.to_numeric(frame[column], errors="coerce").astype(float)
            parts.append(part)
    if not parts:
        return pd.DataFrame(columns=list(MONITOR_LONG_COLUMNS))
    long = pd.concat(parts, ignore_index=True).dropna(subset=["amount"])
    return long.loc[:, list(MONITOR_LONG_COLUMNS)].reset_index(drop=True)


def monitor_chart(
    long: pd.DataFrame,
    models,
    *,
    measure: str = "value_per_item",
    by_time: bool = True,
    currency: str = "$",
    reference: float | None = None,
    legend: bool = True,
    height: int = 320,
) -> alt.LayerChart:
    """One measure per chunk: estimated (solid) and realised (dashed) per model.

    Parameters
    ----------
    long : DataFrame
        Output of :func:`monitor_long`.
    models : sequence of str
        All loaded models (colour domain).
    measure : str
        A key of :data:`MEASURES`.
    by_time : bool
        Place chunks at their start time (temporal axis) rather than their
        number; used only when ``start`` holds times (chunks by period).
    currency : str
    reference : float, optional
        A horizontal reference line (e.g. the value on the labelled test split).
    legend : bool
        Draw the legends (below the plot); False for a small chart next to one that has them.
    height : int
        Height in pixels, legends and axes included (Streamlit fits the whole chart in it).

    Returns
    -------
    altair.LayerChart
    """
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; choose one of {list(MEASURES)}")
    missing = [c for c in MONITOR_LONG_COLUMNS if c not in long.columns]
    if missing:
        raise ValueError(f"a monitor chart needs the columns {missing}; got {list(long.columns)}")
    data = long.loc[long["measure"] == measure].copy()
    _, _, title, fmt = MEASURES[measure]
    title = title.format(unit=f" ({currency})" if currency else "")
    use_time = (
        by_time
        and len(data) > 0
        and pd.api.types.is_datetime64_any_dtype(data["start"])
        and data["start"].notna().all()
    )
    if use_time:
        x = alt.X("start:T", title="Chunk start (time)", axis=alt.Axis(format="%b %d"))
    else:
        data = data.drop(columns=["start", "end"])
        x = alt.X("position:O", title="Chunk (in order)", axis=alt.Axis(labelAngle=0))
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("source:N", title="Figure"),
        alt.Tooltip("chunk:O", title="Chunk"),
        alt.Tooltip("n:Q", title="Items", format=",.0f"),
        alt.Tooltip("amount:Q", title=title, format=fmt),
    ]
    if use_time:
        tooltip[3:3] = [
            alt.Tooltip("start:T", title="From", format="%Y-%m-%d %H:%M"),
            alt.Tooltip("end:T", title="To", format="%Y-%m-%d %H:%M"),
        ]
    y = alt.Y("amount:Q", title=title, scale=alt.Scale(zero=False))
    # Legends below the plot: beside it, Streamlit's theme clips them on a short chart.
    color = model_color(models)
    color.legend = alt.Legend(orient="bottom", direction="horizontal") if legend else None
    base = alt.Chart(data).encode(x=x, y=y, color=color, tooltip=tooltip)
    lines = base.mark_line().encode(
        strokeDash=alt.StrokeDash(
            "source:N",
            scale=alt.Scale(domain=list(SOURCES), range=[[1, 0], [5, 3]]),
            title="Figure",
            legend=alt.Legend(orient="bottom", direction="horizontal", symbolStrokeWidth=2) if legend else None,
        ),
    )
    points = base.mark_point(filled=True, size=45).encode(detail="source:N")
    chart = lines + points
    if reference is not None:
        rule = (
            alt.Chart(pd.DataFrame({"reference": [float(reference)]}))
            .mark_rule(color="#999999", strokeDash=[2, 2])
            .encode(
                y=alt.Y("reference:Q", title=title), tooltip=[alt.Tooltip("reference:Q", title="Reference", format=fmt)]
            )
        )
        chart = rule + chart
    return chart.properties(height=height)


def band_chart(frame: pd.DataFrame, currency: str = "$", height: int = 300) -> alt.Chart:
    """Estimated value per item per chunk with its band, the reference band, alerts and realised values.

    Parameters
    ----------
    frame : DataFrame
        ``valuecore.monitor_bands(...).frame``: one row per chunk with
        ``chunk``, ``estimated_value_per_item``, ``band_low``/``band_high``,
        ``reference_low``/``reference_high``, ``alert``, ``drift``,
        ``realised_value_per_item`` (NaN without labels).
    """
    data = frame.reset_index(drop=True).assign(position=lambda f: f.index + 1)
    data["status"] = [
        "alert" if a else ("drift" if d else "ok") for a, d in zip(data["alert"], data["drift"])
    ]
    x = alt.X("position:Q", title="Chunk", axis=alt.Axis(tickMinStep=1))
    unit = f" ({currency})"
    reference = alt.Chart(data).mark_area(opacity=0.15, color="#000000", interpolate="step").encode(
        x=x, y=alt.Y("reference_low:Q", title=f"Value per item{unit}"), y2="reference_high:Q"
    )
    band = alt.Chart(data).mark_area(opacity=0.3, color="#0072B2").encode(x=x, y="band_low:Q", y2="band_high:Q")
    tooltip = [
        alt.Tooltip("chunk:N", title="Chunk"),
        alt.Tooltip("estimated_value_per_item:Q", title="Estimated", format=",.4f"),
        alt.Tooltip("band_low:Q", title="Band from", format=",.4f"),
        alt.Tooltip("band_high:Q", title="Band to", format=",.4f"),
        alt.Tooltip("status:N", title="Status"),
        alt.Tooltip("drift_p_value:Q", title="Drift p-value", format=".3g"),
    ]
    estimate = alt.Chart(data).mark_line(point=True, color="#0072B2").encode(
        x=x, y="estimated_value_per_item:Q", tooltip=tooltip
    )
    alerts = alt.Chart(data[data["status"] != "ok"]).mark_point(size=120, filled=True).encode(
        x=x, y="estimated_value_per_item:Q", tooltip=tooltip,
        color=alt.Color("status:N", title="Flag", scale=alt.Scale(domain=["alert", "drift"],
                                                                   range=["#D55E00", "#E69F00"])),
    )
    layers = [reference, band, estimate, alerts]
    realised = data.dropna(subset=["realised_value_per_item"])
    if len(realised):
        layers.append(alt.Chart(realised).mark_point(shape="diamond", color="#000000", size=60).encode(
            x=x, y="realised_value_per_item:Q",
            tooltip=[alt.Tooltip("realised_value_per_item:Q", title="Realised", format=",.4f")],
        ))
    return alt.layer(*layers).properties(height=height)
