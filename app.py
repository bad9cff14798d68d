"""Value dashboard: judge classifiers by the value they bring, not by accuracy.

The picture frame: page config, the shared sidebar, navigation, then the page.
Run with ``streamlit run app.py``.
"""

import streamlit as st

from dashboard.sidebar import render_sidebar, render_values

st.set_page_config(page_title="Model value dashboard", page_icon="⚖️", layout="wide")

# URL paths deliberately differ from the file names. The page files live in `pages/`, and
# until a script calls st.navigation Streamlit treats that folder the old (v1) way: a request for
# a path equal to a file name (say /value) runs pages/value.py on its own, without this frame and
# its sidebar. That happens on the first request of a fresh server and on every AppTest rerun.
# With distinct paths such a request falls back to this script, which then resolves the page.
PAGES = {
    "Models and values": [
        st.Page("pages/home.py", title="Start here: the verdict", icon=":material/flag:", default=True,
                url_path="start-here"),
        # The default page is served at "/" only; this hidden twin keeps old links to /verdict working.
        st.Page("pages/home.py", title="Start here: the verdict", icon=":material/flag:", url_path="verdict",
                visibility="hidden"),
        st.Page("pages/runs.py", title="Runs", icon=":material/folder_open:", url_path="loaded-runs"),
        st.Page("pages/value.py", title="Value & thresholds", icon=":material/paid:",
                url_path="value-and-thresholds"),
        st.Page("pages/voc.py", title="VOC curves", icon=":material/show_chart:", url_path="voc-curves"),
        # The page takes values (+1 correct, -4 wrong), not costs: named for what it takes. Old links to
        # /cost-matrix still open it through the hidden twin, as /verdict does for the first page.
        st.Page("pages/cost_matrix.py", title="Values per class", icon=":material/grid_on:",
                url_path="values-per-class"),
        st.Page("pages/cost_matrix.py", title="Values per class", icon=":material/grid_on:", url_path="cost-matrix",
                visibility="hidden"),
        st.Page("pages/constraints.py", title="Capacity & guarantees", icon=":material/rule:", url_path="capacity"),
        st.Page("pages/segments.py", title="Segments", icon=":material/groups:", url_path="segments-by-group"),
    ],
    "Trust the numbers": [
        st.Page("pages/calibration.py", title="Calibration", icon=":material/tune:", url_path="calibration-check"),
        st.Page("pages/compare.py", title="Compare two models", icon=":material/compare_arrows:",
                url_path="compare-models"),
        st.Page("pages/monitor.py", title="Monitor (no labels)", icon=":material/monitoring:",
                url_path="monitor-production"),
    ],
    "Ship it": [
        st.Page("pages/export.py", title="Export policy", icon=":material/download:", url_path="export-policy"),
        st.Page("pages/how_value_works.py", title="How value works", icon=":material/help:",
                url_path="how-value-works"),
    ],
}

page = st.navigation(PAGES)
frame = render_sidebar()


# A new outcome value (typed, dragged, a preset) reruns the values and the page, not the page list and the rest of
# the sidebar: a rerun the browser redraws in part. Settings drawn outside it rerun everything (dashboard.state).
@st.fragment
def values_and_page(frame):
    render_values(frame)
    # Streamlit lets the page st.navigation returned run once per full run; this fragment's reruns run it again
    # (the same page: any other one is a full run).
    page._can_be_called = True
    page.run()


values_and_page(frame)
