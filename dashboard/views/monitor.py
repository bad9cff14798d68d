"""The "bands, alerts and drift" section of the Monitor page (Streamlit glue).

Calls ``valuecore.monitor_bands`` for one model: the estimation calibration is
fitted on a labelled reference split (the tuning split by default), the
watched split is cut into chunks, and a labelled split is back-tested.
"""

from __future__ import annotations

import streamlit as st

import valuecore as vc
from dashboard.charts.monitor import band_chart
from dashboard.home import recommended_model
from dashboard.safetext import md_text
from dashboard.views import split_text


def _sentences(result: vc.monitoring.MonitorBands, split: str, money) -> list[str]:
    frame = result.frame
    n = len(frame)
    lines = [
        f"Chunk by chunk on {split_text(split)}: the shaded blue band is where the realised value per item should fall "
        f"({100 * result.confidence:g}% of the time) if the calibrated probabilities are right; the grey band is "
        f"where the estimate of a chunk from the reference data would fall ({100 * result.alert_confidence:g}%), "
        f"around {money(result.reference_value_per_item, 4)} per item. Both count what the reference itself "
        f"cannot pin down: its finite sample and the calibration fitted on it ({result.n_resamples} bootstrap "
        "copies)."
    ]
    if result.n_alerts:
        lines.append(f"**{result.n_alerts} of {n} chunks raised an alert**: their estimated value left the reference "
                     "band. Label a sample of those items to check.")
    else:
        lines.append(f"No alert: every one of the {n} chunks stayed within the reference band.")
    if result.n_drift:
        lines.append(f"The confidence distribution drifted away from the reference on {result.n_drift} of {n} chunks "
                     f"(Kolmogorov-Smirnov test, p < {result.drift_level:g}): the model sees different data.")
    return lines


def _charted_alerts(workspace, charted_models, policies, values, split: str, how: dict) -> dict:
    """Per charted model: its bands on the charted split, referenced on its tuning split (auto calibration)."""
    out = {}
    for model in charted_models:  # loop over models
        run = workspace.run(model)
        reference = workspace.tuning_split_for(model)
        if split not in run.splits or reference not in run.splits or not run.splits[reference].has_labels:
            continue
        try:
            out[model] = vc.monitoring.monitor_bands(run.splits[reference], run.splits[split], policies[model],
                                                     values, **how)
        except ValueError:
            continue
    return out


def bands_section(selection, workspace, models, policies, values, *, charted_split=None, charted_model=None,
                  charted_models=(), charted_chunking=None) -> None:
    """Render the section; pages call it with what they already computed.

    ``charted_split``, ``charted_models`` (the first is ``charted_model``) and ``charted_chunking``
    (``{"n_chunks": k}`` or ``{"period": p}``) say what the production chart above shows: the alerts
    of every charted model are summed up first, and the detailed view opens on ``charted_model``.
    """
    st.header("Bands, alerts and drift")
    candidates = [m for m in models if any(p.has_labels for p in workspace.run(m).splits.values())]
    if not candidates:
        st.info("Bands need a labelled reference split; none of the selected models has one.")
        return
    charted = {}
    if charted_split is not None and charted_chunking is not None:
        charted = _charted_alerts(workspace, [m for m in charted_models if m in candidates], policies, values,
                                  charted_split, dict(charted_chunking))
        if charted:
            st.markdown(
                f"Alerts on the charted split {md_text(repr(charted_split))}, per model: "
                + "; ".join(f"**{md_text(m)}** {r.n_alerts} of {len(r.frame)} chunks" for m, r in charted.items())
                + "."
            )
    columns = st.columns(4)
    # Opens on the model the production chart watches, else on the recommended one.
    opening = charted_model if charted_model in candidates else recommended_model(selection, among=candidates)
    model = columns[0].selectbox("Model", candidates, key="monitor_bands_model",
                                 index=candidates.index(opening) if opening else 0)
    run = workspace.run(model)
    labelled = [s for s, p in run.splits.items() if p.has_labels]
    default_reference = workspace.tuning_split_for(model)
    reference_split = columns[1].selectbox(
        "Labelled reference split", labelled,
        index=labelled.index(default_reference) if default_reference in labelled else 0,
        key="monitor_bands_reference",
        help="Fits the calibration of the estimate and sets the reference band and confidence distribution.",
    )
    others = [s for s in run.splits if s != reference_split] or [reference_split]
    # the charted split first, then the unlabelled ones
    unlabelled_first = sorted(others, key=lambda s: (s != charted_split, run.splits[s].has_labels))
    watched = columns[2].selectbox("Split to watch", unlabelled_first, key="monitor_bands_split")
    same_as_chart = watched == charted_split and model == charted_model and charted_chunking is not None
    if same_as_chart:
        how = dict(charted_chunking)
        columns[3].caption("Chunks as in the production chart above.")
    else:
        how = {"n_chunks": columns[3].slider("Chunks", 2, 40, 8, key="monitor_bands_chunks")}
    if charted_model is not None and (model != charted_model or watched != charted_split):
        st.caption(f"The production chart above shows {md_text(repr(charted_model))} on split "
                   f"{md_text(repr(charted_split))}; these alerts watch {md_text(repr(model))} on "
                   f"{md_text(repr(watched))}.")
    calibration = st.radio(
        "Calibrate the estimate", ["auto", "none"], horizontal=True, key="monitor_bands_calibration",
        format_func={"auto": "On the reference split (isotonic, or temperature for a value matrix of 3+ classes)",
                     "none": "No: raw probabilities"}.get,
    )
    try:
        reused = (same_as_chart and calibration == "auto" and model in charted
                  and reference_split == workspace.tuning_split_for(model))
        result = charted[model] if reused else vc.monitoring.monitor_bands(
            run.splits[reference_split], run.splits[watched], policies[model], values, calibration=calibration, **how)
    except ValueError as error:
        st.warning(f"**{md_text(model)}**: no bands: {md_text(error)}")
        return
    st.caption(f"Estimate calibrated with: {result.calibration_text}.")
    st.altair_chart(band_chart(result.frame, selection.currency))
    for line in _sentences(result, watched, selection.money):
        st.markdown(line)
    # back-test: the band against the truth on a labelled split other than the reference
    backtest_splits = [s for s in labelled if s != reference_split]
    if not backtest_splits:
        st.caption("No labelled split besides the reference, so the bands cannot be back-tested.")
        return
    backtest = selection.eval_split if selection.eval_split in backtest_splits else backtest_splits[0]
    # Watching the labelled split back-tested already gives the back-test: not computed twice.
    checked = result if backtest == watched else vc.monitoring.monitor_bands(
        run.splits[reference_split], run.splits[backtest], policies[model], values,
        n_chunks=how.get("n_chunks", 8), calibration=calibration)
    covered = int(checked.frame["covered"].astype(bool).sum())
    st.markdown(
        f"Back-test on the labelled split {split_text(backtest)}: the {100 * checked.confidence:g}% band "
        f"covered the realised "
        f"value in **{covered} of {checked.n_backtest} chunks** ({100 * checked.backtest_coverage:.0f}%)."
    )
