"""A small CSV run file read without pandas's parser, when it can be proven plain.

In a fresh process pandas's ``read_csv`` costs more CPU for a 1,000-row file than numpy takes for a whole
file -> threshold job (its first call, and a text column or header handed to Arrow, whose first meeting with
pandas compiles a version pattern: 5-10 ms). Most files are plain: a header, then rows of plain numbers and
labels. Such a file is split here, its numbers read by numpy's C parser (``loadtxt``); any doubt (a quote,
a space, a ``+``, an empty cell, a blank line, a row of another length, a number pandas might round
differently, a byte outside printable ASCII, a column other than probabilities, logits, numbers and labels)
hands the whole file back to pandas, so every message about bad input is the one pandas's path gives.

The numbers: a decimal of at most 15 significant digits scaled by at most 10**22 either way is a whole
number below 2**53 (exact in float64) times or over a power of ten that float64 holds exactly, so one
rounded operation gives the correctly rounded value, which Python's and numpy's parsers and pandas's
parsers, old and new, all return. Longer numbers are left to pandas.
"""

from __future__ import annotations

import io
import re

import numpy as np

from .columns import FEW_VALUES, LOGIT_PREFIX, PROBA_PREFIX

# Files up to this size may take this path (loadtxt costs more per cell than pandas's parser).
PLAIN_CSV_BYTES = 1 << 18

_MOST_DIGITS = 15  # a whole number of 15 digits is below 2**53
_MOST_SCALE = 22  # 10**22 is the largest power of ten float64 holds exactly
# Every byte a plain file may hold: printable ASCII but the quote and the plus, and the line end.
_PLAIN_BYTES = bytes(sorted(set(range(0x21, 0x7F)) - {ord('"'), ord("+")})) + b"\n"
_NUMBER_COLUMNS = ("weight", "confidence")
_EXPONENT_NUMBER = re.compile(rb"-?(\d*)\.?(\d*)[eE](-?\d{1,4})")

_COMMA, _NEWLINE, _DOT, _ZERO = (ord(c) for c in ",\n.0")


def read_plain_csv(text: bytes | memoryview, header: list[str]) -> dict | None:
    """The columns pandas's path would read from ``text`` (a CSV file's bytes, its byte-order mark cut),
    or None when the file is not provably plain.

    ``header``: the names :func:`~valuecore._io.format.csv_header` read from its first line. Returns a
    dict of column name to (n,) array: int64 for a number column of whole numbers, float64 for one of other
    numbers, object (str) for a label column.
    """
    if len(text) > PLAIN_CSV_BYTES or not header or len(set(header)) != len(header):
        return None
    labels = [j for j, name in enumerate(header) if name in FEW_VALUES]
    numbers = [j for j, name in enumerate(header) if name.startswith((PROBA_PREFIX, LOGIT_PREFIX))
               or name in _NUMBER_COLUMNS]  # fmt: skip
    if len(labels) + len(numbers) != len(header) or not numbers:
        return None
    text = bytes(text)
    end = text.find(b"\n")
    if end < 0 or text[:end].split(b",") != [name.encode() for name in header]:
        return None
    # The rows are read where they lie in ``text``, after its header: a copy of them cost a fresh process a
    # page fault per 4 KiB (about 4 us each here), as much as a tenth of a 10^3-row file's whole job.
    start = end + 1
    if start == len(text) or text.translate(None, _PLAIN_BYTES) != text[:start].translate(None, _PLAIN_BYTES):
        return None
    if not text.endswith(b"\n"):
        text += b"\n"
    k = len(header)
    first_row = text[start : text.find(b"\n", start)].split(b",")
    if len(first_row) == k and 2 * sum(len(first_row[j]) > _WIDEST_PLAIN for j in numbers) > len(numbers):
        # Most of the first row's numbers are wider than any decimal read here (pandas's full-precision floats, 19
        # bytes): the file is declined before its bytes are classed (0.7 ms of 4.9 at 10^3 rows).
        return None
    data, classes = _bytes_and_classes(text, start)
    ends = (classes == _PAST_END).nonzero()[0]  # a bool array's nonzero: a third of the time a byte array's takes
    n = text.count(b"\n", start)
    # k cells a row: n * k separators, every k-th a line end (and the file has n line ends, so no other is). So
    # there is no blank line but as an empty cell of a one-column file, which the readers of cells decline, as
    # they decline any empty cell (pandas reads it as missing): a search for ",," and the like cost 60-80 us each.
    if ends.size != n * k or not (data[ends[k - 1 :: k]] == _NEWLINE).all():
        return None
    ends = ends.reshape(n, k)
    values = _numbers(data, classes, ends, numbers)
    if values is None:
        return None
    columns = {}
    for j, name in enumerate(header):
        column = _labels(data, ends, j) if j in labels else values[numbers.index(j)]
        if column is None:
            return None
        columns[name] = column
    return columns


def _bytes_and_classes(text: bytes, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The bytes of ``text[start:]`` (uint8, a view) and each one's class for ``_decimals``."""
    return (np.frombuffer(text, dtype=np.uint8, offset=start),
            np.frombuffer(text.translate(_CLASS_TABLE), dtype=np.uint8, offset=start))  # fmt: skip


# Each byte as the one-character text pandas reads a one-byte cell as (shared, not made per cell).
_ONE_BYTE_TEXT = np.array([chr(byte) for byte in range(128)], dtype=object)  # a plain file's bytes are ASCII


def _labels(data: np.ndarray, ends: np.ndarray, j: int) -> np.ndarray | None:
    """Column ``j`` of label cells as text (object, n): one byte a cell (classes 0-9, a-z) read by one lookup, any
    other by slicing the text; None if a cell is empty."""
    first = _cell_starts(ends, j)
    last = ends[:, j]
    width = last - first
    if (width == 1).all():
        return _ONE_BYTE_TEXT[data[first]]
    if not width.all():
        return None
    text = str(memoryview(data), "ascii")  # sliced, not each cell decoded (a call apiece)
    column = np.empty(len(first), dtype=object)
    column[:] = [text[a:b] for a, b in zip(first.tolist(), last.tolist())]
    return column


def _cell_starts(ends: np.ndarray, j: int, out: np.ndarray | None = None) -> np.ndarray:
    """Where each cell of column ``j`` starts (n,), into ``out`` if given: just after the separator before it, in
    file order."""
    n, k = ends.shape
    out = np.empty(n, dtype=np.intp) if out is None else out
    if j:
        return np.add(ends[:, j - 1], 1, out=out)
    out[:1] = 0
    np.add(ends[:-1, k - 1], 1, out=out[1:])
    return out


def _as_index(columns: list[int]) -> slice | list[int]:
    """``columns`` as a slice when they are a run (a view, not a copy, of what they index)."""
    return slice(columns[0], columns[-1] + 1) if columns == list(range(columns[0], columns[-1] + 1)) else columns


def _column_starts(ends: np.ndarray, columns: list[int]) -> np.ndarray:
    """Where each cell of ``columns`` starts, column by column ((len(columns), n), intp, C order): made from the
    separators' positions ``ends`` (n, k) directly, with no array of every cell's start."""
    n = ends.shape[0]
    at = np.empty((len(columns), n), dtype=np.intp)
    if isinstance(_as_index(columns), slice):  # a run of columns: a call or three, not one a column
        first = columns[0]
        if first == 0:  # the first column's cells start after the line end before them
            _cell_starts(ends, 0, out=at[0])
        np.add(ends.T[max(first - 1, 0) : columns[-1]], 1, out=at[1 if first == 0 else 0 :])
        return at
    for row, j in enumerate(columns):
        _cell_starts(ends, j, out=at[row])
    return at


def _numbers(data: np.ndarray, classes: np.ndarray, ends: np.ndarray, used: list[int]) -> list[np.ndarray] | None:
    """The number columns ``used`` as pandas reads them, or None unless every cell is a finite decimal of at
    most 15 digits scaled within 10**22: int64 for a column without a dot or an exponent (pandas's whole
    numbers; below 10**15, exact), else float64. ``data``, ``classes``: the rows' bytes and their classes
    (:func:`_bytes_and_classes`); ``ends``: where each cell ends in them (the separator after it), (n, columns)."""
    if FAST_DECIMALS:
        decimals = _decimals(data, classes, ends, used)
        if decimals is _TO_PANDAS:
            return None
        if decimals is not None:
            cells, pointed = decimals
            return [cells[j].astype(np.int64) if not pointed[j].any() else cells[j] for j in range(len(used))]
    return _loadtxt_numbers(data, ends, used)


def _loadtxt_numbers(data: np.ndarray, ends: np.ndarray, used: list[int]) -> list[np.ndarray] | None:
    """``_numbers`` by numpy's ``loadtxt``, once each cell's digits and exponent are counted."""
    n = ends.shape[0]
    body = data.tobytes()
    first = np.empty(ends.size, dtype=np.intp)
    first[0] = 0
    np.add(ends.ravel()[:-1], 1, out=first[1:])
    if (first == ends.ravel()).any():
        return None  # an empty cell
    starts = first.reshape(n, -1)[:, used]
    ends = ends[:, used]

    def per_cell(mask: np.ndarray) -> np.ndarray:
        # One sum from each cell's start to the next one's: the byte between them is a separator, never in
        # the mask (a running sum of the bytes cost three times as much).
        return np.add.reduceat(mask.view(np.int8), first, dtype=np.int32).reshape(n, -1)[:, used]

    exponents = per_cell((data | 0x20) == ord("e")) > 0
    digits = per_cell(data - _ZERO < 10)  # uint8: bytes below "0" wrap around
    if (digits[~exponents] > _MOST_DIGITS).any() or not _exponents_fit(body, starts[exponents], ends[exponents]):
        return None
    whole = ~((per_cell(data == _DOT) > 0) | exponents).any(axis=0)
    try:
        cells = np.loadtxt(io.BytesIO(body), dtype=np.float64, delimiter=",", comments=None, ndmin=2,
                           usecols=used, encoding="ascii")  # fmt: skip
    except ValueError:
        return None
    if cells.shape != starts.shape or not np.isfinite(cells).all():
        return None
    return [cells[:, j].astype(np.int64) if whole[j] else np.ascontiguousarray(cells[:, j])
            for j in range(cells.shape[1])]


# Whether plain number cells are parsed by ``_decimals`` first (``loadtxt`` reads any it declines).
FAST_DECIMALS = True

# Byte classes of a number cell, for ``_decimals``: a digit's class is its value (so the loop reads each byte
# once), the others follow in an order that lets one comparison ask two questions (``kind >= _MINUS_SIGN``: a
# byte that is neither a digit, a dot nor past the cell's end). The separators are past the end: a cell never
# holds one, and each cell's end is the separator after it.
_POINT, _PAST_END, _MINUS_SIGN, _EXPONENT, _OTHER = range(10, 15)  # below _POINT: a digit
_BYTE_CLASS = np.full(256, _OTHER, dtype=np.uint8)
_BYTE_CLASS[_ZERO : _ZERO + 10] = np.arange(10)
_BYTE_CLASS[_DOT] = _POINT
_BYTE_CLASS[[ord("e"), ord("E")]] = _EXPONENT
_BYTE_CLASS[ord("-")] = _MINUS_SIGN
_BYTE_CLASS[[_COMMA, _NEWLINE]] = _PAST_END
_CLASS_TABLE = _BYTE_CLASS.tobytes()  # the same, as a bytes.translate table
_SCALES = np.array([float(10**k) for k in range(_MOST_SCALE + 1)])  # each exact in float64
_WIDEST_DECIMAL = _MOST_DIGITS + 7  # digits, a dot, a minus, and e-dddd
# The widest cell the byte loop reads: 15 digits, a dot and a minus (an exponent cell wider is read apart).
_WIDEST_PLAIN = _MOST_DIGITS + 2
# ``_decimals``'s answer for a file of more than ONE_BY_ONE number cells wider than that: pandas writes a
# float64 in up to 17 digits (``0.22209908303362025``), which no path here reads (more than 15 digits), so the
# file goes to pandas at once, not after the byte loop's 17 steps and loadtxt's checks (5.6 ms at 10^3 rows).
_TO_PANDAS = object()
_NINE, _ONE = np.uint8(9), np.uint8(1)


def _decimals(data: np.ndarray, classes: np.ndarray, ends: np.ndarray, columns: list[int]
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """(float64 value, whether it has a dot or an exponent) of each cell of ``columns``, (len(columns), n) each,
    of the rows whose bytes and classes are ``data`` and ``classes`` (:func:`_bytes_and_classes`; ``ends``: where
    each cell of a row ends in them, (n, k), the comma or line end after it) when every one reads
    ``-?digits`` with at most one dot among its digits and an optional exponent ``e-?digits`` (1-4 digits,
    ``e`` or ``E``): at least one digit before the ``e``, at most 15 in all, scaled within 10**22 either way.
    Else (an empty cell too) None, and ``loadtxt`` reads the file (or declines it) as before; or ``_TO_PANDAS``
    when more than ``ONE_BY_ONE`` cells are wider than any decimal either reads without an exponent.

    Each value is its digits as a whole number (below 10**15, exact) times or over a power of ten (at most
    10**22, exact): one correctly rounded operation, so the value ``loadtxt`` parses, bit for bit. Read a byte
    position at a time across every cell (each step numpy's over all cells; along a cell numpy would loop per
    cell). A fresh process pays for every new page it touches and every numpy loop it meets first, so the steps
    are few and each makes only arrays of a byte per cell (indexes are intp, as any other type is first copied
    into intp; the bytes' classes come from one ``bytes.translate``), with no masked (``where=``) arithmetic;
    and the cells this loop does not read (an exponent, or bad) are read again apart: one by one when few (an
    exported file writes 0.0001 as ``1e-04``), else by :func:`_exponent_decimals`."""
    if ends.size == 0:
        return None
    at = _column_starts(ends, columns)
    if np.count_nonzero((ends.T[_as_index(columns)] - at) > _WIDEST_PLAIN) > ONE_BY_ONE:
        return _TO_PANDAS
    # The digits as a whole number, in float64: below 10**15 < 2**53, each step (times ten, plus a digit) is exact.
    whole = np.zeros(at.shape, dtype=np.float64)
    digits, decimals = np.zeros(at.shape, dtype=np.uint8), np.zeros(at.shape, dtype=np.uint8)
    pointed, other = np.zeros(at.shape, dtype=bool), np.zeros(at.shape, dtype=bool)
    for k in range(_WIDEST_DECIMAL + 1):
        kind = classes[at]
        moving = kind != _PAST_END  # a cell stops at the separator after it
        if k == 0 and not moving.all():  # an empty cell
            return None
        if not moving.any():
            break
        if k == _WIDEST_DECIMAL:  # a cell longer than any decimal read here
            return None
        if k == 0:
            lead_minus = kind == _MINUS_SIGN
            other |= kind >= _EXPONENT
        else:
            other |= kind >= _MINUS_SIGN  # an exponent, a minus sign past the first byte, or another byte
        digit = kind < _POINT
        mantissa = digit.view(np.uint8)
        whole *= mantissa * _NINE + _ONE  # times 10 where a digit is, else times 1
        whole += kind * mantissa  # a digit's class is its value
        digits += mantissa
        decimals += digit & pointed
        dot = kind == _POINT
        other |= dot & pointed
        pointed |= dot
        at += moving
    other |= (digits == 0) | (digits > _MOST_DIGITS)
    values = whole
    np.copyto(at, decimals)  # the positions are done with: their intp indexes the powers of ten
    values /= _SCALES[at]  # over 10**0 = 1 leaves a whole number as it is
    if lead_minus.any():
        np.negative(values, out=values, where=lead_minus)
    if other.any():
        cells = np.unravel_index(np.flatnonzero(other), other.shape)
        # Each such cell's place in the file's cells: its start is just after the separator before it.
        in_file = cells[1] * ends.shape[1] + np.asarray(columns)[cells[0]]
        last = ends.ravel()[in_file]
        first = np.where(in_file > 0, ends.ravel()[in_file - 1] + 1, 0)
        if len(cells[0]) <= ONE_BY_ONE:
            read = _one_by_one(memoryview(data), first, last)
        else:
            read = _exponent_decimals(data, first, last)
        if read is None:
            return None
        values[cells], pointed[cells] = read
    return values, pointed


# At most this many cells that the byte loop of ``_decimals`` declines are read one by one (about 1 us each).
ONE_BY_ONE = 256


def _one_by_one(body: bytes | memoryview, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``_decimals`` of cells with an exponent (1-D ``starts``, ``ends``), in a Python loop; None if one is not
    such a decimal. Python's ``float`` rounds correctly, as one rounded operation on exact numbers does."""
    values = np.empty(len(starts))
    for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
        cell = bytes(body[a:b])
        match = _EXPONENT_NUMBER.fullmatch(cell)
        if match is None:
            return None
        whole, decimals, exponent = match.groups()
        if not 0 < len(whole) + len(decimals) <= _MOST_DIGITS or abs(int(exponent) - len(decimals)) > _MOST_SCALE:
            return None
        values[i] = float(cell)
    return values, np.ones(len(starts), dtype=bool)


def _exponent_decimals(data: np.ndarray, starts: np.ndarray, ends: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray] | None:
    """``_decimals`` of many cells with an exponent (1-D ``starts``, ``ends``), a byte position at a time as
    there, the exponent's digits read beside the others."""
    widest = int((ends - starts).max())
    if widest > _WIDEST_DECIMAL:
        return None
    size = starts.size
    at, last = starts.astype(np.int32), ends.astype(np.int32)
    whole, exponent = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
    digits, exponent_digits, decimals = (np.zeros(size, dtype=np.int16) for _ in range(3))
    pointed, in_exponent, after_e, exponent_minus, bad = (np.zeros(size, dtype=bool) for _ in range(5))
    lead_minus = None
    for k in range(widest):
        kind = _BYTE_CLASS[data[at]]
        value = kind  # a digit's class is its value
        digit = kind < _POINT
        mantissa, power = digit & ~in_exponent, digit & in_exponent
        np.multiply(whole, 10, out=whole, where=mantissa)
        np.add(whole, value, out=whole, where=mantissa)
        np.multiply(exponent, 10, out=exponent, where=power)
        np.add(exponent, value, out=exponent, where=power)
        digits += mantissa
        exponent_digits += power
        decimals += mantissa & pointed
        dot, e, minus = kind == _POINT, kind == _EXPONENT, kind == _MINUS_SIGN
        bad |= (kind == _OTHER) | (dot & (pointed | in_exponent)) | (e & (in_exponent | (digits == 0)))
        if k == 0:
            lead_minus = minus
        else:
            bad |= minus & ~after_e
            exponent_minus |= minus
        pointed |= dot
        in_exponent |= e
        after_e = e
        at += 1
        np.minimum(at, last, out=at)
    scale = np.where(exponent_minus, -exponent, exponent) - decimals
    bad |= (digits == 0) | (digits > _MOST_DIGITS) | (in_exponent & (exponent_digits == 0)) | (exponent_digits > 4)
    if bad.any() or (np.abs(scale) > _MOST_SCALE).any():
        return None
    values = whole.astype(np.float64)
    np.multiply(values, _SCALES[np.maximum(scale, 0)], out=values, where=scale > 0)
    np.divide(values, _SCALES[np.maximum(-scale, 0)], out=values, where=scale < 0)
    np.negative(values, out=values, where=lead_minus)
    return values, pointed | in_exponent


def _exponents_fit(body: bytes, starts: np.ndarray, ends: np.ndarray) -> bool:
    """Whether each number cell ``body[a:b]`` with an exponent has at most 15 digits before it and a scale
    (exponent less decimals) within 22 either way (a Python loop: such cells are few)."""
    for a, b in zip(starts.tolist(), ends.tolist()):
        match = _EXPONENT_NUMBER.fullmatch(body, a, b)
        if match is None:
            return False
        whole, decimals, exponent = match.groups()
        if len(whole) + len(decimals) > _MOST_DIGITS or abs(int(exponent) - len(decimals)) > _MOST_SCALE:
            return False
    return True
