"""The one-pass path (`valuecore/_serve/fused.py`) sums the rows of three or more classes by one BLAS product and
trusts that sum only well inside the tolerance: rows summing to 1 off by about the tolerance itself, on either side,
get the general path's labels or its refusal, word for word; rows well inside are served in one pass."""

from __future__ import annotations

import numpy as np
import pytest

from valuecore._serve import fused
from valuecore._serve.policy import SUM_TOLERANCE

from helpers.serving import served


def decided(policy, proba):
    """``decide``'s labels, or the text of its refusal."""
    try:
        return policy.decide(proba)
    except ValueError as error:
        return str(error)


def general(policy, proba):
    """The general path's labels (``decisions(...).action``), or the text of its refusal."""
    try:
        return policy.labels()[policy.decisions(proba).action]
    except ValueError as error:
        return str(error)


def same(got, expected):
    if isinstance(expected, str):
        return got == expected
    return not isinstance(got, str) and np.array_equal(got, expected)


def scaled_rows(n_classes, dtype, factors, rng):
    """Dirichlet rows, each row ``i`` scaled by ``factors[i]`` (its sum off by ``factors[i] - 1``)."""
    proba = rng.dirichlet(np.full(n_classes, 0.4), size=len(factors)) * np.asarray(factors)[:, None]
    return proba.astype(dtype)


@pytest.mark.parametrize("n_classes", [3, 10, 32])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("temperature", [None, 0.8])
def test_sums_at_the_tolerance_decide_as_the_general_path(n_classes, dtype, temperature):
    """One row off by about the tolerance (just inside, on it, just outside, by a relative 1e-3 to 1e-9 of it)
    among rows summing to 1: the labels of the general path, or its refusal naming that row."""
    rng = np.random.default_rng(n_classes)
    policy = served("threshold", [f"c{k}" for k in range(n_classes)], temperature, 0.6, 0.4)
    for edge in (1e-3, 1e-5, 1e-7, 1e-9, 0.0, -1e-9, -1e-7, -1e-5, -1e-3):
        for side in (1, -1):
            factors = np.ones(200)
            factors[150] = 1 + side * SUM_TOLERANCE * (1 + edge)
            proba = scaled_rows(n_classes, dtype, factors, rng)
            expected = general(policy, proba)
            assert same(decided(policy, proba), expected), (edge, side)
            if isinstance(expected, str):
                assert "150" in expected


@pytest.mark.parametrize("n_classes", [3, 10, 32])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sums_well_inside_the_tolerance_are_served_in_one_pass(n_classes, dtype):
    rng = np.random.default_rng(1)
    factors = 1 + SUM_TOLERANCE * rng.uniform(-0.9, 0.9, size=500)
    proba = scaled_rows(n_classes, dtype, factors, rng)
    policy = served("threshold", [f"c{k}" for k in range(n_classes)], 0.8, 0.6, 0.4)
    got, _ = policy._fused(proba, policy.labels())
    assert got is not None, "the one-pass path declined"
    assert np.array_equal(got, general(policy, proba))


def test_the_inner_tolerance_leaves_room_for_the_roundings():
    """The room is what the roundings of both sums can take (about 1e-14 in float64, 1e-5 in float32 at 32
    classes), no less and not a large share of the tolerance."""
    for n_classes in (3, 10, 32):
        for dtype, least in ((np.float64, n_classes * 2.0 ** -53), (np.float32, n_classes * 2.0 ** -24)):
            room = SUM_TOLERANCE - fused._inner_tolerance(SUM_TOLERANCE, n_classes, dtype)
            assert 2 * least <= room <= 0.02 * SUM_TOLERANCE
    assert fused._inner_tolerance(np.inf, 10, np.float64) == np.inf
