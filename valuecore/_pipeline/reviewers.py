"""Policy documents for reviewers who are not always right (``report --reviewer-accuracy``, ``apply``).

A flat accuracy is priced into the use case (its ``v_abstain`` becomes the
expected value of a hand-off), so every rule, the recommendation, the verdict
and the VOC of the HTML report are exact through the usual pipeline. A workload
curve makes value non-linear in the hand-off rate: one global threshold per model
is tuned by the exact prefix scan (per-class thresholds by the exact search over
every total accepted), and each policy's value is priced at the hand-off rate it
produces.
"""

from __future__ import annotations

from dataclasses import replace

__all__ = ["loaded_reviewer_document", "reprice_applied", "reviewer_record"]


def reviewer_record(reviewers, use_case) -> dict:
    """The policy JSON's ``reviewers``: the people, and how the document prices them."""
    return {**reviewers.to_dict(), "v_person_wrong": reviewers.wrong_value(use_case),
            "v_abstain_if_right": use_case.v_abstain, "priced_in_use_case": reviewers.flat}


def _handoff_rate(result) -> float:
    return float(result.n_abstain / result.n_items) if result.n_items > 0 else 0.0


def loaded_reviewer_document(models, use_case, reviewers, *, tune_split, eval_split, calibration_method,
                             with_interval: bool, kind: str = "threshold"):
    """(document, notes) with one threshold (or per-class thresholds) per model tuned exactly for a workload
    curve: the prefix scan, or the search over every total accepted (``fit_reviewer_class_thresholds``)."""
    from .pipeline import Pipeline, evaluation_record
    from .._engine.fitting import Policy
    from .policy_json import PolicyDocument
    from .._engine.reviewers import fit_reviewer_class_thresholds, fit_reviewer_threshold

    if kind not in ("threshold", "class_thresholds"):
        raise ValueError(f"a workload curve tunes one threshold or per-class thresholds, not {kind}")
    pipeline = Pipeline(models, tune_split, eval_split, calibration_method)
    base, notes = pipeline.document(list(models), kind, use_case, with_interval=False)
    entries = []
    for entry in base.entries:
        model = entry.model
        plan = pipeline.plan(model)
        tuning = pipeline.sorted(model, plan.tune_split)
        if tuning is None or not tuning.predictions.has_labels:
            notes.append(f"{model}: skipped: its tuning split {plan.tune_split!r} has no labels")
            continue
        calibration = {"calibration": pipeline.calibration_dict(model)} if pipeline.calibration_dict(model) else {}
        if kind == "class_thresholds":
            try:
                fit = fit_reviewer_class_thresholds(tuning, use_case, reviewers)
            except ValueError as error:
                notes.append(f"{model}: skipped: {error}")
                continue
            policy = Policy("class_thresholds", class_thresholds=fit.class_thresholds, **calibration)
        else:
            fit = fit_reviewer_threshold(tuning, use_case, reviewers)
            policy = Policy("threshold", threshold=fit.threshold, **calibration)
        # A fixed policy on a fixed split hands off a fixed share: priced at that rate, its value is linear.
        rate = _handoff_rate(pipeline.result(model, policy, use_case))
        priced = reviewers.use_case_at(use_case, rate)
        result = pipeline.result(model, policy, priced)
        interval = pipeline.interval(model, policy, priced, result) if with_interval else None
        evaluation = evaluation_record(plan.eval_split, pipeline.predictions(model, plan.eval_split), result, interval)
        accuracy = float(reviewers.accuracy_at(rate))
        note = (f"{model}: tuned for reviewers whose accuracy falls with their workload; on {plan.eval_split!r} "
                f"it hands off {rate:.2%}, where their accuracy is {accuracy:.4f} (the interval treats that rate "
                "as fixed)")
        notes.append(note)
        entries.append(replace(entry, policy=policy, evaluation=evaluation, notes=(*entry.notes, note)))
    if not entries:
        raise ValueError("no model could be tuned for the reviewers: " + "; ".join(notes))
    everything = float(reviewers.handoff_value(use_case, 1.0))
    best = max(entries, key=lambda e: e.evaluation["value_per_item"])
    if best.evaluation["value_per_item"] > everything:
        recommendation = {"model": best.model, "policy": kind, "reason": (
            f"the highest value per item with these reviewers ({best.evaluation['value_per_item']:.4f}, against "
            f"{everything:.4f} for handing every item over)")}
    else:
        recommendation = {"model": None, "policy": None, "reason": (
            f"no model earns more per item than handing every item over to these reviewers ({everything:.4f})")}
    document = PolicyDocument(values=use_case, entries=tuple(entries), recommendation=recommendation,
                              reviewers=reviewer_record(reviewers, use_case))
    return document, notes


def reprice_applied(document, models, applied, *, with_interval: bool):
    """``apply``'s results for reviewers on a workload curve: each policy priced at its own hand-off rate."""
    from .pipeline import apply_policy_document
    from .policy_json import PolicyDocument
    from .._engine.reviewers import Reviewers

    record = document.reviewers
    if record is None or record.get("priced_in_use_case", True):
        return applied
    reviewers = Reviewers.from_dict(record)
    out = []
    for item in applied:
        if item.result is None or item.split is None:
            out.append(item)
            continue
        priced = reviewers.use_case_at(document.values, _handoff_rate(item.result))
        alone = PolicyDocument(values=priced, entries=(document.entry(item.model),))
        again = apply_policy_document(alone, {item.model: models[item.model]}, item.split,
                                      with_interval=with_interval)[0]
        out.append(replace(again, recommended=item.recommended))
    return out
