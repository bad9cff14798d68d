"""Values per class (once "Cost matrix"): what each (true class, action) outcome is worth, and what it changes.

Reads top to bottom like the page: the class set, the editable value matrix
(with a binary TP/TN/FP/FN preset and a reset), then per model the value of
per-class thresholds and of the expected-value rule, and the confusion matrix
with a hand-off column and the value each cell contributes. The figures come
from ``dashboard.views.values_per_class.build``.
"""

import streamlit as st

import valuecore as vc

from dashboard import state, views
from dashboard.data import workspace
from dashboard.safetext import md_text
from dashboard.state import stop_unless_models
from dashboard.tables import dataframe as show_dataframe
from dashboard.views import values_per_class as view


def _class_set(selection):
    """The class set whose matrix is edited: the only one, or the user's pick when the models differ."""
    class_sets = view.class_sets(selection)
    if len(class_sets) < 2:
        return class_sets[0]
    classes = state.choice(
        st.selectbox, "matrix_classes", "The selected models do not share one class set; edit the matrix for",
        class_sets, default=class_sets[0], format_func=lambda c: view.class_set_label(selection, c),
        key="cost_matrix_classes",
    )
    st.caption("Only models with exactly these classes are evaluated below, and the other pages use the "
               "three values while the selected models' classes differ.")
    return classes


def _binary_preset(selection, classes) -> None:
    """Two classes: the matrix from the value of TP, TN, FP, FN and a hand-off."""
    use_case = selection.use_case
    with st.form("cost_matrix_binary"):
        positive = st.selectbox("Positive class", list(classes), index=1, key="cost_matrix_positive")
        c1, c2, c3, c4, c5 = st.columns(5)
        tp = c1.number_input("True positive", value=use_case.v_correct, format="%g", key="cost_matrix_tp")
        tn = c2.number_input("True negative", value=use_case.v_correct, format="%g", key="cost_matrix_tn")
        fp = c3.number_input("False positive", value=use_case.v_wrong, format="%g", key="cost_matrix_fp")
        fn = c4.number_input("False negative", value=use_case.v_wrong, format="%g", key="cost_matrix_fn")
        abstain = c5.number_input("Hand-off", value=use_case.v_abstain, format="%g", key="cost_matrix_abstain")
        if st.form_submit_button(f"Use these values ({selection.currency})"):
            try:
                preset = view.binary_changes(classes, positive, tp=tp, tn=tn, fp=fp, fn=fn, abstain=abstain)
            except ValueError as error:  # values beyond the computable range, in words
                st.warning(f"These values cannot be used: {md_text(error)}.")
            else:
                state.change_now(**preset)


def _matrix_as_colours(cells, currency: str) -> None:
    """The matrix as a chart in an expander, drawn only while it is open: drawn in the closed expander, whose
    layout the browser skips, it kept its width when the window narrowed and showed 946 px wide in a 786 px
    column when opened (tests/e2e/test_e2e_resize.py)."""
    with st.expander("See the matrix as colours", key="cost_matrix_colours", on_change="rerun") as colours:
        if colours.open:
            st.vega_lite_chart(spec=vc.chartspecs.value_matrix_spec(cells, currency=currency), width="stretch")


selection = state.current()
ws = workspace(selection)

st.title("Values per class")
st.caption(
    "When errors are not all alike (missing a fraud costs more than flagging a good customer), give each "
    "(true class, action) pair its own value: positive for what an outcome earns, negative for what it costs. "
    "Rows are the true class; columns 'hand off' (the item goes to a person), kept in view beside the rows, then "
    "the predicted class."
)
stop_unless_models(selection)  # first: with nothing loaded, it says why ("the models shown loaded fine" did not)
if (problem_note := views.load_problem_note(selection.report)) is not None:
    st.caption(":material/warning: " + problem_note)

# ---- which class set
classes = _class_set(selection)

with st.spinner("Tuning per-class thresholds…"):
    page = view.build(selection, ws, classes)

# ---- the editable matrix
edited = st.data_editor(
    page.editor,
    key=f"cost_matrix_editor_{page.editor_version}",  # a new matrix (an edit, a preset, an import): a fresh editor
    num_rows="fixed",
    width="stretch",
    column_config=view.editor_columns(page.editor.columns),
)
changes, problem = view.edited_changes(edited, page.matrix)
if problem is not None:
    st.warning(problem)
if changes is not None:
    state.change_now(**changes)  # in force on every page (and in the link), then drawn again
st.caption(page.status)

# One below the other: in a quarter of the page the button read "Reset to the…" at 800 px.
if len(classes) == 2:
    with st.expander("Binary preset: value of TP, TN, FP, FN"):
        _binary_preset(selection, classes)
if st.button("Reset to the three values", key="cost_matrix_reset",
             disabled=selection.settings.value_matrix is None):
    state.change_now(matrix=None)

_matrix_as_colours(page.cells, selection.currency)

# ---- per model: per-class thresholds and the expected-value rule
st.subheader("What this matrix is worth, model by model")
if page.left_out_note:
    st.caption(page.left_out_note)
for severity, message in page.notes:
    getattr(st, severity)(message)
show_dataframe(page.summary_styled, column_order=list(page.summary_shown), hide_index=True, width="stretch")
with st.expander("All columns", icon=":material/table_view:"):
    show_dataframe(page.summary_styled, column_order=list(page.summary_columns), hide_index=True, width="stretch")
st.caption(page.summary_caption)

# ---- one model in detail
if not page.models:
    st.stop()
st.subheader("Where the value comes from")
model_col, rule_col = st.columns(2)
model = state.choice(model_col.selectbox, "matrix_model", "Model", list(page.models), key="cost_matrix_model",
                     default=page.models[0])
available = page.rules(model)
if not available:
    st.info(f"{md_text(model)} cannot be evaluated here: {page.why_not(model)}")
    st.stop()
kind = state.choice(rule_col.radio, "matrix_rule", "Rule", available, format_func=views.POLICY_LABELS.get,
                    key="cost_matrix_rule", default=available[0], horizontal=True)
if why_not := page.why_not(model):
    st.caption(why_not)
detail = page.detail(model, kind)
# The chart, then the thresholds, one above the other: side by side at 800 px (a laptop with the sidebar open) the
# table's second column was cut and the chart's cells wrote their counts over each other.
st.markdown(detail.title)
# At least 200 px: with two classes the default 160 cut the colour legend's lower end.
st.vega_lite_chart(spec=vc.chartspecs.confusion_value_spec(detail.cells, currency=selection.currency,
                                                           height=max(200, 34 * len(classes))),
                   width="stretch")
st.caption(detail.caption)
# Shown whichever rule is picked: the title says which rules they belong to (beside "one threshold" it misled).
st.markdown("**The per-class rules' thresholds**")
show_dataframe(detail.thresholds, width="content")
