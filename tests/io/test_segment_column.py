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


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("split_name, tier_name, asked", [
    ("split ", "tier", "tier"), ("split", "tier ", "tier"), ("\tsplit", " tier\t", "tier"), ("split", "tier", " tier"),
])
def test_names_with_whitespace_around_them_are_the_names_the_loader_reads(tmp_path, suffix, split_name, tier_name,
                                                                         asked):
    # The loader reads "split " as the split; the segments of each split must then be found under it (a header
    # "split ," once ended in "unexpected failure (KeyError: 'test')").
    rng = np.random.default_rng(7)
    n = 60
    p = rng.uniform(size=n)
    clean = pd.DataFrame({"id": [f"i{k}" for k in range(n)], "split": rng.choice(["val", "test"], n),
                          "y_true": rng.choice(["a", "b"], n), "proba_a": p, "proba_b": 1 - p,
                          "tier": rng.choice(["gold", "silver"], n)})
    spaced = clean.rename(columns={"split": split_name, "tier": tier_name})
    for frame, name in ((clean, "clean"), (spaced, "spaced")):
        path = tmp_path / f"{name}{suffix}"
        frame.to_parquet(path) if suffix == ".parquet" else frame.to_csv(path, index=False)
    wanted = vc.load_runs([str(tmp_path / f"clean{suffix}")], segment_column="tier")
    got = vc.load_runs([str(tmp_path / f"spaced{suffix}")], segment_column=asked)
    assert got.ok and wanted.ok, [str(x) for x in got.problems]
    (run,), (reference,) = got.models.values(), wanted.models.values()
    assert set(run.segments) == {"val", "test"}
    for split in run.splits:
        assert run.segments[split].tolist() == reference.segments[split].tolist()
        assert run.splits[split].ids.tolist() == reference.splits[split].ids.tolist()


@pytest.mark.parametrize("column", ["y_true", "split", "proba_a", " y_true", "confidence", "weight", "id", "model"])
def test_a_column_of_the_run_format_is_never_the_segment_column(tmp_path, column):
    # Thresholds per true label would be a policy no server can apply (it has no label when it predicts).
    p = np.linspace(0.05, 0.95, 12)
    frame = pd.DataFrame({"id": range(12), "model": "m", "split": ["val", "test"] * 6, "y_true": ["a", "b"] * 6,
                          "proba_a": p, "proba_b": 1 - p, "weight": 1.0, "confidence": np.maximum(p, 1 - p)})
    path = tmp_path / "m.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match="a column of the run format cannot be the segment column") as caught:
        vc.runs.read_segment_column(path, column)
    assert caught.value.args[1].column == column and caught.value.args[1].file == str(path)
    report = vc.load_runs([str(path)], segment_column=column)
    assert not report.models and any("cannot be the segment column" in str(x) for x in report.errors)


def test_two_columns_equal_but_for_whitespace_are_refused_as_a_segment(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("y_true,proba_a,proba_b,tier,tier \na,0.7,0.3,x,y\nb,0.2,0.8,x,y\n")
    with pytest.raises(ValueError, match=r"two columns are named 'tier' once the spaces"):
        vc.runs.read_segment_column(path, "tier")
