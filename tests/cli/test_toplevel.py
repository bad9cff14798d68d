"""``python -m valuecore --help``, ``--version`` and no command: answered by the top level alone.

They import neither the commands nor anything numeric (checked in a fresh interpreter's ``sys.modules``),
and print exactly what the full parser prints (so the light answer cannot drift from the commands).
"""

from __future__ import annotations

import pytest
from helpers.cli import modules_loaded_by

from valuecore._cli.commands import build_parser, main
from valuecore._cli.toplevel import COMMAND_HELP, answer_alone


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["--version"], []])
def test_the_top_level_imports_nothing_numeric_nor_the_commands(argv):
    loaded = modules_loaded_by(*argv)
    heavy = {name for name in loaded if name.split(".")[0] in ("numpy", "pandas", "pyarrow", "scipy", "duckdb")}
    assert not heavy, sorted(heavy)
    assert "valuecore._cli.commands" not in loaded  # the commands and their options are not built


def test_a_command_still_builds_the_full_parser():
    assert "valuecore._cli.parser" in modules_loaded_by("table", "--help")


def test_the_top_level_prints_what_the_full_parser_prints(capsys):
    full = build_parser().format_help()
    assert answer_alone(["--help"]) == 0
    assert capsys.readouterr().out == full
    assert answer_alone(["-h"]) == 0
    assert capsys.readouterr().out == full
    assert answer_alone([]) == 2  # no command: the help on stderr, a usage error
    assert capsys.readouterr().err == full
    assert main([]) == 2
    assert capsys.readouterr().err == full
    assert answer_alone(["--version"]) == 0
    version = capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == version and version.startswith("valuecore ")


@pytest.mark.parametrize("argv", [["--debug"], ["table"], ["--help", "table"], ["table", "--help"]])
def test_anything_else_goes_to_the_commands(argv):
    assert answer_alone(argv) is None


@pytest.mark.parametrize("argv", [["--help"], ["report", "--help"], ["aggregate", "--help"], ["report", "--bogus"]])
def test_help_and_usage_errors_do_not_import_shutil(argv):
    # argparse imports shutil (with bz2, lzma, zlib, fnmatch) only to ask the terminal's width, which the
    # top level's formatter finds itself.
    assert "shutil" not in modules_loaded_by(*argv)


@pytest.mark.parametrize("columns", [None, "57", "0", "-3", "wide", "100"])
def test_the_help_is_as_wide_as_argparse_would_make_it(monkeypatch, columns):
    import argparse
    import shutil

    from valuecore._cli.toplevel import HelpParser, terminal_columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns
    texts = []
    for parser_class in (HelpParser, argparse.ArgumentParser):
        parser = parser_class(prog="p", description="words " * 40)
        parser.add_argument("--option", metavar="A_LONG_VALUE", help="more words " * 20)
        texts.append(parser.format_help())
    assert texts[0] == texts[1]


IMPORTED_WHERE_A_COMMAND_RUNS = {"valuecore.wording", "csv", "decimal", "json"}


@pytest.mark.parametrize("argv", [[command, "--help"] for command in COMMAND_HELP] + [["report", "--bogus"]])
def test_a_command_help_imports_no_wording_csv_decimal_or_json(argv):
    # The sentences (wording, with decimal), the value matrices' CSV and the JSON documents are imported where
    # a command runs, not by every COMMAND --help.
    loaded = modules_loaded_by(*argv)
    assert "valuecore._cli.parser" in loaded  # it looked where the options are built
    assert not loaded & IMPORTED_WHERE_A_COMMAND_RUNS, sorted(loaded & IMPORTED_WHERE_A_COMMAND_RUNS)
