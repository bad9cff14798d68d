"""Language-model evaluation logs opened in the dashboard (issue 34, part 2), driven through AppTest.

An operator's server folder holding lm-evaluation-harness's ``--output_path`` (one folder per model) is typed
in the sidebar as on the command line, ``lmeval[options]:FOLDER``; every model loads, the Runs page tells the
model's own "I don't know" from the threshold's hand-offs and counts the false abstentions, and the Value page
tunes the same thresholds as the command line. A source outside the operator's folders is never read.
"""

from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest

import valuecore as vc
from dashboard import serverfiles
from lmeval_layout import HOSTILE, choice_sample, save_hostile_samples, save_samples
from helpers.app import assert_clean, model_declines_table, start, value_table

CHOICES = ["A", "B", "C", "I don't know"]
GOLD = [0, 1, 2, 0, 1, 2, 0, 1] * 3
OPTIONS = "lmeval[idk=I don't know]"


def _write(root, model: str, seed: int, decline: tuple[int, ...]):
    """24 questions; the model declines the questions in ``decline`` ("I don't know" most likely)."""
    rng = np.random.default_rng(seed)
    samples = []
    for doc_id, gold in enumerate(GOLD):
        probs = rng.dirichlet([1.0, 1.0, 1.0])
        idk = 0.7 if doc_id in decline else 0.01
        lls = [math.log((1 - idk) * p) for p in probs] + [math.log(idk)]
        doc = {"question": f"question {doc_id}", "choices": CHOICES, "answer": gold}
        samples.append(choice_sample(doc_id, doc, gold, f"question {doc_id}\nAnswer:", CHOICES, lls))
    save_samples(root, model, "qa_demo", samples)


@pytest.fixture
def root(tmp_path, monkeypatch):
    root = tmp_path / "operator"
    _write(root / "runs", "alpha", 1, decline=(3, 7, 11))
    _write(root / "runs", "beta", 2, decline=())
    monkeypatch.setenv(serverfiles.ENV_VAR, str(root))
    return root


def test_an_output_folder_loads_one_model_per_folder_and_counts_the_models_own_abstentions(root):
    at = start("pages/runs.py", src=f"folder:{OPTIONS}:runs")
    assert_clean(at)
    splits = model_declines_table(at)
    assert set(splits.index) == {"alpha", "beta"}
    # Counted from the logs as the command line counts them.
    report = vc.runs.read_evaluation_log(f"{OPTIONS}:{root / 'runs' / 'alpha'}")
    items, declined, false = vc.runs.abstention_counts(report.models["alpha"].splits["qa_demo"])
    assert (declined, items) == (3, 24)
    assert splits.loc["alpha", "declined by the model"] == declined
    assert splits.loc["alpha", "false abstentions"] == false
    assert splits.loc["beta", "declined by the model"] == 0
    notes = [c.value for c in at.caption if "declined" in c.value]
    assert len(notes) == 1 and notes[0].startswith("alpha declined 3 of 24 items on 'qa\\_demo' itself"), notes
    assert f"of them {vc.wording.false_abstentions(false)}" in notes[0] or (false == 0 and "false" not in notes[0])
    # The server's own path is never shown, only the path inside the operator's folder.
    shown = "\n".join(str(e.value) for e in [*at.caption, *at.markdown, *at.sidebar.caption])
    assert str(root) not in shown
    assert str(root) not in at.dataframe[0].value.to_string()


def test_the_value_page_tunes_the_thresholds_the_command_line_tunes(root):
    at = start("pages/value.py", src=f"folder:{OPTIONS}:runs", rule="threshold")
    assert_clean(at)
    table = value_table(at)
    for model in ("alpha", "beta"):
        run = vc.runs.read_evaluation_log(f"{OPTIONS}:{root / 'runs' / model}").models[model]
        policy = vc.fit_policy("threshold", vc.presort(run.splits["qa_demo"]), vc.UseCase(1, 0, -4))
        threshold = table.loc[model, "Threshold"]
        # The page prints the fewest digits that act on the same questions as the exact threshold.
        assert threshold == float(vc.wording.threshold(policy.threshold, run.splits["qa_demo"].confidence))
    at.switch_page("pages/home.py").run()
    assert_clean(at)


def test_a_source_outside_the_operators_folders_is_refused_in_the_words_of_a_refused_folder(root, tmp_path):
    outside = tmp_path / "elsewhere"
    _write(outside, "gamma", 3, decline=())
    (root / "runs" / "gamma").symlink_to(outside / "gamma", target_is_directory=True)
    for source in (f"lmeval:{outside}", "lmeval:../elsewhere", f"{OPTIONS}:runs"):
        at = start("pages/runs.py", src=f"folder:{source}")
        assert not at.exception
        shown = re.sub(r"\\(.)", r"\1", "\n".join(str(e.value) for e in [*at.error, *at.caption, *at.markdown]))
        assert "gamma" not in "\n".join(str(d.value) for d in at.dataframe), source
        assert str(outside) not in shown
        if source.endswith(":runs"):  # a link inside the folder that leaves it refuses the source
            assert serverfiles.LINK_REFUSAL in shown
        else:
            assert serverfiles.REFUSAL in "\n".join(str(e.value) for e in at.sidebar.error), source
    assert os.path.islink(root / "runs" / "gamma")


@pytest.mark.parametrize("case", ["deep", "filterlist", "overflow_ll"])
def test_a_hostile_log_is_an_error_on_the_runs_page_and_the_other_models_load(root, case):
    """These put Streamlit's "This app has encountered an error" on the page, and no model was shown."""
    file = save_hostile_samples(root / "runs", "gamma", case)
    at = start("pages/runs.py", src=f"folder:{OPTIONS}:runs")
    assert_clean(at, errors_allowed=True)
    field, words = HOSTILE[case]
    [error] = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert f"runs/gamma/{file.name}" in error and f"line 1: field {field} " in error and words in error, error
    assert set(model_declines_table(at).index) == {"alpha", "beta"}


def test_compare_measures_the_threshold_stability_of_a_model_that_declines_items(root):
    """The stability tree failed on runs with the model's own abstentions (a numpy shape error shown as the
    page's warning); each model's stability is now measured, declined items resampled with the rest."""
    at = start("pages/compare.py", src=f"folder:{OPTIONS}:runs")
    assert_clean(at)
    assert not [w.value for w in at.warning if "alpha" in w.value or "shape" in w.value]
    stability = next(shown.value for shown in [*at.table, *at.dataframe] if "Tuned threshold" in shown.value.columns)
    assert set(stability["Model"]) == {"alpha", "beta"}
