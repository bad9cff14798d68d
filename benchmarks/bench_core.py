"""Speed of the exact core against a naive grid baseline.

Prints, for n = 10^4, 10^5, 10^6 predictions per model and 5 models:

- the one-off presort (cached per run in the dashboard);
- a new use case: fitting every policy kind for all 5 models on presorted runs,
  and evaluating the tuned threshold on the evaluation split;
- a 201-point VOC curve (tuned on one split, applied to another) and the oracle curve;
- the naive baseline common in evaluation notebooks: boolean masks over a grid
  of 101 thresholds (computed once per split), values for a grid of 201 omegas
  (approximate, not exact);
- the ratio naive / exact;
- then, side by side in the same run, from scratch (presort included) and per
  slider move, against numpy sort + cumsum, pandas groupby + cumsum and
  scikit-learn's TunedThresholdClassifierCV (default grid, and every distinct
  confidence at a smaller n), for scores rounded to 4 decimals and for
  full-precision float64 scores (medians of interleaved runs).

From a file (reading and validating included): ``benchmarks/bench_loader.py --from-file``.

Usage: ``python benchmarks/bench_core.py [--sizes 10000,100000,1000000] [--repeat 5] [--scratch-only]``
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


def synthetic_proba(n: int, rng: np.random.Generator, sharpness: float, rounded: bool = True):
    """Probabilities (n, 10) with realistic confidence spread and ~80-95% accuracy, and the true labels.

    ``rounded``: to 4 decimals like many exported runs (ties the core must not split);
    otherwise full-precision float64, nearly every confidence distinct (raw model scores).
    """
    y_true = rng.integers(0, N_CLASSES, n)
    logits = rng.normal(0.0, 1.0, (n, N_CLASSES))
    logits[np.arange(n), y_true] += rng.normal(2.5, 1.5, n)
    logits *= sharpness
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    if rounded:
        proba = np.round(proba, 4)
        proba[np.arange(n), proba.argmax(axis=1)] += 1.0 - proba.sum(axis=1)
        proba = np.clip(proba, 0, 1)
    return proba, y_true


def synthetic_predictions(n: int, rng: np.random.Generator, sharpness: float, rounded: bool = True) -> vc.Predictions:
    """A 10-class run (see :func:`synthetic_proba`)."""
    return vc.Predictions.from_proba(*synthetic_proba(n, rng, sharpness, rounded))


def median_times(contenders: dict, repeat: int) -> dict:
    """Median seconds of each contender, run in turn within each repeat (interleaved, so a
    change of the machine's load hits them alike)."""
    import gc

    times = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, function in contenders.items():
            gc.collect()
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(values)) for name, values in times.items()}


def best_time(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def grid_counts(p: vc.Predictions) -> tuple[np.ndarray, np.ndarray]:
    """Correct and wrong items accepted at each of the 101 grid thresholds: one mask per threshold, once."""
    correct = p.correct
    n_correct = np.empty(GRID_THRESHOLDS.size)
    n_wrong = np.empty(GRID_THRESHOLDS.size)
    for k, threshold in enumerate(GRID_THRESHOLDS):
        accepted = p.confidence >= threshold
        n_correct[k] = np.count_nonzero(accepted & correct)
        n_wrong[k] = np.count_nonzero(accepted & ~correct)
    return n_correct, n_wrong


def naive_use_case(tune: vc.Predictions, use_case: vc.UseCase) -> float:
    """Grid search over 101 thresholds with boolean masks (the notebook way)."""
    n_correct, n_wrong = grid_counts(tune)
    value = (use_case.v_correct * n_correct + use_case.v_wrong * n_wrong
             + use_case.v_abstain * (tune.n - n_correct - n_wrong))
    return GRID_THRESHOLDS[int(np.argmax(value))]


def naive_voc(tune: vc.Predictions, evaluation: vc.Predictions, omegas: np.ndarray = OMEGAS) -> np.ndarray:
    """Tuned VOC the notebook way, done competently: the 101 grid masks are computed
    once per split, then every omega is arithmetic on those counts."""
    tune_correct, tune_wrong = grid_counts(tune)
    eval_correct, eval_wrong = grid_counts(evaluation)
    best = np.argmax(tune_correct[None, :] - omegas[:, None] * tune_wrong[None, :], axis=1)
    return (eval_correct[best] - omegas * eval_wrong[best]) / evaluation.n


# ---------------------------------------------------------------- from scratch
def numpy_sort_cumsum(confidence, correct, use_case, kind: str | None = "stable") -> float:
    """Exact tuned threshold, as a competent user writes it: one sort, cumulative sums at group ends.

    ``kind``: the sort's; a group is summed whole at its end, so any kind gives the same threshold
    (``bench_loader`` uses numpy's default, its fastest)."""
    order = np.argsort(-confidence, kind=kind)
    c = confidence[order]
    gain = np.where(correct[order], use_case.v_correct - use_case.v_abstain, use_case.v_wrong - use_case.v_abstain)
    cum = np.cumsum(gain)
    ends = np.r_[np.flatnonzero(c[1:] != c[:-1]), c.size - 1]
    best = int(np.argmax(cum[ends]))
    return float(c[ends[best]]) if cum[ends[best]] > 0 else None


def pandas_groupby_cumsum(confidence, correct, use_case) -> float:
    """Exact tuned threshold with pandas: group equal confidences, then cumulative sums."""
    import pandas as pd

    gain = np.where(correct, use_case.v_correct - use_case.v_abstain, use_case.v_wrong - use_case.v_abstain)
    per_value = pd.Series(gain).groupby(confidence).sum().sort_index(ascending=False).cumsum()
    best = per_value.idxmax()
    return float(best) if per_value[best] > 0 else None


def sklearn_tuned(confidence, correct, use_case, thresholds):
    """scikit-learn's TunedThresholdClassifierCV on "is the prediction correct", scored by value."""
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.frozen import FrozenEstimator
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import TunedThresholdClassifierCV

    class Scores(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.classes_ = np.array([False, True])
            return self

        def predict_proba(self, X):
            return np.c_[1 - X[:, 0], X[:, 0]]

    def value(y, accepted):
        return float(np.sum(np.where(accepted, np.where(y, use_case.v_correct, use_case.v_wrong), use_case.v_abstain)))

    X = confidence[:, None]
    model = Scores().fit(X, correct)
    tuned = TunedThresholdClassifierCV(FrozenEstimator(model), scoring=make_scorer(value), thresholds=thresholds,
                                       cv=_AllData(len(correct)), refit=False)
    tuned.fit(X, correct)
    return tuned.best_threshold_


class _AllData:
    """One "fold" that tunes on all the data (the estimator is frozen; there is nothing to hold out)."""

    def __init__(self, n):
        self.n = n

    def split(self, X=None, y=None, groups=None):
        everything = np.arange(self.n)
        yield everything, everything

    def get_n_splits(self, X=None, y=None, groups=None):
        return 1


def from_scratch_table(sizes, repeat, rng, rounded: bool = True, sklearn: bool = True) -> None:
    """One model: arrays in memory -> exact tuned threshold, and per slider move, side by side.

    Medians of ``repeat`` interleaved runs; the scikit-learn columns once each (they are slow)."""
    use_case = vc.UseCase(1.0, 0.0, -4.0)
    print(f"-- {'scores rounded to 4 decimals' if rounded else 'full-precision float64 scores (nearly all distinct)'}"
          f"; load average {os.getloadavg()[0]:.1f}")
    header = (f"{'n':>9} | {'valuecore':>9} {'numpy':>8} {'pandas':>8} {'sk grid':>8} {'sk exact':>9} | "
              f"{'per move':>9} {'numpy/vc':>9} {'pandas/vc':>9} | {'scratch':>8} {'numpy/vc':>9} {'pandas/vc':>9}")
    print(header)
    print("-" * len(header))
    for n in sizes:
        p = synthetic_predictions(n, rng, 1.0, rounded)
        confidence, correct = p.confidence, p.correct
        sorted_run = vc.presort(p)
        times = median_times({
            "scratch": lambda: vc.fit_policy("threshold", vc.presort(p), use_case),
            "numpy": lambda: numpy_sort_cumsum(confidence, correct, use_case),
            "pandas": lambda: pandas_groupby_cumsum(confidence, correct, use_case),
            "move": lambda: vc.fit_policy("threshold", sorted_run, use_case),
        }, repeat)  # fmt: skip
        scratch, numpy_time, pandas_time, move = (times[k] for k in ("scratch", "numpy", "pandas", "move"))
        grid_time = exact_time = float("nan")
        exact_n = min(n, 20_000)
        if sklearn:
            grid_time = median_times({"grid": lambda: sklearn_tuned(confidence, correct, use_case, 100)}, 1)["grid"]
            head, head_correct = confidence[:exact_n], correct[:exact_n]
            exact_time = median_times({"exact": lambda: sklearn_tuned(head, head_correct, use_case, np.unique(head))},
                                      1)["exact"]  # fmt: skip
        # The baselines hold no cache: each slider move recomputes them from scratch.
        sk = (f"{grid_time * 1e3:8.0f} {exact_time * 1e3:8.0f}{'*' if exact_n < n else ' '}" if sklearn
              else f"{'-':>8} {'-':>8} ")
        print(f"{n:>9,} | {scratch * 1e3:9.1f} {numpy_time * 1e3:8.1f} {pandas_time * 1e3:8.1f} {sk} | "
              f"{move * 1e3:9.3f} {numpy_time / move:8.0f}x {pandas_time / move:8.0f}x | "
              f"{scratch * 1e3:8.1f} {numpy_time / scratch:8.2f}x {pandas_time / scratch:8.2f}x")
        expected = numpy_sort_cumsum(confidence, correct, use_case)
        assert pandas_groupby_cumsum(confidence, correct, use_case) == expected
        assert vc.fit_policy("threshold", vc.presort(p), use_case).threshold == expected
    print(f"load average {os.getloadavg()[0]:.1f}")


SCRATCH_NOTE = """
valuecore = presort + exact tuned threshold (from scratch, Predictions in memory); numpy = sort + cumsum;
  pandas = groupby + cumsum (both exact, same threshold, checked); sk grid = TunedThresholdClassifierCV with
  its default 100-point grid (approximate); sk exact = with every distinct confidence as a candidate (* = on
  the first 20,000 items only: it costs O(n) per candidate). per move = valuecore on the presorted run, against
  the baselines, which recompute from scratch; ratios > 1 mean valuecore is faster. Medians of --repeat
  interleaved runs (sk: one run)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scratch-only", action="store_true", help="only the from-scratch / per-move tables")
    parser.add_argument("--no-sklearn", action="store_true", help="leave out the scikit-learn columns")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(20261122)
    print(f"valuecore {vc.__version__} | numpy {np.__version__} | Python {platform.python_version()} | "
          f"{platform.machine()} | {os.cpu_count()} cores | {N_MODELS} models x {N_CLASSES} classes")
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    if args.scratch_only:
        for rounded in (True, False):
            from_scratch_table(sizes, args.repeat, rng, rounded, not args.no_sklearn)
        print(SCRATCH_NOTE)
        return
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
        naive_voc_time = best_time(lambda: [naive_voc(t, e) for t, e in zip(tune, evaluation)], 1)
        mark = " "
        oracle_time = best_time(oracle, args.repeat)
        evaluate_time = best_time(evaluate_tuned, args.repeat)
        print(f"{n:>9,} | {presort_time * 1e3:8.1f} | {threshold_time * 1e3:8.3f} {naive_threshold_time * 1e3:9.1f} "
              f"{naive_threshold_time / threshold_time:7.0f}x | {all_kinds_time * 1e3:9.2f} | "
              f"{voc_time * 1e3:8.2f} {naive_voc_time * 1e3:10.0f}{mark} {naive_voc_time / voc_time:7.0f}x | "
              f"{oracle_time * 1e3:7.2f} | {evaluate_time * 1e3:8.1f}")
    print("\nthreshold = new use case: exact tuned global threshold for 5 presorted runs;"
          "\nnaive = the same by a 101-threshold boolean-mask grid (approximate);"
          "\nall kinds = fit all 6 policy kinds (incl. per-class thresholds) for 5 runs;"
          "\nVOC 201 = exact tuned-on-val, applied-to-test curve at 201 omegas; naive = 101 grid masks per split,"
          "\n  computed once, then 201 omegas of arithmetic on their counts;"
          "\noracle = upper-hull VOC at 201 omegas; evaluate = tune + realised value on test (O(n)).")

    print("\n== from scratch (arrays in memory -> exact answer) and per slider move, one model, one run\n")
    for rounded in (True, False):
        from_scratch_table(sizes, args.repeat, rng, rounded, not args.no_sklearn)
    print(SCRATCH_NOTE)


if __name__ == "__main__":
    main()
