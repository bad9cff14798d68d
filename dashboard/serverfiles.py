"""Which folders of the server the dashboard may read: the operator's choice, never the visitor's.

Reading server folders is off unless the operator names allowed roots, with the
environment variable ``VALUE_DASHBOARD_DATA_ROOTS`` (an ``os.pathsep``-separated
list) or the app's own flag ``streamlit run app.py -- --data-root PATH`` (may be
repeated). A path typed in the sidebar or given in a link (``?src=folder:...``)
is resolved, symbolic links and ``..`` included, and read only when it lies
inside one of these roots. Otherwise the visitor gets :data:`REFUSAL`, the same
words whether the path exists or not, so a link cannot probe the server.

Sample runs and uploads do not go through here: they always work.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ENV_VAR = "VALUE_DASHBOARD_DATA_ROOTS"
CLI_FLAG = "--data-root"

REFUSAL = (
    "This folder cannot be read. The dashboard reads only the server folders its operator allowed; "
    "choose one of those, the sample runs, or upload the run files."
)
DISABLED = (
    "Reading folders on the server is switched off. The operator can allow folders with the environment "
    f"variable {ENV_VAR} or with `streamlit run app.py -- {CLI_FLAG} PATH`; until then, upload the run files."
)

LINK_REFUSAL = (
    "is a link to a place outside the folders the operator allowed; it was not read "
    "(copy the file into the folder instead)"
)
MAX_WALKED = 100_000  # entries looked at for links in a Parquet dataset (a larger one is refused in words)

__all__ = ["ENV_VAR", "CLI_FLAG", "REFUSAL", "DISABLED", "LINK_REFUSAL", "allowed_roots", "inside_roots",
           "links_leaving_roots", "resolve_inside_roots", "roots_from_argv", "shown_path"]


def roots_from_argv(argv: list[str] | None = None) -> tuple[str, ...]:
    """The ``--data-root PATH`` / ``--data-root=PATH`` values among the app's arguments.

    Streamlit passes what follows ``--`` in ``streamlit run app.py -- ...`` to the
    script as ``sys.argv[1:]``; other arguments are ignored.
    """
    argv = sys.argv[1:] if argv is None else argv
    roots = []
    for i, token in enumerate(argv):
        if token == CLI_FLAG and i + 1 < len(argv):
            roots.append(argv[i + 1])
        elif token.startswith(CLI_FLAG + "="):
            roots.append(token[len(CLI_FLAG) + 1 :])
    return tuple(roots)


def _resolve(path: Path) -> Path | None:
    try:
        return path.resolve(strict=False)
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL byte, an unreadable parent
        return None


def allowed_roots() -> tuple[Path, ...]:
    """The resolved folders the operator allowed (environment variable, then ``--data-root``).

    Empty when none is configured: then no server folder can be read. Entries that are
    empty, relative or not existing folders are ignored (a typo must not open the
    current directory).
    """
    given = [p for p in os.environ.get(ENV_VAR, "").split(os.pathsep)] + list(roots_from_argv())
    roots: list[Path] = []
    for text in given:
        text = text.strip()
        if not text or "\x00" in text:
            continue
        path = Path(text).expanduser()
        if not path.is_absolute():
            continue
        resolved = _resolve(path)
        if resolved is not None and resolved.is_dir() and resolved not in roots:
            roots.append(resolved)
    return tuple(roots)


def resolve_inside_roots(text: str) -> Path | None:
    """The real path of ``text`` when it lies inside an allowed root, else None (refuse).

    Symbolic links and ``..`` are resolved before the check, so a link inside a root that
    points outside it is refused. A relative path is taken inside the first root. The
    answer does not depend on whether the path exists outside the roots.

    Examples
    --------
    >>> import os, tempfile
    >>> root = tempfile.mkdtemp()
    >>> os.environ[ENV_VAR] = root
    >>> resolve_inside_roots(os.path.join(root, "runs")) == Path(root).resolve() / "runs"
    True
    >>> resolve_inside_roots(os.path.join(root, "..")) is None
    True
    >>> resolve_inside_roots("/etc") is None
    True
    >>> del os.environ[ENV_VAR]
    """
    if not isinstance(text, str):
        return None
    text = text.strip()
    roots = allowed_roots()
    if not text or not roots or "\x00" in text:
        return None
    path = Path(text)
    if text.startswith("~"):
        return None  # the server user's home is not the visitor's to name
    if not path.is_absolute():
        path = roots[0] / path
    resolved = _resolve(path)
    if resolved is None:
        return None
    for root in roots:
        if resolved == root or root in resolved.parents:
            return resolved
    return None


def inside_roots(path: Path, roots: tuple[Path, ...] | None = None) -> bool:
    """Whether the real path of ``path`` (links and ``..`` resolved) lies inside one of ``roots``.

    ``roots`` defaults to :func:`allowed_roots`. A path that cannot be resolved is not inside.
    """
    roots = allowed_roots() if roots is None else roots
    resolved = _resolve(Path(path))
    return resolved is not None and any(resolved == root or root in resolved.parents for root in roots)


def links_leaving_roots(folder: Path, roots: tuple[Path, ...] | None = None, *, recursive: bool = False,
                        suffixes: tuple[str, ...] | None = None) -> list[Path]:
    """The entries of ``folder`` that are links whose real path lies outside ``roots``, in name order.

    A folder is checked once, when it is opened; the files in it are read later by name, so a link to a
    file outside (``ROOT/runs/leak.csv -> /elsewhere/creds.csv``) would be followed. ``recursive`` walks
    sub-folders too (a Parquet dataset's part files), without following linked folders (a linked folder
    that leaves the roots is itself reported). ``suffixes`` limits the files looked at (e.g. run files).
    Raises ValueError when the folder holds more than :data:`MAX_WALKED` entries.
    """
    roots = allowed_roots() if roots is None else roots
    leaving: list[Path] = []
    walked = 0
    pending = [Path(folder)]
    while pending:
        current = pending.pop()
        try:
            entries = sorted(current.iterdir())
        except OSError:
            continue  # the loader reports an unreadable folder in its own words
        for entry in entries:
            walked += 1
            if walked > MAX_WALKED:
                raise ValueError(f"the folder holds more than {MAX_WALKED:,} entries")
            if entry.is_symlink():
                if (suffixes is None or entry.suffix.lower() in suffixes or entry.is_dir()) \
                        and not inside_roots(entry, roots):
                    leaving.append(entry)
            elif recursive and entry.is_dir():
                pending.append(entry)
    return sorted(leaving)


def shown_path(path, roots: tuple[Path, ...] | None = None, named: dict[Path, str] | None = None) -> str:
    """A server path as a visitor may see it: relative to the allowed root holding it, under that root's
    own name (``/srv/runs/2024/a.csv`` -> ``runs/2024/a.csv``); ``named`` adds folders shown under a name
    of their own (the sample runs). Any other path shows its last part only.

    >>> shown_path("/srv/runs/2024/a.csv", roots=(Path("/srv/runs"),))
    'runs/2024/a.csv'
    >>> shown_path("/etc/passwd", roots=(Path("/srv/runs"),))
    'passwd'
    """
    roots = allowed_roots() if roots is None else roots
    text = str(path)
    candidate = Path(text)
    places = dict(named or {})
    places.update({root: root.name or str(root) for root in roots})
    for place, name in sorted(places.items(), key=lambda item: -len(str(item[0]))):  # the deepest place first
        try:
            relative = candidate.relative_to(place)
        except ValueError:
            continue
        return name if str(relative) == "." else f"{name}/{relative.as_posix()}"
    return candidate.name or text
