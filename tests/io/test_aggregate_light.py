"""``aggregate`` with DuckDB on a Parquet log runs without importing pandas (its import was 0.3 s and 0.05 GiB
of the process that the bare DuckDB query never pays), pyarrow or numpy; sqlglot, which builds Spark's SQL, by
no command run here (a DuckDB aggregation builds its SQL as text: ``test_sqltext.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from optional import need

need("duckdb")

from helpers.cli import modules_loaded_by  # noqa: E402
from helpers.inputs import raw_frame  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_aggregating_a_parquet_log_with_duckdb_imports_neither_pandas_nor_pyarrow_nor_numpy(tmp_path):
    """pyarrow and numpy (with it) were 0.08 s of a fresh process that reads its footers and hands the rest to
    DuckDB: the footers are read in pure Python (``test_parquet_footer.py``)."""
    raw_frame(5, 500).to_parquet(tmp_path / "log.parquet")  # pandas' file: its metadata beside Arrow's schema
    script = (
        "import sys\n"
        "from valuecore._cli.commands import main\n"
        f"code = main(['aggregate', {str(tmp_path / 'log.parquet')!r}, '--out', {str(tmp_path / 'agg.parquet')!r}])\n"
        "assert code == 0, code\n"
        "print(sorted(m for m in ('pandas', 'pyarrow', 'numpy') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "agg.parquet").exists()


def test_the_aggregation_module_imports_neither_pandas_nor_pyarrow():
    """``benchmarks/bench_scale.py``'s bare DuckDB process takes its spill measure from it."""
    script = "import sys, valuecore.aggregation\nprint('pandas' in sys.modules, 'pyarrow' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


def test_no_command_here_imports_sqlglot():
    script = "import sys, valuecore\nimport valuecore.runs\nprint('sqlglot' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]
    for argv in (["--help"], ["validate", str(ROOT / "sample_runs" / "digits")]):
        assert not {m for m in modules_loaded_by(*argv) if m.split(".")[0] == "sqlglot"}, argv
    assert "sqlglot" not in modules_loaded_by("aggregate", str(ROOT / "missing.parquet"), "--out", "unused.parquet")


def test_a_spark_driver_out_of_heap_is_said_so_not_blamed_on_the_file():
    """Issue 33: at Spark's default 1g driver heap, taking 810,925 groups of 50 classes back failed with the
    JVM's OutOfMemoryError, once reported as the log's 'could not be read (An error occurred while calling
    o78.getResult.)'."""
    from valuecore._io.aggregate.checks import _engine_problem
    from valuecore._io.aggregate.sources import _Source

    class Py4JJavaError(Exception):  # py4j's text: the call, then the Java trace with its cause
        pass

    error = Py4JJavaError("An error occurred while calling o78.getResult.\n: org.apache.spark.SparkException: "
                          "Exception thrown in awaitResult:\nCaused by: java.lang.OutOfMemoryError: Java heap space")
    source = _Source(display="logs/day.parquet", model="day", format="parquet")
    problem = _engine_problem(source, error)
    assert "driver ran out of Java heap" in problem.message and "spark.driver.memory" in problem.message
    assert "could not be read" not in problem.message and problem.file == "logs/day.parquet"
    other = _engine_problem(source, Py4JJavaError("An error occurred while calling o9.sql.\n: boom"))
    assert other.message == "could not be read (An error occurred while calling o9.sql.)"
