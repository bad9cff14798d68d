"""A header's names are read with the whitespace around them ignored, and so are the types that go with them:
labels, splits, models and ids are text whatever the spacing of their names. Keyed by the stripped name alone,
pandas (which sees the name as spelled) inferred them: labels ``01``/``02`` became 1/2 ("labels ['2', '1'] are
not among the classes ['01', '02']") and ids ``007`` became 7, breaking the documented "``007`` stays ``007``".
Each read is checked against the same file with a clean header: as bytes, and on disk above the streaming size
(pandas's unfiltered read a chunk at a time), with every fast path on and off."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._io.runfiles import reading
from valuecore.runs import load_run_file

NAMES = ("id", "model", "split", "y_true", "proba_01", "proba_02")
PAD = st.sampled_from(["", " ", "  ", "\t", "\u00a0", "\u3000", " \t"])


def rows(n: int, missing_label: bool) -> list[str]:
    out = []
    for i in range(n):
        label = "01" if i % 3 else "02"
        if missing_label and i == 2:
            label = ""
        p = (i % 7 + 1) / 10
        out.append(f"00{i},m{i % 2},{'val' if i % 4 else 'test'},{label},{p:.1f},{1 - p:.1f}")
    return out


def text(header: list[str], n: int, missing_label: bool) -> str:
    return "\n".join([",".join(header), *rows(n, missing_label)]) + "\n"


def assert_same(got, wanted) -> None:
    assert [(p.severity, p.column, p.rows, p.message) for p in got.problems] == \
           [(p.severity, p.column, p.rows, p.message) for p in wanted.problems]
    assert list(got.models) == list(wanted.models)
    for model in got.models:
        a, b = got.models[model], wanted.models[model]
        assert a.classes == b.classes and list(a.splits) == list(b.splits)
        for split in a.splits:
            x, y = a.splits[split], b.splits[split]
            assert x.ids.tolist() == y.ids.tolist()
            assert np.array_equal(x.y_true, y.y_true) and np.array_equal(x.proba, y.proba)


@settings(max_examples=40, deadline=None)
@given(pads=st.lists(st.tuples(PAD, PAD), min_size=len(NAMES), max_size=len(NAMES)), missing_label=st.booleans())
def test_padded_names_read_their_columns_as_the_clean_names_do(pads, missing_label):
    padded = [before + name + after for name, (before, after) in zip(NAMES, pads)]
    wanted = load_run_file(text(list(NAMES), 40, missing_label).encode(), name="m.csv")
    got = load_run_file(text(padded, 40, missing_label).encode(), name="m.csv")
    assert_same(got, wanted)
    if not missing_label:
        assert got.ok and got.models["m0"].classes == ("01", "02")
        assert got.models["m0"].splits["val"].ids[0] == "002"  # row 2: model m0, split val


@pytest.mark.parametrize("padded", [["id", "model", "split", "y_true ", "proba_01", "proba_02"],
                                    ["id\u00a0", "model", "split", "y_true\u00a0", "proba_01", "proba_02"]])
@pytest.mark.parametrize("fast", [True, False])
def test_a_streamed_file_with_padded_names_reads_as_the_clean_one(tmp_path, monkeypatch, padded, fast):
    n = reading.STREAMED_CSV_BYTES // 20
    clean, spaced = tmp_path / "clean.csv", tmp_path / "spaced.csv"
    clean.write_text(text(list(NAMES), n, False), encoding="utf-8")
    spaced.write_text(text(padded, n, False), encoding="utf-8")
    assert spaced.stat().st_size > reading.STREAMED_CSV_BYTES
    if not fast:
        monkeypatch.setattr(reading, "UNFILTERED_CSV", False)
    got, wanted = load_run_file(spaced, name="m.csv"), load_run_file(clean, name="m.csv")
    assert_same(got, wanted)
    assert got.ok and got.models["m0"].classes == ("01", "02")


def test_the_load_of_padded_names_matches_through_load_runs(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text(text(["id", "model", "split", "y_true ", "proba_01", "proba_02"], 30, False), encoding="utf-8")
    report = vc.load_runs([str(path)])
    assert report.ok, [str(p) for p in report.problems]
    assert {run.classes for run in report.models.values()} == {("01", "02")}
