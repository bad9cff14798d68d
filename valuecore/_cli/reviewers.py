"""``report --reviewer-accuracy`` and ``apply`` of a document that records reviewers.

A flat accuracy is priced into the use case (its ``v_abstain`` becomes the
expected value of a hand-off), so every rule, the recommendation, the verdict
and the VOC of the HTML report are exact through the usual pipeline. A workload
curve makes value non-linear in the hand-off rate: one global threshold per model
is tuned by the exact prefix scan (per-class thresholds by the exact search over
every total accepted), and each policy's value is priced at the hand-off rate it
produces.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from .common import _finite_float

__all__ = ["add_reviewer_options", "reviewers_from_args", "reviewer_record", "loaded_reviewer_document",
           "reprice_applied", "reviewer_lines"]


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def _workload(text: str) -> tuple:
    points = []
    for part in text.split(","):
        rate, sep, accuracy = part.partition(":")
        if not sep:
            raise argparse.ArgumentTypeError(f"each point is RATE:ACCURACY, got {part!r}")
        points.append((_share(rate.strip()), _share(accuracy.strip())))
    rates = [r for r, _ in points]
    if any(b <= a for a, b in zip(rates, rates[1:])):
        raise argparse.ArgumentTypeError(f"the hand-off rates must be strictly increasing, got {rates}")
    return tuple(points)


# The most reviewed decisions a sample may count: far beyond any real audit, well within the exact interval's reach.
MAX_REVIEWED = 10**12


def _sample(text: str) -> tuple:
    right, sep, reviewed = text.partition("/")
    shown = text if len(text) <= 60 else text[:57] + "..."
    try:
        n_right, n_reviewed = int(right), int(reviewed)
    except ValueError:  # also a number of more than 4,300 digits, which Python will not read
        raise argparse.ArgumentTypeError(f"a sample is RIGHT/REVIEWED (e.g. 180/200), got {shown!r}") from None
    if not sep or not 0 <= n_right <= n_reviewed or n_reviewed < 1:
        raise argparse.ArgumentTypeError(f"a sample is RIGHT/REVIEWED with 0 <= RIGHT <= REVIEWED, got {shown!r}")
    if n_reviewed > MAX_REVIEWED:
        count = f"{n_reviewed:,}" if n_reviewed < 10**30 else f"a number of {len(str(n_reviewed)):,} digits"
        raise argparse.ArgumentTypeError(f"a sample counts at most {MAX_REVIEWED:,} decisions reviewed, got {count}")
    return n_right, n_reviewed


def add_reviewer_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("people who are not always right (see docs/constraints.md)")
    group.add_argument("--reviewer-accuracy", type=_share, metavar="A",
                       help="share of hand-offs the reviewers get right (default 1: today's perfect reviewer)")
    group.add_argument("--reviewer-sample", type=_sample, metavar="RIGHT/REVIEWED",
                       help="the accuracy from a labelled sample of their decisions, with an exact 95%% interval")
    group.add_argument("--workload", type=_workload, metavar="R1:A1,R2:A2,...",
                       help="their accuracy at each hand-off rate, linear in between (a tired team)")
    group.add_argument("--v-person-wrong", type=_finite_float, metavar="Z",
                       help="value of a hand-off the person gets wrong (default: --v-wrong)")


def reviewers_from_args(args, use_case):
    """The Reviewers the options describe, or None when none is given (``use_case``: the typed values)."""
    from .._engine.reviewers import Reviewers
    from .._model.values import UseCase

    given = [args.reviewer_accuracy, args.reviewer_sample, args.workload, args.v_person_wrong]
    if all(v is None for v in given):
        return None
    if not isinstance(use_case, UseCase):
        raise ValueError("reviewers are priced for a use case (--v-correct/--v-abstain/--v-wrong or --omega), "
                         "not a value matrix")
    if args.reviewer_accuracy is not None and args.reviewer_sample is not None:
        raise ValueError("give the reviewers' accuracy or a sample of their decisions, not both")
    if args.reviewer_accuracy is not None and args.workload is not None:
        raise ValueError("--reviewer-accuracy and --workload both give the reviewers' accuracy (the curve at every "
                         "hand-off rate, which would leave the flat one unused): give one of them")
    if args.reviewer_accuracy is None and args.reviewer_sample is None and args.workload is None:
        raise ValueError("--v-person-wrong prices a hand-off the reviewers get wrong, and without their accuracy "
                         "they are never wrong: give --reviewer-accuracy, --reviewer-sample or --workload too")
    extra = {"workload": args.workload or (), "v_person_wrong": args.v_person_wrong}
    if args.reviewer_sample is not None:
        return Reviewers.from_sample(*args.reviewer_sample, **extra)
    accuracy = args.reviewer_accuracy if args.reviewer_accuracy is not None else 1.0
    return Reviewers(accuracy=accuracy, **extra)


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
    from .._pipeline.pipeline import Pipeline, evaluation_record
    from .._engine.fitting import Policy
    from .._pipeline.policy_json import PolicyDocument
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
    from .._pipeline.pipeline import apply_policy_document
    from .._pipeline.policy_json import PolicyDocument
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


def reviewer_lines(record) -> list[str]:
    """How the hand-offs are priced, in one or two lines."""
    if record is None:
        return []
    if record.get("workload"):
        curve = ", ".join(f"{p['handoff_rate']:.0%}: {p['accuracy']:.3f}" for p in record["workload"])
        people = f"reviewers' accuracy by hand-off rate {curve}"
    else:
        people = f"reviewers' accuracy {record['accuracy']:.4f}"
    if record.get("accuracy_interval"):
        low, high = record["accuracy_interval"]
        sample = record.get("sample") or {}
        people += (f" ({sample.get('n_right')} right of {sample.get('n_reviewed')} reviewed; "
                   f"exact 95% interval [{low:.4f}, {high:.4f}])")
    how = ("priced into the use case: v_abstain is the expected value of a hand-off"
           if record["priced_in_use_case"] else "each policy priced at its own hand-off rate")
    return [f"{people}; a hand-off they get right is worth {record['v_abstain_if_right']:g}, one they get wrong "
            f"{record['v_person_wrong']:g}; {how}"]
