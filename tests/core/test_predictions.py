"""A run built without weights makes its weights of ones only when they are read; presort never reads them.
Everything computed is bit for bit what an explicit array of ones gives."""

import dataclasses
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._model import predictions as _predictions
ONES_MADE = "_ones_sample_weight"  # where Predictions keeps the ones once made


def _run(seed: int, n: int, n_classes: int, labelled: bool, **given):
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(n_classes), n)
    y_true = rng.integers(0, n_classes, n) if labelled else None
    return vc.Predictions.from_proba(proba, y_true, **given)


def test_unit_weights_are_ones_made_once_when_first_read():
    p = _run(0, 50, 3, True)
    assert p.has_unit_weights and ONES_MADE not in vars(p)
    assert p.total_weight == 50.0 and ONES_MADE not in vars(p)
    weight = p.sample_weight
    assert weight.dtype == np.float64 and weight.shape == (50,) and (weight == 1.0).all()
    assert p.sample_weight is weight  # made once
    assert p.has_unit_weights


def test_given_weights_are_kept_and_are_not_unit_weights():
    ones = np.ones(50)
    p = _run(0, 50, 3, True, sample_weight=ones)
    assert not p.has_unit_weights
    np.testing.assert_array_equal(p.sample_weight, ones)
    assert p.total_weight == 50.0
    q = _run(0, 50, 3, True, sample_weight=np.arange(50.0))
    assert q.total_weight == float(np.arange(50.0).sum())


def test_subset_pickle_and_new_probabilities_keep_unit_weights_unmade():
    p = _run(1, 40, 4, True)
    for q in (p.subset(np.arange(40) % 3 == 0), p.subset(np.arange(5, 9)), pickle.loads(pickle.dumps(p)),
              p.with_proba(p.proba[:, ::-1].copy()), p.with_confidence(p.confidence / 2)):  # fmt: skip
        assert q.has_unit_weights and ONES_MADE not in vars(q)
        np.testing.assert_array_equal(q.sample_weight, np.ones(q.n))
    weighted = _run(1, 40, 4, True, sample_weight=np.arange(40.0))
    np.testing.assert_array_equal(weighted.subset(np.arange(5, 9)).sample_weight, [5.0, 6.0, 7.0, 8.0])
    assert not weighted.with_proba(weighted.proba).has_unit_weights


def test_replace_and_a_bare_constructor_read_ones():
    p = _run(2, 30, 3, True)
    q = dataclasses.replace(p, confidence=p.confidence.copy())  # replace reads every field: ones are made
    np.testing.assert_array_equal(q.sample_weight, np.ones(30))
    bare = vc.Predictions(classes=("a", "b"), y_pred=np.array([0, 1]), confidence=np.array([0.9, 0.6]))
    assert bare.has_unit_weights
    np.testing.assert_array_equal(bare.sample_weight, [1.0, 1.0])


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 3000),
    n_classes=st.integers(2, 6),
    decimals=st.sampled_from([1, 2, 4, None]),  # rounded (the group-sums path) or full precision (sorted keys)
    labelled=st.booleans(),
)
def test_presort_with_unit_weights_is_presort_with_explicit_ones(seed, n, n_classes, decimals, labelled):
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(n_classes), n)
    if decimals is not None:
        proba = np.round(proba, decimals)
        proba[:, -1] = 1.0 - proba[:, :-1].sum(axis=1)
        proba = np.clip(proba, 0.0, None)
    y_true = rng.integers(0, n_classes, n) if labelled else None
    unit = vc.Predictions.from_proba(proba, y_true, sum_tolerance=1.0)
    explicit = vc.Predictions.from_proba(proba, y_true, sum_tolerance=1.0, sample_weight=np.ones(n))
    a, b = vc.presort(unit), vc.presort(explicit)
    assert ONES_MADE not in vars(unit)  # presort counted the items without making the weights
    for name in ("thresholds", "cum_accepted", "cum_correct", "cum_wrong"):
        x, y = getattr(a, name), getattr(b, name)
        if y is None:
            assert x is None
            continue
        assert x.dtype == y.dtype == np.float64, name
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(np.signbit(x), np.signbit(y))
    if labelled:
        use_case = vc.UseCase(1.0, 0.0, -3.0)
        assert vc.fit_policy("threshold", a, use_case).threshold == vc.fit_policy("threshold", b, use_case).threshold


@settings(max_examples=150, deadline=None)
@given(
    labels=st.lists(st.integers(-3, 12), min_size=1, max_size=60),
    classes=st.lists(st.integers(-3, 12), min_size=1, max_size=8, unique=True),
    dtype=st.sampled_from([np.int8, np.int16, np.int64]),
)
def test_small_integer_codes_say_complete_only_when_every_label_is_a_class(labels, classes, dtype):
    """``complete`` (read off the table, no pass over the codes) is never True with an unknown label; and the
    codes are those of looking each label up by its text."""
    values = np.array(labels, dtype=dtype)
    lookup = {str(c): i for i, c in enumerate(classes)}
    codes, complete = _predictions._small_integer_codes(values, lookup)
    expected = [lookup.get(str(v), -1) for v in labels]
    np.testing.assert_array_equal(codes, expected)
    if complete:
        assert min(expected) >= 0
    if all(str(v) in lookup for v in range(min(labels), max(labels) + 1)):
        assert complete
    if min(expected) >= 0:
        np.testing.assert_array_equal(_predictions._encode_labels(values, tuple(lookup), "y_true"), expected)
    else:
        with pytest.raises(ValueError, match="not among the classes"):
            _predictions._encode_labels(values, tuple(lookup), "y_true")


def test_labels_with_a_gap_between_classes_are_checked_by_a_pass():
    codes, complete = _predictions._small_integer_codes(np.array([0, 2, 2, 0]), {"0": 0, "2": 1})
    assert not complete  # the table holds -1 for label 1, which no row has
    np.testing.assert_array_equal(codes, [0, 1, 1, 0])
    np.testing.assert_array_equal(_predictions._encode_labels(np.array([0, 2, 2, 0]), ("0", "2"), "y_true"),
                                  [0, 1, 1, 0])  # fmt: skip
