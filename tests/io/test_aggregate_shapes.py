"""The grouping's cheaper SQL across data shapes gives what the SQL it replaced gave, row for row.

``_rows_sql`` tests a row's probability cells once through their sum (finite) and least cell (not negative)
instead of four checks per cell; the reference here is the earlier form, built from the checks themselves:
``CASE WHEN <any check fails> THEN Infinity ELSE |sum - 1| END``. Both run in DuckDB on rows that hit every
edge (NULL, NaN, both infinities, negative, -0.0, huge finite cells, sums that overflow, empty splits) and
must agree bit for bit, NaN for NaN.
"""

from __future__ import annotations

import math
from functools import reduce

import duckdb
import pytest
from sqlglot import exp

from valuecore._io.aggregate.sql import _INFINITE, _Plan, _checks, _rows_sql, _sum, render

EDGES = [0.0, -0.0, 0.25, 1.0, 1e305, 1.7e308, -1e-300, -1.0, math.inf, -math.inf, math.nan, None]


def _plan(classes: int, split: bool) -> _Plan:
    proba = tuple(f"proba_{c}" for c in range(classes))
    columns = proba + ("y_true",) + (("split",) if split else ())
    types = {**{p: "number" for p in proba}, "y_true": "number", "split": "text"}
    return _Plan(columns=columns, column_types=types, classes=tuple(map(str, range(classes))),
                 proba_columns=proba, model="m")  # fmt: skip


def _rows(classes: int) -> list[tuple]:
    """Every edge value in every column position, beside ordinary cells; a few rows of all-huge cells."""
    rows = []
    for position in range(classes):
        for edge in EDGES:
            cells = [1.0 / classes] * classes
            cells[position] = edge
            rows.append(tuple(cells))
    rows.append(tuple([1e308] * classes))  # finite cells whose sum overflows
    rows.append(tuple([0.5000001] + [0.4999999 / (classes - 1)] * (classes - 1)))  # off within a tolerance
    return rows


def _reference_deviation(plan: _Plan) -> exp.Expression:
    """The earlier per-row deviation: Infinity when any check of the row fails, else |sum - 1|."""
    bad = [c.bad for c in _checks(plan)]
    cells = [exp.cast(exp.column(p), "DOUBLE") for p in plan.proba_columns]
    total = reduce(exp.Expression.__add__, cells)
    return exp.Case(ifs=[exp.If(this=exp.or_(*bad), true=_INFINITE.copy())], default=exp.Abs(this=total - 1))


@pytest.mark.parametrize("classes", [2, 3, 7])
@pytest.mark.parametrize("split", [False, True])
def test_the_rows_deviation_equals_the_checks_one_by_one(classes, split):
    plan = _plan(classes, split)
    con = duckdb.connect(":memory:")
    columns = ", ".join([f"proba_{c} DOUBLE" for c in range(classes)] + ["y_true INTEGER", "split VARCHAR"])
    con.execute(f"CREATE TABLE source_cells ({columns})")
    marks = ", ".join(["?"] * (classes + 2))
    rows = _rows(classes)
    splits = ["val", "", None, " test "]
    con.executemany(f"INSERT INTO source_cells VALUES ({marks})",
                    [(*cells, i % classes, splits[i % len(splits)]) for i, cells in enumerate(rows)])  # fmt: skip
    con.execute("CREATE TABLE numbered AS SELECT row_number() OVER () AS i, * FROM source_cells")
    new = render(_rows_sql(plan), "duckdb").replace('FROM "source_cells"', 'FROM "numbered"')
    new = new.replace("SELECT ", 'SELECT "i", ', 1)
    reference = exp.select(exp.column("i"), exp.alias_(_reference_deviation(plan), "deviation")).from_("numbered")
    got = con.execute(f'SELECT "i", "deviation" FROM ({new}) ORDER BY "i"').fetchall()
    want = con.execute(f"SELECT * FROM ({render(reference, 'duckdb')}) ORDER BY i").fetchall()
    assert len(got) == len(want) == len(rows)
    for (i, a), (j, b) in zip(got, want):
        assert i == j
        assert (a is None and b is None) or (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)), (i, rows[i - 1], a, b)
    assert any(a == math.inf for _, a in got) and any(a is not None and a < math.inf for _, a in got)


def test_a_sum_adds_left_to_right_as_the_plus_operator_does():
    terms = [exp.cast(exp.column(f"p{i}"), "DOUBLE") for i in range(5)]
    assert render(_sum(terms), "duckdb") == render(reduce(exp.Expression.__add__, terms), "duckdb")
    assert [t.sql() for t in terms] == [f"CAST(p{i} AS DOUBLE)" for i in range(5)]  # left as they were
