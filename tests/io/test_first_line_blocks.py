"""The header line is read in blocks that start at 4 KiB and double: a header of any length, across every
block edge, is read whole and alike from bytes and from a file, and the file is left just after it."""

from __future__ import annotations

import io

import pytest

from valuecore._io.format import _FileProblems, first_line


def header_of(length: int) -> bytes:
    # Long names, so that even the longest header has fewer columns than the loader allows.
    line = b",".join([b"y_true"] + [b"proba_%d_" % k + b"x" * 500 for k in range(length // 500 + 1)])
    return line[:length].rstrip(b",")


@pytest.mark.parametrize("length", [1, 4095, 4096, 4097, 8191, 12287, 12288, 12289, 28673, 65536, 65537, 200_000])
def test_a_header_is_read_whole_across_block_edges(length):
    line = header_of(length)
    data = line + b"\n0.5,0.5\n"
    from_bytes = first_line(data, _FileProblems("run.csv"))
    handle = io.BytesIO(data)
    from_file = first_line(handle, _FileProblems("run.csv"))
    assert from_bytes == from_file == line
    assert handle.read() == b"0.5,0.5\n"


def test_a_header_longer_than_the_bound_is_refused_alike(monkeypatch):
    monkeypatch.setenv("VALUECORE_MAX_COLUMNS", "8")  # 8 KiB of header at most
    data = b"a" * 9000 + b"\n"
    seen = [_FileProblems("run.csv"), _FileProblems("run.csv")]
    assert first_line(data, seen[0]) is None and first_line(io.BytesIO(data), seen[1]) is None
    assert [str(p) for p in seen[0].items] == [str(p) for p in seen[1].items] != []
