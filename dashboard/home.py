"""The landing page's numbers: the one recommendation on the user's selection, its tiles and table, and the report.

The recommendation (``valuecore.recommend`` over the cached workspace, every
rule the settings allow) is also the model Compare, Capacity & guarantees and
Monitor open on when the user has not chosen one (:func:`recommended_model`).

Also the Value page's overfitting note (:func:`simpler_rule_notes`), which
weighs a richer rule against the one-threshold rule the same way.

Pages lay out widgets; this module fits each selected model's policy, asks
``valuecore.verdict`` which one to deploy and how sure the items let us be,
and turns that into texts formatted by ``valuecore.wording``. Nothing here draws.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import valuecore as vc

from . import views
from .safetext import md_text
from .data import Workspace, policy_key, values_key

PERIODS = ("month", "week", "day", "year")
@dataclass(frozen=True)
class Tile:
    """One metric tile: a short label, its value as text, a tooltip, and a change to show under it (if any)."""

    label: str
    value: str
    help: str = ""
    delta: str | None = None
    delta_color: str = "normal"


@st.cache_resource(show_spinner="Weighing the models…", max_entries=128)
def _verdict(key: tuple, _runs, _values) -> vc.Verdict:
    return vc.verdict(_runs, _values)


@st.cache_resource(show_spinner="Weighing every model and rule…", max_entries=64)
def _recommendation(key: tuple, _ws, _models, _kinds, _values) -> vc.Recommendation:
    return vc.recommend(_ws, _values, _models, kinds=_kinds)


@st.cache_resource(show_spinner="Choosing each model's rule…", max_entries=64)
def _recommended_rules(key: tuple, _ws, _models, _kinds, _values, _recommendation) -> dict:
    return vc.recommended_rules(_ws, _values, _models, kinds=_kinds, recommendation=_recommendation)


def _weighed(ws: Workspace, models, values) -> tuple:
    kinds, _ = views.rule_options(ws, models, values)
    models = tuple(m for m in models if m in ws.report.models)
    key = (tuple((m, ws.run(m).sha256) for m in models), tuple(kinds), values_key(values), ws.tune_split,
           ws.eval_split, ws.calibration)
    return key, models, tuple(kinds)


@st.cache_resource(show_spinner=False, max_entries=64)
def _page(key: tuple, _make):
    return _make()


def page_key(ws: Workspace, models, values) -> tuple:
    """What the first page's numbers and words depend on besides the rule and currency shown: each selected
    model's run (content, class order, loader), the rules weighed, the values, the splits, the recalibration."""
    kinds, _ = views.rule_options(ws, models, values)
    return (tuple((m, ws.run_key(m)) for m in models if m in ws.report.models), tuple(kinds), values_key(values),
            ws.tune_split, ws.eval_split, ws.calibration)


def cached_page(key: tuple, make):
    """``make()`` once per ``key`` (from :func:`page_key`) across reruns and sessions: a rerun that changes no
    value, a visit back to the page and a colleague on the same values reuse the first page's view model."""
    return _page(key, make)


def page_recommendation(ws: Workspace, models, values) -> vc.Recommendation:
    """The one (model, rule) to deploy among ``models``, weighing every rule the pages offer for them."""
    key, models, kinds = _weighed(ws, models, values)
    return _recommendation(key, ws, models, kinds, values)


def recommended_rules(ws: Workspace, models, values) -> dict:
    """What the rule "recommended" means for each of ``models``: the first page's recommendation's rule for its
    model, for every other one the rule it would get alone (``valuecore.recommended_rules``)."""
    key, models, kinds = _weighed(ws, models, values)
    return _recommended_rules(key, ws, models, kinds, values, _recommendation(key, ws, models, kinds, values))


def recommended_model(selection, among=None) -> str | None:
    """The recommended model of the selection, for pages opening on it by default: for "not yet", the most
    promising one; None when there is none.

    ``among`` restricts the answer to the models a page offers (None when the recommended one is not there).
    """
    from .data import workspace

    if not selection.models:
        return None
    r = page_recommendation(workspace(selection), selection.models, selection.values)
    model = r.alternative.model if r.choice == "not_yet" else r.model
    return model if among is None or model in among else None


def recommended_pair(selection, among) -> tuple[str, str] | None:
    """The recommended model and its closest rival among ``among`` (the Compare page's default), or None."""
    from .data import workspace

    if not selection.models:
        return None
    r = page_recommendation(workspace(selection), selection.models, selection.values)
    # "Not yet": the pages open on the most promising model, the one more labelled items would settle.
    model = r.alternative.model if r.choice == "not_yet" else r.model
    if model is None or model not in among:
        return None
    preferred = [] if r.alternative is None or r.choice == "not_yet" else [r.alternative.model]
    rival = next((m for m in [*preferred, *(c.model for c in r.candidates), *among]
                  if m != model and m in among), None)
    return None if rival is None else (model, rival)


def recommendation_tiles(r: vc.Recommendation, currency: str, volume: float, period: str,
                         confidences=None) -> list[Tile]:
    """The six tiles under the headline, for the recommendation (or for handing every item over).

    ``confidences``: the model's confidences on the data shown (``views.shown_confidences``); the threshold
    tile then has the digits that tell its decision apart on them, and its help the exact threshold.
    """
    if r.choice == "no_candidates":
        return []
    if r.model is None:
        rule, automated, per_item = "Hand over", vc.wording.percent(0.0), r.baseline_per_item
        rule_help = "No model: every item goes to a person."
    else:
        if r.kind in views.GLOBAL_THRESHOLD_KINDS:
            threshold = r.threshold
            rule = ("Hand over" if threshold is None else "Act on all" if threshold <= 0
                    else views.threshold_on_data(threshold, confidences))
        else:
            threshold = None
            rule = _SHORT_RULES.get(r.kind, r.kind)
        automated, per_item = vc.wording.percent(r.coverage), r.per_item
        rule_help = f"{md_text(r.model)}: {vc.wording.rule_phrase(r.policy, confidences)}."
        if threshold is not None and threshold > 0:
            rule_help += " " + views.threshold_help(threshold)
    return _tiles(rule, rule_help, automated, per_item, r.baseline_per_item, currency, volume, period)


def values_frame(matrix: vc.ValueMatrix, currency: str) -> pd.DataFrame:
    """The value matrix in force as text: one row per true class, a column per action (predicted class, hand-off)."""
    money = vc.wording.money
    columns = [f"predicted {c}" for c in matrix.classes] + ["handed over"]
    rows = [[money(float(v), currency) for v in row] for row in np.asarray(matrix.values, dtype=float)]
    frame = pd.DataFrame(rows, columns=columns)
    frame.insert(0, "True class", [str(c) for c in matrix.classes])
    return frame


def candidates_frame(r: vc.Recommendation, currency: str) -> pd.DataFrame:
    """Every (model, rule) judged, best first, as text, then the no-model row (the HTML report's rows)."""
    rows = vc.wording.standings_rows(r, currency)
    # built by columns: a frame of row dicts took milliseconds on each rerun
    return pd.DataFrame({name: [row[i] for row in rows] for i, name in enumerate(vc.wording.standings_columns(r))})


def page_verdict(ws: Workspace, models, kind: str, values) -> tuple[vc.Verdict, list[str]]:
    """Fit ``kind`` per model on its tuning split and judge the models on the evaluated split.

    Returns the verdict and a plain note per model left out (no split, a rule it cannot use).
    """
    runs, notes, key = {}, [], []
    for model in models:
        predictions = ws.predictions(model, ws.eval_split)
        if predictions is None:
            notes.append(f"{model} has no '{ws.eval_split}' split, so it is left out.")
            continue
        try:
            policy = views.fit(ws, model, kind, values)
        except ValueError as error:
            notes.append(f"{model} is left out: {error}.")
            continue
        runs[model] = (policy, predictions)
        key.append((model, ws.run_key(model), policy_key(policy)))
    verdict = _verdict((tuple(key), ws.eval_split, values_key(values)), runs, values)
    return verdict, notes


# Tile values are set in a large font: a few words at most, or the tile cuts them at 1280 px.
_SHORT_RULES = {
    "accept_all": "Act on all",
    "class_thresholds": "Per class",
    "calibrated_class_thresholds": "Per class",
    "expected_value": "Expected value",
}


def _tiles(rule: str, rule_help: str, automated: str, per_item: float, baseline: float, currency: str,
           volume: float, period: str) -> list[Tile]:
    money = vc.wording.money
    if rule[0].isdigit():
        exact = rule_help.partition("Exact threshold:")[2]
        rule_help = ("Items the model is at least this confident about are automated; the rest go to a person. "
                     + (f"Written with the digits that decide the items shown as the exact threshold does; the exact "
                        f"threshold, as in the exported policy:{exact}" if exact else
                        "Written to the last digit of the exact threshold, so that a copy of it decides every item "
                        "as the exported policy does."))
    gain = per_item - baseline
    return [
        Tile("Act when confidence ≥" if rule[0].isdigit() else "Rule", rule, rule_help),
        Tile("Automated", automated, "Share of items acted on without a person (coverage)."),
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
CHARACTERS_IN_A_QUARTER = 8  # what a metric tile holds in a quarter of the page at 1280 px


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


def best_tile(verdict: vc.Verdict, best: str) -> Tile:
    """The Value page's "best model" tile, honest about ties and degenerate values."""
    if verdict.degenerate in ("pointless", "all_useless"):
        return Tile("Best model", "none", "No model earns more than handing every item to a person.")
    if verdict.contenders:
        return Tile("Highest on these items", md_text(best),
                    f"Cannot be told apart from {md_text(', '.join(verdict.contenders))} on these items: see the "
                    "landing page.")
    return Tile("Best model", md_text(best), "Ahead of every other model beyond noise on these items.")


RICHER_KINDS = ("class_thresholds", "calibrated_class_thresholds", "expected_value")


def simpler_rule_notes(ws: Workspace, models, kind: str, values, currency: str) -> list[str]:
    """Per model, when ``kind`` is a richer rule than one tuned threshold and does not earn its keep, say so.

    The richer rule and the one-threshold rule are both tuned on the tuning
    split and compared item by item on the evaluated split.
    """
    if kind not in RICHER_KINDS:
        return []
    notes = []
    for model in models:
        predictions = ws.predictions(model, ws.eval_split)
        if predictions is None or not predictions.has_labels:
            continue
        try:
            rich = views.fit(ws, model, kind, values)
            simple = ws.policy(model, "threshold", values)
            comparison = vc.simpler_rule(rich, simple, predictions, values)
        except ValueError:
            continue  # the page already says why this rule cannot apply
        labels = {k: v.lower() for k, v in views.POLICY_LABELS.items()}
        notes += [f"{model}: {sentence}" for sentence in vc.wording.simpler_rule_sentences(comparison, currency,
                                                                                            labels)]
    return notes


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
