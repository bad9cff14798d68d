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

Probability weights where the costly errors sit in an up-weighted group (issue
32): a share ``h`` of the sampled items belongs to a group under-sampled
``r`` times (weight ``r``, the others 1, each times a factor uniform in
[0.9, 1.1], so the weights are fractional: sampling weights); both groups hand
25% over, the heavy group's accepted items are wrong at a rate ``e``, the
light group's at ``e / 20``. The true value is the weighted population mean
``sum_g s_g w_g value_g / sum_g s_g w_g`` (the jitter has mean 1 and is
independent of the outcome), what the weighted mean estimates. Items are drawn
independently (group, then outcome), and every interval is ``mean_interval``
of the items with their weights.

The paired test: two models on the same items with equal expected value.
Model A acts on a share ``s`` of items that B hands over, B on a share
``s / 2`` that A hands over; on those items the error rate is
``1 / (1 + omega)``, so each side's extra items are worth 0 in expectation and
the expected difference is 0. The table gives how often each test
``paired_comparison`` has carried rejects at the 5% level: the bounded test
(``PairedComparison.p_value``: the 95% interval excludes 0), the paired t-test
and the paired bootstrap test (``p_value_t`` and ``p_value_bootstrap`` before
issue 32, computed here by the same library functions: the sandwich standard
error with ``n - 1`` degrees of freedom, and 1,000 resamples of the centred
differences). The same with the probability weights above (heavy share 0.05,
weight 10), where every side's extra items are spread over both groups.

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
    """(coverage, mean width over the t interval's) through mean_interval with sampling weights in [0.5, 1.5],
    independent of the outcome."""
    x = outcome_values(omega)
    truth = true_value(omega, error_rate)
    hits = 0
    width = width_t = 0.0
    for _ in range(replicates):
        values = x[rng.choice(3, size=n, p=outcome_probabilities(error_rate))]
        weights = rng.uniform(0.5, 1.5, size=n)
        iv = uncertainty.mean_interval(values, weights, value_range=(x.min(), x.max()))
        t = uncertainty.mean_interval(values, weights, method="t")
        hits += iv.low <= truth <= iv.high
        width += iv.high - iv.low
        width_t += t.high - t.low
    return hits / replicates, width / width_t if width_t > 0 else np.inf


# Probability weights: a share of the sampled items is in a group sampled this many times less often
# (its weight), and carries the costly errors; the light group errs at a twentieth of its rate.
HEAVY_GROUPS = ((0.05, 5.0), (0.05, 20.0), (0.2, 5.0), (0.2, 20.0))  # (share of the sampled items, weight)
WEIGHTED_NS = (100, 500, 2000)
WEIGHTED_OMEGAS = (4.0, 20.0, 100.0, 1000.0)
HEAVY_ERROR_RATES = (0.0, 0.01, 0.02, 0.05, 0.2)
LIGHT_ERROR_FACTOR = 1 / 20
JITTER = 0.1  # every weight times a factor uniform in [1 - JITTER, 1 + JITTER]: fractional, sampling weights


def group_weights(rng, n, heavy_share, ratio):
    """(heavy (n,) bool, weights (n,)): the group of each sampled item and its sampling weight."""
    heavy = rng.random(n) < heavy_share
    return heavy, np.where(heavy, ratio, 1.0) * rng.uniform(1 - JITTER, 1 + JITTER, n)


def weighted_truth(values: np.ndarray, heavy_p: np.ndarray, light_p: np.ndarray, heavy_share, ratio) -> float:
    """The population mean the weighted mean estimates: each group's mean, weighted by its share times its weight."""
    mass = heavy_share * ratio
    return float((mass * (heavy_p @ values) + (1 - heavy_share) * (light_p @ values)) / (mass + 1 - heavy_share))


def weighted_cell(rng, n, omega, heavy_share, ratio, error_rate, replicates):
    """(bounded coverage, t coverage, width ratio) with the costly errors in the up-weighted group."""
    x = outcome_values(omega)
    heavy_p, light_p = outcome_probabilities(error_rate), outcome_probabilities(error_rate * LIGHT_ERROR_FACTOR)
    truth = weighted_truth(x, heavy_p, light_p, heavy_share, ratio)
    covered = covered_t = 0
    width = width_t = 0.0
    for _ in range(replicates):
        heavy, weights = group_weights(rng, n, heavy_share, ratio)
        u = rng.random(n)
        p = np.where(heavy[:, None], heavy_p, light_p)
        outcome = (u[:, None] > np.cumsum(p, axis=1)[:, :-1]).sum(axis=1)
        values = x[outcome]
        iv = uncertainty.mean_interval(values, weights, value_range=(x.min(), x.max()))
        t = uncertainty.mean_interval(values, weights, method="t")
        covered += iv.low <= truth <= iv.high
        covered_t += t.low <= truth <= t.high
        width += iv.high - iv.low
        width_t += t.high - t.low
    return covered / replicates, covered_t / replicates, width / width_t if width_t > 0 else np.inf


def removed_tests(d: np.ndarray, w: np.ndarray, rng, n_resamples: int = 1000) -> tuple[float, float]:
    """(t p-value, bootstrap p-value) of "no difference in expectation", as ``paired_comparison`` computed its
    ``p_value_t`` and ``p_value_bootstrap`` until issue 32: the same steps and the same draws (checked equal, bit for
    bit, against that code on unit, whole-number and fractional weights)."""
    if not np.any(d[w > 0]):
        return 1.0, 1.0
    t = uncertainty.mean_interval(d, w, method="t")  # its mean, sandwich standard error and effective n
    if not np.isfinite(t.std_error):
        p_t = np.nan
    elif t.std_error == 0:
        p_t = 0.0
    else:
        p_t = float(2 * stats.t.sf(abs(t.mean / t.std_error), t.n - 1))
    means = _bootstrap_means(d - t.mean, w, rng, n_resamples)
    hits = int(np.count_nonzero(np.abs(means) >= abs(t.mean) - 1e-12 * float(np.abs(d).max())))
    return p_t, (1 + hits) / (1 + n_resamples)


def _bootstrap_means(centred: np.ndarray, w: np.ndarray, rng, n_resamples: int) -> np.ndarray:
    """The removed bootstrap's resampled means: whole-number weights draw ``sum(w)`` copies, as counts per distinct
    value (256 resamples a draw); fractional weights draw the items of positive weight, each keeping its weight, in
    batches of about 4 MB of counts."""
    if np.all(w == np.round(w)):
        distinct, cell = np.unique(centred, return_inverse=True)
        mass = np.bincount(cell, weights=w, minlength=distinct.size)
        distinct, mass = distinct[mass > 0], mass[mass > 0]
        n_draws = int(round(float(mass.sum())))
        share = mass / float(mass.sum())
        draws = [rng.multinomial(n_draws, share, size=min(256, n_resamples - start))
                 for start in range(0, n_resamples, 256)]
        return np.concatenate([np.einsum("ij,j->i", counts, distinct) / n_draws for counts in draws])
    support = np.flatnonzero(w > 0)
    n = w.size
    batch = max(1, 4 * 10**6 // (8 * n))
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        draws = rng.integers(0, support.size, size=(size, support.size))
        if support.size < n:
            draws = support[draws]
        draws += (np.arange(size, dtype=np.int64) * n)[:, None]
        counts = np.bincount(draws.ravel(), minlength=size * n).reshape(size, n)
        means[start:start + size] = np.einsum("ij,j->i", counts, w * centred) / np.einsum("ij,j->i", counts, w)
    return means


def paired_differences(omega: float, share: float) -> tuple[np.ndarray, np.ndarray]:
    """Per item difference A - B and its probabilities: 0 (same decision and outcome), +1 / -omega (A alone
    acts: right / wrong), -1 / +omega (B alone acts: right / wrong); the expected difference is 0."""
    wrong = 1.0 / (1.0 + omega)
    d = np.array([0.0, 1.0, -omega, -1.0, omega])
    p = np.array([1 - 1.5 * share, share * (1 - wrong), share * wrong, share / 2 * (1 - wrong), share / 2 * wrong])
    return d, p


def paired_rates(d, counts, omega, test_rng, test_replicates):
    """False-rejection rates at the 5% level under "no difference in expectation": (bounded, t, bootstrap).

    The bounded test rejects exactly when its 95% interval of the mean difference excludes 0
    (``PairedComparison.p_value < 0.05``); the interval is ``mean_interval`` of the differences with
    the range of a difference, as ``paired_comparison`` and the verdict build it. The t-test and the
    bootstrap on the first ``test_replicates`` samples of counts (the bootstrap draws 1,000 resamples each).
    """
    spread = 1.0 + omega  # highest - lowest value of one item: the differences lie in [-spread, spread]
    low, high = intervals_from_counts(d, counts, (-spread, spread))
    bounded = (low > 0) | (high < 0)
    removed = np.array([removed_tests(d, row.astype(np.float64), test_rng) for row in counts[:test_replicates]])
    return np.mean(bounded), np.mean(removed[:, 0] < 0.05), np.mean(removed[:, 1] < 0.05)


PAIRED_WEIGHTED = (0.05, 10.0)  # (share of the sampled items, weight) of the up-weighted group


def weighted_paired_cell(rng, n, omega, share, replicates, n_resamples=1000):
    """(bounded, t, bootstrap) false-rejection rates at the 5% level with the probability weights above."""
    d, p = paired_differences(omega, share)
    spread = 1.0 + omega
    rejected = np.zeros(3)
    for _ in range(replicates):
        _, weights = group_weights(rng, n, *PAIRED_WEIGHTED)
        values = d[rng.choice(d.size, size=n, p=p)]
        iv = uncertainty.mean_interval(values, weights, value_range=(-spread, spread))
        p_t, p_boot = removed_tests(values, weights, rng, n_resamples)
        rejected += [iv.low > 0 or iv.high < 0, p_t < 0.05, p_boot < 0.05]
    return tuple(rejected / replicates)


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


SECTIONS = ("unit", "matrix", "paired", "weighted", "weighted-paired")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=4000, help="per cell, unit weights and the paired test")
    parser.add_argument("--weighted-replicates", type=int, default=1000,
                        help="per cell, fractional and grouped probability weights; integer weights are checked "
                             "on 200 of the unit samples")
    parser.add_argument("--test-replicates", type=int, default=1000,
                        help="per paired cell, for the t-test and the bootstrap (1,000 resamples each)")
    parser.add_argument("--weighted-paired-replicates", type=int, default=500,
                        help="per paired cell with probability weights")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"comma-separated, any of {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--seed", type=int, default=20261124)
    args = parser.parse_args(argv)
    sections = set(args.sections.split(","))
    if sections - set(SECTIONS):
        parser.error(f"unknown sections {sorted(sections - set(SECTIONS))}; choose among {', '.join(SECTIONS)}")
    # The first three tables draw from one stream, in this order, as before issue 32 (so their figures compare
    # with earlier runs); what issue 32 added draws from streams of its own.
    rng = np.random.default_rng(args.seed)
    test_rng = np.random.default_rng([args.seed, 1])
    started = time.perf_counter()
    print(f"seed {args.seed}, {args.replicates} replicates per cell (weighted: {args.weighted_replicates}; "
          f"t-test and bootstrap: {args.test_replicates}; weighted paired: {args.weighted_paired_replicates}), "
          f"confidence {CONFIDENCE}, {platform.machine()} {platform.python_version()} numpy {np.__version__}")
    if "unit" in sections:
        unit_table(rng, args)
    if "matrix" in sections:
        matrix_table(rng, args)
    if "paired" in sections:
        paired_table(rng, test_rng, args)
    if "weighted" in sections:
        weighted_table(np.random.default_rng([args.seed, 2]), args)
    if "weighted-paired" in sections:
        weighted_paired_table(np.random.default_rng([args.seed, 3]), args)
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


def unit_table(rng, args) -> None:
    print()
    print("| n | omega | error rate | bounded | t | width bounded/t | integer w: gap | fractional w | "
          "fractional w: width bounded/t |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst, worst_fractional, largest_gap = [], [], 0.0
    ratios_where_t_right = []
    for n in NS:
        for omega in OMEGAS:
            for error_rate in ERROR_RATES:
                cell = unit_cell(rng, n, omega, error_rate, args.replicates)
                integer = integer_weight_gap(rng, *cell["samples"], 200)
                fractional, fractional_ratio = fractional_weight_cell(rng, n, omega, error_rate,
                                                                      args.weighted_replicates)
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
                      f"{cell['ratio']:.2f} | {integer:.0e} | {fractional:.3f} | {fractional_ratio:.2f} |")
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


def _head(title: str, columns: str) -> None:
    """A table's title, then its header: ``columns`` separated by " | "."""
    print()
    print(title)
    print()
    print(f"| {columns} |")
    print("|" + "---|" * (columns.count(" | ") + 1))


def matrix_table(rng, args) -> None:
    _head("Value matrix: tn 1, tp 10, false alarm -5, missed positive -500, hand-off 0 (25% handed over,\n"
          "2% false alarms and 25% true positives among acted items)", "n | miss rate | bounded | t | width bounded/t")
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


PAIRED_COLUMNS = "n | omega | share A alone acts | bounded | paired t | paired bootstrap"


def _rate_row(rates: list, bounded, t, boot, n, omega, share) -> None:
    rates.append((bounded, t, boot, n, omega, share))
    print(f"| {n} | {omega:g} | {share:.2f} | {bounded:.3f} | {t:.3f} | {boot:.3f} |")


def _highest(rates) -> None:
    print()
    for column, name in enumerate(("bounded", "t", "bootstrap")):
        ordered = sorted(rates, key=lambda row: -row[column])
        print(f"highest false-rejection rates ({name}): " + ", ".join(
            f"{row[column]:.3f} at n={row[-3]} omega={row[-2]:g} s={row[-1]}" for row in ordered[:3]))


def paired_table(rng, test_rng, args) -> None:
    _head("Paired test, no difference in expectation: share of p < 0.05 (bounded: "
          f"{args.replicates} replicates; t-test and bootstrap: the first {args.test_replicates})", PAIRED_COLUMNS)
    rates = []
    for n in NS:
        for omega in OMEGAS:
            for share in SHARES:
                d, p = paired_differences(omega, share)
                counts = rng.multinomial(n, p, size=args.replicates)
                bounded, t, boot = paired_rates(d, counts, omega, test_rng, args.test_replicates)
                _rate_row(rates, bounded, t, boot, n, omega, share)
    _highest(rates)


def weighted_table(rng, args) -> None:
    _head(f"Probability weights: a share h of the items weighs r (times U[{1 - JITTER:g}, {1 + JITTER:g}]), the "
          f"others 1; accepted items of the heavy group wrong at rate e, of the light group at e/20 "
          f"({args.weighted_replicates} replicates per cell)", "n | omega | h | r | e | bounded | t | width bounded/t")
    worst = []
    for n in WEIGHTED_NS:
        for omega in WEIGHTED_OMEGAS:
            for heavy_share, ratio in HEAVY_GROUPS:
                for error_rate in HEAVY_ERROR_RATES:
                    bounded, t, ratio_width = weighted_cell(rng, n, omega, heavy_share, ratio, error_rate,
                                                            args.weighted_replicates)
                    worst.append((bounded, n, omega, heavy_share, ratio, error_rate))
                    print(f"| {n} | {omega:g} | {heavy_share:g} | {ratio:g} | {error_rate:.2f} | {bounded:.3f} | "
                          f"{t:.3f} | {ratio_width:.2f} |")
    worst.sort()
    print()
    print("worst cells (bounded, grouped probability weights):", ", ".join(
        f"{c:.3f} at n={n} omega={o:g} h={h:g} r={r:g} e={e}" for c, n, o, h, r, e in worst[:5]))


def weighted_paired_table(rng, args) -> None:
    heavy_share, ratio = PAIRED_WEIGHTED
    _head(f"Paired test with probability weights (a share {heavy_share:g} of the items weighs {ratio:g}), no "
          f"difference in expectation: share of p < 0.05 ({args.weighted_paired_replicates} replicates per cell)",
          PAIRED_COLUMNS)
    rates = []
    for n in WEIGHTED_NS:
        for omega in (1.0, 20.0, 1000.0):
            for share in (0.05, 0.5):
                bounded, t, boot = weighted_paired_cell(rng, n, omega, share, args.weighted_paired_replicates)
                _rate_row(rates, bounded, t, boot, n, omega, share)
    _highest(rates)


if __name__ == "__main__":
    raise SystemExit(main())
