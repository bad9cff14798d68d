"""A shortlist instead of a blank hand-off: act, offer a short list, or hand off.

Seed 000's Appendix A ("Ranking/alternatives"): when a person picks the answer
from a drop-down, a list of the model's top classes that holds the right one is
worth more than a blank form. Three tiers by confidence::

    confidence >= threshold                     act automatically
    list_threshold <= confidence < threshold    hand off with a shortlist
    confidence < list_threshold                 blank hand-off (the values' hand-off)

The use case gives, per list size ``k``, the value of a hand-off whose list
holds the true class and of one whose list misses it. Two list rules:

* ``top_k``: the ``k`` most probable classes (ties in probability go to the
  lower class index, as ``argmax`` does).
* ``cumulative``: the smallest set of most probable classes whose summed
  probability reaches ``level`` (a conformal-style set); its size varies by
  item, and a size the use case gives no value for is a blank hand-off.

Tuning is exact: for each candidate rule (every ``k`` given, or every distinct
cumulative level of the tuning split) the two thresholds are the two-tier scan
over every pair of distinct confidences (``best_tier_pair``); ties go to the
highest automatic threshold, then the highest list threshold, then the
smallest ``k`` (or level). Needs the probability vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .policy import Policy
from .._model.predictions import Predictions
from .sorting import SortedRun, cumulative_gain, group_cumulative
from .._model.tier_values import SHORTLIST_RULES, ShortlistValues, check_shortlist_spec  # noqa: F401  (re-exported)
from .twotier import _handoff_values, best_tier_pair
from .._model.values import Values

__all__ = [
    "SHORTLIST_RULES",
    "ShortlistValues",
    "ShortlistResult",
    "fit_shortlist",
    "evaluate_shortlist",
    "shortlist_item_values",
    "shortlist_sets",
    "shortlist_levels",
    "shortlist_level_grid",
]

# Above this many (candidate levels x items) the cumulative rule is tuned over a
# stated grid of levels rather than every distinct one.
EXACT_LEVEL_BUDGET = 50_000_000


def _require_proba(predictions: Predictions, what: str) -> np.ndarray:
    if predictions.proba is None:
        raise ValueError(f"{what} needs each item's probability vector (a shortlist is read off it); this run "
                         "gives only the predicted class and its confidence")
    return np.asarray(predictions.proba, dtype=np.float64)


def _true_rank(proba: np.ndarray, y_true: np.ndarray) -> np.ndarray:
    """Place of the true class in each item's list (0 = first), ties to the lower class index."""
    p_true = proba[np.arange(proba.shape[0]), y_true][:, None]
    lower_index = np.arange(proba.shape[1])[None, :] < y_true[:, None]
    return ((proba > p_true) | ((proba == p_true) & lower_index)).sum(axis=1)


def _cumulative_levels(proba: np.ndarray) -> np.ndarray:
    """Summed probability of each item's 1, 2, ... most probable classes, shape (n, n_classes)."""
    return np.cumsum(-np.sort(-proba, axis=1), axis=1)


def _sizes_at_level(levels: np.ndarray, level: float) -> np.ndarray:
    """Smallest list whose summed probability reaches ``level`` (all classes if rounding never reaches it)."""
    return np.minimum((levels < level).sum(axis=1) + 1, levels.shape[1])


def shortlist_levels(predictions: Predictions) -> np.ndarray:
    """Every distinct cumulative level of a run, increasing: the candidate ``level`` values."""
    levels = _cumulative_levels(_require_proba(predictions, "a cumulative shortlist"))
    distinct = np.unique(levels)
    return distinct[(distinct > 0) & (distinct <= 1)] if distinct.size else distinct


def _list_values(sizes, rank, values: ShortlistValues, handoff: np.ndarray) -> np.ndarray:
    """Unweighted value of handing each item off with its list (a blank hand-off where no value is given)."""
    sizes = np.broadcast_to(np.asarray(sizes), rank.shape)
    out = handoff.copy()
    for k, v_in, v_out in values.by_size:
        here = sizes == k
        out[here] = np.where(rank[here] < k, v_in, v_out)
    return out


def fit_shortlist(run: SortedRun, values: Values, shortlist_values, *, rule: str = "top_k",
                  calibration=None, levels=None) -> Policy:
    """Tune the act and list thresholds and the list size (or level) exactly on a labelled split.

    Parameters
    ----------
    run : SortedRun
        Labelled tuning split with probability vectors, presorted (calibrated
        first if the policy is).
    values : UseCase or ValueMatrix
        Values of acting and of a blank hand-off.
    shortlist_values : ShortlistValues or mapping
    rule : {"top_k", "cumulative"}
    calibration : mapping, optional
    levels : array-like, optional
        For ``cumulative``: the levels searched. Default: every distinct level
        of the split (exact); pass a grid when that is too many.

    Examples
    --------
    >>> import valuecore as vc
    >>> p = vc.Predictions.from_proba([[0.9, 0.05, 0.05], [0.5, 0.4, 0.1], [0.4, 0.35, 0.25]],
    ...                               y_true=[0, 1, 2])
    >>> policy = fit_shortlist(vc.presort(p), vc.UseCase(1, 0, -4), {"2": [0.5, -0.1]})
    >>> policy.threshold, policy.shortlist["list_threshold"], policy.shortlist["k"]
    (0.9, 0.5, 2)
    """
    shortlist_values = ShortlistValues.from_dict(shortlist_values)
    if rule not in SHORTLIST_RULES:
        raise ValueError(f"unknown shortlist rule {rule!r}; expected one of {list(SHORTLIST_RULES)}")
    predictions = run.predictions
    predictions.require_labels("tuning a shortlist policy")
    proba = _require_proba(predictions, "a shortlist policy")
    too_big = [k for k in shortlist_values.sizes if k > predictions.n_classes]
    if too_big:
        raise ValueError(f"shortlist sizes {too_big} exceed the {predictions.n_classes} classes of the run")
    extra = {"calibration": calibration} if calibration else {}
    spec = {"rule": rule, "values": shortlist_values.to_dict(), "list_threshold": None}
    act_cum = cumulative_gain(run, values)
    handoff = _handoff_values(predictions, values.for_classes(predictions.classes))
    rank = _true_rank(proba, predictions.y_true)
    weight = predictions.sample_weight
    if rule == "top_k":
        candidates = shortlist_values.sizes
        sizes_of = lambda k: k  # noqa: E731
    else:
        all_levels = _cumulative_levels(proba)
        candidates = shortlist_levels(predictions) if levels is None else np.unique(np.asarray(levels, float))
        sizes_of = lambda level: _sizes_at_level(all_levels, level)  # noqa: E731
    best = None
    for candidate in candidates:
        list_gain = (_list_values(sizes_of(candidate), rank, shortlist_values, handoff) - handoff) * weight
        i, j, total = best_tier_pair(act_cum, group_cumulative(run, list_gain))
        # strictly better only: ties keep the earlier (smaller) k or level
        if best is None or total > best[0] or (total == best[0] and (i, j) < best[1:3]):
            best = (total, i, j, candidate)
    if best is None:  # no item, so no cumulative level: list nothing
        return Policy("shortlist", threshold=None, shortlist=spec, **extra)
    _, i, j, candidate = best
    spec["list_threshold"] = None if j == 0 else float(run.thresholds[j - 1])
    if rule == "top_k":
        spec["k"] = int(candidate)
    else:
        spec["level"] = float(candidate)
    return Policy("shortlist", threshold=None if i == 0 else float(run.thresholds[i - 1]), shortlist=spec, **extra)


def _tiers(policy: Policy, calibrated: Predictions) -> np.ndarray:
    """0 act, 1 hand off with a list, 2 blank hand-off; shape (n,)."""
    auto = np.inf if policy.threshold is None else policy.threshold
    listed = policy.shortlist["list_threshold"]
    listed = np.inf if listed is None else listed
    confidence = calibrated.confidence
    return np.where(confidence >= auto, 0, np.where(confidence >= listed, 1, 2)).astype(np.int64)


def _item_sizes(policy: Policy, calibrated: Predictions) -> np.ndarray:
    """Size of each item's list under the policy's rule, whatever its tier; shape (n,)."""
    proba = _require_proba(calibrated, "a shortlist policy")
    spec = policy.shortlist
    if spec["rule"] == "top_k":
        return np.full(calibrated.n, spec["k"] if spec["k"] is not None else 0)
    if spec["level"] is None:
        return np.zeros(calibrated.n, np.int64)
    return _sizes_at_level(_cumulative_levels(proba), spec["level"])


def _item_sizes_and_ranks(policy: Policy, calibrated: Predictions) -> tuple[np.ndarray, np.ndarray]:
    return _item_sizes(policy, calibrated), _true_rank(_require_proba(calibrated, "a shortlist policy"),
                                                       calibrated.y_true)


# Rows ranked at a time by shortlist_sets: its partial sorts copy this many rows, whatever the class count.
_LIST_BLOCK = 4096
# The first number of classes a cumulative list is looked for among (then four times as many, and so on).
_FIRST_WIDTH = 8


def shortlist_sets(policy: Policy, predictions: Predictions) -> tuple[np.ndarray, np.ndarray]:
    """The list each item is handed off with: (order, sizes).

    ``order`` (n, m) ranks, for each listed item, its ``m`` most probable classes,
    most probable first (ties to the lower class index, as the valuation ranks
    the true class), ``m`` being the longest list shown (-1 fills the rest, and
    the rows of items not listed); ``sizes`` (n,) is how many classes the list
    shows, 0 for an item acted on or handed off blank (including a list size
    the values do not price). The list of item ``i`` is ``order[i, :sizes[i]]``.
    Reads the recalibrated probabilities, like the policy's decisions.

    Only the listed items are ranked, and only as far as their lists go (a
    partial sort by blocks of rows): 10^5 items of 200 classes take no sorted
    copy of their probabilities.
    """
    if policy.kind != "shortlist":
        raise ValueError(f"not a shortlist policy: {policy.kind!r}")
    calibrated = policy.calibrate(predictions)
    proba = _require_proba(calibrated, "a shortlist policy")
    spec = policy.shortlist
    rows = np.flatnonzero(_tiers(policy, calibrated) == 1)
    sizes = np.zeros(calibrated.n, np.int64)
    if spec["rule"] == "top_k":
        sizes[rows] = 0 if spec["k"] is None else spec["k"]
    elif spec["level"] is not None:
        sizes[rows] = _sizes_reaching(proba, rows, spec["level"])
    sizes[~np.isin(sizes, ShortlistValues.from_dict(spec["values"]).sizes)] = 0  # a size without value: blank
    rows = rows[sizes[rows] > 0]
    width = min(int(sizes.max(initial=0)), proba.shape[1])
    order = np.full((calibrated.n, width), -1, dtype=np.int64)
    if width:
        order[rows] = _top_classes(proba, rows, width)
    return order, sizes


def _top_classes(proba: np.ndarray, rows: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` most probable classes of each of ``rows``, most probable first, ties to the lower
    index (as a stable sort of every class ranks them); shape (len(rows), width)."""
    n_classes = proba.shape[1]
    out = np.empty((len(rows), width), dtype=np.int64)
    for start in range(0, len(rows), _LIST_BLOCK):
        block = proba[rows[start:start + _LIST_BLOCK]]
        if width >= n_classes:
            out[start:start + len(block)] = np.argsort(-block, axis=1, kind="stable")
            continue
        kth = -np.partition(-block, width - 1, axis=1)[:, width - 1:width]  # each row's width-th largest value
        above = block > kth
        tied = block == kth
        wanted = width - above.sum(axis=1, keepdims=True)  # of the tied classes, the first ones by index
        chosen = above | (tied & (np.cumsum(tied, axis=1) <= wanted))
        index = np.nonzero(chosen)[1].reshape(-1, width)  # exactly ``width`` a row, in index order
        ranked = np.argsort(-np.take_along_axis(block, index, axis=1), axis=1, kind="stable")
        out[start:start + len(block)] = np.take_along_axis(index, ranked, axis=1)
    return out


def _sizes_reaching(proba: np.ndarray, rows: np.ndarray, level: float) -> np.ndarray:
    """The cumulative rule's list size of each of ``rows``: :func:`_sizes_at_level` of the full sort, found
    among the top 8, 32, 128... classes (the prefix sums of the top classes are the full sort's)."""
    n_classes = proba.shape[1]
    sizes = np.empty(len(rows), dtype=np.int64)
    for start in range(0, len(rows), _LIST_BLOCK):
        todo = np.arange(start, min(start + _LIST_BLOCK, len(rows)))
        width = min(_FIRST_WIDTH, n_classes)
        while todo.size:
            block = proba[rows[todo]]
            top = _top_classes(block, np.arange(len(todo)), width)
            levels = np.cumsum(np.take_along_axis(block, top, axis=1), axis=1)
            done = (levels[:, -1] >= level) | (width == n_classes)
            sizes[todo[done]] = np.minimum((levels[done] < level).sum(axis=1) + 1, n_classes)
            todo = todo[~done]
            width = min(width * 4, n_classes)
    return sizes


def shortlist_item_values(policy: Policy, predictions: Predictions, values: Values) -> np.ndarray:
    """Per-item realised value of a shortlist policy, shape (n,), unweighted."""
    if policy.kind != "shortlist":
        raise ValueError(f"not a shortlist policy: {policy.kind!r}")
    predictions.require_labels("the realised value")
    calibrated = policy.calibrate(predictions)
    tiers = _tiers(policy, calibrated)
    sizes, rank = _item_sizes_and_ranks(policy, calibrated)
    matrix = values.for_classes(predictions.classes)
    handoff = _handoff_values(predictions, matrix)
    acted = matrix.values[predictions.y_true, calibrated.y_pred]
    listed = _list_values(sizes, rank, ShortlistValues.from_dict(policy.shortlist["values"]), handoff)
    return np.select([tiers == 0, tiers == 1], [acted, listed], default=handoff)


@dataclass(frozen=True, eq=False)
class ShortlistResult:
    """Realised value and volumes of a shortlist policy (weighted counts).

    Attributes
    ----------
    n_items, value_total, value_per_item : float
    n_auto, n_listed, n_handoff : float
        Items acted on / handed off with a list / handed off blank (a list of
        a size with no value is not shown: those items count as blank).
    n_auto_wrong : float
        Wrong answers acted on.
    n_listed_hit : float
        Listed items whose list holds the true class.
    mean_list_size : float
        Average size of the lists shown (0 when none is).
    """

    n_items: float
    value_total: float
    value_per_item: float
    n_auto: float
    n_listed: float
    n_handoff: float
    n_auto_wrong: float
    n_listed_hit: float
    mean_list_size: float

    def to_dict(self) -> dict:
        return {
            "n_auto": self.n_auto,
            "n_listed": self.n_listed,
            "n_handoff": self.n_handoff,
            "n_auto_wrong": self.n_auto_wrong,
            "n_listed_hit": self.n_listed_hit,
            "mean_list_size": self.mean_list_size,
        }


def evaluate_shortlist(policy: Policy, predictions: Predictions, values: Values) -> ShortlistResult:
    """Realised value of a shortlist policy on a labelled split. O(n n_classes).

    Examples
    --------
    >>> import valuecore as vc
    >>> p = vc.Predictions.from_proba([[0.9, 0.05, 0.05], [0.5, 0.4, 0.1], [0.4, 0.35, 0.25]],
    ...                               y_true=[0, 1, 2])
    >>> policy = vc.Policy("shortlist", threshold=0.9, shortlist={
    ...     "rule": "top_k", "k": 2, "list_threshold": 0.5, "values": {"2": [0.5, -0.1]}})
    >>> r = evaluate_shortlist(policy, p, vc.UseCase(1, 0, -4))
    >>> r.value_total, r.n_auto, r.n_listed, r.n_handoff, r.n_listed_hit
    (1.5, 1.0, 1.0, 1.0, 1.0)
    """
    per_item = shortlist_item_values(policy, predictions, values)
    weight = predictions.sample_weight
    calibrated = policy.calibrate(predictions)
    tiers = _tiers(policy, calibrated)
    sizes, rank = _item_sizes_and_ranks(policy, calibrated)
    # a list of a size the use case gives no value for is not shown: a blank hand-off
    listed = (tiers == 1) & np.isin(sizes, ShortlistValues.from_dict(policy.shortlist["values"]).sizes)
    n_items = predictions.total_weight
    total = float(per_item @ weight)
    n_listed = float(weight[listed].sum())
    return ShortlistResult(
        n_items=n_items,
        value_total=total,
        value_per_item=total / n_items if n_items > 0 else 0.0,
        n_auto=float(weight[tiers == 0].sum()),
        n_listed=n_listed,
        n_handoff=float(weight[(tiers != 0) & ~listed].sum()),
        n_auto_wrong=float(weight[(tiers == 0) & ~calibrated.correct].sum()),
        n_listed_hit=float(weight[listed & (rank < sizes)].sum()),
        mean_list_size=float(sizes[listed] @ weight[listed]) / n_listed if n_listed > 0 else 0.0,
    )


# ------------------------------------------------------------- the pipeline's view
# How many levels the cumulative rule searches when every distinct one is too many.
LEVEL_GRID_SIZE = 1000


def fit_shortlist_for_pipeline(run: SortedRun | None, values: Values, shortlist_values, *, rule: str = "top_k",
                               calibration=None) -> tuple[Policy, list, list]:
    """(policy, constraint records, notes) as ``fit_constrained`` returns them.

    The cumulative rule searches every distinct level unless levels times items
    exceed ``EXACT_LEVEL_BUDGET``; then it searches ``LEVEL_GRID_SIZE`` of them,
    evenly spread by rank, and a note says so.
    """
    if run is None:
        raise ValueError("a shortlist policy is tuned on a labelled split")
    if run.predictions.proba is None and (calibration or {}).get("method") == "isotonic":
        raise ValueError("isotonic calibration recalibrates only the top-label confidence, not the probability "
                         "vectors a shortlist is read off: use calibration none, temperature or platt")
    levels, notes = None, []
    if rule == "cumulative":
        levels, n_distinct = shortlist_level_grid(run.predictions)
        if levels.size < n_distinct:
            notes.append(f"the shortlist level was searched over {levels.size} of the {n_distinct} distinct "
                         "cumulative levels of the tuning split (evenly spread by rank), not all of them")
    policy = fit_shortlist(run, values, shortlist_values, rule=rule, calibration=calibration, levels=levels)
    return policy, [], notes


def shortlist_level_grid(predictions: Predictions) -> tuple[np.ndarray, int]:
    """The levels the cumulative rule searches, and how many distinct levels there are.

    Every distinct level (exact) unless levels times items exceed
    ``EXACT_LEVEL_BUDGET``; then ``LEVEL_GRID_SIZE`` of them, evenly spread by
    rank. Checked before any tuning, so a large split never starts the exact search.
    """
    every = shortlist_levels(predictions)
    if every.size * max(predictions.n, 1) <= EXACT_LEVEL_BUDGET:
        return every, every.size
    picked = np.unique(np.linspace(0, every.size - 1, LEVEL_GRID_SIZE).round().astype(np.intp))
    return every[picked], every.size


def shortlist_value_range(policy: Policy, predictions: Predictions, values: Values) -> tuple[float, float]:
    """Lowest and highest value one item can take under a shortlist policy: a matrix cell or a list's value."""
    cells = values.for_classes(predictions.classes).values
    listed = [v for pair in policy.shortlist["values"].values() for v in pair]
    return min(float(cells.min()), *listed), max(float(cells.max()), *listed)

