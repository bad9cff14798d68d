"""Content hashes of files on disk, computed once per change of the file.

The cache of loaded runs is keyed by what a file holds, not by its name, size and
modification time: a file rewritten at the same size with its old mtime must not
serve old numbers. Hashing every file on every rerun would cost a read of all of
them, so a hash is kept while the file's (device, inode, size, mtime, ctime) stay
the same; ctime cannot be set back by a user, so any rewrite is noticed.
"""

from __future__ import annotations

import hashlib
import stat
import threading
from collections import OrderedDict
from pathlib import Path

MAX_REMEMBERED = 4096
_CHUNK = 1 << 20

_known: OrderedDict[tuple, str] = OrderedDict()
_lock = threading.Lock()

__all__ = ["file_key"]


def _stat_key(path: Path, info) -> tuple:
    return (str(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def file_key(path: Path) -> str:
    """``"sha256:<hex>"`` of a regular file's bytes, or a short reason it cannot be read.

    Never raises and never opens anything but a regular file (opening a FIFO would block).
    """
    try:
        info = path.stat()
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    except RuntimeError:
        return "unreadable:loop"
    if not stat.S_ISREG(info.st_mode):
        return "not-a-file"
    key = _stat_key(path, info)
    with _lock:
        known = _known.get(key)
        if known is not None:
            _known.move_to_end(key)
            return known
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    value = "sha256:" + digest.hexdigest()
    with _lock:
        _known[key] = value
        while len(_known) > MAX_REMEMBERED:
            _known.popitem(last=False)
    return value
