"""Slow, exact reference for the shortlist policy: every (act, list) threshold pair
times every list size (or cumulative level), summed in ``Fraction``. Lists are
read off each item's probability row with plain Python loops."""

from __future__ import annotations

from fractions import Fraction

import reference as ref
from reference import exact


def true_rank(row, y: int) -> int:
    """Place of class ``y`` in the row's list: classes strictly more probable, or as probable and lower."""
    return sum(1 for c, p in enumerate(row) if p > row[y] or (p == row[y] and c < y))


def cumulative(row) -> list:
    """Summed probability of the 1, 2, ... most probable classes, added one at a time in floats."""
    out, total = [], 0.0
    for p in sorted(row, reverse=True):
        total += p
        out.append(total)
    return out


def size_at(row, level: float) -> int:
    """Smallest list whose summed probability reaches ``level``; every class if none does."""
    for m, total in enumerate(cumulative(row), start=1):
        if total >= level:
            return m
    return len(row)


def levels(run: ref.RefRun) -> list:
    """Every distinct cumulative level in (0, 1] of the run, increasing."""
    return sorted({v for row in run.proba for v in cumulative(row) if 0 < v <= 1})


def item_value(run: ref.RefRun, M, i: int, t_auto, t_list, size: int, values: dict) -> Fraction:
    """Value of item ``i``: act, hand off with a list of ``size`` classes, or a blank hand-off.
    ``values`` maps a size to (value if the true class is listed, value if not)."""
    C = run.n_classes
    if ref.accepts(run.conf[i], t_auto):
        return M[run.y_true[i]][run.y_pred[i]]
    if ref.accepts(run.conf[i], t_list) and size in values:
        v_in, v_out = values[size]
        return exact(v_in if true_rank(run.proba[i], run.y_true[i]) < size else v_out)
    return M[run.y_true[i]][C]


def shortlist_value(run: ref.RefRun, M, t_auto, t_list, rule: str, choice, values: dict) -> Fraction:
    total = Fraction(0)
    for i in run.items():
        size = choice if rule == "top_k" else size_at(run.proba[i], choice)
        total += exact(run.weight[i]) * item_value(run, M, i, t_auto, t_list, size, values)
    return total


def shortlist_search(run: ref.RefRun, M, values: dict, rule: str = "top_k"):
    """Best (t_auto, t_list, k or level) with t_list <= t_auto; ties keep the highest t_auto,
    then the highest t_list, then the smallest k (or level). None counts as the highest."""
    cands = ref.candidates(run)
    choices = sorted(values) if rule == "top_k" else levels(run)
    best = None
    for a, t_auto in enumerate(cands):
        for t_list in cands[a:]:
            for choice in choices:
                value = shortlist_value(run, M, t_auto, t_list, rule, choice, values)
                if best is None or value > best[3]:
                    best = (t_auto, t_list, choice, value)
    return best
