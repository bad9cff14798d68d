"""Curves over the threshold: value, risk-coverage, confidence distributions.

All read the cumulative counts of a :class:`SortedRun`; one entry per
distinct confidence (a candidate threshold), in decreasing order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd  # imported where a frame is built, so that importing the module stays light

from .fitting import Values
from .._model.values import check_value_range as _check_value_range
from .._model.predictions import Predictions
from .sorting import SortedRun, cumulative_gain
from .._model.values import UseCase  # noqa: F401  (UseCase: used in doctests)

__all__ = [
    "ThresholdCurve",
    "threshold_curve",
    "RiskCoverage",
    "risk_coverage_curve",
    "confidence_histogram",
    "discrimination",
]


@dataclass(frozen=True, eq=False)
class ThresholdCurve:
    """Value at every candidate threshold, plus "always abstain".

    Attributes
    ----------
    thresholds : ndarray of shape (n_groups + 1,), decreasing
        ``thresholds[0]`` is NaN for "always abstain"; then every distinct confidence.
    value_total, value_per_item, coverage : ndarray of shape (n_groups + 1,)
    n_correct, n_wrong : ndarray of shape (n_groups + 1,) or None
        None when the value is estimated without labels.
    estimated : bool
    """

    thresholds: np.ndarray
    value_total: np.ndarray
    value_per_item: np.ndarray
    coverage: np.ndarray
    n_correct: np.ndarray | None
    n_wrong: np.ndarray | None
    estimated: bool = False

    @property
    def best_index(self) -> int:
        """Index of the best threshold (ties: the highest threshold)."""
        return int(np.argmax(self.value_total))

    def to_frame(self, max_points: int | None = 2000) -> pd.DataFrame:
        """Tidy frame ``threshold, value_total, value_per_item, coverage``.

        With ``max_points``, keeps an evenly spaced subset of rows plus the
        best one, so a chart of a million-item run stays light.
        """
        import pandas as pd
        keep = np.arange(self.thresholds.size)
        if max_points is not None and keep.size > max_points:
            keep = np.unique(np.r_[np.linspace(1, keep.size - 1, max_points).astype(int), self.best_index])
        frame = pd.DataFrame(
            {
                "threshold": self.thresholds[keep],
                "value_total": self.value_total[keep],
                "value_per_item": self.value_per_item[keep],
                "coverage": self.coverage[keep],
            }
        )
        return frame


def threshold_curve(run: SortedRun, values: Values, *, estimate: bool = False) -> ThresholdCurve:
    """Value of every global threshold on a presorted run. O(n) (O(n_groups) for a use case).

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.7, 0.3], [0.4, 0.6]], y_true=[0, 1, 1])
    >>> curve = threshold_curve(presort(p), UseCase(1, 0, -2))
    >>> curve.value_total.tolist()
    [0.0, 1.0, -1.0, 0.0]
    """
    _check_value_range(values)
    predictions = run.predictions
    matrix = values.for_classes(predictions.classes)
    n_items = run.total_weight
    estimate = estimate or not predictions.has_labels
    truth_mass = None
    if not estimate:
        truth_mass = np.bincount(predictions.y_true, weights=predictions.sample_weight, minlength=matrix.n_classes)
    elif matrix.as_use_case() is None:
        predictions.require_proba("label-free value of a per-class value matrix")
    gain = cumulative_gain(run, values, estimate=estimate)
    use_case = values.use_case
    if use_case is not None and not estimate:
        base = use_case.v_abstain * n_items
    else:
        if truth_mass is None:
            # Expected value of abstaining on everything, from the probabilities.
            if predictions.has_proba:
                truth_mass = predictions.normalised_proba().T @ predictions.sample_weight
            else:
                truth_mass = np.full(matrix.n_classes, n_items / matrix.n_classes)
        base = float(truth_mass @ matrix.values[:, -1])
    value_total = base + gain
    return ThresholdCurve(
        thresholds=np.r_[np.nan, run.thresholds],
        value_total=value_total,
        value_per_item=value_total / n_items if n_items > 0 else np.zeros_like(value_total),
        coverage=run.cum_accepted / n_items if n_items > 0 else np.zeros_like(value_total),
        n_correct=run.cum_correct if not estimate else None,
        n_wrong=run.cum_wrong if not estimate else None,
        estimated=estimate,
    )


@dataclass(frozen=True, eq=False)
class RiskCoverage:
    """Risk-coverage curve of selective classification.

    Attributes
    ----------
    coverage : ndarray of shape (n_groups,), increasing
    risk : ndarray of shape (n_groups,)
        Error rate among accepted items (selective risk) at each threshold.
    thresholds : ndarray of shape (n_groups,), decreasing
    aurc : float
        Area under the curve: each item contributes the risk at the point its
        confidence group is accepted, weighted by its share of items (the
        step-wise integral of risk over coverage; ties never split).
    """

    coverage: np.ndarray
    risk: np.ndarray
    thresholds: np.ndarray
    aurc: float


def risk_coverage_curve(run: SortedRun) -> RiskCoverage:
    """Risk-coverage curve and its area (AURC) of a labelled, presorted run.

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.7, 0.3], [0.6, 0.4]], y_true=[0, 1, 0])
    >>> rc = risk_coverage_curve(presort(p))
    >>> rc.risk.tolist(), round(rc.aurc, 4)
    ([0.0, 0.5, 0.3333333333333333], 0.2778)
    """
    run.predictions.require_labels("a risk-coverage curve")
    accepted = run.cum_accepted[1:]
    n_items = run.total_weight
    with np.errstate(divide="ignore", invalid="ignore"):
        risk = np.where(accepted > 0, run.cum_wrong[1:] / accepted, 0.0)
    coverage = accepted / n_items if n_items > 0 else np.zeros_like(accepted)
    step = np.diff(np.r_[0.0, coverage])
    return RiskCoverage(coverage=coverage, risk=risk, thresholds=run.thresholds.copy(), aurc=float(step @ risk))


def confidence_histogram(predictions: Predictions, bins: int = 20) -> pd.DataFrame:
    """Weighted confidence histogram split into correct and wrong (seed 000, Figure 2).

    Returns a tidy frame ``bin_start, bin_end, outcome, count, share``
    (``share`` of all items), two rows per bin. The model's own abstentions are in no bin.
    """
    import pandas as pd
    predictions.require_labels("a correct-vs-wrong confidence histogram")
    total = max(predictions.total_weight, 1e-300)
    if predictions.has_model_abstentions:
        predictions = predictions.subset(~predictions.model_abstained)
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = np.clip(np.searchsorted(edges, predictions.confidence, side="right") - 1, 0, bins - 1)
    correct = predictions.correct
    weight = predictions.sample_weight
    counts_correct = np.bincount(index[correct], weights=weight[correct], minlength=bins)
    counts_wrong = np.bincount(index[~correct], weights=weight[~correct], minlength=bins)
    return pd.DataFrame(
        {
            "bin_start": np.r_[edges[:-1], edges[:-1]],
            "bin_end": np.r_[edges[1:], edges[1:]],
            "outcome": ["correct"] * bins + ["wrong"] * bins,
            "count": np.r_[counts_correct, counts_wrong],
            "share": np.r_[counts_correct, counts_wrong] / total,
        }
    )


def discrimination(predictions: Predictions) -> float:
    """Seed 000's discrimination measure: the weighted mean of ``(1/2 - c)**2``.

    Independent of accuracy and calibration; higher spreads confidence away
    from 1/2. NaN for an empty run.
    """
    total = predictions.total_weight
    if total <= 0:
        return float("nan")
    return float(predictions.sample_weight @ (0.5 - predictions.confidence) ** 2 / total)


from .sorting import presort  # noqa: E402,F401  (used in doctests)
