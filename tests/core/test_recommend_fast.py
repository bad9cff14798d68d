"""The fast paths of a recommendation give the numbers the direct computation gives, bit for bit.

A rule decides once per recommendation (its item values, coverage and the
choice's comparisons share the actions), the choice computes an interval only
where no pairing exists, and the bounded interval's counts find a few distinct
values by comparison instead of sorting every item. Each is checked here
against the straightforward computation (``np.unique``, ``evaluate``, a verdict
and choice that share nothing, the full-interval comparison).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import valuecore as vc
from valuecore.uncertainty import mean_interval
from valuecore._engine import tally as _tally
from valuecore._engine.tally import group_items
from valuecore._decide.recommend import _choose
from valuecore._stats.uncertainty import _check_same_items, _pair_rows
from valuecore._decide.verdict import (_RELATIVE_TOLERANCE, _realised_item_values,
                                clearly_ahead, verdict)

SAMPLES = Path(__file__).resolve().parent.parent / "sample_runs"
KINDS = ("accept_all", "threshold", "class_thresholds", "expected_value")


def _by_sorting(values, weight):
    distinct, cell = np.unique(values, return_inverse=True)
    return distinct, np.bincount(cell, weights=weight, minlength=distinct.size)


@pytest.mark.parametrize("seed", range(40))
def test_few_distinct_values_and_their_weights_equal_sorting_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n_distinct = int(rng.integers(1, 2 * _tally._FEW_DISTINCT))  # both sides of the sorting fallback
    cells = rng.normal(size=n_distinct) * 10.0 ** rng.integers(-3, 4)
    cells[rng.random(n_distinct) < 0.2] = 0.0
    values = cells[rng.integers(0, n_distinct, int(rng.integers(1, 3000)))]
    values[rng.random(values.size) < 0.05] *= -1  # -0.0 beside 0.0 where a cell is zero
    weight = rng.exponential(size=values.size) if seed % 2 else np.ones(values.size)
    grouped = group_items(values, weight, not seed % 2)
    expected_distinct, expected_mass = _by_sorting(values, weight)
    assert np.array_equal(grouped.values, expected_distinct)
    assert grouped.weight.tobytes() == expected_mass.tobytes()


@pytest.mark.parametrize("fractional", [True, False])
@pytest.mark.parametrize("zeros", [True, False])
def test_grouped_items_ignore_zero_weights_and_match_sorting(fractional, zeros):
    rng = np.random.default_rng(7)
    values = np.array([1.0, -4.0, 0.0])[rng.integers(0, 3, 500)]
    weight = rng.integers(0 if zeros else 1, 3, 500) * (0.37 if fractional else 1.0)
    grouped = group_items(values, weight, not fractional)
    keep = weight > 0
    expected_distinct, mass = _by_sorting(values[keep], weight[keep])
    assert np.array_equal(grouped.values, expected_distinct)
    assert grouped.weight.tobytes() == mass.tobytes()
    assert grouped.count.tolist() == np.bincount(np.unique(values[keep], return_inverse=True)[1]).tolist()
    assert grouped.weight_max == weight.max()


def _runs(seed, same_items):
    """(model, kind) -> (policy, evaluated split) over random 3-class runs, with float weights on odd seeds."""
    rng = np.random.default_rng(seed)
    n = 400
    y = rng.integers(0, 3, n)
    weight = rng.exponential(size=n) if seed % 2 else None
    runs = {}
    for m in range(3):
        labels = y if same_items else rng.integers(0, 3, n)
        logits = rng.normal(size=(n, 3)) + np.eye(3)[labels] * (1 + m)
        proba = np.round(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), 2)
        proba[:, 0] = 1 - proba[:, 1:].sum(axis=1)
        proba = np.clip(proba, 0, 1)
        proba /= proba.sum(axis=1, keepdims=True)
        predictions = vc.Predictions.from_proba(proba, y_true=labels, sample_weight=weight)
        t = float(rng.choice(predictions.confidence))
        policies = {"accept_all": vc.Policy("accept_all"), "threshold": vc.Policy("threshold", threshold=t),
                    "class_thresholds": vc.Policy("class_thresholds",
                                                  class_thresholds={c: t for c in predictions.classes}),
                    "expected_value": vc.Policy("expected_value")}
        for kind in KINDS:
            runs[(f"m{m}", kind)] = (policies[kind], predictions)
    return runs


def _old_clearly_ahead(runs, values, of, confidence):
    """The comparison as written before: every run's full interval, computed up front."""
    judged = {}
    for key, (policy, predictions) in runs.items():
        items = _realised_item_values(policy, predictions, values)
        judged[key] = items, mean_interval(items, predictions.sample_weight, confidence_level=confidence)
    mine, own = judged[of]
    scale = max(abs(own.mean), 1.0)
    ahead = []
    for key, (_, other_predictions) in runs.items():
        theirs, other = judged[key]
        if key == of or not other.mean > own.mean:
            continue
        try:
            take, ids = _pair_rows(other_predictions, runs[of][1], (key, of))
            _check_same_items(other_predictions, runs[of][1], take, ids, (key, of))
        except ValueError:
            if other.low > own.high:
                ahead.append(key)
            continue
        diff = mean_interval(theirs - mine[take], other_predictions.sample_weight, confidence_level=confidence)
        if diff.low > _RELATIVE_TOLERANCE * max(scale, abs(other.mean)):
            ahead.append(key)
    return tuple(ahead)


@pytest.mark.parametrize("same_items", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_verdict_and_comparisons_sharing_item_values_equal_those_computed_alone(seed, same_items):
    runs = _runs(seed, same_items)
    values = vc.UseCase(1.0, -0.5 * seed, -3.0 - seed)
    memo: dict = {}
    shared = verdict(runs, values, memo=memo)
    assert repr(shared) == repr(verdict(runs, values))
    for key in runs:
        assert clearly_ahead(runs, values, key, memo=memo) == _old_clearly_ahead(runs, values, key, 0.95)
    alone = _choose(verdict(runs, values), runs, values, (), 0.95)
    assert repr(_choose(shared, runs, values, (), 0.95, memo)) == repr(alone)


def test_recommend_equals_a_verdict_and_choice_that_share_nothing():
    runs = vc.load_runs([str(SAMPLES / "digits")]).models
    pipeline = vc.Pipeline(runs)
    for values in (vc.UseCase(1, 0, -4), vc.UseCase(1, -0.25, -40), vc.UseCase(3, 1, -2)):
        recommendation = vc.recommend(pipeline, values)
        fitted = {(c.model, c.kind): (c.policy, pipeline.predictions(c.model, pipeline.plan(c.model).eval_split))
                  for c in recommendation.candidates}
        alone = _choose(verdict(fitted, values), fitted, values, recommendation.skipped, 0.95)
        assert repr(recommendation) == repr(alone)
