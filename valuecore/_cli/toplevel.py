"""The command line's top level: its commands in order with their one-line help, and a parser of that level.

``python -m valuecore --help`` (and ``--version``, and no command) need nothing below this level, so they
are answered from it without importing the commands, their options or the core: the full parser
(``parser.build_parser``) starts from the same :func:`top_level_parser` and the same one-line helps,
so both print the same text.
"""

from __future__ import annotations

import argparse
import os
import sys

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

PROG = "python -m valuecore"

# In the order the help lists them.
COMMAND_HELP = {
    "validate": "check run files and show what they hold",
    "report": "tune a policy per model, show its value, write the policy JSON",
    "apply": "evaluate an exported policy JSON, as stored, on run files",
    "table": "compare models by accuracy, F1, cost-sensitive error and value (with ranks)",
    "monitor": "label-free value per chunk with bands, alerts and drift, and a back-test",
    "voc": "value operating characteristic curves and omega_sup",
    "aggregate": "aggregate prediction logs too large for memory into one run file (DuckDB or Spark)",
}

# What the top level answers alone: each argument list exactly.
_ALONE = ([], ["-h"], ["--help"], ["--version"])


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, the width argparse formats help for: ``$COLUMNS`` when a positive
    integer, else the width of the terminal on ``sys.__stdout__``, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter at argparse's own width, found without importing ``shutil`` (argparse imports
    it for ``get_terminal_size`` alone, and it brings bz2, lzma, zlib and fnmatch: a seventh of what ``--help``
    costs beyond the bare interpreter)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        width = terminal_columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


class HelpParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that formats with :class:`_HelpFormatter`; its sub-command parsers are of this
    class too (``add_subparsers`` makes parsers of the parent's type)."""

    def __init__(self, *args, formatter_class=_HelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)


def top_level_parser():
    """(the top-level parser, its sub-command parsers' action), with no command added yet."""
    from .. import __version__

    parser = HelpParser(
        prog=PROG,
        description="Judge classifiers by the value they bring with a reject option.",
        epilog="Exit codes: 0 success (unloadable files are warnings while one model is usable), "
        "1 unexpected failure, 2 bad usage or input. Run '%(prog)s COMMAND --help' for details.",
    )
    parser.add_argument("--version", action="version", version=f"valuecore {__version__}")
    parser.add_argument("--debug", action="store_true", default=False, help="show the traceback of unexpected errors")
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND")


def answer_alone(argv: list[str]) -> int | None:
    """The exit code of ``--help``, ``-h``, ``--version`` or no argument, answered at this level; None otherwise."""
    if list(argv) not in _ALONE:
        return None
    parser, commands = top_level_parser()
    for name, line in COMMAND_HELP.items():
        commands.add_parser(name, help=line)
    if not argv:  # no command: the help, as a usage error (as commands.main does)
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        parser.parse_args(list(argv))
    except SystemExit as exc:  # argparse printed the help or the version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    return None
