"""The HTML report's section on the reviewers: what people who are not always right change.

With a flat accuracy the report's use case already prices a hand-off at its
expected value (every section is exact for these reviewers), so the section only
says so. With a workload curve the other sections price a hand-off as if the
person were always right; this section re-tunes one threshold per model for the
reviewers (the exact prefix scan), judges the models with each hand-off priced at
the rate its policy produces (``verdict(..., reviewers=)``), and draws the VOC
curves with the reviewers' mistakes counted (``voc_curve(..., reviewers=)``).
"""

from __future__ import annotations

import html
import math

import numpy as np

__all__ = ["reviewer_lines", "reviewers_section"]


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _table(header, rows) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _people(reviewers, use_case) -> str:
    from ._pipeline.reviewers import reviewer_record

    return "".join(f"<p>{_e(line)}</p>" for line in reviewer_lines(reviewer_record(reviewers, use_case)))


def reviewers_section(reviewers, models, document, values, currency: str = "", *, svg=None, voc_spec=None) -> dict:
    """``{"reviewers": (heading, html)}`` for the report, or ``{}`` when no reviewers are given.

    ``values`` is the report's use case: for a flat accuracy the priced one (the
    expected hand-off value), for a workload curve the one of a perfect reviewer.
    ``svg`` and ``voc_spec`` are the report's chart renderer and VOC chart
    specification (passed in so that the charts look like the report's own).
    """
    if reviewers is None:
        return {}
    from . import wording
    from ._engine.evaluate import evaluate
    from ._engine.fitting import Policy
    from ._engine.reviewers import fit_reviewer_class_thresholds, fit_reviewer_threshold, priced_use_case
    from ._engine.reviewers import reviewers_use_case
    from ._engine.sorting import presort
    from ._decide.verdict import verdict
    from ._engine.voc import voc_curve

    values = reviewers_use_case(values)
    if reviewers.flat:
        accuracy = reviewers.workload[0][1] if reviewers.workload else reviewers.accuracy
        text = (f"<p>The reviewers get {_e(wording.percent(accuracy))} of their hand-offs right, whatever their "
                "workload. Every section of this report prices a hand-off at its expected value with them "
                f"({_e(wording.money(values.v_abstain, currency))} per hand-off), so every figure is exact for "
                "these reviewers.</p>")
        return {"reviewers": ("With your reviewers", text)}

    intro = ("<p>The reviewers' accuracy falls with their workload. <strong>The other sections of this report price "
             "a hand-off as if the person were always right.</strong> Here each model gets the rule of the report "
             "(one threshold, or one per class) tuned exactly for these reviewers on its tuning split, and each "
             "policy's "
             "hand-offs are priced at the rate it produces on the evaluated items (the 95% ranges treat that rate "
             "as fixed).</p>")
    tuned, rows, voc_rows, shown = {}, [], [], {}
    omega = values.omega
    omegas = np.linspace(0.0, max(10.0, 2 * omega) if math.isfinite(omega) else 10.0, 161)
    for entry in document.entries:
        run = models[entry.model]
        tune_split, eval_split = entry.tuned_on.get("split"), entry.evaluation["split"]
        if tune_split not in run.splits or not run.splits[tune_split].has_labels:
            continue
        evaluated = run.splits[eval_split]
        if not evaluated.has_labels:
            continue
        tuning = presort(entry.policy.calibrate(run.splits[tune_split]))
        if entry.policy.kind == "class_thresholds":  # per-class thresholds, exact for the workload curve
            try:
                fit = fit_reviewer_class_thresholds(tuning, values, reviewers)
            except ValueError:
                continue
            policy = Policy("class_thresholds", class_thresholds=fit.class_thresholds,
                            calibration=entry.policy.calibration)
        else:
            fit = fit_reviewer_threshold(tuning, values, reviewers)
            policy = Policy("threshold", threshold=fit.threshold, calibration=entry.policy.calibration)
        tuned[entry.model] = (policy, evaluated)
        # The data shown: the model's (recalibrated) confidences on its tuning and evaluated splits.
        shown[entry.model] = np.concatenate([tuning.predictions.confidence,
                                             entry.policy.calibrate(evaluated).confidence])
        as_reported = None
        if entry.policy.kind not in ("two_tier", "shortlist"):
            as_reported = evaluate(entry.policy, evaluated, priced_use_case(reviewers, values, entry.policy,
                                                                            evaluated)).value_per_item
        rows.append((entry.model, policy, 1.0 - evaluate(policy, evaluated, values).coverage, as_reported))
        evaluated_run = presort(entry.policy.calibrate(evaluated))
        curve = voc_curve(evaluated_run, "tuned", tune_run=tuning, reviewers=reviewers)
        voc_rows += [{"model": entry.model, "omega": float(w), "value": float(v)}
                     for w, v in zip(omegas, curve.value_at(omegas))]
    if not tuned:
        return {"reviewers": ("With your reviewers", _people(reviewers, values) + intro
                              + '<p class="muted">No model has labelled tuning and evaluated items.</p>')}
    judged = verdict(tuned, values, reviewers=reviewers)
    by_model = {s.model: s for s in judged.standings}
    table_rows = []
    for model, policy, rate, as_reported in rows:
        s = by_model[model]
        likely = (f"{wording.amount(s.low, currency)} to {wording.amount(s.high, currency)}"
                  if math.isfinite(s.low) and math.isfinite(s.high) else "too few items")
        # Thresholds as every surface writes them on the data shown (the Capacity page's reviewers section).
        if policy.kind == "class_thresholds":
            rule = wording.rule_phrase(policy, shown[model])
        else:
            rule = ("hand every item over" if policy.threshold is None
                    else wording.threshold_on_data(policy.threshold, shown[model]))
        table_rows.append([model, rule, wording.percent(rate),
                           wording.percent(float(reviewers.accuracy_at(rate))), wording.money(s.per_item, currency),
                           likely, "–" if as_reported is None else wording.money(as_reported, currency)])
    table_rows.append(["no model (hand everything over)", "", wording.percent(1.0),
                       wording.percent(float(reviewers.accuracy_at(1.0))),
                       wording.money(judged.baseline_per_item, currency), "", ""])
    body = _people(reviewers, values) + intro + _table(
        ["Model", "Rule for these reviewers", "Handed over", "Reviewers right", "Value per item",
         wording.INTERVAL_HEADER, "The report's rule, with these reviewers"], table_rows)
    best = judged.best
    if best is not None:
        level = f", level with {', '.join(judged.contenders)}" if judged.contenders else ""
        body += (f"<p>With these reviewers the best is {_e(best)}, at "
                 f"{_e(wording.money(judged.best_per_item, currency))} per item{_e(level)}.</p>")
    if voc_rows and svg is not None and voc_spec is not None:
        words = "thresholds tuned for these reviewers, their mistakes counted as the model's"
        body += (f"<figure>{svg(voc_spec(voc_rows, list(tuned), omega, words))}</figure>"
                 '<p class="muted">Each line: the value per item of a model for every mistake cost ω, with the '
                 "threshold tuned for these reviewers at each ω and their expected mistakes counted (a mistake "
                 "of theirs costs ω too unless you gave its value).</p>")
    return {"reviewers": ("With your reviewers", body)}


def reviewer_lines(record) -> list[str]:
    """How the hand-offs are priced, in one or two lines."""
    if record is None:
        return []
    from . import wording

    if record.get("workload"):
        curve = ", ".join(f"{wording.level(p['handoff_rate'])}: {wording.percent(p['accuracy'])}"
                          for p in record["workload"])
        people = f"reviewers' accuracy by hand-off rate {curve}"
    else:
        people = f"reviewers' accuracy {wording.percent(record['accuracy'])}"
    if record.get("accuracy_interval"):
        low, high = record["accuracy_interval"]
        sample = record.get("sample") or {}
        people += (f" ({sample.get('n_right')} right of {sample.get('n_reviewed')} reviewed; "
                   f"exact 95% interval {wording.percent(low)} to {wording.percent(high)})")
    how = ("priced into the use case: v_abstain is the expected value of a hand-off"
           if record["priced_in_use_case"] else "each policy priced at its own hand-off rate")
    return [f"{people}; a hand-off they get right is worth {record['v_abstain_if_right']:g}, one they get wrong "
            f"{record['v_person_wrong']:g}; {how}"]
