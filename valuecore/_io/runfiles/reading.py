"""One file's bytes into a table of columns: Parquet through Arrow (row group by row group, floats
placed as they arrive), CSV through pandas with every cell read as text first."""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import os
import re
import warnings
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ..columns import (
    FEW_VALUES,
    LOGIT_PREFIX,
    PROBA_PREFIX,
    SPECS,
    TEXT_COLUMNS,
    column_name,
    rule_mask,
)
from ..fastload import InlineExecutor, fill_columns
from ..lazy import LazyModule
from ..format import (
    LoadProblem, NUMERIC_MISSING, PARQUET_SUFFIXES, _FileProblems, _check_header, _check_plain_cells, _nfc,
    _too_many_columns, csv_header, first_line,
)
from ..arrowcsv import read_arrow_csv
from ..plaincsv import PLAIN_CSV_BYTES, read_plain_csv
from .results import AGGREGATE_NOTE
from .cells import _CHECK_BLOCK, _ProbabilityChecks, _class_major_matrix, _logit_order, _report_columns
from ..._model.predictions import ColumnMatrix
pd = LazyModule("pandas")  # imported on first use


_TOO_MANY_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


class _Layout:
    """The file's rows ordered by (model, split), rows staying in file order within a pair.

    order : (n,) 0-based file rows in that order, or None when the file is in that order already
    group : (n,) int16 or int32 index of each file row's pair, or None without ``order``
    starts : (n_pairs,) where each pair's rows start in that order
    bounds : {(model index, split index): (start, stop)}

    A plain slotted class, not a dataclass: a private record that nothing compares, hashes or copies, on
    every run file's path, where a dataclass costs about a millisecond of each fresh process.
    """

    __slots__ = ("order", "group", "starts", "bounds")

    def __init__(self, order: np.ndarray | None, group: np.ndarray | None, starts: np.ndarray, bounds: dict):
        self.order, self.group, self.starts, self.bounds = order, group, starts, bounds


def _early_header_problems(handle, display: str) -> list[LoadProblem]:
    """The problems of the header of a CSV file open as ``handle`` (at its start), found before the file is read
    whole (empty when fine; the handle is left anywhere).

    A hostile header is refused after reading O(limit) bytes of it, not the file."""
    if Path(display).suffix.lower() not in (".csv", ".txt", ""):
        return []
    problems = _FileProblems(display)
    head = handle.read(4)
    if head == b"PAR1" or head[:2] == b"PK":  # Parquet or a spreadsheet: their readers decide
        return []
    handle.seek(0)
    line = first_line(handle, problems)
    if line is not None and line.strip():
        csv_header(line, problems)
    return problems.items if problems.has_errors else []


def _file_content(path: Path, display: str) -> bytes | Path | _CsvOnDisk | list[LoadProblem]:
    """The bytes of a file; or the path itself for Parquet, which is read from disk
    column by column rather than held in memory twice (bytes, then decoded); or, for a larger file
    that may be CSV, a :class:`_CsvOnDisk`, unless its header's problems (a list), found first, refuse it.

    One open: a small file's header is checked when its bytes are parsed, with the same messages (a second open
    and read cost a fresh process 40-60 us of a 10^3-row file's 2.5 ms)."""
    with open(path, "rb") as handle:
        head = handle.read(4)
        if head == b"PAR1":
            return path
        if head[:2] != b"PK" and os.fstat(handle.fileno()).st_size > STREAMED_CSV_BYTES:
            handle.seek(0)
            return _early_header_problems(handle, display) or _CsvOnDisk(path)
        handle.seek(0)
        return handle.read()  # the file opened once (an open and a stat fewer)


# A CSV file read from disk above this size is parsed by pandas from the file, a chunk at a time, and hashed
# only when its digest is asked for, as a Parquet file is (``identity.DeferredDigest``). Held whole, a 7 MB
# file's fresh pages cost 8-9 ms of CPU (10^5 rows, at a low load) and its SHA-256 4 more, a third of what
# pandas's read of it costs; pandas reads a path through one reused buffer. Smaller files stay bytes: the plain
# path (``plaincsv``) reads bytes, and hashing them costs little.
STREAMED_CSV_BYTES = PLAIN_CSV_BYTES


class _CsvOnDisk:
    """A file that is not Parquet, left on disk to be read as CSV (:func:`_streamed_csv`); its bytes are read
    whole only when that read declines it. ``path``: the file."""

    __slots__ = ("path",)

    def __init__(self, path: Path):
        self.path = path


def _disk_path(data) -> Path | None:
    """The file that ``data`` (what :func:`_file_content` gave, or bytes) stands for, or None for bytes."""
    if isinstance(data, Path):
        return data
    return data.path if isinstance(data, _CsvOnDisk) else None


# Arrow memory above which a table read beside the probabilities is handed back to the system at once.
_LARGE_ARROW_BYTES = 64 << 20


def _release_arrow_memory() -> None:
    """Hand Arrow's freed buffers back to the system (its allocator keeps them for reuse)."""
    import sys

    if "pyarrow" in sys.modules:
        sys.modules["pyarrow"].default_memory_pool().release_unused()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Table:
    """A file as read: its columns (names stripped, file order), those in ``frame``, and
    the reader of the float columns left out of it (Parquet probabilities and logits); ``aggregate``:
    written by ``python -m valuecore aggregate``.

    A plain slotted class, not a dataclass: a private record that nothing compares, hashes or copies, on
    every run file's path, where a dataclass costs about a millisecond of each fresh process.
    """

    __slots__ = ("frame", "columns", "floats", "aggregate", "arrow", "classes")

    def __init__(self, frame: pd.DataFrame, columns: list[str], floats: _FloatColumns | None = None,
                 aggregate: bool = False, arrow: bool = True, classes: tuple[str, ...] | None = None):
        self.frame, self.columns, self.floats, self.aggregate = frame, columns, floats, aggregate
        # The classes an aggregate's metadata records (its sources'), or None: see ``recorded_classes``.
        self.classes = classes
        # Whether Arrow's memory pool may hold much of what reading the file took (False: the plain CSV path, numpy
        # alone, or a small Parquet file's numbers, copied); handing the pool's free memory back cost a fresh
        # process 0.1 ms of CPU even when it held little or none.
        self.arrow = arrow


def _read_table(data: bytes | Path | _CsvOnDisk, display: str, problems: _FileProblems) -> _Table | None:
    if isinstance(data, Path):
        return _read_parquet(data, problems)
    streamed = False
    if isinstance(data, _CsvOnDisk):
        frame = _streamed_csv(data.path, display) if UNFILTERED_CSV else None
        if frame is not None:
            return _Table(frame, list(frame.columns))
        # Declined (or not CSV by its name): the file whole, as any other, every message the one it gives.
        streamed = Path(display).suffix.lower() in (".csv", ".txt", "")
        data = data.path.read_bytes()
    if len(data) == 0:
        problems.add("empty file (0 bytes)")
        return None
    suffix = Path(display).suffix.lower()
    # Content decides over the name: a Parquet file renamed .csv still loads.
    if data[:4] == b"PAR1" or suffix in PARQUET_SUFFIXES:
        return _read_parquet(data, problems)
    if data[:2] == b"PK" or suffix in (".xlsx", ".xls", ".ods"):
        problems.add("looks like a spreadsheet or zip archive; save it as CSV or Parquet")
        return None
    if suffix not in (".csv", ".txt", ""):
        problems.add(f"unsupported file type {suffix!r}; run files are .csv or .parquet")
        return None
    frame = _read_csv(data, problems, unfiltered=not streamed)
    return None if frame is None else _Table(frame, list(frame.columns), arrow=not isinstance(frame, _PlainColumns))


def _read_parquet(data: bytes | Path, problems: _FileProblems) -> _Table | None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # No pre-buffering: it would keep every compressed column chunk read in memory until the end.
        parquet = pq.ParquetFile(_parquet_source(data), pre_buffer=False)
        # Checked before reading: pyarrow refuses to read repeated names with a cryptic message.
        schema = parquet.schema_arrow
        if _too_many_columns(len(schema.names), problems) or not _check_header(schema.names, problems):
            return None
        if not _check_plain_cells([f.name for f in schema if pa.types.is_nested(f.type)], problems):
            return None
        columns = [_nfc(column_name(str(name))) for name in schema.names]
        index_columns = _pandas_index_columns(schema)
        # Probabilities and logits, when all are floats, are read later batch by batch straight
        # into their matrices: a pandas copy of them would double the peak memory.
        matrix_columns = [i for i, c in enumerate(columns) if c.startswith((PROBA_PREFIX, LOGIT_PREFIX))]
        streamed = bool(matrix_columns) and all(pa.types.is_floating(schema.field(i).type) for i in matrix_columns)
        kept = [i for i in range(len(columns)) if not (streamed and i in set(matrix_columns))
                and schema.names[i] not in index_columns.unnamed]  # fmt: skip
        # Text columns with few distinct values become categories: codes, not one string object per row.
        text = (pa.types.is_string, pa.types.is_large_string)
        labels = [schema.names[i] for i in kept
                  if columns[i] in FEW_VALUES and any(t(schema.field(i).type) for t in text)]  # fmt: skip
        if labels:
            parquet.close(force=True)
            parquet = pq.ParquetFile(_parquet_source(data), pre_buffer=False, read_dictionary=labels)
        kept_names, float_names = [schema.names[i] for i in kept], [schema.names[i] for i in matrix_columns]
        # A file of one block is read in one call, its floats beside the rest (a second read of them cost a
        # fresh process 0.25 ms of CPU at 10^3 rows); a larger one's floats are read into their matrices below.
        together = (streamed and parquet.metadata.num_row_groups == 1
                    and parquet.metadata.num_rows <= _CHECK_BLOCK and READ_SMALL_PARQUET_ONCE)  # fmt: skip
        table = read_floats = None
        if together:
            try:
                table = parquet.read(columns=kept_names + float_names, use_threads=False)
                read_floats, table = table.select(float_names), table.select(kept_names)
            except Exception:  # noqa: BLE001 - read apart below, so that what is wrong is reported as it was
                table = None
        if table is None:
            table = parquet.read(columns=kept_names, use_threads=_threaded(parquet.metadata.num_rows))
        aggregate = bool(schema.metadata and b"valuecore.aggregate" in schema.metadata)
        recorded = None
        if aggregate:
            problems.add(AGGREGATE_NOTE, severity="warning")
            recorded = recorded_classes(schema.metadata[b"valuecore.aggregate"])
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for bad bytes
        problems.add(f"is not a readable Parquet file ({exc})")
        return None
    n = table.num_rows
    floats = (_FloatColumns(parquet, {columns[i]: schema.names[i] for i in matrix_columns}, n, read_floats)
              if streamed else None)  # fmt: skip
    if floats is None:
        parquet.close(force=True)  # its file, opened here (``_parquet_source``), is closed by its reader
    arrays = _numpy_columns_as_pandas_reads_them(table, schema) if NUMPY_PARQUET else None
    if arrays is not None:
        return _Table(_PlainColumns(dict(zip([columns[i] for i in kept], arrays))), columns, floats, aggregate,
                      arrow=table.nbytes >= _LARGE_ARROW_BYTES,  # the arrays are copies: Arrow keeps what it read
                      classes=recorded)
    large = table.nbytes >= _LARGE_ARROW_BYTES
    if index_columns.stored:  # kept as the columns they are in the file, not moved into the frame's index
        table = table.replace_schema_metadata(index_columns.metadata_without_index)
    # Column by column, freeing each Arrow column once converted: the table never exists twice.
    frame = table.to_pandas(split_blocks=True, self_destruct=True)
    del table
    if large:  # else Arrow reuses the little it keeps for the probabilities (handing it back costs page faults)
        _release_arrow_memory()
    frame.columns = _names([columns[i] for i in kept])
    if frame.shape[1] == 0:
        frame = pd.DataFrame(index=pd.RangeIndex(n))
    if index_columns.unnamed:
        columns = [c for c, name in zip(columns, schema.names) if name not in index_columns.unnamed]
    return _Table(frame, columns, floats, aggregate, classes=recorded)


def recorded_classes(metadata: bytes) -> tuple[str, ...] | None:
    """The classes an aggregate's metadata (``valuecore.aggregate``, JSON) records: those of the run files it was
    made from, which a top-label aggregate's labels may not all show (a batch of one class). None unless a list of
    at least 2 distinct, non-empty texts: the file is then read as any other, its classes found from its labels."""
    import json

    try:
        classes = json.loads(metadata).get("classes")
    except (ValueError, TypeError, AttributeError):  # not JSON (UnicodeDecodeError is a ValueError), not a dict
        return None
    if (not isinstance(classes, list) or len(classes) < 2 or not all(isinstance(c, str) and c for c in classes)
            or len(set(classes)) != len(classes)):
        return None
    return tuple(classes)


def _parquet_source(data: bytes | Path):
    """What ``pq.ParquetFile`` reads: bytes in memory, or the file opened as Arrow opens a path (``OSFile``),
    without pyarrow's resolution of a path to a filesystem, which cost a fresh process 0.2-0.4 ms of CPU at each
    load (the same bytes read; the reader is closed with ``close(force=True)``, which closes the file)."""
    import pyarrow as pa

    return pa.OSFile(str(data)) if isinstance(data, Path) else io.BytesIO(data)


class _PandasIndex:
    """The columns a file written by pandas stores its frame's index in (``df.to_parquet()`` of a filtered
    or re-indexed frame): ``unnamed`` ones (``__index_level_0__``: row labels, no data of the run) are left
    out; ``stored`` is every such column, which pandas's ``to_pandas`` would move into the frame's index (a
    named one, such as ``df.set_index("split")``'s, is a column of the run like any other)."""

    __slots__ = ("stored", "unnamed", "metadata_without_index")

    def __init__(self, stored=(), unnamed=(), metadata_without_index=None):
        self.stored, self.unnamed, self.metadata_without_index = set(stored), set(unnamed), metadata_without_index


_UNNAMED_INDEX = re.compile(r"__index_level_\d+__")


def _pandas_index_columns(schema) -> _PandasIndex:
    import json

    raw = (schema.metadata or {}).get(b"pandas")
    if raw is None:
        return _PandasIndex()
    try:
        meta = json.loads(raw)
        stored = [c for c in meta.get("index_columns", []) if isinstance(c, str) and c in schema.names]
    except (ValueError, TypeError, AttributeError):
        return _PandasIndex()  # not pandas's metadata after all: to_pandas decides, as before
    if not stored:
        return _PandasIndex()
    without = {**schema.metadata, b"pandas": json.dumps({**meta, "index_columns": []}).encode()}
    return _PandasIndex(stored, [c for c in stored if _UNNAMED_INDEX.fullmatch(c)], without)


# Whether a Parquet file's kept columns, when all are numbers without nulls, are taken as numpy arrays.
NUMPY_PARQUET = True

# Whether a Parquet file of one block is read in one call, its float columns with the others.
READ_SMALL_PARQUET_ONCE = True


def _numpy_columns_as_pandas_reads_them(table, schema) -> list[np.ndarray] | None:
    """The columns of an Arrow ``table`` as numpy arrays (writable), when each is the array of the column
    pandas's ``to_pandas`` makes: every column an integer or a float32/float64 one without nulls, and the
    file without pandas's metadata (which may restore an index, or a nullable dtype); else None.

    ``to_pandas`` of a 10^3-row file's one int16 column cost a fresh process 0.6 ms (its frame, blocks and
    index), the arrays 0.05."""
    import pyarrow as pa

    if table.num_columns == 0 or (schema.metadata and b"pandas" in schema.metadata):
        return None
    if not all((pa.types.is_integer(c.type) or c.type in (pa.float32(), pa.float64())) and c.null_count == 0
               for c in table.columns):  # fmt: skip
        return None
    arrays = [column.to_numpy() for column in table.columns]
    return [a if a.flags.writeable else a.copy() for a in arrays]


# Decoded bytes of a row group's float columns up to which it is decoded whole (two at a time at most).
_GROUP_BYTES = 128 << 20


# Threads that fill and check blocks of a file's float columns in file order (its checks record what they
# find by block, in any order, and report it in file order).
_PLACE_WORKERS = max(1, min(2, os.cpu_count() or 1))


# Blocks of a Parquet file beyond which Arrow decodes it on its threads and a pool places its blocks.
_THREADED_BLOCKS = 4


def _threaded(n: int) -> bool:
    """Whether Arrow decodes a file of ``n`` rows on its threads, and a pool places its blocks: not a file
    of a few blocks, which decode in less time than handing them to a busy core and back takes (the same
    bytes either way; 10^5 rows, 10 float32 columns, 8 fresh processes each at load 12: 14.1 ms of CPU
    without threads against 15.6 with them, two of the eight threaded ones at 66-72 ms)."""
    return n > _THREADED_BLOCKS * _CHECK_BLOCK


def _numpy_columns(batch) -> list[np.ndarray]:
    """The columns of an Arrow record batch as numpy arrays (no copy without nulls; nulls as NaN)."""
    return [column.to_numpy(zero_copy_only=False) for column in batch.columns]


class _FloatColumns:
    """Float columns of a Parquet file, read batch by batch into one matrix and checked as they come.

    Parameters
    ----------
    parquet : pyarrow.parquet.ParquetFile
    names : dict of str to str
        Stripped column name to the name in the file.
    n : int
        Rows of the file.
    read : pyarrow.Table, optional
        The float columns, read already (a file of one block); else they are read from ``parquet``.
    """

    def __init__(self, parquet, names: dict[str, str], n: int, read=None):
        self.parquet = parquet
        self.names = names
        self.n = n
        self.read = read

    def _matrix(self, columns, layout: _Layout | None, check):
        """Matrix (n, k) of ``columns``, its rows in the ``layout`` order (None: file order).

        ``check(block, first_file_row, columns)`` sees each block of file rows (and its columns as
        read, class-major, read-only), and may change the block,
        before it is placed. float32 stays float32 when every column is float32, as in
        :func:`_numeric_matrix`.
        """
        import pyarrow as pa

        schema = self.parquet.schema_arrow
        types = {schema.field(self.names[c]).type for c in columns}
        dtype = np.float32 if types == {pa.float32()} else np.float64
        matrix = _class_major_matrix(self.n, len(columns), dtype)
        group = None if layout is None or layout.order is None else layout.group
        if group is not None:
            buffer = _class_major_matrix(_CHECK_BLOCK, len(columns), dtype)
            cursor = layout.starts.copy()  # where each pair's next row goes

        def place(start: int, read: list[np.ndarray]) -> None:
            """Fill, check and lay out file rows start:start+len(read[0]) (one batch at a time, in order)."""
            stop = start + len(read[0])
            if group is None:
                block = matrix[start:stop]
            else:
                groups = group[start:stop]
                one = groups[0] if (groups == groups[0]).all() else None
                block = buffer[: stop - start] if one is None else matrix[cursor[one] : cursor[one] + stop - start]
            fill_columns(block, read)
            check(block, start, read)
            if group is None:
                pass
            elif one is not None:
                cursor[one] += stop - start
            else:
                # Each pair's rows of a block go, in file order, to the next free rows of that pair.
                by_pair = np.argsort(groups, kind="stable")
                sorted_groups = groups[by_pair]
                firsts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
                sorted_block = block[by_pair]
                for a, b in zip(firsts, np.r_[firsts[1:], by_pair.size]):
                    pair = sorted_groups[a]
                    matrix[cursor[pair] : cursor[pair] + b - a] = sorted_block[a:b]
                    cursor[pair] += b - a

        def place_all(start: int, blocks: list) -> None:
            for read in blocks:
                place(start, read)
                start += len(read[0])

        # Arrow decodes the next part while numpy places this one (both let go of the GIL), and few parts
        # wait (the memory stays a few parts). Laid out by (model, split), the blocks are placed in file
        # order by one worker (each pair's rows go to its next free rows); in file order, each block has
        # its own rows of the matrix, and the part's blocks are shared among the cores.
        workers = 1 if group is not None else _PLACE_WORKERS
        start = 0
        parts, most_waiting = self._parts([self.names[c] for c in columns], np.dtype(dtype).itemsize)
        with (ThreadPoolExecutor(max_workers=workers, thread_name_prefix="valuecore-place") if _threaded(self.n)
              else InlineExecutor()) as pool:
            waiting: deque = deque()
            for blocks in parts:
                share = -(-len(blocks) // workers)
                for first in range(0, len(blocks), share):
                    waiting.append(pool.submit(place_all, start, blocks[first : first + share]))
                    start += sum(len(read[0]) for read in blocks[first : first + share])
                del blocks
                while len(waiting) > most_waiting * workers:
                    waiting.popleft().result()
            while waiting:
                waiting.popleft().result()
        if start != self.n:
            raise ValueError(f"read {start} rows of probabilities, expected {self.n}")
        return matrix

    def _parts(self, names: list[str], itemsize: int):
        """(parts, how many may wait to be placed): the columns ``names`` in file order, each part a list
        of blocks of at most ``_CHECK_BLOCK`` rows, each block a list of numpy arrays (nulls as NaN).

        A part is a whole row group, its columns decoded at once on Arrow's threads, when row groups are
        small enough that two at a time cost little memory (pandas decodes the same way, and batch by batch
        costs 1.3-1.6x the CPU); else a batch of ``_CHECK_BLOCK`` rows.
        """
        if self.read is not None:
            return iter([[_numpy_columns(batch) for batch in self.read.select(names).to_batches(_CHECK_BLOCK)]]), 1
        metadata = self.parquet.metadata
        groups = range(metadata.num_row_groups)
        largest = max((metadata.row_group(i).num_rows for i in groups), default=0) * len(names) * itemsize
        if largest > _GROUP_BYTES:
            batches = self.parquet.iter_batches(batch_size=_CHECK_BLOCK, columns=names)
            return ([_numpy_columns(batch)] for batch in batches), 2

        def row_groups():
            for i in groups:
                table = self.parquet.read_row_group(i, columns=names, use_threads=_threaded(self.n))
                yield [_numpy_columns(batch) for batch in table.to_batches(max_chunksize=_CHECK_BLOCK)]

        return row_groups(), 1

    def close(self) -> None:
        """Let go of the file, and of the decoding buffers its reader keeps."""
        self.parquet.close(force=True)  # the file was opened for it (``_parquet_source``)
        self.parquet = self.read = None
        if self.n * len(self.names) * 8 >= _LARGE_ARROW_BYTES:  # else Arrow reuses the little it keeps
            _release_arrow_memory()

    def probabilities(self, columns, layout: _Layout | None, problems: _FileProblems, sum_tolerance, warn_tolerance):
        """As :func:`_probabilities`, its rows in the ``layout`` order."""
        checks = _ProbabilityChecks(columns, sum_tolerance, warn_tolerance, self.n)
        proba = self._deferred(columns, layout, checks)
        if proba is None:  # read again, into one matrix, and checked anew
            checks = _ProbabilityChecks(columns, sum_tolerance, warn_tolerance, self.n)
            proba = self._matrix(columns, layout, checks.block)
        return (proba, checks.argmax_and_max) if checks.report(problems) else (None, None)

    def _deferred(self, columns, layout: _Layout | None, checks: _ProbabilityChecks) -> ColumnMatrix | None:
        """The probabilities of a file of a few blocks in file order, of one float type, valid and at most
        ``_DEFERRED_BYTES``, as the blocks of columns Arrow decoded (checked, each row's argmax and max
        found); else None, and ``checks`` is to be set aside (it may have seen some blocks)."""
        # A file decoded on Arrow's threads has its blocks checked and placed by a pool as they come, which a
        # deferred matrix would give up; one laid out by (model, split) is placed out of file order.
        if (not DEFERRED_PROBABILITIES or self.n == 0 or _threaded(self.n)
                or (layout is not None and layout.order is not None)):
            return None
        names = [self.names[c] for c in columns]
        schema = self.parquet.schema_arrow
        types = {schema.field(name).type for name in names}
        if len(types) != 1:
            return None
        dtype = np.dtype(types.pop().to_pandas_dtype())
        if dtype not in (np.float32, np.float64) or self.n * len(names) * dtype.itemsize > _DEFERRED_BYTES:
            return None
        blocks, start = [], 0
        parts, _ = self._parts(names, dtype.itemsize)
        for part in parts:
            for read in part:
                if read[0].dtype != dtype or not checks.clean_columns(start, read):
                    return None
                blocks.append(read)
                start += len(read[0])
        return ColumnMatrix(blocks, dtype) if start == self.n else None

    def logits(self, columns, classes, layout: _Layout | None, problems: _FileProblems):
        """As :func:`_logits`, its rows in the ``layout`` order."""
        ordered = _logit_order(columns, classes, problems)
        if ordered is None:
            return None
        found: list = []

        (rule,) = SPECS[LOGIT_PREFIX].rules

        def check(block, start, read):
            rows, cols = np.nonzero(rule_mask(rule.rule, block))
            if rows.size:
                found.append((rows + start, cols))

        logits = self._matrix(ordered, layout, check)
        _report_columns(problems, ordered, found, rule.message)
        return logits


# Whether a valid probability matrix is kept as the columns Arrow decoded until first read (ColumnMatrix), up to
# _DEFERRED_BYTES: the matrix, when it is read, is made beside them (twice its size at once, not a block more).
DEFERRED_PROBABILITIES = True
_DEFERRED_BYTES = 32 << 20

# Whether a CSV that leaves no cell to the missing-value spellings or to the spaces skipped is read without them.
UNFILTERED_CSV = True


def _text_dtypes(text_columns: dict[str, str]) -> dict:
    """The dtype pandas reads each text column as: labels, models and splits as Python text (object), as the
    plain path reads them (the same codes; Arrow's text made a 10^5-row file's read cost 43-47 ms of CPU
    against 38-41, a 10^4-row one's 6-11 against 4-5); ids and times as pandas's text."""
    return {key: (object if name in FEW_VALUES else "str") for key, name in text_columns.items()}


def _pandas_keys(line: bytes, header: list[str]) -> list[tuple[str, ...]]:
    """Per column of ``header`` (``csv_header``'s names: the whitespace around them ignored), the names pandas
    may give it: the file's spelling, that spelling less the spaces ``skipinitialspace`` drops, and the name.
    A read's types and missing spellings are keyed by all (pandas ignores a key naming no column), so that a
    header ``y_true ,`` reads its labels as text: keyed by ``y_true`` alone, ``01`` became the number 1."""
    text = line.decode("utf-8").removeprefix("\ufeff").rstrip("\r\n")  # csv_header read it so
    spelled = next(csv.reader([text]))
    return [tuple(dict.fromkeys((raw, raw.lstrip(" "), name))) for raw, name in zip(spelled, header)]


def _text_keys(line: bytes, header: list[str], keys: list[tuple[str, ...]] | None = None) -> dict[str, str]:
    """Each name pandas may give a text column (``keys``, :func:`_pandas_keys` by default) -> the column's name."""
    keys = _pandas_keys(line, header) if keys is None else keys
    return {key: name for name, spelled in zip(header, keys) if name in TEXT_COLUMNS for key in spelled}


def _read_csv_unfiltered(data: bytes, text, header: list[str], text_columns: dict[str, str]) -> pd.DataFrame | None:
    """pandas's frame of a CSV read without looking for missing-value spellings or skipping spaces (a third
    less CPU), when neither can change a cell; else None.

    Neither can when the file has no space, tab, quote or CR, and every column but the text ones comes out
    as numbers without NaN: a spelling of a missing number (``NA``, ``nan``, ...), or an empty cell, would
    have made its column text or NaN. An empty cell of a text column is missing, as in the full read (the
    only spelling looked for, in those columns alone). Any warning or error hands the file to the full
    read, for its messages.
    """
    if any(mark in data for mark in _UNFILTERED_MARKS):
        return None
    if bytes(text[:1]) == b"," or data.endswith(b","):
        return None
    return _unfiltered_frame(io.BytesIO(text), header, text_columns)


# Single bytes, each found by memchr: a pair such as ",," is searched byte by byte (7 MB: 8 ms a pair).
_UNFILTERED_MARKS = (b" ", b"\t", b'"', b"\r")


def _unfiltered_frame(source, header: list[str], text_columns: dict[str, str], ends_in_comma=None
                      ) -> pd.DataFrame | None:
    """pandas's unfiltered read of ``source`` (a binary file object of the CSV's bytes, its byte-order mark cut)
    as :func:`_read_csv_unfiltered` describes it, or None; ``ends_in_comma``: after the read, whether the last
    byte read was a comma (then None), when the caller could not look before."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            frame = pd.read_csv(source, encoding="utf-8", dtype=_text_dtypes(text_columns),
                                keep_default_na=False, na_values={c: [""] for c in text_columns}, index_col=False,
                                low_memory=False)  # fmt: skip
    except Exception:  # noqa: BLE001 - the full read names what is wrong
        return None
    if ends_in_comma is not None and ends_in_comma():
        return None
    if frame.shape[1] != len(header):
        return None
    for name, (_, column) in zip(header, frame.items()):  # items(): a column apiece, cheaper than iloc's
        if name not in TEXT_COLUMNS:
            values = column.to_numpy()
            if values.dtype.kind not in "iuf" or (values.dtype.kind == "f" and np.isnan(values).any()):
                return None
    frame.columns = _names([_nfc(name) for name in header])
    return frame


class _MarkedChunk(Exception):
    """A chunk of a streamed CSV holds a byte that the unfiltered read would read otherwise than the full one."""


class _CheckedChunks:
    """A CSV file's bytes as pandas's C parser reads them (``read(size)``, a chunk at a time), each chunk
    searched for :data:`_UNFILTERED_MARKS` as it passes (one of them ends the read: :class:`_MarkedChunk`);
    ``last``: the last byte read."""

    def __init__(self, handle):
        self._handle = handle
        self.last = b""

    def read(self, size: int = -1) -> bytes:
        chunk = self._handle.read(size)
        if any(mark in chunk for mark in _UNFILTERED_MARKS):
            raise _MarkedChunk
        if chunk:
            self.last = chunk[-1:]
        return chunk

    def __iter__(self):  # pandas takes an object with ``read`` and ``__iter__`` for a file
        return iter(self.read, b"")


def _streamed_csv(path: Path, display: str) -> pd.DataFrame | _PlainColumns | None:
    """The frame of :func:`_read_csv_unfiltered` of the file at ``path``, pandas reading it from the file a chunk
    at a time, never held whole; or None (not CSV by its name, a header the loader would report on, a byte-order
    mark, a byte for the full read), and the file is read as bytes. The same bytes, checked the same way, and so
    the same frame."""
    if Path(display).suffix.lower() not in (".csv", ".txt", ""):
        return None
    seen = _FileProblems(display)
    with open(path, "rb") as handle:
        head = handle.read(1 << 16)  # what _read_csv looks at for binary data
        line = first_line(head, seen) if b"\n" in head else None
        header = None if line is None else csv_header(line, seen)
        if header is None or seen.items or b"\x00" in head or head.startswith(codecs.BOM_UTF8) or head[:1] == b",":
            return None
        columns = read_arrow_csv(path, header)
        if columns is not None:
            return _PlainColumns({_nfc(name): cells for name, cells in zip(header, columns.values())})
        handle.seek(0)
        chunks = _CheckedChunks(handle)
        return _unfiltered_frame(chunks, header, _text_keys(line, header), ends_in_comma=lambda: chunks.last == b",")


def _names(names: list[str]) -> pd.Index:
    """A frame's column names as Python text (object): the checks ask ``name in frame.columns`` a dozen times,
    and an index of Arrow text builds its lookup table through Arrow first (0.2 ms of a fresh process)."""
    return pd.Index(names, dtype=object)


class _PlainColumns:
    """The columns of a plain CSV file (``plaincsv``), or of a Parquet file of numbers
    (:func:`_numpy_columns_as_pandas_reads_them`), as the checks read a frame's: ``columns``, ``len`` and
    ``[name]``, a pandas Series of the column as read (labels as Python text, object, not Arrow's; numbers
    as read), made when asked for. A DataFrame of them cost a fresh process 1.2-1.5 ms at 10^3 rows
    (its index union and a copy per column), more than the checks themselves.

    ``columns``: the names (NFC, unique: both paths refuse repeated names), in file order.
    """

    __slots__ = ("columns", "_cells", "_n")

    def __init__(self, cells: dict[str, np.ndarray]):
        self.columns, self._cells = list(cells), cells
        self._n = len(next(iter(cells.values()))) if cells else 0

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, name: str) -> pd.Series:
        cells = self._cells[name]
        # The dtype given: object text would otherwise become Arrow's, as a DataFrame's column would.
        return pd.Series(cells, dtype=cells.dtype, name=name, copy=False)

    def plain_array(self, name: str) -> np.ndarray:
        """The column ``name`` as read, the array that ``[name]`` wraps (``cells._column``)."""
        return self._cells[name]


def _read_csv(data: bytes, problems: _FileProblems, unfiltered: bool = True) -> pd.DataFrame | _PlainColumns | None:
    """The columns of CSV bytes, or None after reporting why not; ``unfiltered``: False when the unfiltered read
    was tried (on the file) and declined."""
    line = first_line(data, problems)
    header = None if line is None else csv_header(line, problems)
    if header is None:
        return None
    if b"\x00" in data[:65536]:
        problems.add("contains binary data; it is neither CSV text nor Parquet")
        return None
    # The byte-order mark is cut here, not by pandas's "utf-8-sig": that decodes the file in Python (and
    # imports the zstandard module to look at the handle), while "utf-8" is read by its C parser as is.
    # Both refuse the same bytes and read the same cells.
    text = memoryview(data)[len(codecs.BOM_UTF8):] if data.startswith(codecs.BOM_UTF8) else data
    plain = read_plain_csv(text, header)
    if plain is None and UNFILTERED_CSV and unfiltered and len(text) > PLAIN_CSV_BYTES:
        # Arrow's first read costs a fresh process more than pandas's on a small file (5.9 ms against 4.9 at
        # 10^3 rows of full-precision floats), less on a larger one (9.1 against 10.3 at 10^4).
        plain = read_arrow_csv(text, header)
    if plain is not None:
        return _PlainColumns({_nfc(name): cells for name, cells in zip(header, plain.values())})
    keys = _pandas_keys(line, header)
    text_columns = _text_keys(line, header, keys)
    na_values = {key: ([""] if name in TEXT_COLUMNS else NUMERIC_MISSING) for name, spelled in zip(header, keys)
                 for key in spelled}
    frame = _read_csv_unfiltered(data, text, header, text_columns) if UNFILTERED_CSV and unfiltered else None
    if frame is not None:
        return frame
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.BytesIO(text),
                encoding="utf-8",
                dtype=_text_dtypes(text_columns),
                keep_default_na=False,
                na_values=na_values,
                index_col=False,
                skipinitialspace=True,
                low_memory=False,
            )
    except UnicodeDecodeError:
        problems.add("is not UTF-8 text; save the CSV as UTF-8")
        return None
    except (pd.errors.ParserError, ValueError) as exc:
        too_many = _TOO_MANY_FIELDS.search(str(exc))
        if too_many:
            expected, line, seen = (int(g) for g in too_many.groups())
            problems.add(
                f"a row has {seen} fields but the header has {expected} columns "
                "(a comma inside an unquoted value, or a missing header name?)",
                where=[line - 2],  # the parser counts lines from 1, header included
            )
        else:
            problems.add(f"is not a readable CSV file ({str(exc).strip()})")
        return None
    except pd.errors.EmptyDataError:
        problems.add("empty file (no header)")
        return None
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
        # pandas would silently drop the extra fields of such rows. Finding them
        # row by row is slow, but only ever happens for a broken file.
        reader = csv.reader(io.StringIO(data.decode("utf-8-sig")), skipinitialspace=True)
        next(reader)
        too_long = []
        try:
            too_long = [i for i, fields in enumerate(reader) if len(fields) > len(header)]
        except csv.Error:  # a field beyond the csv module's limit: the rows found so far are named
            pass
        problems.add(
            "rows have more fields than the header has columns "
            "(a comma inside an unquoted value, or a missing header name?)",
            where=too_long,
        )
        return None
    frame.columns = _names([_nfc(name) for name in header])
    return frame
