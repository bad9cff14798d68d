"""Value dashboard: judge classifiers by the value they bring, not by accuracy.

The picture frame: page config, the shared sidebar, navigation, then the page.
Run with ``streamlit run app.py``.
"""

import streamlit as st

from dashboard.sidebar import render_sidebar

st.set_page_config(page_title="Model value dashboard", page_icon="⚖️", layout="wide")

PAGES = {
    "Models and values": [
        st.Page("pages/runs.py", title="Runs", icon=":material/folder_open:", default=True, url_path="runs"),
        st.Page("pages/value.py", title="Value & thresholds", icon=":material/paid:", url_path="value"),
        st.Page("pages/voc.py", title="VOC curves", icon=":material/show_chart:", url_path="voc"),
        st.Page("pages/cost_matrix.py", title="Cost matrix", icon=":material/grid_on:", url_path="cost-matrix"),
    ],
    "Trust the numbers": [
        st.Page("pages/calibration.py", title="Calibration", icon=":material/tune:", url_path="calibration"),
        st.Page("pages/compare.py", title="Compare two models", icon=":material/compare_arrows:", url_path="compare"),
        st.Page("pages/monitor.py", title="Monitor (no labels)", icon=":material/monitoring:", url_path="monitor"),
    ],
    "Ship it": [
        st.Page("pages/export.py", title="Export policy", icon=":material/download:", url_path="export"),
        st.Page("pages/how_value_works.py", title="How value works", icon=":material/help:", url_path="how-value-works"),
    ],
}

page = st.navigation(PAGES)
render_sidebar()
page.run()
