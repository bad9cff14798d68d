"""Sort a run once; every threshold question is then a cumulative sum.

Like ``sklearn.metrics._ranking._binary_clf_curve``: sort by decreasing
confidence, find the indices where the confidence changes, and read cumulative
sums there. Items with equal confidence form one *group* and are never split:
a threshold is always the confidence of a group, and accepting a group
accepts all of it (accept iff ``confidence >= threshold``).

Two orders are kept: the global one (for one threshold) and one by predicted
class then decreasing confidence (for per-class thresholds, where the tuning
problem separates by predicted class). When confidences repeat and weights are
integers, the counts per distinct confidence are summed without moving any
item, and the orders are built only when a question needs them. When they are
nearly all distinct and every weight is 1, one sort of int64 keys (the float
bits and the correct bit, see ``bitsort``) gives the counts, and the orders
too are built on first use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .bitsort import descending_counts, stable_descending_order
from .._model.predictions import Predictions
from .._model.values import UseCase, Values, threshold_for_omega  # noqa: F401  (UseCase: doctests)

__all__ = [
    "SortedRun",
    "presort",
    "cumulative_gain",
    "class_cumulative_gain",
    "dimensionless_value",
    "acceptance_limits",
]


@dataclass(frozen=True, eq=False)
class SortedRun:
    """A run sorted once by decreasing confidence, with cumulative counts.

    Only the cumulative counts per distinct confidence are computed by
    :func:`presort` when they can be summed per group exactly (integer
    weights); the item orders and the per-class groups are computed on first
    use and cached, so a question that needs only the global threshold never
    pays for them. Either way every attribute holds exactly what a full sort
    gives.

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
    declined_weight : float
        Weight of the items the model itself declined (``Predictions.model_abstained``): counted in
        ``total_weight``, in no group and no candidate threshold, after every group in ``order`` and
        ``class_order``; every rule hands them over.
    """

    predictions: Predictions
    thresholds: np.ndarray
    cum_accepted: np.ndarray
    cum_correct: np.ndarray | None
    cum_wrong: np.ndarray | None
    # Group index (0 = highest confidence) of each item, shape (n,), kept when the
    # counts were summed per group; None when presort sorted the items themselves.
    _rank: np.ndarray | None = field(default=None, repr=False)
    declined_weight: float = 0.0

    @property
    def total_weight(self) -> float:
        return float(self.cum_accepted[-1]) + self.declined_weight

    @property
    def n_groups(self) -> int:
        return int(self.thresholds.shape[0])

    @cached_property
    def order(self) -> np.ndarray:
        return _order_by_rank(self._rank, self.n_groups, self.predictions.confidence)

    @cached_property
    def group_end(self) -> np.ndarray:
        return np.cumsum(np.bincount(self._rank, minlength=self.n_groups))

    @cached_property
    def class_order(self) -> np.ndarray:
        # A stable sort by class of the confidence order keeps confidences decreasing
        # within each class: an integer (radix) sort instead of a second lexsort.
        order, p = self.order, self.predictions
        if p.has_model_abstentions:  # the answered items by class, then the declined ones (in no group)
            answered = int(self.group_end[-1]) if self.n_groups else 0
            head = order[:answered]
            return np.r_[head[np.argsort(_small_ints(p.y_pred[head], p.n_classes), kind="stable")],
                         order[answered:]]
        return order[np.argsort(_small_ints(p.y_pred[order], p.n_classes), kind="stable")]

    @cached_property
    def _class_groups(self) -> tuple:
        groups = _class_groups_by_counting(self) or _class_groups_in_order(self)
        if self.predictions.has_model_abstentions:  # the declined items' groups close class_order: dropped
            kept = groups[2] >= 0
            groups = tuple(None if part is None else part[kept] for part in groups)
        return groups

    @property
    def class_group_end(self) -> np.ndarray:
        return self._class_groups[0]

    @property
    def class_group_class(self) -> np.ndarray:
        return self._class_groups[1]

    @property
    def class_group_threshold(self) -> np.ndarray:
        return self._class_groups[2]

    @property
    def class_cum_correct(self) -> np.ndarray | None:
        return self._class_groups[3]

    @property
    def class_cum_wrong(self) -> np.ndarray | None:
        return self._class_groups[4]

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

    def value_at(self, threshold: float | None, omega: float) -> float:
        """Dimensionless value per item ``(N_correct - omega N_wrong) / N`` at ``threshold``.

        O(log n_groups); see :func:`dimensionless_value`. NaN for a run of
        total weight 0. Needs labels.
        """
        if self.total_weight <= 0:
            return float("nan")
        _, correct, wrong = self.counts_at(threshold)
        return float(dimensionless_value(correct, wrong, omega, self.total_weight))

    def coverage_at(self, threshold: float | None) -> float:
        """Weighted share of items accepted at ``threshold``; NaN for a run of total weight 0."""
        if self.total_weight <= 0:
            return float("nan")
        return float(self.cum_accepted[self.groups_accepted(threshold)] / self.total_weight)


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
            return codes.astype(dtype, copy=False)
    return codes


def _group_ranks(confidence: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Each item's group index in decreasing confidence (uint16) and the distinct
    confidences (decreasing), by hashing; None where sorting the items is cheaper.

    Real scores are often rounded (4 decimals, or float32): then hashing the
    values and sorting only the distinct ones beats a comparison sort of all
    items. Equal values form one group, as in the sort.
    """
    n = confidence.shape[0]
    if n < _FAST_SORT_MIN_ITEMS:
        return None
    import pandas as pd

    # A strided sample of nearly all-distinct values says the hash would not pay off.
    sample = confidence[:: max(1, n // _SAMPLE)]
    if pd.unique(sample).shape[0] > 0.9 * sample.shape[0]:
        return None
    # A hash table sized for the distinct values, not the items, stays in cache:
    # about 4x faster than pandas' default size hint at 10^6 items.
    codes, distinct = pd.factorize(confidence, sort=False, size_hint=min(n, _FAST_SORT_MAX_DISTINCT))
    distinct = np.asarray(distinct)
    n_distinct = distinct.shape[0]
    # Beyond 16-bit ranks the radix sort is lost. 0.0 and -0.0 are one group whose
    # printed name the sort decides: leave that rare case to the sort.
    if n_distinct > _FAST_SORT_MAX_DISTINCT or (distinct == 0).any():
        return None
    by_value = np.argsort(-distinct, kind="stable")
    rank_of_code = np.empty(n_distinct, dtype=np.uint16)
    rank_of_code[by_value] = np.arange(n_distinct)
    return rank_of_code[codes], distinct[by_value]


def _order_by_rank(rank: np.ndarray | None, n_groups: int, confidence: np.ndarray) -> np.ndarray:
    """``np.argsort(-confidence, kind="stable")``: a radix sort of the group ranks when known."""
    if rank is None:
        return stable_descending_order(confidence)
    return np.argsort(_small_ints(rank, n_groups), kind="stable")


# Below this many items a comparison sort is already fast; above this many distinct
# values the ranks no longer fit the 16-bit radix sort.
_FAST_SORT_MIN_ITEMS = 1 << 15
_FAST_SORT_MAX_DISTINCT = 1 << 16
_SAMPLE = 4096
# Sums of integer weights are exact in float64 below 2**53, in any order; a margin
# covers the round-off of the check's own total.
_EXACT_INTEGER_TOTAL = 2.0**52


def _sums_exact_in_any_order(weight: np.ndarray) -> bool:
    """Whether every partial sum of ``weight`` is exact, so that summing per group
    first gives bit for bit what cumulating item by item in sorted order gives."""
    return bool(weight.sum() <= _EXACT_INTEGER_TOTAL and np.array_equal(weight, np.rint(weight)))


def presort(predictions: Predictions) -> SortedRun:
    """Sort ``predictions`` once; O(n log n), O(n) when confidences repeat. Cache the result per run.

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.3, 0.7], [0.1, 0.9]], y_true=[0, 0, 1])
    >>> s = presort(p)
    >>> s.thresholds.tolist(), s.cum_correct.tolist(), s.cum_wrong.tolist()
    ([0.9, 0.7], [0.0, 2.0, 2.0], [0.0, 0.0, 1.0])
    """
    if predictions.has_model_abstentions:
        return _presort_without_declined(predictions)
    confidence = predictions.confidence
    unit = predictions.has_unit_weights  # then the weights are not read (nor made)
    ranked = _group_ranks(confidence)
    if ranked is not None and (unit or _sums_exact_in_any_order(predictions.sample_weight)):
        return _presort_by_group_sums(predictions, *ranked)
    if ranked is None and (unit or _all_ones(predictions.sample_weight)):
        run = _presort_by_sorted_keys(predictions)
        if run is not None:
            return run
    rank, distinct = ranked if ranked is not None else (None, np.zeros(0))
    order = _order_by_rank(rank, distinct.shape[0], confidence)
    thresholds, group_end, cum_accepted, cum_correct, cum_wrong = _sorted_counts(predictions, order)
    run = SortedRun(predictions, thresholds, cum_accepted, cum_correct, cum_wrong)
    _known(run, order=order, group_end=group_end)
    return run


def _sorted_counts(predictions: Predictions, order: np.ndarray) -> tuple:
    """(thresholds, group_end, cum_accepted, cum_correct, cum_wrong) of the items in ``order``."""
    sorted_confidence = predictions.confidence[order]
    n = predictions.n
    group_end = _group_ends([sorted_confidence], n)
    thresholds = sorted_confidence[group_end - 1] if n else np.zeros(0)
    sorted_weight = predictions.sample_weight[order]
    cum_accepted = _cum_at(sorted_weight, group_end)
    cum_correct = cum_wrong = None
    if predictions.has_labels:
        correct = predictions.correct[order]
        cum_correct = _cum_at(np.where(correct, sorted_weight, 0.0), group_end)
        # Summed on its own, not as cum_accepted - cum_correct: the difference can
        # lose a tiny weight (1 + 1e-167 - 1 = 0) and decrease, which the hull needs never to.
        cum_wrong = _cum_at(np.where(correct, 0.0, sorted_weight), group_end)
    return thresholds, group_end, cum_accepted, cum_correct, cum_wrong


def _presort_without_declined(predictions: Predictions) -> SortedRun:
    """``presort`` of a run holding the model's own abstentions: sorted item by item, their
    confidence (``MODEL_ABSTAINED``, below every threshold) puts them in one last group, which is
    dropped from the candidates; their weight stays in ``total_weight``."""
    order = stable_descending_order(predictions.confidence)
    thresholds, group_end, cum_accepted, cum_correct, cum_wrong = _sorted_counts(predictions, order)
    keep = int(np.count_nonzero(thresholds >= 0))  # the declined group, if any, is the last
    declined_weight = float(predictions.sample_weight[predictions.model_abstained].sum())
    cut = slice(0, keep + 1)
    run = SortedRun(predictions, thresholds[:keep], cum_accepted[cut],
                    None if cum_correct is None else cum_correct[cut],
                    None if cum_wrong is None else cum_wrong[cut], declined_weight=declined_weight)
    _known(run, order=order, group_end=group_end[:keep])
    return run


def _known(run: SortedRun, **values) -> None:
    # Seeds the cached properties with what presort computed on the way: a
    # cached_property reads the instance's __dict__ first.
    vars(run).update(values)


def _all_ones(weight: np.ndarray) -> bool:
    return bool((weight == 1.0).all())


def _presort_by_sorted_keys(predictions: Predictions) -> SortedRun | None:
    """Counts per distinct confidence from one sort of (confidence, correct) keys,
    for nearly-distinct confidences and unit weights; None when the keys do not
    apply. Every count is a whole number, exact in float64: identical to
    cumulating the items in sorted order."""
    correct = predictions.correct if predictions.has_labels else None
    counts = descending_counts(predictions.confidence, correct)
    if counts is None:
        return None
    group_end = counts.group_end
    cum_accepted = _with_leading_zero(group_end)
    cum_correct = cum_wrong = None
    if correct is not None:
        cum_wrong = _with_leading_zero(counts.cum_wrong_at_end)
        cum_correct = _with_leading_zero(group_end - counts.cum_wrong_at_end)
    run = SortedRun(predictions, counts.thresholds, cum_accepted, cum_correct, cum_wrong)
    _known(run, group_end=group_end)
    return run


def _with_leading_zero(counts: np.ndarray) -> np.ndarray:
    cumulative = np.empty(counts.shape[0] + 1)
    cumulative[0] = 0.0
    cumulative[1:] = counts
    return cumulative


def _presort_by_group_sums(predictions: Predictions, rank: np.ndarray, thresholds: np.ndarray) -> SortedRun:
    """Counts per distinct confidence by ``bincount``, cumulated over the groups:
    no item is moved. Exact (and identical to cumulating in sorted order) because
    the weights are integers whose total float64 holds exactly."""
    n_groups = thresholds.shape[0]
    # Unit weights are counted as integers: the same whole numbers as summing ones in float64.
    weight = None if predictions.has_unit_weights else predictions.sample_weight
    cum_correct = cum_wrong = None
    if predictions.has_labels:
        key = 2 * rank.astype(np.intp)
        key += predictions.correct
        wrong_correct = np.bincount(key, weights=weight, minlength=2 * n_groups).astype(np.float64, copy=False)
        wrong_correct = wrong_correct.reshape(n_groups, 2)
        accepted = wrong_correct.sum(axis=1)
        cum_correct = np.r_[0.0, np.cumsum(wrong_correct[:, 1])]
        cum_wrong = np.r_[0.0, np.cumsum(wrong_correct[:, 0])]
    else:
        accepted = np.bincount(rank, weights=weight, minlength=n_groups).astype(np.float64, copy=False)
    return SortedRun(predictions, thresholds, np.r_[0.0, np.cumsum(accepted)], cum_correct, cum_wrong, _rank=rank)


def _class_groups_by_counting(run: SortedRun) -> tuple | None:
    """The per-class groups by ``bincount`` over (class, confidence rank) cells, in
    O(n + n_classes n_groups); None unless presort summed per group (exact sums)
    and the cells are few."""
    p = run.predictions
    n_groups = run.n_groups
    n_cells = p.n_classes * n_groups
    if run._rank is None or n_cells > 2 * p.n + (1 << 16):
        return None
    # Cells in increasing index are by class, then by decreasing confidence: class_order's groups.
    cell = p.y_pred * n_groups + run._rank
    count = np.bincount(cell, minlength=n_cells)
    present = np.flatnonzero(count)
    cum_correct = cum_wrong = None
    if p.has_labels:
        key = 2 * cell
        key += p.correct
        wrong_correct = np.bincount(key, weights=p.sample_weight, minlength=2 * n_cells).reshape(n_cells, 2)[present]
        cum_correct = np.cumsum(wrong_correct[:, 1])
        cum_wrong = np.cumsum(wrong_correct[:, 0])
    return np.cumsum(count[present]), present // n_groups, run.thresholds[present % n_groups], cum_correct, cum_wrong


def _class_groups_in_order(run: SortedRun) -> tuple:
    """The per-class groups read off ``class_order``: ends, class, threshold, cumulative correct and wrong."""
    p = run.predictions
    n = p.n
    class_order = run.class_order
    class_sorted_pred = p.y_pred[class_order]
    class_sorted_conf = p.confidence[class_order]
    class_group_end = _group_ends([class_sorted_pred, class_sorted_conf], n)
    last = class_group_end - 1
    class_cum_correct = class_cum_wrong = None
    if p.has_labels and n:
        class_weight = p.sample_weight[class_order]
        class_correct = p.correct[class_order]
        class_cum_correct = np.cumsum(np.where(class_correct, class_weight, 0.0))[last]
        class_cum_wrong = np.cumsum(np.where(class_correct, 0.0, class_weight))[last]
    group_class = class_sorted_pred[last] if n else np.zeros(0, np.int64)
    group_threshold = class_sorted_conf[last] if n else np.zeros(0)
    return class_group_end, group_class, group_threshold, class_cum_correct, class_cum_wrong


# ------------------------------------------------------------ value primitive
# Every value question of the package reduces to these: tuning, curves, VOC,
# the comparison table, monitoring and the bootstrap all call them.
def dimensionless_value(n_correct, n_wrong, omega, n_items):
    """Seed 000's dimensionless value per item ``(N_correct - omega N_wrong) / N``.

    0 = always abstain, 1 = perfect. Broadcasts over array arguments (e.g.
    counts of shape (batch, m) against omegas of shape (m,)). The caller
    decides what an empty run (``n_items == 0``) is worth.
    """
    return (n_correct - omega * n_wrong) / n_items


def item_gains(predictions: Predictions, values: Values, *, estimate: bool = False) -> np.ndarray:
    """Weighted gain over abstaining of acting on each item's predicted class.

    Returns shape (n,). With ``estimate=False`` the gain uses the true label;
    with ``estimate=True`` it is the expectation under the model's own
    probabilities (label-free; only as good as the calibration). A run with
    only top-label confidence supports the simple use case only, where the
    predicted class is right with probability ``confidence``.
    """
    matrix = values.for_classes(predictions.classes)
    gains = matrix.gains  # (C, C): true x predicted
    y_pred = predictions.y_pred
    if not estimate:
        predictions.require_labels("the realised value")
        per_item = gains[predictions.y_true, y_pred]
    elif predictions.has_proba:
        per_item = np.einsum("ik,ki->i", predictions.normalised_proba(), gains[:, y_pred])
    else:
        if matrix.as_use_case() is None:
            predictions.require_proba("label-free estimation with a per-class value matrix")
        masked = np.where(np.eye(matrix.n_classes, dtype=bool), np.inf, gains)
        worst_wrong = masked.min(axis=0)  # (C,) per predicted class
        confidence = predictions.confidence
        per_item = confidence * np.diag(gains)[y_pred] + (1 - confidence) * worst_wrong[y_pred]
    return per_item * predictions.sample_weight


def cumulative_gain(run: SortedRun, values, *, estimate: bool = False) -> np.ndarray:
    """Gain over abstaining of accepting the ``k`` most confident groups.

    Parameters
    ----------
    run : SortedRun
    values : UseCase or ValueMatrix
    estimate : bool
        Expected gains from the model's probabilities instead of the labels.

    Returns
    -------
    ndarray of shape (n_groups + 1,)
        Entry ``k`` accepts ``confidence >= thresholds[k - 1]``; entry 0 accepts
        nothing (0). In the currency of ``values``, weighted. O(n_groups) for a
        use case on a labelled run (counts cached at presort), O(n) otherwise.

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.7, 0.3], [0.4, 0.6]], y_true=[0, 1, 1])
    >>> run = presort(p)
    >>> cumulative_gain(run, UseCase(1, 0, -2)).tolist()
    [0.0, 1.0, -1.0, 0.0]
    >>> run.value_at(0.9, omega=2.0), run.coverage_at(0.9)
    (0.3333333333333333, 0.3333333333333333)
    """
    use_case = values.use_case
    if use_case is not None and not estimate and run.cum_correct is not None:
        return use_case.gain_correct * run.cum_correct + use_case.gain_wrong * run.cum_wrong
    gains = item_gains(run.predictions, values, estimate=estimate)[run.order]
    return np.r_[0.0, np.cumsum(gains)[run.group_end - 1]] if gains.size else np.zeros(1)


def class_cumulative_gain(run: SortedRun, values, *, estimate: bool = False) -> np.ndarray:
    """Per-class form of :func:`cumulative_gain`, for per-class thresholds.

    Returns
    -------
    ndarray of shape (n_class_groups,)
        Gain cumulated along ``run.class_order`` up to the end of each (class,
        confidence) group, not reset between classes: the input of
        :func:`best_prefix_per_class_cumulative`.
    """
    use_case = values.use_case
    if use_case is not None and not estimate and run.class_cum_correct is not None:
        return use_case.gain_correct * run.class_cum_correct + use_case.gain_wrong * run.class_cum_wrong
    gains = item_gains(run.predictions, values, estimate=estimate)
    return _class_cumulative(gains, run)


def _class_cumulative(gain: np.ndarray, run: SortedRun) -> np.ndarray:
    if run.class_group_end.size == 0:
        return np.zeros(0)
    return np.cumsum(gain[run.class_order])[run.class_group_end - 1]


def acceptance_limits(confidence) -> np.ndarray:
    """Largest omega at which the calibrated rule still accepts each confidence.

    The calibrated threshold is ``omega / (1 + omega)`` (seed 000 eq. 5b), so a
    confidence ``c`` is accepted while ``omega <= c / (1 - c)``. The float test
    ``omega / (1 + omega) <= c`` flips a few ulps away from that quotient, so
    the quotient is moved to the last float the test accepts (``inf`` for
    ``c = 1``, 0 for ``c = 0``). Shape of ``confidence``.

    The test is not monotone at the last ulp, so values at given omegas should
    apply the test itself (``run.groups_accepted(omega / (1 + omega))``); the
    limits serve as curve breakpoints, where an ulp-wide sliver is harmless.

    Examples
    --------
    >>> acceptance_limits([0.5, 0.8, 1.0]).tolist()
    [1.0, 4.000000000000002, inf]
    """
    confidence = np.asarray(confidence, dtype=np.float64)
    limits = np.full(confidence.shape, np.inf)
    finite = confidence < 1.0
    c = confidence[finite]

    def accepted(w):
        return threshold_for_omega(w) <= c

    # The flip lies within about (1 + omega) ulps of the quotient, too far to
    # step to for c near 1: bisect on the floats' bit patterns instead (positive
    # floats order as their int64 views), from a narrow bracket when it holds.
    # At most 64 halvings: a loop over bits, not items.
    quotient = c / (1.0 - c)
    low = quotient * (1 - 2.0**-20)
    low = np.where(accepted(low), low, 0.0)  # omega = 0 is accepted by every c >= 0
    high = quotient * (1 + 2.0**-20)
    high = np.where(accepted(high), np.inf, high)  # inf / inf is NaN: never accepted
    low_bits, high_bits = low.view(np.int64), high.view(np.int64)
    while np.any(high_bits - low_bits > 1):
        middle = low_bits + (high_bits - low_bits) // 2
        ok = accepted(middle.view(np.float64))
        low_bits = np.where(ok, middle, low_bits)
        high_bits = np.where(ok, high_bits, middle)
    limits[finite] = low_bits.view(np.float64)
    return limits


def best_prefix(cum_gain: np.ndarray) -> int:
    """Index maximising ``cum_gain`` (shape (n_groups + 1,), index 0 = accept none).

    Ties go to the smallest index: the highest threshold, i.e. the fewest
    automated decisions for the same value.
    """
    return int(np.argmax(cum_gain))


def best_prefix_per_class_cumulative(at_end: np.ndarray, run: SortedRun) -> tuple[np.ndarray, np.ndarray]:
    """Best per-class threshold, exactly and without a loop over items.

    Parameters
    ----------
    at_end : ndarray of shape (n_class_groups,)
        The gain over abstaining cumulated along ``run.class_order`` up to the
        end of each (class, confidence) group (:func:`class_cumulative_gain`).
    run : SortedRun

    Returns
    -------
    thresholds : ndarray of shape (n_classes,)
        Best threshold per predicted class; NaN where accepting nothing is best
        (or the class is never predicted).
    best_gain : ndarray of shape (n_classes,)
        The gain of that choice (0 for "accept nothing").
    """
    n_classes = run.predictions.n_classes
    thresholds = np.full(n_classes, np.nan)
    best_gain = np.zeros(n_classes)
    if run.class_group_end.size == 0:
        return thresholds, best_gain
    # The groups follow the class order: class k's are at_end[bounds[k]:bounds[k + 1]]. A loop over classes
    # (argmax: the first best group, the highest threshold) reads each group twice; a pass over all of them
    # with index arrays read it about ten times (4x slower on 10 classes of 10^4 confidences each).
    bounds = np.searchsorted(run.class_group_class, np.arange(n_classes + 1), side="left").tolist()
    for k in range(n_classes):
        start, stop = bounds[k], bounds[k + 1]
        if start == stop:
            continue
        prefix = at_end[start:stop] - (at_end[start - 1] if start else 0.0)  # the gain within the class
        best = int(prefix.argmax())
        if prefix[best] > 0:  # ties with "accept nothing" abstain
            thresholds[k] = run.class_group_threshold[start + best]
            best_gain[k] = prefix[best]
    return thresholds, best_gain


# ------------------------------------------------ the value primitive, per-item form
def group_cumulative(run: SortedRun, per_item) -> np.ndarray:
    """Per-item amounts summed over the ``k`` most confident groups.

    Parameters
    ----------
    run : SortedRun
    per_item : array-like of shape (n,)
        Weighted amounts (e.g. gains over abstaining) in the run's original order.

    Returns
    -------
    ndarray of shape (n_groups + 1,)
        Indexed like :func:`cumulative_gain`: entry 0 accepts nothing (0),
        entry ``k`` accepts ``confidence >= thresholds[k - 1]``.
    """
    ordered = np.asarray(per_item, dtype=np.float64)[run.order]
    return np.r_[0.0, np.cumsum(ordered)[run.group_end - 1]] if ordered.size else np.zeros(1)


def class_cumulative_weight(run: SortedRun) -> np.ndarray:
    """Weighted items cumulated along ``run.class_order`` up to the end of each
    (class, confidence) group, shape (n_class_groups,): the accepted weight that
    goes with :func:`class_cumulative_gain`."""
    if run.class_cum_correct is not None:  # counts cached at presort: O(n_class_groups)
        return run.class_cum_correct + run.class_cum_wrong
    return _class_cumulative(run.predictions.sample_weight, run)


def run_cache(run: SortedRun) -> dict:
    """Where a presorted run keeps what its moves reuse (the hulls of ``hull``, the per-class search of
    ``fitting``): with the run, so they go with it. Here, not in ``hull``, so that a small run's fit, which
    builds no hull, need not import it."""
    return vars(run).setdefault("_hulls", {})
