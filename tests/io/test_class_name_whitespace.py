"""Class names with whitespace around them (``proba_ a\\t``, label cells ``a ``): the in-memory loader and the
aggregation read them by one rule (``columns.column_name``: the class is the part after the prefix, stripped, as
label cells are), so a hostile file loads as its clean twin does, in both paths, or both refuse it in words."""

from __future__ import annotations

import tempfile
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from helpers.inputs import aggregate_problems, loader_problems
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._io.aggregate import aggregate
from valuecore._io.columns import WHITESPACE, column_name

# Whitespace a CSV holds unquoted on one line (line ends and the ASCII separators would make the file's rows).
AROUND = st.text(st.sampled_from(" \t\xa0\u2003\u3000"), max_size=3)
# A class's core: no whitespace at its ends, in composed form (the loader composes names; see _nfc).
CORE = st.text(st.sampled_from("ab\u00fc\u65e5\u20ac_-.x "), min_size=1, max_size=5).map(str.strip).filter(
    lambda core: core and unicodedata.normalize("NFC", core) == core)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _frame(classes, header_names, label_names, n=12) -> pd.DataFrame:
    """A probability run: row i's true class is ``i % k``, predicted with a confidence of the row's own."""
    k = len(classes)
    rows = np.arange(n)
    top = 0.5 + 0.4 * (rows % 5) / 5  # a few distinct confidences, each above every other cell of its row
    proba = np.where(np.arange(k)[None, :] == ((rows + rows // 3) % k)[:, None], top[:, None],
                     ((1 - top) / (k - 1))[:, None])  # fmt: skip
    frame = pd.DataFrame({f"proba_{name}": proba[:, j] for j, name in enumerate(header_names)})
    frame["y_true"] = [label_names[i % k] for i in rows]
    frame["split"] = ["val" if i % 4 else "test" for i in rows]
    return frame


def _write(frame: pd.DataFrame, path: Path) -> Path:
    path.parent.mkdir(exist_ok=True)
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)
    return path


def _aggregated(path: Path, folder: Path):
    out = folder / f"agg_{path.parent.name}.parquet"
    aggregate(str(path), out)
    return pq.read_table(out)


@SETTINGS
@given(cores=st.lists(CORE, min_size=2, max_size=3, unique=True), data=st.data(),
       suffix=st.sampled_from([".csv", ".parquet"]))  # fmt: skip
def test_a_file_with_whitespace_around_its_classes_loads_and_aggregates_as_its_clean_twin(cores, data, suffix):
    header = [data.draw(AROUND) + c + data.draw(AROUND) for c in cores]
    labels = [data.draw(AROUND) + c + data.draw(AROUND) for c in cores]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        hostile = _write(_frame(cores, header, labels), folder / "hostile" / f"run{suffix}")
        clean = _write(_frame(cores, cores, cores), folder / "clean" / f"run{suffix}")  # one model name: run
        loaded, twin = vc.runs.load_run_file(hostile), vc.runs.load_run_file(clean)
        assert loaded.ok, [p.message for p in loaded.problems]
        (run,), (clean_run,) = loaded.models.values(), twin.models.values()
        assert run.classes == clean_run.classes == tuple(cores)
        for split, predictions in run.splits.items():
            reference = clean_run.splits[split]
            for name in ("y_true", "y_pred", "confidence", "proba", "sample_weight"):
                np.testing.assert_array_equal(getattr(predictions, name), getattr(reference, name), err_msg=name)
        grouped, clean_grouped = _aggregated(hostile, folder), _aggregated(clean, folder)
        assert grouped.equals(clean_grouped)  # the same groups, names and values, bit for bit
        aggregated_classes = tuple(n[len("proba_"):] for n in grouped.column_names if n.startswith("proba_"))
        assert aggregated_classes == run.classes


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_the_reported_cases_load_in_memory_and_aggregate(suffix, tmp_path):
    for cls in ["a\t", " a", "\u00fc\u65e5\u20ac \t", "a "]:
        frame = _frame([cls.strip(), "b"], [cls, "b"], [cls, "b"], n=20)
        path = _write(frame, tmp_path / repr(cls) / f"ws{suffix}")
        assert not loader_problems(path)
        result = _aggregated(path, tmp_path)
        assert set(result.column("y_true").to_pylist()) == {cls.strip(), "b"}
        assert f"proba_{cls.strip()}" in result.column_names


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_two_columns_equal_but_for_whitespace_are_refused_in_words_by_both(suffix, tmp_path):
    frame = pd.DataFrame({"proba_a": [0.6, 0.4], "proba_ a\t": [0.6, 0.4], "proba_b": [0.4, 0.6], "y_true": ["a", "b"]})
    path = _write(frame, tmp_path / f"twice{suffix}")
    expected = ("duplicate column: 'proba_a' appears 2 times in the header (written 'proba_a', 'proba_ a\\t'; the "
                "whitespace around a column name, and around the class after proba_ or logit_, is ignored)")
    for problems in (loader_problems(path), aggregate_problems(path, tmp_path)):
        assert len(problems) == 1 and problems[0].endswith(expected), problems
        assert "could not be read" not in problems[0]


def test_an_exact_duplicate_keeps_its_message(tmp_path):
    path = tmp_path / "twice.csv"
    path.write_text("proba_a,proba_a,proba_b,y_true\n0.6,0.6,0.4,a\n")
    for problems in (loader_problems(path), aggregate_problems(path, tmp_path)):
        assert [p.split(": ", 1)[1] for p in problems] == ["duplicate column: 'proba_a' appears 2 times in the header"]


def test_a_duckdb_table_follows_the_same_rule(tmp_path):
    import duckdb

    database = tmp_path / "runs.duckdb"
    frame = _frame(["a", "b"], ["a\t", " b"], ["\ta", "b\u3000"])
    with duckdb.connect(str(database)) as con:
        con.register("frame", frame)
        con.execute("CREATE TABLE runs AS SELECT * FROM frame")
    table = _aggregated(Path(f"{database}:runs"), tmp_path)
    clean = _aggregated(_write(_frame(["a", "b"], ["a", "b"], ["a", "b"]), tmp_path / "clean" / "runs.parquet"),
                        tmp_path)  # fmt: skip
    assert table.equals(clean)


def test_a_duckdb_table_with_two_columns_equal_but_for_whitespace_is_refused(tmp_path):
    import duckdb

    database = tmp_path / "runs.duckdb"
    with duckdb.connect(str(database)) as con:
        con.execute('CREATE TABLE runs AS SELECT 0.6 AS proba_a, 0.6 AS "proba_a\t", 0.4 AS proba_b, \'a\' AS y_true')
    problems = aggregate_problems(f"{database}:runs", tmp_path)
    assert len(problems) == 1 and "duplicate column: 'proba_a' appears 2 times in the header (written 'proba_a', " \
        "'proba_a\\t'" in problems[0], problems


@given(st.text(max_size=8), st.sampled_from(["", "proba_", "logit_", "y_true"]), AROUND, AROUND)
def test_a_class_name_is_the_part_after_the_prefix_stripped_as_label_cells_are(core, prefix, before, after):
    name = column_name(before + prefix + before + core + after)
    if prefix in ("proba_", "logit_"):
        assert name == prefix + (before + core + after).strip()
    else:
        assert name == (before + prefix + before + core + after).strip()


def test_the_aggregation_trims_the_whitespace_the_loader_strips():
    assert WHITESPACE == "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
