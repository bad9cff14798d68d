"""The expressions the aggregation's SQL is built from: sqlglot's, or, for DuckDB, nodes of this module that
are their rendered text already.

``aggregate.sql`` and ``columns`` build every query once, through :data:`exp`: by default that is sqlglot's
``exp`` (Spark renders it in its dialect, and every caller outside an aggregation gets sqlglot's trees).
While :func:`building_for` ``("duckdb")`` is in force, :data:`exp` is this module's DuckDB builder instead:
the same names and arguments (``exp.Case(ifs=..., default=...)``, ``exp.and_``, ``a < b``, ``Select.where``,
...), each node holding the text sqlglot would render for it in DuckDB's dialect with every identifier
quoted. Importing sqlglot and its DuckDB generator was 0.11 s of CPU, a fifth of a small DuckDB aggregate
(issue 33); the text is the same, which ``tests/io/test_sqltext.py`` checks query by query against sqlglot.

Only what the aggregation uses is here, spelled as sqlglot spells it: identifiers ``"..."`` with ``"``
doubled, strings ``'...'`` with ``'`` doubled (a backslash is a character like any other in DuckDB),
numbers as the text they were given (a negative one as ``-`` and its absolute value, as sqlglot's
``Literal.number``), and parentheses exactly where sqlglot's builders put them (``and_``/``or_``/``not_``
around an AND or OR, operators around a binary operand of another kind); its generator adds none.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from contextvars import ContextVar
from decimal import Decimal
from types import SimpleNamespace


class Expression:
    """A DuckDB expression or query, as its SQL text (immutable: ``copy`` is the node itself)."""

    __slots__ = ("duckdb_text",)

    def __init__(self, text: str):
        # Not ``text``: a sqlglot node has a ``text`` method, which an f-string would write as its repr;
        # a sqlglot node mixed into a DuckDB tree must fail here, loudly, not reach DuckDB as odd SQL.
        self.duckdb_text = text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.duckdb_text!r})"

    def sql(self, dialect: str = "duckdb", identify: bool = True) -> str:
        if dialect != "duckdb" or not identify:
            raise ValueError("these nodes hold DuckDB's text with every identifier quoted, nothing else")
        return self.duckdb_text

    def copy(self):
        return self

    def _binop(self, klass, other):
        this, other = self, convert(other)
        if not isinstance(this, klass) and not isinstance(other, klass):
            this, other = _wrap(this, Binary), _wrap(other, Binary)
        return klass(this=this, expression=other)

    def is_(self, other):
        return self._binop(Is, other)

    def eq(self, other):
        return self._binop(EQ, other)

    def __lt__(self, other):
        return self._binop(LT, other)

    def __le__(self, other):
        return self._binop(LTE, other)

    def __gt__(self, other):
        return self._binop(GT, other)

    def __ge__(self, other):
        return self._binop(GTE, other)

    def __add__(self, other):
        return self._binop(Add, other)

    def __sub__(self, other):
        return self._binop(Sub, other)

    def __mul__(self, other):
        return self._binop(Mul, other)

    def __truediv__(self, other):
        return self._binop(Div, other)

    def isin(self, *values):
        return In(this=self, expressions=[convert(v) for v in values])

    def not_(self, copy: bool = True):
        return not_(self)

    def subquery(self, alias: str | None = None, copy: bool = True):
        return Subquery(self, alias)


def _identifier(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def _string(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _list(expressions) -> str:
    return ", ".join(e.duckdb_text for e in expressions)


def _wrap(expression, kind):
    return Paren(this=expression) if isinstance(expression, kind) else expression


class Column(Expression):
    __slots__ = ()


def column(name: str) -> Column:
    return Column(_identifier(name))


class Identifier(Expression):
    __slots__ = ("this",)

    def __init__(self, name: str):
        super().__init__(_identifier(name))
        self.this = str(name)


def to_identifier(name: str, quoted: bool | None = None) -> Identifier:
    return Identifier(name)


class Literal(Expression):
    __slots__ = ("this",)

    def __init__(self, text: str, this: str):
        super().__init__(text)
        self.this = this

    @classmethod
    def string(cls, value) -> Literal:
        return cls(_string(value), str(value))

    @classmethod
    def number(cls, value) -> Expression:
        text = str(value)
        try:  # sqlglot's Literal.to_py: an int, else a Decimal
            try:
                parsed = int(text)
            except ValueError:
                parsed = Decimal(text)
            if parsed < 0:
                text = str(abs(parsed))
                return Neg(this=cls(text, text))
        except Exception:  # noqa: BLE001 - sqlglot keeps the text as given (NaN, a Decimal it cannot order)
            pass
        return cls(text, text)


class Neg(Expression):
    __slots__ = ()

    def __init__(self, this):
        super().__init__(f"-{this.duckdb_text}")


class Null(Expression):
    __slots__ = ()

    def __init__(self):
        super().__init__("NULL")


def null() -> Null:
    return Null()


class Boolean(Expression):
    __slots__ = ()

    def __init__(self, this: bool):
        super().__init__("TRUE" if this else "FALSE")


def false() -> Boolean:
    return Boolean(False)


def convert(value) -> Expression:
    """A Python value as a literal (sqlglot's ``exp.convert`` for the values used here)."""
    if isinstance(value, Expression):
        return value
    if isinstance(value, str):
        return Literal.string(value)
    if isinstance(value, bool):
        return Boolean(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Null()
    if isinstance(value, numbers.Number):
        return Literal.number(value)
    raise TypeError(f"no DuckDB literal for {type(value).__name__}")


class Star(Expression):
    __slots__ = ()

    def __init__(self):
        super().__init__("*")


class Placeholder(Expression):
    __slots__ = ()

    def __init__(self):
        super().__init__("?")


class Var(Expression):
    __slots__ = ()


def var(name: str) -> Var:
    return Var(str(name))


class Paren(Expression):
    __slots__ = ()

    def __init__(self, this):
        super().__init__(f"({this.duckdb_text})")


class DataType(Expression):
    __slots__ = ()
    # sqlglot's names in DuckDB's dialect, of the types the aggregation casts to.
    _DUCKDB_NAMES = {"DOUBLE": "DOUBLE", "STRING": "TEXT", "TEXT": "TEXT", "BIGINT": "BIGINT", "INT": "INT",
                     "TIMESTAMP": "TIMESTAMP", "TIMESTAMPTZ": "TIMESTAMPTZ"}  # fmt: skip

    @classmethod
    def build(cls, name: str) -> DataType:
        try:
            return cls(cls._DUCKDB_NAMES[name.upper()])
        except KeyError:
            raise ValueError(f"no DuckDB type {name!r} here") from None


class Cast(Expression):
    __slots__ = ("to",)
    _NAME = "CAST"

    def __init__(self, this, to: DataType, **_):
        super().__init__(f"{self._NAME}({this.duckdb_text} AS {to.duckdb_text})")
        self.to = to


class TryCast(Cast):
    __slots__ = ()
    _NAME = "TRY_CAST"


def cast(expression, to) -> Cast:
    to = to if isinstance(to, DataType) else DataType.build(to)
    if isinstance(expression, Cast) and expression.to.duckdb_text == to.duckdb_text:  # sqlglot does not cast twice
        return expression
    return Cast(this=expression, to=to)


class Binary(Expression):
    __slots__ = ()
    _OPERATOR = ""

    def __init__(self, this, expression):
        super().__init__(f"{this.duckdb_text} {self._OPERATOR} {expression.duckdb_text}")


def _binary(name: str, operator: str, base=Binary):
    return type(name, (base,), {"__slots__": (), "_OPERATOR": operator})


Add, Sub, Mul, Div = (_binary(n, o) for n, o in (("Add", "+"), ("Sub", "-"), ("Mul", "*"), ("Div", "/")))
EQ, GT, GTE, LT, LTE = (_binary(n, o) for n, o in (("EQ", "="), ("GT", ">"), ("GTE", ">="), ("LT", "<"), ("LTE", "<=")))
Is = _binary("Is", "IS")
Connector = _binary("Connector", "")
And, Or = _binary("And", "AND", Connector), _binary("Or", "OR", Connector)


class Not(Expression):
    __slots__ = ()

    def __init__(self, this):
        super().__init__(f"NOT {this.duckdb_text}")


def not_(expression, copy: bool = True) -> Not:
    return Not(this=_wrap(expression, Connector))


def _combine(expressions, operator):
    this, *rest = [e for e in expressions if e is not None]
    if rest:
        this = _wrap(this, Connector)
    for expression in rest:
        this = operator(this=this, expression=_wrap(expression, Connector))
    return this


def and_(*expressions, copy: bool = True):
    return _combine(expressions, And)


def or_(*expressions, copy: bool = True):
    return _combine(expressions, Or)


class In(Expression):
    __slots__ = ()

    def __init__(self, this, expressions):
        super().__init__(f"{this.duckdb_text} IN ({_list(expressions)})")


class Func(Expression):
    """``NAME(this, expressions...)``."""

    __slots__ = ()
    _NAME = ""

    def __init__(self, this=None, expressions=(), expression=None, **_):
        arguments = [a for a in (this, *expressions, expression) if a is not None]
        super().__init__(f"{self._NAME}({_list(arguments)})")


def _function(name: str, sql_name: str):
    return type(name, (Func,), {"__slots__": (), "_NAME": sql_name})


Trim, Floor, Abs, Coalesce, Nullif, Greatest, Least = (_function(n, n.upper()) for n in (
    "Trim", "Floor", "Abs", "Coalesce", "Nullif", "Greatest", "Least"))  # fmt: skip
Sum, Max, Min, Avg, Count = (_function(n, n.upper()) for n in ("Sum", "Max", "Min", "Avg", "Count"))
IsInf, IsNan = _function("IsInf", "ISINF"), _function("IsNan", "ISNAN")


class Anonymous(Expression):
    __slots__ = ()

    def __init__(self, this: str, expressions):
        super().__init__(f"{this.upper()}({_list(expressions)})")


class TimestampTrunc(Expression):
    __slots__ = ()

    def __init__(self, this, unit: Literal):
        super().__init__(f"DATE_TRUNC({_string(unit.this.upper())}, {this.duckdb_text})")


class Distinct(Expression):
    __slots__ = ()

    def __init__(self, expressions):
        super().__init__(f"DISTINCT {_list(expressions)}")


class If(Expression):
    __slots__ = ()

    def __init__(self, this, true):
        super().__init__(f"WHEN {this.duckdb_text} THEN {true.duckdb_text}")


class Case(Expression):
    __slots__ = ()

    def __init__(self, this=None, ifs=(), default=None):
        parts = ["CASE", *([] if this is None else [this.duckdb_text]), *(i.duckdb_text for i in ifs)]
        parts += [] if default is None else ["ELSE", default.duckdb_text]
        super().__init__(" ".join(parts + ["END"]))


class Alias(Expression):
    __slots__ = ()


def alias_(expression, name: str, copy: bool = True) -> Alias:
    return Alias(f"{expression.duckdb_text} AS {_identifier(name)}")


class Ordered(Expression):
    __slots__ = ()

    def __init__(self, this, desc: bool | None = None, nulls_first: bool | None = None):
        if nulls_first:
            raise ValueError("DuckDB's text for NULLS FIRST is not built here")
        super().__init__(this.duckdb_text + (" DESC" if desc else " ASC" if desc is False else ""))


class Table(Expression):
    __slots__ = ()


def table_(table: str, db: str | None = None, catalog: str | None = None) -> Table:
    return Table(".".join(_identifier(n) for n in (catalog, db, table) if n))


class Subquery(Expression):
    __slots__ = ()

    def __init__(self, query, alias: str | None = None):
        super().__init__(f"({query.duckdb_text})" + ("" if alias is None else f" AS {_identifier(alias)}"))


class Query(Expression):
    __slots__ = ()


class Select(Query):
    """``[WITH ...] SELECT [DISTINCT] ... FROM ... [WHERE] [GROUP BY] [HAVING] [ORDER BY] [LIMIT]``, built by
    sqlglot's methods; each returns a new query."""

    __slots__ = ("parts",)

    def __init__(self, expressions=(), **parts):
        parts["expressions"] = list(expressions)
        self.parts = parts
        text = "SELECT " + ("DISTINCT " if parts.get("distinct") else "") + _list(parts["expressions"])
        if parts.get("with"):
            text = "WITH " + ", ".join(f"{_identifier(n)} AS ({q.duckdb_text})" for n, q in parts["with"]) + " " + text
        if "from" in parts:
            text += f" FROM {parts['from'].duckdb_text}"
        if "where" in parts:
            text += f" WHERE {parts['where'].duckdb_text}"
        if parts.get("group"):
            text += f" GROUP BY {_list(parts['group'])}"
        if "having" in parts:
            text += f" HAVING {parts['having'].duckdb_text}"
        if parts.get("order"):
            text += f" ORDER BY {_list(parts['order'])}"
        if "limit" in parts:
            text += f" LIMIT {parts['limit'].duckdb_text}"
        super().__init__(text)

    def _with(self, **changes) -> Select:
        return Select(**{**self.parts, **changes})

    def from_(self, origin, copy: bool = True) -> Select:
        return self._with(**{"from": table_(origin) if isinstance(origin, str) else origin})

    def where(self, condition, copy: bool = True) -> Select:
        return self._with(where=and_(self.parts["where"], condition) if "where" in self.parts else condition)

    def group_by(self, *expressions, copy: bool = True) -> Select:
        return self._with(group=[*self.parts.get("group", ()), *expressions])

    def having(self, condition, copy: bool = True) -> Select:
        return self._with(having=condition)

    def order_by(self, *ordered, copy: bool = True) -> Select:
        return self._with(order=[*self.parts.get("order", ()), *ordered])

    def limit(self, count: int, copy: bool = True) -> Select:
        return self._with(limit=convert(count))

    def distinct(self, copy: bool = True) -> Select:
        return self._with(distinct=True)

    def with_(self, name: str, as_, copy: bool = True) -> Select:
        return self._with(**{"with": [*self.parts.get("with", ()), (name, as_)]})


def select(*expressions) -> Select:
    return Select(expressions)


class Union(Query):
    __slots__ = ()

    def __init__(self, this, expression, distinct: bool = True, by_name: bool = False):
        kind = "UNION" + ("" if distinct else " ALL") + (" BY NAME" if by_name else "")
        super().__init__(f"{this.duckdb_text} {kind} {expression.duckdb_text}")


def union(left, right, distinct: bool = True) -> Union:
    return Union(this=left, expression=right, distinct=distinct)


class PropertyEQ(Expression):
    """``name := value``; a :class:`Struct` writes its name as a string."""

    __slots__ = ("pair",)

    def __init__(self, this: Identifier, expression):
        super().__init__(f"{this.duckdb_text} := {expression.duckdb_text}")
        self.pair = (this.this, expression)


class Struct(Expression):
    """DuckDB's struct literal ``{'name': value, ...}``."""

    __slots__ = ()

    def __init__(self, expressions):
        super().__init__("{" + ", ".join(f"{_string(name)}: {value.duckdb_text}" for name, value in (
            e.pair for e in expressions)) + "}")  # fmt: skip


class CopyParameter(Expression):
    __slots__ = ()

    def __init__(self, this, expression):
        super().__init__(f"{this.duckdb_text} {expression.duckdb_text}")


class Copy(Expression):
    """``COPY (query) TO file WITH (options)``."""

    __slots__ = ()

    def __init__(self, this, files, params, kind: bool = False):
        if kind:
            raise ValueError("only COPY ... TO is built here")
        super().__init__(f"COPY {this.duckdb_text} TO {_list(files)} WITH ({_list(params)})")


# The builder: this module's node classes and functions, under sqlglot's names.
DUCKDB = SimpleNamespace(**{name: value for name, value in globals().items() if not name.startswith("_") and (
    (isinstance(value, type) and issubclass(value, Expression))
    or (callable(value) and getattr(value, "__module__", None) == __name__))})  # fmt: skip

_BUILDER: ContextVar[SimpleNamespace | None] = ContextVar("valuecore_sql_builder", default=None)


class _Expressions:
    """sqlglot's ``exp``, or :data:`DUCKDB` while :func:`building_for` ``("duckdb")`` is in force (in this
    thread or task): resolved at each use, so sqlglot is imported only when its expressions are built."""

    def __getattr__(self, name: str):
        builder = _BUILDER.get()
        if builder is None:
            from sqlglot import exp as builder
        return getattr(builder, name)


exp = _Expressions()


@contextlib.contextmanager
def building_for(engine: str):
    """Queries built meanwhile (through :data:`exp`) are DuckDB's text when ``engine`` is ``"duckdb"``;
    sqlglot's expressions otherwise (``"spark"``, ``"sqlglot"``)."""
    token = _BUILDER.set(DUCKDB if engine == "duckdb" else None)
    try:
        yield
    finally:
        _BUILDER.reset(token)
