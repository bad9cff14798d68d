"""Tests of the command line (valuecore._cli.commands): in-process through main(argv), plus one real subprocess."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers.cli import VALUES, assert_clean_error, run_cli, write_run
from jsonschema import Draft202012Validator

from valuecore._cli.commands import read_value_matrix
from valuecore._pipeline.policy_json import PolicyDocument, policy_schema
from valuecore.policy_json import POLICY_KINDS

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_RUNS = ROOT / "sample_runs"
needs_samples = pytest.mark.skipif(
    not (SAMPLE_RUNS / "digits").is_dir() or not (SAMPLE_RUNS / "breast_cancer").is_dir(),
    reason="sample_runs/ not generated",
)
@pytest.fixture
def runs_dir(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    write_run(folder / "alpha.csv", seed=1)
    write_run(folder / "beta.csv", seed=2)
    return folder


@pytest.fixture
def bad_csv(tmp_path):
    path = tmp_path / "broken.csv"
    path.write_text("y_true,proba_neg,proba_pos\nneg,abc,0.5\npos,0.2,0.8\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------
# help and usage
# --------------------------------------------------------------------------
@pytest.mark.parametrize("command", [[], ["validate"], ["report"], ["table"], ["voc"]])
def test_help_everywhere(capsys, command):
    code, out, _ = run_cli(capsys, *command, "--help")
    assert code == 0
    assert "usage: python -m valuecore" in out


def test_no_command_is_a_usage_error(capsys):
    code, out, err = run_cli(capsys)
    assert code == 2
    assert "usage:" in err


def test_version(capsys):
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out.startswith("valuecore ")


# --------------------------------------------------------------------------
# validate
# --------------------------------------------------------------------------
def test_validate_shows_models_classes_splits_rows(capsys, runs_dir):
    code, out, err = run_cli(capsys, "validate", runs_dir)
    assert code == 0, err
    assert "model alpha" in out and "model beta" in out
    assert "classes  2: [neg, pos]" in out
    assert "split val: 80 rows, labelled" in out
    assert "2 model(s) loaded; 0 error(s)" in out


def test_validate_reports_problems_and_exits_2(capsys, runs_dir, bad_csv):
    code, out, err = run_cli(capsys, "validate", runs_dir, bad_csv, runs_dir / "missing.csv")
    assert code == 2
    assert "Traceback" not in out + err
    assert "broken.csv, column proba_neg: values that are not numbers at row 1" in out
    assert "missing.csv: no such file or folder" in out
    assert "model alpha" in out  # the good files are still shown


@needs_samples
def test_validate_sample_runs(capsys):
    code, out, err = run_cli(capsys, "validate", SAMPLE_RUNS / "breast_cancer")
    assert code == 0, out
    assert "split prod: 1008 rows, unlabeled" in out
    assert "[benign, malignant]" in out


# --------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------
def test_report_prints_a_table_per_model_and_writes_valid_json(capsys, runs_dir, tmp_path):
    out_json = tmp_path / "policy.json"
    code, out, err = run_cli(capsys, "report", runs_dir, *VALUES, "--json", out_json)
    assert code == 0, err
    for fragment in (
        "== alpha",
        "== beta",
        "threshold ",
        "value total",
        "value per item",
        "value dimensionless",
        "coverage",
        "selective accuracy",
        "95% interval",
        "tuned on              split 'val'",
    ):
        assert fragment in out
    assert f"wrote the policy JSON for 2 model(s) to {out_json}" in out
    data = json.loads(out_json.read_text(encoding="utf-8"))
    Draft202012Validator(policy_schema()).validate(data)
    document = PolicyDocument.from_dict(data)
    assert document.models == ("alpha", "beta")


def test_report_without_tuning_split_says_so(capsys, tmp_path):
    path = write_run(tmp_path / "solo.csv", splits=("all",))
    code, out, err = run_cli(capsys, "report", path, "--omega", "4", "--json", tmp_path / "p.json")
    assert code == 0, err
    assert "no separate tuning split" in out and "'all'" in out and "optimistic" in out
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["models"][0]["tuned_on"]["split"] == "all"


@pytest.mark.parametrize("kind", POLICY_KINDS)
def test_report_every_policy_kind(capsys, runs_dir, tmp_path, kind):
    out_json = tmp_path / f"{kind}.json"
    calibration = "temperature" if kind != "accept_all" else "none"
    code, out, err = run_cli(
        capsys, "report", runs_dir, *VALUES, "--policy", kind, "--calibration", calibration, "--json", out_json
    )
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert {m["policy"]["kind"] for m in data["models"]} == {kind}
    Draft202012Validator(policy_schema()).validate(data)


def test_report_json_to_stdout(capsys, runs_dir):
    code, out, err = run_cli(capsys, "report", runs_dir, *VALUES, "--json", "-", "--no-interval")
    assert code == 0, err
    assert PolicyDocument.from_json(out).models == ("alpha", "beta")  # stdout holds only the JSON
    assert "== alpha" in err  # the readable report went to stderr


def test_report_unlabeled_eval_split_is_estimated(capsys, tmp_path):
    path = write_run(tmp_path / "m.csv", splits=("val", "test", "prod"), unlabeled=("prod",))
    code, out, err = run_cli(capsys, "report", path, *VALUES, "--eval-split", "prod")
    assert code == 0, err
    assert "estimated without labels" in out
    assert "n/a (estimated value)" in out


def test_report_with_value_matrix_csv(capsys, runs_dir, tmp_path):
    matrix = tmp_path / "values.csv"
    matrix.write_text("true\\predicted,neg,pos,abstain\npos,-20,5,-0.5\nneg,1,-3,-0.5\n", encoding="utf-8")
    out_json = tmp_path / "policy.json"
    code, out, err = run_cli(capsys, "report", runs_dir, "--value-matrix", matrix, "--json", out_json)
    assert code == 0, err
    assert "value matrix for classes [neg, pos]" in out
    data = json.loads(out_json.read_text())
    assert data["use_case"] == {"classes": ["neg", "pos"], "value_matrix": [[1.0, -3.0, -0.5], [-20.0, 5.0, -0.5]]}


def test_report_with_value_matrix_json(capsys, runs_dir, tmp_path):
    matrix = tmp_path / "values.json"
    matrix.write_text(json.dumps({"classes": ["neg", "pos"], "value_matrix": [[1, -3, 0], [-20, 5, 0]]}))
    code, out, err = run_cli(capsys, "report", runs_dir, "--value-matrix", matrix, "--policy", "class_thresholds")
    assert code == 0, err
    assert "class thresholds" in out


def test_read_value_matrix_reorders_rows_by_class(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("\ufeff,a,b,c,abstain\nc,0,0,3,0\na,1,0,0,0\nb,0,2,0,0\n", encoding="utf-8")
    matrix = read_value_matrix(path)
    assert matrix.classes == ("a", "b", "c")
    assert np.diag(matrix.values[:, :3]).tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    ("content", "suffix", "fragment"),
    [
        ("true,neg,pos\nneg,1,-3\npos,-20,5\n", ".csv", "last column of the header row must be 'abstain'"),
        ("true,neg,pos,abstain\nneg,1,-3,0\npos,-20,five,0\n", ".csv", "column 'pos': 'five' is not a finite number"),
        ("true,neg,pos,abstain\nneg,1,-3,0\n", ".csv", "needs a header row"),
        ("true,neg,pos,abstain\nneg,1,-3,0\nmaybe,-20,5,0\n", ".csv", "must list the same classes"),
        ("true,neg,pos,abstain\nneg,1,-3\npos,-20,5,0\n", ".csv", "row 2 (true class 'neg') has 2 values"),
        ("{not json", ".json", "not valid JSON"),
        ('{"classes": ["neg", "pos"], "value_matrix": [[1, 0], [0, 1]]}', ".json", "shape"),
        ("neg,pos\n", ".txt", "must be a .csv or a .json file"),
    ],
)
def test_report_bad_value_matrix_exits_2(capsys, runs_dir, tmp_path, content, suffix, fragment):
    matrix = tmp_path / f"values{suffix}"
    matrix.write_text(content, encoding="utf-8")
    code, out, err = run_cli(capsys, "report", runs_dir, "--value-matrix", matrix)
    assert_clean_error(code, out, err, fragment)


def test_report_value_matrix_for_other_classes_exits_2(capsys, runs_dir, tmp_path):
    matrix = tmp_path / "values.csv"
    matrix.write_text(",x,y,abstain\nx,1,-1,0\ny,-1,1,0\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "report", runs_dir, "--value-matrix", matrix)
    assert_clean_error(code, out, err, "no policy could be built", "value matrix is for classes ['x', 'y']")


def test_report_missing_value_matrix_file_exits_2(capsys, runs_dir, tmp_path):
    code, out, err = run_cli(capsys, "report", runs_dir, "--value-matrix", tmp_path / "nope.csv")
    assert_clean_error(code, out, err, "no such value-matrix file")


def test_report_missing_file_exits_2(capsys, tmp_path):
    code, out, err = run_cli(capsys, "report", tmp_path / "nope.csv", *VALUES)
    assert_clean_error(code, out, err, "nope.csv: no such file or folder", "no usable model")


def test_report_bad_csv_exits_2(capsys, bad_csv):
    code, out, err = run_cli(capsys, "report", bad_csv, *VALUES)
    assert_clean_error(code, out, err, "values that are not numbers", "no usable model")


def test_report_good_and_bad_files_warns_and_continues(capsys, runs_dir, bad_csv):
    code, out, err = run_cli(capsys, "report", runs_dir, bad_csv, *VALUES, "--no-interval")
    assert code == 0
    assert "error: " in err and "broken.csv" in err
    assert "== alpha" in out and "== beta" in out


def test_report_unknown_policy_kind_exits_2(capsys, runs_dir):
    code, out, err = run_cli(capsys, "report", runs_dir, *VALUES, "--policy", "best")
    assert_clean_error(code, out, err, "invalid choice: 'best'")


def test_report_unknown_calibration_exits_2(capsys, runs_dir):
    code, out, err = run_cli(capsys, "report", runs_dir, *VALUES, "--calibration", "beta")
    assert_clean_error(code, out, err, "invalid choice: 'beta'")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--v-correct", "1", "--v-wrong", "-4"], "missing --v-abstain"),
        ([], "the values of the use case are missing"),
        (["--omega", "4", *VALUES], "give the values one way"),
        (["--v-correct", "one", "--v-abstain", "0", "--v-wrong", "-4"], "'one' is not a number"),
        (["--v-correct", "nan", "--v-abstain", "0", "--v-wrong", "-4"], "not a finite number"),
        ([*VALUES, "--eval-split", "holdout"], "no split 'holdout'"),
        ([*VALUES, "--calibration", "platt", "--policy", "expected_value", "--tune-split", "nope"], "no split 'nope'"),
        ([*VALUES, "--policy", "expected_value", "--calibration", "isotonic"], "isotonic"),
    ],
)
def test_report_bad_usage_exits_2(capsys, runs_dir, args, fragment):
    code, out, err = run_cli(capsys, "report", runs_dir, *args)
    assert_clean_error(code, out, err, fragment)


def test_report_unwritable_json_exits_2(capsys, runs_dir, tmp_path):
    code, out, err = run_cli(capsys, "report", runs_dir, *VALUES, "--json", tmp_path / "no" / "dir" / "p.json")
    assert_clean_error(code, out, err, "cannot write the policy JSON")


TINY = ["--v-correct", "1e-300", "--v-abstain", "0", "--v-wrong", "-4e-300"]


def test_report_with_values_too_tiny_for_an_interval_says_to_change_their_unit(capsys, runs_dir, tmp_path):
    """report recommends a rule, weighing each by its interval, which squares the values: values below 1e-100
    are refused with or without --no-interval (it skips the report's intervals, not the recommendation's)."""
    for skip in ([], ["--no-interval"], ["--no-interval", "--html", tmp_path / "r.html"]):
        code, out, err = run_cli(capsys, "report", runs_dir, *TINY, *skip)
        assert_clean_error(code, out, err, "for an interval", "got 1e-300", "larger or smaller unit",
                           "--no-interval does not help")
        assert err.count("error:") == 1 and "alpha" not in err  # said once, before any model is tuned
        assert not (tmp_path / "r.html").exists()


def test_apply_with_values_too_tiny_for_an_interval_suggests_no_interval(capsys, runs_dir, tmp_path):
    """apply weighs no rule: --no-interval lets a policy priced in values below 1e-100 apply."""
    code, out, err = run_cli(capsys, "report", runs_dir, "--omega", "4", "--json", tmp_path / "p.json")
    assert code == 0, err
    document = json.loads((tmp_path / "p.json").read_text())
    document["use_case"] = {"v_correct": 1e-300, "v_abstain": 0.0, "v_wrong": -4e-300, "omega": 4.0}
    (tmp_path / "p.json").write_text(json.dumps(document))
    code, out, err = run_cli(capsys, "apply", tmp_path / "p.json", runs_dir)
    assert_clean_error(code, out, err, "for an interval", "--no-interval")
    code, out, err = run_cli(capsys, "apply", tmp_path / "p.json", runs_dir, "--no-interval")
    assert code == 0 and "confusion matrix" in out, err


def test_report_with_values_too_large_for_any_sum_does_not_suggest_no_interval(capsys, runs_dir):
    code, out, err = run_cli(capsys, "report", runs_dir, "--v-correct", "1e300", "--v-abstain", "0",
                             "--v-wrong", "-1e300")
    assert_clean_error(code, out, err, "at most 1e+100")
    assert "--no-interval" not in err


@needs_samples
def test_report_sample_runs_calibrated(capsys, tmp_path):
    out_json = tmp_path / "policy.json"
    code, out, err = run_cli(
        capsys, "report", SAMPLE_RUNS / "breast_cancer", *VALUES, "--calibration", "platt", "--json", out_json
    )
    assert code == 0, err
    assert "Platt scaling" in out
    data = json.loads(out_json.read_text())
    assert len(data["models"]) == 5
    assert all(m["tuned_on"]["split"] == "val" and m["evaluation"]["split"] == "test" for m in data["models"])


# --------------------------------------------------------------------------
# unexpected failures
# --------------------------------------------------------------------------
def test_unexpected_failure_exits_1_with_hint_and_traceback_only_with_debug(capsys, runs_dir, monkeypatch):
    import valuecore._engine.table as table  # the command imports it when it runs (--help loads no numpy)

    def boom(*args, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(table, "comparison_table", boom)
    code, out, err = run_cli(capsys, "table", runs_dir)
    assert_clean_error(code, out, err, "unexpected failure (RuntimeError: kaboom)", "--debug", expected_code=1)
    code, out, err = run_cli(capsys, "table", runs_dir, "--debug")
    assert code == 1
    assert "Traceback" in err and "kaboom" in err


# --------------------------------------------------------------------------
# table
# --------------------------------------------------------------------------
def test_table_text(capsys, runs_dir):
    code, out, err = run_cli(capsys, "table", runs_dir, "--k", "0,4")
    assert code == 0, err
    assert "alpha" in out and "beta" in out
    for metric in ("accuracy", "macro_f1", "cost_error_k4", "value_tuned_k4", "value_calibrated_k0"):
        assert metric in out
    assert "(1)" in out and "(2)" in out


def test_table_csv(capsys, runs_dir):
    code, out, err = run_cli(capsys, "table", runs_dir, "--csv", "--k", "1,2")
    assert code == 0, err
    from io import StringIO

    frame = pd.read_csv(StringIO(out), index_col="model")
    assert list(frame.index) == ["alpha", "beta"]
    assert {"accuracy", "accuracy_rank", "value_tuned_k2", "value_tuned_k2_rank", "cost_error_k1"} <= set(frame)


def test_table_markdown(capsys, runs_dir):
    code, out, err = run_cli(capsys, "table", runs_dir, "--markdown")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "| metric | alpha | beta |"
    assert lines[1] == "| --- | ---: | ---: |"
    assert all(line.startswith("| ") and line.endswith(" |") for line in lines[2 : 2 + 20])


def test_table_csv_and_markdown_are_exclusive(capsys, runs_dir):
    code, out, err = run_cli(capsys, "table", runs_dir, "--csv", "--markdown")
    assert_clean_error(code, out, err, "not allowed with argument")


@pytest.mark.parametrize("k", ["a,b", "-1", ",", "inf"])
def test_table_bad_k_exits_2(capsys, runs_dir, k):
    code, out, err = run_cli(capsys, "table", runs_dir, f"--k={k}")
    assert_clean_error(code, out, err, "--k")


def test_table_without_tuning_split_notes_it(capsys, tmp_path):
    path = write_run(tmp_path / "solo.csv", splits=("all",))
    code, out, err = run_cli(capsys, "table", path)
    assert code == 0, err
    assert "no separate tuning split" in err


@needs_samples
def test_table_sample_runs(capsys):
    code, out, err = run_cli(capsys, "table", SAMPLE_RUNS / "digits")
    assert code == 0, err
    assert "svm_rbf" in out and "value_tuned_k10" in out


# --------------------------------------------------------------------------
# voc
# --------------------------------------------------------------------------
def test_voc_prints_tidy_table_and_omega_sup(capsys, runs_dir):
    code, out, err = run_cli(capsys, "voc", runs_dir, "--omega-max", "8", "--points", "5")
    assert code == 0, err
    assert "model" in out and "omega" in out and "value" in out
    assert "omega_sup" in out
    assert "oracle" in err  # the upper-bound caveat


@pytest.mark.parametrize("mode", ["oracle", "tuned", "calibrated", "accept_all"])
def test_voc_csv(capsys, runs_dir, tmp_path, mode):
    out_csv = tmp_path / "voc.csv"
    code, out, err = run_cli(
        capsys, "voc", runs_dir, "--omega-max", "4", "--points", "9", "--mode", mode, "--csv", out_csv
    )
    assert code == 0, err
    frame = pd.read_csv(out_csv)
    assert list(frame.columns[:4]) == ["model", "mode", "omega", "value"]
    assert len(frame) == 18 and set(frame["mode"]) == {mode}
    assert frame["omega"].max() == 4
    assert "wrote 18 rows" in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [(["--points", "1"], "--points"), (["--omega-max", "0"], "positive"), (["--mode", "best"], "invalid choice")],
)
def test_voc_bad_usage_exits_2(capsys, runs_dir, args, fragment):
    code, out, err = run_cli(capsys, "voc", runs_dir, *args)
    assert_clean_error(code, out, err, fragment)


def test_voc_unlabeled_only_exits_2(capsys, tmp_path):
    path = write_run(tmp_path / "m.csv", splits=("prod",), unlabeled=("prod",))
    code, out, err = run_cli(capsys, "voc", path)
    assert_clean_error(code, out, err, "has no labels", "no model can be evaluated")


@needs_samples
def test_voc_sample_runs(capsys):
    code, out, err = run_cli(capsys, "voc", SAMPLE_RUNS / "digits_shifted", "--points", "3", "--mode", "tuned")
    assert code == 0, err
    assert "naive_bayes" in out


# --------------------------------------------------------------------------
# a real process
# --------------------------------------------------------------------------
@pytest.mark.heavy
@needs_samples
def test_python_dash_m_report_writes_schema_valid_json(tmp_path):
    out_json = tmp_path / "policy.json"
    result = subprocess.run(
        [sys.executable, "-m", "valuecore", "report", "sample_runs/digits", *VALUES, "--json", str(out_json)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(out_json.read_text(encoding="utf-8"))
    Draft202012Validator(policy_schema()).validate(data)
    assert [m["model"] for m in data["models"]] == ["logreg", "mlp", "naive_bayes", "random_forest", "svm_rbf"]
    assert "Traceback" not in result.stderr


@needs_samples
def test_apply_scores_a_stored_two_tier_policy_as_report_did(capsys, tmp_path):
    # apply used to stop on any two_tier document ("use evaluate_two_tier"); it must give report's evaluation back.
    policy, applied = tmp_path / "two_tier.json", tmp_path / "applied.json"
    code, _, err = run_cli(capsys, "report", SAMPLE_RUNS / "digits", "--omega", "4", "--policy", "two_tier",
                           "--v-confirmed-correct", "0.6", "--v-confirmed-wrong", "-1", "--json", policy)
    assert code == 0, err
    code, out, err = run_cli(capsys, "apply", policy, SAMPLE_RUNS / "digits", "--json", applied)
    assert code == 0, err
    assert "assist threshold" in out and "confirmed by a person" in out
    stored = {m["model"]: m["evaluation"] for m in json.loads(policy.read_text())["models"]}
    scored = {m["model"]: m for m in json.loads(applied.read_text())["models"]}
    assert set(scored) == set(stored)
    for model, evaluation in stored.items():
        assert scored[model]["evaluation"] == evaluation
        counts = np.asarray(scored[model]["confusion"]["counts"])
        tiers = evaluation["two_tier"]
        assert counts[:, -1].sum() == tiers["n_assisted"] + tiers["n_handoff"]


# --------------------------------------------------------------------------
# the one recommendation
# --------------------------------------------------------------------------
DIGITS = Path(__file__).resolve().parents[2] / "sample_runs" / "digits"


def test_report_leads_with_one_recommendation_that_earns_and_writes_it(capsys, tmp_path):
    out_json = tmp_path / "p.json"
    code, out, err = run_cli(capsys, "report", DIGITS, "--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-20",
                             "--json", out_json)
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("recommendation: Deploy ")
    data = json.loads(out_json.read_text())
    Draft202012Validator(policy_schema()).validate(data)
    recommendation = data["recommendation"]
    entry = next(m for m in data["models"] if m["model"] == recommendation["model"])
    assert entry["policy"]["kind"] == recommendation["policy"]
    assert entry["evaluation"]["value_per_item"] > 0  # never a model at or below no model
    assert f"Deploy {recommendation['model']} " in first and recommendation["reason"] in out
    # apply reads it back and marks the recommended policy
    code, out, err = run_cli(capsys, "apply", out_json, DIGITS)
    assert code == 0, err
    assert out.startswith(f"recommendation (as stored): {recommendation['model']} ({recommendation['policy']})")
    assert f"== {recommendation['model']}  ({DIGITS / (recommendation['model'] + '.csv')})  [recommended]" in out


def test_report_says_not_yet_when_no_rule_is_shown_to_earn_and_apply_reads_it_back(capsys, tmp_path):
    # At a wrong answer of -1000, 450 evaluated items cannot show that any rule earns more than no model.
    out_json = tmp_path / "p.json"
    code, out, err = run_cli(capsys, "report", DIGITS, "--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-1000",
                             "--json", out_json)
    assert code == 0, err
    assert out.splitlines()[0] == ("recommendation: Not yet: hand every item to a person until a model is shown "
                                   "to earn more.")
    data = json.loads(out_json.read_text())
    Draft202012Validator(policy_schema()).validate(data)
    recommendation = data["recommendation"]
    assert recommendation["model"] is None and recommendation["status"] == "not_yet"
    settle = recommendation["would_settle"]
    assert settle["model"] == "mlp" and settle["labelled_items"] > 450
    assert recommendation["reason"] in out and f"{int(settle['labelled_items']):,}" in recommendation["reason"]
    code, out, err = run_cli(capsys, "apply", out_json, DIGITS)
    assert code == 0, err
    assert out.startswith("recommendation (as stored): not yet")


def test_report_an_explicit_policy_is_the_only_rule_weighed(capsys, runs_dir, tmp_path):
    out_json = tmp_path / "p.json"
    code, out, err = run_cli(capsys, "report", runs_dir, *VALUES, "--policy", "class_thresholds", "--json", out_json)
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert {m["policy"]["kind"] for m in data["models"]} == {"class_thresholds"}
    assert data["recommendation"]["policy"] in ("class_thresholds", None)


def test_report_recommends_no_model_when_none_earns(capsys, runs_dir, tmp_path):
    out_json = tmp_path / "p.json"
    code, out, err = run_cli(capsys, "report", runs_dir, "--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-1e9",
                             "--policy", "accept_all", "--json", out_json, "--no-interval")
    assert code == 0, err
    assert out.startswith("recommendation: Deploy no model: hand every item to a person.")
    assert json.loads(out_json.read_text())["recommendation"]["model"] is None


@pytest.mark.parametrize("weight", [0.01, 1e-50, 1e50])
def test_weighted_counts_read_as_the_json_holds_them_never_0_nor_50_digits(tmp_path, capsys, weight):
    """Items weighing 0.01 read "0.0 wrong" beside "rests on 0.02 wrong answers", and items weighing 1e50 as
    some 50 digits that mean nothing (head 2565fbe): each count reads nonzero when it is, to three digits."""
    path = write_run(tmp_path / "w.csv", n=60)
    frame = pd.read_csv(path)
    frame["weight"] = weight
    frame.to_csv(path, index=False)
    code, out, err = run_cli(capsys, "report", path, "--omega", "5", "--json", tmp_path / "p.json")
    assert code == 0, err
    entry = json.loads((tmp_path / "p.json").read_text())["models"][0]
    evaluation = entry["evaluation"]
    shown = re.search(r"\((\S+) correct, (\S+) wrong, (\S+) abstained\)", out).groups()
    for text, key in zip(shown, ("n_correct", "n_wrong", "n_abstain")):
        held = evaluation[key]
        assert (float(text.replace(",", "")) == 0) == (held == 0), (key, held, text)
        assert math.isclose(float(text.replace(",", "")), held, rel_tol=5e-3, abs_tol=0.05), (key, held, text)
    tuned = re.search(r"tuned on +split 'val' \((\S+) items\)", out).group(1)
    assert math.isclose(float(tuned.replace(",", "")), entry["tuned_on"]["n"], rel_tol=5e-3), tuned
    assert not re.search(r"\d[\d,]{24}", out), out  # no number written out past 10^15
