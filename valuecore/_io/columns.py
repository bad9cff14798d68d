"""What a run file's columns are, once: names, aliases, kinds, and the row checks with their messages.

Both readers of run files take their checks from here: the in-memory loader
(``runfiles``, numpy masks over a column) and the aggregation (``aggregate``,
SQL conditions over a view), so a check and its message exist once. A
:class:`RowRule` is one row predicate written both ways side by side, so the two
readers cannot drift apart: :func:`rule_mask` in numpy, :func:`rule_sql` in SQL.

Row numbers, files and the listing of rows are the readers' business; this
module only says which rows are bad and what to call it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

PROBA_PREFIX = "proba_"
LOGIT_PREFIX = "logit_"
CONFIDENCE_TOLERANCE = 1e-6  # a confidence up to 1 + this is read as 1 (float32 round-off)
# Weights multiply values (up to 1e100, see UseCase) and are squared for intervals; within this range
# no sum of a run overflows or underflows float64.
WEIGHT_RANGE = (1e-50, 1e50)
# Timestamps are held in nanoseconds (numpy datetime64[ns]): 1677-09-21 to 2262-04-11.
TIME_RANGE = ("1677-09-22", "2262-04-11")

# What Python's ``str.strip()`` removes (every character ``isspace``): the loader strips label cells and names so,
# and the aggregation trims text cells of these (SQL's TRIM alone removes spaces only).
WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + (
    "\u2028\u2029\u202f\u205f\u3000")

NOT_A_NUMBER = "values that are not numbers"
UNKNOWN_LABELS = "are not among the classes"  # a label column's values that name no class (listed before it)

Family = Literal["group", "label", "number", "probability", "logit", "time", "id"]

# The rules a check can use. Each has a numpy form and a SQL form below; ``values`` / the SQL expression
# is the column as float64 / DOUBLE, NULL or NaN where missing, and cells whose text is not a number are
# reported apart (``NOT_A_NUMBER``) and never again by ``missing``, ``nan`` or ``not_finite``.
Rule = Literal["empty", "nan", "infinite", "not_finite", "negative", "outside_unit", "weight_range"]


@dataclass(frozen=True)
class RowRule:
    """One row check of a column: the rows where ``rule`` holds are reported with ``message``
    (``{column}`` is replaced by the column's name)."""

    rule: Rule
    message: str
    severity: Literal["error", "warning"] = "error"
    runs: Literal["any", "top_label"] = "any"  # the kinds of run it applies to

    def text(self, column: str) -> str:
        return self.message.replace("{column}", column)


@dataclass(frozen=True)
class ColumnSpec:
    """One column of a run file (or, with ``prefix``, one family of columns such as ``proba_<class>``).

    ``family`` says how it is read: ``group`` and ``label`` are text with few distinct values (labels
    are matched to classes), ``number``, ``probability`` and ``logit`` are floats, ``time`` is ISO 8601
    text or a timestamp, ``id`` is kept as it is. ``aliases`` are the names people give it by mistake
    (a hint, or, for the labels, an error when the column itself is absent).
    """

    name: str
    family: Family
    rules: tuple[RowRule, ...] = ()
    aliases: tuple[str, ...] = ()
    prefix: bool = False

    def names(self, column: str) -> bool:
        return column.startswith(self.name) if self.prefix else column == self.name


_EMPTY = RowRule("empty", "{column} is empty")

COLUMNS: tuple[ColumnSpec, ...] = (
    ColumnSpec("model", "group", (_EMPTY,)),
    ColumnSpec("split", "group", (_EMPTY,)),
    ColumnSpec("id", "id"),
    ColumnSpec("timestamp", "time"),
    ColumnSpec("weight", "number", (
        RowRule("not_finite", "weight is missing, NaN or infinite"),
        RowRule("negative", "weight must be a non-negative count"),
        RowRule("weight_range", f"weight must be 0 or between {WEIGHT_RANGE[0]:g} and {WEIGHT_RANGE[1]:g}; "
                "rescale the weights (multiplying every weight by one number changes no threshold and no "
                "value per item)"),
    )),
    ColumnSpec("y_true", "label", aliases=(
        "label", "labels", "target", "targets", "y", "class", "truth", "ground_truth", "groundtruth", "gt",
        "true_label", "true_class", "actual", "y_test", "ytrue", "true",
    )),
    ColumnSpec("y_pred", "label", (RowRule("empty", "y_pred is missing", runs="top_label"),)),
    ColumnSpec("confidence", "number", (
        RowRule("not_finite", "confidence is missing, NaN or infinite"),
        RowRule("outside_unit", "confidence must lie between 0 and 1"),
    )),
    ColumnSpec(PROBA_PREFIX, "probability", (
        RowRule("nan", "NaN or missing probabilities"),
        RowRule("infinite", "infinite probabilities"),
        RowRule("negative", "negative probabilities"),
    ), aliases=("prob_", "p_", "probability_"), prefix=True),
    ColumnSpec(LOGIT_PREFIX, "logit", (RowRule("not_finite", "NaN, missing or infinite logits"),), prefix=True),
)  # fmt: skip

SPECS = {spec.name: spec for spec in COLUMNS}
RESERVED_COLUMNS = tuple(spec.name for spec in COLUMNS if not spec.prefix)
TEXT_COLUMNS = tuple(spec.name for spec in COLUMNS if spec.family in ("group", "label", "id", "time"))
FEW_VALUES = tuple(spec.name for spec in COLUMNS if spec.family in ("group", "label"))
LABEL_LIKE = frozenset(SPECS["y_true"].aliases)
PROBA_ALIASES = SPECS[PROBA_PREFIX].aliases


def column_name(raw: str) -> str:
    """The name a header's ``raw`` column name stands for: the whitespace around it ignored, and the whitespace
    around the class after ``proba_`` or ``logit_`` too, as around a label's cell (``"proba_ a\t"`` is class
    ``a``, and a label `` a`` names it). Both readers name columns and classes so; the aggregation reads each
    class's cells from the column as the file spells it."""
    name = raw.strip()
    for prefix in (PROBA_PREFIX, LOGIT_PREFIX):
        if name.startswith(prefix):
            return _nfc(prefix + name[len(prefix) :].strip())
    return _nfc(name)


def _nfc(text: str) -> str:
    """Text in Unicode's composed form (NFC): "é" typed as one character or as "e" plus an accent is
    one name, never two classes or models that look alike."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def spec_of(column: str) -> ColumnSpec | None:
    """The spec a column name falls under, or None for a column a run file does not know."""
    for spec in COLUMNS:
        if spec.names(column):
            return spec
    return None


def is_run_column(column: str) -> bool:
    return spec_of(column) is not None


def rules_of(column: str) -> tuple[RowRule, ...]:
    spec = spec_of(column)
    return () if spec is None else spec.rules


# ------------------------------------------------------------------ the rules, numpy and SQL side by side
def rule_mask(rule: Rule, values: np.ndarray, not_number: np.ndarray | None = None) -> np.ndarray:
    """Rows (or cells) of float ``values`` where ``rule`` holds; ``not_number``: cells whose text is no
    number (reported apart, NaN in ``values``)."""
    import numpy as np  # here: the SQL side (an aggregation in DuckDB) needs no numpy

    with np.errstate(invalid="ignore"):
        if rule == "nan":
            mask = np.isnan(values)
        elif rule == "not_finite":
            mask = ~np.isfinite(values)
        elif rule == "infinite":
            return np.isinf(values)
        elif rule == "negative":
            return values < 0
        elif rule == "outside_unit":
            return (values < 0) | (values > 1 + CONFIDENCE_TOLERANCE)
        elif rule == "weight_range":
            low, high = WEIGHT_RANGE
            return (values > high) | ((values > 0) & (values < low))
        else:
            raise ValueError(f"rule {rule!r} has no numeric form")
    return mask if not_number is None else mask & ~not_number


LARGEST_DOUBLE = "1.7976931348623157e308"
Dialect = Literal["duckdb", "spark"]


def _float_test(test: str, value, dialect: Dialect):
    """``value`` (an expression of ``sqltext.exp``: sqlglot's, or DuckDB's text) is NaN (``nan``), infinite
    (``inf``) or either (``not_finite``), in the engine's own functions. DuckDB 2.0 folds ``isnan`` (and
    comparisons) to false from Parquet's min/max statistics, which leave NaN out; ``isfinite`` and ``isinf``
    it evaluates row by row. Spark has neither of those two."""
    from .sqltext import exp

    def finite():
        return exp.Anonymous(this="isfinite", expressions=[value.copy()])

    def nan():
        return exp.IsNan(this=value.copy())

    def huge():
        return exp.GT(this=exp.Abs(this=value.copy()), expression=exp.Literal.number(LARGEST_DOUBLE))

    if dialect == "duckdb":
        if test == "inf":
            return exp.IsInf(this=value.copy())
        return exp.not_(finite(), copy=False) if test == "not_finite" else exp.and_(
            exp.not_(finite(), copy=False), exp.not_(exp.IsInf(this=value.copy()), copy=False), copy=False)
    if test == "nan":
        return nan()
    return exp.and_(huge(), exp.not_(nan()), copy=False) if test == "inf" else exp.or_(nan(), huge(), copy=False)


def sql_is_nan(value, dialect: Dialect = "duckdb"):
    """The condition: ``value`` (an expression of ``sqltext.exp``) is NaN, in the engine's dialect."""
    return _float_test("nan", value, dialect)


def sql_is_finite(value, dialect: Dialect = "duckdb"):
    """The condition: ``value`` (an expression of ``sqltext.exp``) is a finite number (NULL when it is NULL)."""
    from .sqltext import exp

    if dialect == "duckdb":
        return exp.Anonymous(this="isfinite", expressions=[value])
    return exp.not_(_float_test("not_finite", value, dialect), copy=False)


def rule_condition(rule: Rule, value, not_number=None, text=None, dialect: Dialect = "duckdb"):
    """The condition of ``rule`` on the DOUBLE expression ``value``, an expression of ``sqltext.exp`` (sqlglot's
    for DuckDB or Spark, or DuckDB's text);
    ``not_number``: the condition of a cell whose text is no number; ``text``: the column as trimmed text,
    NULL when empty (for ``empty``)."""
    from .sqltext import exp

    if rule == "empty":
        return text.is_(exp.null())
    def nan():
        return _float_test("nan", value, dialect)

    number = exp.Literal.number

    def unless_text(condition):
        return condition if not_number is None else exp.and_(exp.not_(not_number), condition)

    if rule == "nan":
        return unless_text(exp.or_(value.is_(exp.null()), nan()))
    if rule == "not_finite":
        return unless_text(exp.or_(value.is_(exp.null()), _float_test("not_finite", value, dialect)))
    if rule == "infinite":
        return _float_test("inf", value, dialect)
    # Both engines order NaN above every number (numpy compares it false): each "greater than" says "not NaN".
    if rule == "negative":
        return value < 0
    if rule == "outside_unit":
        return exp.or_(value < 0, exp.and_(value > number(repr(1 + CONFIDENCE_TOLERANCE)), exp.not_(nan())))
    if rule == "weight_range":
        low, high = (number(repr(bound)) for bound in WEIGHT_RANGE)
        return exp.or_(exp.and_(value > high, exp.not_(nan())), exp.and_(value > 0, value < low))
    raise ValueError(f"rule {rule!r} has no SQL form")


def rule_sql(
    rule: Rule, value: str, not_number: str | None = None, text: str | None = None, dialect: Dialect = "duckdb"
) -> str:
    """:func:`rule_condition` as SQL text, its arguments SQL expressions in ``dialect`` too."""
    from sqlglot import exp

    def parsed(sql):
        return None if sql is None else exp.maybe_parse(sql, dialect=dialect)

    condition = rule_condition(rule, parsed(value), parsed(not_number), parsed(text), dialect)
    return condition.sql(dialect=dialect)
