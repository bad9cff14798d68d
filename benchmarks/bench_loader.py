"""Peak memory of the in-memory loader against the arrays it keeps.

Writes one 10-class Parquet log (float32 probabilities rounded to 4 decimals,
val/test splits interleaved row by row, as ``bench_scale.write_log`` does) to
a temporary folder, then loads it with ``valuecore.runs.load_runs`` in a fresh
process and prints the load time, the process's peak RSS, the RSS of the
imports alone, and the bytes of the arrays the loaded runs keep (each buffer
counted once). ``--compare DIR`` loads with another copy of the package too
(e.g. ``git archive <commit> valuecore | tar -x -C DIR``), side by side.

Usage: ``python benchmarks/bench_loader.py [--n 10000000] [--compare DIR]``
Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

CHILD = r"""
import resource, sys, time
import numpy as np, pandas, pyarrow, pyarrow.parquet
import valuecore
from valuecore.runs import load_runs
imports = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
start = time.perf_counter()
report = load_runs(sys.argv[1])
seconds = time.perf_counter() - start
assert report.ok, [str(p) for p in report.problems]
buffers = {}
for run in report.models.values():
    for p in run.splits.values():
        for name in ("y_pred", "confidence", "y_true", "proba", "logits", "sample_weight", "ids", "timestamp"):
            array = getattr(p, name)
            if isinstance(array, np.ndarray):
                base = array if array.base is None else array.base
                buffers[id(base)] = base.nbytes
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(seconds, peak, imports, sum(buffers.values()) / 2**30, valuecore.__file__)
"""


def measure(path: Path, package_parent: Path) -> tuple[float, float, float, float, str]:
    env = dict(os.environ, PYTHONPATH=str(package_parent))
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env, cwd=package_parent,
                         capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    return float(out[0]), float(out[1]), float(out[2]), float(out[3]), out[4]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--compare", default=None, help="a folder holding another copy of the valuecore package")
    args = parser.parse_args()
    from bench_scale import write_log

    with tempfile.TemporaryDirectory(prefix="bench_loader_") as folder:
        path = Path(folder) / "log.parquet"
        write_log(path, args.n)
        print(f"{args.n:,} rows, 10 classes, float32, {path.stat().st_size / 2**20:.0f} MiB of Parquet; "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"{'package':>10} | {'load s':>7} {'peak GiB':>9} {'imports':>8} {'kept GiB':>9} | peak - imports / kept")
        copies = [("this", ROOT)] + ([("compare", Path(args.compare).resolve())] if args.compare else [])
        for label, parent in copies:
            seconds, peak, imports, kept, where = measure(path, parent)
            print(f"{label:>10} | {seconds:7.1f} {peak:9.2f} {imports:8.2f} {kept:9.2f} | "
                  f"{(peak - imports) / kept:5.2f}x   ({where})")
        print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
