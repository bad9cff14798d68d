"""The "Compare two models" page as data: :func:`build` returns a :class:`ComparePage`.

Two models judged on the same items of the evaluated split, compared item by
item (seed 004): the mean difference (a fact on this data), the 95% interval of
the difference on new data and the one p-value that matches it (below 0.05
exactly when the interval excludes 0), the charts' frames, and how stable each
model's tuned threshold is under bootstrap resamples of its tuning split. No
Streamlit here: the page lays out what :func:`build` returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import valuecore as vc

from ..datasets import aggregated_models, per_item_note
from ..safetext import md_text
from . import POLICY_LABELS, shown_confidences, split_notes, threshold_text

# The threshold stability resamples at most this many times (it re-tunes a threshold per resample).
STABILITY_RESAMPLES = 2000

# A share: the header says of what (the resamples whose tuned rule hands every item over).
ALWAYS_HAND_OFF = "Resamples handing off all"
# The stability table's columns shown by default; the rest ("Tuned on", the resampled median) are in its "All
# columns" details. All seven were 640 px wide, past the 466 px a page has at 800 px with the sidebar open.
STABILITY_SHOWN = ("Model", "Tuned threshold", vc.wording.INTERVAL_HEADER, "Spread")


def stability_columns(table: pd.DataFrame) -> tuple[str, ...]:
    """The stability table's columns shown: the share of resamples handing off everything too when a model has
    any (a dash in the interval then needs it to be read)."""
    handing_off = ALWAYS_HAND_OFF in table.columns and bool((table[ALWAYS_HAND_OFF] > 0).any())
    return STABILITY_SHOWN + ((ALWAYS_HAND_OFF,) if handing_off else ())


@dataclass(frozen=True)
class Notice:
    """A message the page shows with ``st.<severity>`` ("info", "warning", "error", "caption")."""

    severity: str
    text: str


@dataclass(frozen=True)
class Tile:
    label: str
    value: str
    help: str | None = None
    caption: str | None = None  # shown under the figure: how to read it


@dataclass(frozen=True)
class Stability:
    """How stable each model's tuned threshold is: the chart's frames, the table, and why a model is missing."""

    counts: pd.DataFrame  # stability_counts: model, threshold, resamples
    tuned: pd.DataFrame  # model, threshold (the threshold tuned on the whole tuning split)
    table: pd.DataFrame  # one row per model, text columns and the share of "always hand off"
    notices: tuple = ()


@dataclass(frozen=True)
class ComparePage:
    """Everything the page shows for one pair of models.

    ``stop`` is set when no comparison can be made: the page shows those notices and stops.
    """

    model_a: str
    model_b: str
    stop: tuple = ()
    notes: tuple = ()  # notices shown above the result (split caveats)
    heading: str = ""
    tiles: tuple = ()
    sentences: tuple = ()  # (on this data, on new data), markdown-safe
    caption: str = ""
    intervals: pd.DataFrame = field(default_factory=pd.DataFrame)  # model, mean, low, high
    differences: pd.DataFrame = field(default_factory=pd.DataFrame)  # difference_counts
    stability: Stability | None = None
    comparison: object = None  # vc.uncertainty.PairedComparison, for tests and the curious


def difference_counts(difference, weight=None) -> pd.DataFrame:
    """Per-item differences A − B grouped by value: the frame of ``valuecore.chartspecs.difference_spec``.

    Parameters
    ----------
    difference : array-like of shape (n,)
        Value of A minus value of B on each (paired) item.
    weight : array-like of shape (n,), optional
        Item weights (ones by default).

    Returns
    -------
    DataFrame
        Columns ``chartspecs.DIFFERENCE_COLUMNS``, one row per distinct difference
        (rounded to 12 significant decimals), increasing.
    """
    difference = np.round(np.asarray(difference, dtype=np.float64), 12)
    weight = np.ones_like(difference) if weight is None else np.asarray(weight, dtype=np.float64)
    frame = pd.DataFrame({"difference": difference, "items": weight})
    return frame.groupby("difference", as_index=False)["items"].sum().loc[:, list(vc.chartspecs.DIFFERENCE_COLUMNS)]


def stability_counts(thresholds: dict) -> pd.DataFrame:
    """Bootstrap thresholds per model counted by value: the frame of ``valuecore.chartspecs.stability_spec``.

    Parameters
    ----------
    thresholds : dict of model name -> array-like of re-tuned thresholds
        NaN means "always hand off" and is left out.

    Returns
    -------
    DataFrame
        Columns ``chartspecs.STABILITY_COLUMNS``.
    """
    parts = []
    for model, values in thresholds.items():
        values = np.asarray(values, dtype=np.float64)
        values = values[~np.isnan(values)]
        unique, counts = np.unique(values, return_counts=True)
        parts.append(pd.DataFrame({"model": model, "threshold": unique, "resamples": counts}))
    if not parts:
        return pd.DataFrame(columns=list(vc.chartspecs.STABILITY_COLUMNS))
    return pd.concat(parts, ignore_index=True).loc[:, list(vc.chartspecs.STABILITY_COLUMNS)]


def needs_two_models(selected, loaded) -> str | None:
    """Why nothing can be compared yet (fewer than two selected models), or None."""
    if len(selected) >= 2:
        return None
    return "Comparing needs two models. " + (
        f"Select at least two of the {len(loaded)} loaded models in the sidebar."
        if len(loaded) >= 2
        else "Load run files of at least two models (e.g. a sample in the sidebar's Data source)."
    )


def _stopped(model_a: str, model_b: str, *notices: Notice) -> ComparePage:
    return ComparePage(model_a, model_b, stop=tuple(notices))


def item_differences(policy_a, run_a, policy_b, run_b, values) -> tuple[np.ndarray, np.ndarray]:
    """Per-item value of A minus B, items matched as paired_comparison matches them (by id, else by row)."""
    value_a = vc.item_values(policy_a, run_a, values)
    value_b = vc.item_values(policy_b, run_b, values)
    if run_a.ids is not None and run_b.ids is not None:
        value_b = value_b[pd.Index(run_b.ids).get_indexer(pd.Index(run_a.ids))]
    return value_a - value_b, run_a.sample_weight


def _checked_runs(selection, ws, model_a: str, model_b: str):
    """(run_a, run_b) on the evaluated split, or the notices that stop the page."""
    if model_a == model_b:
        return Notice("info", "Pick two different models."),
    if aggregated := aggregated_models(selection.report, [model_a, model_b]):
        return Notice("info", md_text(per_item_note(aggregated, "a comparison paired item by item"))
                      + " Compare their values and 95% intervals on the Value page instead: those are exact on "
                      "aggregates."),
    split = selection.eval_split
    run_a, run_b = ws.predictions(model_a, split), ws.predictions(model_b, split)
    missing = [m for m, r in ((model_a, run_a), (model_b, run_b)) if r is None]
    if split is None or missing:
        return Notice("warning", f"{md_text(' and '.join(missing) or 'The models')} have no split "
                      f"{md_text(repr(split))} to evaluate on. Choose a split both have under **Evaluate on** in "
                      "the sidebar."),
    unlabelled = [m for m, r in ((model_a, run_a), (model_b, run_b)) if not r.has_labels]
    if unlabelled:
        return Notice("warning", f"The split {md_text(repr(split))} has no labels for "
                      f"{md_text(', '.join(unlabelled))}: a comparison of realised value needs the true class of "
                      "every item. Choose a labelled split under **Evaluate on** in the sidebar."),
    return run_a, run_b


def build(selection, ws, *, model_a: str, model_b: str, kind: str, n_resamples: int, seed: int) -> ComparePage:
    """The paired comparison of ``model_a`` and ``model_b`` under the rule ``kind``, and their thresholds' stability.

    ``ws`` is the selection's :class:`~dashboard.data.Workspace`; every figure comes from valuecore.
    """
    runs = _checked_runs(selection, ws, model_a, model_b)
    if isinstance(runs[0], Notice):
        return _stopped(model_a, model_b, *runs)
    run_a, run_b = runs
    values, split, currency = selection.values, selection.eval_split, selection.currency
    rule = POLICY_LABELS.get(kind, kind)
    notes = tuple(Notice(severity, message) for severity, message in split_notes(ws, [model_a, model_b], kind))
    try:
        policy_a, policy_b = ws.policy(model_a, kind, values), ws.policy(model_b, kind, values)
        difference, weight = item_differences(policy_a, run_a, policy_b, run_b, values)
    except ValueError as error:  # e.g. the expected-value rule on a top-label-only run
        return _stopped(model_a, model_b, *notes, Notice("error", f"The rule '{rule}' cannot be used here: "
                                                                  f"{md_text(error)}. Choose another policy."))
    try:
        comparison = vc.uncertainty.paired_comparison(policy_a, run_a, policy_b, run_b, values,
                                                      names=(model_a, model_b))
        # The pipeline's interval: the very one the Value page shows and the export writes.
        intervals = {m: ws.interval(m, p, values) for m, p in ((model_a, policy_a), (model_b, policy_b))}
    except ValueError as error:
        return _stopped(
            model_a, model_b, *notes,
            Notice("error", f"**{md_text(model_a)}** and **{md_text(model_b)}** cannot be compared item by item on "
                            f"{md_text(repr(split))}: {md_text(error)}"),
            Notice("caption", "A paired comparison needs both runs on the same items: the same ids (or, without "
                              "ids, the same number of rows in the same order) with the same true labels."),
        )
    words = vc.wording  # the sentences the CLI and the HTML report use for the same comparison
    names = f"{md_text(model_a)} − {md_text(model_b)}"
    tiles = (
        Tile("A − B, per item (this data)", words.amount(comparison.mean_difference, currency),
             f"{names}: the mean of the per-item differences on these items."),
        Tile("95% interval (new data)",
             f"{words.amount(comparison.low, currency)} to {words.amount(comparison.high, currency)}",
             "Where the mean difference on new items from the same distribution is likely to fall. It allows for a "
             "large difference (one model's costly error) that is rare or was not seen on these items."),
        Tile("Paired test", words.p_value(comparison.p_value),
             "The p-value of that interval: below 0.05 exactly when the 95% interval excludes 0. Under a true "
             "\"no difference\" it falls below 0.05 at most 5% of the time in every regime measured, rare costly "
             "errors included (the paired t-test and bootstrap this page used to show did so up to 86% of the "
             "time). The verdict rests on it.",
             caption=paired_reading(comparison)),
    )
    on_data, on_new_data = words.paired_sentences(comparison, (model_a, model_b), currency)
    caption = (
        f"The first sentence is a fact about these items of the split {md_text(repr(split))}: no test needed. The "
        "second is an estimate. The interval treats the policies as fixed and the items as a random sample; it does "
        "not include the noise of tuning the thresholds (see threshold stability below). Values per item in "
        f"{md_text(currency)}, hand-offs included."
    )
    interval_frame = pd.DataFrame(
        [{"model": m, "mean": iv.mean, "low": iv.low, "high": iv.high} for m, iv in intervals.items()
         if iv is not None], columns=["model", "mean", "low", "high"])
    return ComparePage(
        model_a, model_b,
        notes=notes,
        heading=f"The difference in value: {names}",
        tiles=tiles,
        sentences=(md_text(on_data), md_text(on_new_data)),
        caption=caption,
        intervals=interval_frame,
        differences=difference_counts(difference, weight),
        stability=threshold_stability(ws, (model_a, model_b), values, n_resamples=n_resamples, seed=seed),
        comparison=comparison,
    )


def paired_reading(comparison) -> str:
    """How to read the paired test's p-value, in a few words: below the level means the interval excludes 0."""
    level = vc.wording.level(1 - comparison.confidence)
    if comparison.p_value != comparison.p_value:  # NaN: too few items
        return "Too few items to test."
    if comparison.p_value < 1 - comparison.confidence:
        return f"Below {level}: the interval excludes 0, a real difference."
    return f"Not below {level}: the interval includes 0, no difference shown."


def _stability(ws, model: str, tune_split: str, tune_run, values, seed: int, n_resamples: int):
    """``vc.uncertainty.threshold_stability`` of a model's tuning split, kept by the workspace's cache.

    It depends on the run (file content), the tuning split and its calibration, the values, the seed and the
    number of resamples, and on nothing else the page sets: a new rule or another model B does not draw model
    A's resamples again. The cache keys on exactly these.
    """
    def compute():
        return vc.uncertainty.threshold_stability(tune_run, values, rng=np.random.default_rng(seed),
                                                  n_resamples=n_resamples)

    if ws.cache is None:
        return compute()
    return ws.cache.stage(ws, "threshold_stability", model, tune_split,
                          (ws.calibration_key(model), values, seed, n_resamples), compute)


def threshold_stability(ws, models, values, *, n_resamples: int, seed: int) -> Stability:
    """The one-threshold policy re-tuned on bootstrap resamples of each model's tuning split."""
    rows, thresholds, tuned, notices = [], {}, [], []
    for model in models:
        tune_split = ws.tuning_split_for(model)
        tune_run = ws.sorted(model, tune_split)
        if tune_run is None or not tune_run.predictions.has_labels:
            notices.append(Notice("info", f"**{md_text(model)}** has no labelled tuning split, so its threshold "
                                          "stability cannot be measured."))
            continue
        try:
            stability = _stability(ws, model, tune_split, tune_run, values, seed, min(n_resamples, STABILITY_RESAMPLES))
        except ValueError as error:
            notices.append(Notice("warning", f"**{md_text(model)}**: {md_text(error)}"))
            continue
        thresholds[model] = stability.thresholds

        def threshold(t, confidences=shown_confidences(ws, model)):  # as every page writes this model's
            return threshold_text(t, confidences)

        tuned.append({"model": model, "threshold": stability.tuned_threshold})
        rows.append({
            "Model": model,
            "Tuned on": tune_split,
            "Tuned threshold": threshold(stability.tuned_threshold),
            "Resampled median": threshold(stability.median),
            # one column, as the other pages write an interval: two drew the table wider than the page at 1280 px
            vc.wording.INTERVAL_HEADER: f"{threshold(stability.low)} to {threshold(stability.high)}",
            "Spread": vc.wording.significant(stability.spread),
            ALWAYS_HAND_OFF: stability.share_always_abstain,
        })
    return Stability(
        counts=stability_counts(thresholds),
        tuned=pd.DataFrame(tuned, columns=["model", "threshold"]).astype({"threshold": float}),
        table=pd.DataFrame(rows),
        notices=tuple(notices),
    )
