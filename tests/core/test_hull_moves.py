"""Slider moves after the first: the hull kept with its run answers a new value through shortcuts that must
change nothing.

- ``hull.first_best`` takes a kept hull at once (the checks were passed when it was built);
- ``Chain.first_best`` skips the two searches of x when the bounds fall within the vertex's own run, and the
  search in that run when the points below the vertex's height are too far below it for any rounding;
- ``Policy._tuned`` makes the tuned policy without ``__post_init__`` when its fields pass it unchanged.

Each is checked against the path it shortcuts (and the scan), on counts drawn to be hard
(``test_hull.cumulative_counts``), values on a hull edge's slope included.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._engine import hull
from valuecore._engine.policy import Policy

from helpers.hull import SETTINGS, counts_and_moves, scan


class _CountingSearches(np.ndarray):
    """An array that counts the calls of its ``searchsorted`` (the searches the shortcut skips)."""

    searches = 0

    def searchsorted(self, *args, **kwargs):
        type(self).searches += 1
        return np.asarray(self).searchsorted(*args, **kwargs)


def _slow_copy(chain: hull.Chain) -> hull.Chain:
    """The same hull without the shortcuts: the bounds never fall within a vertex's run as far as it knows."""
    slow = object.__new__(hull.Chain)
    vars(slow).update(vars(chain))
    slow._x_before, slow._run_start = [math.inf] * len(chain.vertex), [-1] * len(chain.vertex)
    return slow


@settings(max_examples=100, **SETTINGS)
@given(counts_and_moves(6))
def test_moves_on_a_kept_hull_choose_as_the_searches_and_the_scan(counts_moves):
    """Several moves on one kept hull: each the searching path's choice and the scan's."""
    (correct, wrong), moves = counts_moves
    cache: dict = {}
    for a, b in moves:
        found = hull.first_best(cache, "t", a, correct, b, wrong, 0, correct.size)
        if found is None:  # the scan answers (gains near overflow)
            continue
        assert found == scan(a, b, correct, wrong), (a, b)
        chain = cache.get(("t", "wrong-correct", 0, correct.size))
        if a > 0 > b and chain is not None:
            assert _slow_copy(chain).first_best(a, b, 0.0) == found


@settings(max_examples=60, **SETTINGS)
@given(counts_and_moves(4, with_data=True))
def test_moves_on_kept_segments_choose_as_the_scan(counts_moves_data):
    """Per-class thresholds: the hulls of two segments of one array kept in one cache, moves in turn."""
    (correct, wrong), moves, data = counts_moves_data
    middle = data.draw(st.integers(0, correct.size))
    cache: dict = {}
    for a, b in moves:
        for start, stop in ((0, middle), (middle, correct.size)):
            if start == stop:
                continue
            base = a * float(correct[start - 1]) + b * float(wrong[start - 1]) if start else 0.0
            found = hull.first_best(cache, "c", a, correct, b, wrong, start, stop, base)
            if found is not None:
                assert found == scan(a, b, correct, wrong, start, stop, base), (a, b, start, stop)


@settings(max_examples=40, **SETTINGS)
@given(counts_and_moves(4, with_data=True))
def test_a_kept_hull_answers_only_for_its_own_range(counts_moves_data):
    """Two ranges with one start kept in one cache, moves in turn: each range's answer is its own scan's."""
    (correct, wrong), moves, data = counts_moves_data
    shorter = data.draw(st.integers(1, correct.size))
    cache: dict = {}
    for a, b in moves:
        for stop in (correct.size, shorter):
            found = hull.first_best(cache, "s", a, correct, b, wrong, 0, stop)
            if found is not None:
                assert found == scan(a, b, correct, wrong, 0, stop), (a, b, stop)


def test_most_moves_at_full_precision_skip_the_searches():
    """The shortcut is taken (else the checks above would test nothing) and chooses as the searches."""
    rng = np.random.default_rng(3)
    correct_now = rng.random(5000) < np.linspace(1.0, 0.3, 5000)
    correct = np.r_[0.0, np.cumsum(correct_now)]
    wrong = np.r_[0.0, np.cumsum(~correct_now)].view(_CountingSearches)
    chain = hull.Chain(wrong, correct, 0, correct.size)
    omegas = np.geomspace(0.05, 50.0, 60)
    skipped = 0
    for omega in omegas:
        before = _CountingSearches.searches
        found = chain.first_best(1.0, -float(omega), 0.0)
        skipped += _CountingSearches.searches == before
        assert found == _slow_copy(chain).first_best(1.0, -float(omega), 0.0) == scan(1.0, -float(omega), correct,
                                                                                      np.asarray(wrong))
    assert skipped >= len(omegas) // 2


# ------------------------------------------------------------------ the tuned policy, made without its checks
def _same(made: Policy, checked: Policy) -> None:
    assert made == checked and hash(made) == hash(checked)
    assert repr(made) == repr(checked) and list(vars(made)) == list(vars(checked))
    assert [type(v) for v in vars(made).values()] == [type(v) for v in vars(checked).values()]
    assert pickle.loads(pickle.dumps(made)) == checked and made.to_dict() == checked.to_dict()


@pytest.mark.parametrize("threshold", [None, 0.5, 0.0, 1.0, -2.5, np.float64(0.75), 1, np.float32(0.5)])
def test_a_tuned_threshold_policy_is_the_checked_one(threshold):
    _same(Policy._tuned("threshold", threshold=threshold), Policy("threshold", threshold=threshold))


@pytest.mark.parametrize("pairs", [
    (("a", 0.5), ("b", None)),
    (),
    (("a", np.float64(0.5)), ("b", 1)),  # numbers made floats
    ((np.str_("a"), 0.5), (3, None)),  # classes made str
    [("a", 0.5), ("b", 0.25)],  # a list made a tuple
    (["a", 0.5],),  # a pair as a list
])
def test_tuned_class_thresholds_are_the_checked_ones(pairs):
    _same(Policy._tuned("class_thresholds", class_thresholds=pairs),
          Policy("class_thresholds", class_thresholds=pairs))


@pytest.mark.parametrize("kind, fields", [
    ("threshold", {"threshold": math.inf}),
    ("threshold", {"threshold": math.nan}),
    ("threshold", {"threshold": "0.5"}),
    ("threshold", {"threshold": 0.5, "class_thresholds": (("a", 0.5),)}),
    ("class_thresholds", {"class_thresholds": (("a", math.nan),)}),
    ("class_thresholds", {"class_thresholds": (("a", 0.5, 1.0),)}),
    ("class_thresholds", {"class_thresholds": None}),
    ("class_thresholds", {"threshold": 0.5, "class_thresholds": (("a", 0.5),)}),
    ("thresholds", {"threshold": 0.5}),
])
def test_a_tuned_policy_refuses_what_the_checked_one_refuses(kind, fields):
    with pytest.raises(ValueError) as checked:
        Policy(kind, **fields)
    with pytest.raises(ValueError) as made:
        Policy._tuned(kind, **fields)
    assert str(made.value) == str(checked.value)


def test_fit_policy_makes_the_policy_the_checked_constructor_makes():
    p = vc.Predictions.from_proba([[0.95, 0.05], [0.8, 0.2], [0.6, 0.4], [0.3, 0.7]], y_true=[0, 0, 1, 0])
    run = vc.presort(p)
    for kind in ("threshold", "class_thresholds"):
        policy = vc.fit_policy(kind, run, vc.UseCase(1, 0, -2))
        _same(policy, Policy(kind, threshold=policy.threshold, class_thresholds=policy.class_thresholds))
