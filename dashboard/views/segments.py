"""The Segments page as data: :func:`build` returns a :class:`SegmentsPage`.

One threshold per segment (a region, a product, a customer tier, a group of people), tuned for value on
the tuning split by ``valuecore.constraints.fit_segments``, with optional caps on how far the segments'
hand-off rate, selective error rate and value per item may differ; the caps' cost in value per item; each
segment on the evaluated split (``valuecore.constraints.evaluate_segments``) with its interval, its
certified error bound and a warning when it is too small to say much. The page lays out what
:func:`build` returned; the only Streamlit here is the cache of the fit (a capped search can take
seconds). Segment and column names come from the visitor's files: every one that reaches markdown goes
through :func:`~dashboard.safetext.md_text`; the tables hold them as plain cells.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import streamlit as st

import valuecore as vc

from .. import segmentfiles
from ..data import Workspace, values_key
from ..safetext import md_text
from . import shown_confidences, split_text, threshold_text
from .compare import Notice  # a message shown with st.<severity>

# The caps, in the order the page shows their sliders: the SegmentCaps field, the words, the setting.
CAPS = (
    ("handoff_gap", "hand-off rate", "segment_cap_handoff"),
    ("error_gap", "error rate", "segment_cap_error"),
    ("value_gap", "value per item", "segment_cap_value"),
)
NO_CAP = "no cap"  # the sliders' first stop: the setting None
RATE_CAP_STEPS = tuple(k / 100 for k in range(0, 51))  # 0 to 50% apart
VALUE_CAP_STEPS = 50  # the value cap's stops: 0 to half the values' spread, in 50 steps
SAMPLE_WITH_SEGMENTS = "diabetes"  # the bundled sample whose runs carry segment columns (sex, age_band)

# The columns of valuecore.wording.segment_rows (the CLI's report --segment), as the pages write headers.
TABLE_COLUMNS = ("Segment", "Rule", "Items", "Hand-off rate", "Error rate", "Value per item",
                 vc.wording.INTERVAL_HEADER, "Error rate at most", "Note")
# Four columns fit 800 px with the sidebar open (466 px for the table); with "Items" and "Error rate" it was 566 px
# and "Value per item" hid behind a sideways scroll. The chart below draws each error rate, the details give all.
TABLE_SHOWN = ("Segment", "Rule", "Hand-off rate", "Error rate", "Value per item")
TABLE_HELP = {
    "Segment": "The segment's name, as the run files write it.",
    "Rule": "Tuned on the tuning split: act on a prediction of this segment when its confidence reaches the "
            "threshold; otherwise hand the item to a person.",
    "Hand-off rate": "Share of the segment's items handed to a person.",
    "Error rate": "Wrong answers among the items acted on (the selective error rate).",
    "Error rate at most": "With 90% confidence, the error rate of this threshold on new items of the segment is "
                          "at most this (Clopper-Pearson; it counts each row as one independent item).",
    "Value per item": "The segment's value per item, hand-offs included.",
    vc.wording.INTERVAL_HEADER: "Where the value per item on new items of the segment is likely to fall.",
}
TABLE_CAPTION = ("Each row is one segment on the evaluated split, with the threshold tuned on the tuning split. "
                 "A dash (–) means the segment acts on no item, so it has no error rate.")


@dataclass(frozen=True)
class SegmentsPage:
    """Everything the page shows for one model, segment column and set of caps.

    ``stop`` is set when nothing can be shown: the page shows those notices and stops.
    """

    model: str | None = None
    column: str | None = None
    stop: tuple = ()
    notes: tuple = ()  # notices above the result (the pipeline's caveats: a tuning fallback, a calibration)
    heading: str = ""
    sentences: tuple = ()  # markdown-safe: what the thresholds are tuned for, the caps' cost, the gain
    warnings: tuple = ()  # markdown-safe: the segments too small to say much
    numbers: pd.DataFrame = field(default_factory=pd.DataFrame)  # one row per segment, unformatted
    table: pd.DataFrame = field(default_factory=pd.DataFrame)  # the same, as text cells (names as written)
    gaps: pd.DataFrame = field(default_factory=pd.DataFrame)  # the gaps on each split beside the caps, as text
    fit: object = None  # valuecore.constraints.SegmentFit, for tests and the export
    evaluation: object = None  # valuecore.constraints.SegmentEvaluation on the evaluated split


# ------------------------------------------------------------------ the segment column
def segment_columns(files) -> tuple[str, ...]:
    """The columns the run files (:func:`dashboard.segmentfiles.source_files`) hold besides the run format's."""
    return segmentfiles.candidate_columns(files)


def no_column_note() -> str:
    """Why the page has nothing to show: no run carries a segment column; where to find one (markdown-safe)."""
    return ("None of the selected models' runs has a segment column, so there is nothing to split by. A segment "
            "column names each item's group (a region, a product, a customer tier) in the run file, e.g. a column "
            f"`region`. To try the page, choose the sample **{SAMPLE_WITH_SEGMENTS}** under *Data source* in the "
            "sidebar: its runs carry two, `sex` and `age_band`.")


# ------------------------------------------------------------------ the caps' sliders
def value_spread(values) -> float:
    """The largest minus the smallest outcome value: the widest gap two segments' values per item can have."""
    if values.use_case is None:
        matrix = np.asarray(values.values, dtype=float)
        return float(matrix.max() - matrix.min())
    outcomes = (values.use_case.v_correct, values.use_case.v_abstain, values.use_case.v_wrong)
    return float(max(outcomes) - min(outcomes))


def cap_options(cap: str, values, current: float | None) -> list:
    """The stops of a cap's slider: :data:`NO_CAP`, then gaps from 0 up (the setting in force among them).

    Rates step by one percentage point up to 50; the value per item by a fiftieth of half the values' spread.
    """
    if cap == "value_gap":
        # Values near the float limit may be a spread of infinity apart: the stops stay finite.
        spread = min(value_spread(values), float(np.finfo(np.float64).max))
        # Four significant digits: the stops read as typed (0.15, not 0.15000000000000002), and a link keeps them.
        steps = [_typed(spread / 2 / VALUE_CAP_STEPS * k) for k in range(VALUE_CAP_STEPS + 1)]
    else:
        steps = list(RATE_CAP_STEPS)
    if current is not None and current not in steps:
        steps = sorted([*steps, float(current)])
    return [NO_CAP, *dict.fromkeys(steps)]


def _typed(step: float) -> float:
    """``step`` to four significant digits, unless rounding would carry it past the largest float."""
    rounded = float(f"{step:.4g}")
    return rounded if math.isfinite(rounded) else step


def cap_text(cap: str, option, currency: str = "$") -> str:
    """A slider stop in words, as ``valuecore.wording.segment_caps_text`` writes a cap: "no cap", "5.0%", "$0.25"."""
    if option == NO_CAP or option is None:
        return NO_CAP
    return gap_text(cap, option, currency)


def gap_text(cap: str, gap: float | None, currency: str = "$") -> str:
    """A gap between segments: a rate gap in percent, a value gap in the currency; "–" when there is none."""
    if gap is None or (isinstance(gap, float) and math.isnan(gap)):
        return "–"
    return vc.wording.money(gap, currency) if cap == "value_gap" else vc.wording.percent(gap)


def caps_of(picked: dict) -> vc.constraints.SegmentCaps:
    """The caps from the sliders' stops (``SegmentCaps`` field -> a gap, or :data:`NO_CAP`)."""
    return vc.constraints.SegmentCaps(**{cap: None if picked.get(cap, NO_CAP) == NO_CAP else float(picked[cap])
                                         for cap, _, _ in CAPS})


# ------------------------------------------------------------------ the page
def build(selection, ws: Workspace, *, model: str, column: str, caps: vc.constraints.SegmentCaps,
          files) -> SegmentsPage:
    """The segment policy of ``model`` by ``column`` within ``caps``: tuned, costed, and evaluated.

    ``ws`` is the selection's :class:`~dashboard.data.Workspace`; ``files`` the run files the segment labels
    are read from (:func:`dashboard.segmentfiles.source_files`). Every figure comes from valuecore.
    """
    values, currency = selection.values, selection.currency
    tune_split = ws.tuning_split_for(model)
    eval_split = selection.eval_split
    tuning = ws.calibrated(model, tune_split) if tune_split is not None else None
    evaluated = ws.calibrated(model, eval_split) if eval_split is not None else None
    labels, problems = segmentfiles.segment_labels(files, column)
    labels = labels.get(model, {})
    stop = _stop_notice(model, column, tune_split, tuning, eval_split, evaluated, labels, problems)
    if stop is not None:
        return SegmentsPage(model, column, stop=(stop,))
    tune_labels, eval_labels = labels[tune_split], labels[eval_split]
    try:
        key = (ws.run_key(model), model, tune_split, ws.calibration_key(model), column, values_key(values),
               tuple(sorted(caps.as_dict().items())))
        fit = _fitted(key, tuning, tune_labels, values, caps, column)
        evaluation = vc.constraints.evaluate_segments(fit.policy, evaluated, eval_labels, values)
    except ValueError as error:  # e.g. an empty segment label, named with its rows by the core
        return SegmentsPage(model, column, stop=(Notice("error", f"The segments of {md_text(column)} cannot be "
                                                                 f"used: {md_text(error)}"),))
    confidences = shown_confidences(ws, model)
    numbers = segment_numbers(fit, evaluation)
    one = _one_threshold(ws, model, values, fit, evaluated, eval_labels)
    # A thinned search (fit.exact False) is said in the cost sentence, in the core's words.
    notes = tuple(Notice(severity, message) for severity, message in _split_notes(ws, model))
    return SegmentsPage(
        model, column,
        notes=notes,
        heading=f"One threshold per {md_text(column)} for {md_text(model)}",
        sentences=(tuned_sentence(fit, column, tune_split, eval_split), cost_sentence(fit, currency),
                   *one_threshold_sentence(one, evaluation, eval_split, confidences, currency)),
        warnings=too_small_warnings(fit, evaluation, tune_split, eval_split),
        numbers=numbers,
        table=segment_table(evaluation, confidences, currency),
        gaps=gaps_table(fit, evaluation, tune_split, eval_split, currency),
        fit=fit,
        evaluation=evaluation,
    )


@st.cache_resource(show_spinner="Fitting a threshold per segment…", max_entries=128)
def _fitted(key: tuple, _tuning, _labels, _values, _caps, _column) -> vc.constraints.SegmentFit:
    """``valuecore.constraints.fit_segments``, once per run file, split, recalibration, column, values and caps."""
    return vc.constraints.fit_segments(_tuning, _labels, _values, caps=_caps, column=_column)


def _one_threshold(ws: Workspace, model: str, values, fit, evaluated, labels):
    """(threshold, its SegmentEvaluation on the evaluated split): the Value page's one threshold for every
    segment, or None when the model gets none."""
    try:
        threshold = ws.policy(model, "threshold", values).threshold
    except ValueError:
        return None
    policy = vc.constraints.SegmentPolicy(tuple((s, threshold) for s in fit.policy.segments), column=fit.policy.column)
    return threshold, vc.constraints.evaluate_segments(policy, evaluated, labels, values)


def _stop_notice(model, column, tune_split, tuning, eval_split, evaluated, labels, problems) -> Notice | None:
    """Why the model cannot be split by the column here, or None."""
    if tuning is None or not tuning.has_labels:
        return Notice("warning", f"{md_text(model)} has no labelled tuning split ({split_text(tune_split)}): "
                                 "thresholds per segment are tuned on labelled items. Choose another model, or a "
                                 "labelled split under **Tune on** in the sidebar.")
    if evaluated is None or not evaluated.has_labels:
        return Notice("warning", f"{md_text(model)} has no labelled split {split_text(eval_split)} to evaluate on. "
                                 "Choose a labelled split under **Evaluate on** in the sidebar.")
    lacking = [split for split in (tune_split, eval_split) if split not in labels]
    if lacking and problems:
        return Notice("warning", f"The segment column {md_text(column)} cannot be read: {md_text(problems[0])}")
    if lacking:
        return Notice("warning", f"The split {' and '.join(split_text(s) for s in dict.fromkeys(lacking))} of "
                                 f"{md_text(model)} has no segment column {md_text(column)}. Choose another "
                                 "column or model.")
    return None


def _split_notes(ws: Workspace, model: str) -> list[tuple[str, str]]:
    """The pipeline's caveats for the model's one-threshold fit (a tuning fallback, a calibration)."""
    return [("info", md_text(note)) for note in ws.notes(model, "threshold")]


def segment_numbers(fit, evaluation) -> pd.DataFrame:
    """One row per segment of the evaluated split: its threshold (tuned), items, rates, value and interval.

    Columns: segment, threshold (NaN: always hand off), items, handoff_rate, error_rate (NaN: acts on none),
    error_bound (NaN: none), value_per_item, low, high, too_small. Plus the same figures on the tuning split,
    prefixed ``tuning_`` (items, handoff_rate, error_rate, value_per_item, too_small).
    """
    tuned = {row.segment: row for row in fit.evaluation.segments}
    rows = []
    for row in evaluation.segments:
        on_tuning = tuned.get(row.segment)
        rows.append({
            "segment": row.segment,
            "threshold": math.nan if row.threshold is None else row.threshold,
            "items": row.n_items,
            "handoff_rate": row.handoff_rate,
            "error_rate": math.nan if row.selective_risk is None else row.selective_risk,
            "error_bound": math.nan if row.risk_upper_bound is None else row.risk_upper_bound,
            "value_per_item": row.value_per_item,
            "low": row.interval.low,
            "high": row.interval.high,
            "too_small": row.too_small,
            "tuning_items": on_tuning.n_items if on_tuning else 0.0,
            "tuning_handoff_rate": on_tuning.handoff_rate if on_tuning else math.nan,
            "tuning_error_rate": (math.nan if on_tuning is None or on_tuning.selective_risk is None
                                  else on_tuning.selective_risk),
            "tuning_value_per_item": on_tuning.value_per_item if on_tuning else math.nan,
            "tuning_too_small": on_tuning.too_small if on_tuning else True,
        })
    return pd.DataFrame(rows)


def segment_table(evaluation, confidences, currency: str) -> pd.DataFrame:
    """The segments as text cells, :data:`TABLE_COLUMNS`: ``valuecore.wording.segment_rows`` (the words of
    ``report --segment``), names as written, and a note on the segments too small to say much."""
    seen = None if confidences is None else {r.segment: confidences for r in evaluation.segments}
    rows = [(*row, "too few items to say much" if standing.too_small else "")
            for row, standing in zip(vc.wording.segment_rows(evaluation, currency, seen), evaluation.segments)]
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def gaps_table(fit, evaluation, tune_split, eval_split, currency: str) -> pd.DataFrame:
    """The gaps between segments (largest minus smallest) on each split, beside the caps, as text."""
    caps = fit.caps
    rows = [("Cap", *(cap_text(cap, getattr(caps, cap), currency) for cap, _, _ in CAPS)),
            (f"Gap on {tune_split} (tuning)", *(gap_text(cap, getattr(fit.evaluation, cap), currency)
                                                for cap, _, _ in CAPS))]
    if eval_split != tune_split:
        rows.append((f"Gap on {eval_split}", *(gap_text(cap, getattr(evaluation, cap), currency)
                                                for cap, _, _ in CAPS)))
    # The measure alone heads its column (the rows say "Gap on ..."): "Gap in value per item" was cut at 800 px.
    return pd.DataFrame(rows, columns=["", *(words[0].upper() + words[1:] for _, words, _ in CAPS)])


def tuned_sentence(fit, column: str, tune_split, eval_split) -> str:
    """Where the thresholds are tuned and measured (markdown-safe)."""
    count = len(fit.policy.segments)
    where = (f"tuned on {split_text(tune_split)}" + (f" and measured on {split_text(eval_split)}"
                                                     if eval_split != tune_split else ""))
    if not fit.caps.any:
        # "No caps" is the next sentence's (cost_sentence): said twice in a row, it read as two notes.
        return (f"Each of the {count} segments of {md_text(column)} gets the threshold that earns it the most, "
                f"{where}.")
    return (f"The {count} segments of {md_text(column)} get the thresholds that earn the most in total while the "
            f"gaps stay within the caps, {where}. The caps hold on the tuning split; on other items the gaps may "
            "differ (the table of gaps below says by how much).")


def cost_sentence(fit, currency: str) -> str:
    """What the caps cost in value per item, in the words of ``report --segment`` (markdown-safe: numbers and
    the caps only), with a hint when no cap is set."""
    sentence = vc.wording.segment_cap_sentence(fit, currency)
    if fit.caps.any and fit.feasible and fit.cap_cost_per_item <= 0 \
            and fit.policy.thresholds != fit.unconstrained.thresholds:
        # The best thresholds break the caps, and others that hold them earn as much: free, but not "already held".
        per_item = vc.wording.money(fit.value_total / fit.n_items, currency)  # a value per item, as everywhere
        return (f"The caps cost nothing on the tuning split: each segment's own best thresholds break them, and the "
                f"thresholds shown, which hold them, earn as much there ({per_item} per item).")
    if not fit.caps.any:
        return sentence + " Move a cap above to keep the segments closer together; the page then says what it costs."
    return f"**{sentence}**" if fit.feasible and fit.cap_cost_per_item > 0 else sentence


def one_threshold_sentence(one, evaluation, eval_split, confidences, currency: str) -> tuple[str, ...]:
    """The segment policy beside one threshold for every segment, on the evaluated split (markdown-safe)."""
    if one is None:
        return ()
    threshold, same = one

    def gap(result) -> str:
        return (f" with a hand-off gap of {gap_text('handoff_gap', result.handoff_gap)}"
                if math.isfinite(result.handoff_gap) else "")

    # A value per item in money, as the Value page and the table above write it ($0.14, not $0.135).
    ours = f"{vc.wording.money(evaluation.value_per_item, currency)} per item{gap(evaluation)}"
    theirs = f"{vc.wording.money(same.value_per_item, currency)}{gap(same)}"
    return (f"On {split_text(eval_split)}, these thresholds earn {ours}; one threshold for every segment "
            f"({threshold_text(threshold, confidences)}, the Value page's) earns {theirs}.",)


def too_small_warnings(fit, evaluation, tune_split, eval_split) -> tuple[str, ...]:
    """One warning per split with segments too small to say much, one sentence each, in the core's words
    (markdown-safe)."""
    out = []
    splits = [(tune_split, fit.evaluation)] + ([(eval_split, evaluation)] if eval_split != tune_split else [])
    for split, result in splits:
        said = vc.wording.segments_too_small(result.segments)
        if said is not None:
            out.append(f"On {split_text(split)}: {md_text(said)}.")
    return tuple(out)
