"""The bootstrap behind the monitoring bands as it was computed up to 2026-11-29 (issue 33), kept as the slow
reference: each copy's map applied to the whole split, the distribution of the truth built per copy and
both moments of every item taken, on every call. ``valuecore._monitor.bands._ReferenceBootstrap`` keeps what
does not depend on the values instead; ``tests/core/test_bands_cached.py`` checks both give the same bits.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from valuecore._monitor.bands import _calibrated, _fit_estimation_calibrator, _moments, _outcomes, _truth


class SlowReferenceBootstrap:
    """Today's ``_ReferenceBootstrap`` before the cache, verbatim but for the kept maps (always refitted)."""

    def __init__(self, policy, reference, values, method: str, n_resamples: int, rng, seeded: bool = False):
        self._policy, self._values = policy, values
        self._matrix = values.for_classes(reference.classes)
        outcome = _outcomes(policy, reference, self._matrix)
        weight = reference.sample_weight
        rows = reference.n
        self.calibrators, mu = [], []
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
            mu.append(float(mean @ copies / copies.sum()))
        self.mu = np.asarray(mu)

    def estimates(self, predictions, chunk_of_row: np.ndarray, n_chunks: int) -> np.ndarray:
        outcome = _outcomes(self._policy, predictions, self._matrix)
        weight = predictions.sample_weight
        totals = np.bincount(chunk_of_row, weights=weight, minlength=n_chunks)
        out = np.empty((len(self.calibrators), n_chunks))
        for b, calibrator in enumerate(self.calibrators):
            mean, _ = _moments(_truth(_calibrated(calibrator, predictions), self._matrix), outcome)
            out[b] = np.bincount(chunk_of_row, weights=weight * mean, minlength=n_chunks)
        return out / np.where(totals > 0, totals, 1.0)
