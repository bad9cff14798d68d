"""The first page's view model: the one model and rule to deploy, at what threshold, and what it is worth.

:func:`build` weighs every (model, rule) the settings allow (``dashboard.home``'s
recommendation, kept by the workspace's cache) and returns a frozen :class:`HomePage` of sentences and
frames; :func:`per_period` turns it into the tiles and sentences for a volume
and a period, the part of the page a volume change reruns alone. Nothing here
draws and nothing here touches Streamlit.
"""

from __future__ import annotations

import bisect
import functools
import operator
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

import valuecore as vc

from .. import home
from ..data import Workspace
from ..home import Tile
from ..safetext import md_text
from ..rules import rule_options
from . import GLOBAL_THRESHOLD_KINDS, load_problem_note, split_text, threshold_help, threshold_on_data
from .value import likely_range_words

__all__ = ["PERIODS", "HomeIntro", "HomeNumbers", "HomePage", "build", "build_now", "deciding_confidences",
           "intro", "per_period", "report_maker"]

PERIODS = ("month", "week", "day", "year")

CANDIDATES_CAPTION = (
    "Every decision rule the settings allow, tuned on the tuning split and judged on the evaluated items "
    "(\"here\"). Gain, 90% sure: the least it earns per item more than handing the item to a person that these "
    "items make us 90% sure of on new items, allowing for costly outcomes that are rare or were never seen. Above "
    "0, the rule is shown to earn more than no model; negative, it could lose. Among the rules shown to earn, the "
    "one with the highest gain is recommended (the simpler rule when two are level); when none is, the answer is "
    "\"not yet\". Against the best here: how much less it earns per item on these items; not separated: a paired "
    "comparison on the same items (or, for runs on different items, overlapping ranges) cannot exclude that it "
    "is as good as the best."
)


@dataclass(frozen=True)
class HomeIntro:
    """What the page says before it needs a model: the values and splits in force, and load problems."""

    caption: str
    values_frame: pd.DataFrame | None  # the per-class values in force, as text (None: the three values are)
    values_expanded: bool
    problem_note: str | None


@dataclass(frozen=True)
class HomePage:
    """The recommendation in words and frames, for any volume and period."""

    recommendation: vc.recommendation.Recommendation
    headline: str
    reason: str
    range_words: str  # what the recommended model's likely range rests on ("" when it has none)
    skipped: tuple[str, ...]  # "Not weighed: ..." notes
    currency: str
    report_kind: str
    report_kinds: tuple[str, ...]
    # What decides how the recommended policy's thresholds are written (None: no model): for each of them,
    # the highest confidence below it on the data shown (deciding_confidences). The texts are those the
    # model's every confidence would give, at the cost of a few numbers instead of 10^6 on each rerun.
    confidences: object
    raw_confidence_note: str = ""  # thresholds per segment ignore the sidebar's recalibration ("" when not)

    @functools.cached_property
    def candidates(self) -> pd.DataFrame | None:
        """Every (model, rule) weighed, best first (None: none was). Made when first asked for: the page shows
        it only while its section is open, and a new value would otherwise build it for nothing."""
        r = self.recommendation
        return candidates_frame(r, self.currency) if r.candidates else None

    @property
    def has_candidates(self) -> bool:
        """Some (model, rule) was weighed, so there is a table of them to show."""
        return bool(self.recommendation.candidates)


@dataclass(frozen=True)
class HomeNumbers:
    """The tiles and the per-period sentence for one volume and period."""

    tile_rows: tuple[tuple[tuple[int, ...], tuple[Tile, ...]], ...]  # (relative widths, tiles) per row
    per_period: str | None


def intro(selection) -> HomeIntro:
    """The values in force and the splits in one caption (the matrix as a frame when one is in force)."""
    use_case, currency, matrix = selection.use_case, selection.currency, selection.value_matrix
    # Before any run is loaded there is no split to name (it used to read "tuned on 'None'").
    splits_text = (f"Thresholds are tuned on {split_text(selection.tune_split)}, value is measured on "
                   f"{split_text(selection.eval_split)}. " if selection.eval_split is not None else "")
    if matrix is None:
        caption = (f"A correct answer earns {vc.wording.money(use_case.v_correct, currency)}, a hand-off to a person "
                   f"{vc.wording.money(use_case.v_abstain, currency)}, a wrong answer "
                   f"{vc.wording.money(use_case.v_wrong, currency)}. " + splits_text + "Change the values in the "
                   "sidebar.")
        frame = None
    else:
        caption = ("Per-class values from the Values per class page are in force: what each outcome earns depends on "
                   "the true class and on what is done with the item (below). " + splits_text + "Edit them on the "
                   "Values per class page.")
        frame = values_frame(matrix, currency)
    # nothing loaded: the empty page says why; "the models shown loaded fine" would not be true
    problem_note = load_problem_note(selection.report) if selection.report.models else None
    return HomeIntro(caption, frame, matrix is not None and len(matrix.classes) <= 3,
                     problem_note)


def build(selection, ws: Workspace, segments: home.SegmentChoice | None = None) -> HomePage:
    """The recommendation among the selected models over every rule they can use; with ``segments``
    (``dashboard.home.segment_choice``), each model's thresholds per segment too.

    Kept across reruns and sessions per runs, rules, values, splits, recalibration, rule and currency, and the
    segment column, caps and label files (``dashboard.home.cached_page``); :func:`build_now` makes it.
    """
    key = home.page_key(ws, selection.models, selection.values) + (selection.rule, selection.currency)
    if segments is not None:
        key += segments.key
    return home.cached_page(key, lambda: build_now(selection, ws, segments))


def build_now(selection, ws: Workspace, segments: home.SegmentChoice | None = None) -> HomePage:
    """:func:`build` without its cache."""
    kinds, _ = rule_options(ws, selection.models, selection.values)
    r = home.page_recommendation(ws, selection.models, selection.values, segments)
    # The threshold with the digits that matter on the data shown (the exact one is in the tile's help).
    confidences = deciding_confidences(ws, r.model, r.policy) if r.model is not None else None
    # thresholds per segment have no interval of their own here (their segments' are on the Segments page)
    range_words = (model_range_words(ws, r.model, r.policy, selection.values, selection.currency, r.interval)
                   if r.model is not None and r.kind != vc.recommendation.SEGMENT_RULE else "")
    return HomePage(
        recommendation=r,
        headline=md_text(vc.wording.recommendation_headline(r, confidences)),
        reason=md_text(vc.wording.recommendation_reason(r, selection.currency)),
        range_words=md_text(range_words) if range_words else "",
        skipped=tuple(md_text(f"Not weighed: {note}.") for note in r.skipped),
        currency=selection.currency,
        report_kind=selection.rule if selection.rule in kinds else kinds[0],
        report_kinds=tuple(kinds),
        confidences=confidences,
        raw_confidence_note=home.raw_confidence_note(selection, segments),
    )


def recommendation_tiles(r: vc.recommendation.Recommendation, currency: str, volume: float, period: str,
                         confidences=None) -> list[Tile]:
    """The six tiles under the headline, for the recommendation (or for handing every item over).

    ``confidences``: the model's confidences on the data shown (:func:`deciding_confidences`); the threshold
    tile then has the digits that tell its decision apart on them, and its help the exact threshold.
    """
    if r.choice == "no_candidates":
        return []
    if r.model is None:
        rule, automated, per_item = "Hand over", vc.wording.percent(0.0), r.baseline_per_item
        rule_help = "No model: every item goes to a person."
    else:
        if r.kind in GLOBAL_THRESHOLD_KINDS:
            threshold = r.threshold
            rule = ("Hand over" if threshold is None else "Act on all" if threshold <= 0
                    else threshold_on_data(threshold, confidences))
        else:
            threshold = None
            rule = _SHORT_RULES.get(r.kind, r.kind)
        automated, per_item = vc.wording.percent(r.coverage), r.per_item
        rule_help = f"{md_text(r.model)}: {vc.wording.rule_phrase(r.policy, confidences)}."
        if threshold is not None and threshold > 0:
            rule_help += " " + threshold_help(threshold)
    return _tiles(rule, rule_help, automated, per_item, r.baseline_per_item, currency, volume, period)


def values_frame(matrix: vc.ValueMatrix, currency: str) -> pd.DataFrame:
    """The value matrix in force as text: one row per true class, a column per action (predicted class, hand-off)."""
    money = vc.wording.money
    columns = [f"predicted {c}" for c in matrix.classes] + ["handed over"]
    rows = [[money(float(v), currency) for v in row] for row in np.asarray(matrix.values, dtype=float)]
    frame = pd.DataFrame(rows, columns=columns)
    frame.insert(0, "True class", [str(c) for c in matrix.classes])
    return frame


def candidates_frame(r: vc.recommendation.Recommendation, currency: str) -> pd.DataFrame:
    """Every (model, rule) judged, best first, as text, then the no-model row (the HTML report's rows)."""
    rows = vc.wording.standings_rows(r, currency)
    # built by columns: a frame of row dicts took milliseconds on each rerun
    return pd.DataFrame({name: [row[i] for row in rows] for i, name in enumerate(vc.wording.standings_columns(r))})


# Tile values are set in a large font: a few words at most, or the tile cuts them at 1280 px.
_SHORT_RULES = {
    "accept_all": "Act on all",
    "class_thresholds": "Per class",
    "calibrated_class_thresholds": "Per class",
    "expected_value": "Expected value",
    vc.recommendation.SEGMENT_RULE: "Per segment",
}


def _tiles(rule: str, rule_help: str, automated: str, per_item: float, baseline: float, currency: str,
           volume: float, period: str) -> list[Tile]:
    money = vc.wording.money
    if rule[0].isdigit():
        exact = rule_help.partition("Exact threshold:")[2]
        rule_help = ("Act when confidence ≥ this: items the model is at least this confident about are automated; the "
                     "rest go to a person. "
                     + (f"Written with the digits that decide the items shown as the exact threshold does; the exact "
                        f"threshold, as in the exported policy:{exact}" if exact else
                        "Written to the last digit of the exact threshold, so that a copy of it decides every item "
                        "as the exported policy does."))
    gain = per_item - baseline
    return [
        Tile("Threshold" if rule[0].isdigit() else "Rule", rule, rule_help),
        Tile("Acted on", automated, "Share of items acted on without a person (coverage), as every page names it."),
        Tile("Value per item", money(per_item, currency),
             "Average value of every item, hand-offs included, on the evaluated items."),
        Tile(f"Value per {period}", money(per_item * volume, currency),
             f"Value per item × {vc.wording.significant(volume)} items per {period}."),
        Tile(f"More than no model, per {period}", money(gain * volume, currency),
             "Compared with handing every item to a person (the no-model baseline)."),
        Tile("No model, per item", money(baseline, currency),
             "Value per item of handing every item over: the bar every model must clear."),
    ]


# A tile's value is set in a large font, about 19 px a character: a column a third wide holds about ten.
_CHARACTERS_IN_A_THIRD = 10


def tile_rows(tiles: list[Tile]) -> list[tuple[list[int], list[Tile]]]:
    """The tiles three to a row, with the relative column widths of each row.

    A threshold written to its last digit (17 significant digits for a float confidence) does not fit a
    third of the page at 1280 px: its row gives it half.
    """
    rows = []
    for start in range(0, len(tiles), 3):
        row = tiles[start : start + 3]
        long = max((len(t.value) for t in row), default=0) > _CHARACTERS_IN_A_THIRD
        rows.append(([2 if len(t.value) > _CHARACTERS_IN_A_THIRD else 1 for t in row] if long else [1] * len(row),
                     row))
    return rows


def per_period(page: HomePage, currency: str, volume: float, period: str) -> HomeNumbers:
    """The six tiles and the value per period at ``volume`` items per ``period``.

    Amounts over a period have no cents from 100 up (``wording.projected``). When a hand-off is worth
    nothing the gain over no model is the value itself: its tile gives way to the hand-offs per period.
    """
    r = page.recommendation
    tiles = [_per_period_tile(t, r, currency, volume, period)
             for t in recommendation_tiles(r, currency, volume, period, page.confidences)]
    sentence = None
    if r.model is not None:
        gain = (f" ({vc.wording.projected(r.gain_per_item * volume, currency)} per {period} more than no model)"
                if r.baseline_per_item != 0 else "")
        sentence = md_text(
            f"At {vc.wording.significant(volume)} items per {period} that is "
            f"{vc.wording.projected(r.per_item * volume, currency)} per {period}{gain}."
        )
    return HomeNumbers(tuple((tuple(widths), tuple(row)) for widths, row in tile_rows(tiles)), sentence)


def _per_period_tile(tile: Tile, r, currency: str, volume: float, period: str) -> Tile:
    per_item = r.per_item if r.model is not None else r.baseline_per_item  # "not yet": every item handed over
    if tile.label == f"Value per {period}":
        return replace(tile, value=vc.wording.projected(per_item * volume, currency))
    if tile.label != f"More than no model, per {period}":
        return tile
    if r.baseline_per_item != 0:
        return replace(tile, value=vc.wording.projected((per_item - r.baseline_per_item) * volume, currency))
    coverage = r.coverage if r.model is not None else 0.0
    return Tile(f"Hand-offs per {period}", vc.wording.count(round((1 - coverage) * volume)),
                f"Items a person decides: {vc.wording.percent(1 - coverage)} of {vc.wording.significant(volume)} "
                f"items per {period}. (A hand-off is worth nothing here, so the value above is all gain over no "
                "model.)")


def policy_thresholds(policy) -> tuple[float, ...]:
    """Every confidence threshold a policy's words can name: its threshold, its per-class thresholds, a
    two-tier's assist threshold, a shortlist's list threshold (finite ones only)."""
    if policy is None:
        return ()
    shortlist = getattr(policy, "shortlist", None) or {}
    per_class = tuple(t for _, t in (getattr(policy, "class_thresholds", None) or ()))
    if getattr(policy, "kind", None) == vc.recommendation.SEGMENT_RULE:
        per_class = tuple(t for _, t in policy.policy.thresholds) + tuple(
            t for _, pairs in (policy.policy.class_thresholds or ()) for _, t in pairs)
    found = (policy.threshold, getattr(policy, "assist_threshold", None), shortlist.get("list_threshold"), *per_class)
    return tuple(float(t) for t in found if t is not None and np.isfinite(t))


def deciding_confidences(ws: Workspace, model: str, policy) -> np.ndarray:
    """For each threshold of ``policy`` (:func:`policy_thresholds`), the highest confidence below it on the
    data shown (the tuning and evaluated splits, as ``views.shown_confidences``), ascending.

    ``vc.wording.threshold`` and ``threshold_on_data`` read the confidences only through that number (the
    next lower confidence bounds the digits), so these few give the same texts as every confidence of the
    splits. Each is found by a binary search in the split's presorted distinct confidences: O(log n) per
    rerun where a scan of 10^6 confidences took milliseconds, on the first page and in its volume fragment.
    """
    thresholds = policy_thresholds(policy)
    below = []
    for split in dict.fromkeys((ws.tuning_split_for(model), ws.eval_split)):
        run = ws.sorted(model, split) if split is not None else None
        if run is None or not len(run.thresholds):
            continue
        descending = run.thresholds  # distinct confidences, decreasing
        for t in thresholds:
            at = bisect.bisect_right(descending, -t, key=operator.neg)  # how many are >= t, without a copy
            if at < len(descending):
                below.append(float(descending[at]))
    return np.unique(np.asarray(below, dtype=np.float64))


def model_range_words(ws: Workspace, model: str, policy, values, currency: str = "", interval=None) -> str:
    """What one model's likely range rests on, for its policy on the evaluated split; "" when it has no interval.

    ``interval``: that interval when already known (a recommendation carries its own, read off the tally it
    was judged by: the same numbers as ``ws.interval`` without evaluating the policy again on every new value).
    """
    found = interval
    if found is None:
        try:
            found = ws.interval(model, policy, values)
        except ValueError:  # values too tiny or too large to square: the Value page says why
            return ""
    if found is None:
        return ""
    return f"{model}: {likely_range_words(found, values, currency)}"


def report_maker(selection, kind: str, volume: float, period: str, recommend_kinds=None):
    """A no-argument callable that writes the shareable HTML report of the selection (for st.download_button).

    It runs when the visitor clicks, on another thread; a problem becomes a short HTML page that says it.
    """
    import html

    models = {m: selection.report.models[m] for m in selection.models if m in selection.report.models}

    def make() -> str:
        try:
            return vc.report.html_report(
                models, selection.values, kind=kind, calibration_method=selection.calibration,
                tune_split=selection.tune_split, eval_split=selection.eval_split, currency=selection.currency,
                volume=volume, period=period, recommend_kinds=recommend_kinds,
            )
        except ValueError as error:
            return f"<!DOCTYPE html><meta charset=utf-8><p>The report could not be made: {html.escape(str(error))}</p>"

    return make
