"""Tests of valuecore.verdict and simpler_rule, and of the sentences wording builds from them.

The verdict is numbers: the best model, who the data cannot tell from it (and
on which basis), how many items would separate the top two, and degenerate
values. The sentences must never show None, nan or inf.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import valuecore as vc
from valuecore import wording

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"
BAD_TEXT = re.compile(r"\b(None|nan|NaN|inf)\b")


def digits_runs(use_case, kind="threshold"):
    report = vc.load_runs([str(SAMPLES / "digits")])
    return {
        model: (vc.fit_policy(kind, vc.presort(run.splits["val"]), use_case), run.splits["test"])
        for model, run in report.models.items()
    }


def binary(n, seed, y_true=None, ids=None):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n) if y_true is None else y_true
    p1 = np.clip(np.where(y == 1, 0.7, 0.3) + rng.normal(0, 0.25, n), 0.01, 0.99)
    return vc.Predictions.from_proba(np.c_[1 - p1, p1], y_true=y, ids=ids)


def all_text(v, currency="$"):
    return [wording.verdict_headline(v, currency)] + wording.verdict_sentences(
        v, currency, period="month", volume=1000)


def assert_clean_text(texts):
    for text in texts:
        assert text and not BAD_TEXT.search(text), text


# ------------------------------------------------------------------ verdict
def test_six_to_none_discordant_items_do_not_separate_two_models():
    """svm_rbf beats random_forest on 6 of 450 items and loses on none (at omega = 1 a difference is +1 or +2).

    The bounded paired interval allows for one item the other way at the largest possible difference (-2):
    p = 0.087, so the two stay contenders (the paired t-test would say p = 0.018; the exact sign test, which
    ignores the sizes of the differences, 0.031).
    """
    use_case = vc.UseCase.from_omega(1)
    runs = digits_runs(use_case)
    diff = vc.item_values(*runs["svm_rbf"], use_case) - vc.item_values(*runs["random_forest"], use_case)
    assert (np.count_nonzero(diff > 0), np.count_nonzero(diff < 0)) == (6, 0)
    assert stats.binomtest(6, 6).pvalue == pytest.approx(0.03125)
    comparison = vc.uncertainty.paired_comparison(*runs["svm_rbf"], *runs["random_forest"], use_case)
    assert 0.05 < comparison.p_value < 0.1 and comparison.low < 0 < comparison.high
    v = vc.verdict(runs, use_case)
    assert v.best == "svm_rbf" and v.contenders == ("random_forest",)


def test_a_clear_winner_on_the_sample_runs_has_no_contenders():
    runs = digits_runs(vc.UseCase.from_omega(1))
    del runs["random_forest"]  # level with svm_rbf within noise: see the test above
    v = vc.verdict(runs, vc.UseCase.from_omega(1))
    assert v.best == "svm_rbf" and v.contenders == () and v.degenerate is None
    assert v.basis == "paired" and v.items_to_separate is None
    assert [s.model for s in v.standings][0] == "svm_rbf"
    assert all(s.difference_low > 0 for s in v.standings[1:])
    headline = wording.verdict_headline(v, "$")
    assert headline.startswith("svm_rbf earns the most") and "clearly" in headline and "Deploy" not in headline
    assert_clean_text(all_text(v))


def test_ties_name_the_contenders_and_the_items_needed():
    use_case = vc.UseCase.from_omega(5)
    runs = digits_runs(use_case)
    v = vc.verdict(runs, use_case)
    assert v.best == "svm_rbf" and "random_forest" in v.contenders and v.runner_up == "random_forest"
    # The contender test is the paired bounded interval of the differences; even the t-test finds no difference.
    policy_b, run_b = runs["svm_rbf"]
    policy_r, run_r = runs["random_forest"]
    diff = vc.item_values(policy_b, run_b, use_case) - vc.item_values(policy_r, run_r, use_case)
    assert stats.ttest_1samp(diff, 0).pvalue > 0.05
    standing = next(s for s in v.standings if s.model == "random_forest")
    assert standing.basis == "paired" and standing.difference_low < 0 < standing.difference_high
    # Sample size: (z_.975 + z_.8) * sd / sqrt(n) crosses the observed gap at n.
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    sd = diff.std(ddof=1)
    assert v.items_to_separate > v.n_items
    assert z * sd / math.sqrt(v.items_to_separate) <= abs(v.runner_up_gap) < z * sd / math.sqrt(v.items_to_separate - 1)
    text = all_text(v)
    assert "random_forest" in text[0] and "level with it within noise" in text[0] and "Deploy" not in text[0]
    assert any("paired comparison" in t for t in text)
    assert any(f"about {wording.significant(v.items_to_separate)} labelled items" in t for t in text)
    assert_clean_text(text)


def test_runs_on_different_items_are_judged_by_overlapping_intervals():
    a, b = binary(300, 1), binary(200, 2)
    use_case = vc.UseCase(1, 0, -1)
    v = vc.verdict({"a": (vc.Policy("accept_all"), a), "b": (vc.Policy("accept_all"), b)}, use_case)
    assert v.basis == "overlap" and {s.basis for s in v.standings[1:]} == {"overlap"}
    lows = {s.model: s.low for s in v.standings}
    highs = {s.model: s.high for s in v.standings}
    other = v.standings[1].model
    assert (other in v.contenders) == (highs[other] >= lows[v.best])
    assert any("overlapping" in t for t in all_text(v)) == bool(v.contenders)
    assert_clean_text(all_text(v))


def test_identical_models_cannot_be_separated_by_more_items():
    p = binary(100, 3)
    policy = vc.Policy("threshold", threshold=0.6)
    v = vc.verdict({"a": (policy, p), "b": (policy, p)}, vc.UseCase(1, 0, -2))
    assert v.contenders == ("b",) and v.items_to_separate == math.inf
    assert any("exactly the same" in t for t in all_text(v))
    assert_clean_text(all_text(v))


def test_correct_equal_to_hand_off_is_pointless_not_a_winner():
    v = vc.verdict(digits_runs(vc.UseCase(0, 0, -1)), vc.UseCase(0, 0, -1))
    assert v.degenerate == "pointless"
    headline = wording.verdict_headline(v, "$")
    assert "no model adds value" in headline and "Deploy" not in headline
    assert_clean_text(all_text(v))


def test_every_model_useless_says_keep_handing_over():
    use_case = vc.UseCase(1, 0, -50)
    p = binary(400, 4)
    v = vc.verdict({"a": (vc.Policy("accept_all"), p), "b": (vc.Policy("threshold", threshold=0.9), p)}, use_case)
    assert v.degenerate == "all_useless"
    assert v.best_per_item <= v.baseline_per_item
    assert wording.verdict_headline(v, "$").startswith("Keep handing items to people")
    assert_clean_text(all_text(v))


def test_abstaining_pointless_is_flagged():
    use_case = vc.UseCase(1, 0, 0)
    v = vc.verdict(digits_runs(use_case), use_case)
    assert v.abstain_pointless and v.degenerate is None
    assert any("acting on every item" in t for t in all_text(v))


def test_unlabelled_runs_are_left_out_and_said_so():
    p = binary(50, 5)
    unlabelled = vc.Predictions.from_proba(p.proba)
    v = vc.verdict({"u": (vc.Policy("accept_all"), unlabelled)}, vc.UseCase(1, 0, -1))
    assert v.degenerate == "no_models" and v.unlabelled == ("u",) and v.best is None
    assert_clean_text(all_text(v))
    v = vc.verdict({"u": (vc.Policy("accept_all"), unlabelled), "p": (vc.Policy("accept_all"), p)},
                   vc.UseCase(1, 0, -1))
    assert v.best == "p" and v.unlabelled == ("u",)
    assert any("left out" in t for t in all_text(v))


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 30),
    seeds=st.lists(st.integers(0, 10**6), min_size=1, max_size=3),
    values=st.tuples(st.sampled_from([0.0, 1.0, 2.0]), st.sampled_from([0.0, 1.0, -1.0]),
                     st.sampled_from([0.0, -1.0, -4.0, -100.0, 1.0])),
    threshold=st.one_of(st.none(), st.floats(0.0, 1.0)),
)
def test_the_verdict_text_never_shows_none_or_nan(n, seeds, values, threshold):
    use_case = vc.UseCase(*values)
    runs = {}
    base = binary(n, seeds[0])
    for i, seed in enumerate(seeds):
        p = binary(n, seed, y_true=base.y_true)
        runs[f"m{i}"] = (vc.Policy("threshold", threshold=threshold) if i else vc.Policy("accept_all"), p)
    v = vc.verdict(runs, use_case)
    from valuecore._decide.verdict import DEGENERATE_KINDS

    assert v.degenerate in (None, *DEGENERATE_KINDS)
    assert_clean_text(all_text(v))
    assert_clean_text(all_text(v, "EUR"))


# ------------------------------------------------------------- simpler rule
def test_per_class_thresholds_that_earn_less_are_called_overfitting():
    use_case = vc.UseCase.from_omega(5)
    report = vc.load_runs([str(SAMPLES / "digits")])
    found = []
    for model, run in report.models.items():
        tuned = vc.presort(run.splits["val"])
        rich = vc.fit_policy("class_thresholds", tuned, use_case)
        simple = vc.fit_policy("threshold", tuned, use_case)
        c = vc.recommendation.simpler_rule(rich, simple, run.splits["test"], use_case)
        exact_rich = vc.evaluate(rich, run.splits["test"], use_case).value_per_item
        exact_simple = vc.evaluate(simple, run.splits["test"], use_case).value_per_item
        assert (c.rich_per_item, c.simple_per_item) == pytest.approx((exact_rich, exact_simple))
        sentences = wording.simpler_rule_sentences(c, "$")
        assert bool(sentences) == c.prefer_simpler
        if c.gain < 0:
            assert "overfitting" in sentences[0] and "Use the simpler rule" in sentences[0]
        found.append(c.prefer_simpler)
        assert_clean_text(sentences)
    assert any(found)


def test_a_richer_rule_clearly_ahead_is_not_flagged():
    p = binary(2000, 7)
    use_case = vc.UseCase(1, 0, -4)
    c = vc.recommendation.simpler_rule(vc.Policy("threshold", threshold=0.8), vc.Policy("accept_all"), p, use_case)
    assert c.gain > 0 and c.low > 0 and not c.prefer_simpler
    assert wording.simpler_rule_sentences(c, "$") == []
