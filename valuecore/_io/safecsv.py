"""CSV outputs that a spreadsheet opens as text, never as a formula.

A model or class name such as ``=HYPERLINK("http://...")`` written into a CSV
cell would run as a formula when someone opens the file in a spreadsheet. The
usual rule (OWASP "CSV injection"): a text cell that starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return gets a leading apostrophe, which
spreadsheets show as text. Numbers, including negative ones, stay numbers.
The policy JSON is not touched: it stays faithful to the names.
"""

from __future__ import annotations

import re

__all__ = ["neutralise_cell", "spreadsheet_safe"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|nan)", re.IGNORECASE)


def neutralise_cell(value):
    """``value`` with a leading apostrophe when it is text a spreadsheet would run as a formula.

    >>> neutralise_cell('=HYPERLINK("http://x")'), neutralise_cell("-4"), neutralise_cell("-cmd"), neutralise_cell(3)
    ('\\'=HYPERLINK("http://x")', '-4', "'-cmd", 3)
    """
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    if value[0] in "+-" and _NUMBER.fullmatch(value):
        return value
    return "'" + value


def spreadsheet_safe(frame):
    """A copy of a DataFrame with every text cell, column name and index label neutralised."""
    from pandas.api import types

    frame = frame.copy()
    for column in frame.columns:
        dtype = frame[column].dtype
        if not (types.is_numeric_dtype(dtype) or types.is_bool_dtype(dtype) or types.is_datetime64_any_dtype(dtype)):
            frame[column] = frame[column].astype(object).map(neutralise_cell)
    frame.columns = [neutralise_cell(c) for c in frame.columns]
    frame.index = frame.index.map(neutralise_cell)
    return frame
