"""What both readers of a run file share, the in-memory loader (``runfiles``) and the aggregation
(``aggregate``): the format's constants, the problems report (:class:`LoadProblem`, one file's collector),
the limits a file is held to, and a header's checks with the kind of run it describes."""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # numpy is imported where rows are counted: an aggregation in DuckDB never needs it
    import numpy as np

from .columns import (
    LABEL_LIKE,
    LOGIT_PREFIX,
    PROBA_ALIASES,
    PROBA_PREFIX,
    RESERVED_COLUMNS,
    _nfc,
    column_name,
    is_run_column,
)
from .limits import clip_text, limit, refusal


DEFAULT_SPLIT = "all"


RUN_FILE_SUFFIXES = (".csv", ".parquet")


PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


SHOWN_ROWS = 5


SHOWN_COLUMNS = 5


MAX_GROUPS = 1000  # distinct models or splits per file


# Spellings read as "missing" in numeric CSV columns (pandas' defaults). Text
# columns (labels, model, split, id) only treat an empty field as missing,
# because "NA" or "None" can be a real class name.
NUMERIC_MISSING = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
    "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
]  # fmt: skip


Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class LoadProblem:
    """One problem found while loading a run file.

    Attributes
    ----------
    file : str
        The file as the user named it (path, or upload name).
    message : str
        What is wrong, in plain words, without the row list.
    column : str or None
        The offending column, None when the problem is not about one column.
    rows : tuple of int
        The first offending rows (at most 5), 1-based data rows: row 1 is the
        first row under the header.
    severity : {"error", "warning"}
        An error means the file (or the model named in the message) was not
        loaded; a warning means it was loaded as is.
    row_count : int
        Total number of offending rows; ``rows`` only holds the first few.
    """

    file: str
    message: str
    column: str | None = None
    rows: tuple[int, ...] = ()
    severity: Severity = "error"
    row_count: int = 0

    def __post_init__(self) -> None:
        # Names and cells from a file can be huge; a message stays a few lines long.
        object.__setattr__(self, "file", clip_text(self.file))
        object.__setattr__(self, "message", clip_text(self.message, 10 * limit("cell_chars")))
        if self.column is not None:
            object.__setattr__(self, "column", clip_text(self.column))
        if self.row_count < len(self.rows):
            object.__setattr__(self, "row_count", len(self.rows))

    def __str__(self) -> str:
        where = self.file if self.column is None else f"{self.file}, column {self.column}"
        text = f"{where}: {self.message}"
        if self.rows:
            label = "row" if self.row_count == 1 else "rows"
            text += f" at {label} " + ", ".join(str(r) for r in self.rows)
            if self.row_count > len(self.rows):
                text += f" (and {self.row_count - len(self.rows)} more)"
        return text


OUTSIDE_ROOTS = "is a link to a file outside the allowed folders; skipped"


def max_file_bytes() -> int:
    """Largest run file read, in bytes (``VALUECORE_MAX_FILE_MB``, see docs/run-format.md)."""
    return limit("file_mb") * 1_000_000


def too_large_message(size: int) -> str:
    return refusal("file_mb", "file is too large", f"{size / 1e6:,.1f} MB")


def _too_many_columns(n_columns: int, problems) -> bool:
    """Refuse a header with more columns than the limit, before pandas builds a frame of them."""
    if n_columns <= limit("columns"):
        return False
    problems.add(refusal("columns", "the header has too many columns", f"{n_columns:,}"))
    return True


def _too_many_classes(n_classes: int, problems) -> bool:
    if n_classes <= limit("classes"):
        return False
    problems.add(refusal("classes", "too many classes", f"{n_classes:,}"))
    return True


class _FileProblems:
    """Collects the problems of one file, turning masks into row numbers."""

    def __init__(self, display: str):
        self.display = display
        self.items: list[LoadProblem] = []

    def add(self, message: str, column: str | None = None, where=None, severity: Severity = "error"):
        """``where``: None, a boolean mask over file rows, or 0-based file row positions."""
        rows: tuple[int, ...] = ()
        count = 0
        if where is not None:
            import numpy as np

            where = np.asarray(where)
            positions = np.flatnonzero(where) if where.dtype == bool else np.sort(where)
            count = int(positions.size)
            rows = tuple(int(r) + 1 for r in positions[:SHOWN_ROWS])
        self.items.append(LoadProblem(self.display, message, column, rows, severity, count))

    def add_rows(self, message: str, tally: _RowTally, column: str | None = None, severity: Severity = "error"):
        """Like :meth:`add`, from a count of file rows and the first few of them (0-based)."""
        rows = tuple(r + 1 for r in tally.first[:SHOWN_ROWS])
        self.items.append(LoadProblem(self.display, message, column, rows, severity, tally.count))

    @property
    def has_errors(self) -> bool:
        return any(p.severity == "error" for p in self.items)


class _RunKind:
    """Which kind of run a header describes: full probabilities, or top label only.

    proba_columns, logit_columns : tuple of str
    classes : tuple of str, or None for a top-label run (its classes inferred from its labels)

    A plain slotted class, not a dataclass: a private record that nothing compares, hashes or copies, on
    every run file's path, where a dataclass costs about a millisecond of each fresh process.
    """

    __slots__ = ("proba_columns", "logit_columns", "classes")

    def __init__(self, proba_columns: tuple[str, ...], logit_columns: tuple[str, ...],
                 classes: tuple[str, ...] | None):
        self.proba_columns, self.logit_columns, self.classes = proba_columns, logit_columns, classes

    @property
    def inferred(self) -> bool:
        return self.classes is None


def _run_kind(columns: Sequence[str], problems: _FileProblems) -> _RunKind | None:
    """The run kind of a header, or None after reporting why it is neither kind."""
    proba_columns = tuple(c for c in columns if c.startswith(PROBA_PREFIX))
    logit_columns = tuple(c for c in columns if c.startswith(LOGIT_PREFIX))
    if proba_columns:
        classes = tuple(c[len(PROBA_PREFIX) :] for c in proba_columns)
        if "" in classes:
            problems.add("a probability column has no class name after 'proba_'", column=PROBA_PREFIX)
            return None
        if len(classes) < 2:
            problems.add(
                f"only one probability column ({proba_columns[0]}); give one proba_<class> column "
                "per class, including both classes of a binary problem",
                column=proba_columns[0],
            )
            return None
        if _too_many_classes(len(classes), problems):
            return None
        return _RunKind(proba_columns, logit_columns, classes)
    if "y_pred" in columns and "confidence" in columns:
        return _RunKind((), logit_columns, None)
    if "y_pred" in columns or "confidence" in columns:
        have, lack = ("y_pred", "confidence") if "y_pred" in columns else ("confidence", "y_pred")
        message = f"has {have} but no {lack} column; a top-label run needs both"
    else:
        message = (
            "no prediction columns: need one proba_<class> column per class, or y_pred and "
            f"confidence (found columns {_short_list(columns, 10)})"
        )
        if len(columns) == 1 and any(sep in columns[0] for sep in ";\t|"):
            message += "; the header looks separated by something else than commas: save as comma-separated CSV"
    problems.add(message)
    return None


def max_header_bytes() -> int:
    """Longest header line read: 1,024 bytes per allowed column (``VALUECORE_MAX_COLUMNS``)."""
    return limit("columns") * 1024


def first_line(source, problems) -> bytes | None:
    """The first line of a CSV (bytes, or a seekable binary file object), without its end.

    Read in blocks and never beyond :func:`max_header_bytes`: a hostile header (say 200 MB of
    commas) is refused after reading about ``limit("columns")`` commas, so refusing costs
    O(limit), not O(file), in time and memory. None after reporting why.
    """
    bound = max_header_bytes()
    # A first block of 4 KiB holds most headers; each next one is twice as large, up to 64 KiB. (A first
    # 64 KiB block cost a fresh process 16 new pages of memory, twice per file: as much as reading its
    # 10^3 rows.)
    block = 1 << 12
    seen = bytearray()
    commas, quoted, position = 0, False, 0
    start = None if isinstance(source, (bytes, bytearray, memoryview)) else source.tell()
    while len(seen) <= bound:
        if isinstance(source, (bytes, bytearray, memoryview)):
            chunk = bytes(source[position : position + block])
            position += len(chunk)
        else:
            chunk = source.read(block)
        block = min(2 * block, 1 << 16)
        if not chunk:
            break
        end = chunk.find(b"\n")
        piece = chunk if end < 0 else chunk[:end]
        seen += piece
        commas += piece.count(b",")
        quoted = quoted or b'"' in piece
        # Without quotes every comma separates two columns: refuse as soon as the count is over.
        if not quoted and commas + 1 > limit("columns"):
            problems.add(refusal("columns", "the header has too many columns", f"more than {limit('columns'):,}"))
            return None
        if end >= 0:
            if start is not None:  # a file is left just after the header line
                source.seek(start + len(seen) + 1)
            break
    if len(seen) > bound:
        problems.add(
            f"the first line (the column header) is longer than {bound:,} bytes; a run file starts with a "
            "short header line such as y_true,proba_a,proba_b"
        )
        return None
    return bytes(seen)


def _looks_utf16(line: bytes) -> bool:
    """A UTF-16 byte-order mark, or text whose every other byte is zero (UTF-16 without one)."""
    if line[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    sample = line[:512]
    return len(sample) >= 4 and (sample[1::2].count(0) == len(sample) // 2 or sample[0::2].count(0) == len(sample) // 2)


def csv_header(first_line: bytes, problems) -> list[str] | None:
    """The column names of a CSV header line, or None after reporting why they cannot be used.

    Shared by the loader and the aggregation's CSV sources, so both refuse the same headers
    (encoding, empty line, line ends, the column limit, missing or repeated names).
    """
    if _looks_utf16(first_line):
        problems.add("is UTF-16 text, not UTF-8; save the CSV as UTF-8")
        return None
    if b"\x00" in first_line:
        problems.add("contains binary data; it is neither CSV text nor Parquet")
        return None
    try:
        header_text = first_line.decode("utf-8")
    except UnicodeDecodeError:
        problems.add("is not UTF-8 text; save the CSV as UTF-8")
        return None
    # "utf-8-sig" without its codec module (imported on first use, for this line alone): one leading mark cut.
    header_text = header_text[1:] if header_text.startswith("\ufeff") else header_text
    if "\r" in header_text.rstrip("\r"):
        problems.add(
            "has lines ending in a carriage return only (old Mac line ends); save the CSV with \\n or \\r\\n line ends"
        )
        return None
    if not header_text.strip():
        problems.add("has an empty first line; the first line must be the column header")
        return None
    if header_text.count('"') % 2:
        problems.add(
            "the header has a line break inside a quoted column name (or a quote that is never closed); "
            "write the header on one line"
        )
        return None
    # pandas renames repeated headers to "x.1", so duplicates are found in the raw header.
    try:
        fields = next(csv.reader([header_text.rstrip("\r\n")]))
    except csv.Error:  # a name beyond the csv module's field limit (128 KiB)
        problems.add(f"a column name in the header is longer than {csv.field_size_limit():,} characters")
        return None
    if _too_many_columns(len(fields), problems) or not _check_header(fields, problems):
        return None
    return [column_name(name) for name in fields]


def _check_plain_cells(nested: Sequence[str], problems: _FileProblems) -> bool:
    """Whether no run column is among the ``nested`` columns (lists or records): each cell must hold one plain
    value."""
    nested = [name for name in nested if is_run_column(column_name(name))]
    for name in nested:
        problems.add("holds lists or records; a run file needs one plain value per cell", column=name)
    return not nested


def _check_header(names: Sequence[str], problems: _FileProblems) -> bool:
    """Whether no two of a header's ``names`` (as the file spells them) stand for one column, after reporting
    those that do."""
    spelled = [str(n) for n in names]
    names = [_nfc(column_name(n)) for n in spelled]
    repeated = [name for name, count in Counter(names).items() if count > 1 and name]
    for name in repeated:
        times = names.count(name)
        message = f"duplicate column: {clip_text(name)!r} appears {times} times in the header"
        spellings = list(dict.fromkeys(s for s, n in zip(spelled, names) if n == name))
        if len(spellings) > 1:  # equal only once the whitespace around them is ignored: say so, or it reads wrong
            message += (f" (written {', '.join(repr(clip_text(s)) for s in spellings)}; the whitespace around a "
                        "column name, and around the class after proba_ or logit_, is ignored)")
        problems.add(message, column=name)
    return not repeated


def _same_name_apart(first: str, second: str) -> str:
    """A clause for a message naming two files that give one model name: when their names differ only in
    Unicode form (composed "é", or "e" and an accent), the two look alike, so their code points are shown."""
    a, b = Path(first).stem, Path(second).stem
    if a == b or _nfc(a) != _nfc(b):
        return ""
    return f" (their names {ascii(a)} and {ascii(b)} differ only in Unicode form, and are one name)"


def _warn_unknown_columns(columns: Sequence[str], problems: _FileProblems) -> None:
    unknown = [
        c
        for c in columns
        if not is_run_column(c) and not _unnamed(c)
    ]
    if not unknown:
        return
    hints = []
    lowered = {r.lower(): r for r in RESERVED_COLUMNS}
    for c in unknown:
        known = lowered.get(c.lower().replace("-", "_").replace(" ", "_"))
        if known is None and c.lower().startswith(PROBA_ALIASES):
            known = PROBA_PREFIX + c.split("_", 1)[1]
        if known is not None:
            hints.append(f"{known!r} for {c!r}")
    if "y_true" not in columns:
        label_like = [c for c in unknown if c.strip().lower().replace("-", "_").replace(" ", "_") in LABEL_LIKE]
        if label_like:
            # Loading on would drop the labels without a word: every figure that needs them would be missing.
            problems.add(
                f"no y_true column, but {clip_text(label_like[0])!r} looks like the true labels: rename it to "
                "y_true (a file without y_true is read as unlabelled, so no value could be measured on it)",
                column=label_like[0],
            )
            return
    message = f"ignored unknown columns {_short_list(unknown)}"
    if hints:
        message += "; did you mean " + ", ".join(hints) + "?"
    problems.add(message, column=unknown[0] if len(unknown) == 1 else None, severity="warning")


def _unnamed(column: str) -> bool:
    # An empty header field (e.g. from a trailing comma); pandas names it "Unnamed: k".
    return column == "" or column.startswith("Unnamed: ")


class _RowTally:
    """How many file rows have a property, and the first few of them; blocks of rows may be added in
    any order (by several threads at once)."""

    def __init__(self):
        self._blocks: list = []  # (the block's first file row, its first few rows with it, how many)

    def add(self, mask: np.ndarray, start: int) -> None:
        import numpy as np

        positions = np.flatnonzero(mask)
        if positions.size:
            self._blocks.append((start, positions[:SHOWN_ROWS] + start, int(positions.size)))

    @property
    def count(self) -> int:
        return sum(size for _, _, size in self._blocks)

    @property
    def first(self) -> list[int]:
        return [int(r) for _, rows, _ in sorted(self._blocks, key=lambda b: b[0]) for r in rows][:SHOWN_ROWS]


def _short_list(items: Sequence, limit: int = 8) -> str:
    items = list(items)
    shown = ", ".join(repr(clip_text(i)) for i in items[:limit])
    if len(items) > limit:
        shown += f", ... ({len(items) - limit} more)"
    return f"[{shown}]"


# ------------------------------------------------------------------ labels and logit columns
# The loader's (``runfiles.cells``) and the aggregation's (``aggregate.checks``): here, so that an aggregation
# in DuckDB does not import the loader and numpy with it.

# ASCII digits: ``\d`` took "١.0" (Arabic-Indic digits) for class 1, which no SQL engine's cast reads.
_WHOLE_NUMBER_TEXT = re.compile(r"[+-]?[0-9]+\.0*")


def _canonical(text: str) -> str:
    return str(int(float(text))) if _WHOLE_NUMBER_TEXT.fullmatch(text) else text


def _logit_order(columns, classes, problems: _FileProblems) -> list[str] | None:
    """The logit_ columns in class order, or None when there are none or they name other classes."""
    if not columns:
        return None
    logit_classes = [c[len(LOGIT_PREFIX) :] for c in columns]
    if set(logit_classes) != set(classes) or len(logit_classes) != len(classes):
        missing = [c for c in classes if c not in logit_classes]
        extra = [c for c in logit_classes if c not in classes]
        problems.add(
            "logit_ columns must name the same classes as the proba_ columns "
            f"(missing {_short_list(missing)}, extra {_short_list(extra)})",
            column=columns[0],
        )
        return None
    return [LOGIT_PREFIX + c for c in classes]
