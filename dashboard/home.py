"""The recommendation the pages share: the one model and rule to deploy, the models a page opens on, the
verdict and tiles of the Value page.

The recommendation (``Pipeline.recommendation`` over the cached workspace, every rule the pages offer) is the
first page's headline (``dashboard.views.home`` builds that page), the meaning of the rule "recommended", and
the model Compare, Capacity & guarantees and Monitor open on when the user has not chosen one
(:func:`recommended_model`). Also the Value page's overfitting note (:func:`simpler_rule_notes`), which
weighs a richer rule against the one-threshold rule the same way.

Nothing here draws; numbers come from ``valuecore``, words from ``valuecore.wording``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

import valuecore as vc

from . import segmentfiles, views
from .data import Workspace, policy_key, values_key
from .rules import rule_options
from .safetext import md_text

@dataclass(frozen=True)
class Tile:
    """One metric tile: a short label, its value as text, a tooltip, and a change to show under it (if any)."""

    label: str
    value: str
    help: str = ""
    delta: str | None = None
    delta_color: str = "normal"


@st.cache_resource(show_spinner="Weighing the models…", max_entries=128)
def _verdict(key: tuple, _runs, _values) -> vc.recommendation.Verdict:
    return vc.verdict(_runs, _values)


@st.cache_resource(show_spinner=False, max_entries=64)
def _page(key: tuple, _make):
    return _make()


def page_key(ws: Workspace, models, values) -> tuple:
    """What the first page's numbers and words depend on besides the rule and currency shown: each selected
    model's run (content, class order, loader), the rules weighed, the values, the splits, the recalibration."""
    kinds, _ = rule_options(ws, models, values)
    return (tuple((m, ws.run_key(m)) for m in models if m in ws.report.models), tuple(kinds), values_key(values),
            ws.tune_split, ws.eval_split, ws.calibration)


def cached_page(key: tuple, make):
    """``make()`` once per ``key`` (from :func:`page_key`) across reruns and sessions: a rerun that changes no
    value, a visit back to the page and a colleague on the same values reuse the first page's view model."""
    return _page(key, make)


@dataclass(frozen=True, eq=False)
class SegmentChoice:
    """The segment column the visitor set (on the Segments page), its caps, and each model's labels per split.

    ``key`` names them for the caches: the column, the caps, and the content of the files the labels came from.
    """

    column: str
    caps: vc.constraints.SegmentCaps
    labels: dict
    key: tuple


def segment_choice(selection, files) -> SegmentChoice | None:
    """The segment setting in force, or None: no column set, or the run files (``segmentfiles.source_files``)
    hold none of it. Without one, the recommendation is the pipeline's, as before."""
    settings = selection.settings
    column = settings.segment_column
    if column is None or not files or column not in segmentfiles.candidate_columns(files):
        return None
    labels, _ = segmentfiles.segment_labels(files, column)
    if not labels:
        return None
    caps = vc.constraints.SegmentCaps(handoff_gap=settings.segment_cap_handoff, error_gap=settings.segment_cap_error,
                                      value_gap=settings.segment_cap_value)
    return SegmentChoice(column, caps, labels, (column, tuple(sorted(caps.as_dict().items())),
                                                 segmentfiles.files_key(files)))


@st.cache_resource(show_spinner="Fitting thresholds per segment…", max_entries=32)
def _segment_recommendation(key: tuple, _ws, _models, _kinds, _values, _segments):
    rules, skipped = vc.recommendation.segment_rules(_ws, _values, column=_segments.column, caps=_segments.caps,
                                                     labels=_segments.labels, models=_models)
    r = vc.recommend(_ws, _values, _models, kinds=_kinds, segment_rules=rules)
    return replace(r, skipped=(*r.skipped, *skipped)), rules


def page_recommendation(ws: Workspace, models, values, segments: SegmentChoice | None = None, *,
                        only_segments: bool = False) -> vc.recommendation.Recommendation:
    """The one (model, rule) to deploy among ``models``, weighing every rule the pages offer for them (the
    pipeline's recommendation, kept by its cache: the one the rule "recommended" reads). With ``segments``
    (:func:`segment_choice`), each model's thresholds per segment are weighed too, as ``report --segment``
    weighs them (kept per runs, rules, values, splits, column, caps and label files); with ``only_segments``
    too, they alone, as ``report --segment COLUMN --policy segment_thresholds`` weighs them."""
    if segments is None:
        kinds, _ = rule_options(ws, models, values)
        return ws.recommendation(values, tuple(m for m in models if m in ws.report.models), tuple(kinds))
    return segment_recommendation(ws, models, values, segments, only_segments=only_segments)[0]


def segment_recommendation(ws: Workspace, models, values, segments: SegmentChoice, *,
                           only_segments: bool = False) -> tuple[vc.recommendation.Recommendation, dict]:
    """(:func:`page_recommendation` with ``segments``, each model's :class:`~valuecore.recommendation.SegmentRule`):
    the rules' entries are the policy JSON's of ``report --segment COLUMN --policy segment_thresholds``."""
    kinds, _ = rule_options(ws, models, values)
    weighed = (vc.recommendation.SEGMENT_RULE,) if only_segments else tuple(kinds)
    chosen = tuple(m for m in models if m in ws.report.models)
    return _segment_recommendation(page_key(ws, models, values) + segments.key + (weighed,), ws, chosen, weighed,
                                   values, segments)


def raw_confidence_note(selection, segments: SegmentChoice | None) -> str:
    """The sentence that says thresholds per segment ignore the sidebar's recalibration ("" when none is set,
    or no segment column is): they compare the confidences as the run files give them."""
    if segments is None or selection.calibration == "none":
        return ""
    return (f"Thresholds per segment are fitted on the confidences as given, without the {selection.calibration} "
            "recalibration set in the sidebar.")


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


def page_verdict(ws: Workspace, models, kind: str, values) -> tuple[vc.recommendation.Verdict, list[str]]:
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


def best_tile(verdict: vc.recommendation.Verdict, best: str) -> Tile:
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
            comparison = vc.recommendation.simpler_rule(rich, simple, predictions, values)
        except ValueError:
            continue  # the page already says why this rule cannot apply
        labels = {k: v.lower() for k, v in views.POLICY_LABELS.items()}
        notes += [f"{model}: {sentence}" for sentence in vc.wording.simpler_rule_sentences(comparison, currency,
                                                                                            labels)]
    return notes
