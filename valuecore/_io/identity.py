"""A run file's identity, the SHA-256 of its bytes, computed when it is first asked for.

A policy records the file it was tuned on by this digest, and a restored policy
is checked against it. Hashing costs about as much CPU as decoding a Parquet
file (SHA-256 runs at 1.5-2 GB/s), and most loads never need the digest, so a
Parquet file read from disk, or a CSV file pandas reads from disk a chunk at a
time (``runfiles.reading.STREAMED_CSV_BYTES``), is not hashed while it loads. The loader records
the file's (device, inode, size, mtime, ctime) before and after reading it; the
first time the digest is asked for, the file is opened, the same tuple is read
from the open handle before and after hashing, and the digest is given only
when all of them are equal. Any write changes ctime, which no user can set
back, and a file put in its place has another inode, so an equal tuple means
the bytes hashed are the bytes loaded; otherwise :class:`RunFileChanged` says
so, and no digest of other bytes is ever handed out. (Times are as fine as the
file system's clock, a few milliseconds: a rewrite of the same size within the
tick of the write before the load would not be seen, as in
``dashboard/filehash.py``.)
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections import OrderedDict
from pathlib import Path

__all__ = ["BytesDigest", "DeferredDigest", "RunFileChanged", "file_sha256", "stat_key"]

_CHUNK = 1 << 20
# Digests already computed, by (path, stat key): two models of one file, or a file loaded
# again unchanged, are hashed once.
_known: OrderedDict[tuple, str] = OrderedDict()
_MAX_REMEMBERED = 4096
_lock = threading.Lock()


class RunFileChanged(ValueError):
    """The file of a loaded run changed, or went away, after it was read: its SHA-256 is unknown."""


def stat_key(info: os.stat_result) -> tuple:
    """What changes whenever a file's content does: (device, inode, size, mtime, ctime)."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class DeferredDigest:
    """The hex SHA-256 of the file ``path`` as it was when loaded (its ``key``), computed on the first call.

    ``display`` is the file as the user named it; its name goes in the message when the digest is refused.
    """

    __slots__ = ("path", "display", "key", "_hex")

    def __init__(self, path: Path, display: str, key: tuple):
        self.path = path
        self.display = display
        self.key = key
        self._hex: str | None = None

    def hexdigest(self) -> str:
        if self._hex is None:
            self._hex = _digest_of(self.path, self.display, self.key)
        return self._hex

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state) -> None:
        for name, value in state.items():
            setattr(self, name, value)


class BytesDigest:
    """The hex SHA-256 of a file's bytes held in memory (a small file read whole, an upload), computed on the
    first call; the bytes are let go once it is. (Hashing 70 kB cost a fresh process 75 us, a tenth of loading
    its 10^3 rows, for a digest that most loads never ask for.) Pickled as its digest."""

    __slots__ = ("_data", "_hex")

    def __init__(self, data: bytes):
        self._data: bytes | None = data
        self._hex: str | None = None

    def hexdigest(self) -> str:
        value = self._hex
        if value is None:
            data = self._data
            if data is None:  # another thread hashed them meanwhile: it sets the digest before letting go
                return self._hex
            value = self._hex = hashlib.sha256(data).hexdigest()
            self._data = None
        return value

    def __getstate__(self):
        return {"_data": None, "_hex": self.hexdigest()}

    def __setstate__(self, state) -> None:
        for name, value in state.items():
            setattr(self, name, value)


def file_sha256(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a regular file's bytes, remembered per (path, device, inode, size, mtime, ctime).

    The loader's deferred digests share what is remembered: a file hashed here (e.g. to key a cache)
    and then loaded, or the other way round, is read once for both.

    Raises
    ------
    OSError
        The file cannot be read.
    ValueError
        It is not a regular file, or it changed while it was hashed.
    """
    path = Path(path)
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path}: not a regular file")
    return _digest_of(path, str(path), stat_key(info))


def _digest_of(path: Path, display: str, key: tuple) -> str:
    remembered = (str(path), key)
    with _lock:
        known = _known.get(remembered)
        if known is not None:
            _known.move_to_end(remembered)
            return known
    # The file's name, not its path: a server's folders stay unshown wherever this message ends up.
    refused = RunFileChanged(
        f"{Path(display).name}: the file changed or went away after it was loaded, so the SHA-256 of the bytes "
        "loaded is unknown (it names the run in a policy); load the file again"
    )
    try:
        # Non-blocking: were a FIFO put in its place, opening it must not wait for a writer.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with open(descriptor, "rb", buffering=0) as handle:
            if stat_key(os.fstat(descriptor)) != key:
                raise refused
            digest = hashlib.sha256()
            buffer = bytearray(_CHUNK)
            view = memoryview(buffer)
            while read := handle.readinto(buffer):
                digest.update(view[:read])
            if stat_key(os.fstat(descriptor)) != key:
                raise refused
    except OSError as error:
        raise refused from error
    value = digest.hexdigest()
    with _lock:
        _known[remembered] = value
        while len(_known) > _MAX_REMEMBERED:
            _known.popitem(last=False)
    return value
