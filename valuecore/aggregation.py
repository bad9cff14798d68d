"""Prediction logs too large for memory, reduced to an ordinary run file.

:func:`aggregate` reads Parquet or CSV files, folders, globs or a DuckDB table
(or a Spark catalog table) and writes one row per (model, split, predicted
class, true class, confidence[, period]) with the summed ``weight`` and the
group's mean probability vector, as an :class:`AggregateResult`; it raises
:class:`AggregateRefused` with the loader's messages when the source is bad or
the groups exceed the budget. ``PERIODS`` are the time buckets it knows and
``AGGREGATE_METADATA_KEY`` the Parquet metadata key that records its settings.
:func:`aggregate_sql` is the one query both engines run (built with sqlglot,
written in the plan's dialect; an aggregation with DuckDB builds the same text
without sqlglot), :func:`check_sql` the loader's checks in SQL,
and :func:`resolution_bound` bounds what rounding confidences down to a grid
can cost against the exact answer.
:func:`bytes_on_disk` is how much of the disk a folder's files hold (what
``aggregate`` reports as spilled, sparse files counted by their blocks).

DuckDB runs in-process; PySpark (``engine="spark"``) is an optional install
(``requirements-spark.txt``). Both are imported only when used.
"""

from ._io import aggregate as _aggregate
from ._io.aggregate import *  # noqa: F403  (exactly the names of _io/aggregate/__init__.py's __all__)

__all__ = list(_aggregate.__all__)
