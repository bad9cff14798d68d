"""Tables that read well: no "None" for a missing number, and wide tables that fit the screen.

``st.dataframe`` shows a missing number as the text "None" (a Styler's
``na_rep`` does not change that). :func:`readable` turns each column that has a
missing cell into text, formatted as its column configuration asks (percent,
printf-style, or a plain number), with "–" where the number is missing; its
configuration becomes a text column with the same label and help.

A column the wording module already wrote as text keeps that text: a number format in its
configuration (which Streamlit would apply to the number it parses out of the text, 0.90909 printed
as 0.9091) gives way to a text column with the same label and help.

A column of thresholds (its label says "threshold") reads as everywhere else too:
``valuecore.wording.threshold``, the exact threshold to its last digit, never
a printf format's ``1.0000`` for 0.999997.

Percentages read as everywhere else (``valuecore.wording.percent``, one
decimal: 94.4%, never Streamlit's own "percent" format, which writes 94%).
A ``format="percent"`` column of shares becomes percentages rounded as the
wording module rounds them, shown with ``%.1f%%`` (so it still sorts as
numbers); a column with a share that reads ``<0.1%`` or ``>99.9%`` (never
100.0% for less than all) or a missing one becomes text.

At 1280 px wide, with the sidebar open, a page has about 800 px for a table;
a table wider than that scrolls sideways and hides columns behind the edge, or
cuts headers. :func:`compact_dataframe` shows the columns a reader needs first;
the rest stay one click away.
"""

from __future__ import annotations

import math

import pandas as pd

from valuecore.wording import PERCENT_DIGITS, percent, threshold

__all__ = ["MISSING", "compact_dataframe", "dataframe", "readable", "styled"]

MISSING = "–"


def _is_missing(value) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _number_format(config):
    return (config.get("type_config") or {}).get("format") if isinstance(config, dict) else None


def _formatter(config):
    number_format = _number_format(config)
    if number_format == "percent":
        return percent
    if isinstance(number_format, str) and "%" in number_format:
        return lambda v: number_format % v
    return lambda v: f"{v:,.4g}" if isinstance(v, float) else str(v)


def _label_and_help(config, column):
    label = config.get("label") if isinstance(config, dict) else (config if isinstance(config, str) else None)
    help_text = config.get("help") if isinstance(config, dict) else None
    return (label if label is not None else column), help_text


def _text_config(config, column):
    import streamlit as st

    label, help_text = _label_and_help(config, column)
    return st.column_config.TextColumn(label, help=help_text)


def _is_threshold_column(config, column, values) -> bool:
    """A column of numbers in [0, 1] whose label names thresholds."""
    label, _ = _label_and_help(config, column)
    if "threshold" not in str(label).lower():
        return False
    numbers = [v for v in values if not _is_missing(v)]
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1 for v in numbers) and bool(
        numbers)


def _is_text(values) -> bool:
    """Every cell already written as text (by ``valuecore.wording``), none a number."""
    return bool(values) and all(isinstance(v, str) for v in values)


def _percentages(values) -> list[float] | None:
    """Shares as the percentages ``valuecore.wording.percent`` writes (94.4 for 0.9444), or None when one
    of them cannot be a plain number (missing, not a number, or read as "<0.1%" / ">99.9%")."""
    shown = []
    for value in values:
        if _is_missing(value) or isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        text = percent(value)
        if not text[0].isdigit() and not text.startswith("-"):
            return None
        shown.append(float(text.rstrip("%")))
    return shown


def readable(frame: pd.DataFrame, column_config: dict | None = None) -> tuple[pd.DataFrame, dict]:
    """``(frame, column_config)`` for ``st.dataframe`` with no missing cell shown as "None".

    Columns without a missing cell are left as they are (numbers keep sorting as numbers).

    >>> frame, config = readable(pd.DataFrame({"a": [0.5, None], "b": [1, 2]}))
    >>> frame["a"].tolist(), frame["b"].tolist(), sorted(config)
    (['0.5', '–'], [1, 2], ['a'])
    """
    import streamlit as st

    frame = frame.copy()
    config = dict(column_config or {})
    for column in frame.columns:
        values = frame[column].tolist()
        if _number_format(config.get(column)) is not None and _is_text(values):
            # Streamlit parses a number out of text and prints it with the format: 0.90909 became 0.9091.
            config[column] = _text_config(config.get(column), column)
            continue
        if _number_format(config.get(column)) == "percent":
            shown = _percentages(values)
            if shown is not None:
                frame[column] = shown
                label, help_text = _label_and_help(config.get(column), column)
                config[column] = st.column_config.NumberColumn(label, help=help_text,
                                                               format=f"%.{PERCENT_DIGITS}f%%")
                continue
            frame[column] = [MISSING if _is_missing(v) else percent(v) for v in values]
            config[column] = _text_config(config.get(column), column)
            continue
        if _is_threshold_column(config.get(column), column, values):
            frame[column] = [threshold(v) for v in values]  # "–" where missing (always hand off)
            config[column] = _text_config(config.get(column), column)
            continue
        if not any(_is_missing(v) for v in values):
            continue
        show = _formatter(config.get(column))
        frame[column] = [MISSING if _is_missing(v) else show(v) for v in values]
        config[column] = _text_config(config.get(column), column)
    return frame, config


def styled(frame: pd.DataFrame, formats: dict):
    """``frame.style`` with each column of ``formats`` written by its formatter (``valuecore.wording``'s).

    The one place that knows ``st.dataframe`` shows a missing number as "None" whatever a Styler says: a
    column with a missing cell becomes text ("–" there); the others stay numbers, so they still sort.

    >>> shown = styled(pd.DataFrame({"a": [0.5, None], "b": [0.25, 0.5]}), {"a": percent, "b": percent})
    >>> shown.data["a"].tolist(), shown.data["b"].tolist(), shown.to_html().count("50.0%")
    (['50.0%', '–'], [0.25, 0.5], 2)
    """
    frame = frame.copy()
    kept = {}
    for column, show in formats.items():
        if column not in frame.columns:
            continue
        if any(_is_missing(v) for v in frame[column]):
            frame[column] = [MISSING if _is_missing(v) else show(v) for v in frame[column]]
        else:
            kept[column] = show
    return frame.style.format(kept)


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
