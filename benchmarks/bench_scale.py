"""Out-of-core against in-memory: aggregate a large Parquet log, then answer on the aggregate.

For each n (default 10^6 and 10^7; 10^8 with --huge), generates one 10-class
Parquet log in a temporary folder (float32 probabilities rounded to 4
decimals, val and test splits), then runs, each in its own process so that
its peak memory is its own:

- ``python -m valuecore aggregate LOG --out AGG`` (DuckDB, 1 GB memory limit);
- ``python -m valuecore report AGG`` on the aggregate;
- ``python -m valuecore report LOG`` on the raw rows, in memory (up to --in-memory-max rows).

It prints wall time, peak RSS and aggregate rows, and checks that both reports
give the same threshold and value. The temporary folder is deleted afterwards.
This is a benchmark, not a test: it asserts nothing about time.

Usage: ``python benchmarks/bench_scale.py [--sizes 1000000,10000000] [--huge] [--in-memory-max 10000000]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
N_CLASSES = 10
CHUNK = 1_000_000
REPORT = ["--omega", "4", "--no-interval", "--tune-split", "val", "--eval-split", "test"]


def write_log(path: Path, n: int, seed: int = 0) -> None:
    """A 10-class log written in chunks of 10^6 rows (the generator never holds it all)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    writer = None
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        y_true = rng.integers(0, N_CLASSES, m)
        logits = rng.normal(0.0, 1.0, (m, N_CLASSES)).astype(np.float32)
        logits[np.arange(m), y_true] += rng.normal(2.5, 1.5, m).astype(np.float32)
        proba = np.exp(logits - logits.max(axis=1, keepdims=True))
        proba /= proba.sum(axis=1, keepdims=True)
        proba = np.round(proba, 4)  # rows then sum to 1 within 5e-4, as exported scores do
        columns = {f"proba_{c}": proba[:, c].astype(np.float32) for c in range(N_CLASSES)}
        columns["y_true"] = y_true.astype(np.int16)
        columns["split"] = np.where(rng.random(m) < 0.5, "val", "test")
        table = pa.table(columns)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=CHUNK)
    writer.close()


def measured_child(command: list[str]) -> tuple[float, float, str]:
    """Like :func:`measured`, reading the child's own peak RSS with wait4."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out_chunks = []
    # Read all output before waiting, so that a full pipe cannot block the child.
    out_chunks.append(process.stdout.read())
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{err.decode()}")
    return seconds, usage.ru_maxrss / 2**20, b"".join(out_chunks).decode()


def answer(report_text: str) -> list[str]:
    return [line for line in report_text.splitlines() if line.startswith(("threshold", "value total"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--huge", action="store_true", help="also 10^8 rows (needs ~4 GB of disk, minutes)")
    parser.add_argument("--in-memory-max", type=float, default=1e7, help="largest n for the in-memory report")
    parser.add_argument("--temp-dir", default=None)
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")] + ([10**8] if args.huge else [])
    python = sys.executable
    print(f"{os.cpu_count()} cores | load average {os.getloadavg()[0]:.1f} at start | 10 classes, float32, 4 decimals")
    header = (f"{'n':>12} | {'aggregate s':>11} {'GiB':>5} {'groups':>9} | {'report agg s':>12} {'GiB':>5} | "
              f"{'in-memory s':>11} {'GiB':>5} | same answer")
    print(header)
    print("-" * len(header))
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="valuecore-bench-", dir=args.temp_dir) as folder:
            log, agg = Path(folder) / "log.parquet", Path(folder) / "agg.parquet"
            write_log(log, n)
            a_s, a_gib, a_out = measured_child([python, "-m", "valuecore", "aggregate", str(log), "--out", str(agg)])
            groups = a_out.split(": ", 1)[1].split(" groups")[0]
            r_s, r_gib, r_out = measured_child([python, "-m", "valuecore", "report", str(agg), *REPORT])
            if n <= args.in_memory_max:
                m_s, m_gib, m_out = measured_child([python, "-m", "valuecore", "report", str(log), *REPORT])
                same = "yes" if answer(m_out) == answer(r_out) and answer(r_out) else "NO"
                memory = f"{m_s:11.1f} {m_gib:5.2f}"
            else:
                memory, same = f"{'-':>11} {'-':>5}", "-"
        print(f"{n:>12,} | {a_s:11.1f} {a_gib:5.2f} {groups:>9} | {r_s:12.1f} {r_gib:5.2f} | {memory} | {same}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end; the temporary logs were deleted")


if __name__ == "__main__":
    main()
