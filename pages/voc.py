"""VOC curves: value of every selected model for every penalty ω, and which model wins where.

Reads top to bottom like the page: how thresholds are chosen, the ω range,
the curves, the value and VOC area per ω range, who dominates whom in
words, then seed 003's comparison table (accuracy vs value).
"""

import math

import numpy as np
import pandas as pd
import streamlit as st

import valuecore as vc
from dashboard import views
from dashboard.charts.voc import voc_chart
from dashboard import state
from dashboard.data import workspace
from dashboard.state import stop_unless_models
from dashboard.tables import compact_dataframe
from dashboard.safetext import md_text

selection = state.current()
ws = workspace(selection)
all_models = list(selection.report.models)
omega = selection.omega

st.title("VOC curves")
st.caption(
    "A VOC curve shows a model's dimensionless value per item (0 = no model, 1 = perfect) for every penalty ω, "
    "i.e. for every use case at once. Higher is better; a curve that stays above another for every ω is "
    "better whatever the use case."
)
stop_unless_models(selection)
if (problem_note := views.load_problem_note(selection.report)) is not None:
    st.caption(":material/warning: " + problem_note)
if selection.value_matrix is not None:
    st.info("VOC curves use the three values (one ω); the per-class matrix has no single ω and is not used here.")

# ---- how thresholds are chosen, and the range of ω
mode = state.choice(
    st.radio, "voc_mode", "Thresholds", views.VOC_MODE_ORDER,
    format_func=lambda m: views.voc_mode_label(m, selection.tune_split, selection.eval_split),
    horizontal=True,
    key="voc_mode",
)
if mode == "oracle":
    st.caption("The best possible curve (the 'oracle') picks each ω's best threshold on the very items it is "
               "scored on: no real deployment can do as well. Use it as an upper bound, not as a forecast.")
if mode == "tuned":
    for model in selection.models:
        if ws.has_split(model, selection.eval_split) and (note := ws.tuning_note(model)):
            st.caption(md_text(note))
if mode == "tuned" and selection.tune_split == selection.eval_split:
    st.caption("Tuning and evaluation use the same split, so 'tuned' equals the oracle here.")

finite_omega = math.isfinite(omega) and omega >= 0
default_high = min(100.0, max(10.0, 2 * omega if finite_omega else 10.0))
range_col, band_col = st.columns([3, 1])
default_range = (0.0, float(default_high))
with range_col:
    low, high = state.value(
        st.slider, "voc_range", "ω range", key="voc_omega_range", default=default_range,
        min_value=0.0, max_value=100.0, step=0.5,
        convert=lambda r: None if tuple(r) == default_range else (float(r[0]), max(float(r[1]), float(r[0]) + 0.5)),
    )
if high <= low:
    high = low + 0.5
bands_on = state.value(band_col.checkbox, "voc_bands", "Bootstrap bands", key="voc_bands",
                       help="95% bands from resampling the evaluated items (200 resamples). Takes a moment.")

curves, left_out = views.voc_curves(ws, selection.models, mode)
for note in left_out:
    st.warning(note)
if not curves:
    st.info(f"No selected model can be drawn: a VOC curve needs labels on {views.split_text(selection.eval_split)}"
            + (f" and on {views.split_text(selection.tune_split)}." if mode == "tuned" else "."))
    st.stop()

grid = views.omega_grid(low, high, curves)
frame = vc.voc_frame(curves, grid)
bands = None
if bands_on:
    pieces, band_problems = [], []
    with st.spinner("Resampling the evaluated items (200 times per model)…"):
        for model in curves:
            try:
                band = ws.voc_band(model, mode, np.linspace(low, high, 61))
            except ValueError as error:
                band_problems.append(md_text(f"No band for {model}: {error}"))
                continue
            pieces.append(band.to_frame(model))
    bands = pd.concat(pieces, ignore_index=True) if pieces else None
    for problem in band_problems:
        st.info(problem)

sup_points = views.omega_sup_frame(curves, low, high)
st.altair_chart(
    voc_chart(
        frame,
        models=all_models,
        omega_now=omega if finite_omega and low <= omega <= high else None,
        omega_sup=sup_points,
        bands=bands,
    ),
    width="stretch",
)
# Promise the ◆ only when one is drawn: a curve that stays above zero on the range has no ω_sup there.
marks = ("◆ marks ω_sup, the penalty ω beyond which a model is worth less than no model." if len(sup_points)
         else "No curve falls below zero (no model) on this ω range, so no ω_sup (◆) is marked.")
if finite_omega:
    st.caption(f"The dashed line is your use case (ω = {omega:.3g}). {marks}")
else:
    st.caption(f"Your use case has no finite ω ({selection.use_case.regime.reason}) {marks}")

# ---- value at your ω, ω_sup and VOC area per ω range
st.subheader("Value and VOC area per ω range")
st.caption("Edit the ranges below (leave 'to' empty for ∞). The area is the integral of max(value, 0) over ω: "
           "how much value a model brings over that family of use cases.")
edited = state.editor(
    "voc_areas",
    views.area_rows_frame(selection.settings.voc_areas),
    read=views.frame_area_rows,
    num_rows="dynamic",
    key="voc_area_ranges",
    hide_index=True,
    column_config={
        "from": st.column_config.NumberColumn("from ω", min_value=0.0, step=0.5, format="%g"),
        "to": st.column_config.NumberColumn("to ω (empty = ∞)", min_value=0.0, step=0.5, format="%g"),
    },
)
ranges, range_problems = views.parse_ranges(edited)
for problem in range_problems:
    st.warning(problem)
summary = views.voc_summary(curves, omega, ranges)
compact_dataframe(
    summary,
    ["model", "value_at_omega", "useful_up_to"],
    details="VOC areas on your ω ranges",
    hide_index=True,
    width="stretch",
    column_config={
        "model": st.column_config.TextColumn("Model"),
        "value_at_omega": st.column_config.NumberColumn(
            f"Value at your ω = {views.omega_text(omega)}", format="%.3f"),
        "omega_sup": None,
        "useful_up_to": st.column_config.TextColumn(
            "Worth more than no model up to", help="ω_sup: the largest mistake cost at which the model still earns "
            "more than handing every item to a person."),
        **{views.range_label(lo, hi): st.column_config.NumberColumn(
            views.range_label(lo, hi).replace("area", "VOC area"), format="%.3f",
            help=vc.wording.GLOSSARY["VOC area"]) for lo, hi in ranges},
    },
)

# ---- who is above whom, in words
st.subheader("Which model is better where")
if len(curves) < 2:
    st.caption("Select at least two models to compare them.")
else:
    sentences, champion = views.dominance_sentences(curves, high)
    if champion:
        st.success(f"**{md_text(champion)}** is above or level with every other selected model for all 0 ≤ ω ≤ {high:g}: "  # noqa: E501
                   "whatever the use case in that range, it is the one to pick.")
    st.markdown("\n".join(f"- {s}" for s in sentences))

# ---- seed 003: accuracy vs value
st.subheader("Accuracy and value rank models differently")
st.caption(
    "Accuracy and macro F1 against the value with a tuned or a calibrated threshold, for penalties ω of 0 to 10 "
    f"(an error costs ω correct answers), on {views.split_text(selection.eval_split)}. Each cell is the metric "
    "and the model's "
    f"rank (#1 = best); ⚠ "
    "marks the metrics whose best model is not the most accurate one. The table follows Sayin et al. (see How "
    "value works)."
)
try:
    with st.spinner("Computing the comparison table…"):
        table = ws.comparison(list(curves))
except ValueError as error:
    st.info(f"The comparison table is unavailable: {md_text(error)}.")
else:
    compact_dataframe(views.comparison_display(table), ["metric", "best model", "differs from accuracy"],
                      details="Every model's score and rank", hide_index=True, width="stretch")
    st.markdown("\n".join(views.comparison_words(table)))
