"""DuckDB sorts and writes the aggregate itself (``COPY ... TO``): the same rows, in the same order, as each
source aggregated alone, and the run's metadata survives any class name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from optional import need

need("duckdb")

from helpers.inputs import raw_frame  # noqa: E402

from valuecore._io.aggregate import aggregate, read_aggregate_metadata  # noqa: E402
from valuecore._io.aggregate.duckdb_engine import _DuckDB  # noqa: E402

KEYS = ["model", "split", "y_pred", "confidence", "y_true"]


def _keys_of(table) -> pd.DataFrame:
    """The sort keys of an aggregate's rows (probability runs: argmax class, first on ties, and its value)."""
    frame = table.to_pandas()
    probas = [c for c in frame.columns if c.startswith("proba_")]
    values = frame[probas].to_numpy()
    frame["y_pred"] = [probas[i][len("proba_") :] for i in values.argmax(axis=1)]
    frame["confidence"] = values.max(axis=1)
    return frame[KEYS]


def _is_sorted(keys: pd.DataFrame) -> bool:
    """Ascending by every key but the confidence, which descends; None last."""
    rows = list(keys.itertuples(index=False))

    def key(row):
        m, s, p, c, y = row
        return (m is None, m or "", s is None, s or "", p, -c, y is None, y or "")

    return all(key(a) <= key(b) for a, b in zip(rows, rows[1:]))


def test_several_sources_are_each_one_aggregated_alone_in_order(tmp_path):
    first, second = raw_frame(3, 400, weights=False), raw_frame(4, 300, weights=False, labelled_test=False)
    second = second[["proba_c", "proba_a", "y_true", "split", "proba_b"]]  # another column order
    paths = [tmp_path / "zeta.parquet", tmp_path / "alpha.parquet"]  # named against the sort order
    first.to_parquet(paths[0])
    second.to_parquet(paths[1])
    alone = []
    for path in paths:
        aggregate(str(path), tmp_path / f"{path.stem}-agg.parquet")
        alone.append(pq.read_table(tmp_path / f"{path.stem}-agg.parquet"))
    result = aggregate([str(p) for p in paths], tmp_path / "both.parquet")
    both = pq.read_table(tmp_path / "both.parquet")
    assert both.column_names == alone[0].column_names
    assert result.groups == both.num_rows == alone[0].num_rows + alone[1].num_rows
    assert result.source_rows == 700
    expected = pd.concat([t.to_pandas()[both.column_names] for t in alone], ignore_index=True)
    pd.testing.assert_frame_equal(both.to_pandas(), expected, check_exact=True)
    for table in alone:
        assert _is_sorted(_keys_of(table))
    assert not _is_sorted(_keys_of(both))  # zeta's groups before alpha's: the sources in the order given
    assert both.column("model")[0].as_py() == "zeta" and both.column("model")[-1].as_py() == "alpha"


def test_rows_come_out_ordered_with_unlabelled_splits_last_in_their_group(tmp_path):
    frame = raw_frame(8, 2000, labelled_test=False)
    frame["model"] = np.where(np.arange(len(frame)) % 3 == 0, "b", "a")
    frame.to_parquet(tmp_path / "log.parquet")
    aggregate(str(tmp_path / "log.parquet"), tmp_path / "agg.parquet")
    table = pq.read_table(tmp_path / "agg.parquet")
    keys = _keys_of(table)
    assert keys["y_true"].isna().any() and _is_sorted(keys)
    assert table.num_rows == len(keys.drop_duplicates())


def test_metadata_keeps_class_names_with_quotes_backslashes_and_accents(tmp_path):
    classes = ["it's", "a\\x41", 'é"q']
    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.ones(3), size=50)
    frame = pd.DataFrame({f"proba_{c}": proba[:, i] for i, c in enumerate(classes)})
    frame["y_true"] = rng.choice(classes, size=50)
    frame.to_parquet(tmp_path / "log.parquet")
    result = aggregate(str(tmp_path / "log.parquet"), tmp_path / "agg.parquet")
    metadata = read_aggregate_metadata(tmp_path / "agg.parquet")
    assert metadata["classes"] == list(result.classes) and sorted(metadata["classes"]) == sorted(classes)
    assert metadata["groups"] == result.groups == pq.read_table(tmp_path / "agg.parquet").num_rows
    assert metadata["engine"] == "duckdb" and metadata["source_rows"] == 50


def test_an_output_path_starting_with_a_tilde_is_the_folder_named_so_not_home(tmp_path, monkeypatch):
    """Python (and the CLI after the shell) reads ``~/agg.parquet`` as a folder named ``~``; DuckDB would
    read the home folder, so the file must reach DuckDB as an absolute path."""
    raw_frame(2, 100).to_parquet(tmp_path / "log.parquet")
    (tmp_path / "~").mkdir()
    monkeypatch.chdir(tmp_path)
    result = aggregate("log.parquet", "~/agg-tilde-probe.parquet")
    written = pq.read_table(tmp_path / "~" / "agg-tilde-probe.parquet")
    assert written.num_rows == result.groups > 0
    assert not (Path.home() / "agg-tilde-probe.parquet").exists()
    assert not list(Path.home().glob(".agg-tilde-probe.parquet.*"))


class _SortedWhenWritten(_DuckDB):
    """The path the presorted grouping replaces: groups made unsorted, sorted by the write in one thread."""

    def __init__(self, *args, presort: bool = False, **options):
        super().__init__(*args, presort=False, **options)


def _one_source_logs(folder: Path) -> list[tuple[str, dict]]:
    """One-source logs of every kind the grouping orders: (source, aggregate's options)."""
    rng = np.random.default_rng(33)
    logs = []
    frame = raw_frame(5, 1500, labelled_test=False)  # ties on a coarse grid, weights, unlabelled rows
    frame["model"] = np.where(np.arange(len(frame)) % 3 == 0, "b", "a")
    frame.to_parquet(folder / "models.parquet")
    logs.append((str(folder / "models.parquet"), {}))
    no_split = raw_frame(6, 800, weights=False).drop(columns="split")  # model and split constant
    no_split.to_parquet(folder / "plain.parquet")
    logs += [(str(folder / "plain.parquet"), {}), (str(folder / "plain.parquet"), {"resolution": 0.25})]
    no_split.to_csv(folder / "plain.csv", index=False)  # text cells: the checks' separate pass
    logs.append((str(folder / "plain.csv"), {}))
    n = 600
    top_label = pd.DataFrame({
        "y_pred": rng.choice(["1", "2", "10"], n), "confidence": rng.integers(5, 10, n) / 10,
        "y_true": rng.choice(["1", "2", "10"], n), "split": rng.choice(["val", "test"], n),
        "timestamp": pd.Timestamp("2024-05-01") + pd.to_timedelta(rng.integers(0, 60 * 24 * 40, n), "min"),
    })  # fmt: skip
    top_label.loc[top_label["split"] == "test", "y_true"] = None  # an unlabelled split: NULL keys last
    top_label.to_parquet(folder / "top.parquet")
    logs += [(str(folder / "top.parquet"), {}), (str(folder / "top.parquet"), {"period": "week"})]
    counts = rng.integers(1, 4, size=(2000, 4))  # a number y_true, named per group
    numbered = pd.DataFrame({f"proba_{c}": counts[:, c] / counts.sum(axis=1) for c in range(4)})
    numbered["y_true"] = rng.integers(0, 4, 2000).astype(float)
    numbered["timestamp"] = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 90, 2000), "D")
    numbered.to_parquet(folder / "numbered.parquet")
    logs += [(str(folder / "numbered.parquet"), {}), (str(folder / "numbered.parquet"), {"period": "month"})]
    return logs


def test_one_sources_groups_sorted_as_made_are_the_file_the_sorted_write_wrote(tmp_path, monkeypatch):
    """Issue 33: one source's groups are sorted by the grouping (in every thread) and the write only scans
    them; the file is, byte for byte, the one the write's own sort made."""
    import valuecore._io.aggregate as module
    from valuecore._io.aggregate import sql

    sorted_as_made = []
    presorted_sql = sql.presorted_sql
    spy = lambda plan: sorted_as_made.append(plan) or presorted_sql(plan)  # noqa: E731
    monkeypatch.setattr("valuecore._io.aggregate.duckdb_engine.presorted_sql", spy)
    for index, (source, options) in enumerate(_one_source_logs(tmp_path)):
        new, old = tmp_path / f"presorted-{index}.parquet", tmp_path / f"sorted-{index}.parquet"
        result = aggregate(source, new, threads=2, **options)
        assert len(sorted_as_made) == index + 1, source  # the new path ran
        with monkeypatch.context() as patch:
            patch.setattr(module, "_DuckDB", _SortedWhenWritten)
            aggregate(source, old, threads=2, **options)
        assert len(sorted_as_made) == index + 1
        assert result.groups > 1 and new.read_bytes() == old.read_bytes(), (source, options)
        if "y_pred" not in pq.read_schema(new).names and "period" not in options:  # the order, from the file too
            assert _is_sorted(_keys_of(pq.read_table(new)))


def test_several_sources_are_sorted_when_written(tmp_path, monkeypatch):
    """The sources' groups are sorted together by the write (sources in the order given): none is presorted."""
    from valuecore._io.aggregate import duckdb_engine

    monkeypatch.setattr(duckdb_engine, "presorted_sql", lambda plan: pytest.fail("presorted several sources"))
    for name, seed in (("one", 1), ("two", 2)):
        raw_frame(seed, 200).to_parquet(tmp_path / f"{name}.parquet")
    result = aggregate([str(tmp_path / "one.parquet"), str(tmp_path / "two.parquet")], tmp_path / "agg.parquet")
    assert result.groups == pq.read_metadata(tmp_path / "agg.parquet").num_rows
