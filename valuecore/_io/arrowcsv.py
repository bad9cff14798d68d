"""A larger CSV run file read by Arrow's CSV reader, when it provably reads what pandas's unfiltered read reads.

pandas's C parser makes a Python text object per label cell and the loader then hashes every one of them; at
10^5 rows of 10 probabilities that read and factorising cost 42-44 ms of CPU in a fresh process, Arrow's
single-threaded reader with the labels as a dictionary 29-32 ms (one text object per distinct label). It is
taken for the files the plain path (``plaincsv``) takes, only larger: a header, then numbers and labels.

What makes the two reads one (``tests/io/test_arrowcsv.py`` checks each against pandas's full read):

- the same bytes are refused first as on pandas's unfiltered read (a space, a tab, a quote, a CR, a file
  starting or ending with a comma), and the header as read must be the file's own names;
- the only missing value is an empty cell (``null_values=[""]``); a label column is text, a number column
  must come out as int64 or float64 with no missing cell and no NaN (pandas reads ``nan`` there as text, Arrow
  as NaN: both are then declined), and no float of magnitude 2**63 or more (an all-integer column above int64
  is uint64 to pandas, float64 to Arrow);
- both parsers round every decimal correctly (pandas from 3.1, Arrow's ``fast_float``): the plain path's gate,
  ``plaincsv.pandas_rounds_correctly``, which a test holds to the installed pandas on halfway cases;
- any error or doubt (a row of another length, a type Arrow infers from the first block that a later block
  breaks) declines, and pandas reads the file as before, with its messages.
"""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np

from . import plaincsv

# What pandas's unfiltered read declines (``reading._UNFILTERED_MARKS``), searched by memchr.
_MARKS = (b" ", b"\t", b'"', b"\r")
_TOO_LARGE_FOR_INT64 = 2.0**63


def read_arrow_csv(source: bytes | memoryview | Path, header: list[str]) -> dict | None:
    """The columns pandas's unfiltered read would read from ``source`` (a CSV file's bytes, its byte-order mark
    cut, or the path of a file that has none), or None when that is not proven.

    ``header``: the names :func:`~valuecore._io.format.csv_header` read from its first line. Returns a dict of
    column name to (n,) column: int64 or float64 for a number column, a ``pandas.Categorical`` of text (object
    categories, -1 for an empty cell) for a label column.
    """
    if not header or not plaincsv.pandas_rounds_correctly():
        return None
    kinds = plaincsv.label_and_number_columns(header)
    if kinds is None:
        return None
    labels = [header[j] for j in kinds[0]]
    if isinstance(source, Path):
        with open(source, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            # Parsed where the page cache holds it: a copy of a 7 MB file cost 1,800 fresh pages (7-9 ms).
            return _read(mapped, header, labels)
    return _read(source, header, labels)


def _read(data, header: list[str], labels: list[str]) -> dict | None:
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    if isinstance(data, memoryview):
        data = bytes(data)
    if not len(data) or data[:1] == b"," or data[-1:] == b"," or any(data.find(mark) >= 0 for mark in _MARKS):
        return None
    buffer = pa.py_buffer(data)
    try:
        table = pa_csv.read_csv(
            pa.BufferReader(buffer),
            read_options=pa_csv.ReadOptions(use_threads=False),
            convert_options=pa_csv.ConvertOptions(
                column_types={name: pa.dictionary(pa.int32(), pa.string()) for name in labels},
                null_values=[""], strings_can_be_null=True, true_values=[], false_values=[],
            ),
        )
    except (pa.ArrowException, ValueError):
        return None
    finally:
        del buffer  # a mapped file is closed by the caller: nothing of Arrow's may still point into it
    if table.column_names != _spelled(header, data):
        return None
    columns = {}
    for name, column in zip(header, table.columns):
        columns[name] = _labels(column) if name in labels else _numbers(column)
        if columns[name] is None:
            return None
    return columns


def _spelled(header: list[str], data) -> list[str]:
    """The header's names as the file spells them (Arrow names columns so; ``csv_header`` strips them)."""
    end = data.find(b"\n")
    return data[: end if end >= 0 else len(data)].decode("utf-8").split(",")


def _numbers(column) -> np.ndarray | None:
    import pyarrow as pa

    if column.null_count or not (pa.types.is_int64(column.type) or pa.types.is_float64(column.type)):
        return None
    values = column.to_numpy()
    if values.dtype.kind == "f" and not np.abs(values).max(initial=0.0) < _TOO_LARGE_FOR_INT64:
        return None  # NaN (pandas: text), or a float pandas may have read as uint64
    return values


def _labels(column):
    import pandas as pd
    import pyarrow as pa

    if not pa.types.is_dictionary(column.type):
        return None
    column = column.unify_dictionaries().combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    codes = column.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return pd.Categorical.from_codes(codes, categories=pd.Index(column.dictionary.to_pylist(), dtype=object))
