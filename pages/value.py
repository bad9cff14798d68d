"""Value & thresholds: what each model is worth for this use case, and at which threshold.

Reads top to bottom like the page: the rule to apply, the verdict in words,
one row per model (plus "no model"), value against the threshold, then the
confidence of correct and wrong predictions for one model.
"""

import pandas as pd
import streamlit as st

from dashboard import views
from dashboard.charts.value import confidence_histogram_chart, value_threshold_chart
from dashboard.data import workspace
from dashboard.state import current, stop_unless_models
from dashboard.safetext import md_text

selection = current()
ws = workspace(selection)
values = selection.values
all_models = list(selection.report.models)

st.title("Value & thresholds")
use_case = selection.use_case
st.caption(
    f"A correct answer earns {selection.money(use_case.v_correct)}, a hand-off {selection.money(use_case.v_abstain)}, "
    f"a wrong answer {selection.money(use_case.v_wrong)} (ω = {views.omega_text(selection.omega)}). "
    f"Thresholds are tuned on '{selection.tune_split}' and the value is measured on '{selection.eval_split}'."
    + (" Values come from the per-class matrix of the Cost matrix page." if selection.value_matrix is not None else "")
)
if (problem_note := views.load_problem_note(selection.report)) is not None:
    st.caption(":material/warning: " + problem_note)
for note in selection.notes:
    st.warning(note)

stop_unless_models(selection)

for severity, message in views.split_notes(ws, selection.models):
    getattr(st, severity)(message)

# ---- the rule to apply
with_proba = [m for m in selection.models if ws.has_proba(m)]
kinds = [k for k in views.VALUE_PAGE_KINDS if k not in views.NEEDS_PROBA or with_proba]
stored_kind = st.session_state.get("policy_kind", "threshold")
kind = st.radio(
    "Decision rule",
    kinds,
    index=kinds.index(stored_kind) if stored_kind in kinds else 0,
    format_func=views.POLICY_LABELS.get,
    horizontal=True,
    key="value_policy_kind",
    help="Tuned rules pick the thresholds that earn the most on the tuning split. The calibrated threshold "
    "ω/(1+ω) needs no tuning but is only right when confidences are calibrated.",
)
st.session_state["policy_kind"] = kind
if len(with_proba) < len(selection.models):
    top_label = [m for m in selection.models if m not in with_proba]
    st.caption(
        f"{views.short_list(top_label)}: top label only, so the expected-value rule "
        + ("is not offered." if not with_proba else "is not available for them.")
        + " It needs one probability column per class."
    )

what_if_col, slider_col = st.columns([1, 3])
what_if = what_if_col.toggle("What if I pick the threshold?", key="value_what_if")
manual = None
if what_if:
    default = use_case.calibrated_threshold if use_case.calibrated_threshold is not None else 0.5
    manual = slider_col.slider(
        "Your threshold (act when confidence ≥ this)",
        min_value=0.0,
        max_value=1.0,
        value=float(min(max(default, 0.0), 1.0)),
        step=0.005,
        format="%.3f",
        key="value_manual_threshold",
    )

with st.spinner("Tuning and evaluating…"):
    rows = views.model_values(ws, selection.models, kind, values, what_if=manual)
table = views.value_table(rows, with_what_if=manual is not None)

# ---- the verdict
best = views.best_model(rows)
if best is None:
    st.warning("No selected model could be evaluated: " + "; ".join(f"{md_text(r.model)}: {md_text(r.note)}" for r in rows if r.note))  # noqa: E501
    st.stop()
best_row = next(r for r in rows if r.model == best)
threshold, rule = views.policy_summary(best_row.policy)
c1, c2, c3, c4 = st.columns(4)
c1.metric("Best model", best)
c2.metric("Its threshold", views.threshold_text(threshold) if kind in views.GLOBAL_THRESHOLD_KINDS else rule)
c3.metric("Value per item", selection.money(best_row.result.value_per_item))
c4.metric(
    "Over no model, per item",
    selection.money(best_row.result.value_per_item - best_row.no_model_per_item),
    help="No model = hand every item over to a person.",
)
for sentence in views.value_verdict(rows, selection.money):
    st.markdown(sentence)
if any(r.estimated for r in rows):
    st.caption("Estimated values (no labels) assume the models' confidences are calibrated.")

# ---- one row per model, and the no-model baseline
st.dataframe(views.value_styler(table, selection.money), hide_index=True, width="stretch")
skipped = [f"{r.model}: {r.note}" for r in rows if not r.ok and r.note]
for message in skipped:
    st.warning(message)

# ---- value against the threshold
st.subheader("Value against the threshold")
show_tuning = st.checkbox(
    f"Also draw the tuning split ('{selection.tune_split}'), dashed", key="value_show_tuning",
    disabled=selection.tune_split == selection.eval_split,
)
curves, markers = views.curve_frames(ws, rows, values, with_tuning=show_tuning)
if curves.empty:
    st.info("Nothing to draw: no selected model has the evaluated split.")
else:
    st.altair_chart(
        value_threshold_chart(curves, markers, models=all_models, currency=selection.currency,
                              manual_threshold=manual),
        width="stretch",
    )
    st.caption(
        f"Each line: the value per item on '{selection.eval_split}' if every item whose (recalibrated) confidence "
        "is at least the threshold were acted on, and the rest handed over. Points mark the threshold tuned on "
        f"'{selection.tune_split}' (●) and the calibrated threshold ω/(1+ω) (◆): where ● sits below the top "
        "of its line, the tuning split and the evaluated split disagree."
    )

# ---- confidence of correct and wrong predictions (seed 000, Figure 2)
st.subheader("Confidence of correct and wrong predictions")
labelled = [r.model for r in rows if r.ok and not r.estimated]
if not labelled:
    st.info(f"This needs labels, and the '{selection.eval_split}' split has none. Evaluate on a labelled split.")
else:
    model = st.selectbox("Model", labelled, index=labelled.index(best) if best in labelled else 0,
                         key="value_hist_model")
    histogram = ws.histogram(model, selection.eval_split)
    marks = markers[markers["model"] == model][["marker", "threshold"]].rename(columns={"marker": "label"})
    if manual is not None:
        marks = pd.concat([marks, pd.DataFrame({"label": ["your threshold"], "threshold": [manual]})])
    st.altair_chart(confidence_histogram_chart(histogram, marks), width="stretch")
    st.caption(
        "Items right of a threshold are acted on. Wrong answers (orange) right of the line cost money; correct "
        "answers (green) left of it are value given away. A model that separates the two colours well needs "
        "fewer hand-offs."
    )
