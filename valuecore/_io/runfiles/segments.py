"""A run file's segment column (a region, a product, a customer tier): each model's and split's labels, read
beside the run so that thresholds can be set per segment (``valuecore.constraints.fit_segments``)."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..lazy import LazyModule
from ..format import DEFAULT_SPLIT, PARQUET_SUFFIXES, LoadProblem, _FileProblems, _short_list
from ..columns import column_name, is_run_column
from .cells import _group_column, _text_values
from .parse import _display_stem

pd = LazyModule("pandas")  # imported on first use


def _with_segments(runs: list, source, display: str, column: str, problems: list) -> list:
    """The runs with each split's segment labels from ``column``; none (and an error) when the column is
    missing or has empty cells. Also drops the warning that ``column`` is an unknown column."""
    problems[:] = [kept for p in problems if (kept := _without_column(p, column)) is not None]
    try:
        labels = read_segment_column(source, column, name=display)
    except ValueError as exc:
        problems.append(exc.args[1] if len(exc.args) > 1 else LoadProblem(display, str(exc), column))
        return []
    return [replace(run, segments={s: labels[run.model][s] for s in run.splits}) for run in runs]


def _without_column(problem: LoadProblem, column: str) -> LoadProblem | None:
    """``problem`` less the declared segment column: the loader warns of every column it does not know, and
    the segment column is one; None when it was the only one named."""
    unknown = "ignored unknown columns "
    if problem.severity != "warning" or not problem.message.startswith(unknown):
        return problem
    if problem.column == column:
        return None
    shown = repr(column)
    for named in (f"[{shown}, ", f", {shown}]", f", {shown}, "):
        if named in problem.message:
            keep = {f"[{shown}, ": "[", f", {shown}]": "]", f", {shown}, ": ", "}[named]
            return replace(problem, message=problem.message.replace(named, keep, 1))
    return problem


def read_segment_column(source, column: str, *, name: str | None = None) -> dict[str, dict[str, np.ndarray]]:
    """Each model's and split's segment labels from ``column`` of one run file, the rows in the loader's order.

    Parameters
    ----------
    source : path, or bytes of a CSV or Parquet file
    column : str
    name : str, optional
        The file as the user named it (for messages, and for the model name of a file without a
        ``model`` column, as :func:`load_run_file`).

    Returns
    -------
    dict
        ``{model: {split: ndarray of str, shape (n,)}}``.

    Raises
    ------
    ValueError
        The column is missing, is one of the run format's own columns, or some cells are empty: the
        message names the file, the column and the rows (``exc.args[1]`` is the :class:`LoadProblem`).
        Names are matched as the loader reads a header: the whitespace around them ignored.
    """
    display = name or (str(source) if not isinstance(source, (bytes, bytearray)) else "upload.csv")
    is_parquet = Path(display).suffix.lower() in PARQUET_SUFFIXES
    data = io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source
    if is_parquet:
        import pyarrow.parquet as pq

        available = list(pq.read_schema(data).names)
    else:
        available = [str(c) for c in pd.read_csv(data, nrows=0).columns]
    if hasattr(data, "seek"):
        data.seek(0)
    # The loader reads a header's names with the whitespace around them ignored ("split " is the split): so here.
    spellings: dict[str, list[str]] = {}
    for raw in available:
        spellings.setdefault(column_name(raw), []).append(raw)
    wanted = column_name(column)
    if is_run_column(wanted):
        problem = LoadProblem(display, "a column of the run format cannot be the segment column: a threshold per "
                                       "segment is looked up when the model predicts, by a column the serving "
                                       "system has then (a region, a product, a customer tier), not by the "
                                       "labels, splits, scores or ids of docs/run-format.md", column)
        raise ValueError(str(problem), problem)
    if wanted not in spellings:
        problem = LoadProblem(display, f"no such column: the segment column must be one of the file's columns "
                                       f"{_short_list(list(spellings))}", column)
        raise ValueError(str(problem), problem)
    if len(spellings[wanted]) > 1:
        problem = LoadProblem(display, f"two columns are named {wanted!r} once the spaces around their names are "
                                       f"ignored: {_short_list(spellings[wanted])}", column)
        raise ValueError(str(problem), problem)
    named = {spellings[n][0]: n for n in (wanted, "model", "split") if n in spellings}
    frame = (pd.read_parquet(data, columns=list(named)) if is_parquet
             else pd.read_csv(data, usecols=list(named), dtype=str, keep_default_na=False, na_values=[""]))
    frame = frame.rename(columns=named)
    column = wanted
    n = len(frame)
    found = _FileProblems(display)
    model_codes, model_names = _group_column(frame, "model", _display_stem(display), found, n)
    split_codes, split_names = _group_column(frame, "split", DEFAULT_SPLIT, found, n)
    codes, texts = _text_values(frame[column])
    text = np.array([*texts, None], dtype=object)[codes]  # code -1 (missing) reads the last slot
    empty = np.array([t is None for t in text.tolist()], dtype=bool)
    if empty.any():
        found.add("empty segment labels: every row needs its segment", column=column, where=empty)
    if found.has_errors:
        problem = next(p for p in found.items if p.severity == "error")
        raise ValueError(str(problem), problem)
    out: dict[str, dict[str, np.ndarray]] = {}
    for m, model in enumerate(model_names):
        for k, split in enumerate(split_names):
            rows = (model_codes == m) & (split_codes == k)
            if rows.any():
                out.setdefault(model, {})[split] = text[rows]
    return out
