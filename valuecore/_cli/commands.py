"""The command line: ``python -m valuecore {validate,report,apply,table,voc} ...``.

Exit codes (documented in ``docs/cli.md``):

0
    Success. Files that could not be loaded are reported on stderr as
    warnings as long as at least one model is usable (``validate`` is
    stricter: any error in a run file exits 2, since finding them is its job).
1
    Unexpected failure (a bug): a one-line message and a hint; the traceback
    only with ``--debug``.
2
    Bad usage or bad input: a clear message on stderr, no traceback.

Examples
--------
>>> main(["--version"])  # doctest: +ELLIPSIS
valuecore ...
0
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .. import wording
from .._model.choices import RECOMMENDED_RULE
from .common import (  # what the sub-commands share
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    _count,
    _err,
    _fmt,
    _load,
    _money,
    _out,
    _pct,
    _range,
    _ratio,
    _short,
    _total,
    _values,
    one_line,
    read_value_matrix,
    stdout_to_devnull,
    value_matrix_from_csv,
)
from .._io.safecsv import spreadsheet_safe
from .aggregate import _cmd_aggregate
from .monitor import _cmd_monitor
from .parser import build_parser, parse_command_line  # noqa: F401  (build_parser: the whole parser, as before)

if TYPE_CHECKING:  # the numeric modules load numpy: imported where a command runs, so --help stays fast
    import pandas as pd

__all__ = ["main", "run", "read_value_matrix", "value_matrix_from_csv", "UsageError"]


def _labelled_runs(models: dict, tune_split, eval_split, *, need_tuning: bool):
    """(eval runs, tune runs, notes) of the models that can be compared; others warned and skipped."""
    from .._pipeline.policy_json import choose_splits, tuning_note
    from .._engine.sorting import presort

    eval_runs, tune_runs, notes, splits = {}, {}, [], {}
    for name, run in models.items():
        try:
            choice = choose_splits(run, tune_split, eval_split)
        except ValueError as exc:
            _err(one_line(f"warning: {name} skipped: {exc}"))
            continue
        evaluated = run.splits[choice.evaluate]
        if not evaluated.has_labels:
            _err(f"warning: {one_line(name)} skipped: its evaluated split {choice.evaluate!r} has no labels (y_true)")
            continue
        if not evaluated.total_weight > 0:
            _err(f"warning: {one_line(name)} skipped: every weight of its evaluated split {choice.evaluate!r} is zero")
            continue
        sorted_eval = presort(evaluated)
        eval_runs[name] = sorted_eval
        splits[name] = choice.evaluate
        if not need_tuning:
            continue
        tune = run.splits[choice.tuning_split]
        if choice.tune is not None and not tune.has_labels:
            _err(f"warning: {one_line(name)} skipped: its tuning split {choice.tune!r} has no labels (y_true)")
            del eval_runs[name]
            continue
        note = tuning_note(name, choice, "the thresholds")
        if note:
            notes.append(note)
        tune_runs[name] = sorted_eval if choice.tuning_split == choice.evaluate else presort(tune)
    if not eval_runs:
        raise UsageError("no model can be evaluated (see the warnings above)")
    if len(set(splits.values())) > 1:
        notes.append(f"the models are evaluated on different splits: {splits}")
    return eval_runs, tune_runs, notes


# -------------------------------------------------------------- validate
def _cmd_validate(args) -> int:
    import numpy as np

    from .common import _load_report

    report = _load_report(args.paths)  # mlflow: sources too, as every command reads them
    for run in report.models.values():
        first = next(iter(run.splits.values()), None)
        if first is not None and first.has_proba:
            outputs = "class probabilities" + (" and logits" if first.logits is not None else "")
        else:
            outputs = "top label and confidence only"
        _out(f"model {one_line(run.model)}  ({one_line(run.path)})")
        _out(f"  sha256   {run.sha256}")
        _out(f"  classes  {len(run.classes)}: {_short(run.classes)}")
        _out(f"  outputs  {outputs}")
        for split, predictions in run.splits.items():
            labels = "labelled" if predictions.has_labels else "unlabeled"
            weighted = ""
            if not np.all(predictions.sample_weight == 1.0):
                weighted = f", weighted total {_count(predictions.total_weight)}"
            accuracy = ""
            if predictions.has_labels and predictions.total_weight > 0:
                accuracy = f", accuracy {_pct(predictions.accuracy)}"
            declined = ""
            if predictions.has_model_abstentions:  # a language model's own "I don't know"
                from .._io.lm_logs import abstention_counts

                _, n_declined, n_false = abstention_counts(predictions)
                declined = f", the model declined {_count(n_declined)} ({wording.false_abstentions(n_false)})"
            _out(f"  split {one_line(split)}: {predictions.n} rows, {labels}{weighted}{accuracy}{declined}")
    if report.problems:
        _out("")
        _out("problems:")
        for problem in report.problems:
            _out(f"  {problem.severity}: {one_line(problem)}")
    n_errors, n_warnings = len(report.errors), len(report.warnings)
    _out("")
    _out(f"{len(report.models)} model(s) loaded; {n_errors} error(s), {n_warnings} warning(s)")
    return EXIT_USAGE if n_errors or not report.models else EXIT_OK


# ---------------------------------------------------------------- report
def _describe_values(values) -> str:
    if values.use_case is not None:
        values = values.use_case
        text = (
            f"use case: correct {values.v_correct:g}, abstain {values.v_abstain:g}, wrong {values.v_wrong:g} "
            f"(omega {_fmt(values.omega, 'g')})"
        )
        if values.regime.kind != "normal":
            text += f"\nnote: {values.regime.reason}"
        return text
    return f"value matrix for classes {_short(values.classes)} (rows true class, columns predicted then abstain)"


def _shown_confidences(entry, models, tune_split=None):
    """The (recalibrated) confidences of a model on the data the report shows: its tuning and evaluated splits.

    A rule fitted on no data (the calibrated threshold ω/(1+ω), acting on every item) has no ``tuned_on``
    split; its tuning split is then the pipeline's (``tune_split`` as given, else the default), as the
    dashboard's pages take it, so that its threshold reads the same there and here.
    """
    import numpy as np

    from .._pipeline.pipeline import Pipeline

    run = models.get(entry.model) if models is not None else None
    if run is None:
        return None
    evaluated = (entry.evaluation or {}).get("split")
    tuned = entry.tuned_on.get("split")
    if tuned is None and evaluated is not None:
        tuned = Pipeline({entry.model: run}, tune_split, evaluated).plan(entry.model).tune_split
    splits = dict.fromkeys((tuned, evaluated))
    try:
        pieces = [entry.policy.calibrate(run.splits[s]).confidence for s in splits if s in run.splits]
    except ValueError:  # a calibration that cannot apply: the exact threshold is printed instead
        return None
    return np.concatenate(pieces) if pieces else None


def _describe_rule(policy, confidences=None) -> list[str]:
    """The rule's lines; thresholds with the digits that tell their decision apart on ``confidences``."""
    kind = policy.kind
    if kind == "accept_all":
        return ["rule                  accept every prediction (no abstention)"]
    if kind == "expected_value":
        return [
            "rule                  act on the class of highest expected value, abstain when abstaining is worth more"
        ]
    if kind in ("threshold", "calibrated_threshold"):
        if policy.threshold is None:
            return ["threshold             none: always abstain"]
        # Enough digits to tell the decision apart on the data (never 1 for 0.9999997); the exact one is in the JSON.
        text = wording.threshold_on_data(policy.threshold, confidences)
        return [f"threshold             {text}  (act iff confidence >= threshold)"]
    lines = ["class thresholds      (act iff confidence >= threshold of the predicted class)"]
    for label, threshold in policy.class_thresholds:
        text = "never (abstain)" if threshold is None else wording.threshold_on_data(threshold, confidences)
        lines.append(f"  {one_line(label):<19} {text}")
    return lines


def _entry_rule_lines(entry, confidences=None) -> list[str]:
    """An entry's rule: :func:`_describe_rule`, or its thresholds per segment (the segments hold their own)."""
    if entry.segments is None:
        return _describe_rule(entry.policy, confidences)
    if "class_thresholds" in entry.segments:
        lines = [f"per-class thresholds per segment of {entry.segments['column']!r}  (act iff confidence >= the "
                 "threshold of the item's segment and predicted class; a segment not seen in tuning is handed off)"]
        for name, per_class in entry.segments["class_thresholds"].items():
            lines.append(f"  {one_line(name):<19} {wording.segment_rule_phrase(None, per_class, confidences)}")
        return lines
    lines = [f"thresholds per segment of {entry.segments['column']!r}  (act iff confidence >= the threshold of the "
             "item's segment; a segment not seen in tuning is handed off)"]
    for name, threshold in entry.segments["thresholds"].items():
        text = "never (abstain)" if threshold is None else wording.threshold_on_data(threshold, confidences)
        lines.append(f"  {one_line(name):<19} {text}")
    return lines


def say_segment_fits(args, rules, models, say) -> None:
    from .segments import segment_fit_lines

    for line in segment_fit_lines(args, rules, models):
        say(line)


def _cmd_report(args) -> int:
    from .._pipeline.build import build_policy_document

    _check_report_options(args)
    values = _values(args)
    if args.segment is not None:  # thresholds per segment among the candidates (docs/segments.md)
        from .segments import report_segments

        say = _say(args)
        models, document, notes, recommended, fits = report_segments(args, values, _load)
        _warn_notes_of_no_model(document, notes)
        _say_document(say, _recommendation_lines(recommended, document, args.currency, models, args.tune_split),
                      document, models, values, values,
                      f"{args.policy}, calibration: none; a segment column: {args.segment}", args.currency,
                      args.tune_split)
        say_segment_fits(args, fits, models, say)
        outputs = [_policy_json_output(document, args.json)] if args.json else []
        if args.html:
            from dataclasses import replace

            fitted = replace(document, entries=tuple(rule.entry for rule in fits.values()))
            html = _html_report_text(args, models, values, segments=(fitted, {m: r.fit for m, r in fits.items()}))
            outputs.append(_text_output(args.html, html, "the HTML report", f"wrote the HTML report to {args.html}"))
        _write_outputs(outputs, say, args)
        return EXIT_OK
    reviewers = _reviewers(args, values)
    if reviewers is not None and not reviewers.flat:
        return _report_for_loaded_reviewers(args, values, reviewers)
    typed_values = values
    if reviewers is not None:  # a flat accuracy: priced into v_abstain, so every rule stays exact
        values = reviewers.effective_use_case(values)
    _check_interval_values(values, with_interval=not args.no_interval, html=bool(args.html), recommends=True)
    models = _load(args.paths)
    document, notes = build_policy_document(
        models,
        values,
        kind=args.policy,
        calibration_method=args.calibration,
        tune_split=args.tune_split,
        eval_split=args.eval_split,
        with_interval=not args.no_interval,
        **_constraint_kwargs(args),
    )
    pipeline = None
    if args.adapt_to is not None:  # re-tuned for the class mix of an unlabelled split (docs/constraints.md)
        from .._pipeline.adapted import adapted_pipeline

        pipeline = adapted_pipeline(models, args.adapt_to, method=args.adapt_method or "em",
                                    tuning=args.adapt_tuning or "reweight",
                                    calibration_method=args.calibration, tune_split=args.tune_split,
                                    eval_split=args.eval_split, rng=0, guard=not args.adapt_always)
        document, notes = pipeline.document(list(models), args.policy, values,
                                            with_interval=not args.no_interval, **_constraint_kwargs(args))
    # The recommendation weighs the rules on the same pipeline the document came from (adapted or not).
    document, notes, recommended = _with_recommendation(args, models, values, document, notes, pipeline)
    if reviewers is not None:
        from dataclasses import replace

        from .._pipeline.reviewers import reviewer_record

        document = replace(document, reviewers=reviewer_record(reviewers, typed_values))
    say = _say(args)
    _warn_notes_of_no_model(document, notes)
    _say_document(say, _recommendation_lines(recommended, document, args.currency, models, args.tune_split),
                  document, models, values, values, f"{args.policy}, calibration: {args.calibration}", args.currency,
                  args.tune_split)
    for line in _ranking_lines(document, models, values, args.currency, args.tune_split):
        say(line)
    outputs = [_policy_json_output(document, args.json)] if args.json else []
    html = _html_report_text(args, models, values, reviewers) if args.html or args.log_mlflow else None
    if args.html:
        outputs.append(_text_output(args.html, html, "the HTML report", f"wrote the HTML report to {args.html}"))
    _write_outputs(outputs, say, args)  # every output made first: an error or interrupt leaves the old files
    if args.log_mlflow:
        from .._serve.mlflow_bridge import log_report_to_runs

        try:
            log_report_to_runs(args.paths, document, html, say)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return EXIT_OK


def _reviewers(args, values):
    """The reviewers of ``report --reviewer-accuracy ...`` (docs/constraints.md), or None."""
    from .reviewers import reviewers_from_args

    try:
        return reviewers_from_args(args, values)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _reviewer_lines(document) -> list[str]:
    from .._report_reviewers import reviewer_lines

    return reviewer_lines(document.reviewers)


def _report_for_loaded_reviewers(args, values, reviewers) -> int:
    """``report`` with a workload curve: one exact threshold per model, each priced at its hand-off rate."""
    from .._pipeline.reviewers import loaded_reviewer_document

    unsupported = [name for name, given in (
        ("--policy other than threshold or class_thresholds", args.policy not in (RECOMMENDED_RULE, "threshold",
                                                                               "class_thresholds")),
        ("--adapt-to", args.adapt_to is not None), ("--log-mlflow", args.log_mlflow),
        ("constraints and tiers", bool(_constraint_kwargs(args)))) if given]
    if unsupported:
        raise UsageError("with a --workload curve the report tunes one global threshold or per-class thresholds "
                         f"per model; it does not take {', '.join(unsupported)} (a flat --reviewer-accuracy does)")
    # A workload curve tunes one threshold unless per-class thresholds are asked for ("recommended" included).
    kind = "class_thresholds" if args.policy == "class_thresholds" else "threshold"
    models = _load(args.paths)
    try:
        document, notes = loaded_reviewer_document(
            models, values, reviewers, tune_split=args.tune_split, eval_split=args.eval_split,
            calibration_method=args.calibration, with_interval=not args.no_interval, kind=kind)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    say = _say(args)
    _warn_notes_of_no_model(document, notes)
    stored = one_line(_stored_recommendation(document.recommendation))
    _say_document(say, [f"recommendation: {stored}"], document, models,
                  values, None, f"{kind} (tuned for the reviewers' workload), calibration: "
                  f"{args.calibration}",
                  args.currency, args.tune_split)
    outputs = [_policy_json_output(document, args.json)] if args.json else []
    if args.html:  # the other sections price a perfect reviewer; the reviewers' own section says what changes
        # The rule the JSON was tuned with (a workload curve resolves "recommended" to one threshold).
        html = _html_report_text(argparse.Namespace(**{**vars(args), "policy": kind}), models, values, reviewers)
        outputs.append(_text_output(args.html, html, "the HTML report", f"wrote the HTML report to {args.html}"))
    _write_outputs(outputs, say, args)
    return EXIT_OK


def _say_document(say, head: list[str], document, models, values, entry_values, policy: str, currency: str,
                  tune_split=None) -> None:
    """The readable report of a policy document: its recommendation, values, reviewers, then each model."""
    for line in head:
        say(line)
    say(_describe_values(values))
    for line in _reviewer_lines(document):
        say(line)
    say(f"policy: {policy}")
    for entry in document.entries:
        say("")
        for line in _entry_lines(entry, models[entry.model].path, entry_values, currency,
                                 confidences=_shown_confidences(entry, models, tune_split)):
            say(line)


def _with_recommendation(args, models, values, document, notes, pipeline=None):
    """The recommendation from the export's pipeline, and the document that names it (its entry refitted if needed)."""
    from .._pipeline.pipeline import Pipeline
    from .._decide.recommend import recommend, recommended_document

    constraints = _constraint_kwargs(args)
    if pipeline is None:
        pipeline = Pipeline(models, args.tune_split, args.eval_split, args.calibration)
    kinds = None if args.policy == RECOMMENDED_RULE else (args.policy,)  # an explicit rule is the only one weighed
    recommended = recommend(pipeline, values, kinds=kinds,
                            **{k: v for k, v in constraints.items() if k != "monitoring"})
    reason = wording.recommendation_reason(recommended, args.currency)
    document, refits = recommended_document(pipeline, document, recommended, values, reason,
                                            with_interval=not args.no_interval, **constraints)
    return document, [*notes, *map(wording.refitted_note, refits)], recommended


def _recommendation_lines(recommended, document, currency: str, models=None, tune_split=None) -> list[str]:
    """The report's first lines: the one recommendation and why, then a blank line."""
    confidences = None
    if recommended.model is not None and recommended.model in {e.model for e in document.entries}:
        confidences = _shown_confidences(document.entry(recommended.model), models, tune_split)
    lines = ["recommendation: " + one_line(wording.recommendation_headline(recommended, confidences)),
             "                " + one_line(document.recommendation["reason"])]
    # The headline says one threshold; two tiers are described in their model's section.
    if recommended.model is not None and recommended.kind not in (
            "threshold", "calibrated_threshold", "two_tier", "shortlist"):
        entry = document.entry(recommended.model)
        lines += ["                " + line for line in _entry_rule_lines(entry, confidences)]
    return [*lines, ""]


def _warn_notes_of_no_model(document, notes) -> None:
    """Notes that belong to no model go to stderr; the others are said in their model's section."""
    entry_notes = {n for e in document.entries for n in e.notes}
    for note in notes:
        if note not in entry_notes:
            _err(f"warning: {one_line(note)}")


def _check_interval_values(values, *, with_interval: bool, html: bool = False, recommends: bool = False) -> None:
    """Refuse, before any work, values too tiny or too large for an interval, and say how to do without one
    (``recommends``: the command recommends a rule, which weighs each by its interval, with or without
    ``--no-interval``)."""
    if not (with_interval or html or recommends):
        return
    from .._model.values import check_value_range

    check_value_range(values)  # beyond what any sum can hold: --no-interval would not help
    try:
        check_value_range(values, interval=True)
    except ValueError as exc:
        if recommends:
            hint = "; the recommendation weighs each rule by its interval, so --no-interval does not help here"
        elif html:  # the HTML report always shows its intervals
            hint = "; the HTML report always shows 95% intervals: without --html, --no-interval skips them"
        else:
            hint = "; or skip the confidence intervals with --no-interval"
        raise UsageError(f"{exc}{hint}") from None


def _entry_lines(entry, path, values=None, currency: str = "", *, confidences=None) -> list[str]:
    """One model's section of the report: what it was tuned and evaluated on, its rule and its value."""
    from .._model.recalibration import describe_calibration
    from .rules import describe_constraints

    evaluation = entry.evaluation or {}
    tuned = entry.tuned_on
    tuned_text = (
        "nothing (the rule follows from the values)"
        if tuned["split"] is None
        else (f"split {tuned['split']!r} ({_count(tuned['n'])} items)")
    )
    estimated = " (estimated without labels)" if evaluation.get("estimated") else ""
    lines = [
        f"== {one_line(entry.model)}  ({one_line(path)})",
        f"tuned on              {tuned_text}",
        f"evaluated on          split {evaluation.get('split')!r} ({_count(evaluation.get('n', 0))} items){estimated}",
        f"calibration           {describe_calibration(entry.policy.calibration)}",
        *(_entry_rule_lines(entry, confidences) if entry.policy.kind not in ("two_tier", "shortlist") else []),
        *describe_constraints(entry, confidences),
        *_evaluation_lines(evaluation, values, currency),
    ]
    prefix = f"{entry.model}: "
    lines += [f"note: {one_line(note[len(prefix) :] if note.startswith(prefix) else note)}" for note in entry.notes]
    return lines


def _evaluation_lines(evaluation: dict, values=None, currency: str = "") -> list[str]:
    """Value, coverage, selective accuracy and the interval of one evaluation, with what the interval rests on."""
    ci = evaluation.get("ci95")
    basis = []
    if ci:
        interval = f"{_range(ci, currency)}  ({_INTERVAL_METHOD})"
        basis = [" " * 22 + wording.evaluation_basis(evaluation, values, currency)]
    else:
        interval = f"n/a ({'estimated value' if evaluation.get('estimated') else 'not computed'})"
    return [
        f"value total           {_total(evaluation.get('value_total'), currency)}",
        f"value per item        {_money(evaluation.get('value_per_item'), currency)}",
        f"value dimensionless   {_ratio(evaluation.get('value_dimensionless'))}  (0 = always abstain, 1 = perfect)",
        f"coverage              {_pct(evaluation.get('coverage'))}  "
        f"({_count(evaluation.get('n_correct', 0))} correct, {_count(evaluation.get('n_wrong', 0))} wrong, "
        f"{_count(evaluation.get('n_abstain', 0))} abstained{_by_model(evaluation)})",
        f"selective accuracy    {_pct(evaluation.get('selective_accuracy'))}",
        f"95% interval          {interval}",
        *basis,
    ]


_INTERVAL_METHOD = "allows for outcomes rare or not seen; exact for two outcomes"


def _ranking_lines(document, models, values, currency: str, tune_split=None) -> list[str]:
    """With two or more evaluated models: the one of highest value per item, then the verdict."""
    ranked = sorted(
        (e for e in document.entries if e.evaluation and e.evaluation.get("value_per_item") is not None),
        key=lambda e: -e.evaluation["value_per_item"],
    )
    if len(ranked) < 2:
        return []
    best = ranked[0]
    return [
        "",
        f"highest value per item: {one_line(best.model)} ({_money(best.evaluation['value_per_item'], currency)})",
        *_verdict_lines(document, models, values, currency, tune_split),
    ]


def _policy_json_output(document, destination: str) -> _Output:
    """The policy JSON as an output (a file, or stdout for ``-``); never a document the schema refuses."""
    from .._pipeline.policy_json import validate_policy_document

    validate_policy_document(document.to_dict())
    return _text_output(destination, document.to_json(), "the policy JSON",
                        f"wrote the policy JSON for {len(document.entries)} model(s) to {destination}")


def _verdict_lines(document, models, values, currency: str, tune_split=None) -> list[str]:
    """The verdict with its uncertainty, in the words of the dashboard and the HTML report."""
    from .._decide.verdict import verdict

    runs = {e.model: (e.policy, models[e.model].splits[e.evaluation["split"]]) for e in document.entries
            if e.evaluation}
    judged = verdict(runs, values)
    if judged.degenerate == "no_models":
        return []
    kinds = {e.policy.kind for e in document.entries if e.evaluation}
    rule = f" ({wording.rule_name(kinds.pop())})" if len(kinds) == 1 else ""
    shown = (_shown_confidences(document.entry(judged.best), models, tune_split) if judged.best is not None
             else None)
    return [f"verdict{rule}: " + one_line(wording.verdict_headline(judged, currency))] + [
        "         " + one_line(sentence) for sentence in wording.verdict_sentences(judged, currency, confidences=shown)]


def _html_report_text(args, models, values, reviewers=None, segments=None) -> str:
    """The shareable report: one self-contained HTML file (charts inline, nothing fetched when opened);
    ``segments``: the ``(document, fits)`` of ``report --segment``, shown in a section of their own (the
    report's other sections weigh the rules without segments)."""
    from .._model.choices import SEGMENT_RULE
    from ..report import html_report

    kind = RECOMMENDED_RULE if args.policy == SEGMENT_RULE else args.policy
    return html_report(
        models, values, kind=kind, calibration_method=args.calibration,
        tune_split=args.tune_split, recommend_kinds=None if kind == RECOMMENDED_RULE else (kind,),
        eval_split=args.eval_split, currency=args.currency, volume=args.volume, period=args.period,
        **_constraint_kwargs(args), **({} if reviewers is None else {"reviewers": reviewers}),
        **({} if segments is None else {"segments": segments}),
    )


def _by_model(evaluation: dict) -> str:
    """Of the hand-offs, those the model itself declined (a language model's "I don't know"), or nothing."""
    if "n_abstain_by_model" not in evaluation:
        return ""
    false = evaluation.get("n_false_abstentions")
    return (f", {_count(evaluation['n_abstain_by_model'])} of them declined by the model itself"
            + ("" if false is None else f", of those {wording.false_abstentions(false)}"))


def _command_inputs(args) -> list[str]:
    """Every file or folder a command reads: run files, the policy, the value matrix."""
    given = list(getattr(args, "paths", None) or []) + list(getattr(args, "sources", None) or [])
    from .._io.log_sources import is_log_source, log_source_inputs

    given = [p for g in given for p in (log_source_inputs(g) if is_log_source(str(g)) else [g])]
    for name in ("policy", "value_matrix"):
        if getattr(args, name, None):
            given.append(getattr(args, name))
    return given


# Options naming a file to write (table's --csv is a format); "-" is stdout for each of them but aggregate's.
_OUTPUT_OPTIONS = {"json": "--json", "html": "--html", "csv": "--csv", "out": "--out"}


def _named_outputs(args) -> dict[str, str]:
    """{option: path} of the outputs a command was given, stdout (``-``) included."""
    return {option: getattr(args, name) for name, option in _OUTPUT_OPTIONS.items()
            if isinstance(getattr(args, name, None), str)}


def _check_outputs(args) -> None:
    """Refuse, before any work, an output that is an input, not a regular file or a new path, another
    output of the same command, or a second one on stdout."""
    from .._io.paths import OutputRefused, check_output, same_file, shown

    named = _named_outputs(args)
    to_stdout = [option for option, path in named.items() if path == "-"]
    if args.command == "aggregate" and to_stdout:
        raise OutputRefused("aggregate writes a Parquet file, which cannot go to stdout ('-'): give --out a file name")
    if len(to_stdout) > 1:
        raise OutputRefused(f"{' and '.join(to_stdout)} both name stdout ('-'); only one output can go there: "
                            "give the others a file name")
    files = [(option, path) for option, path in named.items() if path != "-"]
    for i, (option, output) in enumerate(files):
        if not output.strip():
            raise OutputRefused(f"the file name given to {option} is empty; give a file name")
        check_output(output, _command_inputs(args), f"the output of {option}")
        folder = Path(output).parent
        if args.command != "aggregate" and not folder.is_dir():  # aggregate makes its folder
            what = {"--json": "the evaluation JSON" if args.command == "apply" else "the policy JSON",
                    "--html": "the HTML report", "--csv": "the VOC table"}.get(option, "the output")
            raise OutputRefused(f"cannot write {what} to {shown(output)}: its folder {shown(folder)} does not "
                                "exist; make it first, or write elsewhere")
        for other, earlier in files[:i]:
            if same_file(Path(output), Path(earlier)):
                raise OutputRefused(f"{other} and {option} both name {shown(output)}; give each output its own file")


def _check_inputs(args) -> None:
    """Refuse, before any work, an input path this system cannot hold (a 5,000-character name)."""
    from .._io.paths import path_problem

    for given in [*_command_inputs(args), *([args.temp_dir] if getattr(args, "temp_dir", None) else [])]:
        if str(given).startswith("mlflow:"):  # a run's name, not a path: the MLflow reader checks it
            continue
        problem = path_problem(str(given))
        if problem:
            raise UsageError(problem)


@dataclass(frozen=True)
class _Output:
    """One output of a command: where it goes (a file, or ``-`` for stdout), what it is, and how to write it.

    ``write`` takes a temporary file's path or, for stdout, the stream; ``said`` is the line that reports it."""

    path: str
    what: str
    said: str
    write: Callable


def _text_output(path: str, text: str, what: str, said: str) -> _Output:
    def write(target) -> None:
        if isinstance(target, Path):
            target.write_text(text, encoding="utf-8")
        else:
            target.write(text)

    return _Output(path, what, said, write)


def _say(args):
    """Where the readable report goes: stderr when an output owns stdout (``--json -``, ``--html -``), else stdout."""
    return _err if "-" in _named_outputs(args).values() else _out


def _write_outputs(outputs: Sequence[_Output], say, args) -> None:
    """Write a command's outputs as one unit (``valuecore._io.paths.write_together``): no file is written before
    all are made; a file never replaces an input. The one on stdout (``-``) is written after the files."""
    from .._io.paths import OutputNotWritten, check_output, write_together

    files = [output for output in outputs if output.path != "-"]
    for output in files:
        check_output(output.path, _command_inputs(args), output.what)
    written: list = []
    args.written_outputs = written  # main names them when an interrupt follows
    try:
        write_together([(output.path, output.write) for output in files], written=written)
    except OutputNotWritten as failed:
        output = files[failed.index]
        done = "; ".join(f"{o.what} {o.path} was written" for o in files[:len(written)])
        raise UsageError(f"cannot write {output.what} to {output.path}: {failed.reason}"
                         + (f" ({done})" if done else "")) from None
    for output in outputs:
        if output.path == "-":
            output.write(sys.stdout)
    for output in files:
        say("")
        say(output.said)


def _check_report_options(args) -> None:
    """Refuse, before any work, ``report`` options that contradict each other or would do nothing."""
    from .segments import check_segment_options

    check_segment_options(args)
    if args.log_mlflow and not any(str(path).startswith("mlflow:") for path in args.paths):
        raise UsageError("--log-mlflow logs to the MLflow run the runs came from, and none is named: name it as "
                         "mlflow:<run_id> or mlflow:<experiment>/<run>; nothing was written")
    if args.adapt_to is None:
        idle = [option for option, given in (("--adapt-method", args.adapt_method is not None),
                                             ("--adapt-tuning", args.adapt_tuning is not None),
                                             ("--adapt-always", args.adapt_always)) if given]
        if idle:
            raise UsageError(f"{' and '.join(idle)} only change{'s' if len(idle) == 1 else ''} how --adapt-to "
                             "SPLIT re-tunes for a class mix, and no --adapt-to is given")
    elif args.max_risk is not None:
        raise UsageError("--max-risk certifies the error rate on the tuning split's items as they were drawn, and "
                         "--adapt-to re-weights them to another class mix, which a certificate cannot rest on: "
                         "give one or the other")


# ----------------------------------------------------------------- apply
def _confusion_lines(result) -> list[str]:
    """The confusion matrix with its abstain column, as aligned text (rows true class)."""
    columns = [*map(one_line, result.classes), "abstain"]
    corner = "true \\ acted as"
    width = max(8, *(len(str(c)) for c in columns)) + 1
    first = max(len(corner), *(len(c) for c in columns[:-1])) + 1
    lines = [f"  {corner:<{first}}" + "".join(str(c).rjust(width) for c in columns)]
    for label, row in zip(columns[:-1], result.confusion):
        lines.append(f"  {label:<{first}}" + "".join(_count(v).rjust(width) for v in row))
    return lines


def _cmd_apply(args) -> int:
    from .._pipeline.pipeline import apply_policy_document

    path = Path(args.policy)
    document = _read_policy_document(path)
    _check_interval_values(document.values, with_interval=not args.no_interval)
    from .segments import applied_segment_lines, apply_segment_column

    models = _load(args.paths, apply_segment_column(document, args.segment))
    applied = apply_policy_document(document, models, args.split, with_interval=not args.no_interval)
    if document.reviewers is not None:  # on a workload curve, each policy is priced at its own hand-off rate
        from .._pipeline.reviewers import reprice_applied

        applied = reprice_applied(document, models, applied, with_interval=not args.no_interval)
    say = _say(args)
    if document.recommendation is not None:
        say(f"recommendation (as stored): {one_line(_stored_recommendation(document.recommendation))}")
    say(_describe_values(document.values))
    for line in _reviewer_lines(document):
        say(line)
    say(f"policies from {path} applied as stored (thresholds, calibration and rule; nothing refitted)")
    evaluated = 0
    for item in applied:
        say("")
        say(f"== {one_line(item.model)}" + (f"  ({one_line(models[item.model].path)})" if item.model in models else "")
            + ("  [recommended]" if item.recommended else ""))
        if item.same_run is False:
            say("note: this run file is not the one the policy was built from (other SHA-256)")
        if item.evaluation is None:
            _err(one_line(f"warning: {item.model} not evaluated: {item.note}"))
            continue
        evaluated += 1
        if document.entry(item.model).segments is not None:
            for line in applied_segment_lines(item, models.get(item.model)):
                say(line)
            continue
        policy = document.entry(item.model).policy
        try:  # the threshold reads with the digits that tell its decision apart on the split shown
            confidences = policy.calibrate(models[item.model].splits[item.split]).confidence
        except (KeyError, ValueError):
            confidences = None
        for line in _applied_lines(item, policy, confidences):
            say(line)
    if not evaluated:
        raise UsageError("no stored policy could be evaluated on these runs (see the warnings above)")
    if args.json:
        record = _applied_record(path, args.split, applied, document.recommendation)
        _write_outputs([_applied_json_output(args.json, record, evaluated)], say, args)
    return EXIT_OK


def _read_policy_document(path: Path):
    """The policy JSON at ``path``, or UsageError saying why it cannot be used."""
    from .._pipeline.policy_json import PolicyDocument

    from .._io.limits import read_limited

    try:  # a regular file, read no further than the JSON limit: a FIFO or /dev/zero is refused at once
        text = read_limited(path, "the policy")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such policy file") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        return PolicyDocument.from_json(text)
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}") from None


def _applied_lines(item, policy, confidences=None) -> list[str]:
    """One evaluated model's section: its split, rule, value, coverage and confusion matrix."""
    from .._model.recalibration import describe_calibration
    from .rules import describe_tiers

    evaluation = item.evaluation
    estimated = " (estimated without labels)" if evaluation.get("estimated") else ""
    ci = evaluation.get("ci95")
    return [
        f"evaluated on          split {item.split!r} ({_count(evaluation['n'])} items){estimated}",
        f"calibration           {describe_calibration(policy.calibration)}",
        *(describe_tiers(policy, evaluation, confidences) or _describe_rule(policy, confidences)),
        f"value total           {_total(evaluation.get('value_total'))}",
        f"value per item        {_money(evaluation.get('value_per_item'))}",
        f"coverage              {_pct(evaluation.get('coverage'))}",
        *([f"95% interval          {_range(ci)}  ({_INTERVAL_METHOD})"] if ci else []),
        "confusion matrix (weighted counts; columns: the class acted on, then abstain)",
        *_confusion_lines(item.result),
    ]


def _stored_recommendation(recommendation: dict) -> str:
    if recommendation["model"] is None:
        if recommendation.get("status") == "not_yet":
            return f"not yet. {recommendation['reason']}"
        return f"no model. {recommendation['reason']}"
    return f"{recommendation['model']} ({recommendation['policy']}). {recommendation['reason']}"


def _applied_record(path: Path, split, applied, recommendation=None) -> dict:
    """What ``apply --json`` writes: per model its evaluation and confusion matrix."""
    return {
        "policy": str(path),
        "split": split,
        "recommendation": recommendation,
        "models": [
            {
                "model": item.model,
                "same_run": item.same_run,
                "evaluation": item.evaluation,
                "confusion": None if item.result is None else {
                    "rows_true_class": list(item.result.classes),
                    "columns": [*item.result.classes, "abstain"],
                    "counts": item.result.confusion.tolist(),
                },
                "note": item.note or None,
            }
            for item in applied
        ],
    }


def _applied_json_output(destination: str, record: dict, evaluated: int) -> _Output:
    body = json.dumps(record, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    return _text_output(destination, body, "the evaluation JSON",
                        f"wrote the evaluation of {evaluated} model(s) to {destination}")


# ----------------------------------------------------------------- table
def _markdown(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (index as the first column)."""

    def cell(value) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    header = [frame.index.name or ""] + [str(c) for c in frame.columns]
    lines = [
        "| " + " | ".join(cell(h) for h in header) + " |",
        "| " + " | ".join(["---"] + ["---:"] * len(frame.columns)) + " |",
    ]
    for index, row in frame.iterrows():
        lines.append("| " + " | ".join([cell(index)] + [cell(v) for v in row.tolist()]) + " |")
    return "\n".join(lines)


def _table_view(table) -> pd.DataFrame:
    """Metrics as rows, models as columns, each cell 'value (rank)'."""
    import pandas as pd
    metrics, ranks = table.metrics, table.ranks
    view = pd.DataFrame(index=metrics.columns, columns=metrics.index, dtype=object)
    for model in metrics.index:
        for column in metrics.columns:
            value, rank = metrics.at[model, column], ranks.at[model, column]
            rank_text = "" if pd.isna(rank) else f" ({int(rank)})"
            view.at[column, model] = f"{_fmt(value)}{rank_text}"
    view.index.name = "metric"
    view.columns.name = None
    return view


def _cmd_table(args) -> int:
    from .._engine.table import comparison_table

    models = _load(args.paths)
    eval_runs, tune_runs, notes = _labelled_runs(models, args.tune_split, args.eval_split, need_tuning=True)
    table = comparison_table(eval_runs, tune_runs, ks=args.k)
    for note in notes:
        _err(f"note: {one_line(note)}")
    if args.format == "csv":
        sys.stdout.write(spreadsheet_safe(table.to_frame()).to_csv())
        return EXIT_OK
    view = _table_view(table)
    view.columns = [one_line(model) for model in view.columns]  # the CSV above keeps the names as they are
    if args.format == "markdown":
        _out(_markdown(view))
    else:
        _out(view.to_string())
    legend = (
        "value (rank); rank 1 is best. value_tuned_k: dimensionless value per item at omega = k with the "
        "threshold tuned on the tuning split; value_calibrated_k: threshold k/(k+1); cost_error_k (binary "
        "runs): (k * FN + FP) / N, lower is better."
    )
    _out("")
    _out(legend)
    disagreements = table.disagreements()
    if disagreements:
        best = table.best()
        _out("")
        _out(f"columns whose best model is not the most accurate one ({one_line(best['accuracy'])}):")
        for column in disagreements:
            _out(f"  {column}: {one_line(best[column])}")
    return EXIT_OK


# ------------------------------------------------------------------- voc
def _cmd_voc(args) -> int:
    import numpy as np

    from .._engine.voc import voc_curve, voc_frame

    models = _load(args.paths)
    need_tuning = args.mode == "tuned"
    eval_runs, tune_runs, notes = _labelled_runs(models, args.tune_split, args.eval_split, need_tuning=need_tuning)
    curves = {
        name: voc_curve(run, args.mode, tune_runs.get(name) if need_tuning else None) for name, run in eval_runs.items()
    }
    omegas = np.linspace(0.0, args.omega_max, args.points)
    frame = voc_frame(curves, omegas)
    if args.mode == "oracle":
        notes.append(
            "mode oracle: at every omega the threshold is tuned on the evaluated data itself, "
            "an upper bound rather than an achievable value"
        )
    for note in notes:
        _err(f"note: {one_line(note)}")
    say = _say(args)  # with --csv - the table owns stdout
    if args.csv:
        safe = spreadsheet_safe(frame)
        said = f"wrote {len(frame)} rows ({len(curves)} model(s) x {args.points} omegas) to {args.csv}"
        _write_outputs([_Output(args.csv, "the VOC table", said, lambda target: safe.to_csv(target, index=False))],
                       say, args)
    else:
        _out(frame.assign(model=frame["model"].map(one_line)).to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    say("")
    say(f"omega_sup (largest penalty at which the model still adds value; mode {args.mode}):")
    width = max(len(one_line(name)) for name in curves)
    for name, curve in curves.items():
        sup = curve.omega_sup
        extra = "  (the value stays positive for every omega)" if math.isinf(sup) else ""
        say(f"  {one_line(name):<{width}}  {_fmt(sup, '.6g')}{extra}")
    return EXIT_OK


# ----------------------------------------------------------------- parser
def _constraint_kwargs(args) -> dict:
    kwargs = {}
    if args.max_handoff_rate is not None:
        kwargs["max_handoff_rate"] = args.max_handoff_rate
    if args.max_risk is not None or args.risk_confidence is not None:
        kwargs["max_risk"] = args.max_risk
        kwargs["risk_confidence"] = args.risk_confidence
    if args.weights_are_copies:
        kwargs["risk_weights"] = "copies"
    if args.monitoring:
        kwargs["monitoring"] = True
    given = [args.v_confirmed_correct, args.v_confirmed_wrong, args.assist_cost]
    if any(v is not None for v in given):
        if args.v_confirmed_correct is None or args.v_confirmed_wrong is None:
            raise UsageError("the assisted tier needs --v-confirmed-correct and --v-confirmed-wrong")
        kwargs["assisted"] = {
            "v_confirmed_correct": args.v_confirmed_correct,
            "v_confirmed_wrong": args.v_confirmed_wrong,
            "cost": args.assist_cost or 0.0,
        }
    if args.shortlist_values is not None:
        from .._engine.shortlist import ShortlistValues

        try:
            kwargs["shortlist_values"] = ShortlistValues.parse(args.shortlist_values).to_dict()
        except ValueError as exc:
            raise UsageError(f"--shortlist-values: {exc}") from None
    if args.shortlist_rule is not None:
        kwargs["shortlist_rule"] = args.shortlist_rule
    return kwargs


# ------------------------------------------------------------------- main
# What runs each command (``parser`` names the command and parses its options, without importing these).
_COMMANDS = {
    "validate": _cmd_validate,
    "report": _cmd_report,
    "apply": _cmd_apply,
    "table": _cmd_table,
    "monitor": _cmd_monitor,
    "voc": _cmd_voc,
    "aggregate": _cmd_aggregate,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 unexpected failure, 2 bad usage or input)."""
    args = parse_command_line(sys.argv[1:] if argv is None else list(argv))
    return args if isinstance(args, int) else run(args)


def run(args: argparse.Namespace) -> int:
    """Run the command that :func:`~valuecore._cli.parser.parse_command_line` parsed; returns the exit code."""
    debug = bool(getattr(args, "debug", False))
    try:
        _check_inputs(args)
        _check_outputs(args)
        return _COMMANDS[args.command](args)
    except BrokenPipeError:  # stdout was the output (`--json -`, `table`) and its reader stopped: stop quietly
        stdout_to_devnull()  # keep the interpreter's final flush from complaining
        return EXIT_OK
    except (UsageError, ValueError, FileNotFoundError) as exc:
        if debug:
            traceback.print_exc()
        _err(f"error: {one_line(exc)}")  # one line: a message may quote a name from a file
        return EXIT_USAGE
    except KeyboardInterrupt:
        _err(_interrupted(args))
        return 130
    except OSError as exc:  # a file the user named cannot be used: their input, in one sentence
        if exc.errno not in _USER_FILE_ERRORS or exc.filename is None:
            return _unexpected(exc, debug)
        from .._io.paths import shown

        if debug:
            traceback.print_exc()
        _err(f"error: cannot use {shown(exc.filename)}: {exc.strerror}")
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the command line promises no traceback without --debug
        return _unexpected(exc, debug)


def _unexpected(exc: BaseException, debug: bool) -> int:
    if debug:
        traceback.print_exc()
    _err(f"error: unexpected failure ({type(exc).__name__}: {one_line(exc)})")
    if not debug:
        _err("hint: this is likely a bug in valuecore; run again with --debug for the traceback and report it")
    return EXIT_FAILURE


# errno values that say a file the user named cannot be used (not a bug): exit 2.
_USER_FILE_ERRORS = {errno.ENAMETOOLONG, errno.ENOENT, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EISDIR,
                     errno.ELOOP, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.ENXIO}


def _interrupted(args) -> str:
    """What an interrupt leaves: the outputs written whole before it, or none."""
    written = [str(path) for path in getattr(args, "written_outputs", ())]
    if written:
        names = written[0] if len(written) == 1 else f"{', '.join(written[:-1])} and {written[-1]}"
        return f"interrupted after writing {names} whole"
    if any(path != "-" for path in _named_outputs(args).values()):
        return "interrupted: nothing was written"
    return "interrupted"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
