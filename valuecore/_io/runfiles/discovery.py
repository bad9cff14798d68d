"""Which files a load reads: paths, folders and globs expanded, links kept inside their roots."""

from __future__ import annotations

import os
from pathlib import Path


from ..format import LoadProblem, OUTSIDE_ROOTS, RUN_FILE_SUFFIXES, max_file_bytes, too_large_message


def _expand_paths(paths, problems: list[LoadProblem], roots=None) -> list[tuple[str, Path]]:
    found = _expand_given(paths, problems)
    if roots is None:
        return found
    from ..paths import outside_roots

    inside = []
    for display, path in found:
        if outside_roots(path, roots):
            problems.append(LoadProblem(display, OUTSIDE_ROOTS))
        else:
            inside.append((display, path))
    return inside


def _expand_given(paths, problems: list[LoadProblem]) -> list[tuple[str, Path]]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: list[tuple[str, Path]] = []
    for given in paths:
        if not str(given).strip():
            problems.append(LoadProblem(repr(str(given)), "an empty path names no file or folder; give a path"))
            continue
        path = Path(given)
        if path.is_dir():
            # Hidden files are skipped: macOS "._name.csv" resource forks are not runs.
            try:
                candidates = sorted(
                    p for p in path.iterdir() if p.suffix.lower() in RUN_FILE_SUFFIXES and not p.name.startswith(".")
                )
            except OSError as exc:
                problems.append(LoadProblem(str(given), f"folder cannot be listed: {exc.strerror or exc}"))
                continue
            files = []
            for p in candidates:
                reason = _not_a_readable_file(p)
                if reason is None:
                    files.append(p)
                else:
                    problems.append(LoadProblem(str(p), reason))
            if not candidates:
                problems.append(LoadProblem(str(given), "folder holds no .csv or .parquet run files"))
            found.extend((str(p), p) for p in files)
        elif path.exists() or path.is_symlink():
            reason = _not_a_readable_file(path)
            if reason is None:
                found.append((str(given), path))
            else:
                problems.append(LoadProblem(str(given), reason))
        else:
            problems.append(LoadProblem(str(given), "no such file or folder"))
    return found


def _not_a_readable_file(path: Path) -> str | None:
    """Why ``path`` cannot be read as a run file (a broken link, a FIFO...), or None.

    Checked before opening: opening a FIFO would wait for a writer forever.
    """
    import errno
    import stat

    try:
        info = path.stat()
    except RuntimeError:
        return "is a symbolic link that loops; skipped"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link that loops; skipped"
        if exc.errno == errno.ENOENT and path.is_symlink():
            return "is a symbolic link to nothing (its target is missing); skipped"
        return f"cannot be read: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return "is a folder, not a run file; skipped (folders are not read recursively)"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file (a pipe, socket or device); skipped"
    if info.st_size > max_file_bytes():
        return too_large_message(info.st_size)
    return None
