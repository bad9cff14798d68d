"""Parquet datasets (prediction logs too large for memory) as a dashboard source.

A *dataset* is a folder inside the roots the operator allows (see
``dashboard.serverfiles``: a folder the visitor names is read only there) that
holds Parquet files in sub-folders only, e.g. hive partitions
``split=val/part-0.parquet``. The dashboard does not load it row by row: it
aggregates it once with DuckDB (``valuecore.aggregate``, memory-capped),
caches the aggregate on disk under the dataset's *fingerprint* (every data
file's relative path and content digest), and from then on loads the small
aggregate like any run file. A changed file changes the fingerprint, so a
stale aggregate is never served: size and modification time can be restored
by anyone who can write the file, so they only decide when a file's digest
must be computed again (see :func:`dataset_fingerprint`).

No Streamlit here: the sidebar passes a progress callback (e.g. a
``st.progress`` bar's ``progress`` method) and shows any refusal's problems
as text.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = [
    "CACHE_ENV",
    "PER_ITEM_NOTE",
    "aggregated_models",
    "cached_aggregate",
    "dataset_fingerprint",
    "default_cache_dir",
    "is_dataset",
]

CACHE_ENV = "VALUE_DASHBOARD_AGGREGATE_CACHE"
PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
DATA_SUFFIXES = (*PARQUET_SUFFIXES, ".csv")
PER_ITEM_NOTE = (
    "{models} {verb} aggregated (one row per group of equal predictions, its weight the number of items), "
    "so {what} does not apply: it needs each item's own row."
)


def aggregated_models(report, models=None) -> list[str]:
    """The models of ``report`` (of ``models``, when given) loaded from an aggregate run file.

    Thresholds, values, curves and intervals are exact on them; what needs each item's own row
    (the expected-value rule, temperature scaling, a comparison paired item by item) does not apply.
    """
    names = report.models if models is None else [m for m in models if m in report.models]
    return [m for m in names if report.models[m].aggregate]


def per_item_note(models, what: str) -> str:
    """The sentence that says ``what`` (e.g. "temperature scaling") does not apply to these aggregated models."""
    models = list(models)
    return PER_ITEM_NOTE.format(models=", ".join(models), verb="is" if len(models) == 1 else "are", what=what)


def _data_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix.lower() in DATA_SUFFIXES
        and not any(part.startswith((".", "_")) for part in p.relative_to(folder).parts)
    )


def is_dataset(folder: str | os.PathLike) -> bool:
    """True for a folder whose data files are Parquet files in sub-folders (a partitioned log).

    A folder with run files of its own, or with CSV files in its sub-folders (say, a folder of
    run folders), is not one: its models stay separate files instead of being merged into one log.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return False
    files = _data_files(folder)
    return bool(files) and all(
        len(p.relative_to(folder).parts) > 1 and p.suffix.lower() in PARQUET_SUFFIXES for p in files
    )


DIGESTS_FILE = "file-digests.json"
_digest_lock = threading.Lock()
_digests: dict[str, list] = {}  # absolute path -> [stat key..., content digest]


def dataset_fingerprint(folder: str | os.PathLike, cache_dir: str | os.PathLike | None = None) -> str:
    """SHA-256 over every data file's relative path and the BLAKE2b digest of its content.

    Computed incrementally: a file's digest is kept with the file's size, modification time,
    *change* time, inode and device, and for a Parquet file the bytes of its footer, and is
    computed again when any of these differ. Size and modification time alone can be restored
    after an edit (``touch -d``); the change time cannot (setting the times sets it to now), and
    an edit in place that keeps all of them still has to leave the footer (row groups, sizes,
    statistics) as it was. Kept in memory and in ``cache_dir`` across restarts.
    """
    folder = Path(folder)
    memo = _load_digests(cache_dir)
    digest = hashlib.sha256()
    fresh: dict[str, list] = {}
    seen = set()
    for path in _data_files(folder):
        key = _stat_key(path)
        name = str(path.resolve())
        seen.add(name)
        entry = memo.get(name)
        if entry is None or entry[:-1] != key:
            entry = fresh[name] = [*key, _content_digest(path)]
        digest.update(f"{path.relative_to(folder).as_posix()}\0{entry[-1]}\n".encode())
    inside = str(folder.resolve()) + os.sep
    with _digest_lock:  # sessions share the memo: changed only under the lock
        memo.update(fresh)
        gone = [name for name in memo if name.startswith(inside) and name not in seen]
        for name in gone:  # files deleted from the dataset: the memo does not grow without end
            del memo[name]
    if fresh or gone:
        _save_digests(cache_dir, memo)
    return digest.hexdigest()


def _stat_key(path: Path) -> list:
    info = path.stat()
    key = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev]
    if path.suffix.lower() in PARQUET_SUFFIXES:
        key.append(_parquet_footer_digest(path, info.st_size))
    return key


def _parquet_footer_digest(path: Path, size: int) -> str:
    """BLAKE2b of a Parquet file's footer (its metadata: row groups, offsets, sizes, statistics)."""
    with open(path, "rb") as handle:
        if size < 12:
            return hashlib.blake2b(handle.read(), digest_size=16).hexdigest()
        handle.seek(size - 8)
        length = int.from_bytes(handle.read(4), "little")
        handle.seek(max(size - 8 - min(length, size), 0))
        return hashlib.blake2b(handle.read(), digest_size=16).hexdigest()


def _content_digest(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, lambda: hashlib.blake2b(digest_size=32)).hexdigest()


def _digests_path(cache_dir) -> Path:
    return (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / DIGESTS_FILE


def _load_digests(cache_dir) -> dict[str, list]:
    with _digest_lock:
        if not _digests:
            try:
                stored = json.loads(_digests_path(cache_dir).read_text(encoding="utf-8"))
                if isinstance(stored, dict):
                    _digests.update({k: v for k, v in stored.items() if isinstance(v, list)})
            except (OSError, ValueError):
                pass  # no memo yet, or an unreadable one: every digest is computed again
        return _digests


def _save_digests(cache_dir, memo: dict[str, list]) -> None:
    """Write the memo whole through a temporary file (readers never see half of it)."""
    target = _digests_path(cache_dir)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with _digest_lock:
            text = json.dumps(memo)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.partial")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, target)
    except OSError:
        pass  # the memo is only a shortcut: without it digests are computed again next time


def default_cache_dir() -> Path:
    """Where aggregates are kept: ``$VALUE_DASHBOARD_AGGREGATE_CACHE``, else the user's cache folder."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "valuecore" / "aggregates"


def cached_aggregate(
    folder: str | os.PathLike,
    *,
    cache_dir: str | os.PathLike | None = None,
    progress: Callable[[float], None] | None = None,
    resolution: float | None = None,
    memory_limit: str = "1GB",
    roots: Sequence[str | os.PathLike] | None = None,
) -> Path:
    """The aggregate run file of a dataset, made once per fingerprint.

    Parameters
    ----------
    folder : path
        The dataset, already resolved inside the operator's roots by the caller.
    cache_dir : path, optional
        Default :func:`default_cache_dir`.
    progress : callable, optional
        Called with the fraction done (0..1) while aggregating.
    resolution, memory_limit
        As in ``valuecore.aggregate``; the resolution is part of the cache key.
    roots : sequence of paths, optional
        Where the dataset's files may lie once their links are resolved (the operator's roots);
        a part file linked from elsewhere is refused. Default: the dataset folder itself.

    Returns
    -------
    Path
        A Parquet run file; load it with ``valuecore.load_runs``. Its model is
        named after the folder (or its ``model`` column).

    Raises
    ------
    valuecore.aggregation.AggregateRefused
        With the problems (file, column, rows) to show, when the dataset fails
        a check or has too many distinct confidences.
    """
    from valuecore.aggregation import aggregate

    folder = Path(folder)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = dataset_fingerprint(folder, cache) + ("" if resolution is None else f"-r{resolution:g}")
    out = cache / f"{folder.name}-{key[:32]}.parquet"
    if out.is_file():
        return out
    cache.mkdir(parents=True, exist_ok=True)
    aggregate(str(folder), out, resolution=resolution, memory_limit=memory_limit, progress=progress,
              model=folder.name, roots=[folder] if roots is None else roots)  # fmt: skip
    return out
