"""Serving through scikit-learn: ``RejectOptionClassifier`` beside ``FixedThresholdClassifier`` and argmax.

One ``LogisticRegression`` (20 features, two classes) fitted once. For ``--rows`` rows of new X:

- ``RejectOptionClassifier(estimator, policy=...).predict(X)`` (a threshold policy, no recalibration)
  against ``FixedThresholdClassifier(FrozenEstimator(estimator), threshold=0.7,
  response_method="predict_proba").predict(X)``: both call the same ``predict_proba`` and apply one
  threshold (goal: at most 1.5x);
- ``RejectOptionClassifier.decide`` with a temperature policy, and ``ServingPolicy.decisions`` of
  10-class probabilities with a temperature, against ``proba.argmax(axis=1)`` on the same array, one
  pass over the probabilities (goal: at most 3x).

Best of ``--repeat``, wall time in ms, contenders interleaved. Usage:
``python benchmarks/bench_estimator.py [--rows 100000,1000000] [--repeat 7]``. Not a test: it asserts
nothing about time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import FixedThresholdClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from valuecore.serving import RejectOptionClassifier, load_policy  # noqa: E402

TEMPERATURE = {"method": "temperature", "temperature": 0.8, "use_logits": False}


def document(classes, calibration=None) -> dict:
    return {"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
            "models": [{"model": "m", "classes": [str(c) for c in classes],
                        "policy": {"kind": "threshold", "threshold": 0.7,
                                   "calibration": calibration or {"method": "none"}}}]}


def best_of(repeat: int, contenders: dict) -> dict:
    """Best wall time (ms) of each contender, the contenders interleaved in every round."""
    times = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, work in contenders.items():
            started = time.perf_counter()
            work()
            times[name].append(time.perf_counter() - started)
    return {name: 1e3 * min(spent) for name, spent in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="100000,1000000")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    X_fit, y_fit = make_classification(n_samples=20_000, n_features=20, random_state=0)
    estimator = LogisticRegression().fit(X_fit, y_fit)
    fixed = FixedThresholdClassifier(FrozenEstimator(estimator), threshold=0.7,
                                     response_method="predict_proba").fit(X_fit, y_fit)
    wrapped = RejectOptionClassifier(estimator, policy=document(estimator.classes_))
    tempered = RejectOptionClassifier(estimator, policy=document(estimator.classes_, TEMPERATURE))
    classes = [f"c{k}" for k in range(10)]
    served = load_policy(document(classes, TEMPERATURE))
    rng = np.random.default_rng(0)
    print(f"load average {os.getloadavg()[0]:.1f} before; best of {args.repeat}, wall ms")
    print(f"{'rows':>10} | {'sklearn':>8} {'valuecore':>9} {'ratio':>6} | {'argmax2':>8} {'decide+T':>8} "
          f"{'ratio':>6} | {'argmax10':>8} {'decisions+T':>11} {'ratio':>6} | load")
    for n in [int(float(size)) for size in args.rows.split(",")]:
        X = rng.normal(size=(n, 20))
        proba_2 = estimator.predict_proba(X)
        proba_10 = rng.dirichlet(np.full(10, 0.3), size=n)
        assert np.array_equal(wrapped.predict(X) != -1, wrapped.decisions(X).action < 2)
        t = best_of(args.repeat, {
            "fixed": lambda: fixed.predict(X),
            "wrapped": lambda: wrapped.predict(X),
            "argmax 2": lambda: proba_2.argmax(axis=1),
            "decide T": lambda: tempered.decide(X),
            "argmax 10": lambda: proba_10.argmax(axis=1),
            "decisions T": lambda: served.decisions(proba_10),
        })
        print(f"{n:>10,} | {t['fixed']:8.1f} {t['wrapped']:9.1f} {t['wrapped'] / t['fixed']:5.2f}x | "
              f"{t['argmax 2']:8.1f} {t['decide T']:8.1f} {t['decide T'] / t['argmax 2']:5.1f}x | "
              f"{t['argmax 10']:8.1f} {t['decisions T']:11.1f} {t['decisions T'] / t['argmax 10']:5.1f}x | "
              f"{os.getloadavg()[0]:.1f}")
    print("\nsklearn = FixedThresholdClassifier.predict, valuecore = RejectOptionClassifier.predict (the same fitted "
          "LogisticRegression, two classes);\ndecide+T = RejectOptionClassifier.decide with a temperature policy "
          "(predict_proba included) against argmax over its two columns;\ndecisions+T = ServingPolicy.decisions "
          "of 10-class probabilities with a temperature against their argmax.")


if __name__ == "__main__":
    main()
