"""Value & thresholds: what each model is worth for this use case, and at which threshold.

Reads top to bottom like the page: the rule to apply, the verdict in words,
one row per model (plus "no model"), value against the threshold, then the
confidence of correct and wrong predictions for one model.
"""

import json

import pandas as pd
import streamlit as st

import valuecore as vc

from dashboard import home, state, views
from dashboard.charts.value import confidence_histogram_chart, value_threshold_chart
from dashboard.data import workspace
from dashboard.tables import compact_dataframe
from dashboard.safetext import md_text

VALUE_SHOWN = ("★", "Model", "Threshold", "Value per item", "Acted on", "Gain over no model, per item")
# With the what-if on, the picked threshold's numbers sit beside the tuned ones, not in the collapsed details.
WHAT_IF_SHOWN = ("Yours: per item", "Yours: acted on")

selection = state.current()
ws = workspace(selection)
values = selection.values
all_models = list(selection.report.models)

st.title("Value & thresholds")
use_case = selection.use_case
if selection.value_matrix is not None:
    values_text = "Values come from the per-class value matrix (Values per class page)."
else:
    values_text = (f"A correct answer earns {selection.money(use_case.v_correct)}, a hand-off "
                   f"{selection.money(use_case.v_abstain)}, a wrong answer {selection.money(use_case.v_wrong)} "
                   f"(ω = {views.omega_text(selection.omega)}).")
splits_text = (f" Thresholds are tuned on {views.split_text(selection.tune_split)} and the value is measured on "
               f"{views.split_text(selection.eval_split)}." if selection.eval_split is not None else "")
st.caption(values_text + splits_text)
if (problem_note := views.load_problem_note(selection.report)) is not None:
    st.caption(":material/warning: " + problem_note)
for note in selection.notes:
    st.warning(note)

state.stop_unless_models(selection)

# ---- the rule to apply
kinds, rule_notes = views.rule_options(ws, selection.models, values)
kind = state.choice(
    st.radio, "rule", "Decision rule", kinds,
    format_func=views.POLICY_LABELS.get,
    horizontal=True,
    key="value_policy_kind",
    help="Tuned rules pick the thresholds that earn the most on the tuning split. The calibrated threshold "
    "ω/(1+ω) needs no tuning but is only right when confidences are calibrated.",
)
for note in rule_notes:
    st.caption(note)
for severity, message in views.split_notes(ws, selection.models, kind):
    getattr(st, severity)(message)

what_if_col, slider_col = st.columns([2, 3])  # wide enough for the toggle label at 1280 px
what_if = what_if_col.toggle("What if I pick the threshold?", value=selection.settings.what_if is not None,
                             key="value_what_if")
manual = None
if what_if:
    default = use_case.calibrated_threshold if use_case.calibrated_threshold is not None else 0.5
    with slider_col:
        manual = state.value(
            st.slider, "what_if", "Your threshold (act when confidence ≥ this)", key="value_manual_threshold",
            default=float(min(max(default, 0.0), 1.0)), min_value=0.0, max_value=1.0, step=0.005, format="%.3f",
            convert=float,
        )
else:
    state.from_widget("what_if", None)

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
verdict, _ = home.page_verdict(ws, selection.models, kind, values)
if verdict.degenerate != "no_models":  # unlabelled runs: the values below are estimates, not tested
    st.markdown(f"**With {md_text(vc.wording.rule_name(kind))}:** "
                + md_text(vc.wording.verdict_headline(verdict, selection.currency))
                + " What to deploy, over every rule, is on the first page.")
# Thresholds with the digits that tell their decisions apart on the data shown; every digit in the help and JSON.
confidences = {r.model: views.shown_confidences(ws, r.model) for r in rows if r.ok}
global_threshold = kind in views.GLOBAL_THRESHOLD_KINDS and threshold == threshold and threshold is not None
threshold_shown = (views.threshold_on_data(threshold, confidences.get(best)) if global_threshold and threshold > 0
                   else views.threshold_text(threshold) if kind in views.GLOBAL_THRESHOLD_KINDS else md_text(rule))
tile = home.best_tile(verdict, best)
# A long threshold or model name gets half the row (a quarter of 1280 px cut "full_precision").
if max(len(threshold_shown), len(tile.value)) > home.CHARACTERS_IN_A_QUARTER:
    c1, c2 = st.columns(2)
    c3, c4 = st.columns(2)
else:
    c1, c2, c3, c4 = st.columns(4)
c1.metric(tile.label, tile.value, help=tile.help)
c2.metric("Its threshold", threshold_shown,
          help=views.threshold_help(threshold) if global_threshold and threshold > 0 else None)
c3.metric("Value per item", selection.money(best_row.result.value_per_item))
c4.metric(
    "Over no model, per item",
    selection.money(best_row.result.value_per_item - best_row.no_model_per_item),
    help="No model = hand every item over to a person.",
)
if manual is not None:
    # The what-if changes numbers in view: the best model at the picked threshold, against its tuned one.
    picked = best_row.what_if
    w1, w2, w3 = st.columns(3)
    w1.metric("Your threshold", views.threshold_number(manual),
              help="Act when confidence ≥ this; move the slider above to try another.")
    if picked is None:
        w2.metric("Value per item, your threshold", "–", help=f"No value at this threshold for {md_text(best)}.")
    else:
        _, picked_per_item, picked_coverage = picked
        tuned_per_item = best_row.result.value_per_item
        w2.metric("Value per item, your threshold", selection.money(picked_per_item),
                  delta=f"{selection.money(picked_per_item - tuned_per_item)} vs tuned",
                  delta_color="normal" if picked_per_item != tuned_per_item else "off",
                  help=f"{md_text(best)} at your threshold, against its tuned threshold "
                  f"({selection.money(tuned_per_item)} per item). Every model's figure is in the table below.")
        w3.metric("Acted on, your threshold", views.percent(picked_coverage),
                  help=f"{md_text(best)} at its tuned threshold: {views.percent(best_row.result.coverage)}.")
for sentence in views.value_verdict(rows, selection.money, confidences):
    st.markdown(sentence)
for note in home.simpler_rule_notes(ws, selection.models, kind, values, selection.currency):
    st.info(md_text(note), icon=":material/warning:")  # overfitting, said out loud
if any(r.estimated for r in rows):
    st.caption("Estimated values (no labels) assume the models' confidences are calibrated.")

# ---- one row per model, and the no-model baseline
compact_dataframe(views.value_styler(table, selection.money, confidences),
                  VALUE_SHOWN + (WHAT_IF_SHOWN if manual is not None else ()), hide_index=True, width="stretch",
                  column_config={"Model": st.column_config.TextColumn(width="medium"),  # "no model (always hand off)"
                                 **{c: st.column_config.Column(help="At the threshold picked with the what-if slider")
                                    for c in WHAT_IF_SHOWN}})
for row in rows:  # what each likely range rests on, in one sentence
    if row.interval_numbers is not None:
        words = views.likely_range_words(row.interval_numbers, values, selection.currency)
        st.caption(md_text(f"{row.model}: {words}"))
skipped = [f"{r.model}: {r.note}" for r in rows if not r.ok and r.note]
for message in skipped:
    st.warning(message)
with st.expander("The exact rule per model (as in the exported policy JSON)"):
    st.code(json.dumps(views.exact_policies(rows), indent=2), language="json")
    st.caption("Every digit of each threshold, and the recalibration fitted before it: the Export page writes "
               "these very policies, and `python -m valuecore apply` evaluates them as they are.")

# ---- value against the threshold
st.subheader("Value against the threshold")
show_tuning = state.value(
    st.checkbox, "value_show_tuning", f"Also draw the tuning split ({views.split_text(selection.tune_split)}), dashed",
    key="value_show_tuning", disabled=selection.tune_split == selection.eval_split,
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
        f"Each line: the value per item on {views.split_text(selection.eval_split)} if every item whose "
        f"(recalibrated) confidence "
        "is at least the threshold were acted on, and the rest handed over. Points mark the threshold tuned on "
        f"{views.split_text(selection.tune_split)} (●)"
        + (" and the calibrated threshold ω/(1+ω) (◆)" if selection.value_matrix is None else "")
        + ": where ● sits below the top of its line, the tuning split and the evaluated split disagree."
    )

# ---- confidence of correct and wrong predictions (seed 000, Figure 2)
st.subheader("Confidence of correct and wrong predictions")
labelled = [r.model for r in rows if r.ok and not r.estimated]
if not labelled:
    st.info(f"This needs labels, and the {views.split_text(selection.eval_split)} split has none. Evaluate on a "
            f"labelled split.")
else:
    model = state.choice(st.selectbox, "value_hist_model", "Model", labelled, key="value_hist_model",
                         default=best if best in labelled else labelled[0])
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
