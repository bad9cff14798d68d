"""What the loader returns: one model's run (:class:`ModelRun`) and the report of a load (:class:`LoadReport`)."""

from __future__ import annotations

from dataclasses import dataclass, field


from ..identity import BytesDigest, DeferredDigest
from ..._model.predictions import Predictions
from ..format import LoadProblem


# Written by `python -m valuecore aggregate`: one row per group of equal (model, split,
# predicted class, confidence, true class), its weight the group's size.
AGGREGATE_NOTE = (
    "is an aggregate (one row per group of equal predictions, weight = items): thresholds, values, curves, "
    "intervals and label-free estimates are exact; the expected-value rule, temperature scaling and "
    "comparisons paired by id need each item's own row and are approximate or unavailable here"
)


class _Digest:
    """``ModelRun.sha256``: a hex digest given as text (or None), or a :class:`DeferredDigest` (a file read
    from disk, Parquet or large CSV) or :class:`BytesDigest` (bytes in memory) that the loader hands over,
    computed when first read (see ``_io/identity.py``)."""

    def __set_name__(self, owner, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, run, owner=None):
        if run is None:
            raise AttributeError(self.slot[1:])  # no default value for the dataclass field
        value = run.__dict__[self.slot]
        return value.hexdigest() if isinstance(value, (DeferredDigest, BytesDigest)) else value

    def __set__(self, run, value) -> None:
        run.__dict__[self.slot] = value


@dataclass(frozen=True, eq=False)
class ModelRun:
    """The predictions of one model, split by split.

    Attributes
    ----------
    model : str
        Model name: the file stem, or the value of the ``model`` column.
    path : str
        The file it came from, as the user named it.
    sha256 : str
        Hex SHA-256 of the file bytes (shared by all models of one file),
        computed when first read. For a file read from disk as it loads
        (Parquet, a large CSV file) it is hashed then from the file checked
        unchanged since it was loaded, and reading it raises a ``ValueError``
        naming the file when the file has changed since; bytes held in memory
        (a small CSV file, an upload) are hashed from those bytes (above 1 MiB,
        on a thread while they load).
    classes : tuple of str, length n_classes
        Class labels as text, in probability-column order.
    splits : dict of str to Predictions
        One entry per split, in order of first appearance in the file.
    aggregate : bool
        True when the file is an aggregate written by ``python -m valuecore aggregate``
        (one row per group of equal predictions, its weight the group's size): what
        needs each item's own row (the expected-value rule, temperature scaling, a
        comparison paired by id) does not apply to it.
    segments : dict of str to ndarray
        Each split's segment labels (text, shape (n,), the split's rows in order), when the run was
        loaded with a ``segment_column``; empty otherwise.
    """

    model: str
    path: str
    sha256: str = _Digest()  # type: ignore[assignment]
    classes: tuple[str, ...]
    splits: dict[str, Predictions] = field(default_factory=dict)
    aggregate: bool = False
    segments: dict = field(default_factory=dict)

    @property
    def split_names(self) -> tuple[str, ...]:
        return tuple(self.splits)

    @property
    def n_rows(self) -> int:
        """Number of rows over all splits (before weighting)."""
        return sum(p.n for p in self.splits.values())


@dataclass(frozen=True, eq=False)
class LoadReport:
    """What :func:`load_runs` found: the models that loaded and every problem.

    Attributes
    ----------
    models : dict of str to ModelRun
        The loaded models by name, in load order.
    problems : tuple of LoadProblem
        Errors and warnings, in the order they were found.
    """

    models: dict[str, ModelRun]
    problems: tuple[LoadProblem, ...] = ()

    @property
    def errors(self) -> tuple[LoadProblem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> tuple[LoadProblem, ...]:
        return tuple(p for p in self.problems if p.severity == "warning")

    @property
    def ok(self) -> bool:
        """True when nothing went wrong (warnings allowed)."""
        return not self.errors
