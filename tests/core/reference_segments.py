"""Slow, exact reference for thresholds per segment with caps: every combination of per-segment thresholds
(each segment's distinct confidences and "always abstain"), scored in ``fractions.Fraction`` from the
definitions in ``valuecore._decide.segments``. valuecore itself is never called here."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

QUANTITIES = ("handoff_gap", "error_gap", "value_gap")


@dataclass(frozen=True)
class Item:
    segment: str
    confidence: float
    predicted: int
    truth: int
    weight: int


def candidates(items, segment):
    """None (always abstain), then the segment's distinct confidences, highest first."""
    return [None, *sorted({i.confidence for i in items if i.segment == segment}, reverse=True)]


def segment_figures(items, segment, threshold, matrix):
    """Exact (value_total, n_items, hand-off rate, selective error rate or None, value per item)."""
    return class_figures(items, segment, {i.predicted: threshold for i in items}, matrix)


def gaps(figures):
    """Largest minus smallest of each quantity over the segments (those that have it)."""
    out = {}
    for name, at in (("handoff_gap", 2), ("error_gap", 3), ("value_gap", 4)):
        present = [f[at] for f in figures if f[at] is not None]
        out[name] = max(present) - min(present) if len(present) >= 2 else Fraction(0)
    return out


def check_optimum(fit, names, figures, best, free, caps, tolerances):
    """Assert that a fit's chosen thresholds, scored here as ``figures`` (one per segment of ``names``), are
    the optimum ``best`` within the caps, with the fit's own figures matching (``free``: without caps)."""
    import pytest

    n_items = sum(f[1] for f in figures)
    assert sum(f[0] for f in figures) == best  # exactly the optimum
    assert holds(figures, caps, tolerances)
    assert fit.value_total == pytest.approx(float(best), abs=1e-9)
    assert fit.cap_cost_per_item == pytest.approx(float((free - best) / n_items), abs=1e-12)
    for s, f in zip(names, figures):
        row = fit.evaluation.standing(s)
        assert row.handoff_rate == pytest.approx(float(f[2]), abs=1e-12)
        assert row.value_per_item == pytest.approx(float(f[4]), abs=1e-12)
        assert (row.selective_risk is None) == (f[3] is None)


def holds(figures, caps, tolerances):
    found = gaps(figures)
    return all(found[name] <= Fraction(cap) + Fraction(tolerances[name]) for name, cap in caps.items())


def brute_force(items, segments, matrices, caps, tolerances):
    """(best total value within the caps or None, the unconstrained best total)."""
    options = [candidates(items, s) for s in segments]
    best = None
    free = None
    for choice in itertools.product(*options):
        figures = [segment_figures(items, s, t, matrices[s]) for s, t in zip(segments, choice)]
        total = sum(f[0] for f in figures)
        free = total if free is None or total > free else free
        if holds(figures, caps, tolerances) and (best is None or total > best):
            best = total
    return best, free


# ------------------------------------------------------------------ per-class thresholds per segment
def class_candidates(items, segment, predicted):
    """None (never act on the class), then the distinct confidences of the segment's items predicted as it."""
    return [None, *sorted({i.confidence for i in items if i.segment == segment and i.predicted == predicted},
                          reverse=True)]


def class_figures(items, segment, thresholds, matrix):
    """``segment_figures`` with a threshold per predicted class (``thresholds[k]``: class k's, None never)."""
    n = acted = wrong = value = Fraction(0)
    abstain = len(matrix[0]) - 1
    for i in items:
        if i.segment != segment:
            continue
        w = Fraction(i.weight)
        n += w
        threshold = thresholds[i.predicted]
        act = threshold is not None and i.confidence >= threshold
        if act:
            acted += w
            wrong += w * (i.predicted != i.truth)
        value += w * Fraction(matrix[i.truth][i.predicted if act else abstain])
    return value, n, (n - acted) / n, (wrong / acted if acted else None), value / n


def brute_force_classes(items, segments, matrices, n_classes, caps, tolerances):
    """(best total value within the caps or None, the unconstrained best total), over every combination of
    per-class thresholds in every segment."""
    per_segment = []
    for s in segments:
        options = itertools.product(*(class_candidates(items, s, k) for k in range(n_classes)))
        per_segment.append([class_figures(items, s, choice, matrices[s]) for choice in options])
    best = free = None
    for figures in itertools.product(*per_segment):
        total = sum(f[0] for f in figures)
        free = total if free is None or total > free else free
        if holds(figures, caps, tolerances) and (best is None or total > best):
            best = total
    return best, free
