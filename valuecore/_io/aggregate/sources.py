"""The sources an aggregation reads: files, folders, globs and tables named on the command line,
scanned for their columns (Parquet footers, CSV headers) before any engine runs; each named once."""

from __future__ import annotations

import glob as globlib
from dataclasses import dataclass, field
from pathlib import Path


from ..columns import _nfc, column_name
from ..parquet_footer import FooterBudget, footer_columns
from ..paths import outside_roots
from ..format import (
    PARQUET_SUFFIXES, OUTSIDE_ROOTS, LoadProblem, csv_header, first_line, _check_header, _check_plain_cells,
    _FileProblems, _short_list,
)


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
    elif _is_glob(text) and not path.exists():  # a file or folder named m[1].csv is that one, not a pattern
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


def _scan_parquet(file: Path, problems: _FileProblems, budget: FooterBudget | None = None):
    """(columns, kinds, rows) from the Parquet footer only, or None after reporting. Read in pure Python where
    the footer leaves no doubt and ``budget`` allows (``parquet_footer``: no pyarrow, no numpy), by pyarrow
    otherwise."""
    try:
        found = footer_columns(file, budget)
    except OSError:
        found = None  # pyarrow says why, in the words it always did
    if found is None:
        found = _pyarrow_columns(file, problems)
        if found is None:
            return None
    names, kinds, rows, nested = found
    if not _check_header(names, problems) or not _check_plain_cells(nested, problems):
        return None
    return names, kinds, rows


def _pyarrow_columns(file: Path, problems: _FileProblems):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(file)
        schema = meta.schema_arrow
        rows = meta.metadata.num_rows
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for bad bytes
        problems.add(f"is not a readable Parquet file ({exc})")
        return None
    nested = [f.name for f in schema if pa.types.is_nested(f.type)]
    return list(schema.names), {f.name: _arrow_kind(f.type) for f in schema}, rows, nested


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


def _scan_files(named: _Named, problems: list[LoadProblem], roots=None, budget: FooterBudget | None = None
                ) -> _Source | None:
    """Check every file of one SOURCE from its footer or header: readable, same columns. ``budget``: the bytes
    of Parquet footers still to be read in Python, shared by an aggregation's sources."""
    budget = FooterBudget() if budget is None else budget
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
                scanned = (_scan_parquet(file, file_problems, budget) if this_format == "parquet"
                           else _scan_csv(file, file_problems))
        if scanned is not None and fmt is not None and this_format != fmt:
            file_problems.add(f"is {this_format} but the other files of {text} are {fmt}; use one format")
            scanned = None
        if scanned is not None:
            columns, file_kinds, rows = scanned
            hive = _hive_keys(file, base)
            columns = [column_name(c) for c in columns] + [k for k, _ in hive if k not in columns]
            file_kinds = {column_name(k): v for k, v in file_kinds.items()} | {k: "text" for k, _ in hive}
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
    if _is_glob(text) and not path.exists():
        fixed = [p for p in path.parts if not _is_glob(p)]
        path = Path(*fixed) if fixed else Path("model")
        return path.name or "model"
    return _nfc(path.stem if path.suffix else path.name)  # as the loader names it (é.csv and e\u0301.csv alike)


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
