"""Peak memory of the in-memory loader against the arrays it keeps.

Writes one 10-class Parquet log (float32 probabilities rounded to 4 decimals,
val/test splits interleaved row by row, as ``bench_scale.write_log`` does) to
a temporary folder, then loads it with ``valuecore.runs.load_runs`` in a fresh
process and prints the load time, the process's peak RSS, the RSS of the
imports alone, and the bytes of the arrays the loaded runs keep (each buffer
counted once). ``--compare DIR`` loads with another copy of the package too
(e.g. ``git archive <commit> valuecore | tar -x -C DIR``), side by side.

``--from-file`` instead times what a user pays from a run file (one model, one
split: ``proba_0..proba_9`` and ``y_true``) to an exact tuned threshold, side by
side in one run, each timing in a fresh process of its own (imports and setup
untimed; the file read once beforehand so that all find it in the page cache;
the contenders' order reversed every other repeat), medians of the repeats, for
scores rounded to 4 decimals (float32, as many exports are) and full-precision
float64 scores. (Timed in one process, each contender inherited the memory state
the previous one left: freed arenas, page faults avoided or not; see
benchmarks/README.md, "The loader in separate processes".)

- read: ``load_run_file`` (reading and validating every cell) against
  ``pd.read_parquet`` of the same columns, in wall time and in CPU time of the
  process (all its threads: on a machine shared with other work the CPU ratio
  says what each costs, the wall ratio what a user with idle cores waits);
- the run's identity, the SHA-256 of the file: computed only when first asked
  for (a policy is exported or checked, the dashboard keys its caches), so
  timed apart: ``load_run_file`` then ``sha256`` (the file touched first, so
  that no remembered digest serves it), in wall time;
- ``Predictions.from_proba`` on the same matrix already in memory (row-major
  float64, as ``predict_proba`` returns it);
- file -> threshold: ``load_run_file`` + ``presort`` + ``fit_policy`` against
  ``pd.read_parquet`` + argmax + pandas groupby/cumsum, and against pyarrow's
  ``read_table`` + argmax + numpy sort/cumsum, no pandas (the three thresholds
  are checked equal; numpy's default sort, not its stable one: equal confidences are summed as one group);
  and the per-slider-move time on the presorted run.
  ``--threshold-only`` times file -> threshold alone, for Parquet and CSV
  (``--formats``; CSV read by ``pd.read_csv`` and ``numpy.loadtxt``), and beside
  it the same with valuecore's own imports inside the clock (``+imp``).

``--from-file --base DIR`` adds the read, ``from_proba`` and file -> threshold of another checkout's
package (``DIR`` holding ``valuecore/``, e.g. ``git worktree add DIR <commit>``) to the same interleaved
repeats, and prints them beside this checkout's in a last table.

Usage: ``python benchmarks/bench_loader.py [--n 10000000] [--compare DIR]``
or ``python benchmarks/bench_loader.py --from-file [--sizes 1000000,10000000] [--repeat 5] [--base DIR]
[--threshold-only] [--formats parquet,csv] [--bytecode]`` (``--threshold-only``: file -> threshold alone, at
small sizes in minutes;
``--bytecode``: the packages compiled once beforehand, as an installed one is, since with
PYTHONDONTWRITEBYTECODE every process compiles a checkout's modules again; each contender then runs once
untimed per format, so that what it imports inside its clock is read compiled too)
Not a test: it asserts nothing about time.
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


PROBA_COLUMNS = [f"proba_{c}" for c in range(10)]


def write_run(path: Path, n: int, rounded: bool, seed: int = 0) -> None:
    """One model's run file, written in chunks of 10^6 rows."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from bench_core import synthetic_proba

    rng = np.random.default_rng(seed)
    writer = None
    for start in range(0, n, 1_000_000):
        proba, y_true = synthetic_proba(min(1_000_000, n - start), rng, 1.0, rounded)
        proba = proba.astype(np.float32 if rounded else np.float64)
        table = pa.table({**{c: proba[:, k] for k, c in enumerate(PROBA_COLUMNS)}, "y_true": y_true.astype(np.int16)})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=1_000_000)
    writer.close()


def write_csv(parquet: Path, path: Path) -> None:
    """The run file ``parquet`` as CSV (pandas's shortest round-tripping text of each float)."""
    import pyarrow.parquet as pq

    pq.read_table(parquet).to_pandas().to_csv(path, index=False)


def _top_label(proba, y_true):
    """(confidence, correct) from the matrix and the labels: argmax, max."""
    import numpy as np

    y_pred = proba.argmax(axis=1)
    confidence = np.take_along_axis(proba, y_pred[:, None], axis=1)[:, 0].astype(np.float64)
    return confidence, y_pred == y_true


def read_with_pandas(path):
    """What a competent user writes to get the predictions out of the file with pandas: the columns
    (``read_parquet`` or ``read_csv``), argmax, max."""
    import pandas as pd

    if Path(path).suffix == ".csv":
        frame = pd.read_csv(path, usecols=PROBA_COLUMNS + ["y_true"])
    else:
        frame = pd.read_parquet(path, columns=PROBA_COLUMNS + ["y_true"])
    return _top_label(frame[PROBA_COLUMNS].to_numpy(), frame["y_true"].to_numpy())


def numpy_threshold(confidence, correct, use_case):
    """Exact tuned threshold with numpy alone, as a competent user writes it (``bench_core.numpy_sort_cumsum``)
    with numpy's default sort: a group of equal confidences is summed whole at its end, so the order within it
    changes nothing, and the default sort is numpy's fastest (6.1 ms against 10.7 for the stable one at 10^5
    float64, 2026-11-30)."""
    from bench_core import numpy_sort_cumsum

    return numpy_sort_cumsum(confidence, correct, use_case, kind=None)


def read_with_numpy(path):
    """The same without pandas: ``numpy.loadtxt`` of a CSV file, pyarrow's ``read_table`` of a Parquet one."""
    import numpy as np

    if Path(path).suffix == ".csv":
        cells = np.loadtxt(path, delimiter=",", skiprows=1)  # proba_0..proba_9, y_true
        return _top_label(cells[:, :-1], cells[:, -1].astype(np.int64))
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=PROBA_COLUMNS + ["y_true"])
    proba = np.column_stack([table.column(c).to_numpy() for c in PROBA_COLUMNS])
    return _top_label(proba, table.column("y_true").to_numpy())


# What each contender does, timed in a process of its own: ``setup`` (untimed, after the imports) returns the
# arguments of ``timed``. Run as ``bench_loader.py --child NAME PATH``; prints one JSON line.
BASE = "@base"  # a contender's name ending so is run with the --base checkout's package
PACKAGE_ROOT = "BENCH_LOADER_PACKAGE"  # environment variable: the folder whose valuecore/ a child imports


def _child_setup(name: str, path: Path):
    import numpy as np
    import pandas as pd

    import valuecore as vc

    if name == "vc+imports":
        return (path,)
    from valuecore.runs import load_run_file

    if name == "read+hash":
        os.utime(path)  # digests are remembered per (path, times): a new ctime makes this one hashed anew
    if name == "from_proba":
        frame = pd.read_parquet(path, columns=PROBA_COLUMNS + ["y_true"])
        # Row-major float64, as predict_proba returns it.
        return np.ascontiguousarray(frame[PROBA_COLUMNS].to_numpy(), dtype=np.float64), frame["y_true"].to_numpy()
    if name == "move":
        return (vc.presort(load_run_file(path).models["run"].splits["all"]),)
    return (path,)


def _child_timed(name: str):
    import pandas as pd
    from bench_core import pandas_groupby_cumsum

    import valuecore as vc

    if name == "vc+imports":  # what valuecore imports of its own is timed, the value types included

        def with_own_imports(path):
            from valuecore.runs import load_run_file

            run = load_run_file(path).models["run"].splits["all"]
            return vc.fit_policy("threshold", vc.presort(run), vc.UseCase(1.0, 0.0, -4.0)).threshold

        return with_own_imports
    from valuecore.runs import load_run_file

    use_case = vc.UseCase(1.0, 0.0, -4.0)
    # What a script's first lines import (``from valuecore import fit_policy, presort``), before the clock as
    # the baselines' functions and pandas's and pyarrow's lazy modules are; +imp times all of it.
    fit_policy, presort = vc.fit_policy, vc.presort

    def valuecore_threshold(path):
        run = load_run_file(path).models["run"].splits["all"]
        return fit_policy("threshold", presort(run), use_case).threshold

    def read(path):
        report = load_run_file(path)
        assert report.ok, [str(p) for p in report.problems]

    return {
        "read vc": read,
        "read pandas": lambda path: pd.read_parquet(path, columns=PROBA_COLUMNS + ["y_true"]),
        "read+hash": lambda path: load_run_file(path).models["run"].sha256,
        "from_proba": lambda matrix, labels: vc.Predictions.from_proba(matrix, labels),
        "vc": valuecore_threshold,
        "pandas": lambda path: pandas_groupby_cumsum(*read_with_pandas(path), use_case),
        "numpy": lambda path: numpy_threshold(*read_with_numpy(path), use_case),
        "move": lambda run: vc.fit_policy("threshold", run, use_case).threshold,
    }[name]


MOVES = 21  # a slider move is timed as the median of this many in its process (one is too short to time)


def child(name: str, path: Path) -> None:
    """Time one contender once in this fresh process; print {wall, cpu, result} as JSON."""
    import gc
    import json
    import resource
    import time

    import numpy as np
    import pandas  # noqa: F401 - every import both readers use, before the clock (pyarrow's lazy ones too)
    import pyarrow.dataset  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    arguments = _child_setup(name, path)
    function = _child_timed(name)
    gc.collect()
    rounds = MOVES if name == "move" else 1
    wall, cpu, user, kernel = [], [], [], []
    for _ in range(rounds):
        before = resource.getrusage(resource.RUSAGE_SELF)
        started, spent = time.perf_counter(), time.process_time()
        result = function(*arguments)
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - spent)
        after = resource.getrusage(resource.RUSAGE_SELF)
        user.append(after.ru_utime - before.ru_utime)
        kernel.append(after.ru_stime - before.ru_stime)
    result = result if isinstance(result, (float, int, str, type(None))) else None
    print(json.dumps({"wall": float(np.median(wall)), "cpu": float(np.median(cpu)), "user": float(np.median(user)),
                      "sys": float(np.median(kernel)), "result": result}))  # fmt: skip


def in_own_process(name: str, path: Path, base: Path | None = None) -> dict:
    """One timing of ``name`` in a fresh Python process (its imports and setup not timed); a name ending
    in ``@base`` with the package of the ``base`` checkout."""
    import json

    own, package = (name[: -len(BASE)], base) if name.endswith(BASE) else (name, ROOT)
    env = dict(os.environ, **{PACKAGE_ROOT: str(package)})
    out = subprocess.run([sys.executable, __file__, "--child", own, str(path)], cwd=ROOT, env=env,
                         capture_output=True, text=True)  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_wall_and_cpu(names: list[str], path: Path, repeat: int, base: Path | None = None
                        ) -> tuple[dict, dict, dict, dict]:
    """Medians of wall seconds and of the process's CPU seconds (all its threads) of each contender, each
    timing in a fresh process, the contenders' order reversed every other repeat (a, b, ..., b, a, ...):
    no contender inherits another's page cache pressure, allocator arenas or freed huge pages, and a
    drift of the machine's load hits them alike. Also each contender's results, and every median by
    kind ("wall", "cpu", "user", "sys": the CPU in user space and in the kernel)."""
    import numpy as np

    timings: dict = {name: [] for name in names}
    for name in names:
        if (name, path.suffix) in _COLD:  # its first process writes the bytecode of what it imports in its clock
            _COLD.discard((name, path.suffix))
            in_own_process(name, path, base)
    for r in range(repeat):
        for name in names if r % 2 == 0 else names[::-1]:
            timings[name].append(in_own_process(name, path, base))
    results = {name: {t["result"] for t in v} for name, v in timings.items()}
    medians = {key: {name: float(np.median([t[key] for t in v])) for name, v in timings.items()}
               for key in ("wall", "cpu", "user", "sys")}  # fmt: skip
    return medians["wall"], medians["cpu"], results, medians


def from_file_table(sizes, repeat: int, base: Path | None = None) -> None:
    header = (f"{'scores':>9} {'n':>11} | {'read vc':>8} {'pandas':>8} {'ratio':>6} | {'cpu vc':>7} {'pandas':>7} "
              f"{'ratio':>6} | {'+sha256':>7} {'ratio':>6} | {'from_proba':>10} {'cpu':>5} {'/read':>6} | "
              f"{'file->thr vc':>12} {'pandas':>8} {'numpy':>8} {'pandas/vc':>9} {'numpy/vc':>8} | "
              f"{'per move':>9} | load")
    print(header)
    print("-" * len(header))
    names = ["read vc", "read pandas", "read+hash", "from_proba", "vc", "pandas", "numpy", "move"]
    if base is not None:
        names += [name + BASE for name in ("read vc", "from_proba", "vc")]
    split_rows = []  # user / kernel CPU of the reads, printed after the table
    with tempfile.TemporaryDirectory(prefix="bench_loader_") as folder:
        for rounded in (True, False):
            for n in sizes:
                path = Path(folder) / "run.parquet"
                write_run(path, n, rounded)
                path.read_bytes()  # in the page cache for every contender, the first one too
                load = os.getloadavg()[0]
                times, cpu, results, medians = median_wall_and_cpu(names, path, repeat, base)
                split_rows.append((rounded, n, medians))
                thresholds = results["vc"] | results["pandas"] | results["numpy"] | results["move"]
                thresholds |= results.get("vc" + BASE, set())
                assert len(thresholds) == 1, f"the thresholds differ: {results}"
                t = {k: v * 1e3 for k, v in times.items()}
                c = {k: v * 1e3 for k, v in cpu.items()}
                print(f"{'rounded' if rounded else 'full':>9} {n:>11,} | {t['read vc']:8.0f} {t['read pandas']:8.0f} "
                      f"{times['read vc'] / times['read pandas']:5.2f}x | {c['read vc']:7.0f} {c['read pandas']:7.0f} "
                      f"{cpu['read vc'] / cpu['read pandas']:5.2f}x | {t['read+hash']:7.0f} "
                      f"{times['read+hash'] / times['read pandas']:5.2f}x | "
                      f"{t['from_proba']:10.0f} {c['from_proba']:5.0f} "
                      f"{cpu['from_proba'] / cpu['read vc']:5.2f}x | "
                      f"{t['vc']:12.0f} {t['pandas']:8.0f} {t['numpy']:8.0f} {times['pandas'] / times['vc']:8.2f}x "
                      f"{times['numpy'] / times['vc']:7.2f}x | {t['move']:9.3f} | {load:.1f}-{os.getloadavg()[0]:.1f}",
                      flush=True)
    print(f"\n{'scores':>9} {'n':>11} | {'user vc':>7} {'pandas':>7} {'ratio':>6} | {'sys vc':>7} {'pandas':>7} | "
          f"{'from_proba user':>15} {'sys':>5}")
    for rounded, n, m in split_rows:
        user, kernel = ({k: v * 1e3 for k, v in m[key].items()} for key in ("user", "sys"))
        print(f"{'rounded' if rounded else 'full':>9} {n:>11,} | {user['read vc']:7.0f} {user['read pandas']:7.0f} "
              f"{m['user']['read vc'] / max(m['user']['read pandas'], 1e-9):5.2f}x | {kernel['read vc']:7.0f} "
              f"{kernel['read pandas']:7.0f} | {user['from_proba']:15.0f} {kernel['from_proba']:5.0f}")
    if base is not None:
        _base_table(split_rows, base)
    print("\nms, medians of", repeat, "timings, each in a fresh process (imports and setup untimed; the file read"
          "\nonce beforehand, so in the page cache; the contenders' order reversed every other repeat)."
          "\nread ratio = valuecore / pandas (lower is better), in wall time and in the process's CPU time"
          "\n(every thread); +sha256 = the read and then the file's SHA-256 (the run's identity, computed when"
          "\nfirst asked for), wall, its ratio to pandas's read; /read = from_proba / valuecore's read, in CPU"
          "\ntime; file->thr ratios = baseline / valuecore (> 1: valuecore faster); per move = median of"
          f"\n{MOVES} in one process. rounded = float32 rounded to 4 decimals; full = float64 at full precision."
          "\nload = load average before-after the row. Second table: the reads' CPU split into user space (what"
          "\nthe code does) and kernel (mostly zeroing fresh pages; on a VM that hands freed memory back to its"
          "\nhost it varies tenfold from one process to the next).")


def threshold_table(sizes, repeat: int, base: Path | None = None, scores: tuple = (True, False),
                    formats: tuple = ("parquet", "csv")) -> None:
    """File -> exact threshold only (valuecore, pandas, numpy, and the ``--base`` checkout's valuecore);
    ``scores``: rounded (True) and/or full precision (False); ``formats``: Parquet and/or CSV."""
    names = ["vc", "vc+imports", "pandas", "numpy"] + (["vc" + BASE, "vc+imports" + BASE] if base is not None else [])
    extra = f" {'base':>7} {'base/vc':>8} {'base+imp':>8} {'/+imp':>6}" if base is not None else ""
    header = (f"{'format':>7} {'scores':>7} {'n':>9} | {'vc':>6} {'+imp':>6} {'pandas':>6} {'numpy':>6} | "
              f"{'pandas/vc':>9} {'numpy/vc':>8} | {'pandas/+imp':>11} {'numpy/+imp':>10} |"
              f"{extra} | cpu vc +imp pandas numpy | load")
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory(prefix="bench_loader_") as folder:
        for form in formats:
            for rounded in scores:
                for n in sizes:
                    path = Path(folder) / "run.parquet"
                    write_run(path, n, rounded)
                    if form == "csv":
                        write_csv(path, path.with_suffix(".csv"))
                        path.unlink()
                        path = path.with_suffix(".csv")
                    path.read_bytes()
                    load = os.getloadavg()[0]
                    times, cpu, results, _ = median_wall_and_cpu(names, path, repeat, base)
                    thresholds = set().union(*results.values())
                    assert len(thresholds) == 1, f"the thresholds differ: {results}"
                    path.unlink()
                    t = {k: v * 1e3 for k, v in times.items()}
                    c = {k: v * 1e3 for k, v in cpu.items()}
                    against = base_cpu = ""
                    if base is not None:
                        with_imports = times["vc+imports" + BASE] / times["vc+imports"]
                        against = (f" {t['vc' + BASE]:7.1f} {times['vc' + BASE] / times['vc']:7.2f}x"
                                   f" {t['vc+imports' + BASE]:8.1f} {with_imports:5.2f}x")
                        base_cpu = f" base {c['vc' + BASE]:.1f} {c['vc+imports' + BASE]:.1f}"
                    print(f"{form:>7} {'rounded' if rounded else 'full':>7} {n:>9,} | {t['vc']:6.1f} "
                          f"{t['vc+imports']:6.1f} {t['pandas']:6.1f} {t['numpy']:6.1f} | "
                          f"{times['pandas'] / times['vc']:8.2f}x {times['numpy'] / times['vc']:7.2f}x | "
                          f"{times['pandas'] / times['vc+imports']:10.2f}x "
                          f"{times['numpy'] / times['vc+imports']:9.2f}x |"
                          f"{against} | {c['vc']:.1f} {c['vc+imports']:.1f} {c['pandas']:.1f} {c['numpy']:.1f}"
                          f"{base_cpu} | "
                          f"{load:.1f}-{os.getloadavg()[0]:.1f}", flush=True)
    print(f"\nwall ms, medians of {repeat} timings, each in a fresh process (imports of numpy, pandas, pyarrow and"
          "\n`import valuecore` untimed); vc: `valuecore.runs`, `fit_policy` and `presort` imported before the clock,"
          "\nas the baselines' functions are; +imp: every module of valuecore's own timed too (`from valuecore.runs"
          "\nimport load_run_file`, the value types and the fitting modules inside the clock); pandas: read_parquet /"
          "\nread_csv + argmax +"
          "\ngroupby/cumsum; numpy: pyarrow's read_table / numpy.loadtxt + argmax + sort/cumsum; base, base+imp:"
          "\nvc and +imp with the --base checkout's package (ratios base / this: > 1, this one faster); ratios ="
          "\nbaseline / valuecore (> 1: valuecore faster); cpu = the process's CPU ms (medians); load = load"
          "\naverage before-after.")


# (contender, file suffix) not yet run once untimed with --bytecode (see compiled_bytecode).
_COLD: set = set()


def compiled_bytecode(packages: list[Path], names: list[str]) -> None:
    """Compile each ``valuecore/`` to bytecode in a temporary cache the children read, as an installed package
    (pip compiles it) has: with PYTHONDONTWRITEBYTECODE set, a checkout is compiled again by every process.

    The cache replaces every ``__pycache__`` folder, site-packages' too: the children may write it (else
    what pandas or pyarrow import inside a clock, such as ``pandas.core.arrays.arrow.extension_types`` for
    ``read_parquet``, would be compiled from source in every timing), and each contender runs once untimed
    per format before its timings (``names``), so that no timing compiles what it imports."""
    import compileall

    prefix = Path(tempfile.mkdtemp(prefix="bench_loader_pyc_"))
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix = str(prefix)
    for package in packages:
        compileall.compile_dir(str(package / "valuecore"), quiet=1)
    _COLD.update((name, suffix) for name in names for suffix in (".csv", ".parquet"))


def _base_table(split_rows, base: Path) -> None:
    """This checkout against the ``--base`` one, from the same interleaved repeats (ms, medians)."""
    print(f"\nagainst {base} (@base): user / sys / wall, ms")
    print(f"{'scores':>9} {'n':>11} | {'read vc':>17} {'read base':>17} {'read pandas':>17} | "
          f"{'from_proba':>17} {'from_proba base':>17} | {'file->thr vc':>12} {'base':>6}")
    for rounded, n, m in split_rows:
        def three(name):
            return "/".join(f"{m[key][name] * 1e3:.0f}" for key in ("user", "sys", "wall"))

        print(f"{'rounded' if rounded else 'full':>9} {n:>11,} | {three('read vc'):>17} {three('read vc' + BASE):>17} "
              f"{three('read pandas'):>17} | {three('from_proba'):>17} {three('from_proba' + BASE):>17} | "
              f"{m['wall']['vc'] * 1e3:12.0f} {m['wall']['vc' + BASE] * 1e3:6.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--compare", default=None, help="a folder holding another copy of the valuecore package")
    parser.add_argument("--from-file", action="store_true", help="time file -> exact threshold against pandas, numpy")
    parser.add_argument("--sizes", default="1000000,10000000", help="with --from-file")
    parser.add_argument("--repeat", type=int, default=5, help="with --from-file")
    parser.add_argument("--base", default=None, help="with --from-file: a checkout to time beside this one")
    parser.add_argument("--threshold-only", action="store_true",
                        help="with --from-file: only file -> threshold (valuecore, pandas, numpy)")
    parser.add_argument("--scores", default="rounded,full", help="with --threshold-only: rounded, full or both")
    parser.add_argument("--formats", default="parquet,csv", help="with --threshold-only: parquet, csv or both")
    parser.add_argument("--bytecode", action="store_true",
                        help="with --from-file: the children read the packages compiled, as installed ones are")
    parser.add_argument("--child", nargs=2, metavar=("CONTENDER", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, os.environ.get(PACKAGE_ROOT, str(ROOT)))
        child(args.child[0], Path(args.child[1]))
        return
    if args.from_file:
        sys.path.insert(0, str(ROOT))
        base = None if args.base is None else Path(args.base).resolve()
        if args.bytecode:
            names = ["vc", "vc+imports", "pandas", "numpy", "read vc", "read pandas", "read+hash", "from_proba",
                     "move"]
            compiled_bytecode([ROOT] + ([base] if base is not None else []),
                              names + ([name + BASE for name in names] if base is not None else []))
        sizes = [int(float(s)) for s in args.sizes.split(",")]
        if args.threshold_only:
            threshold_table(sizes, args.repeat, base, tuple(s == "rounded" for s in args.scores.split(",")),
                            tuple(args.formats.split(",")))
        else:
            from_file_table(sizes, args.repeat, base)
        return
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
