"""A new outcome value reuses each decision's tally: the tally path gives the per-item path's numbers.

The verdict prices each one-tier rule's decision from its tally per (true class, action)
(``valuecore._engine.tally``), pairs two rules by their joint tally, and decides the
expected-value rule of a three-value use case by a cut on the top class's share,
with the exact expected values only near the cut. Each is checked here against the
per-item computation: bit for bit with whole-number weights, within the stated
round-off with fractional ones; the expected-value actions always bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import reference as ref
from helpers.core import labelled_runs, whole_number_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._decide.verdict import _difference, _judge, clearly_ahead, pairing, verdict
from valuecore._engine import tally as _tally
from valuecore._engine.evaluate import item_values
from valuecore._engine.policy import _ev_plan, _ev_screen, _expected_value_actions, _expected_value_actions_exactly
from valuecore._stats.uncertainty import grouped_interval, grouped_items_to_exclude, items_to_exclude, mean_interval

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

# Fractional weights add a group's weights in another order: a relative few ulps per group.
ROUND_OFF = 1e-12


DYADIC = st.integers(-64, 64).map(lambda k: k / 8)
DECIMAL = st.integers(-500, 500).map(lambda k: k / 100)


@st.composite
def values_for(draw, n_classes):
    if draw(st.booleans()):
        return vc.UseCase(draw(DECIMAL), draw(DECIMAL), draw(DECIMAL))
    cells = draw(st.lists(DYADIC, min_size=n_classes * (n_classes + 1), max_size=n_classes * (n_classes + 1)))
    return vc.ValueMatrix(tuple(str(c) for c in range(n_classes)), np.reshape(cells, (n_classes, n_classes + 1)))


def _policies(predictions, draw):
    threshold = float(draw(st.sampled_from(sorted(set(predictions.confidence.tolist())))))
    per_class = {c: draw(st.sampled_from([None, threshold, 0.0, 1.0])) for c in predictions.classes}
    return [vc.Policy("accept_all"), vc.Policy("threshold", threshold=threshold), vc.Policy("threshold"),
            vc.Policy("class_thresholds", class_thresholds=per_class), vc.Policy("expected_value")]


def _same(got, want, kind, scale):
    """Bit for bit with whole-number weights; within the round-off with fractional ones."""
    if kind != "fractional":
        assert repr(got) == repr(want)
        return
    for name in ("mean", "std_error", "low", "high", "n", "n_worst", "one_more_worst"):
        a, b = getattr(got, name), getattr(want, name)
        assert (math.isnan(a) and math.isnan(b)) or a == b or abs(a - b) <= ROUND_OFF * max(scale, abs(b)), name


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_tallied_decision_gives_the_per_item_interval_and_coverage(data):
    predictions, kind = data.draw(labelled_runs())
    values = data.draw(values_for(predictions.n_classes))
    matrix = values.for_classes(predictions.classes)
    scale = float(np.abs(matrix.values).max()) + 1.0
    value_range = (float(matrix.values.min()), float(matrix.values.max()))
    for policy in _policies(predictions, data.draw):
        judged = _judge(policy, predictions, values)
        assert judged.tally is not None
        items = item_values(policy, predictions, values)
        assert np.array_equal(judged.item_values(), items)
        _same(grouped_interval(judged.grouped, value_range=value_range),
              mean_interval(items, predictions.sample_weight, value_range=value_range), kind, scale)
        assert judged.coverage(policy, values) == vc.evaluate(policy, predictions, values).coverage


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_joint_tally_gives_the_interval_of_the_item_differences(data):
    predictions, kind = data.draw(labelled_runs())
    values = data.draw(values_for(predictions.n_classes))
    policies = _policies(predictions, data.draw)
    a, b = data.draw(st.sampled_from(policies)), data.draw(st.sampled_from(policies))
    # the second run holds the same items in another row order, paired by id
    order = np.array(data.draw(st.permutations(range(predictions.n))))
    ids = np.arange(predictions.n)
    run_a = vc.Predictions.from_proba(predictions.proba, y_true=predictions.y_true,
                                      sample_weight=predictions.sample_weight, ids=ids)
    run_b = vc.Predictions.from_proba(predictions.proba[order], y_true=predictions.y_true[order],
                                      sample_weight=predictions.sample_weight[order], ids=ids[order])
    take, unpaired = pairing(run_a, run_b, ("a", "b"))
    assert unpaired is None
    grouped = _difference(_judge(a, run_a, values), _judge(b, run_b, values), take)
    items = item_values(a, run_a, values) - item_values(b, run_b, values)[np.argsort(order)]
    scale = 2 * float(np.abs(values.for_classes(predictions.classes).values).max()) + 1.0
    _same(grouped_interval(grouped, value_range=(-scale, scale)),
          mean_interval(items, run_a.sample_weight, value_range=(-scale, scale)), kind, scale)
    if kind != "fractional":
        assert grouped_items_to_exclude(grouped, (-scale, scale)) == items_to_exclude(items, run_a.sample_weight,
                                                                                      (-scale, scale))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_whole_number_weights_give_the_exact_mean(data):
    predictions, kind = data.draw(labelled_runs(max_n=30, kinds=("unit", "integer")))
    cells = data.draw(st.lists(DYADIC, min_size=predictions.n_classes * (predictions.n_classes + 1),
                               max_size=predictions.n_classes * (predictions.n_classes + 1)))
    values = vc.ValueMatrix(predictions.classes, np.reshape(cells, (predictions.n_classes, -1)))
    policy = _policies(predictions, data.draw)[1]
    judged = _judge(policy, predictions, values)
    run = ref.run_from_proba(predictions.proba.tolist(), predictions.y_true.tolist(),
                             predictions.sample_weight.tolist(), predictions.n_classes)
    actions = ref.threshold_actions(run, policy.threshold)
    exact = ref.realised_value(run, actions, ref.array_matrix(values.values)) / run.total
    assert grouped_interval(judged.grouped).mean == float(exact)  # exact sums, one correctly rounded quotient


def _fresh_verdict(runs, values):
    _tally._CACHES.clear()
    return verdict(runs, values)


def _runs(seed, weight_kind):
    rng = np.random.default_rng(seed)
    n, runs = 300, {}
    y = rng.integers(0, 3, n)
    weight = {"unit": None, "integer": rng.integers(0, 4, n), "fractional": rng.exponential(size=n)}[weight_kind]
    for m in range(3):
        logits = rng.normal(size=(n, 3)) + np.eye(3)[y] * (1 + m)
        proba = np.round(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), 2)
        proba = np.clip(proba, 0, 1)
        proba /= proba.sum(axis=1, keepdims=True)
        predictions = vc.Predictions.from_proba(proba, y_true=y, sample_weight=weight)
        t = float(np.median(predictions.confidence))
        per_class = vc.Policy("class_thresholds", class_thresholds={c: t for c in predictions.classes})
        one = vc.Policy("threshold", threshold=t)
        for kind, policy in (("accept_all", vc.Policy("accept_all")), ("threshold", one),
                             ("class_thresholds", per_class), ("expected_value", vc.Policy("expected_value"))):
            runs[(f"m{m}", kind)] = (policy, predictions)
    return runs


@pytest.mark.parametrize("weight_kind", ["unit", "integer", "fractional"])
def test_a_verdict_from_kept_tallies_equals_one_computed_afresh(weight_kind):
    runs = _runs(3, weight_kind)
    for values in (vc.UseCase(1, 0, -4), vc.UseCase(1, 0, -4 - 2**-20), vc.UseCase(1, -0.5, -7),
                   vc.UseCase(1, 0, -4)):
        kept = verdict(runs, values)
        memo: dict = {}
        shared = verdict(runs, values, memo=memo)
        ahead = {key: clearly_ahead(runs, values, key, memo=memo) for key in runs}
        assert repr(kept) == repr(shared) == repr(_fresh_verdict(runs, values))
        assert ahead == {key: clearly_ahead(runs, values, key) for key in runs}


def test_the_split_caches_go_with_their_split():
    runs = _runs(1, "unit")
    verdict(runs, vc.UseCase(1, 0, -4))
    assert len(_tally._CACHES) >= 3
    del runs
    import gc

    gc.collect()
    assert len(_tally._CACHES) == 0


# ------------------------------------------------------------------ the expected-value shortcut
@st.composite
def probability_rows(draw):
    n_classes = draw(st.integers(2, 5))
    n = draw(st.integers(1, 40))
    denominator = draw(st.sampled_from([2, 3, 7, 10, 16, 100]))
    proba = draw(whole_number_rows(n, n_classes, denominator))
    if draw(st.booleans()):
        proba /= proba.sum(axis=1, keepdims=True)
    else:  # rows that sum to 1 only within the loader's tolerance
        proba = proba / proba.sum(axis=1, keepdims=True) * (1 + draw(st.floats(-9e-4, 9e-4)))
    return vc.Predictions.from_proba(proba)


USE_CASES = st.one_of(
    st.builds(vc.UseCase, DECIMAL, DECIMAL, DECIMAL),
    st.sampled_from([vc.UseCase(0, -2, -1.9375), vc.UseCase(1, 0, -1), vc.UseCase(1, 1, 1), vc.UseCase(2, 1, 0),
                     vc.UseCase(1, 0, -6), vc.UseCase(1e-300, 0, -1e-300), vc.UseCase(1e100, 0, -1e100),
                     vc.UseCase(1e-100, 3e-101, -1e-100)]),
)


@settings(max_examples=300, deadline=None)
@given(probability_rows(), USE_CASES)
def test_the_expected_value_cut_acts_as_the_expected_values(predictions, use_case):
    matrix = use_case.for_classes(predictions.classes)
    want = _expected_value_actions_exactly(predictions.proba, predictions.y_pred, matrix.values)
    for screen in (None, _ev_screen(predictions, presort=True)):
        assert np.array_equal(_expected_value_actions(predictions, matrix, screen), want)


def test_adversarial_ties_of_the_expected_value_rule_are_kept():
    # classes 0, 1 and 3 tie exactly; a matrix product once added their terms in different orders
    proba = np.array([[2 / 7, 2 / 7, 1 / 7, 2 / 7]] * 5 + [[0.25, 0.25, 0.25, 0.25]] * 3)
    predictions = vc.Predictions.from_proba(proba)
    for use_case in (vc.UseCase(0, -2, -1.9375), vc.UseCase(1, 0.25 - 0.75 * 3, -3), vc.UseCase(1, 2 / 7, 0)):
        matrix = use_case.for_classes(predictions.classes)
        run = ref.run_from_proba(proba.tolist(), [0] * len(proba), [1.0] * len(proba), 4)
        want = ref.expected_value_actions(run, ref.use_case_matrix(use_case.v_correct, use_case.v_abstain,
                                                                   use_case.v_wrong, 4))
        for screen in (None, _ev_screen(predictions, presort=True)):
            assert _expected_value_actions(predictions, matrix, screen).tolist() == want


def test_the_shortcut_decides_the_bulk_without_expected_values():
    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.ones(10), 5000)
    predictions = vc.Predictions.from_proba(proba)
    screen = _ev_screen(predictions, presort=True)
    plan = _ev_plan(predictions, vc.UseCase(1, 0, -3).for_classes(predictions.classes), screen)
    assert plan is not None and plan.exact.size < 5  # only items within round-off of the cut
    # a value that moves the cut past no item keeps the decision: the same key
    moved = _ev_plan(predictions, vc.UseCase(1, 0, -3 - 2**-30).for_classes(predictions.classes), screen)
    assert moved.key == plan.key
    # correct <= wrong, or a general value matrix: no shortcut
    assert _ev_plan(predictions, vc.UseCase(-1, 0, 1).for_classes(predictions.classes), screen) is None


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_equal_decision_keys_name_equal_actions_and_only_them(data):
    predictions, _ = data.draw(labelled_runs())
    matrix = vc.UseCase(1, 0, -2).for_classes(predictions.classes)
    thresholds = st.one_of(st.none(), st.floats(0, 1), st.sampled_from(sorted(set(predictions.confidence.tolist()))))
    per_class = st.fixed_dictionaries({c: thresholds for c in predictions.classes})
    policies = [vc.Policy("threshold", threshold=data.draw(thresholds)) for _ in range(3)]
    policies += [vc.Policy("calibrated_threshold", threshold=data.draw(thresholds)), vc.Policy("accept_all")]
    policies += [vc.Policy("class_thresholds", class_thresholds=data.draw(per_class)) for _ in range(3)]
    decided = [(_tally.decision_tally(p, predictions, matrix)[0], p.decide(predictions)) for p in policies]
    for key_a, actions_a in decided:
        for key_b, actions_b in decided:
            if key_a == key_b:
                assert np.array_equal(actions_a, actions_b)
            elif key_a[1] == key_b[1]:  # the same family of key: a different key, different actions
                assert not np.array_equal(actions_a, actions_b)


def _one_step_at_a_time(excluded, below, above):
    while above - below > 1:
        middle = math.floor((above + below) / 2)
        if excluded(np.array([float(middle)]))[0]:
            above = middle
        else:
            below = middle
    return above


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 50), st.floats(0, 1), st.lists(st.integers(0, 2**50), max_size=6))
def test_the_batched_bisection_visits_the_midpoints_of_one_step_at_a_time(power, where, flipped):
    from valuecore._stats.uncertainty import _bisect

    above = 2.0**power
    below = above / 2
    cut = below + where * (above - below)

    def excluded(n):  # not even monotone: the same midpoints still give the same answer
        return (n >= cut) ^ np.isin(n, np.array(flipped, dtype=np.float64))

    assert _bisect(excluded, below, above) == _one_step_at_a_time(excluded, below, above)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_tallies_updated_from_the_last_decision_equal_tallies_counted_afresh(data):
    predictions, kind = data.draw(labelled_runs())
    thresholds = st.one_of(st.none(), st.floats(0, 1), st.sampled_from(sorted(set(predictions.confidence.tolist()))))
    per_class = st.fixed_dictionaries({c: thresholds for c in predictions.classes})
    policies = st.one_of(st.builds(lambda t: vc.Policy("threshold", threshold=t), thresholds),
                         st.builds(lambda t: vc.Policy("class_thresholds", class_thresholds=t), per_class),
                         st.just(vc.Policy("accept_all")), st.just(vc.Policy("expected_value")))
    for _ in range(data.draw(st.integers(2, 8))):
        policy = data.draw(policies)
        hand_off = data.draw(st.sampled_from([0, -0.5, 0.25]))
        use_case = vc.UseCase(1, hand_off, data.draw(DECIMAL.filter(lambda w: w < 1)))
        matrix = use_case.for_classes(predictions.classes)
        _, tally = _tally.decision_tally(policy, predictions, matrix)
        fresh = _tally.tally_of_actions(predictions, policy.decide(predictions, matrix))
        assert np.array_equal(tally.categories, fresh.categories)
        for name in ("count", "weight", "weight_sq"):
            if kind == "fractional":
                assert np.allclose(getattr(tally, name), getattr(fresh, name), rtol=1e-12, atol=0)
            else:
                assert getattr(tally, name).tobytes() == getattr(fresh, name).tobytes(), name


def test_sessions_sharing_the_splits_get_the_same_verdicts_at_once():
    from concurrent.futures import ThreadPoolExecutor

    runs = _runs(5, "integer")
    values = [vc.UseCase(1, 0, -w / 4) for w in range(4, 40)]
    want = [repr(_fresh_verdict(runs, v)) for v in values]
    _tally._CACHES.clear()
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda v: repr(verdict(runs, v)), values))
    assert got == want


@pytest.mark.parametrize("weight_kind", ["unit", "fractional"])
def test_joint_tallies_of_many_classes_number_the_pairs_that_occur(monkeypatch, weight_kind):
    runs = _runs(2, weight_kind)
    values = vc.UseCase(1, -0.25, -5)
    dense = repr(_fresh_verdict(runs, values))
    monkeypatch.setattr(_tally, "_DENSE_JOINT", 0)
    assert repr(_fresh_verdict(runs, values)) == dense
