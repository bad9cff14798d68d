"""The command line, ``python -m valuecore {validate,report,table,voc}``, as functions.

:func:`main` runs it in-process (``main(["table", "runs/"])``) and returns
the exit code instead of exiting; a bad command or bad input is a
:class:`UsageError` inside it (exit code 2). :func:`read_value_matrix` and
:func:`value_matrix_from_csv` read the value-matrix CSV that ``--values``
takes. The commands, options and exit codes are described in
``docs/cli.md``.
"""

from ._cli.commands import UsageError, main, read_value_matrix, value_matrix_from_csv

__all__ = ["main", "read_value_matrix", "value_matrix_from_csv", "UsageError"]
