"""What a fresh process imports to fit a rule: a small run's threshold or per-class thresholds (fewer groups than
``HULL_MIN_GROUPS``, answered by the scan) without ``valuecore._engine.hull``, whose import was a good part of a
small run's first fit; a run of more groups imports it when the hull answers (per-class thresholds at once, a
threshold from the run's second fit on: its first scans). Module sets, not times."""

from __future__ import annotations

import subprocess
import sys

import pytest

FIT = """
import sys
import numpy as np
import valuecore as vc
from valuecore._engine import fitting
rng = np.random.default_rng(0)
n = fitting.HULL_MIN_GROUPS + 10 if sys.argv[2] == "large" else 1000
confidence = rng.uniform(0.2, 1.0, n)
y_pred = rng.integers(0, 3, n).astype(str)
y_true = np.where(rng.random(n) < confidence, y_pred, "0")
run = vc.presort(vc.Predictions.from_top_label(y_pred, confidence, y_true, classes=["0", "1", "2"]))
before = set(sys.modules)
for _ in range(int(sys.argv[3])):
    policy = vc.fit_policy(sys.argv[1], run, vc.UseCase(1, 0, -4))
print(policy.threshold, policy.class_thresholds)
print(sorted(m for m in set(sys.modules) - before if m.startswith("valuecore")))
print("valuecore._engine.hull" in sys.modules)
"""


@pytest.mark.parametrize("kind", ["threshold", "class_thresholds"])
def test_a_small_run_is_fitted_without_the_hull_module(kind):
    out = subprocess.run([sys.executable, "-c", FIT, kind, "small", "3"], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] != "None None"
    assert out[2] == "False"


@pytest.mark.parametrize("kind, fits, hull", [("threshold", 1, False), ("threshold", 2, True),
                                              ("class_thresholds", 1, True)])
def test_a_large_run_imports_the_hull_module_when_the_hull_answers(kind, fits, hull):
    out = subprocess.run([sys.executable, "-c", FIT, kind, "large", str(fits)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] != "None None"
    assert ("valuecore._engine.hull" in eval(out[1])) == hull  # noqa: S307 - names printed by the child above
