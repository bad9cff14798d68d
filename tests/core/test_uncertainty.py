"""Tests of valuecore._stats.uncertainty: intervals, paired tests, bootstrap bands.

Exactness first (the t interval by hand, weights as copies, every resampled
curve and re-tuned threshold against the engine on the materialised
resample), then statistics (coverage, detection), then the guard rails
(mismatched items, determinism).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import valuecore as vc
from valuecore._stats import grouped_bootstrap as _grouped_bootstrap
from valuecore._stats.uncertainty import (
    Interval,
    _run_tables,
    bootstrap_interval,
    mean_interval,
    paired_comparison,
    policy_interval,
    threshold_stability,
    voc_band,
)
from valuecore.wording import interval_sentences, paired_sentences
from helpers.core import voc_values

USE_CASE = vc.UseCase(1.0, 0.0, -4.0)


# --------------------------------------------------------------------------
# synthetic data
# --------------------------------------------------------------------------
def binary_run(n, seed, *, separable=False, informative=True, rounding=None, weights=None, ids=None, y_true=None):
    """Binary predictions with confidence in [0.5, 1].

    Calibrated by default (correct with probability = confidence);
    ``separable`` makes every item above 0.75 right and every other wrong;
    ``informative=False`` gives a model whose confidence says nothing.
    """
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.5, 1.0, n)
    if rounding is not None:
        conf = np.round(conf, rounding)
    if separable:
        correct = conf > 0.75
    elif informative:
        correct = rng.random(n) < conf
    else:
        correct = rng.random(n) < 0.6
    y_pred = rng.integers(0, 2, n)
    if y_true is None:
        y_true = np.where(correct, y_pred, 1 - y_pred)
    proba = np.where(y_pred[:, None] == np.arange(2), conf[:, None], 1 - conf[:, None])
    return vc.Predictions.from_proba(proba, y_true=y_true, sample_weight=weights, ids=ids)


def sorted_weights(run, row):
    """Counts given in sorted order, as sample weights in the run's original order."""
    weights = np.empty(run.predictions.n)
    weights[run.order] = row
    return weights


# --------------------------------------------------------------------------
# the t interval
# --------------------------------------------------------------------------
def test_t_interval_matches_scipy_by_hand():
    values = np.random.default_rng(1).normal(2.0, 3.0, 37)
    iv = mean_interval(values, confidence_level=0.9, method="t")
    n = values.size
    se = values.std(ddof=1) / math.sqrt(n)
    half = stats.t.ppf(0.95, n - 1) * se
    assert iv.mean == pytest.approx(values.mean(), rel=1e-14)
    assert iv.std_error == pytest.approx(se, rel=1e-12)
    assert (iv.low, iv.high) == pytest.approx((values.mean() - half, values.mean() + half), rel=1e-12)
    assert iv.n == n and iv.confidence == 0.9 and iv.method == "t"
    # ... and scipy's own one-sample t interval.
    scipy_ci = stats.ttest_1samp(values, 0.0).confidence_interval(0.9)
    assert (iv.low, iv.high) == pytest.approx((scipy_ci.low, scipy_ci.high), rel=1e-12)


def test_weight_two_is_the_item_twice():
    rng = np.random.default_rng(2)
    values = rng.normal(size=40)
    weights = rng.integers(0, 4, 40)
    weighted = mean_interval(values, weights)
    written_out = mean_interval(np.repeat(values, weights))
    for field in ("mean", "std_error", "low", "high", "n"):
        assert getattr(weighted, field) == pytest.approx(getattr(written_out, field), rel=1e-12), field


def test_bootstrap_weight_two_is_the_item_twice_draw_for_draw():
    rng = np.random.default_rng(3)
    values = rng.normal(size=30)
    weights = rng.integers(0, 4, 30)
    weighted = bootstrap_interval(values, weights, rng=np.random.default_rng(9), n_resamples=300)
    written_out = bootstrap_interval(np.repeat(values, weights), rng=np.random.default_rng(9), n_resamples=300)
    assert (weighted.low, weighted.high, weighted.std_error) == pytest.approx(
        (written_out.low, written_out.high, written_out.std_error), rel=1e-12
    )


def test_fractional_weights_are_sampling_weights():
    rng = np.random.default_rng(4)
    values = rng.normal(size=50)
    weights = rng.uniform(0.2, 3.0, 50)
    iv = mean_interval(values, weights)
    # Scale-free, and Kish's effective size.
    scaled = mean_interval(values, weights * 7.5)
    assert (scaled.mean, scaled.std_error, scaled.low) == pytest.approx((iv.mean, iv.std_error, iv.low), rel=1e-12)
    assert iv.n == pytest.approx(weights.sum() ** 2 / (weights**2).sum())
    # The sandwich variance, by hand.
    mean = np.average(values, weights=weights)
    se = math.sqrt(50 / 49 * np.sum(weights**2 * (values - mean) ** 2)) / weights.sum()
    assert iv.std_error == pytest.approx(se, rel=1e-12)
    # Equal fractional weights are the unweighted interval.
    halves = mean_interval(values, np.full(50, 0.5))
    plain = mean_interval(values)
    assert (halves.std_error, halves.low, halves.n) == pytest.approx((plain.std_error, plain.low, plain.n))
    with pytest.raises(ValueError, match="whole numbers"):
        mean_interval(values, weights, weight_kind="frequency")


def test_too_few_items_give_an_unbounded_interval_without_warnings():
    iv = mean_interval([3.0])
    assert iv.mean == 3.0 and math.isnan(iv.std_error)
    assert iv.low == -math.inf and iv.high == math.inf
    assert "too few items" in " ".join(interval_sentences(iv))
    boot = bootstrap_interval([3.0], rng=np.random.default_rng(0))
    assert boot.low == -math.inf and boot.high == math.inf  # not a zero-width "certainty"
    constant = mean_interval([2.0, 2.0, 2.0])
    assert constant.std_error == 0 and constant.low == constant.high == 2.0
    with pytest.raises(ValueError, match="positive weight"):
        mean_interval([1.0, 2.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="confidence"):
        mean_interval([1.0, 2.0], confidence_level=95)


def test_the_words_separate_this_data_from_new_data():
    """The interval holds numbers; wording.interval_sentences says them, the fact first, then the estimate."""
    iv = Interval(mean=1234.5, std_error=10.0, low=1214.9, high=1254.1, n=100, confidence=0.9, method="t")
    on_data, on_new_data = interval_sentences(iv, "EUR")
    assert on_data == "On this data: 1,234 EUR per item."
    assert on_new_data.startswith(
        "Expected on new data from the same distribution: 1,234 EUR per item (90% interval 1,215 EUR to 1,254 EUR)")
    assert interval_sentences(mean_interval([-1.0, -2.0, -3.0]), "$")[0] == "On this data: -$2.00 per item."
    assert interval_sentences(iv)[0] == "On this data: 1,234 per item."
    assert interval_sentences(iv)[1].startswith("Expected on new data")


@pytest.mark.slow
def test_t_interval_covers_about_95_percent():
    """Coverage of the true mean over 2000 simulated evaluation splits of 200 items.

    Per-item values of a use case (1 correct, 0 abstain, -4 wrong): skewed,
    as real value data is. Binomial standard error of the rate ~0.005.
    """
    rng = np.random.default_rng(2024)
    outcomes, probs = np.array([1.0, 0.0, -4.0]), np.array([0.8, 0.12, 0.08])
    truth = outcomes @ probs
    n_sets, n = 2000, 200
    hits_t = hits_weighted = hits_boot = 0
    for s in range(n_sets):
        values = rng.choice(outcomes, size=n, p=probs)
        iv = mean_interval(values)
        hits_t += iv.low <= truth <= iv.high
        weighted = mean_interval(values, rng.uniform(0.5, 2.0, n))
        hits_weighted += weighted.low <= truth <= weighted.high
        if s < 500:
            boot = bootstrap_interval(values, rng=rng, n_resamples=500)
            hits_boot += boot.low <= truth <= boot.high
    assert 0.93 <= hits_t / n_sets <= 0.97
    # Sampling weights: the bound allows for one more item of the largest weight (2 here, the average being 1.25),
    # since an unseen costly outcome may sit among the heaviest items (issue 32): 97.3% here with an interval 4%
    # wider than the average-item reading's 96.5%, which covered as little as 68% where costly errors sat in a
    # heavy group.
    assert 0.93 <= hits_weighted / n_sets <= 0.98
    assert 0.92 <= hits_boot / 500 <= 0.975


# --------------------------------------------------------------------------
# bootstrap and policy intervals
# --------------------------------------------------------------------------
def test_bootstrap_interval_agrees_with_t_on_a_large_sample():
    values = np.random.default_rng(5).normal(1.0, 2.0, 5000)
    t = mean_interval(values)
    boot = bootstrap_interval(values, rng=np.random.default_rng(0), n_resamples=2000)
    assert boot.mean == t.mean and boot.method == "bootstrap"
    assert boot.std_error == pytest.approx(t.std_error, rel=0.1)
    assert boot.low == pytest.approx(t.low, abs=0.3 * t.std_error)
    assert boot.high == pytest.approx(t.high, abs=0.3 * t.std_error)


def test_policy_interval_is_built_on_item_values():
    tune, evaluated = binary_run(500, 1), binary_run(800, 2, weights=np.random.default_rng(0).integers(1, 3, 800))
    policy = vc.fit_policy("threshold", vc.presort(tune), vc.UseCase(10, 0, -40))
    result = vc.evaluate(policy, evaluated, vc.UseCase(10, 0, -40))
    iv = policy_interval(policy, evaluated, vc.UseCase(10, 0, -40))
    assert iv.mean == pytest.approx(result.value_per_item, rel=1e-12)
    assert iv.n == evaluated.total_weight
    boot = policy_interval(policy, evaluated, vc.UseCase(10, 0, -40), method="bootstrap", rng=np.random.default_rng(0))
    assert boot.mean == iv.mean and boot.low < iv.mean < boot.high
    assert boot == policy_interval(
        policy, evaluated, vc.UseCase(10, 0, -40), method="bootstrap", rng=np.random.default_rng(0)
    )
    with pytest.raises(ValueError, match="method"):
        policy_interval(policy, evaluated, USE_CASE, method="bayes")


# --------------------------------------------------------------------------
# paired comparison
# --------------------------------------------------------------------------
def test_identical_models_differ_by_zero_with_p_value_one():
    p = binary_run(300, 1, weights=np.random.default_rng(1).integers(1, 3, 300))
    policy = vc.Policy("threshold", threshold=0.7)
    result = paired_comparison(policy, p, policy, p, USE_CASE)
    assert result.mean_difference == 0.0
    assert result.p_value == 1.0
    assert result.low == result.high == 0.0
    on_data, on_distribution = paired_sentences(result)
    assert "exactly the same" in on_data
    assert "cannot tell the two apart" in on_distribution


def test_a_clearly_better_model_is_detected():
    good = binary_run(2000, 1)
    # Same items, same labels; a second model that guesses (its confidence is noise).
    noisy = binary_run(2000, 99, y_true=good.y_true)
    use_case = vc.UseCase(1.0, 0.0, -4.0)
    result = paired_comparison(
        vc.Policy("threshold", threshold=0.8), good, vc.Policy("threshold", threshold=0.8), noisy, use_case,
        names=("good", "noisy"),
    )
    assert result.mean_difference > 0 and result.low > 0
    assert result.p_value < 0.001
    on_data, on_distribution = paired_sentences(result, names=("good", "noisy"))
    assert "good is better" in on_distribution
    assert "p < 0.001)" in on_distribution and "t-test" not in on_distribution and "bootstrap" not in on_distribution
    assert on_data.startswith("On these 2,000 items, good is worth")
    a = vc.item_values(vc.Policy("threshold", threshold=0.8), good, use_case)
    b = vc.item_values(vc.Policy("threshold", threshold=0.8), noisy, use_case)
    assert result.mean_difference == pytest.approx(np.mean(a - b), rel=1e-12)
    swapped = paired_comparison(
        vc.Policy("threshold", threshold=0.8), noisy, vc.Policy("threshold", threshold=0.8), good, use_case,
    )
    assert swapped.mean_difference == pytest.approx(-result.mean_difference)
    assert (swapped.low, swapped.high) == pytest.approx((-result.high, -result.low), rel=1e-9)
    assert swapped.p_value == pytest.approx(result.p_value, rel=1e-9)


def test_the_paired_comparison_draws_nothing_and_says_so_when_given_an_rng():
    good, noisy = binary_run(300, 1), binary_run(300, 99)
    noisy = vc.Predictions.from_proba(noisy.proba, y_true=good.y_true)
    policy = vc.Policy("threshold", threshold=0.8)
    plain = paired_comparison(policy, good, policy, noisy, USE_CASE)
    with pytest.warns(DeprecationWarning, match="rng, n_resamples and batch are ignored"):
        seeded = paired_comparison(policy, good, policy, noisy, USE_CASE, rng=np.random.default_rng(0),
                                   n_resamples=50)
    assert seeded == plain
    assert not {"p_value_t", "p_value_bootstrap"} & set(vars(plain))  # the tests whose level failed are gone


def test_paired_weights_are_copies():
    rng = np.random.default_rng(6)
    weights = rng.integers(1, 4, 200)
    a, b = binary_run(200, 3, weights=weights), binary_run(200, 4, weights=weights)
    b = vc.Predictions.from_proba(b.proba, y_true=a.y_true, sample_weight=weights)
    written = np.repeat(np.arange(200), weights)
    a2 = vc.Predictions.from_proba(a.proba[written], y_true=a.y_true[written])
    b2 = vc.Predictions.from_proba(b.proba[written], y_true=b.y_true[written])
    policy = vc.Policy("threshold", threshold=0.75)
    one = paired_comparison(policy, a, policy, b, USE_CASE)
    two = paired_comparison(policy, a2, policy, b2, USE_CASE)
    assert (one.mean_difference, one.low, one.high, one.p_value, one.n) == pytest.approx(
        (two.mean_difference, two.low, two.high, two.p_value, two.n), rel=1e-9
    )


def test_items_are_matched_by_id_in_any_order():
    ids = np.array([f"item{i}" for i in range(150)])
    a = binary_run(150, 1, ids=ids)
    b_ordered = binary_run(150, 2, ids=ids, y_true=a.y_true)
    shuffle = np.random.default_rng(0).permutation(150)
    b_shuffled = b_ordered.subset(shuffle)
    policy = vc.Policy("threshold", threshold=0.7)
    ordered = paired_comparison(policy, a, policy, b_ordered, USE_CASE)
    shuffled = paired_comparison(policy, a, policy, b_shuffled, USE_CASE)
    assert shuffled == ordered


def test_mismatched_items_raise_clear_errors():
    policy = vc.Policy("threshold", threshold=0.7)
    ids = np.array([f"x{i}" for i in range(10)], dtype=object)
    a = binary_run(10, 1, ids=ids)

    other_ids = ids.copy()
    other_ids[[2, 5]] = ["new1", "new2"]
    b = binary_run(10, 2, ids=other_ids, y_true=a.y_true)
    with pytest.raises(ValueError, match=r"2 ids of A are missing from B \(e.g. 'x2', 'x5'\).*2 ids of B are missing"):
        paired_comparison(policy, a, policy, b, USE_CASE)

    shorter = binary_run(9, 2, ids=ids[:9], y_true=a.y_true[:9])
    with pytest.raises(ValueError, match=r"1 ids of A are missing from B \(e.g. 'x9'\)"):
        paired_comparison(policy, a, policy, shorter, USE_CASE)

    no_ids = binary_run(10, 1)
    with pytest.raises(ValueError, match="A has 10 items and B has 9.*row order"):
        paired_comparison(policy, no_ids, policy, binary_run(9, 2), USE_CASE)

    relabelled = binary_run(10, 2, y_true=1 - no_ids.y_true)
    with pytest.raises(ValueError, match="same true label.*differ on 10 items.*row 0"):
        paired_comparison(policy, no_ids, policy, relabelled, USE_CASE)

    reweighted = binary_run(10, 2, y_true=no_ids.y_true, weights=np.full(10, 2.0))
    with pytest.raises(ValueError, match="sample weights of A and B differ on 10 items"):
        paired_comparison(policy, no_ids, policy, reweighted, USE_CASE)

    repeated = ids.copy()
    repeated[1] = "x0"
    with pytest.raises(ValueError, match="ids of B are not unique"):
        paired_comparison(policy, a, policy, binary_run(10, 2, ids=repeated), USE_CASE)


# --------------------------------------------------------------------------
# resampled VOC curves and thresholds: exact against the engine
# --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(12))
def test_resampled_voc_values_are_the_engine_on_the_resample(seed):
    """Counts on the sorted order == sample weights on the run: every mode, ties and undrawn groups included."""
    rng = np.random.default_rng(seed)
    rounding = [None, 1, 2][seed % 3]  # ties of confidence are never split
    n = int(rng.integers(5, 80))
    evaluated, tune = binary_run(n, seed, rounding=rounding), binary_run(n + 7, seed + 100, rounding=rounding)
    eval_run, tune_run = vc.presort(evaluated), vc.presort(tune)
    tables_e, tables_t = _run_tables(eval_run, "test"), _run_tables(tune_run, "test")
    omegas = rng.uniform(0, 6, 25)
    counts_e = tables_e.sampler.counts(4, rng)
    counts_t = tables_t.sampler.counts(4, rng)
    for mode in vc.curves.VOC_MODES:
        got = voc_values(mode, omegas, tables_e, counts_e, tables_t, counts_t)
        for b in range(4):
            weighted_e = vc.presort(
                binary_run(n, seed, rounding=rounding, weights=sorted_weights(eval_run, counts_e[b]))
            )
            weighted_t = vc.presort(
                binary_run(n + 7, seed + 100, rounding=rounding, weights=sorted_weights(tune_run, counts_t[b]))
            )
            want = vc.voc_curve(weighted_e, mode, weighted_t).value_at(omegas)
            np.testing.assert_allclose(got[b], want, rtol=1e-12, atol=1e-12, err_msg=f"{mode} resample {b}")
        # Unit counts are the point curve itself.
        ones = voc_values(mode, omegas, tables_e, np.ones((1, n), np.int64), tables_t, np.ones((1, n + 7), np.int64))
        np.testing.assert_allclose(ones[0], vc.voc_curve(eval_run, mode, tune_run).value_at(omegas), atol=1e-12)


def _node_counts(run, tree, item_counts, values):
    """Item counts in sorted order, shape (R, n), as counts per node of the group tree, shape (R, 2P, K)."""
    p = run.predictions
    group = np.repeat(np.arange(run.n_groups), np.diff(np.r_[0, run.group_end]))
    if isinstance(values, vc.UseCase):
        category = (~p.correct[run.order]).astype(int)
    else:
        gain = values.for_classes(p.classes).gains[p.y_true, p.y_pred][run.order]
        category = np.searchsorted(tree.gains, gain)
    size, n_categories = 1 << tree.depth, tree.gains.size
    nodes = np.zeros((item_counts.shape[0], 2 * size, n_categories), dtype=np.int64)
    for r, row in enumerate(item_counts):
        np.add.at(nodes[r], (size + group, category), row)
    for v in range(size - 1, 0, -1):
        nodes[:, v] = nodes[:, 2 * v] + nodes[:, 2 * v + 1]
    return nodes


def _tree_thresholds_on(run, values, item_counts):
    """The grouped search's thresholds when the resamples are the given item counts (no binomials)."""
    tree = _grouped_bootstrap.group_tree(run, values)
    nodes = _node_counts(run, tree, item_counts, values)
    best = _grouped_bootstrap.search(tree, nodes[:, 1], lambda r, node, counts: nodes[r, 2 * node])
    return np.where(best >= 0, run.thresholds[np.maximum(best, 0)], np.nan)


VALUES_FOR_TIES = [vc.UseCase(1, 0, -4), vc.UseCase(1, 0, -1), vc.UseCase(2, 1, 0), vc.UseCase(1, 0, 0),
                   vc.UseCase(0.7, 0.1, -2.3), vc.UseCase(1, 3, 0),
                   vc.ValueMatrix(("0", "1"), np.array([[2.0, -5.0, 0.0], [-1.0, 1.0, 0.0]])),
                   vc.ValueMatrix(("0", "1"), np.array([[0.3, -1.7, 0.1], [-0.9, 1.1, 0.0]]))]  # fmt: skip


@pytest.mark.parametrize("seed", range(16))
def test_resampled_thresholds_follow_fit_policy_tie_rule(seed):
    """The grouped search, pruning included, re-tunes exactly as fit_policy on the materialised resample."""
    rounding = [None, 1, 2, None][seed % 4]
    values = VALUES_FOR_TIES[seed % len(VALUES_FOR_TIES)]
    n = [40, 3, 1, 200][seed % 4]
    weights = None if seed % 3 else np.random.default_rng(seed).integers(0, 4, n)
    if weights is not None and not weights.any():
        weights[0] = 1
    tune = binary_run(n, seed, rounding=rounding, weights=weights)
    run = vc.presort(tune)
    counts = _run_tables(run, "test").sampler.counts(30, np.random.default_rng(seed))  # item bootstrap draws
    got = _tree_thresholds_on(run, values, counts)
    for b in range(30):
        resample = vc.presort(binary_run(n, seed, rounding=rounding, weights=sorted_weights(run, counts[b])))
        want = vc.fit_policy("threshold", resample, values).threshold
        assert (want is None and math.isnan(got[b])) or got[b] == want, (b, got[b], want)
    result = threshold_stability(run, values, rng=np.random.default_rng(seed), n_resamples=30)
    assert result.tuned_threshold == vc.fit_policy("threshold", run, values).threshold
    assert set(result.thresholds[~np.isnan(result.thresholds)]) <= set(run.thresholds)


@pytest.mark.parametrize("values", [vc.UseCase(1, 0, -1), VALUES_FOR_TIES[6]], ids=["use_case", "matrix"])
def test_grouped_resamples_draw_the_item_bootstrap_distribution(values):
    """Multinomial over (confidence, gain) cells by binomial splits = resampling the items."""
    from valuecore._stats.uncertainty import _thresholds_by_items

    run = vc.presort(binary_run(60, 7, rounding=1, weights=np.random.default_rng(7).integers(1, 3, 60)))
    matrix = values.for_classes(run.predictions.classes)
    n_resamples = 20_000
    grouped = threshold_stability(run, values, rng=np.random.default_rng(1), n_resamples=n_resamples).thresholds
    items = _thresholds_by_items(run, matrix, n_resamples, np.random.default_rng(2), None)
    labels = np.unique(np.r_[np.nan_to_num(grouped, nan=-1.0), np.nan_to_num(items, nan=-1.0)])
    table = np.array([[np.sum(np.nan_to_num(t, nan=-1.0) == v) for v in labels] for t in (grouped, items)])
    table = table[:, table.sum(axis=0) >= 10]  # chi-square needs filled cells
    assert table.shape[1] >= 3  # the threshold really varies
    assert stats.chi2_contingency(table).pvalue > 1e-4


def test_fractional_weights_resample_the_items():
    """Sampling weights keep each drawn item's weight: no cell counts, the item bootstrap."""
    run = vc.presort(binary_run(50, 2, weights=np.random.default_rng(2).uniform(0.5, 2.0, 50)))
    matrix = USE_CASE.for_classes(run.predictions.classes)
    from valuecore._stats.uncertainty import _thresholds_by_items

    got = threshold_stability(run, USE_CASE, rng=np.random.default_rng(4), n_resamples=40).thresholds
    np.testing.assert_array_equal(got, _thresholds_by_items(run, matrix, 40, np.random.default_rng(4), None))


def test_threshold_stability_with_a_value_matrix():
    run = vc.presort(binary_run(60, 3))
    matrix = vc.ValueMatrix(("0", "1"), np.array([[2.0, -5.0, 0.0], [-1.0, 1.0, 0.0]]))
    counts = _run_tables(run, "test").sampler.counts(20, np.random.default_rng(1))
    got = _tree_thresholds_on(run, matrix, counts)
    for b in range(20):
        resample = vc.presort(binary_run(60, 3, weights=sorted_weights(run, counts[b])))
        want = vc.fit_policy("threshold", resample, matrix).threshold
        assert (want is None and math.isnan(got[b])) or got[b] == want


# --------------------------------------------------------------------------
# bands and stability: statistics
# --------------------------------------------------------------------------
OMEGAS = np.linspace(0.0, 8.0, 41)


@pytest.mark.parametrize("mode", vc.curves.VOC_MODES)
def test_band_contains_the_point_curve_and_widens_as_n_shrinks(mode):
    widths = []
    for n in (3000, 300):
        eval_run, tune_run = vc.presort(binary_run(n, 1)), vc.presort(binary_run(n, 2))
        band = voc_band(eval_run, mode, OMEGAS, tune_run=tune_run, rng=np.random.default_rng(0), n_resamples=200)
        point = vc.voc_curve(eval_run, mode, tune_run).value_at(OMEGAS)
        inside = (band.low - 1e-12 <= point) & (point <= band.high + 1e-12)
        assert inside.mean() >= 0.9, (n, inside.mean())
        assert np.all(band.low <= band.median) and np.all(band.median <= band.high)
        widths.append(np.mean(band.high - band.low))
    assert widths[1] > 2 * widths[0]  # ~sqrt(10) in theory
    frame = band.to_frame("m")
    assert list(frame.columns) == ["model", "mode", "omega", "low", "median", "high"] and len(frame) == OMEGAS.size


def test_tuned_band_includes_the_noise_of_tuning():
    """Re-tuning on a resampled small tuning split widens the band over the evaluation noise alone."""
    eval_run = vc.presort(binary_run(2000, 1))
    tune_run = vc.presort(binary_run(100, 2))
    omegas = np.linspace(1.0, 6.0, 11)
    tuned = voc_band(eval_run, "tuned", omegas, tune_run=tune_run, rng=np.random.default_rng(0))
    fixed_threshold = voc_band(eval_run, "calibrated", omegas, rng=np.random.default_rng(0))
    assert np.mean(tuned.high - tuned.low) > 1.5 * np.mean(fixed_threshold.high - fixed_threshold.low)
    with pytest.raises(ValueError, match="tune_run"):
        voc_band(eval_run, "tuned", omegas, rng=np.random.default_rng(0))


def test_threshold_spread_is_real_on_noisy_data_and_collapses_on_separable_data():
    noisy = threshold_stability(vc.presort(binary_run(2000, 3)), USE_CASE, rng=np.random.default_rng(0))
    separable = threshold_stability(
        vc.presort(binary_run(2000, 3, separable=True)), USE_CASE, rng=np.random.default_rng(0)
    )
    assert noisy.thresholds.shape == (1000,)
    assert noisy.spread > 0.03
    assert separable.spread < 0.002
    assert noisy.low <= noisy.median <= noisy.high
    assert noisy.share_always_abstain == 0.0
    # A use case where abstaining always pays: every resample abstains.
    never = threshold_stability(
        vc.presort(binary_run(200, 3)), vc.UseCase(1.0, 2.0, 0.0), rng=np.random.default_rng(0), n_resamples=50
    )
    assert never.share_always_abstain == 1.0 and never.low is None and never.median is None
    assert math.isnan(never.spread) and never.tuned_threshold is None


# --------------------------------------------------------------------------
# determinism and guard rails
# --------------------------------------------------------------------------
def test_fixed_seed_gives_identical_results_whatever_the_batch_size():
    values = np.random.default_rng(0).normal(size=3000)
    one = bootstrap_interval(values, rng=np.random.default_rng(11))
    assert one == bootstrap_interval(values, rng=np.random.default_rng(11))
    assert one == bootstrap_interval(values, rng=np.random.default_rng(11), batch=7)
    assert one != bootstrap_interval(values, rng=np.random.default_rng(12))

    run = vc.presort(binary_run(1500, 4))
    first = threshold_stability(run, USE_CASE, rng=np.random.default_rng(5), n_resamples=200)
    again = threshold_stability(run, USE_CASE, rng=np.random.default_rng(5), n_resamples=200, batch=13)
    np.testing.assert_array_equal(first.thresholds, again.thresholds)

    tune = vc.presort(binary_run(500, 5))
    for mode in vc.curves.VOC_MODES:
        a = voc_band(run, mode, OMEGAS, tune_run=tune, rng=np.random.default_rng(3), n_resamples=60)
        b = voc_band(run, mode, OMEGAS, tune_run=tune, rng=np.random.default_rng(3), n_resamples=60)
        np.testing.assert_array_equal(a.low, b.low)
        np.testing.assert_array_equal(a.high, b.high)


def test_randomness_only_through_a_generator():
    with pytest.raises(TypeError, match="Generator"):
        bootstrap_interval([1.0, 2.0, 3.0], rng=0)
    run = vc.presort(binary_run(50, 1))
    with pytest.raises(ValueError, match="omegas"):
        voc_band(run, "oracle", [-1.0, 1.0], rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="mode"):
        voc_band(run, "best", [1.0], rng=np.random.default_rng(0))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_result_interval_equals_policy_interval_for_counts(seed):
    """The O(C^2) interval from the confusion cells is the O(n) one over items (whole-number weights)."""
    rng = np.random.default_rng(seed)
    n, n_classes = 400, 3
    proba = rng.dirichlet(np.ones(n_classes), n)
    predictions = vc.Predictions.from_proba(
        proba, rng.integers(0, n_classes, n), sample_weight=rng.integers(0, 4, n)
    )
    matrix = vc.ValueMatrix(("0", "1", "2"), rng.normal(size=(n_classes, n_classes + 1)))
    policy = vc.Policy("threshold", threshold=0.5)
    by_cells = vc.uncertainty.result_interval(vc.evaluate(policy, predictions, matrix), matrix)
    by_items = vc.uncertainty.policy_interval(policy, predictions, matrix)
    assert by_items.method == by_cells.method == "bounded"
    for field in ("mean", "std_error", "low", "high", "n", "n_acted", "n_worst", "worst_value"):
        assert getattr(by_cells, field) == pytest.approx(getattr(by_items, field), rel=1e-12, abs=1e-12)


def test_result_interval_refuses_an_estimate():
    predictions = vc.Predictions.from_proba([[0.9, 0.1], [0.3, 0.7]])
    estimated = vc.estimate(vc.Policy("accept_all"), predictions, vc.UseCase(1, 0, -1))
    with pytest.raises(ValueError, match="labelled split"):
        vc.uncertainty.result_interval(estimated, vc.UseCase(1, 0, -1))


def test_a_resample_that_can_only_tie_with_accepting_nothing_abstains():
    """Every prefix worth exactly 0 (wrong answers cost nothing, none is right): "accept nothing" wins the tie."""
    tune = binary_run(30, 1, rounding=1, y_true=None)
    wrong = vc.Predictions.from_top_label(tune.y_pred.astype(str), tune.confidence, (1 - tune.y_pred).astype(str),
                                          classes=["0", "1"])  # fmt: skip
    run = vc.presort(wrong)
    result = threshold_stability(run, vc.UseCase(1, 0, 0), rng=np.random.default_rng(0), n_resamples=50)
    assert vc.fit_policy("threshold", run, vc.UseCase(1, 0, 0)).threshold is None
    assert np.isnan(result.thresholds).all() and result.share_always_abstain == 1.0


@pytest.mark.parametrize("weights", [None, "integers"])
def test_bootstrap_by_value_draws_the_item_bootstrap_distribution(weights, monkeypatch):
    """Counts per distinct value (multinomial) = resampling the items, summed per value."""
    from valuecore._stats import uncertainty as _uncertainty
    rng = np.random.default_rng(3)
    values = rng.choice([-4.0, 0.0, 1.0, 2.5], 300, p=[0.1, 0.2, 0.6, 0.1])
    weight = None if weights is None else rng.integers(0, 4, 300)
    by_value = bootstrap_interval(values, weight, rng=np.random.default_rng(1), n_resamples=20_000)
    monkeypatch.setattr(_uncertainty, "_MAX_VALUE_CELLS", 0)  # the item bootstrap
    by_item = bootstrap_interval(values, weight, rng=np.random.default_rng(2), n_resamples=20_000)
    assert by_value.mean == by_item.mean
    assert by_value.low == pytest.approx(by_item.low, abs=0.02)
    assert by_value.high == pytest.approx(by_item.high, abs=0.02)
    w = np.ones(300) if weight is None else weight
    v, cell = np.unique(values, return_inverse=True)
    cell_weight = np.bincount(cell, weights=w)
    means = {}
    for name, seed in (("value", 5), ("item", 6)):
        if name == "value":
            means[name] = _uncertainty._bootstrap_means_by_value(v, cell_weight, np.random.default_rng(seed), 20_000)
        else:
            means[name] = _uncertainty._bootstrap_means(values, w, "frequency", np.random.default_rng(seed), 20_000,
                                                        None)  # fmt: skip
    assert stats.ks_2samp(means["value"], means["item"]).pvalue > 1e-4
    assert abs(np.std(means["value"]) / np.std(means["item"]) - 1) < 0.05
