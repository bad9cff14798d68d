"""The run-file loader's hot paths: what a valid file costs beyond reading it.

A valid file is the common case, so each check first asks one cheap question
of a whole block (are the row sums finite, is the smallest entry >= 0, do all
labels map to a class) and builds the per-entry masks that name bad rows only
when the answer is no. The file's SHA-256 is computed on a second thread while
the columns are converted (hashlib releases the GIL).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Callable

import numpy as np

from .._model.predictions import _column_sums, _small_integer_codes


# Rows per tile when columns are written into a row-major block: a tile of every
# column stays in the L1/L2 cache while it is filled (4x fewer cache misses at 10 columns).
_TILE_ROWS = 4096


def fill_columns(block: np.ndarray, columns: list[np.ndarray]) -> None:
    """``block[:, j] = columns[j]`` for every j: in one copy per column into a column-major block,
    a tile of rows at a time into a row-major one."""
    if block.strides[0] == block.itemsize:  # column-major (rows of a column-major matrix too)
        for j, column in enumerate(columns):
            block[:, j] = column
        return
    for start in range(0, block.shape[0], _TILE_ROWS):
        tile = block[start : start + _TILE_ROWS]
        for j, column in enumerate(columns):
            tile[:, j] = column[start : start + _TILE_ROWS]


class InlineExecutor:
    """What the loader uses of a ``ThreadPoolExecutor`` (``with``, ``submit``), run on the calling thread.

    For a file of one block a pool's threads add only their start and hand-offs, each of which waits for a
    free core on a busy machine (a 10^3-row file: 116 ms of wall time for 27 ms of CPU at a load of 9).
    """

    def __enter__(self) -> "InlineExecutor":
        return self

    def __exit__(self, *exc_info) -> bool:
        return False

    def submit(self, work: Callable, *args) -> Future:
        future: Future = Future()
        try:
            future.set_result(work(*args))
        except BaseException as error:  # noqa: BLE001 - raised by result(), as a pool's future does
            future.set_exception(error)
        return future


def in_background(work: Callable[[], str]) -> Callable[[], str]:
    """Start ``work`` on a thread; the returned function waits for its result (or raises its error)."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["result"] = work()
        except BaseException as error:  # noqa: BLE001 - handed to the caller, which reports it
            outcome["error"] = error

    thread = threading.Thread(target=run, name="valuecore-file-hash", daemon=True)
    thread.start()

    def result() -> str:
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["result"]

    return result


def clean_row_deviations(columns) -> tuple[np.ndarray, float] | None:
    """``|row sum - 1|`` (float64) of a block of probabilities given class-major (its C columns,
    each a contiguous array of the block's rows, as a Parquet batch holds them) without NaN,
    infinite or negative entries, and its largest value; None when it has any (the caller then
    finds which)."""
    if len(columns) == 0 or len(columns[0]) == 0:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        total = _column_sums(columns, np.empty(len(columns[0])))
        total -= 1.0
        deviation = np.abs(total, out=total)
    # A NaN or an infinity makes its row's sum, and so the largest deviation, non-finite: no pass of its own.
    worst = float(deviation.max())
    if not np.isfinite(worst) or min(column.min() for column in columns) < 0:
        return None
    return deviation, worst


def integer_label_codes(values, classes: tuple[str, ...]) -> np.ndarray | None:
    """Class index (int64) of each integer label of a column, by one table lookup, when
    every label is a class; None otherwise (or for other columns)."""
    if getattr(getattr(values, "dtype", None), "kind", "i") not in "iu":  # text, categories: not made an array
        return None
    values = np.asarray(values)
    if values.dtype.kind not in "iu":
        return None
    found = _small_integer_codes(values, {c: i for i, c in enumerate(classes)})
    if found is None:
        return None
    codes, complete = found
    return codes if complete or codes.min() >= 0 else None
