"""Coverage of the value-per-item interval, and the level of the paired test, where errors are rare and costly.

A population with a known value: a fixed threshold hands 25% of the items to
a person (value 0); of the accepted items a share ``e`` is wrong (value -omega)
and the rest right (value 1), so the true value per item is
``0.75 (1 - e) - 0.75 e omega``. Each replicate draws ``n`` items, builds the
interval exactly as the library does, and checks whether it holds the true
value. The table gives, per (n, omega, e), the coverage of the new interval
("bounded", valuecore's default) and of the t interval it replaces, and the
width of the bounded interval over the t interval's (mean widths).

Weights: "unit" (one row per item, through ``mean_interval`` on the counts
per outcome, as ``result_interval`` computes it); "integer" (200 of those
samples written as rows of weight 1-3: integer weights are copies, so the
column gives the largest gap to the unit-weight interval, which must be ~0);
"fractional" (sampling weights drawn uniformly in [0.5, 1.5], independent of
the outcome, through ``mean_interval`` item by item, fewer replicates).

The paired test: two models on the same items with equal expected value.
Model A acts on a share ``s`` of items that B hands over, B on a share
``s / 2`` that A hands over; on those items the error rate is
``1 / (1 + omega)``, so each side's extra items are worth 0 in expectation and
the expected difference is 0. The table gives how often ``p < 0.05``
(false rejections) for the bounded test (``PairedComparison.p_value``) and the
paired t-test.

Run: ``python benchmarks/bench_interval_coverage.py [--replicates R] [--seed S]``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from valuecore import uncertainty  # noqa: E402

NS = (20, 100, 500, 2000)
OMEGAS = (0.0, 1.0, 4.0, 20.0, 100.0, 1000.0)
ERROR_RATES = (0.0, 0.001, 0.002, 0.005, 0.01, 0.05, 0.2)
ACCEPTED = 0.75
SHARES = (0.05, 0.2, 0.5)
CONFIDENCE = 0.95


def outcome_values(omega: float) -> np.ndarray:
    """Values of (wrong, abstain, correct), lowest first."""
    return np.array([-omega, 0.0, 1.0])


def true_value(omega: float, error_rate: float) -> float:
    return ACCEPTED * (1 - error_rate) - ACCEPTED * error_rate * omega


def outcome_probabilities(error_rate: float) -> np.ndarray:
    return np.array([ACCEPTED * error_rate, 1 - ACCEPTED, ACCEPTED * (1 - error_rate)])


def t_bounds(x: np.ndarray, counts: np.ndarray, confidence: float = CONFIDENCE):
    """The t interval of the weighted mean from counts per outcome (frequency weights), vectorised."""
    n = counts.sum(axis=1)
    mean = counts @ x / n
    variance = (counts @ (x * x) - n * mean * mean) / (n - 1)
    half = stats.t.ppf((1 + confidence) / 2, n - 1) * np.sqrt(np.maximum(variance, 0.0) / n)
    return mean - half, mean + half


def intervals_from_counts(x: np.ndarray, counts: np.ndarray, value_range) -> tuple[np.ndarray, np.ndarray]:
    """The library's interval (``mean_interval`` on the outcome values weighted by their counts, as
    ``result_interval`` does) for every row of counts; equal rows are computed once."""
    rows, inverse = np.unique(counts, axis=0, return_inverse=True)
    low, high = np.empty(len(rows)), np.empty(len(rows))
    for i, row in enumerate(rows):
        iv = uncertainty.mean_interval(x, row, value_range=value_range, weight_kind="frequency")
        low[i], high[i] = iv.low, iv.high
    inverse = inverse.reshape(-1)
    return low[inverse], high[inverse]


def unit_cell(rng, n, omega, error_rate, replicates):
    """(bounded coverage, t coverage, width ratio, zero-width share) over unit-weight samples."""
    x = outcome_values(omega)
    counts = rng.multinomial(n, outcome_probabilities(error_rate), size=replicates)
    low, high = intervals_from_counts(x, counts, (x.min(), x.max()))
    t_low, t_high = t_bounds(x, counts)
    truth = true_value(omega, error_rate)
    t_width = np.mean(t_high - t_low)
    return {
        "samples": (x, counts, low, high),
        "bounded": np.mean((low <= truth) & (truth <= high)),
        "t": np.mean((t_low <= truth) & (truth <= t_high)),
        "ratio": np.mean(high - low) / t_width if t_width > 0 else np.inf,
        "zero_width": np.mean(high - low <= 0),
    }


def integer_weight_gap(rng, x, counts, low, high, replicates):
    """Largest gap between the unit-weight intervals and the same samples written as rows of weight 1-3.

    Integer weights are copies, so the intervals must be the same: their coverage is the unit column's.
    """
    gap = 0.0
    for row, unit_low, unit_high in zip(counts[:replicates], low[:replicates], high[:replicates]):
        values, weights = [], []
        for value, count in zip(x, row):
            while count > 0:
                w = min(int(rng.integers(1, 4)), count)
                values.append(value)
                weights.append(w)
                count -= w
        iv = uncertainty.mean_interval(values, weights, value_range=(x.min(), x.max()))
        gap = max(gap, abs(iv.low - unit_low), abs(iv.high - unit_high))
    return gap


def fractional_weight_cell(rng, n, omega, error_rate, replicates):
    """Coverage through mean_interval with sampling weights in [0.5, 1.5], independent of the outcome."""
    x = outcome_values(omega)
    truth = true_value(omega, error_rate)
    hits = 0
    for _ in range(replicates):
        values = x[rng.choice(3, size=n, p=outcome_probabilities(error_rate))]
        weights = rng.uniform(0.5, 1.5, size=n)
        iv = uncertainty.mean_interval(values, weights, value_range=(x.min(), x.max()))
        hits += iv.low <= truth <= iv.high
    return hits / replicates


def paired_cell(rng, n, omega, share, replicates):
    """False-rejection rates (bounded, t) at the 5% level under "no difference in expectation".

    The bounded test rejects exactly when its 95% interval of the mean difference excludes 0
    (``PairedComparison.p_value < 0.05``); the interval is ``mean_interval`` of the differences with
    the range of a difference, as ``paired_comparison`` and the verdict build it.
    """
    wrong = 1.0 / (1.0 + omega)
    # Per item difference A - B: 0 (same decision and outcome), +1 / -omega (A alone acts: right / wrong),
    # -1 / +omega (B alone acts: right / wrong).
    d = np.array([0.0, 1.0, -omega, -1.0, omega])
    p = np.array([1 - 1.5 * share, share * (1 - wrong), share * wrong, share / 2 * (1 - wrong), share / 2 * wrong])
    counts = rng.multinomial(n, p, size=replicates)
    spread = 1.0 + omega  # highest - lowest value of one item: the differences lie in [-spread, spread]
    low, high = intervals_from_counts(d, counts, (-spread, spread))
    bounded = (low > 0) | (high < 0)
    mean = counts @ d / n
    variance = (counts @ (d * d) - n * mean * mean) / (n - 1)
    se = np.sqrt(np.maximum(variance, 0.0) / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_t = np.where(se > 0, 2 * stats.t.sf(np.abs(mean / se), n - 1), np.where(mean != 0, 0.0, 1.0))
    return np.mean(bounded), np.mean(p_t < 0.05)


# A value matrix (binary, per-class values): true negative 1, true positive 10, false alarm -5, a missed
# positive -500, hand-off 0. Five outcomes; the costly one (a miss) at a rate among acted items of:
MATRIX_VALUES = np.array([-500.0, -5.0, 0.0, 1.0, 10.0])  # miss, false alarm, hand-off, tn, tp
MISS_RATES = (0.0, 0.001, 0.005, 0.02, 0.1)


def matrix_probabilities(miss_rate: float) -> np.ndarray:
    acted = ACCEPTED
    return np.array([acted * miss_rate, acted * 0.02, 1 - acted, acted * (0.73 - miss_rate), acted * 0.25])


def matrix_cell(rng, n, miss_rate, replicates):
    """(bounded coverage, t coverage, width ratio) with the five outcomes of the value matrix above."""
    x = MATRIX_VALUES
    p = matrix_probabilities(miss_rate)
    counts = rng.multinomial(n, p, size=replicates)
    low, high = intervals_from_counts(x, counts, (x.min(), x.max()))
    t_low, t_high = t_bounds(x, counts)
    truth = float(p @ x)
    t_width = np.mean(t_high - t_low)
    return (np.mean((low <= truth) & (truth <= high)), np.mean((t_low <= truth) & (truth <= t_high)),
            np.mean(high - low) / t_width if t_width > 0 else np.inf)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=4000, help="per cell, unit weights and the paired test")
    parser.add_argument("--weighted-replicates", type=int, default=1000,
                        help="per cell, fractional weights; integer weights are checked on 200 of the unit samples")
    parser.add_argument("--seed", type=int, default=20261124)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"seed {args.seed}, {args.replicates} replicates per cell (weighted: {args.weighted_replicates}), "
          f"confidence {CONFIDENCE}, {platform.machine()} {platform.python_version()} numpy {np.__version__}")
    print()
    print("| n | omega | error rate | bounded | t | width bounded/t | integer w: gap | fractional w |")
    print("|---|---|---|---|---|---|---|---|")
    worst, worst_fractional, largest_gap = [], [], 0.0
    ratios_where_t_right = []
    for n in NS:
        for omega in OMEGAS:
            for error_rate in ERROR_RATES:
                cell = unit_cell(rng, n, omega, error_rate, args.replicates)
                integer = integer_weight_gap(rng, *cell["samples"], 200)
                fractional = fractional_weight_cell(rng, n, omega, error_rate, args.weighted_replicates)
                if cell["zero_width"] > 0:
                    print(f"ZERO-WIDTH intervals at n={n} omega={omega} e={error_rate}: {cell['zero_width']:.3f}")
                worst.append((cell["bounded"], n, omega, error_rate))
                worst_fractional.append((fractional, n, omega, error_rate))
                largest_gap = max(largest_gap, integer)
                # "The t interval is already right": it covers, and it has seen the costly outcome
                # (at least 5 wrong answers expected), or there is none (omega = 0: wrong is as good as a hand-off).
                # Where errors are rarer, no interval can be as narrow as t's and still cover: the data look
                # the same at 0.1% as at 1%.
                if cell["t"] >= 0.93 and (omega == 0 or n * ACCEPTED * error_rate >= 5):
                    ratios_where_t_right.append((cell["ratio"], n, omega, error_rate))
                print(f"| {n} | {omega:g} | {error_rate:.3f} | {cell['bounded']:.3f} | {cell['t']:.3f} | "
                      f"{cell['ratio']:.2f} | {integer:.0e} | {fractional:.3f} |")
    print()
    worst.sort()
    print("worst cells (bounded, unit weights):", ", ".join(
        f"{c:.3f} at n={n} omega={o:g} e={e}" for c, n, o, e in worst[:5]))
    worst_fractional.sort()
    print("worst cells (bounded, fractional weights):", ", ".join(
        f"{c:.3f} at n={n} omega={o:g} e={e}" for c, n, o, e in worst_fractional[:5]))
    print(f"integer weights: largest gap to the same sample with unit weights {largest_gap:.1e}")
    ratios_where_t_right.sort(reverse=True)
    print(f"width ratio where the t interval is right ({len(ratios_where_t_right)} cells): max "
          + ", ".join(f"{r:.2f} at n={n} omega={o:g} e={e}" for r, n, o, e in ratios_where_t_right[:3]))
    print()
    print("Value matrix: tn 1, tp 10, false alarm -5, missed positive -500, hand-off 0 (25% handed over,")
    print("2% false alarms and 25% true positives among acted items)")
    print()
    print("| n | miss rate | bounded | t | width bounded/t |")
    print("|---|---|---|---|---|")
    worst_matrix = []
    for n in NS:
        for miss_rate in MISS_RATES:
            bounded, t, ratio = matrix_cell(rng, n, miss_rate, args.replicates)
            worst_matrix.append((bounded, n, miss_rate))
            print(f"| {n} | {miss_rate:.3f} | {bounded:.3f} | {t:.3f} | {ratio:.2f} |")
    worst_matrix.sort()
    print()
    print("worst cells (bounded, value matrix):", ", ".join(
        f"{c:.3f} at n={n} miss rate={m}" for c, n, m in worst_matrix[:3]))
    print()
    print("Paired test, no difference in expectation: share of p < 0.05")
    print()
    print("| n | omega | share A alone acts | bounded | paired t |")
    print("|---|---|---|---|---|")
    worst_paired = []
    for n in NS:
        for omega in OMEGAS:
            for share in SHARES:
                bounded, t = paired_cell(rng, n, omega, share, args.replicates)
                worst_paired.append((bounded, n, omega, share))
                print(f"| {n} | {omega:g} | {share:.2f} | {bounded:.3f} | {t:.3f} |")
    worst_paired.sort(reverse=True)
    print()
    print("highest false-rejection rates (bounded):", ", ".join(
        f"{r:.3f} at n={n} omega={o:g} s={s}" for r, n, o, s in worst_paired[:3]))
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
