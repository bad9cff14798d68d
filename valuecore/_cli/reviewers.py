"""The reviewers' options of ``report`` (``--reviewer-accuracy``, a workload curve, a reviewed sample).

The documents and their pricing are ``valuecore._pipeline.reviewers``; the lines that say how hand-offs are
priced, ``valuecore._report_reviewers.reviewer_lines``.
"""

from __future__ import annotations

import argparse

from .common import _finite_float

__all__ = ["add_reviewer_options", "reviewers_from_args"]


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

    given = [args.reviewer_accuracy, args.reviewer_sample, args.workload, args.v_person_wrong]
    if all(v is None for v in given):
        return None
    if use_case.use_case is None:
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
