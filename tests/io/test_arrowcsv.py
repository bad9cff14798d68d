"""A larger CSV run file read by Arrow (``valuecore/_io/arrowcsv.py``) reads exactly what pandas's full read
reads, or declines: random files near plain and far from it, cell by cell and bit for bit; the gate that the
installed pandas rounds as Arrow does, held to measured behaviour; and whole files loaded both ways."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from helpers.csvfiles import assert_same_cells, csv_files, halfway_decimals, texts_of

import valuecore._io.arrowcsv as arrowcsv
import valuecore._io.plaincsv as plaincsv
from valuecore._io.format import _FileProblems
from valuecore._io.runfiles import cells, reading
from valuecore.runs import load_run_file


def header_of(data: bytes) -> list[str] | None:
    line = reading.first_line(data, _FileProblems("run.csv"))
    return None if line is None else reading.csv_header(line, _FileProblems("run.csv"))


def full_read(data: bytes):
    """pandas's full read of ``data`` (no plain path, no unfiltered read, no Arrow): the loader's reference."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plaincsv, "PLAIN_CSV_BYTES", -1)
        patch.setattr(reading, "UNFILTERED_CSV", False)
        problems = _FileProblems("run.csv")
        return reading._read_csv(data, problems), problems


@settings(max_examples=150, deadline=None)
@given(st.one_of(csv_files(), csv_files(plain=True)))
@example(b"y_true,proba_a,proba_b\na,nan,0.5\n")  # NaN: text to pandas, NaN to Arrow: declined
@example(b"y_true,proba_a,proba_b\na,inf,0.5\n")
@example(b"y_true,proba_a,proba_b\na,9223372036854775808,1\nb,1,0\n")  # uint64 to pandas
@example(b"y_true,proba_a,proba_b\na,1e400,0.5\n")
@example(b"y_true,proba_a,proba_b\n,0.25,0.75\nNA,0.5,0.5\n01,1,0\n")  # missing, NA and 01 as labels
@example(b"y_true,proba_a,proba_b\na,+5,007\nb,.5,5.\n")
@example(b"y_true,proba_a,proba_b\na,0.22209908303362025,0.7779009169663797\n")
@example(b"y_true,proba_a,proba_b\na,true,0.5\n")
@example(b"y_true,proba_a,proba_b\na,0.5,0.5\n\nb,0.5,0.5\n")  # a blank line: both skip it
@example(b"y_true,proba_a,proba_b\na,0.5\n")  # a short row
def test_arrow_reads_what_the_full_read_reads_or_declines(data):
    header = header_of(data)
    if header is None or data.startswith(b"\xef\xbb\xbf"):
        return
    arrow = arrowcsv.read_arrow_csv(data, header)
    slow, problems = full_read(data)
    if arrow is None:
        return
    assert slow is not None and not problems.has_errors
    assert_same_cells(reading._PlainColumns({reading._nfc(n): c for n, c in zip(header, arrow.values())}), slow)


def test_every_kind_of_cell_is_read_by_arrow_when_plain_enough():
    """The property above compares something: Arrow takes plain files of every column kind it reads."""
    data = (b"model,split,y_true,y_pred,proba_a,proba_b,logit_a,weight,confidence\n"
            b"m1,train,a,b,0.25,0.75,-1.5,1,0.75\nm2,test,,a,0.5,0.5,2,3,0.5\n")  # fmt: skip
    arrow = arrowcsv.read_arrow_csv(data, header_of(data))
    assert arrow is not None
    assert arrow["weight"].dtype == np.int64 and arrow["proba_a"].dtype == np.float64
    assert isinstance(arrow["y_true"], pd.Categorical) and texts_of(pd.Series(arrow["y_true"])) == ["a", None]
    slow, _ = full_read(data)
    assert_same_cells(reading._PlainColumns(dict(arrow)), slow)


@pytest.mark.parametrize("data", [
    b"y_true,proba_a,proba_b,id\na,0.25,0.75,7\n",  # a column other than numbers and labels
    b"y_true,proba_a,proba_b\na,0.25, 0.75\n",  # a space
    b"y_true,proba_a,proba_b\na,0.25,0.75\r\n",  # a CR
    b'y_true,proba_a,proba_b\n"a",0.25,0.75\n',  # a quote
    b"y_true,proba_a,proba_b\na,0.25,0.75,\n",  # a trailing comma
    b"y_true,proba_a,proba_b\na,0.25,0.75\nb,0.5,0.5,",
    b"y_true,proba_a,proba_b\na,,0.75\n",  # an empty number
    b"y_true,proba_a,proba_b\na,NA,0.75\n",
    b"y_true,proba_a,proba_b\n",  # no rows
])  # fmt: skip
def test_what_arrow_declines(data):
    assert arrowcsv.read_arrow_csv(data, header_of(data)) is None


def test_the_categories_factorise_as_the_texts_do():
    """Labels read as categories give the codes and texts ``pd.factorize`` gives the same texts: order of first
    appearance, -1 for a missing one, whatever order the categories are in."""
    rng = np.random.default_rng(3)
    texts = np.array(["b", "a", None, "10", "01", "c"], dtype=object)[rng.integers(0, 6, 5000)]
    categories = ["c", "01", "a", "b", "10", "unused"]
    codes = np.array([-1 if t is None else categories.index(t) for t in texts])
    column = pd.Categorical.from_codes(codes, categories=pd.Index(categories, dtype=object))
    for given_as in (column, pd.Series(column)):
        got_codes, got_texts = cells._factorized(given_as)
        want_codes, want_texts = pd.factorize(pd.Series(texts, dtype=object), use_na_sentinel=True)
        assert got_codes.tolist() == want_codes.tolist() and got_texts == list(want_texts)


def test_arrow_rounds_as_the_gate_requires_pandas_to():
    """Arrow reads only where ``plaincsv.pandas_rounds_correctly`` (``test_plaincsv`` holds the gate to the
    installed pandas): Arrow itself must then give Python's float, bit for bit, on the hardest decimals there are."""
    import pyarrow.csv as pa_csv

    rng = np.random.default_rng(11)
    texts = [t for low, high in ((1e-6, 1e-3), (1e-3, 1.0), (1.0, 1e6)) for t in halfway_decimals(rng, 1000, low, high)]
    data = ("a\n" + "\n".join(texts) + "\n").encode()
    by_arrow = pa_csv.read_csv(io.BytesIO(data)).column("a").to_numpy()
    assert np.array_equal(by_arrow.view(np.int64), np.array([float(t) for t in texts]).view(np.int64))


def test_without_the_gate_arrow_reads_nothing(monkeypatch):
    monkeypatch.setattr(plaincsv, "pandas_rounds_correctly", lambda: False)
    data = b"y_true,proba_a,proba_b\na,0.25,0.75\n"
    assert arrowcsv.read_arrow_csv(data, header_of(data)) is None


def big_run(tmp_path: Path, rows: int, full_precision: bool) -> Path:
    """A run file above PLAIN_CSV_BYTES: two models, two splits, text labels, weights and a missing label."""
    rng = np.random.default_rng(7)
    proba = rng.dirichlet(np.ones(3), size=rows)
    frame = pd.DataFrame({
        "model": rng.choice(["lr", "gbm"], rows), "split": rng.choice(["val", "test"], rows),
        "y_true": rng.choice(["cat", "dog", "10"], rows),
        **{f"proba_{c}": proba[:, k] if full_precision else np.round(proba[:, k], 4)
           for k, c in enumerate(["cat", "dog", "10"])},
        "weight": rng.integers(1, 4, rows),
    })  # fmt: skip
    frame.loc[5, "y_true"] = None
    path = tmp_path / "run.csv"
    frame.to_csv(path, index=False)
    assert path.stat().st_size > reading.PLAIN_CSV_BYTES
    return path


@pytest.mark.parametrize("full_precision", [False, True])
def test_a_large_file_loads_as_on_pandas_path(tmp_path, monkeypatch, full_precision):
    """From the file (mapped) and from its bytes (an upload): the same runs, problems and bits as pandas's path."""
    path = big_run(tmp_path, 12_000, full_precision)
    taken = []
    read = arrowcsv.read_arrow_csv
    monkeypatch.setattr(reading, "read_arrow_csv", lambda *a: taken.append(1) or read(*a))
    fast = [load_run_file(path), load_run_file(path.read_bytes(), name=str(path))]
    assert taken == [1, 1]
    monkeypatch.setattr(reading, "UNFILTERED_CSV", False)
    slow = load_run_file(path)
    for report in fast:
        assert [str(p) for p in report.problems] == [str(p) for p in slow.problems]
        assert list(report.models) == list(slow.models)
        for model in slow.models:
            a, b = report.models[model], slow.models[model]
            assert a.classes == b.classes and list(a.splits) == list(b.splits)
            for split in b.splits:
                x, y = a.splits[split], b.splits[split]
                for name in ("proba", "y_true", "y_pred", "confidence", "sample_weight"):
                    u, v = np.asarray(getattr(x, name)), np.asarray(getattr(y, name))
                    assert u.dtype == v.dtype and np.array_equal(u.view(np.uint8), v.view(np.uint8))
