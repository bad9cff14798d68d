"""Every ``--help`` of ``python -m valuecore``: the same text as before the parser left ``commands``, without numpy.

``data/help_texts.json`` holds what each help printed (``COLUMNS=100``) at the commit it names, before
``python -m valuecore COMMAND --help`` was answered by ``_cli.parser`` alone. A change to an option's help
changes it on purpose: write the file again from the new parser (the test's message says how).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import modules_loaded_by

from valuecore._cli.commands import main
from valuecore._cli.toplevel import COMMAND_HELP

ROOT = Path(__file__).resolve().parents[2]
CAPTURED = json.loads((Path(__file__).parent / "data" / "help_texts.json").read_text(encoding="utf-8"))
HELP_ARGV = [["--help"], *[[command, "--help"] for command in COMMAND_HELP]]
HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "duckdb", "sklearn", "pyspark")
REWRITE = ("if the change is meant, write the file again: for each argv, the stdout of `COLUMNS=100 python -m "
           "valuecore ARGV` (and the stderr of no argument)")


def help_of(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "valuecore", *argv], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": str(CAPTURED["columns"])}, timeout=120)


def test_every_help_was_captured():
    assert set(CAPTURED["helps"]) == {" ".join(argv) for argv in HELP_ARGV} | {""}


@pytest.mark.parametrize("argv", HELP_ARGV, ids=" ".join)
def test_a_fresh_help_prints_the_text_captured_before_the_parser_moved(argv):
    done = help_of(argv)
    assert done.returncode == 0, done.stderr
    assert done.stdout == CAPTURED["helps"][" ".join(argv)], REWRITE
    assert done.stderr == ""


def test_no_command_prints_the_captured_help_as_a_usage_error():
    done = help_of([])
    assert done.returncode == 2
    assert (done.stdout, done.stderr) == ("", CAPTURED["helps"][""])


@pytest.mark.parametrize("argv", HELP_ARGV, ids=" ".join)
def test_main_in_process_prints_the_same_text(argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(CAPTURED["columns"]))
    assert main(argv) == 0
    assert capsys.readouterr().out == CAPTURED["helps"][" ".join(argv)]


@pytest.mark.parametrize("command", list(COMMAND_HELP))
def test_a_command_help_imports_nothing_numeric_nor_the_commands(command):
    loaded = modules_loaded_by(command, "--help")
    heavy = {name for name in loaded if name.split(".")[0] in HEAVY}
    assert not heavy, sorted(heavy)
    assert "valuecore._cli.commands" not in loaded  # what runs the commands, with its imports, is not loaded
    assert "valuecore._cli.parser" in loaded


def test_a_usage_error_imports_nothing_numeric_and_running_a_command_does():
    assert not {name.split(".")[0] for name in modules_loaded_by("table", "--k", "x", "runs/")} & set(HEAVY)
    assert "numpy" in modules_loaded_by("table", str(ROOT / "sample_runs" / "digits"))
