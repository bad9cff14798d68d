"""Brute-force reference for imperfect, loaded reviewers (``valuecore._engine.reviewers``).

Written from the definition in docs/constraints.md ("People who are not always
right"), in exact arithmetic, never calling valuecore: every candidate threshold
is tried, the decisions are made item by item, and the value of the hand-offs
is priced at the hand-off rate they produce.
"""

from __future__ import annotations

from fractions import Fraction

import reference as ref


def accuracy_at(rate: Fraction, accuracy, workload) -> Fraction:
    """Linear interpolation between breakpoints, flat beyond the first and last."""
    if not workload:
        return Fraction(accuracy)
    points = [(Fraction(r), Fraction(a)) for r, a in workload]
    if rate <= points[0][0]:
        return points[0][1]
    for (r0, a0), (r1, a1) in zip(points, points[1:]):
        if rate <= r1:
            return a0 + (a1 - a0) * (rate - r0) / (r1 - r0)
    return points[-1][1]


def counts(run: ref.RefRun, actions) -> tuple:
    """Weighted (correct, wrong, handed off) of a list of actions."""
    C = run.n_classes
    correct = wrong = handoff = Fraction(0)
    for i in run.items():
        w = ref.exact(run.weight[i])
        if actions[i] == C:
            handoff += w
        elif actions[i] == run.y_true[i]:
            correct += w
        else:
            wrong += w
    return correct, wrong, handoff


def value(correct, wrong, handoff, use_case, accuracy, workload, v_person_wrong) -> Fraction:
    v_correct, v_abstain, v_wrong = (Fraction(v) for v in use_case)
    person_wrong = v_wrong if v_person_wrong is None else Fraction(v_person_wrong)
    n_items = correct + wrong + handoff
    rate = handoff / n_items if n_items > 0 else Fraction(0)
    a = accuracy_at(rate, accuracy, workload)
    return v_correct * correct + v_wrong * wrong + handoff * (a * v_abstain + (1 - a) * person_wrong)


def search_threshold(run: ref.RefRun, use_case, accuracy=1.0, workload=(), v_person_wrong=None) -> ref.Search:
    """Every candidate threshold (None, then each distinct confidence, highest first)."""
    table = []
    for t in ref.candidates(run):
        c, w, h = counts(run, ref.threshold_actions(run, t))
        table.append((t, value(c, w, h, use_case, accuracy, workload, v_person_wrong)))
    best_t, best_v = ref._argmax_highest(table)
    return ref.Search(best_t, best_v, table)


def class_threshold_value(run: ref.RefRun, thresholds, use_case, accuracy=1.0, workload=(),
                          v_person_wrong=None) -> Fraction:
    """Exact value of per-class thresholds (``thresholds[j]`` for items predicted j), hand-offs priced at
    the rate they produce."""
    c, w, h = counts(run, ref.class_threshold_actions(run, list(thresholds)))
    return value(c, w, h, use_case, accuracy, workload, v_person_wrong)


def search_class_thresholds(run: ref.RefRun, use_case, accuracy=1.0, workload=(), v_person_wrong=None):
    """(best value, every maximising tuple of thresholds): every combination of per-class candidates."""
    from itertools import product

    per_class = [ref.candidates(run, [i for i in run.items() if run.y_pred[i] == j]) for j in range(run.n_classes)]
    best, maximisers = None, []
    for combo in product(*per_class):
        v = class_threshold_value(run, combo, use_case, accuracy, workload, v_person_wrong)
        if best is None or v > best:
            best, maximisers = v, [combo]
        elif v == best:
            maximisers.append(combo)
    return best, maximisers
