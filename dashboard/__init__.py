"""Streamlit glue for the dashboard: settings, the state protocol, cached data, sidebar and charts.

Start with ``dashboard/state.py``: its docstring states the rules for the
user's settings (one frozen value, read from the link, changed in one place).
Pages in ``pages/`` only lay out widgets; numbers come from ``valuecore``
(one pipeline, cached by ``dashboard.data.Workspace``) and charts from
``dashboard.charts`` (pure functions, testable without Streamlit).
"""
