"""Start here: the one model and rule to deploy, at what threshold, and what it is worth.

Reads top to bottom like the page: the values in force (the value matrix's
own values when one is set), the recommendation in one sentence, how many
items a period brings, six tiles (rule, share automated, value per item and
per period, the no-model baseline), why this one and what separates it from
the next, every (model, rule) weighed, and the report to share.
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
matrix = selection.value_matrix

st.title("Which model should we deploy?")
# Before any run is loaded there is no split to name (it used to read "tuned on 'None'").
splits_text = (f"Thresholds are tuned on {views.split_text(selection.tune_split)}, value is measured on "
               f"{views.split_text(selection.eval_split)}. " if selection.eval_split is not None else "")
if matrix is None:
    st.caption(
        f"A correct answer earns {vc.wording.money(use_case.v_correct, currency)}, a hand-off to a person "
        f"{vc.wording.money(use_case.v_abstain, currency)}, a wrong answer "
        f"{vc.wording.money(use_case.v_wrong, currency)}. " + splits_text + "Change the values in the sidebar."
    )
else:
    st.caption(
        "Per-class values from the Values per class page are in force: what each outcome earns depends on the true "
        "class and on what is done with the item (below). " + splits_text + "Edit them on the Values per class page."
    )
    with st.expander("The values in force", expanded=len(matrix.classes) <= 3):
        show_dataframe(home.values_frame(matrix, currency), hide_index=True, width="stretch")
if (problem_note := views.load_problem_note(selection.report)) is not None:
    st.caption(":material/warning: " + problem_note)
for note in selection.notes:
    st.warning(note)
stop_unless_models(selection)

kinds, _ = views.rule_options(ws, selection.models, selection.values)
recommendation = home.page_recommendation(ws, selection.models, selection.values)

# The threshold with the digits that matter on the data shown (the exact one is in the tile's help).
shown_confidences = (views.shown_confidences(ws, recommendation.model) if recommendation.model is not None
                     else None)
st.subheader(md_text(vc.wording.recommendation_headline(recommendation, shown_confidences)), anchor=False)

volume_col, period_col, _ = st.columns([2, 2, 3])
volume = state.value(
    volume_col.number_input, "home_volume", "Items you expect", min_value=1, max_value=10**12, step=1000,
    key="home_volume_input", convert=int, help="How many items the model would see per period, to turn value per "
    "item into value per period.",
)
period = state.choice(period_col.selectbox, "home_period", "per", home.PERIODS, key="home_period_input")

tiles = home.recommendation_tiles(recommendation, currency, float(volume), period, shown_confidences)
for widths, row in home.tile_rows(tiles):
    for column, tile in zip(st.columns(widths), row):
        column.metric(tile.label, tile.value, help=tile.help)

st.markdown(md_text(vc.wording.recommendation_reason(recommendation, currency)))
if recommendation.model is not None and (words := views.model_range_words(
        ws, recommendation.model, recommendation.policy, selection.values, currency)):
    st.caption(md_text(words))
if recommendation.model is not None:
    gain = recommendation.gain_per_item
    st.markdown(md_text(
        f"At {vc.wording.significant(float(volume))} items per {period} that is "
        f"{vc.wording.money(recommendation.per_item * float(volume), currency)} per {period} "
        f"({vc.wording.money(gain * float(volume), currency)} per {period} more than no model)."
    ))
if not recommendation.candidates:  # otherwise they are listed with the candidates, below
    for note in recommendation.skipped:
        st.caption(md_text(f"Not weighed: {note}."))

st.download_button(
    "Download report", home.report_maker(selection, selection.rule if selection.rule in kinds else kinds[0],
                                         float(volume), period, recommend_kinds=tuple(kinds)),
    file_name="model-value-report.html", mime="text/html", icon=":material/description:", on_click="ignore",
    help="One HTML file to share: this recommendation, the settings, the models with their uncertainty, the value "
    "table, the charts, calibration at a glance and the policy JSON. It opens in any browser without a network.",
)

if recommendation.candidates:
    with st.expander("Every model and rule weighed, best first", expanded=False):
        show_dataframe(home.candidates_frame(recommendation, currency), hide_index=True, width="stretch")
        st.caption(
            "Every decision rule the settings allow, tuned on the tuning split and judged on the evaluated items. "
            "Likely range: the 95% interval of the value per item on new items like these. 'Level with the best': "
            "a paired comparison on the same items (or, for runs on different items, overlapping ranges) cannot "
            "exclude that it is as good as the best; a model earning no more than no model is never level. Among "
            "those level with the best, the simplest rule is recommended, then the one whose range starts higher."
        )
        for note in recommendation.skipped:
            st.caption(md_text(f"Not weighed: {note}."))
