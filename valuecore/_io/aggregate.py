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
"""

from __future__ import annotations

import contextlib
import glob as globlib
import json
import math
import os
import re
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np

from .aggregate_options import (
    DEFAULT_MAX_GROUPS,
    DEFAULT_MAX_TEMP_SIZE,
    DEFAULT_MEMORY_LIMIT,
    ENGINES,
    PERIODS,
    bytes_on_disk,
)
from .limits import clip_text
from .paths import check_output, outside_roots, write_atomically
from .._engine.sorting import cumulative_gain
from .columns import (
    NOT_A_NUMBER,
    PROBA_PREFIX,
    SPECS,
    UNKNOWN_LABELS,
    Dialect,
    RowRule,
    rule_sql,
    rules_of,
    spec_of,
    sql_is_nan,
)
from .runfiles import (
    DEFAULT_SPLIT,
    MAX_GROUPS,
    NUMERIC_MISSING,
    PARQUET_SUFFIXES,
    SHOWN_COLUMNS,
    SHOWN_ROWS,
    OUTSIDE_ROOTS,
    LoadProblem,
    csv_header,
    first_line,
    _check_header,
    _check_plain_cells,
    _FileProblems,
    _run_kind,
    _short_list,
    _warn_unknown_columns,
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

AGGREGATE_METADATA_KEY = b"valuecore.aggregate"
CANDIDATE_RESOLUTIONS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
# The view every engine exposes: the source's columns plus where each row comes from.
SOURCE_VIEW = "source_rows"
FILE_COLUMN = "__file"
ROW_COLUMN = "__row"  # 0-based data row within its file; NULL when the engine cannot tell
# What the grouping reads: the same rows, where each comes from only if the grouping asks (Spark's Parquet scan
# otherwise reads every row's index and file path for a grouping that never uses them).
CELLS_VIEW = "source_cells"
# 1 - 2^-52: x times it is the largest double below x, or the one below that (x > 0, not subnormal).
_JUST_BELOW_ONE = "CAST(0.9999999999999998 AS DOUBLE)"  # Spark reads a bare 0.99... as a DECIMAL


# --------------------------------------------------------------- results
class AggregateRefused(ValueError):
    """The source cannot be aggregated as asked; ``problems`` say why (file, column, rows)."""

    def __init__(self, problems: Sequence[LoadProblem]):
        self.problems = tuple(problems)
        errors = [p for p in self.problems if p.severity == "error"] or list(self.problems)
        super().__init__("; ".join(str(p) for p in errors[:3]))


@dataclass(frozen=True)
class AggregateResult:
    """What :func:`aggregate` wrote.

    Attributes
    ----------
    path : str
        The aggregate Parquet file.
    engine : {"duckdb", "spark"}
    source_rows : int
        Rows read from the sources.
    groups : int
        Rows of the aggregate.
    resolution : float or None
        Confidences were rounded down to multiples of this; None = exact.
    period : str or None
        Time bucket of the ``timestamp`` column, if any.
    classes : tuple of str
    kind : {"proba", "top_label"}
        Whether the aggregate keeps mean probability vectors.
    seconds : float
        Wall time.
    problems : tuple of LoadProblem
        Warnings (errors refuse instead).
    spilled_bytes : int
        Peak bytes on disk of DuckDB's spill folder, sampled every 0.1 s
        (0 when nothing spilled, and with Spark). Not in the file's metadata.
    """

    path: str
    engine: str
    source_rows: int
    groups: int
    resolution: float | None
    period: str | None
    classes: tuple[str, ...]
    kind: str
    seconds: float
    problems: tuple[LoadProblem, ...] = ()
    spilled_bytes: int = 0  # peak size of DuckDB's spill folder (sampled); 0 for Spark

    @property
    def metadata(self) -> dict:
        return {
            "format": 1,
            "engine": self.engine,
            "source_rows": self.source_rows,
            "groups": self.groups,
            "resolution": self.resolution,
            "period": self.period,
            "kind": self.kind,
            "classes": list(self.classes),
        }


# -------------------------------------------------------------- the sources
@dataclass(frozen=True)
class _Source:
    """One SOURCE argument: the files (or table) it names and their columns."""

    display: str
    model: str
    format: str  # "parquet", "csv", "duckdb_table" or "spark_table"
    files: tuple[str, ...] = ()
    base: str | None = None  # folder of a hive-partitioned dataset
    table: str | None = None
    database: str | None = None
    columns: tuple[str, ...] = ()
    column_types: dict = field(default_factory=dict)  # name -> "number", "text" or "time"
    rows: int | None = None
    folder: str | None = None  # the folder of run files this file was found in (one model per file)
    file_models: tuple[tuple[str, str], ...] = ()  # (file, model) when several run files are read in one pass


def _is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def _data_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """(data files, other files) under ``folder``, recursively; hidden and ``_``-prefixed parts skipped."""
    data, other = [], []
    for p in sorted(folder.rglob("*")):
        if any(part.startswith((".", "_")) for part in p.relative_to(folder).parts) or not p.is_file():
            continue
        (data if p.suffix.lower() in PARQUET_SUFFIXES + (".csv",) else other).append(p)
    return data, other


@dataclass(frozen=True)
class _Named:
    """One source as the command line names it: a file, a glob, a partitioned folder or a table."""

    display: str
    model: str | None  # None: from the file name (or the model column)
    files: tuple[Path, ...] = ()
    base: Path | None = None  # folder of a partitioned log (its hive keys become columns)
    table: bool = False
    folder: str | None = None  # set for each run file of a folder of run files


def _expand_source(text: str, model: str | None, problems: list[LoadProblem]) -> list[_Named]:
    """What SOURCE means, the same to every command: a folder of run files is one model per file
    (as ``load_runs`` reads it); a folder whose data lies only in sub-folders (hive partitions such
    as ``split=val/``) is one partitioned log; ``--model NAME`` makes any folder one log."""
    if _is_table(text):
        return [_Named(text, model, table=True)]
    where = _FileProblems(text)
    path = Path(text)
    named: list[_Named] = []
    if not text.strip():
        where.add("an empty path names no file or folder; give a path")
    elif _is_glob(text):
        files = tuple(Path(p) for p in sorted(globlib.glob(text, recursive=True)) if Path(p).is_file())
        if files:
            named.append(_Named(text, model or _default_model_name(text), files))
        else:
            where.add("holds no .parquet or .csv files")
    elif path.is_dir():
        files, other = _data_files(path)
        if other:
            names = _short_list([o.name for o in other])
            where.add(f"ignored {len(other)} file(s) that are not .parquet or .csv data: {names}", severity="warning")
        top = [f for f in files if f.parent == path]
        if not files:
            where.add("holds no .parquet or .csv files")
        elif model is not None or not top:
            named.append(_Named(text, model or path.name, tuple(files), base=path))
        elif len(top) < len(files):
            where.add(
                "holds data files both directly and in sub-folders: read as run files (one model per file) it "
                "would skip the sub-folders; give the files or sub-folders separately, or --model NAME to read "
                "the whole folder as one model's log"
            )
        elif all(f.name.lower().startswith(("part-", "part_")) for f in top):
            # Parts of one log (as Spark and DuckDB write them), not run files of separate models.
            named.append(_Named(text, path.name, tuple(files), base=path))
            where.add(
                f"its files are parts (part-...) of one log, read as one model {path.name!r} (unless a model column "
                "names the models); give --model NAME to name it",
                severity="warning",
            )
        else:
            named.extend(_Named(str(f), None, (f,), folder=text) for f in top)
    elif path.exists():
        named.append(_Named(text, model, (path,)))
    else:
        where.add("no such file, folder or table")
    problems.extend(where.items)
    return named


def _hive_keys(file: Path, base: Path | None) -> list[tuple[str, str]]:
    if base is None:
        return []
    parts = file.relative_to(base).parts[:-1]
    return [tuple(part.split("=", 1)) for part in parts if "=" in part]


def _arrow_kind(arrow_type) -> str:
    import pyarrow as pa

    if pa.types.is_timestamp(arrow_type) or pa.types.is_date(arrow_type):
        return "time"
    if pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
        return "number"
    if pa.types.is_boolean(arrow_type):
        return "bool"
    return "text"


def _scan_parquet(file: Path, problems: _FileProblems):
    """(columns, kinds, rows) from the Parquet footer only, or None after reporting."""
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(file)
        schema = meta.schema_arrow
        rows = meta.metadata.num_rows
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for bad bytes
        problems.add(f"is not a readable Parquet file ({exc})")
        return None
    if not _check_header(schema.names, problems) or not _check_plain_cells(schema, problems):
        return None
    return [f.name for f in schema], {f.name: _arrow_kind(f.type) for f in schema}, rows


def _scan_csv(file: Path, problems: _FileProblems):
    """(columns, kinds, rows) from a CSV's header, reading its first line at most ``max_header_bytes``."""
    try:
        with open(file, "rb") as handle:
            first = first_line(handle, problems)
            header = None if first is None else csv_header(first, problems)
            if header is None:
                return None
            # Lines are counted by blocks: one very long line never sits in memory whole.
            rows, data, last = 0, False, b"\n"
            for block in iter(lambda: handle.read(1 << 20), b""):
                rows += block.count(b"\n")
                data = data or bool(block.strip())
                last = block[-1:]
            rows += last != b"\n"
    except OSError as exc:
        problems.add(f"cannot be read: {exc.strerror or exc}")
        return None
    return header, {name: "text" for name in header}, rows if data else 0


def _is_parquet(file: Path) -> bool:
    if file.suffix.lower() in PARQUET_SUFFIXES:
        return True
    with open(file, "rb") as handle:
        return handle.read(4) == b"PAR1"


def _scan_files(named: _Named, problems: list[LoadProblem], roots=None) -> _Source | None:
    """Check every file of one SOURCE from its footer or header: readable, same columns."""
    text, files, base = named.display, list(named.files), named.base
    first_columns: list[str] | None = None
    kinds: dict = {}
    total = 0
    good: list[str] = []
    fmt = None
    for file in files:
        file_problems = _FileProblems(str(file))
        scanned, this_format = None, fmt
        if outside_roots(file, roots):
            file_problems.add(OUTSIDE_ROOTS)
        else:
            try:
                this_format = "parquet" if _is_parquet(file) else "csv"
            except OSError as exc:
                file_problems.add(f"cannot be read: {exc.strerror or exc}")
            else:
                scan = _scan_parquet if this_format == "parquet" else _scan_csv
                scanned = scan(file, file_problems)
        if scanned is not None and fmt is not None and this_format != fmt:
            file_problems.add(f"is {this_format} but the other files of {text} are {fmt}; use one format")
            scanned = None
        if scanned is not None:
            columns, file_kinds, rows = scanned
            hive = _hive_keys(file, base)
            columns = [c.strip() for c in columns] + [k for k, _ in hive if k not in columns]
            file_kinds = {k.strip(): v for k, v in file_kinds.items()} | {k: "text" for k, _ in hive}
            if first_columns is None:
                first_columns, kinds, fmt = columns, file_kinds, this_format
            elif set(columns) != set(first_columns):
                missing = [c for c in first_columns if c not in columns]
                extra = [c for c in columns if c not in first_columns]
                file_problems.add(
                    f"has other columns than {good[0] if good else files[0]} (missing {_short_list(missing)}, "
                    f"extra {_short_list(extra)}); all files of a dataset need the same columns",
                    column=(missing or extra)[0],
                )
            else:
                for name, kind in file_kinds.items():
                    if kinds.get(name) != kind:
                        kinds[name] = "text" if "text" in (kind, kinds.get(name)) else kind
            if not file_problems.has_errors:
                if rows == 0:
                    file_problems.add("file has a header but no data rows", severity="warning")
                else:
                    good.append(str(file))
                total += rows
        problems.extend(file_problems.items)
    if any(p.severity == "error" for p in problems) or first_columns is None:
        return None
    if total == 0:
        problems.append(LoadProblem(text, "file has a header but no data rows"))
        return None
    name = named.model or _default_model_name(text)
    return _Source(
        display=text, model=name, format=fmt, files=tuple(good), base=None if base is None else str(base),
        columns=tuple(first_columns), column_types=kinds, rows=total, folder=named.folder,
    )  # fmt: skip


def _one_pass_per_folder(sources: list[_Source], engine: str) -> list[_Source]:
    """The run files of one folder that share their format and columns, read in one pass (DuckDB):
    the model of each row is still its file's (or its model column's), named by ``file_models``."""
    if engine != "duckdb":
        return sources  # Spark names files by URI: each run file keeps its own pass
    merged: list[_Source] = []
    groups: dict[tuple, list[_Source]] = {}
    for source in sources:
        if source.folder is None or not source.files:
            merged.append(source)
            continue
        key = (source.folder, source.format, frozenset(source.columns))
        if key not in groups:
            groups[key] = []
            merged.append(key)  # the group's place in the order
        groups[key].append(source)
    result = []
    for item in merged:
        if isinstance(item, _Source):
            result.append(item)
            continue
        members = groups[item]
        models = [m.model for m in members]
        if len(members) == 1 or len(set(models)) < len(models):
            result.extend(members)  # a repeated name is refused later, naming both files
            continue
        kinds: dict = {}
        for member in members:
            for name, kind in member.column_types.items():
                kinds[name] = kind if kinds.get(name, kind) == kind else "text"
        result.append(
            _Source(
                display=item[0], model=members[0].model, format=item[1], files=tuple(m.files[0] for m in members),
                columns=members[0].columns, column_types=kinds, rows=sum(m.rows or 0 for m in members),
                folder=item[0], file_models=tuple((m.files[0], m.model) for m in members),
            )
        )  # fmt: skip
    return result


def _default_model_name(text: str) -> str:
    """A model name from a SOURCE: the file stem, the folder name, or a glob's folder."""
    path = Path(text)
    if _is_glob(text):
        fixed = [p for p in path.parts if not _is_glob(p)]
        path = Path(*fixed) if fixed else Path("model")
        return path.name or "model"
    return path.stem if path.suffix else path.name


def _table_source(text: str, model: str | None, engine: str, problems: list[LoadProblem]) -> _Source | None:
    """``table:NAME`` (Spark catalog) or ``FILE.duckdb:TABLE`` / ``FILE.db:TABLE`` (DuckDB)."""
    if text.startswith("table:"):
        if engine != "spark":
            problems.append(LoadProblem(text, "a catalog table (table:NAME) needs --engine spark"))
            return None
        table = text[len("table:") :]
        return _Source(display=text, model=model or table.split(".")[-1], format="spark_table", table=table)
    database, table = text.rsplit(":", 1)
    if engine != "duckdb":
        problems.append(LoadProblem(text, "a DuckDB database table needs --engine duckdb"))
        return None
    if not Path(database).is_file():
        problems.append(LoadProblem(text, "no such DuckDB database file"))
        return None
    return _Source(display=text, model=model or table.split(".")[-1], format="duckdb_table", table=table,
                   database=database)  # fmt: skip


def _is_table(text: str) -> bool:
    if text.startswith("table:"):
        return True
    head, _, tail = text.rpartition(":")
    return bool(tail) and Path(head).suffix.lower() in (".duckdb", ".db", ".ddb")


# ---------------------------------------------------------------- the SQL
def _q(name: str) -> str:
    """A quoted identifier; both engines read double quotes (Spark with doubleQuotedIdentifiers)."""
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class _Plan:
    """Everything the SQL needs to know about one source."""

    columns: tuple[str, ...]
    column_types: dict
    classes: tuple[str, ...] | None  # None until inferred for a top-label source
    proba_columns: tuple[str, ...]
    model: str
    resolution: float | None = None
    period: str | None = None
    sum_tolerance: float = 1e-2
    warn_tolerance: float = 1e-6
    file_models: tuple[tuple[str, str], ...] = ()
    dialect: Dialect = "duckdb"  # the engine's: one function (NaN) is spelled apart

    @property
    def top_label(self) -> bool:
        return not self.proba_columns

    def has(self, column: str) -> bool:
        return column in self.columns


def _number(plan: _Plan, column: str) -> str:
    """A column as DOUBLE; text (CSV) is trimmed and the loader's missing spellings are NULL."""
    if plan.column_types.get(column) in ("number", "bool", None):
        return f"CAST({_q(column)} AS DOUBLE)"
    missing = ", ".join(_lit(m) for m in NUMERIC_MISSING)
    text = f"TRIM(CAST({_q(column)} AS STRING))"
    return f"(CASE WHEN {text} IN ({missing}) THEN NULL ELSE TRY_CAST({text} AS DOUBLE) END)"


def _not_a_number(plan: _Plan, column: str) -> str | None:
    """Rows whose text is not a number, or None when the column is numeric."""
    if plan.column_types.get(column) in ("number", "bool", None):
        return None
    missing = ", ".join(_lit(m) for m in NUMERIC_MISSING)
    text = f"TRIM(CAST({_q(column)} AS STRING))"
    return f"COALESCE({text} NOT IN ({missing}) AND TRY_CAST({text} AS DOUBLE) IS NULL, FALSE)"


def _text(plan: _Plan, column: str) -> str:
    """A label-like column as trimmed text, NULL when empty; whole-number floats read as integers."""
    q = _q(column)
    if plan.column_types.get(column) == "number":
        as_text = (
            f"CASE WHEN CAST({q} AS DOUBLE) = FLOOR(CAST({q} AS DOUBLE)) AND ABS(CAST({q} AS DOUBLE)) < 1e15 "
            f"THEN CAST(CAST({q} AS BIGINT) AS STRING) ELSE CAST({q} AS STRING) END"
        )
    else:
        as_text = f"CAST({q} AS STRING)"
    return f"NULLIF(TRIM({as_text}), '')"


def _class_of(plan: _Plan, column: str) -> str:
    """A label column mapped to its class name; NULL when empty or not a class."""
    if plan.column_types.get(column) == "number" and all(_is_integer_text(c) for c in plan.classes):
        # A number equals the integer class c exactly when its text (the integer's digits) would: compared as
        # a number, without making text of every row.
        value = f"CAST({_q(column)} AS DOUBLE)"
        cases = " ".join(f"WHEN {value} = {int(c)} THEN {_lit(c)}" for c in plan.classes)
        return f"(CASE {cases} ELSE NULL END)"
    text = _text(plan, column)
    cases = []
    for c in plan.classes:
        condition = f"{text} = {_lit(c)}"
        if _is_integer_text(c):
            condition += f" OR TRY_CAST({text} AS DOUBLE) = {int(c)}"
        cases.append(f"WHEN {condition} THEN {_lit(c)}")
    return f"(CASE {' '.join(cases)} ELSE NULL END)"


def _is_integer_text(text: str) -> bool:
    try:
        return str(int(text)) == text and abs(int(text)) < 10**15
    except ValueError:
        return False


def _is_nan(plan: _Plan, expression: str) -> str:
    return sql_is_nan(expression, plan.dialect)


def _raw_confidence(plan: _Plan) -> str:
    if plan.top_label:
        return _number(plan, "confidence")
    return "GREATEST(" + ", ".join(_number(plan, c) for c in plan.proba_columns) + ")"


def _rounded(expression: str, resolution: float | None) -> str:
    """Round down to a multiple of ``resolution``, guarding the division's round-off both ways."""
    if resolution is None:
        return expression
    r = f"CAST({float(resolution)!r} AS DOUBLE)"  # Spark reads a bare 0.001 as a DECIMAL
    k = f"FLOOR(({expression}) / {r})"
    return (
        f"(CASE WHEN ({k} + 1) * {r} <= ({expression}) THEN ({k} + 1) * {r} "
        f"WHEN {k} * {r} > ({expression}) THEN ({k} - 1) * {r} ELSE {k} * {r} END)"
    )


def _predicted(plan: _Plan, confidence: str) -> str:
    """The predicted class: the first column holding the maximum (numpy's argmax)."""
    if plan.top_label:
        return _class_of(plan, "y_pred")
    cases = " ".join(
        f"WHEN {_number(plan, c)} = {confidence} THEN {_lit(c[len('proba_') :])}" for c in plan.proba_columns
    )
    return f"(CASE {cases} END)"


def _predicted_index(plan: _Plan, confidence: str) -> str:
    """The predicted column's position (0, 1, ...): the first column holding the maximum."""
    cases = " ".join(f"WHEN {_number(plan, c)} = {confidence} THEN {i}" for i, c in enumerate(plan.proba_columns))
    return f"(CASE {cases} END)"


def _keeps_means(plan: _Plan) -> bool:
    """Whether the aggregate keeps the mean probability vectors (probability sources at full resolution)."""
    return not plan.top_label and plan.resolution is None


def _group_text(plan: _Plan, column: str, default: str) -> str:
    if plan.has(column):
        return _text(plan, column)
    if column == "model" and plan.file_models:  # several run files in one pass: each file's own model
        cases = " ".join(f"WHEN {_lit(file)} THEN {_lit(model)}" for file, model in plan.file_models)
        return f"(CASE {FILE_COLUMN} {cases} END)"
    return _lit(default)


def _period(plan: _Plan) -> str | None:
    if plan.period is None:
        return None
    if plan.column_types.get("timestamp") == "time":
        stamp = f"CAST({_q('timestamp')} AS TIMESTAMP)"
    else:
        stamp = f"TRY_CAST(TRIM(CAST({_q('timestamp')} AS STRING)) AS TIMESTAMP)"
    return f"date_trunc({_lit(plan.period)}, {stamp})"


def _rows_sql(plan: _Plan) -> str:
    """Per-row derived columns, the common base of the checks and the aggregate."""
    raw = _raw_confidence(plan)
    parts = [
        f"{_group_text(plan, 'model', plan.model)} AS model",
        f"{_group_text(plan, 'split', DEFAULT_SPLIT)} AS split",
        f"{_class_of(plan, 'y_true') if plan.has('y_true') else 'CAST(NULL AS STRING)'} AS y_true",
        f"{_predicted_index(plan, raw)} AS predicted" if _keeps_means(plan) else f"{_predicted(plan, raw)} AS y_pred",
        f"{_rounded(raw, plan.resolution)} AS confidence",
        f"{_number(plan, 'weight') if plan.has('weight') else 'CAST(1.0 AS DOUBLE)'} AS w",
    ]
    if plan.period is not None:
        parts.append(f"{_period(plan)} AS period")
    if _keeps_means(plan):
        parts += [f"{_number(plan, c)} AS {_q(c)}" for c in plan.proba_columns]
    if not _checks_in_groups(plan):
        return f"SELECT {', '.join(parts)}, CAST(NULL AS INT) AS bad FROM {CELLS_VIEW}"
    # The loader's checks ride along with the grouping (counted per group): no pass of their own.
    bad = [f"({c.bad})" for c in _checks(plan)]
    if plan.top_label:
        parts.append(f"CASE WHEN {' OR '.join(bad) if bad else 'FALSE'} THEN 1 END AS bad")
    else:
        # A row failing a check has an infinite deviation, so one running maximum per group tells a failing row
        # (or a row sum off by more than the tolerance: an error too) from rows off within it, with no count of
        # its own. A row reaching the sum passed every check: its cells are numbers, finite and not negative.
        total = " + ".join(_number(plan, c) for c in plan.proba_columns)
        failed = " OR ".join(bad) if bad else "FALSE"
        parts.append(f"CASE WHEN {failed} THEN {_INFINITE} ELSE ABS(({total}) - 1) END AS deviation")
    return f"SELECT {', '.join(parts)} FROM {CELLS_VIEW}"


_INFINITE = "CAST('Infinity' AS DOUBLE)"


GROUPED_TABLE = "grouped_rows"


def _keys(plan: _Plan) -> list[str]:
    return ["model", "split"] + (["period"] if plan.period is not None else []) + ["y_pred", "confidence", "y_true"]


def _constant_keys(plan: _Plan) -> dict[str, str]:
    """Keys that are one literal for the whole source (no model or split column): selected beside the
    groups, not hashed into every one of them."""
    constant = {}
    if not plan.has("model") and not plan.file_models:
        constant["model"] = _lit(plan.model)
    if not plan.has("split"):
        constant["split"] = _lit(DEFAULT_SPLIT)
    return constant


def grouped_sql(plan: _Plan) -> str:
    """The aggregation, one SQL text for DuckDB and Spark.

    One row per (model, split[, period], predicted class, confidence, true
    class): the summed weight, the number of raw rows, the loader's checks
    (top-label sources: ``n_bad``, the rows failing one; probability sources:
    ``worst``, the worst row-sum deviation, infinite when a row fails another
    check, and ``n_off``, the rows off by more than the warning tolerance) and, for probability
    sources at full resolution, the weighted mean probability vector, in
    which the predicted class keeps exactly the group's confidence and
    round-off can never move the argmax: a class after the predicted one
    (a tie goes to the first column) is capped at the confidence, a class
    before it just below (every one of its rows lies strictly below). The
    caps cost no running maximum per column, so the engine keeps as many
    running values per group as a plain ``AVG`` per column would.
    """
    constant = _constant_keys(plan)
    keys = _keys(plan)
    if _keeps_means(plan):
        keys = ["predicted" if k == "y_pred" else k for k in keys]  # the column's position, named after grouping
    select = [f"{constant[k]} AS {k}" if k in constant else k for k in keys]
    if _keeps_means(plan):
        for index, column in enumerate(plan.proba_columns):
            if plan.has("weight"):
                mean = f"CASE WHEN SUM(w) > 0 THEN SUM(w * {_q(column)}) / SUM(w) ELSE AVG({_q(column)}) END"
            else:  # every weight is 1: the same mean with one running sum per column instead of three
                mean = f"SUM({_q(column)}) / CAST(COUNT(*) AS DOUBLE)"
            select.append(f"{mean} AS __mean_{index}")
    select += ["SUM(w) AS weight" if plan.has("weight") else "CAST(COUNT(*) AS DOUBLE) AS weight", "COUNT(*) AS n_rows"]
    if not plan.top_label and _checks_in_groups(plan):
        select += [  # a failing row counts in n_off too: read only when no row failed
            "MAX(deviation) AS worst",
            f"COUNT(CASE WHEN deviation > {plan.warn_tolerance!r} THEN 1 END) AS n_off",
        ]
    else:
        select.append("COUNT(bad) AS n_bad")  # a count keeps 8 bytes per group, where an integer SUM keeps 16
    grouped = (
        f"WITH item_rows AS ({_rows_sql(plan)}) SELECT {', '.join(select)} FROM item_rows "
        f"GROUP BY {', '.join(k for k in keys if k not in constant)}"
    )
    if not _keeps_means(plan):
        return grouped
    # Per group, not per row: the predicted class's name, and the caps that keep the argmax where it was.
    names = " ".join(f"WHEN {i} THEN {_lit(c[len('proba_') :])}" for i, c in enumerate(plan.proba_columns))
    outer = [k if k != "predicted" else f"CASE predicted {names} END AS y_pred" for k in keys]
    for index, column in enumerate(plan.proba_columns):
        mean = f"__mean_{index}"
        outer.append(
            f"CASE WHEN predicted = {index} THEN confidence WHEN predicted < {index} THEN LEAST({mean}, confidence) "
            f"ELSE LEAST({mean}, confidence * {_JUST_BELOW_ONE}) END AS {_q(column)}"
        )
    outer += ["weight", "n_rows"] + (["worst", "n_off"] if _checks_in_groups(plan) else ["n_bad"])
    return f"SELECT {', '.join(outer)} FROM ({grouped}) AS per_group"


def _output_names(plan: _Plan) -> list[str]:
    """The aggregate file's columns, in order."""
    names = ["model", "split"] + (["timestamp"] if plan.period is not None else []) + ["y_true"]
    names += ["y_pred", "confidence"] if plan.top_label or plan.resolution is not None else list(plan.proba_columns)
    return names + ["weight"]


def _output_columns(plan: _Plan) -> list[str]:
    return ["period AS timestamp" if n == "timestamp" else _q(n) for n in _output_names(plan)]


def output_sql(plan: _Plan, table: str = GROUPED_TABLE) -> str:
    """The run-file columns of the grouped table, in a fixed order (identical from both engines)."""
    select = _output_columns(plan)
    order = ["model", "split"] + (["period"] if plan.period is not None else [])
    order += ["y_pred", "confidence DESC", "y_true"]
    return f"SELECT {', '.join(select)} FROM {table} ORDER BY {', '.join(o + ' NULLS LAST' for o in order)}"


def _ordered(groups, plan: _Plan):
    """The run-file columns of groups fetched from Spark in the order of :func:`output_sql`, sorted by Arrow in
    this process: the cluster only hands over the (budgeted) groups, with no distributed sort of its own
    (DuckDB sorts and writes its groups itself, :func:`written_sql`)."""
    import pyarrow.compute as pc

    keys = [("model", "ascending"), ("split", "ascending")]
    keys += [("period", "ascending")] if plan.period is not None else []
    keys += [("y_pred", "ascending"), ("confidence", "descending"), ("y_true", "ascending")]
    names = ["model", "split"] + (["period"] if plan.period is not None else []) + ["y_true"]
    names += list(plan.proba_columns) if _keeps_means(plan) else ["y_pred", "confidence"]
    # One contiguous chunk per column of the output first (the engine hands over several): the sort and the
    # gather then ran 0.3-0.4 s faster at 912,215 groups (one profile), for a copy of those columns.
    columns = groups.select(list(dict.fromkeys(names + ["weight", "y_pred", "confidence"]))).combine_chunks()
    order = pc.sort_indices(columns, sort_keys=keys)  # nulls last: the default (a per-call placement is deprecated)
    table = columns.select(names + ["weight"]).take(order)
    return table.rename_columns(["timestamp" if n == "period" else n for n in table.schema.names])


def written_sql(tables: Sequence[str], plans: Sequence[_Plan]) -> str:
    """The aggregate's rows from the groups each source left in a table: the sources one after the other,
    each one's groups in the order of :func:`output_sql`, the columns of the first (matched by name)."""
    parts = []
    for index, (table, plan) in enumerate(zip(tables, plans)):
        period = "period" if plan.period is not None else "NULL"
        parts.append(
            f"SELECT {', '.join(_output_columns(plan))}, {index} AS __source, {period} AS __period, "
            f"y_pred AS __y_pred, confidence AS __confidence FROM {table}"
        )
    stamp = "CAST(timestamp AS TIMESTAMP) AS timestamp"
    names = [stamp if n == "timestamp" else _q(n) for n in _output_names(plans[0])]
    order = ["__source", "model", "split", "__period", "__y_pred", "__confidence DESC", "y_true"]
    return (
        f"SELECT {', '.join(names)} FROM ({' UNION ALL BY NAME '.join(parts)}) AS kept "
        f"ORDER BY {', '.join(o + ' NULLS LAST' for o in order)}"
    )


def aggregate_sql(plan: _Plan) -> str:
    """:func:`grouped_sql` and :func:`output_sql` as one statement."""
    return f"WITH {GROUPED_TABLE} AS ({grouped_sql(plan)}) {output_sql(plan)}"


def groups_at_sql(plan: _Plan, resolution: float, table: str = GROUPED_TABLE) -> str:
    """Exact number of groups if the (exact) confidences were rounded down to ``resolution``."""
    keys = [k for k in _keys(plan) if k != "confidence"] + [f"{_rounded('confidence', resolution)} AS rounded"]
    return f"SELECT COUNT(*) FROM (SELECT DISTINCT {', '.join(keys)} FROM {table}) AS coarser"


# -------------------------------------------------------------- the checks
@dataclass(frozen=True)
class _Check:
    """One loader check: rows where ``bad`` holds are reported with ``message``."""

    message: str
    column: str | None
    bad: str
    severity: str = "error"
    names_labels: bool = False  # the message lists the offending labels, as the loader's does


def _checks(plan: _Plan) -> list[_Check]:
    """The in-memory loader's row checks, as SQL conditions: the rules and messages of ``columns.COLUMNS``."""
    checks: list[_Check] = []
    for column in ("model", "split"):
        if plan.has(column):
            checks += _rule_checks(plan, column)
    numeric = [c for c in (list(plan.proba_columns) + ["confidence", "weight"]) if plan.has(c)]
    for column in numeric:
        not_number = _not_a_number(plan, column)
        if not_number is not None:
            checks.append(_Check(NOT_A_NUMBER, column, not_number))
    if plan.top_label:
        checks += _rule_checks(plan, "y_pred") + _rule_checks(plan, "confidence")
    else:
        for rule in SPECS[PROBA_PREFIX].rules:  # rule by rule, each over every column, as the loader reports
            checks += [_rule_check(plan, column, rule) for column in plan.proba_columns]
    if plan.has("y_true"):
        checks.append(
            _Check(
                f"{UNKNOWN_LABELS} {_short_list(plan.classes)}",
                "y_true",
                f"{_present(plan, 'y_true')} AND {_class_of(plan, 'y_true')} IS NULL",
                names_labels=True,
            )
        )
    if plan.has("weight"):
        checks += _rule_checks(plan, "weight")
    if plan.period is not None:
        checks.append(
            _Check(
                "timestamps that are not ISO 8601 dates or times (e.g. 2024-05-01 or 2024-05-01T13:00:00)",
                "timestamp", f"{_q('timestamp')} IS NOT NULL AND {_period(plan)} IS NULL",
            )
        )  # fmt: skip
    return checks


def _present(plan: _Plan, column: str) -> str:
    """The cell is not empty: a number never is when it is not NULL (no text made of every row to say so)."""
    if plan.column_types.get(column) == "number":
        return f"{_q(column)} IS NOT NULL"
    return f"{_text(plan, column)} IS NOT NULL"


def _rule_check(plan: _Plan, column: str, rule: RowRule) -> _Check:
    family = spec_of(column).family
    value = _number(plan, column) if family in ("number", "probability", "logit") else None
    text = _text(plan, column) if family in ("group", "label") else None
    condition = rule_sql(rule.rule, value, _not_a_number(plan, column) if value else None, text, plan.dialect)
    return _Check(rule.text(column), column, condition, rule.severity)


def _rule_checks(plan: _Plan, column: str) -> list[_Check]:
    """The checks ``columns.COLUMNS`` gives ``column`` in this kind of run."""
    kind = "top_label" if plan.top_label else "any"
    return [_rule_check(plan, column, rule) for rule in rules_of(column) if rule.runs in ("any", kind)]


def _sum_deviation(plan: _Plan) -> str:
    """|sum - 1| of rows whose cells are all valid, else NULL."""
    cells = [_number(plan, c) for c in plan.proba_columns]
    valid = " AND ".join(f"{p} IS NOT NULL AND NOT {_is_nan(plan, p)} AND {p} >= 0 AND {p} <= 1e300" for p in cells)
    return f"(CASE WHEN {valid} THEN ABS(({' + '.join(cells)}) - 1) ELSE NULL END)"


def check_sql(plan: _Plan) -> tuple[str, list[_Check]]:
    """One pass counting every check's offending rows per file (and the worst sum deviation)."""
    checks = _checks(plan)
    counts = [f"SUM(CASE WHEN {c.bad} THEN 1 ELSE 0 END) AS c{i}" for i, c in enumerate(checks)]
    counts.append("COUNT(*) AS n_rows")
    if not plan.top_label:
        deviation = _sum_deviation(plan)
        counts.append(f"MAX({deviation}) AS worst")
        counts.append(f"SUM(CASE WHEN {deviation} > {plan.sum_tolerance!r} THEN 1 ELSE 0 END) AS too_far")
        counts.append(f"SUM(CASE WHEN {deviation} > {plan.warn_tolerance!r} THEN 1 ELSE 0 END) AS off")
    sql = f"SELECT {FILE_COLUMN}, {', '.join(counts)} FROM {SOURCE_VIEW} GROUP BY {FILE_COLUMN}"
    return sql, checks


def _rows_where_sql(condition: str, file: str) -> str:
    return (
        f"SELECT {ROW_COLUMN} FROM {SOURCE_VIEW} WHERE {FILE_COLUMN} = {_lit(file)} AND ({condition}) "
        f"ORDER BY {ROW_COLUMN} LIMIT {SHOWN_ROWS}"
    )


def _label_values_sql(plan: _Plan) -> str:
    columns = [c for c in ("y_pred", "y_true") if plan.has(c)]
    union = " UNION ".join(f"SELECT DISTINCT {_text(plan, c)} AS label FROM {SOURCE_VIEW}" for c in columns)
    return f"SELECT label FROM ({union}) AS labels WHERE label IS NOT NULL"


def _split_labels_sql(plan: _Plan) -> str:
    """Per (model, split): rows and labelled rows (a split is wholly labelled or not at all)."""
    model = _group_text(plan, "model", plan.model)
    split = _group_text(plan, "split", DEFAULT_SPLIT)
    return (
        f"SELECT {model} AS model, {split} AS split, COUNT(*) AS n_rows, COUNT({_text(plan, 'y_true')}) "
        f"AS labelled FROM {SOURCE_VIEW} GROUP BY {model}, {split}"
    )


def _distinct_count_sql(plan: _Plan, column: str) -> str:
    return f"SELECT COUNT(DISTINCT {_text(plan, column)}) FROM {SOURCE_VIEW}"


# --------------------------------------------------------------- the engines
class _Engine:
    """Runs SQL over the ``source_rows`` view; subclasses bind the view to a source."""

    name = ""

    def bind(self, source: _Source) -> None:
        raise NotImplementedError

    def rows(self, sql: str) -> list[tuple]:
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


def _one_statement(sql: str) -> str:
    """``sql`` when it is exactly one statement (every text run is built here from quoted names;
    this makes sure no name could ever have smuggled in a second one)."""
    import duckdb

    if len(duckdb.extract_statements(sql)) != 1:
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
    ):
        import duckdb

        self.stop = stop
        try:
            self._temp = tempfile.TemporaryDirectory(prefix="valuecore-duckdb-", dir=temp_directory)
        except OSError as exc:
            raise ValueError(f"cannot make a temporary folder in {temp_directory}: {exc.strerror or exc}") from None
        self.con = duckdb.connect(":memory:")
        try:
            self._execute(f"SET memory_limit = {_lit(memory_limit)}")
        except duckdb.Error:
            self.close()
            raise ValueError(f"--memory-limit must be a size such as 512MB or 4GB, got {memory_limit!r}") from None
        self._execute(f"SET temp_directory = {_lit(self._temp.name)}")
        try:
            self._execute(f"SET max_temp_directory_size = {_lit(max_temp_size)}")
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
        return self.con.execute(_one_statement(sql), parameters)

    def _table(self, source: _Source) -> str:
        """The quoted, existing table of ``FILE.duckdb:TABLE`` (``TABLE`` or ``SCHEMA.TABLE``), matched
        against the database's own list: the name is never pasted into SQL."""
        alias = self._databases.get(source.database)
        if alias is None:
            alias = f"source_db_{len(self._databases)}"
            self._execute(f"ATTACH {_lit(source.database)} AS {_q(alias)} (READ_ONLY)")
            self._databases[source.database] = alias
        listed = self._execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? UNION ALL "
            "SELECT schema_name, view_name FROM duckdb_views() WHERE database_name = ? AND NOT internal",
            [alias, alias],
        ).fetchall()
        wanted = source.table
        for schema, table in listed:
            if wanted in (table, f"{schema}.{table}"):
                return f"{_q(alias)}.{_q(schema)}.{_q(table)}"
        names = sorted(t if s == "main" else f"{s}.{t}" for s, t in listed)
        raise AggregateRefused(
            [LoadProblem(source.display, f"no table named {wanted!r} in {source.database} (it holds "
                         f"{_short_list(names) if names else 'no tables'})")]
        )  # fmt: skip

    def bind(self, source: _Source) -> None:
        if source.format == "parquet":
            files = "[" + ", ".join(_lit(f) for f in source.files) + "]"
            hive = "true" if source.base is not None else "false"
            reader = (
                f"read_parquet({files}, filename = true, file_row_number = true, hive_partitioning = {hive}, "
                "union_by_name = true)"
            )
            select = f"SELECT * EXCLUDE (filename, file_row_number), filename AS {FILE_COLUMN}, " \
                     f"file_row_number AS {ROW_COLUMN} FROM {reader}"  # fmt: skip
        elif source.format == "csv":
            files = "[" + ", ".join(_lit(f) for f in source.files) + "]"
            hive = "true" if source.base is not None else "false"
            reader = (
                f"read_csv({files}, header = true, all_varchar = true, filename = true, parallel = false, "
                f"hive_partitioning = {hive}, union_by_name = true)"
            )
            select = (
                f"SELECT * EXCLUDE (filename), filename AS {FILE_COLUMN}, "
                f"row_number() OVER (PARTITION BY filename) - 1 AS {ROW_COLUMN} FROM {reader}"
            )
        else:
            select = (
                f"SELECT *, {_lit(source.display)} AS {FILE_COLUMN}, row_number() OVER () - 1 AS {ROW_COLUMN} "
                f"FROM {self._table(source)}"
            )
        self._run(lambda: self._execute(f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS {select}"))
        # DuckDB reads no file name or row number that a query leaves unused: one view serves both.
        self._run(lambda: self._execute(f"CREATE OR REPLACE TEMP VIEW {CELLS_VIEW} AS SELECT * FROM {SOURCE_VIEW}"))

    def describe(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self._run(lambda: self._execute(f"DESCRIBE {SOURCE_VIEW}").fetchall())]

    def rows(self, sql: str) -> list[tuple]:
        return self._run(lambda: self._execute(sql).fetchall())

    def materialize(self, name: str, sql: str, progress) -> None:
        self._run(lambda: self._execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}"), progress)

    holds_groups = True

    def groups(self, plan: _Plan, limit: int, progress):
        # The groups stay in DuckDB: the checks read them there and, once every check passed, DuckDB sorts and
        # writes them itself (:meth:`write`). Only counts come into this process: no fetch of the groups, no
        # sort or Parquet write in Python (those were 2.4-3.3 s of 15 s at 10^7 rows, one profile).
        self.materialize(GROUPED_TABLE, grouped_sql(plan), progress)
        count, rows = self.rows(f"SELECT COUNT(*), SUM(n_rows) FROM {GROUPED_TABLE}")[0]
        return _HeldGroups(GROUPED_TABLE, int(count), int(rows or 0))

    def keep(self, held: _HeldGroups) -> _HeldGroups:
        """The checked groups of one source, put aside under their own name until the write."""
        name = f"kept_groups_{len(self._kept)}"
        self._run(lambda: self._execute(f"ALTER TABLE {held.table} RENAME TO {name}"))
        self._kept.append(name)
        return _HeldGroups(name, held.num_rows, held.source_rows)

    def models_of(self, held: _HeldGroups) -> list:
        return [r[0] for r in self.rows(f"SELECT DISTINCT model FROM {held.table} ORDER BY model NULLS LAST")]

    def write(self, held: Sequence[_HeldGroups], plans: Sequence[_Plan], path: Path, metadata: str) -> None:
        """The kept groups as one Parquet file (DuckDB's sort and writer), ``metadata`` under
        :data:`AGGREGATE_METADATA_KEY` in the file's key-value metadata."""
        key = AGGREGATE_METADATA_KEY.decode()
        # DuckDB reads a leading "~" as the home folder, Python as a folder named so: DuckDB gets an absolute
        # path (write_atomically's temporary file has one already; this keeps any other caller safe).
        target = os.path.abspath(path)
        sql = (
            f"COPY ({written_sql([h.table for h in held], plans)}) TO {_lit(target)} "
            f"(FORMAT parquet, KV_METADATA {{{_lit(key)}: {_lit(metadata)}}})"
        )
        # In one thread: the sort then reuses the memory the grouping freed. With two, the process peaked
        # 0.03-0.1 GiB higher at 10^7 rows (912,215 groups), in no less time (4 pairs of runs, load about 3).
        (threads,) = self.rows("SELECT current_setting('threads')")[0]
        self._execute("SET threads = 1")
        try:
            self._run(lambda: self._execute(sql))
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


@dataclass(frozen=True)
class _HeldGroups:
    """One source's groups, kept by the engine in ``table``: ``num_rows`` groups of ``source_rows`` rows."""

    table: str
    num_rows: int
    source_rows: int


class _FetchedGroups:
    """The groups once fetched into this process, as ``grouped_rows`` for the checks' small queries (run by
    DuckDB in process), so that an engine holding them no more is not asked to group again."""

    def __init__(self, table):
        import duckdb

        self.con = duckdb.connect(":memory:")
        self.con.register(GROUPED_TABLE, table)

    def rows(self, sql: str) -> list[tuple]:
        return self.con.execute(_one_statement(sql)).fetchall()

    def close(self) -> None:
        self.con.close()


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
        # The aggregation text quotes identifiers with double quotes, as DuckDB does.
        self.spark.conf.set("spark.sql.ansi.doubleQuotedIdentifiers", "true")
        self.spark.conf.set("spark.sql.session.timeZone", "UTC")
        # Hive partition values are text, as DuckDB reads them (split=1 is the split "1").
        self.spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        self._uris: dict[str, str] = {}
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
            frame = frame.selectExpr(
                "*", f"{_lit(source.display)} AS {FILE_COLUMN}", f"CAST(NULL AS BIGINT) AS {ROW_COLUMN}"
            )
        else:
            if source.base is not None:
                reader = reader.option("basePath", source.base)
            if source.format == "parquet":
                frame = reader.parquet(*source.files)
                row = "_metadata.row_index"
            else:
                frame = reader.option("header", True).option("inferSchema", False).csv(list(source.files))
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

    def rows(self, sql: str) -> list[tuple]:
        return self._job(lambda: [tuple(r) for r in self.spark.sql(sql).collect()])

    def arrow(self, sql: str, progress):
        return self._job(lambda: self.spark.sql(sql).toArrow(), progress)

    def groups(self, plan: _Plan, limit: int, progress):
        # One job, as a bare groupBy: no cache of the groups, no count of them first; the budget is the limit.
        self.holds_groups = False
        return self.arrow(f"{grouped_sql(plan)} LIMIT {int(limit)}", progress)

    def materialize(self, name: str, sql: str, progress) -> None:
        # A DataFrame's view keeps its analysed plan (a SQL-text view would re-resolve
        # against whatever source_rows means later).
        self._drop_cached()
        self._cached = self.spark.sql(sql).persist()
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
        self.spark.conf.set("spark.sql.shuffle.partitions", self._partitions)  # the session's own again
        (self.spark.removeTag if self._context is None else self._context.removeJobTag)(self._tag)


def _active_or_local_session():
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if "PYSPARK_GATEWAY_PORT" in os.environ:
        # Launched by spark-submit: the master and the rest come from its command line.
        return SparkSession.builder.appName("valuecore-aggregate").getOrCreate()
    return spark_session()


def _uri_path(text: str) -> str:
    parsed = urlparse(text)
    return unquote(parsed.path) if parsed.scheme in ("file", "") else text


# ------------------------------------------------------------- the command
def _plan_for(source: _Source, problems: list[LoadProblem], **options) -> _Plan | None:
    where = _FileProblems(source.display)
    columns = [c for c in source.columns if c not in (FILE_COLUMN, ROW_COLUMN)]
    _warn_unknown_columns(columns, where)
    kind = _run_kind(columns, where)
    if kind is not None and kind.logit_columns:
        where.add(
            "logit_ columns are not kept in an aggregate (temperature scaling needs per-item rows)",
            column=kind.logit_columns[0],
            severity="warning",
        )
    if options.get("period") is not None and "timestamp" not in columns:
        where.add(f"--period {options['period']} needs a timestamp column", column="timestamp")
    problems.extend(where.items)
    if kind is None or where.has_errors:
        return None
    return _Plan(
        columns=tuple(columns), column_types=source.column_types, classes=kind.classes,
        proba_columns=kind.proba_columns, model=source.model, file_models=source.file_models, **options,
    )  # fmt: skip


def _infer_classes(engine: _Engine, plan: _Plan, source: _Source, problems: list[LoadProblem]):
    labels = sorted({str(r[0]) for r in engine.rows(_label_values_sql(plan))})
    if len(labels) < 2:
        problems.append(
            LoadProblem(
                source.display,
                f"a top-label run needs at least 2 classes among y_pred and y_true, found {_short_list(labels)}",
                "y_pred",
            )
        )
        return None
    if all(_is_integer_text(c) for c in labels):
        return tuple(sorted(labels, key=int))
    return tuple(labels)


def _run_checks(engine: _Engine, plan: _Plan, source: _Source) -> list[LoadProblem]:
    """Every row check in one pass; the offending rows are fetched only for failed checks."""
    sql, checks = check_sql(plan)
    problems: list[LoadProblem] = []
    for record in engine.rows(sql):
        file = record[0]
        display = engine.display_file(file)
        counts = record[1 : 1 + len(checks)]
        by_message: dict[str, list[int]] = {}
        for check, count in zip(checks, counts):
            if not count:
                continue
            by_message.setdefault(check.message, []).append(1)
            if len(by_message[check.message]) > SHOWN_COLUMNS:
                continue
            rows = _first_rows(engine, check.bad, file)
            message = check.message
            if check.names_labels:
                message = f"labels {_short_list(_labels_where(engine, plan, check, file))} {message}"
            problems.append(LoadProblem(display, message, check.column, rows, check.severity, int(count)))
        for message, hits in by_message.items():
            if len(hits) > SHOWN_COLUMNS:
                more = [c.column for c, n in zip(checks, counts) if n and c.message == message][SHOWN_COLUMNS:]
                problems.append(LoadProblem(display, f"{message} also in columns {_short_list(more)}"))
        if not plan.top_label:
            problems.extend(_sum_problems(engine, plan, file, display, record[1 + len(checks) :]))
    problems.extend(_group_problems(engine, plan, source))
    return problems


def _checks_in_groups(plan: _Plan) -> bool:
    """Whether the grouping counts the checks itself: with typed number columns (Parquet, tables). On text
    cells (CSV) every check parses each cell again, and one expression holding them all grows past what
    DuckDB plans within its memory limit; those sources get the separate pass of :func:`_run_checks`."""
    numeric = list(plan.proba_columns) + [c for c in ("confidence", "weight") if plan.has(c)]
    return all(_not_a_number(plan, c) is None for c in numeric)


def _checks_from_groups(engine: _Engine, plan: _Plan, source: _Source, groups) -> list[LoadProblem]:
    """The loader's checks, read from the counts the grouping kept (``groups`` runs SQL on them); the
    per-file pass of :func:`_run_checks` (which names the rows) runs only when a count is not zero."""
    if not _checks_in_groups(plan):
        return []  # checked before the grouping
    if plan.top_label:
        counts = "SUM(n_bad), 0, 0"
    else:
        counts = f"SUM(CASE WHEN worst > {plan.sum_tolerance!r} THEN 1 ELSE 0 END), SUM(n_off), MAX(worst)"
    distinct = ", ".join(f"COUNT(DISTINCT {c})" if plan.has(c) else "0" for c in ("model", "split"))
    record = groups.rows(f"SELECT {counts}, {distinct} FROM {GROUPED_TABLE}")[0]
    if record[0]:
        return _run_checks(engine, plan, source)
    problems: list[LoadProblem] = []
    if not plan.top_label and record[1]:
        if len(source.files) != 1:  # several files (or a table): each one's own count and worst deviation
            return _run_checks(engine, plan, source)
        file = engine.rows(f"SELECT {FILE_COLUMN} FROM {SOURCE_VIEW} LIMIT 1")[0][0]
        problems += _sum_problems(engine, plan, file, engine.display_file(file), (None, record[2], 0, record[1]))
    if max(record[3], record[4]) > MAX_GROUPS or _partly_labelled(groups, plan):
        problems += _group_problems(engine, plan, source)
    return problems


def _partly_labelled(groups, plan: _Plan) -> bool:
    """Whether a (model, split) is labelled only in part, judged on the groups (checks passed, so a
    NULL y_true there is an empty one)."""
    if not plan.has("y_true"):
        return False
    sql = (
        f"SELECT COUNT(*) FROM (SELECT model, split, SUM(n_rows) AS n_rows, "
        f"SUM(CASE WHEN y_true IS NULL THEN 0 ELSE n_rows END) AS labelled FROM {GROUPED_TABLE} "
        "WHERE model IS NOT NULL AND split IS NOT NULL GROUP BY model, split) AS per_split "
        "WHERE labelled > 0 AND labelled < n_rows"
    )
    return groups.rows(sql)[0][0] > 0


def _models_in_several_files(engine: _Engine, plan: _Plan, source: _Source) -> list[LoadProblem]:
    """Run files of one folder are separate models: a model column value found in two of them is refused."""
    model = _text(plan, "model")
    sql = (
        f"SELECT {model} AS name, MIN({FILE_COLUMN}), MAX({FILE_COLUMN}) FROM {SOURCE_VIEW} WHERE {model} IS NOT NULL "
        f"GROUP BY name HAVING COUNT(DISTINCT {FILE_COLUMN}) > 1 ORDER BY name"
    )
    return [
        LoadProblem(
            engine.display_file(last),
            f"gives the model name {name!r}, which {engine.display_file(first)} gives too: the two would be blended "
            "into one model; rename one (its file, or its model column), or aggregate them into separate files",
            "model",
        )
        for name, first, last in engine.rows(sql)
    ]


def _first_rows(engine: _Engine, condition: str, file) -> tuple[int, ...]:
    rows = [r[0] for r in engine.rows(_rows_where_sql(condition, file))]
    return tuple(int(r) + 1 for r in rows if r is not None)


def _labels_where(engine: _Engine, plan: _Plan, check: _Check, file) -> list[str]:
    """The distinct offending labels of a file, in order of first appearance."""
    text = _text(plan, check.column)
    sql = (
        f"SELECT {text} AS label, MIN({ROW_COLUMN}) AS first FROM {SOURCE_VIEW} "
        f"WHERE {FILE_COLUMN} = {_lit(file)} AND ({check.bad}) GROUP BY {text} ORDER BY first, label"
    )
    return [str(r[0]) for r in engine.rows(sql)]


def _sum_problems(engine: _Engine, plan: _Plan, file, display, record) -> list[LoadProblem]:
    _, worst, too_far, off = record
    deviation = _sum_deviation(plan)
    if too_far:
        rows = _first_rows(engine, f"{deviation} > {plan.sum_tolerance!r}", file)
        message = f"probabilities do not sum to 1 (worst deviation {worst:.3g}, tolerance {plan.sum_tolerance:g})"
        return [LoadProblem(display, message, None, rows, "error", int(too_far))]
    if off:
        rows = _first_rows(engine, f"{deviation} > {plan.warn_tolerance!r}", file)
        message = f"probabilities sum to 1 only approximately (worst deviation {worst:.3g}, kept as they are)"
        return [LoadProblem(display, message, None, rows, "warning", int(off))]
    return []


def _group_problems(engine: _Engine, plan: _Plan, source: _Source) -> list[LoadProblem]:
    """Too many models or splits; a split labelled only in part."""
    problems = []
    for column in ("model", "split"):
        if plan.has(column):
            (count,) = engine.rows(_distinct_count_sql(plan, column))[0]
            if count > MAX_GROUPS:
                problems.append(
                    LoadProblem(
                        source.display,
                        f"{column} has {count} distinct values (at most {MAX_GROUPS}); is it the right column?",
                        column,
                    )
                )
    if not plan.has("y_true"):
        return problems
    several_models = plan.has("model") or bool(plan.file_models)
    for model, split, n_rows, labelled in engine.rows(_split_labels_sql(plan)):
        if model is None or split is None or labelled in (0, n_rows):
            continue
        context = f"split {split!r}" + (f" of model {model!r}" if several_models else "")
        in_group = (
            f"{_group_text(plan, 'model', plan.model)} = {_lit(model)} AND "
            f"{_group_text(plan, 'split', DEFAULT_SPLIT)} = {_lit(split)} AND {_text(plan, 'y_true')} IS NULL"
        )
        files = engine.rows(
            f"SELECT {FILE_COLUMN}, COUNT(*) FROM {SOURCE_VIEW} WHERE {in_group} GROUP BY {FILE_COLUMN} "
            f"ORDER BY {FILE_COLUMN}"
        )
        for file, count in files:
            problems.append(
                LoadProblem(
                    engine.display_file(file),
                    f"y_true is missing in {context}, which has labels elsewhere "
                    "(leave y_true empty for a whole split to mark it unlabeled)",
                    "y_true",
                    _first_rows(engine, in_group, file),
                    "error",
                    int(count),
                )
            )
    return problems


def _suggest_resolution(engine: _Engine, plan: _Plan, max_groups: int) -> tuple[float | None, int | None]:
    """The finest power-of-ten resolution whose exact group count fits the budget (counted on the groups)."""
    for resolution in CANDIDATE_RESOLUTIONS:
        (count,) = engine.rows(groups_at_sql(plan, resolution))[0]
        if count <= max_groups:
            return resolution, int(count)
    return None, None


def _refusal(source: _Source, groups: int, max_groups: int, suggestion) -> LoadProblem:
    resolution, estimate = suggestion
    message = (
        f"{groups:,} groups (model, split, predicted class, confidence, true class) exceed the budget of "
        f"{max_groups:,}: the confidences are too finely spread to aggregate exactly"
    )
    if resolution is not None:
        message += (
            f"; run again with --resolution {resolution:g} ({estimate:,} groups; confidences are rounded "
            "down to that grid and the report states what it can cost), or raise --max-groups"
        )
    else:
        message += "; even --resolution 0.01 leaves too many groups (are model or split the right columns?)"
    return LoadProblem(source.display, message)


def _check_options(engine: str, resolution, period, max_groups) -> None:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {list(ENGINES)}, got {engine!r}")
    if resolution is not None and not (0 < float(resolution) <= 0.5 and math.isfinite(float(resolution))):
        raise ValueError(f"resolution must lie in (0, 0.5], got {resolution}")
    if period is not None and period not in PERIODS:
        raise ValueError(f"period must be one of {list(PERIODS)}, got {period!r}")
    if int(max_groups) < 1:
        raise ValueError(f"max_groups must be at least 1, got {max_groups}")


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
    _check_engine_options(engine, memory_limit, temp_directory, max_temp_size)
    problems: list[LoadProblem] = []
    named = _once_each([n for text in sources for n in _expand_source(text, model, problems)], problems)
    scanned = []
    for item in named:
        source = _table_source(item.display, item.model, engine, problems) if item.table else (
            _scan_files(item, problems, roots)
        )  # fmt: skip
        if source is not None:
            scanned.append(source)
    if any(p.severity == "error" for p in problems):
        raise AggregateRefused(problems)
    scanned = _one_pass_per_folder(scanned, engine)
    read = [*sources, *(f for s in scanned for f in s.files), *(s.database for s in scanned if s.database)]
    check_output(out, read, "the aggregate")
    with _ctrl_c_stops(stop) as stop:
        runner = (_DuckDB(memory_limit, temp_directory, threads, max_temp_size, stop) if engine == "duckdb"
                  else _Spark(spark, stop))  # fmt: skip
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


def _aggregate_source(
    runner: _Engine, source: _Source, problems: list[LoadProblem], options: dict, max_groups, progress
):
    """(aggregate table, plan, rows read) of one source, or None after adding its problems. The table is
    an Arrow table in the output's order, or (DuckDB) the :class:`_HeldGroups` the engine keeps."""
    runner.bind(source)
    if source.format in ("duckdb_table", "spark_table"):
        source = _with_engine_columns(runner, source)
    elif source.format == "csv":
        missing = [c for c in source.columns if c not in {name for name, _ in _engine_columns(runner)}]
        if missing:
            problems.append(LoadProblem(source.display, _CSV_NOT_AS_HEADER, missing[0]))
            return None
    plan = _plan_for(source, problems, **options)
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


_CSV_NOT_AS_HEADER = (
    "could not be read with the columns of its header (a row with more fields than the header, or a quote that "
    "is never closed?); `python -m valuecore validate FILE` names the rows"
)


def _engine_columns(runner: _Engine) -> list[tuple[str, str]]:
    if isinstance(runner, _DuckDB):
        return runner.describe()
    return [(f.name, f.dataType.simpleString()) for f in runner.spark.table(SOURCE_VIEW).schema.fields]


def _is_engine_error(exc: Exception) -> bool:
    return type(exc).__module__.split(".")[0].lstrip("_") in ("duckdb", "pyspark", "py4j")


def _engine_problem(source: _Source, exc: Exception, runner: _Engine | None = None) -> LoadProblem:
    """A sentence for an error the engine raised while reading a source (no engine jargon)."""
    text = str(exc)
    line = re.search(r"CSV Error on Line: (\d+)", text)
    if "max_temp_directory_size" in text:
        limit = getattr(runner, "max_temp_size", DEFAULT_MAX_TEMP_SIZE)
        message = (
            f"needs more than --max-temp-size {limit} of spill space on disk to aggregate (stopped, its spill "
            "files removed); raise --max-temp-size or --memory-limit, or give a coarser --resolution"
        )
    elif "Maximum line size" in text or "max_line_size" in text:
        message = "has a line longer than the 2 MB a CSV line may hold here (is it a CSV file with one row per line?)"
    elif line:
        message = f"could not be read as CSV at line {line.group(1)} (a row with other fields than the header?)"
    elif "Binder Error" in text or "not found in FROM clause" in text:
        message = _CSV_NOT_AS_HEADER if source.format == "csv" else "could not be read with its own columns"
    else:
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        message = f"could not be read ({clip_text(first, 200)})"
    return LoadProblem(source.display, message)


def _once_each(named: list[_Named], problems: list[LoadProblem]) -> list[_Named]:
    """Each source once: one named twice (by any path or link) is read once; two that share
    some files are refused, since those rows would count twice."""
    kept: list[tuple[_Named, frozenset]] = []
    for item in named:
        keys = frozenset([("table", item.display)] if item.table else (_identity(f) for f in item.files))
        same = [earlier for earlier, earlier_keys in kept if earlier_keys == keys]
        shared = [earlier.display for earlier, earlier_keys in kept if earlier_keys & keys]
        if same:
            again = f"is {same[0].display} named again; read once"
            problems.append(LoadProblem(item.display, again, severity="warning"))
        elif shared:
            problems.append(
                LoadProblem(
                    item.display,
                    f"shares files with {_short_list(shared)}; their rows would count twice (name each file or "
                    "folder once)",
                )
            )
        else:
            kept.append((item, keys))
    return [item for item, _ in kept]


def _identity(file: Path) -> tuple:
    try:
        info = file.stat()
    except OSError:
        return ("path", str(file.resolve()))
    return (info.st_dev, info.st_ino)


def _models_of(runner: _Engine, table) -> list:
    """The distinct model names of one source's groups, in order."""
    if isinstance(table, _HeldGroups):
        return runner.models_of(table)
    import pyarrow.compute as pc

    return pc.unique(table.column("model")).to_pylist()


def _check_model_names(runner: _Engine, tables, used: Sequence[_Source], problems: list[LoadProblem]) -> None:
    """Refuse two sources giving the same model name: their rows would blend into one model."""
    if len(tables) < 2:
        return
    source_of: dict[str, str] = {}
    for table, source in zip(tables, used):
        for name in _models_of(runner, table):
            if name in source_of and source_of[name] != source.display:
                problems.append(
                    LoadProblem(
                        source.display,
                        f"gives the model name {name!r}, which {source_of[name]} gives too: the two would be "
                        "blended into one model; rename one (its file, or its model column), or aggregate them "
                        "into separate files",
                    )
                )
            source_of.setdefault(name, source.display)
    if any(p.severity == "error" for p in problems):
        raise AggregateRefused(problems)


_SIZE = re.compile(r"\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)\s*|\s*\d+(\.\d+)?\s*%\s*", re.IGNORECASE)


def _check_engine_options(engine: str, memory_limit: str, temp_directory, max_temp_size=DEFAULT_MAX_TEMP_SIZE) -> None:
    """Plain sentences for options DuckDB would refuse with its own words."""
    if engine == "duckdb" and not _SIZE.fullmatch(str(memory_limit)):
        raise ValueError(f"--memory-limit must be a size such as 512MB or 4GB, got {str(memory_limit)!r}")
    if engine == "duckdb" and (not _SIZE.fullmatch(str(max_temp_size)) or "%" in str(max_temp_size)):
        raise ValueError(f"--max-temp-size must be a size such as 4GB or 20GB, got {str(max_temp_size)!r}")
    if temp_directory is not None:
        folder = Path(temp_directory)
        if not folder.is_dir():
            raise ValueError(f"--temp-dir {temp_directory} is not a folder; give an existing folder to spill into")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ValueError(f"--temp-dir {temp_directory} is not writable; give a folder you can write in")


def _with_engine_columns(runner: _Engine, source: _Source) -> _Source:
    """A table source's columns, read from the engine."""
    described = _engine_columns(runner)
    kinds = {}
    for name, sql_type in described:
        t = sql_type.upper()
        if "TIMESTAMP" in t or t == "DATE":
            kinds[name] = "time"
        elif any(k in t for k in ("INT", "DOUBLE", "FLOAT", "DECIMAL", "REAL", "NUMERIC")):
            kinds[name] = "number"
        elif "BOOL" in t:
            kinds[name] = "bool"
        else:
            kinds[name] = "text"
    columns = tuple(n for n, _ in described if n not in (FILE_COLUMN, ROW_COLUMN))
    return _Source(display=source.display, model=source.model, format=source.format, table=source.table,
                   database=source.database, columns=columns, column_types=kinds)  # fmt: skip


def _replace_classes(plan: _Plan, classes) -> _Plan:
    from dataclasses import replace

    return replace(plan, classes=tuple(classes))


def _finished(result: AggregateResult, seconds: float, spilled_bytes: int) -> AggregateResult:
    """``result`` with the wall time and the peak spill, write included."""
    from dataclasses import replace

    return replace(result, seconds=seconds, spilled_bytes=spilled_bytes)


def _common_classes(plans: Sequence[_Plan], problems, sources) -> tuple[str, ...]:
    """The classes of the aggregate: those of every probability source (in any column order), or
    the union of the classes of top-label sources (each found from its own labels, as the loader does)."""
    kinds = {(p.top_label or p.resolution is not None) for p in plans}
    if kinds == {True} and all(p.top_label for p in plans):
        union = {c for p in plans for c in p.classes}
        return tuple(sorted(union, key=int)) if all(_is_integer_text(c) for c in union) else tuple(sorted(union))
    classes = {frozenset(p.classes) for p in plans}
    if len(kinds) > 1 or len(classes) > 1:
        detail = "; ".join(f"{s}: {_short_list(p.classes)}" for s, p in zip(sources, plans))
        raise AggregateRefused(
            list(problems)
            + [LoadProblem(", ".join(sources), f"sources have different classes or run kinds ({detail}); "
                           "aggregate them into separate files")]
        )  # fmt: skip
    return plans[0].classes


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
    if run.cum_correct is None:
        raise ValueError("the resolution bound needs true labels (y_true)")
    cum = cumulative_gain(run, values)  # value over abstaining, per prefix
    gain_correct = values.v_correct - values.v_abstain
    gain_wrong = values.v_wrong - values.v_abstain
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
