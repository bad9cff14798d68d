"""valuecore.Pipeline and `python -m valuecore apply`: one pipeline, one rule for awkward runs, exact re-application.

* The awkward runs: a model with a tuning split (A), one without (B), one whose
  tuning split has no labels (C), and one whose recalibration cannot be fitted
  (D, top label only, temperature scaling). The pipeline gives each the same
  policy whoever asks: the dashboard's cached Workspace, the export
  (build_policy_document) and the CLI's JSON.
* ``apply`` evaluates the exported policies as stored and reproduces the
  export's evaluation exactly, for every rule and recalibration.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from helpers.core import DIGITS, ROOT, awkward_runs

import valuecore as vc
from valuecore._cli.commands import main

BREAST = ROOT / "sample_runs" / "breast_cancer"


def test_the_rule_for_awkward_runs_is_written_into_every_policy(tmp_path):
    runs = vc.load_runs(awkward_runs(tmp_path)).models
    assert set(runs) == {"A", "B", "C", "D"}
    document, notes = vc.policy_json.build_policy_document(runs, vc.UseCase(1, 0, -5), kind="threshold",
                                               calibration_method="temperature", tune_split="val",
                                               eval_split="test")
    assert document.models == ("A", "B", "C", "D")  # nobody skipped: the same models as on screen
    tuned_on = {e.model: e.tuned_on["split"] for e in document.entries}
    assert tuned_on == {"A": "val", "B": "test", "C": "test", "D": "val"}
    by_model = {e.model: " ".join(e.notes) for e in document.entries}
    assert by_model["A"] == ""
    assert "no 'val' split to tune on" in by_model["B"] and "optimistic" in by_model["B"]
    assert "'val' split has no labels" in by_model["C"] and "optimistic" in by_model["C"]
    assert "temperature recalibration cannot be fitted" in by_model["D"] and "raw confidences" in by_model["D"]
    assert document.entry("D").policy.calibration["method"] == "none"
    assert document.entry("A").policy.calibration["method"] == "temperature"
    assert all(n in notes for e in document.entries for n in e.notes)


@pytest.mark.heavy
def test_the_pipeline_gives_the_same_policy_to_every_caller(tmp_path, capsys):
    """The dashboard's cached Workspace, the library and the CLI's JSON: equal policies and evaluations."""
    from dashboard.data import Workspace

    folder = awkward_runs(tmp_path)
    report = vc.load_runs(folder)
    values = vc.UseCase(1, 0, -5)
    document, _ = vc.policy_json.build_policy_document(report.models, values, kind="threshold",
                                           calibration_method="temperature", tune_split="val", eval_split="test")
    ws = Workspace(report, "val", "test", "temperature")
    cached, _ = ws.document(list(report.models), "threshold", values)
    assert cached == document
    out = tmp_path / "policy.json"
    code = main(["report", str(folder), "--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-5",
                 "--calibration", "temperature", "--tune-split", "val", "--eval-split", "test", "--json", str(out)])
    capsys.readouterr()
    assert code == 0
    cli = json.loads(out.read_text(encoding="utf-8"))
    # Every entry is the pipeline's, each model's with its recommended rule (the default of report and the pages).
    pipeline = vc.Pipeline(report.models, "val", "test", "temperature")
    recommended = vc.recommend(pipeline, values)
    by_default, _ = vc.policy_json.build_policy_document(report.models, values, kind=vc.RECOMMENDED_RULE,
                                                         calibration_method="temperature", tune_split="val",
                                                         eval_split="test")
    assert ws.document(list(report.models), vc.RECOMMENDED_RULE, values)[0] == by_default
    expected, notes = vc.recommended_document(pipeline, by_default, recommended, values,
                                              cli["recommendation"]["reason"])
    assert notes == []  # nothing refitted: the recommended model's entry already holds the recommended rule
    assert cli["models"] == expected.to_dict()["models"]
    assert cli["recommendation"]["model"] == recommended.model and recommended.model is not None
    # an explicit rule: every model gets it, and it is the only rule the recommendation weighs
    assert main(["report", str(folder), "--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-5",
                 "--calibration", "temperature", "--tune-split", "val", "--eval-split", "test", "--policy",
                 "threshold", "--json", str(out)]) == 0
    capsys.readouterr()
    explicit = json.loads(out.read_text(encoding="utf-8"))
    assert explicit["models"] == document.to_dict()["models"] and explicit["recommendation"]["policy"] == "threshold"


@pytest.mark.heavy
@pytest.mark.parametrize("calibration", ["none", "temperature", "isotonic"])
def test_apply_reproduces_the_exported_evaluation_exactly(tmp_path, capsys, calibration):
    for kind in vc.policy_json.POLICY_KINDS:
        if kind == "expected_value" and calibration == "isotonic":
            continue
        policy = tmp_path / f"{kind}.json"
        checked = tmp_path / f"{kind}-applied.json"
        assert main(["report", str(BREAST), "--omega", "7", "--policy", kind, "--calibration", calibration,
                     "--json", str(policy)]) == 0
        assert main(["apply", str(policy), str(BREAST), "--json", str(checked)]) == 0
        out = capsys.readouterr().out
        assert "confusion matrix" in out and "abstain" in out
        exported = json.loads(policy.read_text(encoding="utf-8"))
        applied = json.loads(checked.read_text(encoding="utf-8"))
        assert [m["model"] for m in applied["models"]] == [m["model"] for m in exported["models"]]
        for stored, again in zip(exported["models"], applied["models"]):
            assert again["same_run"] is True
            assert again["evaluation"] == stored["evaluation"], (kind, calibration, stored["model"])
            counts = again["confusion"]["counts"]
            assert sum(map(sum, counts)) == stored["evaluation"]["n"]
            assert sum(row[-1] for row in counts) == stored["evaluation"]["n_abstain"]


@pytest.mark.heavy
def test_apply_uses_the_stored_thresholds_on_other_data(tmp_path, capsys):
    policy = tmp_path / "policy.json"
    assert main(["report", str(BREAST), "--omega", "4", "--json", str(policy)]) == 0
    # Other data: the val split of the same runs. The thresholds stay as stored (nothing re-tuned).
    checked = tmp_path / "val.json"
    assert main(["apply", str(policy), str(BREAST), "--split", "val", "--json", str(checked)]) == 0
    capsys.readouterr()
    document = vc.policy_json.PolicyDocument.from_json(policy.read_text(encoding="utf-8"))
    runs = vc.load_runs(BREAST).models
    for item in json.loads(checked.read_text(encoding="utf-8"))["models"]:
        entry = document.entry(item["model"])
        expected = vc.evaluate(entry.policy, runs[item["model"]].splits["val"], document.values)
        assert item["evaluation"]["split"] == "val"
        assert item["evaluation"]["value_total"] == expected.value_total
        assert item["evaluation"]["coverage"] == expected.coverage


def test_apply_says_when_a_run_file_is_not_the_one_the_policy_was_built_from(tmp_path, capsys):
    policy = tmp_path / "policy.json"
    assert main(["report", str(DIGITS / "logreg.csv"), "--omega", "4", "--json", str(policy)]) == 0
    other = tmp_path / "logreg.csv"
    frame = pd.read_csv(DIGITS / "logreg.csv")
    frame.iloc[:-1].to_csv(other, index=False)  # one row fewer: another file
    capsys.readouterr()
    assert main(["apply", str(policy), str(other)]) == 0
    assert "not the one the policy was built from" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["apply", "missing.json", str(BREAST)], "no such policy file"),
        (["apply", "{bad}", str(BREAST)], "not valid JSON"),
        (["apply", "{other}", str(BREAST / "logreg.csv")], "different classes"),
        (["apply", "{other}", str(DIGITS / "mlp.csv")], "no stored policy could be evaluated"),
    ],
)
def test_apply_refuses_bad_input_with_a_clear_message(tmp_path, capsys, argv, message):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    other = tmp_path / "other.json"
    assert main(["report", str(DIGITS / "logreg.csv"), "--omega", "4", "--json", str(other)]) == 0
    capsys.readouterr()
    argv = [a.replace("{bad}", str(bad)).replace("{other}", str(other)) for a in argv]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err


class DictCache:
    """A cache handed to the pipeline: keeps each stage's answer per (stage, model, split, inputs) in a dict."""

    def __init__(self):
        self.kept, self.asked = {}, []

    def stage(self, pipeline, stage, model, split, inputs, compute):
        key = (stage, model, split, repr(inputs))
        self.asked.append(stage)
        if key not in self.kept:
            self.kept[key] = compute()
        return self.kept[key]


@pytest.mark.parametrize("calibration", ["none", "temperature"])
def test_a_cache_handed_to_the_pipeline_keeps_its_stages_and_changes_no_number(tmp_path, calibration):
    runs = vc.load_runs([str(awkward_runs(tmp_path))]).models
    values = vc.UseCase(1.0, 0.0, -9.0)
    cache = DictCache()
    bare, cached = vc.Pipeline(runs, calibration=calibration), vc.Pipeline(runs, calibration=calibration, cache=cache)
    for pipeline in (bare, cached, cached):  # the second pass of the cached one reads what it kept
        entries = [pipeline.entry(model, vc.RECOMMENDED_RULE, values).to_dict() for model in ("A", "B", "C")]
        if pipeline is bare:
            expected = entries
        assert json.dumps(entries, sort_keys=True, default=str) == json.dumps(expected, sort_keys=True, default=str)
    stages = {"sorted", "evaluated", "interval", "recommendation", "recommended_rules"}
    stages |= {"calibrator", "calibrated"} if calibration != "none" else set()
    assert stages <= set(cache.asked)
    assert len(cache.kept) < len(cache.asked)  # it was asked again for what it kept
    assert cached.recommendation(values) == bare.recommendation(values)
