"""VOC curves: value of every selected model for every penalty ω, and which model wins where.

Reads top to bottom like the page: how thresholds are chosen, the ω range,
the curves, the value and VOC area per ω range, who dominates whom in
words, then seed 003's comparison table (accuracy vs value). The numbers and
words come from ``dashboard.views.voc``; this script lays them out.
"""

import streamlit as st

import valuecore as vc
from dashboard import state, views
from dashboard.data import workspace
from dashboard.state import stop_unless_models
from dashboard.tables import compact_dataframe
from dashboard.views import voc as view

selection = state.current()
ws = workspace(selection)
intro = view.intro(selection)

st.title("VOC curves")
st.caption(
    "A VOC curve shows a model's dimensionless value per item (0 = no model, 1 = perfect) for every penalty ω, "
    "i.e. for every use case at once. Higher is better; a curve that stays above another for every ω is "
    "better whatever the use case."
)
stop_unless_models(selection)
if intro.problem_note is not None:
    st.caption(":material/warning: " + intro.problem_note)
if intro.matrix_note is not None:
    st.info(intro.matrix_note)

# ---- how thresholds are chosen, and the range of ω
mode = state.choice(
    st.radio, "voc_mode", "Thresholds", view.VOC_MODE_ORDER,
    format_func=lambda m: view.mode_label(selection, m),
    horizontal=True,
    key="voc_mode",
)
mode_notes = st.container()
# The checkbox under the slider, not in a quarter of the row beside it: at 800 px wide that quarter cut its label
# to "Bootstra…".
low, high = state.value(
    st.slider, "voc_range", "ω range", key="voc_omega_range", default=intro.default_range,
    min_value=0.0, max_value=100.0, step=0.5,
    convert=lambda r: None if tuple(r) == intro.default_range else (float(r[0]), max(float(r[1]), float(r[0]) + 0.5)),
)
bands_on = state.value(st.checkbox, "voc_bands", "Bootstrap bands", key="voc_bands",
                       help="95% bands from resampling the evaluated items (200 resamples). Takes a moment.")

with st.spinner("Resampling the evaluated items (200 times per model)…" if bands_on else "Drawing the curves…"):
    page = view.build(selection, ws, mode, low, high, bands=bands_on)
for note in page.mode_notes:
    mode_notes.caption(note)
for note in page.left_out:
    st.warning(note)
if page.empty_message is not None:
    st.info(page.empty_message)
    st.stop()
for problem in page.band_problems:
    st.info(problem)
st.vega_lite_chart(spec=view.chart_spec(page, selection.report.models), width="stretch")
st.caption(page.chart_caption)

# ---- value at your ω, ω_sup and VOC area per ω range
# The heading says what the table shows; the areas sit in its details, and the caption says so (the heading
# "Value and VOC area per ω range" promised areas the table did not show).
st.subheader(view.AREAS_HEADING)
st.caption(f"Each model's value at your ω, and up to which ω it earns more than no model. Edit the ω ranges below "
           f"(leave 'To ω' empty for ∞): each model's VOC area on them is under '{view.AREAS_DETAILS}', below "
           "the table. The area is the integral of max(value, 0) over ω: how much value a model brings over that "
           "family of use cases.")
edited = state.editor(
    "voc_areas",
    view.area_rows_frame(selection.settings.voc_areas),
    read=view.frame_area_rows,
    num_rows="dynamic",
    key="voc_area_ranges",
    hide_index=True,
    column_config={
        "from": st.column_config.NumberColumn("From ω", min_value=0.0, step=0.5, format="%g"),
        "to": st.column_config.NumberColumn("To ω (empty = ∞)", min_value=0.0, step=0.5, format="%g"),
    },
)
areas = view.areas(page, selection.omega, edited)
for problem in areas.problems:
    st.warning(problem)
compact_dataframe(
    areas.summary,
    ["model", "value_at_omega", "useful_up_to"],
    details=view.AREAS_DETAILS,
    hide_index=True,
    width="stretch",
    column_config={
        "model": st.column_config.TextColumn("Model"),
        "value_at_omega": st.column_config.NumberColumn(areas.value_label, format="%.3f"),
        "omega_sup": None,
        "useful_up_to": st.column_config.TextColumn(
            "Worth more than no model up to", help="ω_sup: the largest mistake cost at which the model still earns "
            "more than handing every item to a person."),
        **{view.range_label(lo, hi): st.column_config.NumberColumn(
            view.range_label(lo, hi).replace("area", "VOC area"), format="%.3f",
            help=vc.wording.GLOSSARY["VOC area"]) for lo, hi in areas.ranges},
    },
)

# ---- who is above whom, in words
st.subheader("Which model is better where")
if len(page.curves) < 2:
    st.caption("Select at least two models to compare them.")
else:
    if page.champion_sentence is not None:
        st.success(page.champion_sentence)
    st.markdown("\n".join(f"- {s}" for s in page.dominance))

# ---- seed 003: accuracy vs value
st.subheader("Accuracy and value rank models differently")
st.caption(
    "Accuracy and macro F1 against the value with a tuned or a calibrated threshold, for penalties ω of 0 to 10 "
    f"(an error costs ω correct answers), on {views.split_text(selection.eval_split)}. Each cell is the metric "
    "and the model's rank (#1 = best); ⚠ marks the metrics whose best model is not the most accurate one. The table "
    "follows Sayin et al. (see How value works)."
)
with st.spinner("Computing the comparison table…"):
    comparison = view.comparison(ws, page)
if comparison.problem is not None:
    st.info(comparison.problem)
else:
    compact_dataframe(comparison.table, ["Metric", "Best model", "Differs from accuracy"],
                      details="Every model's score and rank", hide_index=True, width="stretch")
    st.markdown("\n".join(comparison.sentences))
