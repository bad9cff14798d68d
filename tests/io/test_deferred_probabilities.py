"""A Parquet file's valid probabilities are kept as the columns Arrow decoded until the matrix is first read
(``ColumnMatrix``): loading, presorting and a threshold never copy them into one, and whatever reads the matrix
gets the very bits, problems and layout that the eager read gives."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import valuecore as vc
from valuecore._io.runfiles import reading
from valuecore._model.predictions import ColumnMatrix
from valuecore.runs import load_run_file


def held(predictions: vc.Predictions):
    """What the run holds for its probabilities, without making the matrix."""
    return predictions.__dict__["_proba"]


def write(path, n: int, n_classes: int = 4, seed: int = 0, dtype=np.float64, **extra) -> np.ndarray:
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(n_classes), size=n).astype(dtype)
    columns = {f"proba_{k}": proba[:, k] for k in range(n_classes)}
    columns["y_true"] = rng.integers(0, n_classes, n)
    columns.update(extra)
    pq.write_table(pa.table(columns), path)
    return proba


def both_ways(path, monkeypatch):
    """The report loaded with deferred probabilities and without."""
    deferred = load_run_file(path)
    monkeypatch.setattr(reading, "DEFERRED_PROBABILITIES", False)
    eager = load_run_file(path)
    monkeypatch.setattr(reading, "DEFERRED_PROBABILITIES", True)
    return deferred, eager


def assert_same(deferred, eager) -> None:
    assert [str(p) for p in deferred.problems] == [str(p) for p in eager.problems]
    assert deferred.models.keys() == eager.models.keys()
    for name, model in eager.models.items():
        assert deferred.models[name].splits.keys() == model.splits.keys()
        for split, expected in model.splits.items():
            got = deferred.models[name].splits[split]
            for field in ("y_pred", "confidence", "y_true"):
                assert np.array_equal(getattr(got, field), getattr(expected, field)), (name, split, field)
            assert got.proba.dtype == expected.proba.dtype
            assert got.proba.tobytes() == expected.proba.tobytes(), (name, split)  # bit for bit


@pytest.mark.parametrize("n", [1, 1000, reading._CHECK_BLOCK, reading._CHECK_BLOCK + 1, 100_000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_threshold_never_makes_the_matrix(tmp_path, monkeypatch, n, dtype):
    path = tmp_path / "run.parquet"
    write(path, n, dtype=dtype)
    deferred, eager = both_ways(path, monkeypatch)
    run = deferred.models["run"].splits["all"]
    assert isinstance(held(run), ColumnMatrix) and not isinstance(held(eager.models["run"].splits["all"]),
                                                                  ColumnMatrix)
    assert run.has_proba
    policy = vc.fit_policy("threshold", vc.presort(run), vc.UseCase(1.0, 0.0, -4.0))
    expected = vc.fit_policy("threshold", vc.presort(eager.models["run"].splits["all"]), vc.UseCase(1.0, 0.0, -4.0))
    assert policy.threshold == expected.threshold
    assert isinstance(held(run), ColumnMatrix)  # still not made
    assert_same(deferred, eager)  # reads it: made now
    assert isinstance(held(run), np.ndarray) and run.proba is run.proba  # made once, then kept


def test_what_reads_the_matrix_sees_the_eager_values(tmp_path, monkeypatch):
    path = tmp_path / "run.parquet"
    write(path, 3000, n_classes=3, seed=4)
    deferred, eager = both_ways(path, monkeypatch)
    run, expected = deferred.models["run"].splits["all"], eager.models["run"].splits["all"]
    for metric in (vc.calibration.brier_score, vc.calibration.negative_log_likelihood):
        assert metric(run) == metric(expected)
    assert np.array_equal(run.normalised_proba(), expected.normalised_proba())
    rows = np.arange(0, 3000, 7)
    assert np.array_equal(run.subset(rows).proba, expected.subset(rows).proba)


def test_splits_of_a_file_in_order_share_the_columns(tmp_path, monkeypatch):
    path = tmp_path / "run.parquet"
    n = 900
    write(path, n, seed=2, split=np.repeat(["calibration", "test", "val"], n // 3))
    deferred, eager = both_ways(path, monkeypatch)
    for split in ("calibration", "test", "val"):
        assert isinstance(held(deferred.models["run"].splits[split]), ColumnMatrix)
    assert_same(deferred, eager)


@pytest.mark.parametrize("case", ["nan", "above one", "mixed types", "out of order", "rows off", "negative",
                                  "float16"])
def test_files_the_columns_cannot_stand_for_are_read_as_before(tmp_path, monkeypatch, case):
    path = tmp_path / "run.parquet"
    rng = np.random.default_rng(7)
    n = 400
    proba = rng.dirichlet(np.ones(3), size=n)
    columns = {f"proba_{k}": proba[:, k] for k in range(3)}
    if case == "nan":
        columns["proba_1"][17] = np.nan
    elif case == "above one":  # a row within the sum tolerance holding an entry a hair above 1: capped to 1
        columns["proba_0"][5], columns["proba_1"][5], columns["proba_2"][5] = 1 + 2e-7, 0.0, 0.0
    elif case == "mixed types":
        columns["proba_2"] = columns["proba_2"].astype(np.float32)
    elif case == "rows off":  # a warning, not an error: its rows named once
        columns["proba_0"][[3, 9]] += 0.004
    elif case == "negative":
        columns["proba_2"][11] = -0.1
    elif case == "float16":
        columns = {k: v.astype(np.float16) for k, v in columns.items()}
    columns["y_true"] = rng.integers(0, 3, n)
    if case == "out of order":
        columns["split"] = np.where(np.arange(n) % 2 == 0, "test", "val")
    pq.write_table(pa.table(columns), path)
    deferred, eager = both_ways(path, monkeypatch)
    for model in deferred.models.values():
        for run in model.splits.values():
            assert isinstance(held(run), ColumnMatrix) == (case == "rows off"), case  # a warning only: kept
    assert_same(deferred, eager)
    if case == "above one":
        assert deferred.models["run"].splits["all"].proba.max() == 1.0
    if case == "rows off":
        (warning,) = deferred.problems
        assert "sum to 1 only approximately" in str(warning) and "4, 10" in str(warning), str(warning)


def test_the_matrix_beyond_the_limit_is_made_at_once(tmp_path, monkeypatch):
    path = tmp_path / "run.parquet"
    write(path, 1000)
    monkeypatch.setattr(reading, "_DEFERRED_BYTES", 1000 * 4 * 8 - 1)
    assert not isinstance(held(load_run_file(path).models["run"].splits["all"]), ColumnMatrix)
    monkeypatch.setattr(reading, "_DEFERRED_BYTES", 1000 * 4 * 8)
    assert isinstance(held(load_run_file(path).models["run"].splits["all"]), ColumnMatrix)


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(np.float64, st.tuples(st.integers(0, 40), st.integers(1, 4)),
               elements=st.floats(0, 1, allow_nan=False)),
    st.lists(st.integers(1, 15), min_size=1, max_size=6),
    st.data(),
)
def test_rows_of_a_column_matrix_are_the_matrix_rows(matrix, cuts, data):
    n, k = matrix.shape
    bounds = sorted({0, n, *[c % (n + 1) for c in np.cumsum(cuts)]})
    blocks = [[np.array(matrix[a:b, j]) for j in range(k)] for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    if not blocks:
        return
    for block in blocks:
        for column in block:
            column.setflags(write=False)  # as Arrow's columns are
    held_matrix = ColumnMatrix(blocks, np.float64)
    made = held_matrix.matrix()
    assert made.flags.writeable and made.flags.f_contiguous and np.array_equal(made, matrix)
    a = data.draw(st.integers(-n - 2, n + 2))
    b = data.draw(st.integers(-n - 2, n + 2))
    step = data.draw(st.sampled_from([None, 1, 2, -1]))
    rows = slice(a, b, step)
    got = held_matrix[rows]
    got = got.matrix() if isinstance(got, ColumnMatrix) else got
    assert np.array_equal(got, matrix[rows])
    positions = data.draw(st.lists(st.integers(0, n - 1), max_size=5))
    assert np.array_equal(held_matrix[np.array(positions, dtype=np.int64)], matrix[np.array(positions, dtype=np.int64)])


def test_a_pickled_run_keeps_its_probabilities(tmp_path, monkeypatch):
    """Streamlit's data cache pickles what it keeps."""
    import pickle

    path = tmp_path / "run.parquet"
    write(path, 500)
    deferred, eager = both_ways(path, monkeypatch)
    again = pickle.loads(pickle.dumps(deferred.models["run"].splits["all"]))
    assert np.array_equal(again.proba, eager.models["run"].splits["all"].proba)


def test_a_frame_round_trip_is_unchanged(tmp_path):
    """pandas's own Parquet file (an index column beside the probabilities) loads as one written by Arrow."""
    path = tmp_path / "run.parquet"
    proba = write(tmp_path / "plain.parquet", 700, n_classes=3, seed=9)
    frame = pd.read_parquet(tmp_path / "plain.parquet")
    frame.index = frame.index + 10
    frame.to_parquet(path)
    run = load_run_file(path).models["run"].splits["all"]
    assert isinstance(held(run), ColumnMatrix)
    assert np.array_equal(run.proba, proba)
