"""Which model to deploy, and how sure the data lets us be: a verdict that knows its uncertainty.

The model with the highest value per item on the evaluated items is the best
*on these items*; whether it would stay ahead on new items is a question of
noise. Each other model is compared with it item by item (a paired interval
of the per-item differences) when the two runs hold the same items (same ids,
or same rows with the same labels), and otherwise by the overlap of their two
intervals. Every interval is the bounded one of :func:`mean_interval`: it
allows for the costliest outcome of the value matrix even when it is rare or
unseen. Models whose comparison cannot exclude "no difference" are the
*contenders*, except that a model earning no more than handing every item
over is never level with a best model that earns more: whatever the noise,
deploying it loses against no model on these items. For each contender the
verdict also estimates how many labelled items would separate it from the
best if the gap per item stayed as observed (a normal-approximation sample
size at the chosen confidence and power, never fewer than the bounded paired
test needs with the shares observed).

Degenerate values are flagged rather than crowned: when no action can earn
more than handing the item over ("pointless"), when no model beats the
no-model baseline ("all_useless"), and when handing over never beats a wrong
answer, so a threshold adds nothing (``abstain_pointless``).

Everything here is numbers; :mod:`valuecore.wording` says them in words.
"""

from __future__ import annotations

import functools
import math
import weakref
from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np

from .._engine.evaluate import evaluate, item_values
from .._engine.fitting import Policy, Values
from .._model.predictions import Predictions
from .._engine.tally import (Grouped, Tally, cell_groups, coverage_of, decision_tally, group_items, grouped_difference,
                     grouped_tally, joint_tallies, joint_tally, split_cache)
from .._model.values import ValueMatrix, check_value_range
from .segment_rule import SEGMENT_RULE
from .._stats.uncertainty import (Interval, _check_same_items, _pair_rows, grouped_interval, grouped_items_to_exclude,
                           grouped_mean, mean_interval, possible_range)

__all__ = ["Standing", "Verdict", "RuleComparison", "verdict", "simpler_rule", "clearly_ahead", "DEGENERATE_KINDS",
           "SURE"]

DEGENERATE_KINDS = ("no_models", "pointless", "all_useless")
# How sure the evaluated items must make us that a rule earns more than handing items over before it is
# recommended (one-sided). Chosen by the choice study (benchmarks/bench_choice.py, benchmarks/README.md): at
# 97.5% or 95% no rule could ever be shown to earn at a penalty of 100 with 300 evaluated items, and the
# recommendation's regret was 1.07 times a naive analyst's; at 90%, 0.76 times, with 1 of 600 scenarios
# losing 0.026 per item (2.0 standard errors).
SURE = 0.90
# A per-item gap smaller than this share of the value scale counts as none (round-off of sums). The scale is the
# largest of the values compared and of the use case's own values (``value_scale``): a per-item value is an average
# of those, so its round-off is relative to them. (A fixed floor of 1 made the tolerance absolute, 1e-12, for values
# scaled down by 1e-12, and the verdict then changed with the scale: "deploy no model" for a model earning 8e-16.)
_RELATIVE_TOLERANCE = 1e-12


def value_scale(values: Values, classes) -> float:
    """The largest magnitude among the use case's values for these classes."""
    return float(np.max(np.abs(values.for_classes(classes).values)))


@dataclass(frozen=True)
class Standing:
    """One model's value per item on the evaluated items, and how it compares with the best.

    Attributes
    ----------
    model : str
    per_item : float
        Weighted mean value per item on these items (exact).
    low, high : float
        Interval of the expected value per item on new data (bounded method).
    coverage : float
        Share of items acted on.
    difference : float
        ``best - this model`` per item (0 for the best).
    difference_low, difference_high : float
        Interval of that difference: paired when ``basis == "paired"``,
        NaN for the overlap basis (and for the best).
    contender : bool
        The data cannot tell this model from the best (False for the best).
        Never True for a model at or below its no-model baseline while the
        best is above it.
    basis : {"best", "paired", "overlap"}
    baseline : float
        Value per item of handing every item of this model's evaluated split over.
    items_to_separate : float or None
        For a contender: labelled items (in all) at which its gap to the best,
        if it stayed as observed, would be significant (``inf`` for no gap);
        None otherwise.
    gain_low, gain_high : float
        One-sided bounds (bounded method, each at the verdict's ``sure``, 90%
        by default) of what it earns per item *more than handing that item
        over*, item by item: ``gain_low > 0`` is "shown to earn more than no
        model" on new items.
    value_scale : float
        The largest magnitude among the use case's values: a gap smaller than
        1e-12 of it (or of the values compared) is round-off, not a gap.
    """

    model: str
    per_item: float
    low: float
    high: float
    coverage: float
    difference: float = 0.0
    difference_low: float = math.nan
    difference_high: float = math.nan
    contender: bool = False
    basis: str = "best"
    baseline: float = math.nan
    items_to_separate: float | None = None
    gain_low: float = math.nan
    gain_high: float = math.nan
    value_scale: float = 1.0

    @property
    def above_baseline(self) -> bool:
        """Earns more per item than handing every item over (round-off aside)."""
        return above_baseline(self.per_item, self.baseline, self.value_scale)


@dataclass(frozen=True)
class Verdict:
    """What to deploy and how sure the evaluated items let us be.

    Attributes
    ----------
    best : str or None
        Highest value per item on these items; None when no model could be evaluated.
    best_policy : Policy or None
    best_per_item, coverage : float
        The best model's value per item and share of items acted on.
    baseline_per_item : float
        Value per item of handing every item over (no model).
    contenders : tuple of str
        Models the data cannot tell apart from the best, best first.
    basis : {"paired", "overlap", "mixed", "none"}
        How the contenders were judged: item by item on the same items,
        by overlapping intervals, both (for different models), or not at all
        (a single model).
    runner_up : str or None
        The second-highest model.
    runner_up_gap : float
        ``best - runner_up`` per item on these items.
    items_to_separate : float or None
        Estimated labelled items (in all, like ``n_items``) at which the
        runner-up's gap, if it stayed as observed, would be significant at
        ``confidence`` with probability ``power`` (normal approximation), and
        at least the items at which the paired bounded interval of the
        differences, in their observed shares, would exclude 0 (far more
        where a costly difference is rare); ``inf`` when the gap is 0; None
        when the runner-up is already separated (or there is none).
    n_items : float
        Weighted number of evaluated items of the best model.
    degenerate : str or None
        "no_models", "pointless" (no action beats handing over),
        "all_useless" (no model beats the no-model baseline), or None.
    abstain_pointless : bool
        Handing an item over is never better than a wrong answer, so acting
        on every item is optimal and a threshold adds nothing.
    standings : tuple of Standing
        Every evaluated model, best first.
    unlabelled : tuple of str
        Models left out because the evaluated split has no labels.
    confidence, power : float
    """

    best: str | None
    best_policy: Policy | None
    best_per_item: float
    coverage: float
    baseline_per_item: float
    contenders: tuple
    basis: str
    runner_up: str | None
    runner_up_gap: float
    items_to_separate: float | None
    n_items: float
    degenerate: str | None
    abstain_pointless: bool
    standings: tuple
    unlabelled: tuple = ()
    confidence: float = 0.95
    power: float = 0.8

    @property
    def best_threshold(self) -> float | None:
        """The best model's global threshold (None: no single threshold, or always hand off)."""
        return None if self.best_policy is None else self.best_policy.threshold

    @property
    def is_tie(self) -> bool:
        return bool(self.contenders)


@dataclass(frozen=True)
class RuleComparison:
    """A richer rule against a simpler one, item by item on the same evaluated items.

    Attributes
    ----------
    rich_kind, simple_kind : str
        Policy kinds, e.g. "class_thresholds" and "threshold".
    rich_per_item, simple_per_item : float
        Values per item on the evaluated items.
    low, high : float
        Paired interval of ``rich - simple`` per item (bounded method).
    confidence : float
    """

    rich_kind: str
    simple_kind: str
    rich_per_item: float
    simple_per_item: float
    low: float
    high: float
    confidence: float = 0.95

    @property
    def gain(self) -> float:
        return self.rich_per_item - self.simple_per_item

    @property
    def within_noise(self) -> bool:
        """The interval of the gain includes 0 (or is unknown)."""
        return not (self.low > 0)

    @property
    def prefer_simpler(self) -> bool:
        """The richer rule earns less, or its gain is within noise."""
        return self.gain < 0 or self.within_noise


def above_baseline(per_item: float, baseline: float, scale_of_values: float = 1.0) -> bool:
    """``per_item`` earns more than ``baseline``, beyond the round-off of sums (``scale_of_values``: the
    use case's :func:`value_scale`)."""
    scale = max(abs(per_item), abs(baseline), scale_of_values)
    return bool(per_item > baseline + _RELATIVE_TOLERANCE * scale)


@functools.lru_cache(maxsize=64)  # a few confidences and powers: the same number, once
def _normal_quantile(p: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(p))


def _items_needed(gap: float, spread: float, confidence: float, power: float) -> float:
    """Items n with ``(z_{1-a/2} + z_power) * spread / sqrt(n) = |gap|``; spread is a per-item SD."""
    if gap == 0:
        return math.inf
    if not math.isfinite(spread):
        return math.nan  # too few items to estimate the spread
    z = _normal_quantile((1 + confidence) / 2) + _normal_quantile(power)
    return math.ceil((z * spread / abs(gap)) ** 2)


def _difference_range(values: Values, classes, other: Values | None = None) -> tuple[float, float]:
    """The range of one item's value under one policy minus its value under another (priced by ``other``)."""
    return _range_difference(possible_range(values, classes), None if other is None else possible_range(other, classes))


def _range_difference(one: tuple[float, float], other: tuple[float, float] | None = None) -> tuple[float, float]:
    """:func:`_difference_range` from the possible ranges of the two matrices."""
    lowest, highest = one
    if other is not None:
        lowest, highest = min(lowest, other[0]), max(highest, other[1])
    return lowest - highest, highest - lowest


def _per_item_sd(interval: Interval) -> float:
    return interval.std_error * math.sqrt(interval.n) if math.isfinite(interval.std_error) else math.nan


def _degenerate_values(values: Values, classes) -> tuple[bool, bool]:
    """(no action beats handing over, handing over never beats acting) for these classes."""
    gains = values.for_classes(classes).gains
    return bool(np.all(gains <= 0)), bool(np.all(gains >= 0))


_HAND_OVER = Policy("threshold", threshold=None)


def _baseline(predictions: Predictions, values: Values) -> float:
    """Value per item of handing every item over (no model), from the tally of that decision."""
    matrix = values.for_classes(predictions.classes)
    _, tally = decision_tally(_HAND_OVER, predictions, matrix)
    return grouped_mean(grouped_tally(tally, matrix.values.ravel(), split_cache(predictions).integral))


@dataclass(frozen=True)
class _Judged:
    """One run's outcomes on its evaluated split, in the form its comparisons take.

    A one-tier rule without reviewers keeps the :class:`~valuecore._engine.tally.Tally` of its decision (``key``
    names it) and the value of each category, ``cell_values`` (K,); a tiered rule, or one priced for
    reviewers, its per-item values ``items`` (n,). ``grouped``: its values grouped by distinct value.
    """

    predictions: Predictions
    grouped: Grouped
    key: object = None
    tally: Tally | None = None
    cell_values: np.ndarray | None = None
    items: np.ndarray | None = None

    def item_values(self) -> np.ndarray:
        """Each item's value, shape (n,)."""
        return self.items if self.items is not None else self.cell_values[self.tally.categories]

    def coverage(self, policy: Policy, values: Values) -> float:
        if self.tally is None:
            return _automated_share(policy, self.predictions, values)
        return coverage_of(self.tally, self.predictions.n_classes)


def _judge(policy: Policy, predictions: Predictions, priced: Values, per_item: bool = False,
           matrix=None) -> _Judged:
    """The :class:`_Judged` of a run priced by ``priced`` (``matrix``: its value matrix for the run's classes,
    when made already); ``per_item`` forces the item values (reviewers)."""
    integral = split_cache(predictions).integral
    if per_item or policy.kind in _ITEM_BY_ITEM_KINDS:
        items = _realised_item_values(policy, predictions, priced)
        return _Judged(predictions, group_items(items, predictions.sample_weight, integral), items=items)
    predictions.require_labels("per-item values")
    matrix = priced.for_classes(predictions.classes) if matrix is None else matrix
    key, tally = decision_tally(policy, predictions, matrix)
    cells = matrix.values.ravel()
    return _Judged(predictions, grouped_tally(tally, cells, integral, _cell_groups(matrix)), key, tally, cells)


_GROUPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _cell_groups(matrix):
    """The engine's ``tally.cell_groups`` of a value matrix, once per matrix (the rules of a model share one)."""
    try:
        found = _GROUPS.get(matrix)
    except TypeError:  # not weakly referenceable
        return cell_groups(matrix.values.ravel())
    if found is None:
        found = _GROUPS[matrix] = (cell_groups(matrix.values.ravel()),)
    return found[0]


def _gain(judged: _Judged, everything: ValueMatrix) -> Grouped:
    """Each item's value minus its value had it been handed over (its true class's hand-off cell), grouped.

    ``everything``: the value matrix of handing every item over (the baseline's), shape (C, C + 1).
    """
    handed = everything.values[:, -1]
    integral = split_cache(judged.predictions).integral
    if judged.tally is not None:
        n_classes = handed.size
        cells = (judged.cell_values.reshape(n_classes, n_classes + 1) - handed[:, None]).ravel()
        return grouped_tally(judged.tally, cells, integral)
    return group_items(judged.items - handed[judged.predictions.y_true], judged.predictions.sample_weight, integral)


def _gain_range(priced: ValueMatrix, everything: ValueMatrix, policy: Policy) -> tuple[float, float]:
    """Lowest and highest gain over handing over one item can have under ``policy`` (as :func:`possible_range`)."""
    cells = priced.values - everything.values[:, -1:]
    if policy.kind in ("threshold", "calibrated_threshold") and policy.threshold is None:
        cells = cells[:, -1:]
    elif policy.kind == "accept_all":
        cells = cells[:, :-1]
    return float(cells.min()), float(cells.max())


def items_to_show_gain(found: Mapping, predictions: Predictions, values: Values, sure: float = SURE) -> float | None:
    """Labelled items (in all) at which a run's gain over handing items over would be shown above 0, if every
    outcome kept its observed share; None when the verdict kept no tally or item values for it (``found``: its
    entry in the verdict's ``memo``)."""
    if "judged" not in found or "gain_range" not in found:
        return None
    handing_over = values.for_classes(predictions.classes)
    return grouped_items_to_exclude(_gain(found["judged"], handing_over), found["gain_range"],
                                    confidence_level=2 * sure - 1, null=0.0)


def pairing(predictions_a, predictions_b, names) -> tuple[np.ndarray | None, str | None]:
    """(rows of b matching each row of a, None) or (None, why not), once per pair of splits.

    ``take`` is None when the rows pair in order (no copy). The error text is that of
    :func:`_check_same_items` for the first names asked.
    """
    cache = split_cache(predictions_a)
    found = cache.pairings.get(predictions_b)
    if found is None:
        try:
            take, ids = _pair_rows(predictions_a, predictions_b, names)
            _check_same_items(predictions_a, predictions_b, take, ids, names)
        except ValueError as error:
            found = (None, str(error))
        else:
            in_order = ids is None or np.array_equal(take, np.arange(take.size))
            found = (None if in_order else take, None)
        cache.pairings[predictions_b] = found
    return found


def _difference(a: _Judged, b: _Judged, take: np.ndarray | None, joint=None) -> Grouped:
    """``a - b`` item by item (b's rows matched by ``take``), grouped; from the joint tally when both have one
    (``joint``: that joint tally, when already made)."""
    integral = split_cache(a.predictions).integral
    if a.tally is not None and b.tally is not None:
        if joint is None:
            joint = joint_tally(a.predictions, a.key, a.tally, b.predictions, b.key, b.tally, take)
        return grouped_difference(joint, a.cell_values, b.cell_values, integral)
    theirs = b.item_values()
    return group_items(a.item_values() - (theirs if take is None else theirs[take]), a.predictions.sample_weight,
                       integral)


def _differences(best: _Judged, others: Mapping) -> dict:
    """:func:`_difference` of ``best`` and each of ``others`` (key -> (its :class:`_Judged`, take)), the joint
    tallies made together (``joint_tallies``: another run's threshold rules share one pass over its order)."""
    tallied = [key for key, (judged, _) in others.items() if best.tally is not None and judged.tally is not None]
    joints = dict(zip(tallied, joint_tallies(best.predictions, best.key, best.tally, [
        (others[key][0].predictions, others[key][0].key, others[key][0].tally, others[key][1]) for key in tallied])))
    return {key: _difference(best, judged, take, joints.get(key)) for key, (judged, take) in others.items()}


_TIERED_KINDS = ("two_tier", "shortlist")
# Rules priced item by item (no tally of one decision on the split): the tiered ones and thresholds per segment.
_ITEM_BY_ITEM_KINDS = (*_TIERED_KINDS, SEGMENT_RULE)


def _realised_item_values(policy: Policy, predictions: Predictions, values: Values) -> np.ndarray:
    """Each item's realised value under ``policy``, the assisted tier included for a two-tier one."""
    if policy.kind == SEGMENT_RULE:
        return policy.item_values(predictions, values)
    if policy.kind == "two_tier":
        from .._engine.twotier import two_tier_item_values

        return two_tier_item_values(policy, predictions, values)
    if policy.kind == "shortlist":
        from .._engine.shortlist import shortlist_item_values

        return shortlist_item_values(policy, predictions, values)
    return item_values(policy, predictions, values)


def _automated_share(policy: Policy, predictions: Predictions, values: Values) -> float:
    """Weighted share acted on without a person (a two-tier policy's confirmed tier is not automated)."""
    if policy.kind == SEGMENT_RULE:
        return policy.coverage(predictions)
    if policy.kind in _TIERED_KINDS:
        from .._engine.shortlist import evaluate_shortlist
        from .._engine.twotier import evaluate_two_tier

        result = (evaluate_two_tier if policy.kind == "two_tier" else evaluate_shortlist)(policy, predictions, values)
        return result.n_auto / result.n_items if result.n_items > 0 else math.nan
    return evaluate(policy, predictions, values).coverage


def verdict(
    runs: Mapping[str, tuple[Policy, Predictions]],
    values: Values,
    *,
    confidence: float = 0.95,
    power: float = 0.8,
    reviewers=None,
    memo: dict | None = None,
    sure: float = SURE,
) -> Verdict:
    """Best model on the evaluated items, the models the data cannot tell from it, and degenerate values.

    Parameters
    ----------
    runs : mapping of str to (Policy, Predictions)
        Per model, its fitted policy and its evaluated split. Unlabelled
        splits are left out (listed in ``unlabelled``).
    values : UseCase or ValueMatrix
    confidence : float
        Of the intervals and tests.
    power : float
        For ``items_to_separate``.
    reviewers : Reviewers, optional
        People who are not always right (``valuecore.constraints.Reviewers``,
        with a use case): each model's hand-offs are priced at the hand-off
        rate its policy produces on its items (exact for a fixed policy; the
        intervals treat that rate as fixed), handing every item over at rate 1.
    memo : dict, optional
        Pass the same dict to :func:`clearly_ahead` on the same runs and
        values: each run's item values are then computed once (without
        reviewers).
    sure : float
        One-sided level of each standing's ``gain_low`` and ``gain_high``
        (the bounds of the gain over handing items over): ``gain_low > 0``
        means the data makes us ``sure`` that it earns more than no model.

    Returns
    -------
    Verdict

    Cost: a one-tier rule without reviewers is priced from the tally of its decision, kept per split
    (``valuecore._engine.tally``): O(classes^2) for a value that keeps its decision, O(log n) to find that out,
    and otherwise O(classes * (classes + 64)) for a threshold rule and O(classes^2 + 1024 + items near the
    cut) for the expected-value rule, read from sums kept along the split's orders (with whole-number
    weights; O(n) with fractional ones). Two threshold rules on the same split are paired in
    O(classes * (classes + 64)), any other pairing in O(n) once per pair of decisions. Two-tier and
    shortlist rules, and every rule priced for ``reviewers``, go item by item: O(n) each.

    Examples
    --------
    >>> import valuecore as vc
    >>> p = vc.Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.3, 0.7]], y_true=[0, 0, 1, 1])
    >>> v = verdict({"a": (vc.Policy("accept_all"), p), "b": (vc.Policy("threshold", threshold=0.85), p)},
    ...             vc.UseCase(1, 0, -4))
    >>> v.best, v.contenders, v.basis, v.degenerate
    ('b', (), 'paired', None)
    >>> a = v.standings[1]  # within noise of b, but it loses against handing every item over
    >>> a.model, a.difference_low < 0, a.per_item < v.baseline_per_item, a.contender
    ('a', True, True, False)
    """
    labelled = {m: (policy, p) for m, (policy, p) in runs.items() if p.has_labels}
    unlabelled = tuple(m for m in runs if m not in labelled)
    if not labelled:
        return Verdict(None, None, math.nan, math.nan, math.nan, (), "none", None, math.nan, None, 0.0,
                       "no_models", False, (), unlabelled, confidence, power)
    check_value_range(values)
    judged, intervals, coverage, baselines, split_baselines, gains = {}, {}, {}, {}, {}, {}
    priced = {m: values for m in labelled}  # each model's values: its hand-offs priced for the reviewers
    if reviewers is not None:
        from .._engine.reviewers import priced_use_case, reviewers_use_case

        values = reviewers_use_case(values)  # a matrix made from a use case is priced as the use case
        priced = {m: priced_use_case(reviewers, values, *labelled[m]) for m in labelled}
    everything = values if reviewers is None else reviewers.use_case_at(values, 1.0)
    made: dict = {}

    def matrix_of(given: Values, classes) -> Values:
        """``given``'s value matrix for ``classes``, made once per verdict (the rules of a model share it)."""
        key = (id(given), tuple(classes))
        if key not in made:
            made[key] = (given, given.for_classes(classes))  # holds ``given``, so its id stays its own
        return made[key][1]

    ranges: dict = {}

    def range_of(matrix: Values, classes, policy: Policy | None = None) -> tuple[float, float]:
        """:func:`possible_range`, once per matrix and kind of range (the rules of a model share them)."""
        reach = None if policy is None else (policy.kind, policy.threshold is None)
        key = (id(matrix), reach)
        if key not in ranges:
            ranges[key] = possible_range(matrix, classes, policy)
        return ranges[key]

    def pair_range_of(best_matrix: Values, classes, other: Values) -> tuple[float, float]:
        """:func:`_difference_range` of two models' matrices, from their ranges found once."""
        return _range_difference(range_of(best_matrix, classes), range_of(other, classes))

    for model, (policy, predictions) in labelled.items():
        # Each rule decides once (a tally per decision, kept across values): its value and coverage share it.
        matrix = matrix_of(priced[model], predictions.classes)
        judged[model] = _judge(policy, predictions, priced[model], per_item=reviewers is not None, matrix=matrix)
        intervals[model] = grouped_interval(judged[model].grouped, confidence_level=confidence,
                                            value_range=range_of(matrix, predictions.classes, policy))
        if memo is not None and reviewers is None:
            # the run and the mean clearly_ahead compares, bit for bit
            memo[model] = {"judged": judged[model], "mean": intervals[model].mean}
        coverage[model] = judged[model].coverage(policy, values)
        # The rules of one model share its evaluated split, and so its baseline: computed once per split.
        handing_over = matrix_of(everything, predictions.classes)
        if id(predictions) not in split_baselines:
            split_baselines[id(predictions)] = _baseline(predictions, handing_over)
        baselines[model] = split_baselines[id(predictions)]
        # What it earns beyond handing each item over, item by item: its own interval, not the value's interval
        # against a baseline that is itself measured on these items (a class mix priced by a value matrix).
        gain_range = _gain_range(matrix, handing_over, policy)
        gains[model] = grouped_interval(_gain(judged[model], handing_over), confidence_level=2 * sure - 1,
                                        value_range=gain_range)
        if memo is not None and reviewers is None:
            memo[model]["gain_range"] = gain_range
    ranked = sorted(labelled, key=lambda m: -intervals[m].mean)  # stable: ties keep the given order
    best = ranked[0]
    best_policy, best_predictions = labelled[best]
    baseline = baselines[best]
    pointless, abstain_pointless = _degenerate_values(values, best_predictions.classes)
    values_scale = value_scale(values, best_predictions.classes)
    scale = max(abs(intervals[best].mean), abs(baseline), values_scale)
    best_mean = intervals[best].mean
    degenerate = None
    if pointless:
        degenerate = "pointless"
    elif best_mean <= baseline + _RELATIVE_TOLERANCE * scale:
        degenerate = "all_useless"

    standings = [Standing(best, best_mean, intervals[best].low, intervals[best].high, coverage[best],
                          baseline=baseline, gain_low=gains[best].low, gain_high=gains[best].high,
                          value_scale=values_scale)]
    best_earns = standings[0].above_baseline
    spreads = {}
    paired = {}
    for model in ranked[1:]:
        take, unpaired = pairing(best_predictions, labelled[model][1], (best, model))
        if unpaired is None:
            paired[model] = (judged[model], take)
    differences = _differences(judged[best], paired)
    for model in ranked[1:]:
        policy, predictions = labelled[model]
        gap = best_mean - intervals[model].mean
        take, unpaired = pairing(best_predictions, predictions, (best, model))
        if unpaired is not None:
            # Different items: judge by overlapping intervals of the two models.
            contender = bool(intervals[model].high >= intervals[best].low) or gap == 0
            spreads[model] = math.hypot(_per_item_sd(intervals[best]), _per_item_sd(intervals[model]))
            low, high, basis, difference = math.nan, math.nan, "overlap", gap
        else:
            pair_range = pair_range_of(matrix_of(priced[best], predictions.classes), predictions.classes,
                                       matrix_of(priced[model], predictions.classes))
            diff = grouped_interval(differences[model], confidence_level=confidence, value_range=pair_range)
            spreads[model] = _per_item_sd(diff)
            contender = not (diff.low > _RELATIVE_TOLERANCE * scale)
            low, high, basis, difference = diff.low, diff.high, "paired", diff.mean
        standing = Standing(model, intervals[model].mean, intervals[model].low, intervals[model].high,
                            coverage[model], difference, low, high, contender, basis, baselines[model],
                            gain_low=gains[model].low, gain_high=gains[model].high, value_scale=values_scale)
        # Losing money against no model is never "level" with earning some, whatever the noise.
        contender = contender and not (best_earns and not standing.above_baseline)
        needed = _items_needed(gap, spreads[model], confidence, power) if contender else None
        if needed is not None and model in differences and not math.isnan(needed):
            # Where a costly difference is rare the bounded test needs far more items than the normal
            # approximation says: never promise fewer than it needs with the shares observed.
            pair_range = pair_range_of(matrix_of(priced[best], best_predictions.classes), best_predictions.classes,
                                       matrix_of(priced[model], best_predictions.classes))
            needed = max(needed, grouped_items_to_exclude(differences[model], pair_range, confidence_level=confidence))
        standings.append(replace(standing, contender=contender,
                                 items_to_separate=None if needed is None or math.isnan(needed) else needed))

    contenders = tuple(s.model for s in standings[1:] if s.contender)
    bases = {s.basis for s in standings[1:] if s.contender} or {s.basis for s in standings[1:]}
    basis = "none" if not bases else bases.pop() if len(bases) == 1 else "mixed"
    runner_up = ranked[1] if len(ranked) > 1 else None
    gap = best_mean - intervals[runner_up].mean if runner_up else math.nan
    needed = next((s.items_to_separate for s in standings[1:] if s.model == runner_up), None)
    return Verdict(
        best=best,
        best_policy=best_policy,
        best_per_item=best_mean,
        coverage=coverage[best],
        baseline_per_item=baseline,
        contenders=contenders,
        basis=basis,
        runner_up=runner_up,
        runner_up_gap=gap,
        items_to_separate=needed,
        n_items=float(best_predictions.total_weight),
        degenerate=degenerate,
        abstain_pointless=abstain_pointless,
        standings=tuple(standings),
        unlabelled=unlabelled,
        confidence=confidence,
        power=power,
    )


def clearly_ahead(
    runs: Mapping,
    values: Values,
    of,
    *,
    confidence: float = 0.95,
    memo: dict | None = None,
) -> tuple:
    """The keys of ``runs`` whose value the data separates above that of ``runs[of]``, as :func:`verdict` judges.

    Item by item when the two runs hold the same items, by non-overlapping
    intervals otherwise. Only runs worth more on these items can be ahead.
    ``memo`` (a dict kept across calls on the same runs and values, and
    shared with :func:`verdict`'s) saves recomputing each run's item values,
    mean and interval.
    """
    memo = {} if memo is None else memo

    def judged(key) -> dict:
        """Run ``key``'s tally or item values and its mean, each computed once (its interval where needed)."""
        found = memo.setdefault(key, {})
        if "judged" not in found:
            policy, predictions = runs[key]
            found["judged"] = _judge(policy, predictions, values)
        if "mean" not in found:
            found["mean"] = grouped_mean(found["judged"].grouped)
        return found

    def interval(key) -> Interval:
        found = judged(key)
        if "interval" not in found:
            found["interval"] = grouped_interval(found["judged"].grouped, confidence_level=confidence)
        return found["interval"]

    predictions = runs[of][1]
    own_mean = judged(of)["mean"]
    scale = max(abs(own_mean), value_scale(values, predictions.classes))
    ahead = []
    for key, (_, other_predictions) in runs.items():
        if key == of:
            continue
        other_mean = judged(key)["mean"]  # the interval's own mean; the interval only where it is needed
        if not other_mean > own_mean:
            continue
        take, unpaired = pairing(other_predictions, predictions, (key, of))
        if unpaired is not None:
            if interval(key).low > interval(of).high:
                ahead.append(key)
            continue
        difference = _difference(judged(key)["judged"], judged(of)["judged"], take)
        diff = grouped_interval(difference, confidence_level=confidence)
        if diff.low > _RELATIVE_TOLERANCE * max(scale, abs(other_mean)):
            ahead.append(key)
    return tuple(ahead)


def simpler_rule(
    rich_policy: Policy,
    simple_policy: Policy,
    predictions: Predictions,
    values: Values,
    *,
    confidence: float = 0.95,
) -> RuleComparison:
    """Does a richer rule earn more than a simpler one on the evaluated items, beyond noise?

    Both rules are fitted on the tuning split and judged on the same evaluated
    items, so the per-item differences are paired. A richer rule that earns
    less, or whose gain is within noise, has likely fitted the tuning items
    too closely (:attr:`RuleComparison.prefer_simpler`).

    Examples
    --------
    >>> import valuecore as vc
    >>> p = vc.Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.3, 0.7]], y_true=[0, 0, 1, 1])
    >>> c = simpler_rule(vc.Policy("accept_all"), vc.Policy("threshold", threshold=0.85), p, vc.UseCase(1, 0, -4))
    >>> c.gain < 0, c.prefer_simpler
    (True, True)
    """
    predictions.require_labels("comparing two rules")
    rich = item_values(rich_policy, predictions, values)
    simple = item_values(simple_policy, predictions, values)
    weight = predictions.sample_weight
    diff = mean_interval(rich - simple, weight, confidence_level=confidence,
                         value_range=_difference_range(values, predictions.classes))
    return RuleComparison(
        rich_kind=rich_policy.kind,
        simple_kind=simple_policy.kind,
        rich_per_item=float(np.average(rich, weights=weight)),
        simple_per_item=float(np.average(simple, weights=weight)),
        low=diff.low,
        high=diff.high,
        confidence=confidence,
    )
