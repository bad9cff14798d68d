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
import sys
from dataclasses import replace
from pathlib import Path

import streamlit as st

import valuecore as vc

from . import data, state

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


@st.cache_resource(show_spinner="Reading the MLflow run…", max_entries=16)
def _load_run(uri: str, run_id: str) -> data.LoadReport:
    """A run's tables, read once: logged artifacts do not change (what --log-mlflow adds back is skipped).

    Files are named from the run (``mlflow:<run>/logreg.csv``), never by the server's temporary folder.
    """
    folder = vc.serving.mlflow_runs_folder(PREFIX + run_id, tracking_uri=uri)
    report = data.load_folder(folder)

    def shown(file: str) -> str:  # every file is the run's (load_folder already hides the server's folder)
        return f"{PREFIX}{run_id[:8]}/{Path(file).name}"

    models = {m: replace(run, path=shown(run.path)) for m, run in report.models.items()}
    return data.LoadReport(models=models, problems=tuple(replace(p, file=shown(p.file)) for p in report.problems))


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
