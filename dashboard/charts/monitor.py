"""Charts of the Monitor page: estimated (label-free) against realised value per chunk.

Pure functions: a tidy DataFrame in, an Altair chart out (no Streamlit); the charts are specs of
:mod:`valuecore.chartspecs` wrapped in Altair.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from valuecore import chartspecs

from ._style import from_spec

__all__ = ["MEASURES", "MONITOR_LONG_COLUMNS", "monitor_long", "monitor_chart", "band_chart"]

# measure -> (estimated column, realised column or None, axis title, tooltip format)
MEASURES = chartspecs.MONITOR_MEASURES
SOURCES = chartspecs.MONITOR_SOURCES
MONITOR_LONG_COLUMNS = chartspecs.MONITOR_LONG_COLUMNS


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


def monitor_chart(long: pd.DataFrame, models, *, measure: str = "value_per_item", by_time: bool = True,
                  currency: str = "$", reference: float | None = None, legend: bool = True,
                  height: int = 320) -> alt.LayerChart:
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
    return from_spec(chartspecs.monitor_spec(long, models, measure=measure, by_time=by_time, currency=currency,
                                             reference=reference, legend=legend, height=height))


def band_chart(frame: pd.DataFrame, currency: str = "$", height: int = 300) -> alt.LayerChart:
    """Estimated value per item per chunk with its band, the reference band, alerts and realised values.

    Parameters
    ----------
    frame : DataFrame
        ``valuecore.monitor_bands(...).frame``: one row per chunk with
        ``chunk``, ``estimated_value_per_item``, ``band_low``/``band_high``,
        ``reference_low``/``reference_high``, ``alert``, ``drift``,
        ``realised_value_per_item`` (NaN without labels).
    """
    return from_spec(chartspecs.monitor_band_spec(frame, currency, height))
