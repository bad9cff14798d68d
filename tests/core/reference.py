"""Slow, obviously-correct reference implementations for testing valuecore.

Everything here is written from the definitions (seed 000 eqs. 1-5, seed 003
eqs. 7-8, the conventions in ``valuecore/__init__.py`` and the public
docstrings), as plain Python loops over every item and every candidate
threshold. Arithmetic is exact: every float input is turned into the
``fractions.Fraction`` it denotes, so a tie here is a true tie of the inputs
and a maximum is the true maximum. The reference functions never call
valuecore; only the input builders at the bottom (``Case.predictions``,
``Vals.engine``) construct engine objects from the same generated data.

Conventions used throughout
---------------------------
* An *action* is a class index, or ``C`` (the number of classes) for abstain.
* A value matrix ``M`` is a list of ``C`` rows of ``C + 1`` Fractions: rows the
  true class, columns the predicted class then "abstain".
* A threshold is a float or ``None`` (always abstain); accept iff
  ``confidence >= threshold``. Candidates are ``None`` and every distinct
  observed confidence, highest first; ``None`` counts as the highest.
"""

from __future__ import annotations

import itertools
import sys
import math
from dataclasses import dataclass
from fractions import Fraction


def exact(x) -> Fraction:
    """The exact rational value of a float / int input."""
    return Fraction(x)


# --------------------------------------------------------------------- runs
@dataclass
class RefRun:
    """A run as plain Python lists."""

    n_classes: int
    conf: list  # floats
    y_pred: list  # ints
    y_true: list | None  # ints or None
    weight: list  # floats
    proba: list | None = None  # list of rows (floats) or None

    @property
    def n(self) -> int:
        return len(self.conf)

    @property
    def total(self) -> Fraction:
        return sum((exact(w) for w in self.weight), Fraction(0))

    def items(self):
        return range(self.n)


def first_argmax(row) -> int:
    """Index of the largest entry; the first one on ties."""
    best = 0
    for k in range(1, len(row)):
        if row[k] > row[best]:
            best = k
    return best


def run_from_proba(proba_rows, y_true, weight, n_classes) -> RefRun:
    rows = [list(map(float, r)) for r in proba_rows]
    y_pred = [first_argmax(r) for r in rows]
    # Capped at 1 as Predictions caps it: a row within the sum tolerance may hold 1.0000000000000002.
    conf = [min(r[j], 1.0) for r, j in zip(rows, y_pred)]
    weight = [1.0] * len(rows) if weight is None else [float(w) for w in weight]
    return RefRun(n_classes, conf, y_pred, None if y_true is None else list(y_true), weight, rows)


def run_from_top_label(y_pred, conf, y_true, weight, n_classes) -> RefRun:
    weight = [1.0] * len(conf) if weight is None else [float(w) for w in weight]
    return RefRun(n_classes, [float(c) for c in conf], list(y_pred), None if y_true is None else list(y_true), weight)


# ------------------------------------------------------------------- values
def use_case_matrix(v_correct, v_abstain, v_wrong, n_classes) -> list:
    """Seed 000 eq. 2 as a matrix: correct on the diagonal, wrong elsewhere, abstain last."""
    matrix = []
    for true in range(n_classes):
        row = []
        for action in range(n_classes):
            row.append(exact(v_correct) if action == true else exact(v_wrong))
        row.append(exact(v_abstain))
        matrix.append(row)
    return matrix


def array_matrix(values) -> list:
    return [[exact(float(v)) for v in row] for row in values]


def matrix_is_use_case(M) -> bool:
    C = len(M)
    diagonal = {M[i][i] for i in range(C)}
    off = {M[i][j] for i in range(C) for j in range(C) if i != j}
    abstain = {M[i][C] for i in range(C)}
    return len(diagonal) == 1 and len(off) <= 1 and len(abstain) == 1


def gain(M, true, action) -> Fraction:
    """Value of taking ``action`` instead of abstaining, when the truth is ``true``."""
    C = len(M)
    return M[true][action] - M[true][C]


# ---------------------------------------------------------------- decisions
def candidates(run: RefRun, items=None) -> list:
    """None, then every distinct confidence among ``items``, highest first."""
    items = run.items() if items is None else items
    return [None] + sorted({run.conf[i] for i in items}, reverse=True)


def accepts(conf: float, threshold) -> bool:
    return threshold is not None and conf >= threshold


def threshold_actions(run: RefRun, threshold) -> list:
    C = run.n_classes
    return [run.y_pred[i] if accepts(run.conf[i], threshold) else C for i in run.items()]


def class_threshold_actions(run: RefRun, thresholds: list) -> list:
    """``thresholds[j]`` applies to items *predicted* as class j."""
    C = run.n_classes
    return [run.y_pred[i] if accepts(run.conf[i], thresholds[run.y_pred[i]]) else C for i in run.items()]


def accept_all_actions(run: RefRun) -> list:
    return list(run.y_pred)


def expected_values_of_actions(run: RefRun, i: int, M) -> list:
    """Expected value of every action (classes then abstain) for item i, from its proba row."""
    C = run.n_classes
    row = [exact(p) for p in run.proba[i]]
    return [sum((row[k] * M[k][a] for k in range(C)), Fraction(0)) for a in range(C + 1)]


def expected_value_actions(run: RefRun, M) -> list:
    """The expected-value rule: the action of largest expected value.

    Tie rule (documented in ``Policy.decide``'s implementation): the argmax
    class first, then abstaining, then the lowest class index.
    """
    C = run.n_classes
    actions = []
    for i in run.items():
        expected = expected_values_of_actions(run, i, M)
        best = max(expected)
        if expected[run.y_pred[i]] == best:
            actions.append(run.y_pred[i])
        elif expected[C] == best:
            actions.append(C)
        else:
            actions.append(min(a for a in range(C) if expected[a] == best))
    return actions


def expected_value_margins(run: RefRun, M) -> list:
    """Per item, the gap between the best and the second-best distinct expected values."""
    gaps = []
    for i in run.items():
        values = sorted(set(expected_values_of_actions(run, i, M)), reverse=True)
        gaps.append(values[0] - values[1] if len(values) > 1 else math.inf)
    return gaps


# ------------------------------------------------------------------- values
def realised_value(run: RefRun, actions, M) -> Fraction:
    """Eq. 2 with a value matrix: the weighted sum of M[true, action]."""
    return sum((exact(run.weight[i]) * M[run.y_true[i]][actions[i]] for i in run.items()), Fraction(0))


def truth_distribution(run: RefRun, i: int, M) -> list:
    """The model's own distribution of item i's true class, for label-free figures.

    Full-proba run: the probability row rescaled to sum to exactly 1 (rows may
    deviate within the loader's tolerance; expected counts must add up to N).
    Top-label run (simple use case only): the predicted class with probability
    ``confidence``, the rest on some other class (which one does not matter when
    every wrong answer is worth the same).
    """
    C = run.n_classes
    if run.proba is not None:
        row = [exact(p) for p in run.proba[i]]
        total = sum(row, Fraction(0))
        return [p / total for p in row] if total > 0 else row
    assert matrix_is_use_case(M), "a top-label run supports label-free figures for a simple use case only"
    j = run.y_pred[i]
    c = exact(run.conf[i])
    truth = [Fraction(0)] * C
    truth[j] += c
    truth[(j + 1) % C] += 1 - c
    return truth


def expected_gain(run: RefRun, i: int, M) -> Fraction:
    """Weighted expected gain over abstaining of acting on item i's predicted class."""
    C = run.n_classes
    j = run.y_pred[i]
    truth = truth_distribution(run, i, M)
    return exact(run.weight[i]) * sum((truth[k] * gain(M, k, j) for k in range(C)), Fraction(0))


def realised_gain(run: RefRun, i: int, M) -> Fraction:
    return exact(run.weight[i]) * gain(M, run.y_true[i], run.y_pred[i])


def objective(run: RefRun, actions, M, estimate: bool) -> Fraction:
    """What tuning maximises: the realised total value, or (estimate) the expected
    gain over always abstaining (same argmax as the expected total value)."""
    if not estimate:
        return realised_value(run, actions, M)
    C = run.n_classes
    return sum((expected_gain(run, i, M) for i in run.items() if actions[i] != C), Fraction(0))


def expected_value(run: RefRun, actions, M) -> Fraction:
    """Expected total value of ``actions`` under the model's own probabilities (seed 002)."""
    return sum((_weighted_expected(run, i, truth_distribution(run, i, M), M, actions[i]) for i in run.items()),
               Fraction(0))


def _weighted_expected(run: RefRun, i: int, truth: list, M, action: int) -> Fraction:
    """Item i's weight times the expected value of ``action`` under ``truth`` (its truth distribution)."""
    return exact(run.weight[i]) * sum((truth[k] * M[k][action] for k in range(run.n_classes)), Fraction(0))


# ------------------------------------------------------------------- tuning
@dataclass
class Search:
    best_threshold: object  # float or None
    best_value: Fraction
    table: list  # (threshold, value) per candidate, highest threshold first

    def value_of(self, threshold) -> Fraction:
        for t, v in self.table:
            if t == threshold:
                return v
        raise KeyError(threshold)

    def maximisers(self) -> list:
        return [t for t, v in self.table if v == self.best_value]


def _argmax_highest(table) -> tuple:
    """First maximiser of (threshold, value) pairs listed highest threshold first."""
    best_t, best_v = table[0]
    for t, v in table[1:]:
        if v > best_v:
            best_t, best_v = t, v
    return best_t, best_v


def search_threshold(run: RefRun, M, estimate: bool = False) -> Search:
    """Exhaustive search of one global threshold (seed 000 eq. 5a)."""
    table = [(t, objective(run, threshold_actions(run, t), M, estimate)) for t in candidates(run)]
    best_t, best_v = _argmax_highest(table)
    return Search(best_t, best_v, table)


def search_class_thresholds(run: RefRun, M, estimate: bool = False) -> list:
    """Per predicted class j, exhaustive search over that class's own candidates.

    The value of items predicted j depends only on class j's threshold, so each
    class is searched on its own items (checked against the joint search by
    :func:`joint_class_search`).
    """
    C = run.n_classes
    searches = []
    for j in range(C):
        mine = [i for i in run.items() if run.y_pred[i] == j]
        table = []
        for t in candidates(run, mine):
            total = Fraction(0)
            for i in mine:
                if accepts(run.conf[i], t):
                    total += expected_gain(run, i, M) if estimate else realised_gain(run, i, M)
            table.append((t, total))
        best_t, best_v = _argmax_highest(table)
        searches.append(Search(best_t, best_v, table))
    return searches


def joint_class_search(run: RefRun, M, limit: int = 4000) -> Fraction | None:
    """Best total realised value over every combination of per-class thresholds
    (None when there are more than ``limit`` combinations)."""
    C = run.n_classes
    per_class = [candidates(run, [i for i in run.items() if run.y_pred[i] == j]) for j in range(C)]
    size = 1
    for options in per_class:
        size *= len(options)
    if size > limit:
        return None
    best = None
    for combo in itertools.product(*per_class):
        value = realised_value(run, class_threshold_actions(run, list(combo)), M)
        best = value if best is None or value > best else best
    return best


# --------------------------------------------------------------- evaluation
def evaluate(run: RefRun, actions, M) -> dict:
    """Counts, confusion (with abstain column) and value of ``actions`` on a labelled run."""
    C = run.n_classes
    confusion = [[Fraction(0)] * (C + 1) for _ in range(C)]
    for i in run.items():
        confusion[run.y_true[i]][actions[i]] += exact(run.weight[i])
    return _summary(confusion, M, [sum(row, Fraction(0)) for row in confusion])


def estimate(run: RefRun, actions, M) -> dict:
    """Expected confusion and value: a double loop over items and true classes."""
    C = run.n_classes
    confusion = [[Fraction(0)] * (C + 1) for _ in range(C)]
    for i in run.items():
        w = exact(run.weight[i])
        truth = truth_distribution(run, i, M)
        for k in range(C):
            confusion[k][actions[i]] += w * truth[k]
    return _summary(confusion, M, [sum(row, Fraction(0)) for row in confusion])


def _summary(confusion, M, truth_mass) -> dict:
    C = len(confusion)
    n_items = sum((sum(row, Fraction(0)) for row in confusion), Fraction(0))
    n_correct = sum((confusion[k][k] for k in range(C)), Fraction(0))
    n_abstain = sum((confusion[k][C] for k in range(C)), Fraction(0))
    n_wrong = sum((confusion[k][a] for k in range(C) for a in range(C) if a != k), Fraction(0))
    value_total = sum((confusion[k][a] * M[k][a] for k in range(C) for a in range(C + 1)), Fraction(0))
    always_abstain = sum((truth_mass[k] * M[k][C] for k in range(C)), Fraction(0))
    perfect = sum((truth_mass[k] * M[k][k] for k in range(C)), Fraction(0))
    accepted = n_correct + n_wrong
    return {
        "n_items": n_items,
        "value_total": value_total,
        "value_per_item": value_total / n_items if n_items > 0 else Fraction(0),
        "value_dimensionless": (value_total - always_abstain) / (perfect - always_abstain)
        if perfect > always_abstain
        else None,
        "coverage": accepted / n_items if n_items > 0 else Fraction(0),
        "selective_accuracy": n_correct / accepted if accepted > 0 else None,
        "selective_risk": n_wrong / accepted if accepted > 0 else None,
        "n_correct": n_correct,
        "n_wrong": n_wrong,
        "n_abstain": n_abstain,
        "confusion": confusion,
        "cell_values": [[confusion[k][a] * M[k][a] for a in range(C + 1)] for k in range(C)],
        # denominators of the ratios, for tolerance decisions in the tests
        "accepted": accepted,
        "dimensionless_scale": perfect - always_abstain,
    }


def item_gains(run: RefRun, M, estimate: bool = False) -> list:
    return [expected_gain(run, i, M) if estimate else realised_gain(run, i, M) for i in run.items()]


def item_values(run: RefRun, actions, M) -> list:
    """Unweighted value of each item's action."""
    return [M[run.y_true[i]][actions[i]] for i in run.items()]


# ------------------------------------------------------------------- counts
def counts(run: RefRun, threshold) -> tuple:
    """Weighted (accepted, correct, wrong) of the rule ``confidence >= threshold``."""
    accepted = correct = wrong = Fraction(0)
    for i in run.items():
        if accepts(run.conf[i], threshold):
            w = exact(run.weight[i])
            accepted += w
            if run.y_pred[i] == run.y_true[i]:
                correct += w
            else:
                wrong += w
    return accepted, correct, wrong


def count_table(run: RefRun) -> list:
    """(threshold, accepted, correct, wrong) for every candidate, highest first."""
    return [(t, *counts(run, t)) for t in candidates(run)]


def threshold_curve(run: RefRun, M, estimate: bool = False) -> list:
    """Per candidate (None first): value_total, value_per_item, coverage, correct, wrong."""
    rows = []
    total = run.total
    if estimate:  # each item's expected value acting and abstaining, once, not once per threshold
        truths = [truth_distribution(run, i, M) for i in run.items()]
        expected = [{a: _weighted_expected(run, i, truths[i], M, a) for a in (run.y_pred[i], run.n_classes)}
                    for i in run.items()]
    for t in candidates(run):
        actions = threshold_actions(run, t)
        if estimate:  # expected_value(run, actions, M), from the terms computed above
            value = sum((expected[i][actions[i]] for i in run.items()), Fraction(0))
        else:
            value = realised_value(run, actions, M)
        accepted = sum((exact(run.weight[i]) for i in run.items() if actions[i] != run.n_classes), Fraction(0))
        row = {
            "threshold": t,
            "value_total": value,
            "value_per_item": value / total if total > 0 else Fraction(0),
            "coverage": accepted / total if total > 0 else Fraction(0),
        }
        if not estimate:
            _, row["n_correct"], row["n_wrong"] = counts(run, t)
        rows.append(row)
    return rows


def risk_coverage(run: RefRun) -> dict:
    """Selective risk and coverage at every distinct confidence, and the AURC
    as a sum over items of (item's share) x (risk when its group is accepted)."""
    total = run.total
    thresholds = candidates(run)[1:]
    risk, coverage = {}, {}
    for t in thresholds:
        accepted, _, wrong = counts(run, t)
        risk[t] = wrong / accepted if accepted > 0 else Fraction(0)
        coverage[t] = accepted / total if total > 0 else Fraction(0)
    aurc = Fraction(0)
    if total > 0:
        for i in run.items():
            aurc += exact(run.weight[i]) / total * risk[run.conf[i]]
    return {
        "thresholds": thresholds,
        "risk": [risk[t] for t in thresholds],
        "coverage": [coverage[t] for t in thresholds],
        "aurc": aurc,
    }


# ---------------------------------------------------------------------- VOC
def line_value(correct, wrong, total, omega) -> Fraction:
    """Seed 000 eq. 4: (N_correct - omega N_wrong) / N (0 for an empty run)."""
    return (correct - omega * wrong) / total if total > 0 else Fraction(0)


def oracle_value(run: RefRun, omega, table=None) -> Fraction:
    """Best eq.-4 value over every threshold (tuned on the evaluated run itself)."""
    omega = exact(omega)
    table = count_table(run) if table is None else table
    total = run.total
    return max(line_value(c, w, total, omega) for _, _, c, w in table)


def tuned_choice(tune: RefRun, omega, rel: float = 1e-9, table=None) -> tuple:
    """Threshold tuned on ``tune`` at ``omega`` (ties: highest threshold), and
    whether that choice is *ambiguous*: another threshold is within ``rel`` of
    the best without being exactly equal (float round-off may then decide)."""
    omega = exact(omega)
    table = count_table(tune) if table is None else table
    scored = [(t, c - omega * w) for t, _, c, w in table]
    best_t, best_v = _argmax_highest(scored)
    scale = 1 + max(abs(c) + abs(omega * w) for _, _, c, w in table)
    ambiguous = any(v != best_v and abs(v - best_v) <= Fraction(rel) * scale for _, v in scored)
    # An exact tie is decided by the tie rule only where the engine's float counts are the exact ones:
    # with weights 1 and 0.1, fl(1 + 0.1) is 2**-53 above 1 + 0.1 and the lower threshold wins by that.
    tied = sum(v == best_v for _, v in scored) > 1
    return best_t, ambiguous or (tied and not sums_exactly(tune))


def sums_exactly(run: RefRun) -> bool:
    """Whether every sum of the run's weights, in any order, is exact in float64: all of them lie on
    one grid 2**-e and their total is below 2**53 steps of it."""
    weights = [exact(w) for w in run.weight]
    step = max((w.denominator for w in weights), default=1)  # floats: powers of two
    return sum(weights, Fraction(0)) * step < 2**53


def tuned_value(tune: RefRun, ev: RefRun, omega, tune_table=None) -> tuple:
    threshold, ambiguous = tuned_choice(tune, omega, table=tune_table)
    _, c, w = counts(ev, threshold)
    return line_value(c, w, ev.total, exact(omega)), threshold, ambiguous


def calibrated_value(run: RefRun, omega) -> Fraction:
    """Value with the calibrated threshold (seed 000 eq. 5b) as documented: the
    threshold is the number omega / (1 + omega) (what UseCase.calibrated_threshold
    and a calibrated policy store), and an item is accepted iff confidence >= it."""
    # Past the largest float (the reference probes far beyond its last point) the rule's threshold is 1.0,
    # as it is at every float from 2**53 on, where 1 + omega rounds to omega.
    threshold = 1.0 if omega > sys.float_info.max else float(omega) / (1.0 + float(omega))
    correct = wrong = Fraction(0)
    for i in run.items():
        if run.conf[i] >= threshold:
            if run.y_pred[i] == run.y_true[i]:
                correct += exact(run.weight[i])
            else:
                wrong += exact(run.weight[i])
    return line_value(correct, wrong, run.total, exact(omega))


def accept_all_value(run: RefRun, omega) -> Fraction:
    correct = sum((exact(run.weight[i]) for i in run.items() if run.y_pred[i] == run.y_true[i]), Fraction(0))
    wrong = sum((exact(run.weight[i]) for i in run.items() if run.y_pred[i] != run.y_true[i]), Fraction(0))
    return line_value(correct, wrong, run.total, exact(omega))


def oracle_omega_sup(run: RefRun):
    """max_k C_k / W_k over every threshold; inf if some threshold has W = 0 < C; 0 if none positive."""
    best = Fraction(0)
    if run.total <= 0:
        return best
    for _, _, c, w in count_table(run):
        if c > 0 and w == 0:
            return math.inf
        if w > 0 and c > 0:
            best = max(best, c / w)
    return best


def critical_omegas(*tables) -> list:
    """Every omega >= 0 where some line C - omega W of the tables changes sign or
    two lines of one table cross: between two of these, every mode's value is a
    single line of constant sign."""
    points = {Fraction(0)}
    for table in tables:
        lines = [(c, w) for _, _, c, w in table]
        for c, w in lines:
            if w > 0:
                points.add(c / w)
        for (c1, w1), (c2, w2) in itertools.combinations(lines, 2):
            if w1 != w2:
                omega = (c1 - c2) / (w1 - w2)
                if omega >= 0:
                    points.add(omega)
    return sorted(points)


def omega_sup(value_fn, points):
    """sup{omega >= 0 : value(omega) > 0}, exactly, for a value that is one line of
    constant sign between consecutive ``points`` (and beyond the last).
    Returns 0 when the value is never positive, inf when positive for large omega."""
    points = sorted(set(points) | {Fraction(0)})
    far = 2 * points[-1] + 1
    if value_fn(far) > 0:
        return math.inf
    sup = Fraction(0)
    for p in points:
        if value_fn(p) > 0:
            sup = max(sup, p)
    for a, b in zip(points[:-1], points[1:]):
        if value_fn((a + b) / 2) > 0:
            sup = max(sup, b)
    return sup


def calibrated_critical_omegas(run: RefRun) -> list:
    """c / (1 - c) for every distinct confidence c < 1: where the calibrated rule changes."""
    points = []
    for c in set(run.conf):
        q = exact(c)
        if q < 1:
            points.append(q / (1 - q))
    return points


def grid_values(mode: str, ev: RefRun, omegas, tune: RefRun | None = None):
    """Brute-force VOC values (floats) on a grid of omegas, vectorised over the grid.

    oracle: best line over every threshold; tuned: the first (highest) maximiser
    on ``tune``, its counts on ``ev``; calibrated: accept iff confidence >=
    omega / (1 + omega); accept_all: the last line.
    """
    import numpy as np

    omegas = np.asarray(omegas, dtype=float)
    table = count_table(ev)
    total = float(ev.total)
    if total <= 0:
        return np.zeros_like(omegas)
    correct = np.array([float(c) for _, _, c, _ in table])
    wrong = np.array([float(w) for _, _, _, w in table])
    lines = (correct[:, None] - omegas[None, :] * wrong[:, None]) / total  # (candidates, grid)
    if mode == "oracle":
        return lines.max(axis=0)
    if mode == "accept_all":
        return lines[-1]
    if mode == "calibrated":
        confidences = [t for t, _, _, _ in table[1:]]  # decreasing
        t = omegas / (1 + omegas)
        # how many confidences are >= each t, compared as arrays (the grid has 20001 points)
        k = (np.array(confidences, dtype=float)[:, None] >= t[None, :]).sum(axis=0)
        return lines[k, np.arange(omegas.size)]
    tune_table = count_table(tune)
    t_correct = np.array([float(c) for _, _, c, _ in tune_table])
    t_wrong = np.array([float(w) for _, _, _, w in tune_table])
    best = np.argmax(t_correct[:, None] - omegas[None, :] * t_wrong[:, None], axis=0)
    ev_counts = [counts(ev, t) for t, _, _, _ in tune_table]
    c = np.array([float(found[1]) for found in ev_counts])[best]
    w = np.array([float(found[2]) for found in ev_counts])[best]
    return (c - omegas * w) / total


# ----------------------------------------------------------- other measures
def discrimination(run: RefRun) -> float:
    """Seed 000: weighted mean of (1/2 - c)^2; NaN for an empty run."""
    total = run.total
    if total <= 0:
        return math.nan
    s = sum((exact(run.weight[i]) * (Fraction(1, 2) - exact(run.conf[i])) ** 2 for i in run.items()), Fraction(0))
    return s / total


def histogram(run: RefRun, starts, ends) -> dict:
    """Weighted (correct, wrong) count per bin [start, end), the last bin closed."""
    correct = [Fraction(0)] * len(starts)
    wrong = [Fraction(0)] * len(starts)
    for i in run.items():
        c = run.conf[i]
        for b, (lo, hi) in enumerate(zip(starts, ends)):
            last = b == len(starts) - 1
            if lo <= c < hi or (last and lo <= c <= hi):
                if run.y_pred[i] == run.y_true[i]:
                    correct[b] += exact(run.weight[i])
                else:
                    wrong[b] += exact(run.weight[i])
                break
        else:
            raise AssertionError(f"confidence {c} in no bin")
    return {"correct": correct, "wrong": wrong}


def accuracy(run: RefRun):
    total = run.total
    if total <= 0:
        return math.nan
    return sum((exact(run.weight[i]) for i in run.items() if run.y_pred[i] == run.y_true[i]), Fraction(0)) / total


def macro_f1(run: RefRun) -> Fraction:
    """Mean over every class of 2 TP / (2 TP + FP + FN), 0 when that is 0 / 0."""
    C = run.n_classes
    scores = []
    for k in range(C):
        tp = fp = fn = Fraction(0)
        for i in run.items():
            w = exact(run.weight[i])
            if run.y_pred[i] == k and run.y_true[i] == k:
                tp += w
            elif run.y_pred[i] == k:
                fp += w
            elif run.y_true[i] == k:
                fn += w
        denominator = 2 * tp + fp + fn
        scores.append(2 * tp / denominator if denominator > 0 else Fraction(0))
    return sum(scores, Fraction(0)) / C


def cost_error(run: RefRun, k) -> Fraction:
    """Seed 003: (N_fn k_fn + N_fp k_fp) / N with k_fn = k, k_fp = 1; class 1 positive."""
    fn = sum((exact(run.weight[i]) for i in run.items() if run.y_true[i] == 1 and run.y_pred[i] == 0), Fraction(0))
    fp = sum((exact(run.weight[i]) for i in run.items() if run.y_true[i] == 0 and run.y_pred[i] == 1), Fraction(0))
    return (fn * exact(k) + fp) / run.total


def ranks(scores: dict, higher_is_better: bool = True) -> dict:
    """1 + the number of models strictly better (ties share the best rank)."""
    out = {}
    for name, s in scores.items():
        better = [o for o in scores.values() if (o > s if higher_is_better else o < s)]
        out[name] = 1 + len(better)
    return out


# --------------------------------------------------------- use-case algebra
def regime(v_correct, v_abstain, v_wrong) -> str:
    """Which ordering of the three values (from the UseCase docs)."""
    c, a, w = v_correct, v_abstain, v_wrong
    if c > a >= w:
        return "normal"
    if c > a and w > a:
        return "abstain_never_pays"
    if a >= c and a >= w:
        return "abstain_always_pays"
    return "inverted"


# ========================================================================
# Input generators for Hypothesis (plain data; the tests build the engine
# objects from it with ``Case.predictions`` / ``Vals.engine``).
# ========================================================================
from hypothesis import strategies as st  # noqa: E402

TIE_CONFIDENCES = (0.1, 0.5, 0.5, 0.9, 1.0)
INT_WEIGHTS = (0.0, 1.0, 1.0, 2.0, 3.0)
DYADIC_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0)


@dataclass
class Case:
    """One generated run. ``exact`` promises that weights (and dyadic probabilities)
    make every engine sum exact in floating point, so ties are exact there too."""

    n_classes: int
    y_pred: list
    conf: list
    y_true: list | None
    weight: list | None
    proba: list | None
    exact: bool

    @property
    def classes(self) -> list:
        return [str(k) for k in range(self.n_classes)]

    @property
    def n(self) -> int:
        return len(self.conf)

    def predictions(self):
        import numpy as np

        import valuecore as vc

        y_true = None if self.y_true is None else [str(k) for k in self.y_true]
        if self.proba is not None:
            proba = np.array(self.proba, dtype=float).reshape(len(self.proba), self.n_classes)
            return vc.Predictions.from_proba(proba, y_true, classes=self.classes, sample_weight=self.weight)
        return vc.Predictions.from_top_label(
            [str(k) for k in self.y_pred], self.conf, y_true, classes=self.classes, sample_weight=self.weight
        )

    def ref(self) -> RefRun:
        if self.proba is not None:
            return run_from_proba(self.proba, self.y_true, self.weight, self.n_classes)
        return run_from_top_label(self.y_pred, self.conf, self.y_true, self.weight, self.n_classes)

    @property
    def weights_or_ones(self) -> list:
        return [1.0] * self.n if self.weight is None else list(self.weight)

    def scale(self, vals: "Vals | None" = None) -> float:
        """Size of the totals involved, for relative tolerances."""
        top = 1.0 if vals is None else max(1.0, vals.max_abs)
        return 1.0 + sum(abs(w) for w in self.weights_or_ones) * top

    def replace(self, **changes) -> "Case":
        data = dict(self.__dict__)
        data.update(changes)
        return Case(**data)


@dataclass
class Vals:
    """A use case ``(v_correct, v_abstain, v_wrong)`` or a (C, C + 1) value matrix."""

    kind: str  # "use_case" or "matrix"
    data: tuple  # three numbers, or rows
    exact: bool

    def engine(self, classes):
        import valuecore as vc

        if self.kind == "use_case":
            return vc.UseCase(*self.data)
        return vc.ValueMatrix(tuple(classes), [list(r) for r in self.data])

    def ref(self, n_classes: int) -> list:
        if self.kind == "use_case":
            return use_case_matrix(*self.data, n_classes)
        return array_matrix(self.data)

    @property
    def max_abs(self) -> float:
        flat = self.data if self.kind == "use_case" else [v for r in self.data for v in r]
        return max(abs(float(v)) for v in flat)


def _composition(draw, total: int, parts: int) -> list:
    cuts = sorted(draw(st.lists(st.integers(0, total), min_size=parts - 1, max_size=parts - 1)))
    edges = [0] + cuts + [total]
    return [edges[k + 1] - edges[k] for k in range(parts)]


def _proba_rows(draw, n_classes: int, n: int, exact: bool, absent) -> list:
    """Rows summing to 1; exact rows are multiples of 1/D (D a power of two).

    Ties in confidence are frequent: rows are rotations of a small pool.
    """
    pool_size = draw(st.integers(1, 3))
    pool = []
    for _ in range(pool_size):
        if exact:
            d = draw(st.sampled_from((4, 8, 16)))
            pool.append([p / d for p in _composition(draw, d, n_classes)])
        else:
            raw = draw(st.lists(st.floats(0.0, 1.0), min_size=n_classes, max_size=n_classes))
            s = sum(raw)
            pool.append([r / s for r in raw] if s > 0 else [1.0 / n_classes] * n_classes)
    fresh_rows = not exact and draw(st.booleans())
    rows = []
    for _ in range(n):
        if fresh_rows and draw(st.booleans()):
            raw = draw(st.lists(st.floats(0.0, 1.0), min_size=n_classes, max_size=n_classes))
            s = sum(raw)
            row = [r / s for r in raw] if s > 0 else [1.0 / n_classes] * n_classes
        else:
            base = pool[draw(st.integers(0, pool_size - 1))]
            shift = draw(st.integers(0, n_classes - 1))
            row = base[shift:] + base[:shift]
        if absent is not None:
            row = list(row)
            row[(absent + 1) % n_classes] += row[absent]
            row[absent] = 0.0
        rows.append(row)
    return rows


@st.composite
def cases(
    draw,
    *,
    labeled: bool = True,
    kind: str | None = None,
    exact: bool | None = None,
    min_n: int = 0,
    max_n: int = 20,
    min_classes: int = 2,
    max_classes: int = 10,
    weighted: bool | None = None,
):
    """A run: proba or top-label, ties in confidence, weights incl. zeros, any labels."""
    n_classes = draw(st.integers(min_classes, max_classes))
    n = draw(st.integers(min_n, max_n))
    exact = draw(st.booleans()) if exact is None else exact
    kind = draw(st.sampled_from(("proba", "top"))) if kind is None else kind
    absent = draw(st.integers(0, n_classes - 1)) if n_classes >= 3 and draw(st.booleans()) else None
    present = [k for k in range(n_classes) if k != absent]

    if kind == "proba":
        proba = _proba_rows(draw, n_classes, n, exact, absent)
        y_pred = [first_argmax(r) for r in proba]
        conf = [min(r[j], 1.0) for r, j in zip(proba, y_pred)]
    else:
        proba = None
        y_pred = draw(st.lists(st.sampled_from(present), min_size=n, max_size=n))
        mode = draw(st.sampled_from(("ties", "ties", "floats", "constant")))
        if mode == "ties":
            conf = draw(st.lists(st.sampled_from(TIE_CONFIDENCES), min_size=n, max_size=n))
        elif mode == "floats":
            conf = draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n))
        else:
            conf = [draw(st.sampled_from(TIE_CONFIDENCES + (0.0, 0.3)))] * n

    y_true = None
    if labeled:
        truth = draw(st.sampled_from(("random", "mixed", "mixed", "all_correct", "all_wrong")))
        if truth == "random":
            y_true = draw(st.lists(st.sampled_from(present), min_size=n, max_size=n))
        else:
            y_true = []
            for j in y_pred:
                right = truth == "all_correct" or (truth == "mixed" and draw(st.booleans()))
                others = [k for k in present if k != j]
                y_true.append(j if right or not others else draw(st.sampled_from(others)))

    weighted = draw(st.booleans()) if weighted is None else weighted
    weight = None
    if weighted:
        choice = draw(st.sampled_from(("int", "dyadic") if exact else ("int", "dyadic", "float")))
        if choice == "int":
            weight = draw(st.lists(st.sampled_from(INT_WEIGHTS), min_size=n, max_size=n))
        elif choice == "dyadic":
            weight = draw(st.lists(st.sampled_from(DYADIC_WEIGHTS), min_size=n, max_size=n))
        else:
            weight = draw(
                st.lists(st.one_of(st.just(0.0), st.floats(0.0, 5.0), st.sampled_from((0.1, 0.2, 0.3))),
                         min_size=n, max_size=n)
            )
    return Case(n_classes, y_pred, conf, y_true, weight, proba, exact)


def _numbers(exact: bool):
    if exact:
        return st.integers(-5, 5).map(float)
    return st.one_of(st.integers(-5, 5).map(float), st.floats(-10.0, 10.0))


@st.composite
def use_cases(draw, exact: bool = True):
    """Any ordering of the three values: each is drawn independently."""
    number = _numbers(exact)
    return Vals("use_case", (draw(number), draw(number), draw(number)), exact)


@st.composite
def value_matrices(draw, n_classes: int, exact: bool = True):
    number = _numbers(exact)
    rows = tuple(
        tuple(draw(number) for _ in range(n_classes + 1)) for _ in range(n_classes)
    )
    return Vals("matrix", rows, exact)


def values_for(n_classes: int, exact: bool = True):
    return st.one_of(use_cases(exact), value_matrices(n_classes, exact))


@st.composite
def case_and_values(draw, **case_kwargs):
    case = draw(cases(**case_kwargs))
    vals = draw(values_for(case.n_classes, case.exact))
    return case, vals
