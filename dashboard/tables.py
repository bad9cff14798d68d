"""Wide tables that fit the screen: a few columns by default, every column in a details view.

At 1280 px wide, with the sidebar open, a page has about 800 px for a table;
a table wider than that scrolls sideways and hides columns behind the edge, or
cuts headers. Each page names the columns a reader needs first; the rest stay
one click away.
"""

from __future__ import annotations

import streamlit as st


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
    frame = getattr(data, "data", data)  # a Styler keeps its frame in .data
    shown = [c for c in columns if c in frame.columns]
    st.dataframe(data, column_order=shown, **kwargs)
    if len(shown) < len(frame.columns):
        with st.expander(details, icon=":material/table_view:"):
            st.dataframe(data, **kwargs)
