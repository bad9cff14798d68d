"""The SQL naming the rows off the sum is built without sqlglot's defensive copies (issue 33, sixth pass): it
must render the same text, in both dialects, as the copying construction it replaced (kept here), on plans
of any size, column names that need quoting, CSV text cells and NaN spelled per engine."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from optional import need

need("sqlglot")

from sqlglot import exp  # noqa: E402

from valuecore._io.aggregate import sql  # noqa: E402
from valuecore._io.columns import sql_is_nan  # noqa: E402


def _sum_deviation_with_copies(plan):
    """The replaced construction: every ``and_`` and operator copies what it is given."""
    cells = [sql._number(plan, c) for c in plan.proba_columns]
    valid = exp.and_(*(exp.and_(sql._not_null(p), exp.not_(sql_is_nan(p, plan.dialect)), p >= 0,
                                p <= exp.Literal.number("1e300")) for p in cells))  # fmt: skip
    deviation = exp.Abs(this=exp.Sub(this=sql._sum(cells), expression=exp.Literal.number(1)))
    return sql._case([(valid, deviation)])


def _rows_where_with_copies(plan, tolerance):
    condition = _sum_deviation_with_copies(plan) > exp.Literal.number(repr(tolerance))
    in_file = exp.and_(exp.column(sql.FILE_COLUMN).eq(exp.Placeholder()), condition)
    query = sql._select(exp.column(sql.ROW_COLUMN), source=sql.SOURCE_VIEW).where(in_file)
    return query.order_by(exp.Ordered(this=exp.column(sql.ROW_COLUMN))).limit(sql.SHOWN_ROWS)


NAMES = st.text(alphabet=st.sampled_from('ab_ "\'`;-)(.é'), min_size=1, max_size=6)


@st.composite
def plans(draw):
    classes = draw(st.lists(NAMES, min_size=1, max_size=8, unique=True))
    if draw(st.booleans()):  # plain names, as most logs have
        classes = [str(c) for c in range(len(classes) + 1)]
    kind = draw(st.sampled_from(["number", "text", None]))  # Parquet, CSV's text cells, unknown
    return _plan(classes, kind, draw(st.sampled_from(["duckdb", "spark"])))


def _plan(classes, kind, dialect):
    proba = tuple(f"proba_{c}" for c in classes)
    return sql._Plan(columns=proba + ("y_true",), column_types={c: kind for c in proba}, classes=tuple(classes),
                     proba_columns=proba, model="m", dialect=dialect)  # fmt: skip


TOLERANCES = st.sampled_from([1e-2, 1e-6, 0.5, 1e-12])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans(), tolerance=TOLERANCES)
def test_the_rows_off_the_sum_render_as_the_copying_construction(plan, tolerance):
    fresh = sql.render(sql._rows_where_sql(sql._off_by_more(plan, tolerance), copy=False), plan.dialect)
    copied = sql.render(_rows_where_with_copies(plan, tolerance), plan.dialect)
    assert fresh == copied
    # The default still copies: a condition kept elsewhere (a check's) is left as it was.
    condition = sql._off_by_more(plan, tolerance)
    before = condition.sql(dialect=plan.dialect)
    assert sql.render(sql._rows_where_sql(condition), plan.dialect) == copied
    assert condition.sql(dialect=plan.dialect) == before and condition.parent is None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans(), tolerance=TOLERANCES)
def test_the_per_file_checks_render_as_before(plan, tolerance):
    """check_sql counts the rows off the sum with the same conditions: its text is the replaced one's."""
    text, _ = sql.check_sql(plan)
    deviation = sql.render(_sum_deviation_with_copies(plan), plan.dialect)
    assert f"MAX({deviation})" in text
    for bound in (plan.sum_tolerance, plan.warn_tolerance):
        off = sql.render(_sum_deviation_with_copies(plan) > exp.Literal.number(repr(bound)), plan.dialect)
        assert off in text
    assert sql.render(sql._off_by_more(plan, tolerance), plan.dialect) == sql.render(
        _sum_deviation_with_copies(plan) > exp.Literal.number(repr(tolerance)), plan.dialect)


def test_fifty_classes_as_the_benchmark_has_them():
    """The width the change was made for, in both dialects and on typed and text cells."""
    classes = [str(c) for c in range(50)]
    for dialect in ("duckdb", "spark"):
        for kind in ("number", "text"):
            plan = _plan(classes, kind, dialect)
            fresh = sql.render(sql._rows_where_sql(sql._off_by_more(plan, 1e-6), copy=False), dialect)
            assert fresh == sql.render(_rows_where_with_copies(plan, 1e-6), dialect)
