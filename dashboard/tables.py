"""Tables that read well: no "None" for a missing number, and wide tables that fit the screen.

``st.dataframe`` shows a missing number as the text "None" (a Styler's
``na_rep`` does not change that). :func:`readable` turns each column that has a
missing cell into text, formatted as its column configuration asks (percent,
printf-style, or a plain number), with "–" where the number is missing; its
configuration becomes a text column with the same label and help.

At 1280 px wide, with the sidebar open, a page has about 800 px for a table;
a table wider than that scrolls sideways and hides columns behind the edge, or
cuts headers. :func:`compact_dataframe` shows the columns a reader needs first;
the rest stay one click away.
"""

from __future__ import annotations

import math

import pandas as pd

__all__ = ["MISSING", "compact_dataframe", "dataframe", "readable"]

MISSING = "–"


def _is_missing(value) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _formatter(config):
    number_format = None
    if isinstance(config, dict):
        number_format = (config.get("type_config") or {}).get("format")
    if number_format == "percent":
        return lambda v: f"{v:.1%}"
    if isinstance(number_format, str) and "%" in number_format:
        return lambda v: number_format % v
    return lambda v: f"{v:,.4g}" if isinstance(v, float) else str(v)


def _text_config(config, column):
    import streamlit as st

    label = config.get("label") if isinstance(config, dict) else (config if isinstance(config, str) else None)
    help_text = config.get("help") if isinstance(config, dict) else None
    return st.column_config.TextColumn(label if label is not None else column, help=help_text)


def readable(frame: pd.DataFrame, column_config: dict | None = None) -> tuple[pd.DataFrame, dict]:
    """``(frame, column_config)`` for ``st.dataframe`` with no missing cell shown as "None".

    Columns without a missing cell are left as they are (numbers keep sorting as numbers).

    >>> frame, config = readable(pd.DataFrame({"a": [0.5, None], "b": [1, 2]}))
    >>> frame["a"].tolist(), frame["b"].tolist(), sorted(config)
    (['0.5', '–'], [1, 2], ['a'])
    """
    frame = frame.copy()
    config = dict(column_config or {})
    for column in frame.columns:
        values = frame[column].tolist()
        if not any(_is_missing(v) for v in values):
            continue
        show = _formatter(config.get(column))
        frame[column] = [MISSING if _is_missing(v) else show(v) for v in values]
        config[column] = _text_config(config.get(column), column)
    return frame, config


def dataframe(data, *args, column_config: dict | None = None, **kwargs):
    """``st.dataframe`` through :func:`readable` (a Styler is passed on as it is)."""
    import streamlit as st

    if isinstance(data, pd.DataFrame):
        data, column_config = readable(data, column_config)
    return st.dataframe(data, *args, column_config=column_config, **kwargs)


def compact_dataframe(data, columns, *, details: str = "All columns", **kwargs) -> None:
    """``st.dataframe`` of ``columns`` only, then the whole table in a collapsed "details" expander.

    Parameters
    ----------
    data : DataFrame or Styler
    columns : sequence of str
        The columns shown by default, in order (those missing from ``data`` are skipped).
    details : str
        The expander's label.
    **kwargs
        Passed to both ``st.dataframe`` calls (``hide_index``, ``column_config``, ...).
    """
    import streamlit as st

    frame = getattr(data, "data", data)  # a Styler keeps its frame in .data
    shown = [c for c in columns if c in frame.columns]
    dataframe(data, column_order=shown, **kwargs)
    if len(shown) < len(frame.columns):
        with st.expander(details, icon=":material/table_view:"):
            dataframe(data, **kwargs)
