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

Then, with ``--engines`` (default duckdb,spark), it times ``aggregate`` on each
engine side by side with a bare query to the same groups, each in its own
process, ``--repeats`` times (median shown), in one run:

- bare DuckDB: one ``COPY (SELECT ... GROUP BY ... ORDER BY ...) TO 'out.parquet'`` under the
  same memory limit (:data:`BARE_DUCKDB_SQL`), in a process that imports DuckDB
  only (not numpy, pandas or pyarrow, which ``aggregate`` does not need either);
- bare PySpark: ``groupBy(...).agg(...).orderBy(...)`` written with ``write.parquet``, the
  same local[2] session settings (:func:`bare_spark`).

Both bare queries write the same output as ``aggregate`` (its columns, rows and order; the script checks
it, :func:`same_output`), with no checks. With ``--base COMMIT`` (or a folder holding a ``valuecore/``)
that version's ``aggregate`` runs too, interleaved. Every package is byte-compiled first.

It prints wall time, CPU time (user + system of the process and all its descendants, a JVM included), peak
RSS (of the Python process; for Spark the driver's Python process and, apart, the peak RSS sampled of its JVM), the
peak size of DuckDB's spill folder and the seconds the process's threads spent queued for a core (what the
machine's load adds to the wall time), with the ratios aggregate / bare (and base / bare). The bare Spark
query's groups are counted afterwards from its files' footers, outside its timed process.

Usage: ``python benchmarks/bench_scale.py [--sizes 1000000,10000000] [--huge] [--in-memory-max 10000000]
[--engines duckdb,spark] [--repeats 3] [--skip-reports]``, or, across data shapes (classes, distinct
confidences, groups), ``python benchmarks/bench_scale.py --shapes 2:3:1e6,10:4:1e6,50:4:1e6,10:full:1e6
[--engines duckdb] [--repeats 3] [--base 8dc4cc9] [--ahead]``: the engine comparison alone on each shape
(``3:4:1e6:text``: the true class written as text, words such as ``cat``, instead of a number).
``--ahead`` runs each measured process at nice -20 in a scheduling group of its own (root only): on a
loaded machine its wall time then comes near an idle machine's ("queued" near zero); it slows the
machine's other work while it runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import statistics
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
N_CLASSES = 10
CHUNK = 1_000_000
REPORT = ["--omega", "4", "--no-interval", "--tune-split", "val", "--eval-split", "test"]


TEXT_CLASSES = ("cat", "dog", "bird", "fish", "horse", "sheep", "cow", "frog", "deer", "fox")


def class_names(classes: int, labels: str = "number") -> list[str]:
    """The classes' names: ``0``, ``1``, ... (``y_true`` a number column), or with ``labels="text"`` words
    (``cat``, ``dog``, ...; ``cat1``, ... past ten; ``y_true`` a text column), whose order is not the columns'."""
    if labels == "number":
        return [str(c) for c in range(classes)]
    return [TEXT_CLASSES[c % 10] + (str(c // 10) if c >= 10 else "") for c in range(classes)]


def write_log(path: Path, n: int, seed: int = 0, classes: int = N_CLASSES, decimals: int | None = 4,
              labels: str = "number") -> None:
    """A log of ``classes`` classes written in chunks of 10^6 rows (the generator never holds it all);
    probabilities rounded to ``decimals`` (float32), or at full precision (float64) with None; ``labels``: the
    true class as a number (int16) or as text (:func:`class_names`)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    writer = None
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        y_true = rng.integers(0, classes, m)
        logits = rng.normal(0.0, 1.0, (m, classes)).astype(np.float32)
        logits[np.arange(m), y_true] += rng.normal(2.5, 1.5, m).astype(np.float32)
        proba = np.exp(logits - logits.max(axis=1, keepdims=True))
        proba /= proba.sum(axis=1, keepdims=True)
        if decimals is not None:
            proba = np.round(proba, decimals).astype(np.float32)  # rows sum to 1 within k/2 10^-d, as exports do
        else:
            proba = proba.astype(np.float64)
        names = class_names(classes, labels)
        columns = {f"proba_{names[c]}": proba[:, c] for c in range(classes)}
        columns["y_true"] = y_true.astype(np.int16) if labels == "number" else np.array(names)[y_true]
        columns["split"] = np.where(rng.random(m) < 0.5, "val", "test")
        table = pa.table(columns)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=CHUNK)
    writer.close()


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        found += [int(c) for c in children]
        todo += [int(c) for c in children]
    return found


def _rss_gib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


def measured_child(command: list[str], cwd: Path = ROOT) -> tuple[float, float, str, float]:
    """(seconds, peak RSS GiB of the child, its stdout, peak RSS GiB sampled of its descendants, e.g. a JVM)."""
    run = measured_run(command, cwd)
    return run["seconds"], run["gib"], run["out"], run["jvm"]


def _run_delays(pids: list[int], into: dict) -> None:
    """Each thread's time spent runnable but waiting for a core (``/proc/PID/task/TID/schedstat``, its second
    field, ns), kept in ``into`` by (pid, tid): a thread's last sample stands once it has ended."""
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                into[(pid, tid)] = int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[1]) / 1e9
            except (OSError, IndexError, ValueError):
                pass


def measured_run(command: list[str], cwd: Path = ROOT) -> dict:
    """The child's wall ``seconds``, ``cpu`` seconds (user + system, its descendants included, even one it
    never waits for, see :func:`_adopt_orphans`: on a shared machine the figure that the other processes
    change least), peak RSS ``gib`` (from wait4, exact), its stdout ``out``, ``jvm``, the peak RSS GiB of its
    descendants sampled every 0.2 s, and ``queued``: the seconds its threads (and its descendants') spent
    runnable but waiting for a core, summed over threads (sampled every 0.2 s, so the last 0.2 s of a thread
    may be missing): what the machine's load adds."""
    started = time.perf_counter()
    process = subprocess.Popen(AHEAD + command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak_descendants = [0.0]
    delays: dict = {}
    seen: set[int] = set()
    finished = threading.Event()

    def sample() -> None:
        while not finished.wait(0.2):
            descendants = _descendants(process.pid)
            seen.update(descendants)
            total = sum(_rss_gib(pid) for pid in descendants)
            peak_descendants[0] = max(peak_descendants[0], total)
            _run_delays([process.pid, *descendants], delays)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # Read all output before waiting, so that a full pipe cannot block the child.
    out = process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    finished.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{err.decode()}")
    cpu = usage.ru_utime + usage.ru_stime
    for pid in seen:  # descendants the child left unwaited (PySpark's JVM) came to this process: see main()
        try:
            _, _, orphan = os.wait4(pid, 0)
        except ChildProcessError:
            continue  # waited for by the child: already in its usage
        cpu += orphan.ru_utime + orphan.ru_stime
    return {"seconds": seconds, "cpu": cpu, "gib": usage.ru_maxrss / 2**20,
            "out": out.decode(), "jvm": peak_descendants[0], "queued": sum(delays.values())}


PROBA = [f"proba_{c}" for c in range(N_CLASSES)]
# With --ahead: each measured process in a session (so a scheduling group, Linux's autogroup) of its own at
# nice -20, which puts it ahead of the machine's other work: its wall time then comes near an idle machine's.
AHEAD_COMMAND = ["setsid", "sh", "-c", 'echo -20 > /proc/self/autogroup && exec nice -n -20 "$@"', "ahead"]
AHEAD: list[str] = []


def bare_duckdb_sql(proba: list[str], model: str = "log") -> str:
    """The bare DuckDB query to the same output as ``aggregate``: one row per (split, argmax class, max
    probability, true class) with the model's name, the true class as text, the mean probabilities and the
    count, in aggregate's order (split, predicted class, confidence descending, true class), written to
    Parquet; no checks. (Without the ORDER BY its rows come in any order: not the same file.) The labels are
    grouped as the file writes them (``aggregate`` strips a text label of the whitespace around it first)."""
    return (
        "COPY (WITH r AS (SELECT split, CAST(y_true AS VARCHAR) AS y_true, {greatest} AS confidence, {probas} "
        "FROM read_parquet('{log}')), g AS (SELECT split, CASE {argmax} END AS y_pred, confidence, y_true, "
        "COUNT(*) AS weight, {means} FROM r GROUP BY ALL) "
        "SELECT '{model}' AS model, split, y_true, {probas}, weight FROM g "
        "ORDER BY split, y_pred, confidence DESC, y_true) TO '{out}' (FORMAT parquet)"
    ).format(
        greatest="GREATEST(" + ", ".join(proba) + ")",
        probas=", ".join(proba),
        argmax=" ".join(f"WHEN {p} = confidence THEN '{p[len('proba_'):]}'" for p in proba),
        means=", ".join(f"AVG({p}) AS {p}" for p in proba),
        model=model,
        log="{log}",
        out="{out}",
    )


BARE_DUCKDB_SQL = bare_duckdb_sql(PROBA)


def bare_duckdb(log: str, out: str, memory_limit: str) -> None:
    """Run :data:`BARE_DUCKDB_SQL`; print the peak size of its spill folder (sampled every 0.1 s)."""
    import duckdb


    def spilled_bytes(folder: str) -> int:
        """What aggregate reports as spilled (``valuecore.aggregation.bytes_on_disk``: blocks allocated, spill
        files may be sparse), measured here without valuecore: importing it brought sqlglot and the whole
        aggregate package, 0.1 s of CPU that the bare query never needs (until issue 33's fifth pass)."""
        total = 0
        for base, _, names in os.walk(folder):
            for name in names:
                with contextlib.suppress(OSError):  # removed by DuckDB meanwhile
                    total += os.stat(os.path.join(base, name)).st_blocks * 512
        return total

    with tempfile.TemporaryDirectory(prefix="bare-duckdb-") as spill:
        con = duckdb.connect(":memory:")
        con.execute(f"SET memory_limit = '{memory_limit}'")
        con.execute(f"SET temp_directory = '{spill}'")
        con.execute("SET preserve_insertion_order = false")
        names = [d[0] for d in con.execute(f"SELECT * FROM read_parquet('{log}') LIMIT 0").description]
        proba = [c for c in names if c.startswith("proba_")]
        peak, finished = [0], threading.Event()

        def sample() -> None:
            while not finished.wait(0.1):
                peak[0] = max(peak[0], spilled_bytes(spill))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        con.execute(bare_duckdb_sql(proba).format(log=log, out=out))
        finished.set()
        sampler.join()
        groups = con.execute(f"SELECT COUNT(*) FROM '{out}'").fetchone()[0]  # from the footers: milliseconds
    print(f"bare duckdb: {groups} groups; spilled {peak[0] / 2**30:.2f} GiB")


def bare_spark(log: str, out: str, model: str = "log") -> None:
    """The bare PySpark groupBy to the same output (sorted as aggregate sorts), in the session
    ``aggregate --engine spark`` starts (local[2] on 127.0.0.1)."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (
        SparkSession.builder.master("local[2]").appName("bare-groupby")
        .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false").getOrCreate()
    )  # fmt: skip
    spark.sparkContext.setLogLevel("ERROR")
    rows = spark.read.parquet(log)
    proba = [c for c in rows.columns if c.startswith("proba_")]
    confidence = F.greatest(*[F.col(p) for p in proba])
    argmax = None
    for c, p in enumerate(proba):
        argmax = (F.when if argmax is None else argmax.when)(F.col(p) == F.col("confidence"), F.lit(str(c)))
    rows = rows.withColumn("confidence", confidence).withColumn("y_pred", argmax)
    rows = rows.withColumn("y_true", F.col("y_true").cast("string"))
    grouped = rows.groupBy("split", "y_pred", "confidence", "y_true").agg(
        F.count(F.lit(1)).alias("weight"), *[F.avg(p).alias(p) for p in proba]
    )
    ordered = grouped.orderBy("split", "y_pred", F.col("confidence").desc(), "y_true")
    columns = [F.lit(model).alias("model"), "split", "y_true", *proba, "weight"]
    ordered.select(*columns).write.mode("overwrite").parquet(out)
    spark.stop()  # its groups are counted by the caller, untimed: a count here would be a Spark job more


def baselines_text() -> str:
    """The bare queries' code as this script runs it, printed before the comparison."""
    import inspect

    lines = inspect.getsource(bare_spark).splitlines()
    first = next(i for i, line in enumerate(lines) if "spark.read.parquet" in line)
    last = next(i for i, line in enumerate(lines) if ".write." in line)
    spark = "\n".join(line[4:] for line in lines[first : last + 1])
    return f"bare duckdb (its own process: duckdb imported, nothing else: no numpy, nothing of valuecore's):\n" \
           f"{BARE_DUCKDB_SQL}\nbare pyspark (local[2] on 127.0.0.1):\n{spark}"  # fmt: skip


def _spilled(text: str) -> float:
    import re

    found = re.search(r"spilled ([0-9.]+) GiB", text)
    return float(found.group(1)) if found else float("nan")


def same_output(aggregate_out: Path, bare_out: Path) -> str:
    """Whether the bare query wrote what ``aggregate`` wrote: the same columns, the same rows in the same order
    (keys and weights equal), the mean probabilities equal up to round-off (``aggregate`` caps each group's
    mean so that the argmax stays where it was; ``AVG`` does not)."""
    import numpy as np
    import pyarrow.parquet as pq

    a, b = pq.read_table(aggregate_out), pq.read_table(bare_out)
    if a.schema.names != b.schema.names or a.num_rows != b.num_rows:
        return f"NO ({a.num_rows} rows {a.schema.names[:4]}.. against {b.num_rows} {b.schema.names[:4]}..)"
    for key in ("model", "split", "y_true"):
        if a[key].cast("string").to_pylist() != b[key].cast("string").to_pylist():
            return f"NO ({key} differs)"
    if not np.array_equal(a["weight"].to_numpy().astype(float), b["weight"].to_numpy().astype(float)):
        return "NO (weight differs)"
    gap = max(float(np.max(np.abs(a[c].to_numpy() - b[c].to_numpy()), initial=0.0))
              for c in a.schema.names if c.startswith("proba_"))  # fmt: skip
    return f"yes (means within {gap:.0e})"


def compare_engines(log: Path, folder: Path, n, engines: list[str], repeats: int, memory_limit: str,
                    max_groups: int | None = None, base: Path | None = None) -> None:
    """aggregate (and, with ``base``, the base's aggregate: ``python -m valuecore`` run in that folder)
    against the bare query, per engine, medians of ``repeats`` runs interleaved."""
    python, me = sys.executable, str(Path(__file__).resolve())
    commands = {}
    for engine in engines:
        aggregate = [python, "-m", "valuecore", "aggregate", str(log), "--out", None, "--engine", engine,
                     "--memory-limit", memory_limit] + (["--max-groups", str(max_groups)] if max_groups else [])
        commands[(engine, "aggregate")] = (aggregate, ROOT)
        if base is not None:
            commands[(engine, "base")] = (aggregate, base)
        commands[(engine, "bare")] = (
            [python, me, "--bare", engine, str(log), None, "--memory-limit", memory_limit], ROOT
        )
    runs: dict = {key: [] for key in commands}
    loads, groups, same = [], "?", {}
    for _ in range(repeats):
        for key, (command, cwd) in commands.items():
            spark_folder = key == ("spark", "bare")  # Spark writes a folder of parts
            out = folder / f"{key[1]}-{key[0]}-{len(runs[key])}{'' if spark_folder else '.parquet'}"
            command = [str(out) if part is None else part for part in command]
            run = measured_run(command, cwd)
            runs[key].append((run["seconds"], run["cpu"], run["gib"], run["jvm"], _spilled(run["out"]), run["queued"]))
            if key[1] == "bare":
                groups = f"{_rows_written(out):,}"
                same[key[0]] = same_output(folder / f"aggregate-{key[0]}-0.parquet", out)
            if key[1] == "base":
                same[(key[0], "base")] = _equal_tables(folder / f"aggregate-{key[0]}-{len(runs[key]) - 1}.parquet", out)
            loads.append(os.getloadavg()[0])
    shape = n if isinstance(n, str) else f"{n:,}"
    for engine in engines:
        labels = ["aggregate"] + (["base"] if base is not None else []) + ["bare"]
        med = {label: [statistics.median(r[i] for r in runs[(engine, label)]) for i in range(6)] for label in labels}
        for label in labels:
            seconds, cpu, gib, jvm, spill, queued = med[label]
            jvm_text = f"{jvm:5.2f}" if engine == "spark" else f"{'-':>5}"
            spill_text = f"{spill:6.2f}" if engine == "duckdb" else f"{'-':>6}"
            each = ", ".join(f"{r[0]:.1f}/{r[1]:.2f}/{r[5]:.1f}" for r in runs[(engine, label)])
            print(f"{shape:>12} | {engine:>6} {label:>9} | {seconds:8.1f} {cpu:7.2f} {gib:5.2f} {jvm_text} "
                  f"{spill_text} {queued:6.1f} | {each}")
        bare = med["bare"]
        for label in labels[:-1]:
            m = med[label]
            print(f"{'':>12} | {engine:>6} {label + '/bare':>9} | {m[0] / bare[0]:7.2f}x {m[1] / bare[1]:6.2f}x "
                  f"{m[2] / bare[2]:4.2f}x" + (f" {m[3] / bare[3]:4.2f}x JVM" if engine == "spark" and bare[3] else ""))
        print(f"{'':>12} | {engine:>6} bare wrote the same output as aggregate: {same.get(engine, '?')}")
        if base is not None:
            print(f"{'':>12} | {engine:>6} base wrote an equal table (values, order, metadata): "
                  f"{same.get((engine, 'base'), '?')}")
    print(f"{'':>12} | {groups} groups; load average during these runs: {min(loads):.1f}-{max(loads):.1f}",
          flush=True)


def _equal_tables(a: Path, b: Path) -> str:
    """Whether two aggregates hold equal tables: columns, rows, order, values, metadata."""
    import pyarrow.parquet as pq

    return "yes" if pq.read_table(a).equals(pq.read_table(b), check_metadata=True) else "NO"


def _rows_written(out: Path) -> int:
    """The rows of a Parquet file, or of a folder of parts (Spark's), from their footers."""
    import pyarrow.parquet as pq

    parts = sorted(out.glob("*.parquet")) if out.is_dir() else [out]
    return sum(pq.read_metadata(part).num_rows for part in parts)


def parse_shapes(text: str) -> list[tuple[int, int | None, int, str]]:
    """``classes:decimals:rows[:text]`` items, comma-separated; decimals ``full`` = float64 at full precision;
    ``text``: the true class written as text (words), not as a number."""
    shapes = []
    for item in text.split(","):
        classes, decimals, rows, *labels = item.split(":")
        if labels not in ([], ["text"]):
            raise SystemExit(f"--shapes: {item!r}: the fourth field can only be 'text'")
        shapes.append((int(classes), None if decimals == "full" else int(decimals), int(float(rows)),
                       "text" if labels else "number"))
    return shapes


def answer(report_text: str) -> list[str]:
    return [line for line in report_text.splitlines() if line.startswith(("threshold", "value total"))]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--bare":
        engine, log, out = sys.argv[2:5]
        limit = sys.argv[6] if len(sys.argv) > 6 else "1GB"
        bare_duckdb(log, out, limit) if engine == "duckdb" else bare_spark(log, out)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--huge", action="store_true", help="also 10^8 rows (needs ~4 GB of disk, minutes)")
    parser.add_argument("--in-memory-max", type=float, default=1e7, help="largest n for the in-memory report")
    parser.add_argument("--temp-dir", default=None)
    parser.add_argument("--engines", default="duckdb,spark", help="engines compared with a bare query ('' for none)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each engine comparison (median shown)")
    parser.add_argument("--skip-reports", action="store_true", help="only the engine comparison")
    parser.add_argument("--memory-limit", default="1GB", help="DuckDB memory limit of aggregate and the bare query")
    parser.add_argument("--max-groups", type=int, default=None, help="passed to aggregate (its budget of groups)")
    parser.add_argument("--shapes", default=None,
                        help="instead of --sizes, only the engine comparison on logs of these shapes: "
                             "classes:decimals:rows,... (decimals 'full' = float64 at full precision), e.g. "
                             "2:3:1e6,10:4:1e6,50:4:1e6,10:full:1e6,2:full:1e7; a fourth field 'text' "
                             "writes the true class as text (3:4:1e6:text)")
    parser.add_argument("--base", default=None,
                        help="also time this version's aggregate: a git commit (exported with git archive to a "
                             "temporary folder) or a folder holding its valuecore/")
    parser.add_argument("--ahead", action="store_true",
                        help="run each measured process ahead of the machine's other work (nice -20 in a "
                             "scheduling group of its own; needs root): wall times near an idle machine's. It "
                             "slows everything else while it runs: keep such runs short")
    args = parser.parse_args()
    _adopt_orphans()
    if args.ahead:
        AHEAD[:] = AHEAD_COMMAND
    with tempfile.TemporaryDirectory(prefix="valuecore-base-") as exported:
        base = None if args.base is None else _base_folder(args.base, Path(exported))
        # Byte-compiled first, as an installed package is: with PYTHONDONTWRITEBYTECODE set (as here) every
        # fresh process would compile valuecore's sources again, a cost no user's run has.
        for folder in [ROOT] + ([base] if base is not None else []):
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder / "valuecore")], check=True)
        _run(args, base)


def _adopt_orphans() -> None:
    """Make this process the reaper of its descendants' orphans (Linux ``PR_SET_CHILD_SUBREAPER``): PySpark
    never waits for the JVM it starts, so the JVM's CPU time would be missing from its process's usage;
    :func:`measured_run` waits for it instead and adds it."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
        print("note: this process cannot adopt orphans; a Spark run's CPU time leaves out its JVM")


def _base_folder(base: str, into: Path) -> Path:
    """The folder to run the base's ``python -m valuecore`` in."""
    if (Path(base) / "valuecore").is_dir():
        return Path(base).resolve()
    archive = subprocess.run(["git", "archive", base, "valuecore"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _run(args, base: Path | None) -> None:
    if args.shapes:
        engines = [e for e in args.engines.split(",") if e]
        print(f"{os.cpu_count()} cores | load average {os.getloadavg()[0]:.1f} at start | shapes "
              f"classes/decimals/rows[/text: y_true written as text, which the bare query groups as written and "
              f"aggregate strips of the whitespace around it]; groups = the bare query's output rows")
        print(baselines_text())
        print(f"{'shape':>12} | {'engine':>6} {'run':>9} | {'median s':>8} {'CPU s':>7} {'GiB':>5} {'JVM':>5} "
              f"{'spill':>6} {'queued':>6} | each run s/CPU s/queued s")
        for classes, decimals, rows, labels in parse_shapes(args.shapes):
            with tempfile.TemporaryDirectory(prefix="valuecore-bench-", dir=args.temp_dir) as folder:
                log = Path(folder) / "log.parquet"
                write_log(log, rows, classes=classes, decimals=decimals, labels=labels)
                label = f"{classes}/{'full' if decimals is None else decimals}/{rows:.0e}".replace("e+0", "e")
                label += "/text" if labels == "text" else ""
                compare_engines(log, Path(folder), label, engines, args.repeats, args.memory_limit, args.max_groups,
                                base)
        print(f"load average {os.getloadavg()[0]:.1f} at the end; the temporary logs were deleted")
        return
    sizes = [int(float(s)) for s in args.sizes.split(",")] + ([10**8] if args.huge else [])
    engines = [e for e in args.engines.split(",") if e]
    python = sys.executable
    print(f"{os.cpu_count()} cores | load average {os.getloadavg()[0]:.1f} at start | 10 classes, float32, 4 decimals")
    header = (
        f"{'n':>12} | {'aggregate s':>11} {'GiB':>5} {'groups':>9} | {'report agg s':>12} {'GiB':>5} | "
        f"{'in-memory s':>11} {'GiB':>5} | same answer"
    )
    compare_header = (
        f"{'n':>12} | {'engine':>6} {'run':>9} | {'median s':>8} {'CPU s':>7} {'GiB':>5} {'JVM':>5} {'spill':>6} "
        f"{'queued':>6} | each run s/CPU s/queued s"
    )
    if engines:
        print(baselines_text())
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="valuecore-bench-", dir=args.temp_dir) as folder:
            log, agg = Path(folder) / "log.parquet", Path(folder) / "agg.parquet"
            write_log(log, n)
            if not args.skip_reports:
                print(header)
                print("-" * len(header))
                a_s, a_gib, a_out, _ = measured_child(
                    [python, "-m", "valuecore", "aggregate", str(log), "--out", str(agg)]
                )
                groups = a_out.split(": ", 1)[1].split(" groups")[0]
                r_s, r_gib, r_out, _ = measured_child([python, "-m", "valuecore", "report", str(agg), *REPORT])
                if n <= args.in_memory_max:
                    m_s, m_gib, m_out, _ = measured_child([python, "-m", "valuecore", "report", str(log), *REPORT])
                    same = "yes" if answer(m_out) == answer(r_out) and answer(r_out) else "NO"
                    memory = f"{m_s:11.1f} {m_gib:5.2f}"
                else:
                    memory, same = f"{'-':>11} {'-':>5}", "-"
                print(f"{n:>12,} | {a_s:11.1f} {a_gib:5.2f} {groups:>9} | {r_s:12.1f} {r_gib:5.2f} | {memory} | {same}")
            if engines:
                print(compare_header)
                print("-" * len(compare_header))
                compare_engines(log, Path(folder), n, engines, args.repeats, args.memory_limit, base=base)
    print(f"load average {os.getloadavg()[0]:.1f} at the end; the temporary logs were deleted")


if __name__ == "__main__":
    main()
