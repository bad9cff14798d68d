"""The VOC curves page's view model: every selected model's value for every penalty ω, and who wins where.

:func:`build` gives the curves for one way of choosing thresholds on one ω
range (with bootstrap bands on request), the chart's inputs, its caption and
the dominance sentences; :func:`areas` the table of value at the user's ω and
VOC area per edited range; :func:`comparison` seed 003's accuracy-against-value
table. Frozen results; nothing here draws or touches Streamlit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np
import pandas as pd

import valuecore as vc

from ..data import Workspace, arrow_datasets
from ..safetext import md_text
from . import load_problem_note, split_text

omega_text = vc.wording.omega
BAND_POINTS = 61  # ω values a bootstrap band is drawn at


@dataclass(frozen=True)
class VocIntro:
    """What the page says before any curve: load problems, the value matrix's note, the ω range's default."""

    problem_note: str | None
    matrix_note: str | None
    omega: float  # the user's ω (may be infinite)
    default_range: tuple[float, float]


@dataclass(frozen=True)
class VocPage:
    """The curves of one threshold mode on one ω range, the chart's inputs and the words around them."""

    mode: str
    mode_notes: tuple[str, ...]  # what the mode means here (oracle, tuning fallbacks, same split)
    left_out: tuple[str, ...]  # models without a curve, and why
    empty_message: str | None  # no curve at all: said instead of everything below
    curves: dict  # model -> vc.VocCurve
    low: float
    high: float
    frame: pd.DataFrame  # the curves on an ω grid that has every kink inside the range
    bands: pd.DataFrame | None
    band_problems: tuple[str, ...]
    sup_points: pd.DataFrame  # ω_sup of the curves that cross zero inside the range
    omega_now: float | None  # the user's ω when it is inside the range
    chart_caption: str
    champion: str | None  # the model above or level with every other on the range
    dominance: tuple[str, ...]

    @property
    def champion_sentence(self) -> str | None:
        if self.champion is None:
            return None
        return (f"**{md_text(self.champion)}** is above or level with every other selected model for all "
                f"0 ≤ ω ≤ {omega_text(self.high)}: whatever the use case in that range, it is the one to pick.")


@dataclass(frozen=True)
class VocAreas:
    """Value at the user's ω, ω_sup and the VOC area on each edited range, per model."""

    summary: pd.DataFrame
    ranges: tuple[tuple[float, float], ...]
    problems: tuple[str, ...]
    value_label: str


@dataclass(frozen=True)
class VocComparison:
    """Seed 003's table (accuracy and F1 against value) turned to one row per metric, and what it says."""

    table: pd.DataFrame | None
    sentences: tuple[str, ...]
    problem: str | None


def intro(selection) -> VocIntro:
    omega = selection.omega
    finite = math.isfinite(omega) and omega >= 0
    default_high = min(100.0, max(10.0, 2 * omega if finite else 10.0))
    matrix_note = ("VOC curves use the three values (one ω); the per-class matrix has no single ω and is not used "
                   "here." if selection.value_matrix is not None else None)
    # nothing loaded: the empty page says why; "the models shown loaded fine" would not be true
    problem_note = load_problem_note(selection.report) if selection.report.models else None
    return VocIntro(problem_note, matrix_note, omega, (0.0, float(default_high)))


def mode_label(selection, mode: str) -> str:
    return voc_mode_label(mode, selection.tune_split, selection.eval_split)


def build(selection, ws: Workspace, mode: str, low: float, high: float, *, bands: bool = False) -> VocPage:
    """The curves of ``mode`` for the selected models on ω in [low, high] (bootstrap bands with ``bands``)."""
    high = max(high, low + 0.5)
    omega = selection.omega
    finite = math.isfinite(omega) and omega >= 0
    mode_notes = []
    if mode == "oracle":
        mode_notes.append(f"The {vc.wording.BEST_POSSIBLE} curve picks each ω's best threshold on the very items it "
                          "is scored on: no real deployment can do as well. Use it as an upper bound, not as a "
                          "forecast.")
    if mode == "tuned":
        mode_notes += [md_text(note) for model in selection.models
                       if ws.has_split(model, selection.eval_split) and (note := ws.tuning_note(model))]
        if selection.tune_split == selection.eval_split:
            mode_notes.append("Tuning and evaluation use the same split, so 'tuned' equals the "
                              f"'{vc.wording.BEST_POSSIBLE}' curve here.")
    curves, left_out = voc_curves(ws, selection.models, mode)
    if not curves:
        empty = (f"No selected model can be drawn: a VOC curve needs labels on {split_text(selection.eval_split)}"
                 + (f" and on {split_text(selection.tune_split)}." if mode == "tuned" else "."))
        return VocPage(mode, tuple(mode_notes), tuple(left_out), empty, {}, low, high, pd.DataFrame(), None, (),
                       omega_sup_frame({}, low, high), None, "", None, ())
    found_bands, band_problems = _bands(ws, curves, mode, low, high) if bands else ((), [])
    # What no value changes (the curves on their grid, ω_sup, the bands, who is above whom) is kept per curves,
    # range and bands: a new outcome value only moves the dashed line of your ω.
    drawn = _drawing(tuple((model, _Same(curve)) for model, curve in curves.items()), low, high,
                     tuple((model, _Same(band)) for model, band in found_bands) if bands else None)
    frame, band_frame, sup_points = drawn.frame, drawn.bands, drawn.sup_points
    # Promise the ◆ only when one is drawn: a curve that stays above zero on the range has no ω_sup there.
    marks = ("◆ marks ω_sup, the penalty ω beyond which a model is worth less than no model." if len(sup_points)
             else "No curve falls below zero (no model) on this ω range, so no ω_sup (◆) is marked.")
    inside = finite and low <= omega <= high
    if inside:
        caption = f"The dashed line is your use case (ω = {omega_text(omega)}). {marks}"
    elif finite:  # no dashed line is drawn: say where the use case is instead of promising one
        caption = (f"Your use case (ω = {omega_text(omega)}) is outside the range drawn, so no dashed line marks "
                   f"it. {marks}")
    else:
        caption = f"Your use case has no finite ω ({selection.use_case.regime.reason}) {marks}"
    sentences, champion = drawn.dominance, drawn.champion
    return VocPage(
        mode=mode, mode_notes=tuple(mode_notes), left_out=tuple(left_out), empty_message=None, curves=curves,
        low=low, high=high, frame=frame, bands=band_frame, band_problems=tuple(band_problems), sup_points=sup_points,
        omega_now=omega if inside else None, chart_caption=caption, champion=champion,
        dominance=tuple(sentences),
    )


def _bands(ws: Workspace, curves: dict, mode: str, low: float, high: float):
    """(model, band) of each curve that has one (the workspace keeps them), and a sentence per one refused."""
    found, problems = [], []
    for model in curves:
        try:
            found.append((model, ws.voc_band(model, mode, np.linspace(low, high, BAND_POINTS))))
        except ValueError as error:
            problems.append(md_text(f"No band for {model}: {error}"))
    return tuple(found), problems


class _Same:
    """A cache key part that is its object itself (curves and bands hold arrays, so they hash by identity).

    The cache keeps the key, hence the object, alive: its id cannot be reused by another object meanwhile.
    """

    __slots__ = ("item",)

    def __init__(self, item):
        self.item = item

    def __hash__(self) -> int:
        return id(self.item)

    def __eq__(self, other) -> bool:
        return isinstance(other, _Same) and other.item is self.item


@dataclass(frozen=True)
class _Drawing:
    """What the VOC page draws that no outcome value changes."""

    frame: pd.DataFrame
    bands: pd.DataFrame | None
    sup_points: pd.DataFrame
    dominance: tuple[str, ...]
    champion: str | None


@lru_cache(maxsize=64)
def _drawing(curves: tuple, low: float, high: float, bands: tuple | None) -> _Drawing:
    """The curves ((model, _Same(curve)), ...) on ω in [low, high], their ω_sup, bands and who is above whom."""
    curves = {model: curve.item for model, curve in curves}
    pieces = [band.item.to_frame(model) for model, band in bands or ()]
    sentences, champion = dominance_sentences(curves, high) if len(curves) >= 2 else ([], None)
    return _Drawing(vc.voc_frame(curves, omega_grid(low, high, curves)),
                    pd.concat(pieces, ignore_index=True) if pieces else None,
                    omega_sup_frame(curves, low, high), tuple(sentences), champion)


def chart_spec(page: VocPage, models) -> dict:
    """The VOC chart's Vega-Lite spec: the curves' part kept per drawing (no value changes it), your ω added."""
    return vc.chartspecs.with_omega_now(_curves_spec(_Same(page.frame), _Same(page.sup_points), _Same(page.bands),
                                                     tuple(models)), page.omega_now)


@lru_cache(maxsize=64)
def _curves_spec(frame: _Same, sup_points: _Same, bands: _Same, models: tuple) -> dict:
    return arrow_datasets(vc.chartspecs.voc_spec(frame.item, models=list(models), omega_sup=sup_points.item,
                                                 bands=bands.item))


def areas(page: VocPage, omega: float, edited: pd.DataFrame) -> VocAreas:
    """The table under the chart for the ranges in the edited table (rows with problems skipped, said)."""
    ranges, problems = parse_ranges(edited)
    return VocAreas(voc_summary(page.curves, omega, ranges), tuple(ranges), tuple(problems),
                    f"Value at your ω = {omega_text(omega)}")


def comparison(ws: Workspace, page: VocPage) -> VocComparison:
    """Seed 003's comparison of the drawn models (or why it cannot be made)."""
    try:
        table = ws.comparison(list(page.curves))
    except ValueError as error:
        return VocComparison(None, (), f"The comparison table is unavailable: {md_text(error)}.")
    return VocComparison(comparison_display(table), tuple(comparison_words(table)), None)


# ------------------------------------------------------------ the pieces
VOC_MODE_ORDER = ("tuned", "oracle", "calibrated", "accept_all")


def voc_mode_label(mode: str, tune_split: str | None, eval_split: str | None) -> str:
    return {
        "tuned": f"Tuned on {split_text(tune_split)}, applied to {split_text(eval_split)}",
        "oracle": f"{vc.wording.BEST_POSSIBLE.capitalize()}: tuned on {split_text(eval_split)} itself (an upper "
                  "bound, not reachable)",
        "calibrated": "Calibrated threshold ω/(1+ω), no tuning",
        "accept_all": "Accept all (no hand-offs: the accuracy baseline)",
    }[mode]


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


AREAS_HEADING = "Value at your ω, and how far each model pays"
AREAS_DETAILS = "VOC areas on your ω ranges"
# Under "Worth more than no model up to": a model never below no model reads "any ω (never below no model)", not
# "never worth less than no model" (the header and that cell read "worth more ... up to never worth less ...").
EVERY_OMEGA = "any ω (never below no model)"


def voc_summary(curves: dict, omega: float, ranges) -> pd.DataFrame:
    """Per model: value at the user's omega, omega_sup, VOC area on each omega range."""
    records = []
    for model, curve in curves.items():
        record = {
            "model": model,
            "value_at_omega": float(curve.value_at(omega)) if math.isfinite(omega) and omega >= 0 else np.nan,
            "omega_sup": curve.omega_sup,
            "useful_up_to": EVERY_OMEGA if math.isinf(curve.omega_sup)
            else f"ω = {omega_text(curve.omega_sup)}",
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
    top = f"0 ≤ ω ≤ {omega_text(result.omega_max)}"
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
            parts.append(f"{word} **{md_text(b)}** at ω = {omega_text(start)}" if i == 0
                         else f"{word} at ω = {omega_text(start)}")
        elif i == 0:
            word = {"a": "above", "b": "below", "tie": "level with"}[leader]
            parts.append(f"{word} **{md_text(b)}** for ω < {omega_text(end)}")
        else:
            word = {"a": "above", "b": "below", "tie": "level"}[leader]
            parts.append(f"{word} after" if i == len(segments) - 1
                         else f"{word} for {omega_text(start)} < ω < {omega_text(end)}")
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
        "Metric": [metric_label(m) for m in metrics],
        "Best model": [best[m] for m in metrics],
        "Differs from accuracy": ["⚠ yes" if m in disagree else "" for m in metrics],
    }
    for model in frame.index:
        out[model] = [
            f"{vc.wording.number(frame.at[model, m])} (#{int(frame.at[model, f'{m}_rank'])})"
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


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


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

