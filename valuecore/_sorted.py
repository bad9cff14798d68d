"""Sort a run once; every threshold question is then a cumulative sum.

Like ``sklearn.metrics._ranking._binary_clf_curve``: sort by decreasing
confidence, find the indices where the confidence changes, and read cumulative
sums there. Items with equal confidence form one *group* and are never split:
a threshold is always the confidence of a group, and accepting a group
accepts all of it (accept iff ``confidence >= threshold``).

Two orders are kept: the global one (for one threshold) and one by predicted
class then decreasing confidence (for per-class thresholds, where the tuning
problem separates by predicted class).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._predictions import Predictions

__all__ = ["SortedRun", "presort"]


@dataclass(frozen=True, eq=False)
class SortedRun:
    """A run sorted once by decreasing confidence, with cumulative counts.

    Attributes
    ----------
    predictions : Predictions
        The run, unsorted.
    order : ndarray of shape (n,)
        Indices that sort the run by decreasing confidence (stable).
    thresholds : ndarray of shape (n_groups,), decreasing
        The distinct confidences: every candidate threshold.
    group_end : ndarray of shape (n_groups,)
        Exclusive end, in sorted order, of the items with ``confidence >= thresholds[k]``.
    cum_accepted, cum_correct, cum_wrong : ndarray of shape (n_groups + 1,)
        Weighted counts accepted / correct / wrong when the threshold is
        ``thresholds[k - 1]``; index 0 is "always abstain". ``cum_correct`` and
        ``cum_wrong`` are None for an unlabeled run.
    class_order : ndarray of shape (n,)
        Indices that sort by predicted class, then decreasing confidence.
    class_group_end : ndarray of shape (n_class_groups,)
        Exclusive end, in ``class_order``, of each (class, confidence) group.
    class_group_class : ndarray of shape (n_class_groups,)
        Predicted class (index) of each group; non-decreasing.
    class_group_threshold : ndarray of shape (n_class_groups,)
        Confidence of each group; decreasing within a class.
    class_cum_correct, class_cum_wrong : ndarray of shape (n_class_groups,) or None
        Weighted correct / wrong counts cumulated along ``class_order`` up to
        the end of each group (not reset between classes), so that a new use
        case tunes per-class thresholds in O(n_class_groups).
    """

    predictions: Predictions
    order: np.ndarray
    thresholds: np.ndarray
    group_end: np.ndarray
    cum_accepted: np.ndarray
    cum_correct: np.ndarray | None
    cum_wrong: np.ndarray | None
    class_order: np.ndarray
    class_group_end: np.ndarray
    class_group_class: np.ndarray
    class_group_threshold: np.ndarray
    class_cum_correct: np.ndarray | None = None
    class_cum_wrong: np.ndarray | None = None

    @property
    def total_weight(self) -> float:
        return float(self.cum_accepted[-1])

    @property
    def n_groups(self) -> int:
        return int(self.thresholds.shape[0])

    def counts_at(self, threshold: float | None) -> tuple[float, float, float]:
        """Weighted (accepted, correct, wrong) for ``confidence >= threshold``.

        O(log n_groups). ``None`` abstains on everything.
        """
        k = self.groups_accepted(threshold)
        correct = self.cum_correct[k] if self.cum_correct is not None else np.nan
        wrong = self.cum_wrong[k] if self.cum_wrong is not None else np.nan
        return float(self.cum_accepted[k]), float(correct), float(wrong)

    def groups_accepted(self, threshold) -> np.ndarray | int:
        """Number of groups accepted at ``threshold`` (scalar or array; None = 0).

        ``thresholds`` is decreasing, so count the groups with confidence >= t.
        """
        if threshold is None:
            return 0
        t = np.asarray(threshold, dtype=np.float64)
        # searchsorted needs increasing order: search -t in -thresholds.
        k = np.searchsorted(-self.thresholds, -t, side="right")
        return int(k) if np.ndim(k) == 0 else k


def _group_ends(sorted_keys: list[np.ndarray], n: int) -> np.ndarray:
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.zeros(n - 1, dtype=bool)
    for key in sorted_keys:
        change |= key[1:] != key[:-1]
    return np.r_[np.flatnonzero(change) + 1, n].astype(np.int64)


def _cum_at(weights_sorted: np.ndarray, group_end: np.ndarray) -> np.ndarray:
    cumulative = np.cumsum(weights_sorted)
    return np.r_[0.0, cumulative[group_end - 1]] if group_end.size else np.zeros(1)


def _small_ints(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Codes in [0, n_codes) in the narrowest unsigned type: NumPy's stable sort is a
    radix sort, O(n), for types of 16 bits or less."""
    for dtype in (np.uint8, np.uint16):
        if n_codes <= np.iinfo(dtype).max + 1:
            return codes.astype(dtype)
    return codes


def _descending_order(confidence: np.ndarray) -> np.ndarray:
    """``np.argsort(-confidence, kind="stable")``, faster when confidences repeat.

    Real scores are often rounded (4 decimals, or float32): then hashing the
    values, sorting only the distinct ones and radix-sorting the items by the
    rank of their value beats a comparison sort of all items. Ties keep their
    order, so the result is identical.
    """
    n = confidence.shape[0]
    if n < _FAST_SORT_MIN_ITEMS:
        return np.argsort(-confidence, kind="stable")
    import pandas as pd

    # A strided sample of nearly all-distinct values says the hash would not pay off.
    sample = confidence[:: max(1, n // _SAMPLE)]
    if pd.unique(sample).shape[0] > 0.9 * sample.shape[0]:
        return np.argsort(-confidence, kind="stable")
    codes, distinct = pd.factorize(confidence, sort=False)
    n_distinct = distinct.shape[0]
    if n_distinct > _FAST_SORT_MAX_DISTINCT:
        return np.argsort(-confidence, kind="stable")
    rank = np.empty(n_distinct, dtype=np.intp)
    rank[np.argsort(-np.asarray(distinct), kind="stable")] = np.arange(n_distinct)
    return np.argsort(_small_ints(rank[codes], n_distinct), kind="stable")


# Below this many items a comparison sort is already fast; above this many distinct
# values the ranks no longer fit the 16-bit radix sort.
_FAST_SORT_MIN_ITEMS = 1 << 15
_FAST_SORT_MAX_DISTINCT = 1 << 16
_SAMPLE = 4096


def presort(predictions: Predictions) -> SortedRun:
    """Sort ``predictions`` once; O(n log n). Cache the result per run.

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.3, 0.7], [0.1, 0.9]], y_true=[0, 0, 1])
    >>> s = presort(p)
    >>> s.thresholds.tolist(), s.cum_correct.tolist(), s.cum_wrong.tolist()
    ([0.9, 0.7], [0.0, 2.0, 2.0], [0.0, 0.0, 1.0])
    """
    confidence = predictions.confidence
    n = predictions.n
    order = _descending_order(confidence)
    sorted_confidence = confidence[order]
    group_end = _group_ends([sorted_confidence], n)
    thresholds = sorted_confidence[group_end - 1] if n else np.zeros(0)
    weight = predictions.sample_weight[order]
    cum_accepted = _cum_at(weight, group_end)
    cum_correct = cum_wrong = None
    if predictions.has_labels:
        correct = predictions.correct[order]
        cum_correct = _cum_at(np.where(correct, weight, 0.0), group_end)
        cum_wrong = cum_accepted - cum_correct
        # Clip round-off so that "no wrong item" is exactly zero.
        cum_wrong = np.where(cum_wrong < 0, 0.0, cum_wrong)
    # A stable sort by class of the confidence order keeps confidences decreasing
    # within each class: an integer (radix) sort instead of a second lexsort.
    class_order = order[np.argsort(_small_ints(predictions.y_pred[order], predictions.n_classes), kind="stable")]
    class_sorted_pred = predictions.y_pred[class_order]
    class_sorted_conf = confidence[class_order]
    class_group_end = _group_ends([class_sorted_pred, class_sorted_conf], n)
    last = class_group_end - 1
    class_cum_correct = class_cum_wrong = None
    if predictions.has_labels and n:
        class_weight = predictions.sample_weight[class_order]
        class_correct = predictions.correct[class_order]
        class_cum_correct = np.cumsum(np.where(class_correct, class_weight, 0.0))[last]
        class_cum_wrong = np.cumsum(np.where(class_correct, 0.0, class_weight))[last]
    return SortedRun(
        predictions=predictions,
        order=order,
        thresholds=thresholds,
        group_end=group_end,
        cum_accepted=cum_accepted,
        cum_correct=cum_correct,
        cum_wrong=cum_wrong,
        class_order=class_order,
        class_group_end=class_group_end,
        class_group_class=class_sorted_pred[last] if n else np.zeros(0, np.int64),
        class_group_threshold=class_sorted_conf[last] if n else np.zeros(0),
        class_cum_correct=class_cum_correct,
        class_cum_wrong=class_cum_wrong,
    )


def best_prefix(cum_gain: np.ndarray) -> int:
    """Index maximising ``cum_gain`` (shape (n_groups + 1,), index 0 = accept none).

    Ties go to the smallest index: the highest threshold, i.e. the fewest
    automated decisions for the same value.
    """
    return int(np.argmax(cum_gain))


def best_prefix_per_class(gain: np.ndarray, run: SortedRun) -> tuple[np.ndarray, np.ndarray]:
    """Best per-class threshold for per-item gains, exactly and without loops.

    Parameters
    ----------
    gain : ndarray of shape (n,)
        Weighted gain over abstaining of accepting each item, in the run's
        original (unsorted) order.
    run : SortedRun

    Returns
    -------
    thresholds : ndarray of shape (n_classes,)
        Best threshold per predicted class; NaN where accepting nothing is best
        (or the class is never predicted).
    best_gain : ndarray of shape (n_classes,)
        The gain of that choice (0 for "accept nothing").
    """
    if run.class_group_end.size == 0:
        return best_prefix_per_class_cumulative(np.zeros(0), run)
    cumulative = np.cumsum(gain[run.class_order])
    return best_prefix_per_class_cumulative(cumulative[run.class_group_end - 1], run)


def best_prefix_per_class_cumulative(at_end: np.ndarray, run: SortedRun) -> tuple[np.ndarray, np.ndarray]:
    """Like :func:`best_prefix_per_class`, from the gain cumulated along
    ``class_order`` up to the end of each group (shape (n_class_groups,))."""
    n_classes = run.predictions.n_classes
    thresholds = np.full(n_classes, np.nan)
    best_gain = np.zeros(n_classes)
    if run.class_group_end.size == 0:
        return thresholds, best_gain
    group_class = run.class_group_class
    # First group of each present class: where the class label changes.
    first = np.r_[0, np.flatnonzero(group_class[1:] != group_class[:-1]) + 1]
    before = np.r_[0.0, at_end][first]  # cumulative gain before each class's segment
    segment = np.repeat(np.arange(first.size), np.diff(np.r_[first, group_class.size]))
    prefix = at_end - before[segment]
    segment_max = np.maximum.reduceat(prefix, first)
    hits = np.flatnonzero(prefix == segment_max[segment])
    _, first_hit = np.unique(segment[hits], return_index=True)
    best_group = hits[first_hit]
    present = group_class[first]
    worth_it = segment_max > 0  # ties with "accept nothing" abstain
    thresholds[present[worth_it]] = run.class_group_threshold[best_group[worth_it]]
    best_gain[present[worth_it]] = segment_max[worth_it]
    return thresholds, best_gain
