"""A split whose weights are all zero holds no item (a weight of 0 leaves an item out): it is left out with a
warning naming the file, the column and the rows, as if the file did not have it. Kept, it crashed the first page,
Compare and Capacity (an interval's mean over no weight) and ended `report` in "no item has a positive weight"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import valuecore as vc


def frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n).round(3)
    return pd.DataFrame({"split": np.where(np.arange(n) % 2, "val", "test"), "y_true": rng.choice(["a", "b"], n),
                         "proba_a": p, "proba_b": (1 - p).round(3), "weight": np.where(np.arange(n) % 2, 1.0, 0.0)})


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_split_of_zero_weights_is_left_out_as_if_absent(tmp_path, suffix):
    rows = frame()
    path, without = tmp_path / f"m{suffix}", tmp_path / f"w{suffix}"
    for target, part in ((path, rows), (without, rows[rows["split"] == "val"])):
        part.to_parquet(target, index=False) if suffix == ".parquet" else part.to_csv(target, index=False)
    report = vc.load_runs([str(path)])
    reference = vc.load_runs([str(without)])
    assert report.ok and not report.errors
    (run,), (expected,) = report.models.values(), reference.models.values()
    assert list(run.splits) == ["val"]
    assert np.array_equal(run.splits["val"].proba, expected.splits["val"].proba)
    (warning,) = report.warnings
    assert warning.column == "weight" and "split 'test' is left out: all its weights are zero" in str(warning)
    assert warning.rows == (1, 3, 5, 7, 9) and warning.row_count == 20  # the test split's rows, first few named


def test_a_model_of_zero_weights_only_is_left_out_and_a_file_of_them_refused(tmp_path):
    rows = frame()
    rows["weight"] = 0.0
    rows["model"] = np.where(np.arange(len(rows)) % 4 < 2, "m1", "m2")
    rows.loc[rows["model"] == "m2", "weight"] = 1.0
    path = tmp_path / "two.csv"
    rows.to_csv(path, index=False)
    report = vc.load_runs([str(path)])
    assert list(report.models) == ["m2"] and not report.errors
    assert any(w.column == "weight" and "model 'm1' is left out" in str(w) for w in report.warnings)
    rows["weight"] = 0.0
    rows.to_csv(path, index=False)
    report = vc.load_runs([str(path)])
    assert not report.models
    assert any(e.column == "weight" and "has no item to read" in str(e) for e in report.errors), report.problems


def test_the_pages_that_crashed_on_such_a_split_draw(tmp_path, monkeypatch):
    from helpers.app import start

    from dashboard import serverfiles

    folder = tmp_path / "runs"
    folder.mkdir()
    frame().to_csv(folder / "zero_test.csv", index=False)
    frame(seed=1).drop(columns="weight").to_csv(folder / "plain.csv", index=False)
    monkeypatch.setenv(serverfiles.ENV_VAR, str(tmp_path))
    for page in ("pages/home.py", "pages/compare.py", "pages/constraints.py", "pages/export.py"):
        at = start(page, src=f"folder:{folder}")
        assert not at.exception, (page, [e.value for e in at.exception])
        assert not at.error, (page, [e.value for e in at.error])
