"""How sure are we? "On this data" versus "on the distribution".

A value computed on an evaluation split is a fact *about that split*: on
these items the policy earned exactly this much, and of two models the one
with the higher figure was better *on these items*. That needs no interval.
The question a decision maker usually asks is different: what will the policy
earn on *new* items from the same distribution? The split is then a sample,
its mean value an estimate, and the estimate needs a standard error, a
confidence interval, and for two models a paired test (seed 004). Every
result here holds the numbers of both readings; :mod:`valuecore.wording` says
them in words, so the dashboard never mixes them.

Weights follow the package convention: an integer weight ``w`` is ``w``
copies of the item ("frequency" weights), so a weight of 2 gives exactly the
interval of the item written twice. Fractional weights cannot be copies; they
are read as sampling ("probability") weights, see :func:`mean_interval`.

Bootstrap resamples are integer counts over the items. A resample is therefore
only a new weight vector: the confidence order of a presorted run stays valid,
so every resampled VOC curve or re-tuned threshold is a weighted cumulative
sum over the sorted order, vectorised across a batch of resamples as a
``(batch, n)`` matrix small enough to stay in cache.

Examples
--------
>>> iv = mean_interval([1.0, 1.0, 0.0, -4.0, 1.0, 1.0, 1.0, 1.0])
>>> round(iv.mean, 3), round(iv.low, 3), round(iv.high, 3)
(0.25, -1.682, 0.95)
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import stats

from .._model.values import check_value_range as _check_value_range
from .._engine.evaluate import item_values
from .._engine.fitting import Policy, Values, fit_policy
from .._model.predictions import Predictions
from .._engine.sorting import SortedRun, acceptance_limits, dimensionless_value
from .._engine.voc import VOC_MODES
from .bounded import (RowsOfIntervals, bounded_p_value, interval_from_counts, one_more_at_worst, weighted_interval,
                       weighted_p_value)
from .._engine.tally import Grouped, group_items

__all__ = [
    "Interval",
    "PairedComparison",
    "VOCBand",
    "ThresholdStability",
    "WEIGHT_KINDS",
    "mean_interval",
    "bootstrap_interval",
    "policy_interval",
    "result_interval",
    "paired_comparison",
    "voc_band",
    "threshold_stability",
]

WEIGHT_KINDS = ("auto", "frequency", "probability")

# Resamples are drawn in small batches whose (batch, n) int64 count matrix
# takes about this many bytes: small enough to stay in cache. Measured on
# 10^5 items (2 shared cores): 4 MB batches run the draw-count-reduce pipeline
# ~3x faster than 50 MB batches, and batches of one row pay per-call overhead.
_CACHE_BYTES = 4 * 10**6
# Upper bound on the bytes of the per-resample tables that one chunk of the
# VOC band keeps for its loop over omegas.
_MEMORY_BUDGET = 200 * 10**6
# Frequency weights draw sum(w) copies per resample. Up to this many copies
# per item the draws are cheap integers; beyond it one multinomial per
# resample (O(n) binomials, whatever sum(w) is) is faster than drawing copies.
_MAX_DRAWS_PER_ITEM = 8


# ------------------------------------------------------------------ results
@dataclass(frozen=True)
class Interval:
    """A mean per item with its uncertainty.

    Attributes
    ----------
    mean : float
        Weighted mean of the per-item values: exact on *this* data.
    std_error : float
        Estimated standard error of ``mean`` as an estimate of the expected
        value on new data (the bootstrap standard deviation for
        ``method="bootstrap"``); NaN with fewer than 2 items.
    low, high : float
        Confidence interval for the expected value on new data from the same
        distribution; ``-inf``/``inf`` with fewer than 2 items.
    n : float
        Effective number of items: the number of rows, ``sum(w)`` for
        frequency weights, Kish's ``sum(w)**2 / sum(w**2)`` for probability
        weights.
    confidence : float
    method : {"bounded", "t", "bootstrap"}
        "bounded" (the default everywhere): the interval for a mean of
        outcomes within known bounds, with one extra item at the worst
        possible value for the low end and at the best for the high end
        (Clopper-Pearson for two outcomes; see ``valuecore._stats.bounded``). It
        holds when the costliest outcome is rare or never seen.
    worst_value : float
        The lowest value one item can take (e.g. the value of a wrong answer):
        what the low end allows for. NaN when not known.
    n_worst : float
        Weighted number of items seen at ``worst_value``.
    n_acted : float
        Weighted number of items the model acted on (not handed over); NaN
        when the interval was built from bare values.
    one_more_worst : float
        How much lower the value per item would be had one more item taken
        ``worst_value`` (instead of the mean): ``(mean - worst_value) / n``.
    """

    mean: float
    std_error: float
    low: float
    high: float
    n: float
    confidence: float
    method: str
    worst_value: float = math.nan
    n_worst: float = math.nan
    n_acted: float = math.nan
    one_more_worst: float = math.nan


@dataclass(frozen=True)
class PairedComparison:
    """Model A minus model B, item by item, on the same labelled items.

    Attributes
    ----------
    mean_difference : float
        Weighted mean over items of ``value_A - value_B`` (currency per item);
        exact on this data.
    low, high : float
        Confidence interval of the expected difference on new data: the
        bounded interval of :func:`mean_interval`, the differences lying
        between ``lowest - highest`` and ``highest - lowest`` of the values.
    p_value : float
        Two-sided p-value of "no difference in expectation" that matches
        ``low``/``high``: 0 lies outside the interval at confidence ``c``
        exactly when ``p_value < 1 - c``. 1 when every difference is 0; NaN
        with fewer than 2 items. The one test the result carries: under a true
        null its rejection rate is measured at or below its level in every
        regime of ``benchmarks/bench_interval_coverage.py``, rare costly
        differences and sampling weights included, where the paired t-test
        and the paired bootstrap it replaced rejected up to 86% of the time.
    n : float
        Effective number of paired items (see :attr:`Interval.n`).
    std_error : float
    confidence : float
    total_difference : float
        Weighted sum over items of ``value_A - value_B``: exact on this data.
    total_weight : float
        Weighted number of paired items.

    The two readings in words are :func:`valuecore.wording.paired_sentences`.
    """

    mean_difference: float
    low: float
    high: float
    p_value: float
    n: float
    std_error: float = math.nan
    confidence: float = 0.95
    total_difference: float = math.nan
    total_weight: float = math.nan


@dataclass(frozen=True, eq=False)
class VOCBand:
    """Pointwise bootstrap band of a VOC curve on an omega grid.

    Attributes
    ----------
    omegas : ndarray of shape (m,)
    low, high : ndarray of shape (m,)
        Percentile band of the dimensionless value per item at each omega.
    median : ndarray of shape (m,)
    mode : str
    confidence : float
    n_resamples : int
    """

    omegas: np.ndarray
    low: np.ndarray
    high: np.ndarray
    median: np.ndarray
    mode: str = "oracle"
    confidence: float = 0.95
    n_resamples: int = 0

    def to_frame(self, model: str = "") -> pd.DataFrame:
        """Tidy frame ``model, mode, omega, low, median, high``."""
        return pd.DataFrame(
            {
                "model": model,
                "mode": self.mode,
                "omega": self.omegas,
                "low": self.low,
                "median": self.median,
                "high": self.high,
            }
        )


@dataclass(frozen=True, eq=False)
class ThresholdStability:
    """Spread of the tuned global threshold over bootstrap resamples of the tuning data.

    Attributes
    ----------
    thresholds : ndarray of shape (n_resamples,)
        The threshold re-tuned on each resample; NaN where accepting nothing
        was best (the policy's ``None``).
    low, high, median : float or None
        Quantiles ``(1 - confidence) / 2``, ``(1 + confidence) / 2`` and 1/2 of
        ``thresholds``, "always abstain" counting as above every threshold.
        Each is an observed threshold (inverted empirical CDF, no
        interpolation); None when it falls on "always abstain".
    share_always_abstain : float
        Share of resamples where accepting nothing was best.
    tuned_threshold : float or None
        The threshold tuned on the tuning data itself (``fit_policy``).
    confidence : float
    """

    thresholds: np.ndarray
    low: float | None
    high: float | None
    median: float | None
    share_always_abstain: float
    tuned_threshold: float | None = None
    confidence: float = 0.95

    @property
    def spread(self) -> float:
        """``high - low``; NaN when either end is "always abstain"."""
        if self.low is None or self.high is None:
            return math.nan
        return self.high - self.low


# --------------------------------------------------------------- checking
def _check_confidence(confidence: float) -> float:
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence_level must lie strictly between 0 and 1, got {confidence}")
    return confidence


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(0)), got {type(rng).__name__}"
        )
    return rng


def _check_resamples(n_resamples: int) -> int:
    n_resamples = int(n_resamples)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    return n_resamples


def _values_and_weights(values, sample_weight) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {v.shape}")
    if not np.isfinite(v).all():
        raise ValueError("values has NaN or infinite entries")
    if sample_weight is None:
        return v, np.ones(v.shape[0])
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != v.shape:
        raise ValueError(f"sample_weight has shape {w.shape} but values has shape {v.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("sample_weight must be finite and non-negative")
    return v, w


def _weight_kind(weight: np.ndarray, kind: str) -> str:
    """Resolve "auto": integer weights are copies, anything else sampling weights."""
    if kind not in WEIGHT_KINDS:
        raise ValueError(f"weight_kind must be one of {list(WEIGHT_KINDS)}, got {kind!r}")
    return _resolve_kind(bool(np.all(weight == np.round(weight))), float(weight.sum()), kind)


def _resolve_kind(integral: bool, total: float, kind: str) -> str:
    if kind == "auto":
        # Whole numbers beyond 2**53 in total are no exact counts: they are read as sampling weights.
        return "frequency" if integral and total <= 2.0**53 else "probability"
    if kind == "frequency" and not integral:
        raise ValueError("frequency weights must be whole numbers (a weight of w is w copies of the item)")
    return kind


def _grouped(v: np.ndarray, w: np.ndarray, kind: str) -> tuple[Grouped, str]:
    """Per-item values grouped by value (the one form every mean and interval here is computed from)."""
    integral = bool(np.all(w == np.round(w)))
    if kind not in WEIGHT_KINDS:
        raise ValueError(f"weight_kind must be one of {list(WEIGHT_KINDS)}, got {kind!r}")
    kind = _resolve_kind(integral, float(w.sum()), kind)
    return group_items(v, w, integral), kind


# ------------------------------------------------------------- the t interval
@dataclass(frozen=True)
class _Moments:
    mean: float
    std_error: float  # NaN when there are fewer than 2 (effective) items
    n: float
    df: float


def _total_and_mean(g: Grouped) -> tuple[float, float]:
    total = g.total
    if total <= 0:
        raise ValueError("no item has a positive weight: the mean is undefined")
    return total, float(np.dot(g.weight, g.values) / total)


def grouped_mean(g: Grouped) -> float:
    """The ``mean`` of :func:`grouped_interval` (bit for bit), without its interval."""
    return _total_and_mean(g)[1]


def _moments(g: Grouped, kind: str) -> _Moments:
    """Mean, standard error and effective size from the grouped values."""
    total, mean = _total_and_mean(g)
    resid = g.values - mean
    if kind == "frequency":
        # w copies of each item: n = sum(w) and the usual (n - 1) denominator,
        # so that weight 2 is exactly the item written twice.
        n = total
        if n < 2:
            return _Moments(mean, math.nan, n, n - 1)
        variance = float(np.dot(g.weight, resid * resid)) / (n - 1)
        return _Moments(mean, math.sqrt(variance / n), n, n - 1)
    # Probability weights: the linearisation ("sandwich") variance of the
    # weighted mean (a ratio estimator) with the n / (n - 1) small-sample
    # factor, which is scale-free and correct even when the weights are
    # related to the values. With equal weights it is the unweighted formula.
    n_positive = int(g.count.sum())
    n_eff = total * total / float(g.weight_sq.sum())
    if n_positive < 2:
        return _Moments(mean, math.nan, n_eff, n_eff - 1)
    spread = float(np.dot(g.weight_sq, resid * resid)) * n_positive / (n_positive - 1)
    return _Moments(mean, math.sqrt(spread) / total, n_eff, n_eff - 1)


def _t_bounds(m: _Moments, confidence: float) -> tuple[float, float]:
    if not math.isfinite(m.std_error):
        return -math.inf, math.inf
    if m.std_error == 0:
        return m.mean, m.mean
    half = float(stats.t.ppf((1 + confidence) / 2, m.df)) * m.std_error
    return m.mean - half, m.mean + half


def _observed_range(g: Grouped, value_range) -> tuple[float, float]:
    """The range the mean can take: the given bounds, widened to every value with positive weight."""
    lowest, highest = float(g.values[0]), float(g.values[-1])
    if value_range is not None:
        low, high = (float(x) for x in value_range)
        if not (math.isfinite(low) and math.isfinite(high)) or low > high:
            raise ValueError(f"value_range must be two finite numbers, lowest first, got {value_range!r}")
        lowest, highest = min(lowest, low), max(highest, high)
    return lowest, highest


def _largest_weight(g: Grouped) -> float:
    """The weight of the one more item the bound allows for under sampling weights (see :func:`mean_interval`)."""
    if g.weight_max is not None:
        return g.weight_max
    return float(np.sqrt(g.weight_sq.max()))  # no weight of a group is larger than the root of its squares' sum


def _bound_ends(g: Grouped, kind: str, lowest: float, highest: float, confidence: float):
    """Both ends of the bounded interval of ``g``; ``lowest``/``highest`` already hold every value of ``g``.

    Frequency weights are counts (the Dirichlet of the counts); sampling weights go through
    :func:`valuecore._stats.bounded.weighted_interval`.
    """
    if kind == "frequency":
        return interval_from_counts(g.values, g.weight, lowest, highest, confidence)
    return weighted_interval(g.values, g.weight, g.weight_sq, float(g.count.sum()), _largest_weight(g), lowest,
                             highest, confidence)


def _bound_p_value(g: Grouped, kind: str, lowest: float, highest: float, null: float = 0.0) -> float:
    """Two-sided p-value of "the expected value is ``null``" that matches :func:`_bound_ends`."""
    if kind == "frequency":
        return bounded_p_value(g.values, g.weight, lowest, highest, null)
    return weighted_p_value(g.values, g.weight, g.weight_sq, float(g.count.sum()), _largest_weight(g), lowest,
                            highest, null)


def _bounded_interval(g: Grouped, kind: str, m: _Moments, confidence: float, value_range) -> Interval:
    lowest, highest = _observed_range(g, value_range)
    n_worst = float(g.weight[g.values == lowest].sum())
    one_more = one_more_at_worst(m.mean, lowest, m.n)
    if not math.isfinite(m.std_error):
        # Fewer than 2 items: say "unknown", as the t interval does.
        return Interval(m.mean, m.std_error, -math.inf, math.inf, m.n, confidence, "bounded", lowest, n_worst,
                        math.nan, one_more)
    # lowest and highest already hold every value of the groups (``_observed_range``): what bounded_interval
    # would widen them to
    low, high = (float(x) for x in _bound_ends(g, kind, lowest, highest, confidence))
    # The bound's quantiles never pass the observed mean; min/max only absorb round-off.
    return Interval(m.mean, m.std_error, min(low, m.mean), max(high, m.mean), m.n, confidence, "bounded",
                    lowest, n_worst, math.nan, one_more)


def grouped_interval(g: Grouped, *, confidence_level: float = 0.95, weight_kind: str = "auto",
                     value_range=None, method: str = "bounded") -> Interval:
    """:func:`mean_interval` of values already grouped (:class:`valuecore._engine.tally.Grouped`): the same formulas."""
    confidence = _check_confidence(confidence_level)
    if method not in INTERVAL_METHODS:
        raise ValueError(f"method must be one of {list(INTERVAL_METHODS)}, got {method!r}")
    if weight_kind not in WEIGHT_KINDS:
        raise ValueError(f"weight_kind must be one of {list(WEIGHT_KINDS)}, got {weight_kind!r}")
    kind = _resolve_kind(g.integral, g.total, weight_kind)
    m = _moments(g, kind)
    if method == "bounded":
        return _bounded_interval(g, kind, m, confidence, value_range)
    low, high = _t_bounds(m, confidence)
    return Interval(m.mean, m.std_error, low, high, m.n, confidence, "t")


INTERVAL_METHODS = ("bounded", "t")


def interval_basis_record(interval) -> dict:
    """What ``ci95`` rests on: its method and the counts behind it (``docs/policy-json.md``)."""
    return {"method": interval.method, "n_acted": interval.n_acted, "n_worst": interval.n_worst,
            "worst_value": interval.worst_value, "one_more_worst": interval.one_more_worst}


def mean_interval(values, sample_weight=None, *, confidence_level: float = 0.95, weight_kind: str = "auto",
                  value_range=None, method: str = "bounded") -> Interval:
    """Weighted mean of per-item values with a confidence interval for the mean on new data.

    ``method="bounded"`` (the default): every item's value lies in
    ``value_range`` (e.g. the lowest and highest cell of the value matrix) and
    takes one of a few values, so the mean is a linear combination of outcome
    rates. The low end is the lower quantile of that combination under the
    Dirichlet distribution of the observed counts plus *one item at the
    lowest possible value*, the high end the upper quantile with one item at
    the highest (Clopper-Pearson for two outcomes; Learned-Miller & Thomas's
    bound for a bounded mean, in general). So a costly outcome that is rare or
    never seen still pulls the low end down: 0 wrong answers among 91 is not
    "no risk". The interval has zero width only when the value cannot vary
    (``value_range`` of zero width and every value equal to it). Coverage is
    measured in ``benchmarks/bench_interval_coverage.py`` (at least 93% in
    every regime measured, rare costly errors included, and with sampling
    weights where the costly errors sit in a group weighted 5-20 times the
    others).

    Every figure is computed from the values grouped by distinct value (their weights, squared weights
    and items of positive weight added per value; :class:`valuecore._engine.tally.Grouped`), the form a
    decision's tally gives without the items, so both give the same numbers: bit for bit with
    whole-number weights, within a relative ``~ 4 eps`` per group with fractional ones (the weights of a
    value are added in another order). Against dot products over the items the mean differs by that
    round-off only (tested at ``1e-12`` of the value scale).

    ``method="t"``: ``mean +- t_{(1 + confidence) / 2, n - 1} * SE`` with
    ``SE = s / sqrt(n)`` (seed 004), right for many items and a moderate
    spread, far too narrow when a costly outcome is rare.

    Parameters
    ----------
    values : array-like of shape (n,)
        Per-item values (e.g. :func:`item_values`), finite.
    sample_weight : array-like of shape (n,), optional
        Non-negative weights.
    confidence_level : float
        Coverage of the interval, in (0, 1).
    weight_kind : {"auto", "frequency", "probability"}
        "frequency": a weight ``w`` is ``w`` copies, so ``n = sum(w)``, the
        variance has the ``(n - 1)`` denominator and weight 2 gives exactly the
        interval of the item written twice; weights must be whole numbers.
        "probability": weights are sampling weights, any positive scale;
        ``SE**2 = k / (k - 1) * sum(w**2 (v - mean)**2) / sum(w)**2`` over the
        ``k`` items of positive weight (the survey "sandwich" variance), and
        ``n`` is Kish's effective size ``sum(w)**2 / sum(w**2)``. The bounded
        interval then allows for one more item *of the largest weight* at the
        worst (best) value, since a costly outcome never seen may hide among
        the items that weigh most: Dirichlet weights over the items and that
        one (the Bayesian bootstrap of the weighted mean), linearised for its
        mean and variance (``valuecore._stats.bounded.weighted_moments``). "auto"
        (the default) picks "frequency" when every weight is a whole number
        and "probability" otherwise. Both agree for equal weights.
    value_range : (float, float), optional
        The lowest and highest value one item can take. Without it, the
        lowest and highest observed values: then an outcome never seen cannot
        widen the interval, so pass it whenever it is known.
    method : {"bounded", "t"}

    Returns
    -------
    Interval
        With fewer than 2 (effective) items the standard error is NaN and the
        interval is unbounded.

    Examples
    --------
    >>> iv = mean_interval([1.0, 2.0, 3.0], sample_weight=[2, 1, 1])
    >>> twice = mean_interval([1.0, 1.0, 2.0, 3.0])
    >>> (iv.mean, iv.n, round(iv.low, 9)) == (twice.mean, twice.n, round(twice.low, 9))
    True

    Twenty correct answers, none wrong, where a wrong answer would cost 100:

    >>> iv = mean_interval([1.0] * 20, value_range=(-100.0, 1.0))
    >>> iv.mean, round(iv.low, 2), iv.high, iv.n_worst
    (1.0, -16.01, 1.0, 0.0)
    """
    v, w = _values_and_weights(values, sample_weight)
    g, _ = _grouped(v, w, weight_kind)
    return grouped_interval(g, confidence_level=confidence_level, weight_kind=weight_kind, value_range=value_range,
                            method=method)


def items_to_exclude(values, sample_weight, value_range, *, confidence_level: float = 0.95,
                     null: float = 0.0) -> float:
    """Items at which the bounded interval would exclude ``null`` if every value kept its observed share.

    The smallest ``n`` such that :func:`mean_interval` of ``n`` items in the
    observed proportions no longer holds ``null``; ``inf`` when the mean is
    ``null`` or no number of items up to 2**50 would do. Where a costly
    outcome is rare this is far more than a normal-approximation sample size
    says, because one more costly item moves the bound so much.

    Examples
    --------
    >>> items_to_exclude([1.0] * 9 + [0.0], None, (-1000.0, 1.0))  # 90% right, a wrong answer worth -1000
    3928.0
    """
    v, w = _values_and_weights(values, sample_weight)
    g, _ = _grouped(v, w, "auto")
    return grouped_items_to_exclude(g, value_range, confidence_level=confidence_level, null=null)


# Sizes 2, 4, ..., 2**50 are tried in batches of this many, smallest first.
_GRID_ROWS = 8


def grouped_items_to_exclude(g: Grouped, value_range, *, confidence_level: float = 0.95, null: float = 0.0) -> float:
    """:func:`items_to_exclude` of values already grouped."""
    confidence = _check_confidence(confidence_level)
    kind = _resolve_kind(g.integral, g.total, "auto")
    lowest, highest = _observed_range(g, value_range)
    if grouped_mean(g) == null or highest <= lowest:
        return math.inf
    if kind == "frequency":
        shares = g.weight / g.total

        def rows_of(n: np.ndarray) -> tuple:  # n copies in the observed shares
            return (g.values, n[:, None] * shares[None, :])
        rows_class = RowsOfIntervals
        ends = interval_from_counts
    else:
        size, largest = float(g.count.sum()), _largest_weight(g)

        def rows_of(n: np.ndarray) -> tuple:  # n items: each item of the sample n / size times over
            scale = (n / size)[:, None]
            return (g.values, scale * g.weight, scale * g.weight_sq, n, largest)
        rows_class = RowsOfIntervals.weighted
        ends = weighted_interval

    def excluded(n: np.ndarray) -> np.ndarray:
        low, high = ends(*rows_of(n), lowest, highest, confidence)
        return (low > null) | (high < null)

    grid = 2.0 ** np.arange(1, 51)
    rows = rows_class(*rows_of(grid), lowest, highest, confidence)
    for start in range(0, grid.size, _GRID_ROWS):  # the first excluding size: the rows after it are not needed
        low, high = rows.ends(slice(start, start + _GRID_ROWS))
        found = np.flatnonzero((low > null) | (high < null))
        if found.size:
            break
    if not found.size:
        return math.inf
    above = grid[start + found[0]]
    below = above / 2  # not excluded (or 1 item)
    return float(_bisect(excluded, below, above))


def _bisect(excluded, below, above, levels: int = 4):
    """Bisection over whole numbers of items (~50 steps at most), ``levels`` steps per vectorised call.

    Each call evaluates every midpoint the next ``levels`` steps could visit, then takes the steps:
    the same midpoints, so the same answer, as one step per call. Four levels (15 midpoints a call) took
    0.52 ms for the items to separate two rules on 5 * 10^5 items, six (63) 0.71 ms, one 1.1 ms.
    """
    while above - below > 1:
        frontier, points = [(below, above)], []
        for _ in range(levels):
            following = []
            for low, high in frontier:
                if high - low > 1:
                    middle = math.floor((high + low) / 2)
                    points.append(middle)
                    following += [(low, middle), (middle, high)]
            frontier = following
        outcome = dict(zip(points, excluded(np.array(points, dtype=np.float64)).tolist()))
        for _ in range(levels):
            if above - below <= 1:
                break
            middle = math.floor((above + below) / 2)
            if outcome[middle]:
                above = middle
            else:
                below = middle
    return above


def possible_range(values: Values, classes, policy: Policy | None = None) -> tuple[float, float]:
    """Lowest and highest value one item can take under ``values`` (and ``policy``, when given).

    A policy that hands every item over can only take the hand-off cells, and
    ``accept_all`` only the action cells; any other policy can take any cell.
    """
    cells = values.for_classes(classes).values
    if policy is not None and policy.kind in ("threshold", "calibrated_threshold") and policy.threshold is None:
        cells = cells[:, -1:]
    elif policy is not None and policy.kind == "accept_all":
        cells = cells[:, :-1]
    return float(cells.min()), float(cells.max())


# ------------------------------------------------------------- resampling
class _Resampler:
    """Bootstrap resample counts of a weighted sample, a batch at a time.

    A resample draws, with replacement, as many items as the sample has:
    ``sum(w)`` copies with probability proportional to ``w`` for frequency
    weights (exactly the bootstrap of the data written out with copies), or
    the ``k`` items of positive weight uniformly for probability weights
    (each drawn item keeps its weight).
    """

    def __init__(self, weight: np.ndarray, kind: str):
        self.n = int(weight.shape[0])
        self.scale = None if kind == "frequency" else weight
        self.item_of_draw = self.pvals = None
        if kind == "frequency":
            copies = np.rint(weight).astype(np.int64)
            self.n_draws = int(copies.sum())
            if self.n_draws > _MAX_DRAWS_PER_ITEM * max(self.n, 1):
                self.pvals = copies / self.n_draws
            elif self.n_draws != self.n or copies.max(initial=0) > 1:
                # Copy j of the written-out data is item item_of_draw[j]: the
                # same integer draws the written-out data would use, so weight
                # 2 and the item twice resample identically under one seed.
                self.item_of_draw = np.repeat(np.arange(self.n), copies)
        else:
            support = np.flatnonzero(weight > 0)
            self.n_draws = int(support.size)
            if support.size < self.n:
                self.item_of_draw = support
        if self.n_draws == 0:
            raise ValueError("no item has a positive weight: there is nothing to resample")

    @property
    def width(self) -> int:
        """Cells per resample of the widest working array."""
        return self.n if self.pvals is not None else max(self.n, self.n_draws)

    def counts(self, batch: int, rng: np.random.Generator) -> np.ndarray:
        """Draw counts of shape (batch, n), int64; each row sums to ``n_draws``."""
        if self.pvals is not None:
            return rng.multinomial(self.n_draws, self.pvals, size=batch)
        draws = rng.integers(0, self.n_draws, size=(batch, self.n_draws))
        if self.item_of_draw is not None:
            draws = self.item_of_draw[draws]
        # One bincount for the whole batch: shift row b into [b n, (b + 1) n).
        draws += (np.arange(batch, dtype=np.int64) * self.n)[:, None]
        return np.bincount(draws.ravel(), minlength=batch * self.n).reshape(batch, self.n)

    def weights(self, counts: np.ndarray) -> np.ndarray:
        """Resample weights of shape (batch, n), float64: counts, times w for probability weights."""
        if self.scale is None:
            return counts.astype(np.float64)
        return counts * self.scale


def _batches(n_resamples: int, width: int, batch_size: int | None):
    """(start, size) of the batches; by default a (batch, width) int64 array is ~_CACHE_BYTES."""
    if batch_size is None:
        batch_size = max(1, _CACHE_BYTES // (8 * max(width, 1)))
    batch_size = int(batch_size)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    for start in range(0, n_resamples, batch_size):
        yield start, min(batch_size, n_resamples - start)


def _rowdot(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` without BLAS: a threaded BLAS call per small batch
    costs more CPU in thread wake-ups than the product itself."""
    return np.einsum("ij,j->i", matrix, vector)


def _bootstrap_means(
    v: np.ndarray, w: np.ndarray, kind: str, rng: np.random.Generator, n_resamples: int, batch_size: int | None
) -> np.ndarray:
    """Weighted means of ``n_resamples`` bootstrap resamples, shape (n_resamples,).

    Frequency weights over few distinct values (item values of policies take a
    handful) resample the counts per distinct value, multinomial with the
    value's share of the weight: exactly the item bootstrap summed per value,
    in O(distinct values) per resample instead of O(items).
    """
    if kind == "frequency":
        distinct, cell = np.unique(v, return_inverse=True)
        if distinct.size <= _MAX_VALUE_CELLS:
            return _bootstrap_means_by_value(distinct, np.bincount(cell, weights=w, minlength=distinct.size), rng,
                                             n_resamples)  # fmt: skip
    sampler = _Resampler(w, kind)
    mass = v if kind == "frequency" else w * v
    means = np.empty(n_resamples)
    for start, size in _batches(n_resamples, sampler.width, batch_size):
        counts = sampler.counts(size, rng)
        # Frequency weights: every resample has exactly sum(w) copies.
        denominator = sampler.n_draws if kind == "frequency" else _rowdot(counts, w)
        means[start : start + size] = _rowdot(counts, mass) / denominator
    return means


def _bootstrap_means_by_value(distinct: np.ndarray, cell_weight: np.ndarray, rng, n_resamples: int) -> np.ndarray:
    # Values of weight 0 are no cells at all: weight 0 is the item left out, draw for draw.
    drawn = cell_weight > 0
    distinct, cell_weight = distinct[drawn], cell_weight[drawn]
    total = float(cell_weight.sum())
    if total <= 0:
        raise ValueError("no item has a positive weight: there is nothing to resample")
    n_draws = int(round(total))
    share = cell_weight / total
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, _RESAMPLES_PER_DRAW):  # fixed: results never depend on a batch size
        size = min(_RESAMPLES_PER_DRAW, n_resamples - start)
        means[start : start + size] = _rowdot(rng.multinomial(n_draws, share, size=size), distinct) / n_draws
    return means


# Distinct values up to which a bootstrap draws counts per value; resamples per draw.
_MAX_VALUE_CELLS = 4096
_RESAMPLES_PER_DRAW = 256


def bootstrap_interval(
    values,
    sample_weight=None,
    *,
    rng: np.random.Generator,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    weight_kind: str = "auto",
    batch: int | None = None,
) -> Interval:
    """Percentile-bootstrap interval of the weighted mean of per-item values.

    Parameters
    ----------
    values : array-like of shape (n,)
    sample_weight : array-like of shape (n,), optional
        Read as in :func:`mean_interval`. Frequency weights resample
        ``sum(w)`` copies (so weight 2 behaves exactly as the item written
        twice, draw for draw under the same seed); probability weights
        resample the items of positive weight, each keeping its weight.
    rng : numpy.random.Generator
        The only source of randomness.
    n_resamples : int
    confidence_level : float
    weight_kind : {"auto", "frequency", "probability"}
    batch : int, optional
        Resamples per vectorised batch; default keeps a batch's
        ``(batch, n)`` arrays within ~200 MB.

    Returns
    -------
    Interval
        ``method="bootstrap"``; ``mean`` is the estimate on the data itself,
        ``std_error`` the standard deviation of the resampled means, ``low``
        and ``high`` their ``(1 -+ confidence) / 2`` quantiles.

    Examples
    --------
    >>> iv = bootstrap_interval([1.0, 1.0, 0.0, -4.0, 1.0, 1.0, 1.0, 1.0], rng=np.random.default_rng(0))
    >>> iv.mean, iv.method, iv.low < iv.mean < iv.high
    (0.25, 'bootstrap', True)
    """
    confidence = _check_confidence(confidence_level)
    rng = _check_rng(rng)
    n_resamples = _check_resamples(n_resamples)
    v, w = _values_and_weights(values, sample_weight)
    g, kind = _grouped(v, w, weight_kind)
    m = _moments(g, kind)
    if not math.isfinite(m.std_error):
        # One item resamples to itself: a zero-width interval would claim
        # certainty; say "unknown" as the t interval does.
        return Interval(m.mean, math.nan, -math.inf, math.inf, m.n, confidence, "bootstrap")
    means = _bootstrap_means(v, w, kind, rng, n_resamples, batch)
    alpha = 1 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    std_error = float(np.std(means, ddof=1)) if n_resamples > 1 else math.nan
    return Interval(m.mean, std_error, float(low), float(high), m.n, confidence, "bootstrap")


def policy_interval(
    policy: Policy,
    predictions: Predictions,
    values: Values,
    *,
    method: str = "bounded",
    rng: np.random.Generator | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
) -> Interval:
    """Value per item of a *fixed* policy on a labelled split, with its interval.

    The interval covers the sampling noise of the evaluated items only: the
    policy is held fixed (tuned elsewhere). For the extra spread that tuning
    adds, see :func:`voc_band` (mode "tuned") and :func:`threshold_stability`.

    Parameters
    ----------
    policy : Policy
    predictions : Predictions
        Labelled; its ``sample_weight`` is used as in :func:`mean_interval`.
    values : UseCase or ValueMatrix
    method : {"bounded", "t", "bootstrap"}
        "bounded" (the default) allows for every outcome the value matrix
        holds, seen or not (see :func:`mean_interval`); "t" and "bootstrap"
        only for what was seen, and fail when a costly outcome is rare.
    rng : numpy.random.Generator, optional
        Required for ``method="bootstrap"`` (e.g. ``numpy.random.default_rng(0)``
        for a reproducible interval); the other methods draw nothing.
    confidence_level : float
    n_resamples : int
        For ``method="bootstrap"``.

    Returns
    -------
    Interval
        In the currency of ``values``, per item (abstentions included), with
        the counts it rests on (``n_acted``, ``n_worst``, ``worst_value``).

    Examples
    --------
    >>> from valuecore import UseCase
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.3, 0.7]], y_true=[0, 0, 1, 1])
    >>> iv = policy_interval(Policy("threshold", threshold=0.7), p, UseCase(10, 0, -40))
    >>> iv.mean, round(iv.std_error, 4), iv.n_acted, iv.n_worst, iv.worst_value
    (7.5, 2.5, 3.0, 0.0, -40.0)
    """
    _check_value_range(values, interval=True)
    if method not in ("bounded", "t", "bootstrap"):
        raise ValueError(f"method must be 'bounded', 't' or 'bootstrap', got {method!r}")
    per_item = item_values(policy, predictions, values)
    if method in INTERVAL_METHODS:
        interval = mean_interval(per_item, predictions.sample_weight, confidence_level=confidence_level,
                                 value_range=possible_range(values, predictions.classes, policy), method=method)
        matrix = values.for_classes(predictions.classes)
        acted = policy.decide(predictions, matrix) < predictions.n_classes
        return replace(interval, n_acted=float(predictions.sample_weight[acted].sum()))
    if rng is None:
        raise TypeError("policy_interval(method='bootstrap') needs an rng, e.g. rng=numpy.random.default_rng(0)")
    return bootstrap_interval(
        per_item, predictions.sample_weight, rng=_check_rng(rng), n_resamples=n_resamples,
        confidence_level=confidence_level,
    )


# --------------------------------------------------------- paired comparison
def _examples(items, limit: int = 5) -> str:
    items = list(items)
    text = ", ".join(repr(x.item() if hasattr(x, "item") else x) for x in items[:limit])
    return text + (", ..." if len(items) > limit else "")


def _pair_rows(a: Predictions, b: Predictions, names: tuple[str, str]) -> tuple[np.ndarray, np.ndarray | None]:
    """Rows of ``b`` matching each row of ``a``, and ``a``'s ids (None: paired by row order)."""
    name_a, name_b = names
    if a.ids is not None and b.ids is not None:
        index_a, index_b = pd.Index(a.ids), pd.Index(b.ids)
        for index, name in ((index_a, name_a), (index_b, name_b)):
            if index.has_duplicates:
                repeated = index[index.duplicated()].unique()
                raise ValueError(
                    f"the ids of {name} are not unique ({len(repeated)} repeated, e.g. {_examples(repeated)}): "
                    "items cannot be paired"
                )
        take = index_b.get_indexer(index_a)
        only_a = index_a[take < 0]
        only_b = index_b[~index_b.isin(index_a)]
        if len(only_a) or len(only_b):
            parts = []
            if len(only_a):
                parts.append(f"{len(only_a)} ids of {name_a} are missing from {name_b} (e.g. {_examples(only_a)})")
            if len(only_b):
                parts.append(f"{len(only_b)} ids of {name_b} are missing from {name_a} (e.g. {_examples(only_b)})")
            raise ValueError(
                "a paired comparison needs the same items on both sides: "
                + "; ".join(parts)
                + ". Comparing only the shared items would judge the models on a different set than each was "
                "evaluated on; restrict both runs to the same items first."
            )
        return take, np.asarray(a.ids)
    if a.n != b.n:
        how = "neither run has ids" if a.ids is None and b.ids is None else "only one run has ids"
        raise ValueError(
            f"{name_a} has {a.n} items and {name_b} has {b.n}: {how}, so items are paired by row order "
            "and both runs must have the same length (add an id column to pair by id)"
        )
    return np.arange(a.n), None


def _check_same_items(a: Predictions, b: Predictions, take: np.ndarray, ids, names) -> None:
    a.require_labels("a paired comparison")
    b.require_labels("a paired comparison")
    # Compare class codes, not label objects: b's codes mapped to a's (-1: a class a does not have).
    classes_a = list(a.classes)
    to_a = np.array([classes_a.index(c) if c in classes_a else -1 for c in b.classes], dtype=np.intp)
    codes_b = b.y_true[take]
    differ = a.y_true != to_a[codes_b]
    if differ.any():
        rows = np.flatnonzero(differ)
        names_a, names_b = np.asarray(a.classes, dtype=object), np.asarray(b.classes, dtype=object)
        where = [
            (f"id {ids[r]!r}" if ids is not None else f"row {r}")
            + f": {names_a[a.y_true[r]]!r} vs {names_b[codes_b[r]]!r}"
            for r in rows[:3]
        ]
        raise ValueError(
            f"the same items must have the same true label, but the labels of {names[0]} and {names[1]} "
            f"differ on {rows.size} items ({'; '.join(where)}{', ...' if rows.size > 3 else ''}); "
            "are the runs on the same split, in the same row order?"
        )
    weight_b = b.sample_weight[take]
    differ = ~np.isclose(a.sample_weight, weight_b, rtol=1e-9, atol=1e-12)
    if differ.any():
        raise ValueError(
            f"the sample weights of {names[0]} and {names[1]} differ on {int(differ.sum())} items: "
            "the same item must carry the same weight on both sides"
        )


def result_interval(result, values, *, confidence_level: float = 0.95, policy: Policy | None = None) -> Interval:
    """Interval of the value per item, from a realised :class:`PolicyResult` alone. O(C^2).

    Every item's value is one cell of the value matrix (true class, action),
    so the per-item values are the matrix entries repeated as often as the
    confusion matrix counts them. With whole-number weights (counts) this is
    exactly ``policy_interval(policy, predictions, values)``, without going
    back to the n items: what a dashboard rerun needs. The interval allows
    for every cell of the matrix (only the cells ``policy`` can reach, when
    given), seen or not: see :func:`mean_interval`.

    Examples
    --------
    >>> from valuecore import Policy, Predictions, UseCase, evaluate
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.7, 0.3], [0.2, 0.8], [0.6, 0.4]], y_true=[0, 1, 1, 0])
    >>> use_case = UseCase(1, 0, -4)
    >>> policy = Policy("threshold", threshold=0.65)
    >>> r = evaluate(policy, p, use_case)
    >>> result_interval(r, use_case, policy=policy) == policy_interval(policy, p, use_case)
    True
    """
    if result.estimated:
        raise ValueError("an interval of the realised value needs a labelled split; this result is estimated")
    _check_value_range(values, interval=True)
    matrix = values.for_classes(result.classes)
    interval = mean_interval(
        matrix.values.ravel(), result.confusion.ravel(), confidence_level=confidence_level, weight_kind="frequency",
        value_range=possible_range(values, result.classes, policy),
    )
    return replace(interval, n_acted=float(result.confusion[:, :-1].sum()))


def paired_comparison(
    policy_a: Policy,
    predictions_a: Predictions,
    policy_b: Policy,
    predictions_b: Predictions,
    values: Values,
    *,
    confidence_level: float = 0.95,
    names: tuple[str, str] = ("A", "B"),
    currency: str = "",
    rng: np.random.Generator | None = None,
    n_resamples: int | None = None,
    batch: int | None = None,
) -> PairedComparison:
    """Is policy A on model A worth more than policy B on model B? A paired test.

    Both models are judged on the *same* items, so the per-item differences
    ``d = value_A - value_B`` remove the item-to-item noise common to both
    (seed 004: the right test when one data set serves both models). The
    interval of the expected difference is the bounded one of
    :func:`mean_interval` (a difference lies within ``+-(highest - lowest)``
    of the values), and the p-value is its inverse: "A and B differ" at level
    ``1 - confidence_level`` exactly when the interval excludes 0.

    Parameters
    ----------
    policy_a, policy_b : Policy
    predictions_a, predictions_b : Predictions
        Labelled runs on the same items. When both have ``ids`` items are
        matched by id, and the two id sets must be equal (an inner join is
        refused: it would compare the models on a set neither was evaluated
        on). Otherwise items are matched by row order and the lengths must
        agree. Matched items must have the same true label and weight.
    values : UseCase or ValueMatrix
    confidence_level : float
        Of the interval; the test level is ``1 - confidence_level``.
    names : (str, str)
        How the two sides are called in error messages.
    currency : str
        Deprecated and ignored: the words are built by
        :func:`valuecore.wording.paired_sentences`.
    rng, n_resamples, batch
        Deprecated and ignored: they served the paired bootstrap p-value,
        dropped with the paired t-test (issue 32) because both rejected a true
        null up to 86% of the time where a costly difference is rare. Nothing
        here is random.

    Returns
    -------
    PairedComparison

    Raises
    ------
    ValueError
        When the items cannot be paired: different ids (with counts and
        examples on each side), different lengths without ids, different true
        labels or weights of the same item.

    Examples
    --------
    >>> from valuecore import UseCase
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.3, 0.7]], y_true=[0, 0, 1, 1])
    >>> same = paired_comparison(Policy("accept_all"), p, Policy("accept_all"), p, UseCase(1, 0, -4))
    >>> same.mean_difference, same.low, same.high, same.p_value
    (0.0, 0.0, 0.0, 1.0)
    """
    confidence = _check_confidence(confidence_level)
    if currency:
        warnings.warn(
            "paired_comparison(currency=...) is ignored: pass the currency to valuecore.wording.paired_sentences",
            DeprecationWarning,
            stacklevel=2,
        )
    if rng is not None or n_resamples is not None or batch is not None:
        warnings.warn(
            "paired_comparison draws nothing since its bootstrap p-value was dropped: rng, n_resamples and batch "
            "are ignored",
            DeprecationWarning,
            stacklevel=2,
        )
    names = (str(names[0]), str(names[1]))
    take, ids = _pair_rows(predictions_a, predictions_b, names)
    _check_same_items(predictions_a, predictions_b, take, ids, names)
    diff = item_values(policy_a, predictions_a, values) - item_values(policy_b, predictions_b, values)[take]
    weight = predictions_a.sample_weight
    g, kind = _grouped(diff, weight, "auto")
    m = _moments(g, kind)
    lowest, highest = possible_range(values, predictions_a.classes)
    # The same policy on the same run cannot differ from itself on any item, old or new.
    spread = 0.0 if policy_a == policy_b and predictions_a is predictions_b else highest - lowest
    interval = _bounded_interval(g, kind, m, confidence, (-spread, spread))
    if not np.any(diff[weight > 0]):
        p_value = 1.0  # identical decisions on every item: no evidence of any difference
    elif math.isfinite(m.std_error):
        p_value = _bound_p_value(g, kind, -spread, spread)
    else:
        p_value = math.nan
    return PairedComparison(
        mean_difference=m.mean,
        low=interval.low,
        high=interval.high,
        p_value=p_value,
        n=m.n,
        std_error=m.std_error,
        confidence=confidence,
        total_difference=float(weight @ diff),
        total_weight=float(weight.sum()),
    )


def _thresholds_by_groups(tree, tune_run: SortedRun, n_resamples: int, rng) -> np.ndarray:
    """Frequency weights: the resampled counts per (confidence, gain) cell are multinomial; O(groups) per resample."""
    from .grouped_bootstrap import best_groups

    if tree.n_draws == 0:
        raise ValueError("no item has a positive weight: there is nothing to resample")
    best = best_groups(tree, n_resamples, rng)
    return np.where(best >= 0, tune_run.thresholds[np.maximum(best, 0)], np.nan)


def _thresholds_by_items(tune_run: SortedRun, matrix, n_resamples: int, rng, batch) -> np.ndarray:
    """Any weights: each resample as item counts (a cumulative sum over the sorted items)."""
    tables = _run_tables(tune_run, "threshold stability")
    predictions = tune_run.predictions
    # Unweighted gain over abstaining of acting on each item, sorted; the
    # resample supplies the weights.
    gain = matrix.gains[predictions.y_true, predictions.y_pred][tune_run.order]
    ends = tune_run.group_end - 1
    thresholds = np.empty(n_resamples)
    sampler = tables.sampler
    for start, size in _batches(n_resamples, sampler.width, batch):
        buffer = sampler.weights(sampler.counts(size, rng))
        buffer *= gain
        np.cumsum(buffer, axis=1, out=buffer)
        cum_gain = buffer[:, ends]  # (batch, G): gain of accepting groups 1..k
        best = cum_gain.argmax(axis=1)  # the first maximiser: the highest threshold
        worth_it = cum_gain[np.arange(size), best] > 0  # ties with "accept nothing" abstain
        thresholds[start : start + size] = np.where(worth_it, tune_run.thresholds[best], np.nan)
    return thresholds


# ------------------------------------------------------- sorted-run resampling
@dataclass(frozen=True, eq=False)
class _RunTables:
    """What resampling needs from a presorted labelled run, in sorted order."""

    run: SortedRun
    correct: np.ndarray  # (n,) float64, 1 where correct
    wrong: np.ndarray  # (n,) float64, 1 where wrong
    group_start: np.ndarray  # (G,)
    sampler: _Resampler
    candidates: np.ndarray  # (K,) prefixes k >= 1 that can be a best prefix (see _candidates)


def _run_tables(run: SortedRun, what: str) -> _RunTables:
    predictions = run.predictions
    predictions.require_labels(what)
    if predictions.n == 0:
        raise ValueError(f"{what} needs at least one item")
    correct = predictions.correct[run.order]
    weight = predictions.sample_weight[run.order]
    group_start = np.r_[0, run.group_end[:-1]]
    return _RunTables(
        run=run,
        correct=correct.astype(np.float64),
        wrong=(~correct).astype(np.float64),
        group_start=group_start,
        sampler=_Resampler(weight, _weight_kind(weight, "auto")),
        candidates=_candidates(correct, group_start),
    )


def _candidates(correct: np.ndarray, group_start: np.ndarray) -> np.ndarray:
    """Prefixes (in groups, k >= 1) that can be the best one in *some* resample.

    For omega >= 0 a group of only wrong items never adds value, so a best
    prefix never ends on one (the shorter prefix is at least as good); and a
    group of only correct items never costs, so a best prefix is never
    followed by one (the longer prefix is at least as good). What is left is
    typically the places where a correct item is followed by a wrong one,
    ~10x fewer than items. The "at least as good" ties are the business of
    ``_last_drawn_at``; for values alone they do not matter.
    """
    n_correct = np.add.reduceat(correct.astype(np.int64), group_start)
    size = np.diff(np.r_[group_start, correct.size])
    pure_wrong = n_correct == 0
    pure_correct = n_correct == size
    followed_by_correct = np.r_[pure_correct[1:], False]
    return (np.flatnonzero(~pure_wrong & ~followed_by_correct) + 1).astype(np.int64)


def _group_cums(tables: _RunTables, r: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Resampled (correct, wrong) weight of the prefixes ``groups`` (>= 1): two (batch, len(groups)) arrays."""
    ends = tables.run.group_end[groups - 1] - 1
    buffer = np.multiply(r, tables.correct)
    np.cumsum(buffer, axis=1, out=buffer)
    cum_correct = buffer[:, ends]
    np.multiply(r, tables.wrong, out=buffer)
    np.cumsum(buffer, axis=1, out=buffer)
    return cum_correct, buffer[:, ends]


def _last_drawn_at(tables: _RunTables, counts: np.ndarray, prefixes: np.ndarray) -> np.ndarray:
    """For each resample, the last group <= k drawn at least once, for each prefix k >= 1 of ``prefixes``.

    Shape (batch, len(prefixes)), 0 when no group up to k was drawn. The tie
    rule of ``fit_policy`` keeps the *shortest* best prefix, and a prefix
    whose last groups were not drawn ties with the one ending at its last
    drawn group, which is therefore the one the rule picks (its threshold is
    a confidence of the resample, as when tuning on the resample itself).
    """
    if tables.run.n_groups == counts.shape[1]:
        drawn = counts > 0
    else:
        drawn = np.add.reduceat(counts, tables.group_start, axis=1) > 0
    marks = drawn * np.arange(1, drawn.shape[1] + 1)
    np.maximum.accumulate(marks, axis=1, out=marks)
    return marks[:, prefixes - 1]


def _first_best(correct: np.ndarray, wrong: np.ndarray, omegas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First column maximising ``correct - omega * wrong``, per row and omega.

    ``correct`` and ``wrong`` have shape (batch, K): cumulative counts of
    prefixes in increasing order. Returns the column (batch, m) and the
    maximum (batch, m); -inf when K = 0.

    The first best prefix can only shrink as omega grows, so omegas are
    solved in sorted order by bisection, each inside the window of columns
    left by its solved neighbours (shared by the batch: the resamples agree
    closely). The windows telescope: the cost is about ``batch * (2 K + m *
    spread)`` instead of ``batch * K * m``.
    """
    batch, n_columns = correct.shape
    m = omegas.size
    best = np.zeros((batch, m), dtype=np.int64)
    gain = np.full((batch, m), -np.inf)
    if n_columns == 0:
        return best, gain
    order = np.argsort(omegas, kind="stable")
    rows = np.arange(batch)

    def solve(i: int, low: int, high: int) -> None:
        column = order[i]
        # correct + (-omega) * wrong: bit for bit fit_policy's gain for UseCase.from_omega(omega).
        work = np.multiply(wrong[:, low:high], -omegas[column])
        work += correct[:, low:high]
        j = work.argmax(axis=1)
        best[:, column] = low + j
        gain[:, column] = work[rows, j]

    solve(0, 0, n_columns)
    if m > 1:
        solve(m - 1, 0, int(best[:, order[0]].max()) + 1)
    pending = [(0, m - 1)]
    while pending:  # a loop over omegas, never over items
        a, b = pending.pop()
        if b - a < 2:
            continue
        middle = (a + b) // 2
        solve(middle, int(best[:, order[b]].min()), int(best[:, order[a]].max()) + 1)
        pending += [(a, middle), (middle, b)]
    return best, gain


def _direct_values(mode: str, omegas: np.ndarray, evaluated: _RunTables, eval_counts: np.ndarray) -> np.ndarray:
    """VOC values (batch, m) of the untuned modes: the accepted groups do not depend on the resample."""
    r = evaluated.sampler.weights(eval_counts)
    total = r.sum(axis=1)[:, None]
    if mode == "accept_all":
        correct, wrong = _rowdot(r, evaluated.correct)[:, None], _rowdot(r, evaluated.wrong)[:, None]
        return dimensionless_value(correct, wrong, omegas[None, :], total)
    # "calibrated", as voc_curve: group g (confidence c) is accepted while omega <= c / (1 - c).
    limits = acceptance_limits(evaluated.run.thresholds)
    accepted = np.searchsorted(-limits, -omegas, side="right")  # (m,) groups accepted
    correct, wrong = _group_cums(evaluated, r, np.maximum(accepted, 1))  # (batch, m)
    return np.where(accepted > 0, dimensionless_value(correct, wrong, omegas[None, :], total), 0.0)


def _band_tables(
    mode: str,
    evaluated: _RunTables,
    eval_counts: np.ndarray,
    tune: _RunTables | None = None,
    tune_counts: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Per-resample prefix tables of the tuned modes; every array has the batch as first axis."""
    r = evaluated.sampler.weights(eval_counts)
    tables = {"total": r.sum(axis=1)}
    if mode == "oracle":
        tables["correct"], tables["wrong"] = _group_cums(evaluated, r, evaluated.candidates)
        return tables
    r_tune = tune.sampler.weights(tune_counts)
    tables["correct"], tables["wrong"] = _group_cums(tune, r_tune, tune.candidates)
    tables["last"] = _last_drawn_at(tune, tune_counts, tune.candidates)
    every = np.arange(1, evaluated.run.n_groups + 1)
    tables["eval_correct"], tables["eval_wrong"] = _group_cums(evaluated, r, every)
    return tables


def _band_values(
    mode: str, omegas: np.ndarray, evaluated: _RunTables, tune: _RunTables | None, tables: dict
) -> np.ndarray:
    """VOC values (batch, m) of the tuned modes from ``_band_tables``."""
    total = tables["total"][:, None]
    best, gain = _first_best(tables["correct"], tables["wrong"], omegas)
    if mode == "oracle":
        # The best prefix on the resample itself; prefix 0 (abstain) is worth 0.
        return np.maximum(gain, 0.0) / total
    # "tuned": the tuning resample picks a threshold (ties with abstaining
    # abstain, as in fit_policy), applied to the evaluated resample.
    if tables["last"].shape[1]:
        prefix = np.where(gain > 0, np.take_along_axis(tables["last"], best, axis=1), 0)
    else:
        prefix = np.zeros_like(best)
    accepted = np.r_[0, evaluated.run.groups_accepted(tune.run.thresholds)]
    groups = accepted[prefix]  # (batch, m) groups of the evaluated split accepted
    column = np.maximum(groups - 1, 0)
    correct = np.take_along_axis(tables["eval_correct"], column, axis=1)
    wrong = np.take_along_axis(tables["eval_wrong"], column, axis=1)
    return np.where(groups > 0, dimensionless_value(correct, wrong, omegas[None, :], total), 0.0)


def _check_omegas(omegas) -> np.ndarray:
    omegas = np.asarray(omegas, dtype=np.float64)
    if omegas.ndim != 1 or omegas.size == 0:
        raise ValueError(f"omegas must be a non-empty one-dimensional grid, got shape {omegas.shape}")
    if not np.isfinite(omegas).all() or (omegas < 0).any():
        raise ValueError("omegas must be finite and non-negative")
    return omegas


def voc_band(
    eval_run: SortedRun,
    mode: str,
    omegas,
    *,
    tune_run: SortedRun | None = None,
    rng: np.random.Generator,
    n_resamples: int = 200,
    confidence_level: float = 0.95,
    batch: int | None = None,
) -> VOCBand:
    """Pointwise percentile bootstrap band of a VOC curve.

    Each resample draws the evaluated items with replacement (integer
    weights on the presorted run) and recomputes the curve at every omega:

    - "oracle": re-tuned inside every resample (the max over prefixes of
      ``(C_k - omega W_k) / N`` on the resample), so the band is that of the
      upper bound, optimism included;
    - "tuned": the tuning split and the evaluated split are resampled
      independently and the threshold is re-tuned on every tuning resample
      (with ``fit_policy``'s tie rule), so the band includes the noise of
      tuning, not just of evaluation;
    - "calibrated", "accept_all": no tuning; the evaluated split only.

    Parameters
    ----------
    eval_run : SortedRun
        The evaluated split, labelled.
    mode : {"oracle", "tuned", "calibrated", "accept_all"}
    omegas : array-like of shape (m,)
        Finite, non-negative.
    tune_run : SortedRun, optional
        Required for "tuned".
    rng : numpy.random.Generator
    n_resamples : int
    confidence_level : float
    batch : int, optional
        Resamples per vectorised batch; the default keeps a batch's
        ``(batch, n)`` working arrays within ~200 MB.

    Returns
    -------
    VOCBand
        ``low``, ``median``, ``high`` of shape (m,), dimensionless value per item.

    Cost: O(n) per resample for the cumulative sums. The re-tuned modes then
    search only the prefixes that can win (where a correct item is followed
    by a wrong one), for all omegas together by bisection over the sorted
    omegas (the best prefix shrinks as omega grows), so the search costs
    about as much as a few more passes over those prefixes.

    Examples
    --------
    >>> from valuecore import presort
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.6, 0.4]], y_true=[0, 0, 1, 0])
    >>> band = voc_band(presort(p), "accept_all", [0.0, 1.0], rng=np.random.default_rng(0), n_resamples=50)
    >>> bool(np.all(band.low <= band.median)), bool(np.all(band.median <= band.high)), float(band.high[0])
    (True, True, 1.0)
    """
    if mode not in VOC_MODES:
        raise ValueError(f"unknown VOC mode {mode!r}; expected one of {list(VOC_MODES)}")
    confidence = _check_confidence(confidence_level)
    rng = _check_rng(rng)
    n_resamples = _check_resamples(n_resamples)
    omegas = _check_omegas(omegas)
    evaluated = _run_tables(eval_run, "a VOC band")
    tune = None
    width = evaluated.sampler.width
    if mode == "tuned":
        if tune_run is None:
            raise ValueError("a tuned VOC band needs the tuning run (tune_run)")
        tune = _run_tables(tune_run, "tuning thresholds for a VOC band")
        width += tune.sampler.width
    samples = np.empty((n_resamples, omegas.size))
    if mode in ("accept_all", "calibrated"):
        for start, size in _batches(n_resamples, width, batch):
            samples[start : start + size] = _direct_values(mode, omegas, evaluated, evaluated.sampler.counts(size, rng))
    else:
        # Resamples are drawn in cache-sized batches; their prefix tables are
        # gathered into chunks as large as _MEMORY_BUDGET allows, so that the
        # loop over omegas runs once per chunk.
        cells = 2 * evaluated.candidates.size + 4 * omegas.size
        if tune is not None:
            cells = 3 * tune.candidates.size + 2 * evaluated.run.n_groups + 4 * omegas.size
        # A third of the budget: the batches' tables are copied once into the
        # chunk, and the search over prefixes needs one more table-sized array.
        chunk = max(1, _MEMORY_BUDGET // (3 * 8 * cells))
        for first in range(0, n_resamples, chunk):
            size_chunk = min(chunk, n_resamples - first)
            parts = []
            for _, size in _batches(size_chunk, width, batch):
                tune_counts = tune.sampler.counts(size, rng) if tune is not None else None
                parts.append(_band_tables(mode, evaluated, evaluated.sampler.counts(size, rng), tune, tune_counts))
            tables = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
            samples[first : first + size_chunk] = _band_values(mode, omegas, evaluated, tune, tables)
    alpha = 1 - confidence
    low, median, high = np.quantile(samples, [alpha / 2, 0.5, 1 - alpha / 2], axis=0)
    return VOCBand(omegas, low, high, median, mode, confidence, n_resamples)


# ----------------------------------------------------- threshold stability
def _observed_quantile(sorted_values: np.ndarray, q: float) -> float | None:
    """Inverted empirical CDF: an observed value, never an interpolation; NaN sorts last."""
    index = min(max(math.ceil(q * sorted_values.size) - 1, 0), sorted_values.size - 1)
    value = sorted_values[index]
    return None if math.isnan(value) else float(value)


def threshold_stability(
    tune_run: SortedRun,
    values: Values,
    *,
    rng: np.random.Generator,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    batch: int | None = None,
) -> ThresholdStability:
    """How much the tuned global threshold moves when the tuning data is resampled.

    Every resample re-tunes exactly as :func:`fit_policy` does for
    ``"threshold"``: every distinct confidence is a candidate, the value is
    the realised gain over abstaining, among maximisers the highest
    threshold wins, and accepting nothing wins its ties (NaN here, None in a
    policy). A wide spread means the threshold is mostly noise of the tuning
    split.

    Parameters
    ----------
    tune_run : SortedRun
        The tuning split, labelled and (if the policy calibrates) calibrated.
    values : UseCase or ValueMatrix
    rng : numpy.random.Generator
    n_resamples : int
    confidence_level : float
        Of the reported ``low``-``high`` range.
    batch : int, optional
        Resamples per batch when items are resampled (fractional weights, or a
        value matrix with more than 8 distinct gains); the result does not
        depend on it.

    Returns
    -------
    ThresholdStability

    Notes
    -----
    With whole-number weights a resample is drawn as counts per (distinct
    confidence, gain) cell, which is exactly the item bootstrap summed over
    each cell (a multinomial), and searched from the top of a binary tree of
    the cells without visiting the ones that cannot hold the best threshold:
    O(log(distinct confidences)) levels per resample, not O(items). See
    ``valuecore._stats.grouped_bootstrap``.

    Examples
    --------
    >>> from valuecore import UseCase, presort
    >>> p = Predictions.from_proba([[0.95, 0.05], [0.9, 0.1], [0.6, 0.4], [0.55, 0.45]], y_true=[0, 0, 1, 0])
    >>> s = threshold_stability(presort(p), UseCase(1, 0, -4), rng=np.random.default_rng(0), n_resamples=200)
    >>> s.thresholds.shape, s.tuned_threshold, s.median
    ((200,), 0.9, 0.9)
    """
    confidence = _check_confidence(confidence_level)
    rng = _check_rng(rng)
    n_resamples = _check_resamples(n_resamples)
    predictions = tune_run.predictions
    predictions.require_labels("threshold stability")
    matrix = values.for_classes(predictions.classes)
    tree = None
    if tune_run.n_groups and _weight_kind(predictions.sample_weight, "auto") == "frequency":
        from .grouped_bootstrap import group_tree

        tree = group_tree(tune_run, values)
    if tree is not None:
        thresholds = _thresholds_by_groups(tree, tune_run, n_resamples, rng)
    elif predictions.n and not tune_run.n_groups:  # the model declined every item: no threshold acts on any
        thresholds = np.full(n_resamples, np.nan)
    else:  # (a run without items is refused there, in words)
        thresholds = _thresholds_by_items(tune_run, matrix, n_resamples, rng, batch)
    ordered = np.sort(thresholds)  # NaN (always abstain) last: above every threshold
    alpha = 1 - confidence
    tuned = fit_policy("threshold", tune_run, values).threshold
    return ThresholdStability(
        thresholds=thresholds,
        low=_observed_quantile(ordered, alpha / 2),
        high=_observed_quantile(ordered, 1 - alpha / 2),
        median=_observed_quantile(ordered, 0.5),
        share_always_abstain=float(np.isnan(thresholds).mean()),
        tuned_threshold=tuned,
        confidence=confidence,
    )
