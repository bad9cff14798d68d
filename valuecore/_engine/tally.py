"""Tallies: a decision's items counted per (true class, action), so a new value costs O(C^2), not O(n).

A one-tier rule's realised value of an item is a cell of the value matrix,
``V[y_true, action]``. For the threshold, class-threshold and accept-all
rules the actions depend on the thresholds only, so the *tally* of a decision
-- per category ``y * (C + 1) + action``: the items of positive weight, the sum
of their weights and of their squared weights -- is the same for every value
that keeps the thresholds. The mean value per item and its bounded interval
need nothing more than those sums grouped by distinct value
(:class:`Grouped`); :func:`valuecore.mean_interval` itself goes through the
same grouping of its per-item values, so both paths share one set of formulas.

Exactness: with whole-number weights (unit weights included) every sum is an
integer, exact while it stays below 2**53 (the squared weights' total is
checked), so the tally path and the per-item path give the same numbers bit
for bit. With fractional weights the sums of a group are added in
another order (per category, then across the categories of one value, instead
of item by item), so each group's weight may differ by a few ulps of the
group's weight (at most ``n_categories`` roundings of a positive sum); the mean
and the interval's ends then differ by a relative ``~ 4 * eps * n_groups`` of
the value scale (tested at ``1e-12`` relative to ``max(|values|)``).

The caches hang on the :class:`~valuecore.Predictions` object of a split (weakly:
they go with it), keyed by the decision (the policy's thresholds, or for the
expected-value rule the items it acts on), so a value that keeps every
threshold recomputes no item. A threshold rule that moves is read from sums kept
along the split's class order (:class:`_Prefixes`): it hands over a prefix of
each predicted class's items, so its tally, and the joint tally of two such
rules, costs O(C * (C + 64)) whatever moved; its per-item categories are made
only when a pairing with another kind of rule asks for them.
"""

from __future__ import annotations

import functools
import math
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

__all__ = ["Grouped", "group_items", "group_cells"]


# Item values take a few distinct values (cells of the value matrix). Beyond this many, sort every item.
_FEW_DISTINCT = 8


def _few_distinct(values: np.ndarray) -> np.ndarray | None:
    """The sorted distinct values when there are few and numpy finds them by hashing (numpy >= 2.3), else None."""
    try:
        distinct = np.unique(values, sorted=False)  # a hash table, O(n)
    except TypeError:  # numpy before 2.3 always sorts
        return None
    if distinct.size > _FEW_DISTINCT:
        return None
    distinct = np.sort(distinct)
    return None if np.any(distinct[1:] == distinct[:-1]) else distinct  # -0.0 beside 0.0: let sorting merge them


@dataclass(frozen=True)
class Grouped:
    """Items of positive weight grouped by their value; every array has shape (G,), values ascending.

    Attributes
    ----------
    values : ndarray of float64
        The distinct values (``-0.0`` and ``0.0`` are one group).
    count : ndarray of float64
        Items of positive weight holding each value (whole numbers).
    weight, weight_sq : ndarray of float64
        Sum of their weights and of their squared weights.
    integral : bool
        Every weight of the sample (zero weights included) is a whole number.
    weight_max : float or None
        The largest weight of the sample: under sampling weights the bounded interval allows for one more
        item of this weight at the worst value. None when not known (then ``sqrt(max(weight_sq))``, which
        is at least as large, stands in for it).
    """

    values: np.ndarray
    count: np.ndarray
    weight: np.ndarray
    weight_sq: np.ndarray
    integral: bool
    weight_max: float | None = None

    @property
    def total(self) -> float:
        return float(self.weight.sum())


def _cells(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct ``values`` and each value's index into them, shape (G,) and (n,)."""
    distinct = _few_distinct(values)
    if distinct is None:
        return np.unique(values, return_inverse=True)
    cell = np.zeros(values.size, dtype=np.intp)
    for value in distinct[:-1]:
        cell += values > value
    return distinct, cell


def group_items(values: np.ndarray, weight: np.ndarray, integral: bool) -> Grouped:
    """:class:`Grouped` of per-item ``values`` (n,) with ``weight`` (n,) (validated: finite, non-negative)."""
    keep = weight > 0
    if not keep.all():
        values, weight = values[keep], weight[keep]
    distinct, cell = _cells(values)
    size = distinct.size
    return Grouped(distinct, np.bincount(cell, minlength=size).astype(np.float64),
                   np.bincount(cell, weights=weight, minlength=size),
                   np.bincount(cell, weights=weight * weight, minlength=size), integral,
                   float(weight.max()) if weight.size else None)


def group_cells(cell_values: np.ndarray, count: np.ndarray, weight: np.ndarray, weight_sq: np.ndarray,
                integral: bool, weight_max: float | None = None) -> Grouped:
    """:class:`Grouped` of a tally: per cell (K,) its value, items of positive weight, weight and squared weight.

    Cells that hold the same value are added in cell order. ``weight_max``: the largest weight of the items.
    """
    occupied = count > 0
    distinct, cell = np.unique(cell_values[occupied], return_inverse=True)
    size = distinct.size
    return Grouped(distinct, np.bincount(cell, weights=count[occupied], minlength=size),
                   np.bincount(cell, weights=weight[occupied], minlength=size),
                   np.bincount(cell, weights=weight_sq[occupied], minlength=size), integral, weight_max)


# ------------------------------------------------------------------ tallies of decisions
@dataclass(frozen=True, eq=False)
class Tally:
    """One decision on one split, counted per category ``y_true * (C + 1) + action``; arrays of shape (K,).

    ``K = C * (C + 1)``. ``categories`` (n,): each item's category (the smallest unsigned integer type
    that holds K), for the paired tallies and the per-item values; made on first use when the tally was
    counted without it (``make``). ``ranks``: for a threshold rule counted from the split's prefix sums,
    the items it hands over in each predicted class (:class:`_Prefixes`), else None. ``weight_max``: the
    split's largest weight (:attr:`Grouped.weight_max`).
    """

    count: np.ndarray
    weight: np.ndarray
    weight_sq: np.ndarray
    known: np.ndarray | None = None
    make: object = None
    ranks: tuple | None = None
    prefixes: object = None
    weight_max: float | None = None

    @property
    def categories(self) -> np.ndarray:
        if self.known is None:  # two threads may both make it: the same array, so either one does
            object.__setattr__(self, "known", self.make())
        return self.known

    @property
    def size(self) -> int:
        return int(self.count.size)


def _category_dtype(size: int):
    return np.uint8 if size <= 256 else np.uint16 if size <= 65536 else np.uint32


def _sums(cells: np.ndarray, cache: "_SplitCache", size: int):
    """(items of positive weight, weight, squared weight) per cell, shape (size,) each."""
    if cache.unit:  # one count does for all three, exactly
        count = np.bincount(cells, minlength=size).astype(np.float64)
        return count, count, count
    count = np.bincount(cells if cache.positive is None else cells[cache.positive], minlength=size)
    return (count.astype(np.float64), np.bincount(cells, weights=cache.weight, minlength=size),
            np.bincount(cells, weights=cache.weight_sq, minlength=size))


class _SplitCache:
    """What one split's decisions share across values: tallies per decision, pairings, EV screens."""

    _MAX_DECISIONS = 24  # LRU: categories are one byte per item
    _MAX_PAIRS = 256  # joint tallies are small (occupied cells only)

    def __init__(self, predictions):
        if predictions.has_unit_weights:  # every item counts once: the ones are never made for a tally
            weight, self.unit, self.integral = None, True, True
            self.exact_sums = predictions.n < 2**52
        else:
            weight = predictions.sample_weight
            self.unit = bool((weight == 1).all())
            self.integral = self.unit or bool(np.all(weight == np.round(weight)))
            # Whole-number sums below 2**53 are exact in any order: a tally may then be updated in place. The
            # dot product rounds (2**26, 2**26, 1, 1 gives 2**53 for 2**53 + 2), so it must stay below 2**52:
            # its relative error, at most n * 2**-53, cannot double it.
            self.exact_sums = self.integral and float(np.dot(weight, weight)) < 2.0**52
        self.weight = weight  # None for unit weights: every reader asks ``unit`` first
        self.weight_max = 1.0 if weight is None else float(weight.max()) if weight.size else None
        self.positive = None if self.unit or bool((weight > 0).all()) else weight > 0
        self.weight_sq = None if self.unit else weight * weight
        self.decisions: OrderedDict = OrderedDict()
        self.pairs: OrderedDict = OrderedDict()
        self.pairings: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.calibrated: dict = {}
        self.screens: dict = {}
        self.lock = threading.Lock()  # sessions share a workspace's splits: the LRU stores change under it
        self._outcomes = None

    def outcomes(self, predictions) -> tuple[np.ndarray, np.ndarray]:
        """Each item's category when acted on (its predicted class) and when handed over, shape (n,) each."""
        if self._outcomes is None:
            n_classes = predictions.n_classes
            dtype = _category_dtype(n_classes * (n_classes + 1))
            row = (predictions.y_true * (n_classes + 1)).astype(dtype)
            self._outcomes = (row + predictions.y_pred.astype(dtype), row + dtype(n_classes))
        return self._outcomes


_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def split_cache(predictions) -> _SplitCache:
    cache = _CACHES.get(predictions)
    if cache is None:
        with _CACHES_LOCK:
            cache = _CACHES.get(predictions)
            if cache is None:
                cache = _CACHES[predictions] = _SplitCache(predictions)
    return cache


def _remember(cache: _SplitCache, store: OrderedDict, key, value, limit: int):
    with cache.lock:
        store[key] = value
        store.move_to_end(key)
        while len(store) > limit:
            store.popitem(last=False)
    return value


def _recall(cache: _SplitCache, store: OrderedDict, key):
    """``store[key]`` (now the most recent), or None."""
    with cache.lock:
        found = store.get(key)
        if found is not None:
            store.move_to_end(key)
    return found


def _tally(predictions, categories: np.ndarray) -> Tally:
    size = predictions.n_classes * (predictions.n_classes + 1)
    cache = split_cache(predictions)
    return Tally(*_sums(categories, cache, size), known=categories, weight_max=cache.weight_max)


def tally_of_actions(predictions, actions: np.ndarray) -> Tally:
    """The :class:`Tally` of ``actions`` (n,) on a labelled split."""
    n_classes = predictions.n_classes
    dtype = _category_dtype(n_classes * (n_classes + 1))
    return _tally(predictions, (predictions.y_true * (n_classes + 1) + actions).astype(dtype))


def cached_tally(predictions, key, categories) -> Tally:
    """The tally of the decision ``key`` on ``predictions``; ``categories()`` gives its categories (n,) when
    not cached."""
    cache = split_cache(predictions)
    found = _recall(cache, cache.decisions, key)
    if found is not None:
        return found
    return _remember(cache, cache.decisions, key, _tally(predictions, categories()), cache._MAX_DECISIONS)


def grouped_tally(tally: Tally, cell_values: np.ndarray, integral: bool, groups=None) -> Grouped:
    """:class:`Grouped` of a tally priced by ``cell_values`` (K,): the value matrix, raveled.

    ``groups``: :func:`cell_groups` of ``cell_values``, when the same values price many tallies.
    """
    if groups is None:
        return group_cells(cell_values, tally.count, tally.weight, tally.weight_sq, integral, tally.weight_max)
    distinct, cell = groups
    size = distinct.size
    # Cells holding no item add 0.0 to their value's sums, which changes no sum: the same numbers, bit for bit.
    count = np.bincount(cell, weights=tally.count, minlength=size)
    weight = np.bincount(cell, weights=tally.weight, minlength=size)
    weight_sq = np.bincount(cell, weights=tally.weight_sq, minlength=size)
    occupied = count > 0
    if occupied.all():
        return Grouped(distinct, count, weight, weight_sq, integral, tally.weight_max)
    return Grouped(distinct[occupied], count[occupied], weight[occupied], weight_sq[occupied], integral,
                   tally.weight_max)


def cell_groups(cell_values: np.ndarray):
    """(sorted distinct values, each cell's index into them) of a raveled value matrix, for :func:`grouped_tally`;
    None when a cell holds -0.0 (which of two equal zeros names the group would depend on the cells occupied)."""
    if np.any((cell_values == 0) & np.signbit(cell_values)):
        return None
    return np.unique(cell_values, return_inverse=True)


@dataclass(frozen=True)
class JointTally:
    """Two decisions on the same items: occupied cells ``cell_a * K_b + cell_b`` and their sums, shape (J,) each.

    The weights are those of split a (the items of b are matched to a's rows); ``weight_max``, the largest.
    """

    cell_a: np.ndarray
    cell_b: np.ndarray
    count: np.ndarray
    weight: np.ndarray
    weight_sq: np.ndarray
    weight_max: float | None = None


# Pairs of categories counted in one dense array up to this many (12,100 for 10 classes).
_DENSE_JOINT = 1 << 20


def joint_tally(predictions_a, key_a, tally_a: Tally, predictions_b, key_b, tally_b: Tally,
                take: np.ndarray) -> JointTally:
    """The :class:`JointTally` of two decisions, cached per (decision a, split b, decision b)."""
    cache = split_cache(predictions_a)
    key = (key_a, id(predictions_b), key_b)
    found = _recall(cache, cache.pairs, key)
    if found is not None and found[0]() is predictions_b:
        return found[1]
    size_b = tally_b.size
    size = tally_a.size * size_b
    if take is None and tally_a.prefixes is not None and tally_a.prefixes is tally_b.prefixes:
        joint = tally_a.prefixes.joint(tally_a.ranks, tally_b.ranks)  # two threshold rules: O(C * (C + 64))
        _remember(cache, cache.pairs, key, (weakref.ref(predictions_b), joint), cache._MAX_PAIRS)
        return joint
    matched = tally_b.categories if take is None else tally_b.categories[take]
    if size <= _DENSE_JOINT:
        cells = tally_a.categories.astype(_category_dtype(size)) * _category_dtype(size)(size_b)
        cells += matched
        count, weight, weight_sq = _sums(cells, cache, size)
        occupied = np.flatnonzero(count > 0)
        count, weight, weight_sq = count[occupied], weight[occupied], weight_sq[occupied]
    else:  # many classes: number the pairs that occur (the same sums, item by item)
        occupied, cells = np.unique(tally_a.categories.astype(np.int64) * size_b + matched, return_inverse=True)
        count, weight, weight_sq = _sums(cells, cache, occupied.size)
        kept = count > 0
        occupied, count, weight, weight_sq = occupied[kept], count[kept], weight[kept], weight_sq[kept]
    joint = JointTally(occupied // size_b, occupied % size_b, count, weight, weight_sq, cache.weight_max)
    _remember(cache, cache.pairs, key, (weakref.ref(predictions_b), joint), cache._MAX_PAIRS)
    return joint


def joint_tallies(predictions_a, key_a, tally_a: Tally, others) -> list:
    """:func:`joint_tally` of one decision with each of ``others``, ``(predictions_b, key_b, tally_b, take)`` each.

    Two threshold rules or more of another run on the same items (not yet cached) are counted in that run's
    class order, a's categories gathered there once for them all (:class:`_Crossed`), instead of each rule's
    categories put back in item order (a scatter over n per rule); the gathered copy is dropped on return.
    The same sums, bit for bit: only for a's exact whole-number sums (:func:`_crossable`).
    """
    cache = split_cache(predictions_a)
    joints: list = [None] * len(others)
    by_run: dict = {}  # id(b's prefix sums) -> indices of others that can be read in b's class order
    for i, (predictions_b, key_b, tally_b, take) in enumerate(others):
        found = _recall(cache, cache.pairs, (key_a, id(predictions_b), key_b))
        if found is not None and found[0]() is predictions_b:
            joints[i] = found[1]
        elif (take is None and tally_b.prefixes is not None and tally_b.prefixes is not tally_a.prefixes
              and tally_a.size * tally_b.size <= _DENSE_JOINT and _crossable(predictions_a, cache, predictions_b)):
            by_run.setdefault(id(tally_b.prefixes), []).append(i)
    for indices in by_run.values():
        if len(indices) < 2:  # one rule: gathering a's categories costs what the dense count does
            continue
        crossed = _Crossed(tally_a.categories, cache, others[indices[0]][2].prefixes)
        for i in indices:
            predictions_b, key_b, tally_b, _ = others[i]
            joints[i] = crossed.joint(tally_b.ranks)
            _remember(cache, cache.pairs, (key_a, id(predictions_b), key_b), (weakref.ref(predictions_b), joints[i]),
                      cache._MAX_PAIRS)
    return [joint if joint is not None else joint_tally(predictions_a, key_a, tally_a, *other)
            for joint, other in zip(joints, others)]


def _crossable(predictions_a, cache_a: _SplitCache, predictions_b) -> bool:
    """Whether a's items can be counted in b's order bit for bit: a's sums are exact whole numbers, the same in any
    order (b's weights may differ from a's by a rounding, and fractional ones add up otherwise in another order)."""
    return cache_a.exact_sums and predictions_a.n == predictions_b.n


class _Crossed:
    """A decision on split a paired with the threshold rules of run b on the same items, in b's class order.

    ``first`` (n,): each item's category under a times the number of b's categories K, in the order of b's
    :class:`_Prefixes`, where a threshold rule of b hands over the first items of each predicted class: its
    categories there are slices of ``prefixes.handed_over`` and ``prefixes.acted``, so a pair's cells are
    ``first`` plus those slices, with no item put back in item order. The sums are a's (its weights, gathered
    into that order), counted as :func:`_sums` counts; only for a's exact whole-number sums
    (``_SplitCache.exact_sums``, :func:`_crossable`), the same in any order, so the joint tally equals the one
    counted in item order, bit for bit.
    """

    def __init__(self, categories: np.ndarray, cache_a: _SplitCache, prefixes_b):
        self.prefixes = prefixes_b
        self.size_b = size_b = prefixes_b.n_classes * (prefixes_b.n_classes + 1)
        dtype = _category_dtype(size_b * size_b)
        self.first = categories[prefixes_b.order].astype(dtype) * dtype(size_b)
        self.unit = cache_a.unit
        self.weight_max = cache_a.weight_max
        self.weight = None if cache_a.unit else cache_a.weight[prefixes_b.order]

    def joint(self, ranks_b: tuple) -> "JointTally":
        """The :class:`JointTally` of the decision (a) and b's rule that hands over the first ``ranks_b[k]`` items
        of each predicted class k."""
        prefixes = self.prefixes
        cells = np.empty_like(self.first)
        for k, rank in enumerate(ranks_b):
            start, cut, stop = prefixes.starts[k], prefixes.starts[k] + rank, prefixes.starts[k + 1]
            np.add(self.first[start:cut], prefixes.handed_over[start:cut], out=cells[start:cut])
            np.add(self.first[cut:stop], prefixes.acted[cut:stop], out=cells[cut:stop])
        size = self.size_b * self.size_b
        if self.unit:
            count = np.bincount(cells, minlength=size).astype(np.float64)
            weight = weight_sq = count
        else:
            weight_of = self.weight
            positive = weight_of > 0
            count = np.bincount(cells if positive.all() else cells[positive], minlength=size).astype(np.float64)
            weight = np.bincount(cells, weights=weight_of, minlength=size)
            weight_sq = np.bincount(cells, weights=weight_of * weight_of, minlength=size)
        occupied = np.flatnonzero(count > 0)
        return JointTally(occupied // self.size_b, occupied % self.size_b, count[occupied], weight[occupied],
                          weight_sq[occupied], self.weight_max)


def grouped_difference(joint: JointTally, values_a: np.ndarray, values_b: np.ndarray, integral: bool) -> Grouped:
    """:class:`Grouped` of ``value under a - value under b`` per item, from the joint tally (cell values raveled)."""
    return group_cells(values_a[joint.cell_a] - values_b[joint.cell_b], joint.count, joint.weight, joint.weight_sq,
                       integral, joint.weight_max)


def coverage_of(tally: Tally, n_classes: int) -> float:
    """Weighted share acted on, as :func:`valuecore.evaluate` computes it from the same confusion matrix."""
    confusion = tally.weight.reshape(n_classes, n_classes + 1)
    n_items = float(confusion.sum())
    return float(confusion[:, :n_classes].sum()) / n_items if n_items > 0 else 0.0

# ------------------------------------------------------------------ decisions of a rule
def _calibration_key(policy) -> str:
    """The recorded calibration as text (cheaper to hash than the policy's mapping)."""
    calibration = policy.calibration
    return "none" if calibration.get("method", "none") == "none" else repr(sorted(calibration.items()))


def _calibrated(policy, predictions):
    """``policy.calibrate(predictions)``, once per split and recorded calibration."""
    key = _calibration_key(policy)
    if key == "none":
        return predictions
    cache = split_cache(predictions)
    if key not in cache.calibrated:
        cache.calibrated[key] = policy.calibrate(predictions)
    return cache.calibrated[key]


def _screen(calibrated):
    """The expected-value shortcut's screen of a (calibrated) split, once (False: the shortcut does not apply)."""
    from .policy import _ev_screen

    cache = split_cache(calibrated)
    if "ev" not in cache.screens:
        cache.screens["ev"] = _ev_screen(calibrated, presort=True) or False
    return cache.screens["ev"]


@dataclass(frozen=True)
class _SortedConfidences:
    """A (calibrated) split's confidences sorted once: all of them, and those of each predicted class.

    ``order`` (n,): the items by ascending confidence (stable), ``everything`` their confidences;
    ``order_by_class`` (n,): the items by predicted class, then ascending confidence, class k's from
    ``starts[k]`` to ``starts[k + 1]``, ``by_class`` their confidences.
    """

    order: np.ndarray
    everything: np.ndarray
    order_by_class: np.ndarray
    by_class: np.ndarray
    starts: np.ndarray

    def segment(self, k: int | None) -> tuple[np.ndarray, np.ndarray]:
        """(items, their ascending confidences) of predicted class k, or of every item (None)."""
        if k is None:
            return self.order, self.everything
        start, stop = self.starts[k], self.starts[k + 1]
        return self.order_by_class[start:stop], self.by_class[start:stop]

    @functools.cached_property
    def class_confidences(self) -> list:
        """The ascending confidences of each predicted class (views), sliced once."""
        return [self.segment(k)[1] for k in range(self.starts.size - 1)]

    def class_ranks(self, thresholds) -> tuple:
        """Per predicted class, its items below the class's threshold (None: all), as :func:`_rank` counts."""
        return tuple(segment.size if t is None else int(segment.searchsorted(t, side="left"))
                     for segment, t in zip(self.class_confidences, thresholds))


def _sorted_confidences(calibrated) -> _SortedConfidences:
    cache = split_cache(calibrated)
    if "confidences" not in cache.screens:
        confidence, y_pred = calibrated.confidence, calibrated.y_pred
        order = _compact(np.argsort(confidence, kind="stable"))
        by_class = _compact(np.argsort(y_pred, kind="stable"))
        starts = np.searchsorted(y_pred[by_class], np.arange(calibrated.n_classes + 1), side="left")
        for k in range(calibrated.n_classes):
            items = by_class[starts[k]:starts[k + 1]]
            by_class[starts[k]:starts[k + 1]] = items[np.argsort(confidence[items], kind="stable")]
        cache.screens["confidences"] = _SortedConfidences(order, confidence[order], by_class, confidence[by_class],
                                                          starts)
    return cache.screens["confidences"]


def _compact(order: np.ndarray) -> np.ndarray:
    """An order of item indices in 4 bytes each when they fit (these arrays are kept per split)."""
    return order.astype(np.int32) if order.size < 2**31 else order


def _rank(ascending: np.ndarray, threshold: float | None) -> int:
    """Items below ``threshold`` (None: all): equal ranks, equal items accepted (``confidence >= threshold``)."""
    return ascending.size if threshold is None else int(np.searchsorted(ascending, threshold, side="left"))


_MAX_KNOWN_RANKS = 256  # per-class thresholds remembered per split, with the ranks they name


def _threshold_key(policy, calibrated) -> tuple:
    """The items a threshold rule accepts, named in O(log n) per threshold: ``(family, ranks)``.

    Family None: one threshold for every item (accepting all is rank 0); family "per class": one rank per
    predicted class, among the confidences of that class.
    """
    confidences = _sorted_confidences(calibrated)
    if policy.kind == "accept_all":  # the model's own abstentions (confidence below 0) rank first, handed over
        return (None, (_rank(confidences.everything, 0.0) if calibrated.has_model_abstentions else 0,))
    if policy.kind in ("class_thresholds", "calibrated_class_thresholds"):
        known = split_cache(calibrated).screens.setdefault("class ranks", {})
        found = known.get(policy.class_thresholds)  # a refit that keeps every threshold: no search
        if found is None:
            thresholds = policy.thresholds_by_index(calibrated.classes)
            found = ("per class", confidences.class_ranks([None if math.isinf(t) else float(t) for t in thresholds]))
            if len(known) >= _MAX_KNOWN_RANKS:
                known.clear()
            known[policy.class_thresholds] = found
        return found
    return (None, (_rank(confidences.everything, policy.threshold),))


def _threshold_tally(policy, predictions, calibrated, calibration: str) -> tuple[object, Tally]:
    family, ranks = _threshold_key(policy, calibrated)
    key = (calibration, family, ranks)
    cache = split_cache(predictions)
    found = _recall(cache, cache.decisions, key)
    if found is not None:
        return key, found
    if cache.exact_sums:
        prefixes = _prefixes(predictions, calibrated, calibration)
        tally = prefixes.tally(_class_ranks(family, ranks, _sorted_confidences(calibrated)))
    else:  # fractional sums: counted item by item, in item order
        tally = _tally(predictions, _threshold_categories(policy, calibrated))
    return key, _remember(cache, cache.decisions, key, tally, cache._MAX_DECISIONS)


def _class_ranks(family, ranks: tuple, confidences: _SortedConfidences) -> tuple:
    """The items a threshold rule hands over in each predicted class (a prefix of its confidences)."""
    if family is not None:
        return ranks
    starts = confidences.starts
    if ranks[0] == confidences.everything.size:
        return tuple((starts[1:] - starts[:-1]).tolist())
    # One threshold: what it accepts, ``confidence >= t``, is ``confidence >= the lowest accepted one``.
    lowest = confidences.everything[ranks[0]]
    return confidences.class_ranks([lowest] * (starts.size - 1))


# Prefix sums are kept every this many items of the class order: a threshold rule adds up fewer than this many
# items per predicted class (and 1/8 byte per item and true class is kept).
_STRIDE = 64


class _Prefixes:
    """Sums by true class along a (calibrated) split's class order, kept every ``stride`` items.

    A threshold rule (one threshold, one per class, accept all, hand all over) hands over a prefix of
    each predicted class's items in that order (``_SortedConfidences.order_by_class``), so its tally is
    read from the sums at C positions: O(C * (C + stride)) whatever it accepts, and two such rules are
    paired the same way. What is summed (S sums): the items of positive weight, their weights and squared
    weights (S = 3), or for unit weights one count, which is all three (S = 1; ``weight`` None, else the
    weights in class order); ``kept`` (n // stride + 2, S, C): the sums over the first ``j * stride``
    items, per true class. ``stride`` is ``_STRIDE`` (64) for up to 16 sums per position (10 classes
    with unit weights), more for more, so the kept sums take at most about 2 bytes an item, beside 3 bytes
    an item (8 more with weights). Only for
    whole-number weights whose sums are exact (``_SplitCache.exact_sums``): every sum is then an integer
    below 2**53, the same in any order, so these tallies equal those counted item by item, bit for bit.
    """

    def __init__(self, calibrated, cache: _SplitCache):
        confidences = _sorted_confidences(calibrated)
        cache_of_calibrated = split_cache(calibrated)
        order = confidences.order_by_class
        self.n_classes = calibrated.n_classes
        self.starts = confidences.starts
        self.order = order
        self.true_class = calibrated.y_true[order].astype(_category_dtype(self.n_classes))
        acted, handed_over = cache_of_calibrated.outcomes(calibrated)
        self.acted, self.handed_over = acted[order], handed_over[order]  # each item's two categories, in order
        self.weight = None if cache.unit else cache.weight[order]
        self.weight_max = cache.weight_max
        # At most about 2 bytes of kept sums an item: many classes (or weights) keep them further apart.
        self.stride = stride = _STRIDE * -(-self.n_classes * (1 if self.weight is None else 3) // 16)
        n_blocks = order.size // stride + 1
        per_block = self._sums(np.arange(order.size) // stride, np.arange(order.size), n_blocks)
        self.kept = np.concatenate([np.zeros((1, *per_block.shape[1:])), np.cumsum(per_block, axis=0)])
        self.at_starts = self.sums(self.starts)

    def _sums(self, rows: np.ndarray, items: np.ndarray, n_rows: int) -> np.ndarray:
        """(n_rows, S, C): per row the sums over its ``items`` (class-order positions), per true class."""
        size = n_rows * self.n_classes
        bins = rows * self.n_classes + self.true_class[items]
        if self.weight is None:
            return np.bincount(bins, minlength=size).astype(np.float64).reshape(n_rows, 1, self.n_classes)
        weight = self.weight[items]
        # the squares as _SplitCache.weight_sq makes them (the same products)
        sums = np.stack([np.bincount(bins, weights=source, minlength=size)
                         for source in ((weight > 0).astype(np.float64), weight, weight * weight)])
        return sums.reshape(-1, n_rows, self.n_classes).transpose(1, 0, 2)

    def sums(self, positions: np.ndarray) -> np.ndarray:
        """(q, S, C): the sums over the first ``positions[i]`` items of the class order, per true class."""
        stride = self.stride
        block = positions // stride
        offsets = np.arange(stride)
        live = offsets < (positions - block * stride)[:, None]
        rows = np.broadcast_to(np.arange(positions.size)[:, None], live.shape)[live]
        return self.kept[block] + self._sums(rows, (block[:, None] * stride + offsets)[live], positions.size)

    def categories(self, ranks: tuple) -> np.ndarray:
        """Each item's category (n,) when the first ``ranks[k]`` items of each predicted class k are handed over.

        Copied slice by slice in class order, then put in item order: a third of the time of comparing every
        confidence with its class's threshold.
        """
        in_order = np.empty_like(self.acted)
        for k, rank in enumerate(ranks):
            start, cut, stop = self.starts[k], self.starts[k] + rank, self.starts[k + 1]
            in_order[start:cut] = self.handed_over[start:cut]
            in_order[cut:stop] = self.acted[cut:stop]
        categories = np.empty_like(in_order)
        categories[self.order] = in_order
        return categories

    def tally(self, ranks: tuple) -> Tally:
        """The :class:`Tally` of handing over the first ``ranks[k]`` items of each predicted class k."""
        n_classes = self.n_classes
        cut = self.sums(self.starts[:-1] + np.asarray(ranks, dtype=np.intp))  # (C predicted, S, C true)
        table = np.empty((cut.shape[1], n_classes, n_classes + 1))  # (S, true class, action)
        table[:, :, :n_classes] = (self.at_starts[1:] - cut).transpose(1, 2, 0)
        table[:, :, n_classes] = (cut - self.at_starts[:-1]).sum(axis=0)
        table = table.reshape(table.shape[0], -1)
        count, weight, weight_sq = (table[0],) * 3 if self.weight is None else table
        return Tally(count, weight, weight_sq, make=lambda: self.categories(ranks), ranks=ranks, prefixes=self,
                     weight_max=self.weight_max)

    def joint(self, ranks_a: tuple, ranks_b: tuple) -> "JointTally":
        """The :class:`JointTally` of two rules of :meth:`tally` on these items (cells numbered as there)."""
        n_classes = self.n_classes
        a, b = np.asarray(ranks_a, dtype=np.intp), np.asarray(ranks_b, dtype=np.intp)
        start = self.starts[:-1]
        at = self.sums(np.concatenate([start + np.minimum(a, b), start + np.maximum(a, b)]))
        low, high = at[:n_classes], at[n_classes:]
        true_class = np.arange(n_classes)
        handed = true_class * (n_classes + 1) + n_classes  # (C true,)
        acted = true_class[None, :] * (n_classes + 1) + true_class[:, None]  # (C predicted, C true)
        handed_all = np.broadcast_to(handed, acted.shape)
        a_acts = (a < b)[:, None]  # between the two ranks one rule acts, the other hands over
        cell_a = np.concatenate([handed, np.where(a_acts, acted, handed_all).ravel(), acted.ravel()])
        cell_b = np.concatenate([handed, np.where(a_acts, handed_all, acted).ravel(), acted.ravel()])
        sums = np.concatenate([(low - self.at_starts[:-1]).sum(axis=0), _by_source(high - low),
                               _by_source(self.at_starts[1:] - high)], axis=1)  # (S, cells)
        size_b = n_classes * (n_classes + 1)
        occupied, index = np.unique(cell_a * size_b + cell_b, return_inverse=True)
        totals = [np.bincount(index, weights=row, minlength=occupied.size) for row in sums]
        kept = totals[0] > 0
        count, weight, weight_sq = (totals[0][kept],) * 3 if self.weight is None else (t[kept] for t in totals)
        occupied = occupied[kept]
        return JointTally(occupied // size_b, occupied % size_b, count, weight, weight_sq, self.weight_max)


def _by_source(sums: np.ndarray) -> np.ndarray:
    """(C predicted, S, C true) -> (S, C predicted * C true)."""
    return sums.transpose(1, 0, 2).reshape(sums.shape[1], -1)


def _prefixes(predictions, calibrated, calibration: str) -> _Prefixes:
    cache = split_cache(predictions)
    key = ("prefixes", calibration)
    if key not in cache.screens:  # two threads may both build it: equal, so either one does
        cache.screens[key] = _Prefixes(calibrated, cache)
    return cache.screens[key]


# The expected-value rule's sums are kept every this many items of its screen's order (one sum per category).
_EV_STRIDE = 1024


class _PlanPrefixes:
    """Sums per category along a (calibrated) split's expected-value screen order, kept every ``stride`` items.

    A plan of the expected-value rule (``valuecore._engine.policy._EvPlan``) acts on the items from ``plan.acted``
    on in its screen's order (ascending top share), on their predicted class, hands the others over, and
    decides its few ``exact`` items by their expected values. So its tally is the sums of the acting
    categories up to one position (the handed-over items' true classes among them), the rest of the
    totals, and O(exact) corrections: O(C^2 + stride + exact) whatever moved. ``stride`` is ``_EV_STRIDE``
    (1024) for up to 128 sums per position (10 classes with unit weights), more for more: the kept sums
    take at most about 1 byte an item, beside 2 bytes an item (10 with weights). Whole-number weights
    with exact sums only, like :class:`_Prefixes`, so the tally is bit for bit the one counted item by item.
    """

    def __init__(self, calibrated, cache: _SplitCache, screen):
        order = screen.order
        acted, handed_over = split_cache(calibrated).outcomes(calibrated)
        self.n_classes = calibrated.n_classes
        self.size = self.n_classes * (self.n_classes + 1)
        self.order = order
        self.acting = acted[order]  # each item's category when acted on, in the screen's order
        self.handing = handed_over[order]  # and when handed over
        self.weight = None if cache.unit else cache.weight[order]
        self.weight_max = cache.weight_max
        n = order.size
        # At most about 1 byte of kept sums an item: many classes (or weights) keep them further apart.
        self.stride = stride = _EV_STRIDE * -(-self.size * (1 if self.weight is None else 3) // 128)
        per_block = self._sums(np.arange(n) // stride * self.size + self.acting, n // stride + 1,
                               None if self.weight is None else self.weight)
        self.kept = np.concatenate([np.zeros((1, *per_block.shape[1:])), np.cumsum(per_block, axis=0)])

    def _sums(self, bins: np.ndarray, n_rows: int, weight) -> np.ndarray:
        """(n_rows, S, K): the items, their weights and squared weights (S = 3; one count for unit weights)."""
        size = n_rows * self.size
        if weight is None:
            return np.bincount(bins, minlength=size).astype(np.float64).reshape(n_rows, 1, self.size)
        sums = np.stack([np.bincount(bins, weights=source, minlength=size)
                         for source in ((weight > 0).astype(np.float64), weight, weight * weight)])
        return sums.reshape(-1, n_rows, self.size).transpose(1, 0, 2)

    def _before(self, position: int) -> np.ndarray:
        """(S, K): the sums over the first ``position`` items of the order, by their acting category."""
        block = position // self.stride
        rest = slice(block * self.stride, position)
        extra = self._sums(self.acting[rest], 1, None if self.weight is None else self.weight[rest])
        return self.kept[block] + extra[0]

    def tally(self, plan, calibrated, weight: np.ndarray | None, make) -> Tally:
        """The :class:`Tally` of ``plan`` on ``calibrated`` (``weight``: the split's, None for unit weights)."""
        n_classes = self.n_classes
        before = self._before(plan.acted)  # the items the bulk rule hands over, by their acting category
        table = self.kept[-1] - before  # those it acts on
        sums = table.reshape(table.shape[0], n_classes, n_classes + 1)
        sums[:, :, n_classes] = before.reshape(sums.shape).sum(axis=2)  # handed over: by true class
        exact = plan.exact
        if exact.size:
            acted, handed_over = split_cache(calibrated).outcomes(calibrated)
            bulk = np.where(plan.acting(exact), acted[exact], handed_over[exact])
            own = handed_over[exact] - handed_over.dtype.type(n_classes) + plan.exact_actions.astype(acted.dtype)
            items = None if weight is None else weight[exact]
            table -= self._sums(bulk, 1, items)[0]
            table += self._sums(own, 1, items)[0]
        count, weight_sums, weight_sq = (table[0],) * 3 if self.weight is None else table
        return Tally(count, weight_sums, weight_sq, make=make, weight_max=self.weight_max)

    def categories(self, plan, calibrated) -> np.ndarray:
        """:func:`_plan_categories`, copied in two slices in the screen's order and put in item order (half the
        time of comparing every item's place with the cut)."""
        in_order = np.empty_like(self.acting)
        in_order[:plan.acted] = self.handing[:plan.acted]
        in_order[plan.acted:] = self.acting[plan.acted:]
        categories = np.empty_like(in_order)
        categories[self.order] = in_order
        acted, handed_over = split_cache(calibrated).outcomes(calibrated)
        categories[plan.exact] = (handed_over[plan.exact] - handed_over.dtype.type(calibrated.n_classes)
                                  + plan.exact_actions.astype(acted.dtype))
        return categories


def _plan_tally(plan, predictions, calibrated, calibration: str) -> tuple[object, Tally]:
    """The expected-value rule's tally under ``plan``: from the sums along its screen's order (exact sums), else
    counted item by item."""
    key = ("expected_value", calibration, plan.key)
    cache = split_cache(predictions)
    found = _recall(cache, cache.decisions, key)
    if found is not None:
        return key, found
    if cache.exact_sums and plan.acted is not None:
        kept_key = ("plan prefixes", calibration)
        if kept_key not in cache.screens:  # two threads may both build it: equal, so either one does
            cache.screens[kept_key] = _PlanPrefixes(calibrated, cache, plan.screen)
        kept = cache.screens[kept_key]
        held = weakref.ref(calibrated)  # the split's own cache keeps the tally: no strong reference back to it
        tally = kept.tally(plan, calibrated, None if cache.unit else cache.weight,
                           lambda: kept.categories(plan, held()))
    else:
        tally = _tally(predictions, _plan_categories(plan, calibrated))
    return key, _remember(cache, cache.decisions, key, tally, cache._MAX_DECISIONS)


def decision_tally(policy, predictions, matrix) -> tuple[object, Tally]:
    """(decision key, :class:`Tally`) of a one-tier ``policy`` on a labelled split, priced later by ``matrix``.

    Equal keys mean equal actions. Threshold, class-threshold and accept-all rules: the key names the items
    each threshold accepts (its rank among the split's sorted confidences, O(log n)), so every value that
    accepts the same items -- the same fitted threshold, or a calibrated threshold that passes no
    confidence -- reuses the tally. The expected-value rule: for a three-value use case, the key names the
    items it acts on (:func:`valuecore._engine.policy._ev_plan`), found in O(log n) plus the items near the cut;
    for any other value matrix, the policy and the matrix.
    """
    calibrated = _calibrated(policy, predictions)
    calibration = _calibration_key(policy)
    if policy.kind != "expected_value":
        return _threshold_tally(policy, predictions, calibrated, calibration)
    from .policy import _expected_value_actions, _ev_plan

    calibrated.require_proba("the expected-value rule")
    screen = _screen(calibrated)
    plan = _ev_plan(calibrated, matrix, screen) if screen else None
    if plan is None:
        key = ("expected_value", calibration, matrix.values.tobytes())
        return key, cached_tally(predictions, key,
                                 lambda: _categories(calibrated, _expected_value_actions(calibrated, matrix)))
    return _plan_tally(plan, predictions, calibrated, calibration)


def _categories(calibrated, actions: np.ndarray) -> np.ndarray:
    acted, handed_over = split_cache(calibrated).outcomes(calibrated)
    return handed_over - handed_over.dtype.type(calibrated.n_classes) + actions.astype(acted.dtype)


def _threshold_categories(policy, calibrated) -> np.ndarray:
    """Each item's category under a threshold rule, as ``Policy.decide`` accepts (``confidence >= threshold``)."""
    acted, handed_over = split_cache(calibrated).outcomes(calibrated)
    if policy.kind == "accept_all" and not calibrated.has_model_abstentions:
        return acted
    return np.where(policy.accepts(calibrated), acted, handed_over)


def _plan_categories(plan, calibrated) -> np.ndarray:
    """Each item's category under the expected-value rule's plan (see ``_EvPlan.actions``)."""
    acted, handed_over = split_cache(calibrated).outcomes(calibrated)
    categories = np.where(plan.acting(), acted, handed_over)
    categories[plan.exact] = (handed_over[plan.exact] - handed_over.dtype.type(calibrated.n_classes)
                              + plan.exact_actions.astype(acted.dtype))
    return categories
