"""Where commands read and write: an output never replaces an input, and a file stays inside its roots.

Every writer of the command line (``report --json/--html``, ``apply --json``,
``voc --csv``, ``aggregate --out``) goes through :func:`check_output` and
:func:`write_together` (:func:`write_atomically` for one file):

* the output is compared with every input by file identity (``os.path.samefile``:
  links, hard links and ``..`` included);
* it must be a regular file or a new path: a device (``/dev/null``), a FIFO, a
  socket, a folder, or a link to one of those (or to nothing) is refused, never
  replaced; a link to a regular file is written through (the link stays);
* it is written to a temporary file in the target's folder, given the target's
  mode (and owner, where allowed) or, for a new file, the umask's, and renamed
  into place only when complete;
* several outputs of one command are one unit: every temporary file is written
  first, then all are renamed. An interrupt (SIGINT, SIGTERM) while they are
  made leaves every old file as it was; one that arrives while they are renamed
  is held until every output is in place, then delivered. A rename that fails
  (rare: the folder's files were written a moment before) leaves the outputs
  renamed before it, which the ``written`` list names.

A caller that serves files to visitors (the dashboard) passes ``roots``: the
folders a file may lie in *after* its links are resolved (:func:`outside_roots`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

__all__ = ["OutputNotWritten", "OutputRefused", "check_output", "check_target", "outside_roots", "path_problem",
           "read_regular_file", "same_file", "shown", "write_atomically", "write_together"]

# Suffixes a later command would read from a folder as data (run files, logs).
DATA_SUFFIXES = (".csv", ".parquet", ".pq", ".parq", ".txt")
# Paths are shown cut to this many characters in messages (a 5,000-character path is no sentence).
SHOWN_PATH_CHARS = 120


class OutputRefused(ValueError):
    """An output path would replace or change one of the command's inputs, or is not a regular file."""


class OutputNotWritten(OSError):
    """Output number ``index`` of :func:`write_together` could not be written (``reason``, in words);
    the ``written`` list the caller passed names the outputs renamed into place before it."""

    def __init__(self, index: int, cause: OSError, path):
        super().__init__(cause.errno, cause.strerror or str(cause), os.fspath(path))
        self.index, self.reason = index, cause.strerror or str(cause)


def shown(path) -> str:
    """``path`` as text for a message, cut in the middle beyond :data:`SHOWN_PATH_CHARS` characters."""
    text = os.fspath(path) if isinstance(path, os.PathLike) else str(path)
    if len(text) <= SHOWN_PATH_CHARS:
        return text
    keep = SHOWN_PATH_CHARS // 2 - 1
    return f"{text[:keep]}…{text[-keep:]} ({len(text):,} characters)"


def path_problem(path) -> str | None:
    """Why ``path`` cannot name a file on this system (a name or the whole path too long), or None."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if "\x00" in text:
        visible = text.replace("\x00", "\\0")
        return f"the path {shown(visible)} holds a NUL character, which no file name can"
    try:
        longest_name = os.pathconf(_existing_folder(text), "PC_NAME_MAX")
        longest_path = os.pathconf(_existing_folder(text), "PC_PATH_MAX")
    except (OSError, ValueError):
        longest_name, longest_path = 255, 4096
    size = len(os.fsencode(text))
    if size >= longest_path:
        return f"the path {shown(text)} is too long ({size:,} bytes; this system takes at most {longest_path - 1:,})"
    names = [part for part in text.split(os.sep) if len(os.fsencode(part)) > longest_name]
    if names:
        return (f"the path {shown(text)} is too long: its name {shown(names[0])} has "
                f"{len(os.fsencode(names[0])):,} bytes, and this system takes at most {longest_name:,} per name")
    return None


def _existing_folder(text: str) -> str:
    folder = Path(text).parent if text else Path(".")
    for candidate in (folder, *folder.parents):
        try:
            if candidate.is_dir():
                return str(candidate)
        except OSError:
            continue
    return "."


def same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file (by any path, link or hard link), or would resolve to one."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): compare where they would resolve
        return a.resolve() == b.resolve()


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):
        return False


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def check_target(output: str | os.PathLike, what: str = "the output") -> Path:
    """The file to write for ``output``: itself, or the regular file a link names; :class:`OutputRefused`
    (one sentence) for anything else (a device, a FIFO, a socket, a folder, a link to those or to nothing)."""
    path = Path(output)
    problem = path_problem(path)
    if problem:
        raise OutputRefused(f"cannot write {what}: {problem}")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if path.is_symlink():
            raise OutputRefused(f"{what} {shown(output)} is a link that points to nothing "
                                f"({shown(os.readlink(path))}); give a file name") from None
        return path
    except OSError as exc:
        raise OutputRefused(f"cannot write {what} to {shown(output)}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = _kind(info.st_mode)
        through = " (through a link)" if path.is_symlink() else ""
        if stat.S_ISDIR(info.st_mode):
            raise OutputRefused(f"{shown(output)} is a folder{through}; give a file name for {what}")
        raise OutputRefused(f"{what} {shown(output)} is {kind}{through}, not a regular file; valuecore writes only "
                            "regular files (or new ones) and never replaces anything else: give a file name")
    return path.resolve() if path.is_symlink() else path


def check_output(output: str | os.PathLike, inputs: Iterable[str | os.PathLike], what: str = "the output") -> None:
    """Refuse (:class:`OutputRefused`, one plain sentence) an output that is not a regular file or a new path
    (:func:`check_target`), is one of ``inputs`` (the same file by any path or link), or is a data file
    inside an input folder (the next command reading that folder would take it for an input)."""
    check_target(output, what)
    out = Path(output)
    for given in inputs:
        source = Path(given)
        if source.is_dir():
            if out.suffix.lower() in DATA_SUFFIXES and _inside(out, source):
                raise OutputRefused(
                    f"{what} {shown(output)} lies inside the input folder {shown(given)}, where the next command "
                    "reading that folder would take it for an input; write it elsewhere"
                )
        elif same_file(out, source):
            raise OutputRefused(
                f"{what} {shown(output)} is the input {shown(given)}; writing it would destroy it, write it elsewhere"
            )


def write_atomically(path: str | os.PathLike, write: Callable[[Path], None], suffix: str = ".partial",
                     before_rename: Callable[[], None] | None = None) -> None:
    """Call ``write(temporary)`` on a new file in ``path``'s folder, then rename it to ``path``.

    The rename is atomic: readers see the old file or the complete new one. On any failure or
    interrupt the temporary file is removed and ``path`` is left as it was; ``before_rename()``,
    called last, can still refuse the rename by raising. :func:`write_together` with one output.
    """
    write_together([(path, write)], suffix=suffix, before_rename=before_rename)


def write_together(outputs: Sequence[tuple[str | os.PathLike, Callable[[Path], None]]], *, suffix: str = ".partial",
                   written: list | None = None, before_rename: Callable[[], None] | None = None) -> None:
    """Write several outputs as one unit: every ``write(temporary)`` first, then every rename.

    Each target is checked (:func:`check_target`) before anything is written and again just before
    its rename. An exception or interrupt while the temporary files are written removes them and
    leaves every target as it was. SIGINT and SIGTERM arriving while the files are renamed are held
    until the last rename, then delivered. ``written`` (a list) receives each output path as it is
    renamed into place. An OSError is raised as :class:`OutputNotWritten` naming the output at fault;
    ``written`` then names exactly the outputs written before it (none unless a rename failed).
    ``before_rename()``, called once every file is made and before the first rename, can still refuse
    them all by raising (an aggregation asked to stop).
    """
    targets = [check_target(path) for path, _ in outputs]
    temporaries: list[Path] = []
    index = 0
    try:
        for index, (target, (_, write)) in enumerate(zip(targets, outputs)):
            temporaries.append(_temporary(target, suffix))
            write(temporaries[-1])
            _take_mode(target, temporaries[-1])
        if before_rename is not None:
            before_rename()
        with _held_interrupts():
            for index, (target, temporary, (path, _)) in enumerate(zip(targets, temporaries, outputs)):
                check_target(target)  # it may have become something else while the outputs were made
                os.replace(temporary, target)
                if written is not None:
                    written.append(path)
    except OSError as exc:
        raise OutputNotWritten(index, exc, outputs[index][0]) from exc
    finally:
        for temporary in temporaries:  # those not renamed
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)


def _temporary(target: Path, suffix: str) -> Path:
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name[:100]}.", suffix=suffix, dir=target.parent)
    os.close(descriptor)
    return Path(temporary)


def _take_mode(target: Path, temporary: Path) -> None:
    """The target's permissions (and owner, where the process may set it); a new file's follow the umask."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 would hide the output from the user's group
        return
    mine = os.stat(temporary)
    if (mine.st_uid, mine.st_gid) != (info.st_uid, info.st_gid):
        with contextlib.suppress(OSError):  # only root may give a file away; others keep their own
            os.chown(temporary, info.st_uid, info.st_gid)
    os.chmod(temporary, stat.S_IMODE(info.st_mode))


@contextlib.contextmanager
def _held_interrupts():
    """SIGINT and SIGTERM held while the block runs, then delivered to the handlers in force before it.

    Only the main thread can set handlers; elsewhere (a server's worker thread) the block runs as is."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(signum)
        if handler is None or handler is signal.SIG_IGN:  # set outside Python, or ignored: left alone
            continue
        previous[signum] = handler
        signal.signal(signum, lambda number, frame: received.append(number))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(received):
            signal.raise_signal(signum)


def _umask() -> int:
    try:  # Linux states it without changing it (os.umask would, for a moment, for every thread)
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_regular_file(path: str | os.PathLike, max_bytes: int, what: str = "the file") -> bytes:
    """At most ``max_bytes + 1`` bytes of the regular file ``path`` (the caller refuses a longer one).

    Never blocks and never reads without end: a FIFO, a device (``/dev/zero``), a socket or a folder is
    refused (ValueError, one sentence) after an open that does not wait for a writer.
    FileNotFoundError when there is no such file; other OSErrors become ValueError in words.
    """
    problem = path_problem(path)
    if problem:
        raise ValueError(f"cannot read {what}: {problem}")
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO opened for writing only
            raise ValueError(f"{shown(path)} is not a regular file; give {what} as a file") from None
        raise ValueError(f"{shown(path)}: cannot read {what} ({exc.strerror or exc})") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):  # checked on what was opened, before any read (a folder opens, too)
        os.close(descriptor)
        raise ValueError(f"{shown(path)} is {_kind(mode)}, not a regular file; give {what} as a file")
    with os.fdopen(descriptor, "rb") as handle:
        try:
            return handle.read(max_bytes + 1)
        except OSError as exc:
            raise ValueError(f"{shown(path)}: cannot read {what} ({exc.strerror or exc})") from None


def outside_roots(path: str | os.PathLike, roots: Sequence[str | os.PathLike] | None) -> bool:
    """Whether ``path``, its links resolved, lies outside every one of ``roots`` (False when no roots)."""
    if roots is None:
        return False
    try:
        resolved = Path(path).resolve(strict=True)
    except (OSError, RuntimeError):
        return True
    return not any(resolved.is_relative_to(Path(root).resolve()) for root in roots)
