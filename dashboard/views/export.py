"""The Export page's view model: the policy JSON of the selection, and what importing a saved one says.

:func:`build` gives what the page shows for the rule in force (:class:`ExportPage`);
:func:`restore` reads a saved policy and says what it would put in force
(:class:`RestoreStatus`, the settings that change); :func:`stored` gives the
"stored policies" part shown after an import (:class:`StoredPolicies`). Nothing
here draws or touches the session: the page lays out, ``dashboard.state`` stores.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields

import pandas as pd

import valuecore as vc

from ..home import page_recommendation, raw_confidence_note, segment_recommendation
from ..safetext import md_text
from ..settings import Settings, document_with_settings, settings_from_document
from ..tables import styled
from . import INTERVAL_HEADER, POLICY_LABELS, interval_text, shown_confidences, split_text
from . import rule_options as page_rule_options

__all__ = ["ExportPage", "RestoreStatus", "StoredPolicies", "applied_frame", "build", "restore", "rule_label",
           "rule_options", "stored", "summary_frame", "summary_table"]

# The value per item reads in money in every cell (summary_formats), so its header names no currency.
VALUE_PER_ITEM = "Value per item"
# The share of items acted on, named as the Value page and Values per class name it.
ACTED_ON = "Acted on"
# The threshold(s) under the Value page's header; the interval in one column under its one name ("95% low" and
# "95% high" pushed "Acted on" behind a sideways scroll at 800 px, a laptop with the sidebar open).
THRESHOLD = "Threshold"
SUMMARY_COLUMNS = ("Model", THRESHOLD, VALUE_PER_ITEM, INTERVAL_HEADER, ACTED_ON)
# The rest are one click away, in "All columns" (the name every page gives its details): the shown columns then
# the rest, so the details hold every column. The table shown stays five columns, to fit 800 px (a laptop with
# the sidebar open); a table in a closed expander is not drawn until opened.
DETAILS_COLUMNS = (*SUMMARY_COLUMNS, "Policy", "Calibration", "Tuned on", "Evaluated on", "Estimated")
PER_CLASS = "per class"  # as on the Value page, the table below says them; "one per class (table below)": 175 px


def _threshold(value, confidences=None) -> str:
    """As on every page: the digits that tell the decision apart on the data shown (``confidences``), else
    the exact threshold (a stored policy on other runs); the exact one is in the JSON below."""
    return "never (always hand off)" if value is None else vc.wording.threshold_on_data(float(value), confidences)


def thresholds_text(policy: dict, confidences=None, segments: dict | None = None) -> str:
    """A stored policy's threshold(s) as text: one number, ``class: number`` per class, ``segment: number`` per
    segment (``segments``: the entry's thresholds per segment), or words."""
    if segments is not None and "class_thresholds" in segments:
        return "; ".join(f"{s}: {vc.wording.segment_rule_phrase(None, per_class, confidences)}"
                         for s, per_class in segments["class_thresholds"].items())
    if segments is not None:
        return ", ".join(f"{s}: {_threshold(t, confidences)}" for s, t in segments["thresholds"].items())
    if policy.get("class_thresholds") is not None:
        return ", ".join(f"{c}: {_threshold(t, confidences)}" for c, t in policy["class_thresholds"].items())
    if policy["kind"] == "accept_all":
        return "act on every item"
    if policy["kind"] == "expected_value":
        return "expected-value rule"
    return "always hand off" if policy.get("threshold") is None else _threshold(policy["threshold"], confidences)


def summary_formats(selection) -> dict:
    """How the summary's numbers read (column -> formatter), as on every page: the value per item in money, its
    interval at three significant digits (``wording.amount``, :func:`summary_table`), the share acted on in percent.
    The stored policies' tables (an import) read the same way."""
    return {VALUE_PER_ITEM: selection.money, ACTED_ON: vc.wording.percent}


def summary_table(summary: pd.DataFrame, selection):
    """A :func:`summary_frame` as the page shows it: the interval in one cell ("$0.867 to $0.979", as the Value
    page writes it), the numbers formatted (:func:`summary_formats`)."""
    frame = summary.assign(**{INTERVAL_HEADER: [interval_text(low, high, selection.amount) for low, high in
                                                zip(summary["ci95_low"], summary["ci95_high"])]})
    return styled(frame, summary_formats(selection))


# The stored policies' table (an import): what they are and where they were made.
STORED_COLUMNS = ("Model", THRESHOLD, VALUE_PER_ITEM, ACTED_ON, "Tuned on", "Evaluated on")


def summary_frame(document: dict, confidences: dict | None = None) -> pd.DataFrame:
    """One row per model entry of a policy JSON (as a dict): its rule, thresholds and what it earned.

    Per-class thresholds (ten numbers do not fit a cell) are in :func:`class_thresholds_frame`.
    ``confidences``: model -> its confidences on the data shown (``views.shown_confidences``), so that a
    threshold reads as on every other page; without them (a stored policy on other runs) the exact one.
    """
    confidences = confidences or {}
    rows = []
    for entry in document["models"]:
        evaluation = entry.get("evaluation") or {}
        ci = evaluation.get("ci95") or [None, None]
        per_class = entry["policy"].get("class_thresholds") is not None
        rows.append({
            "Model": entry["model"],
            "Policy": (POLICY_LABELS.get(vc.recommendation.SEGMENT_RULE) + f" ({entry['segments']['column']})"
                       if entry.get("segments") else POLICY_LABELS.get(entry["policy"]["kind"],
                                                                        entry["policy"]["kind"])),
            THRESHOLD: PER_CLASS if per_class else thresholds_text(entry["policy"],
                                                                        confidences.get(entry["model"]),
                                                                        entry.get("segments")),
            "Calibration": vc.calibration.describe_calibration(entry["policy"]["calibration"]),
            "Tuned on": entry["tuned_on"]["split"] or "nothing (from the values)",
            "Evaluated on": evaluation.get("split"),
            VALUE_PER_ITEM: evaluation.get("value_per_item"),
            "ci95_low": ci[0],  # the JSON's own name: summary_table writes them as one "95% interval"
            "ci95_high": ci[1],
            ACTED_ON: evaluation.get("coverage"),
            "Estimated": bool(evaluation.get("estimated", False)),
        })
    return pd.DataFrame(rows)


def class_thresholds_frame(document: dict, confidences: dict | None = None) -> pd.DataFrame | None:
    """The per-class thresholds of a policy JSON: one row per predicted class, one column per model that has
    them (None when no model has); a class a model has no threshold for reads "no threshold"."""
    confidences = confidences or {}
    entries = [e for e in document["models"] if e["policy"].get("class_thresholds") is not None]
    if not entries:
        return None
    classes = list(dict.fromkeys(c for e in entries for c in e["policy"]["class_thresholds"]))
    frame = pd.DataFrame({"Predicted class": [str(c) for c in classes]})
    for entry in entries:
        thresholds = entry["policy"]["class_thresholds"]
        frame[entry["model"]] = [_threshold(thresholds[c], confidences.get(entry["model"])) if c in thresholds
                                 else "no threshold" for c in classes]
    return frame


def applied_frame(applied: list) -> pd.DataFrame:
    """What stored policies are worth on the loaded runs, applied as stored (``vc.apply_policy_document``)."""
    rows = []
    for item in applied:
        evaluation = item.evaluation or {}
        rows.append({
            "Model": item.model,
            "Same run file": {True: "yes", False: "no (other SHA-256)", None: "unknown"}[item.same_run],
            "Split": item.split,
            VALUE_PER_ITEM: evaluation.get("value_per_item"),
            ACTED_ON: evaluation.get("coverage"),
            "Note": item.note,
        })
    return pd.DataFrame(rows)


# ----------------------------------------------------------------- the page
@dataclass(frozen=True)
class ExportPage:
    """What the Export page shows for one decision rule.

    ``document`` is the policy JSON as a dict (None when no policy could be built: ``error`` says why),
    ``text`` the same JSON as downloaded; ``notes`` are markdown-safe; ``schema_error`` is None when the
    text validates against the policy schema.
    """

    values_caption: str
    error: str | None = None
    notes: tuple = ()
    headline: str = ""
    document: dict | None = None
    text: str = ""
    summary: pd.DataFrame | None = None
    summary_columns: tuple = ()
    details_columns: tuple = DETAILS_COLUMNS
    class_thresholds: pd.DataFrame | None = None
    schema_error: str | None = None
    raw_confidence_note: str = ""  # thresholds per segment ignore the sidebar's recalibration ("" when not)

    @property
    def schema_version(self):
        return None if self.document is None else self.document["schema_version"]


def values_caption(selection) -> str:
    values = selection.values.use_case
    what = ("the per-class value matrix" if values is None
            else f"correct {selection.money(values.v_correct)}, hand-off {selection.money(values.v_abstain)}, "
                 f"wrong {selection.money(values.v_wrong)}")
    return (f"Values: {what}. Recalibration: {selection.calibration}. Tuned on {split_text(selection.tune_split)}, "
            f"evaluated on {split_text(selection.eval_split)}.")


def rule_options(ws, models, values, segments=None) -> tuple[list[str], list[str]]:
    """The Export page's decision rules: every page's (``views.rule_options``), and with a segment column set
    (``segments``) thresholds per segment for every model too."""
    kinds, notes = page_rule_options(ws, models, values)
    return ([*kinds, vc.recommendation.SEGMENT_RULE] if segments is not None else kinds), notes


def rule_label(kind: str, segments=None) -> str:
    """A rule as the Export page's menu offers it; thresholds per segment name their column."""
    label = POLICY_LABELS.get(kind, kind)
    if kind == vc.recommendation.SEGMENT_RULE and segments is not None:
        return f"{label} ({segments.column})"
    return label


def _segment_policies(workspace, models, values, segments):
    """(document, notes, recommendation): every model's thresholds per segment, as
    ``report --segment COLUMN --policy segment_thresholds`` writes them; the notes say which model gets none."""
    recommendation, rules = segment_recommendation(workspace, models, values, segments, only_segments=True)
    entries = [rules[m].entry for m in models if m in rules]
    if not entries:
        reasons = "; ".join(recommendation.skipped) or "no model was given"
        raise ValueError(f"no model gets thresholds per segment ({reasons})")
    # an entry's notes: the rule in words (the JSON holds it), then its caveats, the CLI's notes
    caveats = [n for e in entries for n in e.notes if n != vc.policy_json.SEGMENT_NOTE]
    notes = [f"Not weighed: {n}." for n in recommendation.skipped]
    return vc.policy_json.PolicyDocument(values, tuple(entries)), [*notes, *caveats], recommendation


def build(selection, workspace, kind: str, settings: Settings, segments=None) -> ExportPage:
    """The policy JSON of the selected models under rule ``kind``, led by the one recommendation.

    ``settings`` are recorded in the JSON (``dashboard_settings``) so that an import restores them.
    ``segments`` (``dashboard.home.segment_choice``): the segment column in force; the recommendation then
    weighs thresholds per segment too, and when it names them its model's entry holds them (schema version 3,
    what ``report --segment COLUMN --json`` writes). With ``segments``, ``kind`` may be thresholds per segment
    (``SEGMENT_RULE``): every model's entry holds them, what ``report --segment COLUMN --policy
    segment_thresholds --json`` writes.
    """
    caption = values_caption(selection)
    models, values = list(selection.models), selection.values
    try:
        if kind == vc.recommendation.SEGMENT_RULE and segments is not None:
            document, notes, recommendation = _segment_policies(workspace, models, values, segments)
        else:
            document, notes = workspace.document(models, kind, values)
            # The one recommendation of the first page; its model's entry holds the recommended rule.
            recommendation = page_recommendation(workspace, models, values, segments)
        reason = vc.wording.recommendation_reason(recommendation, selection.currency)
        document, more = vc.recommended_document(workspace, document, recommendation, values, reason)
    except ValueError as error:
        return ExportPage(values_caption=caption, error=f"No policy could be built: {md_text(error)}",
                          raw_confidence_note=raw_confidence_note(selection, segments))
    data = document_with_settings(document, settings)
    text = json.dumps(data, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    try:
        vc.policy_json.validate_policy_document(json.loads(text))
        schema_error = None
    except ValueError as error:
        schema_error = f"The document does not match the policy schema: {md_text(error)}"
    shown = {model: shown_confidences(workspace, model) for model in models}
    headline = md_text(f"{vc.wording.recommendation_headline(recommendation, shown.get(recommendation.model))} "
                       f"{reason} The JSON's \"recommendation\" names it.")
    return ExportPage(
        values_caption=caption,
        # the pipeline's words quote model and split names; an entry refitted for the recommendation, in words
        notes=tuple(md_text(n) for n in [*notes, *map(vc.wording.refitted_note, more)]),
        headline=headline,
        document=data,
        text=text,
        # "Value per item ($)" over "$0.94": the cells say the currency (summary_formats), not the header.
        summary=summary_frame(data, shown),
        summary_columns=SUMMARY_COLUMNS,
        class_thresholds=class_thresholds_frame(data, shown),
        schema_error=schema_error,
        raw_confidence_note=raw_confidence_note(selection, segments),
    )


# ---------------------------------------------------------------- importing
@dataclass(frozen=True)
class RestoreStatus:
    """What an import of a saved policy said: ``level`` "error" or "success", a markdown-safe message,
    warnings (markdown-safe) and whether the loaded runs are the ones the policies were made from."""

    level: str
    message: str
    warnings: tuple = ()
    same_runs: bool = False

    @property
    def ok(self) -> bool:
        return self.level == "success"


@dataclass(frozen=True)
class Restored:
    """The outcome of :func:`restore`: the status to show, the settings to change, the document read."""

    status: RestoreStatus | None
    changes: dict = field(default_factory=dict)
    document: dict | None = None


def restore(text: str | bytes | None, source: str, current: Settings, runs: dict) -> Restored:
    """Parse, validate and check a saved policy against the loaded ``runs``; the settings it puts in force.

    ``source`` names where the text came from, in words ("pasted text", "file x.json"), markdown-safe.
    Empty text gives no status (the status shown before is cleared).
    """
    if text is None or (isinstance(text, str) and not text.strip()):
        return Restored(None)
    try:
        data = vc.policy_json.load_json_limited(text, "the policy file")
        document = vc.policy_json.PolicyDocument.from_dict(data)
        restored, notes = settings_from_document(data, current)
    except ValueError as error:  # LimitError and JSON errors are ValueErrors, in words
        return Restored(RestoreStatus("error", f"Nothing was restored from the {source}: {md_text(error)}."))
    try:
        warnings = vc.policy_json.check_against_runs(document, runs)
    except ValueError as error:
        return Restored(RestoreStatus(
            "error", f"Nothing was restored: the policy does not fit the loaded runs. {md_text(error)}."))
    changes = {f.name: getattr(restored, f.name) for f in fields(restored)
               if getattr(restored, f.name) != getattr(current, f.name)}
    same = all(e.model in runs and e.run_sha256 == runs[e.model].sha256 for e in document.entries)
    recommended = document.recommendation
    recommends = "" if recommended is None else (
        " The document recommends no model." if recommended["model"] is None else
        f" The document recommends {md_text(recommended['model'])} with "
        f"{vc.wording.rule_name(recommended['policy'])}.")
    values = document.values
    described = ("a value matrix for the classes " + md_text(", ".join(values.classes))
                 if values.use_case is None else f"correct {values.use_case.v_correct!r}, hand-off "
                 f"{values.use_case.v_abstain!r}, wrong {values.use_case.v_wrong!r}")
    n = len(document.entries)
    message = (f"Restored from the {source}: {described}; decision rule, recalibration, splits and models as "
               f"recorded ({n} model polic{'y' if n == 1 else 'ies'}).{recommends}")
    status = RestoreStatus("success", message, tuple(md_text(w) for w in warnings + notes), same)
    return Restored(status, changes, data)


@dataclass(frozen=True)
class StoredPolicies:
    """The policies a successful import read: their table, and (on other runs) what they are worth there."""

    summary: pd.DataFrame
    same_runs: bool
    applied: pd.DataFrame | None = None
    applied_error: str | None = None
    class_thresholds: pd.DataFrame | None = None


def stored(document: dict, status: RestoreStatus, runs: dict) -> StoredPolicies:
    """The stored policies as a table; on other run files, applied as stored to the loaded runs."""
    summary, per_class = summary_frame(document), class_thresholds_frame(document)
    if status.same_runs:
        return StoredPolicies(summary, True, class_thresholds=per_class)
    try:
        applied = vc.apply_policy_document(vc.policy_json.PolicyDocument.from_dict(document), runs)
    except ValueError as error:
        return StoredPolicies(summary, False, class_thresholds=per_class,
                              applied_error=f"The stored policies cannot be applied to the loaded runs: "
                                            f"{md_text(error)}.")
    return StoredPolicies(summary, False, applied=applied_frame(applied), class_thresholds=per_class)
