"""The shortcuts of one interval equal the general computation, bit for bit.

``_bounded._one_interval`` takes the sums over the counts once for both ends and the two Beta
quantiles in one call; ``_tally.grouped_tally`` with the value matrix's cells grouped once adds
0.0 for the cells no item occupies. Neither may change a number: both are checked here against
the computation they stand in for, on counts and values drawn to hit the edge cases (a single
outcome, zero counts, a point mass at an end, fractional pseudo-counts, -0.0 among the cells).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from valuecore._stats import bounded as _bounded
from valuecore._engine import tally as _tally

from valuecore._stats import uncertainty as _uncertainty
pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

VALUES = st.sampled_from([-1000.0, -9.7, -4.0, -1.0, -0.3, -0.0, 0.0, 0.5, 1.0, 2.0])
COUNTS = st.one_of(st.integers(0, 5).map(float), st.floats(0.0, 1e6, allow_subnormal=False))


@settings(max_examples=400, deadline=None)
@given(values=st.lists(VALUES, min_size=1, max_size=6, unique=True), data=st.data(),
       confidence=st.sampled_from([0.5, 0.8, 0.95, 0.99]))
def test_one_interval_equals_both_quantiles_computed_apart(values, data, confidence):
    distinct = np.sort(np.array(values))
    counts = np.array(data.draw(st.lists(COUNTS, min_size=distinct.size, max_size=distinct.size)))
    lowest = min(float(distinct[0]), data.draw(st.sampled_from([-1000.0, -5.0, float(distinct[0])])))
    highest = max(float(distinct[-1]), data.draw(st.sampled_from([1.0, 3.0, float(distinct[-1])])))
    span = highest - lowest
    if span <= 0:
        return
    unit = np.clip((distinct - lowest) / span, 0.0, 1.0)
    alpha = 1.0 - confidence
    got = _bounded._one_interval(unit, counts, alpha)
    want = (_bounded._unit_quantile(unit, counts, 0.0, alpha / 2),
            _bounded._unit_quantile(unit, counts, 1.0, 1 - alpha / 2))
    assert [float(x).hex() for x in got] == [float(x).hex() for x in want]
    # and through the public entry: one row of counts against the same counts as a batch of one
    one = _bounded.interval_from_counts(distinct, counts, lowest, highest, confidence)
    batch = _bounded.interval_from_counts(distinct, counts[None, :], lowest, highest, confidence)
    assert [float(x).hex() for x in one] == [float(x[0]).hex() for x in batch]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_cells_grouped_once_give_the_groups_of_the_occupied_cells(data):
    n_cells = data.draw(st.integers(1, 12))
    cells = np.array(data.draw(st.lists(VALUES, min_size=n_cells, max_size=n_cells)))
    count = np.array(data.draw(st.lists(st.integers(0, 3).map(float), min_size=n_cells, max_size=n_cells)))
    weight = np.where(count > 0, count * np.array(data.draw(st.lists(st.sampled_from([0.1, 1.0, 2.5]),
                                                                       min_size=n_cells, max_size=n_cells))), 0.0)
    tally = _tally.Tally(count, weight, weight * weight)
    groups = _tally.cell_groups(cells)
    if groups is None:  # a -0.0 cell: the general path
        assert np.any((cells == 0) & np.signbit(cells))
        return
    if not count.any():
        return
    got = _tally.grouped_tally(tally, cells, False, groups)
    want = _tally.grouped_tally(tally, cells, False)
    for name in ("values", "count", "weight", "weight_sq"):
        assert getattr(got, name).tobytes() == getattr(want, name).tobytes(), name


@functools.cache
def _every_row(distinct: bytes, shares: bytes):
    """The 50 rows of counts (2, 4, ... 2**50 items shared out as ``shares``) and interval_from_counts of all
    of them at once: the reference, computed once per distinct values and shares (the examples below draw
    about two slices of each; a reference costs 50 inverse Betas of shapes up to 1e15 per end)."""
    distinct, shares = np.frombuffer(distinct), np.frombuffer(shares)
    counts = (2.0 ** np.arange(1, 51))[:, None] * (shares / shares.sum())[None, :]
    lowest, highest = min(float(distinct[0]), -5.0), max(float(distinct[-1]), 1.0)
    ends = _bounded.interval_from_counts(distinct, counts, lowest, highest, 0.95)
    for shared in (counts, *ends):
        shared.setflags(write=False)  # shared by the examples: nothing may change it in place
    return counts, lowest, highest, ends


@settings(max_examples=200, deadline=None)
@given(values=st.lists(VALUES, min_size=1, max_size=5, unique=True), data=st.data())
def test_rows_of_intervals_give_interval_from_counts_for_the_rows_asked(values, data):
    distinct = np.sort(np.array(values))
    shares = np.array(data.draw(st.lists(st.floats(0.01, 1.0), min_size=distinct.size, max_size=distinct.size)))
    counts, lowest, highest, (low, high) = _every_row(distinct.tobytes(), shares.tobytes())
    rows = _bounded.RowsOfIntervals(distinct, counts, lowest, highest, 0.95)
    start = data.draw(st.integers(0, 49))
    stop = data.draw(st.integers(start + 1, 50))
    got_low, got_high = rows.ends(slice(start, stop))
    assert got_low.tobytes() == low[start:stop].tobytes() and got_high.tobytes() == high[start:stop].tobytes()


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_items_to_exclude_searching_the_grid_in_batches_equals_the_whole_grid(data):
    from valuecore._engine.tally import Grouped
    from valuecore._stats.uncertainty import grouped_items_to_exclude

    # the rows of one batch are interval_from_counts' own (test above), so the whole grid is the reference
    size = data.draw(st.integers(1, 5))
    values = np.sort(np.array(data.draw(st.lists(st.sampled_from([-5.0, -3.125, -1.0, 0.0, 1.0, 3.125, 4.0]),
                                                 min_size=size, max_size=size, unique=True))))
    count = np.array(data.draw(st.lists(st.integers(1, 500_000).map(float), min_size=size, max_size=size)))
    weight = count * data.draw(st.sampled_from([1.0, 0.5]))
    g = Grouped(values, count, weight, weight * weight, bool(np.all(weight == np.round(weight))))
    value_range = (min(-5.0, values[0]), max(5.0, values[-1]))
    null = data.draw(st.sampled_from([0.0, -0.5]))
    got = grouped_items_to_exclude(g, value_range, null=null)
    with pytest.MonkeyPatch.context() as patch:  # as it was: every size of the grid in one batch
        patch.setattr(_uncertainty, "_GRID_ROWS", 50)
        assert got == grouped_items_to_exclude(g, value_range, null=null)
