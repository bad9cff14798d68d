"""The loader's checks run in the engine, their findings as the loader's own :class:`LoadProblem`
messages (file, column, rows); the budget's refusal with a suggested resolution; the options checked."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from pathlib import Path


from ..aggregate_options import DEFAULT_MAX_TEMP_SIZE, ENGINES, PERIODS
from ..limits import clip_text
from ..format import (
    MAX_GROUPS, SHOWN_COLUMNS, LoadProblem, _FileProblems, _run_kind, _same_name_apart, _short_list,
    _warn_unknown_columns,
)
from ..format import _canonical, _logit_order
from .results import CANDIDATE_RESOLUTIONS, SOURCE_VIEW, FILE_COLUMN, ROW_COLUMN, AggregateRefused
from .sources import _Source
from .sql import (
    _Plan, _is_integer_text, groups_at_sql, check_sql, _rows_where_sql, _label_values_sql, _split_labels_sql,
    _distinct_count_sql, _checks_in_groups, _group_counts_sql, _models_in_files_sql, _labels_where_sql, _off_by_more,
    _unlabelled_in_split, _unlabelled_files_sql, _partly_labelled_sql,
)
from .duckdb_engine import _Engine, _DuckDB, _HeldGroups


def _plan_for(source: _Source, problems: list[LoadProblem], **options) -> _Plan | None:
    where = _FileProblems(source.display)
    columns = [c for c in source.columns if c not in (FILE_COLUMN, ROW_COLUMN)]
    _warn_unknown_columns(columns, where)
    kind = _run_kind(columns, where)
    if kind is not None and kind.logit_columns and kind.classes is not None:
        _logit_order(list(kind.logit_columns), kind.classes, where)  # the loader's check of their classes
    if kind is not None and kind.logit_columns:
        where.add(
            "logit_ columns are not kept in an aggregate (temperature scaling needs per-item rows)",
            column=kind.logit_columns[0],
            severity="warning",
        )
    if options.get("period") is not None and "timestamp" not in columns:
        where.add(f"--period {options['period']} needs a timestamp column", column="timestamp")
    problems.extend(where.items)
    if kind is None or where.has_errors:
        return None
    return _Plan(
        columns=tuple(columns), column_types=source.column_types, classes=kind.classes,
        proba_columns=kind.proba_columns, model=source.model, file_models=source.file_models, **options,
    )  # fmt: skip


def _infer_classes(engine: _Engine, plan: _Plan, source: _Source, problems: list[LoadProblem]):
    labels = sorted({_canonical(str(r[0])) for r in engine.rows(_label_values_sql(plan))})  # "1.0" is class 1
    if len(labels) < 2:
        problems.append(
            LoadProblem(
                source.display,
                f"a top-label run needs at least 2 classes among y_pred and y_true, found {_short_list(labels)}",
                "y_pred",
            )
        )
        return None
    if all(_is_integer_text(c) for c in labels):
        return tuple(sorted(labels, key=int))
    return tuple(labels)


def _run_checks(engine: _Engine, plan: _Plan, source: _Source) -> list[LoadProblem]:
    """Every row check in one pass; the offending rows are fetched only for failed checks."""
    sql, checks = check_sql(plan)
    problems: list[LoadProblem] = []
    for record in engine.rows(sql):
        file = record[0]
        display = engine.display_file(file)
        counts = record[1 : 1 + len(checks)]
        by_message: dict[str, list[int]] = {}
        for check, count in zip(checks, counts):
            if not count:
                continue
            by_message.setdefault(check.message, []).append(1)
            if len(by_message[check.message]) > SHOWN_COLUMNS:
                continue
            rows = _first_rows(engine, check.bad, file)
            message = check.message
            if check.names_labels:
                labels = [str(r[0]) for r in engine.rows(_labels_where_sql(plan, check), [file])]
                message = f"labels {_short_list(labels)} {message}"
            problems.append(LoadProblem(display, message, check.column, rows, check.severity, int(count)))
        for message, hits in by_message.items():
            if len(hits) > SHOWN_COLUMNS:
                more = [c.column for c, n in zip(checks, counts) if n and c.message == message][SHOWN_COLUMNS:]
                problems.append(LoadProblem(display, f"{message} also in columns {_short_list(more)}"))
        if not plan.top_label:
            problems.extend(_sum_problems(engine, plan, file, display, record[1 + len(checks) :]))
    problems.extend(_group_problems(engine, plan, source))
    return problems


def _checks_from_groups(engine: _Engine, plan: _Plan, source: _Source, groups) -> list[LoadProblem]:
    """The loader's checks, read from the counts the grouping kept (``groups`` runs SQL on them); the
    per-file pass of :func:`_run_checks` (which names the rows) runs only when a count is not zero."""
    if not _checks_in_groups(plan):
        return []  # checked before the grouping
    record = groups.rows(_group_counts_sql(plan))[0]
    if record[0]:
        return _run_checks(engine, plan, source)
    problems: list[LoadProblem] = []
    if not plan.top_label and record[1]:
        if len(source.files) != 1:  # several files (or a table): each one's own count and worst deviation
            return _run_checks(engine, plan, source)
        file = engine.rows(f"SELECT {FILE_COLUMN} FROM {SOURCE_VIEW} LIMIT 1")[0][0]
        problems += _sum_problems(engine, plan, file, engine.display_file(file), (None, record[2], 0, record[1]))
    if max(record[3], record[4]) > MAX_GROUPS or _partly_labelled(groups, plan):
        problems += _group_problems(engine, plan, source)
    return problems


def _partly_labelled(groups, plan: _Plan) -> bool:
    """Whether a (model, split) is labelled (or, by period, timed) only in part, judged on the groups (checks
    passed, so a NULL y_true or period there is an empty one)."""
    columns = (["y_true"] if plan.has("y_true") else []) + (["period"] if plan.period is not None else [])
    return any(groups.rows(_partly_labelled_sql(column))[0][0] > 0 for column in columns)


def _models_in_several_files(engine: _Engine, plan: _Plan, source: _Source) -> list[LoadProblem]:
    """Run files of one folder are separate models: a model column value found in two of them is refused."""
    return [
        LoadProblem(
            engine.display_file(last),
            f"gives the model name {name!r}, which {engine.display_file(first)} gives too: the two would be blended "
            "into one model; rename one (its file, or its model column), or aggregate them into separate files",
            "model",
        )
        for name, first, last in engine.rows(_models_in_files_sql(plan))
    ]


def _first_rows(engine: _Engine, condition, file, parameters: Sequence = (), fresh: bool = False) -> tuple[int, ...]:
    """The first rows (1-based) of ``file`` where ``condition`` holds; ``fresh``: the condition was built for
    this query alone (it goes in uncopied)."""
    rows = [r[0] for r in engine.rows(_rows_where_sql(condition, copy=not fresh), [file, *parameters])]
    return tuple(int(r) + 1 for r in rows if r is not None)


def _sum_problems(engine: _Engine, plan: _Plan, file, display, record) -> list[LoadProblem]:
    _, worst, too_far, off = record
    if too_far:
        rows = _first_rows(engine, _off_by_more(plan, plan.sum_tolerance), file, fresh=True)
        message = f"probabilities do not sum to 1 (worst deviation {worst:.3g}, tolerance {plan.sum_tolerance:g})"
        return [LoadProblem(display, message, None, rows, "error", int(too_far))]
    if off:
        rows = _first_rows(engine, _off_by_more(plan, plan.warn_tolerance), file, fresh=True)
        message = f"probabilities sum to 1 only approximately (worst deviation {worst:.3g}, kept as they are)"
        return [LoadProblem(display, message, None, rows, "warning", int(off))]
    return []


def _group_problems(engine: _Engine, plan: _Plan, source: _Source) -> list[LoadProblem]:
    """Too many models or splits; a split labelled only in part."""
    problems = []
    for column in ("model", "split"):
        if plan.has(column):
            (count,) = engine.rows(_distinct_count_sql(plan, column))[0]
            if count > MAX_GROUPS:
                problems.append(
                    LoadProblem(
                        source.display,
                        f"{column} has {count} distinct values (at most {MAX_GROUPS}); is it the right column?",
                        column,
                    )
                )
    several_models = plan.has("model") or bool(plan.file_models)
    # The loader's words for a column filled only in part of a split; times matter only to a --period.
    missing = {"y_true": "labels elsewhere (leave y_true empty for a whole split to mark it unlabeled)",
               "timestamp": "timestamps elsewhere"}  # fmt: skip
    for column in [c for c in missing if plan.has(c) and (c == "y_true" or plan.period is not None)]:
        for model, split, n_rows, labelled in engine.rows(_split_labels_sql(plan, column)):
            if model is None or split is None or labelled in (0, n_rows):
                continue
            context = f"split {split!r}" + (f" of model {model!r}" if several_models else "")
            for file, count in engine.rows(_unlabelled_files_sql(plan, column), [model, split]):
                problems.append(
                    LoadProblem(
                        engine.display_file(file),
                        f"{column} is missing in {context}, which has {missing[column]}",
                        column,
                        _first_rows(engine, _unlabelled_in_split(plan, column), file, (model, split)),
                        "error",
                        int(count),
                    )
                )
    return problems


def _suggest_resolution(engine: _Engine, plan: _Plan, max_groups: int) -> tuple[float | None, int | None]:
    """The finest power-of-ten resolution whose exact group count fits the budget (counted on the groups)."""
    for resolution in CANDIDATE_RESOLUTIONS:
        (count,) = engine.rows(groups_at_sql(plan, resolution))[0]
        if count <= max_groups:
            return resolution, int(count)
    return None, None


def _refusal(source: _Source, groups: int, max_groups: int, suggestion) -> LoadProblem:
    resolution, estimate = suggestion
    message = (
        f"{groups:,} groups (model, split, predicted class, confidence, true class) exceed the budget of "
        f"{max_groups:,}: the confidences are too finely spread to aggregate exactly"
    )
    if resolution is not None:
        message += (
            f"; run again with --resolution {resolution:g} ({estimate:,} groups; confidences are rounded "
            "down to that grid and the report states what it can cost), or raise --max-groups"
        )
    else:
        message += "; even --resolution 0.01 leaves too many groups (are model or split the right columns?)"
    return LoadProblem(source.display, message)


def _check_options(engine: str, resolution, period, max_groups) -> None:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {list(ENGINES)}, got {engine!r}")
    if resolution is not None and not (0 < float(resolution) <= 0.5 and math.isfinite(float(resolution))):
        raise ValueError(f"resolution must lie in (0, 0.5], got {resolution}")
    if period is not None and period not in PERIODS:
        raise ValueError(f"period must be one of {list(PERIODS)}, got {period!r}")
    if int(max_groups) < 1:
        raise ValueError(f"max_groups must be at least 1, got {max_groups}")


_CSV_NOT_AS_HEADER = (
    "could not be read with the columns of its header (a row with more fields than the header, or a quote that "
    "is never closed?); `python -m valuecore validate FILE` names the rows"
)


def _engine_columns(runner: _Engine) -> list[tuple[str, str]]:
    if isinstance(runner, _DuckDB):
        return runner.describe()
    return [(f.name, f.dataType.simpleString()) for f in runner.spark.table(SOURCE_VIEW).schema.fields]


def _is_engine_error(exc: Exception) -> bool:
    return type(exc).__module__.split(".")[0].lstrip("_") in ("duckdb", "pyspark", "py4j")


def _engine_problem(source: _Source, exc: Exception, runner: _Engine | None = None) -> LoadProblem:
    """A sentence for an error the engine raised while reading a source (no engine jargon)."""
    text = str(exc)
    line = re.search(r"CSV Error on Line: (\d+)", text)
    if "max_temp_directory_size" in text:
        limit = getattr(runner, "max_temp_size", DEFAULT_MAX_TEMP_SIZE)
        message = (
            f"needs more than --max-temp-size {limit} of spill space on disk to aggregate (stopped, its spill "
            "files removed); raise --max-temp-size or --memory-limit, or give a coarser --resolution"
        )
    elif "Maximum line size" in text or "max_line_size" in text:
        message = "has a line longer than the 2 MB a CSV line may hold here (is it a CSV file with one row per line?)"
    elif line:
        message = f"could not be read as CSV at line {line.group(1)} (a row with other fields than the header?)"
    elif "java.lang.OutOfMemoryError" in text:
        # On a cluster Spark hands the groups to this process through its driver, whose Java heap holds them
        # first (at Spark's default 1g, 810,925 groups of 50 classes did not fit; issue 33; a local master's
        # executors write them instead). Not the file's fault.
        message = (
            "could not be aggregated: Spark's driver ran out of Java heap taking the groups back (raise "
            "spark.driver.memory, e.g. spark-submit --driver-memory 4g, or give a coarser --resolution)"
        )
    elif "Binder Error" in text or "not found in FROM clause" in text:
        message = _CSV_NOT_AS_HEADER if source.format == "csv" else "could not be read with its own columns"
    else:
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        message = f"could not be read ({clip_text(first, 200)})"
    return LoadProblem(source.display, message)


def _models_of(runner: _Engine, table) -> list:
    """The distinct model names of one source's groups, in order."""
    if isinstance(table, _HeldGroups):
        return runner.models_of(table)
    import pyarrow.compute as pc

    return pc.unique(table.column("model")).to_pylist()


def _check_model_names(runner: _Engine, tables, used: Sequence[_Source], problems: list[LoadProblem]) -> None:
    """Refuse two sources giving the same model name: their rows would blend into one model."""
    if len(tables) < 2:
        return
    source_of: dict[str, str] = {}
    for table, source in zip(tables, used):
        for name in _models_of(runner, table):
            if name in source_of and source_of[name] != source.display:
                problems.append(
                    LoadProblem(
                        source.display,
                        f"gives the model name {name!r}, which {source_of[name]} gives too: the two would be "
                        "blended into one model; rename one (its file, or its model column), or aggregate them "
                        "into separate files" + _same_name_apart(source_of[name], source.display),
                    )
                )
            source_of.setdefault(name, source.display)
    if any(p.severity == "error" for p in problems):
        raise AggregateRefused(problems)


def _common_classes(plans: Sequence[_Plan], problems, sources) -> tuple[str, ...]:
    """The classes of the aggregate: those of every probability source (in any column order), or
    the union of the classes of top-label sources (each found from its own labels, as the loader does)."""
    kinds = {(p.top_label or p.resolution is not None) for p in plans}
    if kinds == {True} and all(p.top_label for p in plans):
        union = {c for p in plans for c in p.classes}
        # Integer texts are canonical (``_is_integer_text``): no two name one number, so sorting by it is total.
        return tuple(sorted(union, key=int)) if all(_is_integer_text(c) for c in union) else tuple(sorted(union))
    classes = {frozenset(p.classes) for p in plans}
    if len(kinds) > 1 or len(classes) > 1:
        detail = "; ".join(f"{s}: {_short_list(p.classes)}" for s, p in zip(sources, plans))
        raise AggregateRefused(
            list(problems)
            + [LoadProblem(", ".join(sources), f"sources have different classes or run kinds ({detail}); "
                           "aggregate them into separate files")]
        )  # fmt: skip
    return plans[0].classes


_SIZE = re.compile(r"\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)\s*|\s*\d+(\.\d+)?\s*%\s*", re.IGNORECASE)


def _check_engine_options(engine: str, memory_limit: str, temp_directory, max_temp_size=DEFAULT_MAX_TEMP_SIZE) -> None:
    """Plain sentences for options DuckDB would refuse with its own words."""
    if engine == "duckdb" and not _SIZE.fullmatch(str(memory_limit)):
        raise ValueError(f"--memory-limit must be a size such as 512MB or 4GB, got {str(memory_limit)!r}")
    if engine == "duckdb" and (not _SIZE.fullmatch(str(max_temp_size)) or "%" in str(max_temp_size)):
        raise ValueError(f"--max-temp-size must be a size such as 4GB or 20GB, got {str(max_temp_size)!r}")
    if temp_directory is not None:
        folder = Path(temp_directory)
        if not folder.is_dir():
            raise ValueError(f"--temp-dir {temp_directory} is not a folder; give an existing folder to spill into")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ValueError(f"--temp-dir {temp_directory} is not writable; give a folder you can write in")
