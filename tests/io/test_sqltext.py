"""A DuckDB aggregation builds its SQL as text (``valuecore._io.sqltext``) without importing sqlglot (issue 33):
every query it builds must be, character for character, the text sqlglot renders in DuckDB's dialect for the
same construction. The reference is the construction itself built with sqlglot's expressions (the default
builder, as Spark still uses it): Hypothesis over plans (1-50 classes, names needing quotes, typed, CSV-text
and unknown cells, tolerances, weights, groups, periods, resolutions), the loader's row rules, literals of any
text and number, and the statements a real DuckDB aggregation ran, recorded both ways."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from optional import need

need("duckdb")
need("sqlglot")

from valuecore._io import columns as run_columns  # noqa: E402
from valuecore._io import sqltext  # noqa: E402
from valuecore._io.aggregate import AggregateRefused, aggregate  # noqa: E402
from valuecore._io.aggregate import sql  # noqa: E402
from valuecore._io.aggregate.duckdb_engine import _DuckDB, copy_sql  # noqa: E402
from valuecore._io.aggregate.results import CANDIDATE_RESOLUTIONS  # noqa: E402
from valuecore._io.sqltext import building_for, exp  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Names a log may carry: quotes of both kinds, backslashes, unicode, spaces, SQL's own words and punctuation.
HOSTILE = st.lists(st.sampled_from(list('ab_ "\'\\`;-)(.é€日\t') + ["SELECT", "from", "NULL", "--"]),
                   min_size=1, max_size=8).map("".join)  # fmt: skip


def both(build) -> tuple:
    """What ``build()`` returns with sqlglot's expressions (the reference) and with DuckDB's text nodes."""
    reference = build()
    with building_for("duckdb"):
        ours = build()
    return reference, ours


def _render(query) -> str:
    return sql.render(query, "duckdb")


# ------------------------------------------------------------------ literals and names
NUMBERS = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(allow_nan=False, allow_infinity=False),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.sampled_from(["1e15", "1e300", "-1.50", "1e+50", "-1e-400", "1_000", "1.7976931348623157e308", "-0.0"]),
)


@SETTINGS
@given(name=HOSTILE, text=st.text(max_size=12), number=NUMBERS, schema=HOSTILE)
def test_names_strings_and_numbers_render_as_sqlglot_renders_them(name, text, number, schema):
    def build():
        entry = exp.PropertyEQ(this=exp.to_identifier(name, quoted=True), expression=exp.Literal.string(text))
        return [_render(exp.column(name)), _render(exp.Literal.string(text)), _render(exp.Literal.number(number)),
                _render(exp.alias_(exp.Literal.number(number), name)), _render(exp.Struct(expressions=[entry])),
                _render(exp.select(exp.Star()).from_(exp.table_(name, db=schema, catalog="source_db_0"))),
                _render(exp.convert(number if not isinstance(number, str) else text))]  # fmt: skip

    reference, ours = both(build)
    assert ours == reference


# ------------------------------------------------------------------ plans, and every query a plan gives
KINDS = st.sampled_from(["number", "text", "bool", "time", None])  # Parquet's types, CSV's text, unknown


@st.composite
def plans(draw):
    n_classes = draw(st.integers(1, 50))
    if draw(st.booleans()):
        classes = draw(st.lists(HOSTILE, min_size=n_classes, max_size=n_classes, unique=True))
    else:  # integer classes: numbers matched as numbers
        start = draw(st.integers(-3, 3))
        classes = [str(start + i) for i in range(n_classes)]
    top_label = draw(st.booleans())
    proba = () if top_label else tuple(f"proba_{c}" for c in classes)
    columns = list(proba) + (["y_pred", "confidence"] if top_label else [])
    columns += [c for c in ("y_true", "model", "split", "weight", "timestamp") if draw(st.booleans())]
    period = draw(st.sampled_from([None, "day", "week", "month"])) if "timestamp" in columns else None
    files = draw(st.lists(st.tuples(HOSTILE, HOSTILE), max_size=3))
    return sql._Plan(
        columns=tuple(columns), column_types={c: draw(KINDS) for c in columns}, classes=tuple(classes),
        proba_columns=proba, model=draw(HOSTILE), period=period, file_models=tuple(files),
        resolution=draw(st.sampled_from([None, 1e-4, 1e-05, 0.001, 0.3, 0.5])),
        sum_tolerance=draw(st.floats(1e-12, 0.5)), warn_tolerance=draw(st.floats(1e-15, 0.5)), dialect="duckdb",
    )  # fmt: skip


def every_query(plan, other) -> list[str]:
    """The text of every query the DuckDB path can build for ``plan`` (``other``: a second source)."""
    texts = [sql.aggregate_sql(plan), _render(sql.grouped_sql(plan)), _render(sql.presorted_sql(plan)),
             _render(sql.output_sql(plan)), _render(sql._group_counts_sql(plan)), _render(sql._partly_labelled_sql())]
    texts += [_render(sql.groups_at_sql(plan, r)) for r in CANDIDATE_RESOLUTIONS]
    text, checks = sql.check_sql(plan)
    texts.append(text)
    for check in checks:
        texts.append(_render(sql._rows_where_sql(check.bad)))
        if check.names_labels:
            texts.append(_render(sql._labels_where_sql(plan, check)))
    if not plan.top_label:
        for tolerance in (plan.sum_tolerance, plan.warn_tolerance):
            texts.append(_render(sql._rows_where_sql(sql._off_by_more(plan, tolerance), copy=False)))
    if plan.has("y_true"):
        texts += [_render(sql._split_labels_sql(plan)), _render(sql._unlabelled_files_sql(plan)),
                  _render(sql._rows_where_sql(sql._unlabelled_in_split(plan)))]  # fmt: skip
    texts += [_render(sql._distinct_count_sql(plan, c)) for c in ("model", "split") if plan.has(c)]
    if plan.has("model"):
        texts.append(_render(sql._models_in_files_sql(plan)))
    if plan.has("y_pred") or plan.has("y_true"):
        texts.append(_render(sql._label_values_sql(plan)))
    texts += [_render(sql.written_sql(["kept_groups_0", "kept_groups_1"], [plan, other])),
              _render(sql.written_sql(["kept_groups_0"], [plan], presorted=True)),
              _render(copy_sql(["kept_groups_0"], [plan], presorted=True)),
              _render(copy_sql(["kept_groups_0", "kept 1"], [plan, other]))]  # fmt: skip
    return texts


@SETTINGS
@given(plan=plans(), other=plans())
def test_every_query_of_a_plan_renders_as_sqlglot_renders_it(plan, other):
    reference, ours = both(lambda: every_query(plan, other))
    assert len(ours) == len(reference)
    for mine, theirs in zip(ours, reference):
        assert mine == theirs


def test_fifty_classes_as_the_benchmark_has_them():
    """The widths the benchmark runs, on Parquet's typed cells and on CSV's text, with and without weights."""
    classes = tuple(map(str, range(50)))
    for kind in ("number", "text"):
        for extra in ((), ("weight", "split")):
            proba = tuple(f"proba_{c}" for c in classes)
            columns = proba + ("y_true",) + extra
            plan = sql._Plan(columns=columns, column_types={c: kind for c in columns}, classes=classes,
                             proba_columns=proba, model="m")  # fmt: skip
            reference, ours = both(lambda: every_query(plan, plan))
            assert ours == reference


RULES = ["empty", "nan", "infinite", "not_finite", "negative", "outside_unit", "weight_range"]


@SETTINGS
@given(rule=st.sampled_from(RULES), name=HOSTILE, text_cells=st.booleans())
def test_the_row_rules_render_as_sqlglot_renders_them(rule, name, text_cells):
    """``columns.rule_condition`` (and the NaN and finite tests) on a number, a CSV text cell and a label."""
    kind = "text" if text_cells else "number"
    plan = sql._Plan(columns=(name,), column_types={name: kind}, classes=("a",), proba_columns=(), model="m")

    def build():
        value = sql._number(plan, name)
        conditions = [run_columns.rule_condition(rule, value, sql._not_a_number(plan, name), sql._text(plan, name)),
                      run_columns.sql_is_nan(value), run_columns.sql_is_finite(value)]  # fmt: skip
        return [_render(c) for c in conditions]

    reference, ours = both(build)
    assert ours == reference


def test_a_rule_without_a_sql_form_is_refused_by_both_builders():
    for engine in ("spark", "duckdb"):
        with building_for(engine), pytest.raises(ValueError, match="no SQL form"):
            run_columns.rule_condition("nonsense", exp.column("v"))


# ------------------------------------------------------------------ the statements a real aggregation runs
def _statements(monkeypatch, run) -> tuple[list[str], list[str]]:
    """Every SQL text DuckDB was given while ``run()`` aggregated: with the DuckDB text nodes (as shipped),
    then with the aggregation building sqlglot's expressions (the reference)."""
    recorded: list[str] = []
    execute = _DuckDB._execute

    def recording(self, text, parameters=None):
        recorded.append(text)
        return execute(self, text, parameters)

    monkeypatch.setattr(_DuckDB, "_execute", recording)
    run()
    ours, recorded[:] = list(recorded), []
    import valuecore._io.aggregate as package

    monkeypatch.setattr(package, "building_for", lambda engine: building_for("spark"))  # sqlglot's expressions
    run()
    return ours, list(recorded)


def _hostile_log(folder: Path, n: int = 60) -> pd.DataFrame:
    classes = ['it\'s "a"', "SELECT", "é\\x"]
    frame = pd.DataFrame({f"proba_{c}": [1 / 3] * n for c in classes})
    frame["y_true"] = [classes[i % 3] for i in range(n)]
    frame["split"] = ["va'l", "te\"st"] * (n // 2)
    frame["weight"] = [1.0, 2.0, 0.5] * (n // 3)
    return frame


@pytest.mark.parametrize("shape", ["parquet", "csv", "csv_failing", "top_label_numbers", "two_sources"])
def test_a_duckdb_aggregation_runs_the_statements_sqlglot_would_render(tmp_path, monkeypatch, shape):
    frame = _hostile_log(tmp_path)
    sources = []
    if shape == "parquet":
        frame.to_parquet(tmp_path / "log.parquet")
        sources = [str(tmp_path / "log.parquet")]
    elif shape in ("csv", "csv_failing"):
        frame = frame.astype(object)
        if shape == "csv_failing":
            frame.loc[3, "proba_SELECT"] = "not a number"
            frame.loc[5, "weight"] = -1.0
        frame.to_csv(tmp_path / "log.csv", index=False)
        sources = [str(tmp_path / "log.csv")]
    elif shape == "top_label_numbers":
        pd.DataFrame({"y_pred": [1, 2, 3, 2] * 10, "confidence": [0.5, 0.25, 0.75, 0.125] * 10,
                      "y_true": [1, 3, 3, 7] * 10, "timestamp": ["2024-05-01"] * 40}).to_parquet(tmp_path / "t.parquet")
        sources = [str(tmp_path / "t.parquet")]
    else:
        frame.to_parquet(tmp_path / "first run.parquet")
        frame.assign(model="other 'one'").to_parquet(tmp_path / "second.parquet")
        sources = [str(tmp_path / "first run.parquet"), str(tmp_path / "second.parquet")]

    def run():
        try:
            aggregate(sources, tmp_path / "out.parquet", period="day" if shape == "top_label_numbers" else None)
        except AggregateRefused:
            pass

    ours, reference = _statements(monkeypatch, run)
    assert len(ours) > 10 and ours == reference


# ------------------------------------------------------------------ what each engine imports
def test_a_duckdb_aggregation_never_imports_sqlglot(tmp_path):
    _hostile_log(tmp_path).to_parquet(tmp_path / "log.parquet")
    script = (
        "import sys\n"
        "from valuecore._cli.commands import main\n"
        f"code = main(['aggregate', {str(tmp_path / 'log.parquet')!r}, '--out', {str(tmp_path / 'agg.parquet')!r}])\n"
        "assert code == 0, code\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sqlglot'))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "agg.parquet").exists()


def test_spark_and_every_caller_outside_an_aggregation_still_build_with_sqlglot():
    plan = sql._Plan(columns=("proba_a", "proba_b", "y_true"), column_types={}, classes=("a", "b"),
                     proba_columns=("proba_a", "proba_b"), model="m", dialect="spark")  # fmt: skip
    for context in (building_for("spark"), building_for("nothing")):
        with context:
            assert type(sql.grouped_sql(plan)).__module__.startswith("sqlglot")
    assert type(sql.grouped_sql(plan)).__module__.startswith("sqlglot")
    with building_for("duckdb"):
        duckdb_text = sql.grouped_sql(plan)
        assert isinstance(duckdb_text, sqltext.Expression)
        with pytest.raises(ValueError, match="DuckDB's text"):
            duckdb_text.sql(dialect="spark")


def test_a_sqlglot_node_in_a_duckdb_tree_fails_loudly():
    # A sqlglot node's ``text`` is a method: written into an f-string it would reach DuckDB as its repr, and
    # DuckDB's parse error would be reported as the user's file's fault.
    from sqlglot import exp as sqlglot_exp

    foreign = sqlglot_exp.column("x")
    with building_for("duckdb"):
        for build in (lambda: exp.and_(foreign, exp.column("y")), lambda: exp.not_(foreign),
                      lambda: exp.alias_(foreign, "z"), lambda: exp.column("y") < foreign):  # fmt: skip
            with pytest.raises((AttributeError, TypeError)):
                build()


def test_a_progress_callback_builds_with_sqlglot_during_a_duckdb_aggregation():
    from valuecore._io.aggregate import _with_sqlglot

    seen = []
    report = _with_sqlglot(lambda fraction: seen.append((fraction, type(exp.column("x")).__module__)))
    with building_for("duckdb"):
        report(0.5)
        assert type(exp.column("x")).__module__ == sqltext.__name__  # the aggregation's own builder is back
    assert len(seen) == 1 and seen[0][0] == 0.5 and seen[0][1].startswith("sqlglot")
