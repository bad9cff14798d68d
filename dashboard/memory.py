"""The server's memory budget: the loaded and sorted runs of every session, bounded in bytes and in time.

A loaded run of 10^7 rows holds hundreds of megabytes of arrays, its sorted and
recalibrated copies as much again. ``st.cache_resource`` bounds a cache by its
number of entries only and drops an expired entry only when it is asked for
again, so uploads of closed sessions stayed in memory for good. The heavy stages
(loading, recalibrating, sorting) go through :class:`BudgetCache` instead:

* every entry is weighed (the bytes of the numpy arrays it holds) and the
  least recently used entries are dropped while the total is above the budget
  (:func:`dashboard.limits.memory_budget_bytes`, ``VALUE_DASHBOARD_MEMORY_MB``);
* an entry not used for the time to live (``VALUE_DASHBOARD_CACHE_TTL_S``) is
  dropped by a background sweep, even when no session asks for anything
  again, and the freed memory is handed back to the operating system;
* an upload is weighed from its size and header before it is parsed
  (:func:`estimate_upload_bytes`): one that would not fit the budget is refused
  in words, not parsed.

A session keeps the objects it shows until it ends (Streamlit closes a session
``server.disconnectedSessionTTL`` seconds after its tab closed).
"""

from __future__ import annotations

import ctypes
import gc
import io
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import fields, is_dataclass
from typing import Any, Callable

import numpy as np

from .limits import cache_ttl_seconds, memory_budget_bytes

__all__ = ["BudgetCache", "budget_refusal", "deep_nbytes", "estimate_file_bytes", "estimate_upload_bytes",
           "release_memory", "upload_refusal"]

# A loaded row costs its columns as float64 (or codes), and the parse needs about as much again
# while it runs: a 10^7-row CSV of y_true and two probabilities (120 MB) held 458 MB once loaded
# and peaked 830 MB above the idle process while parsing, 83 bytes a row; the estimate says 80.
BYTES_PER_CELL = 8
COPIES = 2
BYTES_PER_ROW_OVERHEAD = 32


def deep_nbytes(obj: Any, _seen: set | None = None) -> int:
    """Bytes of the numpy arrays (and pandas frames) reachable from ``obj``, each counted once."""
    seen = set() if _seen is None else _seen
    stack = [obj]
    total = 0
    while stack:
        item = stack.pop()
        if item is None or isinstance(item, (bool, int, float, complex)) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            base = item
            while isinstance(base.base, np.ndarray):  # a view costs nothing beyond its base
                base = base.base
            if id(base) not in seen or base is item:
                seen.add(id(base))
                total += base.nbytes
            if item.dtype == object:
                stack.extend(item.ravel().tolist()[:10_000])
        elif isinstance(item, (str, bytes, bytearray)):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif hasattr(item, "memory_usage") and hasattr(item, "columns"):  # a pandas DataFrame
            total += int(item.memory_usage(index=True, deep=False).sum())
        elif is_dataclass(item):
            state = getattr(item, "__dict__", None)
            # The stored values, not the fields read: reading a run's sample_weight would make the ones a run
            # built without weights makes only when asked (valuecore.Predictions), 8 bytes an item. Those
            # are counted as if made, since the pages soon read them (twice if already made: the budget errs
            # on the side of dropping a run early, never of holding too much).
            stack.extend(state.values() if state is not None else (getattr(item, f.name, None) for f in fields(item)))
            if getattr(item, "has_unit_weights", False) is True:
                total += 8 * int(item.n)
        elif hasattr(item, "__dict__"):
            stack.extend(vars(item).values())
    return total


def release_memory() -> None:
    """Collect garbage and hand freed heap pages back to the operating system (glibc's malloc_trim)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the allocator keeps them for later allocations
        pass


class BudgetCache:
    """A least-recently-used cache bounded by bytes, whose entries expire after a time to live.

    One instance is shared by every session of the server. ``get(key, compute)`` returns the
    cached value or computes it (one computation per key at a time). Budget and time to live are
    read from :mod:`dashboard.limits` on each use, so a test or an operator may change them.
    """

    def __init__(self, name: str):
        self.name = name
        self._entries: OrderedDict[Any, tuple[Any, int, float]] = OrderedDict()  # key -> (value, bytes, last use)
        self._lock = threading.Lock()
        self._computing: dict[Any, threading.Lock] = {}
        _CACHES.append(self)
        _start_sweeper()

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(size for _, size, _ in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key, compute: Callable[[], Any]):
        value = self._lookup(key)
        if value is not _MISSING:
            return value
        with self._lock:
            key_lock = self._computing.setdefault(key, threading.Lock())
        with key_lock:  # a second session asking for the same key waits for the first one's result
            value = self._lookup(key)
            if value is _MISSING:
                value = compute()
                self._store(key, value, deep_nbytes(value))
        with self._lock:
            self._computing.pop(key, None)
        return value

    def peek(self, key, default=None):
        """The cached value of ``key`` (counted as a use), or ``default``; never computes."""
        value = self._lookup(key)
        return default if value is _MISSING else value

    def put(self, key, value) -> None:
        """Keep ``value`` under ``key`` (replacing what was there), weighed, within the budget."""
        self._store(key, value, deep_nbytes(value))

    def _lookup(self, key):
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return _MISSING
            self._entries[key] = (entry[0], entry[1], time.monotonic())
            self._entries.move_to_end(key)
            return entry[0]

    def _store(self, key, value, size: int) -> None:
        with self._lock:
            self._entries[key] = (value, size, time.monotonic())
            self._entries.move_to_end(key)
        shrink_to_budget()

    def _drop_where(self, condition) -> int:
        with self._lock:
            dropped = [k for k, entry in self._entries.items() if condition(entry)]
            for key in dropped:
                del self._entries[key]
        return len(dropped)

    def _oldest(self):
        with self._lock:
            if not self._entries:
                return None
            key, (_, size, used) = next(iter(self._entries.items()))
            return used, key, size

    def _drop(self, key) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_MISSING = object()
_log = logging.getLogger("dashboard.memory")
_CACHES: list[BudgetCache] = []
_sweeper_lock = threading.Lock()
_sweeper: threading.Thread | None = None


def total_bytes() -> int:
    """Bytes held by every budgeted cache of the server."""
    return sum(cache.nbytes for cache in _CACHES)


def shrink_to_budget() -> int:
    """Drop the least recently used entries, across caches, until the total fits the budget."""
    budget, dropped = memory_budget_bytes(), 0
    while total_bytes() > budget:
        oldest = [entry + (cache,) for cache in _CACHES if (entry := cache._oldest()) is not None]
        if not oldest:
            break
        _, key, _, cache = min(oldest, key=lambda e: e[0])
        cache._drop(key)
        dropped += 1
    if dropped:
        release_memory()
    return dropped


def expire(now: float | None = None) -> int:
    """Drop the entries not used for the time to live; return how many were dropped."""
    now = time.monotonic() if now is None else now
    ttl = cache_ttl_seconds()
    dropped = sum(cache._drop_where(lambda entry: now - entry[2] > ttl) for cache in _CACHES)
    if dropped:
        release_memory()
        _log.info("memory: %d cached object(s) unused for %g s dropped; the caches hold %.0f MB",
                  dropped, ttl, total_bytes() / 2**20)
    return dropped


def close_expired_sessions() -> None:
    """Ask Streamlit to end the sessions whose tab closed more than ``server.disconnectedSessionTTL`` ago.

    Streamlit keeps a closed tab's session (its state, its uploaded files) for that time so the tab
    may reconnect, but drops it only when another session comes or goes: the last visitor's uploads
    would stay until the next visitor. This reads Streamlit's own session storage (a private part of
    its runtime, hence the guards: if it changes, sessions end as Streamlit itself decides).
    """
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return
        runtime = Runtime.instance()
        manager = runtime._session_mgr
        expired_cache = getattr(getattr(manager, "_session_storage", None), "_cache", None)
        if not hasattr(expired_cache, "expire"):
            return

        def on_the_event_loop():
            with getattr(manager, "_storage_lock", threading.Lock()):
                expired = expired_cache.expire()
            for _, info in expired:
                info.session.shutdown()  # removes the session's uploaded files too
                # Streamlit's runtime loop keeps a reference to the last session it looked at (a loop
                # variable) until another session comes: without this, the last visitor's loaded runs
                # and uploads stayed in memory until then.
                from .state import clear_session

                clear_session(info.session)
            # A session Streamlit dropped on its own (when another one came) was not shut down: its
            # uploaded files stayed in the upload manager for good. Files of no live session go.
            uploads = getattr(runtime, "_uploaded_file_mgr", None)
            orphans = [session_id for session_id in list(getattr(uploads, "file_storage", None) or {})
                       if manager.get_session_info(session_id) is None]
            for session_id in orphans:
                uploads.remove_session_files(session_id)
            if expired or orphans:
                release_memory()
                _log.info("memory: %d closed session(s) ended, uploads of %d dropped session(s) removed",
                          len(expired), len(orphans))

        runtime._get_async_objs().eventloop.call_soon_threadsafe(on_the_event_loop)
    except Exception:  # Streamlit's internals moved: it still ends sessions in its own time
        return


def _sweep_forever() -> None:
    while True:
        time.sleep(max(1.0, min(30.0, cache_ttl_seconds() / 4)))
        try:
            expire()
            close_expired_sessions()
        except Exception:  # the sweep must never die: the next round tries again
            pass


def _start_sweeper() -> None:
    global _sweeper
    with _sweeper_lock:
        if _sweeper is None or not _sweeper.is_alive():
            _sweeper = threading.Thread(target=_sweep_forever, name="value-dashboard-cache-sweep", daemon=True)
            _sweeper.start()


# ------------------------------------------------------------------ uploads, weighed before parsing
def estimate_upload_bytes(name: str, content: bytes) -> tuple[int, int, int]:
    """``(bytes in memory, rows, columns)`` an upload would need once loaded and sorted, from its
    size and header alone (a Parquet file: from its footer); never parses the body."""
    parquet = io.BytesIO(content) if name.lower().endswith((".parquet", ".pq")) else None
    return _estimate(len(content), content[: 1 << 16], parquet)


def estimate_file_bytes(path) -> tuple[int, int, int]:
    """As :func:`estimate_upload_bytes`, for a run file on disk: its size and first 64 KiB (or footer)."""
    from pathlib import Path

    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        return _estimate(path.stat().st_size, b"", path)
    with open(path, "rb") as handle:
        return _estimate(path.stat().st_size, handle.read(1 << 16), None)


def _estimate(size: int, head: bytes, parquet) -> tuple[int, int, int]:
    if parquet is not None:
        try:
            import pyarrow.parquet as pq

            metadata = pq.ParquetFile(parquet).metadata
            rows, columns = int(metadata.num_rows), int(metadata.num_columns)
        except Exception:  # not readable as Parquet: the loader says why, in its words
            return 0, 0, 0
    else:
        lines = head.split(b"\n")
        columns = lines[0].count(b",") + 1 if lines else 0
        sample = lines[1:-1] if len(lines) > 2 else lines[1:]
        mean_line = (sum(len(line) + 1 for line in sample) / len(sample)) if sample else max(size, 1)
        rows = int(size / max(mean_line, 1.0))
    cost = rows * (columns * BYTES_PER_CELL * COPIES + BYTES_PER_ROW_OVERHEAD)
    return cost, rows, columns


def upload_refusal(name: str, content: bytes) -> str | None:
    """A sentence refusing an upload that would not fit the server's memory budget, or None."""
    cost, rows, columns = estimate_upload_bytes(name, content)
    return budget_refusal(cost, f"about {rows:,} rows of {columns} columns")


def budget_refusal(cost: int, what: str) -> str | None:
    """A sentence refusing ``what`` when ``cost`` bytes would not fit the server's memory budget, or None."""
    budget = memory_budget_bytes()
    if cost <= budget:
        return None
    return (f"not loaded: {what} would need about {cost / 2**20:,.0f} MB of "
            f"the server's memory, more than its budget of {budget / 2**20:,.0f} MB. Aggregate the file first "
            "(python -m valuecore aggregate) or ask the operator to raise VALUE_DASHBOARD_MEMORY_MB")
