"""MLflow both ways: a pyfunc model that carries the policy, and MLflow runs as a run source of the CLI.

MLflow's local file store in a temporary folder; nothing remote, no server.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import valuecore as vc
from valuecore.cli import main
from valuecore.policy_json import PolicyDocument
from valuecore.serving import RejectOptionClassifier, save_mlflow_model

from optional import need  # noqa: E402

need("mlflow")  # requirements-mlflow.txt: skipped without it, required in CI
import mlflow  # noqa: E402

from test_serving_sklearn import breast_cancer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BREAST_CANCER = ROOT / "sample_runs" / "breast_cancer" / "logreg.csv"


@pytest.fixture
def tracking(tmp_path, monkeypatch):
    """A local MLflow file store for this test only."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())  # what the CLI reads
    return tmp_path


def test_breast_cancer_policy_survives_mlflow_with_the_same_actions_and_abstentions(tmp_path):
    model, (X_val, y_val), (X_test, y_test) = breast_cancer()
    use_case = vc.UseCase(10, -1, -50)
    # the exported JSON: tuned on val, evaluated on test, by the pipeline of `report --json`
    classes = [str(c) for c in model.classes_]
    splits = {name: vc.Predictions.from_proba(model.predict_proba(X), y_true=y, classes=classes)
              for name, X, y in (("val", X_val, y_val), ("test", X_test, y_test))}
    run = vc.runs.ModelRun("logreg", "logreg.csv", None, tuple(classes), splits)
    exported, _ = vc.policy_json.build_policy_document({"logreg": run}, use_case, calibration_method="temperature")
    evaluation = exported.entry("logreg").evaluation
    # tuned with valuecore through the estimator, wrapped, saved, loaded
    clf = RejectOptionClassifier(model, abstain_label="abstain").fit(X_val, y_val, use_case=use_case,
                                                                     calibration="temperature")
    save_mlflow_model(tmp_path / "model", clf, None)
    loaded = mlflow.pyfunc.load_model(str(tmp_path / "model"))
    frame = pd.DataFrame(X_test, columns=[f"f{k}" for k in range(X_test.shape[1])])
    out = loaded.predict(frame)
    assert list(out.columns) == ["action", "confidence", "predicted_class"]
    assert out["action"].tolist() == clf.predict(X_test).tolist()
    abstained = (out["action"] == "abstain").to_numpy()
    assert abstained.sum() == evaluation["n_abstain"] > 0
    acted = ~abstained
    assert np.sum(out["action"].to_numpy()[acted] == y_test[acted]) == evaluation["n_correct"]
    assert np.sum(out["action"].to_numpy()[acted] != y_test[acted]) == evaluation["n_wrong"]
    np.testing.assert_array_equal(out["predicted_class"], model.predict(X_test))  # temperature keeps the class
    assert ((out["confidence"] >= 0.5) & (out["confidence"] <= 1)).all()
    # the policy travels with the model, readable by any server
    stored = Path(tmp_path / "model" / "artifacts" / "policy.json")
    assert PolicyDocument.from_json(stored.read_text()).entries[0].policy == clf.document_.entries[0].policy


def log_sample_run(name="nightly"):
    mlflow.set_experiment("cancer")
    with mlflow.start_run(run_name=name) as run:
        mlflow.log_table(pd.read_csv(BREAST_CANCER, keep_default_na=False, dtype={"timestamp": str}),
                         "predictions/logreg.json")
        mlflow.log_param("model", "logreg")
    return run.info.run_id


def test_a_run_logged_to_mlflow_opens_in_the_cli_like_its_file(tracking, capsys):
    run_id = log_sample_run()
    common = ["--v-correct", "10", "--v-abstain", "-1", "--v-wrong", "-50", "--no-interval"]
    assert main(["report", str(BREAST_CANCER), *common, "--json", str(tracking / "local.json")]) == 0
    assert main(["report", f"mlflow:{run_id}", *common, "--json", str(tracking / "mlflow.json")]) == 0
    assert main(["report", "mlflow:cancer/nightly", *common, "--json", str(tracking / "by_name.json")]) == 0
    local, *remote = (json.loads((tracking / f"{n}.json").read_text()) for n in ("local", "mlflow", "by_name"))
    for document in remote:
        assert [m["model"] for m in document["models"]] == ["logreg"]
        for key in ("policy", "evaluation", "classes", "tuned_on"):
            assert document["models"][0][key] == local["models"][0][key]
    capsys.readouterr()
    assert main(["report", "mlflow:cancer/weekly", *common]) == 2
    assert "no run named 'weekly' in experiment 'cancer'" in capsys.readouterr().err
    assert main(["report", "mlflow:0123456789abcdef", *common]) == 2
    assert "no MLflow run with id '0123456789abcdef'" in capsys.readouterr().err


def test_report_log_mlflow_writes_the_policy_and_the_report_back_to_the_run(tracking, capsys):
    run_id = log_sample_run()
    common = ["--v-correct", "10", "--v-abstain", "-1", "--v-wrong", "-50", "--no-interval"]
    assert main(["report", f"mlflow:{run_id}", *common, "--json", str(tracking / "p.json"), "--log-mlflow"]) == 0
    assert f"to the MLflow run {run_id}" in capsys.readouterr().out
    client = mlflow.tracking.MlflowClient()
    logged = {a.path for a in client.list_artifacts(run_id, "valuecore")}
    assert logged == {"valuecore/policy.json", "valuecore/report.html"}
    policy = mlflow.artifacts.load_text(f"runs:/{run_id}/valuecore/policy.json")
    assert json.loads(policy) == json.loads((tracking / "p.json").read_text())
    assert mlflow.artifacts.load_text(f"runs:/{run_id}/valuecore/report.html").lstrip().lower().startswith("<!doctype")
    # what was logged back is not read as a run file next time
    assert main(["report", f"mlflow:{run_id}", *common]) == 0
    assert main(["report", str(BREAST_CANCER), *common, "--log-mlflow"]) == 2
    assert "name it as mlflow:<run_id>" in capsys.readouterr().err
