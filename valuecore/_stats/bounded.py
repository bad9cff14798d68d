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

Sampling ("probability") weights: the items are no copies, and an outcome
never seen may hide among the items that weigh most, where one item moves the
mean furthest. The bound is then that of Learned-Miller and Thomas carried
over to the weighted mean (:func:`weighted_moments`): Dirichlet(1, ..., 1)
weights over the items *and one more item of the largest weight* at the
lowest (highest) possible value, the ratio ``sum D_i w_i u_i / sum D_i w_i``
linearised for its mean and variance, and the Beta with those moments. With
equal weights these are the moments of the Dirichlet of the counts above.
The earlier reading -- counts in the observed shares, as many as the sandwich
standard error allows, and one *average* item at the bound -- covered as
little as 68% where costly errors sat in a group weighted 5-20 times the
others (issue 32).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["bounded_interval", "bounded_p_value", "interval_from_counts", "p_value_from_counts",
           "weighted_interval", "weighted_moments", "weighted_p_value"]


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


def weighted_moments(unit: np.ndarray, weight, weight_sq, n_items, extra_weight: float, extra: float):
    """Mean and variance of a weighted mean under Dirichlet weights over the items and one more item.

    ``theta = sum_i D_i w_i u_i / sum_i D_i w_i`` over the ``n_items`` items of
    positive weight and one more item of weight ``extra_weight`` at ``extra``,
    ``D ~ Dirichlet(1, ..., 1)`` (the Bayesian bootstrap); the ratio is
    linearised at its mean, so its variance is ``N / (N + 1) * sum_i w_i**2
    (u_i - mean)**2 / (sum_i w_i)**2`` over the ``N = n_items + 1`` items: the
    sandwich variance of the weighted mean with that item added. With equal
    weights both are :func:`_moments` of the counts with one item at ``extra``.

    Parameters
    ----------
    unit : ndarray of shape (K,)
        The distinct values on the unit scale.
    weight, weight_sq : ndarray of shape (..., K)
        Per value, the sum of the items' weights and of their squared weights.
    n_items : float or ndarray of shape (...)
        Items of positive weight.
    extra_weight : float
        The weight of the one more item (the largest weight of the sample).
    extra : float
        Its value on the unit scale (0 for the low end, 1 for the high end).

    Returns
    -------
    mean, variance : float or ndarray of shape (...)
    """
    weight, weight_sq = np.asarray(weight, dtype=np.float64), np.asarray(weight_sq, dtype=np.float64)
    # On the scale where the mean weight is 1, so that no weight is squared in its own unit (any scale is allowed).
    scale = weight.sum(axis=-1) / n_items
    others = extra_weight / scale
    total = n_items + others
    mean = (weight @ unit / scale + others * extra) / total
    resid = unit - np.expand_dims(mean, -1)
    spread = (weight_sq * resid * resid).sum(axis=-1) / (scale * scale) + (others * (extra - mean)) ** 2
    return mean, spread / (total * total) * ((n_items + 1.0) / (n_items + 2.0))


def _beta_quantile(a, b, q):
    """``special.betaincinv(a, b, q)``, the Beta's ``q`` quantile; where Boost's inversion gives up (NaN: ``b``
    near 1e156 beside an ``a`` of a few, the low end of a range whose lowest value is a hair below every value
    seen, such as -4e-156 below 0), the limit it tends to as ``b`` grows, Gamma(a)'s ``q`` quantile over ``a + b``
    (the two agree to 15 digits at ``b`` = 1.2e101)."""
    from scipy import special  # heavy: imported where used

    quantile = special.betaincinv(a, b, q)
    lost = np.isnan(quantile)
    if np.any(lost):
        limit = special.gammaincinv(a, q) / (np.asarray(a) + b)
        quantile = np.where(lost, limit, quantile) if np.ndim(quantile) else np.float64(limit)
    return quantile


def _quantile(mean, variance, q):
    """The ``q`` quantile of the Beta on [0, 1] with this mean and variance (the mean where it is a point)."""
    a, b, point = _beta_shapes(mean, variance)
    if point is True or point is False:  # one interval
        return mean if point else _beta_quantile(a, b, q)

    # The Beta quantile as stats.beta.ppf computes it (the same Boost routine), without its per-call checks.
    return np.where(point, mean, _beta_quantile(a, b, q))


def _unit_quantile(unit, counts, extra, q) -> np.ndarray:
    return _quantile(*_moments(unit, counts, extra), q)


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
        counts = np.asarray(counts, dtype=np.float64)
        self._moments_of(distinct, lowest, highest, confidence, lambda unit, extra: _moments(unit, counts, extra))

    @classmethod
    def weighted(cls, distinct, weight, weight_sq, n_items, extra_weight: float, lowest: float, highest: float,
                 confidence: float) -> "RowsOfIntervals":
        """The rows of :func:`weighted_interval`: ``weight``, ``weight_sq`` (m, K) and ``n_items`` (m,)."""
        rows = cls.__new__(cls)
        rows._moments_of(distinct, lowest, highest, confidence,
                         lambda unit, extra: weighted_moments(unit, weight, weight_sq, n_items, extra_weight, extra))
        return rows

    def _moments_of(self, distinct, lowest: float, highest: float, confidence: float, moments) -> None:
        distinct = np.asarray(distinct, dtype=np.float64)
        self.lowest, self.highest = float(lowest), float(highest)
        self.span = self.highest - self.lowest
        if self.span <= 0:  # the value cannot vary
            return
        unit = np.clip((distinct - lowest) / self.span, 0.0, 1.0)
        alpha = 1.0 - confidence
        self._ends = []
        for extra, q in ((0.0, alpha / 2), (1.0, 1 - alpha / 2)):
            mean, variance = moments(unit, extra)
            self._ends.append((mean, *_beta_shapes(mean, variance), q))

    def ends(self, rows: slice) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) of ``rows``: what :func:`interval_from_counts` gives for them, bit for bit."""
        if self.span <= 0:
            return self.lowest, self.highest
        low, high = (np.where(point[rows], mean[rows], _beta_quantile(a[rows], b[rows], q))
                     for mean, a, b, point, q in self._ends)
        return self.lowest + self.span * low, self.lowest + self.span * high


def _one_interval(unit: np.ndarray, counts: np.ndarray, alpha: float) -> tuple[float, float]:
    """Both ends of one interval on the unit scale: :func:`_unit_quantile` at the two ends, bit for bit.

    The sums over the counts are taken once for both ends (the same numpy sums), and the rest is the same
    IEEE arithmetic on Python floats instead of numpy scalars, which costs a tenth of the time on a few values.
    """
    total = float(counts.sum(axis=-1)) + 1.0
    first, second = float(counts @ unit), float(counts @ (unit * unit))
    ends = []
    for extra, q in ((0.0, alpha / 2), (1.0, 1 - alpha / 2)):
        mean = (first + extra) / total
        # max(x, 0.0) keeps x when x >= 0.0, as np.maximum does (a zero keeps its sign; either is a point below)
        variance = max((second + extra * extra) / total - mean * mean, 0.0) / (total + 1.0)
        a, b, point = _scalar_beta_shapes(mean, variance)
        ends.append(np.float64(mean) if point else _beta_quantile(a, b, q))
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


def weighted_interval(distinct, weight, weight_sq, n_items, extra_weight: float, lowest: float, highest: float,
                      confidence: float):
    """(low, high) of a weighted mean under sampling weights; rows over the leading axes of ``weight``.

    The quantiles ``(1 -+ confidence) / 2`` of :func:`weighted_moments` with the one more item (of weight
    ``extra_weight``, the largest of the sample) at ``lowest`` for the low end and at ``highest`` for the high
    end. ``lowest``/``highest`` must already hold every value of ``distinct`` (K,); ``weight`` and ``weight_sq``
    have shape (..., K), ``n_items`` shape (...).

    Examples
    --------
    Equal weights give the interval of the counts (Clopper-Pearson for two outcomes):

    >>> low, high = weighted_interval(np.array([0.0, 1.0]), np.array([8.5, 1.5]), np.array([4.25, 0.75]), 20, 0.5,
    ...                               0.0, 1.0, 0.95)
    >>> [round(float(x), 4) for x in (low, high)]
    [0.0321, 0.3789]
    """
    distinct = np.asarray(distinct, dtype=np.float64)
    span = float(highest) - float(lowest)
    if span <= 0:  # the value cannot vary
        shape = np.shape(n_items)
        return np.full(shape, float(lowest)), np.full(shape, float(highest))
    unit = np.clip((distinct - lowest) / span, 0.0, 1.0)
    alpha = 1.0 - confidence
    ends = [lowest + span * _quantile(*weighted_moments(unit, weight, weight_sq, n_items, extra_weight, extra), q)
            for extra, q in ((0.0, alpha / 2), (1.0, 1 - alpha / 2))]
    return ends[0], ends[1]


def weighted_p_value(distinct, weight, weight_sq, n_items, extra_weight: float, lowest: float, highest: float,
                     null: float = 0.0) -> float:
    """Two-sided p-value of "the expected value is ``null``", the inverse of :func:`weighted_interval`."""
    distinct = np.asarray(distinct, dtype=np.float64)
    lowest = min(float(lowest), float(distinct.min()))
    highest = max(float(highest), float(distinct.max()))
    span = highest - lowest
    if span <= 0:
        return 1.0
    unit = np.clip((distinct - lowest) / span, 0.0, 1.0)
    ends = [weighted_moments(unit, weight, weight_sq, n_items, extra_weight, extra) for extra in (0.0, 1.0)]
    return float(_p_value_of_ends(ends, (null - lowest) / span))


def p_value_from_counts(distinct, counts, lowest: float, highest: float, null: float = 0.0):
    """Vectorised :func:`bounded_p_value` over rows of ``counts`` (bounds already hold ``distinct``)."""
    distinct = np.asarray(distinct, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    span = float(highest) - float(lowest)
    if span <= 0:
        return np.ones(counts.shape[:-1])
    unit = np.clip((distinct - lowest) / span, 0.0, 1.0)
    return _p_value_of_ends([_moments(unit, counts, extra) for extra in (0.0, 1.0)], (null - lowest) / span)


def _p_value_of_ends(ends, null_unit: float):
    """Twice the smaller tail beyond ``null_unit``: of the low end's Beta below it, of the high end's above it.

    ``ends``: the (mean, variance) of the low end (one more item at 0) and of the high end (at 1).
    """
    from scipy import stats  # heavy: imported where used

    tails = []
    for (mean, variance), upper in zip(ends, (False, True)):
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
