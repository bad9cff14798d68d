"""Value & thresholds: what each model is worth for this use case, and at which threshold.

Reads top to bottom like the page: the rule to apply, the verdict in words,
one row per model (plus "no model"), value against the threshold, then the
confidence of correct and wrong predictions for one model. The numbers and
words come from ``dashboard.views.value``; this script lays them out.
"""

import streamlit as st

import valuecore as vc

from dashboard import state, views
from dashboard.data import workspace
from dashboard.tables import dataframe
from dashboard.views import value as view

def _what_if(selection, intro) -> float | None:
    """The what-if toggle and, when on, the threshold the user picks (None when off)."""
    # The slider under the toggle, not beside it: a column of 2/5 cut the label to "What if I pick the thre…" at
    # 800 px.
    what_if = st.toggle("What if I pick the threshold?", value=selection.settings.what_if is not None,
                        key="value_what_if")
    if what_if:
        return state.value(
            st.slider, "what_if", "Your threshold (act when confidence ≥ this)", key="value_manual_threshold",
            default=intro.what_if_default, min_value=0.0, max_value=1.0, step=0.005, format="%.3f", convert=float,
        )
    state.from_widget("what_if", None)
    return None


def _verdict(page) -> None:
    """The verdict in words and tiles, or the reason there is none (and the page stops)."""
    if page.failure is not None:
        st.warning(page.failure)
        st.stop()
    if page.rule_sentence is not None:
        st.markdown(page.rule_sentence)
    # A row that wraps: each tile is as wide as its label and value need, so at 800 px (sidebar open) the four
    # take two rows instead of cutting "Highest on these items" to "Highest on …".
    with st.container(horizontal=True, gap="medium"):
        for tile in page.tiles:
            st.metric(tile.label, tile.value, help=tile.help or None)
    if page.what_if_tiles:
        with st.container(horizontal=True, gap="medium"):
            for tile in page.what_if_tiles:
                st.metric(tile.label, tile.value, delta=tile.delta, delta_color=tile.delta_color, help=tile.help)
    for sentence in page.sentences:
        st.markdown(sentence)
    for note in page.overfitting_notes:
        st.info(note, icon=":material/warning:")  # overfitting, said out loud
    if page.estimated:
        st.caption("Estimated values (no labels) assume the models' confidences are calibrated.")


selection = state.current()
ws = workspace(selection)
intro = view.intro(selection, ws)

st.title("Value & thresholds")
st.caption(intro.caption)
if intro.problem_note is not None:
    st.caption(":material/warning: " + intro.problem_note)
for note in selection.notes:
    st.warning(note)

state.stop_unless_models(selection)

# ---- the rule to apply
kind = state.choice(
    st.radio, "rule", "Decision rule", list(intro.kinds),
    format_func=views.POLICY_LABELS.get,
    horizontal=True,
    key="value_policy_kind",
    help="Tuned rules pick the thresholds that earn the most on the tuning split. The calibrated threshold "
    "ω/(1+ω) needs no tuning but is only right when confidences are calibrated.",
)
for note in intro.rule_notes:
    st.caption(note)
notes_area = st.container()

manual = _what_if(selection, intro)

with st.spinner("Tuning and evaluating…"):
    page = view.build(selection, ws, kind, manual)
for severity, message in page.split_notes:
    getattr(notes_area, severity)(message)

# ---- the verdict
_verdict(page)

# ---- one row per model, and the no-model baseline
column_help = {c: st.column_config.Column(help=words) for c, words in view.COLUMN_HELP.items()}
# Each column as wide as its cells: a 200 px "Model" pushed "Acted on" behind a sideways scroll at 800 px.
table_options = dict(hide_index=True, width="stretch", column_config=column_help)
dataframe(page.table, column_order=[c for c in page.shown_columns if c in page.table.data.columns],
          **table_options)
# The whole table is marshalled only when its details are open: a closed expander's table cost every new value
# as much as the shown one (Streamlit writes a Styler's every cell out again).
with st.expander("All columns", icon=":material/table_view:", key="value_all_columns", on_change="rerun") as details:
    if details.open:
        dataframe(page.table, **table_options)
for caption in page.range_captions:  # what each likely range rests on, in one sentence
    st.caption(caption)
for message in page.skipped:
    st.warning(message)
with st.expander("The exact rule per model (as in the exported policy JSON)"):
    st.code(page.exact_policies_json, language="json")
    st.caption("Every digit of each threshold, and the recalibration fitted before it: the Export page writes "
               "these very policies, and `python -m valuecore apply` evaluates them as they are.")

# ---- value against the threshold
st.subheader("Value against the threshold")
show_tuning = state.value(
    st.checkbox, "value_show_tuning", f"Also draw the tuning split ({views.split_text(selection.tune_split)}), dashed",
    key="value_show_tuning", disabled=selection.tune_split == selection.eval_split,
)
chart = view.curves(selection, ws, page, with_tuning=show_tuning)
if chart.empty:
    st.info("Nothing to draw: no selected model has the evaluated split.")
else:
    st.vega_lite_chart(
        spec=vc.chartspecs.value_threshold_spec(chart.curves, chart.markers, models=list(selection.report.models),
                                                currency=selection.currency, manual_threshold=manual),
        width="stretch",
    )
    st.caption(chart.caption)

# ---- confidence of correct and wrong predictions (seed 000, Figure 2)
st.subheader("Confidence of correct and wrong predictions")
if not page.labelled:
    st.info(f"This needs labels, and the {views.split_text(selection.eval_split)} split has none. Evaluate on a "
            f"labelled split.")
else:
    model = state.choice(st.selectbox, "value_hist_model", "Model", list(page.labelled), key="value_hist_model",
                         default=page.best if page.best in page.labelled else page.labelled[0])
    counts, marks = view.histogram(ws, selection, chart, model, manual)
    st.vega_lite_chart(spec=vc.chartspecs.confidence_histogram_spec(counts, marks), width="stretch")
    st.caption(
        "Items right of a threshold are acted on. Wrong answers (orange) right of the line cost money; correct "
        "answers (green) left of it are value given away. A model that separates the two colours well needs "
        "fewer hand-offs."
    )
