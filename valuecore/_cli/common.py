"""What the command line's sub-commands share: exit codes, output, argument types, loading, values.

The layering is one way: this module imports no other module of ``_cli``;
``commands`` (the parser and the core commands) and the modules of single
commands (``monitor``, ``aggregate``, ``reviewers``) build on it, and
``commands`` registers the others.
"""

from __future__ import annotations

import argparse
import math
import sys

from .toplevel import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, PROG  # noqa: F401  (the sub-commands take them from here)
from .._io.limits import load_json_limited, read_limited

# Not typing.TYPE_CHECKING: every COMMAND --help imports this module, and typing and pathlib would be a
# third of its imports (the type checkers read a TYPE_CHECKING of one's own the same way).
TYPE_CHECKING = False
if TYPE_CHECKING:  # the numeric modules load numpy: imported where a command runs, so --help stays fast
    from collections.abc import Sequence
    from pathlib import Path

    from .._model.values import UseCase, ValueMatrix

__all__ = ["UsageError", "read_value_matrix", "value_matrix_from_csv"]

CALIBRATION_METHODS = ("none", "temperature", "isotonic", "platt")


class UsageError(Exception):
    """Bad usage or bad input: reported as one message, exit code 2."""


# ----------------------------------------------------------------- output
# A name from a file (a model, a class, a split) may hold terminal controls: ESC sequences that recolour or
# clear lines, and bidirectional overrides that reorder what is shown. What the commands print shows each as an
# escape (``\x1b``); line ends and tabs are the commands' own layout.
_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))}
_CONTROLS.update({code: f"\\u{code:04x}" for code in (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def shown_on_terminal(text: str) -> str:
    """``text`` with every control character but the line end and the tab written as its escape."""
    return text.translate(_CONTROLS)


# The line ends above are the commands' own: a name from a file (or a problem, a note, a sentence that holds one)
# is shown inside a line, so its own line breaks, and whatever else a terminal or a reader splitting lines breaks
# on, are written as escapes where it is formatted: a model named "a\nrecommended: b" cannot forge a line.
_LINE_BREAKS = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\v"): "\\v", ord("\f"): "\\f",
                **{code: f"\\x{code:02x}" for code in (0x1C, 0x1D, 0x1E, 0x85)}, 0x2028: "\\u2028", 0x2029: "\\u2029"}


def one_line(text) -> str:
    """``str(text)`` with its line breaks written as escapes (``\\n``): a name, or a message, kept on its line."""
    return str(text).translate(_LINE_BREAKS)


def _out(text: str = "") -> None:
    try:
        print(shown_on_terminal(text), file=sys.stdout)
    except BrokenPipeError:
        # The reader stopped reading (``| head``, ``| grep -m1``): the rest of the report goes nowhere, and the
        # command still finishes, so the files it was asked to write are written.
        stdout_to_devnull()


def _err(text: str) -> None:
    print(shown_on_terminal(text), file=sys.stderr)


def stdout_to_devnull() -> None:
    """Send what is still printed, and the interpreter's last flush, to the null device."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _fmt(value, spec: str = ".4f") -> str:
    if value is None:
        return "n/a"
    value = float(value)
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if abs(value) >= 1e15 and spec.endswith("f"):
        return format(value, ".6g")  # a fixed-point huge number would print hundreds of digits
    return format(value, spec)


# wording (with decimal), csv and io are imported where a command formats or reads: every COMMAND --help
# imports this module, and they were a quarter of what a COMMAND --help costs.
def _pct(value) -> str:
    from .. import wording

    return "n/a" if value is None else wording.percent(value)


# Amounts read as on the dashboard and in the HTML report (the JSON keeps every digit): a value per item in
# cents, a total over many items in whole units from 100 up, a likely range in three significant digits.
def _money(value, currency: str = "") -> str:
    from .. import wording

    return "n/a" if value is None else wording.money(value, currency)


def _total(value, currency: str = "") -> str:
    from .. import wording

    return "n/a" if value is None else wording.projected(value, currency)


def _range(pair, currency: str = "") -> str:
    from .. import wording

    return f"{wording.amount(pair[0], currency)} to {wording.amount(pair[1], currency)}"


def _ratio(value) -> str:
    """A dimensionless value (0 = no model, 1 = perfect), three decimals as on the Value page."""
    from .. import wording

    return "n/a" if value is None else wording.number(value)


def _count(x: float) -> str:
    from .. import wording

    return wording.count(x)


def _short(items, limit: int = 12) -> str:
    from .. import wording

    return f"[{wording.short_list(map(one_line, items), limit)}]"


# ------------------------------------------------------------- arg types
def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _positive_float(text: str) -> float:
    value = _finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def _whole_number_between(low: int, high: int, what: str):
    """An argparse type: a whole number of ``what`` from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"needs between {low} and {high} {what}, got {value}")
        return value

    return parse


_points = _whole_number_between(2, 1_000_000, "points")


def _ks(text: str) -> tuple:
    ks = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        value = _finite_float(part)
        if value < 0:
            raise argparse.ArgumentTypeError(f"cost factors k must be >= 0, got {part}")
        ks.append(int(value) if value.is_integer() else value)
    if not ks:
        raise argparse.ArgumentTypeError("give at least one cost factor, e.g. --k 0,1,2,4")
    return tuple(dict.fromkeys(ks))


# ----------------------------------------------------------- value matrix
def value_matrix_from_csv(text: str, source: str = "value matrix") -> ValueMatrix:
    """Parse a value-matrix CSV.

    Header row: a corner cell (ignored, e.g. ``true\\predicted``), the
    predicted classes, then ``abstain``. Then one row per true class: the
    class in the first column, then the value of each predicted class and of
    abstaining. Rows and columns may come in any order; they are matched by
    class name. Raises :class:`UsageError` naming the row or cell at fault.

    Examples
    --------
    >>> m = value_matrix_from_csv("true,ok,fraud,abstain\\nfraud,-50,10,0\\nok,1,-5,0\\n")
    >>> m.classes, m.values.tolist()
    (('ok', 'fraud'), [[1.0, -5.0, 0.0], [-50.0, 10.0, 0.0]])
    """
    import numpy as np

    from .._model.values import ValueMatrix

    rows = _non_empty_rows(text, source)
    header = _matrix_header(rows[0], source)
    matrix: dict[str, list[float]] = {}
    for line_number, row in enumerate(rows[1:], start=2):
        label, cells = _row_label(row, line_number, len(header), source)
        if label in matrix:
            raise UsageError(f"{source}: true class {label!r} has more than one row")
        matrix[label] = _row_values(cells, line_number, label, header, source)
    predicted = header[1:-1]
    if set(matrix) != set(predicted):
        raise UsageError(
            f"{source}: the rows name the true classes {_short(matrix)} but the columns name the "
            f"predicted classes {_short(predicted)}; both must list the same classes"
        )
    return ValueMatrix(tuple(predicted), np.array([matrix[c] for c in predicted], dtype=float))


def _non_empty_rows(text: str, source: str) -> list[list[str]]:
    """The CSV's rows that hold anything; a header and at least two classes, or UsageError."""
    import csv
    import io

    rows = [row for row in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in row)]
    if len(rows) < 3:
        raise UsageError(
            f"{source}: needs a header row (corner, predicted classes..., abstain) and one row per "
            f"true class, at least 2 classes; found {len(rows)} non-empty row(s)"
        )
    return rows


def _matrix_header(row: list[str], source: str) -> list[str]:
    """The header's cells (corner, predicted classes, ``abstain``), checked; a trailing comma dropped."""
    from .._io.columns import _nfc  # as the loader reads a run's classes: "é" typed either way is one class

    header = [_nfc(cell.strip()) for cell in row]
    while header and header[-1] == "" and len(header) > 1:
        header.pop()
    if header[-1].lower() != "abstain":
        raise UsageError(
            f"{source}: the last column of the header row must be 'abstain', got {header[-1]!r} "
            "(header: corner cell, predicted classes, abstain)"
        )
    _check_predicted_classes(header[1:-1], source)
    return header


def _check_predicted_classes(predicted: list[str], source: str) -> None:
    """At least two predicted classes in the header, each named, none twice."""
    if len(predicted) < 2:
        raise UsageError(
            f"{source}: the header names {len(predicted)} predicted class(es); a classifier has at least 2"
        )
    if any(not c for c in predicted):
        raise UsageError(f"{source}: the header row has an empty class name")
    repeated = sorted({c for c in predicted if predicted.count(c) > 1})
    if repeated:
        raise UsageError(f"{source}: the header names the predicted classes {repeated} more than once")


def _row_label(row: list[str], line_number: int, n_columns: int, source: str) -> tuple[str, list[str]]:
    """(true class, value cells) of one row; trailing empty cells beyond the header's width dropped."""
    cells = [cell.strip() for cell in row]
    while len(cells) > n_columns and cells[-1] == "":
        cells.pop()
    if not cells[0]:
        raise UsageError(f"{source}: row {line_number} has no true class in its first column")
    from .._io.columns import _nfc

    return _nfc(cells[0]), cells[1:]



def _row_values(cells: list[str], line_number: int, label: str, header: list[str], source: str) -> list[float]:
    """One row's values in the header's column order, or UsageError naming the cell at fault."""
    columns = header[1:]
    if len(cells) != len(columns):
        raise UsageError(
            f"{source}: row {line_number} (true class {label!r}) has {len(cells)} values "
            f"but the header has {len(columns)} columns ({_short(columns)})"
        )
    import pandas as pd

    from .._io.runfiles.cells import number_cells

    # A number to the run files' loader, or none ("1_000" and "１" are text there, though float() reads them);
    # read by float() as before ("-0" stays -0.0, where pandas gives 0).
    loaded = number_cells(pd.Series(cells, dtype=object)).isna().to_numpy()
    values = []
    for column, cell, not_number in zip(columns, cells, loaded.tolist()):
        try:
            value = math.nan if not_number else float(cell)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise UsageError(
                f"{source}: row {line_number} (true class {label!r}), column {column!r}: "
                f"{cell!r} is not a finite number"
            )
        values.append(value)
    return values


def read_text_file(path, what: str, kind: str) -> str:
    """A regular file's UTF-8 text, read no further than the JSON limit (a FIFO or /dev/zero is refused at once);
    UsageError naming the file (``what``: for the limit's message; ``kind``: "no such <kind>")."""
    try:
        return read_limited(path, what).decode("utf-8-sig")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such {kind}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: cannot be read as UTF-8 text") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def read_value_matrix(path: str | Path):
    """Read values from a ``.csv`` value matrix or a ``.json`` file.

    The JSON may be ``{"classes": [...], "value_matrix": [[...], ...]}``, a
    simple use case ``{"v_correct", "v_abstain", "v_wrong"}``, or a whole
    policy document (its ``use_case`` is used). Raises :class:`UsageError`.
    """
    from pathlib import Path

    path = Path(path)
    text = read_text_file(path, "the value matrix", "value-matrix file")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return value_matrix_from_csv(text, str(path))
    if suffix != ".json":
        raise UsageError(f"{path}: a value matrix must be a .csv or a .json file")
    try:
        data = load_json_limited(text, str(path))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if isinstance(data, dict) and "use_case" in data:
        data = data["use_case"]
    from .._pipeline.policy_json import values_from_dict

    try:
        return values_from_dict(data)
    except (ValueError, TypeError, KeyError) as exc:
        raise UsageError(f"{path}: {exc}") from None


# ----------------------------------------------------------------- loading
def _load_report(paths: Sequence[str], segment_column: str | None = None):
    """The load report of run files, folders, ``mlflow:`` runs and evaluation logs (``lmeval:``, ``inspect:``);
    UsageError for a run that cannot be read. ``segment_column``: run files only (``--segment``)."""
    from .._io.log_sources import is_log_source

    if segment_column is not None:
        other = [str(p) for p in paths if is_log_source(str(p)) or str(p).startswith("mlflow:")]
        if other:
            raise UsageError(f"--segment reads a column of run files (CSV or Parquet); {other[0]} is not one")
        from .._io.runfiles import load_runs

        return load_runs(list(paths), segment_column=segment_column)
    if any(is_log_source(str(path)) for path in paths):
        from .._io.eval_logs import load_with_logs

        try:
            return load_with_logs(paths, _load_report)
        except (ValueError, ImportError) as exc:
            raise UsageError(str(exc)) from None
    if not any(str(path).startswith("mlflow:") for path in paths):
        from .._io.runfiles import load_runs

        return load_runs(list(paths))
    from .._serve.mlflow_bridge import load_run_sources  # runs logged to MLflow (valuecore.serving)

    try:
        return load_run_sources(paths)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _load(paths: Sequence[str], segment_column: str | None = None) -> dict:
    """Load run files; problems go to stderr; UsageError when no model is usable."""
    report = _load_report(paths, segment_column)
    for problem in report.problems:  # a problem is one line of output, whatever names it quotes
        _err(f"{problem.severity}: {one_line(problem)}")
    from .._io.lm_logs import abstention_notes

    for note in abstention_notes(report.models):
        _err(f"note: {one_line(note)}")
    if not report.models:
        raise UsageError(
            "no usable model in " + ", ".join(paths) + (" (see the errors above)" if report.problems else "")
        )
    return report.models


def _values(args) -> UseCase | ValueMatrix:
    from .._model.values import UseCase

    triple = {"--v-correct": args.v_correct, "--v-abstain": args.v_abstain, "--v-wrong": args.v_wrong}
    given = [name for name, value in triple.items() if value is not None]
    sources = sum([bool(given), args.value_matrix is not None, args.omega is not None])
    if sources > 1:
        raise UsageError("give the values one way: --v-correct/--v-abstain/--v-wrong, or --omega, or --value-matrix")
    if args.value_matrix is not None:
        return read_value_matrix(args.value_matrix)
    if args.omega is not None:
        return UseCase.from_omega(args.omega)
    missing = [name for name in triple if name not in given]
    if missing:
        raise UsageError(
            "the values of the use case are missing: give --v-correct, --v-abstain and --v-wrong "
            f"(missing {' '.join(missing)}), or --omega W, or --value-matrix FILE"
        )
    return UseCase(args.v_correct, args.v_abstain, args.v_wrong)


# ------------------------------------------------------------- options
def _add_split_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tune-split",
        metavar="NAME",
        help="split to tune thresholds (and calibration) on; default 'val' when present, "
        "else the evaluated split itself (optimistic; the output says so)",
    )
    parser.add_argument(
        "--eval-split",
        metavar="NAME",
        help="split to evaluate on; default 'test' when present, else the only split",
    )


def _add_values_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("values (give the three values, or --omega, or --value-matrix)")
    group.add_argument("--v-correct", type=_finite_float, metavar="X", help="value of a correct automated answer")
    group.add_argument(
        "--v-abstain", type=_finite_float, metavar="Y", help="value of abstaining (handing the item over)"
    )
    group.add_argument("--v-wrong", type=_finite_float, metavar="Z", help="value of a wrong automated answer")
    group.add_argument(
        "--omega", type=_finite_float, metavar="W", help="shortcut for --v-correct 1 --v-abstain 0 --v-wrong -W"
    )
    group.add_argument(
        "--value-matrix",
        metavar="FILE",
        help="per-class values: a .csv (header: corner cell, predicted classes, 'abstain'; first column: "
        "true class) or a .json ({'classes': [...], 'value_matrix': [[...], ...]})",
    )
