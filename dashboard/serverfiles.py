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

__all__ = ["ENV_VAR", "CLI_FLAG", "REFUSAL", "DISABLED", "allowed_roots", "resolve_inside_roots", "roots_from_argv"]


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
