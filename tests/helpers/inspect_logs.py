"""inspect_ai logs written by inspect_ai itself: its mock model answers from a list, no network.

Importing this module needs inspect_ai (requirements-inspect.txt, installed by requirements-dev.txt): a test
module that imports it is skipped where inspect_ai is missing, and fails instead under REQUIRE_ENGINES=1.
The mock model's token count would download tiktoken's encoding, so it is estimated from the text length
while a log is written.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

from optional import need

need("inspect_ai")

import inspect_ai.model._model as inspect_model  # noqa: E402
from inspect_ai import Task, eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatCompletionChoice,
    ChatMessageAssistant,
    Logprob,
    Logprobs,
    ModelOutput,
    TopLogprob,
    get_model,
)
from inspect_ai.scorer import choice  # noqa: E402
from inspect_ai.solver import multiple_choice  # noqa: E402

CHOICES = ["3", "4", "5", "I don't know"]  # every question's right answer is B unless told


def letter_output(model: str, letter: str, letter_probs: dict[str, float]) -> ModelOutput:
    """'ANSWER: X' with the log-probabilities a provider returns for logprobs=True, top_logprobs=4."""
    tops = [TopLogprob(token=f" {k}", logprob=math.log(p)) for k, p in letter_probs.items()]
    content = [Logprob(token="ANSWER", logprob=-0.01), Logprob(token=":", logprob=-0.01),
               Logprob(token=f" {letter}", logprob=math.log(letter_probs[letter]), top_logprobs=tops)]
    message = ChatMessageAssistant(content=f"ANSWER: {letter}", model=model)
    return ModelOutput(model=model, choices=[ChatCompletionChoice(message=message, logprobs=Logprobs(content=content))])


def text_output(model: str, text: str, token_logprobs: list[float]) -> ModelOutput:
    """A generated answer with one log-probability per token."""
    content = [Logprob(token=f"t{i}", logprob=v) for i, v in enumerate(token_logprobs)]
    message = ChatMessageAssistant(content=text, model=model)
    return ModelOutput(model=model, choices=[ChatCompletionChoice(message=message, logprobs=Logprobs(content=content))])


def write_log(log_dir, task: Task, model: str, outputs: list[ModelOutput]) -> None:
    """``inspect eval`` of ``task`` with the mock ``model`` answering ``outputs`` in turn, logged in ``log_dir``."""
    # inspect_ai runs its own event loop, which it cannot do in a thread where one runs already (Playwright's
    # sync API, kept open by the browser tests that ran earlier in the same worker): so in a thread of its own.
    with mock.patch.object(inspect_model, "count_text_tokens", lambda text: max(1, len(text) // 4)):
        with ThreadPoolExecutor(max_workers=1) as pool:
            [log] = pool.submit(inspect_eval, task, model=get_model(model, custom_outputs=outputs),
                                log_dir=str(log_dir), display="none").result()
    assert log.status == "success"


def write_choice_log(log_dir, model: str, outputs: list[ModelOutput], task: str = "arith", target: str = "B") -> None:
    """A multiple-choice task of ``len(outputs)`` questions (:data:`CHOICES`, right answer ``target``), ids q0,
    q1, ..."""
    dataset = [Sample(input=f"question {i}", choices=CHOICES, target=target, id=f"q{i}") for i in range(len(outputs))]
    write_log(log_dir, Task(dataset=dataset, solver=multiple_choice(), scorer=choice(), name=task), model, outputs)
