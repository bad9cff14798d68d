"""MLflow both ways: a pyfunc model that carries the policy, and MLflow runs as a run source of the CLI.

MLflow's local file store in a temporary folder; nothing remote, no server.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from optional import need  # noqa: E402

import valuecore as vc
from valuecore.cli import main
from valuecore.policy_json import PolicyDocument
from valuecore.serving import RejectOptionClassifier, save_mlflow_model

need("mlflow")  # requirements-mlflow.txt: skipped without it, required in CI
import mlflow  # noqa: E402
from helpers.serving import breast_cancer  # noqa: E402

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


def test_a_document_recommending_no_model_is_not_saved_as_a_model_unless_one_is_named(tmp_path):
    model, (X_val, y_val), (X_test, y_test) = breast_cancer()
    classes = [str(c) for c in model.classes_]
    splits = {name: vc.Predictions.from_proba(model.predict_proba(X), y_true=y, classes=classes)
              for name, X, y in (("val", X_val, y_val), ("test", X_test, y_test))}
    run = vc.runs.ModelRun("logreg", "logreg.csv", None, tuple(classes), splits)
    pipeline, values = vc.Pipeline({"logreg": run}), vc.UseCase(1, 0, -1000)
    recommendation = vc.recommend(pipeline, values)
    assert recommendation.choice == "not_yet"  # 143 evaluated items cannot show a rule earns at -1000
    document, _ = pipeline.document(["logreg"], vc.RECOMMENDED_RULE, values, with_interval=False)
    reason = vc.wording.recommendation_reason(recommendation)
    document, _ = vc.recommended_document(pipeline, document, recommendation, values, reason, with_interval=False)
    with pytest.warns(UserWarning, match="recommends no model"):
        with pytest.raises(ValueError, match="recommends no model, so there is nothing to save: No model is shown"):
            save_mlflow_model(tmp_path / "refused", model, document)
    assert not (tmp_path / "refused").exists()
    save_mlflow_model(tmp_path / "named", model, document, "logreg")  # named: saved, serving its policy
    loaded = mlflow.pyfunc.load_model(str(tmp_path / "named"))
    frame = pd.DataFrame(X_test, columns=[f"f{k}" for k in range(X_test.shape[1])])
    assert (loaded.predict(frame)["action"] != -1).any()


# ------------------------------------------------------------------ MLflow runs under the folders' rules (issue 36)
COMMON = ["--v-correct", "10", "--v-abstain", "-1", "--v-wrong", "-50", "--no-interval"]


def other_model(tmp_path) -> Path:
    """The breast-cancer run with other figures: every probability moved, so its value differs."""
    frame = pd.read_csv(BREAST_CANCER, keep_default_na=False, dtype={"timestamp": str})
    probability = [c for c in frame.columns if c.startswith("proba_")]
    frame[probability] = frame[probability[::-1]].to_numpy()  # another model: the classes' columns swapped
    path = tmp_path / "other" / "logreg.csv"
    path.parent.mkdir(exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def new_run(name="nightly", experiment="cancer") -> tuple[mlflow.tracking.MlflowClient, str]:
    client = mlflow.tracking.MlflowClient()
    found = client.get_experiment_by_name(experiment)
    experiment_id = found.experiment_id if found else client.create_experiment(experiment)
    return client, client.create_run(experiment_id, run_name=name).info.run_id


def evaluation(path, tmp_path, name) -> dict:
    out = tmp_path / f"{name}.json"
    assert main(["report", str(path), *COMMON, "--json", str(out)]) == 0
    return json.loads(out.read_text())["models"][0]["evaluation"]


@pytest.mark.parametrize("second", ["b/logreg.csv", "predictions/logreg.json"])
def test_two_tables_of_one_file_name_in_a_run_are_refused_as_in_a_folder(tracking, capsys, second):
    """Issue 36, item 2: a/logreg.csv and b/logreg.csv (or a log_table and a CSV of one stem) were one model
    "logreg" carrying the second's figures."""
    client, run_id = new_run()
    client.log_artifact(run_id, str(BREAST_CANCER), "a")
    other = other_model(tracking)
    if second.endswith(".json"):
        client.log_table(run_id, pd.read_csv(other, keep_default_na=False, dtype={"timestamp": str}), second)
    else:
        client.log_artifact(run_id, str(other), "b")
    first = evaluation(BREAST_CANCER, tracking, "first")
    assert first != evaluation(other, tracking, "second")
    capsys.readouterr()
    assert main(["report", f"mlflow:{run_id}", *COMMON, "--json", str(tracking / "run.json")]) == 0
    err = capsys.readouterr().err
    assert json.loads((tracking / "run.json").read_text())["models"][0]["evaluation"] == first  # the first table's
    assert f"mlflow:{run_id}/{second}: model name 'logreg' is already taken by mlflow:{run_id}/a/logreg.csv" in err
    assert "this one was not loaded" in err
    assert main(["validate", f"mlflow:{run_id}"]) == 2  # an error, as for two files of one folder


def test_validate_reads_an_mlflow_run_and_every_command_names_its_tables_by_artifact_path(tracking, capsys):
    """Issue 36, item 7 (validate said "no such file or folder") and the low item: tables were named by their
    temporary copies."""
    run_id = log_sample_run()
    assert main(["validate", f"mlflow:{run_id}"]) == 0
    out = capsys.readouterr().out
    assert f"model logreg  (mlflow:{run_id}/predictions/logreg.json)" in out
    assert "1 model(s) loaded; 0 error(s)" in out
    assert main(["report", "mlflow:cancer/nightly", *COMMON]) == 0
    captured = capsys.readouterr()
    assert "(mlflow:cancer/nightly/predictions/logreg.json)" in captured.out
    assert "valuecore-mlflow" not in captured.out + captured.err


def test_reading_an_mlflow_run_leaves_no_temporary_copy(tracking, monkeypatch):
    """Low item: each run read left a temporary folder until the process ended (a server kept every run)."""
    import tempfile

    scratch = tracking / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    run_id = log_sample_run()
    assert main(["report", f"mlflow:{run_id}", *COMMON]) == 0
    assert main(["report", f"mlflow:{run_id}", "--omega", "bad"]) == 2
    assert list(scratch.iterdir()) == []


def test_ordinary_artifacts_are_ignored_with_a_note_and_every_folder_is_read(tracking, capsys):
    """Issue 36, item 15: a log_dict config made the run unreadable, and valuecore_predictions/ was skipped."""
    client, run_id = new_run()
    client.log_dict(run_id, {"C": 1.0, "penalty": "l2"}, "config.json")
    client.log_text(run_id, "trained on 2024-05-01", "notes.txt")
    features = tracking / "features.csv"
    pd.DataFrame({"radius": [1.0, 2.0], "texture": [3.0, 4.0], "target": ["benign", "malignant"]}).to_csv(
        features, index=False)
    client.log_artifact(run_id, str(features), "data")
    client.log_artifact(run_id, str(BREAST_CANCER), "valuecore_predictions")
    assert main(["report", f"mlflow:{run_id}", *COMMON, "--json", str(tracking / "run.json")]) == 0
    err = capsys.readouterr().err
    assert [m["model"] for m in json.loads((tracking / "run.json").read_text())["models"]] == ["logreg"]
    note = next(line for line in err.splitlines() if "not prediction tables" in line)
    assert note.startswith("warning:")
    for name in ("config.json", "notes.txt", "data/features.csv"):
        assert name in note
    assert main(["validate", f"mlflow:{run_id}"]) == 0


def test_a_log_table_larger_than_a_json_document_obeys_the_run_files_limits(tracking, capsys, monkeypatch):
    """Issue 36, item 15: a 31 MB log_table was refused by the 10 MB limit of JSON documents."""
    run_id = log_sample_run()  # about 0.1 MB as a log_table
    monkeypatch.setenv("VALUECORE_MAX_JSON_MB", "1")
    size = mlflow.tracking.MlflowClient().list_artifacts(run_id, "predictions")[0].file_size
    big = pd.concat([pd.read_csv(BREAST_CANCER, keep_default_na=False, dtype={"timestamp": str})] * 20)
    client, big_run = new_run("big")
    client.log_table(big_run, big, "predictions/logreg.json")
    assert client.list_artifacts(big_run, "predictions")[0].file_size > 2**20 > 1_000_000 > size
    assert main(["report", f"mlflow:{big_run}", *COMMON]) == 0  # above the JSON documents' limit: read
    monkeypatch.setenv("VALUECORE_MAX_FILE_MB", "1")
    capsys.readouterr()
    assert main(["report", f"mlflow:{big_run}", *COMMON]) == 2  # above the run files' limit: refused
    err = capsys.readouterr().err
    assert "VALUECORE_MAX_FILE_MB" in err and "predictions/logreg.json" in err


def test_an_experiment_whose_name_holds_a_slash_is_addressed_by_name(tracking, capsys):
    """Low item: mlflow:team/cancer/nightly looked for an experiment named "team"."""
    client, run_id = new_run("nightly", "team/cancer")
    client.log_artifact(run_id, str(BREAST_CANCER), "predictions")
    assert main(["report", "mlflow:team/cancer/nightly", *COMMON]) == 0
    assert "(mlflow:team/cancer/nightly/predictions/logreg.csv)" in capsys.readouterr().out


def test_without_a_tracking_uri_mlflow_says_what_to_set(tmp_path, monkeypatch, capsys):
    """Issue 36, item 9: "unexpected failure ... likely a bug" (exit 1) without MLFLOW_TRACKING_URI, or with a
    folder store MLflow 3 refuses by default."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    for command in ("report", "validate"):
        assert main([command, "mlflow:0123456789abcdef", *(COMMON if command == "report" else [])]) == 2
        err = capsys.readouterr().err
        assert "MLFLOW_TRACKING_URI" in err and "likely a bug" not in err
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
    assert main(["report", "mlflow:0123456789abcdef", *COMMON]) == 2
    err = capsys.readouterr().err
    assert "MLFLOW_ALLOW_FILE_STORE=true" in err and "likely a bug" not in err


def test_log_mlflow_refuses_a_deleted_run_and_says_when_it_replaces_a_policy(tracking, capsys):
    """Low item: --log-mlflow logged into a deleted run, and replaced an earlier policy without a word."""
    run_id = log_sample_run()
    logged = ["report", f"mlflow:{run_id}", *COMMON, "--log-mlflow"]
    assert main(logged) == 0
    first = capsys.readouterr().out
    assert "replac" not in first
    assert main(logged) == 0
    assert "replacing the valuecore/policy.json and valuecore/report.html logged before" in capsys.readouterr().out
    mlflow.tracking.MlflowClient().delete_run(run_id)
    assert main(logged) == 2
    assert f"the MLflow run {run_id} is deleted" in capsys.readouterr().err


def test_a_broken_table_is_an_error_for_that_table_and_the_others_are_read(tracking, capsys):
    """As in a folder: a log_table that is no JSON made the whole run unreadable."""
    client, run_id = new_run()
    bad = tracking / "bad.json"
    bad.write_text("{not json")
    client.log_artifact(run_id, str(bad), "p")
    client.set_tag(run_id, "mlflow.loggedArtifacts", json.dumps([{"path": "p/bad.json", "type": "table"}]))
    client.log_artifact(run_id, str(BREAST_CANCER), "p")
    assert main(["report", f"mlflow:{run_id}", *COMMON]) == 0
    assert f"error: mlflow:{run_id}/p/bad.json: not a table logged with mlflow.log_table" in capsys.readouterr().err
    assert main(["validate", f"mlflow:{run_id}"]) == 2


def test_a_logged_tables_tag_nested_too_deeply_is_a_tag_mlflow_did_not_write(tracking, capsys):
    """A tag of 3,000 nested lists failed the whole run with an unexpected RecursionError; a tag that is not
    MLflow's list counts no table as logged, so the run's tables are read as any other artifact."""
    run_id = log_sample_run()
    mlflow.tracking.MlflowClient().set_tag(run_id, "mlflow.loggedArtifacts", "[" * 3000 + "]" * 3000)
    assert main(["validate", f"mlflow:{run_id}"]) == 0
    out, err = capsys.readouterr()
    assert "unexpected failure" not in err and f"model logreg  (mlflow:{run_id}/predictions/logreg.json)" in out


def test_a_hostile_source_is_refused_in_a_short_message_with_few_requests(tracking, capsys, monkeypatch):
    """A 5,000-character source was quoted whole; a name of many '/' is not read in thousands of ways."""
    for source in ("mlflow:" + "x" * 5000, "mlflow:" + "a/" * 10 + "b" * 5000):
        assert main(["validate", source]) == 2
        assert len(capsys.readouterr().err) < 1000
    asked = []
    client = mlflow.tracking.MlflowClient
    original = client.get_experiment_by_name
    monkeypatch.setattr(client, "get_experiment_by_name", lambda self, name: asked.append(name) or original(self, name))
    assert main(["validate", "mlflow:" + "a/" * 2500]) == 2
    assert "name the run by its id" in capsys.readouterr().err and not asked
