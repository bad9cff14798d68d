"""Parquet datasets in the dashboard: aggregated once per fingerprint, then loaded like a run file."""

import os

import numpy as np
import pytest
import pandas as pd

import valuecore as vc
from dashboard import datasets
from optional import need

need("duckdb")  # datasets are aggregated with DuckDB (requirements-spark.txt)


def make_dataset(root, n=400, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 21, n) / 20
    frame = pd.DataFrame({"proba_a": a, "proba_b": 1 - a, "y_true": rng.choice(["a", "b"], n)})
    for split in ("val", "test"):
        (root / f"split={split}").mkdir(parents=True, exist_ok=True)
        frame.to_parquet(root / f"split={split}" / "part-0.parquet")
    return frame


def test_cached_aggregate_is_made_once_per_fingerprint(tmp_path, monkeypatch):
    dataset = tmp_path / "fraud_model"
    make_dataset(dataset)
    assert datasets.is_dataset(dataset) and not datasets.is_dataset(tmp_path / "nowhere")
    calls = []
    real = vc.aggregation.aggregate
    monkeypatch.setattr("valuecore.aggregation.aggregate", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = datasets.cached_aggregate(dataset, cache_dir=tmp_path / "cache")
    again = datasets.cached_aggregate(dataset, cache_dir=tmp_path / "cache")
    assert first == again and len(calls) == 1
    report = vc.load_runs(first)
    assert report.ok and set(report.models["fraud_model"].splits) == {"val", "test"}
    # A changed part changes the fingerprint: never a stale aggregate.
    part = dataset / "split=val" / "part-0.parquet"
    make_dataset(dataset, seed=1)
    os.utime(part, ns=(part.stat().st_atime_ns, part.stat().st_mtime_ns + 10**9))
    third = datasets.cached_aggregate(dataset, cache_dir=tmp_path / "cache")
    assert third != first and len(calls) == 2


def test_a_flat_folder_of_run_files_is_not_a_dataset(tmp_path):
    pd.DataFrame({"proba_a": [0.5], "proba_b": [0.5]}).to_parquet(tmp_path / "model.parquet")
    assert not datasets.is_dataset(tmp_path)


def test_a_folder_of_run_folders_or_with_run_files_of_its_own_is_not_a_dataset(tmp_path):
    make_dataset(tmp_path / "log")
    assert datasets.is_dataset(tmp_path / "log")
    # Run files beside the partitions: separate models, not one log.
    pd.DataFrame({"proba_a": [0.5], "proba_b": [0.5]}).to_parquet(tmp_path / "log" / "other_model.parquet")
    assert not datasets.is_dataset(tmp_path / "log")
    # A folder of folders of CSV run files (like sample_runs/) is not a Parquet dataset either.
    runs = tmp_path / "runs"
    for name in ("digits", "breast_cancer"):
        (runs / name).mkdir(parents=True)
        pd.DataFrame({"y_true": ["a"], "proba_a": [1.0], "proba_b": [0.0]}).to_csv(runs / name / "m.csv")
    assert not datasets.is_dataset(runs)


def test_labels_flipped_with_size_and_mtime_restored_are_not_served_stale(tmp_path, monkeypatch):
    """Issue 24 (M8): the same size and the old mtime once made the dashboard serve the old aggregate."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    dataset = tmp_path / "log"
    part = dataset / "split=test" / "part-0.parquet"
    part.parent.mkdir(parents=True)
    a = np.linspace(0.55, 0.95, 200)
    labels = np.where(np.arange(200) % 10 == 0, "b", "a")

    def write(y_true):
        table = pa.table({"proba_a": a, "proba_b": 1 - a, "y_true": y_true})
        pq.write_table(table, part, compression="none", use_dictionary=False, write_statistics=False)

    write(labels)
    first = datasets.cached_aggregate(dataset, cache_dir=tmp_path / "cache")
    accuracy = vc.load_runs(first).models["log"].splits["test"].accuracy
    stat = part.stat()
    footer = pq.ParquetFile(part).metadata.to_dict()
    write(np.where(labels == "a", "b", "a"))  # every label flipped: same size, same footer
    os.utime(part, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert part.stat().st_size == stat.st_size and part.stat().st_mtime_ns == stat.st_mtime_ns
    assert pq.ParquetFile(part).metadata.to_dict() == footer
    second = datasets.cached_aggregate(dataset, cache_dir=tmp_path / "cache")
    flipped = vc.load_runs(second).models["log"].splits["test"].accuracy
    assert second != first and flipped == pytest.approx(1 - accuracy)
    # Incremental: an unchanged dataset is not read again to be recognised.
    calls = []
    real = datasets._content_digest
    monkeypatch.setattr(datasets, "_content_digest", lambda path: calls.append(path) or real(path))
    assert datasets.cached_aggregate(dataset, cache_dir=tmp_path / "cache") == second and calls == []


def test_a_part_file_linked_from_outside_the_dataset_is_refused(tmp_path):
    """Issue 24 (M6): a linked part file of a Parquet dataset showed an outside file's rows."""
    dataset = tmp_path / "log"
    make_dataset(dataset)
    outside = tmp_path / "elsewhere.parquet"
    pd.DataFrame({"proba_a": [0.9], "proba_b": [0.1], "y_true": ["a"]}).to_parquet(outside)
    (dataset / "split=val" / "part-1.parquet").symlink_to(outside)
    with pytest.raises(vc.aggregation.AggregateRefused, match="outside the allowed folders"):
        datasets.cached_aggregate(dataset, cache_dir=tmp_path / "cache")
    assert datasets.cached_aggregate(dataset, cache_dir=tmp_path / "cache", roots=[tmp_path]).is_file()
