"""Serving cost: ``valuecore.serving`` decisions for 10^6 rows against one ``numpy.argmax`` over them.

For each policy kind and recalibration, a policy JSON is loaded with ``load_policy`` and
``decisions(proba)`` is timed on ``--rows`` rows of ``--classes`` classes (float64, rows
summing to 1): the input checks (finite, non-negative, rows summing to 1), the
recalibration, the rule and its ties. The baseline is ``proba.argmax(axis=1)`` on the same
array, the least a server does to act on a model at all. ``decide(proba)`` (the labels) is timed
beside it: for a threshold rule, per-class thresholds or two tiers, with no recalibration or a temperature,
it reads the probabilities in one pass and makes no recalibrated matrix (``valuecore/_serve/fused.py``; with
every threshold above half, or a temperature whose bounds hand off the rows below such a value, it takes no
argmax at all).
The table shows the best of ``--repeat`` runs, wall and CPU time in
milliseconds, the argmax, ``decisions`` and ``decide`` interleaved in every round, and their ratios to
the argmax measured in the same rounds; the load average is printed on each line.

Usage: ``python benchmarks/bench_serving.py [--rows 1000000] [--classes 10] [--repeat 5] [--policies NAME,...]``
(``--policies "threshold,threshold + temperature"``: those rows only).

``--base DIR`` compares two versions of the code in one process instead: ``decide`` of this tree and of
``DIR/valuecore`` (e.g. ``git archive`` of another commit, imported as another package), interleaved with
the argmax in every round (``--dtype float32``, ``--order F``: probabilities of that type and layout); with
``--estimator``, ``RejectOptionClassifier.predict`` of both against
``FixedThresholdClassifier(FrozenEstimator(estimator), threshold=0.7, response_method="predict_proba")
.predict`` on one ``LogisticRegression`` (20 features, two classes, ``--rows`` new rows), the policy a
threshold of 0.7 with no recalibration. Best and median of ``--repeat`` rounds, CPU and wall ms.
This is a benchmark, not a test: it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from valuecore.serving import load_policy  # noqa: E402

ASSISTED = {"v_confirmed_correct": 0.5, "v_confirmed_wrong": -1.0, "cost": 0.25}


def policies(classes: list[str]) -> dict[str, dict]:
    per_class = {c: 0.5 + 0.04 * k for k, c in enumerate(classes)}
    temperature = {"method": "temperature", "temperature": 0.8, "use_logits": False}
    isotonic = {"method": "isotonic", "x": [0.0, 0.3, 0.6, 0.9, 1.0], "y": [0.0, 0.2, 0.5, 0.9, 1.0]}
    out = {
        "accept_all": {"kind": "accept_all"},
        "threshold": {"kind": "threshold", "threshold": 0.7},
        "threshold + temperature": {"kind": "threshold", "threshold": 0.7, "calibration": temperature},
        "threshold + isotonic": {"kind": "threshold", "threshold": 0.7, "calibration": isotonic},
        "class_thresholds": {"kind": "class_thresholds", "class_thresholds": per_class},
        "two_tier": {"kind": "two_tier", "threshold": 0.8, "assist_threshold": 0.5, "assisted": ASSISTED},
        "expected_value": {"kind": "expected_value"},
        "expected_value + temperature": {"kind": "expected_value", "calibration": temperature},
    }
    if len(classes) == 2:
        out["threshold + platt"] = {"kind": "threshold", "threshold": 0.7,
                                    "calibration": {"method": "platt", "a": 1.2, "b": -0.1, "use_logits": False}}
    for policy in out.values():
        policy.setdefault("calibration", {"method": "none"})
    return out


def documents(classes: list[str], asked: str | None):
    """(name, policy document) of each policy of :func:`policies`, or of those ``asked`` names (comma-separated)."""
    chosen = None if asked is None else [name.strip() for name in asked.split(",")]
    for name, policy in policies(classes).items():
        if chosen is None or name in chosen:
            yield name, {"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
                         "models": [{"model": "m", "classes": classes, "policy": policy}]}


def best_of(repeat: int, contenders: dict) -> dict:
    """Minimum wall and minimum CPU time (ms) of each contender, interleaved in every round (a busy machine
    inflates CPU time less than wall time)."""
    wall = {name: [] for name in contenders}
    cpu = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, work in contenders.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            work()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return {name: (min(wall[name]) * 1000, min(cpu[name]) * 1000) for name in contenders}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--policies", default=None, help="comma-separated names of the rows to run (default: all)")
    parser.add_argument("--base", default=None, help="a copy of another version: its valuecore beside this one")
    parser.add_argument("--estimator", action="store_true", help="with --base: predict against scikit-learn's")
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"],
                        help="with --base: the probabilities' type")
    parser.add_argument("--order", default="C", choices=["C", "F"], help="with --base: their memory layout")
    args = parser.parse_args()
    if args.base is not None:
        side_by_side(args)
        return
    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.full(args.classes, 0.3), size=args.rows)
    classes = [f"c{k}" for k in range(args.classes)]
    print(f"{args.rows:,} rows x {args.classes} classes, float64; best of {args.repeat}; "
          f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    print("wall / CPU ms; ratios to numpy.argmax(proba, axis=1) timed in the same rounds\n")
    print(f"| {'policy':<30} | argmax wall/cpu | decisions wall/cpu | ratio w/c | decide wall/cpu | ratio w/c | load |")
    print(f"| {'-' * 30} | --------------: | -----------------: | --------: | --------------: | --------: | ---: |")
    for name, document in documents(classes, args.policies):
        served = load_policy(document)
        t = best_of(args.repeat, {"argmax": lambda: proba.argmax(axis=1),
                                  "decisions": lambda served=served: served.decisions(proba),
                                  "decide": lambda served=served: served.decide(proba)})
        (aw, ac), (dw, dc), (ew, ec) = t["argmax"], t["decisions"], t["decide"]
        print(f"| {name:<30} | {aw:7.1f} /{ac:6.1f} | {dw:9.1f} / {dc:6.1f} | {dw / aw:4.1f} {dc / ac:4.1f} | "
              f"{ew:7.1f} / {ec:5.1f} | {ew / aw:4.1f} {ec / ac:4.1f} | {os.getloadavg()[0]:4.1f} |")


def load_base(directory: str):
    """``DIR/valuecore`` imported as the package ``valuecore_base`` (its imports are relative)."""
    root = Path(directory).resolve() / "valuecore"
    spec = importlib.util.spec_from_file_location("valuecore_base", root / "__init__.py",
                                                  submodule_search_locations=[str(root)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["valuecore_base"] = module
    spec.loader.exec_module(module)
    return importlib.import_module("valuecore_base.serving")


def rounds(repeat: int, contenders: dict) -> dict:
    """Wall and CPU times (ms) of each contender in every round, the contenders interleaved."""
    times = {name: ([], []) for name in contenders}
    for _ in range(repeat):
        for name, work in contenders.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            work()
            times[name][0].append(1e3 * (time.perf_counter() - start))
            times[name][1].append(1e3 * (time.process_time() - start_cpu))
    return times


def show(label: str, times: dict, baseline: str) -> None:
    """One line per contender: best and median CPU and wall ms, and their ratios to ``baseline``'s."""
    ref = times[baseline]
    for name, (wall, cpu) in times.items():
        stats = [f(x) for x in (cpu, wall) for f in (min, np.median)]
        ratios = [a / b for a, b in zip(stats, [f(x) for x in (ref[1], ref[0]) for f in (min, np.median)])]
        print(f"| {label:<36} | {name:<16} | {stats[0]:6.1f} {stats[1]:6.1f} | {stats[2]:6.1f} {stats[3]:6.1f} | "
              f"{ratios[0]:5.2f} {ratios[1]:5.2f} | {ratios[2]:5.2f} {ratios[3]:5.2f} | {os.getloadavg()[0]:4.1f} |")


def side_by_side(args) -> None:
    base = load_base(args.base)
    rng = np.random.default_rng(0)
    print(f"{args.rows:,} rows; best and median of {args.repeat} interleaved rounds; ms; ratios to the first line "
          f"of each group; python {platform.python_version()}, numpy {np.__version__}")
    print(f"| {'case':<36} | {'contender':<16} | CPU best median | wall best median | CPU ratio b/m | wall ratio b/m "
          "| load |")
    if args.estimator:
        from sklearn.datasets import make_classification
        from sklearn.frozen import FrozenEstimator
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import FixedThresholdClassifier

        from valuecore.serving import RejectOptionClassifier

        X_fit, y_fit = make_classification(n_samples=20_000, n_features=20, random_state=0)
        estimator = LogisticRegression().fit(X_fit, y_fit)
        fixed = FixedThresholdClassifier(FrozenEstimator(estimator), threshold=0.7,
                                         response_method="predict_proba").fit(X_fit, y_fit)
        document = {"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
                    "models": [{"model": "m", "classes": [str(c) for c in estimator.classes_],
                                "policy": {"kind": "threshold", "threshold": 0.7,
                                           "calibration": {"method": "none"}}}]}
        ours = RejectOptionClassifier(estimator, policy=document)
        theirs = base.RejectOptionClassifier(estimator, policy=document)
        X = rng.normal(size=(args.rows, 20))
        assert np.array_equal(ours.predict(X), theirs.predict(X))
        show("predict, 2 classes", rounds(args.repeat, {"sklearn": lambda: fixed.predict(X),
                                                         "this tree": lambda: ours.predict(X),
                                                         "base": lambda: theirs.predict(X)}), "sklearn")
        return
    proba = np.asarray(rng.dirichlet(np.full(args.classes, 0.3), size=args.rows).astype(args.dtype), order=args.order)
    classes = [f"c{k}" for k in range(args.classes)]
    for name, document in documents(classes, args.policies):
        ours, theirs = load_policy(document), base.load_policy(document)
        assert np.array_equal(ours.decide(proba), theirs.decide(proba))
        contenders = {"argmax": lambda: proba.argmax(axis=1), "this tree": lambda: ours.decide(proba),
                      "base": lambda: theirs.decide(proba)}
        show(f"{name}, {args.classes} cl. {args.dtype[5:]}{args.order}", rounds(args.repeat, contenders), "argmax")


if __name__ == "__main__":
    main()
