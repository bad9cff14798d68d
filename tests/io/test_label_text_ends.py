"""A text label, model or split cell is stripped of Python's whitespace set in the aggregation only when one of
its ends is in that set (issue 33, eighth pass): the ends are read as DuckDB's ``text[1]`` and ``text[-1]``,
not ``LEFT``/``RIGHT`` (0.035-0.045 s of CPU a million cells each). The same question must give the same
cells, tables and refusals as the construction it replaced (kept here), and as Python's ``str.strip()``, on any
text: whitespace of every kind at either end or inside, combining marks, characters that join with the next
one (U+0600), C1 controls next to U+0085, emoji joined by U+200D, the empty text and NULL."""

from __future__ import annotations

import tempfile
import unicodedata
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
from helpers.inputs import aggregate_problems
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from optional import need

need("duckdb")

import duckdb  # noqa: E402

from valuecore._io.aggregate import AggregateRefused, aggregate  # noqa: E402
from valuecore._io.aggregate import sql  # noqa: E402
from valuecore._io.columns import WHITESPACE  # noqa: E402
from valuecore._io.sqltext import building_for, exp  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Every whitespace character, and characters next to the set's edges or that combine with their neighbours.
CHARACTERS = list(WHITESPACE) + list("ab!~\x00\x1b\x7f\x80\x84\x86\u00e9\u0301\u0600\u200b\u200d\ufeff\u65e5") + [
    "\U0001F468", "\U0001F469"]
CELLS = st.one_of(st.none(), st.text(st.sampled_from(CHARACTERS), max_size=6))


def _stripped_by_left_and_right(text, dialect):
    """The replaced construction: each end read with ``LEFT(text, 1)`` and ``RIGHT(text, 1)``."""
    spaces = sql._text_literal(WHITESPACE)

    def end_in_set(side):
        end = exp.Anonymous(this=side, expressions=[text.copy(), sql._number_literal(1)])
        return exp.Anonymous(this="contains", expressions=[spaces.copy(), end])

    trimmed = exp.Trim(this=text.copy(), expression=spaces.copy())
    return sql._case([(exp.or_(end_in_set("left"), end_in_set("right"), copy=False), trimmed)], text)


def _python(cell):
    """What the loader makes of a label cell: stripped, None when nothing is left."""
    if cell is None or not cell.strip():
        return None
    # In Unicode's composed form (NFC), as the loader reads it; a text holding NUL stays as written (the
    # aggregation's NFC would end it there).
    return cell.strip() if "\x00" in cell else unicodedata.normalize("NFC", cell.strip())


def _cells_through_the_aggregation_sql(cells, stripped=None):
    """The cells as the aggregation's label text (``sql._text`` of a text column, DuckDB's builder), evaluated
    by DuckDB; ``stripped``: the construction to strip with (this module's by default)."""
    plan = sql._Plan(columns=("y_true",), column_types={"y_true": "text"}, classes=("a",), proba_columns=(),
                     model="m")  # fmt: skip
    original = sql._stripped
    try:
        sql._stripped = stripped or original
        with building_for("duckdb"):
            text = sql.render(sql._text(plan, "y_true"), "duckdb")
    finally:
        sql._stripped = original
    with duckdb.connect() as con:
        con.execute("CREATE TABLE cells (i INTEGER, y_true VARCHAR)")
        con.executemany("INSERT INTO cells VALUES (?, ?)", list(enumerate(cells)))
        return [row[0] for row in con.execute(f"SELECT {text} FROM cells ORDER BY i").fetchall()]


@SETTINGS
@given(cells=st.lists(CELLS, min_size=1, max_size=20))
def test_a_cell_is_stripped_as_python_strips_it_and_as_left_and_right_did(cells):
    ours = _cells_through_the_aggregation_sql(cells)
    assert ours == [_python(cell) for cell in cells]
    assert ours == _cells_through_the_aggregation_sql(cells, _stripped_by_left_and_right)


def test_the_cells_that_tell_the_ends_apart():
    """The cases a wrong end, a wrong index or a byte instead of a character would get wrong, named."""
    cells = ["a ", " a", "a\u3000", "\u3000a", "\u0600\u2000", "a\u0301", "\x85a", "a\x85", "\x84a", "a\x84",
             "a\u200b", "", " ", "\u2028", None, "a\r\n", "\U0001F468\u200d\U0001F469\u00a0",
             "a\x00\u00e9", "a\x00\u00fc", "e\u0301b", " e\u0301\t"]  # fmt: skip
    assert _cells_through_the_aggregation_sql(cells) == [_python(cell) for cell in cells]


def test_spark_still_reads_the_ends_with_left_and_right():
    """Spark has no index into a string: its SQL keeps LEFT and RIGHT (sqlglot's builder)."""
    plan = sql._Plan(columns=("y_true",), column_types={"y_true": "text"}, classes=("a",), proba_columns=(),
                     model="m", dialect="spark")  # fmt: skip
    text = sql.render(sql._text(plan, "y_true"), "spark")
    assert "LEFT(" in text and "RIGHT(" in text and "ARRAY_EXTRACT" not in text


# A label's core, its whitespace around it, and labels that name no class or nothing at all.
CORES = st.sampled_from(["a", "b", "\u00e9t\u00e9", "x y"])
AROUND = st.text(st.sampled_from(" \t\u00a0\u2003\u3000\x85\u0301"), max_size=2)
LABELS = st.one_of(st.builds(lambda before, core, after: before + core + after, AROUND, CORES, AROUND),
                   st.sampled_from(["z", " ", "", "\u0600\u2000"]))  # fmt: skip


def _result(path: Path, folder: Path, stripped):
    """The aggregate's table, or its refusal's messages, with ``stripped`` as the construction."""
    original = sql._stripped
    sql._stripped = stripped
    try:
        out = folder / "agg.parquet"
        out.unlink(missing_ok=True)
        try:
            aggregate(str(path), out, resolution=0.1)
        except AggregateRefused as refused:
            return [str(p) for p in refused.problems]
        return pq.read_table(out)
    finally:
        sql._stripped = original


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(2, 12), suffix=st.sampled_from([".parquet", ".csv"]),
       weighted=st.booleans())  # fmt: skip
def test_an_aggregate_is_what_left_and_right_made_of_it(data, n, suffix, weighted):
    """Tables equal (values, order, metadata) or the same refusal, word for word: labels equal once stripped,
    labels naming no class, empty ones, splits and models with whitespace around them."""
    labels = data.draw(st.lists(LABELS, min_size=n, max_size=n))
    a = data.draw(st.lists(st.sampled_from([0.05, 0.3, 0.55, 0.8, 0.95]), min_size=n, max_size=n))
    frame = pd.DataFrame({"proba_a": a, "proba_b": [1 - p for p in a], "y_true": labels,
                          "split": data.draw(st.lists(st.sampled_from(["val", " val", "test\t", "\u3000"]),
                                                      min_size=n, max_size=n)),
                          "model": data.draw(st.lists(st.sampled_from(["m", "m ", "\u00a0n"]), min_size=n,
                                                      max_size=n))})  # fmt: skip
    if weighted:
        frame["weight"] = data.draw(st.lists(st.sampled_from([0.1, 0.2, 0.3, 1.0, 7.0]), min_size=n, max_size=n))
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        path = folder / f"run{suffix}"
        frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path, index=False)
        ours = _result(path, folder, sql._stripped)
        theirs = _result(path, folder, _stripped_by_left_and_right)
    if isinstance(ours, list) or isinstance(theirs, list):
        # The same messages, word for word; their order is not compared: the problems of partly labelled splits
        # come in the order DuckDB groups (model, split), which differs from run to run in either construction.
        assert isinstance(ours, list) and isinstance(theirs, list) and sorted(ours) == sorted(theirs)
    else:
        assert ours.equals(theirs, check_metadata=True)


def test_two_labels_equal_once_stripped_are_one_class_and_an_empty_one_is_refused(tmp_path):
    frame = pd.DataFrame({"proba_a": [0.9, 0.8, 0.3], "proba_b": [0.1, 0.2, 0.7], "y_true": ["a\u3000", "a", "b"]})
    frame.to_parquet(tmp_path / "run.parquet", index=False)
    aggregate(str(tmp_path / "run.parquet"), tmp_path / "one_class.parquet")
    assert sorted(pq.read_table(tmp_path / "one_class.parquet").column("y_true").to_pylist()) == ["a", "a", "b"]
    frame["split"] = ["val", "\u2003", "val"]
    frame.to_parquet(tmp_path / "split.parquet", index=False)
    problems = aggregate_problems(tmp_path / "split.parquet", tmp_path)
    assert len(problems) == 1 and "split is empty" in problems[0], problems
