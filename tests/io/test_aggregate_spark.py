"""Spark computes the identical aggregate, and the loader's messages for bad sources.

One local Spark session (``local[2]``, loopback only) serves the whole module.
"""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from helpers.inputs import BAD_FRAMES, loader_problems, nearly_distinct_scores, raw_frame

import valuecore as vc
from valuecore._io.aggregate import AggregateRefused, aggregate
from valuecore._io.aggregate.spark_engine import _Spark, spark_session

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def spark():
    session = spark_session("local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def both_engines(spark, source, tmp_path, **options):
    """(DuckDB's aggregate, Spark's aggregate) as pyarrow tables."""
    tables = []
    for engine in ("duckdb", "spark"):
        out = tmp_path / f"{engine}.parquet"
        extra = {"spark": spark} if engine == "spark" else {}
        aggregate(str(source), out, engine=engine, **options, **extra)
        tables.append(pq.read_table(out))
    return tables


def assert_same_rows(duck, spark_table):
    assert duck.column_names == spark_table.column_names
    assert duck.num_rows == spark_table.num_rows
    for name in duck.column_names:
        a, b = duck[name].to_pylist(), spark_table[name].to_pylist()
        if name.startswith("proba_"):
            np.testing.assert_allclose(np.array(a, float), np.array(b, float), rtol=1e-12, atol=1e-15)
        else:
            assert a == b, name


def test_spark_aggregate_equals_duckdb_row_for_row(spark, tmp_path):
    frame = raw_frame(5, 3000)
    frame["model"] = np.where(np.arange(len(frame)) % 3 == 0, "m1", "m2")
    source = tmp_path / "logs"
    source.mkdir()
    frame.iloc[:1000].to_parquet(source / "part-0.parquet")
    frame.iloc[1000:].to_parquet(source / "part-1.parquet")
    duck, spark_table = both_engines(spark, source, tmp_path)
    assert_same_rows(duck, spark_table)
    assert duck.num_rows < len(frame)


def test_names_with_backslashes_and_quotes_reach_spark_as_written(spark, tmp_path):
    """Spark reads a backslash in a string literal as an escape ('a\\b' would be "a" and a backspace): class,
    model and split names holding one come out of both engines as they were written."""
    rng = np.random.default_rng(3)
    n = 300
    p = rng.dirichlet([1, 1], size=n)
    frame = pd.DataFrame({"proba_a\\b": p[:, 0], "proba_it's": p[:, 1]})
    frame["y_true"] = np.where(rng.random(n) < 0.5, "a\\b", "it's")
    frame["model"] = np.where(np.arange(n) % 2 == 0, "m\\1", "m'2")
    frame["split"] = "val\\x"
    source = tmp_path / "log.parquet"
    frame.to_parquet(source)
    duck, spark_table = both_engines(spark, source, tmp_path)
    assert_same_rows(duck, spark_table)
    assert set(spark_table["model"].to_pylist()) == {"m\\1", "m'2"}
    assert set(spark_table["y_true"].to_pylist()) == {"a\\b", "it's"}
    assert set(spark_table["split"].to_pylist()) == {"val\\x"}
    duck, spark_table = both_engines(spark, source, tmp_path, resolution=0.01)  # with the predicted class's name
    assert_same_rows(duck, spark_table)
    assert set(spark_table["y_pred"].to_pylist()) == {"a\\b", "it's"}


HOSTILE = ['q"uote\\b', "back`tick", "it's\nline", "back\\slash", "tab\tx", "semi;colon -- x"]  # trimmed ends


def test_hostile_names_and_values_reach_both_engines_as_written(spark, tmp_path):
    """sqlglot quotes every name and value in each engine's dialect: class names that are column names
    (proba_<class>, identifiers) and labels, models and splits that are values (literals), holding double
    quotes, backticks, quotes, backslashes, newlines or a NUL, come out of both engines as they were written."""
    rng = np.random.default_rng(5)
    n = 240
    p = rng.dirichlet([1, 1, 1], size=n)
    classes = HOSTILE[:3]
    frame = pd.DataFrame({f"proba_{c}": p[:, i] for i, c in enumerate(classes)})
    frame["y_true"] = rng.choice(classes, n)
    frame["model"] = np.where(np.arange(n) % 2 == 0, HOSTILE[3], HOSTILE[4])
    frame["split"] = HOSTILE[5]
    frame.to_parquet(tmp_path / "proba.parquet")
    for options in ({}, {"resolution": 0.01}):  # the means' columns, or the predicted class's name
        duck, spark_table = both_engines(spark, tmp_path / "proba.parquet", tmp_path, **options)
        assert_same_rows(duck, spark_table)
        assert set(spark_table["model"].to_pylist()) == {HOSTILE[3], HOSTILE[4]}
        assert set(spark_table["y_true"].to_pylist()) == set(classes) and set(spark_table["split"].to_pylist()) == {
            HOSTILE[5]}  # fmt: skip
        if not options:  # the mean of each class, in a column named as the source's
            assert [c for c in duck.column_names if c.startswith("proba_")] == [f"proba_{c}" for c in classes]
    labels = ["nul\x00byte", *HOSTILE[:3]]  # a top-label run's classes are values only
    top = pd.DataFrame({"y_pred": rng.choice(labels, n), "y_true": rng.choice(labels, n),
                        "confidence": rng.random(n).round(2)})  # fmt: skip
    top.to_parquet(tmp_path / 'm"o`d\'el.parquet')  # the model is named after the file
    duck, spark_table = both_engines(spark, tmp_path / 'm"o`d\'el.parquet', tmp_path)
    assert_same_rows(duck, spark_table)
    assert set(spark_table["y_pred"].to_pylist()) == set(labels) and set(spark_table["model"].to_pylist()) == {
        'm"o`d\'el'}  # fmt: skip


def test_whitespace_around_class_names_and_labels_reads_alike_in_both_engines(spark, tmp_path):
    """A class is the part after ``proba_``, stripped (``columns.column_name``), read from the column as the
    file spells it; labels are stripped of the same whitespace in Spark as in DuckDB (and the loader)."""
    rng = np.random.default_rng(7)
    n = 120
    p = rng.dirichlet([1, 1, 1], size=n)
    spelled = ["a\t", " b", "\u00fc\u65e5 \u3000"]
    frame = pd.DataFrame({f"proba_{c}": p[:, i] for i, c in enumerate(spelled)})
    frame["y_true"] = rng.choice(["a ", "\tb", "\u00fc\u65e5", "\xa0a"], n)
    frame["split"] = rng.choice([" val", "test\t"], n)
    frame.to_parquet(tmp_path / "run.parquet")
    frame.to_csv(tmp_path / "run.csv", index=False)
    for source in ("run.parquet", "run.csv"):
        duck, spark_table = both_engines(spark, tmp_path / source, tmp_path)
        assert_same_rows(duck, spark_table)
        assert [c for c in duck.column_names if c.startswith("proba_")] == ["proba_a", "proba_b", "proba_\u00fc\u65e5"]
        assert set(spark_table["y_true"].to_pylist()) == {"a", "b", "\u00fc\u65e5"}
        assert set(spark_table["split"].to_pylist()) == {"val", "test"}


def test_spark_equals_duckdb_with_resolution_period_and_hive_partitions(spark, tmp_path):
    rng = np.random.default_rng(8)
    n = 2000
    proba = rng.dirichlet([2, 1], size=n).astype(np.float32)
    frame = pd.DataFrame({
        "proba_0": proba[:, 0], "proba_1": 1 - proba[:, 0], "y_true": rng.integers(0, 2, n),
        "timestamp": pd.Timestamp("2024-05-01") + pd.to_timedelta(rng.integers(0, 60 * 24 * 60, n), "min"),
    })  # fmt: skip
    source = tmp_path / "logs"
    for split in ("val", "prod"):
        (source / f"split={split}").mkdir(parents=True)
        part = frame.iloc[: n // 2] if split == "val" else frame.iloc[n // 2 :].assign(y_true=pd.NA)
        part = part.astype({"y_true": "Int64"})
        part.to_parquet(source / f"split={split}" / "part-0.parquet")
    duck, spark_table = both_engines(spark, source, tmp_path, resolution=0.001, period="month")
    assert_same_rows(duck, spark_table)
    report = vc.load_runs(tmp_path / "spark.parquet")
    assert report.ok, report.problems
    assert not report.models["logs"].splits["prod"].has_labels


def test_spark_equals_duckdb_on_top_label_csv(spark, tmp_path):
    rng = np.random.default_rng(9)
    n = 500
    frame = pd.DataFrame({"y_pred": rng.choice(["cat", "dog"], n), "confidence": rng.integers(50, 100, n) / 100,
                          "y_true": rng.choice(["cat", "dog"], n), "weight": rng.integers(1, 5, n)})  # fmt: skip
    source = tmp_path / "model.csv"
    frame.to_csv(source, index=False)
    duck, spark_table = both_engines(spark, source, tmp_path)
    assert_same_rows(duck, spark_table)
    assert sum(duck["weight"].to_pylist()) == frame["weight"].sum()


@pytest.mark.parametrize("case", ["nan", "sum", "unknown_label", "partly_labelled"])
def test_bad_sources_give_the_loaders_messages_from_spark(spark, case, tmp_path):
    path = tmp_path / "model.parquet"
    BAD_FRAMES[case].to_parquet(path)
    with pytest.raises(AggregateRefused) as refused:
        aggregate(str(path), tmp_path / "agg.parquet", engine="spark", spark=spark)
    assert [str(p) for p in refused.value.problems if p.severity == "error"] == loader_problems(path)


def test_spark_catalog_table(spark, tmp_path):
    frame = raw_frame(12, 400)
    spark.createDataFrame(frame).createOrReplaceTempView("predictions_table")
    out = tmp_path / "agg.parquet"
    aggregate("table:predictions_table", out, engine="spark", spark=spark)
    raw_path = tmp_path / "predictions_table.parquet"
    frame.to_parquet(raw_path)
    raw = vc.load_runs(raw_path).models["predictions_table"]
    agg = vc.load_runs(out).models["predictions_table"]
    use_case = vc.UseCase(1, 0, -3)
    for split in ("val", "test"):
        a = vc.fit_policy("threshold", vc.presort(raw.splits[split]), use_case)
        b = vc.fit_policy("threshold", vc.presort(agg.splits[split]), use_case)
        assert a.threshold == b.threshold


def test_a_catalog_table_name_is_quoted_never_parsed_as_sql(spark, tmp_path):
    """Issue 24 (M1): ``table:NAME`` is a name, quoted part by part; a missing one is a sentence."""
    spark.createDataFrame(raw_frame(13, 50)).createOrReplaceTempView("kept_table")
    out = tmp_path / "agg.parquet"
    with pytest.raises(AggregateRefused, match="no such table"):
        aggregate("table:kept_table; DROP VIEW kept_table", out, engine="spark", spark=spark)
    with pytest.raises(AggregateRefused, match="without backquotes"):
        aggregate("table:kept`table", out, engine="spark", spark=spark)
    assert spark.catalog.tableExists("kept_table") and not out.exists()


def test_each_rule_holds_on_the_same_values_in_spark_as_in_numpy(spark):
    """The Spark spelling of every row rule of valuecore/_io/columns.py (no isfinite there) against numpy."""
    from helpers.inputs import NUMERIC_RULES, VALUES

    from valuecore._io import columns

    values = np.array([np.nan if v is None else v for v in VALUES], dtype=np.float64)
    text_is_no_number = np.zeros(len(VALUES), bool)
    text_is_no_number[1] = True
    cells = spark.createDataFrame(
        [(i, None if v is None else float(v), bool(t)) for i, (v, t) in enumerate(zip(VALUES, text_is_no_number))],
        "i INT, v DOUBLE, text_no_number BOOLEAN",
    )
    cells.createOrReplaceTempView("cells")
    for rule in NUMERIC_RULES:
        condition = columns.rule_sql(rule, "v", "text_no_number", dialect="spark")
        in_spark = {r[0] for r in spark.sql(f"SELECT i FROM cells WHERE {condition}").collect()}
        assert in_spark == set(np.flatnonzero(columns.rule_mask(rule, values, text_is_no_number)).tolist()), rule


@pytest.fixture
def engine_temp(tmp_path, monkeypatch):
    """The temporary folder the engine's groups are written under: nothing of them is left there afterwards."""
    folder = tmp_path / "engine-temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    assert not list(folder.glob("valuecore-spark-groups-*"))


def through_the_driver(monkeypatch):
    """The path the executors' written groups replace locally (and a cluster's): ``toArrow`` through the driver."""
    monkeypatch.setattr(_Spark, "_executors_write_here", lambda self: False)


@pytest.mark.parametrize("path", ["written", "through the driver"])
def test_spark_refuses_over_the_group_budget_as_duckdb_does(spark, tmp_path, monkeypatch, engine_temp, path):
    # Spark's groups stay in Spark over the budget (where the executors wrote them; through the driver, at most
    # max_groups + 1 are fetched and all are then kept) to count them and suggest a resolution, and it says
    # what DuckDB says.
    if path == "through the driver":
        through_the_driver(monkeypatch)
    raw = nearly_distinct_scores(tmp_path)
    messages = []
    for engine in ("duckdb", "spark"):
        extra = {"spark": spark} if engine == "spark" else {}
        with pytest.raises(AggregateRefused) as refused:
            aggregate(str(raw), tmp_path / f"{engine}.parquet", engine=engine, max_groups=1000, **extra)
        messages.append(str(refused.value))
    assert messages[0] == messages[1]
    assert "3,000 groups" in messages[0] and "--resolution 0.01" in messages[0]


def test_groups_written_by_the_executors_give_the_file_the_driver_gave_byte_for_byte(
    spark, tmp_path, monkeypatch, engine_temp
):
    """Issue 33: locally, the executors write the groups into a folder of the engine's own and this process
    reads them back, instead of taking them through the driver's Java heap (toArrow). The aggregate file is
    the same, byte for byte (types, nullability, metadata: Parquet's INT96 timestamps and Spark's schema
    in the parts' metadata are cast back), and the folder is gone afterwards (the fixture)."""
    rng = np.random.default_rng(8)
    n = 2000
    proba = rng.dirichlet([2, 1], size=n)
    frame = pd.DataFrame({
        "proba_0": proba[:, 0], "proba_1": 1 - proba[:, 0], "y_true": rng.integers(0, 2, n).astype(str),
        "timestamp": pd.Timestamp("2024-05-01") + pd.to_timedelta(rng.integers(0, 60 * 24 * 60, n), "min"),
        "split": np.where(np.arange(n) % 4 == 0, "test", "val"),
    })  # fmt: skip
    frame.to_parquet(tmp_path / "timed.parquet")
    labelled = raw_frame(5, 3000)
    labelled["model"] = np.where(np.arange(len(labelled)) % 3 == 0, "m1", "m2")
    labelled.to_parquet(tmp_path / "models.parquet")
    raw_frame(7, 1000, labelled_test=False).to_csv(tmp_path / "unlabelled.csv", index=False)
    cases = [
        ([tmp_path / "timed.parquet"], {"period": "week"}),
        ([tmp_path / "timed.parquet"], {"period": "month", "resolution": 0.001}),
        ([tmp_path / "models.parquet"], {}),
        ([tmp_path / "unlabelled.csv", tmp_path / "models.parquet"], {}),  # two sources, CSV among them
    ]
    written, handed = [], []  # how often the executors wrote the groups; the groups each path handed over
    write, hand = _Spark._written_groups, _Spark.groups
    monkeypatch.setattr(_Spark, "_written_groups", lambda self, *a: written.append(1) or write(self, *a))
    monkeypatch.setattr(_Spark, "groups", lambda self, *a: handed.append(hand(self, *a)) or handed[-1])
    for i, (sources, options) in enumerate(cases):
        with monkeypatch.context() as driver:
            through_the_driver(driver)
            aggregate([str(s) for s in sources], tmp_path / f"driver-{i}.parquet", engine="spark", spark=spark,
                      **options)  # fmt: skip
        ran, from_the_driver = len(written), handed[:]
        handed.clear()
        aggregate([str(s) for s in sources], tmp_path / f"written-{i}.parquet", engine="spark", spark=spark, **options)
        assert len(written) == ran + len(sources), "the executors did not write the groups"
        assert filecmp.cmp(tmp_path / f"driver-{i}.parquet", tmp_path / f"written-{i}.parquet", shallow=False), i
        # The checks read the groups too: each table is toArrow's (its schema, metadata included; its rows in
        # another order, as the driver's single partition of LIMIT and the executors' parts come in theirs).
        assert len(handed) == len(from_the_driver) == len(sources)
        for old, new in zip(from_the_driver, handed):
            assert new.schema.equals(old.schema, check_metadata=True), (i, new.schema, old.schema)
            every_column = [(name, "ascending") for name in old.column_names]
            assert new.sort_by(every_column).equals(old.sort_by(every_column)), i
        handed.clear()


BEYOND_THE_DRIVER = """
import sys
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from valuecore._io.aggregate import aggregate

log, out = sys.argv[1:]
spark = (SparkSession.builder.master("local[2]").config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.ui.enabled", "false")
         .config("spark.driver.maxResultSize", "1m").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
result = aggregate(log, out, engine="spark", spark=spark)
print(result.groups)
"""


def test_groups_larger_than_the_driver_may_take_are_aggregated(tmp_path):
    """Issue 33: 20,000 groups of 10 mean probabilities (about 2 MB as Arrow) in a session whose driver takes
    at most 1 MB of task results (spark.driver.maxResultSize, the bound of a collect such as toArrow; the
    driver's 1g heap ran out the same way at 810,925 groups of 50): the executors write them, so the
    aggregate is made, and it is DuckDB's."""
    rng = np.random.default_rng(3)
    proba = rng.dirichlet(np.ones(10), size=20_000)
    frame = pd.DataFrame({f"proba_{c}": proba[:, c] for c in range(10)})
    frame["y_true"] = rng.integers(0, 10, len(frame)).astype(str)
    log = tmp_path / "log.parquet"
    frame.to_parquet(log)
    environment = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", BEYOND_THE_DRIVER, str(log), str(tmp_path / "spark.parquet")],
                          cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["20000"]
    aggregate(str(log), tmp_path / "duckdb.parquet")
    assert_same_rows(pq.read_table(tmp_path / "duckdb.parquet"), pq.read_table(tmp_path / "spark.parquet"))


def jobs_run(spark, work):
    """(``work()``, how many Spark jobs it ran)."""
    tracker = spark.sparkContext.statusTracker()
    before = max(tracker.getJobIdsForGroup(None), default=-1)
    result = work()
    return result, sum(1 for job in tracker.getJobIdsForGroup(None) if job > before)


def test_a_clean_log_costs_spark_the_grouping_and_no_pass_of_its_own(spark, tmp_path):
    """Issue 33: on a clean CSV log the loader's checks and the counts of models, splits and labelled rows
    ride on the grouping, and the header is read here, not by a Spark job: the grouping's jobs alone run
    (two: its shuffle, then its result), where a separate pass of checks, counts and header took eight more.
    A Parquet log adds one, Spark's read of its schema. The aggregates are DuckDB's, row for row."""
    frame = raw_frame(14, 2000)
    frame["model"] = np.where(np.arange(len(frame)) % 3 == 0, "m1", "m2")
    for suffix, write in ((".csv", lambda f, p: f.to_csv(p, index=False)), (".parquet", pd.DataFrame.to_parquet)):
        source = tmp_path / f"log{suffix}"
        write(frame, source)
        out = tmp_path / f"spark{suffix}.parquet"
        result, jobs = jobs_run(spark, lambda: aggregate(str(source), out, engine="spark", spark=spark))
        assert jobs <= (2 if suffix == ".csv" else 3), (suffix, jobs)
        assert not result.problems
        aggregate(str(source), tmp_path / f"duckdb{suffix}.parquet")
        assert_same_rows(pq.read_table(tmp_path / f"duckdb{suffix}.parquet"), pq.read_table(out))


@pytest.mark.parametrize("case", ["nan", "sum", "unknown_label", "partly_labelled"])  # as the Parquet test above
def test_bad_csv_sources_give_duckdbs_messages_from_spark(spark, case, tmp_path, engine_temp):
    """The checks on a CSV log, counted in Spark's grouping, find what DuckDB's pass of its own finds (file,
    message, column, count); Spark does not number CSV rows, so its messages name none."""
    path = tmp_path / "model.csv"
    BAD_FRAMES[case].to_csv(path, index=False)
    found = []
    for engine in ("duckdb", "spark"):
        with pytest.raises(AggregateRefused) as refused:
            aggregate(str(path), tmp_path / "agg.parquet", engine=engine, **({"spark": spark} if engine == "spark"
                                                                              else {}))  # fmt: skip
        found.append([(p.file, p.message, p.column, p.severity, p.row_count) for p in refused.value.problems])
    assert found[0] == found[1] and any(p[3] == "error" for p in found[0])
    assert not (tmp_path / "agg.parquet").exists()


def test_file_names_holding_glob_characters_are_read_as_those_files_by_spark(spark, tmp_path):
    """Spark reads a path as a Hadoop glob: m[1].csv read m1.csv, and m\\1.csv failed to parse. Each run file of
    the folder is read as itself, as DuckDB and the loader read it."""
    folder = tmp_path / "runs"
    folder.mkdir()
    rng = np.random.default_rng(11)
    for k, name in enumerate(["m1", "m[1]", "m{1,2}", "m\\1", "m*"]):
        p = rng.dirichlet([1, 1], size=5 + k)
        pd.DataFrame({"y_true": rng.choice(["a", "b"], 5 + k), "proba_a": p[:, 0], "proba_b": p[:, 1]}).to_csv(
            folder / f"{name}.csv", index=False)  # fmt: skip
    duck, spark_table = both_engines(spark, folder, tmp_path)
    assert_same_rows(duck, spark_table)
    weights = spark_table.to_pandas().groupby("model")["weight"].sum().to_dict()
    assert {m: len(run.splits["all"].y_true) for m, run in vc.load_runs(folder).models.items()} == weights


def test_labels_name_classes_by_the_loaders_rule_in_spark(spark, tmp_path):
    """Classes 1 and 01: '01' is class 01, '1.0' and '+01.' class 1 (a whole number written with a point), in
    Spark as in DuckDB and the loader; '+1' names no class (Spark compared values: every one was class 1)."""
    rows = ["y_true,proba_1,proba_01"] + [f"{label},{p},{round(1 - p, 1)}" for label, p in
                                          [("01", 0.2), ("1", 0.7), ("1.0", 0.6), ("+01.", 0.9), ("01", 0.4)]]
    (tmp_path / "codes.csv").write_text("\n".join(rows) + "\n")
    duck, spark_table = both_engines(spark, tmp_path / "codes.csv", tmp_path)
    assert_same_rows(duck, spark_table)
    assert sorted(spark_table["y_true"].to_pylist()) == ["01", "01", "1", "1", "1"]
    (tmp_path / "plus.csv").write_text("y_true,proba_0,proba_1\n0,0.9,0.1\n+1,0.2,0.8\n")
    with pytest.raises(AggregateRefused, match="not among the classes"):
        aggregate(str(tmp_path / "plus.csv"), tmp_path / "plus.parquet", engine="spark", spark=spark)


def test_periods_are_utc_days_and_out_of_range_or_partial_times_refused_by_spark(spark, tmp_path):
    """Times with an offset fall on their UTC day in both engines; a year-9999 time, or one missing in part of a
    split, is refused by Spark with the loader's words, as by DuckDB."""
    (tmp_path / "tz.csv").write_text("y_true,proba_a,proba_b,timestamp\na,0.9,0.1,2024-05-01T23:30:00-05:00\n"
                                     "b,0.2,0.8,2024-05-01T01:00:00+09:00\n")  # fmt: skip
    duck, spark_table = both_engines(spark, tmp_path / "tz.csv", tmp_path, period="day")
    assert_same_rows(duck, spark_table)
    days = {t.isoformat() for t in spark_table["timestamp"].to_pylist()}
    assert days == {"2024-05-02T00:00:00", "2024-04-30T00:00:00"}
    for name, cells, message in [("y9999", ("9999-12-31", "2024-01-01"), "outside the supported range"),
                                 ("partial", ("", "2024-01-01"), "timestamp is missing in split 'all'")]:
        path = tmp_path / f"{name}.csv"
        path.write_text(f"y_true,proba_a,proba_b,timestamp\na,0.9,0.1,{cells[0]}\nb,0.2,0.8,{cells[1]}\n")
        with pytest.raises(AggregateRefused, match=message):
            aggregate(str(path), tmp_path / f"{name}.parquet", engine="spark", spark=spark, period="day")


def test_parquet_truths_are_true_and_false_as_the_loader_spells_them_in_spark(spark, tmp_path):
    """A Parquet bool label is "True"/"False" (the loader's str), in Spark as in DuckDB (both said "true")."""
    p = np.round(np.random.default_rng(0).random(40), 3)
    pd.DataFrame({"y_true": p > 0.5, "y_pred": p > 0.3, "confidence": np.maximum(p, 1 - p)}).to_parquet(
        tmp_path / "top.parquet", index=False)  # fmt: skip
    duck, spark_table = both_engines(spark, tmp_path / "top.parquet", tmp_path)
    assert_same_rows(duck, spark_table)
    assert set(spark_table["y_true"].to_pylist()) == set(spark_table["y_pred"].to_pylist()) == {"False", "True"}


@pytest.mark.parametrize("weight", ["1_000", "2\u00a0", "\u30002"])
def test_number_cells_the_loader_refuses_are_refused_by_spark(spark, weight, tmp_path):
    """Spark's cast reads '1_000' or a number beside a non-ASCII space; the loader refuses them, and so does
    the aggregate in either engine, with the loader's words."""
    path = tmp_path / "m.csv"
    path.write_text(f"y_true,proba_a,proba_b,weight\na,0.9,0.1,1\nb,0.2,0.8,{weight}\n", encoding="utf-8")
    assert "values that are not numbers" in str(loader_problems(path))
    for engine in ("duckdb", "spark"):
        extra = {"spark": spark} if engine == "spark" else {}
        with pytest.raises(AggregateRefused, match="column weight: values that are not numbers"):
            aggregate(str(path), tmp_path / f"{engine}.parquet", engine=engine, **extra)
