"""Cumulative counts drawn to be hard for the hull, the gains to try on them, and the linear scan the hull
must agree with (``tests/core/test_hull.py``, ``tests/core/test_hull_moves.py``)."""

from __future__ import annotations

import sys
from fractions import Fraction

import numpy as np
from hypothesis import HealthCheck
from hypothesis import strategies as st

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])



def scan(a: float, b: float, correct: np.ndarray, wrong: np.ndarray, start: int = 0, stop: int | None = None,
         base: float = 0.0) -> int:
    """The linear scan, as the engine computed it before the hull: argmax of the whole array."""
    stop = correct.size if stop is None else stop
    return start + int(np.argmax((a * correct + b * wrong)[start:stop] - base))


# ------------------------------------------------------------------ counts drawn to be hard
GROUP_WEIGHTS = st.one_of(
    st.sampled_from((0.0, 1.0, 2.0, 3.0)),  # whole numbers: exact sums, exact ties
    st.sampled_from((0.5, 0.25, 0.1, 0.3, 1e-300, 1e-17, 5e-324)),  # rounding, subnormal, tiny
    st.floats(0.0, 10.0),
)


@st.composite
def cumulative_counts(draw):
    """(correct, wrong) cumulated from 0 over groups drawn with a pattern: random, collinear, all correct,
    all wrong, long runs of one kind (vertical and horizontal hull segments)."""
    n = draw(st.integers(0, 60))
    pattern = draw(st.sampled_from(("random", "collinear", "all_correct", "all_wrong", "runs")))
    weight = draw(st.sampled_from(("ones", "ints", "any")))

    def w():
        if weight == "ones":
            return 1.0
        if weight == "ints":
            return draw(st.sampled_from((0.0, 1.0, 2.0, 5.0)))
        return draw(GROUP_WEIGHTS)

    groups = []
    for g in range(n):
        if pattern == "collinear":
            groups.append((w(), w()) if weight == "any" else (1.0, 1.0))
        elif pattern == "all_correct":
            groups.append((w(), 0.0))
        elif pattern == "all_wrong":
            groups.append((0.0, w()))
        elif pattern == "runs":
            correct_now = (g // draw(st.integers(1, 6))) % 2 == 0
            groups.append((w(), 0.0) if correct_now else (0.0, w()))
        else:
            groups.append((w() if draw(st.booleans()) else 0.0, w() if draw(st.booleans()) else 0.0))
    correct = np.r_[0.0, np.cumsum([c for c, _ in groups])] if groups else np.zeros(1)
    wrong = np.r_[0.0, np.cumsum([x for _, x in groups])] if groups else np.zeros(1)
    return correct, wrong


@st.composite
def gains_for(draw, correct: np.ndarray, wrong: np.ndarray):
    """(a, b): any signs, omega 0 and huge, and values whose omega is a slope between two points (a tie)."""
    kind = draw(st.sampled_from(("slope", "slope", "any", "edge")))
    if kind == "any":
        number = st.one_of(st.sampled_from((0.0, 1.0, -1.0, 4.0, -4.0, 1e-300, -1e300, 1e300, 0.1, -0.1)),
                           st.floats(-1e6, 1e6))
        return draw(number), draw(number)
    if kind == "edge":  # omega 0 or astronomically large
        a = draw(st.sampled_from((1.0, 0.3, 7.0)))
        return a, draw(st.sampled_from((0.0, -0.0, -1e300, -1e-300, -a * 1e15)))
    i, j = sorted(draw(st.lists(st.integers(0, correct.size - 1), min_size=2, max_size=2)))
    rise, width = Fraction(float(correct[j])) - Fraction(float(correct[i])), \
        Fraction(float(wrong[j])) - Fraction(float(wrong[i]))
    # A slope past the largest float (a width of 5e-324) has no float omega to tie at: any value then.
    omega = float(rise / width) if width and abs(rise / width) <= sys.float_info.max else 1.0
    a = draw(st.sampled_from((1.0, 2.0, 0.1, 3.0)))
    if draw(st.booleans()):  # the mirrored case: wrong answers worth more than right ones
        return -a * omega, a
    return a, -a * omega


def counts_and_moves(max_moves: int, with_data: bool = False):
    """Counts from :func:`cumulative_counts` with 1 to ``max_moves`` values :func:`gains_for` them (and a
    ``st.data()`` for draws that depend on the counts): a run and the slider moves made on it."""
    def moves_on(counts):
        moves = st.lists(gains_for(*counts), min_size=1, max_size=max_moves)
        return st.tuples(st.just(counts), moves, st.data()) if with_data else st.tuples(st.just(counts), moves)
    return cumulative_counts().flatmap(moves_on)


# ------------------------------------------------------------------ per-class thresholds: one search per segment
def per_segment_reference(a: float, b: float, correct: np.ndarray, wrong: np.ndarray, spans, labels: np.ndarray,
                          cache: dict | None = None) -> list | None:
    """The per-class search as the engine did it before ``hull.Segments``, one ``hull.first_best`` per segment:
    the label of the first best point when its gain over the counts before the segment is above 0, else NaN;
    None when a segment needs the scan."""
    from valuecore._engine import hull

    cache = {} if cache is None else cache
    chosen = []
    for start, stop in spans:
        base = a * float(correct[start - 1]) + b * float(wrong[start - 1]) if start else 0.0
        best = hull.first_best(cache, "reference", a, correct, b, wrong, start, stop, base)
        if best is None:
            return None
        chosen.append(float(labels[best]) if (a * float(correct[best]) + b * float(wrong[best])) - base > 0
                      else float("nan"))
    return chosen


def per_segment_scan(a: float, b: float, correct: np.ndarray, wrong: np.ndarray, spans, labels: np.ndarray) -> list:
    """The same by the linear scan: per segment the argmax of the gains over the counts before it."""
    at_end = a * correct + b * wrong
    chosen = []
    for start, stop in spans:
        prefix = at_end[start:stop] - at_end[start - 1] if start else at_end[start:stop]
        best = int(np.argmax(prefix))
        chosen.append(float(labels[start + best]) if prefix[best] > 0 else float("nan"))
    return chosen
