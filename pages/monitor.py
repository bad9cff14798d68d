"""Monitor: what the policy is worth in production, where no labels exist yet.

Reads top to bottom like the page: why these are estimates, the production
split chunk by chunk (estimated value, coverage, best threshold), then a
back-test on a labelled split where the estimate can be checked against the
realised value (seed 002: label-free estimation and per-chunk monitoring).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import valuecore as vc
from dashboard import data, home, state, views
from dashboard.charts.monitor import monitor_chart, monitor_long
from dashboard.data import workspace as make_workspace
from dashboard.settings import CHUNKINGS, PERIODS as PERIOD_CODES
from dashboard.state import stop_unless_models
from dashboard.views.monitor import bands_section
from dashboard.safetext import md_text
from dashboard.tables import dataframe as show_dataframe

SAMPLE_WITH_PRODUCTION = "breast_cancer"
PERIODS = {"D": "Day", "W": "Week (Monday to Sunday)", "MS": "Calendar month"}
CHUNKING = {"period": "By time period", "count": "By number of chunks"}


def _load_sample() -> None:
    """Make the sample with a production split the data source of every page, from the next rerun on."""
    state.request(source=f"sample:{SAMPLE_WITH_PRODUCTION}", models=None)


def _monitor_models(workspace, models, split, policies, values, **chunking) -> tuple[pd.DataFrame, list[str]]:
    """valuecore.monitor for each model on one split, stacked with a ``model`` column."""
    frames, problems = [], []
    for model in models:
        predictions = workspace.predictions(model, split)
        if predictions is None:
            problems.append(f"**{md_text(model)}** has no split {md_text(repr(split))}.")
            continue
        try:
            frame = vc.monitoring.monitor(predictions, policies[model], values, **chunking)
        except ValueError as error:
            problems.append(f"**{md_text(model)}**: {md_text(error)}")
            continue
        frame.insert(0, "model", model)
        frames.append(frame)
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()), problems


def _summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for model, part in frame.groupby("model", sort=False):
        summary = vc.monitoring.monitor_summary(part.drop(columns="model")).iloc[-1]
        rows.append({"Model": model, **summary.drop(labels="split").to_dict()})
    return pd.DataFrame(rows)


def _show_charts(frame: pd.DataFrame, models, currency: str, *, by_time: bool, realised: bool) -> None:
    long = monitor_long(frame)
    st.altair_chart(monitor_chart(long, models, measure="value_per_item", by_time=by_time, currency=currency))
    left, right = st.columns(2)
    with left:
        st.altair_chart(
            monitor_chart(
                long, models, measure="coverage", by_time=by_time, currency=currency, legend=False, height=240
            )
        )
    with right:
        st.altair_chart(
            monitor_chart(
                long, models, measure="best_threshold", by_time=by_time, currency=currency, legend=False, height=240
            )
        )
    if not realised:
        st.caption(
            "Solid lines: estimated from the model's probabilities. The best threshold is the one that would "
            "maximise the estimated value on that chunk alone; a drift in it says the confidences moved."
        )


# ---------------------------------------------------------------- the page
selection = state.current()
st.title("Monitor (no labels)")
st.markdown(
    "In production the truth arrives late or never. The value of a policy can still be **estimated** from the "
    "model's own probabilities: an answer given with confidence 0.9 counts as 90% correct. These are estimates "
    "that rely on calibration: if the model is over-confident, the estimate is too rosy. A back-test on a "
    "labelled split (below) shows how far off the estimate is where it can be checked."
)

models = list(selection.models)
all_models = list(selection.report.models)
stop_unless_models(selection)

if selection.calibration == "none":
    st.warning(
        "The probabilities are used as the models report them (no recalibration). Choose **temperature** or "
        "**isotonic** under 'Recalibrate before thresholding' in the sidebar to make the estimates more "
        "trustworthy; the Calibration page shows how miscalibrated each model is."
    )
else:
    st.caption(f"Probabilities recalibrated with {selection.calibration}, fitted on each model's tuning split.")

workspace = make_workspace(selection)
values = selection.values
kinds, rule_notes = views.rule_options(workspace, models, values)
kind = state.choice(
    st.selectbox, "rule", "Decision rule", kinds,
    format_func=lambda k: views.POLICY_LABELS.get(k, k),
    key="monitor_policy_kind",
    help="Tuned on each model's tuning split (with the sidebar's values and recalibration), then applied as is: "
    "the same rule on every page and in the export.",
)
for note in rule_notes:
    st.caption(note)
policies, problems = {}, []
for model in models:
    try:
        policies[model] = workspace.policy(model, kind, values)
    except ValueError as error:
        problems.append(f"**{md_text(model)}**: no {views.POLICY_LABELS.get(kind, kind).lower()} policy: "
                        f"{md_text(error)}")
for problem in problems:
    st.warning(problem)
models = [m for m in models if m in policies]
if not models:
    st.stop()

# -- production: splits without labels
st.header("Production (no labels)")
unlabelled = {
    split: [m for m in models if split in workspace.run(m).splits and not workspace.run(m).splits[split].has_labels]
    for split in sorted({s for m in models for s in workspace.run(m).splits})
}
unlabelled = {split: ms for split, ms in unlabelled.items() if ms}
if not unlabelled:
    st.info(
        "None of the selected runs has a split without labels, so there is nothing to monitor yet. "
        "A production split is a split whose rows have no `y_true` (ideally with a `timestamp` column, to chunk "
        "by day or week). To see how monitoring works, load the **breast_cancer** sample: its `prod` split has "
        "six weeks of unlabelled, time-stamped predictions. The back-test below works on any labelled split."
    )
    if SAMPLE_WITH_PRODUCTION in data.sample_sets():
        st.button("Load the breast_cancer sample", key="monitor_load_sample", on_click=_load_sample)
else:
    split = state.choice(st.selectbox, "monitor_split", "Split to monitor", list(unlabelled), key="monitor_split")
    split_models = unlabelled[split]
    has_times = all(workspace.predictions(m, split).timestamp is not None for m in split_models)
    columns = st.columns(3)
    with columns[0]:
        chunking = state.choice(
            st.radio, "monitor_chunking", "Chunks", list(CHUNKINGS) if has_times else ["count"],
            format_func=CHUNKING.get, key="monitor_chunking", horizontal=True,
        ) if has_times else "count"
        if not has_times:
            st.caption(f"Split {md_text(repr(split))} has no timestamps, so it is cut into chunks of consecutive rows.")
    with columns[1]:
        if chunking == "period":
            how = {"period": state.choice(st.selectbox, "monitor_period", "Period", PERIOD_CODES,
                                          format_func=PERIODS.get, key="monitor_period")}
        else:
            how = {"n_chunks": state.value(st.slider, "monitor_chunks", "Number of chunks", key="monitor_n_chunks",
                                           min_value=2, max_value=40)}
    with columns[2]:
        retune = state.value(
            st.checkbox, "monitor_retune", "Re-tune the threshold on each chunk", key="monitor_retune",
            help="Re-tune a tuned threshold without labels on every chunk and apply that instead. "
            "Its estimated value is then optimistic (tuned and judged on the same chunk).",
        )
    with st.spinner("Estimating the value of every chunk…"):
        frame, problems = _monitor_models(workspace, split_models, split, policies, values, retune=retune, **how)
    for problem in problems:
        st.warning(problem)
    if not frame.empty:
        _show_charts(frame, all_models, selection.currency, by_time=chunking == "period", realised=False)
        summary = _summary_table(frame)
        st.markdown(f"**Over the whole split {md_text(repr(split))}** (estimated, per item in {selection.currency}):")
        show_dataframe(
            summary[
                ["Model", "n_chunks", "n", "estimated_value_total", "estimated_value_per_item", "estimated_coverage"]
            ].rename(
                columns={
                    "n_chunks": "Chunks",
                    "n": "Items",
                    "estimated_value_total": f"Estimated value ({selection.currency})",
                    "estimated_value_per_item": f"Estimated value per item ({selection.currency})",
                    "estimated_coverage": "Estimated coverage",
                }
            ),
            hide_index=True,
            column_config={
                "Items": st.column_config.NumberColumn(format="%.0f"),
                f"Estimated value ({selection.currency})": st.column_config.NumberColumn(format="%.2f"),
                f"Estimated value per item ({selection.currency})": st.column_config.NumberColumn(format="%.4f"),
                "Estimated coverage": st.column_config.NumberColumn(format="percent"),
            },
        )
        first, last = frame.groupby("model", sort=False).head(1), frame.groupby("model", sort=False).tail(1)
        drift = (
            last.set_index("model")["estimated_value_per_item"] - first.set_index("model")["estimated_value_per_item"]
        )
        worst = drift.idxmin()
        st.markdown(
            f"From the first to the last chunk, the estimated value per item of **{md_text(worst)}** moved by "
            f"{selection.money(float(drift[worst]), 4)}"
            + (" (a drop worth investigating: label a sample of recent items to check)." if drift[worst] < 0 else ".")
        )

# -- bands, alerts and drift (estimate calibrated on a labelled reference split): by default the
# alerts watch what the production chart shows (its split, the recommended or first model, its chunks)
recommended = home.recommended_model(selection, among=split_models) if unlabelled else None
charted = {"charted_split": split, "charted_model": recommended or split_models[0], "charted_models": split_models,
           "charted_chunking": how} if unlabelled else {}
bands_section(selection, workspace, models, policies, values, **charted)

# -- back-test: a labelled split, estimated vs realised
st.header("Back-test on a labelled split")
labelled = sorted({s for m in models for s, p in workspace.run(m).splits.items() if p.has_labels})
if not labelled:
    st.info("None of the selected runs has a labelled split, so the estimate cannot be checked against the truth.")
    st.stop()
default = selection.eval_split if selection.eval_split in labelled else labelled[-1]
columns = st.columns(2)
with columns[0]:
    backtest_split = state.choice(st.selectbox, "backtest_split", "Labelled split", labelled,
                                  key="monitor_backtest_split", fallback=labelled.index(default))
with columns[1]:
    n_chunks = state.value(st.slider, "backtest_chunks", "Number of chunks", key="monitor_backtest_chunks",
                           min_value=2, max_value=20)
backtest_models = [m for m in models if backtest_split in workspace.run(m).splits]
if any(workspace.tuning_split_for(m) == backtest_split for m in backtest_models):
    st.caption(
        f"Split {views.split_text(backtest_split)} is also where thresholds (and any recalibration) were "
        f"fitted: the back-test is "
        "in-sample and flatters the estimate. Prefer the evaluated split."
    )
with st.spinner("Estimating and measuring every chunk…"):
    frame, problems = _monitor_models(workspace, backtest_models, backtest_split, policies, values, n_chunks=n_chunks)
for problem in problems:
    st.warning(problem)
if not frame.empty:
    st.markdown(
        f"The labels of {views.split_text(backtest_split)} are hidden for the **estimate** (solid) and used for "
        f"the **realised** "
        "value (dashed). Where the lines agree, the label-free estimate can be trusted on production data from "
        "the same source."
    )
    _show_charts(frame, all_models, selection.currency, by_time=False, realised=True)
    summary = _summary_table(frame)
    shown = summary[
        ["Model", "n", "estimated_value_per_item_labelled", "realised_value_per_item", "estimation_error_per_item"]
    ].rename(
        columns={
            "n": "Items",
            "estimated_value_per_item_labelled": f"Estimated per item ({selection.currency})",
            "realised_value_per_item": f"Realised per item ({selection.currency})",
            "estimation_error_per_item": f"Estimate − realised ({selection.currency})",
        }
    )
    money = st.column_config.NumberColumn(format="%.4f")
    show_dataframe(
        shown,
        hide_index=True,
        column_config={
            "Items": st.column_config.NumberColumn(format="%.0f"),
            **{c: money for c in shown.columns if c not in ("Model", "Items")},
        },
    )
    errors = summary.set_index("Model")["estimation_error_per_item"]
    worst = errors.abs().idxmax()
    st.markdown(
        f"The estimate is furthest off for **{md_text(worst)}**: {selection.money(float(errors[worst]), 4)} per item "
        f"({'too optimistic' if errors[worst] > 0 else 'too pessimistic'}). "
        + ("A large gap means the probabilities are miscalibrated: recalibrate (sidebar) before trusting the "
           "production estimates above." if selection.calibration == "none" else
           f"A large gap means the probabilities stay miscalibrated even after {selection.calibration} "
           "recalibration: try another method (sidebar), or label a sample of production items.")
    )

# -- class mix per chunk, and what re-tuning for it would earn (prior shift)
from dashboard.prior_shift import prior_shift_section  # noqa: E402  (kept with its section, at the end)

prior_shift_section(selection, workspace, models, policies, values, kind)
