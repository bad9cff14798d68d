"""Run files: read CSV or Parquet predictions into :class:`~valuecore.Predictions`.

:func:`load_runs` reads several files into :class:`ModelRun` objects (one per
model, split by split) with a :class:`LoadReport`; :func:`load_run_file`
reads one. Bad input never raises: each problem is a :class:`LoadProblem`
naming the file, the column and the rows. :func:`check_comparable` says
whether runs can be compared item by item. A run's identity, the SHA-256 of
its file, is computed when first asked for; :func:`file_sha256` gives it for
any file, remembering it as the loader does. The format is described in
``docs/run-format.md``. The everyday names are also at the top of the package.

A run file may carry a segment column (region, product, customer tier) of any name: ``load_runs(...,
segment_column=NAME)`` puts each split's labels in ``ModelRun.segments``, and :func:`read_segment_column`
reads them alone (``docs/segments.md``).

Language-model evaluation logs are runs too (``docs/language-models.md``):
:func:`read_evaluation_log` reads one source, ``lmeval:PATH`` (lm-evaluation-harness's per-sample logs) or
``inspect:PATH`` (inspect_ai's, with the optional inspect_ai installed), options in brackets, into a
:class:`LoadReport`; :func:`is_evaluation_log` tells such a source from a path and :func:`split_evaluation_log`
splits off its path (to read it elsewhere); :func:`abstention_counts`
gives a split's items, the model's own abstentions and its false abstentions.

Uses pandas (and pyarrow for Parquet).
"""

from ._io import runfiles as _runfiles
from ._io.runfiles import *  # noqa: F403  (exactly the names of _io/runfiles/__init__.py's __all__)

# The evaluation-log readers load on first use (PEP 562): reading run files does not pay for them.
_EVALUATION_LOG_NAMES = {
    "read_evaluation_log": ("eval_logs", "read_log_source"),
    "is_evaluation_log": ("lm_logs", "is_log_source"),
    "split_evaluation_log": ("lm_logs", "split_log_source"),
    "abstention_counts": ("lm_logs", "abstention_counts"),
}

__all__ = [*_runfiles.__all__, *_EVALUATION_LOG_NAMES]


def __getattr__(name: str):
    if name in _EVALUATION_LOG_NAMES:
        import importlib

        module, attribute = _EVALUATION_LOG_NAMES[name]
        value = getattr(importlib.import_module(f"valuecore._io.{module}"), attribute)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
