"""Streamlit glue for the dashboard: settings, the state protocol, cached data, sidebar and charts.

Start with ``dashboard/state.py``: its docstring states the rules for the
user's settings (one frozen value, read from the link, changed in one place).
Pages in ``pages/`` only lay out widgets; numbers come from ``valuecore``
(one pipeline, its stages kept by the cache ``dashboard.data.StageCache`` hands it) and charts are the
Vega-Lite specs of ``valuecore.chartspecs`` (the ones the HTML report draws), drawn by ``st.vega_lite_chart``.
"""
