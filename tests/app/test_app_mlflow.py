"""The dashboard's MLflow data source: the operator's tracking server, with the safety rules of server folders."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dashboard import mlflowsource
from helpers.app import start

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
    assert "broken" in shown and f"mlflow:{run_id[:8]}/predictions/broken.json" in shown.replace("\\", "")
    assert "valuecore-mlflow" not in shown


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


# ------------------------------------------------------------------ issue 36: the folders' rules
def opened(at) -> dict:
    assert not at.exception, [e.value for e in at.exception]
    return at.session_state["selection"].report.models


def test_a_run_from_mlflow_is_weighed_in_the_memory_budget_and_expires(server, monkeypatch):
    """Item 3: a plain 16-entry cache held MLflow runs, unweighed and never expiring (213 MB against 50)."""
    from dashboard import data, limits, memory

    uri, run_id = server
    monkeypatch.setenv(mlflowsource.ENV_VAR, uri)
    data._LOADED.clear()
    assert "logreg" in opened(start("pages/runs.py", src=f"mlflow:{run_id}"))
    kept = [key for key in data._LOADED._entries if key[0] == "mlflow" and run_id in key]
    assert kept and data._LOADED.nbytes > 20_000  # weighed: the run's arrays (569 rows)
    import time

    monkeypatch.setenv(limits.TTL_ENV, "5")
    memory.expire(time.monotonic() + 6)
    assert not [key for key in data._LOADED._entries if key[0] == "mlflow"]


def test_a_run_from_mlflow_too_large_for_the_budget_is_refused_before_it_is_parsed(server, monkeypatch):
    from dashboard import data, limits

    uri, run_id = server
    monkeypatch.setenv(mlflowsource.ENV_VAR, uri)
    monkeypatch.setenv(limits.MEMORY_ENV, "0.05")  # 50 KiB: the table's JSON needs far more while parsed
    data._LOADED.clear()
    at = start("pages/runs.py", src=f"mlflow:{run_id}")
    assert not at.exception
    assert "budget" in "\n".join(e.value for e in at.error)
    assert all(not data._LOADED.peek(key).report.models for key in data._LOADED._entries if key[0] == "mlflow")


def test_a_run_whose_tables_change_is_read_again(server, monkeypatch, tmp_path):
    """Item 6: the run was cached on its id alone, so a table logged again (log_table appends) or replaced by
    one of the same size was never seen."""
    uri, run_id = server
    monkeypatch.setenv(mlflowsource.ENV_VAR, uri)
    monkeypatch.setattr(mlflowsource, "CHECK_SECONDS", 0, raising=False)
    monkeypatch.setattr(mlflowsource, "VERIFY_SECONDS", 0, raising=False)
    client = mlflow.tracking.MlflowClient(tracking_uri=uri)
    before = opened(start("pages/runs.py", src=f"mlflow:{run_id}"))["logreg"]
    frame = pd.read_csv(BREAST_CANCER, keep_default_na=False, dtype={"timestamp": str})
    client.log_table(run_id, frame.head(10).assign(split="extra"), "predictions/logreg.json")  # appended
    after = opened(start("pages/runs.py", src=f"mlflow:{run_id}"))["logreg"]
    assert "extra" in after.splits and "extra" not in before.splits
    # the same size, other content: the probability columns swapped
    other = tmp_path / "other" / "svm.csv"
    other.parent.mkdir()
    frame.to_csv(other, index=False)
    client.log_artifact(run_id, str(other), "tables")
    first = opened(start("pages/runs.py", src=f"mlflow:{run_id}"))["svm"]
    probability = [c for c in frame.columns if c.startswith("proba_")]
    frame[probability] = frame[probability[::-1]].to_numpy()
    size = other.stat().st_size
    frame.to_csv(other, index=False)
    assert other.stat().st_size == size
    client.log_artifact(run_id, str(other), "tables")
    second = opened(start("pages/runs.py", src=f"mlflow:{run_id}"))["svm"]
    assert second.sha256 != first.sha256


def test_two_tables_of_one_name_in_a_run_are_refused_as_in_a_folder(server, monkeypatch):
    """Item 2, in the dashboard."""
    uri, run_id = server
    monkeypatch.setenv(mlflowsource.ENV_VAR, uri)
    client = mlflow.tracking.MlflowClient(tracking_uri=uri)
    client.log_artifact(run_id, str(BREAST_CANCER), "b")
    at = start("pages/runs.py", src=f"mlflow:{run_id}")
    assert "logreg" in opened(at)
    shown = "\n".join([e.value for e in at.error] + [w.value for w in at.warning] + [m.value for m in at.markdown])
    shown += "\n".join(str(frame.value.to_dict()) for frame in at.dataframe)
    shown = shown.replace("\\", "")
    assert f"model name 'logreg' is already taken by mlflow:{run_id[:8]}/b/logreg.csv" in shown
    assert f"mlflow:{run_id[:8]}/predictions/logreg.json" in shown


def test_a_run_read_by_the_dashboard_leaves_no_copy_on_disk(server, monkeypatch, tmp_path):
    """Low item: a server kept a temporary copy of every run read until it stopped."""
    import tempfile

    uri, run_id = server
    monkeypatch.setenv(mlflowsource.ENV_VAR, uri)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    from dashboard import data

    data._LOADED.clear()
    assert "logreg" in opened(start("pages/runs.py", src=f"mlflow:{run_id}"))
    assert list(scratch.iterdir()) == []
