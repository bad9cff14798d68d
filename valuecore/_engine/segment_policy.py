"""A threshold per segment, as deployed: each item's segment label picks its threshold (or, for per-class
thresholds per segment, its segment and predicted class pick it).

Numpy only (no pandas), so that the serving runtime decides with it: :func:`segment_labels` reads the labels,
:class:`SegmentPolicy` holds the thresholds and decides. Fitting lives in ``valuecore._decide.segments``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .._model.predictions import Predictions, _first_rows, _label_text
from .._model.values import float_or_infinite, shown_value
from .policy import Policy

__all__ = ["SEGMENT_RULES", "UNSEEN_SEGMENT_RULES", "SegmentPolicy", "segment_labels"]

# The rules a segment policy sets per segment: one threshold, or a threshold per predicted class.
SEGMENT_RULES = ("threshold", "class_thresholds")

# What a segment policy does with an item whose segment it has no threshold for: hand it off.
UNSEEN_SEGMENT_RULES = ("abstain",)


def _missing_objects(labels: np.ndarray) -> np.ndarray:
    def missing(value) -> bool:
        if value is None:
            return True
        if isinstance(value, (float, np.floating)):
            return not math.isfinite(value)
        return isinstance(value, str) and not value.strip()

    return np.fromiter((missing(v) for v in labels.tolist()), dtype=bool, count=labels.shape[0])


def segment_labels(segments, n: int | None = None, *, name: str = "segment") -> tuple[np.ndarray, tuple[str, ...]]:
    """Each item's segment as an index into the sorted segment names.

    Parameters
    ----------
    segments : array-like of shape (n,)
        Any hashable labels (str, int, ...); compared as text (``1``, ``1.0`` and ``"1"`` are one segment).
        Missing labels (None, NaN, empty or blank text) are refused, naming the rows.
    n : int, optional
        The run's number of items, checked.
    name : str
        What the labels are called in messages (e.g. the column name).

    Returns
    -------
    codes : ndarray of int64, shape (n,)
    names : tuple of str, sorted

    Examples
    --------
    >>> codes, names = segment_labels(["north", "south", "north", 7, 7.0])
    >>> codes.tolist(), names
    ([1, 2, 1, 0, 0], ('7', 'north', 'south'))
    """
    # A list is read item by item (numpy would turn [7, "a"] into the texts "7" and "a", but 7.0 into "7.0").
    labels = np.asarray(segments) if hasattr(segments, "dtype") else np.asarray(segments, dtype=object)
    if labels.dtype.kind in "SU":
        labels = labels.astype(object)
    if labels.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {labels.shape}")
    if n is not None and labels.shape[0] != n:
        raise ValueError(f"{name} has {labels.shape[0]} labels but the run has {n} items")
    if labels.dtype.kind == "f":
        missing = ~np.isfinite(labels)
    elif labels.dtype.kind in "iub":
        missing = np.zeros(labels.shape[0], dtype=bool)
    else:
        labels = labels.astype(object)
        missing = _missing_objects(labels)
    if missing.any():
        raise ValueError(f"{name} is empty at rows {_first_rows(missing)}: every item needs a segment")
    if labels.dtype.kind == "O":
        first: dict = {}
        raw = np.fromiter((first.setdefault(v, len(first)) for v in labels.tolist()), dtype=np.int64,
                          count=labels.shape[0])
        uniques = list(first)
    else:
        uniques, raw = np.unique(labels, return_inverse=True)
        uniques = uniques.tolist()
    texts = [_label_text(u) for u in uniques]
    names = tuple(sorted(set(texts)))
    index = {t: i for i, t in enumerate(names)}
    lookup = np.array([index[t] for t in texts], dtype=np.int64)
    return (lookup[raw.reshape(-1)] if raw.size else np.zeros(0, dtype=np.int64)), names


def _checked_threshold(threshold, where: str) -> float | None:
    if threshold is None:
        return None
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, (int, float, np.number)):
        raise ValueError(f"the threshold of {where} must be a number in [0, 1] or None, got {threshold!r}")
    number = float_or_infinite(threshold)
    if not 0 <= number <= 1:
        raise ValueError(f"the threshold of {where} must be in [0, 1] or None, got {shown_value(threshold)}")
    return number


def _pairs(given) -> dict:
    return dict(given.items() if isinstance(given, Mapping) else given)


@dataclass(frozen=True, eq=False)
class SegmentPolicy:
    """A threshold per segment: act on the predicted class iff ``confidence >= thresholds[segment]``; or, with
    ``class_thresholds``, iff ``confidence >= class_thresholds[segment][predicted class]``.

    Confidences are compared as given (no recalibration).

    Attributes
    ----------
    thresholds : tuple of (segment, float or None)
        Sorted by segment name; None: always hand off that segment. Empty for per-class thresholds.
    column : str or None
        The name of the run-file / input-frame column that holds the segment (for the JSON and serving).
    unseen : str
        What happens to an item of a segment without a threshold, one of ``UNSEEN_SEGMENT_RULES``:
        ``"abstain"`` (hand it off; the safe default, and the only rule so far).
    class_thresholds : tuple of (segment, tuple of (class, float or None)), or None
        Per-class thresholds per segment, sorted by segment name; a class a segment does not list (or lists
        with None) is never acted on in that segment. None: one threshold per segment (``thresholds``).
    """

    thresholds: tuple = ()
    column: str | None = None
    unseen: str = "abstain"
    class_thresholds: tuple | None = None

    def __post_init__(self):
        if self.unseen not in UNSEEN_SEGMENT_RULES:
            raise ValueError(f"unseen must be one of {list(UNSEEN_SEGMENT_RULES)}, got {self.unseen!r}")
        checked = [(_label_text(segment), _checked_threshold(threshold, f"segment {segment!r}"))
                   for segment, threshold in _pairs(self.thresholds).items()]
        object.__setattr__(self, "thresholds", tuple(sorted(checked)))
        if self.class_thresholds is None:
            return
        if self.thresholds:
            raise ValueError("give either a threshold per segment (thresholds) or per-class thresholds per segment "
                             "(class_thresholds), not both")
        per_segment = []
        for segment, per_class in _pairs(self.class_thresholds).items():
            if not isinstance(per_class, (Mapping, tuple, list)):
                raise ValueError(f"the class thresholds of segment {segment!r} must map each class to its threshold "
                                 f"(or None), got {per_class!r}")
            pairs = tuple((str(c), _checked_threshold(t, f"class {c!r} in segment {segment!r}"))
                          for c, t in _pairs(per_class).items())
            per_segment.append((_label_text(segment), pairs))
        object.__setattr__(self, "class_thresholds", tuple(sorted(per_segment)))

    def __eq__(self, other) -> bool:
        if not isinstance(other, SegmentPolicy):
            return NotImplemented
        return ((self.thresholds, self.column, self.unseen, self.class_thresholds)
                == (other.thresholds, other.column, other.unseen, other.class_thresholds))

    __hash__ = None

    @property
    def rule(self) -> str:
        """The rule each segment sets, one of ``SEGMENT_RULES``."""
        return "threshold" if self.class_thresholds is None else "class_thresholds"

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(s for s, _ in (self.thresholds if self.class_thresholds is None else self.class_thresholds))

    def threshold_for(self, segment) -> float | None:
        """The segment's threshold; None for always abstain, for an unseen segment, and for per-class thresholds
        (see :meth:`class_thresholds_for`)."""
        return dict(self.thresholds).get(_label_text(segment))

    def class_thresholds_for(self, segment) -> tuple | None:
        """The segment's per-class thresholds, ``((class, threshold or None), ...)``; None for an unseen segment
        and for a threshold per segment."""
        return dict(self.class_thresholds or ()).get(_label_text(segment))

    def item_thresholds(self, segments, predictions: Predictions | None = None) -> np.ndarray:
        """Each item's threshold, shape (n,); +inf where the item is handed off whatever its confidence.
        Per-class thresholds read each item's predicted class: give ``predictions`` then."""
        codes, names = segment_labels(segments, name=self.column or "segment")
        if self.class_thresholds is None:
            known = dict(self.thresholds)
            per_name = np.array([np.inf if known.get(s) is None else known[s] for s in names], dtype=np.float64)
            return per_name[codes] if codes.size else np.zeros(0)
        if predictions is None:
            raise ValueError("per-class thresholds per segment read each item's predicted class: give the predictions")
        if codes.shape[0] != predictions.n:
            raise ValueError(f"{codes.shape[0]} segment labels for a run of {predictions.n} items")
        table = np.full((len(names), predictions.n_classes), np.inf)
        for code, name in enumerate(names):
            pairs = self.class_thresholds_for(name)
            if pairs is not None:
                table[code] = Policy("class_thresholds", class_thresholds=pairs).thresholds_by_index(
                    tuple(str(c) for c in predictions.classes))
        return table[codes, predictions.y_pred] if codes.size else np.zeros(0)

    def accepts(self, predictions: Predictions, segments) -> np.ndarray:
        """Boolean (n,): the items acted on (their predicted class); the model's own abstentions never."""
        thresholds = self.item_thresholds(segments, predictions)
        if thresholds.shape[0] != predictions.n:
            raise ValueError(f"{thresholds.shape[0]} segment labels for a run of {predictions.n} items")
        return (predictions.confidence >= thresholds) & ~predictions.model_abstained

    def decide(self, predictions: Predictions, segments) -> np.ndarray:
        """Actions of shape (n,): the class index acted on, or ``n_classes`` to hand off (as ``Policy.decide``)."""
        return np.where(self.accepts(predictions, segments), predictions.y_pred, predictions.n_classes)

    def policy_for(self, segment) -> Policy:
        """The segment's rule as a plain :class:`Policy`: a threshold, or per-class thresholds (always abstain for
        an unseen segment)."""
        pairs = self.class_thresholds_for(segment)
        if pairs is not None:
            return Policy("class_thresholds", class_thresholds=pairs)
        return Policy("threshold", threshold=self.threshold_for(segment))

    def to_dict(self) -> dict:
        """``{"column", "unseen", "thresholds": {segment: threshold or None}}``, or for per-class thresholds
        ``{"column", "unseen", "rule": "class_thresholds", "class_thresholds": {segment: {class: threshold or
        None}}}``: the core of the JSON record."""
        if self.class_thresholds is None:
            return {"column": self.column, "unseen": self.unseen, "thresholds": dict(self.thresholds)}
        return {"column": self.column, "unseen": self.unseen, "rule": "class_thresholds",
                "class_thresholds": {s: dict(pairs) for s, pairs in self.class_thresholds}}

    @classmethod
    def from_dict(cls, data: Mapping) -> "SegmentPolicy":
        rule = data.get("rule", "threshold")
        if rule not in SEGMENT_RULES:
            raise ValueError(f"rule must be one of {list(SEGMENT_RULES)}, got {rule!r}")
        if rule == "class_thresholds":
            if "thresholds" in data:
                raise ValueError("a class_thresholds rule takes class_thresholds, not thresholds")
            per_class = data["class_thresholds"]
            if not isinstance(per_class, Mapping):
                raise ValueError(f"class_thresholds must map each segment to its classes' thresholds, got "
                                 f"{type(per_class).__name__}")
            return cls(column=data.get("column"), unseen=data.get("unseen", "abstain"),
                       class_thresholds=tuple(per_class.items()))
        if "class_thresholds" in data:
            raise ValueError("class_thresholds need rule 'class_thresholds'")
        return cls(tuple(dict(data["thresholds"]).items()), column=data.get("column"),
                   unseen=data.get("unseen", "abstain"))
