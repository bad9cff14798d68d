"""The SQL both engines run for one source (its :class:`_Plan`): the per-row columns, the grouping, the
output's order, and the loader's row checks as conditions. Every query is built once, through ``sqltext.exp``:
sqlglot's expressions, rendered in the engine's dialect (:func:`render`), or for a DuckDB aggregation the
same queries as DuckDB's text straight away (``sqltext``: no import of sqlglot), so names and values are
quoted by the builder, never by hand."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import reduce

from ..sqltext import exp

from ..columns import (
    NOT_A_NUMBER, PROBA_PREFIX, SPECS, UNKNOWN_LABELS, WHITESPACE, Dialect, RowRule, rule_condition, rules_of, spec_of,
    sql_is_finite, sql_is_nan,
)
from ..columns import LOGIT_PREFIX, TIME_RANGE
from ..format import DEFAULT_SPLIT, NUMERIC_MISSING, SHOWN_ROWS, _short_list
from .results import SOURCE_VIEW, FILE_COLUMN, ROW_COLUMN, CELLS_VIEW


def render(query: exp.Expression | str, dialect: Dialect) -> str:
    """``query`` as the engine's SQL text, every identifier quoted (a column may be named like a keyword)."""
    return query if isinstance(query, str) else query.sql(dialect=dialect, identify=True)


def _col(name: str) -> exp.Column:
    return exp.column(name)


def _text_literal(text: str) -> exp.Literal:
    return exp.Literal.string(text)


def _number_literal(number) -> exp.Expression:
    return exp.Literal.number(number)


_TYPES: dict[tuple[type, str], exp.DataType] = {}  # per builder: sqlglot's types, or DuckDB's text


def _type(name: str) -> exp.DataType:
    """The data type ``name``, parsed once: sqlglot parses a type's name at every cast (0.3 s of Python for
    the 460 casts of a 50-class grouping, one profile)."""
    key = (exp.DataType, name)
    if key not in _TYPES:
        _TYPES[key] = exp.DataType.build(name)
    return _TYPES[key]


def _cast(expression: exp.Expression, to: str) -> exp.Expression:
    return exp.cast(expression, _type(to))  # the parsed type is copied into the cast


def _try_cast(expression: exp.Expression, to: str) -> exp.Expression:
    return exp.TryCast(this=expression.copy(), to=_type(to).copy(), safe=True)


def _double(number: float) -> exp.Expression:
    """A DOUBLE literal (Spark reads a bare 0.001 as a DECIMAL)."""
    return _cast(_number_literal(repr(float(number))), "DOUBLE")


def _case(whens, default: exp.Expression | None = None, subject: exp.Expression | None = None) -> exp.Case:
    """``CASE [subject] WHEN condition THEN value ... [ELSE default] END`` of (condition, value) pairs."""
    return exp.Case(this=subject, ifs=[exp.If(this=c, true=exp.convert(v)) for c, v in whens],
                    default=None if default is None else exp.convert(default))


def _select(*columns, source: str | exp.Expression, alias: str | None = None) -> exp.Select:
    """``SELECT columns FROM source`` (a table's name, or a query read as ``alias``)."""
    origin = exp.table_(source) if isinstance(source, str) else source.subquery(alias, copy=False)
    return exp.Select(expressions=list(columns)).from_(origin, copy=False)


def _as(expression: exp.Expression, name: str) -> exp.Alias:
    return exp.alias_(expression, name, copy=False)  # every expression here is built for the one query


def _not_null(expression: exp.Expression) -> exp.Expression:
    return expression.is_(exp.null()).not_()


def _sum(terms: Sequence[exp.Expression]) -> exp.Expression:
    """``terms[0] + terms[1] + ...``, added left to right, of copies of ``terms`` (sqlglot's ``+`` copies
    the whole left side at each step: quadratic in the terms, 0.2-0.4 s of Python at 50 classes)."""
    return reduce(lambda left, right: exp.Add(this=left, expression=right.copy()), terms[1:], terms[0].copy())


def _order(column: str, desc: bool = False) -> exp.Ordered:
    return exp.Ordered(this=_col(column), desc=desc, nulls_first=False)


def _infinite() -> exp.Expression:
    return _cast(_text_literal("Infinity"), "DOUBLE")


def __getattr__(name: str):
    if name == "_INFINITE":  # built when asked for, by the builder then in force (sqlglot's, by default)
        return _infinite()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
# 1 - 2^-52: x times it is the largest double below x, or the one below that (x > 0, not subnormal).
_JUST_BELOW_ONE = 0.9999999999999998


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
    # A column's name in the source where it differs from its name here (``columns.column_name``: whitespace
    # around it, or around its class, as the file has it): the cells are read under the name the engine gives.
    source_names: dict = field(default_factory=dict)

    @property
    def top_label(self) -> bool:
        return not self.proba_columns

    def has(self, column: str) -> bool:
        return column in self.columns

    def cell(self, column: str) -> exp.Column:
        """The source's column ``column`` (a name of ``columns``), as the engine names it."""
        return _col(self.source_names.get(column, column))


def _typed_number(plan: _Plan, column: str) -> bool:
    return plan.column_types.get(column) in ("number", "bool", None)


def _trimmed(plan: _Plan, column: str) -> exp.Expression:
    return exp.Trim(this=_cast(plan.cell(column), "STRING"))


def _missing(plan: _Plan, column: str) -> exp.Expression:
    """The cell's text is one of the loader's missing spellings."""
    return _trimmed(plan, column).isin(*map(_text_literal, NUMERIC_MISSING))


def _number(plan: _Plan, column: str) -> exp.Expression:
    """A column as DOUBLE; text (CSV) is trimmed and the loader's missing spellings are NULL."""
    if _typed_number(plan, column):
        return _cast(plan.cell(column), "DOUBLE")
    return _case([(_missing(plan, column), exp.null())], _as_number(plan, column))


def _as_number(plan: _Plan, column: str) -> exp.Expression:
    """The trimmed text as DOUBLE, NULL when the loader reads no number in it: the engines' casts (and DuckDB's
    TRIM) also read '1_000' and a number beside a no-break or other non-ASCII space, which the loader (pandas)
    refuses: a cell with an underscore or more bytes than characters is none."""
    cell = _cast(plan.cell(column), "STRING")
    byte_length, char_length = ("octet_length", "char_length") if plan.dialect == "spark" else ("strlen", "length")
    lengths = [exp.Anonymous(this=name, expressions=[cell]) for name in (byte_length, char_length)]
    underscore = exp.Anonymous(this="contains", expressions=[cell, _text_literal("_")])
    not_plain = exp.or_(exp.GT(this=lengths[0], expression=lengths[1]), underscore, copy=False)
    return _case([(not_plain, exp.null())], _try_cast(_trimmed(plan, column), "DOUBLE"))


def _not_a_number(plan: _Plan, column: str) -> exp.Expression | None:
    """Rows whose text is not a number, or None when the column is numeric."""
    if _typed_number(plan, column):
        return None
    no_number = exp.and_(exp.not_(_missing(plan, column)), _as_number(plan, column).is_(exp.null()))
    return exp.Coalesce(this=no_number, expressions=[exp.false()])


def _text(plan: _Plan, column: str) -> exp.Expression:
    """A label-like column as trimmed text, NULL when empty; whole-number floats read as integers."""
    as_text = _cast(plan.cell(column), "STRING")
    if plan.column_types.get(column) == "number":
        value = _cast(plan.cell(column), "DOUBLE")
        whole = exp.and_(value.eq(exp.Floor(this=value.copy())), exp.Abs(this=value.copy()) < _number_literal("1e15"))
        as_text = _case([(whole, _cast(_cast(plan.cell(column), "BIGINT"), "STRING"))], as_text)
    if plan.column_types.get(column) == "bool":  # spelled as the loader spells a truth (Python's str), not 'true'
        truth = plan.cell(column)
        as_text = _case([(truth, _text_literal("True")), (exp.not_(truth), _text_literal("False"))])
    if plan.column_types.get(column) in ("number", "bool"):  # a number's or a truth's text has no whitespace
        return exp.Nullif(this=exp.Trim(this=as_text), expression=_text_literal(""))
    return exp.Nullif(this=_composed(plan, _stripped(as_text, plan.dialect)), expression=_text_literal(""))


def _composed(plan: _Plan, text: exp.Expression) -> exp.Expression:
    """``text`` in Unicode's composed form (NFC), as the loader reads every label, model and split
    (``format._nfc``): "é" typed as one character or as "e" and an accent is one name. Spark has no such
    function: there it stays as written. Nor is a text holding NUL: DuckDB's ``nfc_normalize`` ends a non-ASCII
    text at its first NUL (``'a\\x00é'`` became ``'a'``, two splits one), so such a text stays as written."""
    if plan.dialect == "spark":
        return text
    nul = exp.Anonymous(this="chr", expressions=[_number_literal(0)])
    return _case([(exp.Anonymous(this="contains", expressions=[text, nul]), text.copy())],
                 exp.Anonymous(this="nfc_normalize", expressions=[text.copy()]))


def _stripped(text: exp.Expression, dialect: Dialect) -> exp.Expression:
    """``text`` without the whitespace around it, as Python's ``str.strip()`` (the loader's) removes it: TRIM
    alone removes spaces only. Trimmed of that set only when an end is one of it: DuckDB's TRIM of a set took
    20 times the CPU of a plain TRIM (0.75 s against 0.04 s a million labels, one thread), and the whole
    aggregation of a 10^6-row CSV 2.7 times. The ends are DuckDB's ``text[1]`` and ``text[-1]`` (the first and
    last code point, as ``LEFT``/``RIGHT`` give them): ``RIGHT`` and ``LEFT`` cost 0.035-0.045 s of CPU a
    million labels where ``[-1]`` costs 0.001 (a 10^6-row Parquet file with text labels and split: 0.27 s of
    CPU for the aggregation against 0.17, 0.15 with no stripping at all; in-process, one measure). Spark has
    no index into a string: there ``LEFT`` and ``RIGHT``."""
    spaces = _text_literal(WHITESPACE)

    def end_in_set(first: bool) -> exp.Expression:
        if dialect == "duckdb":
            end = exp.Anonymous(this="array_extract", expressions=[text.copy(), _number_literal(1 if first else -1)])
        else:
            end = exp.Anonymous(this="left" if first else "right", expressions=[text.copy(), _number_literal(1)])
        return exp.Anonymous(this="contains", expressions=[spaces.copy(), end])

    trimmed = exp.Trim(this=text.copy(), expression=spaces.copy())
    return _case([(exp.or_(end_in_set(True), end_in_set(False), copy=False), trimmed)], text)


def _class_of(plan: _Plan, column: str) -> exp.Expression:
    """A label column mapped to its class name; NULL when empty or not a class."""
    if plan.column_types.get(column) == "number" and all(_is_integer_text(c) for c in plan.classes):
        # A number equals the integer class c exactly when its text (the integer's digits) would: compared as
        # a number, without making text of every row.
        value = _cast(plan.cell(column), "DOUBLE")
        return _case([(value.eq(int(c)), _text_literal(c)) for c in plan.classes])
    # each condition its own tree: no copy of the text's expression per class
    cases = [(exp.EQ(this=_text(plan, column), expression=_text_literal(c)), _text_literal(c)) for c in plan.classes]
    integers = [c for c in plan.classes if _is_integer_text(c)]
    if integers:
        # The loader's second look (``format._canonical``), at text that names no class as it is: a whole number
        # written with a point ("1.0", "+01.") names the integer class of its value; "01", "+1" or "1e0" none.
        number = _try_cast(_text(plan, column), "DOUBLE")
        by_value = _case([(number.eq(int(c)), _text_literal(c)) for c in integers])
        cases.append((_whole_number_text(plan, _text(plan, column)), by_value))
    return _case(cases)


# ``format._WHOLE_NUMBER_TEXT`` (the loader's), anchored: Spark's regexp_like finds a match anywhere.
_WHOLE_NUMBER_PATTERN = "^[+-]?[0-9]+[.]0*$"


def _whole_number_text(plan: _Plan, text: exp.Expression) -> exp.Expression:
    function = "regexp_like" if plan.dialect == "spark" else "regexp_full_match"
    return exp.Anonymous(this=function, expressions=[text, _text_literal(_WHOLE_NUMBER_PATTERN)])


def _true_by_number(plan: _Plan) -> bool:
    """Whether ``y_true`` is grouped as its number and named once per group: a number column whose classes are
    all integers. Per row that is a cast instead of a CASE over every class (at 50 classes that CASE made the
    grouping 1.23x slower, one profile); an integer class is named by its digits, so a number maps to the
    class whose name it spells, and numbers that name no class keep groups of their own, refused per group."""
    return (plan.has("y_true") and plan.column_types.get("y_true") == "number"
            and all(_is_integer_text(c) for c in plan.classes))  # fmt: skip


_TRUE_NUMBER = "__true_number"


def _true_of_number(plan: _Plan) -> exp.Expression:
    """The class name of the grouped number ``__true_number``, NULL when it names no class."""
    number = _col(_TRUE_NUMBER)
    named = number.isin(*(int(c) for c in plan.classes))
    return _case([(named, _cast(_cast(number, "BIGINT"), "STRING"))])


def _is_integer_text(text: str) -> bool:
    try:
        return str(int(text)) == text and abs(int(text)) < 10**15
    except ValueError:
        return False


def _raw_confidence(plan: _Plan) -> exp.Expression:
    if plan.top_label:
        return _number(plan, "confidence")
    first, *others = (_number(plan, c) for c in plan.proba_columns)
    return exp.Greatest(this=first, expressions=others, ignore_nulls=True)  # as both engines do


def _rounded(expression: exp.Expression, resolution: float | None) -> exp.Expression:
    """Round down to a multiple of ``resolution``, guarding the division's round-off both ways."""
    if resolution is None:
        return expression
    r = _double(resolution)
    k = exp.Floor(this=expression / r)
    return _case([((k + 1) * r <= expression, (k + 1) * r), (k * r > expression, (k - 1) * r)], k * r)


def _class_name(column: str) -> exp.Literal:
    return _text_literal(column[len(PROBA_PREFIX) :])


def _predicted(plan: _Plan, confidence: exp.Expression) -> exp.Expression:
    """The predicted class: the first column holding the maximum (numpy's argmax)."""
    if plan.top_label:
        return _class_of(plan, "y_pred")
    return _case([(_number(plan, c).eq(confidence), _class_name(c)) for c in plan.proba_columns])


def _predicted_index(plan: _Plan, confidence: exp.Expression) -> exp.Expression:
    """The predicted column's position (0, 1, ...): the first column holding the maximum."""
    return _case([(_number(plan, c).eq(confidence), _number_literal(i)) for i, c in enumerate(plan.proba_columns)])


def _keeps_means(plan: _Plan) -> bool:
    """Whether the aggregate keeps the mean probability vectors (probability sources at full resolution)."""
    return not plan.top_label and plan.resolution is None


def _group_text(plan: _Plan, column: str, default: str) -> exp.Expression:
    if plan.has(column):
        return _text(plan, column)
    if column == "model" and plan.file_models:  # several run files in one pass: each file's own model
        files = [(_text_literal(file), _text_literal(model)) for file, model in plan.file_models]
        return _case(files, subject=_col(FILE_COLUMN))
    return _text_literal(default)


def _stamp(plan: _Plan) -> exp.Expression:
    """The row's time in UTC (the engines' session time zone), NULL when empty or not a time: a time with an
    offset is converted to UTC, as the loader converts it (a TIMESTAMP cast of the text drops the offset)."""
    if plan.column_types.get("timestamp") == "time":
        return _cast(plan.cell("timestamp"), "TIMESTAMP")
    return _cast(_try_cast(_trimmed(plan, "timestamp"), "TIMESTAMPTZ"), "TIMESTAMP")


def _period(plan: _Plan) -> exp.Expression | None:
    if plan.period is None:
        return None
    return exp.TimestampTrunc(this=_stamp(plan), unit=_text_literal(plan.period))


_RAW_CONFIDENCE = "__raw_confidence"


def _cells_with_confidence(plan: _Plan) -> exp.Select:
    """Every cell, and the row's confidence before rounding as a column of its own: the predicted class's
    CASE then compares each column with that column, not with the whole maximum again (at 50 classes that
    was 50 copies of a 50-column GREATEST, and DuckDB took 0.45 s to plan the query, one measure)."""
    return _select(exp.Star(), _as(_raw_confidence(plan), _RAW_CONFIDENCE), source=CELLS_VIEW)


def _rows_sql(plan: _Plan) -> exp.Select:
    """Per-row derived columns, the common base of the checks and the aggregate."""
    raw = _col(_RAW_CONFIDENCE)
    parts = {"model": _group_text(plan, "model", plan.model), "split": _group_text(plan, "split", DEFAULT_SPLIT)}
    true = _class_of(plan, "y_true") if plan.has("y_true") else _cast(exp.null(), "STRING")
    parts.update([(_TRUE_NUMBER, _cast(plan.cell("y_true"), "DOUBLE")) if _true_by_number(plan) else ("y_true", true)])
    means = _keeps_means(plan)
    parts["predicted" if means else "y_pred"] = (_predicted_index if means else _predicted)(plan, raw)
    parts["confidence"] = _rounded(raw, plan.resolution)
    parts["w"] = _number(plan, "weight") if plan.has("weight") else _double(1.0)
    if plan.period is not None:
        parts["period"] = _period(plan)
    parts.update((c, _number(plan, c)) for c in (plan.proba_columns if means else ()))
    if not _checks_in_groups(plan):
        parts["bad"] = _cast(exp.null(), "INT")
    else:
        # The loader's checks ride along with the grouping (counted per group): no pass of their own. A true
        # class grouped as its number is checked per group (:func:`grouped_sql`).
        if plan.top_label:
            bad = [c.bad for c in _checks(plan) if not (_true_by_number(plan) and c.column == "y_true")]
            failed = exp.or_(*bad, copy=False) if bad else exp.false()
            parts["bad"] = _case([(failed, _number_literal(1))])
        else:
            # A row failing a check has an infinite deviation, so one running maximum per group tells a failing
            # row (or a row sum off by more than the tolerance: an error too) from rows off within it, with no
            # count of its own. The probability cells' checks (a number, not NaN, finite, not negative) hold
            # together exactly when the row's sum is finite and its least cell not negative: a NULL, NaN or
            # infinite cell leaves the sum NULL, NaN or infinite (a sum of finite cells that overflows is
            # infinite, its deviation so too). One test of the sum instead of four per cell: at 50 classes the
            # grouping took 0.2 s less CPU of 2.3 s (2*10^5 rows, one measure) and its SQL a third of the size.
            cells = [_number(plan, c) for c in plan.proba_columns]
            other = [c.bad for c in _checks(plan, probabilities=False)
                     if not (_true_by_number(plan) and c.column == "y_true")]  # fmt: skip
            least = exp.Least(this=cells[0].copy(), expressions=[c.copy() for c in cells[1:]], ignore_nulls=True)
            total = _sum(cells)
            fine = exp.and_(sql_is_finite(total.copy(), plan.dialect), least >= 0, copy=False)
            whens = [(exp.or_(*other, copy=False), _infinite())] if other else []
            whens.append((fine, exp.Abs(this=exp.Sub(this=total, expression=_number_literal(1)))))
            parts["deviation"] = _case(whens, _infinite())
    return _select(*(_as(e, name) for name, e in parts.items()), source=_cells_with_confidence(plan), alias="cells")


GROUPED_TABLE = "grouped_rows"


def _keys(plan: _Plan) -> list[str]:
    return ["model", "split"] + (["period"] if plan.period is not None else []) + ["y_pred", "confidence", "y_true"]


def _constant_keys(plan: _Plan) -> dict[str, exp.Expression]:
    """Keys that are one literal for the whole source (no model or split column): selected beside the
    groups, not hashed into every one of them."""
    constant = {}
    if not plan.has("model") and not plan.file_models:
        constant["model"] = _text_literal(plan.model)
    if not plan.has("split"):
        constant["split"] = _text_literal(DEFAULT_SPLIT)
    return constant


def _count() -> exp.Count:
    return exp.Count(this=exp.Star())


def grouped_sql(plan: _Plan) -> exp.Select:
    """The aggregation, one query for DuckDB and Spark.

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
    select = [_as(constant[k], k) if k in constant else _col(k) for k in keys]
    if by_number:
        select[keys.index("y_true")] = _as(_true_of_number(plan), "y_true")
    # A number naming no class: every row of its group fails the loader's check on y_true.
    unknown = exp.and_(_not_null(_col(_TRUE_NUMBER)), _true_of_number(plan).is_(exp.null())
                       ) if by_number else exp.false()  # fmt: skip
    for index, column in enumerate(plan.proba_columns if _keeps_means(plan) else ()):
        if plan.has("weight"):
            weighted = exp.Sum(this=_col("w") * _col(column)) / exp.Sum(this=_col("w"))
            mean = _case([(exp.Sum(this=_col("w")) > 0, weighted)], exp.Avg(this=_col(column)))
        else:  # every weight is 1: the same mean with one running sum per column instead of three
            mean = exp.Sum(this=_col(column)) / _cast(_count(), "DOUBLE")
        select.append(_as(mean, f"__mean_{index}"))
    select += [_as(exp.Sum(this=_col("w")) if plan.has("weight") else _cast(_count(), "DOUBLE"), "weight"),
               _as(_count(), "n_rows")]  # fmt: skip
    if not plan.top_label and _checks_in_groups(plan):
        worst = exp.Max(this=_col("deviation"))
        off = exp.Count(this=_case([(_col("deviation") > _number_literal(repr(plan.warn_tolerance)), 1)]))
        worst = _case([(unknown, _infinite())], worst) if by_number else worst
        select += [_as(worst, "worst"), _as(off, "n_off")]  # a failing row counts in n_off too
    else:
        # a count keeps 8 bytes per group, where an integer SUM keeps 16
        bad = exp.Count(this=_col("bad"))
        select.append(_as(bad + _case([(unknown, _count())], 0) if by_number else bad, "n_bad"))
    groups = [_col(_TRUE_NUMBER if by_number and k == "y_true" else k) for k in keys if k not in constant]
    grouped = _select(*select, source="item_rows").group_by(*groups, copy=False)
    grouped = grouped.with_("item_rows", as_=_rows_sql(plan), copy=False)
    if not _keeps_means(plan):
        return grouped
    # Per group, not per row: the predicted class's name, and the caps that keep the argmax where it was.
    names = [(_number_literal(i), _class_name(c)) for i, c in enumerate(plan.proba_columns)]
    outer = [_col(k) if k != "predicted" else _as(_case(names, subject=_col(k)), "y_pred") for k in keys]
    predicted, confidence = _col("predicted"), _col("confidence")
    for index, column in enumerate(plan.proba_columns):
        mean = _col(f"__mean_{index}")
        below, capped = (exp.Least(this=mean.copy(), expressions=[top], ignore_nulls=True) for top in (
            confidence.copy(), confidence * _double(_JUST_BELOW_ONE)))  # fmt: skip
        cases = _case([(predicted.eq(index), confidence.copy()), (predicted < index, below)], capped)
        outer.append(_as(cases, column))
    outer += map(_col, ["weight", "n_rows"] + (["worst", "n_off"] if _checks_in_groups(plan) else ["n_bad"]))
    return _select(*outer, source=grouped, alias="per_group")


def _output_names(plan: _Plan) -> list[str]:
    """The aggregate file's columns, in order."""
    names = ["model", "split"] + (["timestamp"] if plan.period is not None else []) + ["y_true"]
    names += ["y_pred", "confidence"] if plan.top_label or plan.resolution is not None else list(plan.proba_columns)
    return names + ["weight"]


def _output_columns(plan: _Plan) -> list[exp.Expression]:
    return [_as(_col("period"), n) if n == "timestamp" else _col(n) for n in _output_names(plan)]


def output_sql(plan: _Plan, table: str = GROUPED_TABLE) -> exp.Select:
    """The run-file columns of the grouped table, in a fixed order (identical from both engines)."""
    order = ["model", "split"] + (["period"] if plan.period is not None else []) + ["y_pred"]
    by = [*map(_order, order), _order("confidence", desc=True), _order("y_true")]
    return _select(*_output_columns(plan), source=table).order_by(*by, copy=False)


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


def _sort_keys(plans: Sequence[_Plan]) -> list[str]:
    """The keys before the confidence that the aggregate's rows are sorted on: those that vary. Groups are unique
    on the keys, so the order is total; a key that is one value within every source orders nothing and is left
    out: at 10^6 groups (full precision) the sort on all seven took twice the time of the sort on those that
    vary (12.4 s against 6.6 s, one thread, load 17)."""
    varies = {"source": len(plans) > 1, "period": any(p.period is not None for p in plans),
              **{key: any(key not in _constant_keys(p) for p in plans) for key in ("model", "split")}}
    return [k for k in ("source", "model", "split", "period", "y_pred") if varies.get(k, True)]


def presorted_sql(plan: _Plan) -> exp.Select:
    """:func:`grouped_sql` in the order of :func:`written_sql` for one source: DuckDB then sorts the groups
    as it makes them, in all its threads, and the write only scans them (the sort in the write ran in
    one thread, to reuse the memory the grouping freed)."""
    by = [*map(_order, _sort_keys([plan])), _order("confidence", desc=True), _order("y_true")]
    return _select(exp.Star(), source=grouped_sql(plan), alias="groups").order_by(*by, copy=False)


def written_sql(tables: Sequence[str], plans: Sequence[_Plan], presorted: bool = False) -> exp.Expression:
    """The aggregate's rows from the groups each source left in a table: the sources one after the other,
    each one's groups in the order of :func:`output_sql`, the columns of the first (matched by name).
    ``presorted``: one table, already in that order (:func:`presorted_sql`), read as it lies."""
    if presorted and len(tables) != 1:
        raise ValueError("only the groups of one source are kept presorted")
    parts = []
    for index, (table, plan) in enumerate(zip(tables, plans)):
        period = _col("period") if plan.period is not None else exp.null()
        extra = {"__source": _number_literal(index), "__period": period, "__y_pred": _col("y_pred"),
                 "__confidence": _col("confidence")}  # fmt: skip
        parts.append(_select(*_output_columns(plan), *(_as(e, n) for n, e in extra.items()), source=table))
    stamp = _as(_cast(_col("timestamp"), "TIMESTAMP"), "timestamp")
    names = [stamp if n == "timestamp" else _col(n) for n in _output_names(plans[0])]
    kept = reduce(lambda a, b: exp.Union(this=a, expression=b, distinct=False, by_name=True), parts)
    written = _select(*names, source=kept, alias="kept")
    if presorted:
        return written
    by = [*(_order(k if k in ("model", "split") else f"__{k}") for k in _sort_keys(plans)),
          _order("__confidence", desc=True), _order("y_true")]
    return written.order_by(*by, copy=False)


def aggregate_sql(plan: _Plan) -> str:
    """:func:`grouped_sql` and :func:`output_sql` as one statement, in the plan's dialect."""
    return render(output_sql(plan).with_(GROUPED_TABLE, as_=grouped_sql(plan)), plan.dialect)


def groups_at_sql(plan: _Plan, resolution: float, table: str = GROUPED_TABLE) -> exp.Select:
    """Exact number of groups if the (exact) confidences were rounded down to ``resolution``."""
    keys = [_col(k) for k in _keys(plan) if k != "confidence"]
    coarser = _select(*keys, _as(_rounded(_col("confidence"), resolution), "rounded"), source=table)
    return _select(_count(), source=coarser.distinct(), alias="coarser")


# -------------------------------------------------------------- the checks
@dataclass(frozen=True)
class _Check:
    """One loader check: rows where ``bad`` holds are reported with ``message``."""

    message: str
    column: str | None
    bad: exp.Expression
    severity: str = "error"
    names_labels: bool = False  # the message lists the offending labels, as the loader's does


def _checks(plan: _Plan, probabilities: bool = True) -> list[_Check]:
    """The in-memory loader's row checks, as conditions: the rules and messages of ``columns.COLUMNS``
    (without those of the probability columns when ``probabilities`` is false)."""
    checks: list[_Check] = []
    for column in ("model", "split"):
        if plan.has(column):
            checks += _rule_checks(plan, column)
    proba = list(plan.proba_columns) if probabilities else []
    numeric = [c for c in (proba + ["confidence", "weight"]) if plan.has(c)]
    for column in numeric:
        not_number = _not_a_number(plan, column)
        if not_number is not None:
            checks.append(_Check(NOT_A_NUMBER, column, not_number))
    if plan.top_label:
        checks += _rule_checks(plan, "y_pred") + _rule_checks(plan, "confidence")
    else:
        for rule in SPECS[PROBA_PREFIX].rules:  # rule by rule, each over every column, as the loader reports
            checks += [_rule_check(plan, column, rule) for column in proba]
    # A probability run's own y_pred is only compared by the loader, but it must name classes; so must y_true.
    for column in ["y_true"] + ([] if plan.top_label else ["y_pred"]):
        if plan.has(column):
            unknown = exp.and_(_present(plan, column), _class_of(plan, column).is_(exp.null()))
            checks.append(_Check(f"{UNKNOWN_LABELS} {_short_list(plan.classes)}", column, unknown, names_labels=True))
    for column in _logit_columns(plan):  # not kept, but the loader refuses a file whose logits are no numbers
        checks += [c for c in [_Check(NOT_A_NUMBER, column, _not_a_number(plan, column))] if c.bad is not None]
        checks += [_rule_check(plan, column, rule) for rule in SPECS[LOGIT_PREFIX].rules]
    if plan.has("weight"):
        checks += _rule_checks(plan, "weight")
    if plan.period is not None:
        message = "timestamps that are not ISO 8601 dates or times (e.g. 2024-05-01 or 2024-05-01T13:00:00)"
        not_a_time = exp.and_(_not_null(plan.cell("timestamp")), _period(plan).is_(exp.null()))
        checks.append(_Check(message, "timestamp", not_a_time))
        # The loader holds times in nanoseconds: it refuses what they cannot hold, so the aggregate must too.
        first, last = (_cast(_text_literal(day), "TIMESTAMP") for day in TIME_RANGE)
        outside = exp.or_(_stamp(plan) < first, _stamp(plan) > last, copy=False)
        checks.append(_Check(f"timestamps outside the supported range {TIME_RANGE[0]} to {TIME_RANGE[1]}",
                             "timestamp", outside))  # fmt: skip
    return checks


def _logit_columns(plan: _Plan) -> list[str]:
    """The logit_ columns of a probability run (the loader reads them; a top-label run's are ignored)."""
    return [] if plan.top_label else [c for c in plan.columns if c.startswith(LOGIT_PREFIX)]


def _present(plan: _Plan, column: str) -> exp.Expression:
    """The cell is not empty: a number never is when it is not NULL (no text made of every row to say so)."""
    value = plan.cell(column) if plan.column_types.get(column) == "number" else _text(plan, column)
    return _not_null(value)


def _rule_check(plan: _Plan, column: str, rule: RowRule) -> _Check:
    family = spec_of(column).family
    value = _number(plan, column) if family in ("number", "probability", "logit") else None
    text = _text(plan, column) if family in ("group", "label") else None
    not_number = _not_a_number(plan, column) if value is not None else None
    condition = rule_condition(rule.rule, value, not_number, text, plan.dialect)
    return _Check(rule.text(column), column, condition, rule.severity)


def _rule_checks(plan: _Plan, column: str) -> list[_Check]:
    """The checks ``columns.COLUMNS`` gives ``column`` in this kind of run."""
    kind = "top_label" if plan.top_label else "any"
    return [_rule_check(plan, column, rule) for rule in rules_of(column) if rule.runs in ("any", kind)]


def _sum_deviation(plan: _Plan) -> exp.Expression:
    """|sum - 1| of rows whose cells are all valid, else NULL. Every condition is built fresh and joined
    without sqlglot's defensive copies (``copy=False``): at 50 classes those copies of the 200 conditions,
    made again at each level of nesting, were most of the Python time of the query naming the rows off
    the sum (the same SQL text, tests/io/test_aggregate_sql_text.py)."""
    cells = [_number(plan, c) for c in plan.proba_columns]
    valid = exp.and_(*(exp.and_(_not_null(p), exp.not_(sql_is_nan(p, plan.dialect), copy=False), p >= 0,
                                p <= _number_literal("1e300"), copy=False) for p in cells), copy=False)  # fmt: skip
    return _case([(valid, exp.Abs(this=exp.Sub(this=_sum(cells), expression=_number_literal(1))))])


def _off_by_more(plan: _Plan, tolerance: float) -> exp.Expression:
    # GT built directly: ``>`` would copy the whole fresh deviation (sqlglot's operators copy both sides).
    return exp.GT(this=_sum_deviation(plan), expression=_number_literal(repr(tolerance)))


def _rows_counted(condition: exp.Expression) -> exp.Sum:
    return exp.Sum(this=_case([(condition, 1)], 0))


def check_sql(plan: _Plan) -> tuple[str, list[_Check]]:
    """One pass counting every check's offending rows per file (and the worst sum deviation), in the plan's
    dialect."""
    checks = _checks(plan)
    counts = [_as(_rows_counted(c.bad), f"c{i}") for i, c in enumerate(checks)]
    counts.append(_as(_count(), "n_rows"))
    if not plan.top_label:
        counts += [_as(exp.Max(this=_sum_deviation(plan)), "worst"),
                   _as(_rows_counted(_off_by_more(plan, plan.sum_tolerance)), "too_far"),
                   _as(_rows_counted(_off_by_more(plan, plan.warn_tolerance)), "off")]  # fmt: skip
    query = _select(_col(FILE_COLUMN), *counts, source=SOURCE_VIEW).group_by(_col(FILE_COLUMN), copy=False)
    return render(query, plan.dialect), checks


def _in_file(condition: exp.Expression, copy: bool = True) -> exp.Expression:
    """``condition`` in the file that is the query's first parameter (then ``condition``'s); ``copy=False``
    takes ``condition`` into the query as it is (for a condition built for this query alone)."""
    return exp.and_(_col(FILE_COLUMN).eq(exp.Placeholder()), condition, copy=copy)


def _rows_where_sql(condition: exp.Expression, copy: bool = True) -> exp.Select:
    """The first offending rows of one file: its name is the query's first parameter, then ``condition``'s.
    ``copy=False``: ``condition`` was built for this query alone and goes into it uncopied."""
    query = _select(_col(ROW_COLUMN), source=SOURCE_VIEW).where(_in_file(condition, copy), copy=False)
    return query.order_by(exp.Ordered(this=_col(ROW_COLUMN)), copy=False).limit(SHOWN_ROWS, copy=False)


def _labels_where_sql(plan: _Plan, check: _Check) -> exp.Select:
    """The distinct offending labels of a file (the query's parameter), in order of first appearance."""
    text = _text(plan, check.column)
    query = _select(_as(text, "label"), _as(exp.Min(this=_col(ROW_COLUMN)), "first"), source=SOURCE_VIEW)
    return query.where(_in_file(check.bad)).group_by(text).order_by(_order("first"), _order("label"))


def _label_values_sql(plan: _Plan) -> exp.Select:
    distinct = [_select(_as(_text(plan, c), "label"), source=SOURCE_VIEW).distinct()
                for c in ("y_pred", "y_true") if plan.has(c)]  # fmt: skip
    labels = reduce(lambda a, b: exp.union(a, b, distinct=True), distinct)
    return _select(_col("label"), source=labels, alias="labels").where(_not_null(_col("label")))


def _split_labels_sql(plan: _Plan, column: str = "y_true") -> exp.Select:
    """Per (model, split): rows and labelled rows (a split is wholly labelled or not at all; so too for times)."""
    model, split = _group_text(plan, "model", plan.model), _group_text(plan, "split", DEFAULT_SPLIT)
    columns = [_as(model, "model"), _as(split, "split"), _as(_count(), "n_rows"),
               _as(exp.Count(this=_filled(plan, column)), "labelled")]  # fmt: skip
    # Ordered, so that the messages of several partly filled splits come in one order, run after run.
    return _select(*columns, source=SOURCE_VIEW).group_by(model, split).order_by(_order("model"), _order("split"))


def _filled(plan: _Plan, column: str) -> exp.Expression:
    """The cell, NULL when empty (a time column's cells are times or NULL)."""
    return plan.cell(column) if plan.column_types.get(column) == "time" else _text(plan, column)


def _unlabelled_in_split(plan: _Plan, column: str = "y_true") -> exp.Expression:
    """Rows of the (model, split) given as two parameters that have no y_true (or ``column``)."""
    return exp.and_(_group_text(plan, "model", plan.model).eq(exp.Placeholder()),
                    _group_text(plan, "split", DEFAULT_SPLIT).eq(exp.Placeholder()),
                    _filled(plan, column).is_(exp.null()))  # fmt: skip


def _unlabelled_files_sql(plan: _Plan, column: str = "y_true") -> exp.Select:
    """Per file: the rows of the (model, split) given as two parameters that have no y_true (or ``column``)."""
    query = _select(_col(FILE_COLUMN), _count(), source=SOURCE_VIEW).where(_unlabelled_in_split(plan, column))
    return query.group_by(_col(FILE_COLUMN)).order_by(_order(FILE_COLUMN))


def _models_in_files_sql(plan: _Plan) -> exp.Select:
    """Model names that the model column gives in more than one file, with the first and last such file."""
    model = _text(plan, "model")
    files = [_as(model, "name"), exp.Min(this=_col(FILE_COLUMN)), exp.Max(this=_col(FILE_COLUMN))]
    query = _select(*files, source=SOURCE_VIEW).where(_not_null(model)).group_by(_col("name"))
    several = exp.Count(this=exp.Distinct(expressions=[_col(FILE_COLUMN)])) > 1
    return query.having(several).order_by(_order("name"))


def _group_counts_sql(plan: _Plan) -> exp.Select:
    """From the groups: the failed checks' count, the rows off the sum, the worst deviation, and the distinct
    models and splits."""
    if plan.top_label:
        counts = [exp.Sum(this=_col("n_bad")), 0, 0]
    else:
        too_far = _col("worst") > _number_literal(repr(plan.sum_tolerance))
        counts = [_rows_counted(too_far), exp.Sum(this=_col("n_off")), exp.Max(this=_col("worst"))]
    counts += [exp.Count(this=exp.Distinct(expressions=[_col(c)])) if plan.has(c) else 0 for c in ("model", "split")]
    return _select(*map(exp.convert, counts), source=GROUPED_TABLE)


def _partly_labelled_sql(column: str = "y_true") -> exp.Select:
    """How many (model, split) of the groups are labelled only in part (checks passed, so a NULL y_true is an
    empty one); ``column="period"``: have a time only in part."""
    labelled = exp.Sum(this=_case([(_col(column).is_(exp.null()), 0)], _col("n_rows")))
    columns = [_col("model"), _col("split"), _as(exp.Sum(this=_col("n_rows")), "n_rows"),
               _as(labelled, "labelled")]  # fmt: skip
    named = exp.and_(*(_not_null(_col(key)) for key in ("model", "split")))
    per_split = _select(*columns, source=GROUPED_TABLE).where(named).group_by(_col("model"), _col("split"))
    partly = exp.and_(_col("labelled") > 0, _col("labelled") < _col("n_rows"))
    return _select(_count(), source=per_split, alias="per_split").where(partly)


def _distinct_count_sql(plan: _Plan, column: str) -> exp.Select:
    return _select(exp.Count(this=exp.Distinct(expressions=[_text(plan, column)])), source=SOURCE_VIEW)


def _checks_in_groups(plan: _Plan) -> bool:
    """Whether the grouping counts the checks itself: always with Spark, and in DuckDB with typed number
    columns (Parquet, tables). On text cells (CSV) every check parses each cell again, and one expression
    holding them all grows past what DuckDB plans within its memory limit; those sources get the separate
    pass of :func:`_run_checks` there. Spark plans that expression; a pass of its own would cost it a scan
    of the log and two jobs, and the counts of distinct models and splits and of labelled rows that
    :func:`_run_checks` adds three and two more."""
    if plan.dialect == "spark":
        return True
    numeric = list(plan.proba_columns) + _logit_columns(plan) + [c for c in ("confidence", "weight") if plan.has(c)]
    return all(_not_a_number(plan, c) is None for c in numeric)


def _replace_classes(plan: _Plan, classes) -> _Plan:
    from dataclasses import replace

    return replace(plan, classes=tuple(classes))
