"""Thresholds per segment as candidates of the one recommendation: each model's fit, bound to its evaluated split.

:func:`segment_rules` fits a threshold per segment (with the caps, if any) on each model's tuning split, as
``report --segment COLUMN`` does (:func:`~valuecore._pipeline.segments.segment_document`, one model at a
time), and binds it to the segment labels of the evaluated split the pipeline judges every rule on; the
result goes to ``recommend(..., segment_rules=...)``. The entry each rule carries is the one the policy JSON
holds when the recommendation names it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Mapping

import numpy as np

from .._decide.segment_rule import SegmentRule
from .._decide.segments import SegmentCaps
from .segments import segment_document

__all__ = ["segment_rules"]


def segment_rules(pipeline, values, *, column: str, caps: SegmentCaps | None = None, labels: Mapping | None = None,
                  models: Iterable[str] | None = None, rule: str = "threshold",
                  segment_values: Mapping | None = None) -> tuple[dict, list[str]]:
    """Each model's thresholds per segment, fitted on its tuning split and bound to its evaluated split.

    Parameters
    ----------
    pipeline : Pipeline
        Its tuning and evaluated splits are those of the recommendation (thresholds per segment compare the
        confidences as given: no recalibration).
    values : UseCase or ValueMatrix
        The values of every segment without its own in ``segment_values``.
    column : str
        The segment column's name (recorded in the policy JSON).
    caps : SegmentCaps, optional
    labels : mapping model -> mapping split -> array of shape (n,), optional
        Each model's segment labels per split; default: the runs' own (``ModelRun.segments``, a run loaded
        with ``segment_column``).
    models : iterable of str, optional
        Default: every run of the pipeline.
    rule : {"threshold", "class_thresholds"}
        What each segment sets: one confidence threshold, or one per predicted class.
    segment_values : mapping segment -> UseCase or ValueMatrix, optional
        Values of single segments (``segment_document``). The recommendation prices every rule with one set of
        values: a caller that gives segments their own should not weigh these rules beside the others.

    Returns
    -------
    (dict of model -> SegmentRule, list of str)
        The rules, and for each model that gets none, why (in words, naming the model).
    """
    rules, skipped = {}, []
    for model in (pipeline.runs if models is None else models):
        plan = pipeline.plan(model)
        if plan.skip is not None:
            continue  # the recommendation says why
        run = pipeline.run(model)
        found = run.segments if labels is None else (labels.get(model) or {})
        lacking = [s for s in dict.fromkeys((plan.tune_split, plan.eval_split)) if s not in found]
        if lacking:
            skipped.append(f"{model}, thresholds per segment: its split {' and '.join(map(repr, lacking))} has "
                           f"no segment column {column!r}")
            continue
        try:
            document, notes, fits = segment_document(
                {model: replace(run, segments=dict(found))}, values, segment_column=column, caps=caps,
                segment_values=segment_values, tune_split=pipeline.tune_split, eval_split=pipeline.eval_split,
                rule=rule)
        except ValueError as error:
            skipped.append(f"{model}, thresholds per segment: {error}")
            continue
        entry, fit = document.entries[0], fits[model]
        if entry.evaluation["split"] != plan.eval_split or entry.tuned_on["split"] != plan.tune_split:
            skipped.append(f"{model}, thresholds per segment: they would be tuned on {entry.tuned_on['split']!r} "
                           f"and evaluated on {entry.evaluation['split']!r}, not on the splits of the other rules")
            continue
        if not fit.feasible:
            skipped.append(f"{model}, thresholds per segment: no thresholds hold the caps on the tuning split")
            continue
        rules[model] = SegmentRule(fit.policy, plan.eval_split, np.asarray(found[plan.eval_split]), fit, entry)
    return rules, skipped
