"""The HTML report's section on thresholds per segment (``report --segment COLUMN --html``).

For each model: the cap sentence, a table of each segment's rule (its threshold, or its per-class thresholds),
hand-off rate, error rate and value per item on the tuning split (where the caps are held), the gaps between
the segments beside the caps on the tuning and the evaluated split, and the app's segment chart
(:func:`valuecore.chartspecs.segments_spec`) of the tuning split.
"""

from __future__ import annotations

import html
import math

__all__ = ["segments_section"]

_GAPS = (("handoff_gap", "Hand-off rate"), ("error_gap", "Error rate"), ("value_gap", "Value per item"))


def _gap(figures: dict, key: str) -> float:
    present = [f[key] for f in figures.values() if f.get(key) is not None and math.isfinite(f[key])]
    return max(present) - min(present) if len(present) >= 2 else math.nan


def _chart_numbers(evaluation) -> list[dict]:
    """The records :func:`valuecore.chartspecs.segments_spec` draws, from a ``SegmentEvaluation``."""
    return [{"segment": r.segment, "handoff_rate": r.handoff_rate, "error_rate": r.selective_risk,
             "error_bound": r.risk_upper_bound, "value_per_item": r.value_per_item, "low": r.interval.low,
             "high": r.interval.high} for r in evaluation.segments]


def segments_section(segments, models, currency: str = "", *, svg, table) -> dict:
    """``{"segments": (heading, html)}`` for the report, or ``{}`` without segments.

    ``segments``: ``(document, fits)`` as :func:`valuecore.policy_json.segment_document` returns them (the
    per-segment policy document and each model's ``SegmentFit``); ``svg`` and ``table`` are the report's chart
    renderer and table writer (so that the section looks like the report's own)."""
    if segments is None:
        return {}
    from . import chartspecs, wording

    document, fits = segments
    e = lambda text: html.escape(str(text), quote=True)  # noqa: E731
    parts = []
    column = None
    for entry in document.entries:
        fit = fits[entry.model]
        column = entry.segments["column"]
        tuned, judged = entry.tuned_on["split"], entry.evaluation["split"]
        run = models[entry.model]
        confidences = {}
        if tuned in run.segments:
            labels = [str(s) for s in run.segments[tuned]]
            confidence = run.splits[tuned].confidence
            for name in set(labels):
                confidences[name] = confidence[[label == name for label in labels]]
        rows = [list(row[:6]) for row in wording.segment_rows(fit.evaluation, currency, confidences)]
        parts.append(f"<h3>{e(entry.model)}</h3><p>{e(wording.segment_cap_sentence(fit, currency))}</p>")
        parts.append(f'<p class="muted">Each segment on the tuning split {e(repr(tuned))}, where the caps are '
                     "held.</p>")
        parts.append(table(list(wording.SEGMENT_COLUMNS[:6]), rows, numeric=(2, 3, 4, 5)))
        caps = fit.caps.as_dict()
        evaluated = entry.evaluation["segments"]
        renamed = {"error_gap": "selective_risk", "handoff_gap": "handoff_rate", "value_gap": "value_per_item"}
        gap_rows = []
        for key, title in _GAPS:
            show = (lambda x: wording.money(x, currency)) if key == "value_gap" else wording.percent
            cap = caps.get(key)
            gap_rows.append([title, "none" if cap is None else show(cap), show(getattr(fit.evaluation, key)),
                             show(_gap(evaluated, renamed[key]))])
        parts.append(table(["Gap between segments (largest minus smallest)", "Cap",
                            f"On the tuning split {tuned!r}", f"On the evaluated split {judged!r}"],
                           gap_rows, numeric=(1, 2, 3)))
        warnings = [w for w in map(wording.segment_warning, fit.evaluation.segments) if w]
        parts += [f'<p class="muted">{e(w)}</p>' for w in warnings]
        spec = chartspecs.segments_spec(_chart_numbers(fit.evaluation), currency=currency)
        title = spec["title"]  # the page's title and subtitle, and the model the report shows it for
        parts.append(f"<figure>{svg({**spec, 'title': {**title, 'subtitle': [title['subtitle'], entry.model]}})}"
                     "</figure>")
    return {"segments": (f"Thresholds per segment of the column {column!r}", "".join(parts))}
