"""The lean Parquet path of the loader: probabilities read batch by batch into a matrix laid out
by (model, split), checked as they come, against the pandas path that CSV files take."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.datasets import aggregated_models
from valuecore._io.runfiles import cells as _cells, reading as _reading
from valuecore._io.runfiles import LoadReport, load_run_file, load_runs

CLASSES = ("a", "b", "c")


def run_frame(rng: np.random.Generator, n: int, *, models: int, splits: int, logits: bool) -> pd.DataFrame:
    """n rows, models and splits interleaved at random, float64 probabilities summing to 1."""
    proba = rng.dirichlet(np.ones(len(CLASSES)), n)
    frame = pd.DataFrame({f"proba_{c}": proba[:, j] for j, c in enumerate(CLASSES)})
    frame.insert(0, "id", [f"r{i}" for i in range(n)])  # text: CSV reads ids as text
    frame.insert(1, "model", rng.choice([f"m{i}" for i in range(models)], n))
    frame.insert(2, "split", rng.choice([f"s{i}" for i in range(splits)], n))
    frame.insert(3, "y_true", rng.choice(list(CLASSES), n))
    frame.insert(4, "weight", rng.integers(1, 5, n).astype(float))
    if logits:
        for j, c in enumerate(CLASSES):
            frame[f"logit_{c}"] = np.log(proba[:, j])
    return frame


def parquet_bytes(frame: pd.DataFrame, metadata: dict | None = None) -> bytes:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if metadata:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, row_group_size=max(1, len(frame) // 3))
    return buffer.getvalue()


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()  # floats written by repr: they read back exactly


def assert_same_load(from_csv: LoadReport, from_parquet: LoadReport) -> None:
    assert [str(p) for p in from_parquet.problems] == [str(p) for p in from_csv.problems]
    assert list(from_parquet.models) == list(from_csv.models)
    for name, run in from_csv.models.items():
        other = from_parquet.models[name]
        assert other.split_names == run.split_names
        for split, expected in run.splits.items():
            got = other.splits[split]
            for attribute in ("proba", "logits", "y_true", "y_pred", "confidence", "sample_weight", "ids"):
                a, b = getattr(expected, attribute), getattr(got, attribute)
                if a is None:
                    assert b is None
                else:
                    np.testing.assert_array_equal(b, a, err_msg=f"{name} {split} {attribute}")


@pytest.mark.heavy
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    models=st.integers(1, 3),
    splits=st.integers(1, 3),
    block=st.integers(1, 9),
    logits=st.booleans(),
    broken=st.lists(st.tuples(st.integers(0, 59), st.integers(0, 2), st.sampled_from(["nan", "neg", "big", "tiny"])),
                    max_size=4),
    only=st.none() | st.just(["s0"]),
)  # fmt: skip
def test_parquet_loads_exactly_as_csv_whatever_the_row_order_and_batches(
    seed, n, models, splits, block, logits, broken, only
):
    frame = run_frame(np.random.default_rng(seed), n, models=models, splits=splits, logits=logits)
    for row, column, kind in broken:
        if row < n:
            name = f"proba_{CLASSES[column]}"
            value = {"nan": np.nan, "neg": -0.2, "big": frame.at[row, name] + 0.5, "tiny": frame.at[row, name] + 1e-4}
            frame.at[row, name] = value[kind]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_cells, "_CHECK_BLOCK", block)  # many batches, each mixing models and splits
        patch.setattr(_reading, "_CHECK_BLOCK", block)
        from_parquet = load_run_file(parquet_bytes(frame), name="run.csv", splits=only)
    from_csv = load_run_file(csv_bytes(frame), name="run.csv", splits=only)
    assert_same_load(from_csv, from_parquet)


def test_float32_stays_float32_and_each_split_is_a_view_of_one_matrix(tmp_path):
    frame = run_frame(np.random.default_rng(0), 1000, models=2, splits=2, logits=False)
    for c in CLASSES:
        frame[f"proba_{c}"] = frame[f"proba_{c}"].astype(np.float32)
    path = tmp_path / "run.parquet"
    path.write_bytes(parquet_bytes(frame))
    report = load_runs(path)
    bases = set()
    for run in report.models.values():
        for split, prediction in run.splits.items():
            assert prediction.proba.dtype == np.float32
            assert prediction.proba.base is not None
            bases.add(id(prediction.proba.base))
            rows = (frame["model"] == run.model) & (frame["split"] == split)
            expected = frame.loc[rows, [f"proba_{c}" for c in CLASSES]].to_numpy()
            np.testing.assert_array_equal(prediction.proba, expected)
    assert len(bases) == 1


def test_a_split_filter_keeps_no_view_of_the_left_out_rows(tmp_path):
    frame = run_frame(np.random.default_rng(1), 500, models=1, splits=3, logits=False)
    path = tmp_path / "run.parquet"
    path.write_bytes(parquet_bytes(frame))
    prediction = load_runs(path, splits=["s1"]).models["m0"].splits["s1"]
    assert prediction.proba.base is None
    assert prediction.n == (frame["split"] == "s1").sum()


def test_error_rows_are_file_rows_in_a_file_read_by_split(tmp_path):
    frame = run_frame(np.random.default_rng(2), 300, models=1, splits=2, logits=False)
    frame.loc[[7, 150, 299], "proba_b"] = np.nan
    path = tmp_path / "run.parquet"
    path.write_bytes(parquet_bytes(frame))
    (error,) = load_runs(path).errors
    assert error.column == "proba_b" and error.rows == (8, 151, 300)


def test_only_probability_columns(tmp_path):
    path = tmp_path / "bare.parquet"
    pd.DataFrame({"proba_a": [0.25, 0.5], "proba_b": [0.75, 0.5]}).to_parquet(path)
    report = load_runs(path)
    assert report.ok
    np.testing.assert_array_equal(report.models["bare"].splits["all"].proba, [[0.25, 0.75], [0.5, 0.5]])


def test_an_aggregate_file_gives_runs_marked_aggregate(tmp_path):
    frame = run_frame(np.random.default_rng(3), 40, models=2, splits=1, logits=False)
    (tmp_path / "agg.parquet").write_bytes(parquet_bytes(frame, {b"valuecore.aggregate": b"{}"}))
    (tmp_path / "raw.parquet").write_bytes(parquet_bytes(frame.assign(model=frame["model"] + "_raw")))
    frame.assign(model=frame["model"] + "_csv").to_csv(tmp_path / "raw.csv", index=False)
    report = load_runs(tmp_path)
    assert {m: r.aggregate for m, r in report.models.items()} == {
        "m0": True, "m1": True, "m0_raw": False, "m1_raw": False, "m0_csv": False, "m1_csv": False,
    }  # fmt: skip
    assert sorted(aggregated_models(report)) == ["m0", "m1"]
    assert aggregated_models(report, ["m1_raw", "m1", "absent"]) == ["m1"]
