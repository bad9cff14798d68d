"""An evaluation-log source (``lmeval:`` or ``inspect:``) read by the reader of its kind, and such sources
loaded beside run files: the one place that knows both readers (each reader knows only its own format)."""

from __future__ import annotations

from .lm_logs import LMEVAL, is_log_source, parse_log_source, read_lmeval
from .runfiles import LoadProblem, LoadReport, ModelRun

__all__ = ["load_with_logs", "read_log_source"]


def read_log_source(text: str) -> LoadReport:
    """The :class:`LoadReport` of one ``lmeval:`` or ``inspect:`` source; ValueError for bad options."""
    kind, options, path = parse_log_source(text)
    if kind == LMEVAL:
        return read_lmeval(path, options, display=text)
    from .inspect_logs import read_inspect  # needs the optional inspect_ai

    return read_inspect(path, options, display=text)


def load_with_logs(paths, load_others) -> LoadReport:
    """``load_others(paths)`` for the run files and other sources, with each evaluation-log source read here;
    one model name given twice is refused, as two files of a folder are, and the models are checked comparable."""
    from .runfiles import check_comparable

    others = [p for p in paths if not is_log_source(str(p))]
    reports = [load_others(others)] if others else []
    reports += [read_log_source(str(p)) for p in dict.fromkeys(str(p) for p in paths if is_log_source(str(p)))]
    models: dict[str, ModelRun] = {}
    problems: list[LoadProblem] = []
    for report in reports:
        problems += report.problems
        for name, run in report.models.items():
            if name in models:
                problems.append(LoadProblem(run.path, f"model name {name!r} is already taken by "
                                                      f"{models[name].path}; this one was not loaded"))
                continue
            models[name] = run
    problems += [p for p in check_comparable(models) if p not in problems]
    return LoadReport(models=models, problems=tuple(problems))
