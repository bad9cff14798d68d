"""The "Capacity & guarantees" view model (dashboard.views.capacity), without Streamlit:
its figures are valuecore's on the same runs, and its sentences never contradict each other
(one more reviewer, the limit's cost and a slot's worth are all said on the tuning split)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from view_selection import selection

import valuecore as vc
from dashboard.views import capacity as view


def _money(x):
    return f"-${abs(x):,.2f}" if x < 0 else f"${x:,.2f}"


@pytest.fixture(scope="module", params=["digits", "breast_cancer"])
def sample(request):
    return selection(request.param)


def test_one_more_reviewer_and_the_limit_are_valued_where_rules_are_chosen(sample):
    chosen, ws = sample
    use_case = chosen.use_case
    for model in chosen.models:
        run = ws.sorted(model, "val")
        for capacity in (0.0, 5.0, 30.0, 100.0, 400.0):
            answer = view.capacity_view(ws, model, use_case, volume=1000, capacity=capacity, reviewer=10,
                                        per_class=False)
            now = vc.constraints.fit_capacity(run, use_case, max_handoff_rate=capacity / 1000)
            more = vc.constraints.fit_capacity(run, use_case, max_handoff_rate=(capacity + 10) / 1000)
            per_day = 1000 / run.total_weight
            assert answer.extra_reviewer_per_day == pytest.approx((more.value_total - now.value_total) * per_day)
            assert answer.limit_cost_per_day == pytest.approx(
                (now.unconstrained_value_total - now.value_total) * per_day)
            # The best of a larger budget is never worth less: no "adds -$2.22", no "the limit costs -$17.54".
            assert answer.extra_reviewer_per_day >= -1e-9 and answer.limit_cost_per_day >= -1e-9
            evaluated = vc.evaluate(now.policy, chosen.report.models[model].splits["test"], use_case)
            assert answer.value_per_day == pytest.approx(evaluated.value_per_item * 1000)
            sentence = view.capacity_sentence(answer, capacity=capacity, reviewer=10, money=_money)
            caption = view.capacity_caption(answer, _money)
            assert "-$" not in sentence
            if not answer.binding:
                assert "not the bottleneck" in sentence and "adds nothing" in sentence
                assert answer.marginal_per_slot == 0 and "earn nothing" in caption
            elif answer.extra_reviewer_per_day > 0.005:
                assert f"adds **{_money(answer.extra_reviewer_per_day)} per day**" in sentence
            else:
                assert "adds **nothing**" in sentence
                if answer.next_step_reviews is not None:  # that many reviews do buy a better rule
                    step = vc.constraints.fit_capacity(run, use_case,
                                                       max_handoff_rate=min(answer.next_step_reviews / 1000, 1))
                    assert step.value_total > now.value_total
                    assert f"needs about {answer.next_step_reviews:,.0f} reviews a day" in sentence


def test_the_written_threshold_decides_as_the_exact_one(sample):
    chosen, ws = sample
    for model in chosen.models:
        page = view.build(chosen, ws, model, view.Inputs(capacity=30.0))
        answer = page.views["capacity"]
        exact = vc.constraints.fit_capacity(ws.sorted(model, "val"), chosen.use_case, max_handoff_rate=0.03)
        written = float(re.search(r"threshold (\d\.\d+)", answer.threshold_text).group(1))
        for split in ("val", "test"):
            confidence = chosen.report.models[model].splits[split].confidence
            assert np.array_equal(confidence >= written, confidence >= exact.policy.threshold)


def test_the_guarantee_is_the_cores_and_its_method_is_in_the_tooltip(sample):
    chosen, ws = sample
    page = view.build(chosen, ws, "logreg", view.Inputs(max_risk=0.05, confidence=0.9))
    expected = vc.constraints.fit_certified(ws.sorted("logreg", "val"), chosen.use_case, max_risk=0.05,
                                            confidence=0.9)
    assert page.views["risk"].result.policy == expected.policy
    assert f"certified bound {vc.wording.percent(expected.upper_bound)}" in page.risk.sentences[0]
    # A plain description, the method's name; its jargon ("binomial", "fixed-sequence") only in the tooltip.
    assert "binomial" not in page.risk.caption and "learn-then-test" in page.risk.caption
    assert expected.method in page.risk.caption_help
    table = page.risk.chart
    assert (table["upper_bound"] >= table["error_rate"].fillna(0) - 1e-12).all()
    nothing = view.build(chosen, ws, "logreg", view.Inputs(max_risk=0.0))
    assert nothing.risk.sentences[0].startswith("Nothing can be guaranteed")


def test_the_tiers_say_how_much_work_they_give_people_against_the_capacity(sample):
    chosen, ws = sample
    assisted = vc.constraints.AssistedValues(1.0, 0.0, 0.2)
    for capacity in (5.0, 5000.0):
        page = view.build(chosen, ws, "naive_bayes", view.Inputs(capacity=capacity, assisted=assisted))
        tiers = page.views["tiers"]
        policy = vc.constraints.fit_two_tier(ws.sorted("naive_bayes", "val"), chosen.use_case, assisted)
        result = vc.constraints.evaluate_two_tier(policy, chosen.report.models["naive_bayes"].splits["test"],
                                                  chosen.use_case)
        assert tiers.result.value_per_item == pytest.approx(result.value_per_item)
        automatic, confirmed, blank = tiers.per_day
        assert automatic + confirmed + blank == pytest.approx(1000)
        assert confirmed == pytest.approx(result.n_assisted / result.n_items * 1000)
        sentence = page.tiers.sentences[0]
        if policy.threshold == policy.assist_threshold:
            assert "does not pay" in sentence
        elif confirmed + blank > capacity:
            assert f"more than the {capacity:,.0f} your team can review" in sentence
        else:
            assert f"within the {capacity:,.0f} your team can review" in sentence
        listing = page.views["shortlist"]
        assert sum(listing.per_day) == pytest.approx(1000)


def test_the_two_tier_policy_json_is_made_when_asked_and_reads_back(sample):
    chosen, ws = sample
    page = view.build(chosen, ws, "logreg", view.Inputs())
    document = vc.policy_json.PolicyDocument.from_json(page.tiers.document())
    vc.policy_json.validate_policy_document(json.loads(document.to_json()))
    policy = vc.constraints.fit_two_tier(ws.sorted("logreg", "val"), chosen.use_case,
                                         view.default_assisted(chosen.use_case))
    assert len(json.loads(document.to_json())["models"]) == 1
    text = page.tiers.document()
    assert repr(policy.assist_threshold) in text or json.dumps(policy.assist_threshold) in text


def test_without_labels_on_the_evaluated_split_the_tiers_say_why():
    chosen, ws = selection("breast_cancer", evaluate="prod")
    page = view.build(chosen, ws, "logreg", view.Inputs())
    assert page.tiers.notice[0] == "info" and "has no labels" in page.tiers.notice[1]
    assert page.shortlist.notice is not None
