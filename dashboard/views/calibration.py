"""The "Calibration" page as data: :func:`options` says what can be examined, :func:`build` returns a
:class:`CalibrationPage`.

Reliability diagrams (before and after the recalibration examined), the
calibration metrics, then seed 003's Table 5: the value at ω = 0..10 of the
formula threshold ω/(1+ω), before and after recalibration, against the tuned
threshold. The recalibration examined is a setting of this page; raw
confidences are always shown next to it. No Streamlit here: the page lays out
what :func:`build` returned.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import pandas as pd

import valuecore as vc

from ..data import workspace
from ..datasets import aggregated_models, per_item_note
from ..safetext import md_text
from ..settings import CALIBRATION_METHODS
from . import shown_confidences, split_text

# The technical names stay in the headers (people search for them); the plain meaning is in the tooltip.
METRIC_HELP = {
    "ECE, equal width": "Expected calibration error: the average gap between the confidence the model states "
    "and how often it is right (bins of equal width). 0 = a 90%-confident answer is right 90% of the time.",
    "ECE, equal mass": "The same average gap, with bins holding equally many items.",
    "MCE": "Maximum calibration error: the largest gap in any bin.",
    "Brier": "Mean squared error of the predicted probabilities, all classes. Lower is better.",
    "Brier, top label": "Mean squared error of the top-label confidence only (what isotonic recalibration changes).",
    "NLL": "Negative log-likelihood: how surprised the model is by the true answers. Lower is better.",
}
METRIC_COLUMNS = ["Model", "Confidence", *METRIC_HELP, "Fitted"]
METRICS_SHOWN = ["Model", "Confidence", "ECE, equal width", "Brier", "NLL"]

METHOD_LABELS = {
    "none": "None (raw confidences)",
    "temperature": "Temperature scaling",
    "isotonic": "Isotonic regression",
}
STRATEGY_LABELS = {"uniform": "Equal width", "quantile": "Equal mass"}

TABLE5_LABELS = {
    "model": "Model",
    "k": "Penalty ω",
    "threshold": "ω/(1+ω)",
    "value_calibrated_before": "Value, ω/(1+ω) raw",
    "value_calibrated_after": "Value, ω/(1+ω) recalibrated",
    "value_tuned_before": "Value, tuned raw",
    "value_tuned_after": "Value, tuned recalibrated",
    "threshold_tuned_before": "Tuned threshold, raw",
    "threshold_tuned_after": "Tuned threshold, recalibrated",
    "coverage_calibrated_before": "Acted on, ω/(1+ω) raw",
    "coverage_calibrated_after": "Acted on, ω/(1+ω) recalibrated",
}
# The three values the "What it means" sentence quotes, beside the model and ω (552 px: at 800 px with the sidebar
# open, 466 px for the table, it scrolls sideways a little; the sentence quoting numbers the table hid read wrong).
# The "All columns" details give the rest.
TABLE5_SHOWN = ["Model", "Penalty ω", "Value, ω/(1+ω) raw", "Value, ω/(1+ω) recalibrated", "Value, tuned raw"]
TABLE5_DETAILS = "All columns (the recalibrated tuned value, the thresholds, the share acted on)"
# Plain words for each column, in its tooltip (the header keeps the formula people search for).
TABLE5_HELP = {
    "Penalty ω": "How many correct answers one wrong answer wipes out: (hand-off − wrong) / (correct − hand-off).",
    "ω/(1+ω)": "The threshold that is best when confidences are calibrated: act when confidence ≥ ω/(1+ω).",
    "Value, ω/(1+ω) raw": "Value per item (correct 1, hand-off 0, wrong −ω) with the formula threshold on the raw "
    "confidences.",
    "Value, ω/(1+ω) recalibrated": "The same after recalibration.",
    "Value, tuned raw": "Value per item with a threshold tuned on the tuning split, raw confidences.",
    "Value, tuned recalibrated": "The same after recalibration.",
}


# ---------------------------------------------------------------- the chart's frame
def calibration_value_long(table: pd.DataFrame, *, recalibrated: bool = True) -> pd.DataFrame:
    """Seed 003 Table 5 (``valuecore.monitoring.calibration_value_tables``) in long form.

    Parameters
    ----------
    table : DataFrame
        One row per (model, k) with ``threshold``, ``value_calibrated_before``,
        ``value_calibrated_after``, ``value_tuned_before``,
        ``value_tuned_after``, ``threshold_tuned_before`` and
        ``threshold_tuned_after``.
    recalibrated : bool
        Include the "after recalibration" rules (False when no recalibration
        is chosen: they would repeat the raw ones).

    Returns
    -------
    DataFrame
        Columns :data:`vc.chartspecs.CALIBRATION_VALUE_COLUMNS`.
    """
    rules = [
        ("calibrated threshold, raw", "value_calibrated_before", "threshold"),
        ("tuned threshold, raw", "value_tuned_before", "threshold_tuned_before"),
    ]
    if recalibrated:
        rules[1:1] = [("calibrated threshold, recalibrated", "value_calibrated_after", "threshold")]
        rules.append(("tuned threshold, recalibrated", "value_tuned_after", "threshold_tuned_after"))
    parts = []
    for rule, value, threshold in rules:
        part = table.loc[:, ["model", "k"]].copy()
        part["rule"] = rule
        part["value"] = table[value].astype(float)
        part["threshold"] = table[threshold].astype(float)
        parts.append(part)
    if not parts or table.empty:
        return pd.DataFrame(columns=list(vc.chartspecs.CALIBRATION_VALUE_COLUMNS))
    return pd.concat(parts, ignore_index=True).loc[:, list(vc.chartspecs.CALIBRATION_VALUE_COLUMNS)]


@dataclass(frozen=True)
class Options:
    """What the page can examine before any widget: the models, the recalibrations, why some are left out."""

    labelled: tuple  # models with a labelled evaluated split
    stop: str | None = None  # why nothing can be examined (a warning or an info)
    stop_severity: str = "info"
    left_out: str | None = None  # models without labels on the evaluated split
    methods: tuple = ()  # recalibrations that apply
    sidebar_method: str = "none"  # the one every other page uses
    first_examined: int = 0  # the index of the recalibration shown before the user picks one
    aggregated_note: str | None = None  # why temperature scaling is not offered


def options(selection) -> Options:
    models = list(selection.models)
    eval_split = selection.eval_split
    if eval_split is None:
        return Options((), stop="The selected models have no split to evaluate on. Choose one under **Evaluate on** "
                                "in the sidebar.")
    raw = workspace(selection, "none")
    labelled = [m for m in models if (p := raw.predictions(m, eval_split)) is not None and p.has_labels]
    if not labelled:
        return Options((), stop_severity="warning", stop=(
            f"The evaluated split **{md_text(eval_split)}** has no labels (no `y_true`), so calibration cannot be "
            "checked on it: it compares confidence with how often the model is right. Choose a labelled split under "
            "**Evaluate on** in the sidebar (for the samples: `test`)."))
    unlabelled = [m for m in models if m not in labelled]
    sidebar_method = selection.calibration if selection.calibration in CALIBRATION_METHODS else "none"
    # Temperature scaling needs each item's own probabilities; an aggregate holds group means.
    aggregated = aggregated_models(selection.report, labelled)
    methods = tuple(m for m in CALIBRATION_METHODS if not (aggregated and m == "temperature"))
    first = sidebar_method if sidebar_method != "none" else methods[1]
    return Options(
        labelled=tuple(labelled),
        left_out=(f"Left out (no labelled split {md_text(repr(eval_split))}): {md_text(', '.join(unlabelled))}."
                  if unlabelled else None),
        methods=methods,
        sidebar_method=sidebar_method,
        first_examined=methods.index(first) if first in methods else 0,
        aggregated_note=per_item_note(aggregated, "temperature scaling") if aggregated else None,
    )


def method_note(method: str, sidebar_method: str) -> str:
    """Whether the examined recalibration is the one the other pages use."""
    if method == sidebar_method:
        return f"The other pages use the same recalibration ({METHOD_LABELS[method].lower()})."
    return ("Examined on this page only: the other pages and the export use "
            f"**{METHOD_LABELS[sidebar_method].lower()}** (the sidebar's 'Recalibrate before thresholding').")


def _number(value) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def fitted_text(params: dict | None) -> str:
    """The fitted recalibration in words: 'T = 1.5 (over-confident: confidences are softened)'."""
    if not params:
        return "not fitted"
    if params.get("method") == "temperature":
        t = params["temperature"]
        mood = "over-confident: confidences are softened" if t > 1 else "under-confident: confidences are sharpened"
        return f"T = {t:.3g} ({mood})"
    if params.get("method") == "isotonic":
        return f"monotone map with {len(params.get('x', []))} breakpoints"
    return params.get("method", "")


# Seed 003's Table 5 per (run content, model, splits, method): a few rows each, kept for the session's reruns.
_TABLE5: OrderedDict = OrderedDict()
_TABLE5_LOCK = threading.Lock()
_TABLE5_ENTRIES = 256


def table5(ws, model: str, method: str) -> pd.DataFrame:
    """Seed 003 Table 5 for one model (cached per file content, splits and method); ValueError in words."""
    tune, evaluated = ws.tuning_split_for(model), ws.eval_split
    key = (ws.run_key(model), model, tune, evaluated, method)
    with _TABLE5_LOCK:
        if key in _TABLE5:
            _TABLE5.move_to_end(key)
            return _TABLE5[key]
    table = vc.monitoring.calibration_value_table(ws.predictions(model, tune), ws.predictions(model, evaluated),
                                                  method=method, ks=vc.DEFAULT_KS)
    table.insert(0, "model", model)
    with _TABLE5_LOCK:
        _TABLE5[key] = table
        while len(_TABLE5) > _TABLE5_ENTRIES:
            _TABLE5.popitem(last=False)
    return table


@dataclass(frozen=True)
class CalibrationPage:
    method: str
    problems: tuple  # warnings: recalibrations that could not be fitted, or fitted on the evaluated split
    reliability_text: str
    reliability: pd.DataFrame  # model, stage, and the bins of each diagram
    metrics: pd.DataFrame  # one row per (model, raw or recalibrated)
    metrics_caption: str
    value_notes: tuple = ()  # (severity, text) above the value section
    value_long: pd.DataFrame | None = None  # calibration_value_long: the chart's frame
    meaning: str = ""
    table: pd.DataFrame | None = None  # Table 5 with readable headers
    table_caption: str = ""
    fitted: dict = field(default_factory=dict)  # model -> recalibrated predictions on the evaluated split (or None)


def build(selection, opts: Options, method: str, n_bins: int, strategy: str) -> CalibrationPage:
    """Everything below the controls, for the recalibration ``method`` with ``n_bins`` bins of ``strategy``."""
    eval_split = selection.eval_split
    raw, after = workspace(selection, "none"), workspace(selection, method)
    fitted, problems = {}, []
    for model in opts.labelled:
        if method != "none":
            _, error = after.calibrator(model)
            if error:
                hint = (" Isotonic regression works on the top-label confidence alone." if method == "temperature"
                        else "")
                problems.append(f"{md_text(error)}.{hint}")
                continue
            if after.tuning_split_for(model) == eval_split:
                problems.append(
                    f"**{md_text(model)}**: no labelled tuning split, so the recalibration is fitted on "
                    f"{md_text(repr(eval_split))} itself and judged there: its 'after' figures are optimistic."
                )
        fitted[model] = after.calibrated(model, eval_split) if method != "none" else None

    # Each split's diagnostics are computed once (both diagrams, the metrics) and cached.
    diagnostics = {}
    for model in opts.labelled:
        diagnostics[model, "before"] = raw.calibration_diagnostics(model, eval_split, n_bins)
        if fitted.get(model) is not None:
            diagnostics[model, "after"] = after.calibration_diagnostics(model, eval_split, n_bins)
    frames, rows = [], []
    for model in opts.labelled:
        for stage in ("before", "after"):
            if (model, stage) not in diagnostics:
                continue
            diagnosed = diagnostics[model, stage]
            table = diagnosed.reliability(strategy).copy()  # the cached frame stays as it is
            table.insert(0, "stage", stage)
            table.insert(0, "model", model)
            frames.append(table)
            summary = diagnosed.summary()
            rows.append({
                "Model": model,
                "Confidence": "raw" if stage == "before" else method,
                "ECE, equal width": _number(summary["ece_uniform"]),
                "ECE, equal mass": _number(summary["ece_quantile"]),
                "MCE": _number(summary["mce"]),
                "Brier": _number(summary["brier"]),
                "Brier, top label": _number(diagnosed.brier_top_label),
                "NLL": _number(summary["nll"]),
                "Fitted": "" if stage == "before" else fitted_text(after.calibration_dict(model)),
            })
    reliability_text = (
        f"Each point is a bin of answers on **{md_text(eval_split)}**: its mean confidence (across) against how "
        "often it was right (up), with a 95% interval; the bigger the point, the more items in the bin. On the "
        "dotted diagonal the model is calibrated; below it, over-confident."
    )
    metrics_caption = (
        f"On split {md_text(repr(eval_split))}, {n_bins} bins; lower is better everywhere. ECE: mean gap between "
        "confidence and accuracy over bins, weighted by items; MCE: the largest gap. Brier (all classes) and NLL use "
        "the full probability vector, so an isotonic recalibration, which only changes the top-label confidence, "
        "leaves them as they were: see 'Brier, top label'. NLL shows – for runs that only report the top label."
    )
    page = dict(
        method=method, problems=tuple(problems), reliability_text=reliability_text,
        reliability=pd.concat(frames, ignore_index=True), metrics=pd.DataFrame(rows, columns=METRIC_COLUMNS),
        metrics_caption=metrics_caption, fitted=fitted,
    )
    known = {"none": raw, method: after}
    sidebar = known[opts.sidebar_method] if opts.sidebar_method in known else workspace(selection, opts.sidebar_method)
    page.update(_value_section(raw, opts, method, fitted, eval_split, after, sidebar))
    return CalibrationPage(**page)


_ratio = vc.wording.number  # a dimensionless value per item, three decimals as on the Value page


def _thresholds_as_shown(table: pd.DataFrame, raw, after, formula) -> pd.DataFrame:
    """Table 5 with its thresholds as every page writes them: the digits that tell their decision apart on the
    model's confidences on the data shown, never the 16 digits of a recalibrated float (the exact ones are what
    the Export page writes). The tuned ones on the raw (``raw``) or recalibrated (``after``) confidences, the
    formula's ω/(1+ω) on those of the sidebar's recalibration (``formula``), as the Value page writes the
    calibrated threshold (four decimals wrote 0.9091 there beside the Value page's 0.909 and 0.90909)."""
    shown = table.copy()
    for column, ws in (("threshold", formula), ("threshold_tuned_before", raw), ("threshold_tuned_after", after)):
        if column in shown.columns:
            seen = {model: shown_confidences(ws, model) for model in shown["model"].unique()}
            shown[column] = [vc.wording.threshold_on_data(t, seen[model])
                             for model, t in zip(shown["model"], shown[column])]
    return shown


def _value_section(raw, opts: Options, method: str, fitted: dict, eval_split, after=None, formula=None) -> dict:
    """Seed 003's Table 5: the chart's frame, what it means, and the table (``formula``: the workspace of the
    sidebar's recalibration, whose confidences write the formula threshold; ``raw`` when not given)."""
    notes = []
    if method == "none":
        notes.append(("info", "Choose temperature scaling or isotonic regression above to see value before and "
                              "after recalibration."))
    tables = []
    for model in opts.labelled:
        if model not in fitted:
            continue
        try:
            tables.append(table5(raw, model, method))
        except ValueError as error:
            notes.append(("warning", f"**{md_text(model)}**: {md_text(error)}"))
    if not tables:
        if method != "none":
            notes.append(("info", f"No model could be recalibrated with {METHOD_LABELS[method].lower()}, so there "
                                  "is no before and after."))
        return {"value_notes": tuple(notes)}
    table = pd.concat(tables, ignore_index=True)
    recalibrated = method != "none"
    k_max = max(vc.DEFAULT_KS)
    top = table[table["k"] == k_max].set_index("model")
    if recalibrated:
        gains = (top["value_calibrated_after"] - top["value_calibrated_before"]).sort_values(ascending=False)
        best = gains.index[0]
        row = top.loc[best]
        meaning = (
            f"**What it means.** The formula threshold ω/(1+ω) is only right for calibrated confidences. "
            f"At a penalty ω = {k_max:g} (an error costs {k_max:g} correct answers), "
            f"{METHOD_LABELS[method].lower()} moves **{md_text(best)}** from {_ratio(row['value_calibrated_before'])} "
            f"to {_ratio(row['value_calibrated_after'])} per item with the formula, against "
            f"{_ratio(row['value_tuned_before'])} with a threshold tuned on {split_text(raw.tuning_split_for(best))}. "
            "Where the recalibrated dashed line meets the tuned solid one, the formula can be trusted instead of "
            "tuning; where it stays below, tune the threshold on data. Values are dimensionless (correct 1, "
            "hand-off 0, wrong −ω); 0 is what handing every item to a person earns."
        )
    else:
        meaning = (
            "**What it means.** With raw confidences, the formula threshold ω/(1+ω) falls behind the tuned "
            "threshold wherever the model is over-confident, most at large ω. Values are dimensionless "
            "(correct 1, hand-off 0, wrong −ω)."
        )
    columns = [c for c in TABLE5_LABELS if recalibrated or not c.endswith("_after")]
    return {
        "value_notes": tuple(notes),
        "value_long": calibration_value_long(table, recalibrated=recalibrated),
        "meaning": meaning,
        "table": _thresholds_as_shown(table[columns], raw, after or raw, formula or raw).rename(columns=TABLE5_LABELS),
        "table_caption": (
            f"Evaluated on {md_text(repr(eval_split))}; recalibration and tuned thresholds fitted on the tuning "
            f"split. A tuned threshold of {vc.wording.DASH} means always hand off. Accuracy and F1 do not change "
            "with temperature scaling."
        ),
    }
