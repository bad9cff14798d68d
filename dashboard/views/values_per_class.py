"""The "Values per class" page as data: :func:`build` returns a :class:`ValuesPerClassPage`.

The value matrix in force for one class set (rows the true class, columns the
predicted class then "hand off"), as an editable table and as colours; per
model, the value of one threshold, of per-class thresholds (tuned and
calibrated) and of the expected-value rule; and, for one model and rule, the
confusion matrix with a hand-off column and the value each cell brings. No
Streamlit here: the page lays out what :func:`build` returned.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import valuecore as vc

from ..safetext import md_text
from ..settings import values_changes
from ..tables import styled
from . import POLICY_LABELS, percent, short_list, shown_confidences, split_notes, split_text, threshold_text

TRUTH = "truth"  # the editor's row header
# The action column: the pages' word for what the policy JSON calls "abstain"; the heatmap wraps this label.
HAND_OFF = vc.chartspecs.HAND_OFF_LABEL
MATRIX_KINDS = ("threshold", "class_thresholds", "calibrated_class_thresholds", "expected_value")
SUMMARY_COLUMNS = {"model": "Model", "rule": "Rule", "value_total": "Total value",
                   "value_per_item": "Value per item", "coverage": "Acted on", "note": "Note"}
# Left out of the table shown (in its "All columns" details): with it the table was 536 px, past the 466 px a page
# has at 800 px wide with the sidebar open, and "Acted on" hid behind a sideways scroll.
SUMMARY_DETAILS_ONLY = ("Total value",)
BEST_STYLE = "font-weight: 600; background-color: rgba(0, 158, 115, 0.15)"


# ------------------------------------------------------------ the matrix as a table
def matrix_frame(matrix: vc.ValueMatrix) -> pd.DataFrame:
    """The value matrix as an editable table: rows true class, columns predicted classes then hand off."""
    columns = [f"→ {c}" for c in matrix.classes] + [HAND_OFF]
    frame = pd.DataFrame(matrix.values, index=[f"true {c}" for c in matrix.classes], columns=columns)
    # "truth" over "true 0", "true 1"...: with "true class" ten classes and "hand off" drew the editor 5 px wider
    # than the page at 1280 px (tests/e2e/test_e2e_new_user.py).
    frame.index.name = TRUTH
    return frame


# A class's column as narrow as its cells ("-4", "1"): at the default width ten classes and "hand off" drew the
# editor 797 px wide, and at 800 px (a laptop with the sidebar open: 466 px) "hand off" hid behind a sideways
# scroll. It is pinned beside the row names, so the one column unlike the others stays in view with any number of
# classes; the classes scroll under it when they do not fit.
CLASS_COLUMN_WIDTH = 62  # px: "→ 0" beside the editing icon


def editor_columns(columns) -> dict:
    """The value matrix editor's column settings: numbers as typed, no empty cell, "hand off" pinned."""
    import streamlit as st

    return {c: st.column_config.NumberColumn(c, format="%g", required=True, pinned=c == HAND_OFF or None,
                                             width=None if c == HAND_OFF else CLASS_COLUMN_WIDTH) for c in columns}


def frame_matrix(frame: pd.DataFrame, classes) -> vc.ValueMatrix:
    """Back from the edited table to a :class:`~valuecore.ValueMatrix` (ValueError in plain words)."""
    values = frame.to_numpy(dtype=float, na_value=np.nan)
    if np.isnan(values).any():
        rows, cols = np.nonzero(np.isnan(values))
        raise ValueError(f"the matrix has empty cells (row {frame.index[rows[0]]}, column {frame.columns[cols[0]]}); "
                         "give every cell a number")
    return vc.ValueMatrix(tuple(classes), values)


def edited_changes(edited: pd.DataFrame, shown: vc.ValueMatrix) -> tuple[dict | None, str | None]:
    """(the settings changes that put the edited table in force, or None when unchanged; why it cannot be used)."""
    try:
        matrix = frame_matrix(edited, shown.classes)
    except ValueError as error:
        return None, f"This matrix cannot be used yet: {md_text(error)}."
    if np.array_equal(matrix.values, shown.values):
        return None, None
    return values_changes(matrix), None


def binary_changes(classes, positive: str, *, tp: float, tn: float, fp: float, fn: float, abstain: float) -> dict:
    """The settings changes that put a TP/TN/FP/FN preset in force, in the classes' own order (ValueError in words)."""
    negative = next(c for c in classes if c != positive)
    preset = vc.ValueMatrix.binary(tp=tp, tn=tn, fp=fp, fn=fn, abstain=abstain, classes=(negative, positive))
    order = [preset.classes.index(c) for c in classes]
    return values_changes(vc.ValueMatrix(tuple(classes), preset.values[order][:, order + [2]]))


def matrix_cells(matrix: vc.ValueMatrix) -> pd.DataFrame:
    """Tidy (true, predicted, value) cells of the matrix, for the colour chart."""
    cells = matrix_frame(matrix).reset_index().melt(id_vars=TRUTH, var_name="predicted", value_name="value")
    return cells.rename(columns={TRUTH: "true"})


def confusion_frame(result: vc.PolicyResult) -> pd.DataFrame:
    """Tidy (true, predicted, count, value) cells of a result's confusion matrix, hand-off last."""
    classes = list(result.classes)
    predicted = classes + [HAND_OFF]
    rows = [{"true": true, "predicted": action, "count": float(result.confusion[i, j]),
             "value": float(result.cell_values[i, j])}
            for i, true in enumerate(classes) for j, action in enumerate(predicted)]
    return pd.DataFrame(rows, columns=["true", "predicted", "count", "value"])


# ------------------------------------------------------------ per model
def matrix_policies(ws, model: str, matrix: vc.ValueMatrix) -> dict:
    """Per kind in MATRIX_KINDS: (policy or None, result or None, note)."""
    out = {}
    for kind in MATRIX_KINDS:
        try:
            policy = ws.policy(model, kind, matrix)
            result = ws.result(model, policy, matrix)
            out[kind] = (policy, result, "" if result is not None else f"no '{ws.eval_split}' split")
        except ValueError as error:
            out[kind] = (None, None, str(error))
    return out


def class_threshold_table(policies: dict, classes, confidences=None) -> pd.DataFrame:
    """Per class: the tuned and the calibrated per-class thresholds, written with the digits that tell their
    decisions apart on ``confidences`` (the model's, on the data shown), else to their last digit."""
    frame = pd.DataFrame(index=list(classes))
    frame.index.name = "Predicted class"
    for kind in ("class_thresholds", "calibrated_class_thresholds"):
        policy = policies.get(kind, (None,))[0]
        label = "Tuned" if kind == "class_thresholds" else "Calibrated"
        mapping = dict(policy.class_thresholds) if policy is not None else {}
        frame[label] = [threshold_text(mapping[c], confidences) if c in mapping else "no threshold" for c in classes]
    return frame


def summary_frame(fitted: dict) -> pd.DataFrame:
    """One row per (model, rule): total value, value per item, share acted on (NaN where none), note."""
    records = []
    for model, policies in fitted.items():
        for kind, (_, result, note) in policies.items():
            records.append({
                "model": model,
                "rule": POLICY_LABELS[kind],
                "value_total": result.value_total if result is not None else np.nan,
                "value_per_item": result.value_per_item if result is not None else np.nan,
                "coverage": result.coverage if result is not None else np.nan,
                "note": note if result is None else ("estimated without labels" if result.estimated else ""),
            })
    return pd.DataFrame(records, columns=list(SUMMARY_COLUMNS))


def summary_columns(summary: pd.DataFrame) -> tuple[str, ...]:
    """The summary's columns as shown: "Note" only when a row has one (an empty column of notes read as missing
    data, and pushed the table past 800 px)."""
    has_note = summary["note"].fillna("").astype(str).str.len().gt(0).any()
    return tuple(label for column, label in SUMMARY_COLUMNS.items() if column != "note" or has_note)


def summary_shown(summary: pd.DataFrame) -> tuple[str, ...]:
    """The summary's columns shown by default: :func:`summary_columns` but :data:`SUMMARY_DETAILS_ONLY`."""
    return tuple(label for label in summary_columns(summary) if label not in SUMMARY_DETAILS_ONLY)


def summary_styler(summary: pd.DataFrame, money, total=None):
    """The summary as the page shows it: money and shares as text, each model's best rule highlighted.

    ``total`` writes the total value (``Selection.projected``: no cents from 100 up); ``money`` by default."""
    best = summary.groupby("model")["value_per_item"].transform("max")
    is_best = summary["value_per_item"].notna() & (summary["value_per_item"] == best)
    shown = summary.rename(columns=SUMMARY_COLUMNS)
    formats = {"Total value": total or money, "Value per item": money, "Acted on": percent}
    return styled(shown, formats).apply(lambda row: [BEST_STYLE if is_best.loc[row.name] else ""] * len(row), axis=1)


@dataclass(frozen=True)
class Detail:
    """One model under one rule: where its value comes from."""

    thresholds: pd.DataFrame  # per predicted class: tuned and calibrated
    cells: pd.DataFrame  # confusion_frame
    title: str
    caption: str


@dataclass(frozen=True)
class ValuesPerClassPage:
    """Everything the page shows for one class set.

    ``fitted`` maps model -> kind -> (policy, result, note); :meth:`rules` and :meth:`detail` read it.
    """

    classes: tuple
    models: tuple  # the selected models with exactly these classes
    matrix: vc.ValueMatrix  # the matrix shown (in force, or made from the three values)
    editor: pd.DataFrame  # matrix_frame(matrix)
    editor_version: str  # changes with the matrix: a new matrix is a fresh editor
    status: str  # whether every page uses this matrix
    cells: pd.DataFrame  # matrix_cells(matrix), for the colour chart
    left_out_note: str | None
    notes: tuple  # (severity, message) per split caveat
    summary: pd.DataFrame
    summary_styled: object  # a pandas Styler of the summary
    summary_columns: tuple  # its columns as shown in the "All columns" details (summary_columns)
    summary_shown: tuple  # those shown by default (summary_shown)
    summary_caption: str
    fitted: dict = field(repr=False)
    confidences: dict = field(default_factory=dict, repr=False)  # model -> its confidences on the data shown
    eval_split: str | None = None
    money: object = field(default=None, repr=False, compare=False)
    projected: object = field(default=None, repr=False, compare=False)  # an amount over many items

    def rules(self, model: str) -> list[str]:
        """The kinds this model could be evaluated under."""
        return [k for k, (_, result, _) in self.fitted[model].items() if result is not None]

    def why_not(self, model: str) -> str:
        """Why some of the model's rules have no value (markdown-safe; "" when all have one)."""
        notes = {POLICY_LABELS[k]: n for k, (_, r, n) in self.fitted[model].items() if r is None and n}
        return md_text("; ".join(f"{label}: {note}" for label, note in notes.items()))

    def detail(self, model: str, kind: str) -> Detail:
        _, result, _ = self.fitted[model][kind]
        money, total = self.money, self.projected or self.money
        caption = (
            f"Total {total(result.value_total)} on {vc.wording.count(result.n_items)} items of "
            f"{split_text(self.eval_split)} "
            f"({money(result.value_per_item)} per item); {percent(result.coverage)} acted on."
            + (" Estimated from probabilities: this split has no labels." if result.estimated else "")
        )
        return Detail(
            thresholds=class_threshold_table(self.fitted[model], self.classes, self.confidences.get(model)),
            cells=confusion_frame(result),
            title=f"**{md_text(model)}, {POLICY_LABELS[kind].lower()}: items per cell, coloured by the value they "
                  "bring**",
            caption=caption,
        )


def class_sets(selection) -> list[tuple]:
    """The distinct class sets of the selected models, in order."""
    return list(dict.fromkeys(selection.report.models[m].classes for m in selection.models))


def class_set_label(selection, classes) -> str:
    """'10 classes (0, 1, 2, 3, … (10 in all)): logreg, mlp' for the class-set chooser."""
    holders = [m for m in selection.models if selection.report.models[m].classes == classes]
    return f"{len(classes)} classes ({short_list(classes, 4)}): " + short_list(holders, 4)


def shown_matrix(selection, classes) -> tuple[vc.ValueMatrix, bool]:
    """(the matrix to show for these classes, whether the settings hold a matrix at all)."""
    in_force = selection.settings.value_matrix
    if in_force is not None:
        try:
            return vc.policy_json.align_values(in_force, classes), True
        except ValueError:
            pass
    return selection.use_case.for_classes(classes), in_force is not None


def build(selection, ws, classes) -> ValuesPerClassPage:
    """The page for the selected models of one class set (``classes``)."""
    classes = tuple(classes)
    models = tuple(m for m in selection.models if selection.report.models[m].classes == classes)
    matrix, matrix_set = shown_matrix(selection, classes)
    in_use = selection.value_matrix is not None and selection.value_matrix.classes == classes
    if in_use:
        status = "Every page uses this matrix (the sidebar says so, and offers the way back to the three values)."
    elif matrix_set:
        status = "A value matrix is in force but does not fit these classes, so the pages use the three values."
    else:
        status = "This starts from the three values in the sidebar. Edit a cell and every page switches to it."
    left_out = [m for m in selection.models if m not in models]
    fitted = {model: matrix_policies(ws, model, matrix) for model in models}
    summary = summary_frame(fitted)
    return ValuesPerClassPage(
        classes=classes,
        models=models,
        matrix=matrix,
        editor=matrix_frame(matrix),
        editor_version=hashlib.sha256(repr((matrix.classes, matrix.values.tolist())).encode()).hexdigest()[:12],
        status=status,
        cells=matrix_cells(matrix),
        left_out_note=f"Left out (other classes): {md_text(short_list(left_out))}." if left_out else None,
        notes=tuple(split_notes(ws, list(models), "class_thresholds")),
        summary=summary,
        summary_styled=summary_styler(summary, selection.money, selection.projected),
        summary_columns=summary_columns(summary),
        summary_shown=summary_shown(summary),
        summary_caption=(
            "Per-class thresholds: one confidence threshold per predicted class, tuned on "
            f"{split_text(selection.tune_split)} or derived from the matrix for calibrated confidences. The "
            "expected-value rule takes, for each item, the action with the highest expected value under the model's "
            "probabilities."
        ),
        fitted=fitted,
        confidences={model: shown_confidences(ws, model) for model in models},
        eval_split=selection.eval_split,
        money=selection.money,
        projected=selection.projected,
    )
