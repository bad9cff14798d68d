"""The bootstrap behind the monitoring bands computed the slow way (issue 33), kept as the reference: each copy's
map applied to the whole split, the distribution of the truth built per copy and both moments of every item
taken, on every call. ``valuecore._monitor.bands._ReferenceBootstrap`` keeps what does not depend on the values
instead; ``tests/core/test_bands_cached.py`` checks both give the same bits.

Each copy's reference value and chunk estimates are summed as the core sums them since 2026-11-30
(:func:`summed_reference_value`, :meth:`SlowReferenceBootstrap.estimates`; written here from the items' means,
not from what the core keeps); ``mu_by_dot`` and ``estimates(..., by_bincount=True)`` keep the sums they were
before (OpenBLAS's dot, numpy's bincount), which ``tests/core/test_bands_values.py`` compares with them and with
the exact sums.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import valuecore as vc
from valuecore._monitor import bands
from valuecore._monitor.bands import _calibrated, _fit_estimation_calibrator, _moments, _outcomes, _truth


def distinct_confidences(calibrator, predictions, outcome: np.ndarray):
    """(first, inverse) of the split's distinct confidences where the map is of the top label and each distinct
    confidence's items share both outcomes (the right class's and the next's), else None."""
    rows = np.arange(predictions.n)
    right = outcome[rows, predictions.y_pred]
    next_class = outcome[rows, (predictions.y_pred + 1) % outcome.shape[1]]
    if calibrator.method != "isotonic" or calibrator.params.get("positive_class") \
            or not bands._two_terms_add_as_einsum():
        return None
    _, first, inverse = np.unique(predictions.confidence, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if np.array_equal(right, right[first][inverse]) and np.array_equal(next_class, next_class[first][inverse]):
        return first, inverse
    return None


def summed_reference_value(calibrator, reference, outcome: np.ndarray, mean: np.ndarray,
                           copies: np.ndarray) -> float:
    """A copy's weighted sum of its items' means over its weight: grouped by distinct confidence where the map
    is of the top label and each distinct confidence's items share both outcomes, else item by item; numpy's
    sum either way."""
    cells = distinct_confidences(calibrator, reference, outcome)
    if cells is not None:
        first, inverse = cells
        return float(np.sum(mean[first] * np.bincount(inverse, weights=copies)) / copies.sum())
    return float(np.sum(mean * copies) / copies.sum())


class SlowReferenceBootstrap:
    """``_ReferenceBootstrap`` before the cache, verbatim but for the kept maps (always refitted) and the sum."""

    def __init__(self, policy, reference, values, method: str, n_resamples: int, rng, seeded: bool = False):
        self._policy, self._values = policy, values
        self._matrix = values.for_classes(reference.classes)
        outcome = _outcomes(policy, reference, self._matrix)
        self.reference_outcome = outcome  # what monitor_bands values the reference's moments with, as the core's
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

    def estimates(self, predictions, chunk_of_row: np.ndarray, n_chunks: int, by_bincount: bool = False
                  ) -> np.ndarray:
        """Each copy's estimate of each chunk, summed as the core sums it (``by_bincount``: as it was before
        2026-11-30, item by item in their order)."""
        outcome = _outcomes(self._policy, predictions, self._matrix)
        weight = predictions.sample_weight
        totals = np.bincount(chunk_of_row, weights=weight, minlength=n_chunks)
        out = np.empty((len(self.calibrators), n_chunks))
        for b, calibrator in enumerate(self.calibrators):
            mean, _ = _moments(_truth(_calibrated(calibrator, predictions), self._matrix), outcome)
            cells = None if by_bincount else distinct_confidences(calibrator, predictions, outcome)
            if cells is None:
                out[b] = np.bincount(chunk_of_row, weights=weight * mean, minlength=n_chunks)
            else:  # each chunk's weight of each distinct confidence, times the confidence's mean, summed by numpy
                first, inverse = cells
                by_chunk = np.bincount(chunk_of_row * first.size + inverse, weights=weight,
                                       minlength=n_chunks * first.size).reshape(n_chunks, first.size)
                out[b] = np.sum(by_chunk * mean[first], axis=1)
        return out / np.where(totals > 0, totals, 1.0)


# ---- the data and settings the band tests share (test_bands_cached.py, test_bands_values.py)
MATRIX2 = vc.ValueMatrix(("neg", "pos"), [[1.0, -5.0, 0.0], [-2.0, 3.0, 0.0]])
MATRIX3 = vc.ValueMatrix(("c0", "c1", "c2"), [[2, -1, -3, 0], [-1, 1, -2, 0], [-4, -1, 3, -0.5]])


def bits(array) -> np.ndarray:
    return np.ascontiguousarray(array, dtype=np.float64).view(np.int64)


def same_bits(a, b) -> bool:
    return np.shape(a) == np.shape(b) and np.array_equal(bits(a), bits(b))


def proba_run(rng, n, n_classes, weights=False, rounded=True):
    y = rng.integers(0, n_classes, n)
    logits = rng.normal(size=(n, n_classes)) * 1.5
    logits[np.arange(n), y] += 1.0
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    if rounded:  # exported scores: many tied confidences
        proba = np.round(proba, 3)
        proba[np.arange(n), proba.argmax(axis=1)] += 1.0 - proba.sum(axis=1)
    classes = [f"c{k}" for k in range(n_classes)] if n_classes != 2 else ["neg", "pos"]
    weight = rng.integers(0, 4, n).astype(float) if weights else None
    return vc.Predictions.from_proba(proba, np.array(classes)[y], classes=classes, sample_weight=weight)


def top_label_run(rng, n):
    conf = rng.uniform(0.5, 1.0, n)
    right = rng.uniform(size=n) < conf**1.5
    return vc.Predictions.from_top_label(["a"] * n, conf, np.where(right, "a", "b"), classes=["a", "b"])


SETTINGS = {
    # name: (make reference and watched split, policy, values of the first and the second call, calibration)
    "use case, two classes, top label": (lambda rng: (top_label_run(rng, 300), top_label_run(rng, 500)),
                                         vc.Policy("threshold", threshold=0.7), (vc.UseCase(1, 0, -2),
                                                                                 vc.UseCase(2, -0.5, -7)), "auto"),
    "use case, ten classes, weighted": (lambda rng: (proba_run(rng, 400, 10, True), proba_run(rng, 600, 10)),
                                        vc.Policy("threshold", threshold=0.5), (vc.UseCase(1, 0, -4),
                                                                                vc.UseCase(1, 0, -9.37)), "auto"),
    "use case, three classes, continuous": (lambda rng: (proba_run(rng, 300, 3, rounded=False),
                                                         proba_run(rng, 400, 3, rounded=False)),
                                            vc.Policy("threshold", threshold=0.6), (vc.UseCase(1, 0, -1),
                                                                                    vc.UseCase(3, 1, -0.1)), "auto"),
    "binary matrix, isotonic of P(positive)": (lambda rng: (proba_run(rng, 300, 2), proba_run(rng, 400, 2)),
                                               vc.Policy("threshold", threshold=0.6), (MATRIX2, MATRIX2), "auto"),
    "three-class matrix, temperature": (lambda rng: (proba_run(rng, 200, 3, True), proba_run(rng, 300, 3)),
                                        vc.Policy("threshold", threshold=0.5), (MATRIX3, MATRIX3), "auto"),
    "use case, no calibration": (lambda rng: (proba_run(rng, 200, 4), proba_run(rng, 300, 4)),
                                 vc.Policy("threshold", threshold=0.4), (vc.UseCase(1, 0, -3),
                                                                         vc.UseCase(1, -1, -3)), "none"),
}


def frames_same(a, b) -> bool:
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return False
    for column in a.columns:
        left, right = a[column].to_numpy(), b[column].to_numpy()
        if left.dtype.kind == "f" and not same_bits(left, right):
            return False
        if left.dtype.kind != "f" and not all(x == y or (x != x and y != y) for x, y in zip(left, right)):
            return False
    return True
