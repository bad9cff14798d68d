"""A Parquet file's columns, their kinds and its row count, read from its footer in pure Python.

The aggregation scans every Parquet file before an engine runs (``aggregate.sources``): its column names,
what each holds (a number, text, a time, a truth; lists or records) and its row count. pyarrow answers from
the footer too, but importing it (and numpy with it) was 0.08 s of a fresh process, a third of a small
DuckDB aggregation, which otherwise needs neither (issue 33). This module reads the two descriptions a
footer holds and answers only where they leave no doubt:

* the Parquet schema (the footer's Thrift ``FileMetaData``, compact protocol): each top-level column's
  physical, converted and logical type and whether it is a group or repeated;
* the Arrow schema that Arrow writers store beside it (key ``ARROW:schema``: an Arrow IPC ``Schema``
  message, base64): each field's type and whether it is dictionary encoded. pyarrow restores these types, so
  a dictionary of integers or a duration (both 64-bit integers in Parquet) is not a number to it.

A column's kind is taken only when both descriptions give the same one (or the file has no Arrow schema and
the Parquet types say it alone); anything else (they differ, an extension type, a type this module does not
know, an encrypted footer, bytes that do not parse as the format says) gives None, and the caller asks
pyarrow, as before. ``tests/io/test_parquet_footer.py`` checks the answers against pyarrow's schema on
files pyarrow and DuckDB write, and on damaged footers.
"""

from __future__ import annotations

import base64
import binascii
import os
import struct

__all__ = ["FooterBudget", "footer_columns"]

MAGIC = b"PAR1"
# Footers are read here, in Python, up to this many bytes in all (for one aggregation): 0.2 ms a kilobyte (a
# footer of 100 row groups of 12 columns, 143 KB, 28 ms), so at most about 50 ms, against 80 ms to import
# pyarrow and numpy. Past it (many files, thousands of row groups) pyarrow reads each footer faster.
FOOTER_BUDGET_BYTES = 256 << 10
_MAX_DEPTH = 32  # nesting of Thrift structures skipped over; deeper is not a footer a writer makes


class _Unsure(Exception):
    """Bytes this module does not read with certainty: pyarrow answers instead."""


class FooterBudget:
    """The footer bytes still to be read in Python; shared by the files of one aggregation."""

    def __init__(self, left: int = FOOTER_BUDGET_BYTES):
        self.left = left


def footer_columns(path: str | os.PathLike, budget: FooterBudget | None = None
                   ) -> tuple[list[str], dict[str, str], int, list[str]] | None:
    """(names, kinds, rows, nested) of a Parquet file from its footer, or None to leave it to pyarrow.

    ``names``: the top-level columns in file order; ``kinds``: name -> ``"number"``, ``"text"``, ``"time"`` or
    ``"bool"``, as ``aggregate.sources._arrow_kind`` gives it from pyarrow's schema; ``rows``: the row count
    the footer records; ``nested``: the names of columns holding lists or records (pyarrow's ``is_nested``).
    A footer larger than what is left of ``budget`` (default: a budget of its own) is not read. OSError is
    raised as opening the file raises it."""
    budget = FooterBudget() if budget is None else budget
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size < 12:
            return None
        handle.seek(size - 8)
        tail = handle.read(8)
        length = int.from_bytes(tail[:4], "little")
        if tail[4:] != MAGIC or length > min(size - 12, budget.left):
            return None
        budget.left -= length
        handle.seek(size - 8 - length)
        footer = handle.read(length)
        handle.seek(0)
        if handle.read(4) != MAGIC or len(footer) != length:
            return None
    try:
        return _columns(footer)
    except (_Unsure, IndexError, ValueError, struct.error, RecursionError, UnicodeDecodeError, binascii.Error,
            MemoryError):
        return None


def _columns(footer: bytes):
    metadata = _Thrift(footer).file_metadata()
    schema, rows = metadata.get("schema"), metadata.get("num_rows")
    if not schema or rows is None or rows < 0:
        raise _Unsure
    top = _top_level(schema)
    names = [element["name"] for element, _ in top]
    parquet_kinds = [_parquet_kind(element, group) for element, group in top]
    arrow = [value for key, value in metadata.get("key_value", ()) if key == "ARROW:schema"]
    if len(arrow) > 1:  # pyarrow takes the first, and refuses the file when that one is not a schema
        raise _Unsure
    if arrow:
        arrow_kinds = _arrow_kinds(arrow[0], [element["name_bytes"] for element, _ in top])
        if arrow_kinds != parquet_kinds:
            raise _Unsure
    # A name written twice has its last column's kind, as in pyarrow's; lists and records are text to it.
    kinds = {name: "text" if kind == "nested" else kind for name, kind in zip(names, parquet_kinds)}
    nested = [name for name, kind in zip(names, parquet_kinds) if kind == "nested"]
    return names, kinds, rows, nested


# ------------------------------------------------------------------ the Parquet schema
_BOOLEAN, _INT32, _INT64, _INT96, _FLOAT, _DOUBLE, _BYTE_ARRAY, _FIXED_LEN_BYTE_ARRAY = range(8)
_REPEATED = 2
# ConvertedType -> (kind, the physical types it may annotate); absent: not known here
_CONVERTED_KINDS = {
    0: ("text", {_BYTE_ARRAY}), 4: ("text", {_BYTE_ARRAY}),  # UTF8, ENUM
    19: ("text", {_BYTE_ARRAY}), 20: ("text", {_BYTE_ARRAY}),  # JSON, BSON
    # DECIMAL (5) is not here: pyarrow reads a decimal whose precision or scale does not fit its physical type as
    # bytes (text), and the rules of fitting are pyarrow's to apply.
    6: ("time", {_INT32}),  # DATE
    7: ("text", {_INT32}), 8: ("text", {_INT64}),  # TIME_MILLIS, TIME_MICROS: a time of day, no point in time
    9: ("time", {_INT64}), 10: ("time", {_INT64}),  # TIMESTAMP_MILLIS, TIMESTAMP_MICROS
    **{c: ("number", {_INT32}) for c in (11, 12, 13, 15, 16, 17)},  # UINT_8, _16, _32, INT_8, _16, _32
    14: ("number", {_INT64}), 18: ("number", {_INT64}),  # UINT_64, INT_64
}
# LogicalType's union member (its Thrift field id) -> (kind, the physical types it may annotate)
_LOGICAL_KINDS = {
    1: ("text", {_BYTE_ARRAY}), 4: ("text", {_BYTE_ARRAY}),  # STRING, ENUM
    12: ("text", {_BYTE_ARRAY}), 13: ("text", {_BYTE_ARRAY}),  # JSON, BSON
    6: ("time", {_INT32}),  # DATE (DECIMAL, 5, is pyarrow's, as above)
    7: ("text", {_INT32, _INT64}),  # TIME
    8: ("time", {_INT64}),  # TIMESTAMP
    10: ("number", {_INT32, _INT64}),  # INTEGER
    11: ("text", set(range(8))),  # UNKNOWN (always null)
}
_PHYSICAL_KINDS = {_BOOLEAN: "bool", _INT32: "number", _INT64: "number", _INT96: "time", _FLOAT: "number",
                   _DOUBLE: "number", _BYTE_ARRAY: "text", _FIXED_LEN_BYTE_ARRAY: "text"}  # fmt: skip


def _top_level(schema: list[dict]) -> list[tuple[dict, bool]]:
    """(element, is a group) of each top-level column; the schema's depth-first list must be whole."""
    root = schema[0]
    count = root.get("num_children")
    if count is None or count < 0:
        raise _Unsure
    top, position = [], 1
    for _ in range(count):
        if position >= len(schema):
            raise _Unsure
        element = schema[position]
        if "name" not in element:
            raise _Unsure
        group = "num_children" in element
        top.append((element, group))
        position = _after(schema, position)
    if position != len(schema):
        raise _Unsure
    return top


def _after(schema: list[dict], position: int) -> int:
    """The position after the element at ``position`` and all its descendants."""
    pending = 1
    while pending:
        if position >= len(schema):
            raise _Unsure
        children = schema[position].get("num_children", 0)
        if children < 0:
            raise _Unsure
        pending += children - 1
        position += 1
    return position


def _parquet_kind(element: dict, group: bool) -> str:
    if group:
        if element.get("num_children", 0) == 0 or "type" in element:
            raise _Unsure
        return "nested"
    physical = element.get("type")
    if physical not in _PHYSICAL_KINDS:
        raise _Unsure
    if element.get("repetition_type") == _REPEATED:
        return "nested"  # a list of its values to Arrow
    # An annotation is taken only on a physical type it may annotate, and two only when they agree: anything
    # else is a writer's oddity (or damage) whose reading is pyarrow's to say.
    kinds = {_PHYSICAL_KINDS[physical]} if "converted_type" not in element and "logical_type" not in element else set()
    if "converted_type" in element:
        kind, physical_types = _CONVERTED_KINDS.get(element["converted_type"], (None, ()))
        if physical not in physical_types:
            raise _Unsure
        kinds.add(kind)
    if "logical_type" in element:
        member, allowed = element["logical_type"]
        kind, physical_types = _LOGICAL_KINDS.get(member, (None, ()))
        if physical not in physical_types or (allowed is not None and physical not in allowed):
            raise _Unsure
        kinds.add(kind)
    if len(kinds) != 1:
        raise _Unsure
    return kinds.pop()


# Thrift compact protocol: field types
_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE_T, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)


class _Thrift:
    """Reads the fields of ``FileMetaData`` this module needs, skipping the rest (row groups, statistics).

    Stricter than Thrift's own reader, never looser: a field it reads must come with the type the format
    declares (Thrift's reader skips one that does not, and reads on), once (it keeps the last), with an id and
    a value in their types' ranges (it cuts wider ones to their low bits); anything else is left to pyarrow."""

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self, bits: int = 64) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
            if shift >= bits + 7:
                raise _Unsure
        if result >> bits:
            raise _Unsure
        return result

    def zigzag(self, bits: int = 64) -> int:
        n = self.varint(bits)
        return (n >> 1) ^ -(n & 1)

    def binary(self) -> bytes:
        size = self.varint(32)
        end = self.pos + size
        if end > len(self.data):
            raise _Unsure
        value = self.data[self.pos:end]
        self.pos = end
        return value

    def fields(self):
        """(field id, type) of each field of the struct being read, until its stop; each id once."""
        last = 0
        seen = set()
        while True:
            header = self.byte()
            kind = header & 0x0F
            if kind == _STOP:
                return
            delta = header >> 4
            last = last + delta if delta else self.zigzag(16)
            if not 0 < last < 1 << 15 or last in seen:
                raise _Unsure
            seen.add(last)
            yield last, kind

    def list_header(self) -> tuple[int, int]:
        header = self.byte()
        size = header >> 4
        if size == 15:
            size = self.varint(32)
        return size, header & 0x0F

    def skip(self, kind: int, depth: int = 0) -> None:
        if depth > _MAX_DEPTH:
            raise _Unsure
        if kind in (_TRUE, _FALSE):
            return  # a struct field's value is in its type; a container's booleans: skip_element
        if kind == _BYTE:
            self.pos += 1
        elif kind in (_I16, _I32, _I64):
            self.varint()
        elif kind == _DOUBLE_T:
            self.pos += 8
        elif kind == _BINARY:
            self.binary()
        elif kind in (_LIST, _SET):
            size, element = self.list_header()
            for _ in range(size):
                self.skip_element(element, depth + 1)
        elif kind == _MAP:
            size = self.varint(32)
            if size:
                types = self.byte()
                for _ in range(size):
                    self.skip_element(types >> 4, depth + 1)
                    self.skip_element(types & 0x0F, depth + 1)
        elif kind == _STRUCT:
            for _, field_kind in self.fields():
                self.skip(field_kind, depth + 1)
        else:
            raise _Unsure
        if self.pos > len(self.data):
            raise _Unsure

    def skip_element(self, kind: int, depth: int) -> None:
        """A list's, set's or map's element: a boolean there is a byte of its own, as any other element takes
        at least one (so a stated size beyond the bytes ends the reading at the bytes' end)."""
        if kind in (_TRUE, _FALSE):
            self.pos += 1
            if self.pos > len(self.data):
                raise _Unsure
        else:
            self.skip(kind, depth)

    def integer(self, kind: int, declared: int) -> int:
        if kind != declared:
            raise _Unsure
        return self.zigzag(32 if declared == _I32 else 64)

    def structs(self, kind: int, read) -> list:
        if kind != _LIST:
            raise _Unsure
        size, element = self.list_header()
        if element != _STRUCT:
            raise _Unsure
        return [read() for _ in range(size)]

    def file_metadata(self) -> dict:
        found: dict = {}
        for field, kind in self.fields():
            if field == 2:
                found["schema"] = self.structs(kind, self.schema_element)
            elif field == 3:
                found["num_rows"] = self.integer(kind, _I64)
            elif field == 5:
                found["key_value"] = self.structs(kind, self.key_value)
            elif field == 8:  # encryption_algorithm: its columns may be beyond reading
                raise _Unsure
            else:
                if field in (1, 4):  # version and row_groups, required as the others
                    found[field] = kind
                self.skip(kind)
        if self.pos != len(self.data) or found.pop(1, None) != _I32 or found.pop(4, None) != _LIST:
            raise _Unsure
        return found

    def schema_element(self) -> dict:
        element: dict = {}
        for field, kind in self.fields():
            if field == 1:
                element["type"] = self.integer(kind, _I32)
            elif field == 3:
                element["repetition_type"] = self.integer(kind, _I32)
            elif field == 4:
                if kind != _BINARY:
                    raise _Unsure
                element["name_bytes"] = self.binary()
                element["name"] = element["name_bytes"].decode("utf-8")
            elif field == 5:
                element["num_children"] = self.integer(kind, _I32)
            elif field == 6:
                element["converted_type"] = self.integer(kind, _I32)
            elif field == 10:
                element["logical_type"] = self.logical_type(kind)
            else:
                self.skip(kind)
        return element

    def logical_type(self, kind: int) -> tuple[int, set[int] | None]:
        """(the union's member: its field id, the physical types its parameters allow, or None to leave that to
        the member's own entry in ``_LOGICAL_KINDS``). Exactly one member; the parameters of those read here
        (INTEGER's width and sign, TIME's and TIMESTAMP's UTC flag and unit) checked whole, since pyarrow reads a
        column whose annotation it cannot take as its physical type alone."""
        if kind != _STRUCT:
            raise _Unsure
        members = []
        for field, member_kind in self.fields():
            if member_kind != _STRUCT:
                raise _Unsure
            if field == 10:
                members.append((field, self.integer_parameters()))
            elif field in (7, 8):
                unit = self.time_parameters()
                members.append((field, {_INT32 if unit == 1 else _INT64} if field == 7 else {_INT64}))
            elif field in _LOGICAL_KINDS:  # the members without parameters: nothing inside
                for _ in self.fields():
                    raise _Unsure
                members.append((field, None))
            else:
                self.skip(member_kind)
                members.append((field, None))
        if len(members) != 1:
            raise _Unsure
        return members[0]

    def integer_parameters(self) -> set[int]:
        width, signed = None, None
        for field, kind in self.fields():
            if field == 1 and kind == _BYTE:
                width = self.byte()
            elif field == 2 and kind in (_TRUE, _FALSE):
                signed = kind == _TRUE
            else:
                raise _Unsure
        if signed is None or width not in (8, 16, 32, 64):
            raise _Unsure
        return {_INT64} if width == 64 else {_INT32}

    def time_parameters(self) -> int:
        """The unit (1 milliseconds, 2 microseconds, 3 nanoseconds) of a TIME or TIMESTAMP, its UTC flag there."""
        adjusted, unit = None, None
        for field, kind in self.fields():
            if field == 1 and kind in (_TRUE, _FALSE):
                adjusted = kind == _TRUE
            elif field == 2 and kind == _STRUCT:
                units = []
                for member, member_kind in self.fields():
                    if member not in (1, 2, 3) or member_kind != _STRUCT:
                        raise _Unsure
                    for _ in self.fields():
                        raise _Unsure
                    units.append(member)
                if len(units) != 1:
                    raise _Unsure
                unit = units[0]
            else:
                raise _Unsure
        if adjusted is None or unit is None:
            raise _Unsure
        return unit

    def key_value(self) -> tuple[str, bytes | None]:
        key, value = None, None
        for field, kind in self.fields():
            if field in (1, 2):
                if kind != _BINARY:
                    raise _Unsure
                text = self.binary()
                key, value = (text.decode("utf-8"), value) if field == 1 else (key, text)
            else:
                self.skip(kind)
        if key is None:
            raise _Unsure
        return key, value


# ------------------------------------------------------------------ the Arrow schema
# Arrow's Type union (Schema.fbs) -> kind, as pyarrow.types says: is_integer, is_floating, is_decimal -> number,
# is_boolean -> bool, is_date, is_timestamp -> time, is_nested -> nested; the rest is text.
_ARROW_KINDS = {
    1: "text", 2: "number", 3: "number", 4: "text", 5: "text", 6: "bool", 7: "number", 8: "time", 9: "text",
    10: "time", 11: "text", 12: "nested", 13: "nested", 14: "nested", 15: "text", 16: "nested", 17: "nested",
    18: "text", 19: "text", 20: "text", 21: "nested", 23: "text", 24: "text", 25: "nested", 26: "nested",
}  # fmt: skip
_SCHEMA_HEADER = 1  # MessageHeader.Schema


def _arrow_kinds(value: bytes | None, names: list[bytes]) -> list[str]:
    """The kind of each top-level field of the base64 Arrow IPC schema message ``value``, whose fields must be
    named ``names`` (UTF-8), in order: the names are compared as bytes, each only once its length matched, so
    no name is copied larger than the Parquet schema's own."""
    if not value:  # a key without a value: pyarrow refuses the file
        raise _Unsure
    data = base64.b64decode(value, validate=True)
    if data[:4] == b"\xff\xff\xff\xff":  # a continuation marker, then the message's size
        start = 8
        size = _u32(data, 4)
    else:  # the format before the marker: the size first
        start = 4
        size = _u32(data, 0)
    message = _Flat(data[start:start + size])
    if len(message.data) != size:
        raise _Unsure
    root = message.root()
    if message.scalar(root, 1, "B", 0) != _SCHEMA_HEADER:
        raise _Unsure
    schema = message.table(root, 2)
    start, count = message.vector(schema, 1)
    if count != len(names):
        raise _Unsure
    kinds = []
    for i, name in enumerate(names):
        field = message.element(start, i)
        if not message.string_is(field, 0, name):
            raise _Unsure
        if message.field_position(field, 6) is not None:  # custom metadata: an extension type, perhaps
            raise _Unsure
        if message.field_position(field, 4) is not None:  # dictionary encoded: no integer, no time to pyarrow
            kind = "text"
        else:
            kind = _ARROW_KINDS.get(message.scalar(field, 2, "B", 0))
        if kind is None:
            raise _Unsure
        kinds.append(kind)
    return kinds


def _u32(data: bytes, position: int) -> int:
    if position < 0 or position + 4 > len(data):
        raise _Unsure
    return struct.unpack_from("<I", data, position)[0]


class _Flat:
    """Reads tables, scalars, strings and vectors of tables of a FlatBuffer, every position checked."""

    def __init__(self, data: bytes):
        self.data = data

    def _read(self, fmt: str, position: int):
        if position < 0 or position + struct.calcsize(fmt) > len(self.data):
            raise _Unsure
        return struct.unpack_from("<" + fmt, self.data, position)[0]

    def root(self) -> int:
        return self._read("I", 0)

    def field_position(self, table: int, index: int) -> int | None:
        vtable = table - self._read("i", table)
        size = self._read("H", vtable)
        entry = 4 + 2 * index
        if entry + 2 > size:
            return None
        offset = self._read("H", vtable + entry)
        return table + offset if offset else None

    def scalar(self, table: int, index: int, fmt: str, default):
        position = self.field_position(table, index)
        return default if position is None else self._read(fmt, position)

    def _target(self, table: int, index: int) -> int | None:
        position = self.field_position(table, index)
        return None if position is None else position + self._read("I", position)

    def table(self, table: int, index: int) -> int:
        target = self._target(table, index)
        if target is None:
            raise _Unsure
        return target

    def string_is(self, table: int, index: int, expected: bytes) -> bool:
        """Whether the string at ``index`` is ``expected``, compared only once their lengths are equal."""
        target = self._target(table, index)
        if target is None:
            return False
        size = self._read("I", target)
        if size != len(expected) or target + 4 + size > len(self.data):
            return False
        return self.data[target + 4:target + 4 + size] == expected

    def vector(self, table: int, index: int) -> tuple[int, int]:
        """(where its elements start, how many) of the vector at ``index``; checked to lie in the buffer."""
        target = self._target(table, index)
        if target is None:
            return 0, 0
        count = self._read("I", target)
        if target + 4 + 4 * count > len(self.data):
            raise _Unsure
        return target + 4, count

    def element(self, start: int, i: int) -> int:
        """The table the ``i``-th offset of a vector of tables points to."""
        position = start + 4 * i
        return position + self._read("I", position)
