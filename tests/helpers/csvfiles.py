"""Random CSV run files and the comparisons of a read against pandas's full read, for the tests of the CSV
readers (``tests/io/test_plaincsv.py``, ``tests/io/test_arrowcsv.py``)."""

from __future__ import annotations

from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_UP, Decimal, localcontext

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from valuecore._io.runfiles import reading

NUMBER_TEXTS = st.one_of(
    st.floats(0, 1).map(repr),
    st.floats(0, 1).map(lambda x: f"{x:.4f}"),
    st.floats(0, 1).map(lambda x: f"{x:.15g}"),
    st.floats(0, 1).map(lambda x: f"{x:.3e}"),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.6E}"),
    st.integers(-(10**17), 10**17).map(str),
    st.integers(0, 9).map(str),
    st.sampled_from(["0", "-0", "-0.0", "1", "0.5", "+0.5", ".5", "5.", "1e-05", "5E-7", "1e+300", "1e-320",
                     "2.5e22", "1e23", "0.1e-22", "1.e5", "inf", "-inf", "nan", "NaN", "NA", "", " 0.5", '"0.5"',
                     "0.5 ", "1_0", "0x1", "--1", "1e", "123456789012345", "1234567890123456", "0.123456789012345",
                     "0.1234567890123456", "00.25", "1e-0005", "9007199254740993", "#N/A", "None", "null"]),
)
PLAIN_NUMBERS = st.one_of(st.floats(0, 1).map(lambda x: f"{x:.4f}"), st.integers(0, 1).map(str),
                          st.sampled_from(["0.25", "1e-05", "5E-07", "1", "0"]))  # fmt: skip
LABEL_TEXTS = st.one_of(st.sampled_from(["a", "b", "01", "1.0", "1", "NA", "nan", "x y", "", '"a"', "é", "a\r"]),
                        st.text("ab01.-eE", min_size=1, max_size=3))  # fmt: skip
PLAIN_LABELS = st.sampled_from(["a", "b", "1", "01"])
COLUMNS = ["proba_a", "proba_b", "logit_a", "weight", "confidence", "y_pred", "model", "split", "id", "timestamp",
           "note", "proba_a", ""]  # fmt: skip


@st.composite
def csv_files(draw, plain: bool = False):
    """(bytes, header) of a CSV file, mostly near plain, sometimes far from it."""
    header = ["y_true", "proba_a", "proba_b"]
    if not plain:
        header += draw(st.lists(st.sampled_from(COLUMNS), max_size=3))
    header = draw(st.permutations(header))
    n = draw(st.integers(1, 12))
    # Most cells plain, a few wild: a file is then often plain but for one cell.
    number, label = (PLAIN_NUMBERS, PLAIN_LABELS) if plain else (
        st.one_of(PLAIN_NUMBERS, PLAIN_NUMBERS, NUMBER_TEXTS), st.one_of(PLAIN_LABELS, PLAIN_LABELS, LABEL_TEXTS))
    rows = []
    for _ in range(n):
        cells = [draw(label if name in ("y_true", "y_pred", "model", "split", "id", "timestamp", "note")
                      else number) for name in header]  # fmt: skip
        rows.append(",".join(cells) + ("," if not plain and draw(st.integers(0, 30)) == 0 else ""))
    if not plain and draw(st.booleans()):
        rows.insert(draw(st.integers(0, n)), "")
    end = "\n" if plain or draw(st.integers(0, 5)) else "\r\n"
    text = end.join([",".join(header), *rows]) + (end if plain or draw(st.booleans()) else "")
    data = text.encode("utf-8")
    if not plain and draw(st.integers(0, 5)) == 0:
        data = b"\xef\xbb\xbf" + data
    return data


def assert_same_cells(fast, slow) -> None:
    """Same names; numbers of the same dtype and bits; text the same str, missing nowhere. ``fast``: the plain
    path's columns (read by name, as the checks read them), ``slow``: pandas's frame."""
    assert isinstance(fast, reading._PlainColumns) and len(fast) == len(slow)
    assert list(fast.columns) == list(slow.columns)
    for j, name in enumerate(fast.columns):
        a, b = fast[name], slow.iloc[:, j]
        assert a.name == name
        if a.dtype.kind in "if":
            assert a.dtype == b.dtype
            assert np.array_equal(a.to_numpy().view(np.int64), b.to_numpy().view(np.int64))
        else:  # text: the plain path's object column, or Arrow's categories of text (``arrowcsv``)
            assert a.dtype == object or isinstance(a.dtype, pd.CategoricalDtype)
            assert texts_of(a) == texts_of(b)


def texts_of(column: pd.Series) -> list:
    """A text column's cells, None for a missing one (NaN in an object column, -1 among categories)."""
    return [None if isinstance(v, float) and v != v else v for v in column.astype(object).tolist()]


def halfway_decimals(rng: np.random.Generator, count: int, low: float, high: float, most: int = 40) -> list[str]:
    """Texts of the exact midpoints between float64 neighbours drawn log-uniformly in [low, high), each cut or
    rounded to 17-``most`` significant digits: just below, at or above the midpoint, where a parser that misses
    by a little picks the wrong neighbour."""
    texts = []
    for x in np.exp(rng.uniform(np.log(low), np.log(high), count)):
        midpoint = (Decimal(float(x)) + Decimal(float(np.nextafter(x, np.inf)))) / 2
        digits = int(rng.integers(17, most + 1))
        with localcontext() as context:
            context.prec = digits
            context.rounding = [ROUND_DOWN, ROUND_UP, ROUND_HALF_EVEN][int(rng.integers(3))]
            texts.append(f"{+midpoint:f}")
    return texts
