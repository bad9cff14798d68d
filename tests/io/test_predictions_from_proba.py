"""from_proba's one-pass checks and table-lookup labels give what the per-entry checks and hashing gave."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._model import predictions as _predictions
from valuecore._model.predictions import _first_rows


def _checked_entry_by_entry(proba, sum_tolerance):
    """The checks as written before the one-pass version: the message of the first failing one, or None."""
    bad = ~np.isfinite(proba).all(axis=1)
    if bad.any():
        return f"proba has NaN or infinite values at rows {_first_rows(bad)}"
    bad = (proba < 0).any(axis=1)
    if bad.any():
        return f"proba has negative probabilities at rows {_first_rows(bad)}"
    with np.errstate(over="ignore"):
        deviation = np.abs(proba.sum(axis=1) - 1.0)
    bad = deviation > sum_tolerance
    if bad.any():
        return f"proba rows must sum to 1 (worst deviation {deviation.max():.3g}) at rows {_first_rows(bad)}"
    return None


SPOILERS = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "negative": -0.25, "negative_zero": -0.0,
            "huge": 1e308, "too_big": 0.7}  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 300),
    n_classes=st.integers(2, 7),
    spoilers=st.lists(st.sampled_from(sorted(SPOILERS)), max_size=4),
    float32=st.booleans(),
    sum_tolerance=st.sampled_from([1e-3, 0.5, np.inf]),  # infinite: only NaN and infinities are refused
)
def test_one_pass_checks_raise_what_the_entry_checks_raised(seed, n, n_classes, spoilers, float32, sum_tolerance):
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(n_classes), n)
    for spoiler in spoilers:
        proba[rng.integers(n), rng.integers(n_classes)] = SPOILERS[spoiler]
    if float32:
        with np.errstate(over="ignore"):  # 1e308 becomes inf: another spoiler
            proba = proba.astype(np.float32)
    expected = _checked_entry_by_entry(proba, sum_tolerance)
    if expected is None:
        p = vc.Predictions.from_proba(proba, sum_tolerance=sum_tolerance)
        np.testing.assert_array_equal(p.y_pred, np.argmax(proba, axis=1))
        np.testing.assert_array_equal(p.confidence, np.minimum(proba[np.arange(n), p.y_pred], 1.0))
        assert p.confidence.dtype == np.float64 and p.y_pred.dtype == np.int64
    else:
        with pytest.raises(ValueError) as raised:
            vc.Predictions.from_proba(proba, sum_tolerance=sum_tolerance)
        assert str(raised.value) == expected


def test_finite_entries_whose_sum_overflows_are_a_sum_error():
    proba = np.array([[0.5, 0.5], [1e308, 1e308], [0.25, 0.75]])
    with pytest.raises(ValueError) as raised:
        vc.Predictions.from_proba(proba)
    assert str(raised.value) == _checked_entry_by_entry(proba, 1e-3)
    assert "worst deviation inf" in str(raised.value) and "rows 1" in str(raised.value)


@pytest.mark.parametrize("spoiler", [np.inf, -np.inf, np.nan])
def test_an_infinite_tolerance_still_refuses_nan_and_infinities(spoiler):
    """The one-pass check reads NaN and infinities off the largest deviation, which an infinite tolerance
    would let through unless checked for being finite."""
    proba = np.full((5, 3), 1 / 3)
    proba[3, 1] = spoiler
    with pytest.raises(ValueError, match=r"NaN or infinite values at rows 3$"):
        vc.Predictions.from_proba(proba, sum_tolerance=np.inf)


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 400),
    dtype=st.sampled_from(["int8", "uint8", "int16", "int64", "uint64"]),
    low=st.integers(-128, 100),
    span=st.integers(1, 20),
    known=st.integers(1, 20),
)
def test_integer_labels_by_table_are_the_hashed_codes(seed, n, dtype, low, span, known):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "u":
        low = abs(low)
    labels = (low + rng.integers(0, span, n)).astype(dtype)
    classes = tuple(str(low + k) for k in range(known)) + ("other",)

    def encoded():
        try:
            return _predictions._encode_labels(labels, classes, "y_true")
        except ValueError as error:
            return str(error)

    by_table = encoded()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_predictions, "_SMALL_INTEGER_SPAN", 0)  # every label through the hash
        hashed = encoded()
    if isinstance(hashed, str):
        assert by_table == hashed
    else:
        np.testing.assert_array_equal(by_table, hashed)
        assert by_table.dtype == np.int64


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_predicted_class_and_confidence_over_many_blocks_of_rows(dtype):
    rng = np.random.default_rng(5)
    proba = rng.dirichlet(np.ones(4), 20_001).astype(dtype)
    proba[::7] = 0.25  # four-way ties: the first column wins, as in argmax
    p = vc.Predictions.from_proba(proba)
    np.testing.assert_array_equal(p.y_pred, np.argmax(proba, axis=1))
    np.testing.assert_array_equal(p.confidence, np.minimum(proba.max(axis=1).astype(np.float64), 1.0))


def test_a_column_major_matrix_gives_the_same_predictions():
    rng = np.random.default_rng(6)
    proba = rng.dirichlet(np.ones(5), 20_000)
    by_rows = vc.Predictions.from_proba(proba)
    by_columns = vc.Predictions.from_proba(np.asfortranarray(proba))
    np.testing.assert_array_equal(by_columns.y_pred, by_rows.y_pred)
    np.testing.assert_array_equal(by_columns.confidence, by_rows.confidence)


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    rows=st.integers(1, 200),
    n_classes=st.sampled_from([2, 3, 10, 127, 128, 129, 300]),
    levels=st.sampled_from([2, 5, None]),  # few distinct values: ties everywhere; None: all distinct
    float32=st.booleans(),
)
def test_the_arithmetic_argmax_is_numpys_ties_to_the_first_column(seed, rows, n_classes, levels, float32):
    """_top_of_columns finds each row's first maximum by integer arithmetic; it is np.argmax's, at every
    class count (its small integers widen past 127 columns), with ties anywhere in a row."""
    rng = np.random.default_rng(seed)
    proba = rng.random((rows, n_classes)) if levels is None else rng.integers(1, levels + 1, (rows, n_classes)) / levels
    proba = proba.astype(np.float32 if float32 else np.float64)
    where, top = np.empty(rows, dtype=np.int64), np.empty(rows, dtype=proba.dtype)
    assert _predictions._top_of_columns(np.ascontiguousarray(proba.T), where, top, np.empty(rows, dtype=bool))
    np.testing.assert_array_equal(where, np.argmax(proba, axis=1))
    np.testing.assert_array_equal(top, proba.max(axis=1))
    proba[rng.integers(rows), :] = 0.0  # a row without a positive maximum: the caller decides
    assert not _predictions._top_of_columns(np.ascontiguousarray(proba.T), where, top, np.empty(rows, dtype=bool))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_several_tiles_with_a_ragged_end_give_numpys_argmax(dtype):
    """Tiles of _ROWS_PER_TILE rows, each copied _ROWS_PER_BLOCK rows at a time, the last of both cut short."""
    n = 2 * _predictions._ROWS_PER_TILE + _predictions._ROWS_PER_BLOCK + 3
    rng = np.random.default_rng(8)
    proba = rng.dirichlet(np.ones(6), n).astype(dtype)
    proba[::5] = 1 / 6  # ties in every block
    proba[-2] = [0.0, 0.5, 0.0, 0.5, 0.0, 0.0]  # in the last, short, block: ties to the first column
    p = vc.Predictions.from_proba(proba)
    np.testing.assert_array_equal(p.y_pred, np.argmax(proba, axis=1))
    np.testing.assert_array_equal(p.confidence, np.minimum(proba.max(axis=1).astype(np.float64), 1.0))
    proba[-1, 2] = -0.5  # a bad entry in the last rows is found and named
    with pytest.raises(ValueError) as raised:
        vc.Predictions.from_proba(proba)
    expected = f"proba has negative probabilities at rows {n - 1}"
    assert str(raised.value) == _checked_entry_by_entry(proba, 1e-3) == expected
