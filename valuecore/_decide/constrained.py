"""Fitting under constraints for the policy pipeline (CLI, dashboard, policy JSON).

:func:`fit_constrained` is what :func:`build_policy_entry` calls instead of
``fit_policy`` when a review capacity, a certified risk or a two-tier policy
is asked for; it returns the policy with the *constraint records* the policy
JSON stores (``models[].constraints``, see ``docs/policy-json.md``).
:func:`two_tier_evaluation` is the evaluation record of a two-tier policy.
"""

from __future__ import annotations

import math

import numpy as np

from .._engine.fitting import Policy, Values, fit_policy
from .._model.values import ValueMatrix
from .._model.predictions import Predictions
from .._engine.sorting import SortedRun

__all__ = ["check_constraint_options", "fit_constrained", "two_tier_evaluation"]

CAPACITY_KINDS = ("threshold", "class_thresholds")
RISK_KINDS = ("threshold",)


def check_constraint_options(
    kind: str, *, max_handoff_rate=None, max_risk=None, risk_confidence=None, assisted=None, risk_weights=None,
    shortlist_values=None, shortlist_rule=None,
) -> None:
    """Refuse (ValueError, one plain sentence) combinations the pipeline cannot honour."""
    if max_handoff_rate is not None:
        rate = float(max_handoff_rate)
        if not (math.isfinite(rate) and 0 <= rate <= 1):
            raise ValueError(f"the maximum hand-off rate must be between 0 and 1, got {max_handoff_rate!r}")
        if kind not in CAPACITY_KINDS:
            raise ValueError(f"a review capacity applies to the policy kinds {list(CAPACITY_KINDS)}, not {kind!r}")
    if max_risk is not None:
        risk = float(max_risk)
        if not (math.isfinite(risk) and 0 <= risk < 1):
            raise ValueError(f"the maximum risk must be at least 0 and below 1, got {max_risk!r}")
        if kind not in RISK_KINDS:
            raise ValueError(f"a certified risk applies to the policy kind 'threshold', not {kind!r}")
        if max_handoff_rate is not None:
            raise ValueError("give a maximum hand-off rate or a maximum risk, not both")
    if risk_confidence is not None:
        level = float(risk_confidence)
        if not (math.isfinite(level) and 0 < level < 1):
            raise ValueError(f"the risk confidence must be strictly between 0 and 1, got {risk_confidence!r}")
        if max_risk is None:
            raise ValueError("a risk confidence needs a maximum risk")
    if risk_weights is not None and max_risk is None:
        raise ValueError("what the weights mean for a certified risk needs a maximum risk")
    if kind == "two_tier" and assisted is None:
        raise ValueError("a two_tier policy needs the values of its assisted tier (confirmed correct, "
                         "confirmed wrong, cost)")
    if kind != "two_tier" and assisted is not None:
        raise ValueError(f"assisted-tier values apply to the two_tier policy kind, not {kind!r}")
    if kind == "shortlist" and shortlist_values is None:
        raise ValueError("a shortlist policy needs the value of a hand-off with a shortlist holding the true class "
                         "and without it, per list size k")
    if kind != "shortlist" and (shortlist_values is not None or shortlist_rule is not None):
        raise ValueError(f"shortlist values apply to the shortlist policy kind, not {kind!r}")


def fit_constrained(
    kind: str,
    run: SortedRun | None,
    values: Values,
    *,
    calibration=None,
    max_handoff_rate=None,
    max_risk=None,
    risk_confidence=None,
    assisted=None,
    risk_weights=None,
    shortlist_values=None,
    shortlist_rule=None,
) -> tuple[Policy, list[dict], list[str]]:
    """(policy, constraint records, notes) for the pipeline; plain ``fit_policy`` when unconstrained.

    ``risk_weights`` is ``fit_certified``'s ``weights`` (None: "unit").
    """
    check_constraint_options(
        kind, max_handoff_rate=max_handoff_rate, max_risk=max_risk, risk_confidence=risk_confidence,
        assisted=assisted, risk_weights=risk_weights, shortlist_values=shortlist_values, shortlist_rule=shortlist_rule,
    )
    if kind == "shortlist":
        from .._engine.shortlist import fit_shortlist_for_pipeline

        return fit_shortlist_for_pipeline(run, values, shortlist_values, rule=shortlist_rule or "top_k",
                                          calibration=calibration)
    if run is None:  # a kind whose rule follows from the values alone
        return fit_policy(kind, None, values, calibration=calibration), [], []
    if max_handoff_rate is not None:
        from .capacity import fit_capacity

        result = fit_capacity(run, values, max_handoff_rate=max_handoff_rate, kind=kind, calibration=calibration)
        notes = []
        if not result.exact:
            notes.append(
                "the per-class thresholds within the review capacity are the best on the hull of each class's "
                f"value curve; no per-class policy within it is worth more than {result.upper_bound:.6g} in total "
                f"on the tuning split (this one: {result.value_total:.6g})"
            )
        return result.policy, [result.to_dict()], notes
    if max_risk is not None:
        from .risk import fit_certified

        confidence = 0.9 if risk_confidence is None else risk_confidence
        result = fit_certified(run, values, max_risk=max_risk, confidence=confidence, calibration=calibration,
                               weights=risk_weights or "unit")
        notes = []
        if not result.any_certified:
            notes.append(
                f"no threshold could be certified to keep the error rate at most {max_risk:g} with confidence "
                f"{confidence:g} on the tuning split ({run.total_weight:g} items): the policy always abstains"
            )
        if risk_weights == "copies" and not np.all(run.predictions.sample_weight == 1):
            # Said, because importance weights or duplicated rows read as copies broke the promise in 14% of
            # seeded splits against 10% (benchmarks/bench_certified_weights.py).
            notes.append("the certificate counts each weight k as k independent items (weights are copies, as "
                         "said); if they are importance weights or duplicated rows, the guarantee does not hold")
        return result.policy, [result.to_dict()], notes
    return fit_policy(kind, run, values, calibration=calibration, assisted=assisted), [], []


def _baselines(predictions: Predictions, matrix: ValueMatrix) -> tuple[float, float]:
    """Total value of always abstaining and of a perfect model."""
    matrix = matrix.values
    weight = predictions.sample_weight
    y = predictions.y_true
    return float(matrix[y, -1] @ weight), float(matrix[y, y] @ weight)


def _two_tier_range(policy: Policy, predictions: Predictions, matrix: ValueMatrix) -> tuple[float, float]:
    """Lowest and highest value one item can take under a two-tier policy: a matrix cell or an assisted value."""
    cells = matrix.values
    assisted = policy.assisted
    confirmed = [assisted["v_confirmed_correct"] - assisted.get("cost", 0.0),
                 assisted["v_confirmed_wrong"] - assisted.get("cost", 0.0)]
    return min(float(cells.min()), *confirmed), max(float(cells.max()), *confirmed)


def two_tier_evaluation(policy: Policy, predictions: Predictions, values: Values, *, with_interval: bool) -> dict:
    """The ``evaluation`` record of a two-tier or shortlist policy on a labelled split.

    Counts (``coverage``, ``n_correct``, ``n_wrong``) describe the automatic
    tier; ``n_abstain`` is everything a person sees; the values include the
    assisted (or listed) tier; ``two_tier`` (or ``shortlist``) gives the
    volume of each tier.
    """
    from .._engine.evaluate import evaluate
    from .._engine.shortlist import evaluate_shortlist, shortlist_item_values, shortlist_value_range
    from .._engine.twotier import evaluate_two_tier, two_tier_item_values

    values = values.for_classes(predictions.classes)  # once: the calls below take this matrix
    automatic = Policy("threshold", threshold=policy.threshold, calibration=policy.calibration)
    record = evaluate(automatic, predictions, values).to_dict()
    listed = policy.kind == "shortlist"
    result = (evaluate_shortlist if listed else evaluate_two_tier)(policy, predictions, values)
    abstain, perfect = _baselines(predictions, values)
    scale = perfect - abstain
    record.update(
        value_total=result.value_total,
        value_per_item=result.value_per_item,
        value_dimensionless=(result.value_total - abstain) / scale if scale > 0 else None,
        **{policy.kind: result.to_dict()},
    )
    record["ci95"] = None
    if with_interval and predictions.n:
        from .._stats.uncertainty import interval_basis_record, mean_interval

        item_values = (shortlist_item_values if listed else two_tier_item_values)(policy, predictions, values)
        value_range = (shortlist_value_range if listed else _two_tier_range)(policy, predictions, values)
        interval = mean_interval(item_values, predictions.sample_weight, value_range=value_range)
        if np.isfinite(interval.low) and np.isfinite(interval.high):
            record["ci95"] = [interval.low, interval.high]
            record["std_error"] = interval.std_error
            record["ci95_basis"] = interval_basis_record(interval)
    return record

