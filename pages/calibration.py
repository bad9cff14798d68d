"""Calibration: can the models' confidences be taken at face value, and what does recalibrating change?

Reads top to bottom like the page: the recalibration to examine, reliability
diagrams, the calibration metrics before and after, then seed 003's Table 5
(value at ω = 0..10 with the formula threshold ω/(1+ω), before and after
recalibration, against the tuned threshold).

The recalibration examined here is a setting of its own (it is in the link):
this page is where a recalibration is examined before it is adopted, so it
always shows "before" (raw) next to "after". A button makes it the
recalibration of every page and of the export (``dashboard.state.request``).
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

import valuecore as vc
from dashboard import datasets, state, views
from dashboard.charts.calibration import calibration_value_chart, calibration_value_long, reliability_chart
from dashboard.data import workspace
from dashboard.safetext import md_text
from dashboard.settings import BIN_STRATEGIES, CALIBRATION_METHODS
from dashboard.state import stop_unless_models
from dashboard.tables import compact_dataframe

# The technical names stay in the headers (people search for them); the plain meaning is in the tooltip.
METRIC_HELP = {
    "ECE, equal width": "Expected calibration error: the average gap between the confidence the model states "
    "and how often it is right (bins of equal width). 0 = a 90%-confident answer is right 90% of the time.",
    "ECE, equal mass": "The same average gap, with bins holding equally many items.",
    "MCE": "Maximum calibration error: the largest gap in any bin.",
    "Brier": "Mean squared error of the predicted probabilities, all classes. Lower is better.",
    "Brier, top label": "Mean squared error of the top-label confidence only (what isotonic recalibration changes).",
    "NLL": "Negative log-likelihood: how surprised the model is by the true answers. Lower is better.",
}

METHOD_LABELS = {
    "none": "None (raw confidences)",
    "temperature": "Temperature scaling",
    "isotonic": "Isotonic regression",
}
STRATEGY_LABELS = {"uniform": "Equal width", "quantile": "Equal mass"}


# ---------------------------------------------------------------- helpers
@st.cache_resource(show_spinner=False, max_entries=256)
def _table5(run_key: str, model: str, tune: str, evaluated: str, method: str, _tune_p, _eval_p) -> pd.DataFrame:
    """Seed 003 Table 5 for one model (cached per file content, splits and method)."""
    table = vc.monitoring.calibration_value_table(_tune_p, _eval_p, method=method, ks=vc.DEFAULT_KS)
    table.insert(0, "model", model)
    return table


def _adopt(method: str) -> None:
    """Make this page's recalibration the one every page uses, from the next rerun on."""
    state.request(calibration=method)


def _fmt(value) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _calibration_text(params: dict | None) -> str:
    if not params:
        return "not fitted"
    if params.get("method") == "temperature":
        t = params["temperature"]
        mood = "over-confident: confidences are softened" if t > 1 else "under-confident: confidences are sharpened"
        return f"T = {t:.3g} ({mood})"
    if params.get("method") == "isotonic":
        return f"monotone map with {len(params.get('x', []))} breakpoints"
    return params.get("method", "")


# ---------------------------------------------------------------- the page
selection = state.current()
st.title("Calibration")
st.markdown(
    "A model is **calibrated** when, among the answers it gives with confidence 0.8, about 80% are right. "
    "The threshold formula ω/(1+ω) of the value pages assumes exactly that; recalibration (fitted on the "
    "tuning split) repairs the confidences without changing which class is predicted."
)

models = list(selection.models)
all_models = list(selection.report.models)
stop_unless_models(selection)
eval_split = selection.eval_split
if eval_split is None:
    st.info("The selected models have no split to evaluate on. Choose one under **Evaluate on** in the sidebar.")
    st.stop()

raw = workspace(selection, "none")
labelled = [m for m in models if (p := raw.predictions(m, eval_split)) is not None and p.has_labels]
unlabelled = [m for m in models if m not in labelled]
if not labelled:
    st.warning(
        f"The evaluated split **{md_text(eval_split)}** has no labels (no `y_true`), so calibration cannot be checked on it: "  # noqa: E501
        "it compares confidence with how often the model is right. Choose a labelled split under "
        "**Evaluate on** in the sidebar (for the samples: `test`)."
    )
    st.stop()
if unlabelled:
    st.caption(f"Left out (no labelled split {md_text(repr(eval_split))}): {', '.join(unlabelled)}.")

# -- the recalibration to examine
sidebar_method = selection.calibration if selection.calibration in CALIBRATION_METHODS else "none"
# Temperature scaling needs each item's own probabilities; an aggregate holds group means.
aggregated = datasets.aggregated_models(selection.report, labelled)
methods = [m for m in CALIBRATION_METHODS if not (aggregated and m == "temperature")]
first_examined = sidebar_method if sidebar_method != "none" else methods[1]
controls = st.columns([3, 2, 2])
with controls[0]:
    method = state.choice(
        st.radio, "calibration_examined", "Recalibration to examine", methods,
        # Not examined yet: the sidebar's recalibration, or the first recalibration when it is none.
        fallback=methods.index(first_examined) if first_examined in methods else 0,
        format_func=METHOD_LABELS.get,
        key="calibration_method",
        horizontal=True,
        help="Only this page: it shows raw confidences next to recalibrated ones. "
        "The sidebar's 'Recalibrate before thresholding' is what the other pages and the export use.",
    )
with controls[1]:
    n_bins = state.value(st.slider, "calibration_bins", "Bins", key="calibration_bins", min_value=5, max_value=30,
                         help="For the diagrams, ECE and MCE.")
with controls[2]:
    strategy = state.choice(st.radio, "calibration_strategy", "Diagram bins", BIN_STRATEGIES,
                            format_func=STRATEGY_LABELS.get, key="calibration_strategy", horizontal=True)
if aggregated:
    st.caption(datasets.per_item_note(aggregated, "temperature scaling"))
if method == sidebar_method:
    st.caption(f"The other pages use the same recalibration ({METHOD_LABELS[method].lower()}).")
else:
    st.caption(
        "Examined on this page only: the other pages and the export use "
        f"**{METHOD_LABELS[sidebar_method].lower()}** (the sidebar's 'Recalibrate before thresholding')."
    )
    st.button(
        f"Use {METHOD_LABELS[method].lower()} on every page",
        key="calibration_apply",
        on_click=_adopt,
        args=(method,),
    )

after = workspace(selection, method)
fitted: dict[str, object] = {}
problems: list[str] = []
for model in labelled:
    fit_split = after.tuning_split_for(model)
    if method != "none":
        _, error = after.calibrator(model)
        if error:
            hint = " Isotonic regression works on the top-label confidence alone." if method == "temperature" else ""
            problems.append(f"{error}.{hint}")
            continue
        if fit_split == eval_split:
            problems.append(
                f"**{md_text(model)}**: no labelled tuning split, so the recalibration is fitted on {md_text(repr(eval_split))} itself "  # noqa: E501
                "and judged there: its 'after' figures are optimistic."
            )
    fitted[model] = after.calibrated(model, eval_split) if method != "none" else None
for problem in problems:
    st.warning(problem)

# -- reliability diagrams
st.subheader("Reliability diagrams")
st.markdown(
    f"Each point is a bin of answers on **{md_text(eval_split)}**: its mean confidence (across) against how often it was "  # noqa: E501
    "right (up), with a 95% interval. On the dotted diagonal the model is calibrated; below it, over-confident."
)
# Each split's diagnostics are computed once (both diagrams, the metrics) and cached.
diagnostics = {}
for model in labelled:
    diagnostics[model, "before"] = raw.calibration_diagnostics(model, eval_split, n_bins)
    if fitted.get(model) is not None:
        diagnostics[model, "after"] = after.calibration_diagnostics(model, eval_split, n_bins)
frames = []
for model in labelled:
    for stage in ("before", "after"):
        if (model, stage) not in diagnostics:
            continue
        table = diagnostics[model, stage].reliability(strategy).copy()  # the cached frame stays as it is
        table.insert(0, "stage", stage)
        table.insert(0, "model", model)
        frames.append(table)
st.altair_chart(reliability_chart(pd.concat(frames, ignore_index=True), all_models))

# -- metrics table
st.subheader("Calibration metrics")
rows = []
for model in labelled:
    stages = [("raw", diagnostics[model, "before"])]
    if (model, "after") in diagnostics:
        stages.append((f"{method}", diagnostics[model, "after"]))
    for stage, diagnosed in stages:
        summary = diagnosed.summary()
        rows.append(
            {
                "Model": model,
                "Confidence": stage,
                "ECE, equal width": _fmt(summary["ece_uniform"]),
                "ECE, equal mass": _fmt(summary["ece_quantile"]),
                "MCE": _fmt(summary["mce"]),
                "Brier": _fmt(summary["brier"]),
                "Brier, top label": _fmt(diagnosed.brier_top_label),
                "NLL": _fmt(summary["nll"]),
                "Fitted": "" if stage == "raw" else _calibration_text(after.calibration_dict(model)),
            }
        )
metrics = pd.DataFrame(rows)
number = st.column_config.NumberColumn(format="%.4f")
compact_dataframe(
    metrics,
    ["Model", "Confidence", "ECE, equal width", "Brier", "NLL"],
    details="All metrics (equal-mass ECE, MCE, top-label Brier, the fitted recalibration)",
    hide_index=True,
    column_config={
        c: st.column_config.NumberColumn(format="%.4f", help=METRIC_HELP[c])
        for c in ("ECE, equal width", "ECE, equal mass", "MCE", "Brier", "Brier, top label", "NLL")
    },
)
st.caption(
    f"On split {md_text(repr(eval_split))}, {n_bins} bins; lower is better everywhere. ECE: mean gap between confidence and "  # noqa: E501
    "accuracy over bins, weighted by items; MCE: the largest gap. Brier (all classes) and NLL use the full "
    "probability vector, so an isotonic recalibration, which only changes the top-label confidence, leaves them "
    "as they were: see 'Brier, top label'. NLL shows – for runs that only report the top label."
)

# -- seed 003 Table 5
st.subheader("What calibration does to value")
if method == "none":
    st.info("Choose temperature scaling or isotonic regression above to see value before and after recalibration.")
tables = []
for model in labelled:
    tune_split = raw.tuning_split_for(model)
    tune_p, eval_p = raw.predictions(model, tune_split), raw.predictions(model, eval_split)
    if model not in fitted:
        continue
    try:
        tables.append(_table5(raw.run_key(model), model, tune_split, eval_split, method, tune_p, eval_p))
    except ValueError as error:
        st.warning(f"**{md_text(model)}**: {md_text(error)}")
if not tables and method != "none":
    st.info(f"No model could be recalibrated with {METHOD_LABELS[method].lower()}, so there is no before and after.")
if tables:
    table5 = pd.concat(tables, ignore_index=True)
    recalibrated = method != "none"
    st.altair_chart(calibration_value_chart(calibration_value_long(table5, recalibrated=recalibrated), all_models))
    k_max = max(vc.DEFAULT_KS)
    top = table5[table5["k"] == k_max].set_index("model")
    if recalibrated:
        gains = (top["value_calibrated_after"] - top["value_calibrated_before"]).sort_values(ascending=False)
        best = gains.index[0]
        row = top.loc[best]
        st.markdown(
            f"**What it means.** The formula threshold ω/(1+ω) is only right for calibrated confidences. "
            f"At a penalty ω = {k_max:g} (an error costs {k_max:g} correct answers), "
            f"{METHOD_LABELS[method].lower()} moves "
            f"**{md_text(best)}** from {row['value_calibrated_before']:.3f} to {row['value_calibrated_after']:.3f} per item "  # noqa: E501
            f"with the formula, against {row['value_tuned_before']:.3f} with a threshold tuned on "
            f"{views.split_text(raw.tuning_split_for(best))}. Where the recalibrated dashed line meets the "
            f"tuned solid one, the "
            "formula can be trusted instead of tuning; where it stays below, tune the threshold on data. "
            "Values are dimensionless (correct 1, abstain 0, wrong −ω); 0 is what always abstaining earns."
        )
    else:
        st.markdown(
            "**What it means.** With raw confidences, the formula threshold ω/(1+ω) falls behind the tuned "
            "threshold wherever the model is over-confident, most at large ω. Values are dimensionless "
            "(correct 1, abstain 0, wrong −ω)."
        )
    shown = table5[
        [
            "model",
            "k",
            "threshold",
            "value_calibrated_before",
            "value_calibrated_after",
            "value_tuned_before",
            "value_tuned_after",
            "threshold_tuned_before",
            "threshold_tuned_after",
            "coverage_calibrated_before",
            "coverage_calibrated_after",
        ]
    ]
    if not recalibrated:
        shown = shown.drop(
            columns=[
                "value_calibrated_after",
                "value_tuned_after",
                "threshold_tuned_after",
                "coverage_calibrated_after",
            ]
        )
    labels = {
        "model": "Model",
        "k": "Penalty ω",
        "threshold": "ω/(1+ω)",
        "value_calibrated_before": "Value, ω/(1+ω) raw",
        "value_calibrated_after": "Value, ω/(1+ω) recalibrated",
        "value_tuned_before": "Value, tuned raw",
        "value_tuned_after": "Value, tuned recalibrated",
        "threshold_tuned_before": "Tuned threshold, raw",
        "threshold_tuned_after": "Tuned threshold, recalibrated",
        "coverage_calibrated_before": "Coverage, ω/(1+ω) raw",
        "coverage_calibrated_after": "Coverage, ω/(1+ω) recalibrated",
    }
    percent = st.column_config.NumberColumn(format="percent")
    compact_dataframe(
        shown.rename(columns=labels),
        ["Model", "Penalty ω", "Value, tuned raw", "Value, tuned recalibrated", "Value, ω/(1+ω) raw",
         "Value, ω/(1+ω) recalibrated"],
        details="All columns (thresholds and coverage)",
        hide_index=True,
        column_config={
            **{labels[c]: number for c in shown.columns if c.startswith(("value_", "threshold"))},
            **{labels[c]: percent for c in shown.columns if c.startswith("coverage_")},
            "Penalty ω": st.column_config.NumberColumn(format="%g"),
        },
    )
    st.caption(
        f"Evaluated on {md_text(repr(eval_split))}; recalibration and tuned thresholds fitted on the tuning "
        "split. An empty tuned threshold means always abstain. Accuracy and F1 do not change with temperature scaling."
    )
