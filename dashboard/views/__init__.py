"""Table and frame builders for the Runs, Value, VOC and Cost matrix pages.

Pages lay out widgets; this module turns the user's selection into the
tidy frames those widgets show. Every number comes from ``valuecore``
(through the cached :class:`~dashboard.data.Workspace`); nothing here draws.
Problems become plain-language notes, never exceptions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from functools import lru_cache
from itertools import combinations

import numpy as np
import pandas as pd

import valuecore as vc

from ..data import Workspace
from ..datasets import aggregated_models, per_item_note
from ..safetext import md_text

# ------------------------------------------------------------------ labels
POLICY_LABELS = vc.wording.POLICY_LABELS  # one label per policy kind, in the app, the CLI and the report
VALUE_PAGE_KINDS = ("threshold", "calibrated_threshold", "accept_all", "class_thresholds",
                    "calibrated_class_thresholds", "expected_value")
NEEDS_PROBA = frozenset({"expected_value"})
NEEDS_ONE_OMEGA = frozenset({"calibrated_threshold"})
GLOBAL_THRESHOLD_KINDS = frozenset({"threshold", "calibrated_threshold"})

VOC_MODE_ORDER = ("tuned", "oracle", "calibrated", "accept_all")
NO_PROBA_NOTE = vc.wording.NO_PROBA_NOTE


def voc_mode_label(mode: str, tune_split: str | None, eval_split: str | None) -> str:
    return {
        "tuned": f"Tuned on {split_text(tune_split)}, applied to {split_text(eval_split)}",
        "oracle": f"Best possible: tuned on {split_text(eval_split)} itself (an upper bound, not reachable)",
        "calibrated": "Calibrated threshold ω/(1+ω), no tuning",
        "accept_all": "Accept all (no hand-offs: the accuracy baseline)",
    }[mode]


# Numbers read the same on every page, in the CLI and in the report: valuecore.wording formats them.
percent = vc.wording.percent
number = vc.wording.number
omega_text = vc.wording.omega


def threshold_text(threshold: float | None) -> str:
    if threshold is None or (isinstance(threshold, float) and math.isnan(threshold)):
        return "always hand off"
    if threshold <= 0:
        return "accept all"
    return threshold_number(threshold)


THRESHOLD_SIGNIFICANT = vc.wording.THRESHOLD_SIGNIFICANT


def shown_confidences(ws, model: str):
    """The model's distinct (recalibrated) confidences on the data shown: its tuning and evaluated splits."""
    pieces = [run.thresholds for split in dict.fromkeys((ws.tuning_split_for(model), ws.eval_split))
              if split is not None and (run := ws.sorted(model, split)) is not None]
    return np.concatenate(pieces) if pieces else None


threshold_on_data = vc.wording.threshold_on_data  # as many digits as tell the decision apart, at most 6


def threshold_help(threshold: float) -> str:
    return f"Exact threshold: {threshold_number(threshold)} (as in the exported policy JSON)."


def threshold_number(threshold: float) -> str:
    """Enough digits to reproduce the decision exactly (never 1.000 for a threshold below 1)."""
    return vc.wording.threshold(threshold)


def split_text(split: str | None) -> str:
    """'val' in quotes, or words when there is no split (never 'None'); markdown-safe."""
    return "no split (none is loaded)" if split is None else f"'{md_text(split)}'"


short_list = vc.wording.short_list


# ------------------------------------------------------------------- runs
def load_problem_note(report) -> str | None:
    """One sentence when some files did not load (the Runs page has the details)."""
    errors = report.errors
    if not errors:
        return None
    files = list(dict.fromkeys(p.file for p in errors))
    return (f"{len(files)} file(s) could not be loaded ({md_text(short_list([Path(f).name for f in files], 3))}): "
            "the Runs page says why. The models shown here loaded fine.")


# --------------------------------------------------------- split checks
def split_notes(ws: Workspace, models, kind: str = "threshold") -> list[tuple[str, str]]:
    """(severity, message) per caveat of the pipeline: a missing split, a tuning fallback, a calibration
    that cannot apply, values estimated without labels. The same notes go into the exported JSON."""
    notes = []
    if ws.eval_split is None:
        return [("info", "The selected models have no splits to evaluate.")]
    missing = [m for m in models if not ws.has_split(m, ws.eval_split)]
    if missing:
        one = len(missing) == 1
        notes.append(("warning", f"{md_text(short_list(missing))} {'has' if one else 'have'} no "
                                 f"{split_text(ws.eval_split)} split, "
                                 f"so {'it is' if one else 'they are'} left out. "
                                 "Pick another split under 'Evaluate on' in the sidebar."))
    for model in models:
        if not ws.has_split(model, ws.eval_split):
            continue
        for note in ws.notes(model, kind):
            severity = "warning" if "cannot be fitted" in note else "info"
            notes.append((severity, md_text(note)))  # the core's plain words, with model and split names
    return notes


# ---------------------------------------------------------------- value
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


def rule_options(ws: Workspace, models, values) -> tuple[list[str], list[str]]:
    """The decision rules that apply to these models and values, and a note per rule left out.

    Every page that offers a rule offers these (one setting, one list): first "recommended", each model the
    rule the recommendation would choose for it (``Workspace.policy`` resolves it), then the kinds.
    """
    options, notes = list(VALUE_PAGE_KINDS), []
    if isinstance(values, vc.ValueMatrix):
        options = [k for k in options if k not in NEEDS_ONE_OMEGA]
        notes.append("The calibrated threshold ω/(1+ω) needs one penalty ω, and a value matrix has none: it is not "
                     "offered while the matrix is in force (per-class calibrated thresholds are).")
    aggregated = aggregated_models(ws.report, models)
    if aggregated:  # each item's own probability vector is gone: the rule is not offered at all
        options = [k for k in options if k not in NEEDS_PROBA]
        notes.append(md_text(per_item_note(aggregated, "the expected-value rule")) + " It is not offered.")
        models = [m for m in models if m not in aggregated]
    with_proba = [m for m in models if ws.has_proba(m)]
    if not with_proba:
        options = [k for k in options if k not in NEEDS_PROBA]
    if models and len(with_proba) < len(models):
        top_label = [m for m in models if m not in with_proba]
        notes.append(f"{md_text(short_list(top_label))}: top label only, so the expected-value rule "
                     + ("is not offered." if not with_proba else "is not available for them.")
                     + " It needs one probability column per class.")
    return [vc.RECOMMENDED_RULE, *options], notes


def fit(ws: Workspace, model: str, kind: str, values) -> vc.Policy:
    """The pipeline's policy (ValueError in plain words when the model cannot get one)."""
    return ws.policy(model, kind, values)


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
            if isinstance(values, vc.UseCase):  # a value matrix has no single ω, so no ω/(1+ω) mark
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


def model_range_words(ws: Workspace, model: str, policy, values, currency: str = "") -> str:
    """:func:`likely_range_words` for one model's policy on the evaluated split; "" when it has no interval."""
    try:
        found = ws.interval(model, policy, values)
    except ValueError:  # values too tiny or too large to square: the Value page says why
        return ""
    return "" if found is None else f"{model}: {likely_range_words(found, values, currency)}"


def best_model(rows: list[ModelValue]) -> str | None:
    """The model with the highest value per item (None when no model has a value)."""
    scored = [(r.result.value_per_item, r.model) for r in rows if r.ok]
    if not scored:
        return None
    return max(scored, key=lambda pair: pair[0])[1]


def exact_policies(rows: list[ModelValue]) -> dict:
    """model -> the policy as the policy JSON writes it (every digit), for the models that got one."""
    return {r.model: r.policy.to_dict() for r in rows if r.policy is not None}


def policy_summary(policy: vc.Policy | None) -> tuple[float | None, str]:
    """(global threshold or NaN, text describing the rule)."""
    if policy is None:
        return np.nan, "–"
    if policy.kind in GLOBAL_THRESHOLD_KINDS:
        t = policy.threshold
        text = threshold_text(t)
        return (np.nan if t is None else t), (f"act when confidence ≥ {text}" if text[0].isdigit() else text)
    if policy.kind == "accept_all":
        return 0.0, "accept all"
    if policy.kind == "expected_value":
        return np.nan, "highest expected value per item"
    pairs = policy.class_thresholds or ()
    text = ", ".join(f"{c}: {threshold_text(t)}" for c, t in pairs[:4])
    if len(pairs) > 4:
        text += f", … ({len(pairs)} classes)"
    return np.nan, text


def value_table(rows: list[ModelValue], *, with_what_if: bool = False) -> pd.DataFrame:
    """The Value page table: one row per model, then the "no model" baseline.

    Numeric columns stay numeric (for sorting and tests); the page formats them.
    """
    best = best_model(rows)
    records = []
    for row in rows:
        threshold, rule = policy_summary(row.policy)
        record = {
            "best": "★" if row.model == best else "",
            "model": row.model,
            "threshold": threshold,
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
            "model": "no model (always hand off)",
            "threshold": np.nan,
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


def value_verdict(rows: list[ModelValue], money, confidences: dict | None = None) -> list[str]:
    """Plain sentences: who is best, who is worth less than no model, who beats accept-all.

    ``confidences``: model -> confidences on the data shown, to write the threshold as the tiles do.
    """
    ok = [r for r in rows if r.ok]
    if not ok:
        return []
    sentences = []
    best = best_model(rows)
    top = next(r for r in ok if r.model == best)
    threshold, rule = policy_summary(top.policy)
    if confidences is not None and threshold == threshold and threshold is not None and threshold > 0:
        rule = f"act when confidence ≥ {threshold_on_data(threshold, confidences.get(best))}"
    if top.result.value_per_item <= top.no_model_per_item + 1e-12:
        # Crowning a model at the no-model value would be a claim the numbers do not make.
        sentences.append("No model earns more than handing every item to a person with these values.")
    else:
        sentences.append(
            f"**{md_text(best)}** brings the most value: {money(top.result.value_per_item)} per item "
            f"({money(top.result.value_total)} in all on {top.result.n_items:,.0f} items), "
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


# ------------------------------------------------------------------ VOC
def voc_curves(ws: Workspace, models, mode: str) -> tuple[dict, list[str]]:
    """VOC curves of ``mode`` per model, and a plain note for each model left out."""
    curves, notes = {}, []
    for model in models:
        try:
            curves[model] = ws.voc(model, mode)
        except ValueError as error:
            notes.append(md_text(f"{model} is left out: {error}."))
    return curves, notes


def omega_grid(low: float, high: float, curves: dict, points: int = 241, max_breaks: int = 400) -> np.ndarray:
    """An even omega grid plus every curve break inside it (so kinks are drawn where they are)."""
    grid = np.linspace(low, high, points)
    for curve in curves.values():
        inside = curve.breaks[(curve.breaks > low) & (curve.breaks < high)]
        if inside.size <= max_breaks:
            grid = np.union1d(grid, inside)
    return grid


def voc_summary(curves: dict, omega: float, ranges) -> pd.DataFrame:
    """Per model: value at the user's omega, omega_sup, VOC area on each omega range."""
    records = []
    for model, curve in curves.items():
        record = {
            "model": model,
            "value_at_omega": float(curve.value_at(omega)) if math.isfinite(omega) and omega >= 0 else np.nan,
            "omega_sup": curve.omega_sup,
            "useful_up_to": "never worth less than no model" if math.isinf(curve.omega_sup)
            else f"ω = {curve.omega_sup:.3g}",
        }
        for low, high in ranges:
            record[range_label(low, high)] = curve.area(low, high)
        records.append(record)
    columns = ["model", "value_at_omega", "omega_sup", "useful_up_to"] + [range_label(lo, hi) for lo, hi in ranges]
    return pd.DataFrame(records, columns=columns)


def range_label(low: float, high: float) -> str:
    high_text = "∞" if not math.isfinite(high) else f"{high:g}"
    return f"area ω∈[{low:g}, {high_text}]"


def area_rows_frame(rows) -> pd.DataFrame:
    """The VOC page's editable range table from its rows of (from, to); None is an empty cell."""
    return pd.DataFrame({"from": [np.nan if low is None else low for low, _ in rows],
                         "to": [np.nan if high is None else high for _, high in rows]}, dtype=float)


def frame_area_rows(frame: pd.DataFrame) -> tuple:
    """The rows of (from, to) an edited range table holds, an empty cell as None (the inverse of the above)."""
    def cell(x):
        return None if x is None or pd.isna(x) else float(x)

    return tuple((cell(low), cell(high)) for low, high in zip(frame.get("from", []), frame.get("to", [])))


def parse_ranges(frame: pd.DataFrame) -> tuple[list[tuple[float, float]], list[str]]:
    """Omega ranges from the editable table (columns ``from``, ``to``; empty ``to`` = ∞)."""
    ranges, problems = [], []
    for i, (low, high) in enumerate(zip(frame.get("from", []), frame.get("to", [])), start=1):
        low_missing = low is None or (isinstance(low, float) and math.isnan(low))
        high_missing = high is None or (isinstance(high, float) and math.isnan(high))
        if low_missing and high_missing:
            continue
        low = 0.0 if low_missing else float(low)
        high = math.inf if high_missing else float(high)
        if low < 0 or not low <= high:
            problems.append(f"row {i}: a range needs 0 ≤ from ≤ to (got {low:g} to {high:g}); it is skipped")
            continue
        ranges.append((low, high))
    return ranges, problems


def omega_sup_frame(curves: dict, low: float, high: float) -> pd.DataFrame:
    """Where each curve crosses zero, for the chart (only those inside the shown range)."""
    rows = [
        {"model": m, "omega_sup": c.omega_sup, "value": 0.0}
        for m, c in curves.items()
        if math.isfinite(c.omega_sup) and low <= c.omega_sup <= high
    ]
    return pd.DataFrame(rows, columns=["model", "omega_sup", "value"])


def dominance_sentence(a: str, b: str, result: vc.Dominance) -> str:
    """"logreg is above svm for ω < 2.3, below after" from a :class:`~valuecore.Dominance`."""
    top = f"0 ≤ ω ≤ {result.omega_max:.3g}"
    if result.dominant == "tie":
        return f"**{md_text(a)}** and **{md_text(b)}** are worth the same on {top}."
    if result.dominant in ("a", "b"):
        winner, loser = (a, b) if result.dominant == "a" else (b, a)
        return (f"**{md_text(winner)}** is above or level with **{md_text(loser)}** everywhere on {top}: "
                "it is better for every use case there.")
    segments = result.segments
    parts = []
    for i, (start, end, leader) in enumerate(segments):
        if start == end:  # a single omega where a jump gives a leader of its own
            word = {"a": "above", "b": "below", "tie": "level with"}[leader]
            parts.append(f"{word} **{b}** at ω = {start:.3g}" if i == 0 else f"{word} at ω = {start:.3g}")
        elif i == 0:
            word = {"a": "above", "b": "below", "tie": "level with"}[leader]
            parts.append(f"{word} **{md_text(b)}** for ω < {end:.3g}")
        else:
            word = {"a": "above", "b": "below", "tie": "level"}[leader]
            parts.append(f"{word} after" if i == len(segments) - 1 else f"{word} for {start:.3g} < ω < {end:.3g}")
    return f"**{md_text(a)}** is " + ", ".join(parts) + "."


def dominance_sentences(curves: dict, omega_max: float) -> tuple[list[str], str | None]:
    """A sentence per pair of models (pairs whose curves cross first), and the model above all others, if any."""
    crossing, ordered = [], []
    beats = {m: 0 for m in curves}
    for (a, ca), (b, cb) in combinations(curves.items(), 2):
        result = vc.dominance(ca, cb, omega_max=omega_max)
        (crossing if result.dominant is None else ordered).append(dominance_sentence(a, b, result))
        if result.dominant == "a":
            beats[a] += 1
        elif result.dominant == "b":
            beats[b] += 1
    others = len(curves) - 1
    champion = next((m for m, n in beats.items() if others > 0 and n == others), None)
    return crossing + ordered, champion


# ------------------------------------------------------ comparison table
def metric_label(column: str) -> str:
    if column == "accuracy":
        return "accuracy"
    if column == "macro_f1":
        return "macro F1"
    for prefix, words in (
        ("value_tuned_k", "value, tuned threshold"),
        ("value_calibrated_k", "value, calibrated threshold"),
        ("cost_error_k", "cost-sensitive error"),
    ):
        if column.startswith(prefix):
            return f"{words}, ω = {column[len(prefix):]}"
    return column


@lru_cache(maxsize=32)
def comparison_display(table: vc.ComparisonTable) -> pd.DataFrame:
    """Seed 003's table turned around: one row per metric, one column per model, "value (#rank)".

    The first columns name the best model per metric and flag the metrics whose
    best model is not the most accurate one. Cached per (cached) table object.
    """
    frame = table.to_frame()
    metrics = list(table.metrics.columns)
    best = table.best()
    disagree = set(table.disagreements())
    out = {
        "metric": [metric_label(m) for m in metrics],
        "best model": [best[m] for m in metrics],
        "differs from accuracy": ["⚠ yes" if m in disagree else "" for m in metrics],
    }
    for model in frame.index:
        out[model] = [
            f"{frame.at[model, m]:.3f} (#{int(frame.at[model, f'{m}_rank'])})"
            if pd.notna(frame.at[model, f"{m}_rank"]) else "–"
            for m in metrics
        ]
    return pd.DataFrame(out)


def _metric_family(column: str) -> tuple[str, str | None]:
    """("value with the tuned threshold", "4") for "value_tuned_k4"; (label, None) otherwise."""
    for prefix, words in (
        ("value_tuned_k", "value with the tuned threshold"),
        ("value_calibrated_k", "value with the calibrated threshold"),
        ("cost_error_k", "cost-sensitive error"),
    ):
        if column.startswith(prefix):
            return words, column[len(prefix):]
    return metric_label(column), None


_and = vc.wording.names


def comparison_words(table: vc.ComparisonTable) -> list[str]:
    """Where the metrics pick another best model than accuracy does, in words."""
    best = table.best()
    disagreements = table.disagreements()
    if not disagreements:
        return [f"Every metric here ranks **{md_text(best['accuracy'])}** first, as accuracy does."]
    grouped: dict[str, dict[str, list[str]]] = {}
    for column in disagreements:
        family, k = _metric_family(column)
        grouped.setdefault(best[column], {}).setdefault(family, []).append(k)
    sentences = [f"Accuracy ranks **{md_text(best['accuracy'])}** first, but:"]
    for model, families in grouped.items():
        parts = [family if ks == [None] else f"{family} at ω = {_and([k for k in ks if k is not None])}"
                 for family, ks in families.items()]
        sentences.append(f"- **{md_text(model)}** comes first on {_and(parts)}")
    return sentences


VALUE_COLUMNS = {
    "best": "★",
    "model": "Model",
    "threshold": "Threshold",
    "rule": "Rule",
    "value_total": "Total value",
    "value_per_item": "Value per item",
    "interval": "95% interval per item",
    "value_dimensionless": "Dimensionless value",
    "coverage": "Acted on",
    "selective_accuracy": "Accuracy when acting",
    "accept_all_per_item": "Accept all, per item",
    "gain_vs_no_model": "Gain over no model, per item",
    "what_if_per_item": "Yours: per item",
    "what_if_coverage": "Yours: acted on",
    "note": "Note",
}


def value_styler(table: pd.DataFrame, money, confidences: dict | None = None):
    """The Value page table, formatted (currency, %, 3 decimals) with the best model highlighted.

    ``confidences``: model -> its confidences on the data shown; each threshold is then written with the
    digits that tell its decision apart on them (:func:`threshold_on_data`), else to its last digit.
    """
    frame = table.copy()
    if confidences is not None:
        frame["threshold"] = [threshold_on_data(t, confidences.get(m)) if pd.notna(t) else "–"
                              for m, t in zip(frame["model"], frame["threshold"])]
    frame["interval"] = [
        (f"{money(lo)} to {money(hi)}" if np.isfinite(lo) and np.isfinite(hi) else "too few items")
        if pd.notna(lo) and pd.notna(hi) else ""
        for lo, hi in zip(frame["interval_low"], frame["interval_high"])
    ]
    frame = frame[[c for c in VALUE_COLUMNS if c in frame.columns]].rename(columns=VALUE_COLUMNS)
    money_columns = ["Total value", "Value per item", "Accept all, per item", "Gain over no model, per item",
                     "Yours: per item"]
    formats = {c: (lambda x: money(x) if pd.notna(x) else "–") for c in money_columns if c in frame.columns}
    formats["Threshold"] = (lambda x: x) if confidences is not None else (
        lambda x: threshold_number(x) if pd.notna(x) else "–")
    formats["Dimensionless value"] = lambda x: f"{x:.3f}" if pd.notna(x) else "–"
    for column in ("Acted on", "Accuracy when acting", "Yours: acted on"):
        if column in frame.columns:
            formats[column] = percent

    def highlight(row):
        if row["★"] == "★":
            return ["background-color: rgba(0, 158, 115, 0.18); font-weight: 600"] * len(row)
        if str(row["Model"]).startswith("no model"):
            return ["color: #666666; font-style: italic"] * len(row)
        return [""] * len(row)

    # st.dataframe shows missing numbers as "None" whatever the Styler says; the
    # columns that are empty on the baseline row are shown as text instead.
    for column in list(formats):
        always_text = column in ("Threshold", "Accuracy when acting", "Dimensionless value")
        if column in frame.columns and (always_text or frame[column].isna().any()):
            frame[column] = [formats[column](x) for x in frame[column]]
            formats.pop(column)
    return frame.style.format(formats, na_rep="–").apply(highlight, axis=1)
