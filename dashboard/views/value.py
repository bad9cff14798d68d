"""The Value & thresholds page's view model: what each model is worth with one rule, and at which threshold.

:func:`build` fits the chosen rule per model on its tuning split, evaluates it
on the evaluated split beside the no-model and accept-all baselines, and
returns a frozen :class:`ValuePage` of sentences, tiles and the table.
:func:`curves` and :func:`histogram` give the two charts below it their
frames. Nothing here draws and nothing here touches Streamlit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

import valuecore as vc

from .. import home
from ..data import Workspace
from ..home import Tile
from ..safetext import md_text
from ..tables import styled
from . import (GLOBAL_THRESHOLD_KINDS, fit, interval_text, load_problem_note, number, percent, rule_options, short_list,
               shown_confidences, split_notes, split_text, threshold_help, threshold_number, threshold_on_data,
               threshold_text)

# The columns shown by default; the rest are in the "All columns" details. Five fit 800 px with the sidebar open
# (466 px for the table); "Over no model" made it scroll sideways, and the "no model" row beside it says as much.
VALUE_SHOWN = ("★", "Model", "Threshold", "Value per item", "Acted on")
NO_MODEL_ROW = "no model (hand off all)"  # "(always hand off)" widened the Model column past 800 px
# With the what-if on, the picked threshold's numbers sit beside the tuned ones, not in the collapsed details.
WHAT_IF_SHOWN = ("Yours: per item", "Yours: acted on")
WHAT_IF_HELP = "At the threshold picked with the what-if slider"
COLUMN_HELP = {"Over no model": "Value per item minus that of handing every item over to a person (no model).",
               **{column: WHAT_IF_HELP for column in WHAT_IF_SHOWN}}


@dataclass(frozen=True)
class ValueIntro:
    """What the page says before it needs a model: the values and splits in force, and load problems."""

    caption: str
    problem_note: str | None
    kinds: tuple[str, ...]
    rule_notes: tuple[str, ...]
    what_if_default: float


@dataclass(frozen=True)
class ValuePage:
    """Everything the Value page shows above its charts, for one rule (and a what-if threshold, if any)."""

    kind: str
    split_notes: tuple[tuple[str, str], ...]  # (severity, message)
    failure: str | None  # no model could be evaluated: said instead of everything below
    rule_sentence: str | None  # the verdict with this rule, in one sentence
    tiles: tuple[Tile, ...]  # best model, its threshold, value per item, over no model
    what_if_tiles: tuple[Tile, ...]
    sentences: tuple[str, ...]  # who is best, who is worth less than no model, who needs hand-offs
    overfitting_notes: tuple[str, ...]
    estimated: bool  # some values are estimated without labels
    numbers: pd.DataFrame | None  # one row per model and the no-model row, numbers unformatted
    table: object  # the same as a pandas Styler, formatted, for the page
    shown_columns: tuple[str, ...]
    range_captions: tuple[str, ...]  # what each likely range rests on
    skipped: tuple[str, ...]
    exact_policies_json: str
    best: str | None
    labelled: tuple[str, ...]  # models whose confidences can be split into right and wrong
    rows: tuple  # the ModelValue rows, for the charts below (curves, histogram)


@dataclass(frozen=True)
class ValueCurves:
    """The value-against-threshold chart's frames, and its caption."""

    curves: pd.DataFrame
    markers: pd.DataFrame
    caption: str

    @property
    def empty(self) -> bool:
        return self.curves.empty


def intro(selection, ws: Workspace) -> ValueIntro:
    """The values and splits in words, the rules these models can use, and the what-if slider's start."""
    use_case = selection.use_case
    if selection.value_matrix is not None:
        values_text = "Values come from the per-class value matrix (Values per class page)."
    else:
        values_text = (f"A correct answer earns {selection.money(use_case.v_correct)}, a hand-off "
                       f"{selection.money(use_case.v_abstain)}, a wrong answer {selection.money(use_case.v_wrong)} "
                       f"(ω = {vc.wording.omega(selection.omega)}).")
    splits_text = (f" Thresholds are tuned on {split_text(selection.tune_split)} and the value is measured on "
                   f"{split_text(selection.eval_split)}." if selection.eval_split is not None else "")
    kinds, notes = rule_options(ws, selection.models, selection.values) if selection.models else ([], [])
    default = use_case.calibrated_threshold if use_case.calibrated_threshold is not None else 0.5
    # nothing loaded: the empty page says why; "the models shown loaded fine" would not be true
    problem_note = load_problem_note(selection.report) if selection.report.models else None
    return ValueIntro(values_text + splits_text, problem_note, tuple(kinds), tuple(notes),
                      float(min(max(default, 0.0), 1.0)))


def build(selection, ws: Workspace, kind: str, what_if: float | None = None) -> ValuePage:
    """The Value page for rule ``kind`` (and the what-if threshold ``what_if``, None when off)."""
    values, models = selection.values, selection.models
    notes = tuple(split_notes(ws, models, kind))
    rows = model_values(ws, models, kind, values, what_if=what_if)
    best = best_model(rows)
    if best is None:
        failure = "No selected model could be evaluated: " + "; ".join(
            f"{md_text(r.model)}: {md_text(r.note)}" for r in rows if r.note)
        return ValuePage(kind, notes, failure, None, (), (), (), (), False, None, None, (), (), (), "{}", None,
                         (), tuple(rows))
    best_row = next(r for r in rows if r.model == best)
    # Thresholds with the digits that tell their decisions apart on the data shown; every digit in the help and JSON.
    confidences = {r.model: shown_confidences(ws, r.model) for r in rows if r.ok}
    threshold, rule = policy_summary(best_row.policy, confidences.get(best))
    verdict, _ = home.page_verdict(ws, models, kind, values)
    rule_sentence = None
    if verdict.degenerate != "no_models":  # unlabelled runs: the values below are estimates, not tested
        rule_sentence = (f"**With {md_text(vc.wording.rule_name(kind))}:** "
                         + md_text(vc.wording.verdict_headline(verdict, selection.currency))
                         + " What to deploy, over every rule, is on the first page.")
    # The best model's own rule: under "recommended" each model has its own.
    best_kind = best_row.policy.kind
    global_threshold = best_kind in GLOBAL_THRESHOLD_KINDS and threshold is not None and threshold == threshold
    threshold_shown = (threshold_on_data(threshold, confidences.get(best)) if global_threshold and threshold > 0
                       else threshold_text(threshold) if best_kind in GLOBAL_THRESHOLD_KINDS else md_text(rule))
    best_tile = home.best_tile(verdict, best)
    money = selection.money
    tiles = (
        best_tile,
        Tile("Its threshold", threshold_shown,
             threshold_help(threshold) if global_threshold and threshold > 0 else ""),
        Tile("Value per item", money(best_row.result.value_per_item)),
        Tile("Over no model, per item", money(best_row.result.value_per_item - best_row.no_model_per_item),
             "No model = hand every item over to a person."),
    )
    table = value_table(rows, with_what_if=what_if is not None, confidences=confidences)
    labelled = tuple(r.model for r in rows if r.ok and not r.estimated)
    return ValuePage(
        kind=kind,
        split_notes=notes,
        failure=None,
        rule_sentence=rule_sentence,
        tiles=tiles,
        what_if_tiles=_what_if_tiles(best_row, what_if, money) if what_if is not None else (),
        sentences=tuple(value_verdict(rows, money, confidences, total=selection.projected)),
        overfitting_notes=tuple(md_text(n) for n in home.simpler_rule_notes(ws, models, kind, values,
                                                                            selection.currency)),
        estimated=any(r.estimated for r in rows),
        numbers=table,
        table=value_styler(table, money, confidences, amount=selection.amount, total=selection.projected),
        shown_columns=VALUE_SHOWN + (WHAT_IF_SHOWN if what_if is not None else ()),
        range_captions=tuple(md_text(f"{r.model}: {likely_range_words(r.interval_numbers, values, selection.currency)}")
                             for r in rows if r.interval_numbers is not None),
        skipped=tuple(f"{r.model}: {r.note}" for r in rows if not r.ok and r.note),
        exact_policies_json=json.dumps(exact_policies(rows), indent=2),
        best=best,
        labelled=labelled,
        rows=tuple(rows),
    )


def _what_if_tiles(best_row, manual: float, money) -> tuple[Tile, ...]:
    """The best model at the picked threshold, against its tuned one: the numbers the what-if changes."""
    best = best_row.model
    yours = Tile("Your threshold", threshold_number(manual),
                 "Act when confidence ≥ this; move the slider above to try another.")
    if best_row.what_if is None:
        return yours, Tile("Value per item, your threshold", "–", f"No value at this threshold for {md_text(best)}.")
    _, picked_per_item, picked_coverage = best_row.what_if
    tuned_per_item = best_row.result.value_per_item
    return (
        yours,
        Tile("Value per item, your threshold", money(picked_per_item),
             f"{md_text(best)} at your threshold, against its tuned threshold ({money(tuned_per_item)} per item). "
             "Every model's figure is in the table below.",
             delta=f"{money(picked_per_item - tuned_per_item)} vs tuned",
             delta_color="normal" if picked_per_item != tuned_per_item else "off"),
        Tile("Acted on, your threshold", percent(picked_coverage),
             f"{md_text(best)} at its tuned threshold: {percent(best_row.result.coverage)}."),
    )


def curves(selection, ws: Workspace, page: ValuePage, *, with_tuning: bool = False) -> ValueCurves:
    """Value against the threshold per model (the tuning split's curves too, dashed, with ``with_tuning``)."""
    frame, markers = curve_frames(ws, list(page.rows), selection.values, with_tuning=with_tuning)
    caption = (
        f"Each line: the value per item on {split_text(selection.eval_split)} if every item whose "
        "(recalibrated) confidence is at least the threshold were acted on, and the rest handed over. Points mark "
        f"the threshold tuned on {split_text(selection.tune_split)} (●)"
        + (" and the calibrated threshold ω/(1+ω) (◆)" if selection.value_matrix is None else "")
        + ": where ● sits below the top of its line, the tuning split and the evaluated split disagree."
    )
    return ValueCurves(frame, markers, caption)


def histogram(ws: Workspace, selection, chart: ValueCurves, model: str, what_if: float | None = None):
    """One model's confidences of right and wrong answers, and the thresholds to mark on them."""
    counts = ws.histogram(model, selection.eval_split)
    marks = chart.markers[chart.markers["model"] == model][["marker", "threshold"]].rename(
        columns={"marker": "label"})
    if what_if is not None:
        marks = pd.concat([marks, pd.DataFrame({"label": ["your threshold"], "threshold": [what_if]})])
    return counts, marks


# ------------------------------------------------------------ the rows
@dataclass
class ModelValue:
    """Everything the Value page shows for one model.

    ``view`` is the model's threshold curve on the evaluated split (see
    :meth:`~dashboard.data.Workspace.threshold_view`): the "no model" and
    accept-all values, and the value at the marked thresholds, are read off it.
    """

    model: str
    policy: vc.Policy | None = None
    result: vc.PolicyResult | None = None
    view: object = None
    tuned_threshold: float | None = None
    calibrated_threshold: float | None = None
    what_if_threshold: float | None = None
    interval: tuple | None = None
    interval_note: str = ""
    interval_numbers: object = None  # the Interval itself: its counts say what the range rests on
    note: str = ""
    estimated: bool = False

    @property
    def ok(self) -> bool:
        return self.result is not None

    @property
    def no_model_per_item(self) -> float:
        return self.view.no_model_per_item

    @property
    def accept_all_per_item(self) -> float:
        return self.view.accept_all_per_item

    @property
    def what_if(self) -> tuple | None:
        """(value_total, value_per_item, coverage) at the what-if threshold, or None."""
        if self.view is None or self.what_if_threshold is None:
            return None
        return self.view.at.get(self.what_if_threshold)


def model_values(
    ws: Workspace,
    models,
    kind: str,
    values,
    *,
    what_if: float | None = None,
    intervals: bool = True,
) -> list[ModelValue]:
    """Fit ``kind`` on the tuning split and evaluate it on the evaluated split, plus the baselines.

    Per model: one ``evaluate`` of the chosen rule (O(n)) and one threshold
    curve (O(distinct confidences) for three values), from which "no model",
    accept-all and the tuned, calibrated and what-if thresholds are read.
    """
    rows = []
    for model in models:
        row = ModelValue(model)
        rows.append(row)
        predictions = ws.predictions(model, ws.eval_split)
        if predictions is None:
            row.note = f"no '{ws.eval_split}' split"
            continue
        row.estimated = not predictions.has_labels
        try:
            row.policy = fit(ws, model, kind, values)
            tuned = row.policy if kind == "threshold" else ws.policy(model, "threshold", values)
            row.tuned_threshold = tuned.threshold
            if values.use_case is not None:  # a value matrix has no single ω, so no ω/(1+ω) mark
                calibrated = (
                    row.policy if kind == "calibrated_threshold" else ws.policy(model, "calibrated_threshold", values)
                )
                row.calibrated_threshold = calibrated.threshold
            row.what_if_threshold = None if what_if is None else float(what_if)
            marked = (row.tuned_threshold, row.calibrated_threshold, None) + (
                () if what_if is None else (row.what_if_threshold,))
            row.view = ws.threshold_view(model, ws.eval_split, values, marked)
            row.result = ws.result(model, row.policy, values)
        except ValueError as error:
            row.note = str(error)
            row.result = None
            continue
        if not intervals:
            row.interval_note = "interval not computed"
        elif row.estimated:
            row.interval_note = "interval needs labels"
        else:
            try:
                found = ws.interval(model, row.policy, values, row.result)
            except ValueError as error:  # e.g. values too tiny to square: the interval is refused in words
                row.interval_note = f"no interval: {error}"
                continue
            row.interval = None if found is None else (found.low, found.high)
            row.interval_numbers = found
    return rows


def likely_range_words(interval: vc.Interval, values, currency: str = "") -> str:
    """What a "likely range" means and what it rests on: '0 wrong answers seen in 450 items, 356 automated...'."""
    return vc.wording.interval_basis(interval, currency, vc.wording.worst_outcome_name(values))


def best_model(rows: list[ModelValue]) -> str | None:
    """The model with the highest value per item (None when no model has a value)."""
    scored = [(r.result.value_per_item, r.model) for r in rows if r.ok]
    if not scored:
        return None
    return max(scored, key=lambda pair: pair[0])[1]


def exact_policies(rows: list[ModelValue]) -> dict:
    """model -> the policy as the policy JSON writes it (every digit), for the models that got one."""
    return {r.model: r.policy.to_dict() for r in rows if r.policy is not None}


def policy_summary(policy: vc.Policy | None, confidences=None) -> tuple[float | None, str]:
    """(global threshold or NaN, text describing the rule); thresholds as read on ``confidences``."""
    if policy is None:
        return np.nan, "–"
    if policy.kind in GLOBAL_THRESHOLD_KINDS:
        t = policy.threshold
        text = threshold_text(t, confidences)
        return (np.nan if t is None else t), (f"act when confidence ≥ {text}" if text[0].isdigit() else text)
    if policy.kind == "accept_all":
        return 0.0, "act on every item"
    if policy.kind == "expected_value":
        return np.nan, "highest expected value per item"
    pairs = policy.class_thresholds or ()
    text = ", ".join(f"{c}: {'never' if t is None else threshold_text(t, confidences)}" for c, t in pairs[:4])
    if len(pairs) > 4:
        text += f", … ({len(pairs)} classes)"
    return np.nan, text


def threshold_cell(policy: vc.Policy | None, confidences=None) -> str:
    """The Threshold column's text: the one threshold, or what stands in its place ("per class", ...)."""
    if policy is None:
        return vc.wording.DASH
    if policy.kind in GLOBAL_THRESHOLD_KINDS or policy.kind == "accept_all":
        return threshold_text(0.0 if policy.kind == "accept_all" else policy.threshold, confidences)
    return "expected-value rule" if policy.kind == "expected_value" else "per class"


def value_table(rows: list[ModelValue], *, with_what_if: bool = False, confidences: dict | None = None
                ) -> pd.DataFrame:
    """The Value page table: one row per model, then the "no model" baseline.

    Numeric columns stay numeric (for sorting and tests); the page formats them. ``threshold_text`` is the
    threshold as read on the model's ``confidences`` (model -> its confidences on the data shown).
    """
    confidences = confidences or {}
    best = best_model(rows)
    records = []
    for row in rows:
        threshold, rule = policy_summary(row.policy, confidences.get(row.model))
        record = {
            "best": "★" if row.model == best else "",
            "model": row.model,
            "threshold": threshold,
            "threshold_text": threshold_cell(row.policy, confidences.get(row.model)),
            "rule": rule,
            "value_total": np.nan,
            "value_per_item": np.nan,
            "value_dimensionless": np.nan,
            "coverage": np.nan,
            "selective_accuracy": np.nan,
            "interval_low": np.nan,
            "interval_high": np.nan,
            "accept_all_per_item": np.nan,
            "gain_vs_no_model": np.nan,
            "note": row.note,
        }
        if row.ok:
            r = row.result
            record.update(
                value_total=r.value_total,
                value_per_item=r.value_per_item,
                value_dimensionless=np.nan if r.value_dimensionless is None else r.value_dimensionless,
                coverage=r.coverage,
                selective_accuracy=np.nan if r.selective_accuracy is None else r.selective_accuracy,
                accept_all_per_item=row.accept_all_per_item,
                gain_vs_no_model=r.value_per_item - row.no_model_per_item,
            )
            if row.interval is not None:
                record.update(interval_low=row.interval[0], interval_high=row.interval[1])
            notes = [n for n in (row.interval_note, "estimated without labels" if row.estimated else "") if n]
            record["note"] = "; ".join(notes)
        if with_what_if:
            record["what_if_per_item"] = row.what_if[1] if row.what_if is not None else np.nan
            record["what_if_coverage"] = row.what_if[2] if row.what_if is not None else np.nan
        records.append(record)
    baseline = next((r for r in rows if r.ok), None)
    if baseline is not None:
        view = baseline.view
        record = {
            "best": "",
            "model": NO_MODEL_ROW,
            "threshold": np.nan,
            "threshold_text": "none",  # the model cell says it; a longer word widened the table past 1280 px
            "rule": "hand every item over",
            "value_total": view.no_model_total,
            "value_per_item": view.no_model_per_item,
            "value_dimensionless": 0.0,
            "coverage": 0.0,
            "selective_accuracy": np.nan,
            "interval_low": np.nan,
            "interval_high": np.nan,
            "accept_all_per_item": np.nan,
            "gain_vs_no_model": 0.0,
            "note": "the baseline every model must beat",
        }
        if with_what_if:
            record.update(what_if_per_item=np.nan, what_if_coverage=np.nan)
        records.append(record)
    return pd.DataFrame({column: [record[column] for record in records] for column in records[0]}) if records else (
        pd.DataFrame(columns=["best", "model", "threshold"]))


def value_verdict(rows: list[ModelValue], money, confidences: dict | None = None, total=None) -> list[str]:
    """Plain sentences: who is best, who is worth less than no model, who beats accept-all.

    ``confidences``: model -> confidences on the data shown, to write the threshold as the tiles do.
    ``total`` writes an amount over many items (``Selection.projected``: no cents from 100 up); ``money`` by default.
    """
    total = total or money
    ok = [r for r in rows if r.ok]
    if not ok:
        return []
    sentences = []
    best = best_model(rows)
    top = next(r for r in ok if r.model == best)
    _, rule = policy_summary(top.policy, (confidences or {}).get(best))
    if top.result.value_per_item <= top.no_model_per_item + 1e-12:
        # Crowning a model at the no-model value would be a claim the numbers do not make.
        sentences.append("No model earns more than handing every item to a person with these values.")
    else:
        sentences.append(
            f"**{md_text(best)}** brings the most value: {money(top.result.value_per_item)} per item "
            f"({total(top.result.value_total)} in all on {top.result.n_items:,.0f} items), "
            f"acting on {percent(top.result.coverage)} of them ({md_text(rule)})."  # class names from the file
        )
    worse = [r.model for r in ok if r.result.value_per_item < r.no_model_per_item - 1e-12]
    if worse:
        sentences.append(
            f"{md_text(short_list(worse))} {'is' if len(worse) == 1 else 'are'} worth **less than no model at all**: "
            "handing every item over would be better."
        )
    naive = [r.model for r in ok if r.accept_all_per_item < r.no_model_per_item - 1e-12]
    if naive:
        sentences.append(
            f"Answering everything (no hand-offs) would lose money with {md_text(short_list(naive))}: "
            "the option to hand items over is what makes them useful."
        )
    return sentences


def curve_frames(ws: Workspace, rows: list[ModelValue], values, *, with_tuning: bool = False, max_points: int = 400):
    """Tidy value-vs-threshold frame (model, split, threshold, value_per_item, coverage) and markers.

    Markers (model, marker, threshold, value_per_item) are the tuned and the
    calibrated global thresholds, with their value on the evaluated split. With
    ``with_tuning`` the tuning split's curve is added (split column tells them apart).
    """
    frames, markers = [], []
    for row in rows:
        if not row.ok or row.view is None:
            continue
        frames.append(row.view.frame)
        tune_split = ws.tuning_split_for(row.model)
        if with_tuning and tune_split not in (None, ws.eval_split):
            frame = ws.curve_frame(row.model, tune_split, values, max_points=max_points)
            if frame is not None:
                frames.append(frame)
        for label, threshold in (("tuned", row.tuned_threshold), ("calibrated", row.calibrated_threshold)):
            if threshold is None:
                continue
            markers.append({"model": row.model, "marker": label, "threshold": threshold,
                            "value_per_item": row.view.at[threshold][1]})
    columns = ["threshold", "value_total", "value_per_item", "coverage", "model", "split"]
    curves = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    marks = pd.DataFrame(markers, columns=["model", "marker", "threshold", "value_per_item"])
    return curves, marks


VALUE_COLUMNS = {
    "best": "★",
    "model": "Model",
    "threshold": "Threshold",
    "rule": "Rule",
    "value_total": "Total value",
    "value_per_item": "Value per item",
    "interval": vc.wording.INTERVAL_HEADER,
    "value_dimensionless": "Dimensionless value",
    "coverage": "Acted on",
    "selective_accuracy": "Accuracy when acting",
    "accept_all_per_item": "Accept all, per item",
    "gain_vs_no_model": "Over no model",  # per item, as the tile says; short, so the what-if fits at 1280 px
    "what_if_per_item": "Yours: per item",
    "what_if_coverage": "Yours: acted on",
    "note": "Note",
}


def value_styler(table: pd.DataFrame, money, confidences: dict | None = None, *, amount=None, total=None):
    """The Value page table, formatted (currency, %, 3 decimals) with the best model highlighted.

    ``amount`` writes the likely range (``Selection.amount``: three significant digits, as its sentence below
    the table), ``total`` the total value (``Selection.projected``: no cents from 100 up); ``money`` by default.

    ``confidences``: model -> its confidences on the data shown; each threshold is then written with the
    digits that tell its decision apart on them (:func:`threshold_on_data`), else to its last digit.
    """
    amount, total = amount or money, total or money
    frame = table.copy()
    frame["threshold"] = frame["threshold_text"]
    frame["interval"] = [interval_text(lo, hi, amount) for lo, hi in zip(frame["interval_low"], frame["interval_high"])]
    frame = frame[[c for c in VALUE_COLUMNS if c in frame.columns]].rename(columns=VALUE_COLUMNS)
    money_columns = ["Value per item", "Accept all, per item", "Over no model", "Yours: per item"]
    formats = {c: money for c in money_columns}
    formats["Total value"] = total
    formats["Dimensionless value"] = number
    formats.update({c: percent for c in ("Acted on", "Accuracy when acting", "Yours: acted on")})

    def highlight(row):
        if row["★"] == "★":
            return ["background-color: rgba(0, 158, 115, 0.18); font-weight: 600"] * len(row)
        if str(row["Model"]).startswith("no model"):
            return ["color: #666666; font-style: italic"] * len(row)
        return [""] * len(row)

    return styled(frame, formats).apply(highlight, axis=1)

