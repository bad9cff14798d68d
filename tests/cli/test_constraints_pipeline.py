"""Review capacity, certified risk and two-tier policies through the pipeline:
``build_policy_document``, the policy JSON (schema version 2, version 1 still
loads) and ``python -m valuecore report``."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from helpers.cli import VALUES, assert_clean_error, run_cli, write_run
from jsonschema import Draft202012Validator

import valuecore as vc

ASSISTED = {"v_confirmed_correct": 0.6, "v_confirmed_wrong": -0.5, "cost": 0.1}


@pytest.fixture
def runs_dir(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    write_run(folder / "alpha.csv", seed=1, n=300)
    write_run(folder / "beta.csv", seed=2, n=300)
    return folder


@pytest.fixture
def models(runs_dir):
    return vc.load_runs([str(runs_dir)]).models


def _strict_round_trip(document):
    data = json.loads(document.to_json())
    Draft202012Validator(vc.policy_json.policy_schema()).validate(data)
    again = vc.policy_json.PolicyDocument.from_json(document.to_json())
    assert again == document
    return data


def test_capacity_is_honoured_and_recorded(models):
    for kind in ("threshold", "class_thresholds"):
        free, _ = vc.policy_json.build_policy_document(models, vc.UseCase(1, 0, -4), kind=kind)
        document, _ = vc.policy_json.build_policy_document(
            models, vc.UseCase(1, 0, -4), kind=kind, max_handoff_rate=0.1
        )
        data = _strict_round_trip(document)
        assert data["schema_version"] == 2
        for entry, free_entry in zip(document.entries, free.entries):
            (record,) = entry.constraints
            assert record["type"] == "review_capacity" and record["max_handoff_rate"] == 0.1
            assert record["handoff_rate"] <= 0.1 + 1e-12
            # the recorded rate is the policy's own hand-off rate on the tuning split
            tune = models[entry.model].splits["val"]
            actions = entry.policy.decide(tune)
            share = float(tune.sample_weight[actions == tune.n_classes].sum() / tune.total_weight)
            assert share == pytest.approx(record["handoff_rate"])
            if not record["binding"]:
                assert entry.policy == free_entry.policy


def test_certified_risk_is_recorded_and_its_bound_holds(models):
    document, notes = vc.policy_json.build_policy_document(
        models, vc.UseCase(1, 0, -4), max_risk=0.1, risk_confidence=0.8
    )
    _strict_round_trip(document)
    for entry in document.entries:
        (record,) = entry.constraints
        assert record["type"] == "certified_risk"
        assert (record["max_risk"], record["confidence"]) == (0.1, 0.8)
        assert record["delta"] == pytest.approx(0.2)
        if entry.policy.threshold is None:
            assert record["certified_upper_bound"] is None
        else:
            assert record["certified_upper_bound"] <= 0.1
            tune = models[entry.model].splits["val"]
            accepted = tune.confidence >= entry.policy.threshold
            assert record["n_accepted"] == accepted.sum()
            assert record["n_wrong"] == (accepted & ~tune.correct).sum()


def test_nothing_certifiable_says_so_and_abstains(models):
    document, notes = vc.policy_json.build_policy_document(
        models, vc.UseCase(1, 0, -4), max_risk=0.0, risk_confidence=0.9
    )
    assert all(entry.policy.threshold is None for entry in document.entries)
    assert any("no threshold could be certified" in note for note in notes)


def test_two_tier_document_round_trips_and_its_value_is_the_tiers(models):
    document, _ = vc.policy_json.build_policy_document(models, vc.UseCase(1, 0, -4), kind="two_tier", assisted=ASSISTED)
    data = _strict_round_trip(document)
    for item, entry in zip(data["models"], document.entries):
        assert item["policy"]["assisted"] == ASSISTED
        test = models[entry.model].splits["test"]
        expected = vc.constraints.evaluate_two_tier(entry.policy, test, vc.UseCase(1, 0, -4))
        assert item["evaluation"]["value_total"] == pytest.approx(expected.value_total)
        assert item["evaluation"]["two_tier"]["n_assisted"] == expected.n_assisted
        low, high = item["evaluation"]["ci95"]
        assert low <= item["evaluation"]["value_per_item"] <= high


def test_the_serving_reference_in_the_docs_decides_two_tier_like_valuecore(models):
    from helpers.cli import _docs_reference_code

    decide = _docs_reference_code()["decide"]
    for calibration in ("none", "temperature", "isotonic"):
        document, _ = vc.policy_json.build_policy_document(
            models, vc.UseCase(1, 0, -4), kind="two_tier", assisted=ASSISTED, calibration_method=calibration
        )
        data = json.loads(document.to_json())
        for name, run in models.items():
            for predictions in run.splits.values():
                expected = document.decide(name, predictions)
                expected = np.where(expected == predictions.n_classes, -1, expected)
                np.testing.assert_array_equal(decide(data, name, predictions.proba, predictions.logits), expected)


def test_version_1_documents_still_load_and_cannot_hold_version_2_features(models):
    document, _ = vc.policy_json.build_policy_document(models, vc.UseCase(1, 0, -4))
    data = document.to_dict()
    old = copy.deepcopy(data)
    old["schema_version"] = 1
    again = vc.policy_json.PolicyDocument.from_dict(old)
    assert [e.policy for e in again.entries] == [e.policy for e in document.entries]
    tiered, _ = vc.policy_json.build_policy_document(models, vc.UseCase(1, 0, -4), kind="two_tier", assisted=ASSISTED)
    bad = tiered.to_dict()
    bad["schema_version"] = 1
    with pytest.raises(ValueError, match=r"models\[0\]: a two_tier policy need schema_version 2"):
        vc.policy_json.PolicyDocument.from_dict(bad)
    capped, _ = vc.policy_json.build_policy_document(models, vc.UseCase(1, 0, -4), max_handoff_rate=0.2)
    bad = capped.to_dict()
    bad["schema_version"] = 1
    with pytest.raises(ValueError, match="constraints need schema_version 2"):
        vc.policy_json.PolicyDocument.from_dict(bad)
    broken = capped.to_dict()
    broken["models"][0]["constraints"][0]["max_handoff_rate"] = 2
    with pytest.raises(ValueError, match=r"models\[0\]\.constraints\[0\]\.max_handoff_rate"):
        vc.policy_json.PolicyDocument.from_dict(broken)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_handoff_rate": 1.5}, "between 0 and 1"),
        ({"max_handoff_rate": 0.1, "kind": "expected_value"}, "review capacity applies"),
        ({"max_risk": 0.1, "kind": "class_thresholds"}, "certified risk applies"),
        ({"max_risk": 0.1, "max_handoff_rate": 0.1}, "not both"),
        ({"risk_confidence": 0.9}, "needs a maximum risk"),
        ({"max_risk": 0.1, "risk_confidence": 1.0}, "strictly between 0 and 1"),
        ({"kind": "two_tier"}, "assisted tier"),
        ({"assisted": ASSISTED}, "apply to the two_tier"),
    ],
)
def test_bad_constraint_options_are_refused_in_one_sentence(models, options, message):
    options = dict(options)
    kind = options.pop("kind", "threshold")
    with pytest.raises(ValueError, match=message):
        vc.policy_json.build_policy_document(models, vc.UseCase(1, 0, -4), kind=kind, **options)


# ------------------------------------------------------------------ CLI
def test_cli_capacity_risk_and_two_tier(capsys, runs_dir, tmp_path):
    out_json = tmp_path / "cap.json"
    code, out, err = run_cli(capsys, "report", runs_dir, *VALUES, "--max-handoff-rate", "0.05", "--json", out_json)
    assert code == 0, err
    assert "review capacity       at most 5.0% handed off" in out
    assert "per extra hand-off slot" in out
    data = json.loads(out_json.read_text())
    assert data["models"][0]["constraints"][0]["type"] == "review_capacity"

    code, out, err = run_cli(
        capsys, "report", runs_dir, *VALUES, "--max-risk", "0.1", "--risk-confidence", "0.8", "--json", out_json
    )
    assert code == 0, err
    assert "with 80% confidence" in out
    record = json.loads(out_json.read_text())["models"][0]["constraints"][0]
    assert record["type"] == "certified_risk" and record["confidence"] == 0.8

    code, out, err = run_cli(
        capsys,
        "report",
        runs_dir,
        *VALUES,
        "--policy",
        "two_tier",
        "--v-confirmed-correct",
        "0.6",
        "--v-confirmed-wrong",
        "-0.5",
        "--assist-cost",
        "0.1",
        "--json",
        out_json,
    )
    assert code == 0, err
    assert "assist threshold" in out and "confirmed by a person" in out
    assert json.loads(out_json.read_text())["models"][0]["policy"]["assisted"] == ASSISTED


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--max-handoff-rate", "-0.5"], "between 0 and 1"),
        (["--max-risk", "0.1", "--policy", "class_thresholds"], "certified risk applies"),
        (["--risk-confidence", "0.9"], "needs a maximum risk"),
        (["--policy", "two_tier"], "assisted tier"),
        (["--policy", "two_tier", "--v-confirmed-correct", "1"], "--v-confirmed-wrong"),
        (["--max-handoff-rate", "abc"], "is not a number"),
    ],
)
def test_cli_refuses_bad_constraints_cleanly(capsys, runs_dir, argv, fragment):
    code, out, err = run_cli(capsys, "report", runs_dir, *VALUES, *argv)
    assert_clean_error(code, out, err, fragment)


def test_cli_monitor_prints_bands_alerts_drift_and_the_backtest(capsys, tmp_path):
    path = write_run(tmp_path / "m.csv", splits=("val", "test", "prod"), unlabeled=("prod",), n=240, seed=7)
    code, out, err = run_cli(capsys, "monitor", path, *VALUES, "--chunks", "4")
    assert code == 0, err
    run = vc.load_runs([str(path)]).models["m"]
    policy = vc.fit_policy("threshold", vc.presort(run.splits["val"]), vc.UseCase(1, 0, -4))
    watched = vc.monitoring.monitor_bands(
        run.splits["val"], run.splits["prod"], policy, vc.UseCase(1, 0, -4), n_chunks=4
    )
    checked = vc.monitoring.monitor_bands(
        run.splits["val"], run.splits["test"], policy, vc.UseCase(1, 0, -4), n_chunks=4
    )
    assert "watching split 'prod'" in out
    assert f"estimate calibrated with: {watched.calibration_text}" in out
    assert f"alerts: {watched.n_alerts} of 4 chunks" in out and f"drift:  {watched.n_drift} of 4 chunks" in out
    for row in watched.frame.itertuples():
        est = vc.wording.amount  # as on the Monitor page
        assert est(row.estimated_value_per_item) in out and f"[{est(row.band_low)}, {est(row.band_high)}]" in out
    covered = int(checked.frame["covered"].astype(bool).sum())
    assert f"back-test on 'test': the 95% band covered the realised value in {covered} of 4 chunks" in out


def test_cli_monitor_refuses_a_missing_split_cleanly(capsys, tmp_path):
    path = write_run(tmp_path / "m.csv", n=60)
    code, out, err = run_cli(capsys, "monitor", path, *VALUES, "--split", "nope")
    assert_clean_error(code, out, err, "has no split 'nope'")


@pytest.mark.heavy
def test_the_monitoring_reference_in_the_json_reproduces_the_alert_band(models, capsys, runs_dir, tmp_path):
    document, _ = vc.policy_json.build_policy_document(models, vc.UseCase(1, 0, -4), monitoring=True)
    data = _strict_round_trip(document)
    for item, entry in zip(data["models"], document.entries):
        record = item["monitoring"]
        run = models[entry.model]
        bands = vc.monitoring.monitor_bands(
            run.splits["val"], run.splits["test"], entry.policy, vc.UseCase(1, 0, -4), n_chunks=3
        )
        row = bands.frame.iloc[0]
        # the serving rule counts the reference's own error whole: never narrower than the page's band
        half = record["alert_z"] * np.sqrt(record["reference_sd_per_item"] ** 2 / row["n"]
                                           + record["reference_mean_sd"] ** 2)
        centre = (row["reference_low"] + row["reference_high"]) / 2
        assert record["reference_value_per_item"] == pytest.approx(centre)
        assert half >= (row["reference_high"] - row["reference_low"]) / 2 * (1 - 1e-9)
        assert half > record["alert_z"] * record["reference_sd_per_item"] / np.sqrt(row["n"])
        assert record["estimation_calibration"]["method"] == "isotonic"
    old = document.to_dict()
    old["schema_version"] = 1
    with pytest.raises(ValueError, match="monitoring need schema_version 2"):
        vc.policy_json.PolicyDocument.from_dict(old)
    out_json = tmp_path / "mon.json"
    code, out, err = run_cli(capsys, "report", runs_dir, *VALUES, "--monitoring", "--json", out_json)
    assert code == 0, err
    assert "monitoring reference  split 'val'" in out
    assert json.loads(out_json.read_text())["models"][0]["monitoring"]["reference_split"] == "val"
