"""Spark as the aggregation's engine: a cluster's session or ``local[2]`` on the loopback interface."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse


from ..format import LoadProblem
from .results import SOURCE_VIEW, FILE_COLUMN, ROW_COLUMN, CELLS_VIEW, AggregateRefused
from .sources import _Source
from .sql import _Plan, GROUPED_TABLE, grouped_sql, render
from .duckdb_engine import _Engine, _stop_if_asked


def spark_session(master: str = "local[2]"):
    """A local Spark session bound to the loopback interface (for tests and one machine)."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master(master)
        .appName("valuecore-aggregate")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )


class _Spark(_Engine):
    name = "spark"

    def __init__(self, session=None, stop: threading.Event | None = None):
        self.spark = session if session is not None else _active_or_local_session()
        self.stop = stop
        self._progress = None  # the grouping's callback while it runs
        # This aggregation's jobs carry a tag: a stop cancels them, not a notebook's other jobs.
        self._tag = f"valuecore-aggregate-{os.getpid()}-{id(self)}"
        try:
            self._context = self.spark.sparkContext
        except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext (its error moved between versions)
            self._context = None  # its session carries the tags
        (self.spark.addTag if self._context is None else self._context.addJobTag)(self._tag)
        self.spark.conf.set("spark.sql.session.timeZone", "UTC")
        # Hive partition values are text, as DuckDB reads them (split=1 is the split "1").
        self.spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        self._uris: dict[str, str] = {}
        self._folders: list[str] = []  # where the executors wrote groups still in use
        self._partitions = self.spark.conf.get("spark.sql.shuffle.partitions")
        self._closed = threading.Event()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        """Every 0.1 s, once ``stop`` is set, cancel this aggregation's jobs (the waiting call then fails
        and :func:`aggregate` raises KeyboardInterrupt); every 0.5 s, the running grouping's progress."""
        context = self._context
        tracker = None if context is None else context.statusTracker()
        ticks = 0
        while not self._closed.wait(0.1):
            if self.stop is not None and self.stop.is_set():
                if context is None:
                    self.spark.interruptTag(self._tag)
                else:
                    context.cancelJobsWithTag(self._tag)
            ticks += 1
            report = self._progress
            if report is not None and tracker is not None and ticks % 5 == 0:
                stages = [info for info in map(tracker.getStageInfo, tracker.getActiveStageIds()) if info]
                tasks = sum(info.numTasks for info in stages)
                if tasks:
                    report(sum(info.numCompletedTasks for info in stages) / tasks)

    def _job(self, work, progress=None):
        """``work()``, once no stop is asked, with ``progress`` reported meanwhile."""
        _stop_if_asked(self.stop)
        self._progress = progress
        try:
            return work()
        finally:
            self._progress = None

    def _size_shuffle(self, rows: int | None) -> None:
        """Shuffle partitions sized to the source (about 2M rows each, at least two per core), not a fixed
        default: the grouping's shuffle then neither queues tiny tasks nor overloads a few."""
        if rows is None:
            return
        cores = self.spark.sparkContext.defaultParallelism
        self.spark.conf.set("spark.sql.shuffle.partitions", str(max(2 * cores, min(4000, -(-rows // 2_000_000)))))

    def bind(self, source: _Source) -> None:
        _stop_if_asked(self.stop)
        self._size_shuffle(source.rows)
        reader = self.spark.read
        if source.format == "spark_table":
            frame = self._catalog_table(source)
            from pyspark.sql import functions as F

            # The display name is a value (F.lit), not SQL text: Spark's literals read backslashes as escapes.
            frame = frame.select("*", F.lit(source.display).alias(FILE_COLUMN),
                                 F.lit(None).cast("bigint").alias(ROW_COLUMN))
        else:
            if source.base is not None:
                reader = reader.option("basePath", source.base)
            files = [_exact_path(file) for file in source.files]
            if source.format == "parquet":
                frame = reader.parquet(*files)
                row = "_metadata.row_index"
            else:
                names = _plain_csv_header(source.files[0])
                if names is not None:  # Spark would read the header in a job of its own to name the columns
                    from pyspark.sql.types import StringType, StructField, StructType

                    reader = reader.schema(StructType([StructField(n, StringType()) for n in names]))
                frame = reader.option("header", True).option("inferSchema", False).csv(files)
                row = "CAST(NULL AS BIGINT)"  # Spark does not number CSV rows
            frame.createOrReplaceTempView(CELLS_VIEW)
            frame = frame.selectExpr("*", f"_metadata.file_path AS {FILE_COLUMN}", f"{row} AS {ROW_COLUMN}")
            for file in source.files:
                self._uris[_uri_path(Path(file).resolve().as_uri())] = file
        if source.format == "spark_table":
            frame.createOrReplaceTempView(CELLS_VIEW)
        frame.createOrReplaceTempView(SOURCE_VIEW)

    def _catalog_table(self, source: _Source):
        """``table:NAME`` as a DataFrame: NAME's parts quoted one by one, never parsed as SQL."""
        parts = source.table.split(".")
        if not 1 <= len(parts) <= 3 or any(not p.strip() or "`" in p or not p.isprintable() for p in parts):
            raise AggregateRefused(
                [LoadProblem(source.display, "a catalog table is named NAME, DATABASE.NAME or CATALOG.DATABASE.NAME, "
                             "without backquotes or control characters")]
            )  # fmt: skip
        quoted = ".".join(f"`{p}`" for p in parts)
        try:
            return self.spark.table(quoted)
        except Exception as exc:  # noqa: BLE001 - pyspark's AnalysisException moved between versions
            if "TABLE_OR_VIEW_NOT_FOUND" in str(exc) or "not found" in str(exc).lower():
                raise AggregateRefused([LoadProblem(source.display, "no such table in the Spark catalog")]) from None
            raise

    def display_file(self, engine_file) -> str:
        return self._uris.get(_uri_path(str(engine_file)), str(engine_file))

    def rows(self, sql, parameters: Sequence = ()) -> list[tuple]:
        sql = render(sql, self.name)
        frame = self.spark.sql(sql, args=list(parameters)) if parameters else self.spark.sql(sql)
        return self._job(lambda: [tuple(r) for r in frame.collect()])

    def arrow(self, sql: str, progress):
        return self._job(lambda: self.spark.sql(render(sql, self.name)).toArrow(), progress)

    def groups(self, plan: _Plan, limit: int, progress):
        # One job, as a bare groupBy: no cache of the groups, no count of them first.
        self.holds_groups = False
        if not self._executors_write_here():
            return self.arrow(grouped_sql(plan).limit(int(limit)), progress)  # the budget is the limit
        return self._written_groups(self.spark.sql(render(grouped_sql(plan), self.name)), limit, progress)

    def _executors_write_here(self) -> bool:
        """Whether the executors' files land on this machine's disk (a local master): the groups then travel
        as Parquet parts the executors write, not as task results the driver's Java heap holds (at its
        default 1g, 810,925 groups of 50 classes did not fit; issue 33). A cluster's executors write to
        their own disks, so there the groups still come back through the driver (``toArrow``)."""
        return self._context is not None and self._context.master.startswith("local")

    def _written_groups(self, frame, limit: int, progress):
        """The groups, written by the executors into a folder of this engine's own (removed here, or by
        :meth:`close` on any error or stop), read back as Arrow when fewer than ``limit``. At ``limit`` or
        more (over the budget) they stay there, as ``grouped_rows`` for the refusal's count and suggestion,
        and only their count comes back (from the parts' footers)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from pyspark.sql.pandas.types import to_arrow_schema

        # The schema toArrow casts its batches to, built as toArrow builds it (asking Spark for it, LIMIT 0,
        # costs a job): the parts' Parquet types (INT96 timestamps, Spark's schema in the metadata) are cast
        # back to it, so the table is the one toArrow gives.
        large = self.spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
        schema = to_arrow_schema(frame.schema, error_on_duplicated_field_names_in_struct=True, timezone="UTC",
                                 prefers_large_types=large)  # fmt: skip
        self._folders.append(tempfile.mkdtemp(prefix="valuecore-spark-groups-"))
        folder = os.path.join(self._folders[-1], "groups")
        self._job(lambda: frame.write.parquet(folder), progress)
        parts = sorted(str(p) for p in Path(folder).glob("part-*.parquet"))  # in the order of Spark's partitions
        count = sum(pq.ParquetFile(part).metadata.num_rows for part in parts)
        if count >= limit:
            self.spark.read.parquet(folder).createOrReplaceTempView(GROUPED_TABLE)
            self.holds_groups = True
            return _Counted(count)
        # Spark writes times as INT96, in microseconds: read in nanoseconds (pyarrow's default), a year-9999 time
        # overflowed, and the aggregate failed before its check could refuse the time in words.
        tables = [pq.read_table(part, coerce_int96_timestamp_unit="us").cast(schema)
                  for part in parts]  # no group at all may still leave no part
        table = pa.concat_tables(tables) if tables else schema.empty_table()
        shutil.rmtree(self._folders.pop(), ignore_errors=True)
        return table

    def materialize(self, name: str, sql: str, progress) -> None:
        # A DataFrame's view keeps its analysed plan (a SQL-text view would re-resolve
        # against whatever source_rows means later).
        self._drop_cached()
        self._cached = self.spark.sql(render(sql, self.name)).persist()
        self._job(self._cached.count, progress)
        self._cached.createOrReplaceTempView(name)
        self.holds_groups = name == GROUPED_TABLE

    def _drop_cached(self) -> None:
        if getattr(self, "_cached", None) is not None:
            self._cached.unpersist()
            self._cached = None

    def close(self) -> None:
        self._closed.set()
        self._watcher.join()
        self._drop_cached()
        self.spark.catalog.dropTempView(GROUPED_TABLE)
        for folder in self._folders:
            shutil.rmtree(folder, ignore_errors=True)
        self.spark.conf.set("spark.sql.shuffle.partitions", self._partitions)  # the session's own again
        (self.spark.removeTag if self._context is None else self._context.removeJobTag)(self._tag)


class _Counted:
    """Groups over the budget, left where the executors wrote them: only their number comes here."""

    def __init__(self, num_rows: int):
        self.num_rows = num_rows


def _active_or_local_session():
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if "PYSPARK_GATEWAY_PORT" in os.environ:
        # Launched by spark-submit: the master and the rest come from its command line.
        return SparkSession.builder.appName("valuecore-aggregate").getOrCreate()
    return spark_session()


def _plain_csv_header(file: str) -> list[str] | None:
    """The column names Spark reads from a CSV header (a header's names, untrimmed, as Spark keeps them),
    when the header is plain: no quote, backslash or byte-order mark, no empty name, no two names equal but
    for case (those Spark spells its own way). None otherwise: Spark then reads the header itself."""
    from ..format import _FileProblems, first_line

    with open(file, "rb") as handle:
        line = first_line(handle, _FileProblems(file))
    if line is None or line.startswith(b"\xef\xbb\xbf") or any(c in line for c in (b'"', b"\\")):
        return None
    try:
        names = line.decode("utf-8").rstrip("\r").split(",")
    except UnicodeDecodeError:
        return None
    if "" in names or len({n.lower() for n in names}) < len(names):
        return None
    return names


def _exact_path(file: str) -> str:
    """``file`` as Spark reads that one file: it reads a path holding any of ``{}[]*?\\`` as a Hadoop glob
    (``m[1].csv`` would read ``m1.csv``; ``m\\1.csv`` fails to parse), whose backslash escapes each of them."""
    return "".join("\\" + ch if ch in _HADOOP_GLOB else ch for ch in file)


_HADOOP_GLOB = frozenset("{}[]*?\\")


def _uri_path(text: str) -> str:
    parsed = urlparse(text)
    return unquote(parsed.path) if parsed.scheme in ("file", "") else text
