"""The "Capacity & guarantees" page as data: :func:`build` returns a :class:`CapacityPage`.

Every figure is computed by valuecore on the model's tuning split (where the
thresholds are chosen) and, where said, measured on the evaluated split, then
scaled to a day of the volume the user gives. Comparisons between rules (one
more reviewer, no limit at all, the worth of a review slot) are all made on the
tuning split, where the rules are chosen and each is the best of its budget, so
they never contradict each other; the chosen rule's value is then measured on
the evaluated split. No Streamlit here: the page lays out what :func:`build`
returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, ClassVar

import numpy as np
import pandas as pd

import valuecore as vc

from ..safetext import md_text
from ..settings import Settings
from . import percent, shown_confidences, split_text, threshold_on_data


@dataclass(frozen=True)
class CapacityView:
    """The capacity answer for one model, per day.

    ``value_per_day`` is measured on the evaluated split; the ``tuned_*`` figures, the curve and the value
    of a slot are on the tuning split, where the rules are chosen.
    """

    threshold_text: str
    value_per_day: float
    tuned_per_day: float  # the chosen rule on the tuning split
    more_per_day: float  # the best rule with one more reviewer, tuning split
    unconstrained_per_day: float  # the best rule of the kind without a limit, tuning split
    marginal_per_slot: float
    handoffs_per_day: float  # of the chosen rule, tuning split
    unconstrained_handoffs_per_day: float | None  # of the best rule without a limit (one threshold only)
    next_step_reviews: float | None  # the fewest reviews a day that buy a better rule than now (one threshold)
    binding: bool
    exact: bool
    curve: pd.DataFrame  # reviews_per_day, value_per_day, threshold
    tune_split: str | None = None
    eval_split: str | None = None
    eval_handoffs_per_day: float | None = None  # of the chosen rule, evaluated split
    per_class: bool = False
    one_threshold_per_day: float | None = None  # per class: the best single threshold of the same budget, tuning

    @property
    def extra_reviewer_per_day(self) -> float:
        return self.more_per_day - self.tuned_per_day

    @property
    def limit_cost_per_day(self) -> float:
        return self.unconstrained_per_day - self.tuned_per_day


def _rule_text(policy: vc.Policy, confidences) -> str:
    def shown(t):
        return threshold_on_data(t, confidences)

    if policy.kind == "class_thresholds":
        parts = [f"{label}: {'never' if t is None else shown(t)}" for label, t in policy.class_thresholds]
        return "per-class thresholds (" + ", ".join(parts) + ")"
    return "hand everything to people" if policy.threshold is None else f"threshold {shown(policy.threshold)}"


def _per_item_on_eval(ws, model: str, policy: vc.Policy, values) -> float:
    result = ws.result(model, policy, values)
    return float("nan") if result is None else result.value_per_item


def _per_item(fitted) -> float:
    return fitted.value_total / fitted.n_items if fitted.n_items > 0 else 0.0


def _next_step(curve, budget: float) -> float | None:
    """The fewest hand-offs that buy a better single threshold than ``budget`` does (None: none does)."""
    slack = 1e-9 * max(1.0, curve.n_items)
    k = min(int(np.searchsorted(-curve.handoffs, -(budget + slack), side="left")), curve.handoffs.size - 1)
    better = np.flatnonzero(curve.best_gain[:k] > curve.best_gain[k] + slack)
    return None if better.size == 0 else float(curve.handoffs[better[-1]])


def capacity_view(
    ws, model: str, values, *, volume: float, capacity: float, reviewer: float, per_class: bool
) -> CapacityView:
    """Best policy with at most ``capacity`` reviews a day out of ``volume`` items; one more reviewer's worth."""
    run = ws.sorted(model, ws.tuning_split_for(model))
    kind = "class_thresholds" if per_class else "threshold"
    calibration = ws.calibration_dict(model)
    rate = min(capacity / volume, 1.0)
    more = min((capacity + reviewer) / volume, 1.0)
    chosen = vc.constraints.fit_capacity(run, values, max_handoff_rate=rate, kind=kind, calibration=calibration)
    bigger = vc.constraints.fit_capacity(run, values, max_handoff_rate=more, kind=kind, calibration=calibration)
    unlimited = vc.constraints.fit_capacity(run, values, max_handoff_rate=1.0, kind=kind, calibration=calibration)
    curve = vc.constraints.capacity_curve(run, values)
    single = (vc.constraints.fit_capacity(run, values, max_handoff_rate=rate, calibration=calibration)
              if per_class else None)
    evaluated = ws.result(model, chosen.policy, values)
    n = run.total_weight if run.total_weight > 0 else 1.0
    step = None if per_class or not chosen.binding else _next_step(curve, chosen.max_handoffs)
    frame = curve.to_frame()
    return CapacityView(
        threshold_text=_rule_text(chosen.policy, shown_confidences(ws, model)),
        value_per_day=_per_item_on_eval(ws, model, chosen.policy, values) * volume,
        tuned_per_day=_per_item(chosen) * volume,
        more_per_day=_per_item(bigger) * volume,
        unconstrained_per_day=_per_item(unlimited) * volume,
        marginal_per_slot=chosen.marginal_value,
        handoffs_per_day=chosen.handoff_rate * volume,
        unconstrained_handoffs_per_day=None if per_class else unlimited.handoff_rate * volume,
        next_step_reviews=None if step is None else step / n * volume,
        binding=chosen.binding,
        exact=chosen.exact,
        curve=pd.DataFrame({
            "reviews_per_day": frame["handoff_rate"] * volume,
            "value_per_day": frame["value_per_item"] * volume,
            "threshold": frame["threshold"],
        }),
        tune_split=ws.tuning_split_for(model),
        eval_split=ws.eval_split,
        eval_handoffs_per_day=None if evaluated is None else (1 - evaluated.coverage) * volume,
        per_class=per_class,
        one_threshold_per_day=None if single is None else _per_item(single) * volume,
    )


def _count(x: float) -> str:
    """A computed number of items, whole."""
    return f"{x:,.0f}"


def _given(x: float) -> str:
    """A number the user typed, as typed (7.5 reviews stay 7.5)."""
    return f"{x:,g}"


def capacity_sentence(view: CapacityView, *, capacity: float, reviewer: float, money) -> str:
    """The answer in words; every comparison is made on the tuning split, so the words agree with each other."""
    tune = split_text(view.tune_split)
    text = (
        f"Your team can review **{_given(capacity)} items a day**: best rule **{md_text(view.threshold_text)}**, "
        f"**{money(view.value_per_day)} per day** on {split_text(view.eval_split)} "
        f"({money(view.tuned_per_day)} on {tune}, where the rule is chosen and the curve below is drawn)."
    )
    if view.per_class and view.one_threshold_per_day is not None and view.one_threshold_per_day > (
            view.tuned_per_day + 0.005):
        text += (f" Under the same limit one threshold for every class earns more on {tune} "
                 f"({money(view.one_threshold_per_day)} per day): per-class thresholds sharing a budget are "
                 "chosen class by class and can miss it; turn them off.")
    if not view.binding:
        return text + (
            f" The team is not the bottleneck: on {tune}, where the rule is chosen, it hands off "
            + ("almost no items" if view.handoffs_per_day < 0.5 else f"about {_count(view.handoffs_per_day)} items")
            + " a day, within capacity, so one more reviewer "
            f"({_given(reviewer)} reviews a day) adds nothing."
        ) + _evaluated_workload(view, capacity)
    if view.extra_reviewer_per_day <= 0.005 and view.limit_cost_per_day <= 0.005:
        # The rule uses the whole budget, yet no bigger budget buys a better rule: not a limit that binds.
        return text + (
            f" The rule uses the whole budget, but on {tune}, where rules are chosen, a bigger one buys nothing: "
            f"one more reviewer ({_given(reviewer)} reviews a day) adds **nothing**, and neither would lifting "
            "the limit altogether."
        ) + _evaluated_workload(view, capacity)
    if view.unconstrained_handoffs_per_day is not None:
        text += (f" The limit binds: without it the best rule would hand off about "
                 f"{_count(view.unconstrained_handoffs_per_day)} items a day.")
    else:
        text += " The limit binds."
    extra = view.extra_reviewer_per_day
    if extra > 0.005:
        text += (f" On {tune}, where rules are chosen, one more reviewer ({_given(reviewer)} reviews a day) adds "
                 f"**{money(extra)} per day**")
    else:
        text += (f" On {tune}, where rules are chosen, one more reviewer ({_given(reviewer)} reviews a day) adds "
                 "**nothing**")
        if view.next_step_reviews is not None:
            text += (f" (the next better rule needs about {_count(view.next_step_reviews)} reviews a day in all, "
                     f"{_count(view.next_step_reviews - capacity)} more than now)")
    text += f", and lifting the limit altogether would add {money(view.limit_cost_per_day)} per day."
    text += _evaluated_workload(view, capacity)
    if not view.exact:
        text += (
            " (Per-class thresholds under a shared budget are optimal only at some budgets; this one is "
            "within a small, known margin of the best.)"
        )
    return text


def _evaluated_workload(view: CapacityView, capacity: float) -> str:
    """A warning when the rule, chosen within capacity on the tuning split, hands off more on the evaluated one."""
    handoffs = view.eval_handoffs_per_day
    if handoffs is None or handoffs <= capacity + 0.5:
        return ""
    return (f" On {split_text(view.eval_split)} the same rule hands off about {_count(handoffs)} items a day, "
            f"more than the {_given(capacity)} your team can review: new items like these may need more reviewers.")


def capacity_caption(view: CapacityView, money) -> str:
    """What one more review slot is worth, in words that agree with the sentence."""
    tune = split_text(view.tune_split)
    curve = ("The curve is for one threshold for every class; the per-class rule above shares the same budget and "
             "is not on it." if view.per_class else "The curve is for one threshold for every class.")
    if view.marginal_per_slot <= 0:
        return f"On {tune} the curve is flat past your capacity: more review slots earn nothing. " + curve
    return (
        f"On {tune}, beyond your capacity, a review slot is worth about {money(view.marginal_per_slot)} a day "
        "(the slope of the best value against capacity, smoothed to diminishing returns: extra reviews pay while a "
        "slot costs less). The gains come in steps, so a few more slots may add nothing until the next step. "
        + curve
    )


@dataclass(frozen=True)
class RiskView:
    result: object  # vc.constraints.CertifiedRisk
    automated_share: float | None  # on the evaluated split
    error_rate: float | None  # on the evaluated split
    value_per_day: float
    table: pd.DataFrame  # tested grid points
    n_tuning: float
    confidences: object = None  # the model's confidences on the data shown, to write thresholds with


RISK_STEP, RISK_MAX = 0.005, 0.3  # the guaranteed error rate's slider: 0% to 30% in steps of half a percent


def risk_stops(current: float | None) -> tuple[float, ...]:
    """The error rates the slider offers, as shares: every half percent up to 30%, and ``current`` where a link
    or an imported file set a rate between two stops (it is shown as it is, not moved to a stop)."""
    stops = [round(i * RISK_STEP, 3) for i in range(round(RISK_MAX / RISK_STEP) + 1)]
    if current is not None and current not in stops:
        stops = sorted([*stops, float(current)])
    return tuple(stops)


def tuning_weighted(ws, model: str) -> bool:
    """Whether the tuning split carries weights other than 0 and 1 (a certified risk must be told what they mean)."""
    weight = ws.sorted(model, ws.tuning_split_for(model)).predictions.sample_weight
    return bool(np.any((weight > 0) & (weight != 1)))


def risk_view(ws, model: str, values, *, max_risk: float, confidence: float, volume: float,
              weights: str = "unit") -> RiskView:
    """The certified choice on the tuning split; ValueError (in words) for weights it cannot count."""
    run = ws.sorted(model, ws.tuning_split_for(model))
    result = vc.constraints.fit_certified(
        run, values, max_risk=max_risk, confidence=confidence, calibration=ws.calibration_dict(model), weights=weights
    )
    evaluated = ws.result(model, result.policy, values)
    n = run.total_weight if run.total_weight > 0 else 1.0
    tested = np.flatnonzero(result.tested)
    accepted = run.cum_accepted[1:]
    wrong = run.cum_wrong[1:]
    table = pd.DataFrame(
        {
            "threshold": result.thresholds[tested],
            "coverage": accepted[tested] / n,
            "error_rate": np.where(accepted[tested] > 0, wrong[tested] / np.maximum(accepted[tested], 1e-300), np.nan),
            "upper_bound": result.bounds[tested],
            "certified": result.certified[tested],
        }
    )
    return RiskView(
        result=result,
        automated_share=None if evaluated is None else evaluated.coverage,
        error_rate=None if evaluated is None else evaluated.selective_risk,
        value_per_day=float("nan") if evaluated is None else evaluated.value_per_item * volume,
        table=table,
        n_tuning=run.total_weight,
        confidences=shown_confidences(ws, model),
    )


def risk_sentences(view: RiskView, *, max_risk: float, confidence: float, money) -> list[str]:
    result = view.result
    if result.policy.threshold is None:
        if not result.any_certified:
            return [
                f"Nothing can be guaranteed: no threshold keeps wrong answers under {percent(max_risk)} with "
                f"{percent(confidence, 0)} confidence on the {view.n_tuning:,.0f} items of the tuning split. "
                "The safe choice is to hand every item to people; more labelled tuning data helps."
            ]
        return ["Some thresholds keep the promise, but none of them earns more than handing everything to people."]
    guaranteed = threshold_on_data(result.policy.threshold, view.confidences)
    lines = [
        f"With **{percent(confidence, 0)} confidence, at most {percent(max_risk)} of automated answers are wrong** "
        # The bound is the tighter figure, not a second promise: "at most 5.0% (... at most 2.9%)" read as two.
        f"at threshold **{guaranteed}**, and the {result.n_accepted:,.0f} tuning items it rests on say more: the "
        f"share wrong on new items is at most {percent(result.upper_bound)}. It automates "
        f"{percent(view.automated_share)} of items "
        "and earns "
        f"**{money(view.value_per_day)} per day** (evaluated split: {percent(view.error_rate)} wrong)."
    ]
    empirical = result.empirical_threshold
    if empirical is not None and empirical != result.policy.threshold:
        lines.append(
            "Picking the threshold by the tuning split's error rate alone would give "
            f"{threshold_on_data(empirical, view.confidences)}, "
            "with no guarantee: in our simulation such a choice broke the promise on new data about half the time."
        )
    return lines


RISK_CAPTION = (f"How the guarantee is checked: {vc.wording.CERTIFIED_ON}, and the walk stops at the first that "
                "fails; ")


@dataclass(frozen=True)
class _TiersPerDay:
    """A three-tier answer on the evaluated split, per day: act / a person with help / a blank hand-off."""

    policy: object
    result: object  # vc.constraints.TwoTierResult or ShortlistResult on the evaluated split
    single_per_item: float
    volume: float
    confidences: object = None  # the model's confidences on the data shown, to write thresholds with
    TIER_NAMES: ClassVar[tuple] = ()
    PEOPLE: ClassVar[tuple] = ()  # the words for the tiers a person works on

    def _counts(self) -> tuple:
        raise NotImplementedError

    @property
    def per_day(self) -> list[float]:
        n = self.result.n_items if self.result.n_items > 0 else 1.0
        return [count / n * self.volume for count in self._counts()]

    @property
    def tiers(self) -> pd.DataFrame:
        return pd.DataFrame({"tier": list(self.TIER_NAMES), "items_per_day": self.per_day})

    def threshold(self, t: float) -> str:
        return threshold_on_data(t, self.confidences)

    def _auto(self) -> str:
        policy = self.policy
        return ("Never act alone" if policy.threshold is None
                else f"Act alone at confidence ≥ {self.threshold(policy.threshold)}")

    def _against_single(self, money) -> str:
        plan, single = self.result.value_per_item * self.volume, self.single_per_item * self.volume
        word = "more than" if plan > single + 0.005 else "less than" if plan < single - 0.005 else "the same as"
        return f"worth **{money(plan)} per day**, {word} the {money(single)} of one threshold"

    def workload(self, capacity: float | None) -> str:
        """How many items a day people work on under this plan, said against the team's capacity."""
        _, helped, blank = self.per_day
        people = helped + blank
        text = (f" People would work on about {_count(people)} items a day ({_count(helped)} {self.PEOPLE[0]}, "
                f"{_count(blank)} {self.PEOPLE[1]})")
        if capacity is None:
            return text + "."
        if people > capacity + 0.5:
            return text + (f", more than the {_given(capacity)} your team can review: this plan ignores the review "
                           "capacity above.")
        return text + f", within the {_given(capacity)} your team can review."


@dataclass(frozen=True)
class TwoTierView(_TiersPerDay):
    TIER_NAMES: ClassVar[tuple] = ("Automatic", "Confirmed by a person", "Handed off")
    PEOPLE: ClassVar[tuple] = ("confirmations", "blank hand-offs")

    def _counts(self) -> tuple:
        return self.result.n_auto, self.result.n_assisted, self.result.n_handoff


def two_tier_view(
    ws, model: str, values, assisted: vc.constraints.AssistedValues, *, volume: float
) -> TwoTierView | None:
    split = ws.tuning_split_for(model)
    run = ws.sorted(model, split)
    evaluated = ws.predictions(model, ws.eval_split)
    if evaluated is None or not evaluated.has_labels:
        return None
    policy = vc.constraints.fit_two_tier(run, values, assisted, calibration=ws.calibration_dict(model))
    single = vc.fit_policy("threshold", run, values, calibration=ws.calibration_dict(model))
    return TwoTierView(
        policy=policy,
        result=vc.constraints.evaluate_two_tier(policy, evaluated, values),
        single_per_item=vc.evaluate(single, evaluated, values).value_per_item,
        volume=volume,
        confidences=shown_confidences(ws, model),
    )


def two_tier_sentence(view: TwoTierView, money, capacity: float | None = None) -> str:
    policy = view.policy
    if policy.threshold == policy.assist_threshold:
        return (
            "Asking a person to confirm does not pay with these values: the best plan is the single "
            f"threshold, worth {money(view.single_per_item * view.volume)} per day."
        )
    automatic, confirmed, blank = view.per_day
    return (
        f"{view._auto()}, ask a person to confirm from **{view.threshold(policy.assist_threshold)}**, "
        f"hand off below: about {_count(automatic)} automatic, {_count(confirmed)} confirmed and {_count(blank)} "
        f"handed-off items a day, {view._against_single(money)}."
    ) + view.workload(capacity)


@dataclass(frozen=True)
class ShortlistView(_TiersPerDay):
    levels_searched: tuple | None = None  # (searched, distinct) when a grid of levels was searched
    TIER_NAMES: ClassVar[tuple] = ("Automatic", "Handed off with a shortlist", "Handed off blank")
    PEOPLE: ClassVar[tuple] = ("with a list", "blank")

    def _counts(self) -> tuple:
        return self.result.n_auto, self.result.n_listed, self.result.n_handoff


def shortlist_view(ws, model: str, values, shortlist_values: dict, rule: str, *, volume: float
                   ) -> ShortlistView | str:
    """The shortlist answer for one model, or why there is none (a sentence)."""
    split = ws.tuning_split_for(model)
    run = ws.sorted(model, split)
    evaluated = ws.predictions(model, ws.eval_split)
    if evaluated is None or not evaluated.has_labels:
        return "The evaluated split has no labels, so the tiers cannot be measured."
    if run.predictions.proba is None:
        return ("A shortlist is read off each item's probability for every class, which this run (or isotonic "
                "calibration, which keeps only the top confidence) does not give.")
    levels, n_distinct = (vc.constraints.shortlist_level_grid(run.predictions) if rule == "cumulative"
                          else (None, 0))
    policy = vc.constraints.fit_shortlist(run, values, shortlist_values, rule=rule,
                                          calibration=ws.calibration_dict(model), levels=levels)
    single = vc.fit_policy("threshold", run, values, calibration=ws.calibration_dict(model))
    return ShortlistView(
        policy=policy,
        result=vc.constraints.evaluate_shortlist(policy, evaluated, values),
        single_per_item=vc.evaluate(single, evaluated, values).value_per_item,
        volume=volume,
        confidences=shown_confidences(ws, model),
        levels_searched=None if levels is None or levels.size == n_distinct else (levels.size, n_distinct),
    )


# With two classes a list of one is the prediction (the two-tier section's confirmation) and a list of two holds
# every class: the section used to repeat the two-tier section's figures.
TWO_CLASSES = ("A shortlist needs three classes or more: with two, a list of one class is the prediction itself "
               "(the section above, where a person confirms it) and a list of two holds every class.")


def shortlist_sentence(view: ShortlistView, money, capacity: float | None = None) -> str:
    policy, result = view.policy, view.result
    spec = policy.shortlist
    if result.n_listed == 0 and spec["list_threshold"] == policy.threshold:
        return (
            "A shortlist does not pay with these values: the best plan is the single "
            f"threshold, worth {money(view.single_per_item * view.volume)} per day."
        )
    listed = "no list" if spec["list_threshold"] is None else f"**{view.threshold(spec['list_threshold'])}**"
    what = (f"the {spec['k']} likeliest classes" if spec["rule"] == "top_k" else
            f"the fewest likeliest classes whose probabilities add up to {percent(spec['level'])}"
            + (f" ({result.mean_list_size:.1f} classes on average)" if result.n_listed > 0 else ""))
    automatic, on_list, blank = view.per_day
    if result.n_listed == 0:
        return (f"{view._auto()}, hand off with {what} from {listed}, blank below. No evaluated item falls between "
                f"the two thresholds, so no list is shown and the plan is {view._against_single(money)}."
                ) + view.workload(capacity)
    held = result.n_listed_hit / result.n_listed
    return (
        f"{view._auto()}, hand off with {what} from {listed}, blank below: "
        f"about {_count(automatic)} automatic, {_count(on_list)} listed ({percent(held)} of the lists hold the "
        f"answer) and {_count(blank)} blank hand-offs a day, {view._against_single(money)}."
    ) + view.workload(capacity) + ("" if view.levels_searched is None else
                                   f" (The level was searched over {view.levels_searched[0]:,} of the "
                                   f"{view.levels_searched[1]:,} distinct levels: too many to try them all here.)")


def _two_tier_document(ws, model: str, values, calibration: str, eval_split, assisted) -> str:
    """The two-tier policy JSON (built when the download button is pressed, not on every rerun)."""
    document, _ = vc.policy_json.build_policy_document(
        {model: ws.run(model)}, values, kind="two_tier", calibration_method=calibration,
        tune_split=ws.tuning_split_for(model), eval_split=eval_split, assisted=assisted.to_dict(),
    )
    return document.to_json()


# ---------------------------------------------------------------- the page
_DEFAULTS = Settings()


@dataclass(frozen=True)
class Inputs:
    """What the page's widgets say, section by section (by default, the settings' defaults)."""

    volume: float = _DEFAULTS.constraints_volume
    capacity: float = _DEFAULTS.constraints_capacity
    reviewer: float = _DEFAULTS.constraints_reviewer
    per_class: bool = _DEFAULTS.constraints_per_class
    max_risk: float = _DEFAULTS.constraints_max_risk
    confidence: float = _DEFAULTS.constraints_confidence
    weights: str = "unit"  # "copies" when each weight counts that many independent items
    assisted: object = None  # vc.constraints.AssistedValues
    list_size: int = 2
    list_values: tuple = (0.25, 0.0)  # value when the list holds the answer, when it does not (default_list_values)
    list_rule: str = "top_k"


@dataclass(frozen=True)
class Section:
    """One section's answer: sentences (markdown-safe), a chart's frame, a caption, a notice in place of all."""

    sentences: tuple = ()
    chart: pd.DataFrame | None = None
    caption: str = ""
    caption_help: str | None = None
    notice: tuple | None = None  # (severity, text) shown instead of an answer
    document: Callable[[], str] | None = None  # the policy JSON, made when asked for


@dataclass(frozen=True)
class CapacityPage:
    model: str
    intro: str
    capacity: Section
    risk: Section
    tiers: Section
    shortlist: Section
    views: dict  # section name -> its view (CapacityView, RiskView, ...), for tests and the curious


def intro(selection) -> str:
    return (
        "The best threshold is the first answer. The next questions are about limits and promises: what to do when "
        "the team can only review so many items, how to promise an error rate and keep the promise on new data, "
        "and whether a person confirming a pre-filled answer pays. Thresholds are chosen on the tuning split "
        f"{split_text(selection.tune_split)}; values per day are measured on {split_text(selection.eval_split)} "
        "and scaled to your volume."
    )


def labelled_models(selection, ws) -> list[str]:
    """The selected models with a labelled tuning split (every answer here needs one)."""
    return [m for m in selection.models
            if (p := ws.predictions(m, ws.tuning_split_for(m))) is not None and p.has_labels]


def default_assisted(use_case) -> vc.constraints.AssistedValues:
    """The assisted tier from the three values: a confirmed answer is worth a correct one, a wrong one put to a
    person a hand-off, and a person's time half of what an automatic correct answer gains over a hand-off."""
    return vc.constraints.AssistedValues(float(use_case.v_correct), float(use_case.v_abstain),
                                         float(max(use_case.gain_correct / 2, 0.0)))


def default_list_values(use_case) -> tuple[float, float]:
    """A listed hand-off: a quarter of the way from a hand-off to a correct answer when the list holds it, else a
    hand-off. Picking from a list takes longer than confirming one pre-filled answer (whose default nets half the
    way, :func:`default_assisted`): at half-way too the two sections showed the same figures."""
    return (float(use_case.v_abstain + use_case.gain_correct / 4), float(use_case.v_abstain))


def class_count(ws, model: str) -> int:
    return len(ws.run(model).classes)


def build(selection, ws, model: str, inputs: Inputs) -> CapacityPage:
    """Every section's answer for ``model`` under the page's ``inputs``."""
    # Every amount here is a day's: whole units from 100 up (valuecore.wording.projected).
    values, money, volume = selection.values, selection.projected, inputs.volume
    views = {}
    answer = capacity_view(ws, model, values, volume=volume, capacity=inputs.capacity, reviewer=inputs.reviewer,
                           per_class=inputs.per_class)
    views["capacity"] = answer
    capacity = Section(sentences=(capacity_sentence(answer, capacity=inputs.capacity, reviewer=inputs.reviewer,
                                                    money=money),),
                       chart=answer.curve, caption=capacity_caption(answer, money))
    try:
        risk_answer = risk_view(ws, model, values, max_risk=inputs.max_risk, confidence=inputs.confidence,
                                volume=volume, weights=inputs.weights)
    except ValueError as error:
        risk = Section(notice=("warning", f"No guaranteed error rate for **{md_text(model)}**: {md_text(error)}"))
    else:
        views["risk"] = risk_answer
        counted = "each weight counts as that many independent items" if inputs.weights == "copies" else (
            "every item counts once")
        risk = Section(
            sentences=tuple(risk_sentences(risk_answer, max_risk=inputs.max_risk, confidence=inputs.confidence,
                                           money=money)),
            chart=None if risk_answer.table.empty else risk_answer.table,
            # A plain description; the method's name and its jargon in the tooltip, for those who look it up.
            caption=RISK_CAPTION + counted + " (the ? says more).",
            caption_help=(f"The method is known as learn-then-test. {vc.wording.GLOSSARY['learn-then-test']} "
                          f"Method: {md_text(risk_answer.result.method)}."),
        )
    assisted = inputs.assisted if inputs.assisted is not None else default_assisted(selection.use_case)
    tiers_answer = two_tier_view(ws, model, values, assisted, volume=volume)
    if tiers_answer is None:
        tiers = Section(notice=("info", f"The evaluated split {split_text(selection.eval_split)} has no labels, so "
                                        "the tiers cannot be measured."))
    else:
        views["tiers"] = tiers_answer
        tiers = Section(sentences=(two_tier_sentence(tiers_answer, money, inputs.capacity),),
                        chart=tiers_answer.tiers,
                        document=partial(_two_tier_document, ws, model, values, selection.calibration,
                                         selection.eval_split, assisted))
    listing = TWO_CLASSES if class_count(ws, model) < 3 else shortlist_view(
        ws, model, values, {str(inputs.list_size): list(inputs.list_values)}, inputs.list_rule, volume=volume)
    if isinstance(listing, str):
        shortlist = Section(notice=("info", listing))
    else:
        views["shortlist"] = listing
        shortlist = Section(sentences=(shortlist_sentence(listing, money, inputs.capacity),), chart=listing.tiers)
    return CapacityPage(model=model, intro=intro(selection), capacity=capacity, risk=risk, tiers=tiers,
                        shortlist=shortlist, views=views)
