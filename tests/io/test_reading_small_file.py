"""A Parquet run file of a few blocks is placed on the calling thread (no pool to start and hand off to);
larger files still share their blocks among the cores; both give the same checked predictions."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from valuecore._io.runfiles import reading as runfiles  # where the blocks are placed
from valuecore.runs import load_run_file


def write(path, n: int, bad_row: int | None = None) -> None:
    rng = np.random.default_rng(n)
    proba = rng.dirichlet(np.ones(3), size=n)
    if bad_row is not None:
        proba[bad_row, 0] = np.nan
    pq.write_table(pa.table({**{f"proba_{k}": proba[:, k] for k in range(3)},
                             "y_true": rng.integers(0, 3, n)}), path)


class NoPool:
    def __init__(self, *args, **kwargs):
        raise AssertionError("a thread pool was started")


@pytest.mark.parametrize("n", [1, 1000, runfiles._CHECK_BLOCK, runfiles._CHECK_BLOCK + 1, 100_000,
                               runfiles._THREADED_BLOCKS * runfiles._CHECK_BLOCK])
def test_a_few_blocks_start_no_pool(tmp_path, monkeypatch, n):
    path = tmp_path / "run.parquet"
    write(path, n)
    expected = load_run_file(path).models["run"].splits["all"]
    monkeypatch.setattr(runfiles, "ThreadPoolExecutor", NoPool)
    got = load_run_file(path).models["run"].splits["all"]
    assert np.array_equal(got.proba, expected.proba) and np.array_equal(got.y_pred, expected.y_pred)


def test_more_blocks_use_the_pool(tmp_path, monkeypatch):
    path = tmp_path / "run.parquet"
    write(path, runfiles._THREADED_BLOCKS * runfiles._CHECK_BLOCK + 1)
    monkeypatch.setattr(runfiles, "ThreadPoolExecutor", NoPool)
    report = load_run_file(path)
    assert not report.ok and "a thread pool was started" in str(report.problems)


def test_a_bad_cell_in_a_small_file_is_reported_with_its_row(tmp_path):
    path = tmp_path / "run.parquet"
    write(path, 50, bad_row=7)
    report = load_run_file(path)
    assert not report.ok and "proba_0" in str(report.problems) and "8" in str(report.problems)
