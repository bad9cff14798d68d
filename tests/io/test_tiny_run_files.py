"""A small run file loads to the same runs, bit for bit, on its fast paths as on the general ones: the plain CSV
path (its columns read without a pandas frame, its numbers by its own decimal parser), the digest of a small
file's bytes taken on the calling thread, frames whose column names are Python text, and short text columns
factorised by a dict. Random small CSV and
Parquet files with ties, weights, missing cells, several models and splits, top-label runs and labels of odd
types are loaded both ways: the same problems (file, column, rows, words), classes, splits, arrays (dtype and
bits), digests and tuned thresholds."""

from __future__ import annotations

import hashlib
import io
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import valuecore as vc
import valuecore._io.plaincsv as plaincsv
from valuecore._io.runfiles import cells, parse, reading
from valuecore.runs import load_run_file

CLASS_SETS = [("a", "b"), ("0", "1", "2"), ("1", "10"), ("cat", "dog", "é"), ("True", "False"), ("x_1", "x-2")]
SCORES = ["0", "1", "0.25", "0.5", "0.75", "0.125", "1e-04", "5E-1", ".5", "0.3333", "0.6667", "1.0"]


@st.composite
def run_csvs(draw) -> bytes:
    """A small CSV run file, mostly plain (so that the fast paths take it), sometimes not."""
    classes = draw(st.sampled_from(CLASS_SETS))
    n = draw(st.integers(1, 25))
    top_label = draw(st.integers(0, 5)) == 0
    columns: dict[str, list[str]] = {}
    if draw(st.booleans()):
        columns["model"] = draw(st.lists(st.sampled_from(["m1", "m2"]), min_size=n, max_size=n))
    if draw(st.booleans()):
        splits = ["val", "test"] + ([""] if draw(st.integers(0, 3)) == 0 else [])
        columns["split"] = draw(st.lists(st.sampled_from(splits), min_size=n, max_size=n))
    labels = list(classes) + ["", "other", "01", "1.0"]
    columns["y_true"] = draw(st.lists(st.sampled_from(labels if draw(st.integers(0, 3)) == 0 else classes),
                                      min_size=n, max_size=n))  # fmt: skip
    if top_label:
        columns["y_pred"] = draw(st.lists(st.sampled_from(classes), min_size=n, max_size=n))
        columns["confidence"] = draw(st.lists(st.sampled_from(SCORES + ["1.0000001", "-0.5", ""]),
                                              min_size=n, max_size=n))  # fmt: skip
    else:
        # Rows of a few scores (ties within and across rows); most sum to 1, some do not.
        rows = []
        for _ in range(n):
            first = draw(st.sampled_from(["0.25", "0.5", "0.75", "1", "0", "0.3333", "1e-04"]))
            rest = 1 - float(first)
            row = [first] + [repr(rest / (len(classes) - 1)) for _ in classes[1:]]
            if draw(st.integers(0, 20)) == 0:
                row[draw(st.integers(0, len(row) - 1))] = draw(st.sampled_from(SCORES + ["", "nan", "-0.1", "x"]))
            rows.append(row)
        for k, c in enumerate(classes):
            columns[f"proba_{c}"] = [row[k] for row in rows]
    if draw(st.booleans()):
        weights = ["1", "2", "0.5", "3", "0"] + ([] if draw(st.booleans()) else ["-1", ""])
        columns["weight"] = draw(st.lists(st.sampled_from(weights), min_size=n, max_size=n))
    names = draw(st.permutations(list(columns)))
    lines = [",".join(names)] + [",".join(columns[c][i] for c in names) for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


def general(patch: pytest.MonkeyPatch) -> None:
    """Every fast path of a small file off: pandas's full read of the file whole, loadtxt, the digest on its
    thread, the frames' column names as pandas makes them, and a Parquet file's columns through pandas."""
    patch.setattr(plaincsv, "PLAIN_CSV_BYTES", -1)
    patch.setattr(reading, "STREAMED_CSV_BYTES", float("inf"))
    patch.setattr(reading, "NUMPY_PARQUET", False)
    patch.setattr(plaincsv, "FAST_DECIMALS", False)
    patch.setattr(reading, "UNFILTERED_CSV", False)
    patch.setattr(reading, "_names", lambda names: names)
    patch.setattr(parse, "_HASHED_INLINE_BYTES", -1)
    patch.setattr(cells, "DICT_FACTORIZE_ROWS", -1)


def both_ways(data: bytes, name: str):
    fast = load_run_file(data, name=name)
    with pytest.MonkeyPatch.context() as patch:
        general(patch)
        slow = load_run_file(data, name=name)
    return fast, slow


def same_bits(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fiub":
        return a.tobytes() == b.tobytes()
    return a.tolist() == b.tolist()


def assert_same_load(fast, slow) -> None:
    assert [str(p) for p in fast.problems] == [str(p) for p in slow.problems]
    assert fast.problems == slow.problems
    assert list(fast.models) == list(slow.models)
    for model in fast.models:
        a, b = fast.models[model], slow.models[model]
        assert (a.path, a.classes, a.split_names, a.sha256) == (b.path, b.classes, b.split_names, b.sha256)
        for split in a.splits:
            x, y = a.splits[split], b.splits[split]
            for field in ("proba", "y_true", "y_pred", "confidence", "sample_weight", "ids", "timestamp"):
                assert same_bits(getattr(x, field), getattr(y, field)), (model, split, field)
            if x.y_true is not None:
                use_case = vc.UseCase(1.0, 0.0, -4.0)
                thresholds = [vc.fit_policy("threshold", vc.presort(p), use_case).threshold for p in (x, y)]
                assert repr(thresholds[0]) == repr(thresholds[1])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_csvs())
@example(b"y_true,proba_a,proba_b\na,0.5,0.5\nb,0.5,0.5\na,0.25,0.75\n")
@example(b"y_true,proba_a,proba_b,weight\na,0.5,0.5,2\nb,0.5,0.5,0.5\n,0.25,0.75,1\n")
@example(b"model,split,y_true,proba_0,proba_1\nm1,val,0,1e-04,0.9999\nm2,test,1,0.5,0.5\nm1,test,01,1,0\n")
@example(b"y_true,y_pred,confidence\ncat,dog,0.5\ndog,dog,1.0000001\n")
def test_a_small_csv_loads_as_on_the_general_path(data):
    assert_same_load(*both_ways(data, "run.csv"))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_csvs(), st.booleans(), st.booleans())
@example(b"y_true,proba_0,proba_1\n0,0.5,0.5\n1,0.25,0.75\n1,0.5,0.5\n", False, True)
@example(b"y_true,proba_0,proba_1,weight\n0,0.5,0.5,2\n1,0.25,0.75,0\n1,0.5,0.5,1\n", False, True)
def test_a_small_parquet_file_loads_as_on_the_general_path(data, pandas_metadata, labels_as_numbers):
    # The same cells as Parquet (pandas's types: numbers, text with missing cells, mixed columns as text), with
    # pandas's metadata or none (as pyarrow alone, or Polars, writes a file), labels as text or as numbers.
    text = {"y_true": str, "y_pred": str, "model": str, "split": str}
    frame = pd.read_csv(io.BytesIO(data), dtype={} if labels_as_numbers else text)
    table = pa.Table.from_pandas(frame.astype({c: str for c in frame.columns if frame[c].dtype == object}),
                                 preserve_index=False)  # fmt: skip
    buffer = io.BytesIO()
    pq.write_table(table if pandas_metadata else table.replace_schema_metadata(None), buffer)
    assert_same_load(*both_ways(buffer.getvalue(), "run.parquet"))


ODD_VALUES = st.one_of(st.sampled_from(["a", "b", "", " a", "1", "01", "é", "e\u0301", None, float("nan"), 1, 1.0,
                                        True, b"a", np.str_("a"), pd.NA]), st.text(max_size=3))  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(ODD_VALUES, max_size=30), st.booleans())
def test_a_short_text_column_is_factorised_as_pandas_does(values, as_text):
    column = np.empty(len(values), dtype=object)
    column[:] = [v if isinstance(v, str) or v is None else "x" for v in values] if as_text else values
    series = pd.Series(column, dtype=object)
    codes, uniques = cells._factorized(series)
    expected_codes, expected_uniques = pd.factorize(series, use_na_sentinel=True)
    assert codes.dtype == np.int64 and codes.tolist() == expected_codes.tolist()
    assert [(type(u), u) for u in list(uniques)] == [(type(u), u) for u in list(expected_uniques)]


def test_a_plain_file_takes_the_fast_paths(monkeypatch):
    # The comparisons above compare something: a plain file is read without a frame and without loadtxt, and
    # its digest on the calling thread.
    data = b"y_true,proba_a,proba_b\na,0.5,0.5\nb,1e-04,0.9999\n"
    monkeypatch.setattr(plaincsv.np, "loadtxt", None)
    monkeypatch.setattr(parse, "in_background", None)
    monkeypatch.setattr(reading.pd, "DataFrame", None)
    monkeypatch.setattr(cells.pd, "factorize", None)
    report = load_run_file(data, name="run.csv")
    assert report.ok and report.models["run"].splits["all"].proba[1, 0] == np.float64(0.0001)


@st.composite
def run_csvs_for_disk(draw) -> bytes:
    """A run file as :func:`run_csvs` draws it, sometimes with a byte the unfiltered read declines (a space, a
    quote, a CR, a tab), a trailing comma, a byte-order mark or no last line end."""
    data = draw(run_csvs())
    change = draw(st.sampled_from(["none", "none", "none", "space", "quote", "crlf", "tab", "comma", "bom", "end"]))
    lines = data.split(b"\n")[:-1]
    row = draw(st.integers(1, len(lines) - 1))
    if change == "space":
        lines[row] = lines[row].replace(b",", b", ", 1)
    elif change == "quote":
        cells = lines[row].split(b",")
        cells[-1] = b'"' + cells[-1] + b'"'
        lines[row] = b",".join(cells)
    elif change == "tab":
        lines[row] = lines[row] + b"\t"
    elif change == "comma":
        lines[row] = lines[row] + b","
    data = b"\n".join(lines) + (b"" if change == "end" else b"\n")
    if change == "crlf":
        data = data.replace(b"\n", b"\r\n")
    return b"\xef\xbb\xbf" + data if change == "bom" else data


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_csvs_for_disk(), st.sampled_from([3, 64, 1 << 18]))
@example(b"y_true,proba_a,proba_b\na,0.5,0.5\nb,0.5,0.5\na,0.25,0.75\n", 3)
@example(b"model,split,y_true,proba_0,proba_1\nm1,val,0,1e-04,0.9999\nm2,test,1,0.5,0.5\nm1,test,01,1,0\n", 5)
@example(b"y_true,proba_a,proba_b\na,0.5,0.5\nb, 0.5,0.5\n", 5)
@example(b"y_true,y_pred,confidence,weight\ncat,dog,0.5,2\ndog,dog,1.0000001,0\n", 7)
def test_a_csv_read_from_disk_loads_as_from_its_bytes(data, chunk):
    # Every CSV file read from disk (not only those above STREAMED_CSV_BYTES), pandas reading it a few bytes at a
    # time, against all the fast paths off and the file read whole: the same problems, runs, arrays and digest.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.csv"
        path.write_bytes(data)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(reading, "STREAMED_CSV_BYTES", -1)
            patch.setattr(reading, "_CheckedChunks", type("Short", (reading._CheckedChunks,), {
                "read": lambda self, size=-1: reading._CheckedChunks.read(self, chunk)}))  # fmt: skip
            fast = load_run_file(path, name="run.csv")
        with pytest.MonkeyPatch.context() as patch:
            general(patch)
            slow = load_run_file(path, name="run.csv")
        assert_same_load(fast, slow)


def test_a_larger_csv_is_streamed_and_hashed_when_asked(tmp_path, monkeypatch):
    # The comparison above compares something: a file above STREAMED_CSV_BYTES is read from disk in chunks,
    # never whole, and not hashed until its digest is asked for (then from the file).
    rows = [f"{k % 2},{k % 7 / 10},{1 - k % 7 / 10:.1f},{k % 3}" for k in range(reading.STREAMED_CSV_BYTES // 10)]
    path = tmp_path / "run.csv"
    path.write_text("\n".join(["y_true,proba_0,proba_1,tier", *rows]) + "\n")
    monkeypatch.setattr(reading.Path, "read_bytes", None)
    monkeypatch.setattr(reading, "_read_csv", None)
    monkeypatch.setattr(parse, "_sha256", None)
    report = load_run_file(path)
    assert report.ok and report.models["run"].splits["all"].y_true.shape == (len(rows),)
    monkeypatch.undo()
    assert report.models["run"].sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    # A segment column of a streamed file is read from the file.
    streamed = load_run_file(path, segment_column="tier").models["run"]
    with pytest.MonkeyPatch.context() as patch:
        general(patch)
        whole = load_run_file(path, segment_column="tier").models["run"]
    assert streamed.segments["all"].tolist() == whole.segments["all"].tolist() == [str(k % 3) for k in range(len(rows))]


def test_a_parquet_file_of_numbers_without_pandas_metadata_is_read_without_pandas(monkeypatch):
    # The comparison above compares something: such a file's columns come as numpy arrays, not through to_pandas.
    table = pa.table({"y_true": pa.array([0, 1, 1], pa.int16()), "proba_0": [0.5, 0.25, 0.5],
                      "proba_1": pa.array([0.5, 0.75, 0.5], pa.float32())})  # fmt: skip
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    monkeypatch.setattr(reading, "_names", None)  # what the frame of to_pandas is given
    report = load_run_file(buffer.getvalue(), name="run.parquet")
    assert report.ok and report.models["run"].splits["all"].y_true.tolist() == [0, 1, 1]


ARROW_NUMBERS = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
                 pa.float32(), pa.float64(), pa.bool_(), pa.string()]  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["y_true", "weight", "note", "y_pred", "confidence"]),
                          st.sampled_from(ARROW_NUMBERS), st.booleans()), min_size=1, max_size=4,
                unique_by=lambda c: c[0]),
       st.integers(1, 6), st.booleans())  # fmt: skip
def test_a_parquet_files_columns_are_the_arrays_pandas_makes(columns, n, pandas_metadata):
    # Column by column, the dtype and bits of what the checks read: numpy arrays or to_pandas's frame.
    rng = np.random.default_rng(n)
    arrays = {}
    for name, kind, nulls in columns:
        values = rng.integers(0, 3, n).tolist()
        if nulls:
            values[0] = None
        as_kind = {pa.string(): str, pa.bool_(): bool}.get(kind, int)
        arrays[name] = pa.array([None if v is None else as_kind(v) for v in values], kind)
    table = pa.table(arrays)
    if pandas_metadata:
        table = table.replace_schema_metadata(
            pa.Table.from_pandas(table.slice(0, 0).to_pandas(), preserve_index=False).schema.metadata)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    read = []
    for numpy in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(reading, "NUMPY_PARQUET", numpy)
            read.append(reading._read_parquet(buffer.getvalue(), reading._FileProblems("run.parquet")))
    fast, slow = read
    assert fast.columns == slow.columns and list(fast.frame.columns) == list(slow.frame.columns)
    assert len(fast.frame) == len(slow.frame) == n
    for name in fast.frame.columns:
        a, b = fast.frame[name], slow.frame[name]
        assert a.dtype == b.dtype and a.name == b.name
        assert a.isna().tolist() == b.isna().tolist() and same_bits(a.to_numpy(), b.to_numpy())


def test_a_parquet_file_with_a_pandas_index_loads_as_on_the_general_path():
    # pandas's metadata may make an index of a column (to_pandas takes it out of the frame): such a file is read
    # through to_pandas, whatever that gives.
    frame = pd.DataFrame({"y_true": [0, 1, 1], "proba_0": [0.5, 0.25, 0.5], "proba_1": [0.5, 0.75, 0.5]},
                         index=pd.Index([5, 6, 7], name="row"))  # fmt: skip
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=True)
    assert_same_load(*both_ways(buffer.getvalue(), "run.parquet"))


def with_logits(data: bytes, draw_logit) -> bytes:
    """``data`` with a ``logit_`` column beside each ``proba_`` one (plain decimals, sometimes a bad cell)."""
    lines = data.decode().splitlines()
    header = lines[0].split(",")
    logits = [c.replace("proba_", "logit_", 1) for c in header if c.startswith("proba_")]
    rows = [line + "".join("," + draw_logit() for _ in logits) for line in lines[1:]]
    return ("\n".join([",".join(header + logits)] + rows) + "\n").encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_csvs(), st.sampled_from(["csv", "csv+logits", "parquet", "parquet+numbers"]), st.data())
@example(b"y_true,proba_a,proba_b\na,0.5,0.5\nb,0.5,0.5\na,0.25,0.75\n", "csv", None)
@example(b"y_true,proba_0,proba_1\n0,0.5,0.5\n,0.25,0.75\n1,0.5,0.5\n", "parquet+numbers", None)
@example(b"y_true,proba_a,proba_b\na,0.5,0.5\nb,0.25,0.75\n", "csv+logits", None)
def test_plain_columns_are_checked_as_their_series_are(data, form, more):
    # A frame of plain columns (a plain CSV file's, a Parquet file's of numbers) hands the checks its arrays
    # (``plain_array``); without it, each column is the Series it was before: the same load, bit for bit.
    if form == "csv+logits":
        cells_ = ["-1.5", "0", "2", "0.25", "1e-3", "3.75"] + (["x", ""] if more is None else [])
        data = with_logits(data, (lambda: "0.5") if more is None else (lambda: more.draw(st.sampled_from(cells_))))
    name = "run.csv"
    if form.startswith("parquet"):
        text = {} if form.endswith("numbers") else {"y_true": str, "y_pred": str, "model": str, "split": str}
        frame = pd.read_csv(io.BytesIO(data), dtype=text)
        table = pa.Table.from_pandas(frame.astype({c: str for c in frame.columns if frame[c].dtype == object}),
                                     preserve_index=False).replace_schema_metadata(None)  # fmt: skip
        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        data, name = buffer.getvalue(), "run.parquet"
    fast = load_run_file(data, name=name)
    with pytest.MonkeyPatch.context() as patch:
        patch.delattr(reading._PlainColumns, "plain_array")
        slow = load_run_file(data, name=name)
    assert_same_load(fast, slow)


def test_plain_columns_hand_the_checks_their_arrays(monkeypatch):
    # The comparison above compares something: a plain file's probabilities and labels are checked without a
    # Series of them.
    monkeypatch.setattr(reading._PlainColumns, "__getitem__", None)
    for data in [b"y_true,proba_a,proba_b\na,0.5,0.5\nb,1e-04,0.9999\n",
                 b"y_true,proba_0,proba_1,logit_0,logit_1\n0,0.5,0.5,0.5,-0.5\n1,0.25,0.75,-1.5,1.5\n"]:
        report = load_run_file(data, name="run.csv")
        assert report.ok, report.problems
    table = pa.table({"y_true": pa.array([0, 1, 1], pa.int16()), "proba_0": [0.5, 0.25, 0.5],
                      "proba_1": pa.array([0.5, 0.75, 0.5], pa.float32())})  # fmt: skip
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    assert load_run_file(buffer.getvalue(), name="run.parquet").ok


def parquet_of(data: bytes, labels_as_numbers: bool) -> bytes:
    """The cells of CSV ``data`` as a Parquet file without pandas's metadata (labels as text or as numbers)."""
    text = {} if labels_as_numbers else {"y_true": str, "y_pred": str, "model": str, "split": str}
    frame = pd.read_csv(io.BytesIO(data), dtype=text)
    table = pa.Table.from_pandas(frame.astype({c: str for c in frame.columns if frame[c].dtype == object}),
                                 preserve_index=False).replace_schema_metadata(None)  # fmt: skip
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def open_files() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_csvs(), st.booleans())
@example(b"y_true,proba_a,proba_b\na,0.5,0.5\nb,0.5,0.5\na,0.25,0.75\n", False)
@example(b"y_true,y_pred,confidence\ncat,dog,0.5\ndog,dog,1.0000001\n", True)
def test_a_parquet_file_on_disk_loads_as_pyarrow_opening_its_path_loads_it(data, labels_as_numbers):
    # The file opened as an OSFile (``_parquet_source``) against pyarrow's ParquetFile given the path (its
    # filesystem resolved): the same load, bit for bit, and no file left open.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.parquet"
        path.write_bytes(parquet_of(data, labels_as_numbers))
        before = open_files()
        fast = load_run_file(path)
        assert open_files() == before
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(reading, "_parquet_source", lambda data: data if isinstance(data, Path) else io.BytesIO(data))
            slow = load_run_file(path)
        assert_same_load(fast, slow)  # digests too, read from the file when asked


def test_plain_csv_leaves_arrows_memory_alone(monkeypatch):
    # Only a file read without Arrow (the plain CSV path) skips handing Arrow's free memory back.
    calls = []
    monkeypatch.setattr(parse, "_release_arrow_memory", lambda: calls.append(1))
    plain = b"y_true,proba_a,proba_b\na,0.5,0.5\nb,0.25,0.75\n"
    assert load_run_file(plain, name="run.csv").ok and calls == []
    assert load_run_file(plain.replace(b"0.25", b" 0.25"), name="run.csv").ok and calls == [1]
    assert load_run_file(parquet_of(b"y_true,y_pred,confidence\na,b,0.5\nb,b,0.75\n", False), name="run.parquet").ok
    assert calls == [1, 1]  # read through pandas, whose frame may hold Arrow's text
    # A Parquet file of numbers: its probabilities and labels handed back only when large.
    numbers = parquet_of(b"y_true,proba_0,proba_1\n0,0.5,0.5\n1,0.25,0.75\n", True)
    assert load_run_file(numbers, name="run.parquet").ok and calls == [1, 1]
    monkeypatch.setattr(reading, "_LARGE_ARROW_BYTES", 0)
    monkeypatch.setattr(reading, "_release_arrow_memory", lambda: calls.append(2))
    assert load_run_file(numbers, name="run.parquet").ok and calls == [1, 1, 2, 1]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_csvs(), st.booleans(), st.booleans(), st.booleans())
@example(b"y_true,proba_a,proba_b\na,0.5,0.5\nb,0.5,0.5\na,0.25,0.75\n", False, True, False)
@example(b"model,split,y_true,proba_0,proba_1\nm1,val,0,1e-04,0.9999\nm2,test,1,0.5,0.5\nm1,test,01,1,0\n", True, True,
         True)
def test_a_small_parquet_file_read_once_loads_as_read_twice(data, labels_as_numbers, logits, refused):
    # A file of one block read in one call (floats and the rest) against the floats read apart: the same load,
    # bit for bit; a refused read of them all (``refused``) falls back to reading them apart.
    if logits:
        data = with_logits(data, lambda: "-0.5")
    data = parquet_of(data, labels_as_numbers)
    with pytest.MonkeyPatch.context() as patch:
        if refused:
            read = pq.ParquetFile.read

            def refuse_floats(self, columns=None, **kwargs):
                if columns and any(c.startswith(("proba_", "logit_")) for c in columns):
                    raise OSError("refused")
                return read(self, columns=columns, **kwargs)

            patch.setattr(pq.ParquetFile, "read", refuse_floats)
        once = load_run_file(data, name="run.parquet")
        patch.setattr(reading, "READ_SMALL_PARQUET_ONCE", False)
        twice = load_run_file(data, name="run.parquet")
    assert_same_load(once, twice)


def test_a_small_parquet_files_floats_are_read_with_the_rest(monkeypatch):
    # The comparison above compares something: a file of one block is read in one call, no row group apart.
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", None)
    assert load_run_file(parquet_of(b"y_true,proba_0,proba_1\n0,0.5,0.5\n1,0.25,0.75\n", True), name="r.parquet").ok
