"""Values per class (once "Cost matrix"): what each (true class, action) outcome is worth, and what it changes.

Reads top to bottom like the page: the class set, the editable value matrix
(with a binary TP/TN/FP/FN preset and a reset), then per model the value of
per-class thresholds and of the expected-value rule, and the confusion matrix
with an abstain column and the value each cell contributes.
"""

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

import valuecore as vc
from dashboard import state, views
from dashboard.charts.matrix import confusion_value_chart, value_matrix_chart
from dashboard.data import workspace
from dashboard.settings import values_changes
from dashboard.state import stop_unless_models
from dashboard.safetext import md_text
from dashboard.tables import dataframe as show_dataframe

selection = state.current()
ws = workspace(selection)
report = selection.report
use_case = selection.use_case

st.title("Values per class")
st.caption(
    "When errors are not all alike (missing a fraud costs more than flagging a good customer), give each "
    "(true class, action) pair its own value: positive for what an outcome earns, negative for what it costs. "
    "Rows are the true class, columns the predicted class, then "
    "'abstain' (hand the item to a person)."
)
if (problem_note := views.load_problem_note(selection.report)) is not None:
    st.caption(":material/warning: " + problem_note)
stop_unless_models(selection)

# ---- which class set
class_sets = list(dict.fromkeys(report.models[m].classes for m in selection.models))
if len(class_sets) > 1:
    classes = state.choice(
        st.selectbox, "matrix_classes", "The selected models do not share one class set; edit the matrix for",
        class_sets, default=class_sets[0],
        format_func=lambda c: f"{len(c)} classes ({views.short_list(c, 4)}): "
        + views.short_list([m for m in selection.models if report.models[m].classes == c], 4),
        key="cost_matrix_classes",
    )
    st.caption("Only models with exactly these classes are evaluated below, and the other pages use the "
               "three values while the selected models' classes differ.")
else:
    classes = class_sets[0]
models = [m for m in selection.models if report.models[m].classes == classes]

# ---- the editable matrix
in_force = selection.settings.value_matrix
stored = None
if in_force is not None:
    try:
        stored = vc.policy_json.align_values(in_force, classes)
    except ValueError:
        stored = None
matrix = stored if stored is not None else use_case.value_matrix(classes)
# The editor is keyed by the matrix it shows: a new matrix (an edit, a preset, an import) is a fresh editor.
version = hashlib.sha256(repr((matrix.classes, matrix.values.tolist())).encode()).hexdigest()[:12]


def _use_matrix(values) -> None:
    """Put this matrix in force on every page (and in the link), then draw again."""
    state.change_now(**values_changes(vc.ValueMatrix(classes, np.asarray(values, dtype=float))))


base = views.matrix_frame(matrix)
edited = st.data_editor(
    base,
    key=f"cost_matrix_editor_{version}",
    num_rows="fixed",
    width="stretch",
    column_config={c: st.column_config.NumberColumn(c, format="%g", required=True) for c in base.columns},
)
try:
    edited_matrix = views.frame_matrix(edited, classes)
except ValueError as error:
    st.warning(f"This matrix cannot be used yet: {md_text(error)}.")
    edited_matrix = None
if edited_matrix is not None and not np.array_equal(edited_matrix.values, matrix.values):
    _use_matrix(edited_matrix.values)

in_use = selection.value_matrix is not None and selection.value_matrix.classes == classes
if in_use:
    st.caption("Every page uses this matrix (the sidebar says so, and offers the way back to the three values).")
elif in_force is not None:
    st.caption("A value matrix is in force but does not fit these classes, so the pages use the three values.")
else:
    st.caption("This starts from the three values in the sidebar. Edit a cell and every page switches to it.")

left, right = st.columns([3, 1])
if len(classes) == 2:
    with left.expander("Binary preset: value of TP, TN, FP, FN"):
        with st.form("cost_matrix_binary"):
            positive = st.selectbox("Positive class", list(classes), index=1, key="cost_matrix_positive")
            c1, c2, c3, c4, c5 = st.columns(5)
            tp = c1.number_input("True positive", value=use_case.v_correct, format="%g", key="cost_matrix_tp")
            tn = c2.number_input("True negative", value=use_case.v_correct, format="%g", key="cost_matrix_tn")
            fp = c3.number_input("False positive", value=use_case.v_wrong, format="%g", key="cost_matrix_fp")
            fn = c4.number_input("False negative", value=use_case.v_wrong, format="%g", key="cost_matrix_fn")
            abstain = c5.number_input("Hand-off", value=use_case.v_abstain, format="%g", key="cost_matrix_abstain")
            if st.form_submit_button(f"Use these values ({selection.currency})"):
                negative = next(c for c in classes if c != positive)
                try:
                    preset = vc.ValueMatrix.binary(tp=tp, tn=tn, fp=fp, fn=fn, abstain=abstain,
                                                   classes=(negative, positive))
                except ValueError as error:  # values beyond the computable range, in words
                    st.warning(f"These values cannot be used: {md_text(error)}.")
                else:
                    order = [preset.classes.index(c) for c in classes]
                    _use_matrix(preset.values[order][:, order + [2]])
if right.button("Reset to the three values", key="cost_matrix_reset", disabled=in_force is None):
    state.change_now(matrix=None)

with st.expander("See the matrix as colours"):
    cells = base.reset_index().melt(id_vars="true class", var_name="predicted", value_name="value")
    cells = cells.rename(columns={"true class": "true"})
    st.altair_chart(value_matrix_chart(cells, currency=selection.currency), width="stretch")

# ---- per model: per-class thresholds and the expected-value rule
st.subheader("What this matrix is worth, model by model")
left_out = [m for m in selection.models if m not in models]
if left_out:
    st.caption(f"Left out (other classes): {md_text(views.short_list(left_out))}.")
for severity, message in views.split_notes(ws, models, "class_thresholds"):
    getattr(st, severity)(message)

with st.spinner("Tuning per-class thresholds…"):
    fitted = {model: views.matrix_policies(ws, model, matrix) for model in models}
records = []
for model, policies in fitted.items():
    for kind, (policy, result, note) in policies.items():
        records.append({
            "model": model,
            "rule": views.POLICY_LABELS[kind],
            "value_total": result.value_total if result is not None else np.nan,
            "value_per_item": result.value_per_item if result is not None else np.nan,
            "coverage": result.coverage if result is not None else np.nan,
            "note": note if result is None else ("estimated without labels" if result.estimated else ""),
        })
summary = pd.DataFrame(records, columns=["model", "rule", "value_total", "value_per_item", "coverage", "note"])
best_per_model = summary.groupby("model")["value_per_item"].transform("max")


def _highlight(row):
    value = summary.loc[row.name, "value_per_item"]
    best = pd.notna(value) and value == best_per_model.loc[row.name]
    return ["font-weight: 600; background-color: rgba(0, 158, 115, 0.15)" if best else ""] * len(row)


display = summary.rename(columns={"model": "Model", "rule": "Rule", "value_total": "Total value",
                                  "value_per_item": "Value per item", "coverage": "Acted on", "note": "Note"})
money = lambda x: selection.money(x) if pd.notna(x) else "–"  # noqa: E731
# As text: st.dataframe would show a missing number as "None" whatever the Styler says.
for column, show in {"Total value": money, "Value per item": money,
                     "Acted on": vc.wording.percent}.items():
    if display[column].isna().any():
        display[column] = [show(x) for x in display[column]]
show_dataframe(
    display.style.format({c: f for c, f in {"Total value": money, "Value per item": money,
                          "Acted on": vc.wording.percent}.items() if pd.api.types.is_numeric_dtype(display[c])})
    .apply(_highlight, axis=1),
    hide_index=True,
    width="stretch",
)
st.caption("Per-class thresholds: one confidence threshold per predicted class, tuned on "
           f"{views.split_text(selection.tune_split)} or derived from the matrix for calibrated confidences. "
           f"The expected-value "
           "rule takes, for each item, the action with the highest expected value under the model's probabilities.")

# ---- one model in detail
if not models:
    st.stop()
st.subheader("Where the value comes from")
model_col, rule_col = st.columns(2)
model = state.choice(model_col.selectbox, "matrix_model", "Model", models, key="cost_matrix_model", default=models[0])
available = [k for k, (_, result, _) in fitted[model].items() if result is not None]
if not available:
    st.info(f"{md_text(model)} cannot be evaluated here: " + md_text("; ".join(n for _, _, n in fitted[model].values() if n)))  # noqa: E501
    st.stop()
kind = state.choice(rule_col.radio, "matrix_rule", "Rule", available, format_func=views.POLICY_LABELS.get,
                    key="cost_matrix_rule", default=available[0], horizontal=True)
policy, result, _ = fitted[model][kind]
missing = [views.POLICY_LABELS[k] for k, (_, r, _) in fitted[model].items() if r is None]
if missing:
    notes = {views.POLICY_LABELS[k]: n for k, (_, r, n) in fitted[model].items() if r is None}
    st.caption(md_text("; ".join(f"{label}: {note}" for label, note in notes.items())))

table_col, chart_col = st.columns([1, 2])
with table_col:
    st.markdown("**Per-class thresholds**")
    show_dataframe(views.class_threshold_table(fitted[model], classes), width="stretch")
with chart_col:
    st.markdown(f"**{md_text(model)}, {views.POLICY_LABELS[kind].lower()}: items per cell, coloured by the value they bring**")  # noqa: E501
    st.altair_chart(confusion_value_chart(views.confusion_frame(result), currency=selection.currency),
                    width="stretch")
st.caption(
    f"Total {selection.money(result.value_total)} on {result.n_items:,.0f} items of "
    f"{views.split_text(selection.eval_split)} "
    f"({selection.money(result.value_per_item)} per item); {views.percent(result.coverage)} acted on."
    + (" Estimated from probabilities: this split has no labels." if result.estimated else "")
)
