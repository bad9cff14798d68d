"""A Parquet file written by pandas from a filtered or re-indexed frame (``df[mask].to_parquet(path)``, the
commonest way to write one) stores the frame's index as a column; pandas's ``to_pandas`` moved it back into
the index and the load failed with "Length mismatch". Such a file loads as the same frame written without its
index: an unnamed index (row labels) is left out, a named one (``set_index("split")``) is the column it was."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from valuecore.runs import load_run_file


def frame_of(n: int, seed: int, weights: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(size=n), 3)
    frame = pd.DataFrame({"proba_a": p, "proba_b": 1 - p, "y_true": rng.choice(["a", "b"], n),
                          "split": rng.choice(["val", "test"], n), "id": [f"i{i}" for i in range(n)]})  # fmt: skip
    if weights:
        frame["sample_weight"] = rng.integers(1, 4, n).astype(float)
    return frame


def load(frame: pd.DataFrame, tmp_path, name: str, **to_parquet):
    path = tmp_path / name
    frame.to_parquet(path, **to_parquet)
    return load_run_file(path)


def assert_same_runs(got, expected) -> None:
    assert [(p.message, p.column, p.rows) for p in got.problems] == [
        (p.message, p.column, p.rows) for p in expected.problems]  # fmt: skip
    (a,), (b,) = got.models.values(), expected.models.values()
    assert a.classes == b.classes and sorted(a.splits) == sorted(b.splits)
    for split in a.splits:
        x, y = a.splits[split], b.splits[split]
        for field in ("y_true", "y_pred", "confidence", "proba", "sample_weight", "ids"):
            u, v = getattr(x, field), getattr(y, field)
            assert (u is None) == (v is None) and (u is None or np.array_equal(u, v)), (split, field)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(2, 60), seed=st.integers(0, 2**32 - 1), weights=st.booleans(),
       how=st.sampled_from(["filtered", "shuffled", "two_levels", "named_split", "named_id", "named_other"]))
def test_a_frame_s_index_written_by_pandas_does_not_stop_the_load(tmp_path_factory, n, seed, weights, how):
    tmp_path = tmp_path_factory.mktemp("pq")
    frame = frame_of(n, seed, weights)
    plain = load(frame, tmp_path, "plain.parquet", index=False)
    if how == "filtered":  # an unnamed index that is not a range: stored as __index_level_0__
        written = frame.set_axis(np.arange(n) * 3 + 1)
    elif how == "shuffled":
        written = frame.set_axis(np.random.default_rng(seed).permutation(n))
    elif how == "two_levels":  # __index_level_0__ and __index_level_1__
        written = frame.set_axis(pd.MultiIndex.from_arrays([np.arange(n) % 2, np.arange(n)]))
    elif how == "named_split":
        written = frame.set_index("split")
    elif how == "named_id":
        written = frame.set_index("id")
    else:  # a named index of no column the loader knows: a column it ignores, with its usual warning
        written = frame.set_axis(pd.Index(np.arange(n) + 7, name="row"))
        plain = load(frame.assign(row=np.arange(n) + 7), tmp_path, "plain_row.parquet", index=False)
    got = load(written, tmp_path, f"{how}.parquet")
    names = pq.read_schema(tmp_path / f"{how}.parquet").names
    assert any(c.startswith("__index_level_") or c in ("split", "id", "row") for c in names)
    assert got.models, [p.message for p in got.problems]
    assert_same_runs(got, plain)


def test_bytes_of_such_a_file_load_too():
    frame = frame_of(12, 0, False).set_axis(np.arange(12) + 100)
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    report = load_run_file(buffer.getvalue(), name="run.parquet")
    assert report.models and not [p for p in report.problems if p.severity == "error"]


@pytest.mark.parametrize("metadata", [b"not json", b'{"index_columns": 5}', b'{"index_columns": ["nope"]}'])
def test_odd_pandas_metadata_is_left_to_to_pandas(tmp_path, metadata):
    import pyarrow as pa

    table = pa.Table.from_pandas(frame_of(8, 1, False), preserve_index=False)
    table = table.replace_schema_metadata({b"pandas": metadata})
    pq.write_table(table, tmp_path / "odd.parquet")
    report = load_run_file(tmp_path / "odd.parquet")
    assert report.models or report.problems  # loads, or says why in words: never an exception
