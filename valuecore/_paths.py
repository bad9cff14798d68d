"""Where commands read and write: an output never replaces an input, and a file stays inside its roots.

Every writer of the command line (``report --json/--html``, ``apply --json``,
``voc --csv``, ``aggregate --out``) goes through :func:`check_output` and
:func:`write_atomically`: the output is compared with every input by file
identity (``os.path.samefile``: links, hard links and ``..`` included), and
written to a temporary file in the same folder that is renamed into place only
when complete, so an interrupted command leaves the old file (or none).

A caller that serves files to visitors (the dashboard) passes ``roots``: the
folders a file may lie in *after* its links are resolved (:func:`outside_roots`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

__all__ = ["OutputRefused", "check_output", "outside_roots", "write_atomically"]

# Suffixes a later command would read from a folder as data (run files, logs).
DATA_SUFFIXES = (".csv", ".parquet", ".pq", ".parq", ".txt")


class OutputRefused(ValueError):
    """An output path would replace or change one of the command's inputs (or is a folder)."""


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): compare where they would resolve
        return a.resolve() == b.resolve()


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):
        return False


def check_output(output: str | os.PathLike, inputs: Iterable[str | os.PathLike], what: str = "the output") -> None:
    """Refuse (:class:`OutputRefused`, one plain sentence) an output that is a folder, is one of
    ``inputs`` (the same file by any path or link), or is a data file inside an input folder
    (the next command reading that folder would take it for an input)."""
    out = Path(output)
    if out.is_dir():
        raise OutputRefused(f"{output} is a folder; give a file name for {what}")
    for given in inputs:
        source = Path(given)
        if source.is_dir():
            if out.suffix.lower() in DATA_SUFFIXES and _inside(out, source):
                raise OutputRefused(
                    f"{what} {output} lies inside the input folder {given}, where the next command reading "
                    "that folder would take it for an input; write it elsewhere"
                )
        elif _same_file(out, source):
            raise OutputRefused(
                f"{what} {output} is the input {given}; writing it would destroy it, write it elsewhere"
            )


def write_atomically(path: str | os.PathLike, write: Callable[[Path], None], suffix: str = ".partial",
                     before_rename: Callable[[], None] | None = None) -> None:
    """Call ``write(temporary)`` on a new file in ``path``'s folder, then rename it to ``path``.

    The rename is atomic: readers see the old file or the complete new one. On any failure or
    interrupt the temporary file is removed and ``path`` is left as it was; ``before_rename()``,
    called last, can still refuse the rename by raising.
    """
    path = Path(path)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent or ".")
    os.close(descriptor)
    temporary = Path(temporary)
    try:
        write(temporary)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 would hide the output from the user's group
        if before_rename is not None:
            before_rename()
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


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


def outside_roots(path: str | os.PathLike, roots: Sequence[str | os.PathLike] | None) -> bool:
    """Whether ``path``, its links resolved, lies outside every one of ``roots`` (False when no roots)."""
    if roots is None:
        return False
    try:
        resolved = Path(path).resolve(strict=True)
    except (OSError, RuntimeError):
        return True
    return not any(resolved.is_relative_to(Path(root).resolve()) for root in roots)
