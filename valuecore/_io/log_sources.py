"""Telling an evaluation-log source (``lmeval:PATH``, ``inspect[OPTIONS]:PATH``) from a path, and what it reads.

Apart from the log readers (:mod:`.lm_logs`, which re-exports these) so that a command checking its inputs, an
``aggregate`` of Parquet files say, does not import numpy and the readers for it (0.1 s of a fresh process).
"""

from __future__ import annotations

import re
from pathlib import Path

from .limits import clip_text

_SOURCE = re.compile(r"^(?P<kind>lmeval|inspect)(?:\[(?P<options>[^\]]*)\])?:(?P<path>.+)$", re.S)


def is_log_source(text) -> bool:
    """Whether ``text`` names an evaluation log (``lmeval:PATH``, ``inspect:PATH``, with options)."""
    return isinstance(text, str) and _SOURCE.match(text) is not None


def log_source_inputs(text: str) -> list[str]:
    """The files and folder a log source reads (options aside): the path, and a folder's log files."""
    found = _SOURCE.match(text)
    path = Path(found["path"] if found else text)
    if not path.is_dir():
        return [str(path)]
    return [str(path), *(str(p) for p in sorted(path.iterdir()) if p.suffix in (".jsonl", ".eval", ".json"))]


def split_log_source(text: str) -> tuple[str, str]:
    """(what comes before the path, the path) of a log source, so a caller can read the same source at
    another path (e.g. the path resolved inside a server's allowed folders); ValueError when it is none.

    >>> split_log_source("lmeval[idk=I don't know]:runs/alpha")
    ("lmeval[idk=I don't know]:", 'runs/alpha')
    """
    found = _SOURCE.match(text) if isinstance(text, str) else None
    if found is None:
        raise ValueError(f"{clip_text(str(text))}: not an evaluation-log source (lmeval:PATH or inspect:PATH)")
    return text[: found.start("path")], found["path"]
