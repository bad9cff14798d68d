"""One recommendation: which model, which decision rule, which threshold(s), or "not yet".

Every (model, rule) pair the settings allow is fitted by the same
:class:`~valuecore.Pipeline` the export uses (tuned on the tuning split,
recalibrated as set) and judged on the evaluated split by
:func:`~valuecore.verdict`. The choice is made for what a candidate will earn
on new items, not for what it earned on these few:

1. A candidate is *shown to earn* when the evaluated items make us 90% sure
   (``sure``, one-sided) that it earns more per item than handing the item to
   a person: the lower bound of its gain over handing over, item by item, is
   above 0. The bound is the bounded interval's (:func:`mean_interval`), so a
   costly outcome that is rare or was never seen still pulls it down: "no
   error seen" is what a lucky fit looks like.
2. Only a candidate shown to earn is recommended: the one whose lower bound is
   highest (the simpler rule when bounds are equal, i.e. the same decisions),
   unless another candidate is clearly ahead of it item by item, which is then
   taken instead.
3. When none is shown to earn, the answer is **not yet** (hand every item to
   a person) when some candidate earns more than no model on these items,
   naming the one closest to being shown and the labelled items that would
   show it if its results held; **no model** when none earns more even here.

Why this rule, and not the highest value on these items, a simplest-rule
preference or a 95% bound: the choice study (``benchmarks/bench_choice.py``,
figures in ``benchmarks/README.md``) scores each on new items with known
truth. Over 600 seeded scenarios the highest value on these items lost money
in 8% of them (up to 6.5 per item at a wrong answer of -1000); a 95% or 97.5%
bound lost none but could never deploy at a penalty of 100 with 300 items,
and its mean regret was 1.07 times a naive analyst's; the 90% bound's was
0.76 times, with one scenario of 600 losing 0.026 per item (2.0 standard
errors of the truth).

The recommendation keeps the numbers that explain it: its value and interval,
the closest alternative with the gap and the labelled items that would
separate them, and for "not yet" the labelled items that would settle it.
:func:`valuecore.wording.recommendation_reason` says it in one sentence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping

from .._model.choices import POLICY_KINDS, RECOMMENDED_RULE
from .._engine.evaluate import PolicyResult, evaluate_confusion
from .._engine.fitting import Policy
from .._engine.tally import split_cache
from .._stats.uncertainty import Interval, result_interval
from .._model.values import check_value_range
from .segment_rule import SEGMENT_RULE, SegmentRule
from .verdict import SURE, _degenerate_values, above_baseline, clearly_ahead, items_to_show_gain, verdict

__all__ = ["Candidate", "Recommendation", "RuleRefitted", "recommend", "recommended_document", "recommended_rules",
           "RULE_SIMPLICITY", "RECOMMENDED_RULE", "SEGMENT_RULE", "SegmentRule"]

# Fewer numbers to set and explain first; rules of equal rank are told apart by their lower bound.
RULE_SIMPLICITY = {
    "accept_all": 0,
    "threshold": 1,
    "calibrated_threshold": 1,
    "class_thresholds": 2,
    "calibrated_class_thresholds": 2,
    SEGMENT_RULE: 3,
    "expected_value": 4,
    "two_tier": 5,
    "shortlist": 5,
}


@dataclass(frozen=True)
class Candidate:
    """One (model, rule) judged on the evaluated items.

    Attributes
    ----------
    model, kind : str
    policy : Policy
    per_item, low, high : float
        Value per item on the evaluated items and its interval on new items.
    coverage : float
        Share of items acted on without a person.
    baseline : float
        Value per item of handing every item over.
    difference : float
        ``best - this`` per item (0 for the best).
    contender : bool
        The data cannot tell it from the best (True for the best itself).
    items_to_separate : float or None
        Labelled items that would separate it from the best (contenders only).
    gain_low, gain_high : float
        Interval of what it earns per item more than handing the item over,
        on new items (item by item, bounded method): ``gain_low > 0`` means
        the data shows it earns more than no model.
    value_scale : float
        The largest magnitude among the use case's values, against which a gap
        counts as round-off (see ``Standing``).
    """

    model: str
    kind: str
    policy: Policy
    per_item: float
    low: float
    high: float
    coverage: float
    baseline: float
    difference: float
    contender: bool
    items_to_separate: float | None
    gain_low: float = math.nan
    gain_high: float = math.nan
    value_scale: float = 1.0

    @property
    def shown_to_earn(self) -> bool:
        """The data shows it earns more than handing every item over (its gain's lower bound is above 0)."""
        return bool(self.gain_low > 0)

    @property
    def above_baseline(self) -> bool:
        return above_baseline(self.per_item, self.baseline, self.value_scale)


@dataclass(frozen=True)
class Recommendation:
    """What to deploy, and the numbers that say why.

    Attributes
    ----------
    model, kind : str or None
        The recommended model and rule; None for "no model: hand every item over".
    policy : Policy or None
    per_item, low, high, coverage : float
        The recommended candidate's value per item, interval, and share automated (NaN for none).
    baseline_per_item : float
        Value per item of handing every item over.
    clears_baseline : bool
        The interval's lower bound is above the baseline (False for none).
    choice : str
        How it was chosen: ``"clear"`` (ahead of every other candidate beyond
        noise), ``"only"`` (the only candidate), ``"simpler"`` (a simpler rule
        level within noise with the best), ``"lower_bound"`` (level with the
        best, same simplicity, better lower bound), ``"highest"`` (the best,
        level with others that are no simpler), or why there is none:
        ``"no_candidates"``, ``"pointless"``, ``"all_useless"``.
    alternative : Candidate or None
        The candidate that separates it from the rest: the best on these items
        when the recommendation is another one, else the closest candidate the
        data cannot tell from it, else the runner-up; for none, the best candidate.
    alternative_gap : float
        ``alternative - recommended`` per item (for none: ``best - baseline``).
    separated : bool
        The data tells the alternative apart from the recommendation.
    items_to_separate : float or None
        Labelled items in all that would separate them, if the gap stayed as
        observed (``inf``: they are worth exactly the same); None when separated.
    n_items : float
        Weighted number of evaluated items.
    candidates : tuple of Candidate
        Every (model, rule) judged, best first.
    skipped : tuple of str
        Each (model, rule) that could not be judged, and why, in words.
    confidence : float
        Of the intervals and comparisons.
    abstain_pointless : bool
        Handing an item over is never better than a wrong answer with these
        values, so no threshold can beat acting on every item.
    sure : float
        How sure (one-sided) the evaluated items must make us that a rule
        earns more than handing items over for it to be recommended.
    result : PolicyResult or None
        The recommended policy on its evaluated split: what
        ``pipeline.result(model, policy, values)`` returns, read off the
        verdict's tally of the decision (None for no model, a two-tier or
        shortlist rule, or a rule priced for reviewers).
    interval : Interval or None
        ``pipeline.interval(model, policy, values, result)`` for that result
        (at 95%, as the pipeline's), when the weights are counts (whole
        numbers, exact in total; None otherwise: the pipeline then goes item
        by item).
    """

    model: str | None
    kind: str | None
    policy: Policy | None
    per_item: float
    low: float
    high: float
    coverage: float
    baseline_per_item: float
    clears_baseline: bool
    choice: str
    alternative: Candidate | None
    alternative_gap: float
    separated: bool
    items_to_separate: float | None
    n_items: float
    candidates: tuple
    skipped: tuple = ()
    confidence: float = 0.95
    abstain_pointless: bool = False
    sure: float = SURE
    # Derived from the rest (the recommended policy's evaluation): left out of ``==``, as PolicyResult compares by
    # identity and two recommendations computed alike must compare equal.
    result: PolicyResult | None = field(default=None, compare=False)
    interval: Interval | None = field(default=None, compare=False)

    @property
    def is_none(self) -> bool:
        return self.model is None

    @property
    def gain_per_item(self) -> float:
        """Value per item above handing every item over (NaN for none)."""
        return self.per_item - self.baseline_per_item

    @property
    def threshold(self) -> float | None:
        return None if self.policy is None else self.policy.threshold

    @property
    def status(self) -> str:
        """"deploy", "not_yet" (no model is shown to earn more than handing items over yet) or "no_model"."""
        return "deploy" if self.model is not None else "not_yet" if self.choice == "not_yet" else "no_model"

    def to_dict(self, reason: str) -> dict:
        """The policy JSON's ``recommendation`` object."""
        out = {"model": self.model, "policy": self.kind, "reason": reason, "status": self.status}
        if self.status == "not_yet":
            needed = self.items_to_separate
            out["would_settle"] = {"model": self.alternative.model, "policy": self.alternative.kind,
                                   "labelled_items": needed if needed is not None and math.isfinite(needed)
                                   else None}
        return out


def allowed_kinds(values, *, assisted=None, shortlist_values=None) -> tuple[str, ...]:
    """The rules a recommendation weighs for these values: every kind, two tiers (or a shortlist) when its
    values are given."""
    kinds = [k for k in POLICY_KINDS if not (values.use_case is None and k == "calibrated_threshold")]
    return (*kinds, *(("two_tier",) if assisted is not None else ()),
            *(("shortlist",) if shortlist_values is not None else ()))


# Options that belong to one tiered kind only; the other rules are weighed without them.
_TIER_OPTIONS = {"assisted": "two_tier", "shortlist_values": "shortlist", "shortlist_rule": "shortlist"}


def _constraints_for(kind: str, constraints: Mapping) -> dict:
    """The assisted tier's values are for two tiers only, a shortlist's for shortlists only."""
    tiered = kind in _TIER_OPTIONS.values()  # a tiered rule takes its own options and no others
    return {k: v for k, v in constraints.items()
            if v is not None and (_TIER_OPTIONS[k] == kind if k in _TIER_OPTIONS else not tiered)}


def _fit(pipeline, model: str, kind: str, values, constraints: Mapping) -> Policy:
    if kind == "expected_value" and getattr(pipeline.run(model), "aggregate", False):
        raise ValueError("an aggregate has no item's own probability vector, which the expected-value rule needs")
    constraints = _constraints_for(kind, constraints)
    if kind in ("two_tier", "shortlist") or constraints:
        from .constrained import check_constraint_options

        check_constraint_options(kind, **constraints)
        return pipeline.constrained_policy(model, kind, values, **constraints)[0]
    return pipeline.policy(model, kind, values)


def recommend(
    pipeline,
    values,
    models: Iterable[str] | None = None,
    *,
    kinds: Iterable[str] | None = None,
    confidence: float = 0.95,
    power: float = 0.8,
    sure: float = SURE,
    segment_rules: Mapping[str, SegmentRule] | None = None,
    **constraints,
) -> Recommendation:
    """The one (model, rule) to deploy, or none, from the pipeline behind the export.

    Parameters
    ----------
    pipeline : Pipeline
        Its splits and recalibration are those of the export (the dashboard's
        cached workspace is one).
    values : UseCase or ValueMatrix
    models : iterable of str, optional
        Default: every run of the pipeline.
    kinds : iterable of str, optional
        The rules the settings allow; default every policy kind that applies to
        ``values`` (``two_tier`` too when ``assisted`` values are given).
    confidence, power : float
        Of the verdict's intervals and of ``items_to_separate``.
    sure : float
        How sure (one-sided) the evaluated items must make us that a rule
        earns more per item than handing the item to a person before it is
        recommended: 90% by default (``valuecore._decide.verdict.SURE``, chosen by
        the choice study).
    segment_rules : mapping of model -> SegmentRule, optional
        Thresholds per segment, fitted on each model's tuning split and bound to
        its evaluated split (``valuecore.recommendation.segment_rules``): one
        more candidate per model, ``SEGMENT_RULE``, judged item by item like the
        others (weighed unless ``kinds`` names other rules only; not with
        constraints, which it does not take).
    **constraints
        ``max_handoff_rate``, ``max_risk``, ``risk_confidence``, ``assisted``:
        as for :meth:`Pipeline.entry`; a rule they cannot apply to is skipped.

    Returns
    -------
    Recommendation
        Never a model whose value per item on the evaluated split is at or
        below handing every item over.

    Examples
    --------
    >>> from pathlib import Path
    >>> import valuecore as vc
    >>> runs = vc.load_runs([str(Path(vc.__file__).parent.parent / "sample_runs" / "digits")]).models
    >>> r = vc.recommend(vc.Pipeline(runs), vc.UseCase(1, 0, -20))
    >>> r.model, r.kind, r.choice, r.per_item > r.baseline_per_item
    ('mlp', 'threshold', 'lower_bound', True)

    At a wrong answer of -1000, 450 evaluated items cannot show that any rule earns:

    >>> r = vc.recommend(vc.Pipeline(runs), vc.UseCase(1, 0, -1000))
    >>> r.status, r.alternative.model, r.alternative.kind, int(r.items_to_separate)
    ('not_yet', 'mlp', 'threshold', 2960)
    """
    # Each rule is weighed by its interval, and an interval squares the values: below 1e-100 they vanish from it.
    check_value_range(values, interval=True)
    models = list(pipeline.runs) if models is None else list(models)
    with_segments = bool(segment_rules) and (kinds is None or not set(kinds).isdisjoint({SEGMENT_RULE,
                                                                                          RECOMMENDED_RULE}))
    only_segments = kinds is not None and set(kinds) == {SEGMENT_RULE}
    kinds = () if only_segments else _weighed_kinds(values, kinds, constraints)
    constraints = {k: v for k, v in constraints.items() if v is not None and k != "monitoring"}
    runs, skipped = {}, []
    if with_segments and constraints:
        skipped.append(f"thresholds per segment: they do not take {', '.join(sorted(constraints))}")
        with_segments = False
    for model in models:
        plan = pipeline.plan(model)
        if plan.skip is not None:
            skipped.append(f"{model}: {plan.skip}")
            continue
        predictions = pipeline.predictions(model, plan.eval_split)
        if not predictions.has_labels:
            skipped.append(f"{model}: the evaluated split {plan.eval_split!r} has no labels, so its value cannot "
                           "be measured")
            continue
        try:  # the model's one value matrix, converted once for its rules (each fit would convert it again)
            converted = pipeline.values_for(model, values)
        except ValueError:
            converted = values  # each fit says why, as before
        for kind in kinds:
            try:
                runs[(model, kind)] = (_fit(pipeline, model, kind, converted, constraints), predictions)
            except ValueError as error:
                skipped.append(f"{model}, {kind}: {error}")
        rule = (segment_rules or {}).get(model) if with_segments else None
        if rule is not None:
            if rule.split != plan.eval_split or rule.labels.shape[0] != predictions.n:
                raise ValueError(f"{model}: its thresholds per segment are bound to split {rule.split!r}, "
                                 f"not to the evaluated split {plan.eval_split!r}")
            runs[(model, SEGMENT_RULE)] = (rule, predictions)
    memo: dict = {}  # each rule's item values, computed once for the verdict and the choice
    judged = verdict(runs, values, confidence=confidence, power=power, memo=memo, sure=sure)
    return _with_evaluation(_choose(judged, runs, values, tuple(skipped), confidence, memo, sure), pipeline, values,
                            memo)


def _with_evaluation(r: Recommendation, pipeline, values, memo: dict) -> Recommendation:
    """``r`` with the recommended policy's result and interval on its evaluated split, from the verdict's tally."""
    judged = memo.get((r.model, r.kind), {}).get("judged") if r.model is not None else None
    if judged is None or judged.tally is None:
        return r
    predictions = judged.predictions
    matrix = pipeline.values_for(r.model, values)
    n_classes = predictions.n_classes
    result = evaluate_confusion(judged.tally.weight.reshape(n_classes, n_classes + 1).copy(), predictions, matrix)
    interval = None
    cache = split_cache(predictions)
    # the pipeline's own rule (``pipeline._interval``, at 95% whatever ``confidence``): from the confusion
    # when the weights are counts
    if cache.integral and predictions.total_weight < 2.0**52:  # a total that is exact whatever its rounding
        interval = result_interval(result, matrix, policy=r.policy)
    return replace(r, result=result, interval=interval)


def _weighed_kinds(values, kinds, constraints: Mapping) -> tuple[str, ...]:
    """The rules weighed: those given (the choice "recommended" stands for all of them), else every one allowed."""
    given = () if kinds is None else tuple(k for k in kinds if k != RECOMMENDED_RULE)
    return given or allowed_kinds(values, assisted=constraints.get("assisted"),
                                  shortlist_values=constraints.get("shortlist_values"))


def _rules_alone(pipeline, r: Recommendation, values, confidence: float) -> dict | None:
    """{model: kind}: for each model but the recommended one with two candidates or more, the rule
    :func:`recommend` chooses for it weighed alone among its candidates' rules, read off ``r``'s candidates
    (None when ``r`` was weighed at another ``confidence`` or ``sure``).

    Weighed alone, a model's rules keep their policies, values per item, gains and baselines (each is a rule's
    own, whatever the other models) and their order; only the comparisons with the best change, and the choice
    reads none of them: it takes the firmest of the rules shown to earn and climbs to one clearly ahead
    (:func:`clearly_ahead` on the model's own rules). So this is ``recommend``'s answer for the model alone, bit
    for bit, without fitting and judging its rules again.
    """
    if r.confidence != confidence or r.sure != SURE:
        return None
    by_model: dict = {}
    for c in r.candidates:  # best first; a model's own keep that order when weighed alone
        by_model.setdefault(c.model, []).append(c)
    rules, memo = {}, {}
    for model, own in by_model.items():
        if model == r.model or len(own) <= 1:
            continue
        best = own[0]
        predictions = pipeline.predictions(model, pipeline.plan(model).eval_split)
        pointless, _ = _degenerate_values(values, predictions.classes)
        shown = [c for c in own if c.shown_to_earn]
        if pointless or not best.above_baseline or not shown:
            rules[model] = best.kind  # no model, or not yet: its best rule
            continue
        alone = {(c.model, c.kind): (c.policy, predictions) for c in own}
        rules[model] = _firmest_ahead(shown, own, alone, values, confidence, memo).kind
    return rules


def recommended_rules(
    pipeline,
    values,
    models: Iterable[str] | None = None,
    *,
    kinds: Iterable[str] | None = None,
    recommendation: Recommendation | None = None,
    confidence: float = 0.95,
    power: float = 0.8,
    segment_rules: Mapping[str, SegmentRule] | None = None,
    **constraints,
) -> dict[str, str]:
    """The rule :func:`recommend` chooses for each model: what the choice ``"recommended"`` means.

    The recommended model gets the recommendation's own rule; every other
    model the rule :func:`recommend` chooses among its own rules alone (the
    same order: level with its best and no lower range, then the simpler rule);
    a model none of whose rules earns more than no model gets its best rule,
    and one that cannot be judged (no labels on the evaluated split) one
    threshold. So every page, the export and ``report`` show, for each model,
    the rule that would be recommended if it were the only model, and for the
    recommended model exactly the recommendation.

    Parameters
    ----------
    pipeline, values, models, kinds, confidence, power, segment_rules, **constraints
        As :func:`recommend`.
    recommendation : Recommendation, optional
        ``recommend``'s answer for these arguments, when already computed.

    Returns
    -------
    dict of model -> policy kind

    Examples
    --------
    >>> from pathlib import Path
    >>> import valuecore as vc
    >>> runs = vc.load_runs([str(Path(vc.__file__).parent.parent / "sample_runs" / "digits")]).models
    >>> rules = vc.recommended_rules(vc.Pipeline(runs), vc.UseCase(1, 0, -1000))
    >>> rules["mlp"]
    'threshold'
    """
    models = list(pipeline.runs) if models is None else list(models)
    kinds = _weighed_kinds(values, kinds, constraints)
    if recommendation is None:
        recommendation = recommend(pipeline, values, models, kinds=kinds, confidence=confidence, power=power,
                                   segment_rules=segment_rules, **constraints)
    fallback = "threshold" if "threshold" in kinds else kinds[0]
    known = _rules_alone(pipeline, recommendation, values, confidence)
    rules = {}
    for model in models:
        own = [c for c in recommendation.candidates if c.model == model]  # best first
        if model == recommendation.model:
            rules[model] = recommendation.kind
        elif len(own) <= 1:
            rules[model] = own[0].kind if own else fallback
        elif known is not None:
            rules[model] = known[model]
        else:
            alone = recommend(pipeline, values, [model], kinds=tuple(c.kind for c in own), confidence=confidence,
                              power=power, segment_rules=segment_rules, **constraints)
            rules[model] = alone.kind if alone.model is not None else own[0].kind
    return rules


def _simplicity(c: Candidate) -> int:
    return RULE_SIMPLICITY.get(c.kind, 9)


def _firmest(pool) -> Candidate:
    return min(pool, key=lambda c: (-c.gain_low, _simplicity(c), -c.per_item))


def _firmest_ahead(shown, candidates, runs, values, confidence: float, memo: dict) -> Candidate:
    """The firmest of the candidates ``shown`` to earn, or the one the data puts clearly ahead of it."""
    chosen = _firmest(shown)
    by_key = {(c.model, c.kind): c for c in candidates}
    while ahead := clearly_ahead(runs, values, (chosen.model, chosen.kind), confidence=confidence, memo=memo):
        # one the data puts ahead of a rule shown to earn earns more still: climb to it (its value is higher, so
        # this ends)
        chosen = _firmest([by_key[key] for key in ahead])
    return chosen


def _choose(judged, runs, values, skipped: tuple, confidence: float, memo: dict | None = None,
            sure: float = SURE) -> Recommendation:
    candidates = tuple(
        Candidate(s.model[0], s.model[1], runs[s.model][0], s.per_item, s.low, s.high, s.coverage, s.baseline,
                  s.difference, s.basis == "best" or s.contender, s.items_to_separate, s.gain_low, s.gain_high,
                  s.value_scale)
        for s in judged.standings
    )
    none = dict(model=None, kind=None, policy=None, per_item=math.nan, low=math.nan, high=math.nan,
                coverage=math.nan, baseline_per_item=judged.baseline_per_item, clears_baseline=False,
                n_items=judged.n_items, candidates=candidates, skipped=skipped, confidence=confidence,
                abstain_pointless=judged.abstain_pointless, sure=sure)
    if not candidates:
        return Recommendation(**none, choice="no_candidates", alternative=None, alternative_gap=math.nan,
                              separated=True, items_to_separate=None)
    best = candidates[0]
    if judged.degenerate is not None or not best.above_baseline:
        return Recommendation(**none, choice=judged.degenerate or "all_useless", alternative=best,
                              alternative_gap=best.per_item - best.baseline, separated=True, items_to_separate=None)
    memo = {} if memo is None else memo
    shown = [c for c in candidates if c.shown_to_earn]
    if not shown:
        # Something earns more than no model on these items, yet nothing is shown to on new items: the best
        # on these items may be a lucky fit. Name the candidate closest to being shown, and what would show it.
        promising = max((c for c in candidates if c.above_baseline),
                        key=lambda c: (c.gain_low, -_simplicity(c), c.per_item))
        needed = items_to_show_gain(memo.get((promising.model, promising.kind), {}), runs[(promising.model,
                                    promising.kind)][1], values, sure)
        return Recommendation(**none, choice="not_yet", alternative=promising,
                              alternative_gap=promising.per_item - promising.baseline, separated=False,
                              items_to_separate=needed)
    # The value we can bet on: the highest lower bound of the gain over handing items over, so a lucky fit on
    # a few hundred items (no costly error seen) does not beat a rule whose evidence is firm. Equal bounds (rules
    # making the same decisions): the simpler rule. A shown candidate the data clearly puts ahead is never passed.
    chosen = _firmest_ahead(shown, candidates, runs, values, confidence, memo)
    level = [c for c in candidates if c.contender]
    if len(candidates) == 1:
        how, alternative = "only", None
    elif chosen is best and len(level) == 1:
        how, alternative = "clear", candidates[1]
    elif chosen is best:
        # The closest rival worth naming: another model first (the same model's other rules often tie exactly).
        others = sorted((c for c in level if c is not chosen),
                        key=lambda c: (-c.per_item, _simplicity(c), -c.gain_low))
        how, alternative = "highest", next((c for c in others if c.model != chosen.model), others[0])
    else:
        how, alternative = "lower_bound", best
    if alternative is None:
        gap, separated, needed = math.nan, True, None
    elif alternative is best:
        gap = best.per_item - chosen.per_item
        separated = not chosen.contender
        needed = None if separated else chosen.items_to_separate
    else:
        gap, separated = alternative.per_item - chosen.per_item, not alternative.contender
        needed = None if separated else alternative.items_to_separate
    return Recommendation(
        model=chosen.model, kind=chosen.kind, policy=chosen.policy, per_item=chosen.per_item, low=chosen.low,
        high=chosen.high, coverage=chosen.coverage, baseline_per_item=chosen.baseline,
        clears_baseline=True, choice=how, alternative=alternative,
        alternative_gap=gap, separated=separated, items_to_separate=needed, n_items=judged.n_items,
        candidates=candidates, skipped=skipped, confidence=confidence, abstain_pointless=judged.abstain_pointless,
        sure=sure,
    )


@dataclass(frozen=True)
class RuleRefitted:
    """The recommended model's entry refitted: it held the rule ``previous`` and now holds ``kind``."""

    model: str
    kind: str
    previous: str


def recommended_document(pipeline, document, recommendation: Recommendation, values, reason: str, *,
                         with_interval: bool = True, **constraints):
    """``document`` with its ``recommendation``, and the recommended model's entry holding the recommended rule.

    When the document was built with another rule for the recommended model,
    that model's entry is refitted with the recommended one (a serving system
    reading the recommendation finds the very policy it names); thresholds per
    segment (``SEGMENT_RULE``) put the entry their rule was built with (schema
    version 3, ``models[].segments``). Returns
    (document, notes): a :class:`RuleRefitted` for each entry refitted
    (:func:`valuecore.wording.refitted_note` says it).
    """
    notes = []
    entries = list(document.entries)
    r = recommendation
    if r.model is not None:
        index = next((i for i, e in enumerate(entries) if e.model == r.model), None)
        held = None if index is None else _entry_kind(entries[index])
        if held != r.kind:
            if r.kind == SEGMENT_RULE:
                entry = r.policy.entry
            else:
                monitoring = {"monitoring": True} if constraints.get("monitoring") else {}
                entry = pipeline.entry(r.model, r.kind, values, with_interval=with_interval, **monitoring,
                                       **_constraints_for(r.kind, constraints))
            if index is None:
                entries.append(entry)
            else:
                notes.append(RuleRefitted(r.model, r.kind, held))
                entries[index] = entry
    return replace(document, entries=tuple(entries), recommendation=r.to_dict(reason)), notes


def _entry_kind(entry) -> str:
    """The rule a policy JSON entry holds: its policy's kind, or ``SEGMENT_RULE`` for thresholds per segment."""
    return SEGMENT_RULE if entry.segments is not None else entry.policy.kind
