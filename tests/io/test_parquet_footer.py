"""The pure-Python footer reader (``valuecore._io.parquet_footer``) against pyarrow's schema.

Where the reader answers, its names, kinds, row count and nested columns are pyarrow's, on files pyarrow
writes (every Arrow type it writes, with and without its stored Arrow schema, in each Parquet format version)
and on files DuckDB writes; where it is not sure it answers None and the scan asks pyarrow. Damaged footers:
None, or pyarrow's answer, or, where pyarrow refuses what the reader took, the aggregation still refuses the
file with a message naming it."""

from __future__ import annotations

import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from valuecore._io.aggregate import AggregateRefused, aggregate
from valuecore._io.aggregate.sources import _pyarrow_columns
from valuecore._io.format import _FileProblems
from valuecore._io.aggregate.sources import _Named, _scan_files
from valuecore._io.parquet_footer import FooterBudget, footer_columns

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _types() -> list:
    types = [
        pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
        pa.float16(), pa.float32(), pa.float64(), pa.decimal128(10, 2), pa.decimal128(30, 4),
        pa.decimal256(45, 5), pa.bool_(), pa.string(), pa.large_string(), pa.binary(), pa.large_binary(),
        pa.binary(4), pa.date32(), pa.date64(), pa.time32("ms"), pa.time64("us"), pa.time64("ns"),
        pa.timestamp("s"), pa.timestamp("ms"), pa.timestamp("us"), pa.timestamp("ns"),
        pa.timestamp("us", tz="UTC"), pa.timestamp("ns", tz="Europe/Paris"), pa.duration("s"), pa.duration("ns"),
        pa.null(), pa.dictionary(pa.int32(), pa.string()), pa.dictionary(pa.int8(), pa.int64()),
        pa.dictionary(pa.int32(), pa.float64()), pa.dictionary(pa.int16(), pa.timestamp("ms")),
        pa.list_(pa.float64()), pa.large_list(pa.int32()), pa.list_(pa.string(), 2),
        pa.struct([("a", pa.int32()), ("b", pa.string())]), pa.map_(pa.string(), pa.int32()),
        pa.month_day_nano_interval(), pa.string_view(), pa.binary_view(),
    ]
    for name in ("uuid", "json_", "bool8"):  # pyarrow's own extension types, where this pyarrow has them
        if hasattr(pa, name):
            types.append(getattr(pa, name)())
    return types


TYPES = _types()
NAMES = ["proba_a", "proba_b", "y_true", "split", "weight", "timestamp", "model", "é", "a b", "proba_a"]


def reference(path: Path):
    problems = _FileProblems(str(path))
    found = _pyarrow_columns(path, problems)
    return found, [p.message for p in problems.items]


@st.composite
def arrow_tables(draw):
    count = draw(st.integers(1, 6))
    rows = draw(st.integers(0, 4))
    fields = []
    for i in range(count):
        name = draw(st.sampled_from(NAMES)) if draw(st.booleans()) else f"c{i}"
        metadata = {b"note": b"x"} if draw(st.integers(0, 9)) == 0 else None
        fields.append(pa.field(name, draw(st.sampled_from(TYPES)), metadata=metadata))
    schema = pa.schema(fields, metadata={b"writer": b"test"} if draw(st.booleans()) else None)
    return pa.table([pa.nulls(rows, f.type) for f in schema], schema=schema)


@SETTINGS
@given(table=arrow_tables(), store_schema=st.booleans(), version=st.sampled_from(["1.0", "2.4", "2.6"]),
       int96=st.booleans())
def test_the_footer_reads_as_pyarrow_reads_it(tmp_path_factory, table, store_schema, version, int96):
    path = tmp_path_factory.mktemp("footer") / "run.parquet"
    try:
        pq.write_table(table, path, store_schema=store_schema, version=version,
                       use_deprecated_int96_timestamps=int96)
    except (pa.ArrowException, ValueError, TypeError):
        assume(False)  # a type this Parquet writer does not write
    found = footer_columns(path)
    expected, problems = reference(path)
    assert not problems
    if found is not None:
        assert found == expected


def _written(tmp_path: Path, table: pa.Table, **options) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "run.parquet"
    pq.write_table(table, path, **options)
    return path


COMMON = {
    "floats and text": pa.table({"proba_a": [0.25, 0.5], "proba_b": [0.75, 0.5], "y_true": ["a", "b"],
                                 "split": ["val", "test"]}),
    "float32, int16 labels": pa.table({"proba_0": pa.array([0.5, 0.25], pa.float32()),
                                       "proba_1": pa.array([0.5, 0.75], pa.float32()),
                                       "y_true": pa.array([0, 1], pa.int16())}),
    "times, weights, truths": pa.table({"confidence": [0.5, 0.9], "y_pred": ["a", "b"], "y_true": ["a", "a"],
                                        "weight": [1, 2], "timestamp": pa.array([0, 1], pa.timestamp("us", "UTC")),
                                        "flag": [True, False]}),
    "lists": pa.table({"proba_a": [0.5, 0.5], "proba_b": [[0.5], [0.5]], "y_true": ["a", "b"]}),
}


@pytest.mark.parametrize("store_schema", [True, False])
@pytest.mark.parametrize("name", list(COMMON))
def test_the_files_users_write_are_read_from_the_footer(tmp_path, name, store_schema):
    """The reader answers for them (the scan then imports no pyarrow), as pyarrow does."""
    path = _written(tmp_path, COMMON[name], store_schema=store_schema)
    found = footer_columns(path)
    assert found is not None
    assert found == reference(path)[0]


def test_a_pandas_file_is_read_from_the_footer(tmp_path):
    import pandas as pd

    frame = pd.DataFrame({"proba_a": [0.2, 0.7], "proba_b": [0.8, 0.3], "y_true": ["b", "a"]}, index=[5, 9])
    frame.to_parquet(tmp_path / "run.parquet")  # its index a column, and pandas' metadata beside Arrow's
    found = footer_columns(tmp_path / "run.parquet")
    assert found is not None and found == reference(tmp_path / "run.parquet")[0]
    assert found[0] == ["proba_a", "proba_b", "y_true", "__index_level_0__"]


DUCKDB_TYPES = ["TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "UINTEGER", "UBIGINT", "FLOAT",
                "DOUBLE", "DECIMAL(4,1)", "DECIMAL(18,3)", "DECIMAL(38,10)", "VARCHAR", "BLOB", "BOOLEAN", "DATE",
                "TIME", "TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMP_NS", "TIMESTAMP_MS", "TIMESTAMP_S", "INTERVAL",
                "UUID", "INTEGER[]", "STRUCT(a INTEGER)", "MAP(VARCHAR, INTEGER)", "ENUM('x', 'y')", "BIT"]


@pytest.mark.parametrize("sql_type", DUCKDB_TYPES)
def test_a_file_duckdb_writes_reads_as_pyarrow_reads_it(tmp_path, sql_type):
    import duckdb

    path = tmp_path / "run.parquet"
    con = duckdb.connect()
    try:
        con.execute(f"COPY (SELECT 0.5::DOUBLE AS proba_a, CAST(NULL AS {sql_type}) AS y_true, 'val' AS split "
                    f"FROM range(3)) TO '{path}' (FORMAT parquet)")
    except duckdb.Error:
        pytest.skip(f"this DuckDB writes no {sql_type} to Parquet")
    finally:
        con.close()
    found = footer_columns(path)
    expected, problems = reference(path)
    if problems:  # pyarrow cannot read it: neither does the reader
        assert found is None
        return
    if sql_type in ("DOUBLE", "VARCHAR", "BIGINT", "TIMESTAMP", "BOOLEAN"):
        assert found is not None
    if found is not None:
        assert found == expected


def _footer_span(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    (length,) = struct.unpack("<I", data[-8:-4])
    return len(data) - 8 - length, len(data)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(where=st.floats(0, 1, exclude_max=True), value=st.integers(0, 255), cut=st.booleans(),
       store_schema=st.booleans())
def test_a_damaged_footer_is_pyarrows_answer_or_left_to_pyarrow(tmp_path_factory, where, value, cut,
                                                                  store_schema):
    folder = tmp_path_factory.mktemp("damaged")
    path = _written(folder, COMMON["times, weights, truths"], store_schema=store_schema)
    start, end = _footer_span(path)
    data = bytearray(path.read_bytes())
    at = start + int(where * (end - start))
    if cut:
        del data[at:end - 8]
        data[-8:-4] = struct.pack("<I", at - start)
    else:
        data[at] = value
    path.write_bytes(bytes(data))
    found = footer_columns(path)
    expected, problems = reference(path)
    if found is None:
        return
    if not problems:
        assert found == expected
        return
    # pyarrow refuses bytes the reader took (a row group's metadata it skips, a value in the Arrow schema pyarrow
    # verifies and DuckDB never reads): DuckDB then refuses the file, named, with nothing written, or reads the
    # data as it was, and the aggregate is the undamaged file's
    try:
        aggregate(str(path), folder / "agg.parquet")
    except AggregateRefused as refused:
        assert not (folder / "agg.parquet").exists()
        assert any(p.file == str(path) and p.severity == "error" for p in refused.problems)
        return
    undamaged = _written(folder / "undamaged", COMMON["times, weights, truths"], store_schema=store_schema)
    aggregate(str(undamaged), folder / "undamaged.parquet")
    assert pq.read_table(folder / "agg.parquet").equals(pq.read_table(folder / "undamaged.parquet"))


def test_an_encrypted_or_foreign_file_is_left_to_pyarrow(tmp_path):
    path = tmp_path / "run.parquet"
    path.write_bytes(b"PAR1" + b"\0" * 20 + struct.pack("<I", 4) + b"PARE")
    assert footer_columns(path) is None
    path.write_bytes(b"y_true,proba_a\n")
    assert footer_columns(path) is None
    path.write_bytes(b"PAR1PAR1")
    assert footer_columns(path) is None


def _thrift_file(tmp_path: Path, footer: bytes) -> Path:
    path = tmp_path / "run.parquet"
    path.write_bytes(MAGIC + footer + struct.pack("<I", len(footer)) + MAGIC)
    return path


MAGIC = b"PAR1"


@pytest.mark.parametrize("footer", [
    b"\x49\xf1\x80\x80\x80\x80\x80\x20\x00",  # field 4: a list of 2**40 booleans, in 9 bytes
    b"\x4b\x80\x80\x80\x80\x80\x20\x11\x00",  # field 4: a map of 2**40 boolean pairs
    b"\x4c" * 5000 + b"\x00",  # structures nested 5,000 deep
    b"\x15\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01\x00",  # a varint of 71 bits
])
def test_a_hostile_footer_ends_at_its_bytes(tmp_path, footer):
    """Sizes stated beyond the bytes, deep nesting, overlong integers: the reader stops, leaving it to pyarrow."""
    assert footer_columns(_thrift_file(tmp_path, footer)) is None


def test_footers_are_read_in_python_up_to_a_budget(tmp_path):
    """Past it (many files, large footers), pyarrow reads them: the same columns, kinds and rows."""
    path = _written(tmp_path, COMMON["floats and text"])
    length = _footer_span(path)[1] - 8 - _footer_span(path)[0]
    budget = FooterBudget(length + 10)
    assert footer_columns(path, budget) == reference(path)[0] and budget.left == 10
    assert footer_columns(path, budget) is None and budget.left == 10  # too large for what is left
    for i in range(4):
        _written(tmp_path / "folder" / f"part-{i}", COMMON["floats and text"]).rename(
            tmp_path / "folder" / f"part-{i}.parquet")
    files = tuple(sorted((tmp_path / "folder").glob("*.parquet")))
    named = _Named(str(tmp_path / "folder"), "m", files)
    everything, some, none = (_scan_files(named, [], None, FooterBudget(b)) for b in (10**6, 2 * length, 0))
    assert everything == some == none and everything.rows == 8


# ------------------------------------------------------------------ footers built by hand (Thrift's compact protocol)
I16, I32, I64, BINARY, LIST, STRUCT = 4, 5, 6, 8, 9, 12


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n >> 7 else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _zigzag(n: int) -> bytes:
    return _varint(2 * n if n >= 0 else -2 * n - 1)


class Fields:
    """A Thrift structure, its fields in the order given (a field id may repeat, a type may be wrong)."""

    def __init__(self):
        self.data, self.last = bytearray(), 0

    def header(self, field: int, kind: int, long: bool = False):
        delta = field - self.last
        if not long and 0 < delta <= 15:
            self.data.append(delta << 4 | kind)
        else:
            self.data += bytes([kind]) + _zigzag(field)
        self.last = field
        return self

    def integer(self, field, value, kind=I32, long=False, raw: bytes | None = None):
        self.header(field, kind, long).data += _zigzag(value) if raw is None else raw
        return self

    def text(self, field, value):
        value = value.encode() if isinstance(value, str) else value
        self.header(field, BINARY).data += _varint(len(value)) + value
        return self

    def struct(self, field, inner: Fields):
        self.header(field, STRUCT).data += inner.end()
        return self

    def structs(self, field, items):
        self.header(field, LIST).data += bytes([len(items) << 4 | STRUCT]) + b"".join(i.end() for i in items)
        return self

    def end(self) -> bytes:
        return bytes(self.data) + b"\0"


def _element(name, physical=None, converted=None, logical: Fields | None = None, children=None):
    element = Fields()
    if physical is not None:
        element.integer(1, physical).integer(3, 1)  # optional
    element.text(4, name)
    if children is not None:
        element.integer(5, children)
    if converted is not None:
        element.integer(6, converted)
    if logical is not None:
        element.struct(10, logical)
    return element


def _file_metadata(elements, rows=5, key_values=()):
    footer = Fields().integer(1, 1).structs(2, [_element("schema", children=len(elements)), *elements])
    footer.integer(3, rows, I64).structs(4, [])
    if key_values:
        footer.structs(5, [Fields().text(1, k).text(2, v) if v is not None else Fields().text(1, k)
                           for k, v in key_values])
    return footer


def _both(tmp_path, footer: bytes):
    path = _thrift_file(tmp_path, footer)
    return footer_columns(path), reference(path)[0]


def test_a_hand_built_footer_reads_as_pyarrow_reads_it(tmp_path):
    """The builder below is right: a plain footer is read, as pyarrow reads it."""
    found, expected = _both(tmp_path, _file_metadata([_element("a", physical=1)]).end())
    assert found == expected == (["a"], {"a": "number"}, 5, [])


def _time_unit(member: int) -> Fields:
    return Fields().struct(member, Fields())


HOSTILE = {  # each read otherwise by pyarrow than a loose reader would (found by a hostile-input hunt)
    "a field of another integer type": lambda: _file_metadata([
        Fields().integer(1, 1).integer(3, 1).text(4, "a").integer(6, 6, kind=I16)]),  # DATE, as I16: skipped
    "a field given twice": lambda: _file_metadata([
        Fields().integer(1, 1).integer(3, 1).text(4, "a").integer(1, 6, kind=I32, long=True)]),
    "a row count past 64 bits": lambda: Fields().integer(1, 1).structs(2, [
        _element("schema", children=1), _element("a", physical=1)]).integer(3, 0, I64, raw=_varint((1 << 65) + 10)
                                                                             ).structs(4, []),
    "a field id past 16 bits": lambda: _file_metadata([_element("a", physical=1)]).integer(65539, 7, I64, long=True),
    "a logical type's member not a structure": lambda: _file_metadata([
        _element("a", physical=1, logical=Fields().integer(6, 0))]),
    "a time whose unit is not one": lambda: _file_metadata([
        _element("a", physical=1, logical=Fields().struct(7, Fields().header(1, 1).struct(2, Fields())))]),
    "a time of microseconds on 32 bits": lambda: _file_metadata([
        _element("a", physical=1, logical=Fields().struct(7, Fields().header(1, 1).struct(2, _time_unit(2))))]),
    "an integer of 64 bits on 32": lambda: _file_metadata([
        _element("a", physical=1, logical=Fields().struct(10, Fields().integer(1, 64, kind=3).header(2, 1)))]),
    "a decimal": lambda: _file_metadata([_element("a", physical=1, converted=5)]),
    "an Arrow schema key without a value": lambda: _file_metadata([_element("a", physical=1)],
                                                                   key_values=[("ARROW:schema", None)]),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_what_pyarrow_reads_its_own_way_is_left_to_it(tmp_path, name):
    found, _ = _both(tmp_path, HOSTILE[name]().end())
    assert found is None


def test_two_arrow_schemas_are_left_to_pyarrow(tmp_path):
    """pyarrow writes the table's own schema metadata first, so a file of a table carrying an ``ARROW:schema``
    holds two: pyarrow takes the first, and refuses the file; the reader does not take the second."""
    table = COMMON["floats and text"].replace_schema_metadata({b"ARROW:schema": b"bogus"})
    path = _written(tmp_path, table)
    assert footer_columns(path) is None
    assert reference(path)[1] and "readable" in reference(path)[1][0]


def test_one_long_name_shared_by_many_arrow_fields_costs_no_more_than_its_length(tmp_path):
    """An Arrow schema whose 20,000 field entries all point at one field named by a 95 KB string: each name is
    compared with the Parquet schema's once their lengths match, never copied (each was: 2 GB in all)."""
    import base64
    import resource

    entries, length = 20_000, 95_000
    flat = bytearray(b"\0\0\0\0")
    vtable = len(flat)
    flat += struct.pack("<HHHHH", 10, 12, 0, 4, 8)  # the message: header type, header
    message = len(flat)
    flat += struct.pack("<i", message - vtable) + bytes([1, 0, 0, 0]) + b"\0\0\0\0"
    struct.pack_into("<I", flat, 0, message)
    vtable = len(flat)
    flat += struct.pack("<HHHH", 8, 8, 0, 4)  # the schema: its fields
    schema = len(flat)
    flat += struct.pack("<i", schema - vtable) + b"\0\0\0\0"
    struct.pack_into("<I", flat, message + 8, schema - (message + 8))
    vector = len(flat)
    struct.pack_into("<I", flat, schema + 4, vector - (schema + 4))
    flat += struct.pack("<I", entries) + b"\0" * (4 * entries)
    vtable = len(flat)
    flat += struct.pack("<HHHHH", 10, 12, 4, 0, 8)  # the field: name, type (Int)
    field = len(flat)
    flat += struct.pack("<i", field - vtable) + b"\0\0\0\0" + bytes([5, 0, 0, 0])
    for i in range(entries):
        struct.pack_into("<I", flat, vector + 4 + 4 * i, field - (vector + 4 + 4 * i))
    name = len(flat)
    struct.pack_into("<I", flat, field + 4, name - (field + 4))
    flat += struct.pack("<I", length) + b"a" * length
    value = base64.b64encode(b"\xff\xff\xff\xff" + struct.pack("<I", len(flat)) + bytes(flat)).decode()
    footer = _file_metadata([_element("a", physical=2)], key_values=[("ARROW:schema", value)]).end()
    assert len(footer) < 256 << 10  # within the budget: it is read
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert footer_columns(_thrift_file(tmp_path, footer)) is None
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB
