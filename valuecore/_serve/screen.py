"""Threshold decisions under temperature scaling without the recalibrated probability matrix.

A threshold rule reads one number per item, the recalibrated confidence ``softmax(log p / T)[y]``,
and compares it with a threshold. :func:`screened_temperature_confidence` estimates that number in
float32 (numpy's vectorised ``log`` and ``exp``; float64's are scalar calls on CPUs without AVX-512,
each about twice an argmax over the matrix), with a bound on how far the estimate can be from the
float64 value :class:`~valuecore.calibration.Calibrator` computes. Only the items whose estimate lies
within its bound of a threshold are recomputed in float64, by the very function the pipeline uses,
row by row the same bits. So every comparison with the thresholds is the float64 one, exactly.
"""

from __future__ import annotations

import numpy as np

from .._model.recalibration import _PROBA_FLOOR, _temperature_softmax

_ROWS_PER_BLOCK = 1 << 12
_EPS32 = 2.0 ** -24  # float32 unit roundoff
# numpy's float32 log and exp are within 4 units in the last place (its documented maximum: 3.83 and
# 2.52 for the SIMD loops; libm's are within 1). The bound below assumes 4 and is then doubled.
_SAFETY = 2.0
_FLOOR32 = np.float32(_PROBA_FLOOR)


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
    near = np.zeros(len(estimate), dtype=bool)
    for threshold in thresholds:
        near |= np.abs(estimate - threshold) <= slack
    rows = np.flatnonzero(near)
    if rows.size:
        exact, _, _ = _temperature_softmax(proba[rows], None, False, temperature)
        estimate[rows] = np.clip(exact[np.arange(rows.size), y_pred[rows]], 0.0, 1.0)
    return estimate


def estimated_temperature_confidence(proba: np.ndarray, confidence: np.ndarray,
                                     temperature: float) -> tuple[np.ndarray, np.ndarray]:
    """The float32 estimate of the recalibrated confidence and its bound, two float64 arrays of shape (n,).

    ``abs(estimate - exact) <= slack`` row by row, ``exact`` the float64 confidence of ``Calibrator.apply``.
    The estimate is ``1 / sum_j exp((log p_j - log p_top) / T)``: softmax shifted by the top score, whose
    own term is exactly 1 (so the sum is at least 1 and no row maximum or gather is needed).
    """
    n, n_classes = proba.shape
    inverse = np.float32(1.0 / temperature)
    top = np.empty(n, dtype=np.float32)  # the top log-probability of each row, kept for the bound
    estimate = np.empty(n)
    scores = np.empty((min(n, _ROWS_PER_BLOCK), n_classes), dtype=np.float32)
    ones = np.ones(n_classes, dtype=np.float32)
    for start in range(0, n, _ROWS_PER_BLOCK):
        stop = min(start + _ROWS_PER_BLOCK, n)
        block, block_top = scores[:stop - start], top[start:stop]
        block[...] = proba[start:stop]
        block_top[...] = confidence[start:stop]
        np.clip(block, _FLOOR32, np.float32(1.0), out=block)
        np.clip(block_top, _FLOOR32, np.float32(1.0), out=block_top)
        np.log(block, out=block)
        np.log(block_top, out=block_top)
        np.subtract(block, block_top[:, None], out=block)
        np.multiply(block, inverse, out=block)
        np.exp(block, out=block)
        np.divide(1.0, block @ ones, out=estimate[start:stop])
    # Relative error, first order, of a row whose top log-probability is L (float32): log's 4 ulp on
    # |log p_j| <= T |x_j| + |L| and the conversions (11 |x_j| + 16 |L| / T + 2 / T per term, times
    # exp(x_j), whose sum over j of 11 exp(x_j) |x_j| is at most 11 k / e), exp's 4 ulp (8), the sum's k
    # roundings in any order (k), the division (1); doubled.
    per_row = _EPS32 * _SAFETY * (11 / np.e * n_classes + 2 / temperature + 9 + n_classes)
    slack = np.abs(top, dtype=np.float64)
    slack *= _EPS32 * _SAFETY * 16 / temperature
    slack += per_row
    # Beyond a relative 1e-2 the first order no longer bounds the error: such rows are always recomputed.
    slack[slack > 1e-2] = np.inf
    slack *= estimate
    slack += 2.0 ** -40  # float64's own roundings and float32 underflow, far below this
    return estimate, slack
