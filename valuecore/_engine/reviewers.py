"""People who are not always right: the value of a hand-off to imperfect, loaded reviewers.

Seed 000 values a hand-off at a fixed ``V_abstain``: a perfect person at a fixed
cost. Its Appendix A ("Nonlinearity") warns that value need not scale linearly
with the counts. Here the person who takes a hand-off is right with probability
``a`` (their *accuracy*), and ``a`` may fall as their workload, the hand-off
rate ``r``, grows (a piecewise-linear *workload curve*). For a use case
``(v_correct, v_abstain, v_wrong)``:

* ``v_abstain`` is the value of a hand-off the person gets right, net of their
  cost (today's meaning: with ``a = 1`` nothing changes);
* ``v_person_wrong`` is the value of a hand-off the person gets wrong (default:
  the use case's ``v_wrong``, an error is an error whoever makes it).

A hand-off is then worth ``a(r) v_abstain + (1 - a(r)) v_person_wrong``, and a
policy accepting ``C`` correct and ``W`` wrong items and handing off ``H`` of
``N`` (weighted) is worth

    V = v_correct C + v_wrong W + H [a(H/N) v_abstain + (1 - a(H/N)) v_person_wrong]
      = (today's value) + H (1 - a(H/N)) (v_person_wrong - v_abstain).

For one global threshold, ``C``, ``W`` and ``H`` are the cumulative counts of
the sorted prefix, so scanning every distinct confidence (the cumulative gain of
``sorting``) and adding the hand-off correction at each gives the exact optimum
however non-linear ``a`` is. With a flat accuracy the correction is linear in
``H``: the problem is today's with an *effective* use case whose ``v_abstain`` is
the expected hand-off value, and per-class thresholds stay exact. With a
workload curve the classes share the hand-off rate and the per-class problem no
longer separates; but the value is ``sum_c g_c(p_c) + F(sum_c A_c(p_c))``, the
gains of each class's prefix plus a function of the total accepted, so with
whole-number weights a dynamic programme over the total accepted (the best sum
of class gains for every total, class by class) followed by a scan of ``F``
finds the exact optimum (:func:`fit_reviewer_class_thresholds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .sorting import SortedRun, cumulative_gain
from .._model.values import UseCase

__all__ = ["Reviewers", "ReviewerFit", "reviewer_value_curve", "fit_reviewer_threshold", "priced_use_case",
           "reviewer_counts", "ReviewerClassFit", "fit_reviewer_class_thresholds", "EXACT_CLASS_BUDGET"]

# The exact per-class search costs (items + 1) x (per-class groups) additions; above this it is refused.
EXACT_CLASS_BUDGET = 2_000_000_000

# Candidates whose values differ by less than this share of the largest possible
# value are a tie (the interpolation's round-off); the highest threshold wins.
_TIE = 2.0**-40


def _share(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number between 0 and 1, got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"{name} must be a number between 0 and 1, got {value!r}")
    return value


@dataclass(frozen=True)
class Reviewers:
    """The people who take the hand-offs: their accuracy, maybe falling with their workload.

    Attributes
    ----------
    accuracy : float
        Share of hand-offs the person gets right, in [0, 1] (1 = today's perfect
        reviewer). Ignored when ``workload`` is given.
    workload : tuple of (handoff_rate, accuracy) pairs
        The accuracy at each hand-off rate, linear in between and flat beyond
        the first and last rates; rates strictly increasing in [0, 1].
    v_person_wrong : float or None
        Value of a hand-off the person gets wrong; None takes the use case's
        ``v_wrong``.
    accuracy_interval : (low, high) or None
        Where the accuracy was estimated from a sample (:meth:`from_sample`): its
        exact (Clopper-Pearson) interval. Recorded, not used by the tuning.
    sample : (n_right, n_reviewed) or None

    Examples
    --------
    >>> r = Reviewers(workload=((0.1, 0.98), (0.5, 0.9)))
    >>> r.accuracy_at([0.0, 0.3, 0.9]).round(4).tolist()
    [0.98, 0.94, 0.9]
    >>> r.handoff_value(UseCase(1, 0, -4), 0.3).round(4).item()
    -0.24
    """

    accuracy: float = 1.0
    workload: tuple = ()
    v_person_wrong: float | None = None
    accuracy_interval: tuple | None = None
    sample: tuple | None = None

    def __post_init__(self):
        object.__setattr__(self, "accuracy", _share(self.accuracy, "the reviewers' accuracy"))
        points = tuple((_share(r, "a workload rate"), _share(a, "a workload accuracy")) for r, a in self.workload)
        rates = [r for r, _ in points]
        if any(b <= a for a, b in zip(rates, rates[1:])):
            raise ValueError(f"workload rates must be strictly increasing, got {rates}")
        object.__setattr__(self, "workload", points)
        if self.v_person_wrong is not None:
            v = float(self.v_person_wrong)
            if not math.isfinite(v):
                raise ValueError(f"v_person_wrong must be a finite number, got {self.v_person_wrong!r}")
            object.__setattr__(self, "v_person_wrong", v)

    @classmethod
    def from_sample(cls, n_right: int, n_reviewed: int, *, confidence_level: float = 0.95, **kwargs) -> Reviewers:
        """Accuracy ``n_right / n_reviewed`` from a labelled sample of the reviewers'
        decisions, with its exact two-sided Clopper-Pearson interval (coverage
        never below ``confidence_level``; benchmarks/bench_reviewer_accuracy.py)."""
        from scipy import stats

        if isinstance(n_right, bool) or isinstance(n_reviewed, bool):
            raise ValueError("the sample's counts must be whole numbers")
        if int(n_right) != n_right or int(n_reviewed) != n_reviewed or not 0 <= n_right <= n_reviewed or n_reviewed < 1:
            raise ValueError(f"a sample needs 0 <= n_right <= n_reviewed and n_reviewed >= 1, "
                             f"got {n_right!r} of {n_reviewed!r}")
        n_right, n_reviewed = int(n_right), int(n_reviewed)
        ci = stats.binomtest(n_right, n_reviewed).proportion_ci(confidence_level, method="exact")
        return cls(accuracy=n_right / n_reviewed, accuracy_interval=(float(ci.low), float(ci.high)),
                   sample=(n_right, n_reviewed), **kwargs)

    @property
    def flat(self) -> bool:
        """Whether the accuracy does not depend on the hand-off rate."""
        return len({a for _, a in self.workload}) <= 1

    @property
    def perfect(self) -> bool:
        return self.flat and self._flat_accuracy == 1.0

    @property
    def _flat_accuracy(self) -> float:
        return self.workload[0][1] if self.workload else self.accuracy

    def accuracy_at(self, rate) -> np.ndarray:
        """The reviewers' accuracy at hand-off rate(s) ``rate``."""
        rate = np.asarray(rate, dtype=np.float64)
        if not self.workload:
            return np.full(rate.shape, self.accuracy)
        rates, accuracies = zip(*self.workload)
        return np.interp(rate, rates, accuracies)

    def wrong_value(self, use_case: UseCase) -> float:
        return use_case.v_wrong if self.v_person_wrong is None else self.v_person_wrong

    def handoff_value(self, use_case: UseCase, rate) -> np.ndarray:
        """Expected value of one hand-off at hand-off rate(s) ``rate``."""
        a = self.accuracy_at(rate)
        return a * use_case.v_abstain + (1.0 - a) * self.wrong_value(use_case)

    def use_case_at(self, use_case: UseCase, rate: float) -> UseCase:
        """The use case whose ``v_abstain`` is the expected value of a hand-off at hand-off
        rate ``rate``: exact for any policy that hands off that share of the items."""
        a = float(self.accuracy_at(rate))
        if a == 1.0:
            return use_case
        return UseCase(use_case.v_correct, a * use_case.v_abstain + (1.0 - a) * self.wrong_value(use_case),
                       use_case.v_wrong)

    def effective_use_case(self, use_case: UseCase) -> UseCase:
        """For a flat accuracy: the use case whose ``v_abstain`` is the expected hand-off
        value, which makes every existing rule (and per-class thresholds) exact."""
        if not self.flat:
            raise ValueError("a workload curve couples the hand-offs of every class: no single use case stands for it")
        return self.use_case_at(use_case, 0.0)

    def total_value(self, n_correct, n_wrong, n_handoff, use_case: UseCase):
        """Total value of a policy from its weighted counts: the one place the reviewer model enters."""
        n_handoff = np.asarray(n_handoff, dtype=np.float64)
        n_items = np.asarray(n_correct, dtype=np.float64) + n_wrong + n_handoff
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(n_items > 0, n_handoff / np.where(n_items > 0, n_items, 1.0), 0.0)
        automated = use_case.v_correct * n_correct + use_case.v_wrong * n_wrong
        return automated + n_handoff * self.handoff_value(use_case, rate)

    def to_dict(self) -> dict:
        out: dict = {"accuracy": self.accuracy}
        if self.workload:
            out["workload"] = [{"handoff_rate": r, "accuracy": a} for r, a in self.workload]
        if self.v_person_wrong is not None:
            out["v_person_wrong"] = self.v_person_wrong
        if self.accuracy_interval is not None:
            out["accuracy_interval"] = list(self.accuracy_interval)
        if self.sample is not None:
            out["sample"] = {"n_right": self.sample[0], "n_reviewed": self.sample[1]}
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Reviewers:
        if not isinstance(data, dict):
            raise ValueError("'reviewers' must be an object")
        workload = tuple((p["handoff_rate"], p["accuracy"]) for p in data.get("workload", ()))
        interval = data.get("accuracy_interval")
        sample = data.get("sample")
        return cls(accuracy=data.get("accuracy", 1.0), workload=workload, v_person_wrong=data.get("v_person_wrong"),
                   accuracy_interval=None if interval is None else tuple(interval),
                   sample=None if sample is None else (sample["n_right"], sample["n_reviewed"]))


@dataclass(frozen=True)
class ReviewerFit:
    """The best global threshold with imperfect reviewers, on the tuning run.

    ``threshold`` None hands everything off. ``value_total`` and
    ``value_per_item`` are in the use case's currency; ``reviewer_accuracy`` is
    the accuracy at the chosen ``handoff_rate``.
    """

    threshold: float | None
    value_total: float
    value_per_item: float
    handoff_rate: float
    reviewer_accuracy: float


def reviewer_value_curve(run: SortedRun, use_case: UseCase, reviewers: Reviewers) -> np.ndarray:
    """Total value at every candidate threshold (index 0 hands everything off), shape (n_groups + 1,).

    Today's value (``v_abstain N`` plus the cumulative gain of ``sorting``) plus
    the hand-off correction ``H (1 - a(H/N)) (v_person_wrong - v_abstain)``.
    With a flat accuracy it is exactly today's curve for the effective use case.
    """
    base, gain = _gain_curve(run, use_case, reviewers)
    return base + gain


def reviewers_use_case(values) -> UseCase:
    """The use case of ``values``, which reviewers are priced for (a value matrix has no one hand-off value)."""
    if values.use_case is None:
        raise ValueError("reviewers are priced for a use case (v_correct, v_abstain, v_wrong), not a value matrix")
    return values.use_case


def _gain_curve(run: SortedRun, use_case: UseCase, reviewers: Reviewers) -> tuple[float, np.ndarray]:
    """The value of handing everything off, and the gain over it of every prefix.

    Tuned on the gain, not on the total, so that a perfect reviewer gives today's
    argmax bit for bit (adding a constant may round two gains to one total)."""
    use_case = reviewers_use_case(use_case)
    run.predictions.require_labels("tuning a threshold for imperfect reviewers")
    n_items = run.total_weight
    if reviewers.flat:
        effective = reviewers.effective_use_case(use_case)
        return effective.v_abstain * n_items, cumulative_gain(run, effective)
    wrong_gap = reviewers.wrong_value(use_case) - use_case.v_abstain
    # Every value is measured against handing all N off to the loaded reviewers.
    everything = n_items * (1.0 - float(reviewers.accuracy_at(1.0))) * wrong_gap
    missed = _expected_misses(n_items - run.cum_accepted, n_items, reviewers)
    gain = cumulative_gain(run, use_case) + (missed * wrong_gap - everything)
    return use_case.v_abstain * n_items + everything, gain


def _expected_misses(handoffs, n_items: float, reviewers: Reviewers) -> np.ndarray:
    """The reviewers' expected mistakes ``H (1 - a(H/N))`` for hand-off counts ``H``."""
    handoffs = np.asarray(handoffs, dtype=np.float64)
    rate = handoffs / n_items if n_items > 0 else np.zeros_like(handoffs)
    return handoffs * (1.0 - reviewers.accuracy_at(rate))


def _tie_tolerance(use_case: UseCase, reviewers: Reviewers, n_items: float) -> float:
    """Values this close count as equal: the interpolation's round-off (0 for a flat accuracy)."""
    if reviewers.flat:
        return 0.0
    scale = max(abs(use_case.v_correct), abs(use_case.v_abstain), abs(use_case.v_wrong),
                abs(reviewers.wrong_value(use_case)))
    return _TIE * scale * max(n_items, 1.0)


def _best_index(values: np.ndarray, tolerance: float) -> int:
    """First index within ``tolerance`` of the maximum: the highest threshold among equals."""
    return int(np.flatnonzero(values >= values.max() - tolerance)[0])


def fit_reviewer_threshold(run: SortedRun, use_case: UseCase, reviewers: Reviewers) -> ReviewerFit:
    """The exact best global threshold when hand-offs go to imperfect, loaded reviewers.

    Every distinct confidence is tried; ties never split. With a flat accuracy
    the argmax is today's (first maximum); with a workload curve, values within
    ``2**-40`` of the largest possible value (round-off of the interpolation)
    count as equal, and the highest threshold among them wins.

    Examples
    --------
    >>> from valuecore import Predictions, presort
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.7, 0.3], [0.6, 0.4], [0.6, 0.4]], y_true=[0, 0, 0, 1])
    >>> fit_reviewer_threshold(presort(p), UseCase(1, 0, -2), Reviewers()).threshold
    0.7
    >>> fit_reviewer_threshold(presort(p), UseCase(1, 0, -2), Reviewers(accuracy=0.5)).threshold
    0.6
    """
    base, gain = _gain_curve(run, use_case, reviewers)
    n_items = run.total_weight
    k = _best_index(gain, _tie_tolerance(use_case, reviewers, n_items))
    value_total = base + float(gain[k])
    handoff_rate = float((n_items - run.cum_accepted[k]) / n_items) if n_items > 0 else 0.0
    return ReviewerFit(
        threshold=None if k == 0 else float(run.thresholds[k - 1]),
        value_total=value_total,
        value_per_item=value_total / n_items if n_items > 0 else 0.0,
        handoff_rate=handoff_rate,
        reviewer_accuracy=float(reviewers.accuracy_at(handoff_rate)),
    )


def priced_use_case(reviewers: Reviewers, use_case: UseCase, policy, predictions) -> UseCase:
    """The use case whose ``v_abstain`` is a hand-off's expected value at the hand-off rate ``policy``
    produces on ``predictions``: a fixed policy on fixed items hands off a fixed share, so its value is
    exact with it. One-tier rules only (a person's share of a two-tier or shortlist rule is not a blank
    hand-off)."""
    use_case = reviewers_use_case(use_case)
    if reviewers.flat:
        return reviewers.effective_use_case(use_case)
    if policy.kind in ("two_tier", "shortlist"):
        raise ValueError(f"a workload curve prices the blank hand-offs of one-tier rules; a {policy.kind} "
                         "policy also hands items to people with a suggestion")
    from .evaluate import evaluate

    result = evaluate(policy, predictions, use_case)
    rate = float(result.n_abstain / result.n_items) if result.n_items > 0 else 0.0
    return reviewers.use_case_at(use_case, rate)


def reviewer_counts(run: SortedRun, reviewers: Reviewers) -> SortedRun:
    """The run with the reviewers' expected mistakes folded into its cumulative counts, for VOC curves.

    On the VOC scale (use case ``1 / 0 / -omega``) a hand-off the person gets right is worth 0, and one
    they get wrong ``v_person_wrong``: when that is None it follows ``-omega``, and the person's
    ``H (1 - a(H/N))`` expected mistakes add to ``cum_wrong``; when it is a number ``z`` they add
    ``z H (1 - a(H/N))`` to ``cum_correct``. Either way each prefix's value stays a line in omega,
    so the exact VOC machinery applies; the counts need no longer be monotone.
    """
    from dataclasses import replace

    run.predictions.require_labels("a VOC curve with reviewers")
    n_items = run.total_weight
    missed = _expected_misses(n_items - run.cum_accepted, n_items, reviewers)
    if reviewers.v_person_wrong is None:
        return replace(run, cum_wrong=run.cum_wrong + missed)
    return replace(run, cum_correct=run.cum_correct + reviewers.v_person_wrong * missed)


@dataclass(frozen=True)
class ReviewerClassFit:
    """The best per-class thresholds with reviewers on a workload curve, on the tuning run.

    ``class_thresholds`` pairs each class with its threshold (None: never act on
    it); the other fields as :class:`ReviewerFit`.
    """

    class_thresholds: tuple
    value_total: float
    value_per_item: float
    handoff_rate: float
    reviewer_accuracy: float


def fit_reviewer_class_thresholds(run: SortedRun, use_case: UseCase, reviewers: Reviewers) -> ReviewerClassFit:
    """The exact best per-class thresholds when hand-offs go to reviewers on a workload curve.

    Accepting the ``p_c`` most confident groups of predicted class ``c`` gains
    ``g_c(p_c)`` over handing them off and accepts ``A_c(p_c)`` items; the
    reviewers' correction depends only on the total accepted ``A``. For every
    whole-number ``A`` the best ``sum_c g_c`` with ``sum_c A_c = A`` is a
    max-plus convolution over the classes, exact, in O((N + 1) x groups); the
    best ``A`` is then scanned with the correction. Ties never split; among
    equal values the fewest accepted wins, and within a class the highest
    threshold. Needs whole-number weights (copies), and refuses more than
    ``EXACT_CLASS_BUDGET`` additions.
    """
    use_case = reviewers_use_case(use_case)
    predictions = run.predictions
    predictions.require_labels("tuning per-class thresholds for imperfect reviewers")
    weight = predictions.sample_weight
    if not np.all(weight == np.round(weight)):
        raise ValueError("per-class thresholds for a workload curve are searched over every whole number of "
                         "accepted items: the sample weights must be whole numbers (copies)")
    from .sorting import class_cumulative_gain

    n_items = int(round(run.total_weight))
    n_groups = run.class_group_end.size
    if (n_items + 1) * max(n_groups, 1) > EXACT_CLASS_BUDGET:
        raise ValueError(f"the exact per-class search for a workload curve would take {(n_items + 1) * n_groups:,} "
                         f"steps (more than {EXACT_CLASS_BUDGET:,}): tune one threshold, or fewer items")
    if n_groups == 0:  # no item: nothing to accept
        return ReviewerClassFit(tuple((c, None) for c in predictions.classes), 0.0, 0.0, 0.0,
                                float(reviewers.accuracy_at(0.0)))
    gain_at_end = class_cumulative_gain(run, use_case)
    accepted_at_end = np.rint(run.class_cum_correct + run.class_cum_wrong).astype(np.int64)
    best = np.full(n_items + 1, -np.inf)
    best[0] = 0.0
    choices, prefixes = [], []
    classes = run.class_group_class
    for c in range(predictions.n_classes):
        groups = np.flatnonzero(classes == c)
        if groups.size == 0:
            choices.append(None)
            prefixes.append(groups)
            continue
        start = groups[0]
        gain0 = gain_at_end[start - 1] if start > 0 else 0.0
        accepted0 = accepted_at_end[start - 1] if start > 0 else 0
        gains = np.r_[0.0, gain_at_end[groups] - gain0]
        accepted = np.r_[0, accepted_at_end[groups] - accepted0]
        merged = best.copy()  # p = 0: accept none of this class
        choice = np.zeros(n_items + 1, dtype=np.int64)
        for prefix in range(1, gains.size):
            a = int(accepted[prefix])
            candidate = best[: n_items + 1 - a] + gains[prefix]
            better = candidate > merged[a:]  # strictly: ties keep the higher threshold
            merged[a:][better] = candidate[better]
            choice[a:][better] = prefix
        best = merged
        choices.append(choice)
        prefixes.append(groups)
    handoffs = n_items - np.arange(n_items + 1, dtype=np.float64)
    correction = _expected_misses(handoffs, n_items, reviewers) * (reviewers.wrong_value(use_case) - use_case.v_abstain)
    objective = best + correction  # the value less N * v_abstain; -inf where no total is reachable
    total = _best_index(objective, _tie_tolerance(use_case, reviewers, n_items))
    value_total = use_case.v_abstain * n_items + float(objective[total])
    thresholds = [None] * predictions.n_classes
    remaining = total
    for c in reversed(range(predictions.n_classes)):
        if choices[c] is None:
            continue
        prefix = int(choices[c][remaining])
        if prefix > 0:
            group = prefixes[c][prefix - 1]
            thresholds[c] = float(run.class_group_threshold[group])
            start = prefixes[c][0]
            remaining -= int(accepted_at_end[group] - (accepted_at_end[start - 1] if start > 0 else 0))
    handoff_rate = float((n_items - total) / n_items) if n_items > 0 else 0.0
    return ReviewerClassFit(
        class_thresholds=tuple(zip(predictions.classes, thresholds)),
        value_total=value_total,
        value_per_item=value_total / n_items if n_items > 0 else 0.0,
        handoff_rate=handoff_rate,
        reviewer_accuracy=float(reviewers.accuracy_at(handoff_rate)),
    )
