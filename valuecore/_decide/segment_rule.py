"""Thresholds per segment as one more candidate rule of the recommendation.

A :class:`SegmentRule` is a fitted :class:`~valuecore.constraints.SegmentPolicy` bound to the segment labels
of the split it is judged on, so that the verdict can price it item by item like any other rule
(``valuecore._decide.verdict`` asks it for each item's value and the share it acts on). It keeps the fit
(thresholds, caps, their cost) and the policy JSON entry built with it, which the export writes when the
recommendation names it. Items of a segment the fit never saw are handed off, as serving does.

May import: _model, _engine, _stats (see the package's ``__init__``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._engine.segment_policy import SegmentPolicy
from .._model.choices import SEGMENT_RULE
from .._model.predictions import Predictions
from .._model.values import Values

__all__ = ["SEGMENT_RULE", "SegmentRule"]


@dataclass(frozen=True, eq=False)
class SegmentRule:
    """A threshold per segment, judged on one split.

    Attributes
    ----------
    policy : SegmentPolicy
        Fitted on the tuning split (within the caps, when set).
    split : str
        The split it is judged on.
    labels : ndarray of shape (n,)
        That split's segment per item, in its rows' order.
    fit : SegmentFit
        The fit on the tuning split (``fit.caps``, ``fit.cap_cost_per_item``, ...).
    entry : PolicyEntry or None
        The policy JSON entry of this rule (schema version 3, ``segments``), as ``report --segment`` writes it.
    """

    policy: SegmentPolicy
    split: str
    labels: np.ndarray
    fit: object = None
    entry: object = None

    kind = SEGMENT_RULE
    # Not one threshold, not per class, no recalibration: what the verdict and the words ask of any rule.
    threshold = None
    class_thresholds = ()
    calibration = None

    @property
    def column(self) -> str | None:
        return self.policy.column

    @property
    def caps(self) -> dict:
        """The caps set, by name (empty: none)."""
        return {} if self.fit is None else self.fit.caps.as_dict()

    def decide(self, predictions: Predictions) -> np.ndarray:
        """Actions of shape (n,) on the split it is bound to: a class index, or ``n_classes`` to hand off."""
        if predictions.n != self.labels.shape[0]:
            raise ValueError(f"the thresholds per segment are bound to split {self.split!r} of "
                             f"{self.labels.shape[0]} items; these predictions have {predictions.n}")
        return self.policy.decide(predictions, self.labels)

    def item_values(self, predictions: Predictions, values: Values) -> np.ndarray:
        """Each item's realised value, shape (n,): its true class's cell of the action taken."""
        predictions.require_labels("per-item values")
        matrix = values.for_classes(predictions.classes).values
        return matrix[predictions.y_true, self.decide(predictions)].astype(np.float64)

    def coverage(self, predictions: Predictions) -> float:
        """Weighted share of the items acted on without a person."""
        weight = predictions.sample_weight
        total = float(weight.sum())
        acted = self.decide(predictions) < predictions.n_classes
        return float(weight[acted].sum()) / total if total > 0 else float("nan")
