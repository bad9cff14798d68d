"""inspect_ai logs read as runs (valuecore._io.inspect_logs), written by inspect_ai itself with its mock model.

inspect_ai is an optional extra for users (requirements-inspect.txt) that requirements-dev.txt installs, so the
suite and CI run these tests; with REQUIRE_ENGINES=1 (CI) a missing inspect_ai fails them instead of skipping.
No network: the mock model answers from a list, and its token count (tiktoken would download an encoding)
is estimated from the text length.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from helpers.inspect_logs import letter_output, text_output, write_choice_log, write_log  # first: needs inspect_ai

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, Logprob, Logprobs, ModelOutput, TopLogprob
from inspect_ai.scorer import match
from inspect_ai.solver import generate

from valuecore._cli.commands import main
from valuecore._io.inspect_logs import read_inspect
from valuecore._io.lm_logs import GENERATED_CLASSES, LmLogOptions, abstention_counts, read_lmeval
from valuecore._model.predictions import MODEL_ABSTAINED

from lmeval_layout import choice_sample, save_samples


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
    # Over the real choices only, renormalised: "I don't know" (D, 0.1) leaves the total, 0.9.
    assert predictions.confidence[:2].tolist() == pytest.approx([0.6 / 0.9, 0.5 / 0.9], abs=1e-12)
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


def _empty_output(model: str, letter_probs: dict[str, float] | None = None) -> ModelOutput:
    """An empty completion (inspect scores it NOANSWER, answer ""), with log-probabilities at a letter token if
    given: a model that named a letter there and then wrote nothing."""
    logprobs = None
    if letter_probs:
        tops = [TopLogprob(token=f" {k}", logprob=math.log(p)) for k, p in letter_probs.items()]
        top = max(letter_probs, key=letter_probs.get)
        logprobs = Logprobs(content=[Logprob(token=f" {top}", logprob=math.log(letter_probs[top]), top_logprobs=tops)])
    message = ChatMessageAssistant(content="", model=model)
    return ModelOutput(model=model, choices=[ChatCompletionChoice(message=message, logprobs=logprobs)])


def test_no_answer_is_the_models_abstention_with_no_top_choice_unless_logprobs_name_one(tmp_path):
    """An empty answer once read as letter A: a question whose right answer is A became a false abstention."""
    model = "mockllm/model"
    write_choice_log(tmp_path, model, [
        _empty_output(model),                                                   # no letter anywhere
        _empty_output(model, {"A": 0.3, "B": 0.1, "C": 0.1, "D": 0.5}),         # D, then A (right) most probable
        letter_output(model, "A", {"A": 0.7, "B": 0.1, "C": 0.1, "D": 0.1}),    # answered, right
    ], target="A")
    [log] = [read_eval_log(str(file)) for file in tmp_path.iterdir()]
    assert [(s.scores["choice"].value, s.scores["choice"].answer) for s in log.samples[:2]] == [("N", "")] * 2
    for options, false in (("confidence=logprobs,idk=I don't know", 1), ("confidence=none,idk=I don't know", 0),
                           ("confidence=none", 0)):
        predictions = read_inspect(tmp_path, LmLogOptions.parse(options)).models[model].splits["arith"]
        assert predictions.model_abstained.tolist() == [True, True, False], options
        assert predictions.correct.tolist() == [False, bool(false), True], options
        assert abstention_counts(predictions) == (3, 2, false), options


def test_an_answer_the_scorer_read_no_letter_from_is_an_error_not_letter_a(tmp_path):
    """inspect scores an output without "ANSWER: X" wrong with an empty answer: no choice to act on or count."""
    model = "mockllm/model"
    write_choice_log(tmp_path, model, [ModelOutput.from_content(model=model, content="four, I think")], target="A")
    report = read_inspect(tmp_path, LmLogOptions.parse("confidence=none"))
    assert report.models == {}
    [problem] = report.problems
    assert "sample 1" in problem.message and "scores.choice.answer" in problem.message, problem.message
    assert "no choice letter" in problem.message, problem.message


def test_the_same_logprobs_give_the_same_confidence_as_lm_evaluation_harness(tmp_path):
    """Both readers leave "I don't know" out of the probability of an answer, and of a decline's best choice."""
    model = "mockllm/model"
    questions = [("B", {"A": 0.1, "B": 0.6, "C": 0.2, "D": 0.1}),   # answered B: 0.6 / 0.9
                 ("C", {"A": 0.05, "B": 0.15, "C": 0.45, "D": 0.35}),  # answered C: 0.45 / 0.65
                 ("D", {"A": 0.1, "B": 0.3, "C": 0.1, "D": 0.5})]   # declined; B next: a false abstention
    write_choice_log(tmp_path / "inspect", model, [letter_output(model, a, probs) for a, probs in questions])
    choices = ["3", "4", "5", "I don't know"]  # as helpers.inspect_logs.CHOICES, the right answer B (1)
    save_samples(tmp_path / "lmeval", "model", "arith", [
        choice_sample(i, {"q": f"question {i}"}, 1, f"question {i}", choices, [math.log(p) for p in probs.values()])
        for i, (_, probs) in enumerate(questions)])
    options = LmLogOptions.parse("confidence=logprobs,idk=I don't know")
    read = read_inspect(tmp_path / "inspect", options).models[model].splits["arith"]
    harness = read_lmeval(tmp_path / "lmeval" / "model", options).models["model"].splits["arith"]
    assert read.confidence[:2].tolist() == pytest.approx([0.6 / 0.9, 0.45 / 0.65], abs=1e-12)
    assert read.confidence.tolist() == pytest.approx(harness.confidence.tolist(), abs=1e-12)
    assert read.y_pred.tolist() == harness.y_pred.tolist() == [1, 2, 1]
    assert read.model_abstained.tolist() == harness.model_abstained.tolist() == [False, False, True]
    assert abstention_counts(read) == abstention_counts(harness) == (3, 1, 1)


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


def test_log_probabilities_that_are_no_probability_name_the_log_sample_and_field(tmp_path, capsys):
    """A completion's log-probabilities summing above 709 escaped as 'unexpected failure (OverflowError)', and a
    sum above 0 or NaN as a raw 'confidence must lie in [0, 1]' naming no log and no sample."""
    model = "mockllm/model"
    sums = [1000.0, 0.5, math.nan, math.log(0.5)]
    outputs = [text_output(model, "4", [v]) for v in sums]
    dataset = [Sample(input=f"q{i}", target="4", id=f"g{i}") for i in range(len(sums))]
    write_log(tmp_path / "gen", Task(dataset=dataset, solver=generate(), scorer=match(), name="gen"), model, outputs)
    letters = {"A": 0.1, "B": 0.6, "C": 0.2, "D": 0.1}
    odd = [letter_output(model, "B", letters) for _ in range(3)]
    odd[0].choices[0].logprobs.content[-1].top_logprobs[1].logprob = math.nan
    for top in odd[1].choices[0].logprobs.content[-1].top_logprobs:
        top.logprob = -math.inf
    write_choice_log(tmp_path / "choice", model, odd)
    for folder, bad in (("gen", (1, 2, 3)), ("choice", (1, 2))):
        report = read_inspect(tmp_path / folder, LmLogOptions.parse("confidence=logprobs"))
        assert report.models == {}
        named = [int(n) for p in report.problems for n in re.findall(r"\d+", p.message.split(":")[0])]
        assert sorted(named) == list(bad), report.problems
        assert all("field output.choices[0].logprobs" in p.message for p in report.problems)
        assert main(["validate", f"inspect[confidence=logprobs]:{tmp_path / folder}"]) == 2
        assert "unexpected failure" not in capsys.readouterr().err


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
