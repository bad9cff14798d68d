"""lm-evaluation-harness logs through the command line (lmeval:PATH sources), checked against a hand computation.

Two models answer the same eight questions (choices A, B, C and "I don't know"; omega 10: a wrong answer costs
ten times a declined one). By hand, with the confidence of each answer the model gave:

alpha: right at 0.9; right and wrong at 0.8; right, right at 0.7; wrong at 0.6; it declines two questions (on
one of them its best answer was right: a false abstention). Accepting the k most confident groups gives
(right, wrong) = (0, 0), (1, 0), (2, 1), (4, 1), (4, 2); the declined two are always hand-offs, in N = 8.
beta: right six times at 0.6, wrong twice at 0.55: (0, 0), (6, 0), (6, 2).

Value per item (right - omega * wrong) / 8 at the best threshold:
omega 0: alpha 4/8, beta 6/8; omega 1: alpha 3/8, beta 6/8; omega 2: alpha 2/8, beta 6/8;
omega 10: alpha 1/8 (threshold 0.9, one answer acted on, seven handed over, two of them by the model),
beta 6/8 (threshold 0.6). Beta is the better model at every omega; with eight questions no model is shown
to beat handing everything over, so the recommendation is "not yet", naming beta as the one to settle.
"""

from __future__ import annotations

import csv
import html
import json
import math
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from valuecore._cli.commands import main
from valuecore._pipeline.policy_json import policy_schema

from lmeval_layout import HOSTILE, choice_sample, save_hostile_samples, save_samples

CHOICES = ["A", "B", "C", "I don't know"]
GOLD = [0, 1, 2, 0, 1, 2, 0, 1]
# (probabilities of A, B, C among the answers, probability of "I don't know" among all four choices)
ALPHA = [([0.9, 0.05, 0.05], 0.01), ([0.1, 0.8, 0.1], 0.01), ([0.8, 0.1, 0.1], 0.01), ([0.7, 0.2, 0.1], 0.01),
         ([0.6, 0.3, 0.1], 0.01), ([0.1, 0.2, 0.7], 0.01), ([0.5, 0.3, 0.2], 0.6), ([0.5, 0.25, 0.25], 0.6)]


def _beta(gold: int, index: int):
    if index < 6:  # right at 0.6
        return [0.6 if k == gold else 0.2 for k in range(3)], 0.01
    wrong = (gold + 1) % 3  # wrong at 0.55
    return [0.55 if k == wrong else 0.225 for k in range(3)], 0.01


def _write(root, model, answers):
    samples = []
    for doc_id, (gold, (probs, idk)) in enumerate(zip(GOLD, answers)):
        lls = [math.log((1 - idk) * p) for p in probs] + [math.log(idk)]
        doc = {"question": f"question {doc_id}", "subject": "demo", "choices": CHOICES, "answer": gold}
        samples.append(choice_sample(doc_id, doc, gold, f"question {doc_id}\nAnswer:", CHOICES, lls))
    save_samples(root, model, "qa_demo", samples)
    return f"lmeval[idk=I don't know]:{root / model}"


@pytest.fixture()
def sources(tmp_path):
    return [_write(tmp_path, "alpha", ALPHA), _write(tmp_path, "beta", [_beta(g, i) for i, g in enumerate(GOLD)])]


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_report_json_matches_the_hand_computation(sources, tmp_path, capsys):
    out_json = tmp_path / "policy.json"
    code, out, err = run_cli(capsys, "report", *sources, "--omega", "10", "--policy", "threshold",
                             "--json", out_json)
    assert code == 0, err
    assert "model alpha, split qa_demo: the model itself declined 2 of 8 questions" in err
    assert "of them 1 false abstention (" in err
    assert "(1 correct, 0 wrong, 7 abstained, 2 of them declined by the model itself, of those 1 false abstention)" \
        in out
    document = json.loads(out_json.read_text())
    Draft202012Validator(policy_schema()).validate(document)
    entries = {entry["model"]: entry for entry in document["models"]}
    alpha, beta = entries["alpha"], entries["beta"]
    assert alpha["policy"]["threshold"] == pytest.approx(0.9, abs=1e-9)
    assert alpha["evaluation"]["value_total"] == pytest.approx(1.0)
    assert alpha["evaluation"]["value_per_item"] == pytest.approx(1 / 8)
    assert (alpha["evaluation"]["n_correct"], alpha["evaluation"]["n_wrong"], alpha["evaluation"]["n_abstain"]) \
        == (1, 0, 7)
    assert (alpha["evaluation"]["n_abstain_by_model"], alpha["evaluation"]["n_false_abstentions"]) == (2, 1)
    assert beta["policy"]["threshold"] == pytest.approx(0.6, abs=1e-9)
    assert beta["evaluation"]["value_per_item"] == pytest.approx(6 / 8)
    assert "n_abstain_by_model" not in beta["evaluation"]


def test_recommendation_is_not_yet_and_names_beta(sources, tmp_path, capsys):
    out_json = tmp_path / "policy.json"
    code, out, err = run_cli(capsys, "report", *sources, "--omega", "10", "--json", out_json)
    assert code == 0, err
    recommendation = json.loads(out_json.read_text())["recommendation"]
    assert recommendation["status"] == "not_yet"
    assert recommendation["would_settle"]["model"] == "beta"


def test_value_curves_across_models_match_the_hand_computation(sources, tmp_path, capsys):
    out_csv = tmp_path / "voc.csv"
    code, out, err = run_cli(capsys, "voc", *sources, "--omega-max", "10", "--points", "11", "--csv", out_csv)
    assert code == 0, err
    rows = list(csv.DictReader(out_csv.open()))
    value_column = next(c for c in rows[0] if c.startswith("value"))
    curve = {(row["model"], float(row["omega"])): float(row[value_column]) for row in rows}
    expected = {"alpha": {0: 4 / 8, 1: 3 / 8, 2: 2 / 8, 10: 1 / 8}, "beta": {0: 6 / 8, 1: 6 / 8, 2: 6 / 8, 10: 6 / 8}}
    for model, points in expected.items():
        for omega, value in points.items():
            assert curve[(model, float(omega))] == pytest.approx(value, abs=1e-12), (model, omega)


def test_apply_reads_the_logs_too(sources, tmp_path, capsys):
    out_json = tmp_path / "policy.json"
    assert run_cli(capsys, "report", *sources, "--omega", "10", "--policy", "threshold", "--json", out_json)[0] == 0
    code, out, err = run_cli(capsys, "apply", out_json, *sources, "--json", tmp_path / "applied.json")
    assert code == 0, err
    applied = {entry["model"]: entry["evaluation"] for entry in json.loads((tmp_path / "applied.json").read_text())
               ["models"]}
    assert applied["alpha"]["value_per_item"] == pytest.approx(1 / 8)
    assert (applied["alpha"]["n_abstain_by_model"], applied["alpha"]["n_false_abstentions"]) == (2, 1)
    assert applied["beta"]["value_per_item"] == pytest.approx(6 / 8)


def test_a_bad_log_is_a_clear_usage_error(tmp_path, capsys):
    folder = tmp_path / "gamma"
    folder.mkdir()
    (folder / "samples_qa_2026-11-28T10-11-12.123456.jsonl").write_text('{"doc_id": 0, "target": 0}\n')
    code, out, err = run_cli(capsys, "report", f"lmeval:{folder}", "--omega", "10")
    assert code == 2 and "Traceback" not in err
    assert "samples_qa_2026-11-28T10-11-12.123456.jsonl" in err and "line 1" in err and "filtered_resps" in err
    code, out, err = run_cli(capsys, "report", f"lmeval[treshold=1]:{folder}", "--omega", "10")
    assert code == 2 and "unknown log option" in err


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_log_is_an_error_naming_its_line_and_the_other_models_load(sources, tmp_path, case, capsys):
    """These escaped as 'unexpected failure (RecursionError ...)' and raw Python text naming no file."""
    file = save_hostile_samples(tmp_path / "hostile", "gamma", case)
    field, words = HOSTILE[case]
    code, out, err = run_cli(capsys, "validate", f"lmeval:{file.parent}", *sources)
    assert code == 2 and "unexpected failure" not in err and "Traceback" not in err
    [error] = [line for line in (out + err).splitlines() if line.strip().startswith("error:")]
    assert file.name in error and f"line 1: field {field} " in error and words in error, error
    assert "model alpha " in out and "model beta " in out


def test_the_docs_example_at_omega_9(sources, tmp_path, capsys):
    """docs/language-models.md: a declined question costs 1, a wrong answer 10, a right one nothing."""
    out_json = tmp_path / "policy.json"
    code, out, err = run_cli(capsys, "report", *sources, "--v-correct", "0", "--v-abstain", "-1", "--v-wrong", "-10",
                             "--policy", "threshold", "--json", out_json)
    assert code == 0, err
    entries = {e["model"]: e for e in json.loads(out_json.read_text())["models"]}
    assert entries["alpha"]["policy"]["threshold"] == pytest.approx(0.9, abs=1e-9)
    assert entries["alpha"]["evaluation"]["value_total"] == pytest.approx(-7.0)
    assert entries["beta"]["evaluation"]["value_total"] == pytest.approx(-2.0)
    code, out, err = run_cli(capsys, "report", *sources, "--v-correct", "0", "--v-abstain", "-1", "--v-wrong", "-10",
                             "--json", out_json)
    document = json.loads(out_json.read_text())
    assert document["recommendation"]["status"] == "not_yet"
    assert document["recommendation"]["would_settle"]["model"] == "beta"
    alpha = next(e for e in document["models"] if e["model"] == "alpha")
    assert alpha["policy"]["kind"] == "class_thresholds"
    assert alpha["evaluation"]["value_total"] == pytest.approx(-5.0)


def test_validate_counts_the_models_own_abstentions(sources, capsys):
    code, out, err = run_cli(capsys, "validate", *sources)
    assert code == 0, err
    assert "split qa_demo: 8 rows, labelled, accuracy 62.5%, the model declined 2 (1 false abstention)" in out


def test_an_output_never_replaces_a_log_it_reads(sources, capsys):
    log_file = next((Path(sources[0].split(":", 1)[1])).glob("samples_*.jsonl"))
    before = log_file.read_bytes()
    code, out, err = run_cli(capsys, "report", *sources, "--omega", "10", "--json", log_file)
    assert code == 2 and "writing it would destroy it" in err
    assert log_file.read_bytes() == before


def test_the_html_report_tells_the_models_own_declines_from_the_thresholds_hand_offs(sources, tmp_path, capsys):
    out_html = tmp_path / "report.html"
    code, out, err = run_cli(capsys, "report", *sources, "--omega", "10", "--policy", "threshold",
                             "--html", out_html)
    assert code == 0, err
    text = html.unescape(re.sub(r"<[^>]+>", " ", out_html.read_text(encoding="utf-8")))
    # alpha at threshold 0.9 (the hand computation above): 7 handed over, 2 by the model itself, 1 false.
    assert ("alpha: Of 7 items handed over, 2 were declined by the model itself ('I don't know': handed over "
            "whatever the threshold) and 5 by the threshold; 1 of the model's declines was a false abstention "
            "(its top choice was right).") in " ".join(text.split())
    assert "beta: Of" not in text  # beta declined nothing itself
