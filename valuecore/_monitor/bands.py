"""Monitoring with uncertainty: calibrated label-free estimates, bands, alerts, drift.

:func:`monitor_bands` watches a policy on production chunks without labels:

Calibration
    Label-free estimates are only as good as the probabilities. By default a
    map is fitted on the *labelled reference split* and applied to every
    chunk before estimating: isotonic regression of correctness on the
    top-label confidence for a simple use case (the predicted class is right
    with the recalibrated confidence); isotonic regression of the truth on
    P(positive class) for a binary value matrix, as NannyML's CBPE does (a
    monotone map, so with an intercept, unlike temperature scaling, and one
    that corrects the two predicted classes apart); temperature scaling for
    a value matrix of more classes (which needs whole probability vectors).
    ``platt`` can be asked for two classes.
    ``calibration="none"`` uses the raw probabilities. The policy's
    decisions are untouched: the map only changes what we *expect* those
    decisions to earn.
Uncertainty of the reference (bootstrap)
    The reference is a finite sample, and the map is fitted on it: both
    move the estimate. ``n_resamples`` bootstrap copies of the reference
    (its rows drawn with replacement, ``rng``) are each given their own
    refitted map; each copy gives a reference value ``mu_b`` and, for every
    chunk, an estimate ``est_b``. Their spread is the reference's share of
    the uncertainty, calibration included.
Band per chunk
    With per-item expected value ``e_i`` and variance ``s_i^2`` (over the
    true class, under the calibrated probabilities) of the action the policy
    takes, the realised value per item of a chunk of weighted size ``W`` has
    mean ``sum(w e) / W`` and, given the map, variance ``sum(w s^2) / W^2``
    (items independent given their confidences; a weight counts copies). The
    band is the estimate +- (z sqrt(that + var_b(est_b)) + shift): the
    outcomes' noise plus the map's variance (normal approximation), plus
    the *calibration-shift term* ``shift = D |est - raw|``, ``D`` the
    chunk's Kolmogorov-Smirnov distance to the reference's confidences (a
    lower bound on the share of its items unlike any of the reference's)
    and ``est - raw`` the correction the map makes to the raw estimate on
    this chunk. Labels checked the map only where the reference has items
    like the chunk's; on the share that moved, the truth may lie anywhere
    between the raw and the calibrated estimate (a covariate shift that
    changes P(truth | confidence), which no map fitted on the reference can
    see). About 0 without a shift or without a correction; on NannyML's
    car-loan data, where the variance alone covered 7 of 10 chunks of
    5,000, the band with the term covered all of them
    (benchmarks/nannyml_car_loan.py).
    On a labelled chunk the back-test checks whether the band covered the
    realised value.
Reference band and alerts
    A chunk of size ``W`` from the reference's distribution has an estimate
    that differs from the reference value ``mu`` by its own sampling error
    (``sd^2 / W``, ``sd`` the spread of the per-item estimate on the
    reference) plus the reference's (``var_b(est_b - mu_b)``: the
    reference's finite sample and the map fitted on it, which largely cancel
    when the chunk looks like the reference). A chunk whose estimate leaves
    ``mu +- z' sqrt(sd^2 / W + var_b(est_b - mu_b))`` raises an alert (false
    alerts: about ``1 - alert_confidence`` of the chunks). Without the
    reference's term, a 5,000-item reference watched in 20,000-item chunks
    raised 17-31% false alerts at a claimed 1% (issue 19); the seeded simulation of
    ``benchmarks/bench_monitor_bands.py`` gives the rates now.
Drift signal
    The two-sample Kolmogorov-Smirnov distance between the chunk's and the
    reference's (raw) confidence distributions, weighted, with the asymptotic
    p-value; the sizes are the summed weights when they are whole numbers
    (copies), else Kish's effective sizes. ``drift`` when it is below ``drift_level``.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._engine.fitting import Policy, Values
from .._model.predictions import MODEL_ABSTAINED, Predictions

__all__ = ["BAND_COLUMNS", "ESTIMATE_COLUMNS", "MonitorBands", "monitor_bands", "monitor_estimates",
           "monitoring_record", "expected_item_values"]

BAND_COLUMNS = (
    "split",
    "chunk",
    "start",
    "end",
    "n",
    "estimated_value_per_item",
    "band_low",
    "band_high",
    "calibration_shift",
    "reference_low",
    "reference_high",
    "alert",
    "drift_statistic",
    "drift_p_value",
    "drift",
    "has_labels",
    "realised_value_per_item",
    "covered",
)


def _z(confidence: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + confidence / 2))


def _truth(calibrated: Predictions, matrix) -> np.ndarray:
    """Distribution of the true class per item, shape (n, C), under the calibrated output."""
    if calibrated.has_proba:
        return calibrated.normalised_proba()
    if matrix.as_use_case() is None and matrix.n_classes != 2:
        calibrated.require_proba("label-free estimation with a per-class value matrix of more than two classes")
    return _top_label_truth(calibrated.confidence, calibrated.y_pred, matrix.n_classes)


def _top_label_truth(confidence: np.ndarray, y_pred: np.ndarray, n_classes: int) -> np.ndarray:
    """Shape (n, C): the predicted class true with probability ``confidence``, else the next class."""
    n = confidence.shape[0]
    truth = np.zeros((n, n_classes))
    rows = np.arange(n)
    # top label only: right with probability `confidence`; where the rest goes
    # does not matter for a simple use case (every wrong answer is worth the same),
    # and with two classes it can only go to the other one
    truth[rows, y_pred] = confidence
    truth[rows, (y_pred + 1) % n_classes] += 1 - confidence
    return truth


def expected_item_values(
    policy: Policy, predictions: Predictions, values: Values, calibrator=None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-item expected value and variance, shapes (n,), of the policy's actions.

    The actions are the policy's own (on ``predictions`` as given); the
    distribution of the truth is read from ``calibrator.apply(predictions)``
    (the raw predictions when ``calibrator`` is None).
    """
    matrix = values.for_classes(predictions.classes)
    return _item_moments(_outcomes(policy, predictions, matrix), predictions, matrix, calibrator)


def _item_moments(outcome: np.ndarray, predictions: Predictions, matrix, calibrator) -> tuple[np.ndarray, np.ndarray]:
    """:func:`expected_item_values` of the policy's outcomes already taken (``_outcomes``): a caller that values
    the same actions twice (calibrated and raw, or the reference's moments and its copies) decides them once."""
    calibrated = predictions if calibrator is None else calibrator.apply(predictions)
    if not calibrated.has_proba and (matrix.as_use_case() is not None or matrix.n_classes == 2) \
            and _two_terms_add_as_einsum():
        # the top label's truth has two terms per item: the moments without the (n, C) truth, same bits
        right, next_class = _top_label_outcomes(calibrated.y_pred, outcome)
        mean = _two_terms(calibrated.confidence, right, next_class)
        second = _two_terms(calibrated.confidence, right**2, next_class**2)
        return mean, np.maximum(second - mean**2, 0.0)
    return _moments(_truth(calibrated, matrix), outcome)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(a.view(np.int64), b.view(np.int64))


def _top_label_outcomes(y_pred: np.ndarray, outcome: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shapes (n,): each item's outcome if its predicted class is true, and if the next class is (``_truth``
    puts the top label's ``1 - confidence`` there)."""
    rows = np.arange(outcome.shape[0])
    return outcome[rows, y_pred], outcome[rows, (y_pred + 1) % outcome.shape[1]]


def _two_terms(confidence: np.ndarray, right: np.ndarray, next_class: np.ndarray) -> np.ndarray:
    """``einsum("ik,ik->i", truth, outcome)`` for the top label's truth (see ``_two_terms_add_as_einsum``)."""
    return confidence * right + (1 - confidence) * next_class + 0.0


def _outcomes(policy: Policy, predictions: Predictions, matrix) -> np.ndarray:
    """Shape (n, C): the value of the policy's action on each item if the truth is each class."""
    return matrix.values[:, policy.decide(predictions, matrix)].T


def _moments(truth: np.ndarray, outcome: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = np.einsum("ik,ik->i", truth, outcome)
    second = np.einsum("ik,ik->i", truth, outcome**2)
    return mean, np.maximum(second - mean**2, 0.0)


def _effective_size(weight: np.ndarray) -> float:
    """Whole-number weights count copies (n = sum w); other weights use Kish's sum(w)^2 / sum(w^2)."""
    if np.all(weight == np.round(weight)):
        return float(weight.sum())
    return float(weight.sum() ** 2 / np.sum(weight**2))


class _SortedECDF:
    """A weighted empirical distribution function, sorted once.

    ``F(x) = cumulative[searchsorted(values, x, "right") - 1]`` (0 below the smallest value),
    the cumulative weight share of the values <= x.
    """

    def __init__(self, x: np.ndarray, w: np.ndarray):
        order = np.argsort(x, kind="stable")
        self.values = x[order]
        self.cumulative = np.cumsum(w[order]) / w.sum()

    def below(self, x: np.ndarray) -> np.ndarray:
        """``F`` at the largest value < x, i.e. just left of x (0 when there is none)."""
        index = np.searchsorted(self.values, x, side="left")
        return np.where(index > 0, self.cumulative[np.maximum(index - 1, 0)], 0.0)

    def at(self, x: np.ndarray) -> np.ndarray:
        index = np.searchsorted(self.values, x, side="right")
        return np.where(index > 0, self.cumulative[np.maximum(index - 1, 0)], 0.0)


def _ks_distance(reference: _SortedECDF, sample: _SortedECDF) -> float:
    """``max |F_ref(g) - F_sample(g)|`` over every g of ``union1d`` of both samples' values.

    Only O(sample) grid points are visited, with identical results: between two consecutive
    distinct sample values u_j <= g < u_j+1, F_sample is constant and F_ref non-decreasing
    (a cumulative sum of non-negative weights, divided by one total), so |F_ref - F_sample|
    is largest at the first grid point of the stretch (u_j itself) or at its last one (the
    largest reference value below u_j+1, or u_j when there is none in between: then
    F_ref just left of u_j+1 equals F_ref(u_j)). Below u_0, F_sample is 0 and the
    largest reference value below u_0 counts.
    """
    distinct = sample.values[np.r_[sample.values[1:] != sample.values[:-1], True]]
    at_sample = sample.at(distinct)  # F_sample on the stretch starting at each distinct value
    first = np.abs(reference.at(distinct) - at_sample)
    following = np.r_[distinct[1:], np.inf]
    last = np.abs(reference.below(following) - at_sample)
    before = reference.below(distinct[:1])  # F_ref - 0, below every sample value
    return float(max(first.max(), last.max(), np.abs(before - 0.0).max()))


def _ks_test(reference: _SortedECDF, ref_weight: np.ndarray, sample: np.ndarray, weight: np.ndarray):
    """(distance, p-value) of the weighted two-sample Kolmogorov-Smirnov test against a sorted reference."""
    from scipy.stats import kstwobign

    if ref_weight.sum() <= 0 or weight.sum() <= 0:
        return math.nan, math.nan
    distance = _ks_distance(reference, _SortedECDF(sample, weight))
    n1, n2 = _effective_size(ref_weight), _effective_size(weight)
    effective = math.sqrt(n1 * n2 / (n1 + n2))
    # Stephens' small-sample correction of the asymptotic distribution
    p_value = float(kstwobign.sf((effective + 0.12 + 0.11 / effective) * distance))
    return distance, min(max(p_value, 0.0), 1.0)


@dataclass(frozen=True, eq=False)
class MonitorBands:
    """Per-chunk estimates with bands, alerts and drift, and the back-test.

    Attributes
    ----------
    frame : DataFrame
        One row per chunk, columns ``BAND_COLUMNS``: ``band_low/high`` the
        band of the chunk's realised value per item, within the lowest and
        highest value an item can take (``calibration_shift``
        its calibration-shift term, in value per item), ``reference_low/high``
        the reference band of its estimate, ``alert`` (estimate outside the
        reference band), ``drift_statistic`` / ``drift_p_value`` / ``drift``,
        and on labelled chunks ``realised_value_per_item`` and ``covered``.
    calibration : dict
        The estimation map fitted on the reference (``Calibrator.to_dict()``).
    calibration_text : str
        One sentence saying which calibration, fitted on what.
    reference_value_per_item, reference_sd : float
        Mean and standard deviation of the per-item estimate on the reference.
    reference_mean_sd : float
        Bootstrap standard deviation of the reference value (the reference's
        finite sample and the calibration fitted on it).
    n_resamples : int
        Bootstrap copies of the reference behind the bands.
    confidence, alert_confidence, drift_level : float
    n_backtest : int
        Labelled chunks.
    backtest_coverage : float or None
        Share of labelled chunks whose band covered the realised value.
    """

    frame: object
    calibration: dict
    calibration_text: str
    reference_value_per_item: float
    reference_sd: float
    reference_mean_sd: float
    n_resamples: int
    confidence: float
    alert_confidence: float
    drift_level: float
    n_backtest: int
    backtest_coverage: float | None

    @property
    def n_alerts(self) -> int:
        return int(self.frame["alert"].sum())

    @property
    def n_drift(self) -> int:
        return int(self.frame["drift"].sum())


def _check_level(value, name: str) -> float:
    value = float(value)
    if not (math.isfinite(value) and 0 < value < 1):
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value!r}")
    return value


def _reference_moments(policy: Policy, reference: Predictions, values: Values, calibrator,
                       outcome: np.ndarray | None = None) -> tuple[float, float]:
    """Weighted mean and standard deviation of the per-item estimate on the reference (``outcome``: the policy's
    ``_outcomes`` on it, when already taken)."""
    weight = reference.sample_weight
    if outcome is None:
        mean, _ = expected_item_values(policy, reference, values, calibrator)
    else:
        mean, _ = _item_moments(outcome, reference, values.for_classes(reference.classes), calibrator)
    mu = float(mean @ weight / weight.sum())
    return mu, float(math.sqrt(max(((mean - mu) ** 2) @ weight / weight.sum(), 0.0)))


DEFAULT_RESAMPLES = 100


def _check_resampling(n_resamples, rng) -> tuple[int, np.random.Generator]:
    if isinstance(n_resamples, (bool, np.bool_)) or not isinstance(n_resamples, (int, np.integer)) \
            or not 2 <= n_resamples <= 100_000:
        raise ValueError(f"n_resamples must be a whole number from 2 to 100000, got {n_resamples!r}")
    if rng is None:
        rng = np.random.default_rng(0)  # the same figures on every run
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(0)), "
                        f"got {type(rng).__name__}")
    return int(n_resamples), rng


# (id of the reference, method, copies) -> its _Copies under numpy.random.default_rng(0); a few references only,
# each dropped when its reference is.
_BOOTSTRAP_COPIES: dict[tuple, "_Copies"] = {}
_KEPT_COPIES = 8
# A split's per-copy calibrated probabilities are kept up to this many floats (8 bytes each, 32 MB); a larger
# split has them recomputed on every call (still once per copy, never the truth of every class per item).
_KEPT_FLOATS = 4_000_000


def _top_label_isotonic(calibrator) -> bool:
    return calibrator.method == "isotonic" and not calibrator.params.get("positive_class")


@functools.cache
def _two_terms_add_as_einsum() -> bool:
    """Whether ``q * a + (1 - q) * b + 0.0`` is, bit for bit, ``_moments``' einsum over the top-label truth.

    That truth has two non-zero terms per row (``q`` at the predicted class, ``1 - q`` at the next one), and
    adding zeros is exact, so the einsum is the rounded sum of the two rounded products whatever its order,
    unless the loop fuses a multiply with the add (FMA); ``+ 0.0`` turns a ``-0.0`` into einsum's ``+0.0``.
    Checked once on random rows (odd and even class counts, zero and negative-zero values, abstentions);
    where it does not hold, the truth is built and the einsum taken as before.
    """
    rng = np.random.default_rng(0)
    for n_classes in (2, 3, 10):
        n = 4096
        y = rng.integers(0, n_classes, n)
        q = np.clip(rng.uniform(-0.2, 1.2, n), 0.0, 1.0)
        q[:64] = MODEL_ABSTAINED  # what a recalibration leaves of the model's own abstentions
        matrix = rng.normal(size=(n_classes, n_classes + 1)) * 3
        matrix[:, -1], matrix[0, 0] = 0.0, -0.0
        outcome = matrix[:, rng.integers(0, n_classes + 1, n)].T
        fused = np.einsum("ik,ik->i", _top_label_truth(q, y, n_classes), outcome)
        if not np.array_equal(fused.view(np.int64), _two_terms(q, *_top_label_outcomes(y, outcome)).view(np.int64)):
            return False
    return True


class _Copies:
    """The bootstrap copies of one reference: all they hold that depends on neither the values nor the policy.

    ``calibrators[b]`` is copy b's map, ``counts[b]`` how often it drew each row of the reference (shape
    (n_copies, n), the smallest unsigned integers that hold them), ``totals[b]`` its weighted size. Per split
    (``_split_state``), what the copies' maps make of it: for the map of a simple use case (isotonic of the top
    label), each copy's calibrated confidence of every distinct confidence of the split, shape (n_copies,
    n_distinct); for other maps, each copy's distribution of the truth, shape (n_copies, n, C); kept when
    ``keep`` and within ``_KEPT_FLOATS``, else made again on every call. Beside the first, for the reference
    itself, each copy's weight of each distinct confidence (as many floats again; :meth:`reference_values`).
    """

    def __init__(self, calibrators: list, counts: np.ndarray, totals: list, keep: bool):
        self.calibrators, self.counts, self.totals, self.keep = calibrators, counts, totals, keep
        self._states: dict[int, tuple] = {}
        self._cell_weights: dict[int, np.ndarray] = {}

    @classmethod
    def draw(cls, reference: Predictions, method: str, n_resamples: int, rng, keep: bool) -> "_Copies":
        """Draw copies of the reference and refit the map on each (a copy that cannot be fitted, e.g. one
        class only, is drawn again, at most ``2 * n_resamples`` draws)."""
        from dataclasses import replace

        weight = reference.sample_weight
        rows = reference.n
        calibrators, counts, totals = [], [], []
        for _ in range(2 * n_resamples):  # loop over resamples, not items
            if len(calibrators) == n_resamples:
                break
            drawn = rng.multinomial(rows, np.full(rows, 1.0 / rows))
            copies = weight * drawn
            if copies.sum() <= 0:
                continue
            try:
                calibrator = _fit_estimation_calibrator(replace(reference, sample_weight=copies), method)
            except ValueError:
                continue
            calibrators.append(calibrator)
            counts.append(drawn)
            totals.append(copies.sum())
        largest = max((int(c.max()) for c in counts), default=0)
        # whole numbers, so any integer type that holds them gives the same float weights
        counts = np.array(counts, dtype=np.min_scalar_type(largest)).reshape(len(counts), rows)
        return cls(calibrators, counts, totals, keep)

    def weights(self, reference: Predictions, b: int) -> np.ndarray:
        """Copy b's weight of every row of the reference, shape (n,): ``sample_weight * draws``."""
        return reference.sample_weight * self.counts[b]

    def _split_state(self, predictions: Predictions, n_classes: int):
        key = id(predictions)
        state = self._states.get(key)
        if state is not None:
            return state
        calibrators = self.calibrators
        if not calibrators or calibrators[0].method == "none":
            state = ("none",)
        elif _top_label_isotonic(calibrators[0]):
            distinct, first, inverse = (np.unique(predictions.confidence, return_index=True, return_inverse=True)
                                        if self.keep else (None, None, None))
            if not self.keep or len(calibrators) * distinct.size > _KEPT_FLOATS:
                state = ("top label", None, None)
            else:
                # a calibrated confidence is a function of the raw one (np.interp, clipped): its value at each
                # distinct confidence, read back per item, is the very array Calibrator._apply gives
                kept = np.empty((len(calibrators), distinct.size))
                for b, calibrator in enumerate(calibrators):  # loop over resamples, not items
                    kept[b] = _calibrated(calibrator, predictions).confidence[first]
                state = ("top label", inverse.reshape(-1), kept)
        elif self.keep and len(calibrators) * predictions.n * n_classes <= _KEPT_FLOATS:
            state = ("truth", [None] * len(calibrators))
        else:
            state = ("truth", None)
        if self.keep:
            self._states[key] = state
            weakref.finalize(predictions, self._states.pop, key, None)
        return state

    def reference_values(self, reference: Predictions, matrix, outcome: np.ndarray) -> np.ndarray:
        """Each copy's reference value per item, shape (n_copies,): its weighted mean of ``means``.

        Under a top-label map, where every item of a distinct confidence has the same two outcomes (a threshold
        on the confidence the maps read, valued by a use case), copy b's mean of that confidence's items is one
        number ``m_b[u]``, and the copy's sum is ``sum_u m_b[u] * W_b[u]``, ``W_b`` the copy's weight of each
        distinct confidence (kept with the copies): a sum over distinct confidences in numpy, not a dot over the
        items. Otherwise each item's mean times its weight, summed pairwise by numpy, copy by copy. Neither is
        the dot these were until 2026-11-30 (``mean @ weights``, which OpenBLAS splits over its threads above
        10^4 items, the split set by the machine's cores, each thread's sum in its own order, and whose threads
        cost seconds per new value on a loaded machine): all three are within a few ulps of the exact sum, the
        two sums here nearer (``tests/core/test_bands_values.py``).
        """
        cells = self._cells(reference, outcome)
        if cells is None:  # each item's mean, summed pairwise by numpy
            return np.array([float(np.sum(mean * self.weights(reference, b)) / self.totals[b])
                             for b, mean in enumerate(self.means(reference, matrix, outcome))])
        inverse, first, kept, cell_right, cell_next = cells
        # kept beside the kept confidences only (the same bound); else made again, copy by copy
        by_cell = None if kept is None else self._weights_by_cell(reference, inverse, cell_right.size)
        out = np.empty(len(self.calibrators))
        for b, calibrator in enumerate(self.calibrators):  # loop over resamples, not items
            confidence = _calibrated(calibrator, reference).confidence[first] if kept is None else kept[b]
            weight = by_cell[b] if by_cell is not None else np.bincount(
                inverse, weights=self.weights(reference, b), minlength=cell_right.size)
            out[b] = float(np.sum(_two_terms(confidence, cell_right, cell_next) * weight) / self.totals[b])
        return out

    def _cells(self, reference: Predictions, outcome: np.ndarray):
        """(inverse, first, kept calibrated confidences or None, right and next outcome per distinct confidence)
        of a split when each distinct confidence's items share both outcomes under a top-label map (else None)."""
        if not self.calibrators or not _top_label_isotonic(self.calibrators[0]) or not _two_terms_add_as_einsum():
            return None
        state = self._split_state(reference, outcome.shape[1])
        if state[1] is not None:
            _, inverse, kept = state
            first = None
        else:
            _, first, inverse = np.unique(reference.confidence, return_index=True, return_inverse=True)
            inverse, kept = inverse.reshape(-1), None
        right, next_class = _top_label_outcomes(reference.y_pred, outcome)
        n_cells = inverse.max(initial=-1) + 1 if kept is None else kept.shape[1]
        cell_right, cell_next = np.zeros(n_cells), np.zeros(n_cells)
        cell_right[inverse], cell_next[inverse] = right, next_class
        if not (_same_bits(cell_right[inverse], right) and _same_bits(cell_next[inverse], next_class)):
            return None
        return inverse, first, kept, cell_right, cell_next

    def chunk_values(self, predictions: Predictions, outcome: np.ndarray, chunk_of_row: np.ndarray,
                     n_chunks: int) -> np.ndarray | None:
        """Shape (n_copies, n_chunks): each copy's weighted sum of its means over each chunk's items, summed by
        distinct confidence as :meth:`reference_values` sums the reference (``sum_u m_b[u] * W_c[u]``, ``W_c`` a
        chunk's weight of each distinct confidence); None where the items of a distinct confidence do not share
        their outcomes (then ``means``, item by item)."""
        cells = self._cells(predictions, outcome)
        if cells is None:
            return None
        inverse, first, kept, cell_right, cell_next = cells
        n_cells = cell_right.size
        by_chunk = np.bincount(chunk_of_row * n_cells + inverse, weights=predictions.sample_weight,
                               minlength=n_chunks * n_cells).reshape(n_chunks, n_cells)
        out = np.empty((len(self.calibrators), n_chunks))
        for b, calibrator in enumerate(self.calibrators):  # loop over resamples, not items
            confidence = _calibrated(calibrator, predictions).confidence[first] if kept is None else kept[b]
            out[b] = np.sum(by_chunk * _two_terms(confidence, cell_right, cell_next), axis=1)
        return out

    def _weights_by_cell(self, reference: Predictions, inverse: np.ndarray, n_cells: int) -> np.ndarray:
        """Shape (n_copies, n_cells): each copy's weight of the items of each distinct confidence (kept)."""
        key = id(reference)
        found = self._cell_weights.get(key)
        if found is None:
            found = np.empty((len(self.calibrators), n_cells))
            for b in range(len(self.calibrators)):  # loop over resamples, not items
                found[b] = np.bincount(inverse, weights=self.weights(reference, b), minlength=n_cells)
            self._cell_weights[key] = found
            weakref.finalize(reference, self._cell_weights.pop, key, None)
        return found

    def means(self, predictions: Predictions, matrix, outcome: np.ndarray):
        """Each copy's per-item expected value of the policy's actions, shape (n,) each, copy by copy.

        Bit for bit ``_moments(_truth(_calibrated(calibrator, predictions), matrix), outcome)[0]``.
        """
        state = self._split_state(predictions, outcome.shape[1])
        if state[0] == "none":  # every copy's map is the identity: one truth for all
            mean = np.einsum("ik,ik->i", _truth(predictions, matrix), outcome)
            for _ in self.calibrators:
                yield mean
            return
        if state[0] == "truth":
            kept = state[1]
            for b, calibrator in enumerate(self.calibrators):  # loop over resamples, not items
                truth = None if kept is None else kept[b]
                if truth is None:
                    truth = _truth(_calibrated(calibrator, predictions), matrix)
                    if kept is not None:
                        kept[b] = truth
                yield np.einsum("ik,ik->i", truth, outcome)
            return
        _, inverse, kept = state
        right, next_class = _top_label_outcomes(predictions.y_pred, outcome)
        exact = _two_terms_add_as_einsum()
        for b, calibrator in enumerate(self.calibrators):  # loop over resamples, not items
            confidence = _calibrated(calibrator, predictions).confidence if kept is None else kept[b][inverse]
            if exact:
                yield _two_terms(confidence, right, next_class)
            else:
                yield np.einsum("ik,ik->i", _top_label_truth(confidence, predictions.y_pred, outcome.shape[1]),
                                outcome)


class _ReferenceBootstrap:
    """Bootstrap copies of the reference, each with its map refitted: the reference's share of the uncertainty.

    ``mu[b]`` is copy b's reference value per item; :meth:`estimates` gives each copy's
    estimate of every chunk of a split, with the copy's map. A copy on which the map
    cannot be fitted (e.g. one class only) is drawn again, at most ``2 * n_resamples`` draws.

    Under the default seed (``seeded``) the copies, their maps and what the maps make of each split
    (:class:`_Copies`) are kept per reference: they depend on the data alone, so a new value or policy only
    values each copy's calibrated probabilities again (a product per item and copy), the very figures a fresh
    ``numpy.random.default_rng(0)`` gives.
    """

    def __init__(self, policy, reference: Predictions, values: Values, method: str, n_resamples: int, rng,
                 seeded: bool = False):
        self._policy, self._values = policy, values
        self._matrix = values.for_classes(reference.classes)
        key = (id(reference), method, n_resamples)
        copies = _BOOTSTRAP_COPIES.get(key) if seeded else None
        if copies is None:
            copies = _Copies.draw(reference, method, n_resamples, rng, keep=seeded)
            if seeded:
                while len(_BOOTSTRAP_COPIES) >= _KEPT_COPIES:
                    _BOOTSTRAP_COPIES.pop(next(iter(_BOOTSTRAP_COPIES)), None)
                _BOOTSTRAP_COPIES[key] = copies
                weakref.finalize(reference, _BOOTSTRAP_COPIES.pop, key, None)
        self._copies = copies
        self.calibrators = copies.calibrators
        self.reference_outcome = _outcomes(policy, reference, self._matrix)
        self.mu = copies.reference_values(reference, self._matrix, self.reference_outcome)

    def estimates(self, predictions: Predictions, chunk_of_row: np.ndarray, n_chunks: int) -> np.ndarray:
        """Shape (n_resamples, n_chunks): each copy's estimated value per item of each chunk."""
        outcome = _outcomes(self._policy, predictions, self._matrix)
        weight = predictions.sample_weight
        totals = np.bincount(chunk_of_row, weights=weight, minlength=n_chunks)
        out = self._copies.chunk_values(predictions, outcome, chunk_of_row, n_chunks)
        if out is None:
            out = np.empty((len(self.calibrators), n_chunks))
            for b, mean in enumerate(self._copies.means(predictions, self._matrix, outcome)):
                out[b] = np.bincount(chunk_of_row, weights=weight * mean, minlength=n_chunks)
        return out / np.where(totals > 0, totals, 1.0)


def _calibrated(calibrator, predictions: Predictions) -> Predictions:
    # not Calibrator.apply: its cache would keep a copy of the split per bootstrap map
    return predictions if calibrator.method == "none" else calibrator._apply(predictions)


# Per (id of the reference, id of a chunk): its drift test, which depends on their confidences alone; with the
# reference's sorted distribution. Each dropped with its objects (chunk_predictions gives the same chunk objects
# again, so a new value or policy finds them).
_DRIFT: dict[tuple, tuple] = {}
_SORTED_REFERENCES: dict[int, _SortedECDF] = {}


def _kept(store: dict, key, owners, make):
    found = store.get(key)
    if found is None:
        found = store[key] = make()
        for owner in owners:
            weakref.finalize(owner, store.pop, key, None)
    return found


def _drift(reference: Predictions, chunk: Predictions) -> tuple[float, float]:
    """``_ks_test`` of a chunk's confidences against the reference's, kept per (reference, chunk)."""
    def test():
        ecdf = _kept(_SORTED_REFERENCES, id(reference), (reference,),
                     lambda: _SortedECDF(reference.confidence, reference.sample_weight))
        return _ks_test(ecdf, reference.sample_weight, chunk.confidence, chunk.sample_weight)

    return _kept(_DRIFT, (id(reference), id(chunk)), (reference, chunk), test)


def monitoring_record(
    reference: Predictions, policy: Policy, values: Values, *, reference_split: str, calibration: str = "auto",
    alert_confidence: float = 0.99, n_resamples: int = DEFAULT_RESAMPLES, rng: np.random.Generator | None = None,
) -> dict:
    """What a serving system needs to raise the alerts of :func:`monitor_bands` (policy JSON ``monitoring``).

    A chunk of weighted size W alerts when its estimated value per item,
    computed with ``estimation_calibration``, leaves
    ``reference_value_per_item +- z * sqrt(reference_sd_per_item^2 / W + reference_mean_sd^2)``,
    z the normal quantile of ``alert_confidence``. ``reference_mean_sd`` is
    the bootstrap standard deviation of the reference value (its finite
    sample and the map fitted on it); this rule is a little wider than
    :func:`monitor_bands`' own, which also subtracts what the map's error
    shares between the chunk and the reference.
    """
    alert_confidence = _check_level(alert_confidence, "alert_confidence")
    seeded = rng is None
    n_resamples, rng = _check_resampling(n_resamples, rng)
    reference.require_labels("the monitoring reference (it fits the calibration)")
    method = _estimation_method(reference, values, calibration)
    calibrator, text = _estimation_calibrator(reference, values, method)
    mu, sd = _reference_moments(policy, reference, values, calibrator)
    bootstrap = _ReferenceBootstrap(policy, reference, values, method, n_resamples, rng, seeded)
    return {
        "reference_split": reference_split,
        "estimation_calibration": calibrator.to_dict(),
        "calibration_text": text,
        "reference_value_per_item": mu,
        "reference_sd_per_item": sd,
        "reference_mean_sd": float(np.std(bootstrap.mu, ddof=1)) if bootstrap.mu.size > 1 else 0.0,
        "alert_confidence": alert_confidence,
        "alert_z": _z(alert_confidence),
    }


_ESTIMATION_METHODS = ("auto", "none", "isotonic", "platt", "temperature")
_ISOTONIC_POSITIVE = "isotonic of the positive class"  # internal name: the method stays "isotonic"


def _estimation_method(reference: Predictions, values: Values, method: str) -> str:
    """The map ``method`` names for these values; "auto": isotonic, Platt (binary matrix) or temperature."""
    if method == _ISOTONIC_POSITIVE:  # already resolved
        return method
    if method not in _ESTIMATION_METHODS:
        raise ValueError(
            f"calibration for monitoring must be one of {', '.join(_ESTIMATION_METHODS)}, not {method!r}"
        )
    use_case = values.as_use_case() is not None
    binary = len(reference.classes) == 2
    if method == "isotonic" and not (use_case or binary):
        raise ValueError("a per-class value matrix of more than two classes needs probability vectors: use "
                         "temperature (or none), not isotonic")
    if method in ("auto", "isotonic") and not use_case and binary and reference.has_proba:
        # the value depends on which class is true: calibrate P(positive), as NannyML's CBPE does, so that
        # a miscalibration that differs between the two predicted classes is corrected too
        return _ISOTONIC_POSITIVE
    if method == "auto":
        return "isotonic" if use_case or binary else "temperature"
    if method == "platt" and not binary:
        raise ValueError(f"platt calibration is for two classes; this run has {len(reference.classes)}: use "
                         "temperature (or none)")
    return method


def _fit_estimation_calibrator(reference: Predictions, method: str):
    from .._model.recalibration import Calibrator, _fit_isotonic, fit_calibration

    if method == _ISOTONIC_POSITIVE:
        return _fit_isotonic(reference, positive_class=True)
    return Calibrator("none", {}) if method == "none" else fit_calibration(reference, method)


def _estimation_calibrator(reference: Predictions, values: Values, method: str):
    method = _estimation_method(reference, values, method)
    calibrator = _fit_estimation_calibrator(reference, method)
    if method == "none":
        return calibrator, "raw model probabilities (no calibration)"
    name = "isotonic calibration of P(positive class)" if method == _ISOTONIC_POSITIVE else f"{method} calibration"
    return calibrator, f"{name} fitted on the labelled reference split ({reference.total_weight:g} items)"


def monitor_bands(
    reference: Predictions,
    analysis: Predictions | Mapping[str, Predictions],
    policy: Policy,
    values: Values,
    *,
    size=None,
    n_chunks=None,
    period=None,
    calibration: str = "auto",
    confidence: float = 0.95,
    alert_confidence: float = 0.99,
    drift_level: float = 0.01,
    n_resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | None = None,
) -> MonitorBands:
    """Label-free value per chunk with a band, alerts and a drift signal.

    Parameters
    ----------
    reference : Predictions
        Labelled reference split (e.g. the test split): fits the estimation
        calibration and sets the reference band and distribution.
    analysis : Predictions or mapping of split name -> Predictions
        The data to watch, chunked like :func:`monitor`; labelled chunks are back-tested.
    policy : Policy
        Not ``two_tier``.
    values : UseCase or ValueMatrix
    size, n_chunks, period
        How to chunk; exactly one (see :func:`chunk_predictions`).
    calibration : {"auto", "isotonic", "platt", "temperature", "none"}
        Estimation calibration fitted on ``reference``; "auto" = isotonic for
        a simple use case (top label) and for a binary value matrix (of
        P(positive class)), temperature for a value matrix of more classes.
    confidence : float
        Coverage of the per-chunk band.
    alert_confidence : float
        Coverage of the reference band (an alert outside it).
    drift_level : float
        p-value below which the confidence distribution is flagged as drifted.
    n_resamples : int
        Bootstrap copies of the reference (each refits the calibration).
    rng : numpy.random.Generator, optional
        Draws the bootstrap copies; ``numpy.random.default_rng(0)`` when not
        given, so that the same data give the same bands.

    Examples
    --------
    >>> import valuecore as vc
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1, 400)
    >>> p = vc.Predictions.from_top_label(["a"] * 400, conf, np.where(rng.uniform(size=400) < conf, "a", "b"),
    ...                                  classes=["a", "b"])
    >>> out = monitor_bands(p.subset(slice(0, 200)), p.subset(slice(200, 400)), vc.Policy("accept_all"),
    ...                     vc.UseCase(1, 0, -1), n_chunks=2)
    >>> out.frame[["chunk", "alert", "drift", "covered"]]
          chunk  alert  drift  covered
    0   [0:100]  False  False     True
    1 [100:200]  False  False     True
    """
    import pandas as pd

    from .chunks import chunk_predictions

    _check_policy(policy)
    confidence = _check_level(confidence, "confidence")
    alert_confidence = _check_level(alert_confidence, "alert_confidence")
    drift_level = _check_level(drift_level, "drift_level")
    seeded = rng is None
    n_resamples, rng = _check_resampling(n_resamples, rng)
    _check_reference(reference)
    splits = {"all": analysis} if isinstance(analysis, Predictions) else dict(analysis)
    method = _estimation_method(reference, values, calibration)
    calibrator, calibration_text = _estimation_calibrator(reference, values, method)
    bootstrap = _ReferenceBootstrap(policy, reference, values, method, n_resamples, rng, seeded)

    mu, sd = _reference_moments(policy, reference, values, calibrator, bootstrap.reference_outcome)
    z, z_alert = _z(confidence), _z(alert_confidence)
    # A chunk's value per item (realised or estimated) lies between the lowest and the highest value an item can
    # take: the bands stop there (clipping moves no coverage and no alert, and no band promises $1.60 per item
    # where a correct answer earns $1).
    cells = values.for_classes(reference.classes).values
    lowest, highest = float(np.min(cells)), float(np.max(cells))

    rows = []
    for split, run in splits.items():  # loop over splits and chunks, never items
        chunks = chunk_predictions(run, size=size, n_chunks=n_chunks, period=period)
        chunk_of_row = np.zeros(run.n, dtype=np.int64)
        for index, chunk in enumerate(chunks):
            chunk_of_row[chunk.rows] = index
        copies = bootstrap.estimates(run, chunk_of_row, len(chunks))  # (n_resamples, n_chunks)
        calibration_variance = np.var(copies, axis=0, ddof=1) if len(copies) > 1 else np.zeros(len(chunks))
        reference_variance = (
            np.var(copies - bootstrap.mu[:, None], axis=0, ddof=1) if len(copies) > 1 else np.zeros(len(chunks))
        )
        for index, chunk in enumerate(chunks):
            p = chunk.predictions
            weight = p.sample_weight
            total = float(weight.sum())
            if total <= 0:
                continue
            chunk_matrix = values.for_classes(p.classes)
            outcome = _outcomes(policy, p, chunk_matrix)  # valued calibrated, then raw
            estimated, variance = _chunk_estimate(policy, p, values, calibrator, weight, total, outcome)
            distance, p_value = _drift(reference, p)
            # The map's correction is checked by labels only where the reference has items like the chunk's:
            # on the share that moved (at least the KS distance), the truth may be anywhere between the raw and
            # the calibrated estimate (NannyML's car-loan data: misses of up to 11 per item, issue 19).
            raw = float(_item_moments(outcome, p, chunk_matrix, None)[0] @ weight / total)
            shift = distance * abs(estimated - raw) if calibrator.method != "none" and distance == distance else 0.0
            half = z * math.sqrt(float(variance @ weight) / total**2 + calibration_variance[index]) + shift
            reference_half = z_alert * math.sqrt(sd**2 / total + reference_variance[index])
            realised = covered = None
            if p.has_labels:
                from .._engine.evaluate import evaluate

                realised = evaluate(policy, p, values).value_total / total
                covered = bool(estimated - half - 1e-12 <= realised <= estimated + half + 1e-12)
            rows.append({
                "split": str(split),
                "chunk": chunk.key,
                "start": chunk.start,
                "end": chunk.end,
                "n": total,
                "estimated_value_per_item": estimated,
                "band_low": max(estimated - half, lowest),
                "band_high": min(estimated + half, highest),
                "calibration_shift": shift,
                "reference_low": max(mu - reference_half, lowest),
                "reference_high": min(mu + reference_half, highest),
                "alert": not (mu - reference_half <= estimated <= mu + reference_half),
                "drift_statistic": distance,
                "drift_p_value": p_value,
                "drift": bool(p_value < drift_level),
                "has_labels": p.has_labels,
                "realised_value_per_item": np.nan if realised is None else realised,
                "covered": covered,
            })
    frame = pd.DataFrame(rows, columns=list(BAND_COLUMNS))
    labelled = frame[frame["has_labels"]]
    return MonitorBands(
        frame=frame,
        calibration=calibrator.to_dict(),
        calibration_text=calibration_text,
        reference_value_per_item=mu,
        reference_sd=sd,
        reference_mean_sd=float(np.std(bootstrap.mu, ddof=1)) if bootstrap.mu.size > 1 else 0.0,
        n_resamples=len(bootstrap.calibrators),
        confidence=confidence,
        alert_confidence=alert_confidence,
        drift_level=drift_level,
        n_backtest=int(len(labelled)),
        backtest_coverage=float(labelled["covered"].astype(bool).mean()) if len(labelled) else None,
    )


def _check_policy(policy) -> None:
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be a Policy, got {type(policy).__name__}")
    if policy.kind == "two_tier":
        raise ValueError("bands for two_tier policies are not available: monitor its automatic tier instead")


def _check_reference(reference: Predictions) -> None:
    reference.require_labels("the monitoring reference (it fits the calibration)")
    if reference.total_weight <= 0:
        raise ValueError("the monitoring reference split has no items")


def _chunk_estimate(policy: Policy, chunk: Predictions, values: Values, calibrator, weight: np.ndarray,
                    total: float, outcome: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """A chunk's estimated value per item under ``calibrator`` and its items' variances, shape (n,) (``outcome``:
    the policy's ``_outcomes`` on the chunk, when already taken)."""
    if outcome is None:
        mean, variance = expected_item_values(policy, chunk, values, calibrator)
    else:
        mean, variance = _item_moments(outcome, chunk, values.for_classes(chunk.classes), calibrator)
    return float(mean @ weight / total), variance


ESTIMATE_COLUMNS = ("split", "chunk", "start", "end", "n", "estimated_value_per_item")


def monitor_estimates(
    reference: Predictions,
    analysis: Predictions | Mapping[str, Predictions],
    policy: Policy,
    values: Values,
    *,
    size=None,
    n_chunks=None,
    period=None,
    calibration: str = "auto",
):
    """The label-free estimate per chunk of :func:`monitor_bands`, without its bands, alerts, drift or back-test.

    For a view that shows the estimate alone: no bootstrap copy of the reference is drawn or valued, no
    drift test or realised value is taken. Each row's ``estimated_value_per_item`` is, bit for bit, that
    of the same chunk in ``monitor_bands(...).frame`` with the same arguments (the same calibration fitted
    on ``reference``, the same arithmetic); chunks of no weight are left out there and here.

    Returns
    -------
    DataFrame
        One row per chunk, columns ``ESTIMATE_COLUMNS``.
    """
    import pandas as pd

    from .chunks import chunk_predictions

    _check_policy(policy)
    _check_reference(reference)
    splits = {"all": analysis} if isinstance(analysis, Predictions) else dict(analysis)
    calibrator, _ = _estimation_calibrator(reference, values, _estimation_method(reference, values, calibration))
    rows = []
    for split, run in splits.items():  # loop over splits and chunks, never items
        for chunk in chunk_predictions(run, size=size, n_chunks=n_chunks, period=period):
            weight = chunk.predictions.sample_weight
            total = float(weight.sum())
            if total <= 0:
                continue
            estimated, _ = _chunk_estimate(policy, chunk.predictions, values, calibrator, weight, total)
            rows.append((str(split), chunk.key, chunk.start, chunk.end, total, estimated))
    return pd.DataFrame(rows, columns=list(ESTIMATE_COLUMNS))
