"""Table and frame builders for the Runs, Value, VOC and Cost matrix pages.

Pages lay out widgets; this module turns the user's selection into the
tidy frames those widgets show. Every number comes from ``valuecore``
(through the cached :class:`~dashboard.data.Workspace`); nothing here draws.
Problems become plain-language notes, never exceptions.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import valuecore as vc

from ..data import Workspace
from ..rules import rule_options as rule_options  # every page offers the one list of rules
from ..safetext import md_text

# ------------------------------------------------------------------ labels
POLICY_LABELS = vc.wording.POLICY_LABELS  # one label per policy kind, in the app, the CLI and the report
GLOBAL_THRESHOLD_KINDS = frozenset({"threshold", "calibrated_threshold"})

NO_PROBA_NOTE = vc.wording.NO_PROBA_NOTE


# Numbers read the same on every page, in the CLI and in the report: valuecore.wording formats them.
percent = vc.wording.percent
number = vc.wording.number
omega_text = vc.wording.omega


def threshold_text(threshold: float | None, confidences=None) -> str:
    """A threshold as every page writes it: the digits that tell its decision apart on ``confidences`` (the
    model's on the data shown, :func:`shown_confidences`), or what it means in words; the exact one without."""
    if threshold is None or (isinstance(threshold, float) and math.isnan(threshold)):
        return "always hand off"
    if threshold <= 0:
        return "act on every item"
    return vc.wording.threshold_on_data(threshold, confidences)


THRESHOLD_SIGNIFICANT = vc.wording.THRESHOLD_SIGNIFICANT
INTERVAL_HEADER = vc.wording.INTERVAL_HEADER


def interval_text(low, high, amount) -> str:
    """A 95% interval in one cell, as every table writes it: "$0.867 to $0.979" (``amount``: three significant
    digits), "too few items" when it is unbounded, "" when there is none (no labels, or not computed)."""
    if low is None or high is None or bool(np.isnan(low)) or bool(np.isnan(high)):
        return ""
    return f"{amount(low)} to {amount(high)}" if np.isfinite(low) and np.isfinite(high) else "too few items"


def shown_confidences(ws, model: str):
    """The model's distinct (recalibrated) confidences on the data shown: its tuning and evaluated splits."""
    pieces = [run.thresholds for split in dict.fromkeys((ws.tuning_split_for(model), ws.eval_split))
              if split is not None and (run := ws.sorted(model, split)) is not None]
    return np.concatenate(pieces) if pieces else None


threshold_on_data = vc.wording.threshold_on_data  # as many digits as tell the decision apart, at most 6


def threshold_help(threshold: float) -> str:
    return f"Exact threshold: {threshold_number(threshold)} (as in the exported policy JSON)."


def threshold_number(threshold: float) -> str:
    """Enough digits to reproduce the decision exactly (never 1.000 for a threshold below 1)."""
    return vc.wording.threshold(threshold)


def split_text(split: str | None) -> str:
    """'val' in quotes, or words when there is no split (never 'None'); markdown-safe."""
    return "no split (none is loaded)" if split is None else f"'{md_text(split)}'"


short_list = vc.wording.short_list


# ------------------------------------------------------------------- runs
def load_problem_note(report) -> str | None:
    """One sentence when some files did not load (the Runs page has the details)."""
    errors = report.errors
    if not errors:
        return None
    files = list(dict.fromkeys(p.file for p in errors))
    count = "1 file" if len(files) == 1 else f"{len(files)} files"
    return (f"{count} could not be loaded ({md_text(short_list([Path(f).name for f in files], 3))}): "
            "the Runs page says why. The models shown here loaded fine.")


# --------------------------------------------------------- split checks
def split_notes(ws: Workspace, models, kind: str = "threshold") -> list[tuple[str, str]]:
    """(severity, message) per caveat of the pipeline: a missing split, a tuning fallback, a calibration
    that cannot apply, values estimated without labels. The same notes go into the exported JSON."""
    notes = []
    if ws.eval_split is None:
        return [("info", "The selected models have no splits to evaluate.")]
    missing = [m for m in models if not ws.has_split(m, ws.eval_split)]
    if missing:
        one = len(missing) == 1
        notes.append(("warning", f"{md_text(short_list(missing))} {'has' if one else 'have'} no "
                                 f"{split_text(ws.eval_split)} split, "
                                 f"so {'it is' if one else 'they are'} left out. "
                                 "Pick another split under 'Evaluate on' in the sidebar."))
    for model in models:
        if not ws.has_split(model, ws.eval_split):
            continue
        for note in ws.notes(model, kind):
            severity = "warning" if "cannot be fitted" in note else "info"
            notes.append((severity, md_text(note)))  # the core's plain words, with model and split names
    return notes


def fit(ws: Workspace, model: str, kind: str, values) -> vc.Policy:
    """The pipeline's policy (ValueError in plain words when the model cannot get one)."""
    return ws.policy(model, kind, values)
