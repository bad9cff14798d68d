"""Start here: the one model and rule to deploy, at what threshold, and what it is worth.

Reads top to bottom like the page: the values in force (the value matrix's
own values when one is set), the recommendation in one sentence, how many
items a period brings, six tiles (rule, share automated, value per item and
per period, the no-model baseline), why this one and what separates it from
the next, every (model, rule) weighed, and the report to share. The numbers
and words come from ``dashboard.views.home``; this script lays them out.
"""

import streamlit as st

from dashboard import segmentfiles, state
from dashboard import home as shared
from dashboard.data import workspace
from dashboard.state import current, stop_unless_models
from dashboard.tables import dataframe as show_dataframe
from dashboard.views import home
from dashboard.views import home as view

selection = current()
ws = workspace(selection)
intro = view.intro(selection)

st.title("Which model should we deploy?")
st.caption(intro.caption)
if intro.values_frame is not None:
    with st.expander("The values in force", expanded=intro.values_expanded):
        show_dataframe(intro.values_frame, hide_index=True, width="stretch")
if intro.problem_note is not None:
    st.caption(":material/warning: " + intro.problem_note)
for note in selection.notes:
    st.warning(note)
stop_unless_models(selection)

# The segment column set on the Segments page: each model's thresholds per segment are weighed too.
segments = shared.segment_choice(selection, segmentfiles.source_files(selection.settings.source, state.uploads()))
page = view.build(selection, ws, segments)
st.subheader(page.headline, anchor=False)
if page.raw_confidence_note:
    st.info(page.raw_confidence_note, icon=":material/info:")


# A new volume or period changes the tiles, the per-period sentence and the report, nothing else: it reruns
# this part alone, not the sidebar and the recommendation.
@st.fragment
def per_period(page: view.HomePage) -> None:
    volume_col, period_col, _ = st.columns([2, 2, 3])
    volume = state.value(
        volume_col.number_input, "home_volume", "Items you expect", min_value=1, max_value=10**12, step=1000,
        key="home_volume_input", convert=int, help="How many items the model would see per period (chosen beside "
        "it), to turn value per item into value per period. Capacity & guarantees has its own setting, per day.",
    )
    period = state.choice(period_col.selectbox, "home_period", "per", view.PERIODS, key="home_period_input")
    numbers = view.per_period(page, selection.currency, float(volume), period)
    for widths, row in numbers.tile_rows:
        for column, tile in zip(st.columns(list(widths)), row):
            column.metric(tile.label, tile.value, help=tile.help)
    st.markdown(page.reason)
    if page.range_words:
        st.caption(page.range_words)
    if numbers.per_period is not None:
        st.markdown(numbers.per_period)
    if not page.has_candidates:  # otherwise they are listed with the candidates, below
        for note in page.skipped:
            st.caption(note)
    st.download_button(
        "Download report", home.report_maker(selection, page.report_kind, float(volume), period,
                                             recommend_kinds=page.report_kinds),
        file_name="model-value-report.html", mime="text/html", icon=":material/description:", on_click="ignore",
        help="One HTML file to share: this recommendation, the settings, the models with their uncertainty, the "
        "value table, the charts, calibration at a glance and the policy JSON. It opens in any browser without a "
        "network.",
    )
    state.write_url(state.get())  # a fragment rerun skips the sidebar, which mirrors the settings in the URL


per_period(page)

if page.has_candidates:
    # Drawn only while open: closed, the table would still be sent and redrawn on every new value.
    every = st.expander("Every model and rule weighed, best first", key="home_candidates", on_change="rerun")
    if every.open:
        with every:
            show_dataframe(page.candidates, hide_index=True, width="stretch")
            st.caption(view.CANDIDATES_CAPTION)
            for note in page.skipped:
                st.caption(note)
