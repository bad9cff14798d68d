"""Sorting confidences by their float bits, for runs whose confidences are nearly all distinct.

Hashing equal confidences together (``sorting._group_ranks``) pays only when
values repeat. Raw model scores at full precision are nearly all distinct:
then the work is one sort, and the fastest sort NumPy has is of plain numbers
(a vectorised quicksort), not a stable argsort (a merge sort of indices).

Two facts make a plain sort enough:

- A non-negative float64 (``+0.0`` up to ``inf``, no NaN, no ``-0.0``) orders
  exactly as its bit pattern read as an int64; below 2.0 the two top bits are
  zero, so the pattern shifted left by one still fits, with room for one more
  bit: whether the item is correct.
- With unit weights, every cumulative count is a whole number that float64
  holds exactly, whatever the order of the sum; so counts read off sorted keys
  are bit for bit the cumulative sums of the items in their sorted order.

The item order itself, when a question needs it, is a quicksort of the
confidences whose ties are then put back in index order: the same permutation
as a stable sort.
"""

from __future__ import annotations

import numpy as np

# Bit pattern of 2.0: every non-negative float below it has its two top bits clear.
_BELOW_TWO = np.float64(2.0).view(np.int64)


class DescendingCounts:
    """Distinct confidences and cumulative counts, from the most confident down.

    ``thresholds`` (float64, decreasing), ``group_end`` (int64, exclusive end
    of each group in the stable descending order) and, for a labelled run,
    ``cum_wrong_at_end`` (int64, wrong items up to each group's end).

    A plain slotted class, not a dataclass: ``sorting`` reads its three arrays once and nothing compares,
    hashes or copies it, while a dataclass costs about a millisecond of every fresh process that imports it.
    """

    __slots__ = ("thresholds", "group_end", "cum_wrong_at_end")

    def __init__(self, thresholds: np.ndarray, group_end: np.ndarray, cum_wrong_at_end: np.ndarray | None):
        self.thresholds = thresholds
        self.group_end = group_end
        self.cum_wrong_at_end = cum_wrong_at_end


def _sortable_bits(confidence: np.ndarray) -> np.ndarray | None:
    """The int64 view of ``confidence`` when it orders as the values do and leaves
    the top bit free: float64, every value in [+0.0, 2.0); None otherwise."""
    if confidence.dtype != np.float64 or confidence.ndim != 1 or confidence.size == 0:
        return None
    bits = np.ascontiguousarray(confidence).view(np.int64)
    if bits.min() < 0 or bits.max() >= _BELOW_TWO:  # -0.0, negatives, NaN, values >= 2
        return None
    return bits


def descending_counts(confidence: np.ndarray, correct: np.ndarray | None) -> DescendingCounts | None:
    """Group the items by confidence, highest first, counting each group's items
    and wrong items, with one sort of int64 keys; None when the confidences are
    not all in [+0.0, 2.0) (the caller then sorts the items themselves)."""
    bits = _sortable_bits(confidence)
    if bits is None:
        return None
    n = bits.shape[0]
    key = np.left_shift(bits, 1)
    if correct is not None:
        np.bitwise_or(key, correct, out=key)
    # Inverting reverses the order: an ascending sort of the inverted keys puts the
    # highest confidence first, and a correct item's inverted low bit says "wrong".
    np.invert(key, out=key)
    key.sort()
    value_key = np.right_shift(key, 1)
    change = value_key[1:] != value_key[:-1]
    n_groups = int(np.count_nonzero(change)) + 1
    if n_groups == n:  # all distinct: every item ends a group, no gather needed
        group_end = np.arange(1, n + 1, dtype=np.int64)
        last = value_key
    else:
        group_end = np.empty(n_groups, dtype=np.int64)
        group_end[:-1] = np.flatnonzero(change)
        group_end[:-1] += 1
        group_end[-1] = n
        last = value_key[group_end - 1]
    thresholds = np.invert(last, out=last).view(np.float64)
    cum_wrong = None
    if correct is not None:
        wrong = np.bitwise_and(key, 1, out=key)
        cum_wrong = np.cumsum(wrong, out=wrong)
        if n_groups != n:
            cum_wrong = cum_wrong[group_end - 1]
    return DescendingCounts(thresholds, group_end, cum_wrong)


def stable_descending_order(confidence: np.ndarray) -> np.ndarray:
    """``np.argsort(-confidence, kind="stable")``, by a quicksort whose ties are
    then put back in index order (identical; about 2x faster on distinct float64)."""
    if _sortable_bits(confidence) is None:
        return np.argsort(-confidence, kind="stable")
    n = confidence.shape[0]
    order = np.argsort(np.negative(confidence))
    ranked = confidence[order]
    tie = ranked[1:] == ranked[:-1]
    if not tie.any():
        return order
    # Positions inside a run of equal confidences, and which run each is in.
    in_tie = np.zeros(n, dtype=bool)
    in_tie[1:] = tie
    in_tie[:-1] |= tie
    positions = np.flatnonzero(in_tie)
    run = np.concatenate(([0], np.cumsum(~tie)))[positions]
    # One int64 sort of (run, index) puts each run's indices in increasing order.
    combined = run * n + order[positions]
    combined.sort()
    order[positions] = combined % n
    return order
