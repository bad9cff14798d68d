"""inspect_ai logs read as runs (valuecore._io.inspect_logs), written by inspect_ai itself with its mock model.

inspect_ai is an optional extra for users (requirements-inspect.txt) that requirements-dev.txt installs, so the
suite and CI run these tests; with REQUIRE_ENGINES=1 (CI) a missing inspect_ai fails them instead of skipping.
No network: the mock model answers from a list, and its token count (tiktoken would download an encoding)
is estimated from the text length.
"""

from __future__ import annotations

import json
import math

import pytest

from helpers.inspect_logs import letter_output, text_output, write_choice_log, write_log  # first: needs inspect_ai

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import match
from inspect_ai.solver import generate

from valuecore._cli.commands import main
from valuecore._io.inspect_logs import read_inspect
from valuecore._io.lm_logs import GENERATED_CLASSES, LmLogOptions, abstention_counts
from valuecore._model.predictions import MODEL_ABSTAINED


def test_multiple_choice_letters_become_probabilities_and_idk_an_abstention(tmp_path):
    model = "mockllm/model"
    probs = {"A": 0.1, "B": 0.6, "C": 0.2, "D": 0.1}
    write_choice_log(tmp_path, model, [
        letter_output(model, "B", probs),                                   # right at 0.6
        letter_output(model, "C", {"A": 0.1, "B": 0.3, "C": 0.5, "D": 0.1}),  # wrong at 0.5
        letter_output(model, "D", {"A": 0.1, "B": 0.2, "C": 0.1, "D": 0.6}),  # "I don't know": declined
    ])
    report = read_inspect(tmp_path, LmLogOptions.parse("confidence=logprobs,idk=I don't know"))
    assert report.problems == ()
    predictions = report.models[model].splits["arith"]
    assert predictions.classes == ("0", "1", "2", "3")
    assert predictions.correct.tolist() == [True, False, True]  # declined, yet B (its next best) was right
    assert predictions.confidence[:2].tolist() == pytest.approx([0.6, 0.5], abs=1e-12)
    assert predictions.model_abstained.tolist() == [False, False, True]
    assert predictions.confidence[2] == MODEL_ABSTAINED


def test_a_declined_question_whose_best_other_letter_was_right_is_a_false_abstention(tmp_path):
    """As for lm-evaluation-harness: a decline's prediction is the most probable of the other letters."""
    model = "mockllm/model"
    write_choice_log(tmp_path, model, [
        letter_output(model, "D", {"A": 0.1, "B": 0.3, "C": 0.1, "D": 0.5}),  # declined; B (right) next: false
        letter_output(model, "D", {"A": 0.1, "B": 0.1, "C": 0.3, "D": 0.5}),  # declined; C (wrong) next
        letter_output(model, "B", {"A": 0.1, "B": 0.7, "C": 0.1, "D": 0.1}),  # answered, right
    ])
    predictions = read_inspect(tmp_path, LmLogOptions.parse("confidence=logprobs,idk=I don't know")) \
        .models[model].splits["arith"]
    assert predictions.model_abstained.tolist() == [True, True, False]
    assert predictions.correct.tolist() == [True, False, True]
    assert abstention_counts(predictions) == (3, 2, 1)


def test_generated_answers_with_a_refusal_and_sequence_probability(tmp_path):
    model = "mockllm/model"
    outputs = [text_output(model, "4", [math.log(0.8)]), text_output(model, "5", [math.log(0.5), math.log(0.9)]),
               text_output(model, "I cannot answer", [math.log(0.9)])]
    dataset = [Sample(input=f"q{i}", target="4", id=f"g{i}") for i in range(3)]
    write_log(tmp_path, Task(dataset=dataset, solver=generate(), scorer=match(), name="gen"), model, outputs)
    report = read_inspect(tmp_path, LmLogOptions.parse("confidence=logprobs,refusal=I cannot answer"))
    predictions = report.models[model].splits["gen"]
    assert predictions.classes == GENERATED_CLASSES
    assert predictions.correct.tolist() == [True, False, False]
    assert predictions.confidence[:2].tolist() == pytest.approx([0.8, 0.45], abs=1e-12)
    assert predictions.model_abstained.tolist() == [False, False, True]


def test_missing_logprobs_name_the_log_sample_and_field(tmp_path):
    model = "mockllm/model"
    write_choice_log(tmp_path, model, [ModelOutput.from_content(model=model, content="ANSWER: B")])
    report = read_inspect(tmp_path, LmLogOptions.parse("confidence=logprobs"))
    assert report.models == {}
    [problem] = report.problems
    assert ".eval" in problem.file and "sample 1" in problem.message and "logprobs" in problem.message


def test_the_cli_reads_inspect_logs_with_the_models_own_abstentions(tmp_path, capsys):
    for model, answers in (("mockllm/careful", ["B", "D", "B", "D"]), ("mockllm/bold", ["B", "C", "B", "A"])):
        outputs = [letter_output(model, a, {"A": 0.1, "B": 0.1, "C": 0.1, "D": 0.1, a: 0.7}) for a in answers]
        write_choice_log(tmp_path / model.split("/")[1], model, outputs)
    sources = [f"inspect[confidence=logprobs,idk=I don't know]:{tmp_path / name}" for name in ("careful", "bold")]
    code = main(["report", *sources, "--omega", "10", "--policy", "threshold", "--json", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "model mockllm/careful, split arith: the model itself declined 2 of 4 questions" in err
    entries = {e["model"]: e["evaluation"] for e in json.loads((tmp_path / "p.json").read_text())["models"]}
    # careful: two right at 0.7, two declined: 2/4. bold: two right, two wrong, all at 0.7: best is to hand over.
    assert entries["mockllm/careful"]["value_per_item"] == pytest.approx(0.5)
    assert entries["mockllm/careful"]["n_abstain_by_model"] == 2
    assert entries["mockllm/bold"]["value_per_item"] == pytest.approx(0.0)
