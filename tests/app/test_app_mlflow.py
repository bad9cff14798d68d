"""The dashboard's MLflow data source: the operator's tracking server, with the safety rules of server folders."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dashboard import mlflowsource
from test_app_core import start

from optional import need  # noqa: E402

need("mlflow")  # requirements-mlflow.txt: skipped without it, required in CI
import mlflow  # noqa: E402

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

ROOT = Path(__file__).resolve().parents[2]
BREAST_CANCER = ROOT / "sample_runs" / "breast_cancer" / "logreg.csv"


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A local MLflow file store with one run of logged predictions; the operator's URI is not set yet."""
    uri = (tmp_path / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.delenv(mlflowsource.ENV_VAR, raising=False)
    client = mlflow.tracking.MlflowClient(tracking_uri=uri)
    experiment = client.create_experiment("cancer")
    run = client.create_run(experiment, run_name="nightly")
    frame = pd.read_csv(BREAST_CANCER, keep_default_na=False, dtype={"timestamp": str})
    client.log_table(run.info.run_id, frame, "predictions/logreg.json")
    return uri, run.info.run_id


def test_an_mlflow_run_opens_in_the_dashboard(server, monkeypatch):
    uri, run_id = server
    monkeypatch.setenv(mlflowsource.ENV_VAR, uri)
    at = start("pages/value.py", src=f"mlflow:{run_id}")
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="sidebar_source").value == "mlflow"
    assert at.selectbox(key="sidebar_mlflow_experiment").value == "cancer"
    assert at.selectbox(key="sidebar_mlflow_run").value == run_id
    frame = at.dataframe[0].value
    assert "logreg" in set(frame["Model"])


def test_a_bad_table_in_a_run_is_named_from_the_run_never_by_a_server_path(server, monkeypatch):
    uri, run_id = server
    client = mlflow.tracking.MlflowClient(tracking_uri=uri)
    client.log_table(run_id, pd.DataFrame({"y_true": ["a", "b"], "proba_a": [0.9, 1.7], "proba_b": [0.1, 0.2]}),
                     "predictions/broken.json")
    monkeypatch.setenv(mlflowsource.ENV_VAR, uri)
    at = start("pages/runs.py", src=f"mlflow:{run_id}")
    assert not at.exception
    shown = "\n".join([e.value for e in at.error] + [w.value for w in at.warning] + [m.value for m in at.markdown])
    shown += "\n".join(str(frame.value.to_dict()) for frame in at.dataframe)
    assert "broken" in shown and f"mlflow:{run_id[:8]}/broken.csv" in shown.replace("\\", "")
    assert "valuecore-mlflow-run" not in shown


def test_without_the_operators_uri_mlflow_is_not_offered_and_a_link_reads_nothing(server, monkeypatch):
    _, run_id = server
    monkeypatch.setenv("MLFLOW_TRACKING_URI", server[0])  # the process-wide setting is not the operator's
    at = start("pages/value.py", src=f"mlflow:{run_id}")
    assert not at.exception
    assert not any("MLflow" in option for option in at.selectbox(key="sidebar_source").options)
    assert at.selectbox(key="sidebar_source").value.startswith("sample:")


def test_a_run_that_is_not_on_the_operators_server_is_refused_in_the_same_words(server, monkeypatch):
    uri, _ = server
    monkeypatch.setenv(mlflowsource.ENV_VAR, uri)
    at = start("pages/value.py", src="mlflow:0123456789abcdef0123456789abcdef")
    assert not at.exception
    assert mlflowsource.REFUSAL in "\n".join(e.value for e in at.error)
