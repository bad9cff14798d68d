"""app.py has OpenBLAS's worker thread sleep after a threaded call (OPENBLAS_THREAD_TIMEOUT=4) instead of spinning:
set before numpy loads (else OpenBLAS never reads it), and the threaded calls still sum to the same bits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh process: records OPENBLAS_THREAD_TIMEOUT as it stands when app.py first asks for numpy, then stops
# the script there (what follows needs a Streamlit server).
FIRST_NUMPY_IMPORT = """
import importlib.abc, os, runpy, sys

class FirstNumpy(Exception):
    pass

class Spy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            raise FirstNumpy(os.environ.get("OPENBLAS_THREAD_TIMEOUT"))
        return None

sys.path.insert(0, os.getcwd())
sys.meta_path.insert(0, Spy())
try:
    runpy.run_path("app.py", run_name="__main__")
except FirstNumpy as seen:
    print("at numpy's import:", seen.args[0])
else:
    print("numpy never imported")
"""

# Dots and products of the sizes the pages take (above OpenBLAS's threading cut of 10^4 items, where the worker
# thread takes half), with pauses long enough for a sleeping worker to have gone to sleep; printed to the bit.
THREADED_SUMS = """
import time
import numpy as np

rng = np.random.default_rng(7)
out = []
for n in (10_001, 12_345, 50_000, 99_999, 100_000, 200_003):
    x, w = rng.normal(size=n) * 1e3, rng.uniform(0.5, 2.0, n)
    out.append(float(x @ w).hex())
    out.append(float(np.dot(w, w)).hex())
    time.sleep(0.01)
    out.append(float(((x - 3.0) ** 2) @ w).hex())
    matrix = rng.normal(size=(4, 3))
    out += [v.hex() for v in (matrix @ rng.normal(size=(3, n))).ravel()[::997].tolist()]
print(" ".join(out))
"""


def _run(code: str, **env) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"} | env
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_app_sets_the_wait_before_numpy_loads():
    assert _run(FIRST_NUMPY_IMPORT) == "at numpy's import: 4"
    # One set by whoever starts the server is theirs.
    assert _run(FIRST_NUMPY_IMPORT, OPENBLAS_THREAD_TIMEOUT="12") == "at numpy's import: 12"


def test_the_threaded_sums_are_the_same_bits_whether_the_worker_spins_or_sleeps():
    spinning = _run(THREADED_SUMS)
    sleeping = _run(THREADED_SUMS, OPENBLAS_THREAD_TIMEOUT="4")
    assert sleeping == spinning
    if (os.cpu_count() or 1) > 1:
        # Not a test of nothing: the sums above are the threaded ones, which differ from one thread's in their last
        # bits (the machine's cores split each dot in two halves).
        assert _run(THREADED_SUMS, OPENBLAS_NUM_THREADS="1") != spinning
