"""Streamlit glue for the dashboard: shared state, cached data, sidebar and charts.

Pages in ``pages/`` only lay out widgets; numbers come from ``valuecore`` and
charts from ``dashboard.charts`` (pure functions, testable without Streamlit).
"""
