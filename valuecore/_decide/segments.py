"""One threshold per segment (region, product, customer tier), tuned for value, with optional fairness caps.

Without caps the problem separates: each segment's best threshold is the single-threshold fit
(``fit_policy("threshold", ...)``) on that segment's items, with that segment's values. With caps on how far
the hand-off rate, the selective error rate or the value per item may differ between segments (a cap bounds
the largest minus the smallest over the segments), the segments are tied together, and the total value over
all items is maximised subject to the caps by a search over *bands*:

    For a cap c on one quantity q, a choice of thresholds is allowed iff some band ``[L, L + c]`` holds every
    segment's q. The best choice's smallest q is attained by one of its segments at one of its candidate
    thresholds, so ``L`` ranges over the distinct values q takes on the candidates; for each ``L`` every
    segment independently picks its best candidate inside the band. The best over all ``L`` is the
    constrained optimum, exactly. With one cap every band is searched at once by range maxima over each
    segment's candidates sorted by q (a sparse table): O(m log m) for m candidates, exact at any size.
    Several caps: the same over every combination of lower edges (one per capped quantity), which is exact
    too, and its size is the product of the numbers of edges.

Each segment's candidates are its distinct confidences plus "always abstain" (every distinct confidence is a
candidate, ties never split). When the combinations of edges times the candidates exceed ``search_budget``,
the edges are thinned to evenly spaced quantiles: every choice returned still holds the caps, the result says
``exact=False``, and ``upper_bound`` (the value without caps) bounds what the thinning can have cost.

Conventions. A segment that acts on no item has no selective error rate: it takes no part in the error gap.
A gap counts as within its cap when it exceeds it by at most ``CAP_TOLERANCE`` (relative to 1 for rates, to
the largest value for the value per item): the round-off of float arithmetic, never a real excess.

May import: _model, _engine, _stats (see the package's ``__init__``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .._engine.fitting import fit_policy
from .._engine.policy import Policy
from .._engine.segment_policy import SEGMENT_RULES, UNSEEN_SEGMENT_RULES, SegmentPolicy, segment_labels
from .._engine.sorting import SortedRun, cumulative_gain, presort
from .._model.predictions import Predictions, _label_text
from .._model.values import Values, check_values
from .._model.values import check_value_range as _check_value_range
from .capacity import _abstain_value
from .risk import upper_bounds

__all__ = [
    "CAP_TOLERANCE",
    "MIN_SEGMENT_ITEMS",
    "SEGMENT_RULES",
    "UNSEEN_SEGMENT_RULES",
    "SegmentCaps",
    "SegmentPolicy",
    "SegmentStanding",
    "SegmentEvaluation",
    "SegmentFit",
    "segment_labels",
    "fit_segments",
    "evaluate_segments",
]

# Relative slack of a cap for float round-off (see the module docstring).
CAP_TOLERANCE = 1e-9
# The rule for "too small to say anything": fewer than this many (weighted) items in the segment, or, when the
# segment acts on some, fewer than this many acted on (its error rate rests on those).
MIN_SEGMENT_ITEMS = 30
_DEFAULT_SEARCH_BUDGET = 5 * 10**7


def _values_per_segment(values, names: tuple[str, ...]) -> dict[str, Values]:
    if not isinstance(values, Mapping):
        check_values(values, or_else="a mapping segment -> values")
        return {s: values for s in names}
    given = {_label_text(k): v for k, v in values.items()}
    lacking = [s for s in names if s not in given]
    if lacking:
        raise ValueError(f"no values for the segments {lacking[:10]} (values are given for {sorted(given)[:10]})")
    return {s: given[s] for s in names}


# ------------------------------------------------------------------ the caps
@dataclass(frozen=True)
class SegmentCaps:
    """How far the segments may differ: each cap bounds the largest minus the smallest over the segments.

    Attributes
    ----------
    handoff_gap : float or None
        Of the hand-off (abstention) rate, a share in [0, 1].
    error_gap : float or None
        Of the selective error rate (wrong / acted on), a share in [0, 1]; segments that act on nothing take
        no part.
    value_gap : float or None
        Of the value per item, in the values' currency (all segments' values in one currency).
    """

    handoff_gap: float | None = None
    error_gap: float | None = None
    value_gap: float | None = None

    def __post_init__(self):
        for field_name in ("handoff_gap", "error_gap", "value_gap"):
            cap = getattr(self, field_name)
            if cap is None:
                continue
            cap = float(cap)
            if not math.isfinite(cap) or cap < 0:
                raise ValueError(f"{field_name} must be a non-negative number, got {getattr(self, field_name)!r}")
            if field_name != "value_gap" and cap > 1:
                raise ValueError(f"{field_name} is a gap between two shares, at most 1; got {cap!r}")
            object.__setattr__(self, field_name, cap)

    @property
    def any(self) -> bool:
        return self.as_dict() != {}

    def as_dict(self) -> dict[str, float]:
        """The caps that are set, by name (the policy JSON's ``caps``)."""
        return {k: v for k, v in (("handoff_gap", self.handoff_gap), ("error_gap", self.error_gap),
                                  ("value_gap", self.value_gap)) if v is not None}


# ------------------------------------------------------------------ evaluation
@dataclass(frozen=True, eq=False)
class SegmentStanding:
    """One segment under a segment policy, on one split. Counts are weighted.

    Attributes
    ----------
    segment : str
    threshold : float or None
    n_items, n_acted, n_wrong : float
    handoff_rate : float
        Share of the segment's items handed off (NaN for a segment of weight 0).
    selective_risk : float or None
        Wrong / acted on; None when nothing is acted on.
    value_total, value_per_item : float
        In the segment's values' currency.
    interval : Interval
        The value per item with its interval (``valuecore.uncertainty.policy_interval``, "bounded").
    risk_upper_bound : float or None
        Clopper-Pearson upper bound of the selective error rate at ``risk_confidence``
        (``valuecore.constraints.upper_bounds``) for this threshold held fixed; None when nothing is acted on
        or when the weights are not whole copies (the binomial bound counts independent items).
    too_small : bool
        Fewer than ``MIN_SEGMENT_ITEMS`` items, or acting on fewer than that many: too few to say anything.
    class_thresholds : tuple of (class, float or None), or None
        The segment's per-class thresholds (``threshold`` is then None); None for a threshold per segment.
    """

    segment: str
    threshold: float | None
    n_items: float
    n_acted: float
    n_wrong: float
    handoff_rate: float
    selective_risk: float | None
    value_total: float
    value_per_item: float
    interval: object
    risk_upper_bound: float | None
    too_small: bool
    class_thresholds: tuple | None = None


@dataclass(frozen=True, eq=False)
class SegmentEvaluation:
    """A segment policy on one split: a :class:`SegmentStanding` per segment and the gaps between them.

    Attributes
    ----------
    segments : tuple of SegmentStanding
        Sorted by segment name (only segments present in the split).
    n_items, value_total, value_per_item : float
        Over all items (the sum over segments).
    handoff_gap, error_gap, value_gap : float
        Largest minus smallest over the segments (NaN with fewer than two segments that have the quantity).
    n_unseen : float
        Weighted items of segments the policy has no threshold for (handed off).
    """

    segments: tuple
    n_items: float
    value_total: float
    value_per_item: float
    handoff_gap: float
    error_gap: float
    value_gap: float
    n_unseen: float = 0.0

    def standing(self, segment) -> SegmentStanding:
        """The row of one segment."""
        name = _label_text(segment)
        for row in self.segments:
            if row.segment == name:
                return row
        raise KeyError(f"no segment {name!r}; the segments are {[r.segment for r in self.segments]}")

    def to_dict(self) -> dict:
        """JSON-able numbers (the intervals as ``low``/``high``)."""
        def finite(x):
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            "n": self.n_items, "value_total": self.value_total, "value_per_item": self.value_per_item,
            "handoff_gap": finite(self.handoff_gap), "error_gap": finite(self.error_gap),
            "value_gap": finite(self.value_gap), "n_unseen": self.n_unseen,
            "segments": {
                r.segment: {
                    "threshold": r.threshold, "n": r.n_items, "n_acted": r.n_acted, "n_wrong": r.n_wrong,
                    "handoff_rate": finite(r.handoff_rate), "selective_risk": r.selective_risk,
                    "value_total": r.value_total, "value_per_item": r.value_per_item,
                    "value_per_item_low": finite(r.interval.low), "value_per_item_high": finite(r.interval.high),
                    "risk_upper_bound": r.risk_upper_bound, "too_small": r.too_small,
                    **({} if r.class_thresholds is None else {"class_thresholds": dict(r.class_thresholds)}),
                } for r in self.segments
            },
        }


def _gap(values: list[float]) -> float:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    return float(max(finite) - min(finite)) if len(finite) >= 2 else (0.0 if finite else math.nan)


def _whole_copies(weight: np.ndarray) -> bool:
    return bool(np.array_equal(weight, np.rint(weight)))


def evaluate_segments(
    policy: SegmentPolicy,
    predictions: Predictions,
    segments,
    values,
    *,
    confidence_level: float = 0.95,
    risk_confidence: float = 0.9,
) -> SegmentEvaluation:
    """A segment policy on a labelled split, segment by segment.

    Parameters
    ----------
    policy : SegmentPolicy
    predictions : Predictions
        Labelled, n items.
    segments : array-like of shape (n,)
        Each item's segment (see :func:`segment_labels`).
    values : UseCase, ValueMatrix, or mapping segment -> values
    confidence_level : float
        Of each segment's value interval.
    risk_confidence : float
        Of each segment's upper bound on the selective error rate.
    """
    from .._stats.uncertainty import policy_interval

    predictions.require_labels("evaluating a segment policy")
    codes, names = segment_labels(segments, predictions.n, name=policy.column or "segment")
    per_segment = _values_per_segment(values, names)
    known = set(policy.segments)
    weight = predictions.sample_weight
    rows = []
    n_unseen = 0.0
    for code, name in enumerate(names):
        mask = codes == code
        sub = predictions.subset(mask)
        seg_values = per_segment[name]
        _check_value_range(seg_values)
        rule = policy.policy_for(name)
        if name not in known:
            n_unseen += float(weight[mask].sum())
        rows.append(_standing(name, rule, sub, seg_values, confidence_level, risk_confidence, policy_interval))
    value_total = float(sum(r.value_total for r in rows))
    n_items = float(sum(r.n_items for r in rows))
    return SegmentEvaluation(
        segments=tuple(rows), n_items=n_items, value_total=value_total,
        value_per_item=value_total / n_items if n_items > 0 else math.nan,
        handoff_gap=_gap([r.handoff_rate for r in rows]),
        error_gap=_gap([r.selective_risk for r in rows]),
        value_gap=_gap([r.value_per_item for r in rows]),
        n_unseen=n_unseen,
    )


def _standing(name, rule: Policy, sub: Predictions, values, confidence_level, risk_confidence, policy_interval):
    matrix = values.for_classes(sub.classes)
    actions = rule.decide(sub)
    weight = sub.sample_weight
    acted = actions < sub.n_classes
    n_items = float(weight.sum())
    n_acted = float(weight[acted].sum())
    n_wrong = float(weight[acted & ~sub.correct].sum())
    value_total = float(np.sum(matrix.values[sub.y_true, actions] * weight))
    interval = policy_interval(rule, sub, values, confidence_level=confidence_level)
    bound = None
    if n_acted > 0 and _whole_copies(weight):
        bound = float(upper_bounds(np.array([n_acted]), np.array([n_wrong]), 1.0 - risk_confidence)[0])
    return SegmentStanding(
        segment=name, threshold=rule.threshold, class_thresholds=rule.class_thresholds, n_items=n_items,
        n_acted=n_acted, n_wrong=n_wrong,
        handoff_rate=(n_items - n_acted) / n_items if n_items > 0 else math.nan,
        selective_risk=n_wrong / n_acted if n_acted > 0 else None,
        value_total=value_total, value_per_item=value_total / n_items if n_items > 0 else math.nan,
        interval=interval, risk_upper_bound=bound,
        too_small=bool(n_items < MIN_SEGMENT_ITEMS or (0 < n_acted < MIN_SEGMENT_ITEMS)),
    )


# ------------------------------------------------------------------ fitting
@dataclass(frozen=True, eq=False)
class SegmentFit:
    """The segment policy that earns the most within the caps, on the tuning split.

    Attributes
    ----------
    policy : SegmentPolicy
        The capped choice; when ``feasible`` is False, the choice without caps (which breaks them).
    evaluation : SegmentEvaluation
        ``policy`` on the tuning split, segment by segment (thresholds, rates, values, intervals, warnings).
    unconstrained : SegmentPolicy
        Each segment's own best threshold (the fit without caps).
    caps : SegmentCaps
    feasible : bool
        Whether some choice of thresholds holds every cap.
    value_total : float
        Of ``policy`` over all items (NaN when not feasible).
    unconstrained_value_total : float
        Without caps: also an upper bound of the capped value.
    cap_cost_per_item : float
        What the caps cost: ``(unconstrained_value_total - value_total) / n_items``, in the values' currency
        (0 when the best choice already holds the caps; NaN when not feasible).
    n_items : float
        Weighted items over all segments.
    exact : bool
        True when every band was searched (the optimum under the caps); False when the bands were thinned
        for ``search_budget`` (a choice that holds the caps, within ``upper_bound - value_total`` of it).
    upper_bound : float
        A bound of the best capped value: ``unconstrained_value_total``.
    n_bands : int
        Combinations of band edges searched.
    values : dict
        Each segment's values, as fitted (segment name -> UseCase or ValueMatrix).
    rule : str
        What each segment sets: ``"threshold"`` (one threshold) or ``"class_thresholds"`` (one per predicted
        class).
    n_choices : int
        Per-class thresholds with caps: the choices of per-class thresholds searched, over all segments (after
        merging those with the same capped figures); 0 otherwise.
    """

    policy: SegmentPolicy
    evaluation: SegmentEvaluation
    unconstrained: SegmentPolicy
    caps: SegmentCaps
    feasible: bool
    value_total: float
    unconstrained_value_total: float
    cap_cost_per_item: float
    n_items: float
    exact: bool
    upper_bound: float
    n_bands: int
    values: Mapping = None
    rule: str = "threshold"
    n_choices: int = 0

    def to_dict(self) -> dict:
        """The ``segments`` record of a policy JSON entry (schema version 3): the column, the rule for unseen
        segments, each segment's threshold and values, the caps, what they cost, and the tuning figures."""
        policy = self.policy.to_dict()
        return {
            **policy,
            "column": policy["column"] or "segment",
            "use_cases": {s: v.to_dict() for s, v in (self.values or {}).items()},
            "caps": self.caps.as_dict(),
            "feasible": self.feasible,
            "exact": self.exact,
            "cap_cost_per_item": None if math.isnan(self.cap_cost_per_item) else self.cap_cost_per_item,
            **({"unconstrained_thresholds": dict(self.unconstrained.thresholds)} if self.rule == "threshold" else
               {"unconstrained_class_thresholds": self.unconstrained.to_dict()["class_thresholds"]}),
            "tuning": self.evaluation.to_dict(),
        }


@dataclass(frozen=True, eq=False)
class _Candidates:
    """Every segment's candidate thresholds, concatenated: segment k's are ``[start[k], start[k + 1])``."""

    segment: np.ndarray
    start: np.ndarray
    index: np.ndarray       # prefix index within its segment's run (0 = always abstain)
    value: np.ndarray       # total value of the segment at this candidate
    quantities: dict        # name -> ndarray (NaN: takes no part in that gap)


def _candidates(runs: list[SortedRun], per_values: list[Values]) -> _Candidates:
    segment, index, value = [], [], []
    handoff, error, per_item = [], [], []
    for k, (run, values) in enumerate(zip(runs, per_values)):
        total = _abstain_value(run, values) + cumulative_gain(run, values)
        size = total.shape[0]
        n = run.total_weight
        accepted = run.cum_accepted
        segment.append(np.full(size, k))
        index.append(np.arange(size))
        value.append(total)
        with np.errstate(invalid="ignore", divide="ignore"):
            handoff.append((n - accepted) / n if n > 0 else np.full(size, np.nan))
            error.append(np.where(accepted > 0, run.cum_wrong / np.where(accepted > 0, accepted, 1), np.nan))
            per_item.append(total / n if n > 0 else np.full(size, np.nan))
    seg = np.concatenate(segment)
    start = np.r_[0, np.cumsum([len(s) for s in segment])]
    return _Candidates(seg, start, np.concatenate(index), np.concatenate(value),
                       {"handoff_gap": np.concatenate(handoff), "error_gap": np.concatenate(error),
                        "value_gap": np.concatenate(per_item)})


def _edges(q: np.ndarray, limit: int) -> tuple[np.ndarray, bool]:
    edges = np.unique(q[np.isfinite(q)])
    if edges.size == 0:  # no segment has the quantity: the cap binds nothing (NaN is inside every band)
        return np.zeros(1), True
    if edges.size <= limit:
        return edges, True
    return edges[np.unique(np.linspace(0, edges.size - 1, max(limit, 1)).round().astype(np.int64))], False


def _in_band(q: np.ndarray, low, width: float) -> np.ndarray:
    """Whether each q lies in ``[low, low + width]``; NaN (no such quantity) lies in every band."""
    with np.errstate(invalid="ignore"):
        return np.isnan(q) | ((q >= low) & (q <= low + width))


def _range_max(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``max(values[lo[i]:hi[i]])`` for every i (-inf for an empty range), from a sparse table: O(m log m) to
    build, O(1) a query."""
    out = np.full(lo.shape, -np.inf)
    if values.size == 0:
        return out
    table, span = [values], 1
    while 2 * span <= values.size:  # table[l][i] = max(values[i:i + 2**l])
        previous = table[-1]
        table.append(np.maximum(previous[:-span], previous[span:]))
        span *= 2
    length = hi - lo
    filled = length > 0
    level = np.zeros(length.shape, dtype=np.int64)
    level[filled] = np.floor(np.log2(length[filled])).astype(np.int64)
    for at in np.unique(level[filled]).tolist():
        rows = filled & (level == at)
        out[rows] = np.maximum(table[at][lo[rows]], table[at][hi[rows] - (1 << at)])
    return out


def _one_cap_totals(cands: _Candidates, name: str, edges: np.ndarray, width: float, n_segments: int) -> np.ndarray:
    """For one cap: the total of every segment's best candidate inside each band ``[edge, edge + width]``
    (-inf where some segment has none), shape (n_edges,); what the general search gives, in
    O(candidates log candidates) instead of O(edges x candidates)."""
    q = cands.quantities[name]
    upper = edges + width
    totals = np.zeros(edges.shape)
    for k in range(n_segments):
        part = slice(cands.start[k], cands.start[k + 1])
        mine, value = q[part], cands.value[part]
        free = np.isnan(mine)  # inside every band
        anywhere = float(value[free].max()) if free.any() else -np.inf
        order = np.argsort(mine[~free], kind="stable")
        sorted_q, sorted_value = mine[~free][order], value[~free][order]
        lo = np.searchsorted(sorted_q, edges, side="left")
        hi = np.searchsorted(sorted_q, upper, side="right")
        totals += np.maximum(anywhere, _range_max(sorted_value, lo, hi))
    return totals


def _search(cands: _Candidates, caps: dict, tolerances: dict, n_segments: int, budget: int):
    """The best choice within the caps: (total, chosen prefix index per segment, exact, n_bands) or None."""
    names = list(caps)
    n_cand = cands.value.shape[0]
    if len(names) == 1:  # one cap: every band, exactly, by range maxima
        name = names[0]
        edges, _ = _edges(cands.quantities[name], n_cand + 1)
        edges = edges[::-1] if name == "handoff_gap" else edges  # the same tie order as below
        totals = _one_cap_totals(cands, name, edges, caps[name] + tolerances[name], n_segments)
        return _chosen(cands, {name: edges[int(np.argmax(totals))]}, caps, tolerances, n_segments,
                       float(np.max(totals)), True, int(edges.size))
    per_cap = max(1, int((budget / max(n_cand, 1)) ** (1.0 / len(names))))
    edge_sets, exact = [], True
    for name in names:
        edges, complete = _edges(cands.quantities[name], per_cap)
        # Ties between bands: the highest hand-off band first (the fewest automated calls, as for one threshold).
        edge_sets.append(edges[::-1] if name == "handoff_gap" else edges)
        exact &= complete
    combos = list(itertools.product(*(range(e.size) for e in edge_sets)))
    best_total, best_edges = -np.inf, None
    chunk = max(1, min(len(combos), int(2e6 // max(n_cand, 1))))
    starts = cands.start[:-1]
    for at in range(0, len(combos), chunk):
        block = np.array(combos[at:at + chunk], dtype=np.int64).reshape(-1, len(names))
        inside = np.ones((block.shape[0], n_cand), dtype=bool)
        for j, name in enumerate(names):
            q = cands.quantities[name]
            inside &= _in_band(q[None, :], edge_sets[j][block[:, j]][:, None], caps[name] + tolerances[name])
        masked = np.where(inside, cands.value[None, :], -np.inf)
        per_segment = np.maximum.reduceat(masked, starts, axis=1)  # (combos, segments)
        totals = per_segment.sum(axis=1)
        k = int(np.argmax(totals))
        if totals[k] > best_total:
            best_total, best_edges = float(totals[k]), block[k]
    if best_edges is None:
        return None
    lows = {name: edge_sets[j][best_edges[j]] for j, name in enumerate(names)}
    return _chosen(cands, lows, caps, tolerances, n_segments, best_total, exact, len(combos))


def _chosen(cands: _Candidates, lows: dict, caps: dict, tolerances: dict, n_segments: int, total: float,
            exact: bool, n_bands: int):
    """(total, each segment's best candidate inside the bands starting at ``lows``, exact, n_bands), or None
    when no band holds a candidate of every segment."""
    if not math.isfinite(total):
        return None
    inside = np.ones(cands.value.shape[0], dtype=bool)
    for name, low in lows.items():
        inside &= _in_band(cands.quantities[name], low, caps[name] + tolerances[name])
    chosen = []
    for k in range(n_segments):
        part = slice(cands.start[k], cands.start[k + 1])
        values = np.where(inside[part], cands.value[part], -np.inf)
        chosen.append(int(np.argmax(values)))  # ties: the first, the highest threshold
    return total, chosen, exact, n_bands


# ------------------------------------------------------------------ per-class thresholds per segment
@dataclass(frozen=True, eq=False)
class _ClassChoices:
    """One segment's choices of per-class thresholds, merged on the figures the caps read.

    ``choice[i, k]`` is the prefix index of class k (0: never act on it; j: act on its j most confident groups);
    ``acted``, ``wrong`` and ``gain`` (over handing every item off) are the segment's weighted totals."""

    acted: np.ndarray
    wrong: np.ndarray
    gain: np.ndarray
    choice: np.ndarray
    exact: bool


def _within_class(cumulated: np.ndarray, start: int, stop: int) -> np.ndarray:
    """A quantity cumulated along the class order, restarted at class start: index 0 accepts none of the class."""
    base = cumulated[start - 1] if start else 0.0
    return np.r_[0.0, cumulated[start:stop] - base]


def _merged(acted, wrong, gain, choice, keys: tuple[str, ...]):
    """Of the choices with the same capped figures (``keys`` among acted, wrong, gain), the most valuable, then
    the one acting on the fewest; sorted by those figures."""
    columns = {"acted": acted, "wrong": wrong, "gain": gain}
    by = [columns[k] for k in keys]
    order = np.lexsort((acted, -gain, *reversed(by)))
    first = np.ones(order.size, dtype=bool)
    if order.size > 1:
        changed = np.zeros(order.size - 1, dtype=bool)
        for column in by:
            ordered = column[order]
            changed |= ordered[1:] != ordered[:-1]
        first[1:] = changed
    keep = order[first]
    return acted[keep], wrong[keep], gain[keep], choice[keep]


def _thinned(acted, wrong, gain, choice, limit: int):
    """At most ``limit`` choices: the choices (sorted by their capped figures) cut into ``limit`` runs of
    neighbours, the most valuable of each run kept (so the most valuable overall is kept)."""
    size = gain.size
    run_of = np.arange(size) * limit // size
    order = np.lexsort((-gain, run_of))
    first = np.r_[True, run_of[order][1:] != run_of[order][:-1]]
    keep = np.sort(order[first])
    return acted[keep], wrong[keep], gain[keep], choice[keep]


def _class_choices(run: SortedRun, values: Values, keys: tuple[str, ...], limit: int) -> _ClassChoices:
    """Every combination of per-class thresholds of one segment (every distinct confidence of each predicted
    class, and "never"), built class by class and merged on ``keys`` after each class: exact while at most
    ``limit`` choices remain (and at most ``limit`` times a class's candidates are combined), thinned beyond."""
    from .._engine.sorting import class_cumulative_gain, class_cumulative_weight

    n_classes = run.predictions.n_classes
    at_end = class_cumulative_gain(run, values)
    acted_end = class_cumulative_weight(run)
    wrong_end = run.class_cum_wrong
    bounds = np.searchsorted(run.class_group_class, np.arange(n_classes + 1)).tolist()
    acted, wrong, gain = np.zeros(1), np.zeros(1), np.zeros(1)
    choice = np.zeros((1, 0), dtype=np.int64)
    exact = True
    for k in range(n_classes):
        start, stop = bounds[k], bounds[k + 1]
        class_acted = _within_class(acted_end, start, stop)
        class_wrong = _within_class(wrong_end, start, stop)
        class_gain = _within_class(at_end, start, stop)
        # The class's candidates a block at a time (at most _PAIRS_PER_CHOICE * limit pairs in memory), each
        # block's combinations merged into those kept so far: the merge is the same, exact, block by block.
        step = max(1, _PAIRS_PER_CHOICE * limit // max(gain.size, 1))
        kept = None
        for at in range(0, class_acted.size, step):
            block = slice(at, at + step)
            size = class_acted[block].size
            combined = ((acted[:, None] + class_acted[None, block]).ravel(),
                        (wrong[:, None] + class_wrong[None, block]).ravel(),
                        (gain[:, None] + class_gain[None, block]).ravel(),
                        np.hstack([np.repeat(choice, size, axis=0),
                                   np.tile(np.arange(at, at + size), choice.shape[0])[:, None]]))
            if kept is not None:
                combined = tuple(np.concatenate([old, new]) for old, new in zip(kept, combined))
            kept = _merged(*combined, keys)
            if kept[2].size > limit:
                kept = _thinned(*kept, limit)
                exact = False
        acted, wrong, gain, choice = kept
    order = np.argsort(acted, kind="stable")  # ties in value: the first, acting on the fewest items
    return _ClassChoices(acted[order], wrong[order], gain[order], choice[order], exact)


def _class_candidates(runs: list[SortedRun], per_values: list[Values], keys, limit: int):
    """(the :class:`_Candidates` of every segment's choices of per-class thresholds, each segment's
    :class:`_ClassChoices`)."""
    found = [_class_choices(run, values, keys, limit) for run, values in zip(runs, per_values)]
    segment, index, value, handoff, error, per_item = [], [], [], [], [], []
    for k, (run, values, c) in enumerate(zip(runs, per_values, found)):
        n = run.total_weight
        total = _abstain_value(run, values) + c.gain
        segment.append(np.full(total.size, k))
        index.append(np.arange(total.size))
        value.append(total)
        with np.errstate(invalid="ignore", divide="ignore"):
            handoff.append((n - c.acted) / n if n > 0 else np.full(total.size, np.nan))
            error.append(np.where(c.acted > 0, c.wrong / np.where(c.acted > 0, c.acted, 1), np.nan))
            per_item.append(total / n if n > 0 else np.full(total.size, np.nan))
    start = np.r_[0, np.cumsum([len(s) for s in segment])]
    cands = _Candidates(np.concatenate(segment), start, np.concatenate(index), np.concatenate(value),
                        {"handoff_gap": np.concatenate(handoff), "error_gap": np.concatenate(error),
                         "value_gap": np.concatenate(per_item)})
    return cands, found


def _class_thresholds(run: SortedRun, prefixes: np.ndarray) -> tuple:
    """Per-class thresholds ``((class, threshold or None), ...)`` from each class's prefix index."""
    classes = run.predictions.classes
    bounds = np.searchsorted(run.class_group_class, np.arange(len(classes) + 1)).tolist()
    return tuple((c, None if j == 0 else float(run.class_group_threshold[bounds[k] + j - 1]))
                 for k, (c, j) in enumerate(zip(classes, prefixes.tolist())))


# Keys of the choices of per-class thresholds: the totals that each cap reads.
_CAP_KEYS = {"handoff_gap": ("acted",), "error_gap": ("acted", "wrong"), "value_gap": ("gain",)}
_DEFAULT_MAX_CHOICES = 200_000
# Combining a class's candidates with the choices so far forms at most this many times max_choices pairs at once.
_PAIRS_PER_CHOICE = 20


def _threshold(run: SortedRun, k: int) -> float | None:
    return None if k == 0 else float(run.thresholds[k - 1])


def fit_segments(
    predictions: Predictions,
    segments,
    values,
    *,
    caps: SegmentCaps | None = None,
    column: str | None = None,
    confidence_level: float = 0.95,
    risk_confidence: float = 0.9,
    search_budget: int = _DEFAULT_SEARCH_BUDGET,
    rule: str = "threshold",
    max_choices: int = _DEFAULT_MAX_CHOICES,
) -> SegmentFit:
    """One threshold per segment (or per-class thresholds per segment), the most valuable in total within
    ``caps``.

    Parameters
    ----------
    predictions : Predictions
        The labelled tuning split, n items, ``sample_weight`` respected (calibrate it first if you want).
    segments : array-like of shape (n,)
        Each item's segment: any hashable labels, compared as text (:func:`segment_labels`).
    values : UseCase, ValueMatrix, or mapping segment -> UseCase / ValueMatrix
        One set of values for every segment, or each segment's own (in one currency).
    caps : SegmentCaps, optional
        The largest allowed gaps between segments; none: each segment's own best threshold.
    column : str, optional
        The segment column's name, recorded in the policy (JSON, serving).
    confidence_level, risk_confidence : float
        Of the per-segment value intervals and error-rate bounds (:func:`evaluate_segments`).
    search_budget : int
        Most (band combinations x candidates) to search exactly; beyond it the bands are thinned
        (``exact=False``).
    rule : {"threshold", "class_thresholds"}
        What each segment sets: one threshold, or a threshold per predicted class (each segment's exact
        per-class fit without caps).
    max_choices : int
        ``rule="class_thresholds"`` with caps: most choices of per-class thresholds kept per segment (those with
        the same capped figures count once); beyond it they are thinned (``exact=False``).

    Returns
    -------
    SegmentFit

    Examples
    --------
    >>> import valuecore as vc
    >>> p = vc.Predictions.from_top_label(["a"] * 6, [0.9, 0.8, 0.6, 0.9, 0.7, 0.6], ["a", "a", "b", "a", "b", "a"],
    ...                                  classes=["a", "b"])
    >>> fit = fit_segments(p, ["x", "x", "x", "y", "y", "y"], vc.UseCase(1, 0, -1))
    >>> fit.policy.thresholds, fit.cap_cost_per_item
    ((('x', 0.8), ('y', 0.9)), 0.0)
    >>> capped = fit_segments(p, ["x", "x", "x", "y", "y", "y"], vc.UseCase(1, 0, -1), caps=SegmentCaps(handoff_gap=0))
    >>> capped.policy.thresholds, round(capped.cap_cost_per_item, 4)
    ((('x', 0.9), ('y', 0.9)), 0.1667)
    """
    caps = SegmentCaps() if caps is None else caps
    if rule not in SEGMENT_RULES:
        raise ValueError(f"rule must be one of {list(SEGMENT_RULES)}, got {rule!r}")
    predictions.require_labels("tuning a segment policy")
    codes, names = segment_labels(segments, predictions.n, name=column or "segment")
    per_values = _values_per_segment(values, names)
    runs, seg_values = [], []
    for code, name in enumerate(names):
        _check_value_range(per_values[name])
        runs.append(presort(predictions.subset(codes == code)))
        seg_values.append(per_values[name])
    own = [fit_policy(rule, run, v) for run, v in zip(runs, seg_values)]
    if rule == "threshold":
        unconstrained = SegmentPolicy(tuple(zip(names, (p.threshold for p in own))), column=column)
    else:
        unconstrained = SegmentPolicy(column=column,
                                      class_thresholds=tuple(zip(names, (p.class_thresholds for p in own))))
    free_eval = evaluate_segments(unconstrained, predictions, segments, per_values,
                                  confidence_level=confidence_level, risk_confidence=risk_confidence)
    n_items = free_eval.n_items
    free_total = free_eval.value_total
    wanted = caps.as_dict()
    scale = max([1.0] + [float(np.max(np.abs(v.for_classes(p.predictions.classes).values)))
                         for v, p in zip(seg_values, runs)])
    tolerances = {k: CAP_TOLERANCE * (scale if k == "value_gap" else 1.0) for k in wanted}
    holds = all(not (getattr(free_eval, k) > cap + tolerances[k]) for k, cap in wanted.items())

    def result(policy, evaluation, feasible, total, exact, n_bands, n_choices=0):
        cost = (free_total - total) / n_items if feasible and n_items > 0 else math.nan
        return SegmentFit(policy=policy, evaluation=evaluation, unconstrained=unconstrained, caps=caps,
                          feasible=feasible, value_total=total if feasible else math.nan,
                          unconstrained_value_total=free_total, cap_cost_per_item=cost, n_items=n_items,
                          exact=exact, upper_bound=free_total, n_bands=n_bands, values=per_values, rule=rule,
                          n_choices=n_choices)

    if holds:
        return result(unconstrained, free_eval, True, free_total, True, 0)
    if rule == "threshold":
        cands, choices, n_choices, complete = _candidates(runs, seg_values), None, 0, True
    else:
        keys = tuple(k for k in ("acted", "wrong", "gain") if any(k in _CAP_KEYS[cap] for cap in wanted))
        cands, choices = _class_candidates(runs, seg_values, keys, max(1, int(max_choices)))
        n_choices, complete = int(cands.value.size), all(c.exact for c in choices)
    found = _search(cands, wanted, tolerances, len(names), int(search_budget))
    if found is None:  # with thinned choices, a choice holding the caps may have been left out
        return result(unconstrained, free_eval, False, math.nan, complete, 0, n_choices)
    _, chosen, exact, n_bands = found
    if rule == "threshold":
        policy = SegmentPolicy(tuple((name, _threshold(run, k)) for name, run, k in zip(names, runs, chosen)),
                               column=column)
    else:
        policy = SegmentPolicy(column=column, class_thresholds=tuple(
            (name, _class_thresholds(run, c.choice[k])) for name, run, c, k in zip(names, runs, choices, chosen)))
    evaluation = evaluate_segments(policy, predictions, segments, per_values,
                                   confidence_level=confidence_level, risk_confidence=risk_confidence)
    return result(policy, evaluation, True, evaluation.value_total, exact and complete, n_bands, n_choices)
