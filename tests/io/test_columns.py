"""The one description of a run file's columns (valuecore/_io/columns.py): each row rule means the same
in numpy (the in-memory loader) and in SQL (the aggregation), and both readers take it from there."""

from __future__ import annotations

import typing

import duckdb
import numpy as np
import pandas as pd
import pytest
from helpers.inputs import NUMERIC_RULES, VALUES

import valuecore as vc
from valuecore._io import columns
from valuecore._io.aggregate import aggregate


@pytest.mark.parametrize("rule", NUMERIC_RULES)
def test_each_rule_holds_on_the_same_values_in_numpy_and_in_sql(rule):
    values = np.array([np.nan if v is None else v for v in VALUES], dtype=np.float64)
    text_is_no_number = np.zeros(len(VALUES), bool)
    text_is_no_number[1] = True  # a cell 'abc': NaN here, reported apart, so no rule may name it again
    in_numpy = columns.rule_mask(rule, values, text_is_no_number)
    con = duckdb.connect()
    con.execute("CREATE TABLE cells (i INTEGER, v DOUBLE, text_no_number BOOLEAN)")
    con.executemany("INSERT INTO cells VALUES (?, ?, ?)",
                    [(i, v, bool(t)) for i, (v, t) in enumerate(zip(VALUES, text_is_no_number))])
    condition = columns.rule_sql(rule, "v", "text_no_number")
    in_sql = {i for (i,) in con.execute(f"SELECT i FROM cells WHERE {condition}").fetchall()}
    assert in_sql == set(np.flatnonzero(in_numpy).tolist()), rule
    assert "isfinite" not in columns.rule_sql(rule, "v", "text_no_number", dialect="spark").lower()  # Spark lacks it
    assert in_numpy.any() and not in_numpy.all(), rule  # the grid tells every rule apart from a constant


def test_every_rule_of_the_spec_has_both_forms_and_a_message():
    for spec in columns.COLUMNS:
        for rule in spec.rules:
            assert rule.rule in typing.get_args(columns.Rule) and rule.text(spec.name)
            columns.rule_sql(rule.rule, "v", None, "t")
            if rule.rule != "empty":
                columns.rule_mask(rule.rule, np.zeros(1))
    with pytest.raises(ValueError):
        columns.rule_sql("nonsense", "v")


def test_the_loaders_names_come_from_the_spec():
    assert columns.RESERVED_COLUMNS == ("model", "split", "id", "timestamp", "weight", "y_true", "y_pred",
                                        "confidence")
    assert columns.spec_of("proba_cat").family == "probability" and columns.spec_of("score") is None
    assert "label" in columns.LABEL_LIKE and columns.is_run_column("logit_a") and not columns.is_run_column("x")


def aggregate_then_load(frame: pd.DataFrame, tmp_path):
    raw = tmp_path / "model.parquet"
    frame.to_parquet(raw)
    out = tmp_path / "agg.parquet"
    aggregate(str(raw), out)
    return vc.load_runs(raw), vc.load_runs(out)


def test_a_confidence_a_hair_above_one_is_read_as_one_by_both_readers(tmp_path):
    """float32 round-off: the loader reads 1.0000005 as 1; the aggregation accepts it too (it refused it
    while its check was written apart from the loader's)."""
    frame = pd.DataFrame({"y_pred": ["a", "b", "a", "b"], "confidence": [1 + 5e-7, 0.7, 0.6, 1.0],
                          "y_true": ["a", "b", "b", "a"]})
    raw, agg = aggregate_then_load(frame, tmp_path)
    assert not [p for p in raw.problems + agg.problems if p.severity == "error"]
    one, other = raw.models["model"].splits["all"], agg.models["model"].splits["all"]
    assert one.confidence.max() == other.confidence.max() == 1.0
    use_case = vc.UseCase(1, 0, -1)
    assert sorted(one.confidence) == sorted(other.confidence) == [0.6, 0.7, 1.0, 1.0]
    fitted = [vc.fit_policy("threshold", vc.presort(run), use_case).threshold for run in (one, other)]
    assert fitted[0] == fitted[1] == 0.7


def test_a_stored_nan_gets_the_loaders_messages_and_no_others(tmp_path):
    """Parquet can hold NaN itself (pandas writes a null): DuckDB orders NaN above every number, and the
    aggregation also called it infinite and out of range, which the loader does not."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from helpers.inputs import aggregate_problems, loader_problems

    nan = float("nan")
    for name, table in {
        "proba": pa.table({"proba_a": pa.array([0.9, nan, 0.3], from_pandas=False),
                           "proba_b": [0.1, 0.5, 0.7], "y_true": ["a", "b", "a"]}),
        "top_label": pa.table({"y_pred": ["a", "b", "a"], "confidence": pa.array([0.9, nan, 0.3], from_pandas=False),
                               "y_true": ["a", "b", "b"]}),
        "weight": pa.table({"proba_a": [0.9, 0.5, 0.3], "proba_b": [0.1, 0.5, 0.7], "y_true": ["a", "b", "a"],
                            "weight": pa.array([1.0, nan, 2.0], from_pandas=False)}),
    }.items():
        path = tmp_path / f"{name}.parquet"
        pq.write_table(table, path)
        expected = loader_problems(path)
        assert len(expected) == 1 and "row 2" in expected[0], expected
        assert aggregate_problems(path, tmp_path) == expected, name
