"""Value over time without labels: chunking, per-chunk monitoring, calibration tables.

Seed 002 judges a model in production by its *business value*, realised from
the confusion matrix where labels exist and estimated from the model's own
probabilities where they do not, and normalises it per prediction so that
chunks of different sizes (typical of chunking by time period) compare. This
module cuts a run into chunks (:func:`chunk_predictions`), reports the
estimated and the realised value of a policy per chunk (:func:`monitor`,
summarised by :func:`monitor_summary`), and builds seed 003's Table 5: the
value of the calibrated threshold ``k / (k + 1)`` before and after
recalibration (:func:`calibration_value_table`).

Every per-item figure divides by the weighted number of items of the chunk,
abstentions included.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._engine.evaluate import _estimation_inputs, _evaluate_actions, estimate
from .._engine.fitting import Policy, Values, fit_policy
from .._model.predictions import Predictions, _first_rows
from .._engine.sorting import dimensionless_value, presort
from .._engine.table import DEFAULT_KS
from .._model.values import UseCase

__all__ = [
    "Chunk",
    "chunk_predictions",
    "monitor",
    "monitor_summary",
    "MONITOR_COLUMNS",
    "calibration_value_table",
    "calibration_value_tables",
]

_NANOS_PER_DAY = 86_400 * 10**9
# The most periods (empty ones included) the time span of a run may be cut into; checked before any array of
# periods is made, so that "1ns" over a month is refused in words rather than by a 25 PiB allocation.
MAX_PERIODS = 100_000
# Offsets pandas' resample closes on the right (the period *ends* on the anchor
# date); see ``pandas.core.resample.TimeGrouper``. Their periods run from the
# day after one anchor to the end of the next anchor's day.
_END_ANCHORED = {"ME", "YE", "QE", "BME", "BYE", "BQE", "W"}

MONITOR_COLUMNS = (
    "split",
    "chunk",
    "start",
    "end",
    "time_start",
    "time_end",
    "n_rows",
    "n",
    "estimated_value_total",
    "estimated_value_per_item",
    "estimated_coverage",
    "estimated_best_threshold",
    "realised_value_total",
    "realised_value_per_item",
    "realised_coverage",
    "has_labels",
)

_MONITOR_DTYPES = {"n_rows": "int64", "has_labels": "bool"}  # what an empty frame's columns need

_SUMMARY_COLUMNS = (
    "split",
    "n_chunks",
    "n_rows",
    "n",
    "estimated_value_total",
    "estimated_value_per_item",
    "estimated_coverage",
    "n_labelled",
    "realised_value_total",
    "realised_value_per_item",
    "realised_coverage",
    "estimated_value_per_item_labelled",
    "estimation_error_per_item",
)


# --------------------------------------------------------------------------
# chunking
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Chunk:
    """A consecutive slice of a run (by rows or by time period).

    Attributes
    ----------
    key : str
        Label of the chunk: ``"[start:end]"`` (rows, end exclusive) for
        chunks by size or number, the period (``"2024-01-03"``,
        ``"2024-01-01/2024-01-07"``, ``"2024-01-03 10:00"``) for chunks by time.
    start, end : int or pandas.Timestamp
        Row positions ``[start, end)`` for chunks by size or number; the
        period's bounds ``[start, end)`` for chunks by time.
    rows : ndarray of shape (n_rows,), int64
        Positions of the chunk's items in the run, increasing.
    predictions : Predictions
        The run restricted to ``rows``.
    """

    key: str
    start: object
    end: object
    rows: np.ndarray
    predictions: Predictions

    @property
    def n(self) -> float:
        """Weighted number of items."""
        return self.predictions.total_weight


def _positive_int(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    return int(value)


def _check_one_option(size, n_chunks, period) -> None:
    given = [name for name, value in (("size", size), ("n_chunks", n_chunks), ("period", period)) if value is not None]
    if len(given) != 1:
        shown = ", ".join(given) if given else "none"
        raise ValueError(f"choose exactly one way to chunk: size, n_chunks or period (got {shown})")


def _row_chunks(predictions: Predictions, bounds: np.ndarray) -> list[Chunk]:
    """Chunks of consecutive rows between ``bounds`` (increasing, first 0, last n)."""
    chunks = []
    for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist()):  # loop over chunks, not items
        if end <= start:
            continue
        rows = np.arange(start, end, dtype=np.int64)
        chunks.append(Chunk(f"[{start}:{end}]", start, end, rows, predictions.subset(slice(start, end))))
    return chunks


def _offset(period):
    from pandas.tseries.frequencies import to_offset

    if not isinstance(period, str):
        raise ValueError(f"period must be a pandas offset alias such as 'D', 'W', 'h' or 'MS', got {period!r}")
    try:
        return to_offset(period)
    except ValueError as exc:
        raise ValueError(
            f"unknown time period {period!r}: use a pandas offset alias such as 'D', 'W', 'h' or 'MS'"
        ) from exc


def _period_edges(ns: np.ndarray, offset, name=None) -> tuple[np.ndarray, np.ndarray]:
    """Period of every timestamp (``ns``, int64 nanoseconds), as pandas' resample cuts them.

    Returns ``(codes, edges)``: item ``i`` lies in ``[edges[codes[i]], edges[codes[i] + 1])``.
    Fixed-length periods (hours, minutes, days, ...) start at midnight of the
    first day (resample's ``origin="start_day"``); calendar periods (weeks,
    months, quarters, business days) start on their anchor dates, or for
    offsets anchored on an end date (``"W"``, ``"ME"``, ``"QE"``, ``"YE"``)
    run from the day after one anchor through the next anchor's whole day.
    ValueError (``name``: the period as the user wrote it) when the span would take more than
    :data:`MAX_PERIODS` periods, or a period reaches beyond the last date pandas holds (2262-04-11).
    """
    from pandas.tseries.offsets import Day, Tick

    name = offset.freqstr if name is None else name
    first, last = int(ns.min()), int(ns.max())
    origin = first - first % _NANOS_PER_DAY  # midnight of the first day
    if isinstance(offset, (Tick, Day)):
        step = int(offset.n) * _NANOS_PER_DAY if isinstance(offset, Day) else int(offset.nanos)
        if step <= 0:
            raise ValueError(f"a time period must be positive, got {offset.freqstr!r}")
        n_periods = (last - origin) // step + 1  # Python integers: nothing allocated, nothing overflows
        if n_periods > MAX_PERIODS:
            raise _too_many_periods(name, last - first, f"{n_periods:,}")
        if origin + step * n_periods > pd.Timestamp.max.value:
            raise _beyond_dates(name)
        codes = (ns - origin) // step
        n_edges = int(codes.max()) + 2
        edges = origin + step * np.arange(n_edges, dtype=np.int64)
        return codes, edges
    if offset.n <= 0:
        raise ValueError(f"a time period must be positive, got {offset.freqstr!r}")
    day = pd.Timedelta(days=1)
    first_day = pd.Timestamp(origin)
    last_day = pd.Timestamp(last - last % _NANOS_PER_DAY)
    rule = offset.rule_code
    end_anchored = rule in _END_ANCHORED or rule.split("-")[0] in _END_ANCHORED
    try:
        if end_anchored:
            first_anchor = first_day - offset
            shift = day
        else:
            first_anchor = offset.rollback(first_day)
            shift = pd.Timedelta(0)
        end = last_day + offset
        if end + offset > pd.Timestamp.max:
            raise _beyond_dates(name)
    except (OverflowError, pd.errors.OutOfBoundsDatetime):
        raise _beyond_dates(name) from None
    try:  # where MAX_PERIODS periods end: calendar offsets compose, so this is MAX_PERIODS steps of the offset
        far = first_anchor + offset.base * (offset.n * MAX_PERIODS)
    except (OverflowError, ValueError):  # OutOfBoundsDatetime and OutOfBoundsTimedelta are ValueErrors
        far = None  # beyond any date pandas holds: fewer periods than that reach the last timestamp
    if far is not None and far <= end:
        raise _too_many_periods(name, last - first, f"more than {MAX_PERIODS:,}")
    anchors = pd.date_range(start=first_anchor, end=end, freq=offset)
    edges = (anchors + shift).asi8
    while edges[-1] <= last:  # defensive: always close the last period
        edges = np.r_[edges, (pd.Timestamp(edges[-1]) - shift + offset + shift).value]
    codes = np.searchsorted(edges, ns, side="right") - 1
    if codes.min() < 0:  # pragma: no cover - guarded by construction
        raise AssertionError("internal error: a timestamp precedes the first period")
    return codes, edges


def _too_many_periods(name: str, span_nanos: int, count: str) -> ValueError:
    days = span_nanos / _NANOS_PER_DAY
    span = f"{days:,.0f} days" if days >= 10 else f"{span_nanos / 3.6e12:,.1f} hours"
    return ValueError(f"the period {name!r} cuts the {span} of timestamps into {count} periods, and at most "
                      f"{MAX_PERIODS:,} are allowed: choose a longer period")


def _beyond_dates(name: str) -> ValueError:
    return ValueError(f"the period {name!r} reaches beyond {pd.Timestamp.max:%Y-%m-%d}, the last date pandas "
                      "holds: choose a shorter period")


def _period_key(start: pd.Timestamp, end: pd.Timestamp) -> str:
    midnight = start == start.normalize() and end == end.normalize()
    if midnight:
        last_day = end - pd.Timedelta(days=1)
        if last_day == start:
            return f"{start:%Y-%m-%d}"
        return f"{start:%Y-%m-%d}/{last_day:%Y-%m-%d}"
    if start.second == 0 and start.microsecond == 0 and start.nanosecond == 0:
        return f"{start:%Y-%m-%d %H:%M}"
    return start.isoformat(sep=" ")


def _time_chunks(predictions: Predictions, period) -> list[Chunk]:
    offset = _offset(period)
    timestamp = predictions.timestamp
    if timestamp is None:
        raise ValueError("chunking by time period needs a timestamp column")
    if predictions.n == 0:
        return []
    missing = np.isnat(timestamp)
    if missing.any():
        raise ValueError(
            f"chunking by time period needs a timestamp for every item; it is missing at rows {_first_rows(missing)}"
        )
    ns = timestamp.astype("datetime64[ns]").view(np.int64)
    codes, edges = _period_edges(ns, offset, period)
    order = np.argsort(codes, kind="stable")  # rows of each period stay increasing
    present, first_index, counts = np.unique(codes[order], return_index=True, return_counts=True)
    chunks = []
    for code, begin, count in zip(present.tolist(), first_index.tolist(), counts.tolist()):  # loop over chunks
        rows = order[begin : begin + count]
        start, end = pd.Timestamp(int(edges[code])), pd.Timestamp(int(edges[code + 1]))
        chunks.append(Chunk(_period_key(start, end), start, end, rows, predictions.subset(rows)))
    return chunks


def chunk_predictions(predictions: Predictions, *, size=None, n_chunks=None, period=None) -> list[Chunk]:
    """Cut a run into chunks, by size, by number or by time period.

    Give exactly one of:

    ``size``
        Consecutive rows, ``size`` per chunk in row order; the last chunk may
        be smaller.
    ``n_chunks``
        Consecutive rows in ``n_chunks`` chunks whose sizes differ by at most
        one, the larger first (``numpy.array_split``); a run with fewer rows
        than ``n_chunks`` gives one chunk per row (never an empty chunk).
    ``period``
        A pandas offset alias (``"D"``, ``"W"``, ``"h"``, ``"MS"``, ``"ME"``,
        ``"2W"``, ...) applied to the run's ``timestamp``, with the period
        boundaries of ``pandas.DataFrame.resample``: ``"W"`` is a week
        Monday to Sunday, ``"MS"`` and ``"ME"`` a calendar month, fixed
        lengths such as ``"6h"`` count from midnight of the first day. Chunks
        come in time order; periods without items are skipped.

    The chunks' rows partition the run. Row order is kept within a chunk;
    sort the run by time first if its rows are not in time order and you
    chunk by size or number.

    Raises
    ------
    ValueError
        No or several chunking options, a size or number that is not a
        positive whole number, an unknown period, or a period on a run
        without (or with missing) timestamps.

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1]] * 5)
    >>> [c.key for c in chunk_predictions(p, size=2)]
    ['[0:2]', '[2:4]', '[4:5]']
    >>> [c.rows.tolist() for c in chunk_predictions(p, n_chunks=2)]
    [[0, 1, 2], [3, 4]]
    >>> t = ["2024-01-02 09:00", "2024-01-01 18:00", "2024-01-02 10:00", "2024-01-04 08:00", "2024-01-01 07:00"]
    >>> q = Predictions.from_proba([[0.9, 0.1]] * 5, timestamp=t)
    >>> [(c.key, c.rows.tolist()) for c in chunk_predictions(q, period="D")]
    [('2024-01-01', [1, 4]), ('2024-01-02', [0, 2]), ('2024-01-04', [3])]
    """
    _check_one_option(size, n_chunks, period)
    key = (id(predictions), size, n_chunks, period)
    if not all(isinstance(v, (int, str, type(None))) for v in key):
        return _cut(predictions, size, n_chunks, period)
    kept = _CHUNKS.get(key)
    if kept is None:
        kept = _cut(predictions, size, n_chunks, period)
        while len(_CHUNKS) >= _KEPT_CUTS:
            _CHUNKS.pop(next(iter(_CHUNKS)), None)
        _CHUNKS[key] = kept
        weakref.finalize(predictions, _CHUNKS.pop, key, None)
    return list(kept)


# (id of the run, size, n_chunks, period) -> its chunks: the same chunk objects on every call, so that what is
# kept per object (the sorted run of fit_policy, a map applied, the drift test) is found again when only the
# values or the policy change. A few runs only, each dropped with its run; a chunk's arrays are views of the run's.
_CHUNKS: dict[tuple, tuple] = {}
_KEPT_CUTS = 16


def _cut(predictions: Predictions, size, n_chunks, period) -> tuple[Chunk, ...]:
    if period is not None:
        return tuple(_time_chunks(predictions, period))
    n = predictions.n
    if size is not None:
        size = _positive_int(size, "size")
        bounds = np.r_[np.arange(0, n, size), n]
    else:
        n_chunks = _positive_int(n_chunks, "n_chunks")
        # numpy.array_split: the first n % k chunks get one extra row.
        base, extra = divmod(n, n_chunks)
        sizes = np.full(n_chunks, base, dtype=np.int64)
        sizes[:extra] += 1
        bounds = np.r_[0, np.cumsum(sizes)]
    return tuple(_row_chunks(predictions, bounds.astype(np.int64)))


# --------------------------------------------------------------------------
# monitoring
# --------------------------------------------------------------------------
_RETUNED_KINDS = ("threshold", "class_thresholds")


def _calibration_of(policy: Policy) -> dict | None:
    calibration = dict(policy.calibration)
    return None if calibration.get("method", "none") == "none" else calibration


def _per_item(total: float, n: float) -> float:
    return total / n if n > 0 else float("nan")


# Per id of a chunk's predictions as a policy sees them: its presort, which depends on them alone (a chunk is the
# same object on every call, and a calibration applied to it too, Calibrator.apply), so a new value or policy
# tunes the chunk's best threshold without sorting it again. A sorted run holds its predictions, so the oldest
# are dropped past _KEPT_SORTED_ITEMS items in all (about 40 bytes an item: 80 MB).
_SORTED_CHUNKS: dict[int, object] = {}
_KEPT_SORTED_ITEMS = 2_000_000
_SORTED_LOCK = threading.Lock()  # sessions run in threads: the store must not change while it is summed or cut


def _sorted(predictions: Predictions):
    """``presort(predictions)``, kept for the latest chunks."""
    key = id(predictions)
    run = _SORTED_CHUNKS.get(key)
    if run is not None and run.predictions is predictions:
        return run
    run = presort(predictions)
    if predictions.n <= _KEPT_SORTED_ITEMS:
        with _SORTED_LOCK:
            while _SORTED_CHUNKS and sum(kept.predictions.n for kept in _SORTED_CHUNKS.values()) + predictions.n \
                    > _KEPT_SORTED_ITEMS:
                _SORTED_CHUNKS.pop(next(iter(_SORTED_CHUNKS)))
            _SORTED_CHUNKS[key] = run
    return run


def _chunk_row(split: str, chunk: Chunk, policy: Policy, values: Values, retune: bool, estimated: bool = True) -> dict:
    predictions = chunk.predictions
    n = predictions.total_weight
    matrix = values.for_classes(predictions.classes)
    calibration = _calibration_of(policy)
    # fit_policy expects the tuning run already calibrated with the policy's calibration.
    calibrated = policy.calibrate(predictions)
    run = _sorted(calibrated)
    applied = policy
    if retune and policy.kind in _RETUNED_KINDS:
        applied = fit_policy(policy.kind, run, values, calibration=calibration, estimate=True)
    if estimated:
        estimated_total = estimate(applied, predictions, values).value_total
        actions = None
    else:  # what the estimate refuses is refused all the same
        _, actions, _ = _estimation_inputs(applied, predictions, values)
        estimated_total = float("nan")
    best = fit_policy("threshold", run, values, estimate=True).threshold
    if actions is None:
        actions = applied.decide(predictions, matrix)
    accepted = float(predictions.sample_weight[actions != predictions.n_classes].sum())
    coverage = _per_item(accepted, n)
    realised_total = realised_per_item = realised_coverage = float("nan")
    if predictions.has_labels:
        # evaluate(applied, predictions, values) of the actions just decided (the estimate's checks passed
        # above, and they are evaluate's): not decided again
        realised = _evaluate_actions(actions, predictions, matrix)
        realised_total = realised.value_total
        realised_per_item = _per_item(realised_total, n)
        realised_coverage = coverage
    times = predictions.timestamp
    times = times[~np.isnat(times)] if times is not None else np.zeros(0, dtype="datetime64[ns]")
    return {
        "split": split,
        "chunk": chunk.key,
        "start": chunk.start,
        "end": chunk.end,
        "time_start": pd.Timestamp(times.min()) if times.size else pd.NaT,
        "time_end": pd.Timestamp(times.max()) if times.size else pd.NaT,
        "n_rows": predictions.n,
        "n": n,
        "estimated_value_total": estimated_total,
        "estimated_value_per_item": _per_item(estimated_total, n),
        "estimated_coverage": coverage,
        "estimated_best_threshold": float("nan") if best is None else best,
        "realised_value_total": realised_total,
        "realised_value_per_item": realised_per_item,
        "realised_coverage": realised_coverage,
        "has_labels": predictions.has_labels,
    }


def monitor(
    predictions: Predictions | Mapping[str, Predictions],
    policy: Policy,
    values: Values,
    *,
    size=None,
    n_chunks=None,
    period=None,
    retune: bool = False,
    estimated: bool = True,
) -> pd.DataFrame:
    """Estimated (label-free) and realised value of a policy, chunk by chunk.

    Parameters
    ----------
    predictions : Predictions, or mapping of split name -> Predictions
        One run, or several splits of the same model in time order (e.g.
        ``{"reference": labelled, "production": unlabeled}``): a split is
        labelled or not as a whole, so a run whose labels arrive later is
        given as two splits. Each split is chunked on its own.
    policy : Policy
        Applied to every chunk as it is (its own calibration included).
    values : UseCase or ValueMatrix
    size, n_chunks, period
        How to chunk; exactly one, see :func:`chunk_predictions`.
    retune : bool
        Re-tune a ``threshold`` or ``class_thresholds`` policy on each chunk
        without labels (``fit_policy(..., estimate=True)``) and apply that
        instead. The estimated value is then in-sample (optimistic); the
        realised value stays honest, since no label was used to tune. Other
        kinds need no data and are applied as they are.
    estimated : bool
        False: ``estimated_value_total`` and ``estimated_value_per_item`` are
        NaN, not computed (for a caller that puts in an estimate of its own,
        such as :func:`monitor_bands`' calibrated one); every other column is
        the same, bit for bit.

    Returns
    -------
    DataFrame
        One row per chunk, in split then time order, with the columns of
        ``MONITOR_COLUMNS``: ``split`` (``"all"`` for a single run),
        ``chunk`` (its key), ``start``/``end`` (see :class:`Chunk`),
        ``time_start``/``time_end`` (first and last timestamp in the chunk,
        NaT without timestamps), ``n_rows``, ``n`` (weighted items),
        ``estimated_value_total``, ``estimated_value_per_item`` (total / n,
        abstentions included: seed 002's normalisation per prediction),
        ``estimated_coverage`` (share acted on; known without labels),
        ``estimated_best_threshold`` (the global threshold tuned without
        labels on that chunk, on the policy's calibrated confidence; NaN when
        abstaining on everything is best), ``realised_value_total``,
        ``realised_value_per_item``, ``realised_coverage`` (NaN where the
        chunk has no labels) and ``has_labels``.

        For a chart of estimated vs realised value over time, plot
        ``estimated_value_per_item`` and ``realised_value_per_item`` against
        ``start`` (time chunks) or the row number (size / number chunks).

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.6, 0.4], [0.8, 0.2], [0.3, 0.7]], y_true=[0, 1, 0, 1])
    >>> frame = monitor(p, Policy("threshold", threshold=0.7), UseCase(1, 0, -1), size=2)
    >>> frame[["chunk", "estimated_value_total", "realised_value_total", "estimated_coverage"]]
       chunk  estimated_value_total  realised_value_total  estimated_coverage
    0  [0:2]                    0.8                   1.0                 0.5
    1  [2:4]                    1.0                   2.0                 1.0
    """
    _check_one_option(size, n_chunks, period)
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be a Policy, got {type(policy).__name__}")
    if isinstance(predictions, Predictions):
        splits = {"all": predictions}
    elif isinstance(predictions, Mapping):
        splits = dict(predictions)
        bad = [name for name, run in splits.items() if not isinstance(run, Predictions)]
        if bad:
            raise TypeError(f"every split must be a Predictions; these are not: {bad}")
    else:
        raise TypeError(
            "predictions must be a Predictions or a mapping of split name to Predictions, "
            f"got {type(predictions).__name__}"
        )
    calibration = _calibration_of(policy)
    if calibration is not None and calibration["method"] == "isotonic":
        if splits and values.as_use_case() is None:
            raise ValueError(
                "label-free estimation with a per-class value matrix needs calibrated probability vectors; "
                "isotonic recalibrates only the top-label confidence (use temperature or none)"
            )
    rows = []
    for split, run in splits.items():  # loop over splits and chunks, never items
        for chunk in chunk_predictions(run, size=size, n_chunks=n_chunks, period=period):
            rows.append(_chunk_row(str(split), chunk, policy, values, retune, bool(estimated)))
    frame = pd.DataFrame(rows, columns=list(MONITOR_COLUMNS))
    if frame["n_rows"].dtype == np.int64 and frame["has_labels"].dtype == np.bool_:
        return frame  # rows of ints and bools are read so; astype would copy every column (a third of the call)
    return frame.astype(_MONITOR_DTYPES)


def _zero_nan(column: np.ndarray) -> np.ndarray:
    """``Series.fillna(0.0)``'s values: NaN read as 0."""
    column = np.asarray(column, dtype=float)
    return np.where(np.isnan(column), 0.0, column)


def _column_sum(column: np.ndarray) -> float:
    """``float(Series.sum())``: a float column's NaN skipped (read as 0), the rest summed by numpy in order."""
    return float(_zero_nan(column).sum() if column.dtype.kind == "f" else column.sum())


def monitor_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Totals of a :func:`monitor` frame per split (plus a ``"total"`` row for several splits).

    Totals add up exactly over chunks; per-item figures divide by the
    weighted number of items. ``n_labelled``, ``realised_*`` and
    ``estimated_value_per_item_labelled`` cover the labelled chunks only, so
    ``estimation_error_per_item`` (estimated minus realised, per item, on the
    same items) shows how far label-free estimation was off where it can be
    checked; NaN without labelled chunks.

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.6, 0.4], [0.8, 0.2], [0.3, 0.7]], y_true=[0, 1, 0, 1])
    >>> frame = monitor(p, Policy("threshold", threshold=0.7), UseCase(1, 0, -1), size=2)
    >>> monitor_summary(frame)[["split", "n", "estimated_value_per_item", "realised_value_per_item"]]
      split    n  estimated_value_per_item  realised_value_per_item
    0   all  4.0                      0.45                     0.75
    """
    missing = [c for c in MONITOR_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"not a monitor() frame: the columns {missing} are missing")
    # Summed in numpy as pandas sums a column (NaN read as 0, in the rows' order): the same bits, without a
    # frame per split and per labelled subset (pandas's overhead was most of the page's summary table).
    splits = frame["split"].to_numpy(dtype=object)
    groups = [(str(split), np.flatnonzero(splits == split)) for split in pd.unique(splits)
              if not pd.isna(split)]  # groupby's groups: rows without a split are in the total alone
    if len(groups) > 1:
        groups.append(("total", np.arange(len(frame))))
    columns = {name: frame[name].to_numpy() for name in (
        "n", "n_rows", "estimated_value_total", "estimated_coverage", "realised_value_total", "realised_coverage")}
    has_labels = frame["has_labels"].to_numpy(dtype=bool)
    rows = []
    for split, where in groups:  # loop over splits
        labelled = where[has_labels[where]]
        n = _column_sum(columns["n"][where])
        n_labelled = _column_sum(columns["n"][labelled])
        estimated_total = _column_sum(columns["estimated_value_total"][where])
        accepted = _column_sum(_zero_nan(columns["estimated_coverage"][where]) * columns["n"][where])
        if len(labelled):
            realised_total = _column_sum(columns["realised_value_total"][labelled])
            realised_accepted = _column_sum(_zero_nan(columns["realised_coverage"][labelled]) * columns["n"][labelled])
            estimated_labelled = _per_item(_column_sum(columns["estimated_value_total"][labelled]), n_labelled)
            realised_per_item = _per_item(realised_total, n_labelled)
            realised_coverage = _per_item(realised_accepted, n_labelled)
        else:
            realised_total = realised_per_item = realised_coverage = estimated_labelled = float("nan")
        rows.append(
            {
                "split": split,
                "n_chunks": len(where),
                "n_rows": int(columns["n_rows"][where].sum()),
                "n": n,
                "estimated_value_total": estimated_total,
                "estimated_value_per_item": _per_item(estimated_total, n),
                "estimated_coverage": _per_item(accepted, n),
                "n_labelled": n_labelled,
                "realised_value_total": realised_total,
                "realised_value_per_item": realised_per_item,
                "realised_coverage": realised_coverage,
                "estimated_value_per_item_labelled": estimated_labelled,
                "estimation_error_per_item": estimated_labelled - realised_per_item,
            }
        )
    return pd.DataFrame(rows, columns=list(_SUMMARY_COLUMNS))


# --------------------------------------------------------------------------
# seed 003, Table 5: value before and after recalibration
# --------------------------------------------------------------------------
_TABLE_COLUMNS = (
    "k",
    "threshold",
    "accuracy_before",
    "accuracy_after",
    "macro_f1_before",
    "macro_f1_after",
    "value_calibrated_before",
    "value_calibrated_after",
    "coverage_calibrated_before",
    "coverage_calibrated_after",
    "value_tuned_before",
    "value_tuned_after",
    "threshold_tuned_before",
    "threshold_tuned_after",
)


def calibration_value_table(
    tune_predictions: Predictions,
    eval_predictions: Predictions,
    *,
    method: str = "temperature",
    ks=DEFAULT_KS,
) -> pd.DataFrame:
    """Seed 003's Table 5 for one model: value at cost factor ``k`` before and after recalibration.

    A calibrator (``method``, see ``fit_calibration``) is fitted on the
    labelled tuning split and applied to the labelled evaluation split. For
    each ``k`` (the use case ``UseCase.from_omega(k)``), on the evaluation
    split, the dimensionless value ``(N_correct - k N_wrong) / N`` of:

    ``value_calibrated_before`` / ``_after``
        the calibrated threshold ``k / (k + 1)`` (seed 003 eq. 6) applied to
        the raw / recalibrated confidence;
    ``value_tuned_before`` / ``_after``
        the threshold tuned on the tuning split (raw / recalibrated).

    Parameters
    ----------
    tune_predictions, eval_predictions : Predictions
        Two labelled splits of the same model (same classes).
    method : {"temperature", "isotonic", "platt", "none"}
    ks : sequence of float
        Cost factors (omega), default ``DEFAULT_KS``.

    Returns
    -------
    DataFrame
        One row per ``k`` with the columns ``k``, ``threshold`` (``k/(k+1)``),
        ``accuracy_before/after`` and ``macro_f1_before/after`` (of plain
        argmax; equal for temperature scaling, which never changes a
        prediction), the four values above, ``coverage_calibrated_before/after``
        and the tuned thresholds (NaN = always abstain). The fitted
        calibrator is in ``frame.attrs["calibration"]`` (``Calibrator.to_dict()``).
    """
    from .._model.recalibration import fit_calibration

    tune_predictions.require_labels("the calibration value table (tuning split)")
    eval_predictions.require_labels("the calibration value table (evaluation split)")
    if tune_predictions.classes != eval_predictions.classes:
        raise ValueError(
            f"the tuning split has classes {list(tune_predictions.classes)} but the evaluation split "
            f"has {list(eval_predictions.classes)}"
        )
    calibrator = fit_calibration(tune_predictions, method)
    tune_after = calibrator.apply(tune_predictions)
    eval_after = calibrator.apply(eval_predictions)
    use_cases = [UseCase.from_omega(k) for k in ks]
    tuned = {}  # thresholds tuned on the tuning split: only it is sorted
    for when, tune in (("before", tune_predictions), ("after", tune_after)):
        tune_run = presort(tune)
        tuned[when] = [fit_policy("threshold", tune_run, use_case).threshold for use_case in use_cases]
    eval_runs = {
        when: _at_thresholds(predictions, [u.calibrated_threshold for u in use_cases] + tuned[when])
        for when, predictions in (("before", eval_predictions), ("after", eval_after))
    }
    common = {
        "accuracy_before": eval_predictions.accuracy,
        "accuracy_after": eval_after.accuracy,
        "macro_f1_before": eval_predictions.macro_f1,
        "macro_f1_after": eval_after.macro_f1,
    }
    rows = []
    for i, (k, use_case) in enumerate(zip(ks, use_cases)):  # loop over cost factors
        threshold = use_case.calibrated_threshold
        row = {"k": k, "threshold": np.nan if threshold is None else threshold, **common}
        for when in ("before", "after"):
            value, coverage = eval_runs[when].value_at(threshold, k), eval_runs[when].coverage_at(threshold)
            tuned_threshold = tuned[when][i]
            row[f"value_calibrated_{when}"] = value
            row[f"coverage_calibrated_{when}"] = coverage
            row[f"value_tuned_{when}"] = eval_runs[when].value_at(tuned_threshold, k)
            row[f"threshold_tuned_{when}"] = np.nan if tuned_threshold is None else tuned_threshold
        rows.append(row)
    frame = pd.DataFrame(rows, columns=list(_TABLE_COLUMNS))
    frame.attrs["calibration"] = calibrator.to_dict()
    return frame


class _CountsAtThresholds:
    """``value_at`` and ``coverage_at`` of :class:`SortedRun`, for a few thresholds known in advance.

    Counts per stretch between consecutive thresholds (one ``searchsorted`` of each item
    into the thresholds and a ``bincount``), summed from the top: O(n log m) for m
    thresholds instead of sorting the items. Only for weights whose sums are exact in any
    order (integers), where it gives presort's figures bit for bit.
    """

    def __init__(self, predictions: Predictions, thresholds):
        self._grid = np.unique(np.asarray([t for t in thresholds if t is not None], dtype=np.float64))
        # items with confidence >= grid[j] are those with level > j
        level = np.searchsorted(self._grid, predictions.confidence, side="right")
        key = 2 * level + predictions.correct
        counts = np.bincount(key, weights=predictions.sample_weight, minlength=2 * (self._grid.size + 1))
        wrong_correct = counts.reshape(-1, 2)
        above = np.cumsum(wrong_correct[::-1], axis=0)[::-1]  # above[l]: the items at level l or more
        self._wrong, self._correct = np.r_[above[1:, 0], 0.0], np.r_[above[1:, 1], 0.0]
        self._accepted = np.r_[above[1:].sum(axis=1), 0.0]
        self.total_weight = float(above[0].sum())

    def _at(self, threshold) -> int:
        if threshold is None:
            return self._grid.size  # the zeros: nothing accepted
        index = int(np.searchsorted(self._grid, threshold))
        if index == self._grid.size or self._grid[index] != threshold:
            raise KeyError(threshold)
        return index

    def value_at(self, threshold, omega: float) -> float:
        if self.total_weight <= 0:
            return float("nan")
        j = self._at(threshold)
        return float(dimensionless_value(float(self._correct[j]), float(self._wrong[j]), omega, self.total_weight))

    def coverage_at(self, threshold) -> float:
        if self.total_weight <= 0:
            return float("nan")
        return float(self._accepted[self._at(threshold)] / self.total_weight)


def _at_thresholds(predictions: Predictions, thresholds):
    """What ``value_at`` and ``coverage_at`` at ``thresholds`` need: counts when exact, else the sorted run."""
    from .._engine.sorting import _sums_exact_in_any_order

    if _sums_exact_in_any_order(predictions.sample_weight):
        return _CountsAtThresholds(predictions, thresholds)
    return presort(predictions)


def calibration_value_tables(
    runs: Mapping[str, tuple[Predictions, Predictions]],
    *,
    method: str = "temperature",
    ks=DEFAULT_KS,
) -> pd.DataFrame:
    """:func:`calibration_value_table` for several models, as one tidy frame.

    Parameters
    ----------
    runs : mapping of model name -> (tuning split, evaluation split)

    Returns
    -------
    DataFrame
        A ``model`` column followed by the columns of
        :func:`calibration_value_table`, one row per (model, k), models in
        the order given. ``frame.attrs["calibration"]`` maps each model to
        its fitted calibrator's dict.
    """
    frames, calibrations = [], {}
    for model, pair in runs.items():  # loop over models
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"model {model!r}: expected a (tuning, evaluation) pair of Predictions")
        table = calibration_value_table(pair[0], pair[1], method=method, ks=ks)
        calibrations[str(model)] = table.attrs["calibration"]
        table.insert(0, "model", str(model))
        frames.append(table)
    columns = ["model", *_TABLE_COLUMNS]
    frame = pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
    frame.attrs = {"calibration": calibrations}
    return frame
