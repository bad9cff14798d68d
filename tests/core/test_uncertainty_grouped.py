"""``mean_interval`` computes from the values grouped by distinct value; the numbers are those of the item sums.

Before the tallies, the mean and the standard error were dot products over every
item. Grouping first adds each value's weights, then multiplies once: the same
numbers up to the round-off of the sums (exact Fractions here show which is
closer), and the same interval (its ends from the same counts).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from valuecore._stats.bounded import bounded_interval, weighted_interval
from valuecore._stats.uncertainty import mean_interval

CELLS = st.lists(st.integers(-4000, 4000).map(lambda k: k / 1000), min_size=1, max_size=5, unique=True)


@st.composite
def samples(draw):
    cells = np.array(draw(CELLS))
    n = draw(st.integers(2, 200))
    values = cells[draw(st.lists(st.integers(0, cells.size - 1), min_size=n, max_size=n))]
    kind = draw(st.sampled_from(["unit", "integer", "fractional"]))
    if kind == "unit":
        weight = np.ones(n)
    elif kind == "integer":
        weight = np.array(draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)), dtype=float)
    else:
        weight = np.array(draw(st.lists(st.floats(0.01, 10.0), min_size=n, max_size=n)))
    if weight.sum() < 2:
        weight[:2] += 1
    return values, weight


def _item_sums(values, weight, kind):
    """Mean, standard error and effective n as dot products over the items (the former computation)."""
    total = float(weight.sum())
    mean = float(np.dot(weight, values) / total)
    resid = values - mean
    if kind == "frequency":
        return mean, math.sqrt(float(np.dot(weight, resid * resid)) / (total - 1) / total), total
    k = int(np.count_nonzero(weight))
    spread = float(np.dot(weight * weight, resid * resid)) * k / (k - 1)
    return mean, math.sqrt(spread) / total, total * total / float(np.dot(weight, weight))


def _exact_sum(ratios) -> Fraction:
    """The exact sum of (numerator, denominator) pairs whose denominators are powers of two.

    Every float is a whole number over a power of two, and so is a product of two: one common
    denominator sums them without the greatest common divisor each Fraction addition takes (ten times
    faster over 200 items; the same Fraction).
    """
    ratios = list(ratios)
    common = max((denominator for _, denominator in ratios), default=1)
    return Fraction(sum(numerator * (common // denominator) for numerator, denominator in ratios), common)


def _exact_mean(values: np.ndarray, weight: np.ndarray) -> Fraction:
    """``sum(Fraction(w) * Fraction(v)) / sum(Fraction(w))`` over the items, exactly."""
    products = ((a * c, b * d) for (a, b), (c, d) in zip(map(float.as_integer_ratio, values.tolist()),
                                                         map(float.as_integer_ratio, weight.tolist())))
    return _exact_sum(products) / _exact_sum(map(float.as_integer_ratio, weight.tolist()))


@pytest.mark.heavy
@settings(max_examples=300, deadline=None)
@given(samples())
def test_grouped_moments_and_interval_equal_the_item_sums_up_to_round_off(sample):
    values, weight = sample
    got = mean_interval(values, weight, value_range=(-5.0, 5.0))
    kind = "frequency" if np.all(weight == np.round(weight)) else "probability"
    mean, std_error, n = _item_sums(values, weight, kind)
    scale = 5.0
    assert abs(got.mean - mean) <= 1e-12 * scale
    assert abs(got.std_error - std_error) <= 1e-9 * max(std_error, 1e-300) + 1e-12 * scale
    assert math.isclose(got.n, n, rel_tol=1e-12)
    exact = _exact_mean(values, weight)
    # grouped sums are never further from the exact mean than a few ulps of the scale
    assert abs(Fraction(got.mean) - exact) <= Fraction(1e-13) * scale
    if math.isfinite(std_error) and std_error > 0:
        keep = weight > 0
        distinct, cell = np.unique(values[keep], return_inverse=True)
        mass = np.bincount(cell, weights=weight[keep])
        if kind == "frequency":
            low, high = bounded_interval(distinct, mass, -5.0, 5.0, 0.95)
        else:
            low, high = weighted_interval(distinct, mass, np.bincount(cell, weights=weight[keep] ** 2),
                                          int(keep.sum()), float(weight.max()), -5.0, 5.0, 0.95)
        assert abs(got.low - min(low, mean)) <= 1e-9 * scale
        assert abs(got.high - max(high, mean)) <= 1e-9 * scale


def test_unit_weights_of_exact_values_give_exactly_the_item_sums():
    rng = np.random.default_rng(3)
    values = np.array([1.0, 0.0, -4.0, -0.5])[rng.integers(0, 4, 10_000)]
    got = mean_interval(values, value_range=(-4.0, 1.0))
    mean, std_error, n = _item_sums(values, np.ones(values.size), "frequency")
    assert (got.mean, got.n) == (mean, n)
    assert math.isclose(got.std_error, std_error, rel_tol=1e-14)


def test_one_interval_in_python_floats_equals_the_vectorised_rows():
    from valuecore._stats.bounded import interval_from_counts

    rng = np.random.default_rng(0)
    for _ in range(3000):
        k = int(rng.integers(1, 6))
        distinct = np.sort(rng.normal(size=k) * 10.0 ** rng.integers(-3, 3))
        counts = rng.integers(0, 50, k).astype(float) * rng.choice([1, 0.37, 1e-3, 1e4])
        if rng.random() < 0.2:  # one outcome only: a point
            counts[:] = 0
            counts[rng.integers(0, k)] = 5
        lowest, highest = distinct.min() - rng.exponential(), distinct.max() + rng.exponential()
        one = interval_from_counts(distinct, counts, lowest, highest, 0.95)
        rows = interval_from_counts(distinct, counts[None, :], lowest, highest, 0.95)
        assert (float(one[0]), float(one[1])) == (float(rows[0][0]), float(rows[1][0]))
