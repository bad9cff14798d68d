"""The Monitor page's view model: production chunks, bands and alerts, the back-test, the class mix.

The page draws its widgets section by section; each section's numbers and
words come from one function here, returning a frozen dataclass:
:func:`build` (the rule's policies, the splits on offer), :func:`production`,
:func:`bands`, :func:`backtest` and :func:`class_mix`. Nothing here draws.

**One estimate.** Every label-free value on the page is the estimate of
``valuecore.monitoring.monitor_bands``: the policy's decisions on the
probabilities as the policy sees them (the sidebar's recalibration, if any),
valued under a calibration fitted on the model's labelled reference split (its
tuning split), or under those probabilities themselves when the user chooses
"none" (:data:`ESTIMATE_CALIBRATIONS`). The production chart, its summary, the
bands, the alerts and the back-test all show that one estimate, so they agree.
Only a threshold re-tuned on each chunk (the "re-tune" box) is estimated
without the reference calibration (a different policy per chunk); the page
says so. Coverage and the best threshold per chunk come from
``valuecore.monitoring.monitor`` (they do not depend on the estimate's calibration).

**Cached.** The bootstrap behind the bands refits the calibration a hundred
times (about 0.15 s per model and split on the breast_cancer sample); the
page reran it for every charted model on every rerun. The results are kept
(``st.cache_resource``) under the run file's key, the splits, the policy, the
values, the chunking and the calibration. Below that cache, what does not depend on the values is kept by
the core per reference (``valuecore._monitor.bands``): each bootstrap copy's draws, refitted map and
calibrated confidences (up to 32 MB a split, as much again for the reference's weights per distinct
confidence), and the sorted chunks with their drift test. A new value then only values those copies: each
copy's reference value is a sum over distinct confidences in numpy, no longer a threaded BLAS dot per copy
(benchmarks/README.md, fifth pass: their bits differ by a few ulps, no alert moves).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import streamlit as st

import valuecore as vc

from ..data import policy_key, values_key
from ..home import recommended_model
from ..memory import BudgetCache
from ..safetext import md_text
from . import POLICY_LABELS, split_text

__all__ = [
    "ESTIMATE_CALIBRATIONS",
    "GUARD_WORDS",
    "MIX_COLUMN_HELP",
    "MIX_NUMBER_COLUMNS",
    "BacktestView",
    "BandsView",
    "ClassMixView",
    "MonitorPage",
    "ProductionView",
    "backtest",
    "backtest_formats",
    "mix_formats",
    "bands",
    "bands_options",
    "band_spec",
    "build",
    "chart_specs",
    "class_mix",
    "class_mix_candidates",
    "estimated_frame",
    "mix_table",
    "production",
    "summary_formats",
]

SAMPLE_WITH_PRODUCTION = "breast_cancer"
ESTIMATE_CALIBRATIONS = {
    "auto": "Calibrated on each model's labelled reference split (isotonic, or temperature for a value matrix of "
            "3+ classes)",
    "none": "Not calibrated: the probabilities as the policy sees them",
}
RETUNABLE = ("threshold", "class_thresholds")


# ------------------------------------------------------------------ caches
def _how_key(how: dict) -> tuple:
    return tuple(sorted(how.items()))


def _run_key(ws, model: str, split: str) -> tuple:
    return (ws.run_key(model), model, split, ws.calibration_key(model))


@st.cache_resource(show_spinner=False, max_entries=256)
def _monitored(key: tuple, _predictions, _policy, _values):
    how, retune, estimated = dict(key[-3]), key[-2], key[-1]
    return vc.monitoring.monitor(_predictions, _policy, _values, retune=retune, estimated=estimated, **how)


@st.cache_resource(show_spinner=False, max_entries=256)
def _banded(key: tuple, _reference, _watched, _policy, _values):
    how, calibration, resamples = dict(key[-3]), key[-2], key[-1]
    return vc.monitoring.monitor_bands(_reference, _watched, _policy, _values, calibration=calibration,
                                       n_resamples=resamples, **how)


@st.cache_resource(show_spinner=False, max_entries=256)
def _estimates(key: tuple, _reference, _watched, _policy, _values):
    how, calibration = dict(key[-3]), key[-2]
    return vc.monitoring.monitor_estimates(_reference, _watched, _policy, _values, calibration=calibration, **how)


# The estimate of a chunk is the calibration fitted on the whole reference; the bootstrap copies (each
# refitting it) only widen the bands. Where no band is shown (the back-test's table and chart), the estimate
# alone is computed (monitor_estimates: the same bits, no copy, drift test or realised value): the first visit
# of the page on the breast_cancer sample spent most of its time on a hundred refits per model for bands nobody
# saw, and two copies per model still cost a new value on five runs of 10^5 rows about a second under load.
ESTIMATE_ONLY = 0
WITH_BANDS = inspect.signature(vc.monitoring.monitor_bands).parameters["n_resamples"].default  # the core's default


def monitor_frame(ws, model: str, split: str, policy, values, how: dict, retune: bool = False,
                  estimated: bool = True) -> pd.DataFrame:
    """``valuecore.monitoring.monitor`` of one model's split (raw predictions, the policy's own calibration), cached
    (``estimated=False``: without its own estimate, for a caller that puts in the bands')."""
    key = (*_run_key(ws, model, split), policy_key(policy), values_key(values), _how_key(how), bool(retune),
           bool(estimated))
    return _monitored(key, ws.predictions(model, split), policy, values)


def model_bands(ws, model: str, split: str, policy, values, how: dict, calibration: str = "auto",
                reference: str | None = None, resamples: int = WITH_BANDS) -> vc.monitoring.MonitorBands:
    """``valuecore.monitoring.monitor_bands`` of one model's split against its reference split, cached
    (``resamples=ESTIMATE_ONLY``: ``monitor_estimates``' frame instead, the same estimate without the bands).

    Both splits are given as the policy sees them (the sidebar's recalibration applied), with the policy's
    own calibration taken off so it is not applied twice: the decisions are the policy's, and "none"
    values them under the probabilities the policy acts on. ValueError (in words) when it cannot be done.
    """
    reference = ws.tuning_split_for(model) if reference is None else reference
    run = ws.run(model)
    if reference not in run.splits or not run.splits[reference].has_labels:
        raise ValueError(f"no labelled reference split {reference!r} to calibrate the estimate on")
    if split not in run.splits:
        raise ValueError(f"no split {split!r}")
    bare = replace(policy, calibration={"method": "none"})
    key = (*_run_key(ws, model, split), reference, policy_key(policy), values_key(values), _how_key(how),
           calibration, int(resamples))
    made = _estimates if resamples == ESTIMATE_ONLY else _banded
    return made(key, ws.calibrated(model, reference), ws.calibrated(model, split), bare, values)


def estimated_frame(ws, model: str, split: str, policy, values, how: dict, *, calibration: str = "auto",
                    retune: bool = False, resamples: int = WITH_BANDS
                    ) -> tuple[pd.DataFrame, vc.monitoring.MonitorBands | None, str]:
    """One model's chunks as ``monitor`` gives them, its estimated value replaced by that of the bands.

    Returns the frame (with a ``model`` column), the bands (None when they cannot be had) and a note
    saying why the estimate is not the bands' one ("" when it is). ``resamples=ESTIMATE_ONLY`` when the
    bands are not shown: the estimate is the same, and the bands are its frame alone (``monitor_estimates``).
    """
    def monitored(estimated: bool) -> pd.DataFrame:
        frame = monitor_frame(ws, model, split, policy, values, how, retune, estimated).copy()
        frame.insert(0, "model", model)
        return frame

    if retune and policy.kind in RETUNABLE:
        return monitored(True), None, "re-tuned on each chunk"
    # monitor's own estimate is kept only where the bands' has none (never, on a chunk of any weight): it is
    # computed when so, not for every model on every new value to be replaced.
    frame = monitored(False)  # refuses what the frame with the estimate refuses, in its words
    try:
        found = model_bands(ws, model, split, policy, values, how, calibration, resamples=resamples)
    except ValueError as error:
        return monitored(True), None, str(error)
    estimated = found if resamples == ESTIMATE_ONLY else found.frame
    per_item = _estimate_per_chunk(frame, estimated)
    if np.isnan(per_item).any():
        frame = monitored(True)
    _take_estimate(frame, estimated, per_item)
    return frame, found, ""


def _estimate_per_chunk(frame: pd.DataFrame, estimated: pd.DataFrame) -> np.ndarray:
    """``estimated``'s value per item of each chunk of ``frame``, in its order (NaN where it has none)."""
    keys, chunks = estimated["chunk"].to_numpy(dtype=object), frame["chunk"].to_numpy(dtype=object)
    if len(keys) == len(chunks) and len(set(keys)) == len(keys) and (keys == chunks).all():
        # The same chunks in the same order (the page's case: one chunking of one split): aligned as they are,
        # without an index to build and map through for every model on every new value.
        return estimated["estimated_value_per_item"].to_numpy(dtype=float)
    return frame["chunk"].map(estimated.set_index("chunk")["estimated_value_per_item"]).to_numpy(dtype=float)


def _take_estimate(frame: pd.DataFrame, estimated: pd.DataFrame, per_item: np.ndarray | None = None) -> None:
    """Put ``estimated``'s value per item of each chunk in ``frame`` (where it has one) and the totals it gives
    (``per_item``: :func:`_estimate_per_chunk` of them, when already taken)."""
    per_item = _estimate_per_chunk(frame, estimated) if per_item is None else per_item
    kept = frame["estimated_value_per_item"].to_numpy(dtype=float)
    frame["estimated_value_per_item"] = np.where(np.isnan(per_item), kept, per_item)
    frame["estimated_value_total"] = frame["estimated_value_per_item"] * frame["n"]


# ------------------------------------------------------------------- charts
def monitor_long(frame: pd.DataFrame) -> pd.DataFrame:
    """Turn ``valuecore`` monitor output (plus a ``model`` column) into long form.

    Parameters
    ----------
    frame : DataFrame
        One row per (model, chunk) with ``chunk``, ``start``, ``end``, ``n``
        and the ``estimated_*`` / ``realised_*`` columns of
        ``valuecore.monitoring.monitor``.

    Returns
    -------
    DataFrame
        Columns ``chartspecs.MONITOR_LONG_COLUMNS``: one row per (model, chunk,
        measure, source) with a finite ``amount``; ``position`` numbers each
        model's chunks from 1 in the order given; realised rows exist only
        for chunks with labels.
    """
    missing = [c for c in ("model", "chunk", "n") if c not in frame.columns]
    if missing:
        raise ValueError(f"monitor output needs the columns {missing}; got {list(frame.columns)}")
    keys = frame.loc[:, ["model", "chunk", "n"]].copy()
    keys.insert(1, "position", frame.groupby("model", sort=False).cumcount().to_numpy() + 1)
    for column in ("start", "end"):
        keys[column] = frame[column] if column in frame.columns else pd.NaT
    # One frame taken from the keys' rows, measure after measure, not a copy of the keys per measure and
    # source concatenated (pandas's copies and concatenation were most of this function's time).
    amounts, labels = [], []
    for measure, (estimated, realised, _, _) in vc.chartspecs.MONITOR_MEASURES.items():
        for source, column in zip(vc.chartspecs.MONITOR_SOURCES, (estimated, realised)):
            if column is None or column not in frame.columns:
                continue
            amounts.append(pd.to_numeric(frame[column], errors="coerce").astype(float).to_numpy())
            labels.append((measure, source))
    if not amounts:
        return pd.DataFrame(columns=list(vc.chartspecs.MONITOR_LONG_COLUMNS))
    amount = np.concatenate(amounts)
    kept = np.flatnonzero(~np.isnan(amount))  # dropna: NaN (not a number, or no value) only
    rows = np.tile(np.arange(len(frame)), len(amounts))[kept]
    long = keys.take(rows).reset_index(drop=True)
    part = kept // max(len(frame), 1)
    # the labels' text as pandas reads a word (its string dtype), an empty frame's too
    tags = pd.DataFrame(labels, columns=["measure", "source"])
    long["measure"] = tags["measure"].array.take(part)
    long["source"] = tags["source"].array.take(part)
    long["amount"] = amount[kept]
    return long.loc[:, list(vc.chartspecs.MONITOR_LONG_COLUMNS)]


# The specs are kept per frame (hashed by Streamlit): turning a frame's rows into the specs' records is what a
# rerun would otherwise repeat for each of the page's seven charts.
@st.cache_resource(show_spinner=False, max_entries=64)
def _monitor_specs(frame: pd.DataFrame, models: tuple, currency: str, by_time: bool) -> tuple:
    long = monitor_long(frame)
    specs = [vc.chartspecs.monitor_spec(long, list(models), measure="value_per_item", by_time=by_time,
                                        currency=currency)]
    specs += [vc.chartspecs.monitor_spec(long, list(models), measure=measure, by_time=by_time, currency=currency,
                                         legend=False, height=240) for measure in ("coverage", "best_threshold")]
    return tuple(specs)


def chart_specs(frame: pd.DataFrame, models, currency: str, *, by_time: bool) -> tuple[dict, dict, dict]:
    """Vega-Lite specs of a monitor frame's charts: value per item, coverage, best threshold (cached)."""
    return _monitor_specs(frame, tuple(models), currency, bool(by_time))


@st.cache_resource(show_spinner=False, max_entries=64)
def _band_spec(frame: pd.DataFrame, currency: str) -> dict:
    return vc.chartspecs.monitor_band_spec(frame, currency)


def band_spec(frame: pd.DataFrame, currency: str) -> dict:
    """The Vega-Lite spec of a bands frame's chart (cached)."""
    return _band_spec(frame, currency)


# -------------------------------------------------------------- the page top
@dataclass(frozen=True)
class MonitorPage:
    """What the top of the Monitor page shows, and what its sections offer.

    ``policies`` maps each model that got a policy of the rule to it (``models``, in order);
    ``problems`` say why the others did not (markdown-safe). ``unlabelled`` maps each split
    without labels to the models that have it; ``labelled`` lists the labelled splits.
    """

    recalibration_note: str
    raw_probabilities: bool
    models: tuple
    policies: dict = field(default_factory=dict)
    problems: tuple = ()
    unlabelled: dict = field(default_factory=dict)
    labelled: tuple = ()
    backtest_default: str | None = None
    offer_sample: bool = False


def build(selection, ws, kind: str, samples=()) -> MonitorPage:
    """The policies of rule ``kind`` (tuned on each model's tuning split) and the splits to watch or back-test."""
    raw = selection.calibration == "none"
    note = ("The policies act on the probabilities as the models report them (no recalibration in the sidebar). "
            "The estimates below are calibrated on each model's labelled reference split unless you choose "
            "otherwise; to recalibrate the policies themselves, choose **temperature** or **isotonic** under "
            "'Recalibrate before thresholding' (the Calibration page shows how miscalibrated each model is)."
            if raw else
            f"Probabilities recalibrated with {selection.calibration}, fitted on each model's tuning split.")
    policies, problems = {}, []
    for model in selection.models:
        try:
            policies[model] = ws.policy(model, kind, selection.values)
        except ValueError as error:
            problems.append(f"**{md_text(model)}**: no {POLICY_LABELS.get(kind, kind).lower()} policy: "
                            f"{md_text(error)}")
    models = tuple(m for m in selection.models if m in policies)
    splits = sorted({s for m in models for s in ws.run(m).splits})
    unlabelled = {s: tuple(m for m in models if s in ws.run(m).splits and not ws.run(m).splits[s].has_labels)
                  for s in splits}
    unlabelled = {s: ms for s, ms in unlabelled.items() if ms}
    labelled = tuple(sorted({s for m in models for s, p in ws.run(m).splits.items() if p.has_labels}))
    default = selection.eval_split if selection.eval_split in labelled else (labelled[-1] if labelled else None)
    return MonitorPage(note, raw, models, policies, tuple(problems), unlabelled, labelled, default,
                       offer_sample=not unlabelled and SAMPLE_WITH_PRODUCTION in samples)


def has_times(ws, models, split: str) -> bool:
    """Whether every model's split has timestamps (then it can be cut by day, week or month)."""
    return all(ws.predictions(m, split).timestamp is not None for m in models)


# --------------------------------------------------------------- production
SUMMARY_COLUMNS = {
    "Model": "Model",
    "n_chunks": "Chunks",
    "n": "Items",
    "estimated_value_total": "Estimated value ({})",
    "estimated_value_per_item": "Estimated value per item ({})",
    "estimated_coverage": "Acted on (estimated)",  # "coverage" on screen is "Acted on" on every page
}


def summary_formats(selection) -> dict:
    """How the production summary's numbers read (column -> formatter): every amount as every other amount on
    this page reads, three significant digits (``valuecore.wording.amount``: whole units from 1,000), the
    coverage in percent. A split's total is an estimate like the rest: read with cents below 100 (``projected``),
    a small split's "$0.94" sat beside the bands' "around $0.911"."""
    names = {k: v.format(selection.currency) for k, v in SUMMARY_COLUMNS.items()}
    return {names["n"]: vc.wording.count, names["estimated_value_total"]: selection.amount,
            names["estimated_value_per_item"]: selection.amount, names["estimated_coverage"]: vc.wording.percent}


@dataclass(frozen=True)
class ProductionView:
    """The production split chunk by chunk: ``frame`` (``monitor`` columns plus ``model``, the estimate
    the bands' one) for the charts, ``summary`` over the whole split, and the sentences around them."""

    frame: pd.DataFrame
    summary: pd.DataFrame
    estimate_note: str
    drift: str = ""
    alerts: str = ""
    problems: tuple = ()
    bands_model: str | None = None
    charted_bands: dict = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.frame.empty


def _summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for model, part in frame.groupby("model", sort=False):
        summary = vc.monitoring.monitor_summary(part).iloc[-1]  # reads the monitor columns, not "model"
        rows.append({"Model": model, **summary.drop(labels="split").to_dict()})
    return pd.DataFrame(rows)


def _estimate_note(calibration: str, bands_of: dict, left_out: dict, retune: bool) -> str:
    if retune:
        return ("The threshold is re-tuned on each chunk, so each chunk has its own policy: its value is estimated "
                "from the probabilities as the policy sees them, not calibrated on the reference split like the "
                "bands, and it is optimistic (tuned and judged on the same chunk).")
    first = next(iter(bands_of.values()), None)
    if first is None:
        how = "from the probabilities as the policy sees them (no labelled reference split to calibrate on)"
    elif calibration == "none":
        how = "from the probabilities as the policy sees them, not calibrated"
    else:
        how = "after a calibration fitted on each model's labelled reference split (as for the bands)"
    note = (f"Solid lines: the value per item estimated without labels, {how}: the same estimate as the bands, "
            "alerts and back-test on this page. The best threshold is the one that would maximise the estimate on that "
            "chunk alone (on the probabilities as the policy sees them); a drift in it says the confidences moved.")
    if first is not None and left_out:
        note += " Not calibrated for " + "; ".join(f"{md_text(m)} ({md_text(why)})" for m, why in left_out.items())
        note += "."
    return note


def _estimated_frames(selection, page: MonitorPage, ws, models, split: str, how: dict, **options):
    """:func:`estimated_frame` of every model, stacked: (frame, problems in words, bands per model, why each
    model without bands has none)."""
    frames, problems, bands_of, left_out = [], [], {}, {}
    for model in models:
        try:
            frame, found, why = estimated_frame(ws, model, split, page.policies[model], selection.values, how,
                                                **options)
        except ValueError as error:
            problems.append(f"**{md_text(model)}**: {md_text(error)}")
            continue
        frames.append(frame)
        if found is not None:
            bands_of[model] = found
        else:
            left_out[model] = why
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()), problems, bands_of, left_out


def production(selection, page: MonitorPage, ws, split: str, how: dict, *, retune: bool = False,
               calibration: str = "auto") -> ProductionView:
    """Every model that has ``split`` (without labels), chunked by ``how`` (``{"n_chunks": k}`` or
    ``{"period": p}``): the estimate per chunk, its summary, the drift of the worst model and the alerts."""
    models = page.unlabelled.get(split, ())
    frame, problems, bands_of, left_out = _estimated_frames(selection, page, ws, models, split, how,
                                                            calibration=calibration, retune=retune)
    note = _estimate_note(calibration, bands_of, left_out, retune)
    opening = _alerting_most(bands_of, recommended_model(selection, among=models) or (models[0] if models else None))
    if frame.empty:
        return ProductionView(frame, pd.DataFrame(), note, problems=tuple(problems), bands_model=opening)
    summary = _summary_table(frame)
    currency = selection.currency
    summary = summary[list(SUMMARY_COLUMNS)].rename(
        columns={k: v.format(currency) for k, v in SUMMARY_COLUMNS.items()})
    first = frame.groupby("model", sort=False).head(1).set_index("model")["estimated_value_per_item"]
    last = frame.groupby("model", sort=False).tail(1).set_index("model")["estimated_value_per_item"]
    change = last - first
    worst = change.idxmin()
    drift = (f"From the first to the last chunk, the estimated value per item of **{md_text(worst)}** moved by "
             f"{selection.amount(float(change[worst]))}" + _drop_words(change[worst], bands_of.get(worst)))
    alerts = ""
    if bands_of:
        alerts = (f"Alerts on the charted split {md_text(repr(split))}, per model: "
                  + "; ".join(f"**{md_text(m)}** {r.n_alerts} of {len(r.frame)} chunks" for m, r in bands_of.items())
                  + ".")
    return ProductionView(frame, summary, note, drift, alerts, tuple(problems), opening, bands_of)


def _alerting_most(bands_of: dict, fallback: str | None) -> str | None:
    """The model whose bands raise the most alerts (the fallback, the recommended one, on a tie or with none)."""
    alerts = {model: result.n_alerts for model, result in bands_of.items()}
    most = max(alerts.values(), default=0)
    if most == 0 or alerts.get(fallback) == most:
        return fallback
    return next(model for model, n in alerts.items() if n == most)


def _drop_words(change: float, result) -> str:
    """What a first-to-last change means: a drop is worth investigating only when a chunk left its band."""
    if change >= 0:
        return "."
    if result is None:
        return " (a drop: label a sample of recent items to check)."
    if result.n_alerts == 0:
        return (" (within the reference band on every chunk, no alert: chance can move an estimate that much, "
                "nothing to investigate yet).")
    return " (a drop worth investigating: label a sample of recent items to check)."


# -------------------------------------------------------------------- bands
@dataclass(frozen=True)
class BandsOptions:
    """What the bands section offers: models with a labelled split, and per model its labelled splits."""

    candidates: tuple
    labelled: dict = field(default_factory=dict)
    opening: str | None = None

    def reference_default(self, ws, model: str) -> int:
        splits = self.labelled[model]
        default = ws.tuning_split_for(model)
        return splits.index(default) if default in splits else 0

    def watched(self, ws, model: str, reference: str, charted_split: str | None) -> list[str]:
        """The splits to watch: the charted split first, then the unlabelled ones."""
        run = ws.run(model)
        others = [s for s in run.splits if s != reference] or [reference]
        return sorted(others, key=lambda s: (s != charted_split, run.splits[s].has_labels))


def bands_options(selection, ws, models, bands_model: str | None = None) -> BandsOptions:
    candidates = tuple(m for m in models if any(p.has_labels for p in ws.run(m).splits.values()))
    labelled = {m: tuple(s for s, p in ws.run(m).splits.items() if p.has_labels) for m in candidates}
    # Opens on the model the production section points at (the one that alerts most), else on the recommended one.
    opening = bands_model if bands_model in candidates else recommended_model(selection, among=candidates)
    return BandsOptions(candidates, labelled, opening)


@dataclass(frozen=True)
class BandsView:
    """One model's bands on a watched split, and their back-test on a labelled split (when there is one)."""

    frame: pd.DataFrame | None = None
    calibration_text: str = ""
    sentences: tuple = ()
    mismatch: str = ""
    backtest: str = ""
    error: str = ""

    @property
    def backtest_is_caption(self) -> bool:
        """A back-test that could not run is said in small print; one that ran reads as the text around it."""
        return not self.backtest.startswith("Back-test")


def _sentences(result: vc.monitoring.MonitorBands, model: str, split: str, amount, others: dict) -> list[str]:
    frame = result.frame
    n = len(frame)
    lines = [
        f"Chunk by chunk on {split_text(split)}: the shaded blue band is where the realised value per item should fall "
        f"({vc.wording.level(result.confidence)} of the time) if the calibrated probabilities are right; the grey "
        "band is where the estimate of a chunk from the reference data would fall "
        f"({vc.wording.level(result.alert_confidence)}), "
        f"around {amount(result.reference_value_per_item)} per item. Both count what the reference itself "
        f"cannot pin down: its finite sample and the calibration fitted on it ({result.n_resamples} bootstrap "
        "copies)."
    ]
    if result.n_alerts:
        lines.append(f"**{result.n_alerts} of {n} chunks raised an alert** for **{md_text(model)}**: their estimated "
                     "value left the reference band. Label a sample of those items to check.")
    else:
        line = f"No alert for **{md_text(model)}**: every one of the {n} chunks stayed within the reference band."
        alerting = {m: r for m, r in others.items() if m != model and r.n_alerts}
        if alerting:
            line += (" Other models do raise alerts on this split: "
                     + "; ".join(f"**{md_text(m)}** {r.n_alerts} of {len(r.frame)} chunks" for m, r in alerting.items())
                     + ".")
        lines.append(line)
    if result.n_drift:
        lines.append(f"The confidence distribution drifted away from the reference on {result.n_drift} of {n} chunks "
                     f"(Kolmogorov-Smirnov test, p < {result.drift_level:g}): the model sees different data.")
    return lines


def bands(selection, page: MonitorPage, ws, model: str, reference: str, watched: str, how: dict, *,
          calibration: str = "auto", charted_split: str | None = None, charted_bands: dict | None = None
          ) -> BandsView:
    """The bands of ``model`` on ``watched`` against ``reference``, and their back-test.

    ``charted_split`` and ``charted_bands`` (model -> bands) are the production section's: the words say how
    this model's alerts relate to theirs.
    """
    mismatch = ""
    if charted_split is not None and watched != charted_split:
        mismatch = (f"The production chart above shows every model on split {md_text(repr(charted_split))}; "
                    f"these alerts watch {md_text(repr(model))} on {md_text(repr(watched))}.")
    others = (charted_bands or {}) if watched == charted_split else {}
    policy, values = page.policies[model], selection.values
    try:
        result = model_bands(ws, model, watched, policy, values, how, calibration, reference)
    except ValueError as error:
        return BandsView(mismatch=mismatch, error=f"**{md_text(model)}**: no bands: {md_text(error)}")
    text = result.calibration_text
    if calibration == "none" and selection.calibration != "none":
        text += f", after the sidebar's {selection.calibration} recalibration"
    view = dict(frame=result.frame, calibration_text=f"Estimate calibrated with: {text}.",
                sentences=tuple(_sentences(result, model, watched, selection.amount, others)),
                mismatch=mismatch)
    backtest_splits = [s for s in ws.run(model).splits if ws.run(model).splits[s].has_labels and s != reference]
    if not backtest_splits:
        return BandsView(**view, backtest="No labelled split besides the reference, so the bands cannot be "
                                          "back-tested.")
    split = selection.eval_split if selection.eval_split in backtest_splits else backtest_splits[0]
    # Watching the labelled split back-tested already gives the back-test: not computed twice (and cached).
    checked = result if split == watched else model_bands(ws, model, split, policy, values,
                                                          {"n_chunks": how.get("n_chunks", 8)}, calibration,
                                                          reference)
    covered = int(checked.frame["covered"].astype(bool).sum())
    sentence = (f"Back-test on the labelled split {split_text(split)}: the {vc.wording.level(checked.confidence)} band "
                f"covered the realised value in **{covered} of {checked.n_backtest} chunks** "
                f"({vc.wording.percent(checked.backtest_coverage)}).")
    return BandsView(**view, backtest=sentence)


# ---------------------------------------------------------------- back-test
BACKTEST_COLUMNS = {
    "Model": "Model",
    "n": "Items",
    "estimated_value_per_item_labelled": "Estimated per item ({})",
    "realised_value_per_item": "Realised per item ({})",
    "estimation_error_per_item": "Estimate − realised ({})",
}


def backtest_formats(selection) -> dict:
    """How the back-test table's numbers read: items counted, amounts per item at three significant digits."""
    names = {k: v.format(selection.currency) for k, v in BACKTEST_COLUMNS.items()}
    return {names["n"]: vc.wording.count, **{names[k]: selection.amount for k in (
        "estimated_value_per_item_labelled", "realised_value_per_item", "estimation_error_per_item")}}


@dataclass(frozen=True)
class BacktestView:
    """A labelled split, its labels hidden for the estimate (the page's one estimate) and used for the truth."""

    frame: pd.DataFrame
    table: pd.DataFrame | None = None
    in_sample: str = ""
    intro: str = ""
    verdict: str = ""
    estimate_note: str = ""
    problems: tuple = ()

    @property
    def empty(self) -> bool:
        return self.frame.empty


def backtest(selection, page: MonitorPage, ws, split: str, n_chunks: int, *, calibration: str = "auto"
             ) -> BacktestView:
    models = [m for m in page.models if split in ws.run(m).splits]
    in_sample = ""
    if any(ws.tuning_split_for(m) == split for m in models):
        in_sample = (f"Split {split_text(split)} is also where thresholds (and any recalibration) were fitted, and "
                     "the estimate calibrated: the back-test is in-sample and flatters the estimate. Prefer the "
                     "evaluated split.")
    frame, problems, bands_of, left_out = _estimated_frames(selection, page, ws, models, split,
                                                            {"n_chunks": n_chunks}, calibration=calibration,
                                                            resamples=ESTIMATE_ONLY)
    if frame.empty:
        return BacktestView(frame, in_sample=in_sample, problems=tuple(problems))
    currency = selection.currency
    summary = _summary_table(frame)
    table = summary[list(BACKTEST_COLUMNS)].rename(columns={k: v.format(currency) for k, v in
                                                             BACKTEST_COLUMNS.items()})
    intro = (f"The labels of {split_text(split)} are hidden for the **estimate** (solid) and used for the "
             "**realised** value (dashed). Where the lines agree, the label-free estimate can be trusted on "
             "production data from the same source.")
    errors = summary.set_index("Model")["estimation_error_per_item"]
    worst = errors.abs().idxmax()
    gap = float(errors[worst])
    verdict = (f"The estimate is furthest off for **{md_text(worst)}**: {selection.amount(gap)} per item "
               f"({'too optimistic' if gap > 0 else 'too pessimistic'}). "
               + _gap_advice(selection.calibration, calibration))
    return BacktestView(frame, table, in_sample, intro, verdict,
                        _estimate_note(calibration, bands_of, left_out, False), tuple(problems))


def _gap_advice(recalibration: str, calibration: str) -> str:
    """What a gap between estimate and truth means, for the estimate's calibration and the sidebar's."""
    if calibration != "none":
        return ("A large gap means the calibration fitted on each model's reference split does not carry over to "
                "this split (or its chunks are small: see the bands above); label a sample of production items "
                "before trusting the estimates above.")
    if recalibration == "none":
        return ("A large gap means the probabilities are miscalibrated: recalibrate (sidebar), or calibrate the "
                "estimate on the reference split (above), before trusting the production estimates above.")
    return (f"A large gap means the probabilities stay miscalibrated even after {recalibration} recalibration: "
            "try another method (sidebar), or calibrate the estimate on the reference split (above).")


# ---------------------------------------------------------------- class mix
def class_mix_candidates(ws, models) -> dict:
    """model -> its unlabelled splits, for models with probability vectors and a labelled tuning split."""
    out = {}
    for model in models:
        tune = ws.plan(model).tune_split
        splits = ws.run(model).splits
        if tune is None or not splits[tune].has_labels or not all(p.has_proba for p in splits.values()):
            continue
        unlabelled = [name for name, p in splits.items() if not p.has_labels and name != tune]
        if unlabelled:
            out[model] = unlabelled
    return out


GUARD_Z = inspect.signature(vc.monitoring.retuning_gain).parameters["z"].default  # the core's (1.645)
EM_STEPS = inspect.signature(vc.monitoring.estimate_priors).parameters["max_iter"].default  # the core's (10,000)
# Short, so the table fits a laptop's width; the column's help and the sentences under it say why.
GUARD_WORDS = {
    "adopted": "Re-tuned",
    "kept": "Kept (noise)",
    "same": "Kept (no change)",
}
MIX_COLUMN_HELP = {
    "As tuned": "Value per item of the rule in use, estimated without labels under the chunk's mix.",
    "Re-tuned (raw)": "Value per item of the rule re-tuned for the chunk's mix, as estimated, before the guard "
                      "decides: for analysts. It is optimistic, since the re-tuning and this estimate share the mix.",
    "Gain": "What the rule in use earns per item over the rule as tuned: the re-tuned rule's gain when it is "
            "adopted, 0 when the rule as tuned is kept.",
    "Rule used": f"Re-tuned: the re-tuned rule is adopted, its gain (estimated without labels) clears {GUARD_Z:g} "
                 "standard errors at every end of the mix's interval. Kept (noise): it does not, so the rule as "
                 "tuned is kept. Kept (no change): the re-tuned rule decides every item as the rule as tuned.",
    "Worst gain": "The re-tuned rule's gain per item with one class's share at either end of its interval "
                  "(the smallest): the guard compares this with the noise bar.",
    "Noise bar": f"{GUARD_Z:g} standard errors of the gain (the label noise of the items the two rules treat "
                 "differently): the worst gain must clear it.",
}

# The production table's estimate and this one differ by design: a reader seeing two values for one model asked
# which to trust.
MIX_AGAINST_PRODUCTION = ("Its values per item are estimated under the class mix estimated for the split, so they "
                          "differ from the production table's estimate above, which takes the calibrated "
                          "probabilities as they are; the gap is what the change in the class mix is worth.")

MIX_NUMBER_COLUMNS = ("As tuned", "Re-tuned (raw)", "Gain", "Worst gain", "Noise bar")  # values per item
GUARD_DETAILS = ("Worst gain", "Noise bar")  # the guard's own figures: in the tables' "all columns"


def mix_formats(selection) -> dict:
    """How the class-mix tables' numbers read, as the back-test's: items counted, values per item at three
    significant digits (not four decimals: "$0.0123", not "0.0123")."""
    return {"Items": vc.wording.count, **{column: selection.amount for column in MIX_NUMBER_COLUMNS}}


def _guarded_columns(gain) -> dict:
    """The guard's decision on one re-tuning (a ``valuecore.monitoring.RetuningGain``), as table cells."""
    decision = "adopted" if gain.adopted else ("same" if gain.n_differ == 0 else "kept")
    return {"Gain": gain.gain_per_item if gain.adopted else 0.0, "Rule used": GUARD_WORDS[decision],
            "Worst gain": gain.worst_gain_per_item, "Noise bar": gain.z * gain.standard_error}


def mix_table(reference, watched, policy, values, kind: str, n_chunks: int, progress=None,
              max_steps: int = EM_STEPS) -> pd.DataFrame:
    """One row per chunk: the estimated mix, and the value per item as tuned and re-tuned for that mix.

    The re-tuned rule is guarded as ``python -m valuecore report --adapt-to`` guards it
    (``valuecore.monitoring.retuning_gain``): "Gain" is what the rule in use earns over the rule as tuned
    (0 when the rule as tuned is kept), "Re-tuned (raw)" the re-tuned rule's own estimate, adopted or not.
    ``progress``, if given, is called with the share of chunks done after each one. EM takes at most
    ``max_steps`` steps; the chunks where it stopped there unconverged are listed in
    ``frame.attrs["unconverged"]``.
    """
    calibration = dict(policy.calibration) if policy.calibration else None
    rows, unconverged = [], []
    chunks = vc.monitoring.chunk_predictions(watched, n_chunks=n_chunks)
    for done, chunk in enumerate(chunks, start=1):
        estimate = vc.monitoring.estimate_priors(policy.calibrate(chunk.predictions), reference, "em",
                                                 max_iter=max_steps)
        if not estimate.converged:
            unconverged.append(str(chunk.key))
        row = {"Chunk": chunk.key, "Items": chunk.predictions.total_weight}
        for name, share, low, high in zip(estimate.classes, estimate.priors, estimate.low, estimate.high):
            pct = vc.wording.percent
            row[f"Share of {name}"] = f"{pct(share)} ({pct(low)}–{pct(high)})"
        now = vc.monitoring.estimate_under_priors(policy, chunk.predictions, values, estimate).value_per_item
        row["As tuned"] = now
        if kind in RETUNABLE:
            reweighted = vc.monitoring.reweight_to_priors(reference, estimate.priors)
            retuned = vc.fit_policy(kind, vc.presort(reweighted), values, calibration=calibration)
            row["Re-tuned (raw)"] = vc.monitoring.estimate_under_priors(retuned, chunk.predictions, values,
                                                                        estimate).value_per_item
            row.update(_guarded_columns(vc.monitoring.retuning_gain(retuned, policy, chunk.predictions, values,
                                                                    estimate)))
        rows.append(row)
        if progress is not None:
            progress(done / len(chunks))
    frame = pd.DataFrame(rows)
    frame.attrs["unconverged"] = unconverged
    return frame


# Kept within the server's memory budget and time to live; not in st.cache_resource, which replays the
# elements a cached function drew and so refuses the progress bar it updates.
_MIXED = BudgetCache("class-mix tables")


def _mixed(key: tuple, reference, watched, policy, values, progress=None) -> pd.DataFrame:
    kind, n_chunks, max_steps = key[-3:]
    return _MIXED.get(key, lambda: mix_table(reference, watched, policy, values, kind, n_chunks, progress,
                                             max_steps))


# The class mix's work grows with items x classes^2 (EM's interval and the re-tuning guard; EM's steps add
# items x classes each): 20,000 items of 100 classes (2e8) took 2 s of one core, 10,000 of 1,000 classes
# (1e10) 14-16 s, 10^5 of 200 (4e9) 14 s (benchmarks/README.md). Below the first bound it runs on every
# view; up to the second, when the visitor asks, with progress; above it, the command line does it.
MIX_AUTO_WORK = 100_000_000
MIX_MAX_WORK = 20_000_000_000
# EM's steps vary with the data (15 to 1,509 measured; a step of 10^5 items of 200 classes took 63 ms): the
# page gives every estimate of a view at most MIX_EM_CELLS / (items x classes of them all) steps, never
# fewer than EM_MIN_STEPS nor more than EM_STEPS (the command line's), so a view's EM steps read about 5e9
# cells at most (15 s here) above that floor, and the page says where EM stopped before converging.
MIX_EM_CELLS = 5_000_000_000
EM_MIN_STEPS = 20


def _estimated_runs(ws, models, model: str, split: str) -> list:
    """The runs :func:`class_mix` estimates ``split`` of: ``model``'s chunks (their items add up to the
    split's), then the whole split of every model that has it."""
    candidates = class_mix_candidates(ws, models)
    return [ws.run(m) for m in (model, *(m for m, splits in candidates.items() if split in splits))]


def class_mix_work(ws, models, model: str, split: str) -> int:
    """Items x classes^2 of what :func:`class_mix` estimates."""
    return sum(int(run.splits[split].n) * len(run.classes) ** 2 for run in _estimated_runs(ws, models, model, split))


def class_mix_em_steps(ws, models, model: str, split: str) -> int:
    """The most EM steps each estimate of :func:`class_mix` takes (see ``MIX_EM_CELLS``)."""
    cells = sum(int(run.splits[split].n) * len(run.classes) for run in _estimated_runs(ws, models, model, split))
    return int(min(EM_STEPS, max(EM_MIN_STEPS, MIX_EM_CELLS // max(cells, 1))))


def class_mix_asks(work: int) -> str:
    """The sentence beside the Monitor page's switch for an estimate too long to run on every view."""
    return (f"Estimating the class mix here takes a while (about {work:.1e} item·class² steps: the items of "
            "the split times the square of the classes, for the chunks and every model), so it runs when you "
            "turn it on, with its progress.")


def class_mix_refusal(work: int) -> str:
    """Why the page does not estimate the class mix of a run this large, and what does."""
    return (f"The class mix of this split is not estimated on the dashboard: it would take about {work:.1e} "
            f"item·class² steps, above the page's bound of {MIX_MAX_WORK:.0e} (a minute or more of the server). "
            "The command line estimates it on your machine: `python -m valuecore report RUNS --adapt-to SPLIT` "
            "(docs/constraints.md).")


@dataclass(frozen=True)
class ClassMixView:
    """One model's chunks (``table``), and every model over the whole split (``per_model``: what
    ``report --adapt-to`` would do for each), with the sentences around them."""

    table: pd.DataFrame | None = None
    intro: str = ""
    verdict: str = ""
    verdict_is_caption: bool = False
    error: str = ""
    per_model: pd.DataFrame | None = None
    per_model_intro: str = ""
    per_model_problems: tuple = ()

    @property
    def shown_columns(self) -> list:
        """The chunk table's columns shown at first (the guard's own figures wait under "all columns")."""
        return [] if self.table is None else [c for c in self.table.columns if c not in GUARD_DETAILS]

    @property
    def per_model_columns(self) -> list:
        return [] if self.per_model is None else [c for c in self.per_model.columns if c != "Items"]


GUARD_RULE = (f"A re-tuned rule is adopted only when its gain, estimated without labels, clears {GUARD_Z:g} standard "
              "errors at every end of the mix's interval (the command line's guard); otherwise the rule as tuned "
              "is kept and its gain counts as 0.")


def _mix_of(ws, page: MonitorPage, selection, model: str, split: str, n_chunks: int,
            progress=None) -> pd.DataFrame:
    tune = ws.plan(model).tune_split
    policy = page.policies[model]
    key = (*_run_key(ws, model, split), tune, policy_key(policy), values_key(selection.values), policy.kind,
           n_chunks, class_mix_em_steps(ws, page.models, model, split))
    return _mixed(key, ws.calibrated(model, tune), ws.predictions(model, split), policy, selection.values,
                  progress)


def _whole_split(selection, page: MonitorPage, ws, split: str, progress=None) -> tuple[pd.DataFrame | None, tuple]:
    """Every model that can be adapted to ``split``, over the whole split: one chunk each."""
    rows, problems = [], []
    for model, splits in class_mix_candidates(ws, page.models).items():
        if split not in splits:
            continue
        try:
            table = _mix_of(ws, page, selection, model, split, 1, progress and progress(model))
        except ValueError as error:
            problems.append(f"**{md_text(model)}**: {md_text(str(error))}")
            continue
        whole = table.iloc[0]
        if table.attrs.get("unconverged"):
            problems.append(f"**{md_text(model)}**: {_unconverged_words(ws, page, model, split)}")
        shares = [c for c in whole.index if c.startswith("Share of ")]
        # the shares without their intervals (the chunk table has them): one short cell per model
        mix = ", ".join(f"{c.removeprefix('Share of ')} {whole[c].split()[0]}" for c in shares)
        rows.append({"Model": model, "Estimated mix": mix,
                     **whole.drop(labels=["Chunk", *shares]).to_dict()})
    return (pd.DataFrame(rows) if rows else None), tuple(problems)


def _unconverged_words(ws, page: MonitorPage, model: str, split: str, chunks=()) -> str:
    where = f"on chunk(s) {md_text(', '.join(chunks))}" if chunks else "over the whole split"
    return (f"EM stopped {where} after {class_mix_em_steps(ws, page.models, model, split):,} steps, the page's "
            "bound for this many items and classes, before converging: those shares are approximate. "
            "`python -m valuecore report --adapt-to` runs EM to convergence.")


def class_mix(selection, page: MonitorPage, ws, model: str, split: str, n_chunks: int, kind: str,
              progress=None) -> ClassMixView:
    """The class mix of each chunk of ``split``, and what re-tuning the policy for it would earn, guarded.

    ``progress``, if given, is called with a model's name and returns the callable that
    :func:`mix_table` calls with the share of that model's chunks done (its whole split, then
    ``model``'s chunks).
    """
    tune = ws.plan(model).tune_split
    per_model, problems = _whole_split(selection, page, ws, split, progress)
    whole = dict(per_model=per_model, per_model_problems=problems, per_model_intro=(
        f"**Over the whole split {md_text(repr(split))}, per model**: what the command line's `report --adapt-to` "
        "does with each model's rule on this split, by the same guard. " + MIX_AGAINST_PRODUCTION))
    try:
        table = _mix_of(ws, page, selection, model, split, n_chunks, progress and progress(model))
    except ValueError as error:
        return ClassMixView(error=f"**{md_text(model)}**: {md_text(str(error))}", **whole)
    intro = (f"The share of each class in every chunk of {md_text(repr(split))}, estimated without labels from "
             f"**{md_text(model)}**'s calibrated probabilities (EM, with a 95% interval), against the mix of its "
             f"tuning split {md_text(repr(tune))}. The values per item ({md_text(selection.currency)}) are estimated "
             "under each chunk's mix: for the policy as tuned and, for a tuned rule, re-tuned for that mix. "
             + GUARD_RULE)
    if table.attrs.get("unconverged"):
        intro += " " + _unconverged_words(ws, page, model, split, table.attrs["unconverged"])
    if "Gain" not in table:
        return ClassMixView(table, intro, "This rule is not tuned on data: a new class mix changes its value, not "
                                          "the rule.", verdict_is_caption=True, **whole)
    adopted = table[table["Rule used"] == GUARD_WORDS["adopted"]]
    if adopted.empty:
        raw = table["Re-tuned (raw)"] - table["As tuned"]
        if raw.max() > 0:
            best = table.loc[raw.idxmax()]
            verdict = (f"On no chunk does re-tuning's gain clear its noise, so the rule as tuned is kept everywhere. "
                       f"The largest raw estimate, {selection.amount(float(raw.max()))} per item on chunk "
                       f"{md_text(str(best['Chunk']))}, is within noise.")
        else:
            verdict = ("Re-tuning for the estimated mix would not earn more on any chunk: the policy as tuned fits "
                       "it.")
        return ClassMixView(table, intro, verdict, **whole)
    best = adopted.loc[adopted["Gain"].idxmax()]
    return ClassMixView(table, intro, f"Re-tuning for the estimated mix is adopted on {len(adopted)} of "
                                      f"{len(table)} chunks and would earn up to "
                                      f"{selection.amount(float(best['Gain']))} more per item (chunk "
                                      f"{md_text(str(best['Chunk']))}). The command line writes "
                                      "that policy: `python -m valuecore report` with `--adapt-to` and the split's "
                                      "name.", **whole)
