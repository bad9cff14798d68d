"""Compare two models: is the difference in value real, or luck of this split?

Reads top to bottom like the page: pick models A and B, the paired
comparison on the same items of the evaluated split, stated twice (a fact on
this data, an estimate with a 95% interval and p-values for new data from
the same distribution: seed 004), the charts, then how stable each model's
tuned threshold is.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.charts.compare import (
    difference_chart,
    difference_counts,
    stability_chart,
    stability_counts,
    value_interval_chart,
)
import valuecore as vc
from dashboard import datasets, home, state, views
from dashboard.data import workspace as make_workspace
from dashboard.safetext import md_text
from dashboard.settings import COMPARE_RESAMPLES
from dashboard.tables import dataframe as show_dataframe

RESAMPLES = COMPARE_RESAMPLES  # a link may name only these (dashboard.settings)


def _item_differences(policy_a, run_a, policy_b, run_b, values) -> tuple[np.ndarray, np.ndarray]:
    """Per-item value of A minus B, items matched as paired_comparison matches them (by id, else by row)."""
    value_a = vc.item_values(policy_a, run_a, values)
    value_b = vc.item_values(policy_b, run_b, values)
    if run_a.ids is not None and run_b.ids is not None:
        value_b = value_b[pd.Index(run_b.ids).get_indexer(pd.Index(run_a.ids))]
    return value_a - value_b, run_a.sample_weight


# ---------------------------------------------------------------- the page
selection = state.current()
st.title("Compare two models")
st.markdown(
    "Two models judged on the **same items** can be compared item by item: the differences cancel the luck of "
    "which items ended up in the split. The result is said twice: what is certain **on this data**, and what "
    "to expect **on new data from the same distribution**, with a 95% interval and a paired test."
)

models = list(selection.models)
all_models = list(selection.report.models)
if len(models) < 2:
    loaded = len(all_models)
    st.info(
        "Comparing needs two models. "
        + (
            f"Select at least two of the {loaded} loaded models in the sidebar."
            if loaded >= 2
            else "Load run files of at least two models (e.g. a sample in the sidebar's Data source)."
        )
    )
    st.stop()

left, right = st.columns(2)
model_a, model_b = state.pair((left.selectbox, right.selectbox), "compare_pair", ("Model A", "Model B"), models,
                              keys=("compare_model_a", "compare_model_b"),
                              default=home.recommended_pair(selection, models))  # the recommended one first
if model_a == model_b:
    st.info("Pick two different models.")
    st.stop()
if aggregated := datasets.aggregated_models(selection.report, [model_a, model_b]):
    st.info(md_text(datasets.per_item_note(aggregated, "a comparison paired item by item")) + " Compare their "
            "values and 95% intervals on the Value page instead: those are exact on aggregates.")
    st.stop()

split = selection.eval_split
workspace = make_workspace(selection)
run_a, run_b = workspace.predictions(model_a, split), workspace.predictions(model_b, split)
missing = [m for m, r in ((model_a, run_a), (model_b, run_b)) if r is None]
if split is None or missing:
    st.warning(
        f"{' and '.join(missing) or 'The models'} have no split {md_text(repr(split))} to evaluate on. "
        "Choose a split both have under **Evaluate on** in the sidebar."
    )
    st.stop()
unlabelled = [m for m, r in ((model_a, run_a), (model_b, run_b)) if not r.has_labels]
if unlabelled:
    st.warning(
        f"The split {md_text(repr(split))} has no labels for {', '.join(unlabelled)}: a comparison of realised value needs the "  # noqa: E501
        "true class of every item. Choose a labelled split under **Evaluate on** in the sidebar."
    )
    st.stop()

columns = st.columns(3)
values = selection.values
kinds, rule_notes = views.rule_options(workspace, [model_a, model_b], values)
with columns[0]:
    kind = state.choice(
        st.selectbox, "rule", "Decision rule", kinds,
        format_func=lambda k: views.POLICY_LABELS.get(k, k),
        key="compare_policy_kind",
        help="Each model gets its own policy of this kind, tuned on its tuning split (the same rule on every page).",
    )
with columns[1]:
    n_resamples = state.value(st.select_slider, "compare_resamples", "Bootstrap resamples", key="compare_resamples",
                              options=RESAMPLES)
with columns[2]:
    seed = int(state.value(st.number_input, "compare_seed", "Random seed", key="compare_seed", min_value=0, step=1,
                           convert=int))
for note in rule_notes:
    st.caption(note)
for severity, message in views.split_notes(workspace, [model_a, model_b], kind):
    getattr(st, severity)(message)

try:
    policy_a = workspace.policy(model_a, kind, values)
    policy_b = workspace.policy(model_b, kind, values)
    for policy, run in ((policy_a, run_a), (policy_b, run_b)):
        vc.item_values(policy, run, values)  # e.g. the expected-value rule on a top-label-only run
except ValueError as error:
    st.error(f"The rule '{views.POLICY_LABELS.get(kind, kind)}' cannot be used here: {md_text(error)}. "
             "Choose another policy.")
    st.stop()

try:
    with st.spinner(f"Paired test with {n_resamples:,} bootstrap resamples…"):
        comparison = vc.uncertainty.paired_comparison(
            policy_a,
            run_a,
            policy_b,
            run_b,
            values,
            rng=np.random.default_rng(seed),
            n_resamples=n_resamples,
            names=(model_a, model_b),
        )
        # The pipeline's interval: the very one the Value page shows and the export writes.
        intervals = {m: workspace.interval(m, p, values) for m, p in ((model_a, policy_a), (model_b, policy_b))}
except ValueError as error:
    st.error(
        f"**{md_text(model_a)}** and **{md_text(model_b)}** cannot be compared item by item on {md_text(repr(split))}: {error}",  # noqa: E501
    )
    st.caption(
        "A paired comparison needs both runs on the same items: the same ids (or, without ids, the same number "
        "of rows in the same order) with the same true labels."
    )
    st.stop()

difference, weight = _item_differences(policy_a, run_a, policy_b, run_b, values)
d = comparison.mean_difference
words = vc.wording  # the sentences the CLI and the HTML report use for the same comparison

# -- the result, said twice
# Model names can be long: they go in the heading, and the tile says A − B (the selectboxes above).
st.subheader(f"The difference in value: {md_text(model_a)} − {md_text(model_b)}")
metrics = st.columns([3, 5, 2, 2])
metrics[0].metric("A − B, per item (this data)", words.amount(d, selection.currency),
                  help=f"{md_text(model_a)} − {md_text(model_b)}: the mean of the per-item differences on these items.")
metrics[1].metric(
    "95% interval (new data)",
    f"{words.amount(comparison.low, selection.currency)} to {words.amount(comparison.high, selection.currency)}",
)
metrics[2].metric("Paired test", words.p_value(comparison.p_value),
                  help="The test that matches the interval: it allows for a large difference (one model's costly "
                  "error) that is rare or was not seen. The verdict rests on it.")
metrics[3].metric("Paired t-test", words.p_value(comparison.p_value_t),
                  help="Too optimistic when a costly error is rare: shown for comparison, with the bootstrap's "
                  "p-value in the sentence below.")

on_data, on_new_data = words.paired_sentences(comparison, (model_a, model_b), selection.currency)
st.markdown(md_text(on_data))
st.markdown(md_text(on_new_data))
st.caption(
    f"The first sentence is a fact about these items of the split {md_text(repr(split))}: no test needed. The "
    f"second is an estimate; its bootstrap p-value comes from {n_resamples:,} resamples with seed {seed}. "
    "The interval treats the policies as fixed and the items as a random sample; it does not include the noise "
    f"of tuning the thresholds (see threshold stability below). Values per item in {selection.currency}, "
    "hand-offs included."
)

left, right = st.columns(2)
with left:
    frame = pd.DataFrame([{"model": m, "mean": iv.mean, "low": iv.low, "high": iv.high} for m, iv in intervals.items()])
    # Both charts fill their column: at their natural width the right one's axis title ran over the left one.
    st.altair_chart(value_interval_chart(frame, all_models, currency=selection.currency), width="stretch")
with right:
    st.altair_chart(
        difference_chart(
            difference_counts(difference, weight), model_a=model_a, model_b=model_b, currency=selection.currency,
            models=all_models,
        ),
        width="stretch",
    )

# -- threshold stability
st.subheader("How stable is each tuned threshold?")
st.markdown(
    "The one-threshold policy is re-tuned on bootstrap resamples of each model's tuning split. A wide range "
    "means the chosen threshold owes much to which items happened to be in that split."
)
rows, thresholds, tuned = [], {}, []
with st.spinner("Re-tuning the threshold on bootstrap resamples…"):
    for model in (model_a, model_b):
        tune_split = workspace.tuning_split_for(model)
        tune_run = workspace.sorted(model, tune_split)
        if tune_run is None or not tune_run.predictions.has_labels:
            st.info(f"**{md_text(model)}** has no labelled tuning split, so its threshold stability cannot be measured.")  # noqa: E501
            continue
        try:
            stability = vc.uncertainty.threshold_stability(
                tune_run, values, rng=np.random.default_rng(seed), n_resamples=min(n_resamples, 2000)
            )
        except ValueError as error:
            st.warning(f"**{md_text(model)}**: {md_text(error)}")
            continue
        thresholds[model] = stability.thresholds
        tuned.append({"model": model, "threshold": stability.tuned_threshold})
        threshold = vc.wording.threshold  # as on every page: the exact threshold, to its last digit
        rows.append(
            {
                "Model": model,
                "Tuned on": tune_split,
                "Tuned threshold": threshold(stability.tuned_threshold),
                "Resampled median": threshold(stability.median),
                "95% range, low": threshold(stability.low),
                "95% range, high": threshold(stability.high),
                "Spread": vc.wording.significant(stability.spread),
                "Always abstain in": stability.share_always_abstain,
            }
        )
if rows:
    st.altair_chart(
        stability_chart(
            stability_counts(thresholds),
            all_models,
            tuned=pd.DataFrame(tuned).astype({"threshold": float}),
        ),
        width="stretch",
    )
    show_dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        column_config={"Always abstain in": st.column_config.NumberColumn(format="percent")},
    )
    st.caption(
        "Black ticks: the threshold tuned on the whole tuning split. A dash (–) means always abstaining was best."
    )
