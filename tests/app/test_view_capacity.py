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
    assert f"on new items is at most {vc.wording.percent(expected.upper_bound)}" in page.risk.sentences[0]
    # A plain description; the method's name and its jargon ("binomial", "fixed-sequence") only in the tooltip.
    words = page.risk.caption + page.risk.sentences[0]
    assert not any(term in words for term in ("binomial", "learn-then-test", "certified"))
    assert "learn-then-test" in page.risk.caption_help
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
        if len(chosen.report.models["naive_bayes"].classes) > 2:
            assert sum(page.views["shortlist"].per_day) == pytest.approx(1000)


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


# ---- what a new user saw (issue 35): the capacity section's words agree with the sections below it
def test_a_rule_within_capacity_on_tuning_warns_when_it_hands_off_more_on_the_evaluated_split():
    # 100,000 items and no reviewer: the rule chosen on 'val' hands nothing off there, but hands off items on
    # 'test'; "the team is not the bottleneck" alone read as all is well.
    chosen, ws = selection("breast_cancer")
    answer = view.capacity_view(ws, "svm_rbf", chosen.use_case, volume=100_000, capacity=0.0, reviewer=10,
                                per_class=False)
    evaluated = ws.result("svm_rbf", vc.constraints.fit_capacity(ws.sorted("svm_rbf", "val"), chosen.use_case,
                                                                 max_handoff_rate=0.0).policy, chosen.use_case)
    assert evaluated.coverage < 1 and answer.eval_handoffs_per_day == pytest.approx((1 - evaluated.coverage) * 1e5)
    sentence = view.capacity_sentence(answer, capacity=0.0, reviewer=10, money=_money)
    assert (f"On 'test' the same rule hands off about {answer.eval_handoffs_per_day:,.0f} items a day, more than "
            "the 0 your team can review") in sentence


@pytest.mark.parametrize("capacity", [30.0, 300.0, 1000.0, 3000.0])
def test_a_limit_that_costs_nothing_is_not_said_to_bind(sample, capacity):
    # per-class thresholds at a capacity of 1,000 a day: "The limit binds", then "adds nothing" and "lifting the
    # limit would add $0.00"; and the caption spoke of one global threshold only.
    chosen, ws = sample
    for model in chosen.models:
        answer = view.capacity_view(ws, model, chosen.use_case, volume=100_000, capacity=capacity, reviewer=10,
                                    per_class=True)
        sentence = view.capacity_sentence(answer, capacity=capacity, reviewer=10, money=_money)
        if "The limit binds" in sentence:
            assert answer.limit_cost_per_day > 0.005 and "would add $0.00" not in sentence
        assert "per-class rule above shares the same budget" in view.capacity_caption(answer, _money)
        assert f"{_money(answer.tuned_per_day)} on 'val'" in sentence  # the curve's split, beside the evaluated one
        if answer.one_threshold_per_day > answer.tuned_per_day + 0.005:
            assert "one threshold for every class earns more" in sentence


def test_a_shortlist_of_two_classes_is_not_offered_and_an_empty_one_reads_as_such():
    # breast_cancer: the two-tier and shortlist sections showed the same figures by default ($932.22).
    chosen, ws = selection("breast_cancer")
    page = view.build(chosen, ws, "logreg", view.Inputs())
    assert page.shortlist.notice == ("info", view.TWO_CLASSES) and "shortlist" not in page.views
    # digits, a list that grows with doubt: "add up to 1.00 (0.0 on average)... 0 listed (0.0% of the lists...)"
    chosen, ws = selection("digits")
    for model in chosen.models:
        page = view.build(chosen, ws, model, view.Inputs(list_rule="cumulative", list_values=(0.6, -0.5)))
        listing = page.views.get("shortlist")
        if listing is None:
            continue
        sentence = page.shortlist.sentences[0]
        assert "0.0 on average" not in sentence and "0 listed" not in sentence, sentence
        if listing.result.n_listed == 0 and listing.policy.shortlist["list_threshold"] != listing.policy.threshold:
            assert "No evaluated item falls between the two thresholds" in sentence
    # No evaluated item in the listed band (as with 10 classes and a level of 1.00): said so, no 0.0 figures.
    from dataclasses import replace

    empty = replace(listing, result=replace(listing.result, n_auto=listing.result.n_auto + listing.result.n_listed,
                                            n_listed=0.0, n_listed_hit=0.0, mean_list_size=0.0))
    sentence = view.shortlist_sentence(empty, _money)
    assert "No evaluated item falls between the two thresholds" in sentence
    assert "on average" not in sentence and "hold the answer" not in sentence


def test_by_default_the_two_tier_and_shortlist_sections_do_not_repeat_each_other():
    # issue 35: with the defaults both sections showed $932.22 (a confirmation and a listed hand-off both netted
    # half the way from a hand-off to a correct answer).
    chosen, ws = selection("digits")
    listed = view.default_list_values(chosen.use_case)
    assert view.Inputs().list_values == listed
    page = view.build(chosen, ws, "svm_rbf", view.Inputs(list_values=listed))
    assert page.tiers.sentences and page.shortlist.sentences
    figures = [re.findall(r"\*\*(\$[\d,.]+) per day\*\*", section.sentences[0])
               for section in (page.tiers, page.shortlist)]
    assert figures[0] != figures[1], figures
