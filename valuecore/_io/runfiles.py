"""Read run files (CSV or Parquet, one row per prediction) into :class:`Predictions`.

The file format is described in ``docs/run-format.md``. Bad input never
raises: every problem becomes a :class:`LoadProblem` naming the file, the
column and the first offending rows, and the other files still load.

Row numbers in problems are 1-based *data* rows: row 1 is the first row
below the header (line 2 of a CSV file, row 2 of a spreadsheet).
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import unicodedata
import warnings
from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np

from .columns import (
    CONFIDENCE_TOLERANCE,
    FEW_VALUES,
    LABEL_LIKE,
    LOGIT_PREFIX,
    NOT_A_NUMBER,
    PROBA_ALIASES,
    PROBA_PREFIX,
    RESERVED_COLUMNS,
    SPECS,
    TEXT_COLUMNS,
    TIME_RANGE,
    UNKNOWN_LABELS,
    is_run_column,
    rule_mask,
)
from .fastload import InlineExecutor, clean_row_deviations, fill_columns, in_background, integer_label_codes
from .identity import DeferredDigest, file_sha256, stat_key
from .limits import clip_text, limit, refusal
from .._model.predictions import ClassCodes, Predictions, _top_of_columns
from .._engine.sorting import _small_ints
from .lazy import LazyModule

pd = LazyModule("pandas")  # imported on first use: the aggregation reads this module's checks without pandas

__all__ = [
    "LoadProblem",
    "LoadReport",
    "ModelRun",
    "check_comparable",
    "file_sha256",
    "load_run_file",
    "load_runs",
]

DEFAULT_SPLIT = "all"
RUN_FILE_SUFFIXES = (".csv", ".parquet")
PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
SHOWN_ROWS = 5
SHOWN_COLUMNS = 5
MAX_GROUPS = 1000  # distinct models or splits per file
# Class codes of labels that are not classes: empty cells, and text that names no class.
_MISSING = -2
_UNKNOWN = -1

# Spellings read as "missing" in numeric CSV columns (pandas' defaults). Text
# columns (labels, model, split, id) only treat an empty field as missing,
# because "NA" or "None" can be a real class name.
NUMERIC_MISSING = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
    "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
]  # fmt: skip

_WHOLE_NUMBER_TEXT = re.compile(r"[+-]?\d+\.0*")
_INTEGER_TEXT = re.compile(r"[+-]?\d+")
_TOO_MANY_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")

Severity = Literal["error", "warning"]

# Written by `python -m valuecore aggregate`: one row per group of equal (model, split,
# predicted class, confidence, true class), its weight the group's size.
AGGREGATE_NOTE = (
    "is an aggregate (one row per group of equal predictions, weight = items): thresholds, values, curves, "
    "intervals and label-free estimates are exact; the expected-value rule, temperature scaling and "
    "comparisons paired by id need each item's own row and are approximate or unavailable here"
)


# --------------------------------------------------------------------- results
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


class _Digest:
    """``ModelRun.sha256``: a hex digest given as text (or None), or a :class:`DeferredDigest` the loader
    hands over for a Parquet file read from disk, computed when first read (see ``_io/identity.py``)."""

    def __set_name__(self, owner, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, run, owner=None):
        if run is None:
            raise AttributeError(self.slot[1:])  # no default value for the dataclass field
        value = run.__dict__[self.slot]
        return value.hexdigest() if isinstance(value, DeferredDigest) else value

    def __set__(self, run, value) -> None:
        run.__dict__[self.slot] = value


@dataclass(frozen=True, eq=False)
class ModelRun:
    """The predictions of one model, split by split.

    Attributes
    ----------
    model : str
        Model name: the file stem, or the value of the ``model`` column.
    path : str
        The file it came from, as the user named it.
    sha256 : str
        Hex SHA-256 of the file bytes (shared by all models of one file). For a
        Parquet file read from disk it is computed when first read, from the
        file checked unchanged since it was loaded; reading it raises a
        ``ValueError`` naming the file when the file has changed since.
    classes : tuple of str, length n_classes
        Class labels as text, in probability-column order.
    splits : dict of str to Predictions
        One entry per split, in order of first appearance in the file.
    aggregate : bool
        True when the file is an aggregate written by ``python -m valuecore aggregate``
        (one row per group of equal predictions, its weight the group's size): what
        needs each item's own row (the expected-value rule, temperature scaling, a
        comparison paired by id) does not apply to it.
    """

    model: str
    path: str
    sha256: str = _Digest()  # type: ignore[assignment]
    classes: tuple[str, ...]
    splits: dict[str, Predictions] = field(default_factory=dict)
    aggregate: bool = False

    @property
    def split_names(self) -> tuple[str, ...]:
        return tuple(self.splits)

    @property
    def n_rows(self) -> int:
        """Number of rows over all splits (before weighting)."""
        return sum(p.n for p in self.splits.values())


@dataclass(frozen=True, eq=False)
class LoadReport:
    """What :func:`load_runs` found: the models that loaded and every problem.

    Attributes
    ----------
    models : dict of str to ModelRun
        The loaded models by name, in load order.
    problems : tuple of LoadProblem
        Errors and warnings, in the order they were found.
    """

    models: dict[str, ModelRun]
    problems: tuple[LoadProblem, ...] = ()

    @property
    def errors(self) -> tuple[LoadProblem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> tuple[LoadProblem, ...]:
        return tuple(p for p in self.problems if p.severity == "warning")

    @property
    def ok(self) -> bool:
        """True when nothing went wrong (warnings allowed)."""
        return not self.errors


# ----------------------------------------------------------------- public API
def load_runs(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    sum_tolerance: float = 1e-2,
    warn_tolerance: float = 1e-6,
    splits: Sequence[str] | None = None,
    roots: Sequence[str | os.PathLike] | None = None,
) -> LoadReport:
    """Load run files and folders of run files into one comparison.

    Parameters
    ----------
    paths : path or iterable of paths
        Run files (CSV or Parquet) and folders; a folder contributes its
        ``*.csv`` and ``*.parquet`` files (not recursive), in name order.
    sum_tolerance : float
        A probability row whose sum is further than this from 1 is an error.
    warn_tolerance : float
        A row further than this from 1 (but within ``sum_tolerance``) is a
        warning; the probabilities are kept as they are, not renormalised.
    splits : sequence of str, optional
        Keep only these splits; a model without rows in one of them gets a
        warning, and a model with none of them is not loaded.
    roots : sequence of paths, optional
        For a server: every file, its symbolic links resolved, must lie inside
        one of these folders; a link pointing elsewhere is refused (skipped,
        with a problem). Default: no restriction.

    Returns
    -------
    LoadReport
        Models that loaded, plus problems. Models with the same class set in
        a different column order are reordered to a common order; top-label
        runs whose classes were inferred from their labels are widened to the
        common class set; remaining class-set differences are reported as
        errors by :func:`check_comparable` (the models stay loaded).
    """
    splits = _split_filter(splits)
    problems: list[LoadProblem] = []
    models: dict[str, ModelRun] = {}
    inferred_classes: set[str] = set()
    for display, path in _expand_paths(paths, problems, roots):
        try:
            early = _early_header_problems(path, display)
            if early:
                problems.extend(early)
                continue
            data = _file_content(path)
        except OSError as exc:
            problems.append(LoadProblem(display, f"cannot be read: {exc.strerror or exc}"))
            continue
        runs, file_problems, inferred = _load_bytes(
            data, display, sum_tolerance=sum_tolerance, warn_tolerance=warn_tolerance, splits=splits
        )
        problems.extend(file_problems)
        for run in runs:
            if run.model in models:
                problems.append(
                    LoadProblem(
                        display,
                        f"model name {run.model!r} is already taken by {models[run.model].path}; "
                        "this one was not loaded (rename the file or the model column values)",
                    )
                )
                continue
            models[run.model] = run
            if inferred:
                inferred_classes.add(run.model)
    models = _align_classes(models, inferred_classes)
    problems.extend(check_comparable(models))
    return LoadReport(models=models, problems=tuple(problems))


def load_run_file(
    path_or_bytes: str | os.PathLike | bytes,
    *,
    name: str | None = None,
    sum_tolerance: float = 1e-2,
    warn_tolerance: float = 1e-6,
    splits: Sequence[str] | None = None,
) -> LoadReport:
    r"""Load one run file, from disk or from bytes (e.g. a Streamlit upload).

    Parameters
    ----------
    path_or_bytes : path or bytes
        A file path, or the file content.
    name : str, optional
        File name for bytes input (its suffix picks the format, its stem is
        the model name); defaults to ``"upload.csv"``. For a path it replaces
        the path in problems and ``ModelRun.path``, and names the model.
    sum_tolerance, warn_tolerance, splits
        As in :func:`load_runs`.

    Returns
    -------
    LoadReport

    Examples
    --------
    >>> report = load_run_file(b"y_true,proba_a,proba_b\na,0.9,0.1\nb,0.3,0.7\n", name="logreg.csv")
    >>> report.ok, report.models["logreg"].classes, report.models["logreg"].split_names
    (True, ('a', 'b'), ('all',))
    >>> print(load_run_file(b"y_true,proba_a,proba_b\na,0.9,\n", name="logreg.csv").errors[0])
    logreg.csv, column proba_b: NaN or missing probabilities at row 1
    """
    splits = _split_filter(splits)
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(path_or_bytes)
        display = name or "upload.csv"
    else:
        display = name or str(path_or_bytes)
        reason = _not_a_readable_file(Path(path_or_bytes))
        if reason is not None:  # checked first: reading a FIFO would wait forever
            return LoadReport({}, (LoadProblem(display, reason),))
        try:
            early = _early_header_problems(Path(path_or_bytes), display)
            if early:
                return LoadReport({}, tuple(early))
            data = _file_content(Path(path_or_bytes))
        except OSError as exc:
            return LoadReport({}, (LoadProblem(display, f"cannot be read: {exc.strerror or exc}"),))
    runs, problems, _ = _load_bytes(
        data, display, sum_tolerance=sum_tolerance, warn_tolerance=warn_tolerance, splits=splits
    )
    models: dict[str, ModelRun] = {}
    for run in runs:
        models[run.model] = run
    problems.extend(check_comparable(models))
    return LoadReport(models=models, problems=tuple(problems))


def check_comparable(models: Mapping[str, ModelRun] | Iterable[ModelRun]) -> list[LoadProblem]:
    """Report models whose classes differ from those of the other models.

    Parameters
    ----------
    models : mapping of name to ModelRun, or iterable of ModelRun

    Returns
    -------
    list of LoadProblem
        An error for each model whose class *set* differs from the most common
        set (ties: the first model's), a warning for the same set in a
        different order. Empty when all models agree.
    """
    runs = list(models.values()) if isinstance(models, Mapping) else list(models)
    if len(runs) < 2:
        return []
    reference = _reference_classes(runs)
    others = sum(1 for r in runs if set(r.classes) == set(reference))
    problems = []
    for run in runs:
        if run.classes == reference:
            continue
        if set(run.classes) == set(reference):
            problems.append(
                LoadProblem(
                    run.path,
                    f"model {run.model!r} has the same classes as the others but in another "
                    f"column order ({_short_list(run.classes)} vs {_short_list(reference)})",
                    severity="warning",
                )
            )
            continue
        missing = [c for c in reference if c not in run.classes]
        extra = [c for c in run.classes if c not in reference]
        detail = "; ".join(
            part
            for part in (
                f"missing {_short_list(missing)}" if missing else "",
                f"extra {_short_list(extra)}" if extra else "",
            )
            if part
        )
        problems.append(
            LoadProblem(
                run.path,
                f"model {run.model!r} has classes {_short_list(run.classes)} but {others} other "
                f"model(s) have {_short_list(reference)} ({detail}); models with different "
                "classes cannot be compared",
            )
        )
    return problems


def _split_filter(splits) -> tuple[str, ...] | None:
    # A lone string would otherwise be matched character by character.
    if splits is None:
        return None
    return (splits,) if isinstance(splits, str) else tuple(str(s) for s in splits)


# ------------------------------------------------------------- file discovery
def _expand_paths(paths, problems: list[LoadProblem], roots=None) -> list[tuple[str, Path]]:
    found = _expand_given(paths, problems)
    if roots is None:
        return found
    from .paths import outside_roots

    inside = []
    for display, path in found:
        if outside_roots(path, roots):
            problems.append(LoadProblem(display, OUTSIDE_ROOTS))
        else:
            inside.append((display, path))
    return inside


OUTSIDE_ROOTS = "is a link to a file outside the allowed folders; skipped"


def _expand_given(paths, problems: list[LoadProblem]) -> list[tuple[str, Path]]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: list[tuple[str, Path]] = []
    for given in paths:
        if not str(given).strip():
            problems.append(LoadProblem(repr(str(given)), "an empty path names no file or folder; give a path"))
            continue
        path = Path(given)
        if path.is_dir():
            # Hidden files are skipped: macOS "._name.csv" resource forks are not runs.
            try:
                candidates = sorted(
                    p for p in path.iterdir() if p.suffix.lower() in RUN_FILE_SUFFIXES and not p.name.startswith(".")
                )
            except OSError as exc:
                problems.append(LoadProblem(str(given), f"folder cannot be listed: {exc.strerror or exc}"))
                continue
            files = []
            for p in candidates:
                reason = _not_a_readable_file(p)
                if reason is None:
                    files.append(p)
                else:
                    problems.append(LoadProblem(str(p), reason))
            if not candidates:
                problems.append(LoadProblem(str(given), "folder holds no .csv or .parquet run files"))
            found.extend((str(p), p) for p in files)
        elif path.exists() or path.is_symlink():
            reason = _not_a_readable_file(path)
            if reason is None:
                found.append((str(given), path))
            else:
                problems.append(LoadProblem(str(given), reason))
        else:
            problems.append(LoadProblem(str(given), "no such file or folder"))
    return found


def _not_a_readable_file(path: Path) -> str | None:
    """Why ``path`` cannot be read as a run file (a broken link, a FIFO...), or None.

    Checked before opening: opening a FIFO would wait for a writer forever.
    """
    import errno
    import stat

    try:
        info = path.stat()
    except RuntimeError:
        return "is a symbolic link that loops; skipped"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link that loops; skipped"
        if exc.errno == errno.ENOENT and path.is_symlink():
            return "is a symbolic link to nothing (its target is missing); skipped"
        return f"cannot be read: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return "is a folder, not a run file; skipped (folders are not read recursively)"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file (a pipe, socket or device); skipped"
    if info.st_size > max_file_bytes():
        return too_large_message(info.st_size)
    return None


# ------------------------------------------------------------------- limits
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


# ------------------------------------------------------------------- one file
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


def _load_bytes(
    data: bytes, display: str, *, sum_tolerance: float, warn_tolerance: float, splits
) -> tuple[list[ModelRun], list[LoadProblem], bool]:
    """Parse and check one file. Returns (runs, problems, classes_were_inferred).

    Any error in a file means none of its models is loaded: a half-loaded
    multi-model file would make comparisons silently incomplete.
    """
    problems = _FileProblems(display)
    # A Parquet file is read from disk (``data`` is its path), anything else from its bytes.
    info = data.stat() if isinstance(data, Path) else None
    size = len(data) if info is None else info.st_size
    if size > max_file_bytes():
        problems.add(too_large_message(size))
        return [], problems.items, False
    try:
        runs, inferred = _parse_file(data, display, problems, sum_tolerance, warn_tolerance, splits,
                                     None if info is None else stat_key(info))  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - the loader promises no traceback for any input
        problems.add(f"could not be loaded ({type(exc).__name__}: {exc})")
        runs, inferred = [], False
    if problems.has_errors:
        runs = []
    return runs, problems.items, inferred


def _parse_file(data, display, problems: _FileProblems, sum_tolerance, warn_tolerance, splits, key=None):
    """Read one file, check every column, then cut it into runs by model and split.

    ``key``: the :func:`stat_key` of a file read from disk (``data`` its path), taken before reading it.
    """
    table = _read_table(data, display, problems)
    if table is None:
        return [], False
    frame = table.frame
    if len(frame) == 0:
        problems.add("file has a header but no data rows")
        return [], False
    _warn_unknown_columns(table.columns, problems)
    kind = _run_kind(table.columns, problems)
    if kind is None:
        return [], False
    # Bytes in memory are hashed while the columns convert; a file on disk only when its digest is asked for.
    sha = in_background(lambda: _sha256(data)) if key is None else (lambda: DeferredDigest(data, display, key))
    parsed = _parse_columns(frame, kind, display, problems, sum_tolerance, warn_tolerance, table.floats)
    aggregate = table.aggregate
    del frame, table  # the file's columns are converted: free them before the splits are cut
    _release_arrow_memory()
    if key is not None and not _unchanged(data, key):
        problems.add("changed while it was being read; load it again")
    if parsed is None or problems.has_errors:
        return [], kind.inferred
    return _build_runs(parsed, display, sha(), problems, splits, aggregate), kind.inferred


def _unchanged(path: Path, key: tuple) -> bool:
    """Whether the file at ``path`` is still the one whose :func:`stat_key` was ``key``."""
    try:
        return stat_key(path.stat()) == key
    except OSError:
        return False


@dataclass(frozen=True)
class _RunKind:
    """Which kind of run a header describes: full probabilities, or top label only."""

    proba_columns: tuple[str, ...]
    logit_columns: tuple[str, ...]
    classes: tuple[str, ...] | None  # None: a top-label run, classes inferred from its labels

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


@dataclass(frozen=True, eq=False)
class _ParsedColumns:
    """Every column of one file, checked, as arrays (n,) with the rows ordered by (model, split).

    ``groups`` maps each (model index, split index) to (its file rows, for problems; its
    rows of the arrays, a slice).
    """

    classes: tuple[str, ...]
    groups: dict
    model_names: list[str]
    split_names: list[str]
    y_true_codes: np.ndarray | None
    proba: np.ndarray | None
    logits: np.ndarray | None
    y_pred_codes: np.ndarray | None
    confidence: np.ndarray | None
    weight: np.ndarray | None
    timestamp: np.ndarray | None
    ids: np.ndarray | None

    @property
    def class_text(self) -> np.ndarray:
        return np.asarray(self.classes, dtype=object)


def _parse_columns(frame, kind: _RunKind, display, problems: _FileProblems, sum_tolerance, warn_tolerance, floats):
    """Check and convert every column; None when the classes cannot be known.

    ``floats``: None, or the reader of the file's float columns that ``frame`` lacks
    (the probabilities and logits of a Parquet file, read straight into their matrices).
    """
    n = len(frame)
    model_codes, model_names = _group_column(frame, "model", _display_stem(display), problems, n)
    split_codes, split_names = _group_column(frame, "split", DEFAULT_SPLIT, problems, n)
    if "model" in frame.columns or "split" in frame.columns:
        layout = _layout(model_codes, split_codes, len(split_names))
    else:  # one model, one split: the file's order is theirs
        layout = _Layout(None, None, np.zeros(1, dtype=np.int64), {(0, 0): (0, n)})
    del model_codes, split_codes
    order = layout.order
    weight = _weights(frame, problems)
    timestamp = _timestamps(frame, problems)
    ids = _ids(frame)
    classes = kind.classes if kind.classes is not None else _infer_classes(frame, problems)
    if classes is None:
        return None
    y_true_codes = _label_column(frame, "y_true", classes, problems)
    # Every column is put in (model, split) order once, so that each split is a view
    # (a slice), not a copy; Parquet probabilities are read into that order directly.
    laid_out = floats is not None and not kind.inferred
    groups = {key: (_rows(order, a, b), slice(a, b)) for key, (a, b) in layout.bounds.items()}
    if kind.inferred:
        proba = logits = None
        y_pred_codes, confidence = _top_label_columns(frame, kind, classes, problems)
    else:
        proba, logits, top = _probability_columns(
            frame, kind, classes, problems, sum_tolerance, warn_tolerance, floats, layout if laid_out else None
        )
        # For a full-probability run these hold the argmax and max found while checking (or None).
        y_pred_codes, confidence = (None, None) if top is None else top
        if not laid_out:
            proba, logits = _in_order(proba, order), _in_order(logits, order)
    y_true_codes, y_pred_codes, confidence = (_in_order(v, order) for v in (y_true_codes, y_pred_codes, confidence))
    weight, timestamp, ids = (_in_order(v, order) for v in (weight, timestamp, ids))
    return _ParsedColumns(
        classes, groups, model_names, split_names, y_true_codes, proba, logits,
        y_pred_codes, confidence, weight, timestamp, ids,
    )  # fmt: skip


def _in_order(values: np.ndarray | None, order: np.ndarray | None) -> np.ndarray | None:
    """Rows of ``values`` (file order) in the (model, split) order."""
    return values if values is None or order is None else values[order]


def _rows(order: np.ndarray | None, start: int, stop: int):
    """File rows start:stop of the (model, split) order: a slice when the file is already in that order."""
    return slice(start, stop) if order is None else order[start:stop]


def _probability_columns(
    frame, kind: _RunKind, classes, problems: _FileProblems, sum_tolerance, warn_tolerance, floats=None, layout=None
):
    """(proba, logits, top) of a full-probability run; a given y_pred is only compared.

    With ``floats`` the matrices are read from the file with their rows in the
    ``layout`` order; problems still name file rows. ``top``: each row's (argmax, max)
    in file order, found while checking, or None.
    """
    order = None
    if floats is None:
        proba, top = _probabilities(frame, list(kind.proba_columns), problems, sum_tolerance, warn_tolerance)
        logits = _logits(frame, list(kind.logit_columns), classes, problems)
    else:
        order = layout.order
        proba, top = floats.probabilities(list(kind.proba_columns), layout, problems, sum_tolerance, warn_tolerance)
        logits = floats.logits(list(kind.logit_columns), classes, layout, problems)
        floats.close()
    if "y_pred" in frame.columns:
        y_pred_given = _label_column(frame, "y_pred", classes, problems)
        if proba is not None and y_pred_given is not None:
            if top is not None:  # both in file order
                disagree = (y_pred_given >= 0) & (y_pred_given != top[0])
            else:
                if order is not None:
                    y_pred_given = y_pred_given[order]
                disagree = (y_pred_given >= 0) & (y_pred_given != np.argmax(proba, axis=1))
                if order is not None:
                    disagree = order[disagree]
            if disagree.any():
                problems.add(
                    "y_pred differs from the most probable proba_ column; predictions are "
                    "taken from the probabilities and y_pred/confidence are ignored",
                    column="y_pred",
                    where=disagree,
                    severity="warning",
                )
    return proba, logits, top


def _top_label_columns(frame, kind: _RunKind, classes, problems: _FileProblems):
    """(y_pred codes, confidence) of a top-label run."""
    if kind.logit_columns:
        problems.add(
            "logit_ columns are ignored in a top-label run (they need proba_ columns)",
            column=kind.logit_columns[0],
            severity="warning",
        )
    y_pred_codes = _label_column(frame, "y_pred", classes, problems)
    if y_pred_codes is not None:
        missing = y_pred_codes == _MISSING
        if missing.any():
            problems.add(SPECS["y_pred"].rules[0].text("y_pred"), column="y_pred", where=missing)
    return y_pred_codes, _confidence(frame, problems)


def _build_runs(parsed: _ParsedColumns, display, sha, problems: _FileProblems, splits, aggregate: bool):
    """One :class:`ModelRun` per model of the file, each holding its requested splits."""
    runs = []
    groups = parsed.groups
    several_models = len(parsed.model_names) > 1
    # Splits left out must not keep a whole laid-out matrix alive through views of it.
    copy = splits is not None and any(parsed.split_names[s] not in splits for _, s in groups)
    for model_index, model in enumerate(parsed.model_names):
        model_splits: dict[str, Predictions] = {}
        for split_index, split in enumerate(parsed.split_names):
            if splits is not None and split not in splits:
                continue
            rows = groups.get((model_index, split_index))
            if rows is None:
                continue  # this model has no rows in that split; reported below if asked for
            context = _context(split, model if several_models else None)
            prediction = _build_split(*rows, context, problems, parsed, copy)
            if prediction is not None:
                model_splits[split] = prediction
        if splits is not None and not _report_missing_splits(model, model_splits, splits, problems):
            continue
        runs.append(ModelRun(model, display, sha, parsed.classes, model_splits, aggregate))
    return runs


def _report_missing_splits(model, model_splits, splits, problems: _FileProblems) -> bool:
    """Warn about requested splits a model lacks; False when it has none of them."""
    for wanted in splits:
        if wanted not in model_splits:
            problems.add(f"model {model!r} has no rows in split {wanted!r}", column="split", severity="warning")
    if not model_splits:
        problems.add(f"model {model!r} has no rows in the requested splits {list(splits)}")
        return False
    return True


def _display_stem(display: str) -> str:
    """Model name implied by a file name: its stem (``runs/logreg.csv`` -> ``logreg``)."""
    return Path(display).stem


@dataclass(frozen=True, eq=False)
class _Layout:
    """The file's rows ordered by (model, split), rows staying in file order within a pair.

    order : (n,) 0-based file rows in that order, or None when the file is in that order already
    group : (n,) int16 or int32 index of each file row's pair, or None without ``order``
    starts : (n_pairs,) where each pair's rows start in that order
    bounds : {(model index, split index): (start, stop)}
    """

    order: np.ndarray | None
    group: np.ndarray | None
    starts: np.ndarray
    bounds: dict


def _layout(model_codes: np.ndarray, split_codes: np.ndarray, n_splits: int) -> _Layout:
    key = model_codes * n_splits + split_codes
    if key.size == 0 or (key[1:] >= key[:-1]).all():
        order = None
        sorted_keys = key
    else:
        # Stable: rows stay in file order within a group; a radix sort when the keys are small.
        radix = key if key.min() < 0 else _small_ints(key, int(key.max()) + 1)
        order = np.argsort(radix, kind="stable")
        sorted_keys = key[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    ends = np.r_[starts[1:], key.size]
    distinct = sorted_keys[starts]
    group = None
    if order is not None:
        # Keys are below models x splits (at most MAX_GROUPS ** 2): a lookup table, not a search.
        shift = int(distinct[0])
        # int16 when it can: half the memory, and numpy sorts it by radix (see _FloatColumns).
        small = np.int16 if distinct.size <= np.iinfo(np.int16).max else np.int32
        lookup = np.zeros(int(distinct[-1]) - shift + 1, dtype=small)
        lookup[distinct - shift] = np.arange(distinct.size, dtype=small)
        group = lookup[key - shift if shift else key]
    bounds = {
        (int(k) // n_splits, int(k) % n_splits): (int(a), int(b)) for k, a, b in zip(distinct, starts, ends)
    }
    return _Layout(order, group, starts, bounds)


def _context(split: str, model: str | None) -> str:
    return f"split {split!r}" + (f" of model {model!r}" if model is not None else "")


def _build_split(file_rows, rows: slice, context, problems: _FileProblems, parsed: _ParsedColumns, copy: bool):
    """Make the :class:`Predictions` of one split of one model.

    ``file_rows``: its rows in the file (positions or a slice), for problems; ``rows``:
    its rows of ``parsed``'s arrays, copied when ``copy`` (else views of them).
    """

    def absolute(mask):
        """File row positions of a mask over this split's rows."""
        return np.flatnonzero(mask) + file_rows.start if isinstance(file_rows, slice) else file_rows[mask]

    if copy:
        rows = np.arange(rows.start, rows.stop)  # indexing by positions copies
    ok, y_true = _split_labels(parsed, rows, context, absolute, problems)
    if not ok:
        return None
    ok, split_time = _split_times(parsed.timestamp, rows, context, absolute, problems)
    if not ok:
        return None
    ok, split_ids = _split_ids(parsed.ids, rows, context, absolute, problems)
    if not ok:
        return None
    split_weight = None if parsed.weight is None else parsed.weight[rows]
    if split_weight is not None and not (split_weight > 0).any():
        problems.add(f"all weights are zero in {context}", column="weight", severity="warning")
    common = {"classes": parsed.classes, "sample_weight": split_weight, "ids": split_ids, "timestamp": split_time}
    try:
        if parsed.proba is not None:
            logits = None if parsed.logits is None else parsed.logits[rows]
            # Checked column by column above; a second pass over (n, C) would only cost time and memory.
            top = None if parsed.confidence is None else (parsed.y_pred_codes[rows], parsed.confidence[rows])
            return Predictions._from_checked_proba(parsed.proba[rows], y_true, logits=logits, top=top,
                                                   capped=top is not None, **common)  # fmt: skip
        y_pred = parsed.class_text[parsed.y_pred_codes[rows]]
        return Predictions.from_top_label(y_pred, parsed.confidence[rows], y_true, **common)
    except ValueError as exc:
        # Safety net only: the checks above should catch everything first. Row
        # numbers inside this message count from 0 within the split.
        problems.add(f"{context}: {exc}")
        return None


def _split_labels(parsed: _ParsedColumns, rows, context, absolute, problems: _FileProblems):
    """(ok, y_true text or None): a split is wholly labelled or wholly unlabelled."""
    if parsed.y_true_codes is None:
        return True, None
    codes = parsed.y_true_codes[rows]
    missing = codes == _MISSING
    if missing.all():
        return True, None  # a whole split without labels (e.g. prod) is simply unlabeled
    if missing.any():
        problems.add(
            f"y_true is missing in {context}, which has labels elsewhere "
            "(leave y_true empty for a whole split to mark it unlabeled)",
            column="y_true",
            where=absolute(missing),
        )
        return False, None
    return True, ClassCodes(codes)


def _split_times(timestamp, rows, context, absolute, problems: _FileProblems):
    """(ok, timestamps or None): a split has a time on every row or on none."""
    if timestamp is None:
        return True, None
    values = timestamp[rows]
    missing = np.isnat(values)
    if missing.all():
        return True, None
    if missing.any():
        problems.add(
            f"timestamp is missing in {context}, which has timestamps elsewhere",
            column="timestamp",
            where=absolute(missing),
        )
        return False, None
    return True, values


def _split_ids(ids, rows, context, absolute, problems: _FileProblems):
    """(ok, ids or None): ids on every row or none; duplicates are a warning."""
    if ids is None:
        return True, None
    values = ids[rows]
    missing = pd.isna(values)
    if missing.all():
        return True, None
    if missing.any():
        problems.add(f"id is missing in {context}, which has ids elsewhere", column="id", where=absolute(missing))
        return False, None
    duplicated = pd.Series(values).duplicated(keep="first").to_numpy()
    if duplicated.any():
        problems.add(
            f"duplicate ids in {context} (models are paired by id)",
            column="id",
            where=absolute(duplicated),
            severity="warning",
        )
    return True, values


# ---------------------------------------------------------------- reading
def _early_header_problems(path: Path, display: str) -> list[LoadProblem]:
    """The problems of a CSV file's header, found before the file is read whole (empty when fine).

    A hostile header is refused after reading O(limit) bytes of it, not the file."""
    if Path(display).suffix.lower() not in (".csv", ".txt", ""):
        return []
    problems = _FileProblems(display)
    with open(path, "rb") as handle:
        head = handle.read(4)
        if head == b"PAR1" or head[:2] == b"PK":  # Parquet or a spreadsheet: their readers decide
            return []
        handle.seek(0)
        line = first_line(handle, problems)
        if line is not None and line.strip():
            csv_header(line, problems)
    return problems.items if problems.has_errors else []


def _file_content(path: Path) -> bytes | Path:
    """The bytes of a file, or the path itself for Parquet, which is read from disk
    column by column rather than held in memory twice (bytes, then decoded)."""
    with open(path, "rb") as handle:
        if handle.read(4) == b"PAR1":
            return path
    return path.read_bytes()


# Arrow memory above which a table read beside the probabilities is handed back to the system at once.
_LARGE_ARROW_BYTES = 64 << 20


def _release_arrow_memory() -> None:
    """Hand Arrow's freed buffers back to the system (its allocator keeps them for reuse)."""
    import sys

    if "pyarrow" in sys.modules:
        sys.modules["pyarrow"].default_memory_pool().release_unused()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, eq=False)
class _Table:
    """A file as read: its columns (names stripped, file order), those in ``frame``, and
    the reader of the float columns left out of it (Parquet probabilities and logits)."""

    frame: pd.DataFrame
    columns: list[str]
    floats: _FloatColumns | None = None
    aggregate: bool = False  # written by `python -m valuecore aggregate`


def _read_table(data: bytes | Path, display: str, problems: _FileProblems) -> _Table | None:
    if isinstance(data, Path):
        return _read_parquet(data, problems)
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
    frame = _read_csv(data, problems)
    return None if frame is None else _Table(frame, list(frame.columns))


def _read_parquet(data: bytes | Path, problems: _FileProblems) -> _Table | None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # No pre-buffering: it would keep every compressed column chunk read in memory until the end.
        parquet = pq.ParquetFile(data if isinstance(data, Path) else io.BytesIO(data), pre_buffer=False)
        # Checked before reading: pyarrow refuses to read repeated names with a cryptic message.
        schema = parquet.schema_arrow
        if _too_many_columns(len(schema.names), problems) or not _check_header(schema.names, problems):
            return None
        if not _check_plain_cells(schema, problems):
            return None
        columns = [_nfc(str(name).strip()) for name in schema.names]
        # Probabilities and logits, when all are floats, are read later batch by batch straight
        # into their matrices: a pandas copy of them would double the peak memory.
        matrix_columns = [i for i, c in enumerate(columns) if c.startswith((PROBA_PREFIX, LOGIT_PREFIX))]
        streamed = bool(matrix_columns) and all(pa.types.is_floating(schema.field(i).type) for i in matrix_columns)
        kept = [i for i in range(len(columns)) if not (streamed and i in set(matrix_columns))]
        # Text columns with few distinct values become categories: codes, not one string object per row.
        text = (pa.types.is_string, pa.types.is_large_string)
        labels = [schema.names[i] for i in kept
                  if columns[i] in FEW_VALUES and any(t(schema.field(i).type) for t in text)]  # fmt: skip
        if labels:
            source = data if isinstance(data, Path) else io.BytesIO(data)
            parquet = pq.ParquetFile(source, pre_buffer=False, read_dictionary=labels)
        table = parquet.read(columns=[schema.names[i] for i in kept])
        aggregate = bool(schema.metadata and b"valuecore.aggregate" in schema.metadata)
        if aggregate:
            problems.add(AGGREGATE_NOTE, severity="warning")
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for bad bytes
        problems.add(f"is not a readable Parquet file ({exc})")
        return None
    n = table.num_rows
    large = table.nbytes >= _LARGE_ARROW_BYTES
    # Column by column, freeing each Arrow column once converted: the table never exists twice.
    frame = table.to_pandas(split_blocks=True, self_destruct=True)
    del table
    if large:  # else Arrow reuses the little it keeps for the probabilities (handing it back costs page faults)
        _release_arrow_memory()
    frame.columns = [columns[i] for i in kept]
    if frame.shape[1] == 0:
        frame = pd.DataFrame(index=pd.RangeIndex(n))
    floats = _FloatColumns(parquet, {columns[i]: schema.names[i] for i in matrix_columns}, n) if streamed else None
    return _Table(frame, columns, floats, aggregate)


# Decoded bytes of a row group's float columns up to which it is decoded whole (two at a time at most).
_GROUP_BYTES = 128 << 20
# Threads that fill and check blocks of a file's float columns in file order (its checks record what they
# find by block, in any order, and report it in file order).
_PLACE_WORKERS = max(1, min(2, os.cpu_count() or 1))


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
    """

    def __init__(self, parquet, names: dict[str, str], n: int):
        self.parquet = parquet
        self.names = names
        self.n = n

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
        with (ThreadPoolExecutor(max_workers=workers, thread_name_prefix="valuecore-place") if self.n > _CHECK_BLOCK
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
        metadata = self.parquet.metadata
        groups = range(metadata.num_row_groups)
        largest = max((metadata.row_group(i).num_rows for i in groups), default=0) * len(names) * itemsize
        if largest > _GROUP_BYTES:
            batches = self.parquet.iter_batches(batch_size=_CHECK_BLOCK, columns=names)
            return ([_numpy_columns(batch)] for batch in batches), 2

        def row_groups():
            for i in groups:
                table = self.parquet.read_row_group(i, columns=names, use_threads=True)
                yield [_numpy_columns(batch) for batch in table.to_batches(max_chunksize=_CHECK_BLOCK)]

        return row_groups(), 1

    def close(self) -> None:
        """Let go of the file, and of the decoding buffers its reader keeps."""
        self.parquet.close()
        self.parquet = None
        _release_arrow_memory()

    def probabilities(self, columns, layout: _Layout | None, problems: _FileProblems, sum_tolerance, warn_tolerance):
        """As :func:`_probabilities`, its rows in the ``layout`` order."""
        checks = _ProbabilityChecks(columns, sum_tolerance, warn_tolerance, self.n)
        proba = self._matrix(columns, layout, checks.block)
        return (proba, checks.argmax_and_max) if checks.report(problems) else (None, None)

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
    block = 1 << 16
    seen = bytearray()
    commas, quoted, position = 0, False, 0
    start = None if isinstance(source, (bytes, bytearray, memoryview)) else source.tell()
    while len(seen) <= bound:
        if isinstance(source, (bytes, bytearray, memoryview)):
            chunk = bytes(source[position : position + block])
            position += len(chunk)
        else:
            chunk = source.read(block)
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
        header_text = first_line.decode("utf-8-sig")
    except UnicodeDecodeError:
        problems.add("is not UTF-8 text; save the CSV as UTF-8")
        return None
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
        header = [name.strip() for name in next(csv.reader([header_text.rstrip("\r\n")]))]
    except csv.Error:  # a name beyond the csv module's field limit (128 KiB)
        problems.add(f"a column name in the header is longer than {csv.field_size_limit():,} characters")
        return None
    if _too_many_columns(len(header), problems) or not _check_header(header, problems):
        return None
    return header


def _read_csv(data: bytes, problems: _FileProblems) -> pd.DataFrame | None:
    line = first_line(data, problems)
    header = None if line is None else csv_header(line, problems)
    if header is None:
        return None
    if b"\x00" in data[:65536]:
        problems.add("contains binary data; it is neither CSV text nor Parquet")
        return None
    text_columns = [c for c in header if c in TEXT_COLUMNS]
    na_values = {c: ([""] if c in TEXT_COLUMNS else NUMERIC_MISSING) for c in header}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.BytesIO(data),
                encoding="utf-8-sig",
                dtype={c: "str" for c in text_columns},
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
    frame.columns = [_nfc(name) for name in header]
    return frame


def _check_plain_cells(schema, problems: _FileProblems) -> bool:
    """Whether every run column of an Arrow ``schema`` holds one plain value per cell (no lists, no records)."""
    import pyarrow as pa

    nested = [f.name for f in schema if pa.types.is_nested(f.type) and is_run_column(f.name.strip())]
    for name in nested:
        problems.add("holds lists or records; a run file needs one plain value per cell", column=name)
    return not nested


def _check_header(names: Sequence[str], problems: _FileProblems) -> bool:
    names = [_nfc(str(n).strip()) for n in names]
    repeated = [name for name, count in Counter(names).items() if count > 1 and name]
    for name in repeated:
        times = names.count(name)
        problems.add(f"duplicate column: {clip_text(name)!r} appears {times} times in the header", column=name)
    return not repeated


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


# ----------------------------------------------------------- column checks
def _text_values(series: pd.Series) -> tuple[np.ndarray, list[str | None]]:
    """Factorise a column to (codes, canonical text of each unique value).

    Only unique values are turned into text, so this stays fast on 10^6 rows.
    Whole-number floats (``1.0``, from an integer column that held NaN) read as
    integers. Missing and blank values get code -1.
    """
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    texts: list[str | None] = []
    for value in uniques.tolist() if hasattr(uniques, "tolist") else list(uniques):
        if isinstance(value, (bytes, bytearray)):  # Parquet text stored as binary
            value = bytes(value).decode("utf-8", errors="replace")
        if isinstance(value, float):
            if not np.isfinite(value):
                texts.append(None)
                continue
            if value.is_integer():
                value = int(value)
        text = _nfc(str(value).strip())
        texts.append(text or None)
    return np.asarray(codes, dtype=np.int64), texts


def _nfc(text: str) -> str:
    """Text in Unicode's composed form (NFC): "é" typed as one character or as "e" plus an accent is
    one name, never two classes or models that look alike."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _group_column(frame, column: str, default: str, problems: _FileProblems, n: int):
    """Codes (n,) and names of the groups in ``model`` or ``split``, in order of appearance."""
    if column not in frame.columns:
        return np.zeros(n, dtype=np.int64), [default]
    codes, texts = _text_values(frame[column])
    index_of: dict[str, int] = {}
    remap = np.full(len(texts) + 1, -1, dtype=np.int64)  # last slot serves code -1
    for i, text in enumerate(texts):
        if text is not None:
            remap[i] = index_of.setdefault(text, len(index_of))
    names = list(index_of)
    if len(names) > MAX_GROUPS:
        problems.add(
            f"{column} has {len(names)} distinct values (at most {MAX_GROUPS}); is it the right column?",
            column=column,
        )
    codes = remap[codes]
    missing = codes < 0
    if missing.any():
        problems.add(SPECS[column].rules[0].text(column), column=column, where=missing)
    return codes, names


def _infer_classes(frame, problems: _FileProblems) -> tuple[str, ...] | None:
    labels: set[str] = set()
    for column in ("y_pred", "y_true"):
        if column in frame.columns:
            labels.update(_canonical(t) for t in _text_values(frame[column])[1] if t is not None)
    if len(labels) < 2:
        problems.add(
            f"a top-label run needs at least 2 classes among y_pred and y_true, found {_short_list(sorted(labels))}",
            column="y_pred",
        )
        return None
    if _too_many_classes(len(labels), problems):
        return None
    if all(_INTEGER_TEXT.fullmatch(c) for c in labels):
        return tuple(sorted(labels, key=int))
    return tuple(sorted(labels))


def _canonical(text: str) -> str:
    return str(int(float(text))) if _WHOLE_NUMBER_TEXT.fullmatch(text) else text


def _label_column(frame, column: str, classes: tuple[str, ...], problems: _FileProblems) -> np.ndarray | None:
    """Class index of each row (n,), ``_MISSING`` where empty; unknown labels are errors."""
    if column not in frame.columns:
        return None
    codes = integer_label_codes(frame[column], classes)
    if codes is not None:  # integer labels, all of them classes: no hashing
        return codes
    codes, texts = _text_values(frame[column])
    lookup = {c: i for i, c in enumerate(classes)}
    remap = np.full(len(texts) + 1, _MISSING, dtype=np.int64)
    unknown_labels = []
    for i, text in enumerate(texts):
        if text is None:
            continue
        index = lookup.get(text, lookup.get(_canonical(text)))
        if index is None:
            unknown_labels.append(text)
            index = _UNKNOWN
        remap[i] = index
    class_codes = remap[codes]
    unknown = class_codes == _UNKNOWN
    if unknown.any():
        problems.add(
            f"labels {_short_list(unknown_labels)} {UNKNOWN_LABELS} {_short_list(classes)}",
            column=column,
            where=unknown,
        )
    return class_codes


def _numeric(frame, column: str, problems: _FileProblems) -> tuple[np.ndarray, np.ndarray | None]:
    """Column as float64 (n,), and the mask of text values that are not numbers
    (reported here, NaN in the result; None when the column was numeric)."""
    series = frame[column]
    not_number = None
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        converted = pd.to_numeric(series, errors="coerce")
        not_number = converted.isna().to_numpy() & series.notna().to_numpy()
        if not_number.any():
            problems.add(NOT_A_NUMBER, column=column, where=not_number)
        series = converted
    return series.to_numpy(dtype=np.float64, na_value=np.nan), not_number


def _class_major_matrix(n: int, k: int, dtype) -> np.ndarray:
    """An empty (n, k) matrix stored column by column (Fortran order), as Parquet and pandas hold the
    columns: each is copied in whole, with no transposition; every numpy operation reads it as any other."""
    return np.empty((k, n), dtype=dtype).T


def _numeric_matrix(frame, columns, problems: _FileProblems) -> tuple[np.ndarray, np.ndarray | None]:
    """Columns as one matrix (n, k) and the (n, k) mask of non-numeric text (None when all are numbers).

    Float columns keep their dtype (float32 stays float32: half the memory,
    and every float32 is exactly a float64) and are copied once, column by
    column, into the (column-major) matrix; nothing else of size (n, k) is made.
    """
    if all(pd.api.types.is_float_dtype(frame[c]) for c in columns):
        dtypes = {np.dtype(frame[c].dtype.numpy_dtype if hasattr(frame[c].dtype, "numpy_dtype") else frame[c].dtype)
                  for c in columns}  # fmt: skip
        dtype = np.float32 if dtypes == {np.dtype(np.float32)} else np.float64
        matrix = _class_major_matrix(len(frame), len(columns), dtype)
        for j, c in enumerate(columns):
            matrix[:, j] = frame[c].to_numpy(dtype=dtype, na_value=np.nan)
        return matrix, None
    parts = [_numeric(frame, c, problems) for c in columns]
    matrix = np.column_stack([values for values, _ in parts])
    not_number = np.column_stack(
        [np.zeros(len(frame), bool) if mask is None else mask for _, mask in parts]
    )
    return matrix, not_number


def _probabilities(frame, columns, problems: _FileProblems, sum_tolerance, warn_tolerance):
    """Probability matrix (n, n_classes) in the file's float dtype, or None after reporting errors;
    and its (argmax, max) in file order, or None when the checks could not find them.

    Checked in blocks of rows, so the working memory stays a few MB whatever n.
    """
    before = len(problems.items)
    proba, not_number = _numeric_matrix(frame, columns, problems)
    checks = _ProbabilityChecks(columns, sum_tolerance, warn_tolerance, proba.shape[0])
    for start in range(0, proba.shape[0], _CHECK_BLOCK):
        text = None if not_number is None else not_number[start : start + _CHECK_BLOCK]
        block = proba[start : start + _CHECK_BLOCK]
        checks.block(block, start, np.ascontiguousarray(block.T), text)
    checks.report(problems)
    if any(p.severity == "error" for p in problems.items[before:]):
        return None, None
    return proba, checks.argmax_and_max


class _ProbabilityChecks:
    """Checks a probability matrix block by block of file rows, remembering what is wrong.

    NaN, infinite and negative entries are kept by column; rows whose sum is off are
    counted with their first few rows and the worst deviation. Entries a hair above 1
    (a row within the sum tolerance) are set to 1 in place, so no threshold exceeds 1.
    """

    RULES = SPECS[PROBA_PREFIX].rules
    MESSAGES = tuple(rule.message for rule in RULES)

    def __init__(self, columns, sum_tolerance: float, warn_tolerance: float, n: int):
        self.columns = columns
        # Each row's predicted class and confidence (argmax, max, in the columns' dtype), in file order,
        # found from the columns as read while they are in cache; None once a block could not say.
        self.n = n
        # Made before the blocks, which threads may check at once; its pages cost nothing until written.
        self.top: tuple[np.ndarray, np.ndarray] = (np.empty(n, dtype=np.int64), np.empty(n))
        self._found = True
        self.sum_tolerance = sum_tolerance
        self.warn_tolerance = warn_tolerance
        self.found: dict[str, list] = {m: [] for m in self.MESSAGES}  # (file rows, column indices) per block
        self._worst: list[float] = []  # per block
        self.too_far = _RowTally()
        self.off = _RowTally()

    @property
    def worst(self) -> float:
        return max(self._worst, default=0.0)

    def block(self, block: np.ndarray, start: int, columns, text: np.ndarray | None = None) -> None:
        """Check rows start:start+len(block) of the file, given row-major (``block``) and class-major
        (``columns``); ``text``: their non-numeric cells, reported already."""
        clean = clean_row_deviations(columns) if text is None else None
        if clean is None:
            deviation = self._bad_entries(block, start, text)
            self._found = False  # a bad entry: the file is refused, or (text) the argmax is found later
            worst = float(deviation.max()) if deviation.size else 0.0
        else:
            deviation, worst = clean
        self._worst.append(worst)
        if not worst <= min(self.sum_tolerance, self.warn_tolerance):  # else no row is off: no masks
            self.too_far.add(deviation > self.sum_tolerance, start)
            self.off.add(deviation > self.warn_tolerance, start)
        top = None
        if self._found and deviation.size:
            # The confidences in float64, as Predictions keeps them: no conversion later.
            y_pred, confidence = (part[start : start + deviation.size] for part in self.top)
            found = confidence if columns[0].dtype == np.float64 else np.empty(deviation.size, columns[0].dtype)
            if _top_of_columns(columns, y_pred, found, np.empty(deviation.size, dtype=bool)):
                top = found
                if found is not confidence:
                    np.copyto(confidence, found)
            else:
                self._found = False
        if deviation.size and (block.max() if top is None else top.max()) > 1.0:
            np.minimum(block, 1.0, out=block)
            if top is not None:  # the confidences too, so that Predictions need not pass over them again
                np.minimum(confidence, 1.0, out=confidence)

    @property
    def argmax_and_max(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(argmax, max) of every row, or None when some block could not say."""
        return self.top if self._found else None

    def _bad_entries(self, block: np.ndarray, start: int, text: np.ndarray | None) -> np.ndarray:
        """Record the NaN, infinite and negative entries; the rows' deviations from 1 (0 where invalid)."""
        masks = [rule_mask(rule.rule, block, text) for rule in self.RULES]
        for message, mask in zip(self.MESSAGES, masks):
            if mask.any():
                rows, cols = np.nonzero(mask)
                self.found[message].append((rows + start, cols))
        invalid = np.logical_or.reduce(masks).any(axis=1)
        if text is not None:
            invalid |= text.any(axis=1)
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf in rows already reported
            deviation = np.abs(block.sum(axis=1, dtype=np.float64) - 1.0)
        deviation[invalid] = 0.0
        return deviation

    def report(self, problems: _FileProblems) -> bool:
        """Add the problems found; False when any is an error."""
        for message in self.MESSAGES:
            _report_columns(problems, self.columns, self.found[message], message)
        if self.too_far.count:
            problems.add_rows(
                f"probabilities do not sum to 1 (worst deviation {self.worst:.3g}, "
                f"tolerance {self.sum_tolerance:g})",
                self.too_far,
            )
        elif self.off.count:
            problems.add_rows(
                f"probabilities sum to 1 only approximately (worst deviation {self.worst:.3g}, "
                "kept as they are)",
                self.off,
                severity="warning",
            )
        return not (self.too_far.count or any(self.found.values()))


class _RowTally:
    """How many file rows have a property, and the first few of them; blocks of rows may be added in
    any order (by several threads at once)."""

    def __init__(self):
        self._blocks: list = []  # (the block's first file row, its first few rows with it, how many)

    def add(self, mask: np.ndarray, start: int) -> None:
        positions = np.flatnonzero(mask)
        if positions.size:
            self._blocks.append((start, positions[:SHOWN_ROWS] + start, int(positions.size)))

    @property
    def count(self) -> int:
        return sum(size for _, _, size in self._blocks)

    @property
    def first(self) -> list[int]:
        return [int(r) for _, rows, _ in sorted(self._blocks, key=lambda b: b[0]) for r in rows][:SHOWN_ROWS]


_CHECK_BLOCK = 1 << 16  # rows per block of the probability checks


def _report_columns(problems: _FileProblems, columns, found: list, message: str) -> None:
    """One problem per offending column, from (file rows, column indices) blocks; the first few columns only."""
    if not found:
        return
    rows = np.concatenate([r for r, _ in found])
    cols = np.concatenate([c for _, c in found])
    bad_columns = np.unique(cols)
    for j in bad_columns[:SHOWN_COLUMNS]:
        problems.add(message, column=columns[j], where=rows[cols == j])
    if bad_columns.size > SHOWN_COLUMNS:
        more = [columns[j] for j in bad_columns[SHOWN_COLUMNS:]]
        problems.add(f"{message} also in columns {_short_list(more)}")


def _report_by_column(problems: _FileProblems, columns, bad: np.ndarray, message: str) -> None:
    """One problem per offending column of a (n, n_columns) mask, the first few columns only."""
    bad_columns = np.flatnonzero(bad.any(axis=0))
    for j in bad_columns[:SHOWN_COLUMNS]:
        problems.add(message, column=columns[j], where=bad[:, j])
    if bad_columns.size > SHOWN_COLUMNS:
        more = [columns[j] for j in bad_columns[SHOWN_COLUMNS:]]
        problems.add(f"{message} also in columns {_short_list(more)}")


def _logits(frame, columns, classes, problems: _FileProblems):
    ordered = _logit_order(columns, classes, problems)
    if ordered is None:
        return None
    logits, not_number = _numeric_matrix(frame, ordered, problems)
    (rule,) = SPECS[LOGIT_PREFIX].rules
    _report_by_column(problems, ordered, rule_mask(rule.rule, logits, not_number), rule.message)
    return logits


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


def _checked_number(frame, column: str, problems: _FileProblems) -> np.ndarray:
    """A number column as float64, each of its rules in ``columns.SPECS`` checked (same rows, same messages
    as the aggregation's SQL)."""
    values, not_number = _numeric(frame, column, problems)
    for rule in SPECS[column].rules:
        bad = rule_mask(rule.rule, values, not_number)
        if bad.any():
            problems.add(rule.text(column), column=column, where=bad, severity=rule.severity)
    return values


def _confidence(frame, problems: _FileProblems) -> np.ndarray:
    confidence = _checked_number(frame, "confidence", problems)
    # float32 round-off (1.00000012) is read as 1: a threshold must never exceed 1.
    near_one = (confidence > 1) & (confidence <= 1 + CONFIDENCE_TOLERANCE)
    if near_one.any():
        confidence = np.where(near_one, 1.0, confidence)
    return confidence


def _weights(frame, problems: _FileProblems) -> np.ndarray | None:
    return _checked_number(frame, "weight", problems) if "weight" in frame.columns else None


def _timestamps(frame, problems: _FileProblems) -> np.ndarray | None:
    """Timestamps (n,) datetime64[ns], NaT where empty; offsets converted to UTC."""
    if "timestamp" not in frame.columns:
        return None
    series = frame["timestamp"]
    if isinstance(series.dtype, pd.DatetimeTZDtype):
        parsed = series.dt.tz_convert("UTC").dt.tz_localize(None)
    elif pd.api.types.is_datetime64_dtype(series):
        parsed = series
    elif pd.api.types.is_numeric_dtype(series) and not series.isna().all():
        problems.add(
            "timestamps must be dates and times such as 2024-05-01T13:00:00, not numbers",
            column="timestamp",
            where=series.notna().to_numpy(),
        )
        return None
    else:
        text = series.astype("str").str.strip().where(series.notna())
        text = text.where(text != "")
        parsed = _parse_times(text)
        failed = parsed.isna().to_numpy() & text.notna().to_numpy()
        if failed.any():
            problems.add(
                "timestamps that are not ISO 8601 dates or times (e.g. 2024-05-01 or 2024-05-01T13:00:00)",
                column="timestamp",
                where=failed,
            )
            return None
    if _times_out_of_range(parsed, problems):
        return None
    return parsed.to_numpy(dtype="datetime64[ns]")


def _times_out_of_range(parsed: pd.Series, problems: _FileProblems) -> bool:
    """Report timestamps that nanoseconds cannot hold (they would wrap around silently)."""
    values = parsed.to_numpy()
    if values.dtype == np.dtype("datetime64[ns]"):
        return False
    # Compared in the column's own (coarser) unit, so the comparison itself cannot overflow.
    outside = (values < np.datetime64(TIME_RANGE[0], "D")) | (values > np.datetime64(TIME_RANGE[1], "D"))
    if not outside.any():
        return False
    problems.add(
        f"timestamps outside the supported range {TIME_RANGE[0]} to {TIME_RANGE[1]}",
        column="timestamp",
        where=outside,
    )
    return True


def _parse_times(text: pd.Series) -> pd.Series:
    # ISO 8601 only: it parses vectorised, and "03/04/2024" would be ambiguous anyway.
    parsed = pd.to_datetime(text, utc=True, format="ISO8601", errors="coerce")
    return parsed.dt.tz_convert("UTC").dt.tz_localize(None)


def _ids(frame) -> np.ndarray | None:
    if "id" not in frame.columns:
        return None
    series = frame["id"]
    if pd.api.types.is_float_dtype(series) and series.dropna().map(float.is_integer).all():
        # An integer id column that held NaN comes back as float; give back integers.
        series = series.astype("Int64")
    values = series.to_numpy(dtype=object, na_value=None)
    return values


# -------------------------------------------------------------- comparison
def _reference_classes(runs: Sequence[ModelRun]) -> tuple[str, ...]:
    """The most common class set (ties: first seen), in the order of its first model."""
    counts = Counter(frozenset(r.classes) for r in runs)
    best = max(counts.values())
    for run in runs:
        if counts[frozenset(run.classes)] == best:
            return run.classes
    raise AssertionError("unreachable")


def _align_classes(models: dict[str, ModelRun], inferred: set[str]) -> dict[str, ModelRun]:
    """Put every model in the common class order; widen inferred top-label class sets."""
    if len(models) < 2:
        return models
    reference = _reference_classes(list(models.values()))
    aligned = {}
    for name, run in models.items():
        same_set = set(run.classes) == set(reference)
        widen = name in inferred and set(run.classes) < set(reference)
        if run.classes != reference and (same_set or widen):
            splits = {s: _with_classes(p, reference) for s, p in run.splits.items()}
            run = replace(run, classes=reference, splits=splits)
        aligned[name] = run
    return aligned


def _with_classes(prediction: Predictions, classes: tuple[str, ...]) -> Predictions:
    """The same predictions expressed over ``classes`` (a reordering or a superset)."""
    text = np.asarray(prediction.classes, dtype=object)
    y_true = None if prediction.y_true is None else text[prediction.y_true]
    weight = None if prediction.has_unit_weights else prediction.sample_weight
    common = {"sample_weight": weight, "ids": prediction.ids, "timestamp": prediction.timestamp}
    if prediction.proba is not None:
        order = [prediction.classes.index(c) for c in classes]
        logits = None if prediction.logits is None else prediction.logits[:, order]
        return Predictions.from_proba(
            prediction.proba[:, order], y_true, classes=classes, logits=logits, sum_tolerance=np.inf, **common
        )
    return Predictions.from_top_label(
        text[prediction.y_pred], prediction.confidence, y_true, classes=classes, **common
    )


def _short_list(items: Sequence, limit: int = 8) -> str:
    items = list(items)
    shown = ", ".join(repr(clip_text(i)) for i in items[:limit])
    if len(items) > limit:
        shown += f", ... ({len(items) - limit} more)"
    return f"[{shown}]"
