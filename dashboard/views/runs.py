"""The Runs page's view model: what is loaded, and what is wrong with the files that did not load.

:func:`build` gives :class:`RunsPage`, every text and table of the page; the
page lays them out. Names from files are escaped here (markdown-safe).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np
import pandas as pd

import valuecore as vc

from ..safetext import md_text
from . import short_list

__all__ = ["MODEL_ABSTENTION_COLUMNS", "RunsPage", "build", "build_anew", "count_text", "runs_table",
           "splits_table"]

RUNS_SHOWN_FIRST = ("model",)  # then the accuracy per split, then the splits' rows; the rest is one click away
# The rest are in "All columns" (the name every page gives its details), which holds every column: the table shown
# keeps the model, its splits and accuracies, to fit the 800 px a page has at 1280 px with the sidebar open (one
# table of every column hid the accuracies, file and hash behind the edge).
RUNS_DETAILS = ("model", "selected", "classes", "probabilities", "file", "sha256")  # and the shown columns


def count_text(n: int, one: str, many: str | None = None) -> str:
    """'1 model', '3 models', '0 models': no "model(s)".

    >>> count_text(1, "model"), count_text(3, "model"), count_text(2, "error")
    ('1 model', '3 models', '2 errors')
    """
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def runs_table(report, selected=()) -> pd.DataFrame:
    """One row per loaded model: classes, splits with rows, labels, accuracy per split, file, hash."""
    split_names = []
    for run in report.models.values():
        for split in run.splits:
            if split not in split_names:
                split_names.append(split)
    rows = []
    for name, run in report.models.items():
        parts = []
        row = {
            "model": name,
            "selected": name in selected,
            "classes": f"{len(run.classes)}: {short_list(run.classes)}",
            "probabilities": "full" if all(p.has_proba for p in run.splits.values()) else "top label only",
        }
        for split, predictions in run.splits.items():
            # Short: the header says "rows", and a labelled split needs no word ("val: 449 rows (labelled) · test:
            # 450 rows (labelled)" pushed the accuracies past the edge at 800 px).
            parts.append(f"{split}: {predictions.n:,}" + ("" if predictions.has_labels else " (no labels)"))
        row["splits"] = " · ".join(parts)
        for split in split_names:
            predictions = run.splits.get(split)
            row[f"accuracy on {split}"] = (
                predictions.accuracy if predictions is not None and predictions.has_labels else np.nan
            )
        row["file"] = run.path
        row["sha256"] = run.sha256[:12]
        rows.append(row)
    columns = ["model", "selected", "classes", "probabilities", "splits"]
    columns += [f"accuracy on {s}" for s in split_names] + ["file", "sha256"]
    return pd.DataFrame(rows, columns=columns)


MODEL_ABSTENTION_COLUMNS = ("declined by the model", "false abstentions")


def splits_table(report) -> pd.DataFrame:
    """One row per (model, split): rows, weighted items, labels, accuracy; and, when a run holds the model's
    own abstentions (a language model's "I don't know"), how many items it declined and how many of those
    were false abstentions (declined, yet its top choice was right; NaN without labels)."""
    own = any(p.has_model_abstentions for run in report.models.values() for p in run.splits.values())
    rows = []
    for name, run in report.models.items():
        for split, predictions in run.splits.items():
            row = {
                "model": name,
                "split": split,
                "rows": predictions.n,
                "weighted items": predictions.total_weight,
                "labelled": predictions.has_labels,
                "accuracy": predictions.accuracy if predictions.has_labels else np.nan,
                "probabilities": "full" if predictions.has_proba else "top label only",
            }
            if own:
                _, declined, false = vc.runs.abstention_counts(predictions)
                row.update(zip(MODEL_ABSTENTION_COLUMNS, (declined, false)))
            rows.append(row)
    columns = ["model", "split", "rows", "weighted items", "labelled", "accuracy", "probabilities"]
    return pd.DataFrame(rows, columns=columns + (list(MODEL_ABSTENTION_COLUMNS) if own else []))


@dataclass(frozen=True)
class RunsPage:
    """What the Runs page shows.

    ``errors`` and ``warnings`` are the loader's problems as markdown-safe text; ``empty`` is the
    message shown instead of the tables when no model loaded (then ``runs`` is None) and
    ``empty_notes`` the captions under it. ``accuracy_columns`` are the columns of ``runs`` with an
    accuracy per split (shown as percentages).
    """

    source: str
    errors: tuple = ()
    warnings: tuple = ()
    errors_note: str = ""
    empty: str = ""
    empty_notes: tuple = ()
    heading: str = ""
    runs: pd.DataFrame | None = None
    shown_first: tuple = ()
    details: tuple = RUNS_DETAILS
    accuracy_columns: tuple = ()
    top_label_note: str = ""
    splits: pd.DataFrame | None = None
    model_abstention_notes: tuple = ()


# Built pages per loaded runs and what else the page reads of the selection: nothing here depends on the outcome
# values, so a new value (the benchmark's round, a visitor's typing) finds the page built, not its tables rebuilt
# (an accuracy per split and model and two frames: 7 ms of CPU on five runs of 10^5 rows, half of the page's
# script). The sidebar wraps the cached runs anew on every rerun (a new LoadReport, each ModelRun replaced with its
# path as shown), so the key is what the page reads of them: each split's predictions (loaded once, never changed),
# the run's name, path, hash and classes, and the problems; a page goes when one of its splits does. Nothing that
# takes these frames changes them (the tables' helpers copy what they format).
_BUILT: dict[tuple, RunsPage] = {}
_KEPT_PAGES = 16
_BUILT_LOCK = threading.Lock()  # sessions run in threads


def _runs_key(report) -> tuple:
    return tuple((name, run.path, run.sha256, tuple(run.classes), tuple((split, id(p)) for split, p in
                                                                        run.splits.items()))
                 for name, run in report.models.items())


def build(selection) -> RunsPage:
    """The Runs page of ``selection`` (kept per loaded splits, problems, selected models, source and its notes)."""
    report = selection.report
    splits = [p for run in report.models.values() for p in run.splits.values()]
    if not splits:  # nothing loaded: a sentence, nothing to keep
        return build_anew(selection)
    key = (_runs_key(report), report.problems, tuple(selection.models), selection.source_label,
           selection.settings.source, tuple(selection.notes))
    page = _BUILT.get(key)
    if page is not None:
        return page
    page = build_anew(selection)
    with _BUILT_LOCK:
        while len(_BUILT) >= _KEPT_PAGES:
            _BUILT.pop(next(iter(_BUILT)), None)
        _BUILT[key] = page
    for predictions in splits:
        weakref.finalize(predictions, _BUILT.pop, key, None)
    return page


def build_anew(selection) -> RunsPage:
    """The Runs page of ``selection``, built (what :func:`build` keeps)."""
    report = selection.report
    errors = tuple(md_text(p) for p in report.errors)
    warnings = tuple(md_text(p) for p in report.warnings)
    errors_note = (f"{count_text(len(errors), 'error')}: the file (or the model named) was not loaded. Fix it and "
                   "load it again." if errors else "")
    source = f"Loaded from {md_text(selection.source_label)}."
    if not report.models:
        notes: tuple = ()
        if errors:
            empty = "No model could be loaded: see the problems above."
        elif selection.settings.source == "upload":
            empty = "Upload one CSV or Parquet file per model in the sidebar to start."
            notes = tuple(selection.notes)
        else:
            empty = "No run is loaded yet. Choose the sample runs or a folder of run files in the sidebar."
        return RunsPage(source, errors, warnings, errors_note, empty=empty, empty_notes=notes)
    table = runs_table(report, selected=selection.models)
    # A split no model has labels for has no accuracy: its column held only dashes and, at 1280 px, pushed the
    # table past the edge ("Accu…"); its cell under "Splits (rows)" already says "no labels".
    table = table.drop(columns=[c for c in table.columns if c.startswith("accuracy on ") and table[c].isna().all()])
    splits = splits_table(report)
    accuracy = tuple(c for c in table.columns if c.startswith("accuracy on "))
    top_label = [m for m, run in report.models.items() if not all(p.has_proba for p in run.splits.values())]
    top_label_note = (f"{md_text(short_list(top_label))}: top label only. The expected-value rule and temperature "
                      "scaling need one probability column per class and are not offered for these models."
                      if top_label else "")
    return RunsPage(
        source, errors, warnings, errors_note,
        heading=f"{count_text(len(report.models), 'model')} loaded",
        runs=table,
        # The accuracies before the splits' rows: what a reader compares first stays in view at any width.
        shown_first=(*RUNS_SHOWN_FIRST, *accuracy, "splits"),
        details=tuple(table.columns),  # "All columns": every one, in the loader's order
        accuracy_columns=accuracy,
        top_label_note=top_label_note,
        splits=splits,
        model_abstention_notes=model_abstention_notes(splits),
    )


def model_abstention_notes(splits: pd.DataFrame) -> tuple[str, ...]:
    """One sentence per split where the model itself declined items: which hand-offs were the model's own, and
    how many of them were false abstentions (markdown-safe)."""
    if MODEL_ABSTENTION_COLUMNS[0] not in splits.columns:
        return ()
    notes = []
    for row in splits.itertuples(index=False):
        declined, false = row[-2], row[-1]
        if declined == 0:
            continue
        false_text = ("" if np.isnan(false) else
                      f"; of them {vc.wording.false_abstentions(false)} (its top choice was right)")
        notes.append(f"{md_text(row.model)} declined {vc.wording.count(declined)} of "
                     f"{vc.wording.count(row[3])} items on '{md_text(row.split)}' itself: always handed over, "
                     f"whatever the threshold, which applies to the answers it gave{false_text}.")
    return tuple(notes)
