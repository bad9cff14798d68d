"""lm-evaluation-harness per-sample logs read as runs (valuecore._io.lm_logs), on files laid out as its writer
lays them out (tests/io/lmeval_layout.py)."""

from __future__ import annotations

import json
import math
import re
import warnings

import numpy as np
import pytest

from valuecore._io.lm_logs import GENERATED_CLASSES, LmLogOptions, abstention_counts, read_lmeval
from valuecore._model.predictions import MODEL_ABSTAINED

from lmeval_layout import HOSTILE, choice_sample, generated_sample, save_hostile_samples, save_samples

CHOICES = ["A", "B", "C", "I don't know"]
IDK = LmLogOptions.parse("idk=I don't know")


def _lls(answer_probs, idk_prob):
    """Log-likelihoods whose softmax over all four choices is (1 - idk_prob) * answer_probs, then idk_prob."""
    return [math.log((1 - idk_prob) * p) for p in answer_probs] + [math.log(idk_prob)]


def _question(doc_id, gold, answer_probs, idk_prob=0.01, subject="anatomy"):
    doc = {"question": f"question {doc_id}", "subject": subject, "choices": CHOICES, "answer": gold}
    return choice_sample(doc_id, doc, gold, f"question {doc_id}\nAnswer:", CHOICES, _lls(answer_probs, idk_prob))


def test_choices_become_softmax_probabilities_and_tasks_splits(tmp_path):
    save_samples(tmp_path, "org__model-x", "mmlu_anatomy", [
        _question(0, 0, [0.9, 0.05, 0.05]), _question(1, 2, [0.6, 0.3, 0.1])])
    save_samples(tmp_path, "org__model-x", "mmlu_astronomy", [_question(0, 1, [0.2, 0.7, 0.1], subject="astronomy")])
    report = read_lmeval(tmp_path / "org__model-x")
    assert report.problems == ()
    run = report.models["org__model-x"]
    assert run.classes == ("0", "1", "2", "3")
    assert list(run.splits) == ["mmlu_anatomy", "mmlu_astronomy"]
    anatomy = run.splits["mmlu_anatomy"]
    # Without an "I don't know" option the fourth choice is a choice like the others: 0.99 * p of the mass.
    assert anatomy.confidence == pytest.approx([0.99 * 0.9, 0.99 * 0.6], abs=1e-12)
    assert anatomy.y_pred.tolist() == [0, 0] and anatomy.y_true.tolist() == [0, 2]
    assert anatomy.ids.tolist() == ["mmlu_anatomy/0", "mmlu_anatomy/1"]
    assert not anatomy.has_model_abstentions


def test_softmax_matches_a_hand_computation_on_raw_loglikelihoods(tmp_path):
    lls = [-1.25, -0.5, -3.0]
    doc = {"q": "?"}
    save_samples(tmp_path, "m", "task", [choice_sample(0, doc, 1, "ctx", ["x", "y", "z"], lls)])
    predictions = read_lmeval(tmp_path / "m").models["m"].splits["task"]
    expected = math.exp(-0.5) / sum(math.exp(v) for v in lls)
    assert predictions.confidence[0] == pytest.approx(expected, rel=1e-12)
    assert predictions.correct.tolist() == [True]


def test_acc_norm_divides_by_the_choice_length(tmp_path):
    # Raw log-likelihood prefers the short choice; per character the long one wins (the harness's acc_norm).
    choices = ["no", "a much longer answer"]
    lls = [-3.0, -10.0]
    save_samples(tmp_path, "m", "task", [choice_sample(0, {"q": "?"}, 1, "ctx", choices, lls)])
    raw = read_lmeval(tmp_path / "m").models["m"].splits["task"]
    norm = read_lmeval(tmp_path / "m", LmLogOptions.parse("scoring=acc_norm")).models["m"].splits["task"]
    assert raw.y_pred.tolist() == [0] and norm.y_pred.tolist() == [1]
    scores = np.array([-3.0 / 2, -10.0 / 20])
    assert norm.confidence[0] == pytest.approx(np.exp(scores).max() / np.exp(scores).sum(), rel=1e-12)


def test_i_dont_know_is_the_models_own_abstention_and_false_ones_are_counted(tmp_path):
    save_samples(tmp_path, "m", "qa", [
        _question(0, 0, [0.9, 0.05, 0.05]),
        _question(1, 0, [0.5, 0.3, 0.2], idk_prob=0.6),  # declined; its top answer A was right: a false abstention
        _question(2, 1, [0.5, 0.25, 0.25], idk_prob=0.6),  # declined; A was wrong
    ])
    predictions = read_lmeval(tmp_path / "m", IDK).models["m"].splits["qa"]
    assert predictions.model_abstained.tolist() == [False, True, True]
    assert predictions.confidence[0] == pytest.approx(0.9, abs=1e-12)  # over the three answers, without IDK
    assert (predictions.confidence[1:] == MODEL_ABSTAINED).all()
    assert predictions.y_pred.tolist() == [0, 0, 0]  # the declined ones keep their best answer
    assert abstention_counts(predictions) == (3.0, 2.0, 1.0)


def test_a_task_with_several_subjects_splits_by_a_doc_field(tmp_path):
    samples = [_question(i, i % 3, [0.5, 0.3, 0.2], subject=s) for i, s in enumerate(["law", "math", "law", "art"])]
    save_samples(tmp_path, "m", "mmlu_pro", samples)
    run = read_lmeval(tmp_path / "m", LmLogOptions.parse("split=doc.subject")).models["m"]
    assert {k: v.n for k, v in run.splits.items()} == {"law": 2, "math": 1, "art": 1}


def test_val_test_halves_hold_the_same_questions_for_every_model(tmp_path):
    for model, probs in (("a", [0.5, 0.3, 0.2]), ("b", [0.2, 0.3, 0.5])):
        save_samples(tmp_path, model, "qa", [_question(i, i % 3, probs) for i in range(40)])
    options = LmLogOptions.parse("split=val-test")
    runs = [read_lmeval(tmp_path / m, options).models[m] for m in ("a", "b")]
    for split in ("val", "test"):
        assert runs[0].splits[split].ids.tolist() == runs[1].splits[split].ids.tolist()
        assert 5 < runs[0].splits[split].n < 35


def test_generated_answers_with_a_logged_confidence_and_a_refusal(tmp_path):
    extra = [{"verbal_confidence": 0.9}, {"verbal_confidence": 0.4}, {"verbal_confidence": 0.7}]
    samples = [
        generated_sample(0, {"question": "capital of France?"}, "Paris", "Q", "The answer is Paris", "Paris",
                         extra=extra[0]),
        generated_sample(1, {"question": "2+2?"}, "4", "Q", "The answer is 5", "5", extra=extra[1]),
        generated_sample(2, {"question": "?"}, "x", "Q", "I cannot answer that", "I cannot answer that",
                         extra=extra[2]),
    ]
    save_samples(tmp_path, "m", "triviaqa", samples)
    options = LmLogOptions.parse("confidence=verbal_confidence,refusal=I cannot answer that")
    predictions = read_lmeval(tmp_path / "m", options).models["m"].splits["triviaqa"]
    assert predictions.classes == GENERATED_CLASSES
    assert predictions.correct.tolist() == [True, False, False]
    assert predictions.confidence.tolist() == [0.9, 0.4, MODEL_ABSTAINED]
    assert predictions.model_abstained.tolist() == [False, False, True]


def _only_error(report):
    assert report.models == {}
    errors = [str(p) for p in report.problems if p.severity == "error"]
    assert len(errors) == 1, errors
    return errors[0]


def test_a_generated_answer_without_confidence_names_file_line_and_field(tmp_path):
    file = save_samples(tmp_path, "m", "gsm8k", [generated_sample(i, {"q": i}, "1", "Q", "1", "1") for i in range(3)])
    error = _only_error(read_lmeval(tmp_path / "m"))
    assert file.name in error and "lines 1, 2, 3" in error and "field confidence" in error


def test_a_metric_that_is_not_right_or_wrong_is_refused(tmp_path):
    sample = generated_sample(0, {"q": 0}, "a b", "Q", "a", "a", extra={"f1": 0.5, "conf": 0.5})
    save_samples(tmp_path, "m", "squad", [sample])
    error = _only_error(read_lmeval(tmp_path / "m", LmLogOptions.parse("metric=f1,confidence=conf")))
    assert "line 1" in error and "field f1" in error and "0 or 1" in error


def test_several_filters_need_a_choice(tmp_path):
    samples = [generated_sample(0, {"q": 0}, "4", "Q", "#### 4", "4", filter_key="strict-match", extra={"c": 1}),
               generated_sample(0, {"q": 0}, "4", "Q", "#### 4", "4", filter_key="flexible-extract", extra={"c": 1})]
    save_samples(tmp_path, "m", "gsm8k", samples)
    error = _only_error(read_lmeval(tmp_path / "m", LmLogOptions.parse("confidence=c")))
    assert "filter=NAME" in error and "strict-match" in error
    chosen = read_lmeval(tmp_path / "m", LmLogOptions.parse("confidence=c,filter=strict-match"))
    assert chosen.models["m"].splits["gsm8k"].n == 1


def test_a_log_that_disagrees_with_its_own_acc_is_refused(tmp_path):
    sample = _question(0, 0, [0.9, 0.05, 0.05])
    sample["acc"] = 0.0  # the harness logged 1.0: the most likely choice is the target
    save_samples(tmp_path, "m", "qa", [sample, _question(1, 1, [0.1, 0.8, 0.1])])
    error = _only_error(read_lmeval(tmp_path / "m"))
    assert "line 1" in error and "field acc" in error


def test_bad_lines_and_targets_are_named(tmp_path):
    file = save_samples(tmp_path, "m", "qa", [_question(0, 0, [0.9, 0.05, 0.05])])
    with open(file, "a") as handle:
        handle.write("{not json\n")
        bad_target = _question(2, 0, [0.9, 0.05, 0.05])
        bad_target["target"] = "Z"
        handle.write(json.dumps({**bad_target, "arguments": json.loads(file.read_text().splitlines()[0])["arguments"],
                                 "filtered_resps": [[str(v), "False"] for v in _lls([0.9, 0.05, 0.05], 0.01)]}) + "\n")
    report = read_lmeval(tmp_path / "m")
    text = " | ".join(str(p) for p in report.problems)
    assert report.models == {}
    assert "line 2: field (line) is not JSON" in text and "line 3: field target" in text


def test_a_file_not_named_as_the_harness_names_it(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "samples_qa.jsonl").write_text("")
    assert "samples_<task>_<date>.jsonl" in _only_error(read_lmeval(tmp_path / "m"))


def test_mixed_choice_and_generated_tasks_are_refused(tmp_path):
    save_samples(tmp_path, "m", "qa", [_question(0, 0, [0.9, 0.05, 0.05])])
    save_samples(tmp_path, "m", "gen", [generated_sample(0, {"q": 0}, "1", "Q", "1", "1", extra={"c": 1})])
    assert "mixes multiple-choice tasks" in _only_error(read_lmeval(tmp_path / "m", LmLogOptions.parse("confidence=c")))


def test_unknown_options_are_refused():
    with pytest.raises(ValueError, match="unknown log option"):
        LmLogOptions.parse("treshold=0.5")
    with pytest.raises(ValueError, match="acc or acc_norm"):
        LmLogOptions.parse("scoring=f1")


def test_a_text_target_is_a_choice_text_first(tmp_path):
    # Choices that are numbers: the harness reads the text target "2" as the choice "2" (position 1).
    sample = choice_sample(0, {"q": "1+1?"}, "2", "ctx", ["1", "2", "3"], [-3.0, -0.5, -2.0])
    save_samples(tmp_path, "m", "arith", [sample])
    predictions = read_lmeval(tmp_path / "m").models["m"].splits["arith"]
    assert predictions.y_true.tolist() == [1] and predictions.correct.tolist() == [True]


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_line_is_an_error_naming_the_file_the_line_and_the_field(tmp_path, case):
    """Each used to escape as a raw Python error (RecursionError, TypeError, OverflowError, ValueError)."""
    file = save_hostile_samples(tmp_path, "m", case)
    field, words = HOSTILE[case]
    error = _only_error(read_lmeval(tmp_path / "m"))
    assert file.name in error and f"line 1: field {field} " in error and words in error, error
    assert "line 2" not in error  # the harness's own line after it is read as before


def test_every_hostile_line_of_a_file_is_named_and_the_good_ones_are_read(tmp_path):
    lines = {case: save_hostile_samples(tmp_path / case, "m", case).read_text().splitlines()[0] for case in HOSTILE}
    good = save_samples(tmp_path, "m", "qa", [choice_sample(0, {"q": 0}, 1, "Q", ["A", "B"], [-2.0, -1.0])])
    good_line = good.read_text()
    good.write_text("".join(line + "\n" for line in lines.values()) + good_line)
    report = read_lmeval(tmp_path / "m")
    assert report.models == {}
    named = {}  # line -> the field its error names
    for problem in report.problems:
        numbers, field = re.match(r"lines? ([\d, ]+): field (\S+) ", problem.message).groups()
        named.update((int(n), field) for n in numbers.split(", "))
    assert named == {number: HOSTILE[case][0] for number, case in enumerate(lines, start=1)}  # not the good line
    text = " | ".join(str(p) for p in report.problems)
    assert all(words in text for _, words in HOSTILE.values())


def test_log_likelihoods_beyond_any_difference_give_the_exact_probability_without_a_warning(tmp_path):
    """-1e308 and 1e308 differ by more than the largest float: the softmax's shift overflowed with a
    RuntimeWarning; the rounded exact answer is 1.0 for the larger and 0.0 for the other."""
    save_samples(tmp_path, "m", "qa", [choice_sample(0, {"q": 0}, 0, "Q", ["A", "B"], [-1e308, 1e308]),
                                       choice_sample(1, {"q": 1}, 0, "Q", ["A", "B", "C"], [1e308, -1e308, 0.0])])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        predictions = read_lmeval(tmp_path / "m").models["m"].splits["qa"]
    assert predictions.y_pred.tolist() == [1, 0] and predictions.confidence.tolist() == [1.0, 1.0]


def test_a_target_or_request_number_is_ascii_digits(tmp_path):
    """'²' and '١' pass str.isdigit; int() refused the first (a raw ValueError) and read the second as 1."""
    choices = ["A", "B"]
    for number, target in enumerate(("²", "١", "9" * 5000)):
        sample = {**choice_sample(0, {"q": 0}, 0, "Q", choices, [-1.0, -2.0]), "target": target}
        save_samples(tmp_path / str(number), "m", "qa", [sample])
        error = _only_error(read_lmeval(tmp_path / str(number) / "m"))
        assert "line 1: field target holds" in error and "neither a choice number" in error, error
    file = save_samples(tmp_path, "m", "qa", [choice_sample(0, {"q": 0}, 0, "Q", choices, [-1.0, -2.0])])
    sample = json.loads(file.read_text())
    sample["arguments"]["gen_args_²"] = sample["arguments"]["gen_args_0"]
    file.write_text(json.dumps(sample) + "\n")
    error = _only_error(read_lmeval(tmp_path / "m"))
    assert "line 1: field filtered_resps holds 2 log-likelihoods for 3 choices" in error
    # Requests in the order of their number, not of their text (gen_args_10 and _11 sort before _2 as text)
    # nor of the file: a text target is the position of its text.
    choices = [f"choice {k}" for k in range(12)]
    lls = [-5.0] * 10 + [-0.5, -3.0]
    file = save_samples(tmp_path, "many", "qa", [choice_sample(0, {"q": 0}, "choice 10", "Q", choices, lls)])
    sample = json.loads(file.read_text())
    sample["arguments"] = dict(sorted(sample["arguments"].items(), reverse=True))
    file.write_text(json.dumps(sample) + "\n")
    predictions = read_lmeval(tmp_path / "many").models["many"].splits["qa"]
    assert predictions.y_pred.tolist() == [10] and predictions.correct.tolist() == [True]
