"""A slider move on the hull, side by side with one numpy pass over the confidences.

One 10-class model with full-precision float64 confidences (every confidence distinct: the hardest case
for a move, one candidate threshold per item), labels right with probability the confidence. Per size:

- loading: ``Predictions.from_top_label`` on arrays in memory, then ``presort`` (once per run, reported);
- hull build: the first ``fit_policy("threshold")`` and ``fit_policy("class_thresholds")`` (each builds
  its hulls once; reported apart from the moves);
- a move: ``fit_policy`` for a new value each time (``--moves`` values of omega spread over [0.1, 50]),
  median; the same moves by the linear scan the engine used before the hull (``scan`` below: the
  cumulative gain of every group, its first maximum), median of fewer;
- the baseline, one numpy pass over the confidences: ``np.count_nonzero(confidence >= 0.5)``, median of
  ``--passes``.

The hull's thresholds are checked equal to the scan's for every timed value. Ratios are move / numpy pass
(goal: at most 0.05).

Usage: ``python benchmarks/bench_moves.py [--sizes 1000000,10000000] [--moves 201] [--scan-moves 5]``
Not a test: it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import valuecore as vc  # noqa: E402
from valuecore.curves import class_cumulative_gain, cumulative_gain  # noqa: E402

CLASSES = [str(k) for k in range(10)]


def make_run(n: int, rng: np.random.Generator):
    confidence = rng.uniform(0.1, 1.0, n)  # float64 at full precision: n distinct values
    y_pred = rng.integers(0, 10, n)
    right = rng.random(n) < confidence
    y_true = np.where(right, y_pred, (y_pred + 1 + rng.integers(0, 9, n)) % 10)
    names = np.array(CLASSES)
    return confidence, names[y_pred], names[y_true]


def median_time(function, repeat: int) -> tuple[float, list]:
    times, results = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        results.append(function())
        times.append(time.perf_counter() - started)
    return statistics.median(times), results


def scan(run, kind: str, use_case):
    """What fit_policy answered before the hull: the first maximum of the cumulative gain over every group
    (per class: over the class's groups, beaten by accepting none of it only when above 0)."""
    if kind == "threshold":
        k = int(np.argmax(cumulative_gain(run, use_case)))
        return None if k == 0 else float(run.thresholds[k - 1])
    at_end = class_cumulative_gain(run, use_case)
    bounds = np.searchsorted(run.class_group_class, np.arange(len(CLASSES) + 1)).tolist()
    pairs = []
    for k, name in enumerate(CLASSES):
        start, stop = bounds[k], bounds[k + 1]
        prefix = at_end[start:stop] - (at_end[start - 1] if start else 0.0)
        best = int(prefix.argmax()) if prefix.size else 0
        pairs.append((name, float(run.class_group_threshold[start + best]) if prefix.size and prefix[best] > 0
                      else None))
    return tuple(pairs)


def moves(run, kind: str, omegas, by_scan: bool = False) -> tuple[float, list]:
    answers = []
    times = []
    for omega in omegas:
        use_case = vc.UseCase(1.0, 0.0, -float(omega))
        started = time.perf_counter()
        if by_scan:
            answers.append(scan(run, kind, use_case))
        else:
            policy = vc.fit_policy(kind, run, use_case)
            answers.append(policy.threshold if kind == "threshold" else policy.class_thresholds)
        times.append(time.perf_counter() - started)
    return statistics.median(times), answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--moves", type=int, default=201)
    parser.add_argument("--scan-moves", type=int, default=5)
    parser.add_argument("--passes", type=int, default=21)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"load before: {os.getloadavg()[0]:.1f}")
    header = (f"{'n':>11} {'rule':>16} | {'load s':>7} {'presort s':>9} {'build ms':>9} | {'move us':>8} "
              f"{'scan us':>9} {'numpy us':>9} | {'move/numpy':>10} {'scan/numpy':>10} | load")
    print(header)
    for n in [int(float(size)) for size in args.sizes.split(",")]:
        confidence, y_pred, y_true = make_run(n, rng)
        started = time.perf_counter()
        predictions = vc.Predictions.from_top_label(y_pred, confidence, y_true, classes=CLASSES)
        loading = time.perf_counter() - started
        started = time.perf_counter()
        run = vc.presort(predictions)
        sorting = time.perf_counter() - started
        started = time.perf_counter()
        run.class_group_end  # the per-class order, which the per-class rule needed before the hull too
        class_order = time.perf_counter() - started
        numpy_pass, _ = median_time(lambda values=confidence: np.count_nonzero(values >= 0.5), args.passes)
        omegas = np.geomspace(0.1, 50.0, args.moves)
        for kind in ("threshold", "class_thresholds"):
            started = time.perf_counter()
            vc.fit_policy(kind, run, vc.UseCase(1.0, 0.0, -4.0))  # builds the hulls
            build = time.perf_counter() - started
            sorted_for_it = sorting if kind == "threshold" else class_order
            move, answers = moves(run, kind, omegas)
            every = max(1, len(omegas) // args.scan_moves)
            scanning, scanned = moves(run, kind, omegas[::every], by_scan=True)
            assert repr(scanned) == repr(answers[::every]), "the hull chose another threshold than the scan"
            print(f"{n:>11,} {kind:>16} | {loading:7.2f} {sorted_for_it:9.2f} {build * 1e3:9.1f} | {move * 1e6:8.1f} "
                  f"{scanning * 1e6:9.0f} {numpy_pass * 1e6:9.0f} | {move / numpy_pass:9.4f}x "
                  f"{scanning / numpy_pass:9.2f}x"
                  f" | {os.getloadavg()[0]:.1f}")
        del run, predictions, confidence, y_pred, y_true
    print("\nmove = fit_policy for a new omega on the presorted run (median); scan = the same moves through the "
          "linear scan;\nnumpy = np.count_nonzero(confidence >= 0.5); load s = from_top_label; presort s = presort "
          "(threshold), then the per-class order (class_thresholds);\n"
          "build = the first fit_policy of the rule (its hulls).")


if __name__ == "__main__":
    main()
