"""The bootstrap behind the monitoring bands computed the slow way (issue 33), kept as the reference: each copy's
map applied to the whole split, the distribution of the truth built per copy and both moments of every item
taken, on every call. ``valuecore._monitor.bands._ReferenceBootstrap`` keeps what does not depend on the values
instead; ``tests/core/test_bands_cached.py`` checks both give the same bits.

Each copy's reference value is summed as the core defines it since 2026-11-30 (:func:`summed_reference_value`,
written here from the items' means, not from what the core keeps); ``mu_by_dot`` keeps the dot it was before
(``mean @ weights``, OpenBLAS's), which ``tests/core/test_bands_values.py`` compares with it and with the exact sum.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from valuecore._monitor import bands
from valuecore._monitor.bands import _calibrated, _fit_estimation_calibrator, _moments, _outcomes, _truth


def summed_reference_value(calibrator, reference, outcome: np.ndarray, mean: np.ndarray,
                           copies: np.ndarray) -> float:
    """A copy's weighted sum of its items' means over its weight: grouped by distinct confidence where the map
    is of the top label and each distinct confidence's items share both outcomes, else item by item; numpy's
    sum either way."""
    rows = np.arange(reference.n)
    right = outcome[rows, reference.y_pred]
    next_class = outcome[rows, (reference.y_pred + 1) % outcome.shape[1]]
    if calibrator.method == "isotonic" and not calibrator.params.get("positive_class") \
            and bands._two_terms_add_as_einsum():
        _, first, inverse = np.unique(reference.confidence, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        if np.array_equal(right, right[first][inverse]) and np.array_equal(next_class, next_class[first][inverse]):
            return float(np.sum(mean[first] * np.bincount(inverse, weights=copies)) / copies.sum())
    return float(np.sum(mean * copies) / copies.sum())


class SlowReferenceBootstrap:
    """``_ReferenceBootstrap`` before the cache, verbatim but for the kept maps (always refitted) and the sum."""

    def __init__(self, policy, reference, values, method: str, n_resamples: int, rng, seeded: bool = False):
        self._policy, self._values = policy, values
        self._matrix = values.for_classes(reference.classes)
        outcome = _outcomes(policy, reference, self._matrix)
        weight = reference.sample_weight
        rows = reference.n
        self.calibrators, mu, by_dot = [], [], []
        for _ in range(2 * n_resamples):
            if len(self.calibrators) == n_resamples:
                break
            copies = weight * rng.multinomial(rows, np.full(rows, 1.0 / rows))
            calibrator = None
            if copies.sum() > 0:
                try:
                    calibrator = _fit_estimation_calibrator(replace(reference, sample_weight=copies), method)
                except ValueError:
                    pass
            if calibrator is None:
                continue
            mean, _ = _moments(_truth(_calibrated(calibrator, reference), self._matrix), outcome)
            self.calibrators.append(calibrator)
            mu.append(summed_reference_value(calibrator, reference, outcome, mean, copies))
            by_dot.append(float(mean @ copies / copies.sum()))
        self.mu, self.mu_by_dot = np.asarray(mu), np.asarray(by_dot)

    def estimates(self, predictions, chunk_of_row: np.ndarray, n_chunks: int) -> np.ndarray:
        outcome = _outcomes(self._policy, predictions, self._matrix)
        weight = predictions.sample_weight
        totals = np.bincount(chunk_of_row, weights=weight, minlength=n_chunks)
        out = np.empty((len(self.calibrators), n_chunks))
        for b, calibrator in enumerate(self.calibrators):
            mean, _ = _moments(_truth(_calibrated(calibrator, predictions), self._matrix), outcome)
            out[b] = np.bincount(chunk_of_row, weights=weight * mean, minlength=n_chunks)
        return out / np.where(totals > 0, totals, 1.0)
