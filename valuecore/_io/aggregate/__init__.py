"""Aggregate prediction logs too large for memory into an ordinary run file.

Every threshold question (policies, VOC, risk-coverage, confusion matrices,
intervals, label-free estimates) is a function of the weighted counts per
(model, split, predicted class, true class, distinct confidence), and of the
probability sums per group for label-free per-class values. The aggregate
keeps exactly those: one row per group, its summed ``weight`` and, for
full-probability sources, the group's weighted mean probability vector. It is
a run file like any other: ``load_runs`` reads it, and a weight of w is w
copies (the bootstrap then draws multinomially over groups).

The aggregation is one SQL text (:func:`aggregate_sql`), run by DuckDB
in-process (the default, memory bounded by ``memory_limit`` with spilling to
a temporary folder) or by Spark (a cluster, or ``local[2]``). The checks the
in-memory loader makes run in the engine too (:func:`check_sql`) and come back
as the loader's own :class:`LoadProblem` messages, naming file, column and rows.

Exact by default. When the confidences are too finely spread (e.g. float32
scores), the number of groups exceeds a budget and the aggregation refuses,
suggesting a ``resolution``: confidences are then rounded *down* to multiples
of it, so "confidence >= t" is exact for every grid threshold t, and
:func:`resolution_bound` bounds what the grid costs against the exact optimum.

The package reads in the order of the work: ``results`` (what comes back, and the views every engine
exposes), ``sources`` (the files and tables named, scanned before any engine runs), ``sql`` (one source's
plan and its SQL, the loader's checks among it), ``duckdb_engine`` and ``spark_engine`` (the engines),
``checks`` (the checks' findings as the loader's messages, the budget's refusal); this module runs them
and writes the file.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ..aggregate_options import DEFAULT_MAX_GROUPS, DEFAULT_MAX_TEMP_SIZE, DEFAULT_MEMORY_LIMIT, PERIODS, bytes_on_disk
from ..parquet_footer import FooterBudget
from ..paths import check_output, write_atomically
from ..sqltext import building_for
from ..columns import _nfc, column_name
from ..format import LoadProblem, _check_header, _FileProblems
from .results import AGGREGATE_METADATA_KEY, FILE_COLUMN, ROW_COLUMN, AggregateRefused, AggregateResult
from .sources import _Source, _expand_source, _scan_files, _one_pass_per_folder, _table_source, _once_each
from .sql import GROUPED_TABLE, grouped_sql, _ordered, aggregate_sql, check_sql, _checks_in_groups, _replace_classes
from .duckdb_engine import _Engine, _ctrl_c_stops, _stop_if_asked, _DuckDB, _HeldGroups, _FetchedGroups
from .spark_engine import _Spark
from .checks import (
    _plan_for, _infer_classes, _run_checks, _checks_from_groups, _models_in_several_files, _suggest_resolution,
    _refusal, _check_options, _CSV_NOT_AS_HEADER, _engine_columns, _is_engine_error, _engine_problem,
    _check_model_names, _common_classes, _check_engine_options,
)

__all__ = [
    "AGGREGATE_METADATA_KEY",
    "AggregateResult",
    "AggregateRefused",
    "PERIODS",
    "aggregate",
    "aggregate_sql",
    "bytes_on_disk",
    "check_sql",
    "resolution_bound",
]


def aggregate(
    sources: str | Sequence[str],
    out: str | os.PathLike,
    *,
    engine: str = "duckdb",
    resolution: float | None = None,
    period: str | None = None,
    model: str | None = None,
    max_groups: int = DEFAULT_MAX_GROUPS,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    temp_directory: str | None = None,
    max_temp_size: str = DEFAULT_MAX_TEMP_SIZE,
    threads: int | None = None,
    spark=None,
    sum_tolerance: float = 1e-2,
    warn_tolerance: float = 1e-6,
    progress: Callable[[float], None] | None = None,
    roots: Sequence[str | os.PathLike] | None = None,
    stop: threading.Event | None = None,
) -> AggregateResult:
    """Aggregate prediction logs into one run file (Parquet) of weighted groups.

    Parameters
    ----------
    sources : str or sequence of str
        Each a Parquet or CSV file, a folder, a glob, a DuckDB table
        ``FILE.duckdb:TABLE`` (DuckDB engine) or a Spark catalog table
        ``table:NAME`` (Spark engine). A folder means what it means to
        ``load_runs``: its files are one model each (named after the file);
        a folder whose data lies only in sub-folders is one partitioned log
        (hive partitions such as ``split=val/`` become columns), as is any
        folder with ``model``. A glob is one log. Each source is one model
        unless it has a ``model`` column; the model name defaults to the file
        stem, folder or table name. A source named twice is read once; two
        sources that give the same model name are refused.
    out : path
        The aggregate, a Parquet file (written only when every check passes,
        to a temporary file renamed into place; never one of the inputs).
    engine : {"duckdb", "spark"}
    resolution : float, optional
        Round confidences *down* to multiples of this (e.g. 1e-4). Default:
        exact, every distinct confidence kept.
    period : {"day", "week", "month"}, optional
        Also group by the start of the ``timestamp``'s period (UTC), kept as
        the aggregate's ``timestamp`` column for monitoring.
    model : str, optional
        Model name of a single source without a ``model`` column.
    max_groups : int
        Refuse (with the count and a suggested resolution) above this many
        aggregate rows per source.
    memory_limit, temp_directory, max_temp_size, threads
        DuckDB's working memory cap (it spills to a temporary folder, deleted
        afterwards), that folder's size cap (default 10GB: a run beyond it
        stops with a message instead of filling the disk) and threads.
    spark : pyspark.sql.SparkSession, optional
        The session for ``engine="spark"``; default the active one, else
        ``local[2]`` on the loopback interface.
    sum_tolerance, warn_tolerance
        As in :func:`load_runs`.
    progress : callable, optional
        Called with the fraction done (0..1) during the aggregation (DuckDB).
    roots : sequence of paths, optional
        For a server: every data file, its links resolved, must lie in one of
        these folders (a linked file pointing elsewhere is refused).
    stop : threading.Event, optional
        Set it (e.g. from a signal handler) to stop: the running query is
        interrupted through the engine's own interrupt (DuckDB's, or Spark's
        cancellation of this aggregation's jobs), nothing is written and
        ``KeyboardInterrupt`` is raised. Set after the output was renamed into
        place, it changes nothing: that file is complete.

    Returns
    -------
    AggregateResult

    Raises
    ------
    AggregateRefused
        With the loader's problems (file, column, rows) when a source fails a
        check, or with the group count and a suggested resolution.
    """
    _check_options(engine, resolution, period, max_groups)
    started = time.perf_counter()
    sources = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    sources = [str(s) for s in sources]
    if model is not None and len(sources) > 1:
        raise ValueError("--model names the model of a single source; give one source, or use a model column")
    if model is not None:
        # Written as the loader reads a model cell (stripped, composed): an empty name was written, and the
        # aggregate then refused by the loader ("model is empty").
        model = _nfc(model.strip())
        if not model:
            raise ValueError("--model gives an empty model name; give a name, or leave --model out to name the "
                             "model after its source")
    _check_engine_options(engine, memory_limit, temp_directory, max_temp_size)
    problems: list[LoadProblem] = []
    named = _once_each([n for text in sources for n in _expand_source(text, model, problems)], problems)
    scanned, budget = [], FooterBudget()
    for item in named:
        source = _table_source(item.display, item.model, engine, problems) if item.table else (
            _scan_files(item, problems, roots, budget)
        )  # fmt: skip
        if source is not None:
            scanned.append(source)
    if any(p.severity == "error" for p in problems):
        raise AggregateRefused(problems)
    scanned = _one_pass_per_folder(scanned, engine)
    read = [*sources, *(f for s in scanned for f in s.files), *(s.database for s in scanned if s.database)]
    check_output(out, read, "the aggregate")
    if progress is not None:
        progress = _with_sqlglot(progress)
    # DuckDB's queries are built as its text directly; Spark's as sqlglot's expressions, rendered in its dialect.
    with _ctrl_c_stops(stop) as stop, building_for(engine):
        runner = (_DuckDB(memory_limit, temp_directory, threads, max_temp_size, stop, presort=len(scanned) == 1)
                  if engine == "duckdb" else _Spark(spark, stop))  # fmt: skip
        try:
            tables, plans, used, rows_read = [], [], [], 0
            for source in scanned:
                options = dict(resolution=None if resolution is None else float(resolution), period=period,
                               sum_tolerance=sum_tolerance, warn_tolerance=warn_tolerance, dialect=engine)  # fmt: skip
                try:
                    done = _aggregate_source(runner, source, problems, options, max_groups, progress)
                except Exception as exc:  # noqa: BLE001 - the engine's own errors become a sentence on the file
                    if not _is_engine_error(exc):
                        raise
                    problems.append(_engine_problem(source, exc, runner))
                    continue
                if done is not None:
                    table, plan, rows = done
                    rows_read += rows
                    tables.append(table)
                    plans.append(plan)
                    used.append(source)
            if any(p.severity == "error" for p in problems) or not tables:
                raise AggregateRefused(problems or [LoadProblem(", ".join(sources), "nothing to aggregate")])
            _check_model_names(runner, tables, used, problems)
            classes = _common_classes(plans, problems, [s.display for s in used])
            result = AggregateResult(
                path=str(out), engine=engine, source_rows=rows_read, groups=sum(t.num_rows for t in tables),
                resolution=plans[0].resolution, period=period, classes=classes,
                kind="top_label" if plans[0].top_label or plans[0].resolution is not None else "proba",
                seconds=0.0, problems=tuple(p for p in problems if p.severity != "error"),
            )  # fmt: skip
            _write(runner, tables, plans, out, result, stop)
        except BaseException:
            _stop_if_asked(stop)  # what fails once a stop is asked (a cancelled job, an interrupted query) is the stop
            raise
        finally:
            runner.close()
    return _finished(result, time.perf_counter() - started, getattr(runner, "spilled_bytes", 0))


def _with_sqlglot(progress: Callable[[float], None]) -> Callable[[float], None]:
    """``progress`` called as outside any aggregation: the caller's code that builds SQL (``check_sql``,
    ``aggregate_sql``) gets sqlglot's expressions, whatever this aggregation builds with."""

    def report(fraction: float) -> None:
        with building_for("sqlglot"):
            progress(fraction)

    return report


def _aggregate_source(
    runner: _Engine, source: _Source, problems: list[LoadProblem], options: dict, max_groups, progress
):
    """(aggregate table, plan, rows read) of one source, or None after adding its problems. The table is
    an Arrow table in the output's order, or (DuckDB) the :class:`_HeldGroups` the engine keeps."""
    runner.bind(source)
    described = _engine_columns(runner)
    # The engine's names, as the file spells them (DuckDB trims the spaces around a CSV header's names, not
    # its tabs): the SQL reads each column under its own; the plan, the checks and the output use its name.
    engine_names = [name for name, _ in described if name not in (FILE_COLUMN, ROW_COLUMN)]
    if source.format in ("duckdb_table", "spark_table"):
        where = _FileProblems(source.display)
        if not _check_header(engine_names, where):
            problems.extend(where.items)
            return None
        source = _with_engine_columns(source, described)
    elif source.format == "csv":
        missing = [c for c in source.columns if c not in set(map(column_name, engine_names))]
        if missing:
            problems.append(LoadProblem(source.display, _CSV_NOT_AS_HEADER, missing[0]))
            return None
    source_names = {column_name(name): name for name in engine_names if column_name(name) != name}
    plan = _plan_for(source, problems, source_names=source_names, **options)
    if plan is None:
        return None
    if plan.classes is None:
        classes = _infer_classes(runner, plan, source, problems)
        if classes is None:
            return None
        plan = _replace_classes(plan, classes)
    if not _checks_in_groups(plan):
        problems.extend(_run_checks(runner, plan, source))
        if any(p.severity == "error" for p in problems):
            return None
    # Grouped in the engine (spilling if need be), counted there: DuckDB keeps the groups (only counts come
    # into this process), Spark hands over at most a table within the budget. The checks are counted in
    # the same pass; the rows they name are looked up only when a count says so.
    table = runner.groups(plan, max_groups + 1, progress)
    within_budget = table.num_rows <= max_groups
    if not within_budget and not runner.holds_groups:  # the refusal counts every group: the engine keeps them
        runner.materialize(GROUPED_TABLE, grouped_sql(plan), progress)
    groups = runner if runner.holds_groups else _FetchedGroups(table)
    try:
        problems.extend(_checks_from_groups(runner, plan, source, groups))
        if plan.file_models and plan.has("model"):
            problems.extend(_models_in_several_files(runner, plan, source))
        if any(p.severity == "error" for p in problems):
            return None
        if not within_budget:
            (count,) = groups.rows(f"SELECT COUNT(*) FROM {GROUPED_TABLE}")[0]
            suggestion = (None, None) if plan.resolution is not None else _suggest_resolution(groups, plan, max_groups)
            problems.append(_refusal(source, int(count), max_groups, suggestion))
            return None
    finally:
        if groups is not runner:
            groups.close()
    if isinstance(table, _HeldGroups):
        return runner.keep(table), plan, table.source_rows
    import pyarrow.compute as pc

    rows = pc.sum(table.column("n_rows")).as_py() if table.num_rows else 0
    return _ordered(table, plan), plan, int(rows)


def _with_engine_columns(source: _Source, described: list[tuple[str, str]]) -> _Source:
    """A table source's columns, as the engine ``described`` them (name, SQL type), named by ``column_name``."""
    kinds = {}
    for engine_name, sql_type in described:
        name = column_name(engine_name)
        t = sql_type.upper()
        if "TIMESTAMP" in t or t == "DATE":
            kinds[name] = "time"
        elif any(k in t for k in ("INT", "DOUBLE", "FLOAT", "DECIMAL", "REAL", "NUMERIC")):
            kinds[name] = "number"
        elif "BOOL" in t:
            kinds[name] = "bool"
        else:
            kinds[name] = "text"
    columns = tuple(column_name(n) for n, _ in described if n not in (FILE_COLUMN, ROW_COLUMN))
    return _Source(display=source.display, model=source.model, format=source.format, table=source.table,
                   database=source.database, columns=columns, column_types=kinds)  # fmt: skip


def _finished(result: AggregateResult, seconds: float, spilled_bytes: int) -> AggregateResult:
    """``result`` with the wall time and the peak spill, write included."""
    from dataclasses import replace

    return replace(result, seconds=seconds, spilled_bytes=spilled_bytes)


def _write(runner: _Engine, tables, plans, out, result: AggregateResult, stop=None) -> None:
    """One Parquet file, sources concatenated, with what was done in its metadata; a stop asked before
    the rename leaves nothing."""
    if all(isinstance(t, _HeldGroups) for t in tables):  # DuckDB sorts and writes the groups it kept
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        metadata = json.dumps(result.metadata)
        write_atomically(out, lambda partial: runner.write(tables, plans, partial, metadata),
                         before_rename=lambda: _stop_if_asked(stop))
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = tables[0].schema.names
    table = pa.concat_tables([t.select(names).cast(tables[0].schema) for t in tables]) if len(tables) > 1 else tables[0]
    if plans[0].period is not None:
        table = table.set_column(
            table.schema.get_field_index("timestamp"), "timestamp", table["timestamp"].cast(pa.timestamp("us"))
        )
    metadata = dict(table.schema.metadata or {})
    metadata[AGGREGATE_METADATA_KEY] = json.dumps(result.metadata).encode()
    table = table.replace_schema_metadata(metadata)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    write_atomically(out, lambda partial: pq.write_table(table, partial), before_rename=lambda: _stop_if_asked(stop))


# --------------------------------------------------------- the resolution bound
def resolution_bound(run, values) -> float:
    """How much total value a confidence grid can cost against the exact optimum.

    On an aggregate whose confidences were rounded *down* to a grid, a
    threshold on the grid accepts exactly the raw items it would accept
    (``floor(c) >= t`` iff ``c >= t`` for grid ``t``), so the best grid
    threshold's value is exact. What the grid hides is a threshold *inside* a
    grid cell. The exact optimum accepts every cell above some cell ``g`` and
    part of ``g``; that part can add at most ``max(v_correct - v_abstain, 0)``
    per correct item of ``g`` (and ``max(v_wrong - v_abstain, 0)`` per wrong
    one). So the exact optimum is at most
    ``max_g [value(cells above g) + gain bound of g]``, and this function
    returns that bound minus the best grid value: an upper bound, in
    ``values``' currency, on what the grid costs. It is computed from the
    cells whatever their width; on an exact aggregate it still counts a
    (never used) split of a confidence group, so it is only meaningful with
    a resolution.

    Parameters
    ----------
    run : SortedRun
        The (labelled) aggregate run, as :func:`presort` returns it.
    values : UseCase
        The use case a single threshold is tuned for.

    Returns
    -------
    float
        Non-negative, in total value; divide by ``run.total_weight`` for a
        per-item figure.
    """
    # Imported here: an aggregation itself needs neither numpy nor the engine (0.1 s of a fresh process).
    import numpy as np

    from ..._engine.sorting import cumulative_gain

    if run.cum_correct is None:
        raise ValueError("the resolution bound needs true labels (y_true)")
    cum = cumulative_gain(run, values)  # value over abstaining, per prefix
    gain_correct = values.gain_correct
    gain_wrong = values.gain_wrong
    best_grid = float(np.max(cum))
    cell_correct = np.diff(run.cum_correct)
    cell_wrong = np.diff(run.cum_wrong)
    inside = cum[:-1] + max(gain_correct, 0.0) * cell_correct + max(gain_wrong, 0.0) * cell_wrong
    upper = max(best_grid, float(np.max(inside, initial=-np.inf)))
    return max(upper - best_grid, 0.0)


def read_aggregate_metadata(path: str | os.PathLike) -> dict | None:
    """What :func:`aggregate` recorded in a file, or None for an ordinary run file."""
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_schema(path).metadata or {}
    except Exception:  # noqa: BLE001 - not Parquet, or unreadable: not an aggregate
        return None
    raw = metadata.get(AGGREGATE_METADATA_KEY)
    return None if raw is None else json.loads(raw)
