"""A threshold per segment, as deployed: each item's segment label picks its threshold.

Numpy only (no pandas), so that the serving runtime decides with it: :func:`segment_labels` reads the labels,
:class:`SegmentPolicy` holds the thresholds and decides. Fitting lives in ``valuecore._decide.segments``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .._model.predictions import Predictions, _first_rows, _label_text
from .policy import Policy

__all__ = ["UNSEEN_SEGMENT_RULES", "SegmentPolicy", "segment_labels"]

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


@dataclass(frozen=True, eq=False)
class SegmentPolicy:
    """A threshold per segment: act on the predicted class iff ``confidence >= thresholds[segment]``.

    Confidences are compared as given (no recalibration).

    Attributes
    ----------
    thresholds : tuple of (segment, float or None)
        Sorted by segment name; None: always hand off that segment.
    column : str or None
        The name of the run-file / input-frame column that holds the segment (for the JSON and serving).
    unseen : str
        What happens to an item of a segment without a threshold, one of ``UNSEEN_SEGMENT_RULES``:
        ``"abstain"`` (hand it off; the safe default, and the only rule so far).
    """

    thresholds: tuple
    column: str | None = None
    unseen: str = "abstain"

    def __post_init__(self):
        if self.unseen not in UNSEEN_SEGMENT_RULES:
            raise ValueError(f"unseen must be one of {list(UNSEEN_SEGMENT_RULES)}, got {self.unseen!r}")
        pairs = dict(self.thresholds.items() if isinstance(self.thresholds, Mapping) else self.thresholds)
        checked = []
        for segment, threshold in pairs.items():
            if threshold is not None:
                if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, (int, float, np.number)):
                    raise ValueError(f"the threshold of segment {segment!r} must be a number in [0, 1] or None, "
                                     f"got {threshold!r}")
                threshold = float(threshold)
                if not 0 <= threshold <= 1:
                    raise ValueError(f"the threshold of segment {segment!r} must be in [0, 1] or None, "
                                     f"got {threshold!r}")
            checked.append((_label_text(segment), threshold))
        object.__setattr__(self, "thresholds", tuple(sorted(checked)))

    def __eq__(self, other) -> bool:
        if not isinstance(other, SegmentPolicy):
            return NotImplemented
        return (self.thresholds, self.column, self.unseen) == (other.thresholds, other.column, other.unseen)

    __hash__ = None

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(s for s, _ in self.thresholds)

    def threshold_for(self, segment) -> float | None:
        """The segment's threshold; None for always abstain, and for an unseen segment."""
        return dict(self.thresholds).get(_label_text(segment))

    def item_thresholds(self, segments) -> np.ndarray:
        """Each item's threshold, shape (n,); +inf where the item is handed off whatever its confidence."""
        codes, names = segment_labels(segments, name=self.column or "segment")
        known = dict(self.thresholds)
        per_name = np.array([np.inf if known.get(s) is None else known[s] for s in names], dtype=np.float64)
        return per_name[codes] if codes.size else np.zeros(0)

    def accepts(self, predictions: Predictions, segments) -> np.ndarray:
        """Boolean (n,): the items acted on (their predicted class); the model's own abstentions never."""
        thresholds = self.item_thresholds(segments)
        if thresholds.shape[0] != predictions.n:
            raise ValueError(f"{thresholds.shape[0]} segment labels for a run of {predictions.n} items")
        return (predictions.confidence >= thresholds) & ~predictions.model_abstained

    def decide(self, predictions: Predictions, segments) -> np.ndarray:
        """Actions of shape (n,): the class index acted on, or ``n_classes`` to hand off (as ``Policy.decide``)."""
        return np.where(self.accepts(predictions, segments), predictions.y_pred, predictions.n_classes)

    def policy_for(self, segment) -> Policy:
        """The segment's rule as a plain threshold :class:`Policy` (always abstain for an unseen segment)."""
        return Policy("threshold", threshold=self.threshold_for(segment))

    def to_dict(self) -> dict:
        """``{"column", "unseen", "thresholds": {segment: threshold or None}}``: the core of the JSON record."""
        return {"column": self.column, "unseen": self.unseen, "thresholds": dict(self.thresholds)}

    @classmethod
    def from_dict(cls, data: Mapping) -> "SegmentPolicy":
        return cls(tuple(dict(data["thresholds"]).items()), column=data.get("column"),
                   unseen=data.get("unseen", "abstain"))
