"""Telling an evaluation-log source from a path, and the files it reads (``valuecore._io.log_sources``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from valuecore._io import lm_logs
from valuecore._io.log_sources import is_log_source, log_source_inputs, split_log_source

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("text, expected", [
    ("lmeval:runs/alpha", True), ("inspect:logs/a.eval", True), ("lmeval[idk=I don't know]:runs/alpha", True),
    ("inspect[split=val-test]:x", True), ("lmeval:", False), ("runs/alpha.csv", False), ("mlflow:run", False),
    ("LMEVAL:runs", False), (None, False), (3, False),
])
def test_a_log_source_is_told_from_a_path(text, expected):
    assert is_log_source(text) is expected


def test_a_log_source_is_split_before_its_path():
    assert split_log_source("lmeval[idk=I don't know]:runs/a:b") == ("lmeval[idk=I don't know]:", "runs/a:b")
    with pytest.raises(ValueError, match="not an evaluation-log source"):
        split_log_source("runs/alpha.csv")


def test_a_folder_source_reads_its_log_files(tmp_path):
    for name in ("b.jsonl", "a.eval", "c.json", "notes.txt"):
        (tmp_path / name).write_text("{}")
    assert log_source_inputs(f"lmeval:{tmp_path}") == [str(tmp_path)] + [
        str(tmp_path / n) for n in ("a.eval", "b.jsonl", "c.json")]
    assert log_source_inputs(f"inspect:{tmp_path / 'a.eval'}") == [str(tmp_path / "a.eval")]


def test_the_log_readers_name_the_same_functions():
    assert lm_logs.is_log_source is is_log_source
    assert lm_logs.split_log_source is split_log_source
    assert lm_logs.log_source_inputs is log_source_inputs


def test_telling_a_source_imports_no_numpy():
    """A command checks its inputs with these before any work: an aggregation of Parquet files needs no numpy."""
    script = "import sys, valuecore._io.log_sources\nprint('numpy' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]
