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
    except (_Unsure, IndexError, ValueError, struct.error, RecursionError, UnicodeDecodeError, binascii.Error):
        return None


def _columns(footer: bytes):
    metadata = _Thrift(footer).file_metadata()
    schema, rows = metadata.get("schema"), metadata.get("num_rows")
    if not schema or rows is None or rows < 0:
        raise _Unsure
    top = _top_level(schema)
    names = [element["name"] for element, _ in top]
    parquet_kinds = [_parquet_kind(element, group) for element, group in top]
    arrow = metadata.get("key_value", {}).get("ARROW:schema")
    if arrow is not None:
        fields = _arrow_fields(arrow)
        if [name for name, _ in fields] != names:
            raise _Unsure
        for kind, (_, arrow_kind) in zip(parquet_kinds, fields):
            if kind != arrow_kind:
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
    5: ("number", {_INT32, _INT64, _BYTE_ARRAY, _FIXED_LEN_BYTE_ARRAY}),  # DECIMAL
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
    5: ("number", {_INT32, _INT64, _BYTE_ARRAY, _FIXED_LEN_BYTE_ARRAY}),  # DECIMAL
    6: ("time", {_INT32}),  # DATE
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
    for key, table in (("converted_type", _CONVERTED_KINDS), ("logical_type", _LOGICAL_KINDS)):
        if key in element:
            kind, physical_types = table.get(element[key], (None, ()))
            if physical not in physical_types:
                raise _Unsure
            kinds.add(kind)
    if len(kinds) != 1:
        raise _Unsure
    return kinds.pop()


# Thrift compact protocol: field types
_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE_T, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)


class _Thrift:
    """Reads the fields of ``FileMetaData`` this module needs, skipping the rest (row groups, statistics)."""

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise _Unsure

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def binary(self) -> bytes:
        size = self.varint()
        end = self.pos + size
        if end > len(self.data):
            raise _Unsure
        value = self.data[self.pos:end]
        self.pos = end
        return value

    def fields(self):
        """(field id, type) of each field of the struct being read, until its stop."""
        last = 0
        while True:
            header = self.byte()
            kind = header & 0x0F
            if kind == _STOP:
                return
            delta = header >> 4
            last = last + delta if delta else self.zigzag()
            yield last, kind

    def list_header(self) -> tuple[int, int]:
        header = self.byte()
        size = header >> 4
        if size == 15:
            size = self.varint()
        return size, header & 0x0F

    def skip(self, kind: int, depth: int = 0) -> None:
        if depth > _MAX_DEPTH:
            raise _Unsure
        if kind in (_TRUE, _FALSE):
            return  # a struct field's value is in its type; a list's booleans are read as bytes below
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
            size = self.varint()
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

    def integer(self, kind: int) -> int:
        if kind not in (_I16, _I32, _I64):
            raise _Unsure
        return self.zigzag()

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
                found["num_rows"] = self.integer(kind)
            elif field == 5:
                found["key_value"] = dict(self.structs(kind, self.key_value))
            elif field == 8:  # encryption_algorithm: its columns may be beyond reading
                raise _Unsure
            else:
                self.skip(kind)
        if self.pos != len(self.data):
            raise _Unsure
        return found

    def schema_element(self) -> dict:
        element: dict = {}
        for field, kind in self.fields():
            if field == 1:
                element["type"] = self.integer(kind)
            elif field == 3:
                element["repetition_type"] = self.integer(kind)
            elif field == 4:
                if kind != _BINARY:
                    raise _Unsure
                element["name"] = self.binary().decode("utf-8")
            elif field == 5:
                element["num_children"] = self.integer(kind)
            elif field == 6:
                element["converted_type"] = self.integer(kind)
            elif field == 10:
                element["logical_type"] = self.logical_type(kind)
            else:
                self.skip(kind)
        return element

    def logical_type(self, kind: int) -> int:
        """The union's member (its field id); exactly one."""
        if kind != _STRUCT:
            raise _Unsure
        members = []
        for field, member_kind in self.fields():
            members.append(field)
            self.skip(member_kind)
        if len(members) != 1:
            raise _Unsure
        return members[0]

    def key_value(self) -> tuple[str, str | None]:
        key, value = None, None
        for field, kind in self.fields():
            if field in (1, 2) and kind == _BINARY:
                text = self.binary().decode("utf-8")
                key, value = (text, value) if field == 1 else (key, text)
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


def _arrow_fields(text: str | None) -> list[tuple[str, str]]:
    """(name, kind) of each top-level field of the base64 Arrow IPC schema message ``text``."""
    if text is None:
        raise _Unsure
    data = base64.b64decode(text, validate=True)
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
    fields = []
    for field in message.tables(schema, 1):
        name = message.string(field, 0)
        if message.field_position(field, 6) is not None:  # custom metadata: an extension type, perhaps
            raise _Unsure
        if message.field_position(field, 4) is not None:  # dictionary encoded: no integer, no time to pyarrow
            kind = "text"
        else:
            kind = _ARROW_KINDS.get(message.scalar(field, 2, "B", 0))
        if name is None or kind is None:
            raise _Unsure
        fields.append((name, kind))
    return fields


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

    def string(self, table: int, index: int) -> str | None:
        target = self._target(table, index)
        if target is None:
            return None
        size = self._read("I", target)
        if target + 4 + size > len(self.data):
            raise _Unsure
        return self.data[target + 4:target + 4 + size].decode("utf-8")

    def tables(self, table: int, index: int) -> list[int]:
        target = self._target(table, index)
        if target is None:
            return []
        count = self._read("I", target)
        if target + 4 + 4 * count > len(self.data):
            raise _Unsure
        return [target + 4 + 4 * i + self._read("I", target + 4 + 4 * i) for i in range(count)]
