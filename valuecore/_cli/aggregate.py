"""``python -m valuecore aggregate``: prediction logs too large for memory -> one aggregate run file.

Kept apart from ``commands`` so that the command's words live next to the
command; ``parser.build_parser`` only registers it, and ``commands`` runs it.
"""

from __future__ import annotations

import argparse
import sys

from .toplevel import COMMAND_HELP

__all__ = ["add_aggregate_command"]


def _resolution(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 0.5:
        raise argparse.ArgumentTypeError(f"must lie in (0, 0.5], e.g. 0.0001; got {text}")
    return value


def _max_groups(text: str) -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def add_aggregate_command(commands, common: argparse.ArgumentParser) -> None:
    """Register ``aggregate`` on the sub-command parsers of the main CLI."""
    from .._io.aggregate_options import (DEFAULT_MAX_GROUPS, DEFAULT_MAX_TEMP_SIZE, DEFAULT_MEMORY_LIMIT, ENGINES,
                                         PERIODS)

    parser = commands.add_parser(
        "aggregate",
        parents=[common],
        help=COMMAND_HELP["aggregate"],
        description="Read Parquet or CSV prediction logs (a file, a folder with hive partitions, a glob, a DuckDB "
        "table FILE.duckdb:TABLE, or with --engine spark a catalog table table:NAME), check them as the loader "
        "does, and write one row per (model, split, predicted class, confidence, true class) with the summed "
        "weight and the mean probability vector. Every command reads the result like any run file. Exact by "
        "default; over --max-groups it refuses and suggests a --resolution.",
        epilog="Example: %(prog)s logs/2024-05/ --out may.parquet --period day",
    )
    parser.add_argument("sources", nargs="+", metavar="SOURCE", help="Parquet/CSV files, folders, globs or tables")
    parser.add_argument("--out", required=True, metavar="AGG.parquet", help="the aggregate run file to write")
    parser.add_argument("--engine", choices=ENGINES, default="duckdb", help="duckdb (in-process, default) or spark")
    parser.add_argument(
        "--resolution", type=_resolution, metavar="R",
        help="round confidences down to multiples of R (e.g. 0.0001); thresholds stay exact on that grid",
    )  # fmt: skip
    parser.add_argument("--period", choices=PERIODS, help="also group by the timestamp's day, week or month (UTC)")
    parser.add_argument("--model", help="model name of a single source without a model column (default: its name)")
    parser.add_argument(
        "--max-groups", type=_max_groups, default=DEFAULT_MAX_GROUPS, metavar="N",
        help=f"refuse above N aggregate rows per source (default {DEFAULT_MAX_GROUPS:,})",
    )  # fmt: skip
    parser.add_argument(
        "--memory-limit", default=DEFAULT_MEMORY_LIMIT, metavar="SIZE",
        help=f"DuckDB working memory; it spills to a temporary folder beyond (default {DEFAULT_MEMORY_LIMIT})",
    )  # fmt: skip
    parser.add_argument("--temp-dir", metavar="DIR", help="where DuckDB spills (default: the system's temp folder)")
    parser.add_argument(
        "--max-temp-size", default=DEFAULT_MAX_TEMP_SIZE, metavar="SIZE",
        help=f"most disk DuckDB may spill to; beyond it the run stops instead of filling the disk "
        f"(default {DEFAULT_MAX_TEMP_SIZE})",
    )  # fmt: skip


class _ProgressLine:
    """One self-overwriting progress line on stderr (only on a terminal)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.shown = False

    def __call__(self, fraction: float) -> None:
        if not self.stream.isatty():
            return
        self.stream.write(f"\raggregating: {100 * fraction:5.1f}%")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 24 + "\r")
            self.stream.flush()


class _Signals:
    """SIGINT and SIGTERM as one request to stop, handled where the aggregation can stop cleanly.

    The handler raises nothing: it records the signal and sets :attr:`stop`, which the aggregation
    watches (the running query is interrupted through the engine's own interrupt; nothing starts
    after it; the output is not renamed into place). An exception raised wherever the main thread
    happened to be would race with the engine (a DuckDB query left running in its thread while the
    interpreter exits aborts the process) or be swallowed by code that cannot pass it on. Later
    signals are only recorded. Restores the previous handlers on exit."""

    def __init__(self):
        import threading

        self.received: list[int] = []
        self.stop = threading.Event()
        self._previous: dict = {}

    def _handle(self, signum, frame) -> None:
        self.received.append(signum)
        self.stop.set()

    def install(self) -> None:
        """Handle SIGINT and SIGTERM (again: starting a Spark context takes SIGINT over)."""
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            return
        for signum in (signal.SIGINT, signal.SIGTERM):
            current = signal.getsignal(signum)
            if signum not in self._previous:
                if current is signal.SIG_IGN:  # e.g. a shell's background job ignores SIGINT
                    continue
                self._previous[signum] = current
            signal.signal(signum, self._handle)

    def __enter__(self):
        self.install()
        return self

    def __exit__(self, *exc) -> None:
        import signal

        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    @property
    def exit_code(self) -> int:
        return 128 + (self.received[0] if self.received else 2)  # 130 for SIGINT, 143 for SIGTERM


def _identity(path: str):
    import os

    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_mtime_ns)


def _cmd_aggregate(args) -> int:
    from .._io.aggregate import AggregateRefused
    from .common import EXIT_OK, EXIT_USAGE, _err, one_line

    line = _ProgressLine()
    before = _identity(args.out)
    with _Signals() as signals:
        try:
            result = _aggregate(args, line, signals)
        except AggregateRefused as refused:
            if not signals.received:
                line.close()
                for problem in refused.problems:
                    _err(f"{problem.severity}: {one_line(problem)}")
                _err("error: nothing was written")
                return EXIT_USAGE
        except BaseException:
            if not signals.received:
                raise
        line.close()
        if not signals.received:
            _report(result, args)
        if signals.received:  # whatever the run made of it (an engine's "Query interrupted", a refusal)
            if _identity(args.out) not in (before, None):  # handled only after the rename
                _err(f"interrupted after {args.out} was written whole")
            else:
                _err("interrupted: nothing was written")
            return signals.exit_code
    return EXIT_OK


def _aggregate(args, line: _ProgressLine, signals: _Signals):
    from .._io.aggregate import aggregate
    from .._io.aggregate.spark_engine import _active_or_local_session

    spark = None
    if args.engine == "spark":
        spark = _active_or_local_session()
        signals.install()  # the new Spark context took SIGINT over
    return aggregate(
        args.sources, args.out, engine=args.engine, resolution=args.resolution, period=args.period,
        model=args.model, max_groups=args.max_groups, memory_limit=args.memory_limit,
        temp_directory=args.temp_dir, max_temp_size=args.max_temp_size, progress=line, spark=spark,
        stop=signals.stop,
    )  # fmt: skip


def _report(result, args) -> None:
    from .common import _err, _out, one_line

    for problem in result.problems:
        _err(f"{problem.severity}: {one_line(problem)}")
    share = result.groups / result.source_rows if result.source_rows else 0.0
    _out(f"wrote {result.path}: {result.groups:,} groups from {result.source_rows:,} rows ({share:.1%}), "
         f"{len(result.classes)} classes, {result.seconds:.1f} s with {result.engine}")  # fmt: skip
    if result.engine == "duckdb":
        _out(f"spilled {result.spilled_bytes / 2**30:.2f} GiB to disk at the peak (at most --max-temp-size "
             f"{args.max_temp_size}; removed afterwards)")  # fmt: skip
    if result.kind == "proba":
        _out("kept: the weighted mean probability vector of each group (label-free estimates stay exact)")
    if result.resolution is None:
        _out("exact: every distinct confidence is its own group")
    else:
        _out(
            f"confidences rounded down to multiples of {result.resolution:g}: any threshold on that grid is "
            "exact; the best grid threshold can lose against the exact optimum at most (v_correct - v_abstain) "
            "times the correct weight of the one grid cell holding it (valuecore.resolution_bound computes it)"
        )
        if result.kind == "top_label":
            _out("the probability vectors are not kept on a grid (only the top label and its rounded confidence)")
    _out("per-item features are not available on an aggregate: the expected-value rule, temperature scaling "
         "and comparisons paired by id need the raw rows")  # fmt: skip
