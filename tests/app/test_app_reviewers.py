"""The reviewers panel of "Capacity & guarantees", through the whole app with AppTest: its sentence
carries the figures valuecore computes for a workload curve."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.app import _money as _money_after
from helpers.app import _per_day, capacity_page

import valuecore as vc
from dashboard.views.reviewers import reviewers_answer

DIGITS = Path(__file__).resolve().parents[2] / "sample_runs" / "digits"


@pytest.fixture(scope="module")
def page():
    return capacity_page()


def _sentence(at) -> str:
    found = [m.value for m in at.markdown if m.value.startswith("For these reviewers the best rule")]
    assert len(found) == 1, [m.value for m in at.markdown]
    return found[0]


def test_the_panel_says_the_exact_threshold_for_tired_reviewers_and_what_it_earns(page):
    assert any(h.value == "People who are not always right" for h in page.header)
    text = _sentence(page)
    model = page.selectbox(key="constraints_model").value
    run = vc.load_runs([str(DIGITS)]).models[model]
    use_case = vc.UseCase(1, 0, -4)
    team = vc.constraints.Reviewers(workload=((0.02, 0.95), (0.10, 0.6)), v_person_wrong=-4.0)
    fit = vc.constraints.fit_reviewer_threshold(vc.presort(run.splits["val"]), use_case, team)
    # As every page writes it: the digits that tell its decision apart on the model's val and test items.
    shown = np.concatenate([run.splits[s].confidence for s in ("val", "test")])
    assert f"threshold **{vc.wording.threshold_on_data(fit.threshold, shown)}**" in text
    policy = vc.Policy("threshold", threshold=fit.threshold)
    rate = vc.evaluate(policy, run.splits["test"], use_case).n_abstain / run.splits["test"].total_weight
    per_day = vc.evaluate(policy, run.splits["test"], team.use_case_at(use_case, rate)).value_per_item * 1000
    assert _money_after(text, "and earns ") == _per_day(per_day)
    assert _money_after(text, "Handing every item to them would be worth ") == _per_day(
        float(team.handoff_value(use_case, 1.0)) * 1000)


def test_a_perfect_team_keeps_todays_threshold_and_a_bad_curve_is_refused(page):
    page.number_input(key="reviewers_acc_low").set_value(1.0)
    page.number_input(key="reviewers_acc_high").set_value(1.0).run()
    assert not page.exception
    assert "It is today's threshold" in _sentence(page)
    page.number_input(key="reviewers_rate_high").set_value(0.01).run()
    assert not page.exception
    assert any("must be larger than the first" in i.value for i in page.info)


def test_the_answer_agrees_with_the_core_on_the_tuning_curve():
    # The view's curve is the core's value curve, per day; its marked points are the two thresholds.
    runs = vc.load_runs([str(DIGITS)]).models
    pipeline = vc.Pipeline(runs, None, None, "none")
    team = vc.constraints.Reviewers(workload=((0.05, 0.9), (0.3, 0.5)))
    use_case = vc.UseCase(1, 0, -4)
    answer = reviewers_answer(pipeline, "logreg", use_case, team, eval_split="test", volume=100.0)
    tuning = pipeline.sorted("logreg", "val")
    curve = vc.constraints.reviewer_value_curve(tuning, use_case, team) / tuning.total_weight * 100.0
    loaded = answer.curve[answer.curve["pricing"] == "with these reviewers"]["value_per_day"].to_numpy()
    assert loaded == pytest.approx(curve, rel=1e-12)
    assert answer.chosen["value_per_day"].iloc[0] == pytest.approx(curve.max(), rel=1e-12)
