"""The columns of one file checked and converted: labels into class codes, numbers, probabilities (their
row sums checked block by block), logits, weights, timestamps and ids, each problem naming column and rows."""

from __future__ import annotations

import re

import numpy as np

from ..columns import (
    CONFIDENCE_TOLERANCE,
    LOGIT_PREFIX,
    NOT_A_NUMBER,
    PROBA_PREFIX,
    SPECS,
    TIME_RANGE,
    UNKNOWN_LABELS,
    rule_mask,
)
from ..fastload import clean_row_deviations, integer_label_codes
from ..._model.predictions import _top_of_columns
from ..lazy import LazyModule
from ..format import (
    MAX_GROUPS, SHOWN_COLUMNS, _FileProblems, _RowTally, _canonical, _logit_order, _nfc, _short_list,
    _too_many_classes,
)
pd = LazyModule("pandas")  # imported on first use


# Class codes of labels that are not classes: empty cells, and text that names no class.
_MISSING = -2


_UNKNOWN = -1


_INTEGER_TEXT = re.compile(r"[+-]?\d+")


def _column(frame, name: str):
    """A column as the checks read it: the array itself of a frame of plain columns (``plain_array``: a plain
    CSV file's, a Parquet file's of numbers), a pandas Series of any other frame. Wrapping each array in a
    Series cost a fresh process 0.5-0.6 ms at 10^3 rows of 10 probabilities and a label, as much as the checks."""
    plain = getattr(frame, "plain_array", None)
    return frame[name] if plain is None else plain(name)


def _text_values(series: pd.Series | np.ndarray) -> tuple[np.ndarray, list[str | None]]:
    """Factorise a column (a Series, or the array of a plain column) to (codes, canonical text of each unique value).

    Only unique values are turned into text, so this stays fast on 10^6 rows.
    Whole-number floats (``1.0``, from an integer column that held NaN) read as
    integers. Missing and blank values get code -1.
    """
    codes, uniques = _factorized(series)
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


# Columns of text up to this many rows are factorised by a dict when every value is a str.
DICT_FACTORIZE_ROWS = 4096


def _factorized(series: pd.Series | np.ndarray) -> tuple[np.ndarray, list]:
    """``pd.factorize(series, use_na_sentinel=True)``'s codes and uniques (order of appearance; an array is
    factorised as the Series of it). A short column of str alone is factorised by a dict: the same codes (str
    compare and hash alike in both), and pandas's first factorisation costs a fresh process 0.4-0.5 ms against
    the dict's 0.1 at 10^3 rows."""
    if len(series) <= DICT_FACTORIZE_ROWS and series.dtype == object:
        index: dict = {}
        values = series.tolist()
        codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))
        if all(type(v) is str for v in index):  # else a None, a NaN or another type: pandas's rules decide
            return codes, list(index)
    if isinstance(series.dtype, pd.CategoricalDtype):
        return _factorized_categories(series)
    if isinstance(series, np.ndarray):
        series = pd.Series(series, dtype=series.dtype, copy=False)  # as the frame of plain columns made it
    return pd.factorize(series, use_na_sentinel=True)


def _factorized_categories(column) -> tuple[np.ndarray, list]:
    """``_factorized`` of a column read as categories of text (Arrow's reader, ``arrowcsv``: one text object per
    distinct label, not per cell): the categories in order of first appearance, as ``pd.factorize`` gives the
    texts, from the codes alone."""
    categorical = column.array if isinstance(column, pd.Series) else column
    codes = np.asarray(categorical.codes, dtype=np.int64)
    seen = pd.unique(codes)  # category indexes in order of appearance, -1 (missing) among them
    seen = seen[seen >= 0]
    remap = np.full(len(categorical.categories) + 1, -1, dtype=np.int64)  # the last slot serves code -1
    remap[seen] = np.arange(len(seen))
    return remap[codes], categorical.categories[seen].tolist()


def _group_column(frame, column: str, default: str, problems: _FileProblems, n: int):
    """Codes (n,) and names of the groups in ``model`` or ``split``, in order of appearance."""
    if column not in frame.columns:
        return np.zeros(n, dtype=np.int64), [default]
    codes, texts = _text_values(_column(frame, column))
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


def _infer_classes(frame, problems: _FileProblems, recorded: tuple[str, ...] | None = None) -> tuple[str, ...] | None:
    """A top-label run's classes: its labels (y_true and y_pred), ordered as numbers or as texts; ``recorded``, the
    classes an aggregate records (its sources' own, in their order), when they hold every label."""
    labels: set[str] = set()
    for column in ("y_pred", "y_true"):
        if column in frame.columns:
            labels.update(_canonical(t) for t in _text_values(_column(frame, column))[1] if t is not None)
    if recorded is not None and labels.issubset(recorded):
        return None if _too_many_classes(len(recorded), problems) else recorded
    if len(labels) < 2:
        problems.add(
            f"a top-label run needs at least 2 classes among y_pred and y_true, found {_short_list(sorted(labels))}",
            column="y_pred",
        )
        return None
    if _too_many_classes(len(labels), problems):
        return None
    if all(_INTEGER_TEXT.fullmatch(c) for c in labels):
        # Equal numbers ("+0" and "0" are two classes) in text order: a set's own order changes from one process
        # to the next (str hashes are salted).
        return tuple(sorted(labels, key=lambda c: (int(c), c)))
    return tuple(sorted(labels))


def _label_column(frame, column: str, classes: tuple[str, ...], problems: _FileProblems) -> np.ndarray | None:
    """Class index of each row (n,), ``_MISSING`` where empty; unknown labels are errors."""
    if column not in frame.columns:
        return None
    values = _column(frame, column)
    codes = integer_label_codes(values, classes)
    if codes is not None:  # integer labels, all of them classes: no hashing
        return codes
    codes, texts = _text_values(values)
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


def number_cells(series: pd.Series) -> pd.Series:
    """Cells as the loader reads a number cell, NaN where a cell is no number: an ASCII decimal with an optional
    exponent (or inf, nan), never "1_000", "0x10" nor the full-width "１" that Python's ``float`` takes."""
    return pd.to_numeric(series, errors="coerce")


def _numeric(frame, column: str, problems: _FileProblems) -> tuple[np.ndarray, np.ndarray | None]:
    """Column as float64 (n,), and the mask of text values that are not numbers
    (reported here, NaN in the result; None when the column was numeric)."""
    series = frame[column]
    not_number = None
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        converted = number_cells(series)
        not_number = converted.isna().to_numpy() & series.notna().to_numpy()
        if not_number.any():
            problems.add(NOT_A_NUMBER, column=column, where=not_number)
        series = converted
    return series.to_numpy(dtype=np.float64, na_value=np.nan), not_number


def _class_major_matrix(n: int, k: int, dtype) -> np.ndarray:
    """An empty (n, k) matrix stored column by column (Fortran order), as Parquet and pandas hold the
    columns: each is copied in whole, with no transposition; every numpy operation reads it as any other."""
    return np.empty((k, n), dtype=dtype).T


def _rows_of_one_matrix(arrays: list[np.ndarray]) -> np.ndarray | None:
    """The rows of one writeable C-ordered matrix that ``arrays`` are, in order, as that matrix's slice (len(arrays),
    n); else None. The plain CSV reader gives its number columns so: its matrix's transpose is the class-major one
    that would be copied (a fresh page fault per 4 KiB, 20 for 10^3 rows of 10 classes)."""
    base = arrays[0].base
    if (base is None or base.ndim != 2 or not base.flags.c_contiguous or not base.flags.writeable
            or base.dtype != arrays[0].dtype or any(a.base is not base for a in arrays)):
        return None
    row_bytes = base.strides[0]
    origin = base.__array_interface__["data"][0]
    offsets = [a.__array_interface__["data"][0] - origin for a in arrays]
    first = offsets[0] // row_bytes
    if any(a.shape != base.shape[1:] or not a.flags.c_contiguous for a in arrays) or offsets != [
            (first + j) * row_bytes for j in range(len(arrays))]:
        return None
    return base[first : first + len(arrays)]


def _numeric_matrix(frame, columns, problems: _FileProblems) -> tuple[np.ndarray, np.ndarray | None]:
    """Columns as one matrix (n, k) and the (n, k) mask of non-numeric text (None when all are numbers).

    Float columns keep their dtype (float32 stays float32: half the memory,
    and every float32 is exactly a float64) and are copied once, column by
    column, into the (column-major) matrix; nothing else of size (n, k) is made.
    """
    plain = getattr(frame, "plain_array", None)
    if plain is not None:  # as below, without a Series per column (``_column``)
        arrays = [plain(c) for c in columns]
        if all(a.dtype.kind == "f" for a in arrays):
            matrix = _rows_of_one_matrix(arrays)
            if matrix is not None:
                return matrix.T, None
            dtype = np.float32 if all(a.dtype == np.float32 for a in arrays) else np.float64
            matrix = _class_major_matrix(len(frame), len(columns), dtype)
            for j, values in enumerate(arrays):
                matrix[:, j] = values  # what a float Series's to_numpy(dtype, na_value=NaN) gives, NaN left as is
            return matrix, None
    series = [frame[c] for c in columns]  # each looked up once: a lookup costs more than a small column's copy
    if all(pd.api.types.is_float_dtype(s) for s in series):
        dtypes = {np.dtype(s.dtype.numpy_dtype if hasattr(s.dtype, "numpy_dtype") else s.dtype) for s in series}
        dtype = np.float32 if dtypes == {np.dtype(np.float32)} else np.float64
        matrix = _class_major_matrix(len(frame), len(columns), dtype)
        for j, s in enumerate(series):
            matrix[:, j] = s.to_numpy(dtype=dtype, na_value=np.nan)
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
    # A column-major matrix's columns are contiguous already: checked as they are, not copied class-major.
    column_major = proba.strides[0] == proba.itemsize
    for start in range(0, proba.shape[0], _CHECK_BLOCK):
        text = None if not_number is None else not_number[start : start + _CHECK_BLOCK]
        block = proba[start : start + _CHECK_BLOCK]
        checks.block(block, start, list(block.T) if column_major else np.ascontiguousarray(block.T), text)
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
        if text is None and self.clean_columns(start, columns):
            return
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

    def clean_columns(self, start: int, columns) -> bool:
        """What :meth:`block` does for rows start:start+len(columns[0]) of valid probabilities, from their
        class-major ``columns`` alone (no row-major block is read or written): True when done; False, with
        nothing recorded, when they hold a bad entry, a row whose maximum is not above 0, or an entry above 1
        (which :meth:`block` caps in the block), or an earlier block could not say."""
        if not self._found:
            return False
        clean = clean_row_deviations(columns)
        if clean is None:
            return False
        deviation, worst = clean
        y_pred, confidence = (part[start : start + deviation.size] for part in self.top)
        found = confidence if columns[0].dtype == np.float64 else np.empty(deviation.size, columns[0].dtype)
        if not _top_of_columns(columns, y_pred, found, np.empty(deviation.size, dtype=bool)) or found.max() > 1.0:
            return False
        if found is not confidence:
            np.copyto(confidence, found)
        self._worst.append(worst)
        if not worst <= min(self.sum_tolerance, self.warn_tolerance):  # else no row is off: no masks
            self.too_far.add(deviation > self.sum_tolerance, start)
            self.off.add(deviation > self.warn_tolerance, start)
        return True

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
