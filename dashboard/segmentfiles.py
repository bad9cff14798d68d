"""The segment columns of the loaded run files, read beside the runs.

The sidebar loads the runs without a segment column (a column missing from one file would then refuse
that file on every page). The Segments page reads the column it is asked for from the same files:
:func:`source_files` names them from the data source (a bundled sample, a server folder inside the
operator's roots with links that leave them refused, or the session's uploads; other sources carry no
segment column), :func:`candidate_columns` lists the columns they hold that the run format does not use,
and :func:`segment_labels` reads one of them with ``valuecore.runs.read_segment_column``, each split's
labels in the loader's row order, once per file content and column.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import streamlit as st

import valuecore as vc

from . import data, datasets, serverfiles
from .filehash import file_key

__all__ = ["candidate_columns", "files_key", "segment_labels", "source_files"]

# The run format's own columns (docs/run-format.md): never a segment column.
RUN_COLUMNS = frozenset({"y_true", "y_pred", "confidence", "split", "timestamp", "weight", "id", "model"})
RUN_PREFIXES = ("proba_", "logit_")


def source_files(source: str, uploads: dict[str, bytes]) -> tuple[tuple[str, object], ...]:
    """``(name, path or bytes)`` of each run file of the data source, in the loader's order; none for a
    source that cannot carry a segment column (MLflow, evaluation logs, a Parquet dataset) or is refused."""
    if source.startswith("sample:"):
        name = source.split(":", 1)[1]
        return _folder_files(data.SAMPLE_ROOT / name) if name in data.sample_sets() else ()
    if source.startswith("folder:"):
        folder = serverfiles.resolve_inside_roots(source[len("folder:"):])
        if folder is None or not folder.is_dir() or datasets.is_dataset(folder):
            return ()
        try:
            refused = set(serverfiles.links_leaving_roots(folder, serverfiles.allowed_roots(),
                                                          suffixes=data.RUN_SUFFIXES))
        except ValueError:  # too many entries: the sidebar says so
            return ()
        return tuple((name, path) for name, path in _folder_files(folder) if path not in refused)
    if source == "upload":
        return tuple(uploads.items())
    return ()


def _folder_files(folder: Path) -> tuple[tuple[str, Path], ...]:
    try:
        files = sorted(f for f in folder.iterdir() if f.suffix.lower() in data.RUN_SUFFIXES
                       and not f.name.startswith(".") and f.is_file())
    except OSError:
        return ()
    return tuple((f.name, f) for f in files)


def _key(source) -> str:
    return ("sha256:" + hashlib.sha256(source).hexdigest()) if isinstance(source, (bytes, bytearray)) \
        else file_key(Path(source))


def files_key(files) -> tuple:
    """The files' names and contents, for a cache key."""
    return tuple((name, _key(source)) for name, source in files)


def _is_parquet(name: str) -> bool:
    return Path(name).suffix.lower() in (".parquet", ".pq", ".parq")


@st.cache_resource(show_spinner=False, max_entries=512)
def _header(name: str, key: str, _source) -> tuple[str, ...]:
    """The column names of one run file (its first line, or its Parquet schema); none when unreadable."""
    try:
        if _is_parquet(name):
            import pyarrow.parquet as pq

            target = io.BytesIO(_source) if isinstance(_source, (bytes, bytearray)) else _source
            return tuple(str(c) for c in pq.read_schema(target).names)
        import pandas as pd

        target = io.BytesIO(_source) if isinstance(_source, (bytes, bytearray)) else _source
        return tuple(str(c).strip() for c in pd.read_csv(target, nrows=0).columns)
    except Exception:  # noqa: BLE001  (the loader reports a bad file in its own words on the Runs page)
        return ()


def candidate_columns(files) -> tuple[str, ...]:
    """The columns the run files hold besides the run format's own, in the order the files name them."""
    found: dict[str, None] = {}
    for name, source in files:
        for column in _header(name, _key(source), source):
            if column and column not in RUN_COLUMNS and not column.startswith(RUN_PREFIXES) \
                    and not column.startswith("Unnamed: "):
                found[column] = None
    return tuple(found)


@st.cache_resource(show_spinner=False, max_entries=512)
def _labels(name: str, key: str, column: str, _source):
    try:
        return vc.runs.read_segment_column(_source, column, name=name), None
    except ValueError as error:
        return {}, str(error.args[0])


def segment_labels(files, column: str) -> tuple[dict, tuple[str, ...]]:
    """``({model: {split: labels}}, problems)``: each model's and split's labels of ``column`` (text, the
    split's rows in the loader's order), and what could not be read (the core's words, naming file and
    column). A model of two files keeps the first's, as the loader does."""
    labels: dict = {}
    problems = []
    for name, source in files:
        found, problem = _labels(name, _key(source), column, source)
        if problem is not None:
            problems.append(problem)
        for model, splits in found.items():
            labels.setdefault(model, splits)
    return labels, tuple(problems)
