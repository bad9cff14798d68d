"""Read run files (CSV or Parquet, one row per prediction) into :class:`Predictions`.

The file format is described in ``docs/run-format.md``. Bad input never
raises: every problem becomes a :class:`LoadProblem` naming the file, the
column and the first offending rows, and the other files still load.

Row numbers in problems are 1-based *data* rows: row 1 is the first row
below the header (line 2 of a CSV file, row 2 of a spreadsheet).

The package reads in the order of the work: ``discovery`` (which files), ``reading`` (one file's bytes
into columns), ``cells`` (each column checked and converted), ``parse`` (the columns cut into one run per
model and split) and ``results`` (what comes back); this module loads and aligns them. What the
aggregation shares with it (the problems report, the limits, a header's checks) is ``valuecore._io.format``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..identity import file_sha256
from ..._model.predictions import Predictions
from ..format import LoadProblem, _same_name_apart, _short_list
from .results import LoadReport, ModelRun
from .discovery import _expand_paths, _not_a_readable_file
from .reading import _disk_path, _file_content
from .parse import _load_bytes
from .segments import _with_segments, read_segment_column


__all__ = [
    "LoadProblem",
    "LoadReport",
    "ModelRun",
    "check_comparable",
    "file_sha256",
    "load_run_file",
    "load_runs",
    "read_segment_column",
]


def load_runs(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    sum_tolerance: float = 1e-2,
    warn_tolerance: float = 1e-6,
    splits: Sequence[str] | None = None,
    roots: Sequence[str | os.PathLike] | None = None,
    segment_column: str | None = None,
) -> LoadReport:
    """Load run files and folders of run files into one comparison.

    Parameters
    ----------
    paths : path or iterable of paths
        Run files (CSV or Parquet) and folders; a folder contributes its
        ``*.csv`` and ``*.parquet`` files (not recursive), in name order.
    sum_tolerance : float
        A probability row whose sum is further than this from 1 is an error.
    warn_tolerance : float
        A row further than this from 1 (but within ``sum_tolerance``) is a
        warning; the probabilities are kept as they are, not renormalised.
    splits : sequence of str, optional
        Keep only these splits; a model without rows in one of them gets a
        warning, and a model with none of them is not loaded.
    roots : sequence of paths, optional
        For a server: every file, its symbolic links resolved, must lie inside
        one of these folders; a link pointing elsewhere is refused (skipped,
        with a problem). Default: no restriction.

    Returns
    -------
    LoadReport
        Models that loaded, plus problems. Models with the same class set in
        a different column order are reordered to a common order; top-label
        runs whose classes were inferred from their labels are widened to the
        common class set; remaining class-set differences are reported as
        errors by :func:`check_comparable` (the models stay loaded).
    """
    splits = _split_filter(splits)
    problems: list[LoadProblem] = []
    models: dict[str, ModelRun] = {}
    inferred_classes: set[str] = set()
    for display, path in _expand_paths(paths, problems, roots):
        try:
            data = _file_content(path, display)
            if isinstance(data, list):  # the header's problems
                problems.extend(data)
                continue
        except OSError as exc:
            problems.append(LoadProblem(display, f"cannot be read: {exc.strerror or exc}"))
            continue
        runs, file_problems, inferred = _load_bytes(
            data, display, sum_tolerance=sum_tolerance, warn_tolerance=warn_tolerance, splits=splits
        )
        problems.extend(file_problems)
        if segment_column is not None and runs:
            runs = _with_segments(runs, path, display, segment_column, problems)
        for run in runs:
            if run.model in models:
                problems.append(
                    LoadProblem(
                        display,
                        f"model name {run.model!r} is already taken by {models[run.model].path}; "
                        "this one was not loaded (rename the file or the model column values)"
                        + _same_name_apart(models[run.model].path, display),
                    )
                )
                continue
            models[run.model] = run
            if inferred:
                inferred_classes.add(run.model)
    models = _align_classes(models, inferred_classes)
    problems.extend(check_comparable(models))
    return LoadReport(models=models, problems=tuple(problems))


def load_run_file(
    path_or_bytes: str | os.PathLike | bytes,
    *,
    name: str | None = None,
    sum_tolerance: float = 1e-2,
    warn_tolerance: float = 1e-6,
    splits: Sequence[str] | None = None,
    segment_column: str | None = None,
) -> LoadReport:
    r"""Load one run file, from disk or from bytes (e.g. a Streamlit upload).

    Parameters
    ----------
    path_or_bytes : path or bytes
        A file path, or the file content.
    name : str, optional
        File name for bytes input (its suffix picks the format, its stem is
        the model name); defaults to ``"upload.csv"``. For a path it replaces
        the path in problems and ``ModelRun.path``, and names the model.
    sum_tolerance, warn_tolerance, splits, segment_column
        As in :func:`load_runs`.

    Returns
    -------
    LoadReport

    Examples
    --------
    >>> report = load_run_file(b"y_true,proba_a,proba_b\na,0.9,0.1\nb,0.3,0.7\n", name="logreg.csv")
    >>> report.ok, report.models["logreg"].classes, report.models["logreg"].split_names
    (True, ('a', 'b'), ('all',))
    >>> print(load_run_file(b"y_true,proba_a,proba_b\na,0.9,\n", name="logreg.csv").errors[0])
    logreg.csv, column proba_b: NaN or missing probabilities at row 1
    """
    splits = _split_filter(splits)
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(path_or_bytes)
        display = name or "upload.csv"
    else:
        display = name or str(path_or_bytes)
        file = Path(path_or_bytes)
        reason = _not_a_readable_file(file)
        if reason is not None:  # checked first: reading a FIFO would wait forever
            return LoadReport({}, (LoadProblem(display, reason),))
        try:
            data = _file_content(file, display)
            if isinstance(data, list):  # the header's problems
                return LoadReport({}, tuple(data))
        except OSError as exc:
            return LoadReport({}, (LoadProblem(display, f"cannot be read: {exc.strerror or exc}"),))
    runs, problems, _ = _load_bytes(
        data, display, sum_tolerance=sum_tolerance, warn_tolerance=warn_tolerance, splits=splits
    )
    if segment_column is not None and runs:
        runs = _with_segments(runs, _disk_path(data) or data, display, segment_column, problems)
    models: dict[str, ModelRun] = {}
    for run in runs:
        models[run.model] = run
    problems.extend(check_comparable(models))
    return LoadReport(models=models, problems=tuple(problems))


def check_comparable(models: Mapping[str, ModelRun] | Iterable[ModelRun]) -> list[LoadProblem]:
    """Report models whose classes differ from those of the other models.

    Parameters
    ----------
    models : mapping of name to ModelRun, or iterable of ModelRun

    Returns
    -------
    list of LoadProblem
        An error for each model whose class *set* differs from the most common
        set (ties: the first model's), a warning for the same set in a
        different order. Empty when all models agree.
    """
    runs = list(models.values()) if isinstance(models, Mapping) else list(models)
    if len(runs) < 2:
        return []
    reference = _reference_classes(runs)
    others = sum(1 for r in runs if set(r.classes) == set(reference))
    problems = []
    for run in runs:
        if run.classes == reference:
            continue
        if set(run.classes) == set(reference):
            problems.append(
                LoadProblem(
                    run.path,
                    f"model {run.model!r} has the same classes as the others but in another "
                    f"column order ({_short_list(run.classes)} vs {_short_list(reference)})",
                    severity="warning",
                )
            )
            continue
        missing = [c for c in reference if c not in run.classes]
        extra = [c for c in run.classes if c not in reference]
        detail = "; ".join(
            part
            for part in (
                f"missing {_short_list(missing)}" if missing else "",
                f"extra {_short_list(extra)}" if extra else "",
            )
            if part
        )
        problems.append(
            LoadProblem(
                run.path,
                f"model {run.model!r} has classes {_short_list(run.classes)} but {others} other "
                f"model(s) have {_short_list(reference)} ({detail}); models with different "
                "classes cannot be compared",
            )
        )
    return problems


def _split_filter(splits) -> tuple[str, ...] | None:
    # A lone string would otherwise be matched character by character.
    if splits is None:
        return None
    return (splits,) if isinstance(splits, str) else tuple(str(s) for s in splits)


def _reference_classes(runs: Sequence[ModelRun]) -> tuple[str, ...]:
    """The most common class set (ties: first seen), in the order of its first model."""
    counts = Counter(frozenset(r.classes) for r in runs)
    best = max(counts.values())
    for run in runs:
        if counts[frozenset(run.classes)] == best:
            return run.classes
    raise AssertionError("unreachable")


def _align_classes(models: dict[str, ModelRun], inferred: set[str]) -> dict[str, ModelRun]:
    """Put every model in the common class order; widen inferred top-label class sets."""
    if len(models) < 2:
        return models
    reference = _reference_classes(list(models.values()))
    aligned = {}
    for name, run in models.items():
        same_set = set(run.classes) == set(reference)
        widen = name in inferred and set(run.classes) < set(reference)
        if run.classes != reference and (same_set or widen):
            splits = {s: _with_classes(p, reference) for s, p in run.splits.items()}
            run = replace(run, classes=reference, splits=splits)
        aligned[name] = run
    return aligned


def _with_classes(prediction: Predictions, classes: tuple[str, ...]) -> Predictions:
    """The same predictions expressed over ``classes`` (a reordering or a superset)."""
    text = np.asarray(prediction.classes, dtype=object)
    y_true = None if prediction.y_true is None else text[prediction.y_true]
    weight = None if prediction.has_unit_weights else prediction.sample_weight
    common = {"sample_weight": weight, "ids": prediction.ids, "timestamp": prediction.timestamp}
    if prediction.proba is not None:
        order = [prediction.classes.index(c) for c in classes]
        logits = None if prediction.logits is None else prediction.logits[:, order]
        return Predictions.from_proba(
            prediction.proba[:, order], y_true, classes=classes, logits=logits, sum_tolerance=np.inf, **common
        )
    return Predictions.from_top_label(
        text[prediction.y_pred], prediction.confidence, y_true, classes=classes, **common
    )
