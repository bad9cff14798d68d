"""The small-file CSV path (``valuecore/_io/plaincsv.py``) and pandas's read without missing-value
spellings (``reading._read_csv_unfiltered``) read exactly what pandas's full read reads, or decline:
random files with quotes, byte-order marks, CRLF, blank lines, missing-value spellings, exponents,
infinities, NaN, huge and tiny numbers, labels that look like numbers, repeated and unknown columns and
trailing commas are read both ways, cell by cell, bit by bit."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import tempfile
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from helpers.csvfiles import NUMBER_TEXTS, assert_same_cells, csv_files, halfway_decimals

import valuecore._io.plaincsv as plaincsv
from valuecore._io.format import _FileProblems
from valuecore._io.runfiles import reading
from valuecore.runs import load_run_file

def read_both(data: bytes, plain: bool = True):
    """(the frame or None, its problems, pandas's full read or None, its problems) of one file's bytes;
    ``plain``: the plain path may read it (else only the unfiltered read may, before the full one)."""
    with pytest.MonkeyPatch.context() as patch:
        if not plain:
            patch.setattr(plaincsv, "PLAIN_CSV_BYTES", -1)
        problems = _FileProblems("run.csv")
        fast = reading._read_csv(data, problems)
        patch.setattr(plaincsv, "PLAIN_CSV_BYTES", -1)
        patch.setattr(reading, "UNFILTERED_CSV", False)
        slow_problems = _FileProblems("run.csv")
        slow = reading._read_csv(data, slow_problems)
    return fast, problems, slow, slow_problems


def plain_taken(data: bytes) -> bool:
    header = reading.csv_header(reading.first_line(data, _FileProblems("run.csv")), _FileProblems("run.csv"))
    text = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    return header is not None and plaincsv.read_plain_csv(text, header) is not None


@settings(max_examples=50, deadline=None)
@given(csv_files())
@example(b"y_true,proba_a,proba_b\na,0.1234567890123456,0.5\n")
@example(b"y_true,proba_a,proba_b\na,1e23,0.5\n")
@example(b"y_true,proba_a,proba_b\nNA,0.25,1\n01,1e-05,0\n")
@example(b"proba_a,proba_b,y_true\n0.5,0.5,a,\n")
@example(b"y_true,proba_a,proba_b\n,0.25,0.75\na,0.5,0.5\n")
def test_plain_path_reads_what_pandas_reads_or_declines(data):
    fast, problems, slow, slow_problems = read_both(data)
    assert problems.items == slow_problems.items
    assert (fast is None) == (slow is None)
    if plain_taken(data):  # else both frames are pandas's
        assert_same_cells(fast, slow)


@settings(max_examples=50, deadline=None)
@given(csv_files())
@example(b"y_true,proba_a,proba_b\na,nan,0.5\n")
@example(b"y_true,proba_a,proba_b\na,NA,0.5\n")
@example(b"y_true,proba_a,proba_b\n,0.25,0.75\na,0.5,0.5\n")
@example(b"y_true,proba_a,note\na,0.25,NA\n")
@example(b"model,split,y_true,proba_a,proba_b,id,timestamp\n,s,,0.25,0.75,,\nm,,b,0.5,0.5,7,2024-01-01\n")
def test_unfiltered_read_reads_what_the_full_read_reads_or_declines(data):
    fast, problems, slow, slow_problems = read_both(data, plain=False)
    assert problems.items == slow_problems.items
    assert (fast is None) == (slow is None)
    if fast is not None:
        pd.testing.assert_frame_equal(fast, slow, check_exact=True)
        for j in range(fast.shape[1]):
            if fast.iloc[:, j].dtype.kind == "f":
                assert np.array_equal(fast.iloc[:, j].to_numpy().view(np.int64),
                                      slow.iloc[:, j].to_numpy().view(np.int64))


class ShortReads(reading._CheckedChunks):
    """The checked chunks of a streamed file a few bytes at a time: every chunk boundary falls somewhere."""

    size = 5

    def read(self, size: int = -1) -> bytes:
        return super().read(self.size if size < 0 else min(size, self.size))


def read_streamed(data: bytes, chunk: int, name: str = "run.csv"):
    """pandas's unfiltered read of ``data`` written to a file and read from it ``chunk`` bytes at a time."""
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        path = Path(folder) / name
        path.write_bytes(data)
        patch.setattr(ShortReads, "size", chunk)
        patch.setattr(reading, "_CheckedChunks", ShortReads)
        return reading._streamed_csv(path, name)


@settings(max_examples=80, deadline=None)
@given(st.one_of(csv_files(), csv_files(plain=True)), st.sampled_from([1, 3, 7, 16, 64, 1 << 18]))
@example(b"y_true,proba_a,proba_b\na,0.25,0.75\n", 1)
@example(b",y_true,proba_a,proba_b\n1,a,0.25,0.75\n", 5)  # a header's first name empty
@example(b"y_true,proba_a,proba_b\na,0.25,0.75,\n", 5)  # a trailing comma in the last chunk
@example(b"y_true,proba_a,proba_b\na,0.25,0.75\nb,0.5,0.5,", 7)  # ... with no line end
@example(b"y_true,proba_a,proba_b\na,0.25,0.75\nb, 0.5,0.5\n", 7)  # a space after the first chunk
@example(b"y_true,proba_a,proba_b\r\na,0.25,0.75\r\n", 3)
@example(b"\xef\xbb\xbfy_true,proba_a,proba_b\na,0.25,0.75\n", 3)
@example(b"y_true,proba_a,proba_b\n,0.25,0.75\na,0.5,0.5\n", 3)
def test_a_streamed_csv_is_read_as_its_bytes_are_unfiltered(data, chunk):
    # The unfiltered read of a file from disk, chunk by chunk, takes the same files as that of its bytes, and
    # reads the same frame (bit for bit); a byte-order mark, a header the loader reports on, are left to the
    # bytes' read.
    streamed = read_streamed(data, chunk)
    line = reading.first_line(data, _FileProblems("run.csv"))
    header = None if line is None else reading.csv_header(line, _FileProblems("run.csv"))
    bom = data.startswith(b"\xef\xbb\xbf")
    text = data[3:] if bom else data
    whole = None if header is None else reading._read_csv_unfiltered(
        data, text, header, reading._text_keys(line, header))
    if bom or header is None:
        assert streamed is None
        return
    assert (streamed is None) == (whole is None)
    if isinstance(streamed, reading._PlainColumns):  # read by Arrow (``arrowcsv``): the same cells
        assert_same_cells(streamed, whole)
    elif whole is not None:
        pd.testing.assert_frame_equal(streamed, whole, check_exact=True)
        assert list(streamed.dtypes) == list(whole.dtypes)
        for j in range(whole.shape[1]):
            if whole.iloc[:, j].dtype.kind == "f":
                assert np.array_equal(streamed.iloc[:, j].to_numpy().view(np.int64),
                                      whole.iloc[:, j].to_numpy().view(np.int64))


@pytest.mark.parametrize("name", ["run.parquet", "run.xlsx", "run.tsv"])
def test_only_a_csv_by_its_name_is_streamed(name):
    assert read_streamed(b"y_true,proba_a,proba_b\na,0.25,0.75\n", 64, name) is None
    assert read_streamed(b"y_true,proba_a,proba_b\na,0.25,0.75\n", 64) is not None


@settings(max_examples=20, deadline=None)
@given(csv_files(plain=True))
def test_plain_files_take_the_plain_path(data):
    assert plain_taken(data)
    fast, _, slow, _ = read_both(data)
    assert_same_cells(fast, slow)


@pytest.mark.parametrize("data, plain", [
    (b"y_true,proba_a,proba_b\na,0.25,0.75\nb,1,0\n", True),
    (b"y_true,proba_a,proba_b\na,0.25,0.75\r\nb,1,0\r\n", False),  # CRLF
    (b"y_true,proba_a,proba_b\na,0.25,0.75\n\nb,1,0\n", False),  # a blank line
    (b"y_true,proba_a,proba_b\na,0.25,\nb,1,0\n", False),  # an empty cell
    (b"y_true,proba_a,proba_b\n,0.25,0.75\nb,1,0\n", False),  # an empty label
    # Empty cells anywhere (found from the separators' positions, not by searching the text):
    (b"y_true,proba_a,proba_b\nab,0.25,0.75\n,1,0\n", False),  # an empty label among longer ones
    (b"proba_a,proba_b,y_true\n0.25,0.75,a\n1,0,\n", False),  # an empty last label, the file's last cell
    (b"proba_a,proba_b,y_true\n0.25,0.75,a\n1,0,\n0,1,b\n", False),  # an empty last label mid-file
    (b"y_true,proba_a,proba_b\na,,0.75\n", False),  # an empty number beside a separator
    (b"proba_a\n0.25\n\n0.75\n", False),  # a one-column file: a blank line is an empty cell
    (b"proba_a\n\n0.75\n", False),  # and so is a blank first row
    (b"proba_a\n0.25\n0.75", True),  # the last line without its end
    (b"proba_a\n0.25\n0.75\n", True),
    (b"y_true,proba_a,proba_b\n\na,0.25,0.75\n", False),  # a blank first row
    (b"y_true,proba_a,proba_b\na,0.25, 0.75\n", False),  # a space
    (b"y_true,proba_a,proba_b\na,0.1234567890123456,0.75\n", False),  # 16 digits
    # Each cell's digits counted from its own first byte to its own last (not its neighbour's):
    (b"proba_a,y_true,proba_b\n1234567890123456,a,0.75\n", False),  # 16, the first one a cell's first byte
    (b"y_true,proba_a,proba_b\na,-0.12345678901234,0.75\n", True),  # 15, a digit right after the cell
    (b"y_true,proba_a,proba_b\na,25e-23,0.75\n", False),  # scaled by 10**-23
    (b"y_true,proba_a,proba_b\na,25e-22,0.75\n", True),
    (b"y_true,proba_a,proba_b\na,nan,0.75\n", False),
    (b"y_true,proba_a,proba_b,id\na,0.25,0.75,7\n", False),  # a column other than numbers and labels
])  # fmt: skip
def test_what_is_plain(data, plain):
    with as_pandas_rounds(False):  # long decimals: see test_what_is_plain_when_pandas_rounds_correctly
        assert plain_taken(data) == plain


@pytest.mark.parametrize("cell, plain", [
    ("0.1234567890123456", True), ("0.22209908303362025", True), ("-0.0020279153249451592", True),
    ("0.00020279153249451592", True), ("1234567.8901234567", True), ("0.1234567890123456789", True),  # 19 digits
    ("0.12345678901234567891", False),  # 20 significant digits
    ("0.0000000000000000001234", True),  # 22 decimals
    ("0.00000000000000000001234", True),  # 23 decimals: read one by one (by float)
    ("1.2345678901234567e-05", True), ("-1.2345678901234567E-5", True),  # read one by one
    ("1.23456789012345678901e-05", False),
    ("1.2345678901234567e-12", True), ("1e23", True),  # scaled beyond 10**22: read one by one (by float)
    ("12345678901234567.5", True),  # a whole number of 17 digits and a half: beyond the exact test, read by float
])  # fmt: skip
@pytest.mark.parametrize("whole_column", [False, True])
def test_what_is_plain_when_pandas_rounds_correctly(cell, plain, whole_column):
    # Up to 19 significant digits, leading zeros not counted, with a dot. A whole number in a column of whole
    # numbers (pandas's int64) is never read as a float: a column without a dot of 16 or more digits is declined.
    other = "7" if whole_column else "0.75"
    data = f"y_true,proba_a,proba_b\na,{cell},{other}\nb,{cell},{other}\n".encode()
    with as_pandas_rounds(True):
        assert plain_taken(data) == plain
        whole = f"y_true,proba_a\na,{cell.replace('.', '')}\nb,7\n".encode()
        assert plain_taken(whole) is ("e" in cell.lower() and plain)
    if plain and plaincsv.pandas_rounds_correctly():
        fast, _, slow, _ = read_both(data)
        assert_same_cells(fast, slow)


def test_a_plain_file_loads_to_the_same_runs(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    n = 400
    proba = np.round(rng.dirichlet(np.ones(3), size=n), 4)
    proba[:, 2] = np.round(1 - proba[:, 0] - proba[:, 1], 4)
    rows = [f"{m},{s},{y},{a:.4g},{b},{float(c)!r}" for m, s, y, (a, b, c) in
            zip(rng.choice(["m1", "m2"], n), rng.choice(["train", "test"], n), rng.choice(["x", "y", "10"], n), proba)]
    path = tmp_path / "run.csv"
    path.write_text("\n".join(["model,split,y_true,proba_x,proba_y,proba_10", *rows]) + "\n")
    assert plain_taken(path.read_bytes())
    fast = load_run_file(path)
    with monkeypatch.context() as patch:
        patch.setattr(plaincsv, "PLAIN_CSV_BYTES", -1)
        slow = load_run_file(path)
    assert fast.problems == slow.problems and list(fast.models) == list(slow.models)
    for model in fast.models:
        a, b = fast.models[model], slow.models[model]
        assert a.classes == b.classes and list(a.splits) == list(b.splits)
        for split in a.splits:
            x, y = a.splits[split], b.splits[split]
            for name in ("proba", "y_true", "y_pred", "confidence"):
                u, v = np.asarray(getattr(x, name)), np.asarray(getattr(y, name))
                assert u.dtype == v.dtype and np.array_equal(u, v)
            assert np.array_equal(x.confidence.view(np.int64), y.confidence.view(np.int64))


@pytest.mark.parametrize("data, unfiltered", [
    (b"y_true,proba_a,proba_b\na,0.1234567890123456,0.75\n", True),
    (b"y_true,proba_a,proba_b,note\na,0.25,0.75,x\n", False),  # a column of text that is not a label
    (b"y_true,proba_a,proba_b\na,NA,0.75\n", False),
    (b"y_true,proba_a,proba_b\na,nan,0.75\n", False),
    (b"y_true,proba_a,proba_b\na,0.25, 0.75\n", False),
    (b"y_true,proba_a,proba_b\n,0.25,0.75\n", True),  # an empty label: missing, as in the full read
    (b"y_true,proba_a,proba_b\na,0.25,\n", False),  # an empty number: NaN, which the full read reports
    (b"y_true,proba_a,proba_b\na,0.25,0.75,\n", False),  # a trailing comma: pandas warns
])  # fmt: skip
def test_what_is_read_unfiltered(data, unfiltered):
    header = data.split(b"\n")[0].decode().split(",")
    frame = reading._read_csv_unfiltered(data, data, header, reading._text_keys(data.split(b"\n")[0], header))
    assert (frame is not None) == unfiltered


DECIMAL_TEXTS = st.one_of(
    st.from_regex(r"-?[0-9]{0,17}\.?[0-9]{0,17}([eE]-?[0-9]{0,5})?", fullmatch=True),
    st.from_regex(r"[-0-9.eE]{1,8}", fullmatch=True),
    NUMBER_TEXTS,
)


def read_plain(data: bytes, header: list[str], fast: bool, one_by_one: int = plaincsv.ONE_BY_ONE):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plaincsv, "FAST_DECIMALS", fast)
        patch.setattr(plaincsv, "ONE_BY_ONE", one_by_one)
        return plaincsv.read_plain_csv(data, header)


def assert_same_plain_read(data: bytes, header: list[str]) -> None:
    """The plain path with its own decimal parser reads what it reads with ``loadtxt``: both decline, or the
    same columns, dtypes and bits; the cells its byte loop leaves (exponents) read one by one and by
    ``_exponent_decimals`` alike. Decimals of more than 15 digits, which the ``loadtxt`` path leaves to pandas,
    only when pandas rounds them correctly: then read as pandas reads them."""
    slow = read_plain(data, header, False)
    for one_by_one in (plaincsv.ONE_BY_ONE, 0):
        fast = read_plain(data, header, True, one_by_one)
        if fast is not None and slow is None:
            assert plaincsv.pandas_rounds_correctly()
            assert_numbers_as_pandas(fast, data)
            continue
        assert (fast is None) == (slow is None)
        if fast is not None:
            assert list(fast) == list(slow)
            for name in fast:
                assert fast[name].dtype == slow[name].dtype
                if fast[name].dtype.kind == "f":
                    assert np.array_equal(fast[name].view(np.int64), slow[name].view(np.int64))
                else:
                    assert fast[name].tolist() == slow[name].tolist()


def assert_numbers_as_pandas(fast: dict, data: bytes) -> None:
    """The plain path's number columns ``fast`` are pandas's full read's of ``data``: same dtypes and bits."""
    slow = read_both(data)[2]
    for name, column in fast.items():
        if column.dtype.kind in "if":
            assert column.dtype == slow[name].dtype
            assert np.array_equal(column.view(np.int64), slow[name].to_numpy().view(np.int64))


@contextlib.contextmanager
def as_pandas_rounds(correctly: bool):
    """A context in which the plain path takes pandas to round long decimals correctly, or not."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plaincsv, "pandas_rounds_correctly", lambda: correctly)
        yield


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(DECIMAL_TEXTS, min_size=2, max_size=2), min_size=1, max_size=6),
       st.lists(st.sampled_from(["a", "b", "7"]), min_size=6, max_size=6), st.booleans())
@example([["1e-05", "-0"]], ["a"] * 6, False)
@example([["5.", ".5"], ["-.5", "1E5"]], ["a"] * 6, False)
@example([["1.e5", "0.1e-22"], ["25e-22", "-0.0"]], ["a"] * 6, False)
@example([["0.22209908303362025", "-0.0020279153249451592"], ["1.2345678901234567e-05", "1"]], ["a"] * 6, True)
@example([["12345678901234567", "0.5"]], ["a"] * 6, True)  # a whole number of 17 digits: pandas's int64
def test_the_decimal_parser_reads_what_loadtxt_reads(cells, labels, correctly):
    # When pandas rounds long decimals as loadtxt's path cannot (pandas 3.1 on), as pandas reads them; when it
    # does not, the plain path reads what it read before (no long decimals).
    correctly &= plaincsv.pandas_rounds_correctly()  # else what pandas reads is no reference for long decimals
    rows = [f"{label},{a},{b}" for label, (a, b) in zip(labels, cells)]
    header = ["y_true", "proba_a", "weight"]
    with as_pandas_rounds(correctly):
        assert_same_plain_read((",".join(header) + "\n" + "\n".join(rows) + "\n").encode(), header)


@pytest.mark.parametrize("cell, parsed", [
    ("0.25", True), ("-0", True), ("5.", True), (".5", True), ("-.5", True), ("00.25", True), ("1e-05", True),
    ("1E5", True), ("1.e5", True), ("-1.5e-3", True), ("123456789012345", True), ("0.1e-21", True),
    ("25e-22", True), ("1e-0005", True),
    ("1234567890123456", False), ("0.1e-22", False), ("25e-23", False), ("1e23", False), ("1e-00005", False),
    ("5e", False), ("e5", False), ("1e-", False), ("--1", False), ("1-", False), ("1.2.3", False), ("1e5e5", False),
    ("1e5.0", False), (".", False), ("-", False), ("-e5", False), (".e5", False), ("1_0", False), ("inf", False),
    ("0x1", False), ("1e--5", False), ("1e-5-", False),
])  # fmt: skip
@pytest.mark.parametrize("one_by_one", [plaincsv.ONE_BY_ONE, 0])
def test_which_cells_the_decimal_parser_reads(cell, parsed, one_by_one, monkeypatch):
    # Where pandas rounds long decimals correctly, more are read: test_what_is_plain_when_pandas_rounds_correctly.
    monkeypatch.setattr(plaincsv, "pandas_rounds_correctly", lambda: False)
    monkeypatch.setattr(plaincsv, "ONE_BY_ONE", one_by_one)
    body = f"a,{cell}\n".encode()
    got = plaincsv._decimals(*plaincsv._bytes_and_classes(body), np.array([[body.index(b","), len(body) - 1]]), [1])
    assert (got is not None) == parsed
    if parsed:
        assert got[0][0, 0].tobytes() == np.float64(float(cell)).tobytes()
        assert got[1][0, 0] == ("." in cell or "e" in cell.lower())
    assert_same_plain_read(b"y_true,proba_a\n" + body, ["y_true", "proba_a"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["0.25", "1e-04", "-3.5E-7", "0.0001", "12", "1e-0005", "x", "1-", "7.5e-23"]),
                min_size=1, max_size=12),
       st.integers(0, 700))
def test_many_cells_with_exponents_read_as_few_do(cells, rows):
    """A file of many exponent cells (more than ONE_BY_ONE, read by ``_exponent_decimals``) reads as loadtxt
    reads it: a column of the drawn cells repeated over the rows, beside a column of plain ones."""
    column = (cells * (rows // len(cells) + 1))[: rows + 1]
    text = "y_true,proba_a,proba_b\n" + "".join(f"a,{cell},0.5\n" for cell in column)
    assert_same_plain_read(text.encode(), ["y_true", "proba_a", "proba_b"])


def test_the_probability_matrix_is_the_plain_readers_own_rows():
    """The plain path's number columns are rows of one matrix: the checks take its transpose as the class-major
    probability matrix, with no copy; columns asked for in another order, or beside a whole-number column, are
    copied as before. Either way the matrix holds the columns' bits."""
    from valuecore._io.runfiles.cells import _numeric_matrix

    data = b"y_true,proba_a,proba_b,proba_c,weight\nx,0.25,0.5,0.25,1.5\ny,0.125,0.75,0.125,2\n"
    frame, _, _, _ = read_both(data)
    problems = _FileProblems("run.csv")
    for columns, shared in ((["proba_a", "proba_b", "proba_c"], True), (["proba_b", "proba_c"], True),
                            (["proba_b", "proba_a", "proba_c"], False), (["proba_c", "weight"], True)):
        matrix, not_number = _numeric_matrix(frame, columns, problems)
        assert not_number is None and matrix.shape == (2, len(columns))
        assert np.shares_memory(matrix, frame.plain_array(columns[0])) == shared
        for j, name in enumerate(columns):
            assert np.array_equal(matrix[:, j].view(np.int64), frame.plain_array(name).view(np.int64))
    whole = read_both(b"y_true,proba_a,proba_b\nx,0.5,0\ny,0.5,1\n")[0]
    matrix, _ = _numeric_matrix(whole, ["proba_a", "proba_b"], problems)  # proba_b is whole numbers: int64
    assert not np.shares_memory(matrix, whole.plain_array("proba_a"))


def test_a_probability_a_hair_above_one_loads_as_on_the_general_path(tmp_path, monkeypatch):
    """Entries a hair above 1 are set to 1 in the matrix the checks were given: the plain reader's own rows now,
    so the loaded run must still be the general path's, bit for bit."""
    path = tmp_path / "run.csv"
    path.write_bytes(b"y_true,proba_a,proba_b\na,1.0000001,0\nb,0.25,0.75\na,0.5,0.5\n")
    assert plain_taken(path.read_bytes())
    fast = load_run_file(path)
    with monkeypatch.context() as patch:
        patch.setattr(plaincsv, "PLAIN_CSV_BYTES", -1)
        slow = load_run_file(path)
    assert fast.problems == slow.problems
    x, y = fast.models["run"].splits["all"], slow.models["run"].splits["all"]
    assert x.proba.max() == 1.0
    for name in ("proba", "confidence"):
        assert np.array_equal(getattr(x, name).view(np.int64), getattr(y, name).view(np.int64))


@pytest.mark.parametrize("wide", [plaincsv.ONE_BY_ONE, plaincsv.ONE_BY_ONE + 1])
def test_a_file_of_full_precision_floats_goes_to_pandas_at_once(wide, monkeypatch):
    """pandas writes a float64 in up to 17 digits, which the plain path never reads (more than 15): a file of
    more than ONE_BY_ONE such cells is handed to pandas before the byte loop, with no loadtxt checks; with
    fewer, those checks still look (and decline). Either way the plain path reads what it read, or declines."""
    rows = [f"a,{0.1 + k / 7:.18f},0.5" if k < wide else "a,0.25,0.5" for k in range(2 * plaincsv.ONE_BY_ONE)]
    data = ("y_true,proba_a,proba_b\n" + "\n".join(rows) + "\n").encode()
    header = ["y_true", "proba_a", "proba_b"]
    checked = []
    loadtxt_numbers = plaincsv._loadtxt_numbers
    monkeypatch.setattr(plaincsv, "pandas_rounds_correctly", lambda: False)
    monkeypatch.setattr(plaincsv, "_loadtxt_numbers", lambda *a: checked.append(1) or loadtxt_numbers(*a))
    assert plaincsv.read_plain_csv(data, header) is None
    assert len(checked) == (0 if wide > plaincsv.ONE_BY_ONE else 1)
    assert_same_plain_read(data, header)
    monkeypatch.undo()
    assert_same_plain_read(data, header)  # as pandas reads it, when pandas rounds correctly (19 digits at most)


def test_a_file_of_wide_numbers_is_declined_before_its_bytes_are_classed(monkeypatch):
    """Most numbers of the first row wider than any decimal the plain path reads (pandas's full-precision
    floats): declined from that row alone; the pandas path reads the file, as it would have."""
    rows = [f"a,{0.1 + k / 7:.17f},{0.9 - k / 7:.17f}" for k in range(50)]
    data = ("y_true,proba_a,proba_b\n" + "\n".join(rows) + "\n").encode()
    classed = []
    with monkeypatch.context() as patch:
        patch.setattr(plaincsv, "pandas_rounds_correctly", lambda: False)
        patch.setattr(plaincsv, "_bytes_and_classes", lambda *a: classed.append(1))
        assert plaincsv.read_plain_csv(data, ["y_true", "proba_a", "proba_b"]) is None and not classed
        fast, _, slow, _ = read_both(data)
        assert fast is not None and not isinstance(fast, reading._PlainColumns)
        assert fast.equals(slow)
    # When pandas rounds them correctly, such numbers (up to 19 digits) are read on the plain path, as pandas reads
    # them; wider ones still decline the file before its bytes are classed.
    if plaincsv.pandas_rounds_correctly():
        fast, _, slow, _ = read_both(data)
        assert_same_cells(fast, slow)
        wide = data.replace(b"0.", b"0.0000000000")
        monkeypatch.setattr(plaincsv, "_bytes_and_classes", lambda *a: classed.append(1))
        assert plaincsv.read_plain_csv(wide, ["y_true", "proba_a", "proba_b"]) is None and not classed


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 400), st.integers(2, 12), st.integers(0, 2**32 - 1), st.sampled_from([1.0, 3.0, 30.0]))
@example(1000, 10, 0, 1.0)
@example(1000, 10, 0, 3.0)
def test_a_file_pandas_wrote_in_full_precision_is_read_as_pandas_reads_it(rows, classes, seed, spread):
    """pandas's own ``to_csv`` of float64 probabilities and logits (each in its shortest round-trip form, up to 17
    digits, tiny ones with an exponent): on the plain path when pandas rounds correctly, cell for cell, bit for
    bit as pandas's full read. (Many tiny ones, below about 10**-5 with 17 digits, scaled beyond 10**22, still go
    to pandas.)"""
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, spread, size=(rows, classes))
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    frame = pd.DataFrame(proba, columns=[f"proba_{j}" for j in range(classes)])
    frame["logit_0"] = logits[:, 0]
    frame["y_true"] = rng.integers(0, classes, rows)
    data = frame.to_csv(index=False).encode()
    fast, _, slow, _ = read_both(data)
    taken = plain_taken(data)
    if spread == 1.0 and len(data) <= plaincsv.PLAIN_CSV_BYTES:  # probabilities above 10**-5 or so
        assert taken == plaincsv.pandas_rounds_correctly()
    if taken:
        assert_same_cells(fast, slow)


@contextlib.contextmanager
def quotients(extended: bool):
    """A context in which ``nearest_quotients`` goes by the 64-bit significand where this machine has one
    (``extended``), or by integers alone."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plaincsv, "EXTENDED_QUOTIENTS", extended and plaincsv.EXTENDED_QUOTIENTS)
        yield


BOTH_WAYS = pytest.mark.parametrize("extended", [True, False], ids=["extended", "integers"])


def as_whole_and_decimals(texts: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(N, d, the texts) of the plain decimals ``N / 10**d`` among ``texts`` that ``nearest_quotients`` takes:
    2**53 < N < 10**19, d <= 22."""
    kept = [(int(t.replace(".", "")), len(t.partition(".")[2]), t) for t in texts]
    kept = [(n, d, t) for n, d, t in kept if 2**53 < n < 10**19 and d <= 22]
    return (np.array([n for n, _, _ in kept], dtype=np.uint64), np.array([d for _, d, _ in kept], dtype=np.intp),
            [t for _, _, t in kept])  # fmt: skip


def assert_nearest(texts: list[str], extended: bool) -> tuple[int, int]:
    """``nearest_quotients`` of the texts it takes is Python's ``float``, bit for bit, where found; returns how
    many it took and how many it found."""
    whole, decimals, texts = as_whole_and_decimals(texts)
    with quotients(extended):
        values, found = plaincsv.nearest_quotients(whole, decimals)
    expected = np.array([float(t) for t in texts])
    assert np.array_equal(values[found].view(np.int64), expected[found].view(np.int64))
    return len(texts), int(found.sum())


@BOTH_WAYS
def test_long_decimals_round_as_float_does_at_halfway_points(extended):
    rng = np.random.default_rng(50)
    for low, high in ((1e-6, 1e-3), (1e-3, 1.0), (1.0, 1e4), (1e4, 1e12)):
        taken, found = assert_nearest(halfway_decimals(rng, 1500, low, high, most=19), extended)
        assert found == taken > 500  # all found: from 5 decimals on, as every one but a few of 1e4-1e12 has


@BOTH_WAYS
def test_exact_ties_round_to_even(extended):
    # The midpoint between float64 neighbours m * 2**e and (m + 1) * 2**e is a decimal of 17-19 digits when
    # 2**e is 1/2, 1/4 or 1/8 (values near 2**50-2**53): it must go to the even m, never away from zero. Also
    # the midpoints either side of a power of two (where the neighbour below is half as far) and of 2**53.
    rng = np.random.default_rng(51)
    texts = []
    for e in (-3, -2, -1):
        for m in [*rng.integers(2**52, 2**53, 500).tolist(), 2**52, 2**52 + 1, 2**53 - 1, 2**53 - 2]:
            for midpoint in (Fraction(2 * m + 1, 2) * Fraction(2) ** e, Fraction(2 * m - 1, 2) * Fraction(2) ** e):
                texts.append(f"{Decimal(midpoint.numerator) / Decimal(midpoint.denominator):f}")
    taken, found = assert_nearest(texts, extended)
    # All found but some on the top of a binade, whose rounded candidate is the next power of two (then the
    # test's t = 1 - e - d is -1): declined there (read by pandas), never misread.
    assert taken > 2000 and found > 0.98 * taken
    whole, decimals, taken = as_whole_and_decimals(texts)
    with quotients(extended):
        values, found = plaincsv.nearest_quotients(whole, decimals)
    ties = found & np.array([Decimal(float(t)) != Decimal(t) for t in taken])  # not a float itself: a tie
    assert ties.sum() > 1000
    assert not (values[ties].view(np.int64) % 2).any()  # each went to its even neighbour


@BOTH_WAYS
def test_decimals_near_powers_of_two_and_two_to_the_53(extended):
    texts = []
    for k in [*range(-20, 60)]:
        for ulps in range(-3, 4):
            x = float(np.ldexp(1.0, k))
            for _ in range(abs(ulps)):
                x = float(np.nextafter(x, np.inf if ulps > 0 else -np.inf))
            for digits in (17, 18, 19):
                texts.append(f"{Decimal(x):.{digits}g}" if "e" not in f"{Decimal(x):.{digits}g}" else f"{x:.{digits}f}")
    texts = [t if "." in t else t + ".0" for t in texts]
    taken, found = assert_nearest(texts, extended)
    assert taken > 1000 and found > 0.9 * taken


@BOTH_WAYS
@settings(max_examples=400, deadline=None)
@given(st.integers(2**53 + 1, 10**19 - 1), st.integers(0, 22))
@example(2**53 + 1, 1)  # 900719925474099.3
@example(9007199254740993, 0)  # a tie between 2**53 and 2**53 + 2: too large for the exact test
@example(10**19 - 1, 22)
def test_nearest_quotients_is_float(extended, whole, decimals):
    with quotients(extended):
        value, found = plaincsv.nearest_quotients(np.array([whole], dtype=np.uint64), np.array([decimals]))
    if found[0]:
        assert value[0].tobytes() == np.float64(float(f"{whole}e-{decimals}")).tobytes()
    assert found[0] or decimals < 5  # from 5 decimals on, every quotient is found


LONG_DECIMALS = st.one_of(
    st.floats(1e-4, 1e15).map(repr),  # positional, up to 17 digits
    st.floats(1e-4, 1e15).map(lambda x: f"-{x!r}"),
    st.floats(0, 1e3).map(lambda x: f"{x:.{int(x * 1000) % 8 + 15}f}"),  # up to 22 decimals
    st.floats(1e-30, 1e30).map(repr),  # exponents, read one by one
    st.builds(lambda n, zeros, d: f"{'0' * zeros}{str(n)[:-d] or '0'}.{str(n)[-d:].zfill(d)}",
              st.integers(0, 10**19 - 1), st.integers(0, 3), st.integers(1, 22)),  # leading zeros, all digits
    st.builds(lambda n, d: f"-0.{str(n).zfill(d)}", st.integers(0, 10**19 - 1), st.integers(19, 24)),
)


@settings(max_examples=500, deadline=None)
@given(cell=LONG_DECIMALS, one_by_one=st.sampled_from([plaincsv.ONE_BY_ONE, 0]))
@example(cell="0.22209908303362025", one_by_one=plaincsv.ONE_BY_ONE)
@example(cell="-0.0020279153249451592", one_by_one=plaincsv.ONE_BY_ONE)
@example(cell="0.1000000000000000055511151231257827", one_by_one=plaincsv.ONE_BY_ONE)  # over 19 digits: apart
@example(cell="1.2345678901234567e-05", one_by_one=0)
def test_the_byte_loop_reads_long_decimals_as_float_does(cell, one_by_one):
    # Bit for bit Python's float, so pandas's read when pandas rounds correctly; any decimal of 19 significant
    # digits or fewer, with a dot, 1-22 decimals and at most 25 bytes is read, if it has 5 decimals or more or
    # is exact in one division (below 2**53; the exact test needs t = 1 - e - d >= 0).
    body = f"a,{cell}\n".encode()
    with as_pandas_rounds(True), pytest.MonkeyPatch.context() as patch:
        patch.setattr(plaincsv, "ONE_BY_ONE", one_by_one)
        got = plaincsv._decimals(*plaincsv._bytes_and_classes(body), np.array([[body.index(b","), len(body) - 1]]),
                                 [1])  # fmt: skip
    if got is plaincsv._TO_PANDAS:  # wider than any decimal read here (ONE_BY_ONE = 0: one such cell is many)
        got = None
    if got is not None:
        assert got[0][0, 0].tobytes() == np.float64(float(cell)).tobytes()
    whole, _, decimals = cell.lstrip("-").partition(".")
    if "e" not in cell and 0 < len(decimals) <= 22 and len((whole + decimals).lstrip("0")) <= 19 and len(cell) <= 25:
        assert got is not None or (len(decimals) < 5 and int(whole + decimals) > 2**53)


def test_the_gate_is_how_pandas_rounds():
    """``pandas_rounds_correctly`` says True exactly when the installed pandas reads a few thousand halfway
    decimals (17-40 digits) as Python's float does, bit for bit."""
    rng = np.random.default_rng(52)
    ranges = ((1e-8, 1e-3), (1e-3, 1.0), (1.0, 1e15))
    texts = [t for low, high in ranges for t in halfway_decimals(rng, 1500, low, high)]
    read = pd.read_csv(io.StringIO("x\n" + "\n".join(texts) + "\n"))["x"].to_numpy()
    expected = np.array([float(t) for t in texts])
    assert read.dtype == np.float64
    assert np.array_equal(read.view(np.int64), expected.view(np.int64)) == plaincsv.pandas_rounds_correctly()


@pytest.mark.parametrize("version, correct", [
    ("3.1.1", True), ("3.1.0", True), ("3.1.0.dev0+123.gabc", True), ("3.2", True), ("4.0.0", True),
    ("3.0.3", False), ("2.2.3", False), ("1.5.3", False), ("3", False), ("", False), ("x.y", False),
])  # fmt: skip
def test_the_gate_reads_pandas_version(version, correct, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", SimpleNamespace(__version__=version))
    plaincsv.pandas_rounds_correctly.cache_clear()
    try:
        assert plaincsv.pandas_rounds_correctly() is correct
    finally:
        plaincsv.pandas_rounds_correctly.cache_clear()


def test_the_gate_reads_the_version_file_without_pandas_imported(monkeypatch):
    monkeypatch.delitem(sys.modules, "pandas")
    plaincsv.pandas_rounds_correctly.cache_clear()
    try:
        assert plaincsv.pandas_rounds_correctly() is (tuple(map(int, pd.__version__.split(".")[:2])) >= (3, 1))
        assert "pandas" not in sys.modules
    finally:
        plaincsv.pandas_rounds_correctly.cache_clear()


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(plaincsv.ONE_BY_ONE + 1, 700))
@example(0, 600)
def test_many_long_exponent_cells_round_as_float_does(seed, rows):
    """More than ONE_BY_ONE tiny probabilities as pandas writes them (``1.2345678901234567e-05``: 17 digits and
    an exponent) or halfway decimals of 17 digits so written (scaled within 10**22): read by
    ``_exponent_decimals`` as Python's float reads them, bit for bit, when pandas rounds correctly."""
    rng = np.random.default_rng(seed)
    texts = [repr(float(x)) for x in np.exp(rng.uniform(np.log(1e-6), np.log(1e-4), rows // 2))]
    texts += [f"{Decimal(t):e}" for t in halfway_decimals(rng, rows - rows // 2, 1e-6, 1e-4, most=17)]
    data = ("y_true,proba_a\n" + "".join(f"a,{t}\n" for t in texts)).encode()
    with as_pandas_rounds(True):
        read = plaincsv.read_plain_csv(data, ["y_true", "proba_a"])
    assert read is not None
    assert np.array_equal(read["proba_a"].view(np.int64), np.array([float(t) for t in texts]).view(np.int64))


# Cells of every shape the plain reader meets: most read ``-?d.digits`` (the eight-byte reader's own), the others
# each a reason it hands a cell on (a whole number, an exponent, two digits before the dot, no digit before it,
# a digit that is a letter, more than 19 significant digits, more than 22 decimals).
POINT_CELLS = st.one_of(
    st.builds(lambda minus, digit, n, d: f"{minus}{digit}.{str(n).zfill(d)[-d:]}",
              st.sampled_from(["", "-"]), st.sampled_from("0123456789"), st.integers(0, 10**22), st.integers(1, 22)),
    st.floats(0, 1).map(repr),
    st.floats(-9.9, 9.9).map(repr),
    st.sampled_from(["0.0", "1.0", "-0.0", "0.5", "1", "12", "12.5", "1e-05", "-3.5E-7", ".5", "5.", "00.25",
                     "0.12345678901234567891", "9.999999999999999999", "0.00000000000000000001234", "0.1x", "0.-1",
                     "0.00000000000000000000", "9.99999999999999999", "0.9999999999999999999999"]),
)


def loop_reference(data: bytes, ends: np.ndarray, columns: list[int], correctly: bool):
    """What the byte loop alone (and the cells it hands on) reads of the same cells: the reader before the eight-
    byte one."""
    with as_pandas_rounds(correctly), pytest.MonkeyPatch.context() as patch:
        patch.setattr(plaincsv, "_POINT_FROM", 1 << 30)
        return plaincsv._decimals(*plaincsv._bytes_and_classes(data), ends, columns)


@settings(max_examples=300, deadline=None)
@given(st.lists(POINT_CELLS, min_size=1, max_size=8), st.lists(st.sampled_from(["0.5", "0.25", "0.125"]), max_size=8),
       st.integers(1, 300), st.integers(0, 2), st.booleans(), st.sampled_from(["y_true", "y"]))
@example(["0.00000000000000000"], [], 1, 0, True, "y")  # at a short file's start: a word before it
@example(["0.22209908303362025"], ["0.5"] * 8, 1, 0, True, "y")
@example(["9.99999999999999999", "-0.9999999999999999999"], [], 3, 1, True, "y_true")  # 19 digits: 2**63 and more
@example(["1.0", "1e-05"], [], 300, 0, True, "y_true")  # many cells handed on: the byte loop reads them
@example(["0.1234567890123456"], [], 2, 2, False, "y_true")  # 16 digits, pandas rounding its own way
def test_cells_read_eight_bytes_at_a_time_are_the_byte_loops(cells, plain, rows, label_at, correctly, label):
    # Bit for bit the byte loop's values (and float's), the same cells read as dot-less, and no file declined that
    # the byte loop reads. Where it declines a cell that the others' readers take (handed on, one by one, by float),
    # the value is float's: pandas's when it rounds correctly.
    correctly &= plaincsv.pandas_rounds_correctly()
    pool = cells + plain
    k = len(pool) + 1
    lines = []
    for row in range(rows):
        numbers = [pool[(row + j) % len(pool)] for j in range(len(pool))]
        lines.append(",".join(numbers[:label_at] + ["a"] + numbers[label_at:]))
    label_at = min(label_at, len(pool))
    header = b",".join([f"proba_{j}".encode() for j in range(label_at)] + [label.encode()]
                       + [f"proba_{j}".encode() for j in range(label_at, len(pool))])
    data = header + b"\n" + "\n".join(lines).encode() + b"\n"
    start = data.index(b"\n") + 1
    text, classes = plaincsv._bytes_and_classes(data, start)
    ends = (classes == plaincsv._PAST_END).nonzero()[0].reshape(rows, k)
    columns = [j for j in range(k) if j != label_at]
    with as_pandas_rounds(correctly):
        got = plaincsv._decimals(text, classes, ends, columns)
    reference = loop_reference(data, ends + start, columns, correctly)
    if reference is plaincsv._TO_PANDAS or got is plaincsv._TO_PANDAS:
        assert got is reference
        return
    if reference is not None:
        assert got is not None
    if got is None:
        return
    values, pointed = got
    assert values.shape == pointed.shape == (len(columns), rows)
    cell_texts = [[line.split(",")[j] for line in lines] for j in columns]
    expected = np.array([[float(cell) for cell in column] for column in cell_texts])
    assert np.array_equal(values.view(np.int64), expected.view(np.int64))
    assert pointed.tolist() == [[("." in c or "e" in c.lower()) for c in column] for column in cell_texts]
    if reference is not None:
        assert np.array_equal(values.view(np.int64), reference[0].view(np.int64))


def test_the_eight_byte_reader_reads_a_pandas_file_whole():
    """The cells of a file pandas wrote in full precision are read eight bytes at a time, all but the few it hands
    on (exponents, 1.0), and the byte loop is not run."""
    rng = np.random.default_rng(7)
    proba = rng.dirichlet(np.full(10, 0.3), size=400)
    proba[0] = np.eye(10)[3]  # 1.0 and 0.0
    frame = pd.DataFrame(proba, columns=[f"proba_{j}" for j in range(10)]).assign(y_true=rng.integers(0, 10, 400))
    data = frame.to_csv(index=False).encode()
    header = list(frame.columns)
    loops = []
    byte_loop = plaincsv._byte_loop
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plaincsv, "_byte_loop", lambda *a: loops.append(1) or byte_loop(*a))
        read = plaincsv.read_plain_csv(data, header) if plaincsv.pandas_rounds_correctly() else None
    if read is not None:
        assert not loops
        for name in header[:10]:
            assert np.array_equal(read[name].view(np.int64), frame[name].to_numpy().view(np.int64))
    assert_same_plain_read(data, header)


def reads_eight_bytes_at_a_time(cell: str, exact: bool) -> bool:
    """Whether the eight-byte reader reads ``cell`` itself (else it hands it on): one digit, a dot, 1-22 decimals,
    and at most 19 significant digits when pandas rounds correctly, else 15 digits in all."""
    match = re.fullmatch(r"-?(\d)\.(\d{1,22})", cell)
    if match is None:
        return False
    whole, decimals = match.groups()
    return len((whole + decimals).lstrip("0")) <= 19 if exact else 1 + len(decimals) <= 15


@settings(max_examples=300, deadline=None)
@given(st.lists(POINT_CELLS, min_size=1, max_size=40), st.booleans())
@example(["0.0000000000000000000001"], True)  # 22 decimals
@example(["0.00000000000000000000001"], True)  # 23: handed on
@example(["9.999999999999999999", "1.000000000000000000"], True)  # 19 significant digits: above 2**63
@example(["0.9999999999999999999", "0.09999999999999999999"], True)
@example(["0.99999999999999999999"], True)  # 20 digits: handed on
@example(["1.00000000000000000000"], True)  # 21 digits, 20 of them significant: handed on
@example(["0.12345678901234", "0.123456789012345"], False)  # 15 digits, 16
@example(["-0.0", "-5.5", "0.5", "x.5", "5x5", "0.5x", "-.5"], True)
def test_which_cells_are_read_eight_bytes_at_a_time(cells, exact):
    header = "proba_" + "x" * 30  # a long header: every cell's words lie in the file
    data = (header + "\n" + "\n".join(cells) + "\n").encode()
    start = data.index(b"\n") + 1
    _, classes = plaincsv._bytes_and_classes(data, start)
    ends = (classes == plaincsv._PAST_END).nonzero()[0]
    at = np.concatenate([[0], ends[:-1] + 1]).reshape(1, -1)
    widths = ends.reshape(1, -1) - at
    got = plaincsv._point_decimals(classes, at, widths, exact)
    prefixed = sum(re.match(r"-?\d\.", cell) is not None for cell in cells)
    if got is None:
        assert 2 * prefixed < len(cells)
        return
    assert 2 * prefixed >= len(cells)
    values, rest = got
    assert values.shape == (1, len(cells))
    read = [reads_eight_bytes_at_a_time(cell, exact) for cell in cells]
    assert sorted(rest.tolist()) == [j for j, r in enumerate(read) if not r]
    for j, cell in enumerate(cells):
        if read[j]:
            assert values[0, j].tobytes() == np.float64(float(cell)).tobytes(), cell


def test_a_cell_whose_words_reach_before_the_file_is_handed_on():
    """A short header and a long first cell: its farthest word would start before the file's first byte (a word
    read from the first byte instead would count three of its digits twice); that cell is handed on (read one by
    one), the others eight bytes at a time."""
    data = b"y\n0.01230000000000000\n0.5\n"
    _, classes = plaincsv._bytes_and_classes(data, 2)
    at, widths = np.array([[0, 20]]), np.array([[19, 3]])
    values, rest = plaincsv._point_decimals(classes, at, widths, True)
    assert rest.tolist() == [0] and values[0, 1] == 0.5
    got = plaincsv._decimals(*plaincsv._bytes_and_classes(data, 2), np.array([[19], [23]]), [0])
    assert got[0].tolist() == [[0.0123, 0.5]]
