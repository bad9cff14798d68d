"""The value interval stays honest when a costly outcome is rare or never seen (issue 19, item 1).

The interval is "bounded" (valuecore._stats.bounded): the Dirichlet of the outcome counts plus one item at the lowest
possible value (low end) or the highest (high end). Checked here against independent computations: scipy's
Clopper-Pearson interval for two outcomes, a seeded Monte Carlo of the Dirichlet for three, and the issue's own
example through the command line. The coverage study is tests/core/test_interval_coverage_slow.py and
benchmarks/bench_interval_coverage.py.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import stats

import valuecore as vc
from valuecore._cli.commands import main
from valuecore._stats.uncertainty import items_to_exclude

mean_interval = vc.uncertainty.mean_interval


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    return tuple(stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact"))


# ------------------------------------------------------------ zero width only when nothing can vary
def test_all_correct_at_a_costly_error_is_not_certain():
    """20 items, all acted on and right, a wrong answer worth -100: the t interval said [1, 1]."""
    predictions = vc.Predictions.from_proba(np.tile([[0.99, 0.01]], (20, 1)), y_true=np.zeros(20, dtype=int))
    use_case = vc.UseCase(1, 0, -100)
    iv = vc.uncertainty.policy_interval(vc.Policy("accept_all"), predictions, use_case)
    t = vc.uncertainty.policy_interval(vc.Policy("accept_all"), predictions, use_case, method="t")
    assert (t.low, t.high) == (1.0, 1.0)  # what the issue saw
    # Independently: two outcomes (1 or -100), so the value is 1 - 101 * (wrong rate); Clopper-Pearson on 0 of 20.
    _, wrong_high = clopper_pearson(0, 20)
    assert iv.low == pytest.approx(1 - 101 * wrong_high, rel=1e-9)
    assert iv.high == 1.0 and iv.low < -15
    assert (iv.n_acted, iv.n_worst, iv.worst_value) == (20.0, 0.0, -100.0)
    assert iv.one_more_worst == pytest.approx(101 / 20)


def test_handing_everything_over_cannot_vary():
    predictions = vc.Predictions.from_proba([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]], y_true=[0, 1, 1])
    iv = vc.uncertainty.policy_interval(vc.Policy("threshold", threshold=None), predictions, vc.UseCase(1, 0.5, -1000))
    assert iv.low == iv.high == iv.mean == 0.5
    assert vc.wording.interval_basis(iv).startswith("Likely range: none needed")


def test_a_value_matrix_with_one_value_cannot_vary():
    matrix = vc.ValueMatrix(("0", "1"), np.full((2, 3), 2.5))
    predictions = vc.Predictions.from_proba([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.7, 0.3]], y_true=[0, 1, 1, 0])
    result = vc.evaluate(vc.Policy("threshold", threshold=0.65), predictions, matrix)
    iv = vc.uncertainty.result_interval(result, matrix)
    assert iv.low == iv.high == 2.5


def test_a_value_matrix_allows_for_its_unseen_costliest_cell():
    """A missed 'pos' costs 50; no 'pos' item was missed, yet the low end allows for it."""
    matrix = vc.ValueMatrix.binary(tp=10, tn=1, fp=-5, fn=-50, abstain=0, classes=["neg", "pos"])
    proba = np.array([[0.95, 0.05]] * 30 + [[0.05, 0.95]] * 10)
    predictions = vc.Predictions.from_proba(proba, y_true=["neg"] * 30 + ["pos"] * 10, classes=["neg", "pos"])
    iv = vc.uncertainty.policy_interval(vc.Policy("accept_all"), predictions, matrix)
    assert iv.worst_value == -50 and iv.n_worst == 0
    assert iv.low < iv.mean - iv.one_more_worst  # at least one more missed 'pos' is within the range
    assert "costliest outcome" in vc.wording.interval_basis(iv, "$", vc.wording.worst_outcome_name(matrix))


def test_fewer_than_two_items_stay_unknown():
    iv = mean_interval([1.0], value_range=(-4.0, 1.0))
    assert (iv.low, iv.high) == (-math.inf, math.inf)
    assert "too few items" in vc.wording.interval_basis(iv)


# ------------------------------------------------------------ independent checks of the numbers
@pytest.mark.parametrize("k, n", [(0, 5), (3, 20), (17, 20), (20, 20), (1, 300), (40, 200)])
def test_two_outcomes_give_clopper_pearson(k, n):
    iv = mean_interval([1.0] * k + [0.0] * (n - k), value_range=(0.0, 1.0))
    assert (iv.low, iv.high) == pytest.approx(clopper_pearson(k, n), abs=1e-9)


def test_three_outcomes_follow_the_dirichlet_bound():
    """The Beta with the Dirichlet's mean and variance, against the Dirichlet itself (seeded Monte Carlo)."""
    x = np.array([-20.0, 0.0, 1.0])
    counts = np.array([2, 25, 73])
    iv = mean_interval(x, counts, value_range=(-20.0, 1.0))
    draws = np.random.default_rng(0).dirichlet
    low = np.quantile(draws(counts + [1, 0, 0], size=400_000) @ x, 0.025)
    high = np.quantile(np.random.default_rng(1).dirichlet(counts + [0, 0, 1], size=400_000) @ x, 0.975)
    span = x.max() - x.min()
    assert abs(iv.low - low) < 0.01 * span and abs(iv.high - high) < 0.01 * span


def test_the_issue_example_through_report(tmp_path, capsys):
    """0 wrong among 91 acted on (114 items), a wrong answer at -1000: the t interval said [0.72, 0.87]."""
    rows = []
    for split in ("val", "test"):
        rows += [(split, "a", "a", 0.99)] * 91  # confident and right
        rows += [(split, "a" if i % 2 else "b", "a", 0.55) for i in range(23)]  # unsure, half wrong: handed over
    pd.DataFrame(rows, columns=["split", "y_true", "y_pred", "confidence"]).to_csv(tmp_path / "m.csv", index=False)
    code = main(["report", str(tmp_path / "m.csv"), "--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-1000",
                 "--currency", "$", "--json", str(tmp_path / "p.json")])
    out = capsys.readouterr().out
    assert code == 0
    evaluation = json.loads((tmp_path / "p.json").read_text())["models"][0]["evaluation"]
    assert (evaluation["n_correct"], evaluation["n_wrong"], evaluation["n_abstain"]) == (91, 0, 23)
    point = evaluation["value_per_item"]
    low, high = evaluation["ci95"]
    assert point == pytest.approx(91 / 114)
    # One more wrong answer would cost about 1000 / 114 = 8.8 per item; the low end allows for several.
    basis = evaluation["ci95_basis"]
    assert basis["one_more_worst"] == pytest.approx((point + 1000) / 114)
    assert low < point - 3 * basis["one_more_worst"] and point <= high <= 1.0
    assert (basis["method"], basis["n_acted"], basis["n_worst"], basis["worst_value"]) == ("bounded", 91, 0, -1000)
    # Independently (Monte Carlo of the Dirichlet with one extra wrong answer).
    draws = np.random.default_rng(3).dirichlet([1, 23, 91], size=400_000) @ np.array([-1000.0, 0.0, 1.0])
    assert low == pytest.approx(np.quantile(draws, 0.025), abs=0.01 * 1001)
    assert "0 wrong answers (-$1,000.00 each) seen in 114 items, 91 automated" in out


# ------------------------------------------------------------ properties
@given(
    counts=st.lists(st.integers(0, 60), min_size=1, max_size=5),
    values=st.lists(st.floats(-1000, 1000, allow_nan=False), min_size=5, max_size=5),
    margin=st.tuples(st.floats(0, 500), st.floats(0, 500)),
    confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
# Found by exploration: a range one ulp wide, [1, 1 + 2**-52], where no float lies strictly inside.
@example(counts=[4], values=[1.0, 0.0, 0.0, 0.0, 0.0], margin=(0.0, 2.220446049250313e-16), confidence=0.8)
# Found by exploration: the low end's Beta has b near 3e156, where scipy's betaincinv gave NaN.
@example(counts=[0], values=[0.0, 0.0, 0.0, 0.0, 0.0], margin=(4.327947828012024e-156, 1.0), confidence=0.8)
def test_the_interval_holds_the_point_and_stays_in_the_possible_range(counts, values, margin, confidence):
    x = np.asarray(values[: len(counts)])
    weights = np.asarray(counts, dtype=float)
    if weights.sum() < 2:
        weights[0] += 2
    lowest, highest = float(x.min()) - margin[0], float(x.max()) + margin[1]
    iv = mean_interval(x, weights, value_range=(lowest, highest), confidence_level=confidence)
    assert lowest - 1e-9 * (1 + abs(lowest)) <= iv.low <= iv.mean <= iv.high <= highest + 1e-9 * (1 + abs(highest))
    if highest - lowest > 1e-9 * (1 + abs(highest)):
        # Never zero width when the value can vary by more than float64 resolves: over [1, 1 + 2**-52] the
        # interval's width, a fraction of that ulp, rounds to 0.
        assert iv.high > iv.low


@given(st.lists(st.integers(0, 3), min_size=2, max_size=30), st.integers(0, 10**6))
def test_integer_weights_are_repeated_rows(weights, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, len(weights))
    proba = rng.dirichlet([1, 1], len(weights))
    weights = np.asarray(weights)
    if weights.sum() < 2:
        weights[:2] = 1
    use_case = vc.UseCase(1, 0, -50)
    policy = vc.Policy("threshold", threshold=0.6)
    weighted = vc.uncertainty.policy_interval(
        policy, vc.Predictions.from_proba(proba, y_true=y, sample_weight=weights), use_case)
    repeated = vc.uncertainty.policy_interval(
        policy, vc.Predictions.from_proba(np.repeat(proba, weights, axis=0), y_true=np.repeat(y, weights)), use_case)
    for field in ("mean", "low", "high", "n", "n_acted", "n_worst", "one_more_worst"):
        assert getattr(weighted, field) == pytest.approx(getattr(repeated, field), rel=1e-9, abs=1e-12), field


def test_equal_fractional_weights_are_unit_weights():
    x = np.array([1.0] * 70 + [0.0] * 25 + [-10.0] * 5)
    unit = mean_interval(x, value_range=(-10.0, 1.0))
    halves = mean_interval(x, np.full(x.size, 0.5), value_range=(-10.0, 1.0))
    assert (halves.low, halves.high) == pytest.approx((unit.low, unit.high), rel=1e-9)


def test_the_t_interval_is_still_available_by_name():
    x = [1.0, 1.0, 0.0, -4.0, 1.0, 1.0, 1.0, 1.0]
    t = mean_interval(x, method="t")
    assert t.method == "t" and (t.low, t.high) == pytest.approx(stats.ttest_1samp(x, 0).confidence_interval(0.95))
    with pytest.raises(ValueError, match="method"):
        mean_interval(x, method="wald")


# ------------------------------------------------------------ the paired test matches its interval
@pytest.mark.parametrize("seed", range(12))
def test_paired_p_value_rejects_exactly_when_the_interval_excludes_zero(seed):
    """The p-value is the interval's inverse: the interval at confidence 1 - p has an end at 0 (odd seeds: sampling
    weights, a twentieth of the items weighing 10 times the others)."""
    rng = np.random.default_rng(seed)
    n = 200
    y = rng.integers(0, 2, n)
    weight = np.where(rng.random(n) < 0.05, 10.0, 1.0) * rng.uniform(0.9, 1.1, n) if seed % 2 else None
    a = vc.Predictions.from_proba(rng.dirichlet([2, 2], n), y_true=y, sample_weight=weight)
    b = vc.Predictions.from_proba(np.clip(np.eye(2)[y] * 0.6 + rng.dirichlet([1, 1], n) * 0.4, 0, 1), y_true=y,
                                  sample_weight=weight)
    use_case = vc.UseCase(1, 0, -float(rng.choice([1, 4, 20])))
    policy = vc.Policy("threshold", threshold=0.7)
    result = vc.uncertainty.paired_comparison(policy, a, policy, b, use_case)
    excluded = result.low > 0 or result.high < 0
    assert (result.p_value < 0.05) == excluded
    assert result.low <= result.mean_difference <= result.high
    if 1e-6 < result.p_value < 1:  # beyond, 1 - p rounds too coarsely to invert
        spread = 1 - use_case.v_wrong
        difference = vc.item_values(policy, a, use_case) - vc.item_values(policy, b, use_case)
        at_p = mean_interval(difference, a.sample_weight, value_range=(-spread, spread),
                             confidence_level=1 - result.p_value)
        assert min(abs(at_p.low), abs(at_p.high)) < 1e-7 * spread


def all_right(sure: int, fairly_sure: int, unsure: int) -> vc.Predictions:
    """Items all of class 0, all predicted right, at confidences 0.99, 0.8 and 0.55."""
    confident = np.r_[np.full(sure, 0.99), np.full(fairly_sure, 0.8), np.full(unsure, 0.55)]
    return vc.Predictions.from_proba(np.c_[confident, 1 - confident], y_true=np.zeros(confident.size, dtype=int))


def test_rare_large_differences_are_not_called_significant():
    """A accepts 30 more items than B, all right; one of them wrong would cost 1000: no evidence A is better."""
    n = 300
    a = all_right(200, 30, 70)
    use_case = vc.UseCase(1, 0, -1000)
    result = vc.uncertainty.paired_comparison(vc.Policy("threshold", threshold=0.7), a,
                                              vc.Policy("threshold", threshold=0.9), a, use_case)
    assert result.mean_difference == pytest.approx(30 / n)
    difference = np.r_[np.zeros(200), np.ones(30), np.zeros(70)]
    assert stats.ttest_1samp(difference, 0).pvalue < 1e-6  # the t-test would be sure...
    assert result.p_value > 0.05 and result.low < 0  # ...the bounded test is not
    assert "cannot tell the two apart" in vc.wording.paired_sentences(result)[1]


def test_items_to_exclude_matches_the_interval_at_that_size():
    """90% right, 10% handed over, a wrong answer worth -1000 never seen: how many items until the low end > 0?"""
    needed = items_to_exclude([1.0] * 9 + [0.0], None, (-1000.0, 1.0))
    assert 1000 < needed < math.inf
    for n, excluded in ((math.floor(needed * 0.95 / 10) * 10, False), (math.ceil(needed * 1.05 / 10) * 10, True)):
        iv = mean_interval([1.0, 0.0], [0.9 * n, 0.1 * n], value_range=(-1000.0, 1.0), weight_kind="frequency")
        assert (iv.low > 0) == excluded, (n, iv.low)
    assert items_to_exclude([1.0, -1.0], None, (-1.0, 1.0)) == math.inf  # a mean of 0 never is


def test_the_verdict_never_promises_fewer_items_than_its_test_needs():
    """Two models with no error seen at a wrong answer of -1000: the normal approximation alone said ~45 items."""
    n = 400
    p = all_right(300, 40, 60)
    use_case = vc.UseCase(1, 0, -1000)
    v = vc.verdict({"wide": (vc.Policy("threshold", threshold=0.7), p),
                    "narrow": (vc.Policy("threshold", threshold=0.9), p)}, use_case)
    assert v.best == "wide" and v.contenders == ("narrow",)
    diff = np.r_[np.zeros(300), np.ones(40), np.zeros(60)]
    assert v.items_to_separate == items_to_exclude(diff, None, (-1001.0, 1001.0)) > 10 * n


# ------------------------------------------------------------ shown where the range is shown
def test_the_pages_say_what_each_likely_range_rests_on():
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    def captions():  # as read, without the markdown escapes of md_text
        return [c.value.replace("\\", "") for c in at.caption]

    home = [text for text in captions() if "per item: 95% sure" in text]
    assert len(home) == 1 and "wrong answer" in home[0] and "automated" in home[0]  # the best model's range
    at.switch_page("pages/value.py").run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [text for text in captions() if "per item: 95% sure" in text]
    models = {"logreg", "mlp", "naive_bayes", "random_forest", "svm_rbf"}
    assert {text.split(":")[0] for text in shown} == models
    assert all("seen in 450 items" in text for text in shown)


def test_the_comparison_carries_one_test_and_says_how_to_read_it():
    # digits at a wrong answer of -1000: mlp and logreg made no error on 'test'; a paired t-test would find mlp
    # better (p < 0.05), the bounded test cannot (one unseen error would cost 1000). The result carries the bounded
    # test only (the t-test rejected a true null up to 86% of the time in the benchmark), and the words say what
    # its interval and p-value mean.
    from pathlib import Path

    runs = vc.load_runs([str(Path(__file__).resolve().parents[2] / "sample_runs" / "digits")]).models
    use_case = vc.UseCase(1, 0, -1000)
    policies = {m: vc.fit_policy("threshold", vc.presort(runs[m].splits["val"]), use_case) for m in ("mlp", "logreg")}
    result = vc.uncertainty.paired_comparison(policies["mlp"], runs["mlp"].splits["test"], policies["logreg"],
                                              runs["logreg"].splits["test"], use_case)
    difference = (vc.item_values(policies["mlp"], runs["mlp"].splits["test"], use_case)
                  - vc.item_values(policies["logreg"], runs["logreg"].splits["test"], use_case))
    assert stats.ttest_1samp(difference, 0).pvalue < 0.05 <= result.p_value
    _, on_new_data = vc.wording.paired_sentences(result, ("mlp", "logreg"), "$")
    assert "cannot tell the two apart (the interval includes 0)" in on_new_data
    assert on_new_data.count("p = ") == 1 and "t-test" not in on_new_data and "bootstrap" not in on_new_data
