"""Thresholds per segment in the pipeline: the policy document built from runs that carry a segment column,
and such a document applied as stored (``apply``). The fitting itself is ``valuecore._decide.segments``."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .._decide.segments import SegmentCaps, SegmentEvaluation, evaluate_segments, fit_segments
from .._engine.evaluate import evaluate_confusion
from .._engine.policy import Policy
from .._engine.segment_policy import SegmentPolicy, segment_labels
from .._model.predictions import Predictions
from .._model.values import Values
from .policy_json import PolicyDocument, PolicyEntry, _count, _jsonable, align_values, choose_splits, tuning_note

__all__ = ["CLASS_SEGMENT_NOTE", "SEGMENT_NOTE", "apply_segment_entry", "segment_document", "segment_evaluation"]

# The rule of a per-segment entry's own policy: items of a segment without a threshold are handed off.
UNSEEN_RULE = Policy("threshold", threshold=None)
SEGMENT_NOTE = ("thresholds per segment: an item acts on its predicted class iff its confidence reaches the threshold "
                "of its segment; items of a segment without a threshold are handed off")
CLASS_SEGMENT_NOTE = ("per-class thresholds per segment: an item acts on its predicted class iff its confidence "
                      "reaches the threshold of its segment for that class; items of a segment without thresholds are "
                      "handed off")


def _values_for(names, given: Mapping, default: Values, classes) -> dict:
    """Each segment's values aligned to ``classes``: its own, else ``default`` (an unseen segment's)."""
    return {s: align_values(given.get(s, default), classes) for s in names}


def segment_evaluation(policy: SegmentPolicy, split: str, predictions: Predictions, segments, values: Mapping,
                       default: Values) -> tuple[dict, object, SegmentEvaluation]:
    """(the ``evaluation`` record of the policy JSON, the confusion-matrix result, the per-segment evaluation) of
    a segment policy on one labelled split. ``values``: each known segment's values; ``default`` for the others.

    The record's value figures are the sums over the segments, each at its own values; its confusion matrix
    counts every item (the result's value fields hold the document's values and are not used when the segments'
    values differ)."""
    _, names = segment_labels(segments, predictions.n, name=policy.column or "segment")
    per_segment = _values_for(names, values, default, predictions.classes)
    evaluation = evaluate_segments(policy, predictions, segments, per_segment)
    actions = policy.decide(predictions, segments)
    n_classes = predictions.n_classes
    cells = predictions.y_true * (n_classes + 1) + actions
    confusion = np.bincount(cells, weights=predictions.sample_weight,
                            minlength=n_classes * (n_classes + 1)).reshape(n_classes, n_classes + 1)
    default_matrix = align_values(default, predictions.classes).for_classes(predictions.classes)
    result = evaluate_confusion(confusion, predictions, default_matrix)
    same_values = all(np.array_equal(v.for_classes(predictions.classes).values, default_matrix.values)
                      for v in per_segment.values())
    record = {
        "split": split, **result.to_dict(), "estimated": False,
        "value_total": evaluation.value_total, "value_per_item": evaluation.value_per_item,
        "value_dimensionless": result.value_dimensionless if same_values else None,
        "n": predictions.total_weight, "ci95": None,
    }
    for key in ("n", "n_correct", "n_wrong", "n_abstain"):
        record[key] = _count(record[key])
    record["segments"] = evaluation.to_dict()["segments"]
    return _jsonable(record), result, evaluation


def segment_document(models: Mapping, values: Values, *, segment_column: str, caps: SegmentCaps | None = None,
                     segment_values: Mapping | None = None, tune_split: str | None = None,
                     eval_split: str | None = None, rule: str = "threshold") -> tuple[PolicyDocument, list[str], dict]:
    """The policy document (schema version 3) of a threshold per segment (or per-class thresholds per segment)
    for each model.

    Parameters
    ----------
    models : mapping of name -> ModelRun
        Loaded with ``segment_column`` (``ModelRun.segments``), labelled on the tuning and evaluated splits.
    values : UseCase or ValueMatrix
        The values of every segment without its own in ``segment_values``.
    segment_column : str
    caps : SegmentCaps, optional
    segment_values : mapping segment -> values, optional
    tune_split, eval_split : str, optional
        As in ``choose_splits``.
    rule : {"threshold", "class_thresholds"}
        What each segment sets (``fit_segments``).

    Returns
    -------
    (PolicyDocument, notes, fits)
        ``fits``: each model's :class:`~valuecore.constraints.SegmentFit` on its tuning split.
    """
    entries, notes, fits = [], [], {}
    given = dict(segment_values or {})
    for name, run in models.items():
        choice = choose_splits(run, tune_split, eval_split)
        tune = run.splits[choice.tuning_split]
        tune_labels = run.segments[choice.tuning_split]
        _, names = segment_labels(tune_labels, tune.n, name=segment_column)
        fit = fit_segments(tune, tune_labels, _values_for(names, given, values, run.classes), caps=caps,
                           column=segment_column, rule=rule)
        fits[name] = fit
        note = tuning_note(name, choice, "the thresholds")
        if note:
            notes.append(note)
        evaluated = run.splits[choice.evaluate]
        record, _, _ = segment_evaluation(fit.policy, choice.evaluate, evaluated, run.segments[choice.evaluate],
                                          fit.values, values)
        entries.append(PolicyEntry(
            model=name, run_sha256=run.sha256, classes=run.classes, policy=UNSEEN_RULE,
            tuned_on={"split": choice.tuning_split, "n": _count(tune.total_weight)}, evaluation=record,
            notes=(_note(fit.policy),) + ((note,) if note else ()), segments=fit.to_dict(),
        ))
    return PolicyDocument(values, tuple(entries)), notes, fits


def apply_segment_entry(entry: PolicyEntry, split: str, run, values: Values) -> tuple:
    """A stored per-segment entry evaluated as stored on one split of ``run``: (the evaluation record, the
    confusion-matrix result, a note), the first two None when it cannot be evaluated (the note says why)."""
    column = entry.segments["column"]
    labels = run.segments.get(split)
    if labels is None:
        return None, None, (f"its policy sets a threshold per segment of the column {column!r}, which this run was "
                            f"not loaded with (command line: --segment {column}; Python: segment_column={column!r})")
    predictions = run.splits[split]
    if not predictions.has_labels:
        return None, None, f"split {split!r} has no labels; thresholds per segment are evaluated on labels only"
    record, result, _ = segment_evaluation(entry.segment_policy, split, predictions, labels,
                                           entry.segment_values(values), values)
    return record, result, _note(entry.segment_policy)


def _note(policy: SegmentPolicy) -> str:
    return CLASS_SEGMENT_NOTE if policy.rule == "class_thresholds" else SEGMENT_NOTE
