"""Content hashes of files on disk, computed once per change of the file.

The cache of loaded runs is keyed by what a file holds, not by its name, size and
modification time: a file rewritten at the same size with its old mtime must not
serve old numbers. Hashing every file on every rerun would cost a read of all of
them, so a hash is kept while the file's (device, inode, size, mtime, ctime) stay
the same; ctime cannot be set back by a user, so any rewrite is noticed. The hashes
are kept by ``valuecore.runs.file_sha256``, which the loader's run identities share:
a file hashed here and then loaded is read once for both.
"""

from __future__ import annotations

import stat
from pathlib import Path

from valuecore.runs import file_sha256

__all__ = ["file_key"]


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
    try:
        return "sha256:" + file_sha256(path)
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    except (ValueError, RuntimeError):  # replaced by something else, or changed, while it was hashed
        return "unreadable:changed"
