"""A run file's segment column is read in the loader's row order: for every model and split of a file (CSV and
Parquet, models and splits interleaved) each item's segment is the one on its own row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import valuecore as vc


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_each_item_gets_the_segment_of_its_own_row(tmp_path, suffix):
    rng = np.random.default_rng(4)
    n = 200
    p = rng.uniform(size=n)
    frame = pd.DataFrame({
        "id": [f"i{k}" for k in range(n)], "model": rng.choice(["m1", "m2"], n),
        "split": rng.choice(["val", "test", "prod"], n), "y_true": rng.choice(["a", "b"], n),
        "proba_a": p, "proba_b": 1 - p, "tier": rng.choice(["gold", "silver", 3], n).astype(str),
    })
    path = tmp_path / f"runs{suffix}"
    frame.to_parquet(path) if suffix == ".parquet" else frame.to_csv(path, index=False)
    report = vc.load_runs([str(path)], segment_column="tier")
    assert report.ok and not report.warnings, [str(x) for x in report.problems]
    tier_of = dict(zip(frame["id"], frame["tier"]))
    checked = 0
    for run in report.models.values():
        assert set(run.segments) == set(run.splits)
        for split, predictions in run.splits.items():
            assert run.segments[split].tolist() == [tier_of[i] for i in predictions.ids]
            checked += predictions.n
    assert checked == n
    without = vc.load_runs([str(path)])
    assert all(run.segments == {} for run in without.models.values())
    assert "ignored unknown columns ['tier']" in str(without.warnings[0])


@pytest.mark.parametrize("declared, left", [("sex", "['age_band', 'site']"), ("age_band", "['sex', 'site']"),
                                            ("site", "['sex', 'age_band']")])
def test_the_declared_column_is_not_called_unknown_beside_other_extra_columns(tmp_path, declared, left):
    p = np.linspace(0.05, 0.95, 12)
    frame = pd.DataFrame({"y_true": ["a", "b"] * 6, "proba_a": p, "proba_b": 1 - p, "sex": ["1", "2"] * 6,
                          "age_band": ["young"] * 6 + ["old"] * 6, "site": ["x"] * 12})
    path = tmp_path / "m.csv"
    frame.to_csv(path, index=False)
    report = vc.load_runs([str(path)], segment_column=declared)
    assert report.ok
    assert [str(w) for w in report.warnings] == [str(w).replace(
        "['sex', 'age_band', 'site']", left) for w in vc.load_runs([str(path)]).warnings]
    assert declared not in left
