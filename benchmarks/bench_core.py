"""Speed of the exact core against a naive grid baseline.

Prints, for n = 10^4, 10^5, 10^6 predictions per model and 5 models:

- the one-off presort (cached per run in the dashboard);
- a new use case: fitting every policy kind for all 5 models on presorted runs,
  and evaluating the tuned threshold on the evaluation split;
- a 201-point VOC curve (tuned on one split, applied to another) and the oracle curve;
- the naive baseline common in evaluation notebooks: boolean masks over a grid
  of 101 thresholds, values for a grid of 201 omegas (approximate, not exact);
- the ratio naive / exact.

Usage: ``python benchmarks/bench_core.py [--sizes 10000,100000,1000000] [--repeat 5]``
This is a benchmark, not a test: it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import valuecore as vc  # noqa: E402

N_MODELS = 5
N_CLASSES = 10
OMEGAS = np.linspace(0.0, 10.0, 201)
GRID_THRESHOLDS = np.linspace(0.0, 1.0, 101)
POLICY_KINDS = ("accept_all", "threshold", "calibrated_threshold", "class_thresholds",
                "calibrated_class_thresholds", "expected_value")


def synthetic_predictions(n: int, rng: np.random.Generator, sharpness: float) -> vc.Predictions:
    """A 10-class run with realistic confidence spread and ~80-95% accuracy."""
    y_true = rng.integers(0, N_CLASSES, n)
    logits = rng.normal(0.0, 1.0, (n, N_CLASSES))
    logits[np.arange(n), y_true] += rng.normal(2.5, 1.5, n)
    logits *= sharpness
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    # Round like real exported runs: this creates the ties the core must not split.
    proba = np.round(proba, 4)
    proba[np.arange(n), proba.argmax(axis=1)] += 1.0 - proba.sum(axis=1)
    return vc.Predictions.from_proba(np.clip(proba, 0, 1), y_true)


def best_time(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def naive_use_case(tune: vc.Predictions, use_case: vc.UseCase) -> float:
    """Grid search over 101 thresholds with boolean masks (the notebook way)."""
    correct = tune.correct
    best_value, best_threshold = -np.inf, None
    for threshold in GRID_THRESHOLDS:
        accepted = tune.confidence >= threshold
        n_correct = np.count_nonzero(accepted & correct)
        n_wrong = np.count_nonzero(accepted & ~correct)
        value = (use_case.v_correct * n_correct + use_case.v_wrong * n_wrong
                 + use_case.v_abstain * (tune.n - n_correct - n_wrong))
        if value > best_value:
            best_value, best_threshold = value, threshold
    return best_threshold


def naive_voc(tune: vc.Predictions, evaluation: vc.Predictions, omegas: np.ndarray = OMEGAS) -> np.ndarray:
    """Tuned VOC the notebook way: for every omega, a mask per grid threshold.

    For each omega, every one of the 101 thresholds is tried on the tuning
    split with boolean masks, the best one is applied to the evaluation split.
    """
    tune_correct, eval_correct = tune.correct, evaluation.correct
    values = np.empty(omegas.size)
    for j, omega in enumerate(omegas):
        best_value, best_threshold = -np.inf, 0.0
        for threshold in GRID_THRESHOLDS:
            accepted = tune.confidence >= threshold
            value = np.count_nonzero(accepted & tune_correct) - omega * np.count_nonzero(accepted & ~tune_correct)
            if value > best_value:
                best_value, best_threshold = value, threshold
        accepted = evaluation.confidence >= best_threshold
        values[j] = (np.count_nonzero(accepted & eval_correct)
                     - omega * np.count_nonzero(accepted & ~eval_correct)) / evaluation.n
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(20261122)
    print(f"valuecore {vc.__version__} | numpy {np.__version__} | Python {platform.python_version()} | "
          f"{platform.machine()} | {os.cpu_count()} cores | {N_MODELS} models x {N_CLASSES} classes")
    print("times are the best of", args.repeat, "runs, in milliseconds, for all 5 models together\n")
    header = (f"{'n':>9} | {'presort':>8} | {'threshold':>8} {'naive':>9} {'ratio':>8} | {'all kinds':>9} | "
              f"{'VOC 201':>8} {'naive':>11} {'ratio':>8} | {'oracle':>7} | {'evaluate':>8}")
    print(header)
    print("-" * len(header))
    for n in sizes:
        tune = [synthetic_predictions(n, rng, 0.8 + 0.2 * m) for m in range(N_MODELS)]
        evaluation = [synthetic_predictions(n, rng, 0.8 + 0.2 * m) for m in range(N_MODELS)]
        presort_time = best_time(lambda: [vc.presort(p) for p in tune + evaluation], 1)
        tune_sorted = [vc.presort(p) for p in tune]
        eval_sorted = [vc.presort(p) for p in evaluation]
        use_case = vc.UseCase(1.0, 0.0, -4.0)

        def new_use_case():
            for run in tune_sorted:
                for kind in POLICY_KINDS:
                    vc.fit_policy(kind, run, use_case)

        def evaluate_tuned():
            for run, p in zip(tune_sorted, evaluation):
                vc.evaluate(vc.fit_policy("threshold", run, use_case), p, use_case)

        def voc():
            for t, e in zip(tune_sorted, eval_sorted):
                vc.voc_curve(e, "tuned", t).value_at(OMEGAS)

        def oracle():
            for e in eval_sorted:
                vc.voc_curve(e, "oracle").value_at(OMEGAS)

        threshold_time = best_time(lambda: [vc.fit_policy("threshold", r, use_case) for r in tune_sorted], args.repeat)
        all_kinds_time = best_time(new_use_case, args.repeat)
        naive_threshold_time = best_time(lambda: [naive_use_case(p, use_case) for p in tune], max(1, args.repeat // 2))
        voc_time = best_time(voc, args.repeat)
        # The naive VOC costs 201 x 101 masks per model; past ~1e5 items, time a
        # slice of the omegas and scale linearly (marked with *), as it is linear in omegas.
        subset = OMEGAS if n <= 100_000 else OMEGAS[::20]
        naive_voc_time = best_time(lambda: [naive_voc(t, e, subset) for t, e in zip(tune, evaluation)], 1)
        naive_voc_time *= OMEGAS.size / subset.size
        mark = " " if subset.size == OMEGAS.size else "*"
        oracle_time = best_time(oracle, args.repeat)
        evaluate_time = best_time(evaluate_tuned, args.repeat)
        print(f"{n:>9,} | {presort_time * 1e3:8.1f} | {threshold_time * 1e3:8.3f} {naive_threshold_time * 1e3:9.1f} "
              f"{naive_threshold_time / threshold_time:7.0f}x | {all_kinds_time * 1e3:9.2f} | "
              f"{voc_time * 1e3:8.2f} {naive_voc_time * 1e3:10.0f}{mark} {naive_voc_time / voc_time:7.0f}x | "
              f"{oracle_time * 1e3:7.2f} | {evaluate_time * 1e3:8.1f}")
    print("\nthreshold = new use case: exact tuned global threshold for 5 presorted runs;"
          "\nnaive = the same by a 101-threshold boolean-mask grid (approximate);"
          "\nall kinds = fit all 6 policy kinds (incl. per-class thresholds) for 5 runs;"
          "\nVOC 201 = exact tuned-on-val, applied-to-test curve at 201 omegas; naive = 201 x 101 masks per model"
          "\n  (* = timed on 11 of the 201 omegas and scaled by 201/11: it is linear in the number of omegas);"
          "\noracle = upper-hull VOC at 201 omegas; evaluate = tune + realised value on test (O(n)).")

if __name__ == "__main__":
    main()
