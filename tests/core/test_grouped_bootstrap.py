"""valuecore._stats.grouped_bootstrap against its implementation before issue 33's sixth pass, bit for bit.

The faster tree (counts per group from the run's cumulative counts) and search (fewer copies per level, np.take,
only the new values computed) must give the same trees, call ``split`` with the same arrays in the same order
(the random stream depends on that order), leave the generator in the same state and find the same groups:
the threshold stability's resamples and every figure made of them stay what they were. The reference is
``tests/core/reference_grouped_bootstrap.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_grouped_bootstrap import reference_best_groups, reference_group_tree, reference_search

import valuecore as vc
from valuecore._stats import grouped_bootstrap as grouped

CLASSES = ("a", "b", "c")


def _bits(array) -> bytes:
    """The exact bytes of an array (signs of zeros included), with its dtype and shape."""
    array = np.asarray(array)
    return array.dtype.str.encode() + repr(array.shape).encode() + array.tobytes()


def _assert_same_tree(got, want):
    assert (got is None) == (want is None)
    if want is None:
        return
    for name in ("gains", "left_share", "root_share"):
        assert _bits(getattr(got, name)) == _bits(getattr(want, name)), name
    assert (got.n_draws, got.n_groups, got.depth) == (want.n_draws, want.n_groups, want.depth)


@st.composite
def runs(draw):
    """A labelled top-label run over three classes: few distinct confidences (ties), whole-number weights
    with zeros, sometimes items the model declined."""
    n = draw(st.integers(1, 120))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    levels = draw(st.sampled_from([2, 5, 40, 10**6]))  # how many distinct confidences items may share
    confidence = np.round(rng.integers(0, levels, n) / levels * 0.6 + 0.4, 12)
    y_pred = rng.integers(0, 3, n)
    right = rng.random(n) < draw(st.sampled_from([0.0, 0.3, 0.8, 1.0]))
    y_true = np.where(right, y_pred, (y_pred + rng.integers(1, 3, n)) % 3)
    weights = None
    if draw(st.booleans()):
        weights = rng.integers(0, draw(st.sampled_from([2, 4, 1000])), n).astype(float)
        weights[rng.integers(0, n)] = 1.0  # something to resample
    declined = (rng.random(n) < 0.2) if draw(st.booleans()) else None
    if declined is not None:
        declined[0] = False  # at least one answered item
    p = vc.Predictions.from_top_label([CLASSES[c] for c in y_pred], confidence, [CLASSES[c] for c in y_true],
                                      classes=CLASSES, sample_weight=weights, model_abstained=declined)
    return vc.presort(p)


GAINS = st.sampled_from([-4.0, -1.0, -0.3, 0.0, 0.0, 0.7, 1.0, 2.5])  # zeros twice: ties with "accept nothing"

# Gain signs of every kind: a cost of errors, gains only ("accept all"), costs only ("accept nothing"), equal gains.
USE_CASES = st.builds(vc.UseCase, GAINS, st.just(0.0), GAINS)


@st.composite
def values(draw):
    if draw(st.booleans()):
        return draw(USE_CASES)
    gains = np.array(draw(st.lists(GAINS, min_size=9, max_size=9))).reshape(3, 3)
    abstain = np.zeros((3, 1))
    return vc.ValueMatrix(CLASSES, np.hstack([gains, abstain]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=runs(), chosen=values(), seed=st.integers(0, 2**32 - 1), n_resamples=st.sampled_from([1, 7, 256, 300]))
def test_trees_and_resampled_groups_are_the_reference_bit_for_bit(run, chosen, seed, n_resamples):
    try:
        want_tree = reference_group_tree(run, chosen)
    except ValueError:  # items the model declined: a known failure of the tree (the same either way)
        assert run.predictions.has_model_abstentions
        with pytest.raises(ValueError):
            grouped.group_tree(run, chosen)
        return
    tree = grouped.group_tree(run, chosen)
    _assert_same_tree(tree, want_tree)
    if tree is None or tree.n_draws == 0:
        return
    rng, want_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    got = grouped.best_groups(tree, n_resamples, rng)
    want = reference_best_groups(want_tree, n_resamples, want_rng)
    assert _bits(got) == _bits(want)
    assert rng.bit_generator.state == want_rng.bit_generator.state  # the same draws, in the same order


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=runs(), chosen=values(), seed=st.integers(0, 2**32 - 1))
def test_the_search_asks_split_the_same_questions_in_the_same_order(run, chosen, seed):
    """Any ``split`` (here binomials from a seeded stream): the same arguments, call by call."""
    if run.predictions.has_model_abstentions:
        return  # no tree (see above)
    tree = grouped.group_tree(run, chosen)
    if tree is None or tree.n_draws == 0:
        return
    root = np.random.default_rng(seed).multinomial(tree.n_draws, tree.root_share, size=40)

    def recorder(log):
        rng = np.random.default_rng(seed + 1)

        def split(resample, node, counts):
            log.append((_bits(resample), _bits(np.asarray(node, dtype=np.intp)), _bits(counts)))
            return rng.binomial(counts, tree.left_share[node])
        return split

    got_log, want_log = [], []
    got = grouped.search(tree, root, recorder(got_log))
    want = reference_search(tree, root, recorder(want_log))
    assert got_log == want_log
    assert _bits(got) == _bits(want)


@pytest.mark.parametrize("values", [vc.UseCase(1, 0, -4.5), vc.UseCase(1, 0, -6.013),
                                    vc.ValueMatrix(("0", "1"), np.array([[0.3, -1.7, 0.1], [-0.9, 1.1, 0.0]]))],
                         ids=["use_case", "other_use_case", "matrix"])
def test_a_large_run_resamples_as_before(values):
    """The Compare page's case: tens of thousands of items, thousands of distinct confidences, 2000 resamples."""
    rng = np.random.default_rng(11)
    n = 30_000
    proba = np.round(rng.dirichlet([1.0, 1.0], n), 4)
    proba[:, 1] = 1.0 - proba[:, 0]
    y_true = np.where(rng.random(n) < proba[:, 1], 1, 0)
    run = vc.presort(vc.Predictions.from_proba(proba, y_true=y_true))
    tree, want_tree = grouped.group_tree(run, values), reference_group_tree(run, values)
    _assert_same_tree(tree, want_tree)
    assert tree.depth >= 12  # deep enough for the search to prune
    got_rng, want_rng = np.random.default_rng(3), np.random.default_rng(3)
    assert _bits(grouped.best_groups(tree, 2000, got_rng)) == _bits(reference_best_groups(want_tree, 2000, want_rng))
    assert got_rng.bit_generator.state == want_rng.bit_generator.state
