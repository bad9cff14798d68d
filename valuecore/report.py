"""A report to share: one self-contained HTML file with the decision and its evidence.

:func:`html_report` runs the same pipeline as ``python -m valuecore report``
(:func:`~valuecore.build_policy_document`: calibrate and tune on the tuning
split, evaluate on the evaluated split), leads with the one recommendation
of :func:`~valuecore.recommend` (every rule weighed, the same pipeline), asks
:func:`~valuecore.verdict` how the models compare under the chosen rule, and
writes the settings, the verdict with its
uncertainty, the value table, the VOC and value-against-threshold charts,
calibration at a glance and the policy JSON into one HTML page.

The file needs no network to open: charts are Vega-Lite specifications
rendered to inline SVG by ``vl-convert-python`` (no script, no font or CDN
request), the style sheet is inline, and a Content-Security-Policy forbids
every request the page could make. Every name that comes from a file is
HTML-escaped. Words come from :mod:`valuecore.wording`; the VOC and
value-against-threshold charts are the app's own specs
(:mod:`valuecore.chartspecs`), so a model has one colour in both. ``REPORT_SECTIONS``
names the report's sections, in order.
"""

from __future__ import annotations

import datetime as _datetime
import html
import math
import re
from typing import Mapping

import numpy as np

from . import chartspecs, wording

__all__ = ["html_report", "REPORT_SECTIONS"]

REPORT_SECTIONS = ("recommendation", "settings", "verdict", "value", "voc", "threshold", "calibration", "policy")
_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1100px;margin:2rem auto;
padding:0 1rem;color:#1f2328;line-height:1.5}
h1{font-size:1.9rem;margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem}
.headline{font-size:1.35rem;font-weight:600;margin:.8rem 0}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem}
th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}th{background:#f6f8fa}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.muted{color:#59636e;font-size:.9rem}figure{margin:1rem 0}figure svg{max-width:100%;height:auto}
pre{background:#f6f8fa;padding:.8rem;overflow:auto;font-size:.8rem;max-height:30rem}
"""
# Nothing may leave the page: no script, no fetch, no font, no image from anywhere but the file itself.
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"


def _e(text) -> str:
    return html.escape(str(text), quote=True)


# ------------------------------------------------------------------ charts
def _svg(spec: dict) -> str:
    """A Vega-Lite specification rendered to an inline ``<svg>`` (no script, no network)."""
    try:
        import vl_convert
    except ImportError as error:  # a clear message instead of a traceback
        raise ValueError(
            "the HTML report draws its charts with vl-convert-python, which is not installed "
            "(pip install vl-convert-python)"
        ) from error
    svg = vl_convert.vegalite_to_svg(_xml_text(spec))
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


# What XML 1.0 forbids in text: vl-convert lays text out through an SVG parser, and a name from a file holding
# one of these (a vertical tab, say) made it panic and abort the whole process, whatever caught exceptions.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(value):
    """``value`` (a chart spec: dicts, lists, text, numbers) with every character XML forbids written as its
    escape (``\\x0b``), the same in data, scales and titles, so a model keeps one name throughout the chart."""
    if isinstance(value, str):
        return _NOT_XML.sub(lambda match: match.group().encode("unicode_escape", "backslashreplace").decode(), value)
    if isinstance(value, dict):
        return {_xml_text(key): _xml_text(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_xml_text(item) for item in value]
    return value


def _titled(spec: dict, title: str, subtitle: str, width: int = 760) -> dict:
    """A spec of :mod:`valuecore.chartspecs` (the app's very chart) with the report's title and width."""
    return {**spec, "title": {"text": title, "subtitle": subtitle}, "width": width}


def _voc_spec(rows: list[dict], models, omega: float, mode_words: str) -> dict:
    spec = chartspecs.voc_spec(rows, models=models, omega_now=omega if math.isfinite(omega) else None, height=320)
    return _titled(spec, "Value for every mistake cost (VOC curves)", mode_words)


def _threshold_spec(rows: list[dict], models, currency: str, marks: list[dict]) -> dict:
    spec = chartspecs.value_threshold_spec(rows, marks, models=models, currency=currency, height=320)
    return _titled(spec, "Value per item against the threshold",
                   "Items at or above the threshold are acted on; points mark each model's tuned threshold")


def _reliability_spec(rows: list[dict], models) -> dict:
    spec = chartspecs.reliability_spec(rows, models, size=200)
    return {**spec, "title": {"text": "Calibration at a glance",
                              "subtitle": "On the diagonal, a model that says 80% is right 80% of the time"}}


_records = chartspecs.records


# ------------------------------------------------------------------- parts
def _cell(cell, numeric: bool) -> str:
    """A table cell; a ``(text, tooltip)`` pair shows the tooltip on hover (e.g. an exact threshold)."""
    text, tip = cell if isinstance(cell, tuple) else (cell, None)
    attributes = (' class="num"' if numeric else "") + (f' title="{_e(tip)}"' if tip else "")
    return f"<td{attributes}>{_e(text)}</td>"


def _table(header, rows, numeric=()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = "".join(_cell(cell, i in numeric) for i, cell in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _splits_text(entries) -> str:
    """Where the rules were tuned and judged; a rule set from the values alone (no tuning split) said in words."""
    pairs = sorted({f"{e.tuned_on.get('split')} / {e.evaluation['split']}" for e in entries
                    if e.tuned_on.get("split") is not None})
    untuned = [e for e in entries if e.tuned_on.get("split") is None]
    if not untuned:
        return ", ".join(pairs)
    judged = ", ".join(sorted({e.evaluation["split"] for e in untuned}))
    if not pairs:
        return f"no tuning split (the rules are set from the values alone) / {judged}"
    models = wording.short_list([e.model for e in untuned], 3)
    return f"{', '.join(pairs)}; {models}: set from the values alone, no tuning split / {judged}"


def _settings(values, kind, calibration_method, splits, currency, volume, period) -> str:
    items = []
    if values.use_case is not None:
        values = values.use_case
        items += [
            ("A correct answer earns", wording.money(values.v_correct, currency)),
            ("A hand-off to a person earns", wording.money(values.v_abstain, currency)),
            ("A wrong answer earns", wording.money(values.v_wrong, currency)),
            (f"{wording.OMEGA_LABEL} (mistake cost ÷ reward)", wording.omega(values.omega)),
        ]
    else:
        items.append(("Values", f"a per-class value matrix over {len(values.classes)} classes (in the policy JSON)"))
    items += [
        ("Decision rule", wording.policy_label(kind)),
        ("Recalibration before the rule", calibration_method),
        ("Tuned on / evaluated on", splits),
    ]
    if volume:
        items.append(("Expected items", f"{wording.significant(volume)} per {period}"))
    return _table(["Setting", "Value"], items)


def html_report(
    models: Mapping,
    values,
    *,
    kind: str = "recommended",
    calibration_method: str = "none",
    tune_split: str | None = None,
    eval_split: str | None = None,
    currency: str = "",
    volume: float | None = None,
    period: str = "month",
    title: str = "Which model to deploy",
    generated_at: str | None = None,
    recommend_kinds=None,
    **constraints,
) -> str:
    """The whole report as one HTML string (write it with ``encoding="utf-8"``).

    Parameters
    ----------
    models : dict of name -> ModelRun
        The loaded runs (:func:`~valuecore.load_runs`).
    values : UseCase or ValueMatrix
    kind, calibration_method, tune_split, eval_split
        As :func:`~valuecore.build_policy_document`.
    currency : str
    volume : float, optional
        Expected items per ``period``, for the value per period.
    period : str
    title : str
    generated_at : str, optional
        Timestamp shown in the report (default: now, UTC).
    recommend_kinds : iterable of str, optional
        The rules the recommendation weighs (default: every rule the values allow).
    **constraints
        As :func:`~valuecore.build_policy_document` (e.g. ``assisted`` for
        ``two_tier``, ``shortlist_values`` for ``shortlist``). ``segments``:
        ``(document, fits)`` of :func:`~valuecore.policy_json.segment_document`
        adds a section on the thresholds per segment, and the policy JSON shown is
        that document.

    Returns
    -------
    str
        A complete HTML document with sections ``REPORT_SECTIONS`` (each an
        element id), charts as inline SVG.

    Raises
    ------
    ValueError
        As ``build_policy_document`` (in plain words), or when
        vl-convert-python is missing.
    """
    from ._stats.calibration_metrics import calibration_summary, reliability_diagram
    from ._engine.curves import threshold_curve
    from ._pipeline.build import build_policy_document
    from ._engine.sorting import presort
    from ._decide.verdict import verdict as judge
    from ._engine.voc import voc_curve

    from ._pipeline.pipeline import Pipeline
    from ._decide.recommend import recommend, recommended_document
    from ._report_reviewers import reviewers_section
    from ._report_segments import segments_section

    reviewers = constraints.pop("reviewers", None)  # valuecore.constraints.Reviewers: a section of their own
    segments = constraints.pop("segments", None)  # (document, fits) of thresholds per segment: a section too
    document, notes = build_policy_document(
        models, values, kind=kind, calibration_method=calibration_method, tune_split=tune_split,
        eval_split=eval_split, with_interval=True, **constraints,
    )
    pipeline = Pipeline(models, tune_split, eval_split, calibration_method)
    weighed = {k: v for k, v in constraints.items() if k != "monitoring"}
    recommended = recommend(pipeline, values, kinds=recommend_kinds, **weighed)
    reason = wording.recommendation_reason(recommended, currency)
    # The verdict compares the models under the chosen rule; the policy JSON names the recommendation.
    judged = judge({e.model: (e.policy, models[e.model].splits[e.evaluation["split"]]) for e in document.entries},
                   values)
    document, refits = recommended_document(pipeline, document, recommended, values, reason, **weighed)
    notes = [*notes, *map(wording.refitted_note, refits)]
    entries = list(document.entries)
    names = [e.model for e in entries]
    evaluated, tuning = {}, {}
    for entry in entries:
        run = models[entry.model]
        split = entry.evaluation["split"]
        evaluated[entry.model] = entry.policy.calibrate(run.splits[split])
        # A rule fitted on no data (ω/(1+ω), no hand-offs) is shown on the pipeline's tuning split too, as the
        # dashboard and the command line show it, so that its threshold reads the same there.
        tuned_on = entry.tuned_on.get("split") or pipeline.plan(entry.model).tune_split
        if tuned_on is not None and tuned_on in run.splits and run.splits[tuned_on].has_labels:
            tuning[entry.model] = entry.policy.calibrate(run.splits[tuned_on])
    verdict = judged
    # Thresholds read with the digits that tell their decision apart on the items shown (exact: title, JSON).
    shown = {model: np.concatenate([run.confidence for run in (evaluated[model], tuning.get(model)) if run is not None])
             for model in names}
    recommendation_html = _recommendation_html(recommended, reason, currency, shown.get(recommended.model))

    # -- the verdict
    sentences = wording.verdict_sentences(verdict, currency, period=period, volume=volume,
                                          confidences=shown.get(verdict.best))
    verdict_html = "".join(f"<p>{_e(s)}</p>" for s in sentences)
    if verdict.standings:
        rows = []
        for s in verdict.standings:
            against = ("best on these items" if s.basis == "best" else
                       "cannot be told apart" if s.contender else "clearly behind")
            likely = (f"{wording.amount(s.low, currency)} to {wording.amount(s.high, currency)}"
                      if math.isfinite(s.low) and math.isfinite(s.high) else "too few items")
            rows.append([s.model, wording.money(s.per_item, currency), likely, wording.percent(s.coverage), against])
        rows.append(["no model (hand everything over)", wording.money(verdict.baseline_per_item, currency), "",
                     wording.percent(0.0), "baseline"])
        verdict_html += _table(["Model", "Value per item", wording.INTERVAL_HEADER, "Acted on", "Against the best"],
                               rows, numeric=(1, 3))

    # -- the value table
    value_rows = []
    for entry in entries:
        ev = entry.evaluation or {}
        ci = ev.get("ci95")
        rule = wording.rule_phrase(entry.policy, shown[entry.model])
        exact = wording.threshold(entry.policy.threshold) if entry.policy.threshold is not None else None
        rule = (rule, f"exact threshold {exact}, as in the policy JSON") if exact and exact not in rule else rule
        value_rows.append([
            entry.model, rule, wording.money(ev.get("value_per_item"), currency),
            wording.projected(ev.get("value_total"), currency), wording.percent(ev.get("coverage")),
            wording.percent(ev.get("selective_accuracy")),
            f"{wording.amount(ci[0], currency)} to {wording.amount(ci[1], currency)}" if ci else "not available",
        ])
    value_html = _table(
        ["Model", "Rule", "Value per item", "Total value", "Acted on", "Right when acting", wording.INTERVAL_HEADER],
        value_rows, numeric=(2, 3, 4, 5),
    )
    value_html += "".join(
        f"<p>{_e(entry.model)}: {_e(wording.evaluation_basis(entry.evaluation, values, currency))}</p>"
        for entry in entries if (entry.evaluation or {}).get("ci95")
    )
    value_html += "".join(  # a language model's own "I don't know", told from the threshold's hand-offs
        f"<p>{_e(entry.model)}: {_e(wording.handoffs_by_whom(entry.evaluation))}</p>"
        for entry in entries if "n_abstain_by_model" in (entry.evaluation or {})
    )
    value_html += "".join(
        f"<p>{_e(entry.model)}: {_e(wording.shortlist_tiers(entry.evaluation['shortlist']))}</p>"
        for entry in entries if (entry.evaluation or {}).get("shortlist")
    )
    if notes:
        value_html += "".join(f'<p class="muted">{_e(n)}</p>' for n in notes)

    # -- charts
    omega = math.nan if values.use_case is None else values.use_case.omega
    high = max(10.0, 2 * omega) if math.isfinite(omega) else 10.0
    omegas = np.linspace(0.0, high, 161)
    voc_rows, modes = [], set()
    for model in names:
        try:
            run = presort(evaluated[model])
            entry = document.entry(model)
            if model in tuning and entry.tuned_on.get("split") != entry.evaluation["split"]:
                curve, mode = voc_curve(run, "tuned", tune_run=presort(tuning[model])), "tuned"
            else:
                curve, mode = voc_curve(run, "oracle"), "oracle"
        except ValueError:
            continue
        modes.add(mode)
        voc_rows += _records(curve.to_frame(omegas, model)[["model", "omega", "value"]])
    mode_words = ("thresholds tuned on the tuning split for every ω" if modes == {"tuned"} else
                  "thresholds tuned on the evaluated items themselves: an upper bound" if modes == {"oracle"} else
                  "tuned on the tuning split where there is one, else on the evaluated items (an upper bound)")
    threshold_rows, marks = [], []
    for entry in entries:
        model = entry.model
        if not evaluated[model].has_labels:
            continue
        frame = threshold_curve(presort(evaluated[model]), values).to_frame(max_points=300)
        frame = frame[frame["threshold"].notna()]
        threshold_rows += _records(frame.assign(model=model)[["model", "threshold", "value_per_item", "coverage"]])
        t = entry.policy.threshold
        if t is not None and entry.evaluation.get("value_per_item") is not None:
            marker = "calibrated" if entry.policy.kind == "calibrated_threshold" else "tuned"
            marks.append({"model": model, "marker": marker, "threshold": t,
                          "value_per_item": entry.evaluation["value_per_item"]})
    calibration_rows, reliability_rows = [], []
    entry_of = {entry.model: entry for entry in entries}
    for model in names:
        predictions = evaluated[model]
        if not predictions.has_labels:
            calibration_rows.append([model, "–", "–", "needs labels"])
            continue
        summary = calibration_summary(predictions)
        gap = summary["ece_uniform"]
        reading = ("confidence matches how often it is right" if gap < 0.02 else
                   f"confidence is off by {wording.percent(gap)} on average")
        calibration_rows.append([model, wording.percent(gap), wording.number(summary["brier"]), reading])
        # As the app draws it: the raw confidence, and the recalibrated one when the policy recalibrates.
        stages = {"before": models[model].splits[document.entry(model).evaluation["split"]]}
        if entry_of[model].policy.calibration.get("method", "none") != "none":
            stages["after"] = predictions
        for stage, shown_run in stages.items():
            diagram = reliability_diagram(shown_run, 10).dropna(subset=["accuracy"])
            reliability_rows += _records(diagram.assign(model=model, stage=stage))

    voc_html = (f"<figure>{_svg(_voc_spec(voc_rows, names, omega, mode_words))}</figure>" if voc_rows else
                '<p class="muted">No VOC curve: the evaluated items have no labels.</p>')
    voc_html += ('<p class="muted">Each line: the value per item of a model for every mistake cost ω, '
                 "on a scale where 0 is handing everything over and 1 a perfect model. The vertical line is "
                 "your ω. Where a line drops below 0, the model is worth less than no model.</p>")
    threshold_html = (f"<figure>{_svg(_threshold_spec(threshold_rows, names, currency, marks))}</figure>"
                      if threshold_rows else '<p class="muted">Needs labelled evaluated items.</p>')
    calibration_html = _table(["Model", "Average gap (ECE)", "Brier score", "In words"], calibration_rows,
                              numeric=(1, 2))
    if reliability_rows:
        calibration_html += f"<figure>{_svg(_reliability_spec(reliability_rows, names))}</figure>"

    policy_html = ('<p class="muted">The policy a serving system applies (schema in docs/policy-json.md).</p>'
                   f"<pre>{_e((document if segments is None else segments[0]).to_json())}</pre>")
    splits = _splits_text(entries)
    settings_html = _settings(values, kind, calibration_method, splits, currency, volume, period)
    when = generated_at or _datetime.datetime.now(_datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sections = {
        "recommendation": ("The recommendation", recommendation_html),
        "settings": ("Settings", settings_html),
        "verdict": (f"Every model with {wording.rule_name(kind)}", verdict_html),
        "value": ("Value of each model", value_html),
        **reviewers_section(reviewers, models, document, values, currency, svg=_svg, voc_spec=_voc_spec),
        "voc": ("Value for every mistake cost", voc_html),
        "threshold": ("Value against the threshold", threshold_html),
        **segments_section(segments, models, currency, svg=_svg, table=_table),
        "calibration": ("Calibration at a glance", calibration_html),
        "policy": ("The policy JSON", policy_html),
    }
    body = "".join(f'<section id="{key}"><h2>{_e(heading)}</h2>{content}</section>'
                   for key, (heading, content) in sections.items())
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{_e(title)}</h1><p class=\"muted\">Generated {_e(when)} by valuecore {_e(_version())}. "
        "Values are measured on the evaluated items; ranges are 95% intervals for new items like them.</p>"
        f"{body}</body></html>\n"
    )


def _recommendation_html(recommended, reason: str, currency: str, confidences=None) -> str:
    """The headline, the reason, and every candidate weighed: the rows of the first page's table."""
    headline = wording.recommendation_headline(recommended, confidences)
    out = f'<p class="headline">{_e(headline)}</p><p>{_e(reason)}</p>'
    if not recommended.candidates:
        return out
    return out + _table(list(wording.standings_columns(recommended)), wording.standings_rows(recommended, currency),
                        numeric=(2, 3, 4))


def _version() -> str:
    from . import __version__

    return __version__
