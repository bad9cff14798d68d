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
parsers, old and new, all return. A decimal of 16-19 significant digits (pandas writes a float64 in up to 17) is
read too, correctly rounded by an exact integer test, but only when the installed pandas rounds such decimals
correctly (3.1 on; older ones sum their digits in float64): else, as any longer number, it is left to pandas.
"""

from __future__ import annotations

import functools
import io
import os
import re
import sys

import numpy as np

from .columns import FEW_VALUES, LOGIT_PREFIX, PROBA_PREFIX

# Files up to this size may take this path (loadtxt costs more per cell than pandas's parser).
PLAIN_CSV_BYTES = 1 << 18

_MOST_DIGITS = 15  # a whole number of 15 digits is below 2**53
_MOST_SCALE = 22  # 10**22 is the largest power of ten float64 holds exactly
# A decimal of up to this many significant digits is a whole number below 10**19 < 2**64 (exact in uint64).
_MOST_EXACT_DIGITS = 19
# The scale of a decimal read one by one (by ``float``) when pandas rounds correctly: a tiny probability
# (``1.2345678901234567e-12``, 10**-28) is read, and every such value is a normal, finite float64.
_MOST_EXACT_SCALE = 64
# Every byte a plain file may hold: printable ASCII but the quote and the plus, and the line end.
_PLAIN_BYTES = bytes(sorted(set(range(0x21, 0x7F)) - {ord('"'), ord("+")})) + b"\n"
_NUMBER_COLUMNS = ("weight", "confidence")
_EXPONENT_NUMBER = re.compile(rb"-?(\d*)\.?(\d*)[eE](-?\d{1,4})")
_DECIMAL_NUMBER = re.compile(rb"-?(\d*)(\.?)(\d*)(?:[eE](-?\d{1,4}))?")

_COMMA, _NEWLINE, _DOT, _ZERO = (ord(c) for c in ",\n.0")
_FIRST_CORRECT_PANDAS = (3, 1)  # pandas's parser rounds every decimal to the nearest float64 from 3.1 on


@functools.cache
def pandas_rounds_correctly() -> bool:
    """Whether the installed pandas reads every decimal as its nearest float64 (ties to even), as Python's
    ``float`` does: pandas 3.1 on. Older ones (``precise_xstrtod``) sum a long decimal's digits in float64 and
    may miss by one ulp, so only decimals of at most 15 digits (one rounded operation) may be read here then.

    Read from the version pandas's package states, without importing pandas (its import costs tens of ms, and
    ``importlib.metadata`` 35 ms in a fresh process); a version not found or not understood reads as False."""
    module = sys.modules.get("pandas")
    version = getattr(module, "__version__", None)
    if version is None:
        try:
            import importlib.util

            spec = importlib.util.find_spec("pandas")
            with open(os.path.join(os.path.dirname(spec.origin), "_version_meson.py"), encoding="utf-8") as file:
                version = file.read().partition("__version__")[2]  # __version__="3.1.1"
        except (ImportError, AttributeError, TypeError, OSError, ValueError):
            return False
    # Read without a pattern: compiling one costs a fresh process more than this whole check.
    major, minor = ([*version.strip(" =\"'").split(".", 2), ""])[:2]
    return major.isdigit() and minor.isdigit() and (int(major), int(minor)) >= _FIRST_CORRECT_PANDAS


def label_and_number_columns(header: list[str]) -> tuple[list[int], list[int]] | None:
    """The indexes of ``header``'s label columns and of its number columns, or None unless every column is one
    or the other and some are numbers: the files the plain path (and Arrow's reader, ``arrowcsv``) may take."""
    labels = [j for j, name in enumerate(header) if name in FEW_VALUES]
    numbers = [j for j, name in enumerate(header) if name.startswith((PROBA_PREFIX, LOGIT_PREFIX))
               or name in _NUMBER_COLUMNS]  # fmt: skip
    if len(labels) + len(numbers) != len(header) or not numbers:
        return None
    return labels, numbers


def read_plain_csv(text: bytes | memoryview, header: list[str]) -> dict | None:
    """The columns pandas's path would read from ``text`` (a CSV file's bytes, its byte-order mark cut),
    or None when the file is not provably plain.

    ``header``: the names :func:`~valuecore._io.format.csv_header` read from its first line. Returns a
    dict of column name to (n,) array: int64 for a number column of whole numbers, float64 for one of other
    numbers, object (str) for a label column.
    """
    if len(text) > PLAIN_CSV_BYTES or not header or len(set(header)) != len(header):
        return None
    kinds = label_and_number_columns(header)
    if kinds is None:
        return None
    labels, numbers = kinds
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
    if len(first_row) == k and _mostly_wider(first_row, numbers, _WIDEST_PLAIN) and (
            not pandas_rounds_correctly() or _mostly_wider(first_row, numbers, _WIDEST_EXACT)):
        # Most of the first row's numbers are wider than any decimal read here (pandas's full-precision floats, 19
        # bytes, unless pandas rounds them correctly): the file is declined before its bytes are classed (0.7 ms of
        # 4.9 at 10^3 rows).
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


def _mostly_wider(cells: list[bytes], numbers: list[int], widest: int) -> bool:
    """Whether most of the ``numbers`` among ``cells`` are wider than ``widest`` bytes."""
    return 2 * sum(len(cells[j]) > widest for j in numbers) > len(numbers)


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
    most 15 digits scaled within 10**22 (or one ``_decimals`` reads of up to 19): int64 for a column without a
    dot or an exponent (pandas's whole numbers; below 10**15, exact), else float64. ``data``, ``classes``: the
    rows' bytes and their classes (:func:`_bytes_and_classes`); ``ends``: where each cell ends in them (the
    separator after it), (n, columns)."""
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
# When pandas rounds correctly: the widest cell the byte loop reads (19 significant digits behind "-0.000", or an
# exponent cell of 15 digits), and the widest that does not count towards ``_TO_PANDAS``.
_WIDEST_EXACT = _MOST_EXACT_DIGITS + 6


def _decimals(data: np.ndarray, classes: np.ndarray, ends: np.ndarray, columns: list[int]
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """(float64 value, whether it has a dot or an exponent) of each cell of ``columns``, (len(columns), n) each,
    of the rows whose bytes and classes are ``data`` and ``classes`` (:func:`_bytes_and_classes`; ``ends``: where
    each cell of a row ends in them, (n, k), the comma or line end after it) when every one reads
    ``-?digits`` with at most one dot among its digits and an optional exponent ``e-?digits`` (1-4 digits,
    ``e`` or ``E``): at least one digit before the ``e``, at most 15 in all, scaled within 10**22 either way; or,
    when :func:`pandas_rounds_correctly`, a decimal with a dot and 16-19 significant digits (:func:`_long_decimals`).
    Else (an empty cell too) None, and ``loadtxt`` reads the file (or declines it) as before; or ``_TO_PANDAS``
    when more than ``ONE_BY_ONE`` cells are wider than any decimal either reads without an exponent.

    Each value is its digits as a whole number (below 10**15, exact) times or over a power of ten (at most
    10**22, exact): one correctly rounded operation, so the value ``loadtxt`` parses, bit for bit (a longer one is
    rounded as exactly by :func:`nearest_quotients`, the value pandas 3.1 parses). Most cells of a file of
    probabilities read ``0.`` and digits: :func:`_point_decimals` reads those eight bytes at a time; the others
    (all cells, when most are not so) by :func:`_byte_loop`, or one by one when few."""
    if ends.size == 0:
        return None
    at = _column_starts(ends, columns)
    widths = ends.T[_as_index(columns)] - at
    wide = np.count_nonzero(widths > _MOST_DIGITS)  # no decimal of 16 digits or more if none
    exact = wide > 0 and pandas_rounds_correctly()
    widest = max(_WIDEST_DECIMAL, _WIDEST_EXACT) if exact else _WIDEST_DECIMAL
    if wide > ONE_BY_ONE and np.count_nonzero(widths > (_WIDEST_EXACT if exact else _WIDEST_PLAIN)) > ONE_BY_ONE:
        return _TO_PANDAS
    longest = int(widths.max())
    if widths.min() == 0 or longest > widest:  # an empty cell; a cell longer than any decimal read here
        return None
    # Each result is one (len(columns), n) array of its own: its rows, the columns, are rows of one matrix.
    fast = _point_decimals(classes, at, widths, exact) if longest >= _POINT_FROM else None
    if fast is None:
        return _byte_loop(data, classes, ends, columns, at, widths, longest, exact)
    values, rest = fast
    pointed = np.ones(values.shape, dtype=bool)
    if rest.size:
        rest_at = at.reshape(-1)[rest]
        rest_widths = widths.reshape(-1)[rest]
        if rest.size <= ONE_BY_ONE:
            read = _one_by_one(memoryview(data), rest_at, rest_at + rest_widths)
        else:
            read = _byte_loop(data, classes, ends, columns, rest_at, rest_widths, int(rest_widths.max()), exact, rest)
        if read is None:
            return None
        values.reshape(-1)[rest], pointed.reshape(-1)[rest] = read
    return values, pointed


# ``_point_decimals`` is tried where some cell is at least this wide (on narrower ones the byte loop's few steps
# cost less than its fixed ones).
_POINT_FROM = 7
# Eight bytes' classes as one little-endian uint64 (the first byte lowest): the masks and multipliers of
# reading eight digits at once (each lane's classes are the digits' values), as simdjson and fast_float do.
_LANES_OVER_NINE = np.uint64(0x7676767676767676)  # a class above 9 (not a digit) plus 0x76 sets its lane's top bit
_LANE_TOPS = np.uint64(0x8080808080808080)
# ``_KEEP[j]`` zeroes the j lowest (first) bytes of a word: those before the cell's digits read as zeros.
_KEEP = np.array([((1 << 64) - 1) ^ ((1 << (8 * j)) - 1) for j in range(9)], dtype=np.uint64)
# (mask after, multiplier, shift) of each step: byte pairs d0 d1 -> 10 d0 + d1, pairs of those -> 100 p0 + p1, then
# the two halves -> 10**4 h0 + h1 (no lane overflows: each holds at most 99, 9999, 99999999).
_EIGHT_DIGITS = ((np.uint64(0x00FF00FF00FF00FF), np.uint64(10 << 8 | 1), np.uint64(8)),
                 (np.uint64(0x0000FFFF0000FFFF), np.uint64(100 << 16 | 1), np.uint64(16)),
                 (None, np.uint64(10000 << 32 | 1), np.uint64(32)))
_TEN_TO_8, _TEN_TO_16 = np.uint64(10**8), np.uint64(10**16)
_FIRST_TOO_LARGE = 1000  # the first of three words' eight digits from which the digits pass 10**19
# The whole part's digit times ten to the number of decimals (uint64; 0 past 10**19, where only a 0 is read).
_DIGIT_SCALES = np.array([10**k if k < 20 else 0 for k in range(_MOST_SCALE + 1)], dtype=np.uint64)
_SIGN_BYTES = np.zeros(256, dtype=np.intp)  # a minus sign's class: 1 (its width), any other's 0
_SIGN_BYTES[_MINUS_SIGN] = 1
_SIGNS = np.array([1.0, -1.0])


def _point_decimals(classes: np.ndarray, at: np.ndarray, widths: np.ndarray, exact: bool
                    ) -> tuple[np.ndarray, np.ndarray] | None:
    """(float64 values of ``at``'s shape, the flat indexes of the cells not read) of cells that read
    ``-?d.digits``: one digit, a dot and 1-22 decimals (15 digits at most in all unless ``exact``, then 19
    significant ones), whose starts and widths are ``at`` and ``widths`` in the rows' byte classes ``classes``;
    None where most cells do not (then the byte loop reads them all).

    The decimals are read eight bytes at a time from their end: each word of eight classes (unaligned, one gather
    of all cells), its bytes before the decimals zeroed, is checked to hold digits only and read as their number
    in three multiplications, as simdjson and fast_float do; then the digits' whole number over ten to the
    decimals, as the byte loop finishes (:func:`nearest_quotients` where above 2**53): bit for bit its value."""
    # The words of the whole file's classes where ``classes`` is a view of them (``_bytes_and_classes``): a cell's
    # words reach back into the header, not past the start, unless the header and the cell are very short.
    text = classes.base if isinstance(classes.base, bytes) else classes
    if len(text) < 8:
        return None
    sign = _SIGN_BYTES[classes[at]]
    first = at + sign  # the whole part's digit
    digit = classes[first]
    ok = digit < _POINT
    first += 1
    ok &= classes[first] == _POINT
    if 2 * np.count_nonzero(ok) < ok.size:
        return None
    first += 1  # the first decimal
    last = at + widths  # where each cell ends: its separator
    decimals = last - first
    ok &= (decimals - 1).view(np.uintp) < (_MOST_SCALE if exact else _MOST_DIGITS - 1)  # 1-22, or 1-14 digits
    np.minimum(decimals, _MOST_SCALE, out=decimals)
    np.maximum(decimals, 0, out=decimals)  # an index of the powers of ten
    behind = len(text) - classes.size
    words = np.ndarray((len(text) - 7,), dtype="<u8", buffer=text, strides=(1,))
    count = min(3, -(-int(decimals.max()) // 8))
    last += behind
    first += behind
    whole = lanes = None
    for j in range(count):
        start = last - 8 * (j + 1)
        if j == count - 1:  # the farthest word back: one not in the rows is not read (a cell at their start)
            ok &= start >= 0
        np.maximum(start, 0, out=start)
        word = words[start]
        before = first - start  # the word's bytes before the decimals (0-8)
        np.maximum(before, 0, out=before)
        np.minimum(before, 8, out=before)
        word &= _KEEP[before]
        if lanes is None:
            lanes = word + _LANES_OVER_NINE
        else:  # a lane's top bit set in any word stays set: one test of them all below
            lanes |= word + _LANES_OVER_NINE
        for mask, multiplier, shift in _EIGHT_DIGITS:  # in place: no new pages
            word *= multiplier
            word >>= shift
            if mask is not None:
                word &= mask
        if j == 0:
            whole = word
        else:
            if j == 2:
                ok &= word < _FIRST_TOO_LARGE
            word *= _TEN_TO_8 if j == 1 else _TEN_TO_16
            whole += word
    lanes &= _LANE_TOPS
    ok &= lanes == 0  # every byte of the decimals a digit
    whole += digit * _DIGIT_SCALES[decimals]
    if exact:
        ok &= (digit == 0) | (decimals < _MOST_EXACT_DIGITS)  # at most 19 significant digits
    values = whole.astype(np.float64)
    values /= _SCALES[decimals]
    long = np.flatnonzero(ok & (whole > _LARGEST_EXACT))
    if long.size:
        flat = values.reshape(-1)
        flat[long], found = nearest_quotients(whole.reshape(-1)[long], decimals.reshape(-1)[long])
        ok.reshape(-1)[long] &= found  # always, at the 15 decimals or more that a whole number past 2**53 has
    values *= _SIGNS[sign]
    return values, np.flatnonzero(~ok)


def _byte_loop(data: np.ndarray, classes: np.ndarray, ends: np.ndarray, columns: list[int], at: np.ndarray,
               widths: np.ndarray, longest: int, exact: bool, index: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray] | None:
    """``_decimals`` of the cells starting at ``at`` (overwritten), ``widths`` bytes wide (at most ``longest``):
    (values, pointed), each of ``at``'s shape, or None. ``index``: their flat indexes among ``_decimals``'s cells
    ((len(columns), n) raveled) when ``at`` is 1-D; None when they are all of them, in their (len(columns), n).

    Read a byte position at a time across every cell (each step numpy's over all cells; along a cell numpy would
    loop per cell). A fresh process pays for every new page it touches and every numpy loop it meets first, so
    the steps are few and each makes only arrays of a byte per cell (indexes are intp, as any other type is first
    copied into intp; the bytes' classes come from one ``bytes.translate``), with no masked (``where=``)
    arithmetic; and the cells this loop does not read (an exponent, or bad) are read again apart: one by one when
    few (an exported file writes 0.0001 as ``1e-04``), else by :func:`_exponent_decimals`."""
    width = widths.astype(np.uint8)  # at most widest (below 256): its pages are an eighth of intp's
    del widths  # its pages go to the arrays below: a fresh process pays for every new page it touches
    # The digits as a whole number, in float64 (below 10**15 < 2**53: each step, times ten plus a digit, is exact),
    # or, when long decimals are read, in uint64: exact while below 2**64, as it is for 19 significant digits (a
    # cell of more, its sum wrapped around, is read apart or declined).
    whole = np.zeros(at.shape, dtype=np.uint64 if exact else np.float64)
    decimals = np.zeros(at.shape, dtype=np.uint8)
    pointed, other = np.zeros(at.shape, dtype=bool), np.zeros(at.shape, dtype=bool)
    for k in range(longest):  # byte k of every cell; a cell ended stays at the separator after it
        kind = classes[at]
        if k == 0:
            lead_minus = kind == _MINUS_SIGN
            other |= kind >= _EXPONENT
        else:
            other |= kind >= _MINUS_SIGN  # an exponent, a minus sign past the first byte, or another byte
        mantissa = (kind < _POINT).view(np.uint8)
        whole *= mantissa * _NINE + _ONE  # times 10 where a digit is, else times 1
        whole += kind * mantissa  # a digit's class is its value
        decimals += pointed  # the steps after a dot, those past the cell's end too (taken off below)
        dot = kind == _POINT
        other |= dot & pointed
        pointed |= dot
        at += kind != _PAST_END
    # A cell that is not marked other is a minus sign, digits and at most one dot: its digits are the bytes that are
    # neither, and the steps counted after its dot, less those past its end, are its decimals. (The cells marked
    # other, whose counts these are not, are read apart below, or declined.)
    flags = pointed.view(np.uint8)
    decimals -= (np.uint8(longest) - width) * flags
    digits = width - flags
    digits -= lead_minus.view(np.uint8)
    other |= digits == 0
    long = digits > _MOST_DIGITS  # those also marked ``other`` are read apart all the same
    long_cells = None
    if long.any():
        if exact:
            long_cells = np.flatnonzero(long)
            other |= decimals > _MOST_SCALE  # read apart (by float, when few)
            np.minimum(decimals, _MOST_SCALE, out=decimals)  # an index of the powers of ten
        else:
            other |= long
    values = whole.astype(np.float64, copy=False)  # exact below 2**53, which every cell but some long ones is
    np.copyto(at, decimals)  # the positions are done with: their intp indexes the powers of ten
    values /= _SCALES[at]  # over 10**0 = 1 leaves a whole number as it is
    if long_cells is not None:
        _long_decimals(classes, ends, columns, long_cells, index, whole, digits, decimals, values, other)
    if lead_minus.any():
        np.negative(values, out=values, where=lead_minus)
    if other.any():
        cells = np.flatnonzero(other)
        first, last = _cell_spans(ends, columns, cells if index is None else index[cells])[1:]
        if cells.size <= ONE_BY_ONE:
            read = _one_by_one(memoryview(data), first, last)
        else:
            read = _exponent_decimals(data, first, last)
        if read is None:
            return None
        values.reshape(-1)[cells], pointed.reshape(-1)[cells] = read
    return values, pointed


def _cell_spans(ends: np.ndarray, columns: list[int], cells: np.ndarray
                ) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray, np.ndarray]:
    """(the cells ``cells`` (flat indexes of a (len(columns), n) array) as (column, row) indexes, where each starts
    and ends in the rows' bytes), ``ends`` as for ``_decimals``."""
    at = np.divmod(cells, ends.shape[0])
    # Each such cell's place in the file's cells: its start is just after the separator before it.
    in_file = at[1] * ends.shape[1] + np.asarray(columns)[at[0]]
    last = ends.ravel()[in_file]
    first = np.where(in_file > 0, ends.ravel()[in_file - 1] + 1, 0)
    return at, first, last


def _long_decimals(classes: np.ndarray, ends: np.ndarray, columns: list[int], cells: np.ndarray,
                   index: np.ndarray | None, whole: np.ndarray, digits: np.ndarray, decimals: np.ndarray,
                   values: np.ndarray, other: np.ndarray) -> None:
    """Sets ``values`` (unsigned, one rounded division each) of the cells ``cells`` (flat indexes) with more than
    15 digits to their nearest float64, from ``_decimals``'s arguments and arrays; marks
    ``other`` (to be read apart) those it does not read: more than 19 significant digits, no dot (pandas reads a
    column of whole numbers as int64), or a value too large for the exact test (or already so marked)."""
    digits, decimals = digits.ravel().take(cells), decimals.ravel().take(cells)
    read = (decimals > 0) & ~other.ravel().take(cells)
    wrapped = (digits > _MOST_EXACT_DIGITS).nonzero()[0]
    if wrapped.size:
        # Leading zeros (and the sign and dot among them) add nothing to the whole number: only the digits after
        # them count (a cell of more than 19, its whole number wrapped around, is read apart).
        at = _cell_spans(ends, columns, cells[wrapped] if index is None else index[cells[wrapped]])[1]
        zeros = np.zeros(at.size, dtype=np.uint8)
        while True:
            kind = classes[at]
            zero = kind == 0
            lead = zero | (kind == _POINT) | (kind == _MINUS_SIGN)
            if not lead.any():
                break
            zeros += zero
            at += lead
        read[wrapped] &= digits[wrapped] - zeros <= _MOST_EXACT_DIGITS
    whole = whole.ravel().take(cells)
    inexact = (read & (whole > _LARGEST_EXACT)).nonzero()[0]  # the others: exact, then one rounded division
    if inexact.size:
        values.ravel()[cells[inexact]], read[inexact] = nearest_quotients(whole[inexact],
                                                                          decimals[inexact].astype(np.intp))
    if not read.all():
        other.ravel()[cells[~read]] = True


_LARGEST_EXACT = np.uint64(1 << 53)  # every whole number up to this one is a float64
_FIVES = np.array([5**k for k in range(_MOST_SCALE + 1)], dtype=np.int64)  # 5**22 < 2**52
_SMALLEST_FRACTION = 1 << 52  # the least 53-bit significand, a power of two's


# Whether numpy's longdouble is the x87's 80-bit format (a 64-bit significand), on a little-endian machine:
# x86 Linux and macOS; elsewhere (a double, or a 113-bit quad) the quotients are found by integers alone.
EXTENDED_QUOTIENTS = (np.finfo(np.longdouble).nmant == 63 and np.dtype(np.longdouble).itemsize == 16
                      and sys.byteorder == "little")
_LONG_SCALES = np.array([10**k for k in range(_MOST_SCALE + 1)], dtype=np.longdouble)  # exact: 5**22 < 2**64
_MIDPOINT_BITS, _BELOW_DOUBLE = np.uint64(0x400), np.uint64(0x7FF)  # the 11 bits a double does not keep


def nearest_quotients(whole: np.ndarray, decimals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the float64 nearest whole / 10**decimals, ties to even; whether it was found) of each uint64 ``whole``
    (2**53 < whole < 2**64) and intp ``decimals`` (0-22).

    Where :data:`EXTENDED_QUOTIENTS`, by way of the 64-bit significand: whole and 10**decimals are exact there,
    so the quotient is rounded once to 64 bits, then to float64's 53. Rounding twice gives the once-rounded
    value unless the first lands on a midpoint between two float64s (its 11 lowest bits 1000 0000 0000): then
    the quotient lay on either side, or on it, and only those few (one in 2,048) are found by the integers
    alone (:func:`_nearest_by_integers`), as every quotient is elsewhere. A third of their cost in a fresh
    process."""
    if not EXTENDED_QUOTIENTS:
        return _nearest_by_integers(whole, decimals)
    quotient = whole.astype(np.longdouble)
    quotient /= _LONG_SCALES[decimals]
    values = quotient.astype(np.float64)
    low = quotient.view(np.uint64)[::2]  # each value's significand, before its sign and exponent
    low &= _BELOW_DOUBLE
    found = np.ones(values.shape, dtype=bool)
    midpoints = np.flatnonzero(low == _MIDPOINT_BITS)
    if midpoints.size:
        values[midpoints], found[midpoints] = _nearest_by_integers(whole[midpoints], decimals[midpoints])
    return values, found


def _nearest_by_integers(whole: np.ndarray, decimals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`nearest_quotients` with numpy integer and float64 operations only.

    A candidate q = (float(whole) + the whole number it misses by) / 10**decimals is within about one ulp of the
    quotient v (two rounded operations), so the answer is q or a neighbour. Writing q = m * 2**e (m of 53 bits),
    D = 2**t * whole - 2m * 5**d, with t = 1 - e - d, is 2**t * 10**d * (v - q), an integer: half an ulp of q is
    5**d in its units, so comparing D with +-5**d chooses between q and its neighbours exactly (a tie: the even m).
    |D| is below 2**63, so uint64 arithmetic, which wraps modulo 2**64, gives it exactly. A quotient farther
    from q than the neighbours' far midpoints, or too large for t >= 0 (whole numbers of 19 digits with few
    decimals), is not found (never the case at 5 or more decimals)."""
    scale = _SCALES[decimals]
    rounded = whole.astype(np.float64)
    missed = (whole - rounded.astype(np.uint64)).view(np.int64)  # at most 2**10 either way: exact in float64
    candidate = rounded / scale
    candidate += missed / scale
    # Its bits: a positive normal float64 is 2**52 * (biased exponent) + m - 2**52, with e = biased exponent - 1075.
    bits = candidate.view(np.int64)
    fraction = bits & _FRACTION_BITS
    shift = 1076 - (bits >> 52) - decimals
    found = shift.view(np.uint64) < 64  # 0 <= t < 64 (t < 0 wraps around to a large one)
    shift &= 63
    fives = _FIVES[decimals]
    gap = ((whole << shift.view(np.uint64)) - (fraction | _SMALLEST_FRACTION).view(np.uint64)
           * (fives << 1).view(np.uint64)).view(np.int64)
    odd = bits & 1
    # Below a power of two the neighbour is half an ulp away: its midpoint is at -5**d / 2, in doubled units -5**d.
    below = np.where(fraction == 0, fives, fives << 1)
    # A tie goes to the even m: gap = 5**d rounds up when m is odd, as gap + odd > 5**d says (and likewise down).
    up = (gap + odd > fives).view(np.int8)
    down = (2 * gap - odd < -below).view(np.int8)
    found &= (gap < 3 * fives) & (4 * gap > -5 * below)  # within the neighbours' own far midpoints
    bits += up  # a positive float64's neighbours are the integers beside its bits
    bits -= down
    return candidate, found


_FRACTION_BITS = (1 << 52) - 1


# At most this many cells that the byte loop of ``_decimals`` declines are read one by one (about 1 us each).
ONE_BY_ONE = 256


def _one_by_one(body: bytes | memoryview, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``_decimals`` of a few cells (1-D ``starts``, ``ends``), in a Python loop: (values, whether each has a dot
    or an exponent), or None if one is not such a decimal (a whole number, with neither, of at most 15 digits).
    Python's ``float`` rounds correctly, as one rounded operation on exact numbers does, and as pandas does when
    :func:`pandas_rounds_correctly` (then up to 19 significant digits are read)."""
    values = np.empty(len(starts))
    pointed = np.ones(len(starts), dtype=bool)
    for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
        cell = bytes(body[a:b])
        match = _DECIMAL_NUMBER.fullmatch(cell)
        if match is None:
            return None
        whole, dot, decimals, exponent = match.groups()
        if not (dot or exponent):  # pandas's whole number: int64 where its column has no other, exact only so
            if not 0 < len(whole) <= _MOST_DIGITS:
                return None
            pointed[i] = False
        scale = abs(int(exponent or 0) - len(decimals))
        if not whole + decimals:
            return None
        if len(whole) + len(decimals) > _MOST_DIGITS or scale > _MOST_SCALE:
            exact = pandas_rounds_correctly()  # asked only of such a cell: its first call costs a fresh process
            if not (exact and len((whole + decimals).lstrip(b"0")) <= _MOST_EXACT_DIGITS  # leading zeros add none
                    and scale <= _MOST_EXACT_SCALE):
                return None
        values[i] = float(cell)
    return values, pointed


def _exponent_decimals(data: np.ndarray, starts: np.ndarray, ends: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray] | None:
    """``_decimals`` of many cells with an exponent (1-D ``starts``, ``ends``), a byte position at a time as
    there, the exponent's digits read beside the others; when :func:`pandas_rounds_correctly`, up to 19 digits
    before the exponent (pandas writes a tiny float64 as ``1.2345678901234567e-05``), a long one with a dot or
    an exponent and its value below 2**53 or divided by a power of ten (:func:`nearest_quotients`)."""
    exact = pandas_rounds_correctly()
    widest = int((ends - starts).max())
    if widest > (max(_WIDEST_DECIMAL, _WIDEST_EXACT) if exact else _WIDEST_DECIMAL):
        return None
    size = starts.size
    at, last = starts.astype(np.int32), ends.astype(np.int32)
    whole, exponent = np.zeros(size, dtype=np.uint64), np.zeros(size, dtype=np.int64)
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
    bad |= (digits == 0) | (digits > (_MOST_EXACT_DIGITS if exact else _MOST_DIGITS))
    bad |= (in_exponent & (exponent_digits == 0)) | (exponent_digits > 4)
    if bad.any() or (np.abs(scale) > _MOST_SCALE).any():
        return None
    values = whole.astype(np.float64)
    np.multiply(values, _SCALES[np.maximum(scale, 0)], out=values, where=scale > 0)
    np.divide(values, _SCALES[np.maximum(-scale, 0)], out=values, where=scale < 0)
    long = (digits > _MOST_DIGITS).nonzero()[0]
    if long.size:  # only when pandas rounds correctly
        if not (pointed | in_exponent)[long].all():
            return None  # a whole number of 16 or more digits: pandas's int64 where its column has no other
        inexact = long[whole[long] > _LARGEST_EXACT]
        if (scale[inexact] > 0).any():
            return None
        values[inexact], found = nearest_quotients(whole[inexact], -scale[inexact].astype(np.intp))
        if not found.all():
            return None
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
