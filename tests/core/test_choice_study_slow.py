"""The choice study's instrument (benchmarks/choice_study.py): its truth, its oracle and its scoring.

A small deterministic grid (use cases at omega 1, 20 and 1000, a rare costly matrix and the binary
asymmetric one, splits of 300 items, 3 seeds, 50,000 new items) is scored once for the product, the naive
analyst, "best on the evaluated split", and two choosers written here: one that always answers no model,
one that deploys the model that did worst on the evaluated split on every item. The checks are about the
instrument, not about the recommendation: the oracle is never beaten, the truth agrees with the new
items' labels, no model is worth the baseline, a terrible choice is caught losing money, the figures
reproduce, and the product's JSON path decides as the policy in memory.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import valuecore as vc

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import choice_study as cs  # noqa: E402

pytestmark = pytest.mark.slow

N_NEW = 50_000
SEEDS = (0, 1, 2)
CELLS = [cs.Cell("use_case", 1.0, 300), cs.Cell("use_case", 20.0, 300), cs.Cell("use_case", 1000.0, 300),
         cs.Cell("rare_costly", 100.0, 300), cs.Cell("binary_asymmetric", math.nan, 300)]


def choose_no_model(pipeline, values, context):
    return None, None, {}


def choose_terrible(pipeline, values, context):
    """Act on every item with the model whose acting on every item did worst on the evaluated split."""
    worst = None
    for model in pipeline.runs:
        per_item = vc.evaluate(vc.Policy("accept_all"), pipeline.predictions(model, context.eval_split),
                               pipeline.values_for(model, values)).value_per_item
        if worst is None or per_item < worst[1]:
            worst = (model, per_item)
    return worst[0], vc.Policy("accept_all"), {}


cs.CHOOSERS.setdefault("test_no_model", choose_no_model)
cs.CHOOSERS.setdefault("test_terrible", choose_terrible)
CHOOSERS = ("product", "naive", "best_on_test", "test_no_model", "test_terrible")


@pytest.fixture(scope="module")
def rows():
    return cs.run_grid(CELLS, SEEDS, CHOOSERS, n_new=N_NEW, serve_every=1)


def by(rows, chooser):
    return [r for r in rows if r["chooser"] == chooser]


def test_every_scenario_is_scored_for_every_chooser(rows):
    assert len(rows) == len(CELLS) * len(SEEDS) * len(CHOOSERS)
    summary = cs.summarize(rows, CHOOSERS)
    assert {s["group"] for s in summary} >= {"all", "use cases", "matrices", "omega >= 20 (and rare x cost)"}
    table = cs.format_table(summary)
    assert "omega=1000, n=300" in table and "test_terrible" in table


def test_no_chooser_beats_the_oracle(rows):
    for r in rows:
        assert not r["beats_oracle"], r
        assert r["regret"] >= -2 * r["regret_se"] - 1e-12, r
    # the choosers that pick among the product's candidates, or one threshold per model, can at best match it
    for r in rows:
        if r["chooser"] in ("product", "best_on_test", "naive", "test_no_model"):
            assert r["regret"] >= -1e-12 * (1 + abs(r["oracle"])), r


@pytest.mark.parametrize("seed, best_is", [(2, "expected_value"), (0, "class_thresholds*")])
def test_the_oracle_weighs_every_candidate_and_each_models_thresholds_on_the_new_items(seed, best_is):
    scenario = cs.make_scenario(CELLS[4], seed, N_NEW)
    truth = scenario.truth
    candidates = [(c.model, c.policy) for c in vc.recommend(cs.StudyPipeline(scenario.runs), scenario.values)
                  .candidates]
    best = cs.oracle(truth, scenario.values, candidates)
    options = [truth.value(truth.item_gains(m, truth.actions(m, p, scenario.values)))[0] for m, p in candidates]
    options += [truth.value(gains)[0] for model in truth.predictions
                for gains in cs.threshold_oracles(truth, model).values()]
    assert best.value == max(options) > truth.baseline
    assert best.name.endswith("/" + best_is)  # both kinds of options are the best somewhere


def test_no_model_is_worth_exactly_the_baseline(rows):
    for r in by(rows, "test_no_model"):
        assert r["no_model"] and r["value"] == r["baseline"] and r["se"] == 0 and not r["loses_money"]
        assert r["regret"] == pytest.approx(r["oracle"] - r["baseline"], abs=1e-12)
        assert r["cautious_miss"] == r["oracle_earns"]
        if r["kind"] == "use_case":
            assert r["baseline"] == 0
    binary = [r for r in by(rows, "test_no_model") if r["kind"] == "binary_asymmetric"]
    assert binary and all(r["baseline"] == -0.5 for r in binary)  # a hand-off costs 0.5 whatever the class


def test_a_terrible_choice_is_caught_losing_money(rows):
    costly = [r for r in by(rows, "test_terrible") if r["kind"] == "use_case" and r["cost"] >= 20]
    assert costly and all(r["loses_money"] and r["value"] < r["baseline"] - 5 * r["se"] for r in costly)
    summary = {(s["group"], s["chooser"]): s for s in cs.summarize(rows, CHOOSERS)}
    assert summary["omega=1000, n=300", "test_terrible"]["loses_money"] == 1.0
    assert summary["omega=1000, n=300", "test_terrible"]["worst_loss"] < -100  # nearly every wrong answer costs 1000


def test_the_naive_analysts_figures_reproduce(rows):
    again = cs.run_grid(CELLS[1:3], SEEDS[:2], ("naive",), n_new=N_NEW)
    first = {(r["kind"], r["cost"], r["seed"]): r for r in by(rows, "naive")}
    assert again
    for r in again:
        original = first[r["kind"], r["cost"], r["seed"]]
        for key in ("model", "rule", "value", "se", "oracle", "regret", "loses_money", "no_model"):
            assert r[key] == original[key], key


def test_the_json_serving_path_decides_as_the_recommendation_in_memory(rows):
    product = by(rows, "product")
    assert product and all(r["serving_mismatch"] == 0 for r in product)


def test_the_serving_path_of_no_model_hands_every_item_over():
    scenario = cs.make_scenario(CELLS[0], 0, 2000)
    pipeline = cs.StudyPipeline(scenario.runs)
    pointless = vc.UseCase(0, 0, -4)  # no action is worth more than handing over
    none = vc.recommend(pipeline, pointless)
    assert none.is_none
    model, actions = cs.served_actions(pipeline, none, pointless, scenario.truth)
    assert model is None and np.all(actions == scenario.world.n_classes)
    assert cs.serving_mismatches(pipeline, none, pointless, scenario.truth) == 0


@pytest.mark.parametrize("cell, seed, calibration", [(CELLS[2], 0, "none"), (CELLS[3], 1, "none"),
                                                     (CELLS[4], 2, "temperature"), (CELLS[0], 1, "temperature")])
def test_the_truth_agrees_with_the_new_items_labels(cell, seed, calibration):
    """Every candidate's true value (posterior expectation) matches its realised value on the new items' labels:
    the posterior the generator claims is the true one.

    Given what the model saw, an item's realised value minus its expected value has mean 0 and the variance
    the posterior gives; the mean over the items must lie within 4.5 such standard errors, or within three
    items' worth of the largest value where the expected number of costly errors is too small for a normal
    approximation.
    """
    scenario = cs.make_scenario(cell, seed, N_NEW)
    truth = scenario.truth
    pipeline = cs.StudyPipeline(scenario.runs, calibration)
    recommendation = vc.recommend(pipeline, scenario.values)
    matrix = cs.value_array(scenario.values, scenario.world.classes)
    assert recommendation.candidates
    checked = 0
    for candidate in recommendation.candidates:
        actions = truth.actions(candidate.model, candidate.policy, scenario.values)
        outcomes = matrix.T[actions]  # (n, K): the value of the item's action under each true class
        p = truth.posterior[candidate.model]
        expected = np.einsum("ik,ik->i", p, outcomes)
        variance = np.einsum("ik,ik->i", p, (outcomes - expected[:, None]) ** 2)
        gains = truth.item_gains(candidate.model, actions)
        np.testing.assert_allclose(gains, expected - p @ matrix[:, -1], atol=1e-9 * np.abs(matrix).max())
        difference = matrix[truth.y, actions].mean() - truth.value(gains)[0]
        se = math.sqrt(variance.sum()) / truth.n
        assert abs(difference) <= 4.5 * se + 3 * np.abs(matrix).max() / truth.n, (candidate.model, candidate.kind)
        checked += 1
    handed_over = matrix[truth.y, -1]
    assert abs(handed_over.mean() - truth.baseline) <= 4.5 * handed_over.std(ddof=1) / math.sqrt(truth.n) + 1e-12
    assert checked >= 3


def test_the_best_cut_is_exact_and_never_splits_ties():
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        confidence = rng.choice([0.5, 0.6, 0.7, 0.8, 0.9], n)
        gain = rng.normal(0, 1, n)
        total, mask = cs.best_cut(confidence, gain)
        brute = max([0.0] + [gain[confidence >= t].sum() for t in np.unique(confidence)])
        assert total == pytest.approx(brute, abs=1e-12)
        assert gain[mask].sum() == pytest.approx(total, abs=1e-12)
        if mask.any():  # the items acted on are exactly those at or above a confidence
            assert np.array_equal(mask, confidence >= confidence[mask].min())
