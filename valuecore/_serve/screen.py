"""Threshold decisions under temperature scaling without the recalibrated probability matrix.

A threshold rule reads one number per item, the recalibrated confidence ``softmax(log p / T)[y]``,
and compares it with a threshold. :func:`screened_temperature_confidence` estimates that number in
float32 (numpy's vectorised ``log`` and ``exp``; float64's are scalar calls on CPUs without AVX-512,
each about twice an argmax over the matrix), with a bound on how far the estimate can be from the
float64 value :class:`~valuecore.calibration.Calibrator` computes. Only the items whose estimate lies
within its bound of a threshold are recomputed in float64, by the very function the pipeline uses,
row by row the same bits. So every comparison with the thresholds is the float64 one, exactly.

Most rows need not even the estimate: :func:`temperature_reaches` first bounds each row's recalibrated
confidence by its raw confidence alone, one number per row (see there), and hands only the rows whose
bounds straddle a threshold to the float32 screen.
"""

from __future__ import annotations

import math

import numpy as np

from .._model.recalibration import _PROBA_FLOOR, _temperature_softmax

_ROWS_PER_BLOCK = 1 << 12
_EPS32 = 2.0 ** -24  # float32 unit roundoff
# numpy's float32 log and exp are within 4 units in the last place (its documented maximum: 3.83 and
# 2.52 for the SIMD loops; libm's are within 1). The bound below assumes 4 and is then doubled.
_SAFETY = 2.0
_FLOOR32 = np.float32(_PROBA_FLOOR)
_EPS64 = 2.0 ** -53  # float64 unit roundoff
# Absolute room left around every bound of the sum below (far above the roundings of these few operations).
_ROOM = 1e-9


def temperature_reaches(proba: np.ndarray, y_pred: np.ndarray, confidence: np.ndarray, temperature: float,
                        thresholds, sum_tolerance: float) -> list[np.ndarray]:
    """For each threshold, whether each row's float64 temperature-scaled confidence reaches it.

    With ``r_j = p_j / p_top`` over the ``k = n_classes - 1`` other classes (in [0, 1]) and ``a = 1 / T``,
    the recalibrated confidence is ``1 / (1 + sum_j r_j ** a)``. The sum ``S = sum_j r_j`` lies within
    ``(1 -+ tol) / p_top - 1`` (the rows were checked to sum to 1 within ``tol``), and for ``a >= 1``
    ``k (S / k) ** a <= sum_j r_j ** a <= floor(S) + frac(S) ** a`` (convexity: the sum is least with
    every ``r_j`` equal and largest at a vertex of the box ``[0, 1] ** k``), the other way round for
    ``a < 1``. A row whose bounds, widened by the float64 computation's own error, lie on one side of a
    threshold is decided by them; only the others (those near a threshold) are screened in float32 and,
    nearer still, recomputed in float64 (:func:`screened_temperature_confidence`). No row is decided
    otherwise than by comparing the float64 confidence with the threshold.

    Parameters
    ----------
    proba : ndarray of shape (n, n_classes)
        Checked probabilities (finite, non-negative, rows summing to 1 within ``sum_tolerance``).
    y_pred, confidence : ndarray of shape (n,)
        ``Predictions.y_pred`` and ``.confidence`` of those probabilities (the maximum, at most 1).
    temperature : float
    thresholds : sequence of (float or ndarray of shape (n_classes,))
        Each a threshold for every row, or one per predicted class; ``+inf`` is never reached.
    sum_tolerance : float
        How far from 1 the rows' sums were allowed to be when checked.

    Returns
    -------
    list of ndarray of bool, shape (n,), one per threshold
    """
    cutoffs = temperature_cutoffs(proba.shape[1], temperature, sum_tolerance)
    bounds = None if cutoffs is None else [cutoffs(threshold) for threshold in thresholds]
    work = Work(proba.shape[1], len(confidence), len(thresholds))
    return block_reach(proba, y_pred, confidence, temperature, thresholds, bounds, work)


class Work:
    """Scratch arrays of :func:`block_reach` for blocks of up to ``rows`` rows, made once and reused."""

    def __init__(self, n_classes: int, rows: int, n_thresholds: int):
        self.reached = np.empty((n_thresholds, rows), dtype=bool)
        self.doubtful, self.decided = np.empty(rows, dtype=bool), np.empty(rows, dtype=bool)
        self.estimate, self.slack = np.empty(rows), np.empty(rows)
        # float32 scores of a cache-sized chunk of rows, and of their top
        self.scores = np.empty(min(rows, _ROWS_PER_BLOCK) * n_classes, dtype=np.float32)
        self.top = np.empty(min(rows, _ROWS_PER_BLOCK), dtype=np.float32)
        self.ones = np.ones(n_classes, dtype=np.float32)


def block_reach(proba, y_pred, confidence, temperature: float, thresholds, bounds, work: Work) -> list[np.ndarray]:
    """:func:`temperature_reaches` of a block of rows, with each threshold's ``(surely, never)`` of
    :func:`temperature_cutoffs` given (``bounds``; None: no bound worth having, the screen alone), in
    ``work``'s arrays (valid until its next call).

    The bounds decide most rows by two comparisons each; the screen reads only the rows between them.
    """
    rows = len(confidence)
    if bounds is None:
        chosen = None
    else:
        reached, chosen = bounds_reach(y_pred, confidence, thresholds, bounds, work)
        if not chosen.size:
            return reached
        if chosen.size > rows // 2:  # mostly near a threshold (a low temperature): the screen alone, with no copy
            chosen = None
    if chosen is None:
        return screen_reach(proba, y_pred, confidence, temperature, thresholds, work)
    # np.take copies whole rows at memory speed (an index array on the first axis goes element by element).
    near = screen_reach(np.take(proba, chosen, axis=0), y_pred[chosen], confidence[chosen], temperature, thresholds,
                        work)
    for verdict, near_verdict in zip(reached, near):
        verdict[chosen] = near_verdict
    return reached


def bounds_reach(y_pred, confidence, thresholds, bounds, work: Work) -> tuple[list[np.ndarray], np.ndarray]:
    """For each threshold, whether each row reaches it by its bounds (``bounds``: each threshold's ``(surely,
    never)`` of :func:`temperature_cutoffs`), and the rows (indices) those bounds leave in doubt, whose
    verdicts are to be replaced by :func:`screen_reach`'s. In ``work``'s arrays (valid until its next call)."""
    rows = len(confidence)
    reached, doubtful, decided = [], work.doubtful[:rows], work.decided[:rows]
    for k, (threshold, (surely, never)) in enumerate(zip(thresholds, bounds)):
        if np.ndim(threshold):
            surely, never = surely[y_pred], never[y_pred]
        reached.append(np.greater_equal(confidence, surely, out=work.reached[k, :rows]))
        np.less(confidence, never, out=decided)
        np.logical_or(decided, reached[-1], out=decided)
        if k:
            np.logical_or(doubtful, np.logical_not(decided, out=decided), out=doubtful)
        else:
            np.logical_not(decided, out=doubtful)
    return reached, np.flatnonzero(doubtful)


def screen_reach(proba, y_pred, confidence, temperature: float, thresholds, work: Work) -> list[np.ndarray]:
    """For each threshold, whether the float64 temperature-scaled confidence of each row of ``proba`` (m,
    n_classes; ``y_pred``, ``confidence``: its argmax and maximum, capped at 1) reaches it: the float32
    estimate, and the float64 confidence where the estimate is too near a threshold to tell. In ``work``'s
    arrays (valid until its next call)."""
    per_row = [np.asarray(t, dtype=np.float64)[y_pred] if np.ndim(t) else t for t in thresholds]
    m = len(confidence)
    estimate, slack = work.estimate[:m], work.slack[:m]
    _estimates(proba, confidence, temperature, work, estimate, slack)
    _settle_near(estimate, slack, per_row, proba, y_pred, temperature)
    return [estimate >= t for t in per_row]


def temperature_cutoffs(n_classes: int, temperature: float, sum_tolerance: float):
    """The two comparisons a row of raw confidence p needs (see :func:`temperature_reaches`): a function of a
    threshold (a float, or an ndarray of shape (n_classes,) for one per class) that gives ``(surely,
    never)``, arrays of the threshold's shape: ``p >= surely`` reaches it, ``p < never`` does not, and a row
    between them is doubtful. None when the bounds are worth nothing (a tiny temperature, or loose sums)."""
    others = n_classes - 1
    # The float64 path's relative error: log's and the division's roundings of log p / T (4 |log p_top| / T,
    # since the terms that count have log p_j near log p_top), exp's and the sum's (3 k + 2); times 32 for
    # log and exp implementations up to 4 units in the last place, with room to spare.
    top_log = math.log(n_classes / (1.0 - sum_tolerance)) if sum_tolerance < 0.5 else math.inf
    error = 32 * _EPS64 * (4 * top_log / temperature + 3 * n_classes + 2) + _ROOM
    if not error < 1e-3:
        return None
    # The bounds of S as the raw confidence p gives them: (1 - tol) / p - 1 and (1 + tol + C floor) / p - 1
    # (entries at 0 count as the floor, float32 rows are summed in float32), turned round into the
    # confidences at which they cross each threshold's bounds of the sum: two comparisons a row.
    tolerance = sum_tolerance + n_classes * 1e-6

    def cutoffs(threshold):
        accept_at, reject_at = _sum_bounds_at(threshold, others, temperature, error)
        with np.errstate(divide="ignore"):
            # high <= accept_at  <=>  p >= (1 + tol + C floor) / (1 + accept_at - room), when that is positive
            surely = np.where(accept_at + 1 - _ROOM > 0,
                              (1 + tolerance + n_classes * _PROBA_FLOOR) / (accept_at + 1 - _ROOM), np.inf)
            # low > reject_at  <=>  p < (1 - tol) / (1 + reject_at + room); always when reject_at < 0
            never = np.where(reject_at < 0, np.inf, (1 - tolerance) / (1 + reject_at + _ROOM))
        return surely * (1 + _ROOM), never * (1 - _ROOM)  # the divisions' own rounding

    return cutoffs


def _sum_bounds_at(threshold, others: int, temperature: float, error: float):
    """(accept_at, reject_at): a row whose ``S`` is at most ``accept_at`` reaches ``threshold`` (a float or
    one per class), one whose ``S`` exceeds ``reject_at`` does not (see :func:`temperature_reaches`)."""
    threshold = np.asarray(threshold, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        # The sum of r ** a that the confidence reaches the threshold at, its error to either side.
        accept_sum = (1.0 - error) / threshold - 1.0 - _ROOM
        reject_sum = (1.0 + error) / threshold - 1.0 + _ROOM
        # Of all r in [0, 1] summing to S, the sum of r ** a is largest (a >= 1; smallest for a < 1) at a
        # vertex, floor(S) ones and one r at frac(S): V(S) = floor(S) + frac(S) ** a, and least (largest) with
        # every r at S / k: k (S / k) ** a. So for a >= 1, V(S) bounds the sum from above, k (S / k) ** a
        # from below, and the other way round for a < 1.
        if temperature <= 1:
            accept_at = np.where(accept_sum < 0, -1.0,
                                 _vertex_inverse(np.maximum(accept_sum, 0.0), temperature) * (1 - _ROOM))
            reject_at = np.where(reject_sum < 0, -1.0,
                                 others * (np.maximum(reject_sum, 0.0) / others) ** temperature * (1 + _ROOM))
        else:
            accept_at = np.where(accept_sum < 0, -1.0,
                                 others * (np.maximum(accept_sum, 0.0) / others) ** temperature * (1 - _ROOM))
            reject_at = np.where(reject_sum < 0, -1.0,
                                 _vertex_inverse(np.maximum(reject_sum, 0.0), temperature) * (1 + _ROOM))
    return accept_at, reject_at


def _vertex_inverse(total, temperature: float):
    """The S at which ``V(S) = floor(S) + frac(S) ** (1 / T)`` is ``total`` (>= 0; V increases):
    ``floor(total) + frac(total) ** T``; an infinite total stays infinite."""
    whole = np.floor(total)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(total), whole + (total - whole) ** temperature, total)


def screened_temperature_confidence(proba: np.ndarray, y_pred: np.ndarray, confidence: np.ndarray,
                                    temperature: float, thresholds) -> np.ndarray:
    """A stand-in for the temperature-scaled confidence that compares with each threshold as it does.

    Parameters
    ----------
    proba : ndarray of shape (n, n_classes)
        Checked probabilities (finite, non-negative, rows summing to 1), as ``Predictions.proba``.
    y_pred, confidence : ndarray of shape (n,)
        The predicted class of each row and its raw probability (``Predictions.y_pred`` and
        ``.confidence``: the row's maximum; temperature scaling keeps the predicted class).
    temperature : float
        The stored temperature (applied to ``log(clip(proba, 1e-12, 1))``).
    thresholds : sequence of float or ndarray of shape (n,)
        The thresholds the rule compares the confidence with (``+inf`` compares as never reached).

    Returns
    -------
    ndarray of float64, shape (n,)
        For every threshold ``t`` and row ``i``, ``out[i] >= t[i]`` exactly when the float64
        recalibrated confidence (``Calibrator.apply(...).confidence``) is ``>= t[i]``. Rows within
        reach of a threshold hold that float64 confidence itself; the others a float32 estimate.
    """
    estimate, slack = estimated_temperature_confidence(proba, confidence, temperature)
    _settle_near(estimate, slack, thresholds, proba, y_pred, temperature)
    return estimate


def _settle_near(estimate, slack, thresholds, proba, y_pred, temperature: float) -> None:
    """Replace in ``estimate`` (of the rows of ``proba``) the entries within ``slack`` of a threshold by the
    float64 confidence, computed by the pipeline's own function row by row (the same bits)."""
    near = np.zeros(len(estimate), dtype=bool)
    for threshold in thresholds:
        near |= np.abs(estimate - threshold) <= slack
    rows = np.flatnonzero(near)
    if rows.size:
        exact, _, _ = _temperature_softmax(np.take(proba, rows, axis=0), None, False, temperature)
        estimate[rows] = np.clip(exact[np.arange(rows.size), y_pred[rows]], 0.0, 1.0)


def estimated_temperature_confidence(proba: np.ndarray, confidence: np.ndarray,
                                     temperature: float) -> tuple[np.ndarray, np.ndarray]:
    """The float32 estimate of the recalibrated confidence and its bound, two float64 arrays of shape (n,).

    ``abs(estimate - exact) <= slack`` row by row, ``exact`` the float64 confidence of ``Calibrator.apply``.
    The estimate is ``1 / sum_j exp((log p_j - log p_top) / T)``: softmax shifted by the top score, whose
    own term is exactly 1 (so the sum is at least 1 and no row maximum or gather is needed).
    """
    n, n_classes = proba.shape
    estimate, slack = np.empty(n), np.empty(n)
    _estimates(proba, confidence, temperature, Work(n_classes, min(n, _ROWS_PER_BLOCK), 0), estimate, slack)
    return estimate, slack


def _estimates(proba, confidence, temperature: float, work: Work, estimate, slack) -> None:
    """:func:`estimated_temperature_confidence` of the rows of ``proba`` (m, n_classes), into ``estimate`` and
    ``slack`` (m,), through ``work``'s float32 arrays, a cache-sized chunk of rows at a time."""
    n, n_classes = proba.shape
    inverse = np.float32(1.0 / temperature)
    width = len(work.top)
    for start in range(0, n, width):
        stop = min(start + width, n)
        block = work.scores[:(stop - start) * n_classes].reshape(stop - start, n_classes)  # contiguous
        top = work.top[:stop - start]  # the top log-probability of each row, kept for the bound
        block[...] = proba[start:stop]  # rounded to float32
        top[...] = confidence[start:stop]
        np.clip(block, _FLOOR32, np.float32(1.0), out=block)
        np.clip(top, _FLOOR32, np.float32(1.0), out=top)
        np.log(block, out=block)
        np.log(top, out=top)
        np.subtract(block, top[:, None], out=block)
        np.multiply(block, inverse, out=block)
        np.exp(block, out=block)
        np.divide(1.0, block @ work.ones, out=estimate[start:stop])
        np.abs(top, out=slack[start:stop], casting="same_kind")
    # Relative error, first order, of a row whose top log-probability is L (float32): log's 4 ulp on
    # |log p_j| <= T |x_j| + |L| and the conversions (11 |x_j| + 16 |L| / T + 2 / T per term, times
    # exp(x_j), whose sum over j of 11 exp(x_j) |x_j| is at most 11 k / e), exp's 4 ulp (8), the sum's k
    # roundings in any order (k), the division (1); doubled.
    per_row = _EPS32 * _SAFETY * (11 / np.e * n_classes + 2 / temperature + 9 + n_classes)
    slack *= _EPS32 * _SAFETY * 16 / temperature
    slack += per_row
    # Beyond a relative 1e-2 the first order no longer bounds the error: such rows are always recomputed.
    np.copyto(slack, np.inf, where=slack > 1e-2)
    slack *= estimate
    slack += 2.0 ** -40  # float64's own roundings and float32 underflow, far below this
