"""The "class mix" section of the Monitor page (Streamlit glue).

Per chunk of an unlabelled split: the class mix estimated from the model's
calibrated probabilities (``valuecore.monitoring.estimate_priors``, EM), the
policy's value per item estimated under that mix, and what the policy re-tuned
for that mix (the tuning split re-weighted) would earn there.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import valuecore as vc
from dashboard.safetext import md_text
from dashboard.tables import dataframe as show_dataframe

RETUNABLE = ("threshold", "class_thresholds")


def _candidates(workspace, models) -> dict:
    """model -> its unlabelled splits, for models with probability vectors and a labelled tuning split."""
    out = {}
    for model in models:
        tune = workspace.plan(model).tune_split
        splits = workspace.run(model).splits
        if tune is None or not splits[tune].has_labels or not all(p.has_proba for p in splits.values()):
            continue
        unlabelled = [name for name, p in splits.items() if not p.has_labels and name != tune]
        if unlabelled:
            out[model] = unlabelled
    return out


def mix_table(reference, watched, policy, values, kind: str, n_chunks: int) -> pd.DataFrame:
    """One row per chunk: the estimated mix, and the value per item as tuned and re-tuned for that mix."""
    calibration = dict(policy.calibration) if policy.calibration else None
    rows = []
    for chunk in vc.monitoring.chunk_predictions(watched, n_chunks=n_chunks):
        estimate = vc.monitoring.estimate_priors(policy.calibrate(chunk.predictions), reference, "em")
        row = {"Chunk": chunk.key, "Items": chunk.predictions.total_weight}
        for name, share, low, high in zip(estimate.classes, estimate.priors, estimate.low, estimate.high):
            row[f"Share of {name}"] = f"{share:.2f} ({low:.2f}–{high:.2f})"
        now = vc.monitoring.estimate_under_priors(policy, chunk.predictions, values, estimate).value_per_item
        row["As tuned"] = now
        if kind in RETUNABLE:
            reweighted = vc.monitoring.reweight_to_priors(reference, estimate.priors)
            retuned = vc.fit_policy(kind, vc.presort(reweighted), values, calibration=calibration)
            row["Re-tuned"] = vc.monitoring.estimate_under_priors(retuned, chunk.predictions, values,
                                                                  estimate).value_per_item
            row["Gain"] = row["Re-tuned"] - now
        rows.append(row)
    return pd.DataFrame(rows)


def prior_shift_section(selection, workspace, models, policies, values, kind: str) -> None:
    """Render the section; the page calls it with what it already computed."""
    st.header("Class mix")
    candidates = _candidates(workspace, [m for m in models if m in policies])
    if not candidates:
        st.info("The class mix is estimated on a split without labels, from probability vectors (proba_ columns), "
                "against a labelled tuning split: none of the selected runs has all three.")
        return
    columns = st.columns(3)
    with columns[0]:
        model = st.selectbox("Model", list(candidates), key="monitor_prior_model")
    with columns[1]:
        split = st.selectbox("Split", candidates[model], key="monitor_prior_split")
    with columns[2]:
        n_chunks = st.slider("Number of chunks", min_value=1, max_value=20, value=6, key="monitor_prior_chunks")
    tune = workspace.plan(model).tune_split
    try:
        with st.spinner("Estimating the class mix of every chunk…"):
            table = mix_table(workspace.calibrated(model, tune), workspace.predictions(model, split),
                              policies[model], values, policies[model].kind, n_chunks)  # its own rule
    except ValueError as error:
        st.warning(f"**{md_text(model)}**: {md_text(str(error))}")
        return
    st.markdown(
        f"The share of each class in every chunk of {md_text(repr(split))}, estimated without labels from "
        f"**{md_text(model)}**'s calibrated probabilities (EM, with a 95% interval), against the mix of its tuning "
        f"split {md_text(repr(tune))}. The values per item ({md_text(selection.currency)}) are estimated under each "
        "chunk's mix: for the policy as tuned and, for a tuned rule, re-tuned for that mix."
    )
    money = st.column_config.NumberColumn(format="%.4f")
    show_dataframe(table, hide_index=True,
                   column_config={"Items": st.column_config.NumberColumn(format="%.0f"), "As tuned": money,
                                  "Re-tuned": money, "Gain": money})
    if "Gain" in table and table["Gain"].max() <= 0:
        st.markdown("Re-tuning for the estimated mix would not earn more on any chunk: the policy as tuned fits it.")
    elif "Gain" in table:
        best = table.loc[table["Gain"].idxmax()]
        st.markdown(f"Re-tuning for the estimated mix would earn up to {selection.money(float(best['Gain']), 4)} "
                    f"more per item (chunk {md_text(str(best['Chunk']))}). The command line writes that policy: "
                    "`python -m valuecore report` with `--adapt-to` and the split's name.")
    else:
        st.caption("This rule is not tuned on data: a new class mix changes its value, not the rule.")
