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
    n = acted = wrong = Fraction(0)
    value = Fraction(0)
    abstain = len(matrix[0]) - 1
    for i in items:
        if i.segment != segment:
            continue
        w = Fraction(i.weight)
        n += w
        act = threshold is not None and i.confidence >= threshold
        if act:
            acted += w
            wrong += w * (i.predicted != i.truth)
        value += w * Fraction(matrix[i.truth][i.predicted if act else abstain])
    return value, n, (n - acted) / n, (wrong / acted if acted else None), value / n


def gaps(figures):
    """Largest minus smallest of each quantity over the segments (those that have it)."""
    out = {}
    for name, at in (("handoff_gap", 2), ("error_gap", 3), ("value_gap", 4)):
        present = [f[at] for f in figures if f[at] is not None]
        out[name] = max(present) - min(present) if len(present) >= 2 else Fraction(0)
    return out


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
