"""``report --segment COLUMN`` and the per-segment part of ``apply``: a threshold per segment, with caps.

See ``docs/segments.md``.
"""

from __future__ import annotations

import argparse

from .. import wording
from .common import UsageError, _err, _finite_float

__all__ = ["add_apply_segment_option", "add_segment_options", "applied_segment_lines", "apply_segment_column",
           "report_segments"]

_CAPS = (("--cap-handoff-gap", "cap_handoff_gap", "handoff_gap"),
         ("--cap-error-gap", "cap_error_gap", "error_gap"),
         ("--cap-value-gap", "cap_value_gap", "value_gap"))


def add_segment_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("thresholds per segment (see docs/segments.md)")
    group.add_argument("--segment", metavar="COLUMN",
                       help="a threshold per segment: the run files' column that holds each item's segment "
                       "(region, product, tier); the JSON is then schema version 3. With --policy "
                       "class_thresholds: a threshold per predicted class in each segment")
    group.add_argument("--cap-handoff-gap", type=_finite_float, metavar="X",
                       help="--segment: the hand-off rates of the segments differ by at most X (0 to 1)")
    group.add_argument("--cap-error-gap", type=_finite_float, metavar="X",
                       help="--segment: the error rates (wrong / acted on) differ by at most X (0 to 1)")
    group.add_argument("--cap-value-gap", type=_finite_float, metavar="X",
                       help="--segment: the values per item differ by at most X (in the values' currency)")


def add_apply_segment_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--segment", metavar="COLUMN",
                        help="the run files' segment column, for a policy with a threshold per segment (default: "
                        "the column the policy names)")


def _caps(args):
    from .._decide.segments import SegmentCaps

    given = {key: getattr(args, attr) for _, attr, key in _CAPS if getattr(args, attr) is not None}
    if given and args.segment is None:
        raise UsageError(f"{', '.join(o for o, a, _ in _CAPS if getattr(args, a) is not None)} cap the gaps between "
                         "segments, and no --segment COLUMN says where the segments are")
    try:
        return SegmentCaps(**given)
    except ValueError as exc:
        raise UsageError(f"--cap-{str(exc).split('_gap')[0]}-gap: {exc}") from None


def _refuse_other_rules(args) -> None:
    from .._model.choices import RECOMMENDED_RULE

    others = [option for option, given in (
        ("--policy " + str(args.policy), args.policy not in (RECOMMENDED_RULE, "threshold", "class_thresholds")),
        ("--calibration " + str(args.calibration), args.calibration != "none"),
        ("--adapt-to", args.adapt_to is not None),
        ("--max-handoff-rate", args.max_handoff_rate is not None),
        ("--max-risk", args.max_risk is not None),
        ("--log-mlflow", bool(args.log_mlflow)),
        ("--monitoring", bool(args.monitoring)),
        ("--reviewer-accuracy", getattr(args, "reviewer_accuracy", None) is not None),
        ("--workload", getattr(args, "workload", None) is not None),
    ) if given]
    if others:
        raise UsageError(f"--segment fits one confidence threshold per segment (or, with --policy class_thresholds, "
                         f"one per predicted class in each segment), on uncalibrated confidences; it does not combine "
                         f"with {', '.join(others)} (yet)")


def check_segment_options(args) -> None:
    """Refuse, before any work, segment options that contradict the others."""
    _caps(args)
    if args.segment is not None:
        _refuse_other_rules(args)


def report_segments(args, values, load, say):
    """``report --segment COLUMN``: each model's thresholds per segment and the caps' cost, said; returns the
    policy document (schema version 3), each model's ``SegmentFit`` and the loaded runs."""
    from .._pipeline.segments import segment_document

    caps = _caps(args)
    models = load(args.paths, segment_column=args.segment)
    rule = segment_rule(args)
    try:
        document, notes, fits = segment_document(models, values, segment_column=args.segment, caps=caps,
                                                 tune_split=args.tune_split, eval_split=args.eval_split, rule=rule)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for note in notes:
        _err(f"note: {note}")
    currency = args.currency
    what = "per-class thresholds" if rule == "class_thresholds" else "thresholds"
    say(f"{what} per segment of the column {args.segment!r}; caps: "
        f"{wording.segment_caps_text(caps.as_dict(), currency)}")
    for entry in document.entries:
        fit = fits[entry.model]
        say("")
        say(f"== {entry.model}  ({models[entry.model].path})")
        say(f"tuned on split {entry.tuned_on['split']!r}: {wording.segment_cap_sentence(fit, currency)}")
        tuned = models[entry.model]
        for line in _table(fit.evaluation, currency, _confidences(tuned, entry.tuned_on["split"])):
            say(line)
        for row in fit.evaluation.segments:
            warning = wording.segment_warning(row)
            if warning:
                _err(f"warning: {entry.model}: {warning}")
        evaluation = entry.evaluation
        say(f"on split {evaluation['split']!r} ({wording.count(evaluation['n'])} items): value per item "
            f"{wording.money(evaluation['value_per_item'], currency)}, acted on "
            f"{wording.percent(evaluation['coverage'])} of the items")
    return document, fits, models


def segment_rule(args) -> str:
    """What each segment sets: ``--policy class_thresholds`` a threshold per predicted class, else one."""
    return "class_thresholds" if args.policy == "class_thresholds" else "threshold"


def _confidences(run, split: str) -> dict:
    """Each segment's confidences on one split (for the digits a threshold is shown with)."""
    import numpy as np

    labels = np.asarray(run.segments[split], dtype=object)
    confidence = run.splits[split].confidence
    return {str(s): confidence[labels == s] for s in set(labels.tolist())}


def _table(evaluation, currency: str, confidences=None) -> list[str]:
    rows = [wording.SEGMENT_COLUMNS, *wording.segment_rows(evaluation, currency, confidences)]
    widths = [max(len(str(row[k])) for row in rows) for k in range(len(rows[0]))]
    return ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def apply_segment_column(document, given: str | None) -> str | None:
    """The segment column to load the runs with for ``apply``: ``--segment``, else the one the document names."""
    columns = sorted({entry.segments["column"] for entry in document.entries if entry.segments is not None})
    if given is not None or not columns:
        return given
    if len(columns) > 1:
        raise UsageError(f"the policy's models read their segments from different columns {columns}: "
                         "say which the run files hold with --segment COLUMN")
    return columns[0]


def applied_segment_lines(item, run=None, currency: str = "") -> list[str]:
    """A per-segment entry's section in ``apply``: each segment's figures on the evaluated split (``run``: the
    loaded run, so that each threshold reads with the digits that tell its decision apart)."""
    evaluation = item.evaluation
    confidences = _confidences(run, item.split) if run is not None and item.split in run.segments else {}
    lines = [f"evaluated on          split {item.split!r} ({wording.count(evaluation['n'])} items)",
             "rule                  " + ("per-class thresholds per segment; segments without them are handed off"
                                          if any("class_thresholds" in f for f in evaluation["segments"].values())
                                          else "a threshold per segment; segments without one are handed off"),
             f"value total           {wording.significant(evaluation['value_total'])}",
             f"value per item        {wording.money(evaluation['value_per_item'], currency)}",
             f"coverage              {wording.percent(evaluation['coverage'])}"]
    rows = [("segment", "rule", "items", "hand-off rate", "error rate", "value per item")]
    for name, figures in evaluation["segments"].items():
        rows.append((name, wording.segment_rule_phrase(figures["threshold"], figures.get("class_thresholds"),
                                                       confidences.get(name)),
                     wording.count(figures["n"]),
                     wording.percent(figures["handoff_rate"]), wording.percent(figures["selective_risk"]),
                     wording.money(figures["value_per_item"], currency)))
    widths = [max(len(str(row[k])) for row in rows) for k in range(len(rows[0]))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return lines
