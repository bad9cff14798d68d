"""``report --segment COLUMN`` and the per-segment part of ``apply``: a threshold per segment, with caps.

See ``docs/segments.md``.
"""

from __future__ import annotations

import argparse

from .common import UsageError, _err, _finite_float, one_line, read_text_file

__all__ = ["add_apply_segment_option", "add_segment_options", "applied_segment_lines", "apply_segment_column",
           "report_segments", "segment_fit_lines"]

_CAPS = (("--cap-handoff-gap", "cap_handoff_gap", "handoff_gap"),
         ("--cap-error-gap", "cap_error_gap", "error_gap"),
         ("--cap-value-gap", "cap_value_gap", "value_gap"))


def add_segment_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("thresholds per segment (see docs/segments.md)")
    group.add_argument("--segment", metavar="COLUMN",
                       help="a threshold per segment: the run files' column that holds each item's segment "
                       "(region, product, tier); the JSON is then schema version 3")
    group.add_argument("--cap-handoff-gap", type=_finite_float, metavar="X",
                       help="--segment: the hand-off rates of the segments differ by at most X (0 to 1)")
    group.add_argument("--cap-error-gap", type=_finite_float, metavar="X",
                       help="--segment: the error rates (wrong / acted on) differ by at most X (0 to 1)")
    group.add_argument("--cap-value-gap", type=_finite_float, metavar="X",
                       help="--segment: the values per item differ by at most X (in the values' currency)")
    group.add_argument("--segment-rule", choices=("threshold", "class_thresholds"), default="threshold",
                       help="--segment: what each segment sets: one confidence threshold (default) or a threshold "
                       "per predicted class")
    group.add_argument("--segment-values", metavar="FILE.json",
                       help="--segment: values per segment, a JSON object mapping a segment to "
                       "{'v_correct': .., 'v_abstain': .., 'v_wrong': ..} or to a value matrix as --value-matrix "
                       "reads it; segments not listed take the command's values. The recommendation then leaves "
                       "the thresholds per segment out (its other rules are priced with one set of values)")


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
    from .._model.choices import TIERED_KINDS

    others = [option for option, given in (
        ("--policy " + str(args.policy), args.policy in TIERED_KINDS),
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
        raise UsageError(f"--segment fits thresholds per segment, on uncalibrated confidences; it does "
                         f"not combine with {', '.join(others)} (yet)")


def check_segment_options(args) -> None:
    """Refuse, before any work, segment options that contradict the others."""
    from .._model.choices import SEGMENT_RULE

    _caps(args)
    if args.segment is None and args.segment_values is not None:
        raise UsageError("--segment-values gives values per segment, and no --segment COLUMN says where the segments "
                         "are")
    if args.segment is None and args.segment_rule != "threshold":
        raise UsageError(f"--segment-rule {args.segment_rule} says what each segment sets, and no --segment COLUMN "
                         "says where the segments are")
    if args.segment is not None:
        _refuse_other_rules(args)
    elif args.policy == SEGMENT_RULE:
        raise UsageError(f"--policy {SEGMENT_RULE} sets a threshold per segment, and no --segment COLUMN says where "
                         "the segments are")


def read_segment_values(path: str, models: dict, values) -> dict:
    """``--segment-values FILE.json``: segment -> values, each checked against the segments and classes of the
    loaded runs. Raises UsageError naming the file and the segment."""
    from .._io.limits import load_json_limited
    from .._pipeline.policy_json import align_values, values_from_dict

    text = read_text_file(path, "the values per segment", "file of values per segment")
    try:
        data = load_json_limited(text, path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: the values per segment must be a JSON object mapping each segment to its values, "
                         f"got {type(data).__name__}")
    known = {str(s) for run in models.values() for labels in run.segments.values() for s in set(labels.tolist())}
    unknown = sorted(set(data) - known)
    if unknown:
        raise UsageError(f"{path}: no run has the segment{'s' if len(unknown) > 1 else ''} "
                         f"{_segment_names(unknown)} (the segments are {_segment_names(sorted(known))})")
    given = {}
    for segment, record in data.items():
        try:
            given[segment] = values_from_dict(record)
            for name, run in models.items():
                try:
                    align_values(given[segment], run.classes)
                except ValueError as exc:
                    raise ValueError(f"model {name}: {exc}") from None
        except (ValueError, TypeError, KeyError) as exc:
            raise UsageError(f"{path}, segment {segment!r}: {exc}") from None
    return given


def _segment_names(names) -> str:
    """Names in a message as the project caps them: quoted, each cut to the cell limit, the list after ten.
    Written out in full, 5,000 segments made a 44 KB line."""
    from .. import wording
    from .._io.limits import clip_text

    return wording.short_list((repr(clip_text(name)) for name in names), limit=10)


def _differ(given: dict, values) -> bool:
    """Whether any segment's values are not the command's."""
    return any(v.to_dict() != values.to_dict() for v in given.values())


def report_segments(args, values, load):
    """``report --segment COLUMN``: the recommendation with each model's thresholds per segment among its
    candidates, and the policy document that names it (schema version 3 when an entry holds segments; with
    ``--policy segment_thresholds`` every model's). Returns (models, document, notes, recommendation, rules):
    ``rules``, each model's :class:`~valuecore.recommendation.SegmentRule`, for :func:`segment_fit_lines`."""
    from dataclasses import replace

    from .. import wording  # wording (with decimal) where a command runs: report --help needs none of it
    from .._decide.recommend import recommend, recommended_document
    from .._model.choices import RECOMMENDED_RULE, SEGMENT_RULE
    from .._pipeline.pipeline import Pipeline
    from .._pipeline.segment_candidates import segment_rules
    from .._pipeline.segments import segment_document

    caps = _caps(args)
    models = load(args.paths, segment_column=args.segment)
    given = {} if args.segment_values is None else read_segment_values(args.segment_values, models, values)
    pipeline = Pipeline(models, args.tune_split, args.eval_split)
    try:
        rules, skipped = segment_rules(pipeline, values, column=args.segment, caps=caps, rule=args.segment_rule,
                                       segment_values=given)
        if args.policy == SEGMENT_RULE:
            document, notes, _ = segment_document(models, values, segment_column=args.segment, caps=caps,
                                                  segment_values=given, tune_split=args.tune_split,
                                                  eval_split=args.eval_split, rule=args.segment_rule)
        else:
            document, notes = pipeline.document(list(models), args.policy, values, with_interval=not args.no_interval)
        kinds = None if args.policy == RECOMMENDED_RULE else (args.policy,)
        # The verdict prices every rule with one set of values; thresholds priced with their segments' own values
        # beside rules priced with the command's would compare prices, not decisions: they are left out.
        priced_apart = _differ(given, values)
        recommended = recommend(pipeline, values, kinds=kinds, segment_rules=None if priced_apart else rules)
        if priced_apart:
            skipped = [*skipped, wording.SEGMENT_VALUES_NOTE]
            recommended = replace(recommended, skipped=(*recommended.skipped, wording.SEGMENT_VALUES_NOTE))
        reason = wording.recommendation_reason(recommended, args.currency)
        document, refits = recommended_document(pipeline, document, recommended, values, reason,
                                                with_interval=not args.no_interval)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    notes = [*notes, *skipped, *map(wording.refitted_note, refits)]
    return models, document, notes, recommended, rules


def segment_fit_lines(args, rules, models) -> list[str]:
    """Each model's thresholds per segment on its tuning split: the caps, what they cost, a row per segment."""
    from .. import wording

    currency = args.currency
    what = "per-class thresholds" if args.segment_rule == "class_thresholds" else "thresholds"
    lines = ["", f"{what} per segment of the column {args.segment!r}; caps: "
                 f"{wording.segment_caps_text(_caps(args).as_dict(), currency)}"]
    for model, rule in rules.items():
        fit, split = rule.fit, rule.entry.tuned_on["split"]
        lines += ["", f"-- {one_line(model)}: tuned on split {split!r}: "
                      f"{one_line(wording.segment_cap_sentence(fit, currency))}"]
        lines += _table(fit.evaluation, currency, _confidences(models[model], split))
        for row in fit.evaluation.segments:
            warning = wording.segment_warning(row)
            if warning:
                _err(f"warning: {one_line(model)}: {one_line(warning)}")
    return lines


def _confidences(run, split: str) -> dict:
    """Each segment's confidences on one split (for the digits a threshold is shown with)."""
    import numpy as np

    labels = np.asarray(run.segments[split], dtype=object)
    confidence = run.splits[split].confidence
    return {str(s): confidence[labels == s] for s in set(labels.tolist())}


def _table(evaluation, currency: str, confidences=None) -> list[str]:
    from .. import wording

    rows = [wording.SEGMENT_COLUMNS, *wording.segment_rows(evaluation, currency, confidences)]
    rows = [[one_line(cell) for cell in row] for row in rows]  # a segment value is a name from a file
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
    from .. import wording

    evaluation = item.evaluation
    confidences = _confidences(run, item.split) if run is not None and item.split in run.segments else {}
    lines = [f"evaluated on          split {item.split!r} ({wording.count(evaluation['n'])} items)",
             "rule                  a threshold per segment; segments without one are handed off",
             f"value total           {wording.significant(evaluation['value_total'])}",
             f"value per item        {wording.money(evaluation['value_per_item'], currency)}",
             f"coverage              {wording.percent(evaluation['coverage'])}"]
    rows = [("segment", "rule", "items", "hand-off rate", "error rate", "value per item")]
    for name, figures in evaluation["segments"].items():
        rows.append((one_line(name), wording.threshold_phrase(figures["threshold"], confidences.get(name)),
                     wording.count(figures["n"]),
                     wording.percent(figures["handoff_rate"]), wording.percent(figures["selective_risk"]),
                     wording.money(figures["value_per_item"], currency)))
    widths = [max(len(str(row[k])) for row in rows) for k in range(len(rows[0]))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return lines
