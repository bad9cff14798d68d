"""Start here: which model to deploy, at what threshold, and what it is worth.

Reads top to bottom like the page: the verdict in one sentence, how many
items a period brings, six tiles (rule, share automated, value per item and
per period, the no-model baseline), the supporting sentences with ties and
degenerate values in plain words, every model's standing, and the report to
share.
"""

import streamlit as st

import valuecore as vc
from dashboard import home, state, views
from dashboard.data import workspace
from dashboard.state import current, stop_unless_models
from dashboard.tables import dataframe as show_dataframe
from dashboard.safetext import md_text

selection = current()
ws = workspace(selection)
use_case = selection.use_case
currency = selection.currency

st.title("Which model should we deploy?")
st.caption(
    f"A correct answer earns {vc.wording.money(use_case.v_correct, currency)}, a hand-off to a person "
    f"{vc.wording.money(use_case.v_abstain, currency)}, a wrong answer {vc.wording.money(use_case.v_wrong, currency)}"
    + (" (per-class values from the Cost matrix page)" if selection.value_matrix is not None else "")
    + f". Thresholds are tuned on {views.split_text(selection.tune_split)}, value is measured on "
      f"{views.split_text(selection.eval_split)}. "
    "Change the values in the sidebar."
)
if (problem_note := views.load_problem_note(selection.report)) is not None:
    st.caption(":material/warning: " + problem_note)
for note in selection.notes:
    st.warning(note)
stop_unless_models(selection)

kinds, _ = views.rule_options(ws, selection.models, selection.values)
kind = selection.rule if selection.rule in kinds else kinds[0]  # the rule every page uses (the Value page's)
verdict, notes = home.page_verdict(ws, selection.models, kind, selection.values)

st.subheader(md_text(vc.wording.verdict_headline(verdict, currency)), anchor=False)

volume_col, period_col, _ = st.columns([2, 2, 3])
volume = state.value(
    volume_col.number_input, "home_volume", "Items you expect", min_value=1, max_value=10**12, step=1000,
    key="home_volume_input", convert=int, help="How many items the model would see per period, to turn value per "
    "item into value per period.",
)
period = state.choice(period_col.selectbox, "home_period", "per", home.PERIODS, key="home_period_input")

tiles = home.tiles(verdict, currency, float(volume), period)
for widths, row in home.tile_rows(tiles):
    for column, tile in zip(st.columns(widths), row):
        column.metric(tile.label, tile.value, help=tile.help)

for sentence in vc.wording.verdict_sentences(verdict, currency, period=period, volume=float(volume)):
    st.markdown(md_text(sentence))
for note in notes:
    st.caption(md_text(note))

st.download_button(
    "Download report", home.report_maker(selection, kind, float(volume), period), file_name="model-value-report.html",
    mime="text/html", icon=":material/description:", on_click="ignore",
    help="One HTML file to share: the settings, this verdict with its uncertainty, the value table, the charts, "
    "calibration at a glance and the policy JSON. It opens in any browser without a network.",
)

if verdict.standings:
    with st.expander("Every model, best first", expanded=False):
        show_dataframe(home.standings_frame(verdict, currency), hide_index=True, width="stretch")
        st.caption(
            "Likely range: the 95% interval of the value per item on new items like these. 'Cannot be told apart': "
            "a paired comparison on the same items (or, for runs on different items, overlapping ranges) cannot "
            "exclude that the model is as good as the best. The rule and its threshold are on the Value page."
        )
