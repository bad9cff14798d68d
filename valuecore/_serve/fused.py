"""Threshold rules served in one pass over the probabilities: the input checks, the argmax and the rule together.

``ServingPolicy.decide`` (and ``RejectOptionClassifier.predict`` and ``.decide``) for a threshold rule,
per-class thresholds or two tiers, with no recalibration or a temperature, reads each block of rows once:
it checks the rows as ``Predictions.from_proba`` does (finite, non-negative, summing to 1 within the
tolerance: the same float64 sums, the same comparisons), finds each row's argmax and maximum as
``_model/predictions.py`` does, compares the maximum (capped at 1) with the thresholds and writes the
label of each row's action into the output, while the block is still in cache. With a temperature, the
rows whose bounds straddle a threshold (``_serve/screen.py``) are screened, and recomputed in float64 where
the screen cannot tell, within their own block. No matrix of the size of the input is made (neither a float64
copy of float32 input, nor the confidences, predicted classes and action codes of the general path).

At the first doubt (a bad entry, a sum off, a maximum that is not above zero) :func:`threshold_labels`
returns None and the caller takes the general path, whose checks name the rows at fault: the fast path
never accepts an input the general path refuses, and gives the same labels for every input it accepts.
"""

from __future__ import annotations

import numpy as np

from .._model.predictions import _FEW_CLASSES, _class_major, _rows_sum_to_one, _top_of_columns
from .screen import Work, block_reach, temperature_cutoffs

# Rows per block: two columns are read in place (strided views); more are copied class-major into a tile
# (as ``_checked_top`` does) whose whole-row ufuncs then run at vector speed.
_ROWS_TWO_CLASSES = 65536
_ROWS_PER_TILE = 16384


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
        down (a person confirms, or, with one threshold, hands off), ``table[2 C + y]`` handed off.
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
    two = n_classes == 2
    rows_per = _ROWS_TWO_CLASSES if two else _ROWS_PER_TILE
    per_class = [np.ndim(t) > 0 for t in thresholds]
    thresholds = [np.asarray(t, dtype=np.float64) if ndim else float(t) for t, ndim in zip(thresholds, per_class)]
    cutoffs = None if temperature is None else temperature_cutoffs(n_classes, temperature, sum_tolerance)
    bounds = None if cutoffs is None else [cutoffs(t) for t in thresholds]
    tile = None if two else np.empty((n_classes, rows_per), dtype=proba.dtype)
    total, top = np.empty(rows_per, dtype=np.float64 if two else proba.dtype), np.empty(rows_per)
    ones = np.ones(n_classes, dtype=proba.dtype)
    inner = _inner_tolerance(sum_tolerance, n_classes, proba.dtype)
    equal = np.empty(rows_per, dtype=bool)
    missed = np.empty(rows_per, dtype=np.intp)
    work = None if temperature is None else Work(n_classes, rows_per, len(thresholds))
    codes = np.empty(n, dtype=np.intp)  # each row's predicted class, then the index of its label
    with np.errstate(over="ignore", invalid="ignore"):
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
                    return None
            elif not _sums_within(columns, ones, total[:rows], inner):
                return None
            if block.min() < 0:
                return None
            confidence, y_pred = top[:rows], codes[start:start + rows]
            if two:  # numpy's argmax of two finite numbers: the second only when it is larger
                np.maximum(columns[0], columns[1], out=confidence)
                if not confidence.min() > 0:
                    return None
                np.greater(columns[1], columns[0], out=y_pred)
            elif not _top_of_columns(columns, y_pred, confidence, equal[:rows]):
                return None
            if confidence.max() > 1.0:  # a row within the tolerance can hold 1.0000001: confidences stay <= 1
                np.minimum(confidence, 1.0, out=confidence)
            if temperature is None:
                reached = [np.greater_equal(confidence, t[y_pred] if ndim else t)
                           for t, ndim in zip(thresholds, per_class)]
            else:
                reached = block_reach(block, y_pred, confidence, temperature, thresholds, bounds, work)
            # The label's index, in place of the predicted class y: y + C * (the number of tiers not reached);
            # a row that reaches the automatic threshold counts as reaching the lower one too (as
            # ``Policy.tiers`` reads them).
            step = missed[:rows]
            for k, verdict in enumerate(reached):
                if k + 1 < len(reached):
                    np.logical_or(reached[k + 1], verdict, out=reached[k + 1])
                np.multiply(verdict, -n_classes, out=step, casting="unsafe")
                np.add(y_pred, step, out=y_pred)
            np.add(y_pred, n_classes * len(reached), out=y_pred)
    return table[codes]  # one gather of the whole (faster than one per block, for objects twice as fast)


def _inner_tolerance(sum_tolerance: float, n_classes: int, dtype) -> float:
    """How far from 1 a row sum computed by :func:`_sums_within` may be for the row to be sure to pass the
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


def _sums_within(columns: np.ndarray, ones: np.ndarray, sums: np.ndarray, inner: float) -> bool:
    """Whether every row (a column of the class-major tile ``columns``) sums to 1 within ``inner``, the
    sums taken by one BLAS matrix-vector product into ``sums`` (four times as fast as adding the classes one
    after another). NaN, an infinity or an overflow makes a sum, and then its extreme, non-finite."""
    np.matmul(ones, columns, out=sums)
    low, high = sums.min(), sums.max()
    return bool(np.isfinite(low) and np.isfinite(high) and low >= 1.0 - inner and high <= 1.0 + inner)

