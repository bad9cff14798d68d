"""Logic and words of the "Capacity & guarantees" page (no Streamlit here).

Every figure is computed by valuecore on the model's tuning split (where the
thresholds are chosen) and, where said, measured on the evaluated split, then
scaled to a day of the volume the user gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

import valuecore as vc

from .safetext import md_text


@dataclass(frozen=True)
class CapacityView:
    """The capacity answer for one model, per day."""

    threshold_text: str
    value_per_day: float
    unconstrained_per_day: float
    extra_reviewer_per_day: float
    marginal_per_slot: float
    handoffs_per_day: float
    binding: bool
    exact: bool
    curve: pd.DataFrame  # reviews_per_day, value_per_day, threshold


def _rule_text(policy: vc.Policy) -> str:
    if policy.kind == "class_thresholds":
        parts = [f"{label}: {'never' if t is None else f'{t:.2f}'}" for label, t in policy.class_thresholds]
        return "per-class thresholds (" + ", ".join(parts) + ")"
    return "hand everything to people" if policy.threshold is None else f"threshold {policy.threshold:.2f}"


def _per_item_on_eval(ws, model: str, policy: vc.Policy, values) -> float:
    result = ws.result(model, policy, values)
    return float("nan") if result is None else result.value_per_item


def capacity_view(
    ws, model: str, values, *, volume: float, capacity: float, reviewer: float, per_class: bool
) -> CapacityView:
    """Best policy with at most ``capacity`` reviews a day out of ``volume`` items, and the worth of one more reviewer.

    Values per day are measured on the evaluated split (value per item x volume);
    the curve and the value per extra slot are on the tuning split.
    """
    run = ws.sorted(model, ws.tuning_split_for(model))
    kind = "class_thresholds" if per_class else "threshold"
    calibration = ws.calibration_dict(model)
    rate = min(capacity / volume, 1.0)
    more = min((capacity + reviewer) / volume, 1.0)
    chosen = vc.constraints.fit_capacity(run, values, max_handoff_rate=rate, kind=kind, calibration=calibration)
    bigger = vc.constraints.fit_capacity(run, values, max_handoff_rate=more, kind=kind, calibration=calibration)
    free = vc.fit_policy(kind, run, values, calibration=calibration)
    per_item = _per_item_on_eval(ws, model, chosen.policy, values)
    curve = vc.constraints.capacity_curve(run, values).to_frame()
    curve = pd.DataFrame(
        {
            "reviews_per_day": curve["handoff_rate"] * volume,
            "value_per_day": curve["value_per_item"] * volume,
            "threshold": curve["threshold"],
        }
    )
    return CapacityView(
        threshold_text=_rule_text(chosen.policy),
        value_per_day=per_item * volume,
        unconstrained_per_day=_per_item_on_eval(ws, model, free, values) * volume,
        extra_reviewer_per_day=(_per_item_on_eval(ws, model, bigger.policy, values) - per_item) * volume,
        marginal_per_slot=chosen.marginal_value,
        handoffs_per_day=chosen.handoff_rate * volume,
        binding=chosen.binding,
        exact=chosen.exact,
        curve=curve,
    )


def capacity_sentence(view: CapacityView, *, capacity: float, reviewer: float, money) -> str:
    text = (
        f"Your team can review **{capacity:,.0f} items a day**: best rule **{md_text(view.threshold_text)}**, "
        f"**{money(view.value_per_day)} per day**; each extra reviewer ({reviewer:,.0f} reviews a day) adds "
        f"**{money(view.extra_reviewer_per_day)} per day**."
    )
    if not view.binding:
        text += (
            f" The team is not the bottleneck: the best rule hands off about {view.handoffs_per_day:,.0f} "
            "items a day, within capacity."
        )
    else:
        text += (
            f" Without the limit the model would earn {money(view.unconstrained_per_day)} per day, "
            "so the limit costs "
            f"{money(view.unconstrained_per_day - view.value_per_day)} per day."
        )
    if not view.exact:
        text += (
            " (Per-class thresholds under a shared budget are optimal only at some budgets; this one is "
            "within a small, known margin of the best.)"
        )
    return text


@dataclass(frozen=True)
class RiskView:
    result: object  # vc.constraints.CertifiedRisk
    automated_share: float | None  # on the evaluated split
    error_rate: float | None  # on the evaluated split
    value_per_day: float
    table: pd.DataFrame  # tested grid points
    n_tuning: float


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
    )


def risk_sentences(view: RiskView, *, max_risk: float, confidence: float, money, percent) -> list[str]:
    result = view.result
    if result.policy.threshold is None:
        if not result.any_certified:
            return [
                f"Nothing can be guaranteed: no threshold keeps wrong answers under {percent(max_risk)} with "
                f"{percent(confidence, 0)} confidence on the {view.n_tuning:,.0f} items of the tuning split. "
                "The safe choice is to hand every item to people; more labelled tuning data helps."
            ]
        return ["Some thresholds are certified, but none of them earns more than handing everything to people."]
    lines = [
        f"With **{percent(confidence, 0)} confidence, at most {percent(max_risk)} of automated answers are wrong** "
        f"at threshold **{result.policy.threshold:.2f}** (certified bound {percent(result.upper_bound)}, resting on "
        f"{result.n_accepted:,.0f} tuning items). It automates {percent(view.automated_share)} of items and earns "
        f"**{money(view.value_per_day)} per day** (evaluated split: {percent(view.error_rate)} wrong)."
    ]
    empirical = result.empirical_threshold
    if empirical is not None and f"{empirical:.3f}" != f"{result.policy.threshold:.3f}":
        lines.append(
            "Picking the threshold by the tuning split's error rate alone would give "
            f"{empirical:.3f}, "
            "with no guarantee: in our simulation such a choice broke the promise on new data about half the time."
        )
    return lines


@dataclass(frozen=True)
class _TiersPerDay:
    """A three-tier answer on the evaluated split, per day: act / a person with help / a blank hand-off."""

    policy: object
    result: object  # vc.constraints.TwoTierResult or ShortlistResult on the evaluated split
    single_per_item: float
    volume: float
    TIER_NAMES: ClassVar[tuple] = ()

    def _counts(self) -> tuple:
        raise NotImplementedError

    @property
    def tiers(self) -> pd.DataFrame:
        n = self.result.n_items if self.result.n_items > 0 else 1.0
        return pd.DataFrame({"tier": list(self.TIER_NAMES),
                             "items_per_day": [count / n * self.volume for count in self._counts()]})


@dataclass(frozen=True)
class TwoTierView(_TiersPerDay):
    TIER_NAMES: ClassVar[tuple] = ("Automatic", "Confirmed by a person", "Handed off")

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
    )


def two_tier_sentence(view: TwoTierView, money) -> str:
    policy, result = view.policy, view.result
    if policy.threshold == policy.assist_threshold:
        return (
            "Asking a person to confirm does not pay with these values: the best plan is the single "
            f"threshold, worth {money(view.single_per_item * view.volume)} per day."
        )
    auto = "never act alone" if policy.threshold is None else f"act alone at confidence ≥ {policy.threshold:.2f}"
    tiers = view.tiers["items_per_day"].tolist()
    return (
        f"{auto[0].upper() + auto[1:]}, ask a person to confirm from **{policy.assist_threshold:.2f}**, "
        "hand off below: "
        f"about {tiers[0]:,.0f} automatic, {tiers[1]:,.0f} confirmed and {tiers[2]:,.0f} handed-off items a day, "
        f"worth **{money(result.value_per_item * view.volume)} per day** against "
        f"{money(view.single_per_item * view.volume)} with one threshold."
    )


@dataclass(frozen=True)
class ShortlistView(_TiersPerDay):
    levels_searched: tuple | None = None  # (searched, distinct) when a grid of levels was searched
    TIER_NAMES: ClassVar[tuple] = ("Automatic", "Handed off with a shortlist", "Handed off blank")

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
        levels_searched=None if levels is None or levels.size == n_distinct else (levels.size, n_distinct),
    )


def shortlist_sentence(view: ShortlistView, money) -> str:
    policy, result = view.policy, view.result
    spec = policy.shortlist
    if result.n_listed == 0 and spec["list_threshold"] == policy.threshold:
        return (
            "A shortlist does not pay with these values: the best plan is the single "
            f"threshold, worth {money(view.single_per_item * view.volume)} per day."
        )
    auto = "never act alone" if policy.threshold is None else f"act alone at confidence ≥ {policy.threshold:.2f}"
    listed = "no list" if spec["list_threshold"] is None else f"**{spec['list_threshold']:.2f}**"
    what = (f"the {spec['k']} likeliest classes" if spec["rule"] == "top_k" else
            f"the fewest likeliest classes whose probabilities add up to {spec['level']:.2f} "
            f"({result.mean_list_size:.1f} on average)")
    tiers = view.tiers["items_per_day"].tolist()
    held = result.n_listed_hit / result.n_listed if result.n_listed > 0 else 0.0
    return (
        f"{auto[0].upper() + auto[1:]}, hand off with {what} from {listed}, blank below: "
        f"about {tiers[0]:,.0f} automatic, {tiers[1]:,.0f} listed ({held:.0%} of the lists hold the answer) and "
        f"{tiers[2]:,.0f} blank hand-offs a day, worth **{money(result.value_per_item * view.volume)} per day** "
        f"against {money(view.single_per_item * view.volume)} with one threshold."
    ) + ("" if view.levels_searched is None else
         f" (The level was searched over {view.levels_searched[0]:,} of the {view.levels_searched[1]:,} distinct "
         "levels: too many to try them all here.)")
