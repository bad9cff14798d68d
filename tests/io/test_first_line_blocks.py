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


BAD_HEADERS = {
    "utf-16": "y_true,proba_a\n".encode("utf-16"),
    "binary": b"y_true,\x00proba_a\n",
    "not utf-8": b"y_true,proba_\xe9\n",
    "old mac line ends": b"y_true,proba_a\rx,1\r",
    "blank first line": b"\ny_true,proba_a\n",
    "open quote": b'y_true,"proba_a\n',
    "repeated name": b"y_true,proba_a,proba_a\n",
    "too many columns": b"y_true," + b",".join(b"proba_%d" % k for k in range(20)) + b"\n",
    "too long": b"y_true,proba_" + b"a" * 9000 + b"\n",
}


@pytest.mark.parametrize("name", sorted(BAD_HEADERS))
def test_a_bad_header_reads_the_same_whether_checked_early_or_with_the_file(name, tmp_path, monkeypatch):
    """A CSV file up to ``STREAMED_CSV_BYTES`` is opened once and its header checked with its bytes; a larger one
    has its header checked before the rest is read. Both refuse a bad header with the same words, from either
    loader."""
    from valuecore._io.runfiles import reading
    from valuecore.runs import load_run_file, load_runs

    monkeypatch.setenv("VALUECORE_MAX_COLUMNS", "8")  # 8 KiB of header at most, and 8 columns
    path = tmp_path / "run.csv"
    path.write_bytes(BAD_HEADERS[name] + b"x,0.5\n" * 5)
    seen = []
    for streamed in (False, True):
        with monkeypatch.context() as patch:
            patch.setattr(reading, "STREAMED_CSV_BYTES", -1 if streamed else 1 << 18)
            early, checked = reading._early_header_problems, []
            patch.setattr(reading, "_early_header_problems", lambda *a: checked.append(a) or early(*a))
            seen.append([str(p) for p in load_run_file(path).problems])
            seen.append([str(p) for p in load_runs([path]).problems])
            assert len(checked) == (2 if streamed else 0)  # the header alone read first only when streamed
    assert seen[0] != [] and all(problems == seen[0] for problems in seen)
