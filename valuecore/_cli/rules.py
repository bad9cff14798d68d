"""The lines that describe a rule in the command line's report: a two-tier or shortlist rule with its tiers'
volumes, and a policy entry's constraint records (review capacity, certified risk, monitoring reference).
The numbers come from the policy and its records; the words are made here, at the edge."""

from __future__ import annotations

from .. import wording
from .._engine.fitting import Policy
from .common import _pct


def describe_two_tier(policy: Policy, evaluation: dict | None, confidences=None) -> list[str]:
    """Plain-language lines for a two-tier rule, and its tiers' volumes when ``evaluation`` has them."""
    assisted = policy.assisted
    auto = "none" if policy.threshold is None else wording.threshold_on_data(policy.threshold, confidences)
    assist = ("none" if policy.assist_threshold is None else
              wording.threshold_on_data(policy.assist_threshold, confidences))
    lines = [
        f"automatic threshold   {auto}  (act alone iff confidence >= it)",
        f"assist threshold      {assist}  (up to the automatic one a person confirms; below: hand off)",
        f"assisted tier values  confirmed correct {assisted['v_confirmed_correct']:g}, "
        f"confirmed wrong {assisted['v_confirmed_wrong']:g}, cost {assisted['cost']:g}",
    ]
    tiers = (evaluation or {}).get("two_tier")
    if tiers:
        lines.append(
            f"tiers (evaluated)     {tiers['n_auto']:g} automatic, {tiers['n_assisted']:g} confirmed by a person, "
            f"{tiers['n_handoff']:g} handed off"
        )
    return lines


def describe_shortlist(policy: Policy, evaluation: dict | None, confidences=None) -> list[str]:
    """Plain-language lines for a shortlist rule, and its tiers' volumes when ``evaluation`` has them."""
    spec = policy.shortlist
    auto = "none" if policy.threshold is None else wording.threshold_on_data(policy.threshold, confidences)
    listed = ("none" if spec["list_threshold"] is None else
              wording.threshold_on_data(spec["list_threshold"], confidences))
    if spec["rule"] == "top_k":
        rule = "none" if spec["k"] is None else f"the {spec['k']} most probable classes"
    else:
        rule = "none" if spec["level"] is None else (
            f"the fewest most probable classes whose probabilities sum to at least {spec['level']:.6g}")
    sizes = ", ".join(f"k={k}: {v_in:g} if it holds the answer, {v_out:g} if not"
                      for k, (v_in, v_out) in spec["values"].items())
    lines = [
        f"automatic threshold   {auto}  (act alone iff confidence >= it)",
        f"list threshold        {listed}  (up to the automatic one a person gets a shortlist; below: blank)",
        f"shortlist             {rule}",
        f"shortlist values      {sizes}",
    ]
    tiers = (evaluation or {}).get("shortlist")
    if tiers:
        lines.append(
            f"tiers (evaluated)     {tiers['n_auto']:g} automatic, {tiers['n_listed']:g} handed off with a list "
            f"({tiers['n_listed_hit']:g} holding the answer, {tiers['mean_list_size']:.3g} classes on average), "
            f"{tiers['n_handoff']:g} handed off blank"
        )
    return lines


def describe_tiers(policy: Policy, evaluation: dict | None, confidences=None) -> list[str]:
    """The lines of a two-tier or shortlist rule (thresholds as read on ``confidences``); none for other kinds."""
    if policy.kind == "two_tier":
        return describe_two_tier(policy, evaluation, confidences)
    if policy.kind == "shortlist":
        return describe_shortlist(policy, evaluation, confidences)
    return []


def describe_constraints(entry, confidences=None) -> list[str]:
    """Plain-language lines for a policy entry's two-tier rule and constraint records (CLI report)."""
    lines = describe_tiers(entry.policy, entry.evaluation, confidences)
    if entry.monitoring is not None:
        m = entry.monitoring
        lines.append(
            f"monitoring reference  split {m['reference_split']!r}: estimated value per item "
            f"{wording.amount(m['reference_value_per_item'])}, "
            f"sd {wording.amount(m['reference_sd_per_item'])} per item "
            f"(alert outside +- {m['alert_z']:.3g} sqrt(sd^2 / chunk size + {m.get('reference_mean_sd', 0.0):.3g}^2))"
        )
    for record in entry.constraints:
        if record["type"] == "review_capacity":
            state = "binding" if record["binding"] else "not binding (the best policy fits)"
            lines.append(
                f"review capacity       at most {_pct(record['max_handoff_rate'])} handed off; "
                f"{_pct(record['handoff_rate'])} on the tuning split; {state}"
            )
            lines.append(
                f"value of capacity     {wording.amount(record['value_per_extra_handoff'])} per extra hand-off slot "
                "(tuning split)" + ("" if record["exact"] else "; per-class answer exact only at hull vertices")
            )
        elif record["type"] == "certified_risk":
            promise = (
                f"error rate among accepted items <= {_pct(record['max_risk'])} "
                f"with {wording.level(record['confidence'])} confidence"
            )
            if record["certified_upper_bound"] is None:
                lines.append(f"certified risk        {promise}: nothing certified, so always abstain")
            else:
                lines.append(
                    f"certified risk        {promise}: certified bound {_pct(record['certified_upper_bound'])} "
                    f"on {record['n_accepted']:g} accepted tuning items ({record['n_wrong']:g} wrong)"
                )
            lines.append(f"certification method  {record['method']}")
    return lines
