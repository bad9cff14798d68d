"""Value dashboard: judge classifiers by the value they bring, not by accuracy.

The picture frame: page config, the shared sidebar, navigation, then the page.
Run with ``streamlit run app.py``.
"""

import os

# After each call it splits over both cores (a dot over more than 10^4 items, e.g. the Compare page's paired
# differences, the Monitor page's reference moments), OpenBLAS's worker thread spins waiting for the next one, 2^28
# cycles by default: 30-40 ms of a core per new value on those pages (benchmarks/README.md, seventh pass). From
# 2^4 cycles it sleeps until woken. The calls are split the same way and sum to the same bits; only the wait
# changes. OpenBLAS reads this when it loads (numpy's import, by this script's first run on a server), so it stands
# before any import.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import streamlit as st  # noqa: E402

from dashboard import run_script  # noqa: E402
from dashboard.sidebar import render_sidebar, render_values  # noqa: E402

st.set_page_config(page_title="Model value dashboard", page_icon="⚖️", layout="wide")

# The page files live in `pages/`, and until a script calls st.navigation Streamlit treats that folder the old (v1)
# way: a fresh server's first request (and every AppTest run) goes to the file whose name is the URL path, and any
# other path gets a "Page not found" dialog. So each URL path below has a file of its name in `pages/` that hands
# the run over to this script (dashboard.hand_over_to_the_frame); the page scripts keep their own names, and a
# path equal to one of those (/value) runs that script alone, which sends the visitor here (dashboard.state.current).
SCRIPTS = {}  # URL path -> page script, for the fragment below


def page(script: str, **options) -> st.Page:
    """The page of ``script`` (a file of pages/), remembered under its URL path."""
    made = st.Page(script, **options)
    SCRIPTS[made.url_path] = script
    return made


PAGES = {
    "Models and values": [
        page("pages/home.py", title="Start here: the verdict", icon=":material/flag:", default=True,
             url_path="start-here"),
        # The default page is served at "/" only (its url_path is a name Streamlit keys it by, not an address:
        # /start-here is not found); this hidden twin keeps old links to /verdict working.
        page("pages/home.py", title="Start here: the verdict", icon=":material/flag:", url_path="verdict",
             visibility="hidden"),
        page("pages/runs.py", title="Runs", icon=":material/folder_open:", url_path="loaded-runs"),
        page("pages/value.py", title="Value & thresholds", icon=":material/paid:",
             url_path="value-and-thresholds"),
        page("pages/voc.py", title="VOC curves", icon=":material/show_chart:", url_path="voc-curves"),
        # The page takes values (+1 correct, -4 wrong), not costs: named for what it takes. Old links to
        # /cost-matrix still open it through the hidden twin, as /verdict does for the first page.
        page("pages/cost_matrix.py", title="Values per class", icon=":material/grid_on:",
             url_path="values-per-class"),
        page("pages/cost_matrix.py", title="Values per class", icon=":material/grid_on:", url_path="cost-matrix",
             visibility="hidden"),
        page("pages/constraints.py", title="Capacity & guarantees", icon=":material/rule:", url_path="capacity"),
        page("pages/segments.py", title="Segments", icon=":material/groups:", url_path="segments-by-group"),
    ],
    "Trust the numbers": [
        page("pages/calibration.py", title="Calibration", icon=":material/tune:", url_path="calibration-check"),
        page("pages/compare.py", title="Compare two models", icon=":material/compare_arrows:",
             url_path="compare-models"),
        page("pages/monitor.py", title="Monitor (no labels)", icon=":material/monitoring:",
             url_path="monitor-production"),
    ],
    "Ship it": [
        page("pages/export.py", title="Export policy", icon=":material/download:", url_path="export-policy"),
        page("pages/how_value_works.py", title="How value works", icon=":material/help:",
             url_path="how-value-works"),
    ],
}

chosen = st.navigation(PAGES)
frame = render_sidebar()


# A new outcome value (typed, dragged, a preset) reruns the values and the page, not the page list and the rest of
# the sidebar: a rerun the browser redraws in part. Settings drawn outside it rerun everything (dashboard.state).
# The page's script runs here in place of chosen.run(), on full runs and the fragment's reruns alike: Streamlit lets
# a page run once per full run, and gives what it runs the page's own script hash (part of every widget's id), where
# a fragment rerun keeps the hash it started with; run in place, the page's widgets keep one id on every run.
@st.fragment
def values_and_page(frame, script: str):
    render_values(frame)
    run_script(script)


values_and_page(frame, SCRIPTS[chosen.url_path])
