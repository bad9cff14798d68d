"""The SQL text both engines run for one source (its :class:`_Plan`): the per-row columns, the grouping,
the output's order, and the loader's row checks as SQL conditions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


from ..columns import (
    NOT_A_NUMBER, PROBA_PREFIX, SPECS, UNKNOWN_LABELS, Dialect, RowRule, rule_sql, rules_of, spec_of, sql_is_nan,
)
from ..format import DEFAULT_SPLIT, NUMERIC_MISSING, SHOWN_ROWS, _short_list
from .results import SOURCE_VIEW, FILE_COLUMN, ROW_COLUMN, CELLS_VIEW, _JUST_BELOW_ONE


def _q(name: str) -> str:
    """A quoted identifier; both engines read double quotes (Spark with doubleQuotedIdentifiers)."""
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str, dialect: Dialect = "duckdb") -> str:
    """A string literal. Spark reads a backslash in one as an escape (``'a\\b'`` is "a" and a backspace), so
    for Spark backslashes are doubled too: a class, model or file name reaches both engines as written."""
    if dialect == "spark":
        text = text.replace("\\", "\\\\")
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class _Plan:
    """Everything the SQL needs to know about one source."""

    columns: tuple[str, ...]
    column_types: dict
    classes: tuple[str, ...] | None  # None until inferred for a top-label source
    proba_columns: tuple[str, ...]
    model: str
    resolution: float | None = None
    period: str | None = None
    sum_tolerance: float = 1e-2
    warn_tolerance: float = 1e-6
    file_models: tuple[tuple[str, str], ...] = ()
    dialect: Dialect = "duckdb"  # the engine's: one function (NaN) is spelled apart

    @property
    def top_label(self) -> bool:
        return not self.proba_columns

    def has(self, column: str) -> bool:
        return column in self.columns


def _number(plan: _Plan, column: str) -> str:
    """A column as DOUBLE; text (CSV) is trimmed and the loader's missing spellings are NULL."""
    if plan.column_types.get(column) in ("number", "bool", None):
        return f"CAST({_q(column)} AS DOUBLE)"
    missing = ", ".join(_lit(m, plan.dialect) for m in NUMERIC_MISSING)
    text = f"TRIM(CAST({_q(column)} AS STRING))"
    return f"(CASE WHEN {text} IN ({missing}) THEN NULL ELSE TRY_CAST({text} AS DOUBLE) END)"


def _not_a_number(plan: _Plan, column: str) -> str | None:
    """Rows whose text is not a number, or None when the column is numeric."""
    if plan.column_types.get(column) in ("number", "bool", None):
        return None
    missing = ", ".join(_lit(m, plan.dialect) for m in NUMERIC_MISSING)
    text = f"TRIM(CAST({_q(column)} AS STRING))"
    return f"COALESCE({text} NOT IN ({missing}) AND TRY_CAST({text} AS DOUBLE) IS NULL, FALSE)"


def _text(plan: _Plan, column: str) -> str:
    """A label-like column as trimmed text, NULL when empty; whole-number floats read as integers."""
    q = _q(column)
    if plan.column_types.get(column) == "number":
        as_text = (
            f"CASE WHEN CAST({q} AS DOUBLE) = FLOOR(CAST({q} AS DOUBLE)) AND ABS(CAST({q} AS DOUBLE)) < 1e15 "
            f"THEN CAST(CAST({q} AS BIGINT) AS STRING) ELSE CAST({q} AS STRING) END"
        )
    else:
        as_text = f"CAST({q} AS STRING)"
    return f"NULLIF(TRIM({as_text}), '')"


def _class_of(plan: _Plan, column: str) -> str:
    """A label column mapped to its class name; NULL when empty or not a class."""
    if plan.column_types.get(column) == "number" and all(_is_integer_text(c) for c in plan.classes):
        # A number equals the integer class c exactly when its text (the integer's digits) would: compared as
        # a number, without making text of every row.
        value = f"CAST({_q(column)} AS DOUBLE)"
        cases = " ".join(f"WHEN {value} = {int(c)} THEN {_lit(c, plan.dialect)}" for c in plan.classes)
        return f"(CASE {cases} ELSE NULL END)"
    text = _text(plan, column)
    cases = []
    for c in plan.classes:
        condition = f"{text} = {_lit(c, plan.dialect)}"
        if _is_integer_text(c):
            condition += f" OR TRY_CAST({text} AS DOUBLE) = {int(c)}"
        cases.append(f"WHEN {condition} THEN {_lit(c, plan.dialect)}")
    return f"(CASE {' '.join(cases)} ELSE NULL END)"


def _true_by_number(plan: _Plan) -> bool:
    """Whether ``y_true`` is grouped as its number and named once per group: a number column whose classes are
    all integers. Per row that is a cast instead of a CASE over every class (at 50 classes that CASE made the
    grouping 1.23x slower, one profile); an integer class is named by its digits, so a number maps to the
    class whose name it spells, and numbers that name no class keep groups of their own, refused per group."""
    return (plan.has("y_true") and plan.column_types.get("y_true") == "number"
            and all(_is_integer_text(c) for c in plan.classes))  # fmt: skip


_TRUE_NUMBER = "__true_number"


def _true_of_number(plan: _Plan) -> str:
    """The class name of the grouped number ``__true_number``, NULL when it names no class."""
    classes = ", ".join(str(int(c)) for c in plan.classes)
    return f"CASE WHEN {_TRUE_NUMBER} IN ({classes}) THEN CAST(CAST({_TRUE_NUMBER} AS BIGINT) AS STRING) END"


def _is_integer_text(text: str) -> bool:
    try:
        return str(int(text)) == text and abs(int(text)) < 10**15
    except ValueError:
        return False


def _is_nan(plan: _Plan, expression: str) -> str:
    return sql_is_nan(expression, plan.dialect)


def _raw_confidence(plan: _Plan) -> str:
    if plan.top_label:
        return _number(plan, "confidence")
    return "GREATEST(" + ", ".join(_number(plan, c) for c in plan.proba_columns) + ")"


def _rounded(expression: str, resolution: float | None) -> str:
    """Round down to a multiple of ``resolution``, guarding the division's round-off both ways."""
    if resolution is None:
        return expression
    r = f"CAST({float(resolution)!r} AS DOUBLE)"  # Spark reads a bare 0.001 as a DECIMAL
    k = f"FLOOR(({expression}) / {r})"
    return (
        f"(CASE WHEN ({k} + 1) * {r} <= ({expression}) THEN ({k} + 1) * {r} "
        f"WHEN {k} * {r} > ({expression}) THEN ({k} - 1) * {r} ELSE {k} * {r} END)"
    )


def _predicted(plan: _Plan, confidence: str) -> str:
    """The predicted class: the first column holding the maximum (numpy's argmax)."""
    if plan.top_label:
        return _class_of(plan, "y_pred")
    cases = " ".join(
        f"WHEN {_number(plan, c)} = {confidence} THEN {_lit(c[len('proba_') :], plan.dialect)}"
        for c in plan.proba_columns
    )
    return f"(CASE {cases} END)"


def _predicted_index(plan: _Plan, confidence: str) -> str:
    """The predicted column's position (0, 1, ...): the first column holding the maximum."""
    cases = " ".join(f"WHEN {_number(plan, c)} = {confidence} THEN {i}" for i, c in enumerate(plan.proba_columns))
    return f"(CASE {cases} END)"


def _keeps_means(plan: _Plan) -> bool:
    """Whether the aggregate keeps the mean probability vectors (probability sources at full resolution)."""
    return not plan.top_label and plan.resolution is None


def _group_text(plan: _Plan, column: str, default: str) -> str:
    if plan.has(column):
        return _text(plan, column)
    if column == "model" and plan.file_models:  # several run files in one pass: each file's own model
        cases = " ".join(f"WHEN {_lit(file, plan.dialect)} THEN {_lit(model, plan.dialect)}"
                         for file, model in plan.file_models)
        return f"(CASE {FILE_COLUMN} {cases} END)"
    return _lit(default, plan.dialect)


def _period(plan: _Plan) -> str | None:
    if plan.period is None:
        return None
    if plan.column_types.get("timestamp") == "time":
        stamp = f"CAST({_q('timestamp')} AS TIMESTAMP)"
    else:
        stamp = f"TRY_CAST(TRIM(CAST({_q('timestamp')} AS STRING)) AS TIMESTAMP)"
    return f"date_trunc({_lit(plan.period, plan.dialect)}, {stamp})"


def _rows_sql(plan: _Plan) -> str:
    """Per-row derived columns, the common base of the checks and the aggregate."""
    raw = _raw_confidence(plan)
    parts = [
        f"{_group_text(plan, 'model', plan.model)} AS model",
        f"{_group_text(plan, 'split', DEFAULT_SPLIT)} AS split",
        f"CAST({_q('y_true')} AS DOUBLE) AS {_TRUE_NUMBER}" if _true_by_number(plan) else
        f"{_class_of(plan, 'y_true') if plan.has('y_true') else 'CAST(NULL AS STRING)'} AS y_true",
        f"{_predicted_index(plan, raw)} AS predicted" if _keeps_means(plan) else f"{_predicted(plan, raw)} AS y_pred",
        f"{_rounded(raw, plan.resolution)} AS confidence",
        f"{_number(plan, 'weight') if plan.has('weight') else 'CAST(1.0 AS DOUBLE)'} AS w",
    ]
    if plan.period is not None:
        parts.append(f"{_period(plan)} AS period")
    if _keeps_means(plan):
        parts += [f"{_number(plan, c)} AS {_q(c)}" for c in plan.proba_columns]
    if not _checks_in_groups(plan):
        return f"SELECT {', '.join(parts)}, CAST(NULL AS INT) AS bad FROM {CELLS_VIEW}"
    # The loader's checks ride along with the grouping (counted per group): no pass of their own. A true class
    # grouped as its number is checked per group (:func:`grouped_sql`).
    bad = [f"({c.bad})" for c in _checks(plan) if not (_true_by_number(plan) and c.column == "y_true")]
    if plan.top_label:
        parts.append(f"CASE WHEN {' OR '.join(bad) if bad else 'FALSE'} THEN 1 END AS bad")
    else:
        # A row failing a check has an infinite deviation, so one running maximum per group tells a failing row
        # (or a row sum off by more than the tolerance: an error too) from rows off within it, with no count of
        # its own. A row reaching the sum passed every check: its cells are numbers, finite and not negative.
        total = " + ".join(_number(plan, c) for c in plan.proba_columns)
        failed = " OR ".join(bad) if bad else "FALSE"
        parts.append(f"CASE WHEN {failed} THEN {_INFINITE} ELSE ABS(({total}) - 1) END AS deviation")
    return f"SELECT {', '.join(parts)} FROM {CELLS_VIEW}"


_INFINITE = "CAST('Infinity' AS DOUBLE)"


GROUPED_TABLE = "grouped_rows"


def _keys(plan: _Plan) -> list[str]:
    return ["model", "split"] + (["period"] if plan.period is not None else []) + ["y_pred", "confidence", "y_true"]


def _constant_keys(plan: _Plan) -> dict[str, str]:
    """Keys that are one literal for the whole source (no model or split column): selected beside the
    groups, not hashed into every one of them."""
    constant = {}
    if not plan.has("model") and not plan.file_models:
        constant["model"] = _lit(plan.model, plan.dialect)
    if not plan.has("split"):
        constant["split"] = _lit(DEFAULT_SPLIT, plan.dialect)
    return constant


def grouped_sql(plan: _Plan) -> str:
    """The aggregation, one SQL text for DuckDB and Spark.

    One row per (model, split[, period], predicted class, confidence, true
    class): the summed weight, the number of raw rows, the loader's checks
    (top-label sources: ``n_bad``, the rows failing one; probability sources:
    ``worst``, the worst row-sum deviation, infinite when a row fails another
    check, and ``n_off``, the rows off by more than the warning tolerance) and, for probability
    sources at full resolution, the weighted mean probability vector, in
    which the predicted class keeps exactly the group's confidence and
    round-off can never move the argmax: a class after the predicted one
    (a tie goes to the first column) is capped at the confidence, a class
    before it just below (every one of its rows lies strictly below). The
    caps cost no running maximum per column, so the engine keeps as many
    running values per group as a plain ``AVG`` per column would.
    """
    constant = _constant_keys(plan)
    keys = _keys(plan)
    if _keeps_means(plan):
        keys = ["predicted" if k == "y_pred" else k for k in keys]  # the column's position, named after grouping
    by_number = _true_by_number(plan)
    select = [f"{constant[k]} AS {k}" if k in constant else k for k in keys]
    if by_number:
        select[keys.index("y_true")] = f"{_true_of_number(plan)} AS y_true"
    # A number naming no class: every row of its group fails the loader's check on y_true.
    unknown = f"{_TRUE_NUMBER} IS NOT NULL AND ({_true_of_number(plan)}) IS NULL" if by_number else "FALSE"
    if _keeps_means(plan):
        for index, column in enumerate(plan.proba_columns):
            if plan.has("weight"):
                mean = f"CASE WHEN SUM(w) > 0 THEN SUM(w * {_q(column)}) / SUM(w) ELSE AVG({_q(column)}) END"
            else:  # every weight is 1: the same mean with one running sum per column instead of three
                mean = f"SUM({_q(column)}) / CAST(COUNT(*) AS DOUBLE)"
            select.append(f"{mean} AS __mean_{index}")
    select += ["SUM(w) AS weight" if plan.has("weight") else "CAST(COUNT(*) AS DOUBLE) AS weight", "COUNT(*) AS n_rows"]
    if not plan.top_label and _checks_in_groups(plan):
        select += [  # a failing row counts in n_off too: read only when no row failed
            f"CASE WHEN {unknown} THEN {_INFINITE} ELSE MAX(deviation) END AS worst" if by_number else
            "MAX(deviation) AS worst",
            f"COUNT(CASE WHEN deviation > {plan.warn_tolerance!r} THEN 1 END) AS n_off",
        ]
    else:
        # a count keeps 8 bytes per group, where an integer SUM keeps 16
        select.append(f"COUNT(bad) + CASE WHEN {unknown} THEN COUNT(*) ELSE 0 END AS n_bad" if by_number else
                      "COUNT(bad) AS n_bad")
    grouped = (
        f"WITH item_rows AS ({_rows_sql(plan)}) SELECT {', '.join(select)} FROM item_rows "
        f"GROUP BY {', '.join(_TRUE_NUMBER if by_number and k == 'y_true' else k for k in keys if k not in constant)}"
    )
    if not _keeps_means(plan):
        return grouped
    # Per group, not per row: the predicted class's name, and the caps that keep the argmax where it was.
    names = " ".join(f"WHEN {i} THEN {_lit(c[len('proba_') :], plan.dialect)}"
                     for i, c in enumerate(plan.proba_columns))
    outer = [k if k != "predicted" else f"CASE predicted {names} END AS y_pred" for k in keys]
    for index, column in enumerate(plan.proba_columns):
        mean = f"__mean_{index}"
        outer.append(
            f"CASE WHEN predicted = {index} THEN confidence WHEN predicted < {index} THEN LEAST({mean}, confidence) "
            f"ELSE LEAST({mean}, confidence * {_JUST_BELOW_ONE}) END AS {_q(column)}"
        )
    outer += ["weight", "n_rows"] + (["worst", "n_off"] if _checks_in_groups(plan) else ["n_bad"])
    return f"SELECT {', '.join(outer)} FROM ({grouped}) AS per_group"


def _output_names(plan: _Plan) -> list[str]:
    """The aggregate file's columns, in order."""
    names = ["model", "split"] + (["timestamp"] if plan.period is not None else []) + ["y_true"]
    names += ["y_pred", "confidence"] if plan.top_label or plan.resolution is not None else list(plan.proba_columns)
    return names + ["weight"]


def _output_columns(plan: _Plan) -> list[str]:
    return ["period AS timestamp" if n == "timestamp" else _q(n) for n in _output_names(plan)]


def output_sql(plan: _Plan, table: str = GROUPED_TABLE) -> str:
    """The run-file columns of the grouped table, in a fixed order (identical from both engines)."""
    select = _output_columns(plan)
    order = ["model", "split"] + (["period"] if plan.period is not None else [])
    order += ["y_pred", "confidence DESC", "y_true"]
    return f"SELECT {', '.join(select)} FROM {table} ORDER BY {', '.join(o + ' NULLS LAST' for o in order)}"


def _ordered(groups, plan: _Plan):
    """The run-file columns of groups fetched from Spark in the order of :func:`output_sql`, sorted by Arrow in
    this process: the cluster only hands over the (budgeted) groups, with no distributed sort of its own
    (DuckDB sorts and writes its groups itself, :func:`written_sql`)."""
    import pyarrow.compute as pc

    keys = [("model", "ascending"), ("split", "ascending")]
    keys += [("period", "ascending")] if plan.period is not None else []
    keys += [("y_pred", "ascending"), ("confidence", "descending"), ("y_true", "ascending")]
    names = ["model", "split"] + (["period"] if plan.period is not None else []) + ["y_true"]
    names += list(plan.proba_columns) if _keeps_means(plan) else ["y_pred", "confidence"]
    # One contiguous chunk per column of the output first (the engine hands over several): the sort and the
    # gather then ran 0.3-0.4 s faster at 912,215 groups (one profile), for a copy of those columns.
    columns = groups.select(list(dict.fromkeys(names + ["weight", "y_pred", "confidence"]))).combine_chunks()
    order = pc.sort_indices(columns, sort_keys=keys)  # nulls last: the default (a per-call placement is deprecated)
    table = columns.select(names + ["weight"]).take(order)
    return table.rename_columns(["timestamp" if n == "period" else n for n in table.schema.names])


def written_sql(tables: Sequence[str], plans: Sequence[_Plan]) -> str:
    """The aggregate's rows from the groups each source left in a table: the sources one after the other,
    each one's groups in the order of :func:`output_sql`, the columns of the first (matched by name)."""
    parts = []
    for index, (table, plan) in enumerate(zip(tables, plans)):
        period = "period" if plan.period is not None else "NULL"
        parts.append(
            f"SELECT {', '.join(_output_columns(plan))}, {index} AS __source, {period} AS __period, "
            f"y_pred AS __y_pred, confidence AS __confidence FROM {table}"
        )
    stamp = "CAST(timestamp AS TIMESTAMP) AS timestamp"
    names = [stamp if n == "timestamp" else _q(n) for n in _output_names(plans[0])]
    # Groups are unique on the keys, so the order is total; a key that is one value within every source orders
    # nothing and is left out: at 10^6 groups (full precision) the sort on all seven took twice the time of the
    # sort on those that vary (12.4 s against 6.6 s, one thread, load 17).
    varies = {"__source": len(parts) > 1, "__period": any(p.period is not None for p in plans)}
    for key in ("model", "split"):
        varies[key] = any(key not in _constant_keys(p) for p in plans)
    order = [k for k in ("__source", "model", "split", "__period") if varies[k]]
    order += ["__y_pred", "__confidence DESC", "y_true"]
    return (
        f"SELECT {', '.join(names)} FROM ({' UNION ALL BY NAME '.join(parts)}) AS kept "
        f"ORDER BY {', '.join(o + ' NULLS LAST' for o in order)}"
    )


def aggregate_sql(plan: _Plan) -> str:
    """:func:`grouped_sql` and :func:`output_sql` as one statement."""
    return f"WITH {GROUPED_TABLE} AS ({grouped_sql(plan)}) {output_sql(plan)}"


def groups_at_sql(plan: _Plan, resolution: float, table: str = GROUPED_TABLE) -> str:
    """Exact number of groups if the (exact) confidences were rounded down to ``resolution``."""
    keys = [k for k in _keys(plan) if k != "confidence"] + [f"{_rounded('confidence', resolution)} AS rounded"]
    return f"SELECT COUNT(*) FROM (SELECT DISTINCT {', '.join(keys)} FROM {table}) AS coarser"


# -------------------------------------------------------------- the checks
@dataclass(frozen=True)
class _Check:
    """One loader check: rows where ``bad`` holds are reported with ``message``."""

    message: str
    column: str | None
    bad: str
    severity: str = "error"
    names_labels: bool = False  # the message lists the offending labels, as the loader's does


def _checks(plan: _Plan) -> list[_Check]:
    """The in-memory loader's row checks, as SQL conditions: the rules and messages of ``columns.COLUMNS``."""
    checks: list[_Check] = []
    for column in ("model", "split"):
        if plan.has(column):
            checks += _rule_checks(plan, column)
    numeric = [c for c in (list(plan.proba_columns) + ["confidence", "weight"]) if plan.has(c)]
    for column in numeric:
        not_number = _not_a_number(plan, column)
        if not_number is not None:
            checks.append(_Check(NOT_A_NUMBER, column, not_number))
    if plan.top_label:
        checks += _rule_checks(plan, "y_pred") + _rule_checks(plan, "confidence")
    else:
        for rule in SPECS[PROBA_PREFIX].rules:  # rule by rule, each over every column, as the loader reports
            checks += [_rule_check(plan, column, rule) for column in plan.proba_columns]
    if plan.has("y_true"):
        checks.append(
            _Check(
                f"{UNKNOWN_LABELS} {_short_list(plan.classes)}",
                "y_true",
                f"{_present(plan, 'y_true')} AND {_class_of(plan, 'y_true')} IS NULL",
                names_labels=True,
            )
        )
    if plan.has("weight"):
        checks += _rule_checks(plan, "weight")
    if plan.period is not None:
        checks.append(
            _Check(
                "timestamps that are not ISO 8601 dates or times (e.g. 2024-05-01 or 2024-05-01T13:00:00)",
                "timestamp", f"{_q('timestamp')} IS NOT NULL AND {_period(plan)} IS NULL",
            )
        )  # fmt: skip
    return checks


def _present(plan: _Plan, column: str) -> str:
    """The cell is not empty: a number never is when it is not NULL (no text made of every row to say so)."""
    if plan.column_types.get(column) == "number":
        return f"{_q(column)} IS NOT NULL"
    return f"{_text(plan, column)} IS NOT NULL"


def _rule_check(plan: _Plan, column: str, rule: RowRule) -> _Check:
    family = spec_of(column).family
    value = _number(plan, column) if family in ("number", "probability", "logit") else None
    text = _text(plan, column) if family in ("group", "label") else None
    condition = rule_sql(rule.rule, value, _not_a_number(plan, column) if value else None, text, plan.dialect)
    return _Check(rule.text(column), column, condition, rule.severity)


def _rule_checks(plan: _Plan, column: str) -> list[_Check]:
    """The checks ``columns.COLUMNS`` gives ``column`` in this kind of run."""
    kind = "top_label" if plan.top_label else "any"
    return [_rule_check(plan, column, rule) for rule in rules_of(column) if rule.runs in ("any", kind)]


def _sum_deviation(plan: _Plan) -> str:
    """|sum - 1| of rows whose cells are all valid, else NULL."""
    cells = [_number(plan, c) for c in plan.proba_columns]
    valid = " AND ".join(f"{p} IS NOT NULL AND NOT {_is_nan(plan, p)} AND {p} >= 0 AND {p} <= 1e300" for p in cells)
    return f"(CASE WHEN {valid} THEN ABS(({' + '.join(cells)}) - 1) ELSE NULL END)"


def check_sql(plan: _Plan) -> tuple[str, list[_Check]]:
    """One pass counting every check's offending rows per file (and the worst sum deviation)."""
    checks = _checks(plan)
    counts = [f"SUM(CASE WHEN {c.bad} THEN 1 ELSE 0 END) AS c{i}" for i, c in enumerate(checks)]
    counts.append("COUNT(*) AS n_rows")
    if not plan.top_label:
        deviation = _sum_deviation(plan)
        counts.append(f"MAX({deviation}) AS worst")
        counts.append(f"SUM(CASE WHEN {deviation} > {plan.sum_tolerance!r} THEN 1 ELSE 0 END) AS too_far")
        counts.append(f"SUM(CASE WHEN {deviation} > {plan.warn_tolerance!r} THEN 1 ELSE 0 END) AS off")
    sql = f"SELECT {FILE_COLUMN}, {', '.join(counts)} FROM {SOURCE_VIEW} GROUP BY {FILE_COLUMN}"
    return sql, checks


def _rows_where_sql(condition: str) -> str:
    """The first offending rows of one file: its name is the query's first parameter, then ``condition``'s."""
    return (
        f"SELECT {ROW_COLUMN} FROM {SOURCE_VIEW} WHERE {FILE_COLUMN} = ? AND ({condition}) "
        f"ORDER BY {ROW_COLUMN} LIMIT {SHOWN_ROWS}"
    )


def _label_values_sql(plan: _Plan) -> str:
    columns = [c for c in ("y_pred", "y_true") if plan.has(c)]
    union = " UNION ".join(f"SELECT DISTINCT {_text(plan, c)} AS label FROM {SOURCE_VIEW}" for c in columns)
    return f"SELECT label FROM ({union}) AS labels WHERE label IS NOT NULL"


def _split_labels_sql(plan: _Plan) -> str:
    """Per (model, split): rows and labelled rows (a split is wholly labelled or not at all)."""
    model = _group_text(plan, "model", plan.model)
    split = _group_text(plan, "split", DEFAULT_SPLIT)
    return (
        f"SELECT {model} AS model, {split} AS split, COUNT(*) AS n_rows, COUNT({_text(plan, 'y_true')}) "
        f"AS labelled FROM {SOURCE_VIEW} GROUP BY {model}, {split}"
    )


def _distinct_count_sql(plan: _Plan, column: str) -> str:
    return f"SELECT COUNT(DISTINCT {_text(plan, column)}) FROM {SOURCE_VIEW}"


def _checks_in_groups(plan: _Plan) -> bool:
    """Whether the grouping counts the checks itself: always with Spark, and in DuckDB with typed number
    columns (Parquet, tables). On text cells (CSV) every check parses each cell again, and one expression
    holding them all grows past what DuckDB plans within its memory limit; those sources get the separate
    pass of :func:`_run_checks` there. Spark plans that expression; a pass of its own would cost it a scan
    of the log and two jobs, and the counts of distinct models and splits and of labelled rows that
    :func:`_run_checks` adds three and two more."""
    if plan.dialect == "spark":
        return True
    numeric = list(plan.proba_columns) + [c for c in ("confidence", "weight") if plan.has(c)]
    return all(_not_a_number(plan, c) is None for c in numeric)


def _replace_classes(plan: _Plan, classes) -> _Plan:
    from dataclasses import replace

    return replace(plan, classes=tuple(classes))
