"""Seeded coverage of the value interval and level of the paired test, in the cells where they are weakest.

The population (as in benchmarks/bench_interval_coverage.py): a fixed threshold hands 25% of the items over
(value 0); a share e of the accepted items is wrong (value -omega), the rest right (value 1). 4,000 replicates
per cell: the Monte Carlo standard error of a 95% coverage is 0.34 points, so a method that truly covers 95%
fails "at least 93%" with probability below 1e-8, and one that covers 92% passes with probability about 1%.
The cells: the lowest of the benchmark's table (recorded in benchmarks/README.md), and the issue's regime
(100-300 items, omega 100-200, 0.1-0.5% errors among accepted items), where the t interval covered 15-33%.
Issue 32 added sampling weights where the costly errors sit in an up-weighted group (coverage), and the paired
test with such weights (level).
"""

from __future__ import annotations

import numpy as np
import pytest

import valuecore as vc

pytestmark = pytest.mark.slow

REPLICATES = 4000
ACCEPTED = 0.75


def _intervals(x: np.ndarray, counts: np.ndarray, value_range) -> tuple[np.ndarray, np.ndarray]:
    """The library's interval per row of counts over the outcomes x (as result_interval builds it)."""
    rows, inverse = np.unique(counts, axis=0, return_inverse=True)
    bounds = np.array([
        (iv.low, iv.high)
        for iv in (vc.uncertainty.mean_interval(x, row, value_range=value_range, weight_kind="frequency")
                   for row in rows)
    ])
    return bounds[inverse.reshape(-1), 0], bounds[inverse.reshape(-1), 1]


def _coverage(n: int, omega: float, error_rate: float, seed: int) -> tuple[float, float]:
    """(bounded coverage, t coverage) over REPLICATES samples of n items."""
    rng = np.random.default_rng(seed)
    x = np.array([-omega, 0.0, 1.0])
    p = np.array([ACCEPTED * error_rate, 1 - ACCEPTED, ACCEPTED * (1 - error_rate)])
    truth = float(p @ x)
    counts = rng.multinomial(n, p, size=REPLICATES)
    low, high = _intervals(x, counts, (-omega, 1.0))
    covered_t = [
        (lambda iv: iv.low <= truth <= iv.high)(vc.uncertainty.mean_interval(x, row, method="t"))
        for row in counts[:500]
    ]
    return float(np.mean((low <= truth) & (truth <= high))), float(np.mean(covered_t))


WORST_CELLS = [  # (n, omega, error rate): the lowest bounded coverage in the benchmark's table (2026-11-24)
    (2000, 0.0, 0.0),
    (2000, 0.0, 0.01),
    (2000, 0.0, 0.005),
    (500, 0.0, 0.0),
    (2000, 0.0, 0.2),
    (20, 4.0, 0.2),
]
ISSUE_CELLS = [(100, 100.0, 0.002), (300, 200.0, 0.001), (300, 100.0, 0.005), (100, 200.0, 0.005)]


@pytest.mark.parametrize("n, omega, error_rate", WORST_CELLS + ISSUE_CELLS)
def test_the_interval_covers_at_least_93_percent(n, omega, error_rate):
    bounded, _ = _coverage(n, omega, error_rate, seed=19)
    assert bounded >= 0.93, (n, omega, error_rate, bounded)


@pytest.mark.parametrize("n, omega, error_rate", [(500, 20.0, 0.2), (2000, 1000.0, 0.2), (300, 200.0, 0.001)])
def test_fractional_weights_cover_at_least_93_percent(n, omega, error_rate):
    """Sampling weights uniform in [0.5, 1.5], independent of the outcome (the lowest fractional cells)."""
    rng = np.random.default_rng(23)
    x = np.array([-omega, 0.0, 1.0])
    p = np.array([ACCEPTED * error_rate, 1 - ACCEPTED, ACCEPTED * (1 - error_rate)])
    truth = float(p @ x)
    hits = 0
    for _ in range(REPLICATES):
        values = x[rng.choice(3, size=n, p=p)]
        iv = vc.uncertainty.mean_interval(values, rng.uniform(0.5, 1.5, size=n), value_range=(-omega, 1.0))
        hits += iv.low <= truth <= iv.high
    assert hits / REPLICATES >= 0.93, hits / REPLICATES


@pytest.mark.parametrize("n, omega, error_rate", ISSUE_CELLS)
def test_the_t_interval_failed_there(n, omega, error_rate):
    """The regime of the issue: the t interval covers far less than it claims (so the cells above can fail)."""
    _, t = _coverage(n, omega, error_rate, seed=19)
    assert t < 0.8, (n, omega, error_rate, t)


@pytest.mark.parametrize("n, omega, share", [(100, 1000.0, 0.5), (500, 100.0, 0.05), (2000, 1.0, 0.5),
                                             (2000, 4.0, 0.5), (2000, 1000.0, 0.05)])
def test_the_paired_test_rejects_a_true_null_at_most_5_percent(n, omega, share):
    """A acts alone on a share of items, B on half that share, at an error rate 1 / (1 + omega): equal value.

    The bounded test rejects when its interval excludes 0 (PairedComparison.p_value < 0.05, checked equal in
    tests/core/test_bounded.py); the t-test, in the rare-costly cells, rejects far more often.
    """
    rng = np.random.default_rng(7)
    wrong = 1 / (1 + omega)
    d = np.array([0.0, 1.0, -omega, -1.0, omega])
    p = np.array([1 - 1.5 * share, share * (1 - wrong), share * wrong, share / 2 * (1 - wrong), share / 2 * wrong])
    assert p @ d == pytest.approx(0.0, abs=1e-12)
    counts = rng.multinomial(n, p, size=REPLICATES)
    low, high = _intervals(d, counts, (-(1 + omega), 1 + omega))
    rejected = float(np.mean((low > 0) | (high < 0)))
    assert rejected <= 0.05, rejected


def _heavy_group_coverage(n, omega, heavy_share, ratio, error_rate, seed, replicates=REPLICATES):
    """Sampling weights, costly errors in an up-weighted group (the benchmark's fourth table, issue 32).

    A share of the items weighs ``ratio`` times the others (each weight times U[0.9, 1.1]: fractional, so
    sampling weights); its accepted items are wrong at ``error_rate``, the others' at a twentieth of it. The
    truth is the weighted population mean (each group's mean weighted by its share times its weight).
    """
    rng = np.random.default_rng(seed)
    x = np.array([-omega, 0.0, 1.0])
    heavy_p = np.array([ACCEPTED * error_rate, 1 - ACCEPTED, ACCEPTED * (1 - error_rate)])
    light_p = np.array([ACCEPTED * error_rate / 20, 1 - ACCEPTED, ACCEPTED * (1 - error_rate / 20)])
    mass = heavy_share * ratio
    truth = float((mass * (heavy_p @ x) + (1 - heavy_share) * (light_p @ x)) / (mass + 1 - heavy_share))
    hits = 0
    for _ in range(replicates):
        heavy = rng.random(n) < heavy_share
        weight = np.where(heavy, ratio, 1.0) * rng.uniform(0.9, 1.1, n)
        cumulative = np.cumsum(np.where(heavy[:, None], heavy_p, light_p), axis=1)[:, :-1]
        values = x[(rng.random(n)[:, None] > cumulative).sum(axis=1)]
        iv = vc.uncertainty.mean_interval(values, weight, value_range=(-omega, 1.0))
        hits += iv.low <= truth <= iv.high
    return hits / replicates


# (n, omega, share of the heavy group, its weight, its error rate): cells of the benchmark's table that covered
# 69.8%, 77.9%, 73.0%, 85.6% and 79.8% before issue 32 (an average item at the bound), and the lowest after it
# (94.8%; 94.6% before).
HEAVY_CELLS = [
    (100, 1000.0, 0.05, 20.0, 0.2),
    (500, 1000.0, 0.05, 20.0, 0.05),
    (2000, 1000.0, 0.05, 20.0, 0.01),
    (500, 100.0, 0.05, 5.0, 0.05),
    (2000, 1000.0, 0.05, 5.0, 0.02),
    (2000, 1000.0, 0.2, 20.0, 0.2),
]


@pytest.mark.parametrize("n, omega, heavy_share, ratio, error_rate", HEAVY_CELLS)
def test_probability_weights_with_costly_errors_in_a_heavy_group_cover_at_least_93_percent(
        n, omega, heavy_share, ratio, error_rate):
    coverage = _heavy_group_coverage(n, omega, heavy_share, ratio, error_rate, seed=41)
    assert coverage >= 0.93, coverage


@pytest.mark.parametrize("n, omega, share", [(500, 1.0, 0.5), (2000, 1.0, 0.5), (100, 1.0, 0.5), (500, 1000.0, 0.5)])
def test_the_paired_test_with_sampling_weights_rejects_a_true_null_at_most_5_percent(n, omega, share):
    """The paired design above with a twentieth of the items weighing 10 times the others (times U[0.9, 1.1]):
    the bounded test, the one the paired result carries, through mean_interval of the weighted differences (the
    benchmark's highest cells; a paired t-test rejected 67% at n = 500, omega = 1000 there)."""
    rng = np.random.default_rng(43)
    wrong = 1 / (1 + omega)
    d = np.array([0.0, 1.0, -omega, -1.0, omega])
    p = np.array([1 - 1.5 * share, share * (1 - wrong), share * wrong, share / 2 * (1 - wrong), share / 2 * wrong])
    rejected = 0
    for _ in range(REPLICATES // 2):
        weight = np.where(rng.random(n) < 0.05, 10.0, 1.0) * rng.uniform(0.9, 1.1, n)
        iv = vc.uncertainty.mean_interval(d[rng.choice(5, size=n, p=p)], weight, value_range=(-1 - omega, 1 + omega))
        rejected += iv.low > 0 or iv.high < 0
    assert rejected / (REPLICATES // 2) <= 0.05, rejected / (REPLICATES // 2)


MATRIX_VALUES = np.array([-500.0, -5.0, 0.0, 1.0, 10.0])  # missed positive, false alarm, hand-off, tn, tp


@pytest.mark.parametrize("n, miss_rate", [(2000, 0.02), (2000, 0.1), (100, 0.1), (500, 0.001), (20, 0.02)])
def test_a_value_matrix_with_five_outcomes_covers_at_least_93_percent(n, miss_rate):
    """Five outcomes (the Beta is then an approximation of the Dirichlet's quantile): the benchmark's lowest
    value-matrix cells, and two where the t interval fails (500 items at 0.1% misses, 20 at 2%)."""
    rng = np.random.default_rng(31)
    p = np.array([ACCEPTED * miss_rate, ACCEPTED * 0.02, 1 - ACCEPTED, ACCEPTED * (0.73 - miss_rate), ACCEPTED * 0.25])
    truth = float(p @ MATRIX_VALUES)
    low, high = _intervals(MATRIX_VALUES, rng.multinomial(n, p, size=REPLICATES), (-500.0, 10.0))
    coverage = float(np.mean((low <= truth) & (truth <= high)))
    assert coverage >= 0.93, coverage
