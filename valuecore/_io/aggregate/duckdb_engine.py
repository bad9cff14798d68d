"""The engines' common interface, and DuckDB in-process: memory bounded, spilling to a temporary folder,
interrupted cleanly on a stop."""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


from ..aggregate_options import DEFAULT_MAX_TEMP_SIZE, bytes_on_disk
from ..format import LoadProblem, _short_list
from ..sqltext import exp

from .results import AGGREGATE_METADATA_KEY, SOURCE_VIEW, FILE_COLUMN, ROW_COLUMN, CELLS_VIEW, AggregateRefused
from .sources import _Source
from .sql import _Plan, GROUPED_TABLE, grouped_sql, presorted_sql, render, written_sql


class _Engine:
    """Runs SQL over the ``source_rows`` view; subclasses bind the view to a source."""

    name = ""

    def bind(self, source: _Source) -> None:
        raise NotImplementedError

    def rows(self, sql, parameters: Sequence = ()) -> list[tuple]:
        """The rows of ``sql`` (an expression of ``sqltext.exp``, rendered in the engine's dialect, or SQL text),
        its ``?`` markers bound to ``parameters`` (values are never pasted into SQL)."""
        raise NotImplementedError

    def materialize(self, name: str, sql: str, progress) -> None:
        raise NotImplementedError

    def groups(self, plan: _Plan, limit: int, progress):
        """The rows of :func:`grouped_sql`: at most ``limit`` of them as an Arrow table, or a :class:`_HeldGroups`
        for an engine that keeps them all itself; ``holds_groups`` says whether the engine keeps them as
        ``grouped_rows``."""
        raise NotImplementedError

    holds_groups = False

    def display_file(self, engine_file) -> str:
        return str(engine_file)

    def close(self) -> None:
        pass


@contextlib.contextmanager
def _ctrl_c_stops(stop: threading.Event | None):
    """``stop``, or when none is given (a Python session's main thread with Python's own Ctrl-C handler)
    an event that Ctrl-C sets for the while: the aggregation then stops where it can do so cleanly,
    instead of a KeyboardInterrupt raised wherever the main thread happens to be."""
    if stop is not None or threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield stop
        return
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda signum, frame: stop.set())
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def _stop_if_asked(stop: threading.Event | None) -> None:
    """KeyboardInterrupt once ``stop`` is set: between queries, while one runs, and before the rename."""
    if stop is not None and stop.is_set():
        raise KeyboardInterrupt


def _one_statement(sql: str, con=None) -> str:
    """``sql`` when it is exactly one statement (its builder quotes every name; this makes sure no name could
    ever have smuggled in a second one). Parsed by ``con`` when given: DuckDB's module-level parser opens a
    database of its own (15-20 ms of CPU, once per process)."""
    if con is None:
        import duckdb as con

    if len(con.extract_statements(sql)) != 1:
        raise ValueError("refused to run SQL that is not exactly one statement")
    return sql


class _DuckDB(_Engine):
    name = "duckdb"

    def __init__(
        self,
        memory_limit: str,
        temp_directory: str | None,
        threads: int | None,
        max_temp_size: str = DEFAULT_MAX_TEMP_SIZE,
        stop: threading.Event | None = None,
        presort: bool = False,
    ):
        import duckdb

        self.stop = stop
        # One source: its groups are sorted as they are made (:func:`presorted_sql`), the write only scans them.
        self.presort = presort
        try:
            self._temp = tempfile.TemporaryDirectory(prefix="valuecore-duckdb-", dir=temp_directory)
        except OSError as exc:
            raise ValueError(f"cannot make a temporary folder in {temp_directory}: {exc.strerror or exc}") from None
        self.con = duckdb.connect(":memory:")
        try:
            self._execute("SET memory_limit = ?", [memory_limit])
        except duckdb.Error:
            self.close()
            raise ValueError(f"--memory-limit must be a size such as 512MB or 4GB, got {memory_limit!r}") from None
        self._execute("SET temp_directory = ?", [self._temp.name])
        try:
            self._execute("SET max_temp_directory_size = ?", [max_temp_size])
        except duckdb.Error:
            self.close()
            raise ValueError(f"--max-temp-size must be a size such as 4GB or 20GB, got {max_temp_size!r}") from None
        self.max_temp_size = max_temp_size
        self.spilled_bytes = 0
        # query_progress() answers -1 unless the progress bar is on (the Python client has it off); DuckDB
        # itself prints none of it.
        self._execute("SET enable_progress_bar = true")
        self._execute("SET enable_progress_bar_print = false")
        self._execute("SET preserve_insertion_order = false")
        self._execute("SET TimeZone = 'UTC'")
        if threads:
            self._execute(f"SET threads = {int(threads)}")
        self._databases: dict[str, str] = {}  # database file -> its alias
        self._kept: list[str] = []  # the tables of checked groups, one per source

    def _execute(self, sql: str, parameters=None):
        return self.con.execute(_one_statement(sql, self.con), parameters)

    def _table(self, source: _Source) -> str:
        """The existing table of ``FILE.duckdb:TABLE`` (``TABLE`` or ``SCHEMA.TABLE``), matched against the
        database's own list: the name is never parsed as SQL."""
        alias = self._databases.get(source.database)
        if alias is None:
            alias = f"source_db_{len(self._databases)}"
            self._execute(f"ATTACH ? AS {alias} (READ_ONLY)", [source.database])
            self._databases[source.database] = alias
        listed = self._execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? UNION ALL "
            "SELECT schema_name, view_name FROM duckdb_views() WHERE database_name = ? AND NOT internal",
            [alias, alias],
        ).fetchall()
        wanted = source.table
        for schema, table in listed:
            if wanted in (table, f"{schema}.{table}"):
                return exp.table_(table, db=schema, catalog=alias)
        names = sorted(t if s == "main" else f"{s}.{t}" for s, t in listed)
        raise AggregateRefused(
            [LoadProblem(source.display, f"no table named {wanted!r} in {source.database} (it holds "
                         f"{_short_list(names) if names else 'no tables'})")]
        )  # fmt: skip

    def bind(self, source: _Source) -> None:
        # DuckDB's relational API: the file paths and the display name are values handed to the readers and
        # expressions, never pasted into SQL text.
        from duckdb import ColumnExpression, ConstantExpression, SQLExpression, StarExpression

        hive = source.base is not None
        files = [_exact_file(file) for file in source.files]
        if source.format == "parquet":
            reader = self.con.read_parquet(files, filename=True, file_row_number=True,
                                           hive_partitioning=hive, union_by_name=True)
            view = reader.select(StarExpression(exclude=["filename", "file_row_number"]),
                                 ColumnExpression("filename").alias(FILE_COLUMN),
                                 ColumnExpression("file_row_number").alias(ROW_COLUMN))
        elif source.format == "csv":
            reader = self.con.read_csv(files, header=True, all_varchar=True, filename=True,
                                       parallel=False, hive_partitioning=hive, union_by_name=True)
            view = reader.select(StarExpression(exclude=["filename"]), ColumnExpression("filename").alias(FILE_COLUMN),
                                 SQLExpression("row_number() OVER (PARTITION BY filename) - 1").alias(ROW_COLUMN))
        else:
            view = self.con.sql(render(exp.select(exp.Star()).from_(self._table(source)), self.name)).select(
                StarExpression(), ConstantExpression(source.display).alias(FILE_COLUMN),
                SQLExpression("row_number() OVER () - 1").alias(ROW_COLUMN))
        self._run(lambda: view.create_view(SOURCE_VIEW, replace=True))
        # DuckDB reads no file name or row number that a query leaves unused: one view serves both.
        self._run(lambda: self._execute(f"CREATE OR REPLACE TEMP VIEW {CELLS_VIEW} AS SELECT * FROM {SOURCE_VIEW}"))

    def describe(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self._run(lambda: self._execute(f"DESCRIBE {SOURCE_VIEW}").fetchall())]

    def rows(self, sql: str, parameters: Sequence = ()) -> list[tuple]:
        return self._run(lambda: self._execute(render(sql, self.name), list(parameters) or None).fetchall())

    def materialize(self, name: str, sql: str, progress) -> None:
        self._run(lambda: self._execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {render(sql, self.name)}"), progress)

    holds_groups = True

    def groups(self, plan: _Plan, limit: int, progress):
        # The groups stay in DuckDB: the checks read them there and, once every check passed, DuckDB sorts and
        # writes them itself (:meth:`write`). Only counts come into this process: no fetch of the groups, no
        # sort or Parquet write in Python (those were 2.4-3.3 s of 15 s at 10^7 rows, one profile).
        if self.presort:
            # Insertion order kept for this statement: the table then holds the groups in the ORDER BY's order.
            with self._keeping_order():
                self.materialize(GROUPED_TABLE, presorted_sql(plan), progress)
        else:
            self.materialize(GROUPED_TABLE, grouped_sql(plan), progress)
        count, rows = self.rows(f"SELECT COUNT(*), SUM(n_rows) FROM {GROUPED_TABLE}")[0]
        return _HeldGroups(GROUPED_TABLE, int(count), int(rows or 0), presorted=self.presort)

    @contextlib.contextmanager
    def _keeping_order(self):
        """DuckDB keeps the order of rows for the while (``preserve_insertion_order``, off otherwise: it lets a
        query without ORDER BY use less memory)."""
        self._execute("SET preserve_insertion_order = true")
        try:
            yield
        finally:
            self._execute("SET preserve_insertion_order = false")

    def keep(self, held: _HeldGroups) -> _HeldGroups:
        """The checked groups of one source, put aside under their own name until the write."""
        name = f"kept_groups_{len(self._kept)}"
        self._run(lambda: self._execute(f"ALTER TABLE {held.table} RENAME TO {name}"))
        self._kept.append(name)
        return _HeldGroups(name, held.num_rows, held.source_rows, held.presorted)

    def models_of(self, held: _HeldGroups) -> list:
        return [r[0] for r in self.rows(f"SELECT DISTINCT model FROM {held.table} ORDER BY model NULLS LAST")]

    def write(self, held: Sequence[_HeldGroups], plans: Sequence[_Plan], path: Path, metadata: str) -> None:
        """The kept groups as one Parquet file (DuckDB's sort and writer), ``metadata`` under
        :data:`AGGREGATE_METADATA_KEY` in the file's key-value metadata."""
        # DuckDB reads a leading "~" as the home folder, Python as a folder named so: DuckDB gets an absolute
        # path (write_atomically's temporary file has one already; this keeps any other caller safe).
        target = os.path.abspath(path)
        presorted = len(held) == 1 and held[0].presorted
        sql = copy_sql([h.table for h in held], plans, presorted)
        if presorted:  # a scan of the table as it lies, written in order by every thread
            with self._keeping_order():
                self._run(lambda: self._execute(render(sql, self.name), [target, metadata]))
            return
        # In one thread: the sort then reuses the memory the grouping freed. With two, the process peaked
        # 0.03-0.1 GiB higher at 10^7 rows (912,215 groups), in no less time (4 pairs of runs, load about 3).
        (threads,) = self.rows("SELECT current_setting('threads')")[0]
        self._execute("SET threads = 1")
        try:
            self._run(lambda: self._execute(render(sql, self.name), [target, metadata]))
        finally:
            self._execute(f"SET threads = {int(threads)}")

    def _run(self, work, progress=None):
        """Run ``work`` in a thread, reporting DuckDB's query progress every half second.

        This thread only waits, and watches for a stop: ``stop`` set (the command line's signal
        handler sets it) or a KeyboardInterrupt (Ctrl-C in a Python session). Then the query is
        interrupted through DuckDB's own interrupt, asked again until the worker gives up (a query
        that had not begun yet would miss a single one), and the worker joined before
        KeyboardInterrupt goes on: a thread left inside DuckDB while the interpreter exits aborts
        the process ("terminate called ... FATAL: exception not rethrown")."""
        _stop_if_asked(self.stop)
        done = threading.Event()
        result: dict = {}

        def run():
            try:
                result["table"] = work()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                result["error"] = exc
            finally:
                done.set()

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        try:
            ticks = 0
            while not done.wait(0.1):
                _stop_if_asked(self.stop)
                self.spilled_bytes = max(self.spilled_bytes, bytes_on_disk(self._temp.name))
                ticks += 1
                if progress is not None and ticks % 5 == 0:
                    fraction = self.con.query_progress()
                    if fraction is not None and fraction >= 0:
                        progress(min(fraction / 100.0, 1.0))
        except BaseException:
            while not done.wait(0.05):
                self.con.interrupt()
            worker.join()
            raise
        worker.join()
        _stop_if_asked(self.stop)  # the query ended as the stop came: its result is not used
        if "error" in result:
            raise result["error"]
        return result["table"]

    def close(self) -> None:
        self.con.close()
        self._temp.cleanup()  # the spill files of an interrupted query too


def _exact_file(file: str) -> str:
    """``file`` as DuckDB's readers read that one file: they read every path as a glob, so ``m[1].csv``
    would read ``m1.csv``; each of ``*?[`` is escaped as a class of itself (``[[]``), and DuckDB's rows name
    the file as it is. DuckDB's globs match no path holding a backslash: such a file is refused, not misread."""
    if not any(ch in file for ch in "*?["):
        return file
    if "\\" in file:
        raise AggregateRefused(
            [LoadProblem(file, "DuckDB cannot read a file whose path holds both a backslash and one of * ? [ "
                         "(it reads such a path as a pattern); rename the file or its folder")]
        )
    return "".join(f"[{ch}]" if ch in "*?[" else ch for ch in file)


def copy_sql(tables: Sequence[str], plans: Sequence[_Plan], presorted: bool = False) -> exp.Copy:
    """``COPY`` of :func:`written_sql` into a Parquet file: the path is the first parameter, the metadata (under
    :data:`AGGREGATE_METADATA_KEY`) the second; values are never pasted in, the key is quoted by the builder."""
    entry = exp.PropertyEQ(this=exp.to_identifier(AGGREGATE_METADATA_KEY.decode(), quoted=True),
                           expression=exp.Placeholder())  # fmt: skip
    options = {"FORMAT": exp.var("parquet"), "KV_METADATA": exp.Struct(expressions=[entry])}
    return exp.Copy(this=written_sql(tables, plans, presorted).subquery(), kind=False, files=[exp.Placeholder()],
                    params=[exp.CopyParameter(this=exp.var(k), expression=v) for k, v in options.items()])


@dataclass(frozen=True)
class _HeldGroups:
    """One source's groups, kept by the engine in ``table``: ``num_rows`` groups of ``source_rows`` rows."""

    table: str
    num_rows: int
    source_rows: int
    presorted: bool = False  # in the aggregate's order already (:func:`presorted_sql`)


class _FetchedGroups:
    """The groups once fetched into this process, as ``grouped_rows`` for the checks' small queries (run by
    DuckDB in process), so that an engine holding them no more is not asked to group again."""

    def __init__(self, table):
        import duckdb

        self.con = duckdb.connect(":memory:")
        self.con.register(GROUPED_TABLE, table)

    def rows(self, sql, parameters: Sequence = ()) -> list[tuple]:
        return self.con.execute(_one_statement(render(sql, "duckdb"), self.con), list(parameters) or None).fetchall()

    def close(self) -> None:
        self.con.close()
