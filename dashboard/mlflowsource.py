"""Runs logged to MLflow as the dashboard's data source: the operator's tracking server, never the visitor's.

Off unless the operator names a tracking URI, with the environment variable
``VALUE_DASHBOARD_MLFLOW_URI`` or the app's flag ``streamlit run app.py --
--mlflow-uri URI``. The visitor then picks an experiment and a run from that
server's own lists; a link (``?src=mlflow:<run_id>``) is read only when the
run is on that server, and otherwise gets :data:`REFUSAL`, the same words
whether the run exists elsewhere or not. The process-wide ``MLFLOW_TRACKING_URI``
is neither read nor changed. Names from the server are shown as text.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

import streamlit as st

import valuecore as vc

from . import data, state
from .memory import budget_refusal, estimate_file_bytes

ENV_VAR = "VALUE_DASHBOARD_MLFLOW_URI"
CLI_FLAG = "--mlflow-uri"
PREFIX = "mlflow:"

REFUSAL = (
    "This MLflow run cannot be read. The dashboard reads only the runs of the tracking server its operator "
    "named; choose one of those, the sample runs, or upload the run files."
)
UNREACHABLE = "The MLflow tracking server cannot be reached or read. Tell the dashboard's operator."

__all__ = ["CLI_FLAG", "ENV_VAR", "PREFIX", "REFUSAL", "UNREACHABLE", "section", "tracking_uri"]


def tracking_uri(argv: list[str] | None = None) -> str | None:
    """The operator's tracking URI (environment variable, then ``--mlflow-uri``), or None: the source is off."""
    uri = os.environ.get(ENV_VAR, "").strip()
    argv = sys.argv[1:] if argv is None else argv
    for i, token in enumerate(argv):
        if token == CLI_FLAG and i + 1 < len(argv):
            uri = uri or argv[i + 1].strip()
        elif token.startswith(CLI_FLAG + "="):
            uri = uri or token[len(CLI_FLAG) + 1:].strip()
    return uri or None


@st.cache_data(ttl=60, show_spinner="Listing the MLflow runs…", max_entries=8)
def _runs(uri: str) -> list[tuple[str, str, str]]:
    return vc.serving.list_mlflow_runs(uri)


# A run is listed again (paths and sizes of its artifacts, no download) at most this often while it is
# viewed, and its tables downloaded again to compare their content digest at most this often: a table
# logged again (log_table appends) shows within CHECK_SECONDS, one replaced by another of the same size
# within VERIFY_SECONDS. Parsed again only when the digest changed.
CHECK_SECONDS = 10.0
VERIFY_SECONDS = 60.0
# A log_table JSON is parsed whole: about 7 times its size in memory while it is turned into a run file
# (measured: 67 MB for a 9.8 MB table of 200,000 rows).
JSON_PARSE_FACTOR = 7


@dataclass
class _Read:
    """A run as read: its load report, the listing and content digest it was read from, and when they were
    last checked (time.monotonic). Kept with the loaded runs, so weighed within the memory budget."""

    report: data.LoadReport
    listing: tuple
    digest: str
    checked: float
    verified: float


_locks: dict[tuple, threading.Lock] = {}
_locks_lock = threading.Lock()


def _lock(key: tuple) -> threading.Lock:
    with _locks_lock:
        return _locks.setdefault(key, threading.Lock())


def _load_run(uri: str, run_id: str) -> data.LoadReport:
    """A run's tables, read again when they change, kept with the loaded runs (the memory budget and time
    to live of uploads and folders). Files are named from the run (``mlflow:<run>/<artifact path>``),
    never by the server's temporary folder, which is removed as soon as the tables are read.
    """
    key = ("mlflow", uri, run_id)
    with _lock(key):  # one session reads a run at a time; the others then find it
        kept = data.kept_load(key)
        now = time.monotonic()
        if kept is not None and now - kept.checked < CHECK_SECONDS:
            return kept.report
        with st.spinner("Reading the MLflow run…"):
            read = _read(uri, run_id, kept, now)
        if read is not kept:
            data.keep_load(key, read)
        return read.report


def _read(uri: str, run_id: str, kept: _Read | None, now: float) -> _Read:
    name = f"{PREFIX}{run_id[:8]}"
    artifacts = vc.serving.mlflow_run_artifacts(PREFIX + run_id, tracking_uri=uri)
    if kept is not None and artifacts.listing == kept.listing and now - kept.verified < VERIFY_SECONDS:
        kept.checked = now
        return kept
    json_bytes = sum(size or 0 for path, size in artifacts.tables if path.lower().endswith(".json"))
    refusal = budget_refusal(json_bytes * JSON_PARSE_FACTOR, f"its log_table JSON ({json_bytes / 2**20:,.1f} MB)")
    if refusal is not None:  # weighed before anything is downloaded or parsed
        return _Read(_refusal_report(name, refusal), artifacts.listing, "", now, now)
    folder = tempfile.mkdtemp(prefix="valuecore-mlflow-")
    try:
        tables = vc.serving.download_mlflow_tables(artifacts, folder, name, tracking_uri=uri)
        if kept is not None and tables.digest == kept.digest:
            kept.listing, kept.checked, kept.verified = artifacts.listing, now, now
            return kept
        cost = sum(estimate_file_bytes(local)[0] for local, _ in tables.files)
        refusal = budget_refusal(cost, f"its tables ({len(tables.files)})")
        if refusal is not None:  # weighed from their sizes and headers, before they are parsed
            return _Read(_refusal_report(name, refusal), artifacts.listing, tables.digest, now, now)
        report = vc.serving.load_mlflow_tables(tables, names={tables.run_id: name})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return _Read(report, artifacts.listing, tables.digest, now, now)


def _refusal_report(name: str, refusal: str) -> data.LoadReport:
    return data.LoadReport(models={}, problems=(data.LoadProblem(name, refusal),))


def _refused(message: str):
    st.error(message, icon=":material/block:")
    return data.LoadReport(models={}, problems=(data.LoadProblem("MLflow run", message),)), "an MLflow run (refused)"


def section(source: str):
    """The sidebar's MLflow choice: experiment and run pickers; (load report, words for the source)."""
    if source.startswith(PREFIX):
        state.from_widget("source", source)  # the run the link names stays the setting, refused or not
    uri = tracking_uri()
    if uri is None:  # the caller offers this source only when configured; a stale link lands here
        return _refused(REFUSAL)
    try:
        runs = _runs(uri)
    except Exception:  # noqa: BLE001 (any failure of the server is the operator's to fix; its details are not shown)
        return _refused(UNREACHABLE)
    if not runs:
        st.info("The operator's MLflow tracking server has no runs yet.")
        return data.LoadReport(models={}, problems=()), "an MLflow run (none logged)"
    wanted = source[len(PREFIX):] if source.startswith(PREFIX) else ""
    by_id = {run_id: (experiment, name) for experiment, run_id, name in runs}
    if wanted and wanted not in by_id:
        return _refused(REFUSAL)
    experiments = list(dict.fromkeys(experiment for experiment, _, _ in runs))
    current = by_id.get(wanted, (experiments[0], ""))[0]
    experiment = st.selectbox("MLflow experiment", experiments, index=experiments.index(current),
                              key="sidebar_mlflow_experiment")
    choices = [run_id for name, run_id, _ in runs if name == experiment]
    run_id = st.selectbox(
        "MLflow run", choices, index=choices.index(wanted) if wanted in choices else 0, key="sidebar_mlflow_run",
        format_func=lambda r: f"{by_id[r][1] or 'unnamed'} ({r[:8]})",  # a selectbox shows its labels as text
    )
    state.from_widget("source", PREFIX + run_id)
    try:
        report = _load_run(uri, run_id)
    except ValueError as error:  # no table in the run, a table too large: said in words naming the run
        return _refused(f"The MLflow run {run_id[:8]} cannot be used: {error}")
    except Exception:  # noqa: BLE001
        return _refused(UNREACHABLE)
    return report, f"MLflow run {by_id[run_id][1] or run_id[:8]}"
