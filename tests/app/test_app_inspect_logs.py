"""inspect_ai logs opened in the dashboard (issue 34), written by inspect_ai itself and driven through AppTest.

An operator's server folder holds the logs of one evaluation, two models (inspect_ai writes one file per task
and model); the sidebar's server-folder source reads it as the command line does, ``inspect[options]:FOLDER``.
The Runs page counts the model's own "I don't know" and the false abstentions among them as the core does,
and the Value page tunes the threshold that ``report`` tunes on the same logs.
"""

from __future__ import annotations

import json
import re

import pytest

from helpers.inspect_logs import letter_output, write_choice_log  # first: needs inspect_ai

import valuecore as vc
from dashboard import serverfiles
from helpers.app import assert_clean, model_declines_table, start, value_table
from valuecore._cli.commands import main

OPTIONS = "inspect[confidence=logprobs,idk=I don't know]"
# Per question: the letter answered and the probabilities over A-D at its token (the right answer is B).
CAREFUL = [("B", (0.02, 0.9, 0.05, 0.03)), ("B", (0.1, 0.8, 0.05, 0.05)), ("C", (0.1, 0.15, 0.7, 0.05)),
           ("B", (0.2, 0.6, 0.1, 0.1)), ("A", (0.55, 0.3, 0.1, 0.05)), ("B", (0.2, 0.5, 0.2, 0.1)),
           ("D", (0.05, 0.3, 0.05, 0.6)),   # declined, and B (right) was its next best: a false abstention
           ("D", (0.1, 0.05, 0.25, 0.6))]   # declined, and C (wrong) was its next best
BOLD = [("B", (0.01, 0.97, 0.01, 0.01)), ("C", (0.05, 0.1, 0.8, 0.05)), ("B", (0.1, 0.75, 0.1, 0.05)),
        ("B", (0.2, 0.65, 0.1, 0.05)), ("A", (0.6, 0.3, 0.05, 0.05)), ("B", (0.3, 0.55, 0.1, 0.05)),
        ("C", (0.2, 0.3, 0.45, 0.05)), ("B", (0.3, 0.4, 0.25, 0.05))]


def _write(folder, model: str, answers) -> None:
    outputs = [letter_output(model, letter, dict(zip("ABCD", probs))) for letter, probs in answers]
    write_choice_log(folder, model, outputs)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """The operator's folder, written once for the module (inspect_ai's evaluations take seconds each)."""
    root = tmp_path_factory.mktemp("operator")
    _write(root / "logs", "mockllm/careful", CAREFUL)
    _write(root / "logs", "mockllm/bold", BOLD)
    return root


@pytest.fixture
def root(logs, monkeypatch):
    monkeypatch.setenv(serverfiles.ENV_VAR, str(logs))
    return logs


def test_the_runs_page_counts_the_models_own_declines_and_false_abstentions(root):
    at = start("pages/runs.py", src=f"folder:{OPTIONS}:logs")
    assert_clean(at)
    splits = model_declines_table(at)
    assert set(splits.index) == {"mockllm/careful", "mockllm/bold"}
    report = vc.runs.read_evaluation_log(f"{OPTIONS}:{root / 'logs'}")
    for model in ("mockllm/careful", "mockllm/bold"):
        items, declined, false = vc.runs.abstention_counts(report.models[model].splits["arith"])
        assert splits.loc[model, "declined by the model"] == declined
        assert splits.loc[model, "false abstentions"] == false
    assert vc.runs.abstention_counts(report.models["mockllm/careful"].splits["arith"]) == (8, 2, 1)
    notes = [re.sub(r"\\(.)", r"\1", c.value) for c in at.caption if "declined" in c.value]  # markdown unescaped
    assert len(notes) == 1 and notes[0].startswith("mockllm/careful declined 2 of 8 items on 'arith' itself"), notes
    assert "; of them 1 false abstention (" in notes[0], notes
    shown = "\n".join(str(e.value) for e in [*at.caption, *at.markdown, *at.sidebar.caption])
    assert str(root) not in shown


def test_the_value_page_tunes_the_threshold_report_tunes(root, tmp_path, capsys):
    policy_file = tmp_path / "policy.json"
    code = main(["report", f"{OPTIONS}:{root / 'logs'}", "--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-4",
                 "--policy", "threshold", "--json", str(policy_file)])
    assert code == 0, capsys.readouterr().err
    tuned = {entry["model"]: entry["policy"]["threshold"] for entry in json.loads(policy_file.read_text())["models"]}
    assert set(tuned) == {"mockllm/careful", "mockllm/bold"}

    at = start("pages/value.py", src=f"folder:{OPTIONS}:logs", rule="threshold")
    assert_clean(at)
    table = value_table(at)
    report = vc.runs.read_evaluation_log(f"{OPTIONS}:{root / 'logs'}")
    for model, threshold in tuned.items():
        confidence = report.models[model].splits["arith"].confidence
        # The page prints the fewest digits that act on the same questions as the exact threshold.
        assert table.loc[model, "Threshold"] == float(vc.wording.threshold(threshold, confidence))
