"""Threshold rules served in one pass over the probabilities: the input checks, the argmax and the rule together.

``ServingPolicy.decide`` (and ``RejectOptionClassifier.predict`` and ``.decide``) for a threshold rule,
per-class thresholds or two tiers, with no recalibration or a temperature, reads each block of rows once:
it checks the rows as ``Predictions.from_proba`` does (finite, non-negative, summing to 1 within the
tolerance), finds each row's argmax and maximum as ``_model/predictions.py`` does, compares the maximum
(capped at 1) with the thresholds and writes the label of each row's action into the output, while the
block is still in cache. With a temperature, the rows whose bounds straddle a threshold
(``_serve/screen.py``) are screened, and recomputed in float64 where the screen cannot tell. No matrix of
the size of the input is made (neither a float64 copy of float32 input, nor the confidences, predicted
classes and action codes of the general path).

Where every threshold lies above ``(1 + tolerance) / 2`` (with a temperature: where the bounds hand off
every row whose maximum lies below such a value), a row can reach one only through its single entry
there, which is then its maximum and its first argmax, and every other row is handed off: no argmax at
all (:func:`_few_reach_codes`). Otherwise each block is copied class-major into a tile in cache and its
argmax taken there (:func:`_tile_codes`).

At the first doubt (a bad entry, a sum off, a maximum that is not above zero) :func:`threshold_labels`
returns None and the caller takes the general path, whose checks name the rows at fault: the fast path
never accepts an input the general path refuses, and gives the same labels for every input it accepts.
"""

from __future__ import annotations

import numpy as np

from .._model.predictions import _FEW_CLASSES, _class_major, _rows_sum_to_one, _top_of_columns
from .screen import Work, block_reach, bounds_reach, screen_reach, temperature_cutoffs

# Rows per block: two columns are read in place (strided views); more are copied class-major into a tile
# (as ``_checked_top`` does) whose whole-row ufuncs then run at vector speed.
_ROWS_TWO_CLASSES = 65536
_ROWS_PER_TILE = 16384
# Rows per block where no argmax is needed (``_few_reach_codes``): the block stays in cache between its few
# passes (10^6 x 10 float64 with a temperature, 2026-11-29, load 23: best 69 / median 85 ms in blocks of
# 16,384 rows, 76 / 97 in 8,192, 101 / 128 in 4,096).
_ROWS_FEW_REACH = 16384
# Rows screened together with a temperature (``_Doubtful``).
_DOUBTFUL_BATCH = 16384


def threshold_labels(proba: np.ndarray, thresholds, table: np.ndarray, sum_tolerance: float,
                     temperature: float | None = None) -> np.ndarray | None:
    """The label of each row's action under a threshold rule or two tiers; None at the first doubt.

    Parameters
    ----------
    proba : ndarray of shape (n, n_classes), float32 or float64
        Raw probabilities in the order of the classes (not yet checked).
    thresholds : sequence of (float or ndarray of shape (n_classes,)), length 1 or 2
        The automatic threshold (one, or one per predicted class) and, for two tiers, the one at which a
        person confirms; ``+inf`` is never reached, ``-inf`` always.
    table : ndarray of shape (n_classes * (len(thresholds) + 1),)
        The labels: ``table[y]`` for a row acted on as class ``y``, ``table[C + y]`` for a row one tier
        down (a person confirms, or, with one threshold, hands off), ``table[2 C + y]`` handed off (the
        serving policy's tables give a handed-off row one label whatever its class).
    sum_tolerance : float
        How far from 1 a row may sum.
    temperature : float, optional
        The stored temperature (applied to ``log(clip(proba, 1e-12, 1))``); None for no recalibration.

    Returns
    -------
    ndarray of shape (n,), dtype of ``table``, or None
    """
    n, n_classes = proba.shape
    if n == 0 or not 2 <= n_classes <= _FEW_CLASSES or proba.dtype not in (np.float32, np.float64):
        return None
    per_class = [np.ndim(t) > 0 for t in thresholds]
    thresholds = [np.asarray(t, dtype=np.float64) if ndim else float(t) for t, ndim in zip(thresholds, per_class)]
    cutoffs = None if temperature is None else temperature_cutoffs(n_classes, temperature, sum_tolerance)
    bounds = None if cutoffs is None else [cutoffs(t) for t in thresholds]
    rule = _Rule(thresholds, per_class, temperature, bounds, n_classes)
    codes = np.empty(n, dtype=np.intp)  # each row's label index (see _Rule.label_index)
    handed_off = table[n_classes * len(thresholds):]  # one label, whatever the class (checked, not assumed)
    cut = None if n_classes == 2 or not (handed_off == handed_off[0]).all() else _lowest_reach(rule, sum_tolerance)
    with np.errstate(over="ignore", invalid="ignore"):
        if cut is not None:
            done = _few_reach_codes(proba, rule, cut, sum_tolerance, codes)
        else:
            done = _tile_codes(proba, rule, sum_tolerance, codes)
    return table[codes] if done else None  # one gather of the whole (faster than one per block, for objects 2x)


class _Rule:
    """The thresholds of :func:`threshold_labels`, how a row is judged against them and the label index that
    follows, with the scratch arrays of one call (none shared between calls, which may run in threads)."""

    def __init__(self, thresholds, per_class, temperature, bounds, n_classes):
        self.thresholds, self.per_class, self.temperature, self.bounds = thresholds, per_class, temperature, bounds
        self.n_classes = n_classes
        self.work = None

    def scratch(self, rows: int, batch: int = 0) -> None:
        """Scratch arrays for blocks of up to ``rows`` rows (and label indices of up to ``batch``)."""
        self.missed = np.empty(max(rows, batch), dtype=np.intp)
        if self.temperature is not None:
            self.work = Work(self.n_classes, rows, len(self.thresholds))

    def reach(self, block, y_pred, confidence) -> list[np.ndarray]:
        """For each threshold, whether each row of ``block`` (argmax ``y_pred``, maximum ``confidence`` capped
        at 1) reaches it: its (recalibrated) confidence is at least the threshold."""
        if self.temperature is None:
            return [np.greater_equal(confidence, t[y_pred] if ndim else t)
                    for t, ndim in zip(self.thresholds, self.per_class)]
        return block_reach(block, y_pred, confidence, self.temperature, self.thresholds, self.bounds, self.work)

    def label_index(self, y_pred, reached) -> None:
        """Write over ``y_pred`` (predicted classes) each row's label index: ``y + C * (the number of tiers
        not reached)``. A row that reaches the automatic threshold counts as reaching the lower one too (as
        ``Policy.tiers`` reads them)."""
        n_classes, step = self.n_classes, self.missed[:len(y_pred)]
        for k, verdict in enumerate(reached):
            if k + 1 < len(reached):
                np.logical_or(reached[k + 1], verdict, out=reached[k + 1])
            np.multiply(verdict, -n_classes, out=step, casting="unsafe")
            np.add(y_pred, step, out=y_pred)
        np.add(y_pred, n_classes * len(reached), out=y_pred)


class _Doubtful:
    """Rows whose temperature bounds straddle a threshold, copied while their block is in cache and screened
    (``screen_reach``) a batch at a time: a few calls per batch instead of a dozen per block."""

    def __init__(self, rule: _Rule, dtype, capacity: int):
        self.rule, self.capacity, self.fill = rule, capacity, 0
        self.rows = np.empty((capacity, rule.n_classes), dtype=dtype)
        self.where = np.empty(capacity, dtype=np.intp)  # their rows in the input
        self.y_pred, self.confidence = np.empty(capacity, dtype=np.intp), np.empty(capacity)
        self.work = Work(rule.n_classes, capacity, len(rule.thresholds))

    def add(self, block, start: int, at, y_pred, confidence, codes) -> None:
        """Keep the rows ``at`` of ``block`` (the block's first row is the input's row ``start``), screening
        the batch first when they would not fit."""
        m = len(at)
        if self.fill + m > self.capacity:
            self.settle(codes)
        stop = self.fill + m
        np.take(block, at, axis=0, out=self.rows[self.fill:stop], mode="clip")  # unbuffered
        np.add(at, start, out=self.where[self.fill:stop])
        self.y_pred[self.fill:stop], self.confidence[self.fill:stop] = y_pred, confidence
        self.fill = stop

    def settle(self, codes) -> None:
        """Screen the rows kept and write their label indices into ``codes``."""
        m, rule = self.fill, self.rule
        if m:
            y_pred = self.y_pred[:m]
            reached = screen_reach(self.rows[:m], y_pred, self.confidence[:m], rule.temperature, rule.thresholds,
                                   self.work)
            rule.label_index(y_pred, reached)
            codes[self.where[:m]] = y_pred
        self.fill = 0


def _lowest_reach(rule: _Rule, sum_tolerance: float) -> float | None:
    """The raw confidence below which a row reaches no threshold (with a temperature, where its bounds say
    so: ``never`` of :func:`temperature_cutoffs`), when it is above ``(1 + sum_tolerance) / 2``; else None.

    Then a row that passes the checks holds at most one entry at or above it (two would sum to more than
    ``1 + sum_tolerance``), and that entry is its maximum and its first argmax: a row without one is handed
    off whatever its argmax (the handed-off label is the same for every class)."""
    if not np.isfinite(sum_tolerance):
        return None
    if rule.temperature is None:
        lowest = rule.thresholds
    elif rule.bounds is None:
        return None
    else:
        lowest = [never for _, never in rule.bounds]
    cut = min(float(np.min(low)) for low in lowest)
    return cut if cut > (1.0 + sum_tolerance) / 2 * (1 + 1e-9) else None


def _few_reach_codes(proba, rule: _Rule, cut: float, sum_tolerance: float, codes) -> bool:
    """:func:`threshold_labels`'s label indices when a row reaches a threshold only through one entry of at
    least ``cut`` (:func:`_lowest_reach`); False at the first doubt.

    No argmax: one comparison of every entry with ``cut`` finds the few rows that can reach a threshold and
    their predicted class; the others are handed off. The comparison reads the entries' bits as unsigned
    integers, in which a negative entry (its sign bit set) and NaN also compare above ``cut``: they are
    found among those few, no pass of their own."""
    n, n_classes = proba.shape
    rows_per = _ROWS_FEW_REACH
    batch = max(_DOUBTFUL_BATCH, rows_per)
    rule.scratch(rows_per, batch)
    unsigned = np.uint64 if proba.dtype == np.float64 else np.uint32
    low = proba.dtype.type(cut)
    if low < cut:  # the least float of the entries' type at or above cut: the same comparisons
        low = np.nextafter(low, proba.dtype.type(np.inf))
    bits = low.view(unsigned)
    above = np.empty(rows_per * n_classes, dtype=bool)
    sums, ones = np.empty(rows_per, dtype=proba.dtype), np.ones(n_classes, dtype=proba.dtype)
    inner = _inner_tolerance(sum_tolerance, n_classes, proba.dtype)
    handed_off = n_classes * len(rule.thresholds)
    doubtful = None if rule.temperature is None else _Doubtful(rule, proba.dtype, batch)
    for start in range(0, n, rows_per):
        block = proba[start:start + rows_per]
        rows = block.shape[0]
        flags = above[:rows * n_classes]
        # The flags in the block's own order (row-major, or class-major for column-major input): its index
        # in the block's row (and the row's in its class) is the flag's index in the flags.
        by_class = block.strides[0] < block.strides[1]
        entries = block.T if by_class else block
        np.greater_equal(entries.view(unsigned), bits, out=flags.reshape(entries.shape))
        if not _within(np.matmul(block, ones, out=sums[:rows]), inner):
            return False
        found = np.flatnonzero(flags)
        if by_class:
            y_pred, at = np.divmod(found, rows)
        else:
            at, y_pred = np.divmod(found, n_classes)
        top = np.take(entries.reshape(-1), found) if entries.flags.c_contiguous else block[at, y_pred]
        if not np.all(top >= low):  # a negative entry, or NaN
            return False
        codes[start:start + rows] = handed_off
        if not found.size:
            continue
        confidence = np.minimum(top, 1.0, dtype=np.float64)
        if doubtful is None:
            reached = rule.reach(block, y_pred, confidence)
        else:  # the bounds now, the rows they leave in doubt with a batch of them (their codes written then)
            reached, chosen = bounds_reach(y_pred, confidence, rule.thresholds, rule.bounds, rule.work)
            if chosen.size:
                doubtful.add(block, start, at[chosen], y_pred[chosen], confidence[chosen], codes)
        rule.label_index(y_pred, reached)
        codes[start + at] = y_pred
    if doubtful is not None:
        doubtful.settle(codes)
    return True


def _tile_codes(proba, rule: _Rule, sum_tolerance: float, codes) -> bool:
    """:func:`threshold_labels`'s label indices by each row's argmax and maximum; False at the first doubt."""
    n, n_classes = proba.shape
    two = n_classes == 2
    rows_per = _ROWS_TWO_CLASSES if two else _ROWS_PER_TILE
    rule.scratch(rows_per)
    tile = None if two else np.empty((n_classes, rows_per), dtype=proba.dtype)
    total, top = np.empty(rows_per, dtype=np.float64 if two else proba.dtype), np.empty(rows_per)
    ones = np.ones(n_classes, dtype=proba.dtype)
    inner = _inner_tolerance(sum_tolerance, n_classes, proba.dtype)
    equal = np.empty(rows_per, dtype=bool)
    for start in range(0, n, rows_per):
        block = proba[start:start + rows_per]
        rows = block.shape[0]
        if two:
            columns = (block[:, 0], block[:, 1])
        else:
            columns = _class_major(block, tile)
        # The checks of ``_checked_top``: the row sums (two columns: the same float64 sums; more: one BLAS
        # product of the tile with ones, trusted only within ``inner``, see there), the smallest entry.
        if two:
            if not _rows_sum_to_one(columns, total[:rows], sum_tolerance):
                return False
        elif not _within(np.matmul(ones, columns, out=total[:rows]), inner):
            return False
        if block.min() < 0:
            return False
        confidence, y_pred = top[:rows], codes[start:start + rows]
        if two:  # numpy's argmax of two finite numbers: the second only when it is larger
            np.maximum(columns[0], columns[1], out=confidence)
            if not confidence.min() > 0:
                return False
            np.greater(columns[1], columns[0], out=y_pred)
        elif not _top_of_columns(columns, y_pred, confidence, equal[:rows]):
            return False
        if confidence.max() > 1.0:  # a row within the tolerance can hold 1.0000001: confidences stay <= 1
            np.minimum(confidence, 1.0, out=confidence)
        rule.label_index(y_pred, rule.reach(block, y_pred, confidence))
    return True


def _inner_tolerance(sum_tolerance: float, n_classes: int, dtype) -> float:
    """How far from 1 a row sum computed by a BLAS product (:func:`_within`) may be for the row to be sure to pass the
    general path's check (float64 sums, class after class, or einsum's: within ``sum_tolerance``).

    Both sums of n_classes non-negative terms are within ``(n_classes - 1) u / (1 - (n_classes - 1) u)`` of the
    exact sum relative to it (any order of the additions, with or without fused multiply-adds), ``u`` the
    unit roundoff of their precision: float32 or float64 for the BLAS product, float64 for the general
    path. A row whose BLAS sum is within ``sum_tolerance`` minus twice the sum of those bounds (at a sum up to
    ``2 + sum_tolerance``) passes it; one that is not is handed to the general path, which decides."""
    if not np.isfinite(sum_tolerance):
        return sum_tolerance
    bound = 2 * n_classes * (np.finfo(dtype).eps + np.finfo(np.float64).eps)  # eps = 2 u: room to spare
    return sum_tolerance - bound * (2 + sum_tolerance)


def _within(sums: np.ndarray, inner: float) -> bool:
    """Whether every row sum (of :func:`threshold_labels`'s BLAS products, four times as fast as adding the
    classes one after another) is within ``inner`` of 1 (:func:`_inner_tolerance`). NaN, an infinity or an
    overflow makes a sum, and then its extreme, non-finite."""
    low, high = sums.min(), sums.max()
    return bool(np.isfinite(low) and np.isfinite(high) and low >= 1.0 - inner and high <= 1.0 + inner)
