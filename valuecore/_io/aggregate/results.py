"""What an aggregation returns or refuses with, and the names of the views every engine exposes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


from ..format import LoadProblem


AGGREGATE_METADATA_KEY = b"valuecore.aggregate"
CANDIDATE_RESOLUTIONS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
# The view every engine exposes: the source's columns plus where each row comes from.
SOURCE_VIEW = "source_rows"
FILE_COLUMN = "__file"
ROW_COLUMN = "__row"  # 0-based data row within its file; NULL when the engine cannot tell
# What the grouping reads: the same rows, where each comes from only if the grouping asks (Spark's Parquet scan
# otherwise reads every row's index and file path for a grouping that never uses them).
CELLS_VIEW = "source_cells"


class AggregateRefused(ValueError):
    """The source cannot be aggregated as asked; ``problems`` say why (file, column, rows)."""

    def __init__(self, problems: Sequence[LoadProblem]):
        self.problems = tuple(problems)
        errors = [p for p in self.problems if p.severity == "error"] or list(self.problems)
        super().__init__("; ".join(str(p) for p in errors[:3]))


@dataclass(frozen=True)
class AggregateResult:
    """What :func:`aggregate` wrote.

    Attributes
    ----------
    path : str
        The aggregate Parquet file.
    engine : {"duckdb", "spark"}
    source_rows : int
        Rows read from the sources.
    groups : int
        Rows of the aggregate.
    resolution : float or None
        Confidences were rounded down to multiples of this; None = exact.
    period : str or None
        Time bucket of the ``timestamp`` column, if any.
    classes : tuple of str
    kind : {"proba", "top_label"}
        Whether the aggregate keeps mean probability vectors.
    seconds : float
        Wall time.
    problems : tuple of LoadProblem
        Warnings (errors refuse instead).
    spilled_bytes : int
        Peak bytes on disk of DuckDB's spill folder, sampled every 0.1 s
        (0 when nothing spilled, and with Spark). Not in the file's metadata.
    """

    path: str
    engine: str
    source_rows: int
    groups: int
    resolution: float | None
    period: str | None
    classes: tuple[str, ...]
    kind: str
    seconds: float
    problems: tuple[LoadProblem, ...] = ()
    spilled_bytes: int = 0  # peak size of DuckDB's spill folder (sampled); 0 for Spark

    @property
    def metadata(self) -> dict:
        return {
            "format": 1,
            "engine": self.engine,
            "source_rows": self.source_rows,
            "groups": self.groups,
            "resolution": self.resolution,
            "period": self.period,
            "kind": self.kind,
            "classes": list(self.classes),
        }
