"""Slow, exact references for the constraint features (capacity, certified
risk, two-tier automation): plain loops over every candidate (or every
combination of candidates) in ``fractions.Fraction``, written from the
definitions in the docstrings of ``valuecore._decide.capacity``, ``valuecore._decide.risk``
and ``valuecore._engine.twotier``. Only the generic helpers of ``reference.py`` are
used; valuecore itself is never called here.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb

import reference as ref
from reference import exact


def handoffs(run: ref.RefRun, actions) -> Fraction:
    """Weighted number of abstained (handed-off) items."""
    C = run.n_classes
    return sum((exact(run.weight[i]) for i in run.items() if actions[i] == C), Fraction(0))


def capacity_search(run: ref.RefRun, M, budget: Fraction):
    """Best one-threshold policy with hand-offs <= budget: (threshold, value).
    Candidates in order None, highest confidence first; ties keep the first."""
    best = None
    for t in ref.candidates(run):
        actions = ref.threshold_actions(run, t)
        if handoffs(run, actions) > budget:
            continue
        value = ref.realised_value(run, actions, M)
        if best is None or value > best[1]:
            best = (t, value)
    if best is None:  # accepting everything hands nothing off, so this cannot happen for budget >= 0
        raise AssertionError("no feasible threshold")
    return best


def capacity_curve(run: ref.RefRun, M) -> list:
    """(handoffs, best value within that many hand-offs) for each candidate's hand-offs."""
    points = []
    for t in ref.candidates(run):
        h = handoffs(run, ref.threshold_actions(run, t))
        points.append((h, capacity_search(run, M, h)[1]))
    return points


def majorant_right_slope(points, budget: Fraction) -> Fraction:
    """Slope just right of ``budget`` of the least concave function above the step function
    ``V(x) = max{v : (h, v) in points, h <= x}``, by brute force over every pair of points."""
    steps = sorted({h for h, _ in points})
    best_within = {x: max(v for h, v in points if h <= x) for x in steps}
    top = max(best_within.values())

    def majorant(x: Fraction) -> Fraction:
        out = top if x >= steps[-1] else None  # flat past the last step
        for p in steps:
            for q in steps:
                if p <= x <= q:
                    vp, vq = best_within[p], best_within[q]
                    value = vp if p == q else vp + (vq - vp) * (x - p) / (q - p)
                    out = value if out is None else max(out, value)
        return out

    after = [h for h in steps if h > budget]
    if not after:
        return Fraction(0)
    step = min(after) - budget  # the majorant is linear between consecutive steps
    return (majorant(budget + step) - majorant(budget)) / step


def marginal_value(run: ref.RefRun, M, budget: Fraction) -> Fraction:
    """Value of one more hand-off slot: the concave majorant's slope just right of the budget (one threshold)."""
    return majorant_right_slope(capacity_curve(run, M), budget)


def class_capacity_points(run: ref.RefRun, M) -> list:
    """(hand-offs, value) of every combination of per-class thresholds."""
    per_class = [ref.candidates(run, [i for i in run.items() if run.y_pred[i] == j]) for j in range(run.n_classes)]
    points = []
    for combo in itertools.product(*per_class):
        actions = ref.class_threshold_actions(run, list(combo))
        points.append((handoffs(run, actions), ref.realised_value(run, actions, M)))
    return points


def class_marginal_value(run: ref.RefRun, M, budget: Fraction) -> Fraction:
    """The same slope for per-class thresholds."""
    return majorant_right_slope(class_capacity_points(run, M), budget)


def class_capacity_optimum(run: ref.RefRun, M, budget: Fraction) -> Fraction:
    """Best per-class threshold policy with hand-offs <= budget: every combination."""
    per_class = [ref.candidates(run, [i for i in run.items() if run.y_pred[i] == j]) for j in range(run.n_classes)]
    best = None
    for combo in itertools.product(*per_class):
        actions = ref.class_threshold_actions(run, list(combo))
        if handoffs(run, actions) > budget:
            continue
        value = ref.realised_value(run, actions, M)
        best = value if best is None else max(best, value)
    return best


# ------------------------------------------------------------ certified risk
def binomial_cdf(k: int, n: int, p: Fraction) -> Fraction:
    """P(Binomial(n, p) <= k), exactly."""
    return sum((comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(0, k + 1)), Fraction(0))


def certified_search(run: ref.RefRun, M, alpha: Fraction, delta: Fraction, method: str, n_grid: int = 50):
    """Learn-then-Test with integer weights as item counts.

    A candidate accepting m items, e of them wrong, passes at level l iff
    P(Binomial(m, alpha) <= e) <= l; one that accepts too few items to pass
    even with no error at level delta (bonferroni: delta / all candidates) is
    never tested (a label-free screen).

    * "bonferroni": every screened candidate, level delta / (number screened).
    * "fixed_sequence": for j = 1..n_grid, the first candidate (highest
      threshold first) accepting at least j N / n_grid items, without repeats,
      screened; tested in that order at level delta until the first failure.

    Returns (threshold, value, tested thresholds, certified thresholds): the
    certified candidate of largest value (ties: the highest threshold), or
    None (always abstain) when that is worth as much or more.
    """
    thresholds = ref.candidates(run)[1:]
    m_of = {t: int(ref.counts(run, t)[0]) for t in thresholds}
    e_of = {t: int(ref.counts(run, t)[2]) for t in thresholds}
    if method == "bonferroni":
        tested = [t for t in thresholds if (1 - alpha) ** m_of[t] <= delta / max(len(thresholds), 1)]
        level = delta / max(len(tested), 1)
        certified = [t for t in tested if m_of[t] > 0 and binomial_cdf(e_of[t], m_of[t], alpha) <= level]
    else:
        total = run.total
        grid = []
        for j in range(1, n_grid + 1):
            target = Fraction(j) * total / n_grid
            chosen = next((t for t in thresholds if m_of[t] >= target), thresholds[-1] if thresholds else None)
            if chosen is not None and chosen not in grid:
                grid.append(chosen)
        grid = [t for t in grid if (1 - alpha) ** m_of[t] <= delta]
        tested, certified = [], []
        for t in grid:
            tested.append(t)
            if m_of[t] == 0 or binomial_cdf(e_of[t], m_of[t], alpha) > delta:
                break
            certified.append(t)
    best_t = None
    best_v = ref.realised_value(run, ref.threshold_actions(run, None), M)
    for t in certified:
        value = ref.realised_value(run, ref.threshold_actions(run, t), M)
        if value > best_v or (value == best_v and best_t is not None and t > best_t):
            best_t, best_v = t, value
    return best_t, best_v, tested, certified


# ------------------------------------------------------------ two-tier
def two_tier_value(run: ref.RefRun, M, t_auto, t_assist, assisted) -> Fraction:
    """Value of acting at conf >= t_auto, a confirmed action at t_assist <= conf < t_auto,
    a hand-off below. ``assisted`` = (value confirmed correct, value confirmed wrong, cost)."""
    v_ok, v_bad, cost = (exact(x) for x in assisted)
    C = run.n_classes
    total = Fraction(0)
    for i in run.items():
        w = exact(run.weight[i])
        if ref.accepts(run.conf[i], t_auto):
            total += w * M[run.y_true[i]][run.y_pred[i]]
        elif ref.accepts(run.conf[i], t_assist):
            total += w * ((v_ok if run.y_pred[i] == run.y_true[i] else v_bad) - cost)
        else:
            total += w * M[run.y_true[i]][C]
    return total


def two_tier_search(run: ref.RefRun, M, assisted):
    """Best (t_auto, t_assist) with t_assist <= t_auto over every pair; ties keep the
    highest t_auto, then the highest t_assist (None counts as the highest)."""
    cands = ref.candidates(run)  # None first, then decreasing
    best = None
    for a, t_auto in enumerate(cands):
        for t_assist in cands[a:]:
            value = two_tier_value(run, M, t_auto, t_assist, assisted)
            if best is None or value > best[2]:
                best = (t_auto, t_assist, value)
    return best
