"""An interval for the mean of a bounded, few-valued outcome that holds when the costly outcome is rare.

The value of one item is one of a few numbers (a cell of the value matrix), so
the value per item is a linear combination ``theta = sum_k x_k p_k`` of
multinomial outcome rates ``p``. A t interval of it is centred on the observed
mean with the observed spread: when the costliest outcome is rare it is
seldom seen, the spread is small, and the interval misses the truth (zero
width when it is never seen).

Here the lower end is the ``(1 - confidence) / 2`` quantile of ``theta`` under
the Dirichlet distribution of the observed counts *plus one item at the lowest
possible value*; the upper end the upper quantile with one item at the highest
possible value. With two outcomes this is exactly the Clopper-Pearson
interval; in general it is the bound of Learned-Miller and Thomas ("A new
confidence interval for the mean of a bounded random variable", 2019,
Dirichlet weights over the sample plus one point at the bound), written per
distinct value. The quantile of the linear combination is taken from the Beta
distribution on ``[lowest, highest]`` with the same mean and variance, which is
exact for two outcomes; its coverage over the regimes users meet is measured
in ``benchmarks/bench_interval_coverage.py``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["bounded_interval", "bounded_p_value", "interval_from_counts", "p_value_from_counts", "pseudo_counts"]


def pseudo_counts(values: np.ndarray, weight: np.ndarray, kind: str, n: float, std_error: float):
    """Distinct values and the counts the bound rests on.

    Frequency weights are counts. Probability weights are read as counts that
    give the observed shares with the sampling variance of the weighted mean:
    ``n* = 1 + s**2 / SE**2`` items in all, where ``s**2`` is the weighted
    variance of the values and ``SE`` the sandwich standard error (Kish's
    effective size when every value is the same).
    """
    keep = weight > 0
    if not keep.all():  # copies of 10^6 items are not free: only when some weight is zero
        values, weight = values[keep], weight[keep]
    distinct, mass = _weighted_distinct(values, weight)
    return counts_from_groups(distinct, mass, kind, n, std_error)


def counts_from_groups(distinct: np.ndarray, mass: np.ndarray, kind: str, n: float, std_error: float):
    """:func:`pseudo_counts` from the distinct values (G,) and the weight on each (G,), all positive."""
    if kind == "frequency":
        return distinct, mass
    share = mass / mass.sum()
    mean = float(share @ distinct)
    spread = float(share @ (distinct - mean) ** 2)
    total = n
    if std_error > 0 and spread > 0:
        total = 1.0 + spread / std_error**2
    return distinct, share * total


# Item values take a few distinct values (cells of the value matrix). Beyond this many, sort every item.
_FEW_DISTINCT = 8


def _few_distinct(values: np.ndarray) -> np.ndarray | None:
    """The sorted distinct values when there are few and numpy finds them by hashing (numpy >= 2.3), else None."""
    try:
        distinct = np.unique(values, sorted=False)  # a hash table, O(n)
    except TypeError:  # numpy before 2.3 always sorts
        return None
    if distinct.size > _FEW_DISTINCT:
        return None
    distinct = np.sort(distinct)
    return None if np.any(distinct[1:] == distinct[:-1]) else distinct  # -0.0 beside 0.0: let sorting merge them


def _weighted_distinct(values: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct ``values`` and the weight on each, bit for bit what ``np.unique`` and ``np.bincount`` give.

    ``np.bincount`` adds each value's weights in item order, however the values are numbered, so numbering them
    by comparison with a few sorted values (3.6 ms on 10^6 items of 3 values) gives the sums that sorting every
    item (6 ms) gives.
    """
    distinct = _few_distinct(values)
    if distinct is None:
        distinct, cell = np.unique(values, return_inverse=True)
    else:
        cell = np.zeros(values.size, dtype=np.intp)
        for value in distinct[:-1]:
            cell += values > value
    return distinct, np.bincount(cell, weights=weight, minlength=distinct.size)


def _moments(unit: np.ndarray, counts: np.ndarray, extra: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``sum_k u_k p_k``, ``p ~ Dirichlet(counts + one item at extra)``, per row of counts.

    On the unit scale (``u`` in [0, 1]), so that no value is squared in its own currency (tiny or huge
    values would underflow or overflow).
    """
    total = counts.sum(axis=-1) + 1.0
    mean = (counts @ unit + extra) / total
    second = (counts @ (unit * unit) + extra * extra) / total
    return mean, np.maximum(second - mean * mean, 0.0) / (total + 1.0)


def _beta_shapes(mean, variance):
    """(a, b, point) of the Beta on [0, 1] with this mean and variance.

    ``point`` marks rows where the distribution is a point (no spread, or all
    mass at one end): there the quantile is the mean itself.
    """
    if np.ndim(mean) == 0 and np.ndim(variance) == 0:
        return _scalar_beta_shapes(float(mean), float(variance))
    mu = np.clip(mean, 0.0, 1.0)
    point = (variance <= 0) | (mu <= 0) | (mu >= 1)
    nu = np.where(point, 2.0, mu * (1 - mu) / np.where(point, 1.0, variance)) - 1.0
    point |= nu <= 0  # cannot happen for a Dirichlet; guards round-off
    nu = np.where(point, 1.0, nu)
    return np.where(point, 1.0, mu * nu), np.where(point, 1.0, (1 - mu) * nu), point


def _scalar_beta_shapes(mean: float, variance: float) -> tuple[float, float, bool]:
    """:func:`_beta_shapes` of one interval in Python floats (the same IEEE operations, without array overhead)."""
    mu = min(max(mean, 0.0), 1.0)
    if variance <= 0 or mu <= 0 or mu >= 1:
        return 1.0, 1.0, True
    nu = mu * (1 - mu) / variance - 1.0
    if nu <= 0:
        return 1.0, 1.0, True
    return mu * nu, (1 - mu) * nu, False


def _unit_quantile(unit, counts, extra, q) -> np.ndarray:
    mean, variance = _moments(unit, counts, extra)
    a, b, point = _beta_shapes(mean, variance)
    from scipy import special  # heavy: imported where used

    if point is True or point is False:  # one interval
        return mean if point else special.betaincinv(a, b, q)

    # The Beta quantile as stats.beta.ppf computes it (the same Boost routine), without its per-call checks.
    return np.where(point, mean, special.betaincinv(a, b, q))


def interval_from_counts(distinct, counts, lowest: float, highest: float, confidence: float):
    """Vectorised :func:`bounded_interval`: ``counts`` of shape (..., K) over ``distinct`` of shape (K,).

    ``lowest``/``highest`` must already hold every value of ``distinct``.
    Returns two arrays of shape ``counts.shape[:-1]``.
    """
    distinct = np.asarray(distinct, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    span = float(highest) - float(lowest)
    if span <= 0:  # the value cannot vary
        shape = counts.shape[:-1]
        return np.full(shape, float(lowest)), np.full(shape, float(highest))
    unit = np.clip((distinct - lowest) / span, 0.0, 1.0)
    alpha = 1.0 - confidence
    if counts.ndim == 1:
        low, high = _one_interval(unit, counts, alpha)
        return lowest + span * low, lowest + span * high
    low = lowest + span * _unit_quantile(unit, counts, 0.0, alpha / 2)
    high = lowest + span * _unit_quantile(unit, counts, 1.0, 1 - alpha / 2)
    return low, high


class RowsOfIntervals:
    """:func:`interval_from_counts` of many rows of counts (m, K), whose ends are computed for the rows asked.

    The moments of every row are computed at once, as :func:`interval_from_counts` computes them (the same
    matrix products on the same rows, so the same numbers); the Beta quantiles, row by row (the same scalar
    routine per element), only for the rows :meth:`ends` is asked for. A search for the first row whose
    interval excludes a value then skips the rows after it, where a quantile can cost milliseconds (the
    inverse Beta of two shapes near 1e16 takes 7 ms).
    """

    def __init__(self, distinct, counts, lowest: float, highest: float, confidence: float):
        distinct = np.asarray(distinct, dtype=np.float64)
        counts = np.asarray(counts, dtype=np.float64)
        self.lowest, self.highest = float(lowest), float(highest)
        self.span = self.highest - self.lowest
        if self.span <= 0:  # the value cannot vary
            return
        unit = np.clip((distinct - lowest) / self.span, 0.0, 1.0)
        alpha = 1.0 - confidence
        self._ends = []
        for extra, q in ((0.0, alpha / 2), (1.0, 1 - alpha / 2)):
            mean, variance = _moments(unit, counts, extra)
            self._ends.append((mean, *_beta_shapes(mean, variance), q))

    def ends(self, rows: slice) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) of ``rows``: what :func:`interval_from_counts` gives for them, bit for bit."""
        if self.span <= 0:
            return self.lowest, self.highest
        from scipy import special  # heavy: imported where used

        low, high = (np.where(point[rows], mean[rows], special.betaincinv(a[rows], b[rows], q))
                     for mean, a, b, point, q in self._ends)
        return self.lowest + self.span * low, self.lowest + self.span * high


def _one_interval(unit: np.ndarray, counts: np.ndarray, alpha: float) -> tuple[float, float]:
    """Both ends of one interval on the unit scale: :func:`_unit_quantile` at the two ends, bit for bit.

    The sums over the counts are taken once for both ends (the same numpy sums), and the rest is the same
    IEEE arithmetic on Python floats instead of numpy scalars, which costs a tenth of the time on a few values.
    """
    from scipy import special  # heavy: imported where used

    total = float(counts.sum(axis=-1)) + 1.0
    first, second = float(counts @ unit), float(counts @ (unit * unit))
    ends = []
    for extra, q in ((0.0, alpha / 2), (1.0, 1 - alpha / 2)):
        mean = (first + extra) / total
        # max(x, 0.0) keeps x when x >= 0.0, as np.maximum does (a zero keeps its sign; either is a point below)
        variance = max((second + extra * extra) / total - mean * mean, 0.0) / (total + 1.0)
        a, b, point = _scalar_beta_shapes(mean, variance)
        ends.append(np.float64(mean) if point else special.betaincinv(a, b, q))
    return ends[0], ends[1]


def bounded_interval(distinct, counts, lowest: float, highest: float, confidence: float) -> tuple[float, float]:
    """(low, high) for the mean of outcomes ``distinct`` seen ``counts`` times, each in ``[lowest, highest]``.

    Examples
    --------
    Two outcomes give the Clopper-Pearson interval (0 of 20, then 3 of 20):

    >>> low, high = bounded_interval(np.array([1.0]), np.array([20.0]), 0.0, 1.0, 0.95)
    >>> round(low, 4), high
    (0.8316, 1.0)
    >>> [round(x, 4) for x in bounded_interval(np.array([0.0, 1.0]), np.array([17.0, 3.0]), 0.0, 1.0, 0.95)]
    [0.0321, 0.3789]
    """
    distinct = np.asarray(distinct, dtype=np.float64)
    lowest = min(float(lowest), float(distinct.min()))
    highest = max(float(highest), float(distinct.max()))
    low, high = interval_from_counts(distinct, counts, lowest, highest, confidence)
    return float(low), float(high)


def p_value_from_counts(distinct, counts, lowest: float, highest: float, null: float = 0.0):
    """Vectorised :func:`bounded_p_value` over rows of ``counts`` (bounds already hold ``distinct``)."""
    distinct = np.asarray(distinct, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    span = float(highest) - float(lowest)
    if span <= 0:
        return np.ones(counts.shape[:-1])
    unit = np.clip((distinct - lowest) / span, 0.0, 1.0)
    null_unit = (null - lowest) / span
    from scipy import stats  # heavy: imported where used

    tails = []
    for extra, upper in ((0.0, False), (1.0, True)):
        mean, variance = _moments(unit, counts, extra)
        a, b, point = _beta_shapes(mean, variance)
        # A point mass at the mean: the tail beyond the null is all or nothing.
        at_point = (mean >= null_unit) if upper else (mean <= null_unit)
        tail = stats.beta.sf(null_unit, a, b) if upper else stats.beta.cdf(null_unit, a, b)
        tails.append(np.where(point, at_point.astype(np.float64), tail))
    return np.minimum(1.0, 2.0 * np.minimum(*tails))


def bounded_p_value(distinct, counts, lowest: float, highest: float, null: float = 0.0) -> float:
    """Two-sided p-value of "the expected value is ``null``", the inverse of :func:`bounded_interval`.

    ``null`` lies outside the interval at confidence ``1 - alpha`` exactly when
    the p-value is below ``alpha``.
    """
    distinct = np.asarray(distinct, dtype=np.float64)
    lowest = min(float(lowest), float(distinct.min()))
    highest = max(float(highest), float(distinct.max()))
    return float(p_value_from_counts(distinct, counts, lowest, highest, null))


def one_more_at_worst(mean: float, lowest: float, n: float) -> float:
    """How much lower the mean would be had one of the ``n`` items taken the lowest value instead."""
    if not n or not math.isfinite(n):
        return math.nan
    return (mean - lowest) / n
