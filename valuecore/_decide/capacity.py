"""The best policy within a review capacity: a maximum number of hand-offs.

A team can review only so many hand-offs (abstentions) per period. Given the
expected volume, that is a maximum hand-off *rate* R, or a maximum weighted
number of hand-offs ``B = R * N`` on a split of N (weighted) items. Every
abstained item is a hand-off, so the constraint is
``N - accepted <= B``.

One global threshold
    Accepting is monotone in the threshold, so the feasible thresholds are the
    lowest ones, and the best within capacity is an argmax over a suffix of the
    cumulative gain: exact, O(n_groups) after the sort.
Per-class thresholds with one shared budget
    A multiple-choice knapsack (one prefix per predicted class, one shared
    constraint on the accepted weight), NP-hard in general. We solve its
    linear relaxation exactly (each class's gain against accepted weight
    replaced by its upper concave hull beyond the class's unconstrained best;
    hull segments taken greedily in order of decreasing slope) and return the
    hull vertex solution. It is feasible, its value is within
    ``upper_bound - gain`` of the true optimum, and it is exact whenever the
    budget falls on a vertex of the combined hull (``exact`` is then True).

The *marginal value of capacity* is what one more hand-off slot would earn:
the slope of the concave majorant of "best value against hand-offs" just to
the right of the budget (the Lagrange multiplier of the constraint).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._engine.fitting import Policy, Values
from .verdict import value_scale
from .._engine.sorting import SortedRun, class_cumulative_gain, class_cumulative_weight, cumulative_gain

__all__ = ["CapacityCurve", "CapacityResult", "capacity_curve", "fit_capacity"]

_KINDS = ("threshold", "class_thresholds")


def _abstain_value(run: SortedRun, values: Values) -> float:
    """Total value of abstaining on every item (the baseline of every gain)."""
    use_case = values.use_case
    if use_case is not None:
        return use_case.v_abstain * run.total_weight
    predictions = run.predictions
    matrix = values.for_classes(predictions.classes)
    return float(np.sum(matrix.values[predictions.y_true, -1] * predictions.sample_weight))


def _budget(run: SortedRun, max_handoff_rate, max_handoffs) -> float:
    if (max_handoff_rate is None) == (max_handoffs is None):
        raise ValueError("give exactly one of max_handoff_rate and max_handoffs")
    if max_handoff_rate is not None:
        rate = float(max_handoff_rate)
        if not (math.isfinite(rate) and 0.0 <= rate <= 1.0):
            raise ValueError(f"max_handoff_rate must be a share between 0 and 1, got {max_handoff_rate!r}")
        return rate * run.total_weight
    budget = float(max_handoffs)
    if not (math.isfinite(budget) and budget >= 0):
        raise ValueError(f"max_handoffs must be a non-negative number, got {max_handoffs!r}")
    return budget


def _slack(run: SortedRun) -> float:
    # Weighted counts are sums of floats; a budget met up to round-off is met.
    return 1e-9 * max(1.0, run.total_weight)


@dataclass(frozen=True, eq=False)
class CapacityCurve:
    """Best value of one global threshold against the hand-offs allowed.

    Attributes
    ----------
    n_items : float
        Weighted number of items N of the tuning split.
    handoffs : ndarray of shape (n_groups + 1,), non-increasing
        Weighted hand-offs at each candidate (index 0 = always abstain: N).
    best_gain : ndarray of shape (n_groups + 1,), non-increasing
        Best gain over always-abstaining of any threshold whose hand-offs are
        at most ``handoffs[k]``: the value of capacity ``handoffs[k]``.
    best_index : ndarray of shape (n_groups + 1,)
        Candidate index achieving ``best_gain[k]`` (ties: the highest threshold).
    thresholds : ndarray of shape (n_groups,)
        The candidate thresholds (``run.thresholds``).
    abstain_value : float
        Total value of abstaining on everything; add it to a gain for a value.
    """

    n_items: float
    handoffs: np.ndarray
    best_gain: np.ndarray
    best_index: np.ndarray
    thresholds: np.ndarray
    abstain_value: float

    def threshold_of(self, index: int) -> float | None:
        return None if index == 0 else float(self.thresholds[index - 1])

    def _feasible_from(self, max_handoffs: float, slack: float) -> int:
        """First candidate index whose hand-offs fit (handoffs is non-increasing)."""
        return int(np.searchsorted(-self.handoffs, -(max_handoffs + slack), side="left"))

    def value_at(self, max_handoffs) -> np.ndarray | float:
        """Best total value with at most ``max_handoffs`` hand-offs (scalar or array)."""
        budget = np.asarray(max_handoffs, dtype=np.float64)
        slack = 1e-9 * max(1.0, self.n_items)
        k = np.searchsorted(-self.handoffs, -(budget + slack), side="left")
        k = np.minimum(k, self.handoffs.size - 1)  # accepting everything always fits a budget >= 0
        out = self.best_gain[k] + self.abstain_value
        return float(out) if out.ndim == 0 else out

    def marginal_value(self, max_handoffs: float) -> float:
        """Value per extra hand-off slot beyond ``max_handoffs``: the slope of the
        concave majorant of :meth:`value_at` just to the right of the budget (0 past the last rise)."""
        slack = 1e-9 * max(1.0, self.n_items)
        # hand-offs increasing; the majorant of a non-decreasing step function is the upper hull of its steps
        x, y = self.handoffs[::-1], self.best_gain[::-1]
        hull = np.asarray(_upper_hull_from(x, y, 0))
        vertex = int(np.searchsorted(x[hull], max_handoffs + slack, side="right")) - 1
        if vertex >= hull.size - 1:
            return 0.0
        a, b = hull[max(vertex, 0)], hull[max(vertex, 0) + 1]
        return float(max((y[b] - y[a]) / (x[b] - x[a]), 0.0))

    def to_frame(self):
        """Tidy frame: ``handoff_rate``, ``value_per_item``, ``threshold`` per candidate."""
        import pandas as pd

        n = self.n_items if self.n_items > 0 else 1.0
        threshold = np.r_[np.nan, self.thresholds][self.best_index]
        return pd.DataFrame(
            {
                "max_handoffs": self.handoffs,
                "handoff_rate": self.handoffs / n,
                "value_total": self.best_gain + self.abstain_value,
                "value_per_item": (self.best_gain + self.abstain_value) / n,
                "threshold": threshold,
            }
        )


def capacity_curve(run: SortedRun, values: Values) -> CapacityCurve:
    """The value of review capacity for one global threshold. O(n_groups).

    Parameters
    ----------
    run : SortedRun
        A labelled tuning split, presorted (calibrated first if the policy is).
    values : UseCase or ValueMatrix

    Examples
    --------
    >>> import valuecore as vc
    >>> p = vc.Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.6, 0.4]], y_true=[0, 0, 1])
    >>> curve = capacity_curve(vc.presort(p), vc.UseCase(1, 0, -4))
    >>> curve.handoffs.tolist(), curve.best_gain.tolist()
    ([3.0, 2.0, 1.0, 0.0], [2.0, 2.0, 2.0, -2.0])
    """
    run.predictions.require_labels("the value of review capacity")
    cum_gain = cumulative_gain(run, values)
    handoffs = run.total_weight - run.cum_accepted
    handoffs = np.where(handoffs < 0, 0.0, handoffs)
    # best over the suffix k..end, ties to the smallest index (highest threshold):
    # scan from the end, a later (smaller-index) equal value replaces the record.
    reverse = cum_gain[::-1]
    record = np.maximum.accumulate(reverse)
    positions = np.arange(reverse.size)
    last_hit = np.maximum.accumulate(np.where(reverse == record, positions, 0))
    best_gain = record[::-1]
    best_index = (reverse.size - 1 - last_hit)[::-1]
    return CapacityCurve(
        n_items=run.total_weight,
        handoffs=handoffs,
        best_gain=best_gain,
        best_index=best_index,
        thresholds=run.thresholds,
        abstain_value=_abstain_value(run, values),
    )


@dataclass(frozen=True, eq=False)
class CapacityResult:
    """The value-optimal policy within a review capacity, on the tuning split.

    Attributes
    ----------
    policy : Policy
        A ``threshold`` or ``class_thresholds`` policy.
    max_handoffs : float
        The budget (weighted hand-offs allowed).
    n_items : float
    handoffs : float
        Weighted hand-offs of the chosen policy (<= max_handoffs).
    value_total, unconstrained_value_total : float
        Total value of the chosen policy and of the best policy of the same
        kind without a capacity limit.
    binding : bool
        The limit changes the answer (the unconstrained best needs more hand-offs).
    marginal_value : float
        Value per extra hand-off slot (see the module docstring); 0 when the
        limit does not bind.
    exact : bool
        The value is the exact optimum of the kind (always for one global
        threshold; for per-class thresholds, when the budget falls on a vertex
        of the combined hull or the limit does not bind).
    upper_bound : float
        Total value no policy of the kind can exceed within the budget (equals
        ``value_total`` when exact).
    """

    policy: Policy
    max_handoffs: float
    n_items: float
    handoffs: float
    value_total: float
    unconstrained_value_total: float
    binding: bool
    marginal_value: float
    exact: bool
    upper_bound: float

    @property
    def handoff_rate(self) -> float:
        return self.handoffs / self.n_items if self.n_items > 0 else 0.0

    @property
    def max_handoff_rate(self) -> float:
        return self.max_handoffs / self.n_items if self.n_items > 0 else 0.0

    def to_dict(self) -> dict:
        """The constraint record of the policy JSON."""
        return {
            "type": "review_capacity",
            "max_handoff_rate": self.max_handoff_rate,
            "handoff_rate": self.handoff_rate,
            "binding": bool(self.binding),
            "value_per_extra_handoff": self.marginal_value,
            "unconstrained_value_per_item": self.unconstrained_value_total / self.n_items if self.n_items else None,
            "tuned_value_per_item": self.value_total / self.n_items if self.n_items else None,
            "exact": bool(self.exact),
        }


def fit_capacity(
    run: SortedRun,
    values: Values,
    *,
    max_handoff_rate: float | None = None,
    max_handoffs: float | None = None,
    kind: str = "threshold",
    calibration=None,
) -> CapacityResult:
    """The value-optimal policy with at most a given share (or number) of hand-offs.

    Parameters
    ----------
    run : SortedRun
        Labelled tuning split, presorted, already calibrated with ``calibration``.
    values : UseCase or ValueMatrix
    max_handoff_rate : float in [0, 1], optional
        Largest share of (weighted) items handed to a person.
    max_handoffs : float, optional
        Or the largest weighted number of hand-offs on this split.
    kind : {"threshold", "class_thresholds"}
    calibration : mapping, optional
        Recorded in the policy.

    Examples
    --------
    >>> import valuecore as vc
    >>> p = vc.Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.6, 0.4]], y_true=[0, 0, 1])
    >>> r = fit_capacity(vc.presort(p), vc.UseCase(1, 0, -4), max_handoff_rate=0)
    >>> r.policy.threshold, r.value_total, r.binding, r.marginal_value
    (0.6, -2.0, True, 4.0)
    """
    if kind not in _KINDS:
        raise ValueError(f"a capacity limit applies to kinds {list(_KINDS)}, not {kind!r}")
    run.predictions.require_labels("tuning within a review capacity")
    budget = _budget(run, max_handoff_rate, max_handoffs)
    extra = {"calibration": calibration} if calibration else {}
    if kind == "threshold":
        curve = capacity_curve(run, values)
        slack = _slack(run)
        k = min(curve._feasible_from(budget, slack), curve.handoffs.size - 1)
        index = int(curve.best_index[k])
        value = float(curve.best_gain[k]) + curve.abstain_value
        unconstrained = float(curve.best_gain[0]) + curve.abstain_value
        return CapacityResult(
            policy=Policy("threshold", threshold=curve.threshold_of(index), **extra),
            max_handoffs=budget,
            n_items=run.total_weight,
            handoffs=float(curve.handoffs[index]),
            value_total=value,
            unconstrained_value_total=unconstrained,
            binding=bool(curve.best_index[0] != index),
            marginal_value=curve.marginal_value(budget),
            exact=True,
            upper_bound=value,
        )
    per_class = _fit_class_capacity(run, values, budget, extra)
    single = fit_capacity(run, values, max_handoffs=budget, kind="threshold", calibration=calibration)
    if single.value_total <= per_class.value_total:
        return per_class
    # The hull vertex lost to one threshold (the relaxation's rounding can): that threshold for every class.
    threshold = single.policy.threshold
    bound = per_class.upper_bound
    return CapacityResult(
        policy=Policy("class_thresholds", class_thresholds=tuple((c, threshold) for c in run.predictions.classes),
                      **extra),
        max_handoffs=budget,
        n_items=per_class.n_items,
        handoffs=single.handoffs,
        value_total=single.value_total,
        unconstrained_value_total=per_class.unconstrained_value_total,
        binding=per_class.binding,
        marginal_value=per_class.marginal_value,
        # Round-off of a total is relative to the items times the largest value, not to 1: with values scaled by
        # 2**-60 a fixed floor of 1 called a value 1.7 below the bound (in those units) exact.
        exact=bool(single.value_total >= bound - 1e-12 * max(abs(bound), per_class.n_items * value_scale(
            values, run.predictions.classes))),
        upper_bound=bound,
    )


# ------------------------------------------------------- per-class budget
def _class_prefixes(run: SortedRun, values: Values):
    """Per predicted class: thresholds, accepted weight and gain of each prefix (index 0 = none)."""
    ends = run.class_group_end
    cum_gain = class_cumulative_gain(run, values)
    cum_weight = class_cumulative_weight(run)
    group_class = run.class_group_class
    out = {}
    starts = np.r_[0, np.flatnonzero(group_class[1:] != group_class[:-1]) + 1] if ends.size else []
    bounds = list(starts) + [group_class.size]
    for first, stop in zip(bounds[:-1], bounds[1:]):  # loop over classes
        before_gain = cum_gain[first - 1] if first else 0.0
        before_weight = cum_weight[first - 1] if first else 0.0
        out[int(group_class[first])] = (
            run.class_group_threshold[first:stop],
            np.r_[0.0, cum_weight[first:stop] - before_weight],
            np.r_[0.0, cum_gain[first:stop] - before_gain],
        )
    return out


def _upper_hull_from(accepted: np.ndarray, gain: np.ndarray, start: int) -> list[int]:
    """Vertices (prefix indices) of the upper concave hull of the points from ``start`` on.

    Points sharing an accepted weight keep the earliest (highest threshold)
    unless a later one has strictly more gain.
    """
    hull: list[int] = [start]
    for p in range(start + 1, accepted.size):  # O(groups of the class), amortised
        if accepted[p] <= accepted[hull[-1]]:
            if gain[p] > gain[hull[-1]]:
                hull[-1] = p
            continue
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # drop b when it lies on or below the chord a -> p
            rise_to_p = (accepted[b] - accepted[a]) * (gain[p] - gain[a])
            cross = rise_to_p - (gain[b] - gain[a]) * (accepted[p] - accepted[a])
            if cross >= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    return hull


def _fit_class_capacity(run: SortedRun, values: Values, budget: float, extra: dict) -> CapacityResult:
    predictions = run.predictions
    n_items = run.total_weight
    prefixes = _class_prefixes(run, values)
    abstain_value = _abstain_value(run, values)
    choice, segments = {}, []
    for c, (_, accepted, gain) in prefixes.items():
        best = int(np.argmax(gain))  # ties: the earliest prefix (accept nothing first)
        choice[c] = best
        hull = _upper_hull_from(accepted, gain, best)
        for a, b in zip(hull[:-1], hull[1:]):
            d_accepted = accepted[b] - accepted[a]
            segments.append(((gain[b] - gain[a]) / d_accepted, c, b, d_accepted, gain[b] - gain[a]))
    unconstrained_gain = sum(prefixes[c][2][p] for c, p in choice.items())
    accepted_now = sum(prefixes[c][1][p] for c, p in choice.items())
    need = (n_items - budget) - accepted_now  # extra weight that must be accepted
    slack = _slack(run)
    binding = need > slack
    gain_now = float(unconstrained_gain)
    bound = gain_now
    marginal = 0.0
    exact = True
    if binding:
        # Stable sort on -slope keeps each class's segments in hull order (slopes decrease along a hull).
        segments.sort(key=lambda s: -s[0])
        taken = 0.0
        for slope, c, vertex, d_accepted, d_gain in segments:  # loop over hull segments
            if taken + d_accepted >= need - slack:
                bound = gain_now + slope * (need - taken)
                exact = taken + d_accepted <= need + slack
                marginal = max(-slope, 0.0)
                choice[c] = vertex
                gain_now += d_gain
                taken += d_accepted
                break
            choice[c] = vertex
            gain_now += d_gain
            taken += d_accepted
        bound = min(bound, gain_now) if exact else bound
    thresholds = []
    handoffs = n_items
    for k, label in enumerate(predictions.classes):
        if k in prefixes and choice[k] > 0:
            group_thresholds, accepted, _ = prefixes[k]
            thresholds.append((label, float(group_thresholds[choice[k] - 1])))
            handoffs -= accepted[choice[k]]
        else:
            thresholds.append((label, None))
    return CapacityResult(
        policy=Policy("class_thresholds", class_thresholds=tuple(thresholds), **extra),
        max_handoffs=budget,
        n_items=n_items,
        handoffs=max(float(handoffs), 0.0),
        value_total=gain_now + abstain_value,
        unconstrained_value_total=float(unconstrained_gain) + abstain_value,
        binding=bool(binding),
        marginal_value=float(marginal),
        exact=bool(exact),
        upper_bound=float(max(bound, gain_now)) + abstain_value,
    )
