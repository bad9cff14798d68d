"""A slider move on the hull, side by side with one numpy pass over the confidences.

One model of ``--classes`` classes (10, or each of a list) with full-precision float64 confidences (every
confidence distinct: the hardest case for a move, one candidate threshold per item), labels right with
probability the confidence. Per size and number of classes (the threshold rule at the first number only):

- loading: ``Predictions.from_top_label`` on arrays in memory, then ``presort`` (once per run, reported);
- hull build: the first ``fit_policy("threshold")`` and ``fit_policy("class_thresholds")`` (each builds
  its hulls once; reported apart from the moves);
- a move: ``fit_policy`` for a new value each time (``--moves`` values of omega spread over [0.1, 50]),
  median; the same moves by the linear scan the engine used before the hull (``scan`` below: the
  cumulative gain of every group, its first maximum), median of fewer;
- the baseline, one numpy pass over the confidences: ``np.count_nonzero(confidence >= 0.5)``, median of
  ``--passes``.

The hull's thresholds are checked equal to the scan's for every timed value. Ratios are move / numpy pass
(goal: at most 0.05), in wall time and in CPU time (``time.process_time``, steadier on a loaded machine).

``--base DIR`` times another checkout side by side (DIR holds its ``valuecore``, e.g. ``git archive 8dc4cc9 |
tar -x -C DIR``): fresh processes, this checkout's and the base's in turn (``--rounds`` each), the same data
(same seed); per row the smallest median of the rounds, and this checkout's chosen thresholds checked equal to
the base's; then one table with both side by side (CPU time: move, numpy pass, their ratio, and how many
times less CPU this checkout's move takes than the base's).

Usage: ``python benchmarks/bench_moves.py [--sizes 1000000,10000000] [--classes 10] [--moves 201]
[--scan-moves 5] [--base DIR [--rounds 2]]``. Not a test: it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent
# The checkout to time: this one, or --code DIR (a child process of --base).
sys.path.insert(0, sys.argv[sys.argv.index("--code") + 1] if "--code" in sys.argv else str(HERE))

import valuecore as vc  # noqa: E402
from valuecore.curves import class_cumulative_gain, cumulative_gain  # noqa: E402

def class_names(n_classes: int) -> list[str]:
    return [str(k) for k in range(n_classes)]


def make_run(n: int, rng: np.random.Generator, n_classes: int = 10):
    confidence = rng.uniform(0.1, 1.0, n)  # float64 at full precision: n distinct values
    y_pred = rng.integers(0, n_classes, n)
    right = rng.random(n) < confidence
    y_true = np.where(right, y_pred, (y_pred + 1 + rng.integers(0, n_classes - 1, n)) % n_classes)
    names = np.array(class_names(n_classes))
    return confidence, names[y_pred], names[y_true]


def median_time(function, repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``repeat`` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        function()
        cpus.append(time.process_time() - started_cpu)
        walls.append(time.perf_counter() - started)
    return statistics.median(walls), statistics.median(cpus)


def scan(run, kind: str, use_case):
    """What fit_policy answered before the hull: the first maximum of the cumulative gain over every group
    (per class: over the class's groups, beaten by accepting none of it only when above 0)."""
    if kind == "threshold":
        k = int(np.argmax(cumulative_gain(run, use_case)))
        return None if k == 0 else float(run.thresholds[k - 1])
    at_end = class_cumulative_gain(run, use_case)
    classes = run.predictions.classes
    bounds = np.searchsorted(run.class_group_class, np.arange(len(classes) + 1)).tolist()
    pairs = []
    for k, name in enumerate(classes):
        start, stop = bounds[k], bounds[k + 1]
        prefix = at_end[start:stop] - (at_end[start - 1] if start else 0.0)
        best = int(prefix.argmax()) if prefix.size else 0
        pairs.append((name, float(run.class_group_threshold[start + best]) if prefix.size and prefix[best] > 0
                      else None))
    return tuple(pairs)


def moves(run, kind: str, omegas, by_scan: bool = False) -> tuple[float, float, list]:
    """Median wall and CPU seconds of a move, and the thresholds chosen."""
    answers, walls, cpus = [], [], []
    for omega in omegas:
        use_case = vc.UseCase(1.0, 0.0, -float(omega))
        started, started_cpu = time.perf_counter(), time.process_time()
        if by_scan:
            answers.append(scan(run, kind, use_case))
        else:
            policy = vc.fit_policy(kind, run, use_case)
            answers.append(policy.threshold if kind == "threshold" else policy.class_thresholds)
        cpus.append(time.process_time() - started_cpu)
        walls.append(time.perf_counter() - started)
    return statistics.median(walls), statistics.median(cpus), answers


def measure(sizes, n_moves: int, scan_moves: int, passes: int, class_counts=(10,)) -> list[dict]:
    """One row per size, number of classes and rule: times in seconds, and the thresholds chosen (their repr)."""
    rows = []
    for n in sizes:
        for n_classes in class_counts:
            rows += measure_one(n, n_classes, n_moves, scan_moves, passes,
                                ("threshold", "class_thresholds") if n_classes == class_counts[0]
                                else ("class_thresholds",))
    return rows


def measure_one(n: int, n_classes: int, n_moves: int, scan_moves: int, passes: int, kinds) -> list[dict]:
    """:func:`measure`'s rows for one size and number of classes (seed 0: both checkouts time the same data)."""
    confidence, y_pred, y_true = make_run(n, np.random.default_rng(0), n_classes)
    started = time.perf_counter()
    predictions = vc.Predictions.from_top_label(y_pred, confidence, y_true, classes=class_names(n_classes))
    loading = time.perf_counter() - started
    started = time.perf_counter()
    run = vc.presort(predictions)
    sorting = time.perf_counter() - started
    started = time.perf_counter()
    run.class_group_end  # the per-class order, which the per-class rule needed before the hull too
    class_order = time.perf_counter() - started
    numpy_wall, numpy_cpu = median_time(lambda values=confidence: np.count_nonzero(values >= 0.5), passes)
    omegas = np.geomspace(0.1, 50.0, n_moves)
    rows = []
    for kind in kinds:
        started = time.perf_counter()
        vc.fit_policy(kind, run, vc.UseCase(1.0, 0.0, -4.0))  # builds the hulls
        build = time.perf_counter() - started
        move_wall, move_cpu, answers = moves(run, kind, omegas)
        every = max(1, len(omegas) // scan_moves)
        scan_wall, _, scanned = moves(run, kind, omegas[::every], by_scan=True)
        assert repr(scanned) == repr(answers[::every]), "the hull chose another threshold than the scan"
        rows.append(dict(n=n, classes=n_classes, kind=kind, loading=loading,
                         sorting=sorting if kind == "threshold" else class_order, build=build, move_wall=move_wall,
                         move_cpu=move_cpu, scan_wall=scan_wall, numpy_wall=numpy_wall, numpy_cpu=numpy_cpu,
                         load=os.getloadavg()[0], answers=repr(answers)))
    return rows


def in_child(code: str, args) -> list[dict]:
    """:func:`measure` in a fresh process timing the checkout in ``code``."""
    command = [sys.executable, __file__, "--code", code, "--json", "--sizes", args.sizes, "--moves", str(args.moves),
               "--scan-moves", str(args.scan_moves), "--passes", str(args.passes), "--classes", args.classes]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--classes", default="10", help="numbers of classes, e.g. 3,10,50")
    parser.add_argument("--moves", type=int, default=201)
    parser.add_argument("--scan-moves", type=int, default=5)
    parser.add_argument("--passes", type=int, default=21)
    parser.add_argument("--base", help="another checkout to time side by side (holds its valuecore)")
    parser.add_argument("--rounds", type=int, default=2, help="with --base: processes per checkout, in turn")
    parser.add_argument("--code", help=argparse.SUPPRESS)  # a child's checkout (read before the imports)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # a child's output
    args = parser.parse_args()
    sizes = [int(float(size)) for size in args.sizes.split(",")]
    class_counts = tuple(int(count) for count in args.classes.split(","))
    if args.json:
        print(json.dumps(measure(sizes, args.moves, args.scan_moves, args.passes, class_counts)))
        return
    print(f"load before: {os.getloadavg()[0]:.1f}")
    header = (f"{'n':>11} {'classes':>7} {'rule':>16} | {'load s':>7} {'presort s':>9} {'build ms':>9} | "
              f"{'move us':>8} {'scan us':>9} {'numpy us':>9} | {'move/numpy':>10} {'scan/numpy':>10} | "
              f"{'cpu: move us':>12} {'numpy us':>9} {'move/numpy':>10} | load")
    if args.base is None:
        runs = {"this checkout": [measure(sizes, args.moves, args.scan_moves, args.passes, class_counts)]}
    else:
        runs = {"this checkout": [], f"base ({args.base})": []}
        for _ in range(args.rounds):  # in turn, so that both see the same load
            runs["this checkout"].append(in_child(str(HERE), args))
            runs[f"base ({args.base})"].append(in_child(args.base, args))
        mine, base = (rounds[0] for rounds in runs.values())
        assert [row["answers"] for row in mine] == [row["answers"] for row in base], "other thresholds than the base"
    bests = {}
    for name, rounds in runs.items():
        print(f"\n{name}" + (f", best of {len(rounds)} processes" if len(rounds) > 1 else ""))
        print(header)
        bests[name] = []
        for rows in zip(*rounds):
            best = {key: min(row[key] for row in rows) for key in rows[0] if key not in ("n", "kind", "answers")}
            best["load"] = max(row["load"] for row in rows)
            n, kind = rows[0]["n"], rows[0]["kind"]
            bests[name].append((n, rows[0]["classes"], kind, best))
            print(f"{n:>11,} {rows[0]['classes']:>7} {kind:>16} | "
                  f"{best['loading']:7.2f} {best['sorting']:9.2f} {best['build'] * 1e3:9.1f} | "
                  f"{best['move_wall'] * 1e6:8.1f} {best['scan_wall'] * 1e6:9.0f} {best['numpy_wall'] * 1e6:9.0f} | "
                  f"{best['move_wall'] / best['numpy_wall']:9.4f}x {best['scan_wall'] / best['numpy_wall']:9.2f}x | "
                  f"{best['move_cpu'] * 1e6:12.1f} {best['numpy_cpu'] * 1e6:9.0f} "
                  f"{best['move_cpu'] / best['numpy_cpu']:9.4f}x | {best['load']:.1f}")
    print("\nevery process, CPU move/numpy (not only the best): " + "; ".join(
        f"{name} {rows[0]['n']:,}/{rows[0]['classes']}/{rows[0]['kind']}: "
        + " ".join(f"{row['move_cpu'] / row['numpy_cpu']:.4f}x" for row in rows)
        for name, rounds in runs.items() for rows in zip(*rounds)))
    if args.base is not None:
        print("\nside by side, CPU time (best of the processes): move and numpy pass in us, move/numpy, base/this")
        print(f"{'n':>11} {'classes':>7} {'rule':>16} | {'this move':>9} {'base move':>9} | {'this numpy':>10} "
              f"{'base numpy':>10} | {'this ratio':>10} {'base ratio':>10} | {'base/this':>9} | load")
        for (n, count, kind, this), (*_, other) in zip(*bests.values()):
            print(f"{n:>11,} {count:>7} {kind:>16} | {this['move_cpu'] * 1e6:9.1f} {other['move_cpu'] * 1e6:9.1f} | "
                  f"{this['numpy_cpu'] * 1e6:10.0f} {other['numpy_cpu'] * 1e6:10.0f} | "
                  f"{this['move_cpu'] / this['numpy_cpu']:9.4f}x {other['move_cpu'] / other['numpy_cpu']:9.4f}x | "
                  f"{other['move_cpu'] / this['move_cpu']:8.2f}x | {max(this['load'], other['load']):.1f}")
    print("\nmove = fit_policy for a new omega on the presorted run (median); scan = the same moves through the "
          "linear scan;\nnumpy = np.count_nonzero(confidence >= 0.5); load s = from_top_label; presort s = presort "
          "(threshold), then the per-class order (class_thresholds);\n"
          "build = the first fit_policy of the rule (its hulls); cpu = time.process_time; load = highest 1-minute "
          "load average seen.")


if __name__ == "__main__":
    main()
