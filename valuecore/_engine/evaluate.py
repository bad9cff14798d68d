"""What a policy is worth on a split: realised (with labels) or estimated (without)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._model.values import check_value_range as _check_value_range
from .fitting import Policy, Values
from .._model.predictions import Predictions

__all__ = ["PolicyResult", "evaluate", "item_values", "estimate", "decision_values"]


@dataclass(frozen=True, eq=False)
class PolicyResult:
    """Value and counts of a policy on one split. Counts are weighted.

    Attributes
    ----------
    classes : tuple of str
    n_items : float
        Weighted number of items (N).
    value_total : float
        Total value in the use case's currency.
    value_per_item : float
        ``value_total / N``: abstentions count as items (seed 002's
        normalisation per prediction).
    value_dimensionless : float or None
        ``(V - V_always_abstain) / (V_perfect - V_always_abstain)``; for the
        simple use case this is ``(N_correct - omega N_wrong) / N`` (seed 000,
        eq. 4): 0 for always-abstain, 1 for a perfect model. None when a
        perfect model is worth no more than abstaining.
    coverage : float
        Share of items acted on.
    selective_accuracy, selective_risk : float or None
        Accuracy / error rate on the accepted items; None when none is accepted.
    n_correct, n_wrong, n_abstain : float
    confusion : ndarray of shape (C, C + 1)
        Weighted counts, rows true class, columns predicted class then abstain.
    cell_values : ndarray of shape (C, C + 1)
        Value contributed by each confusion cell (``confusion * value matrix``).
    estimated : bool
        True when computed from probabilities without labels.
    """

    classes: tuple
    n_items: float
    value_total: float
    value_per_item: float
    value_dimensionless: float | None
    coverage: float
    selective_accuracy: float | None
    selective_risk: float | None
    n_correct: float
    n_wrong: float
    n_abstain: float
    confusion: np.ndarray
    cell_values: np.ndarray
    estimated: bool = False

    def to_dict(self) -> dict:
        """JSON-able summary (no matrices)."""
        return {
            "n": self.n_items,
            "value_total": self.value_total,
            "value_per_item": self.value_per_item,
            "value_dimensionless": self.value_dimensionless,
            "coverage": self.coverage,
            "selective_accuracy": self.selective_accuracy,
            "selective_risk": self.selective_risk,
            "n_correct": self.n_correct,
            "n_wrong": self.n_wrong,
            "n_abstain": self.n_abstain,
        }


def _ratio(numerator: float, denominator: float) -> float | None:
    return float(numerator / denominator) if denominator > 0 else None


def _result(classes, confusion, matrix_values, truth_mass, estimated: bool, n_items: float | None = None):
    """Build a result from a (possibly expected) confusion matrix.

    ``truth_mass`` has shape (C,): weighted items per true class, used for the
    always-abstain and perfect-model baselines.
    """
    n_classes = len(classes)
    # Expected counts add up to N only up to round-off; use the exact N when known.
    n_items = float(confusion.sum()) if n_items is None else float(n_items)
    cell_values = confusion * matrix_values
    value_total = float(cell_values.sum())
    n_correct = float(np.trace(confusion[:, :n_classes]))
    n_abstain = float(confusion[:, n_classes].sum())
    # Summed from the acted-on cells, not by subtraction, so that a policy that
    # acts on nothing has exactly zero wrong answers whatever the round-off.
    accepted = float(confusion[:, :n_classes].sum())
    n_wrong = max(accepted - n_correct, 0.0)
    always_abstain = float(truth_mass @ matrix_values[:, n_classes])
    perfect = float(truth_mass @ np.diag(matrix_values[:, :n_classes]))
    scale = perfect - always_abstain
    return PolicyResult(
        classes=tuple(classes),
        n_items=n_items,
        value_total=value_total,
        value_per_item=value_total / n_items if n_items > 0 else 0.0,
        value_dimensionless=(value_total - always_abstain) / scale if scale > 0 else None,
        coverage=accepted / n_items if n_items > 0 else 0.0,
        selective_accuracy=_ratio(n_correct, accepted),
        selective_risk=_ratio(n_wrong, accepted),
        n_correct=n_correct,
        n_wrong=n_wrong,
        n_abstain=n_abstain,
        confusion=confusion,
        cell_values=cell_values,
        estimated=estimated,
    )


def _refuse_two_tier(policy: Policy) -> None:
    if policy.kind == "two_tier":
        raise ValueError("a two_tier policy's value includes its assisted tier: use evaluate_two_tier")


def evaluate(policy: Policy, predictions: Predictions, values: Values) -> PolicyResult:
    """Realised value of ``policy`` on a labelled split. O(n).

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.7, 0.3], [0.2, 0.8]], y_true=[0, 1, 1])
    >>> r = evaluate(Policy("threshold", threshold=0.75), p, UseCase(1, 0, -4))
    >>> r.value_total, r.n_correct, r.n_wrong, r.n_abstain, r.coverage
    (2.0, 2.0, 0.0, 1.0, 0.6666666666666666)
    """
    _check_value_range(values)
    predictions.require_labels("evaluating a policy")
    _refuse_two_tier(policy)
    matrix = values.for_classes(predictions.classes)
    return _evaluate_actions(policy.decide(predictions, matrix), predictions, matrix)


def _evaluate_actions(actions: np.ndarray, predictions: Predictions, matrix) -> PolicyResult:
    """:func:`evaluate` of actions already decided (labels and values already checked)."""
    n_classes = predictions.n_classes
    cells = predictions.y_true * (n_classes + 1) + actions
    confusion = np.bincount(
        cells, weights=predictions.sample_weight, minlength=n_classes * (n_classes + 1)
    ).reshape(n_classes, n_classes + 1)
    return evaluate_confusion(confusion, predictions, matrix)


def evaluate_confusion(confusion: np.ndarray, predictions: Predictions, matrix) -> PolicyResult:
    """:func:`evaluate` from the decision's weighted confusion matrix (C, C + 1), summed as evaluate sums it."""
    return _result(predictions.classes, confusion, matrix.values, confusion.sum(axis=1), estimated=False)


def decision_values(actions: np.ndarray, predictions: Predictions, values: Values) -> np.ndarray:
    """Per-item value, shape (n,), of given actions (unweighted: one item each)."""
    predictions.require_labels("per-item values")
    matrix = values.for_classes(predictions.classes)
    return matrix.values[predictions.y_true, actions]


def item_values(policy: Policy, predictions: Predictions, values: Values) -> np.ndarray:
    """Per-item realised value of ``policy``, shape (n,), unweighted.

    The weighted mean (with ``predictions.sample_weight``) is ``value_per_item``.
    """
    matrix = values.for_classes(predictions.classes)
    return decision_values(policy.decide(predictions, matrix), predictions, matrix)


def _estimation_inputs(policy: Policy, predictions: Predictions, values: Values) -> tuple:
    """What :func:`estimate` refuses, in its words and order, and what it reads once past that: (the value
    matrix for the run's classes, the policy's actions, the calibrated predictions)."""
    _refuse_two_tier(policy)
    _check_value_range(values)
    matrix = values.for_classes(predictions.classes)
    actions = policy.decide(predictions, matrix)
    calibrated = policy.calibrate(predictions)
    if not calibrated.has_proba and matrix.as_use_case() is None:
        calibrated.require_proba("label-free estimation with a per-class value matrix")
    return matrix, actions, calibrated


def estimate(policy: Policy, predictions: Predictions, values: Values) -> PolicyResult:
    """Expected value of ``policy`` from the model's probabilities, without labels.

    Sums, over items and true classes, ``p(true class) * value(action, true
    class)`` (seed 002's confidence-based estimation, for any value matrix and
    any number of classes). Only as good as the calibration of the
    probabilities: calibrate on a labelled split first. A run with only
    top-label confidences supports the simple use case only.

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.6, 0.4]])
    >>> round(estimate(Policy("accept_all"), p, UseCase(1, 0, -1)).value_total, 6)
    1.0
    """
    matrix, actions, calibrated = _estimation_inputs(policy, predictions, values)
    n_classes = predictions.n_classes
    if calibrated.has_proba:
        truth = calibrated.normalised_proba()
    else:
        # Top-label only: the predicted class is right with probability
        # `confidence`; where the rest goes does not matter for a simple use case.
        confidence = calibrated.confidence
        truth = np.zeros((calibrated.n, n_classes))
        rows = np.arange(calibrated.n)
        truth[rows, calibrated.y_pred] = confidence
        truth[rows, (calibrated.y_pred + 1) % n_classes] += 1 - confidence
    weighted_truth = truth * predictions.sample_weight[:, None]  # (n, C)
    action_onehot_index = actions  # (n,)
    confusion = np.zeros((n_classes, n_classes + 1))
    # Accumulate expected counts per (true class, action) without a Python loop over items.
    for true_class in range(n_classes):  # loop over classes (C <= a few dozen), never items
        confusion[true_class] = np.bincount(
            action_onehot_index, weights=weighted_truth[:, true_class], minlength=n_classes + 1
        )
    truth_mass = weighted_truth.sum(axis=0)
    return _result(
        predictions.classes, confusion, matrix.values, truth_mass, estimated=True, n_items=predictions.total_weight
    )


from .._model.values import UseCase  # noqa: E402,F401  (used in doctests)
