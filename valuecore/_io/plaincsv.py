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
    body = text[end + 1 :]
    if not body or body.translate(None, _PLAIN_BYTES) or body.startswith(b"\n") or b"\n\n" in body:
        return None
    if not body.endswith(b"\n"):
        body += b"\n"
    k = len(header)
    data = np.frombuffer(body, dtype=np.uint8)
    is_end = (data == _COMMA) | (data == _NEWLINE)
    ends = np.flatnonzero(is_end)
    n = body.count(b"\n")
    if ends.size != n * k:
        return None
    kinds = data[ends].reshape(n, k)
    if not ((kinds[:, -1] == _NEWLINE).all() and (kinds[:, :-1] == _COMMA).all()):
        return None
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    if (ends == starts).any():  # an empty cell: pandas reads it as missing
        return None
    values = _numbers(body, data, starts, ends.reshape(n, k), numbers)
    if values is None:
        return None
    starts, ends = starts.reshape(n, k), ends.reshape(n, k)
    columns = {}
    ascii_text = body.decode("ascii") if labels else ""  # sliced, not each cell decoded (a call apiece)
    for j, name in enumerate(header):
        if j in labels:
            column = np.empty(n, dtype=object)
            column[:] = [ascii_text[a:b] for a, b in zip(starts[:, j].tolist(), ends[:, j].tolist())]
        else:
            column = values[numbers.index(j)]
        columns[name] = column
    return columns


def _numbers(body: bytes, data: np.ndarray, first: np.ndarray, ends: np.ndarray, used: list[int]
             ) -> list[np.ndarray] | None:
    """The number columns ``used`` as pandas reads them, or None unless every cell is a finite decimal of at
    most 15 digits scaled within 10**22: int64 for a column without a dot or an exponent (pandas's whole
    numbers; below 10**15, exact), else float64. ``first``: where each cell starts, in file order (none
    empty); ``ends``: where each ends, (n, columns)."""
    n = ends.shape[0]
    starts = first.reshape(n, -1)[:, used]
    ends = ends[:, used]
    if FAST_DECIMALS:
        decimals = _decimals(data, starts, ends)
        if decimals is not None:
            cells, pointed = decimals
            whole = ~pointed.any(axis=0)
            return [cells[:, j].astype(np.int64) if whole[j] else np.ascontiguousarray(cells[:, j])
                    for j in range(cells.shape[1])]  # fmt: skip

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

# Byte classes of a number cell, for ``_decimals``.
_OTHER, _DIGIT, _POINT, _EXPONENT, _MINUS_SIGN, _PAST_END = range(6)
_BYTE_CLASS = np.full(256, _OTHER, dtype=np.uint8)
_BYTE_CLASS[_ZERO : _ZERO + 10] = _DIGIT
_BYTE_CLASS[_DOT] = _POINT
_BYTE_CLASS[[ord("e"), ord("E")]] = _EXPONENT
_BYTE_CLASS[ord("-")] = _MINUS_SIGN
_SCALES = np.array([float(10**k) for k in range(_MOST_SCALE + 1)])  # each exact in float64
_WIDEST_DECIMAL = _MOST_DIGITS + 7  # digits, a dot, a minus, and e-dddd


def _decimals(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(float64 value, whether it has a dot or an exponent) of each cell ``data[a:b]`` (``starts``, ``ends``:
    (n, k)) when every one reads ``-?digits`` with at most one dot among its digits and an optional exponent
    ``e-?digits`` (1-4 digits, ``e`` or ``E``): at least one digit before the ``e``, at most 15 in all, scaled
    within 10**22 either way. Else None, and ``loadtxt`` reads the file (or declines it) as before.

    Each value is its digits as a whole number (below 10**15, exact) times or over a power of ten (at most
    10**22, exact): one correctly rounded operation, so the value ``loadtxt`` parses, bit for bit. Read a byte
    position at a time across every cell (each step numpy's over all cells; along a cell numpy would loop per
    cell): 10^3 rows of 10 numbers in about a third of ``loadtxt``'s CPU and the checks before it."""
    shape = starts.shape
    starts, lengths = starts.ravel(), (ends - starts).ravel()
    if lengths.size == 0 or int(lengths.max()) > _WIDEST_DECIMAL:
        return None
    size = lengths.size
    whole, exponent = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
    digits, exponent_digits, decimals = (np.zeros(size, dtype=np.int16) for _ in range(3))
    pointed, in_exponent, after_e, exponent_minus, bad = (np.zeros(size, dtype=bool) for _ in range(5))
    lead_minus = None
    for k in range(int(lengths.max())):
        byte = data[np.minimum(starts + k, data.size - 1)]
        kind = _BYTE_CLASS[byte]
        kind[lengths <= k] = _PAST_END
        value = byte - _ZERO
        digit = kind == _DIGIT
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
    scale = np.where(exponent_minus, -exponent, exponent) - decimals
    bad |= (digits == 0) | (digits > _MOST_DIGITS) | (in_exponent & (exponent_digits == 0)) | (exponent_digits > 4)
    if bad.any() or (np.abs(scale) > _MOST_SCALE).any():
        return None
    values = whole.astype(np.float64)
    np.multiply(values, _SCALES[np.maximum(scale, 0)], out=values, where=scale > 0)
    np.divide(values, _SCALES[np.maximum(-scale, 0)], out=values, where=scale < 0)
    np.negative(values, out=values, where=lead_minus)
    return values.reshape(shape), (pointed | in_exponent).reshape(shape)


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
