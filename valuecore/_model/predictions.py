"""The per-item output of one model on one split, validated once.

Every other module of ``valuecore`` takes a :class:`Predictions`; nothing
downstream re-checks shapes, NaNs or weights.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from .choices import NO_PROBA_NOTE  # with the names, importable without numpy: wording reads it

__all__ = ["Predictions", "MODEL_ABSTAINED", "NO_PROBA_NOTE"]


# The confidence recorded for an item the model itself declined (a language model's "I don't know"): it gave
# no answer to act on, so no threshold a rule can hold (every one is at least 0) accepts it, and it is never
# a candidate threshold (``presort`` leaves it out). Such an item is always a hand-off.
MODEL_ABSTAINED = -1.0


def _first_rows(mask: np.ndarray, limit: int = 5) -> str:
    rows = np.flatnonzero(mask)[:limit].tolist()
    more = int(mask.sum()) - len(rows)
    text = ", ".join(str(r) for r in rows)
    return text + (f" (and {more} more)" if more > 0 else "")


def _as_float_1d(values, name: str, n: int | None = None) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if n is not None and array.shape[0] != n:
        raise ValueError(f"{name} has {array.shape[0]} items but the run has {n}")
    return array


class ClassCodes:
    """Labels already encoded as indices into ``classes`` (int64, shape (n,)), e.g. by the
    run-file loader, which checked them: no text is made for each item and matched again.

    A plain class, not a dataclass: a dataclass's generated methods are compiled when its module is imported
    (about 1 ms), and every run file's loading imports this module."""

    __slots__ = ("_codes",)

    def __init__(self, codes: np.ndarray):
        self._codes = codes

    @property
    def codes(self) -> np.ndarray:
        return self._codes


def _as_float_matrix(values) -> np.ndarray:
    """float32 stays float32 (every float32 is exactly a float64, at half the memory); anything else float64."""
    array = np.asarray(values)
    return array if array.dtype == np.float32 else np.asarray(array, dtype=np.float64)


def _label_text(value) -> str:
    """Labels compare as text; a whole-number float (pandas' int column with gaps) is an int."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, np.generic):
        value = value.item()
    return str(value)


_SMALL_INTEGER_SPAN = 1 << 12


def _small_integer_codes(labels: np.ndarray, lookup: dict[str, int]) -> tuple[np.ndarray, bool] | None:
    """Codes of integer labels within a small span, by one table lookup per item (no hashing), and
    whether every label is a class (known from the table, without a pass over the codes); None for
    other labels. Unknown labels get -1, as in the general path."""
    if labels.dtype.kind not in "iu" or labels.size == 0:
        return None
    low, high = int(labels.min()), int(labels.max())
    if high - low >= _SMALL_INTEGER_SPAN:
        return None
    table = np.array([lookup.get(str(value), -1) for value in range(low, high + 1)], dtype=np.int64)
    # Without a -1 in the table every label is a class; with one, only a pass over the codes can tell.
    complete = bool(table.min() >= 0)
    if low >= 0 and np.array_equal(table, np.arange(low, high + 1)):  # each label its class's index: a cast
        return labels.astype(np.int64), True
    codes = table[np.subtract(labels, low, dtype=np.intp)] if low else table[labels]
    return codes, complete


def _encode_labels(labels, classes: tuple[str, ...], name: str) -> np.ndarray:
    import pandas as pd  # imported on use, so that importing the module stays light
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {labels.shape}")
    lookup = {c: i for i, c in enumerate(classes)}
    found = _small_integer_codes(labels, lookup)
    if found is not None and found[1]:  # every label is a class: no pass to look for unknown ones
        return found[0]
    result = None if found is None else found[0]
    if result is None:
        # Encode the distinct labels only, then map back: O(n) without a Python loop over items.
        codes, uniques = pd.factorize(pd.Series(labels, dtype=object if labels.dtype.kind in "OUS" else None))
        unique_codes = np.array([lookup.get(_label_text(v), -1) for v in uniques], dtype=np.int64)
        result = np.where(codes >= 0, unique_codes[np.maximum(codes, 0)] if unique_codes.size else -1, -1)
    unknown = result < 0
    if unknown.any():
        shown = pd.Series(labels[unknown]).astype(str).unique()[:5].tolist()
        raise ValueError(
            f"{name} has labels that are not among the classes {list(classes)}: "
            f"{shown} at rows {_first_rows(unknown)}"
        )
    return result.astype(np.int64, copy=False)


def _check_proba_rows(proba: np.ndarray, sum_tolerance: float) -> None:
    """Raise unless every row is finite, non-negative and sums to 1 within ``sum_tolerance``.

    One pass does the work when the matrix is valid: the row sums (a NaN or an
    infinity makes its row's sum non-finite) and the smallest entry. The
    per-entry masks that name the rows are built only when something is wrong.
    """
    if proba.shape[0] == 0:
        return
    # einsum sums short rows without numpy's per-row reduction overhead (several times faster).
    row_sum = np.einsum("ij->i", proba)
    if not np.isfinite(row_sum).all():
        bad = ~np.isfinite(proba).all(axis=1)
        if bad.any():
            raise ValueError(f"proba has NaN or infinite values at rows {_first_rows(bad)}")
    if proba.min() < 0:
        bad = (proba < 0).any(axis=1)
        raise ValueError(f"proba has negative probabilities at rows {_first_rows(bad)}")
    deviation = np.abs(row_sum - 1.0, out=row_sum)
    bad = deviation > sum_tolerance
    if bad.any():
        raise ValueError(
            f"proba rows must sum to 1 (worst deviation {deviation.max():.3g}) at rows {_first_rows(bad)}"
        )


_ROWS_PER_BLOCK = 4096
# Of the one-pass check and argmax: few calls per row (each call costs a microsecond or two), the tile copied
# from the row-major matrix _ROWS_PER_BLOCK rows at a time, which a transposing copy does at L1/L2 speed
# (10^7 x 10 float64, 2026-11-24: 123 ms for the whole pass against 155 ms copying 16,384 rows at once).
_ROWS_PER_TILE = 32768
_FEW_CLASSES = 32
_TRANSPOSE_BYTES = 81920


def _argmax_and_max(proba: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.argmax(proba, axis=1)`` (int64) and the entry there, a block of rows at a time.

    With few classes each block is copied class-major into a small tile (in cache), and
    the maximum and its first column are found by whole-row ufuncs over the tile's rows
    instead of one short argmax per item.
    """
    n, n_classes = proba.shape
    y_pred = np.empty(n, dtype=np.int64)
    confidence = np.empty(n, dtype=proba.dtype)
    tile = np.empty((n_classes, _ROWS_PER_BLOCK), dtype=proba.dtype) if n_classes <= _FEW_CLASSES else None
    equal = np.empty(_ROWS_PER_BLOCK, dtype=bool)
    for start in range(0, n, _ROWS_PER_BLOCK):
        block = proba[start : start + _ROWS_PER_BLOCK]
        rows = block.shape[0]
        where, top = y_pred[start : start + rows], confidence[start : start + rows]
        if tile is not None and _tile_argmax(block, tile[:, :rows], where, top, equal[:rows]):
            continue
        np.argmax(block, axis=1, out=where)
        top[:] = np.take_along_axis(block, where[:, None], axis=1)[:, 0]
    return y_pred, confidence


def _tile_argmax(block, columns, where, top, equal) -> bool:
    """Fill ``where`` and ``top`` for a block from its class-major copy ``columns``; False
    (nothing to trust) when a row holds NaN or its maximum is a zero, whose sign the
    maximum need not keep as the argmax does."""
    np.copyto(columns, block.T)
    return _top_of_columns(columns, where, top, equal)


def _top_of_columns(columns, where, top, equal) -> bool:
    """``where`` = first column holding each row's maximum (numpy's argmax) and ``top`` = that maximum, from
    the class-major ``columns`` (a (C, rows) array or C arrays of rows, e.g. a Parquet batch as read);
    False (nothing to trust) when a row holds NaN or its maximum is not above zero."""
    np.copyto(top, columns[0])
    for column in columns[1:]:
        np.maximum(top, column, out=top)
    if not top.min() > 0:  # NaN (the minimum is NaN then), zeros, negatives: the item-by-item argmax decides
        return False
    # Downwards, so that the first column holding the maximum is written last (argmax's tie rule), by
    # arithmetic on small integers (first -= (first - j) * equal): a masked copy branches on each item,
    # and those branches, as random as the data, mispredict (4x slower at 10 classes).
    last = len(columns) - 1
    first = np.full(len(top), last, dtype=np.min_scalar_type(-last - 1))  # holds -last-1 .. last
    step = np.empty_like(first)
    # The mask's bytes (0 or 1) read as int8: multiplied without a cast of each bool (10% faster).
    flags = equal.view(first.dtype) if first.itemsize == 1 else equal
    for j in range(last - 1, -1, -1):
        np.equal(columns[j], top, out=equal)
        np.subtract(first, j, out=step)
        np.multiply(step, flags, out=step)
        np.subtract(first, step, out=first)
    np.copyto(where, first)
    return True


def _column_sums(columns, total: np.ndarray) -> np.ndarray:
    """Row sums (float64, ``total``) of class-major ``columns``, added column after column (as the
    aggregation's SQL adds them)."""
    np.copyto(total, columns[0])
    for column in columns[1:]:
        np.add(total, column, out=total)
    return total


def _class_major(block: np.ndarray, tile: np.ndarray) -> np.ndarray:
    """The rows of ``block`` (rows, C) copied class-major into the first columns of ``tile`` (C, >= rows), a
    cache-sized chunk at a time; returns that view (C, rows)."""
    rows, n_classes = block.shape
    columns = tile[:, :rows]
    # Chunks of about 80 KB of rows: the transposing copy reads each chunk once per class, from L1/L2 (10^6 x 10,
    # 2026-11-29: float64 22-25 ms in chunks of 1,024 rows against 27-33 in chunks of 4,096; float32 alike).
    chunk = max(_TRANSPOSE_BYTES // (n_classes * block.itemsize), 64)
    for first in range(0, rows, chunk):
        np.copyto(columns[:, first : first + chunk], block[first : first + chunk].T)
    return columns


def _rows_sum_to_one(columns, total: np.ndarray, sum_tolerance: float) -> bool:
    """Whether every row (a column of ``columns``: one array per class, or a class-major tile) sums to 1
    within ``sum_tolerance``, the sums added in float64 into ``total`` class after class."""
    sums = _column_sums(columns, total)
    sums -= 1.0
    # A NaN or an infinity makes its row's sum (and an overflowing sum is) non-finite, and then the largest
    # deviation: no pass of its own (the tolerance may be infinite).
    worst = np.abs(sums, out=sums).max()
    return bool(np.isfinite(worst) and worst <= sum_tolerance)


def _checked_top(proba: np.ndarray, sum_tolerance: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(argmax, max) of a valid probability matrix in one pass over it: each block of rows is copied
    class-major into a tile in cache once, and checked (row sums, smallest entry) and reduced there;
    the maxima capped at 1 there too (see ``_from_checked_proba``).
    None at the first doubt (a bad entry, a sum off, a zero maximum, many classes): the caller then
    runs the separate checks, which name the rows, and the general argmax."""
    n, n_classes = proba.shape
    if n_classes > _FEW_CLASSES:
        return None
    y_pred = np.empty(n, dtype=np.int64)
    confidence = np.empty(n, dtype=proba.dtype)
    tile = np.empty((n_classes, _ROWS_PER_TILE), dtype=proba.dtype)
    total = np.empty(_ROWS_PER_TILE)
    equal = np.empty(_ROWS_PER_TILE, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, n, _ROWS_PER_TILE):
            block = proba[start : start + _ROWS_PER_TILE]
            rows = block.shape[0]
            columns = _class_major(block, tile)
            if not _rows_sum_to_one(columns, total[:rows], sum_tolerance) or columns.min() < 0:
                return None
            top = confidence[start : start + rows]
            if not _top_of_columns(columns, y_pred[start : start + rows], top, equal[:rows]):
                return None
            if top.max() > 1.0:
                np.minimum(top, 1.0, out=top)
    return y_pred, confidence


class _Weights:
    """``Predictions.sample_weight``: the weights given, or, for a run built without them, an array of ones
    made when first read. A run of n items would otherwise take 8n bytes of fresh memory at once (which the
    kernel zeroes page by page: on the shared VMs as long as checking the probabilities, or longer) that
    presort and the counts never read: they ask :attr:`Predictions.has_unit_weights` first."""

    def __set_name__(self, owner, name: str) -> None:
        self.slot, self.ones = "_" + name, "_ones_" + name

    def __get__(self, predictions, owner=None):
        if predictions is None:
            return None  # the dataclass field's default
        state = predictions.__dict__
        weight = state[self.slot]
        if weight is not None:
            return weight
        ones = state.get(self.ones)
        if ones is None:  # made once per run (two threads at once make two equal arrays; either is kept)
            ones = state[self.ones] = np.ones(predictions.confidence.shape[0])
        return ones

    def __set__(self, predictions, value) -> None:
        predictions.__dict__[self.slot] = value


class ColumnMatrix:
    """An (n, C) probability matrix held as blocks of rows, each block its C columns as read-only arrays (a
    Parquet file's columns as Arrow decoded them), made into one matrix only when first read (:class:`_Matrix`).
    The loader checks the columns and finds each row's argmax and max from them; the matrix itself is read only
    by what needs every probability (calibration, the expected-value rule, prior shift), and the copy would
    otherwise take every cell's bytes again in fresh memory (10^4 rows of 10 float64 classes: 0.5 ms of a 5 ms
    load, 2026-11-30)."""

    def __init__(self, blocks: list[list[np.ndarray]], dtype) -> None:
        self.blocks, self.dtype = blocks, np.dtype(dtype)
        self.shape = (sum(block[0].shape[0] for block in blocks), len(blocks[0]))

    def __getitem__(self, rows):
        """Rows ``a:b`` (a split of a file in order) as the same blocks' views; any other rows as a copy."""
        if not isinstance(rows, slice) or rows.indices(self.shape[0])[2] != 1:
            return self.matrix()[rows]
        first, last, _ = rows.indices(self.shape[0])
        if (first, last) == (0, self.shape[0]):
            return self
        blocks, start = [], 0
        for block in self.blocks:
            stop = start + block[0].shape[0]
            a, b = max(first, start), min(last, stop)
            if a < b:
                blocks.append([column[a - start : b - start] for column in block])
            start = stop
        return ColumnMatrix(blocks, self.dtype) if blocks else np.empty((0, self.shape[1]), dtype=self.dtype)

    def matrix(self) -> np.ndarray:
        """The blocks copied into one (n, C) matrix stored column by column, as the loader builds it."""
        matrix = np.empty(self.shape[::-1], dtype=self.dtype).T
        start = 0
        for block in self.blocks:
            stop = start + block[0].shape[0]
            for j, column in enumerate(block):
                matrix[start:stop, j] = column
            start = stop
        return matrix


class _Matrix:
    """``Predictions.proba``: the matrix given, or the matrix of a :class:`ColumnMatrix`, made when first read
    (two threads at once make two equal matrices; either is kept)."""

    def __set_name__(self, owner, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, predictions, owner=None):
        if predictions is None:
            return None  # the dataclass field's default
        state = predictions.__dict__
        value = state[self.slot]
        if isinstance(value, ColumnMatrix):
            value = state[self.slot] = value.matrix()
        return value

    def __set__(self, predictions, value) -> None:
        predictions.__dict__[self.slot] = value


@dataclass(frozen=True, eq=False)
class Predictions:
    """Validated per-item output of one model on one split.

    Build it with :meth:`from_proba` or :meth:`from_top_label`; the
    constructor itself does not validate.

    Attributes
    ----------
    classes : tuple of str, length n_classes
        Class labels as text, in the order of the probability columns.
    y_pred : ndarray of shape (n,), int64
        Predicted class, an index into ``classes`` (argmax of ``proba``).
    confidence : ndarray of shape (n,), float64 in [0, 1]
        Confidence of the predicted class (max of ``proba``).
    y_true : ndarray of shape (n,), int64, or None
        True class as an index into ``classes``; None for an unlabeled split.
    proba : ndarray of shape (n, n_classes) or None
        Class probabilities; None when only the top label is known.
    logits : ndarray of shape (n, n_classes) or None
    sample_weight : ndarray of shape (n,), float64, non-negative
        Each item counts this many times (ones when not given: then made when
        first read, and :attr:`has_unit_weights` is True).
    ids, timestamp : ndarray of shape (n,) or None
        Optional item identifiers (to pair models) and times (to chunk).
    has_model_abstentions : bool
        True when some items are the model's own abstentions (``confidence`` is
        :data:`MODEL_ABSTAINED` there; see :attr:`model_abstained`): every rule hands them over.
    """

    classes: tuple[str, ...]
    y_pred: np.ndarray
    confidence: np.ndarray
    y_true: np.ndarray | None = None
    proba: np.ndarray | None = _Matrix()  # type: ignore[assignment]
    logits: np.ndarray | None = None
    sample_weight: np.ndarray | None = _Weights()  # type: ignore[assignment]
    ids: np.ndarray | None = None
    timestamp: np.ndarray | None = None
    has_model_abstentions: bool = False

    # ------------------------------------------------------------------ build
    @classmethod
    def from_proba(
        cls,
        proba,
        y_true=None,
        *,
        classes: Sequence | None = None,
        sample_weight=None,
        logits=None,
        ids=None,
        timestamp=None,
        sum_tolerance: float = 1e-3,
    ) -> "Predictions":
        """Build from class probabilities of shape ``(n, n_classes)``.

        ``y_true`` holds labels (anything whose ``str`` is among ``classes``,
        default ``"0" .. "C-1"``). Rows must be finite, non-negative and sum
        to 1 within ``sum_tolerance``; they are not renormalised silently.

        Examples
        --------
        >>> p = Predictions.from_proba([[0.9, 0.1], [0.4, 0.6]], y_true=[0, 0])
        >>> p.y_pred.tolist(), p.confidence.tolist(), p.correct.tolist()
        ([0, 1], [0.9, 0.6], [True, False])
        """
        proba = _as_float_matrix(proba)
        if proba.ndim != 2:
            raise ValueError(f"proba must have shape (n, n_classes), got {proba.shape}")
        n, n_classes = proba.shape
        if n_classes < 2:
            raise ValueError(f"proba needs at least 2 class columns, got {n_classes}")
        classes = cls._classes(classes, n_classes)
        top = _checked_top(proba, sum_tolerance)
        if top is None:
            _check_proba_rows(proba, sum_tolerance)  # raises, naming the rows, unless only the fast path doubted
        if logits is not None:
            logits = np.asarray(logits, dtype=np.float64)
            if logits.shape != proba.shape:
                raise ValueError(f"logits shape {logits.shape} differs from proba shape {proba.shape}")
            bad = ~np.isfinite(logits).all(axis=1)
            if bad.any():
                raise ValueError(f"logits has NaN or infinite values at rows {_first_rows(bad)}")
        return cls._from_checked_proba(proba, y_true, classes, logits, sample_weight, ids, timestamp, top,
                                       capped=top is not None)

    @classmethod
    def _from_checked_proba(
        cls, proba, y_true, classes, logits, sample_weight, ids, timestamp, top=None, capped=False
    ) -> "Predictions":
        """From a probability matrix (n, C) already checked (finite, non-negative, rows
        summing to 1), e.g. by the run-file loader, which checks it column by column:
        a second check would only cost memory and time. ``top``: its (argmax, max) when
        already known (found while checking), else found here; ``capped``: that max is
        at most 1 already (the loader caps it while checking)."""
        y_pred, confidence = _argmax_and_max(proba) if top is None else top
        # A row within sum_tolerance of 1 can hold 1.00000012 (float32 round-off); a threshold
        # read off the confidences must never exceed 1.
        if not capped:
            np.minimum(confidence, 1.0, out=confidence)
        return cls._finish(classes, y_pred, confidence, y_true, proba, logits, sample_weight, ids, timestamp)

    @classmethod
    def from_top_label(
        cls,
        y_pred,
        confidence,
        y_true=None,
        *,
        classes: Sequence,
        sample_weight=None,
        ids=None,
        timestamp=None,
        model_abstained=None,
    ) -> "Predictions":
        """Build from the predicted label and its confidence only.

        Features that need the full probability vector (temperature scaling,
        the expected-value rule) are unavailable for such a run.

        ``model_abstained`` (bool, shape (n,)) marks the items the model itself
        declined: their ``y_pred`` (e.g. its top choice, to count false
        abstentions) is kept, their confidence becomes :data:`MODEL_ABSTAINED`,
        and every rule hands them over.

        Examples
        --------
        >>> p = Predictions.from_top_label(["a", "b"], [0.7, 0.55], ["a", "a"], classes=["a", "b"])
        >>> p.correct.tolist(), p.has_proba
        ([True, False], False)
        """
        classes = cls._classes(classes, None)
        confidence = _as_float_1d(confidence, "confidence")
        n = confidence.shape[0]
        bad = ~np.isfinite(confidence)
        if bad.any():
            raise ValueError(f"confidence has NaN or infinite values at rows {_first_rows(bad)}")
        bad = (confidence < 0) | (confidence > 1)
        if bad.any():
            raise ValueError(f"confidence must lie in [0, 1]; it does not at rows {_first_rows(bad)}")
        y_pred_codes = _encode_labels(y_pred, classes, "y_pred")
        if y_pred_codes.shape[0] != n:
            raise ValueError(f"y_pred has {y_pred_codes.shape[0]} items but confidence has {n}")
        declined = None
        if model_abstained is not None:
            declined = np.asarray(model_abstained)
            if declined.dtype != bool or declined.shape != (n,):
                raise ValueError(f"model_abstained must be a boolean mask of shape ({n},), got "
                                 f"{declined.dtype} {declined.shape}")
            confidence = np.where(declined, MODEL_ABSTAINED, confidence)
        finished = cls._finish(classes, y_pred_codes, confidence, y_true, None, None, sample_weight, ids, timestamp)
        return replace(finished, has_model_abstentions=True, sample_weight=finished._given_weights) \
            if declined is not None and declined.any() else finished

    @staticmethod
    def _classes(classes, n_classes: int | None) -> tuple[str, ...]:
        if classes is None:
            if n_classes is None:
                raise ValueError("classes must be given")
            return tuple(str(i) for i in range(n_classes))
        classes = tuple(str(c) for c in classes)
        if n_classes is not None and len(classes) != n_classes:
            raise ValueError(f"{len(classes)} classes given for {n_classes} probability columns")
        if len(set(classes)) != len(classes):
            raise ValueError(f"classes must be distinct, got {list(classes)}")
        if len(classes) < 2:
            raise ValueError(f"a classifier needs at least 2 classes, got {list(classes)}")
        return classes

    @classmethod
    def _finish(cls, classes, y_pred, confidence, y_true, proba, logits, sample_weight, ids, timestamp):
        n = confidence.shape[0]
        y_true_codes = None
        if isinstance(y_true, ClassCodes):
            y_true_codes = y_true.codes
        elif y_true is not None:
            y_true_codes = _encode_labels(y_true, classes, "y_true")
        if y_true_codes is not None:
            if y_true_codes.shape[0] != n:
                raise ValueError(f"y_true has {y_true_codes.shape[0]} items but the run has {n}")
        if sample_weight is None:
            weight = None  # unit weights, made only if read
        else:
            weight = _as_float_1d(sample_weight, "sample_weight", n)
            bad = ~np.isfinite(weight)
            if bad.any():
                raise ValueError(f"sample_weight has NaN or infinite values at rows {_first_rows(bad)}")
            bad = weight < 0
            if bad.any():
                raise ValueError(f"sample_weight must be non-negative; it is negative at rows {_first_rows(bad)}")
        if ids is not None:
            ids = np.asarray(ids)
            if ids.shape != (n,):
                raise ValueError(f"ids has shape {ids.shape}, expected ({n},)")
        if timestamp is not None:
            timestamp = np.asarray(timestamp, dtype="datetime64[ns]")
            if timestamp.shape != (n,):
                raise ValueError(f"timestamp has shape {timestamp.shape}, expected ({n},)")
        return cls(
            classes=classes,
            y_pred=y_pred,
            confidence=np.ascontiguousarray(confidence, dtype=np.float64),
            y_true=y_true_codes,
            proba=proba,
            logits=logits,
            sample_weight=weight,
            ids=ids,
            timestamp=timestamp,
        )

    # ------------------------------------------------------------- properties
    @property
    def n(self) -> int:
        """Number of rows (items before weighting)."""
        return int(self.confidence.shape[0])

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def has_labels(self) -> bool:
        return self.y_true is not None

    @property
    def has_proba(self) -> bool:
        return self.__dict__["_proba"] is not None  # not made to say so

    @property
    def model_abstained(self) -> np.ndarray:
        """Boolean array of shape (n,): the items the model itself declined (always handed over)."""
        if not self.has_model_abstentions:
            return np.zeros(self.n, dtype=bool)
        return self.confidence == MODEL_ABSTAINED

    @property
    def has_unit_weights(self) -> bool:
        """True when built without ``sample_weight`` (every item counts once): code that only counts
        items may then skip the weights (``sample_weight`` still reads as ones)."""
        return self._given_weights is None

    @property
    def _given_weights(self) -> np.ndarray | None:
        """``sample_weight`` as given (None for unit weights): a copy made by ``replace`` keeps them unmade."""
        return self.__dict__["_sample_weight"]

    @property
    def total_weight(self) -> float:
        """Weighted number of items, the N of every per-item figure."""
        return float(self.n) if self.has_unit_weights else float(self.sample_weight.sum())

    @property
    def correct(self) -> np.ndarray:
        """Boolean array of shape (n,): the predicted class is the true one."""
        self.require_labels("correctness")
        return self.y_pred == self.y_true

    @property
    def accuracy(self) -> float:
        """Weighted accuracy of plain argmax (no rejection); NaN when empty."""
        total = self.total_weight
        if total <= 0:
            return float("nan")
        return float(self.sample_weight[self.correct].sum() / total)

    @property
    def macro_f1(self) -> float:
        """Macro-averaged F1 of plain argmax (no rejection); NaN when empty.

        The unweighted mean over all ``n_classes`` of each class's weighted
        ``F1 = 2 TP / (2 TP + FP + FN)``; a class never true nor predicted
        counts 0 (``sklearn.metrics.f1_score(..., average="macro",
        zero_division=0)`` with every class as a label).
        """
        self.require_labels("the macro F1")
        if self.total_weight <= 0:
            return float("nan")
        n_classes, weight, correct = self.n_classes, self.sample_weight, self.correct
        true_positive = np.bincount(self.y_true[correct], weights=weight[correct], minlength=n_classes)
        # 2 TP + FP + FN = (items truly of the class) + (items predicted as it).
        denominator = np.bincount(self.y_true, weights=weight, minlength=n_classes) + np.bincount(
            self.y_pred, weights=weight, minlength=n_classes
        )
        f1 = np.divide(2 * true_positive, denominator, out=np.zeros(n_classes), where=denominator > 0)
        return float(f1.mean())

    def require_labels(self, what: str) -> None:
        if self.y_true is None:
            raise ValueError(f"{what} needs true labels (y_true), but this split is unlabeled")

    def require_proba(self, what: str) -> None:
        if not self.has_proba:
            raise ValueError(f"{what} {NO_PROBA_NOTE}")

    def subset(self, rows) -> "Predictions":
        """The same predictions restricted to ``rows`` (a boolean mask or indices)."""
        take = lambda a: None if a is None else a[rows]  # noqa: E731
        return replace(
            self,
            y_pred=self.y_pred[rows],
            confidence=self.confidence[rows],
            y_true=take(self.y_true),
            proba=take(self.proba),
            logits=take(self.logits),
            sample_weight=None if self.has_unit_weights else self.sample_weight[rows],  # ones stay unmade
            ids=take(self.ids),
            timestamp=take(self.timestamp),
        )

    def with_proba(self, proba) -> "Predictions":
        """A copy with new probabilities (e.g. recalibrated), argmax recomputed."""
        if self.has_model_abstentions:
            raise ValueError("a run with the model's own abstentions has top-label confidences only")
        fresh = Predictions.from_proba(proba, classes=self.classes, sample_weight=self._given_weights)
        return replace(self, proba=fresh.proba, y_pred=fresh.y_pred, confidence=fresh.confidence, logits=None,
                       sample_weight=self._given_weights)

    def with_confidence(self, confidence: np.ndarray) -> "Predictions":
        """A copy with a recalibrated top-label confidence; predicted labels unchanged.

        The probability vector and logits are dropped: they no longer agree
        with the new confidence, and label-free estimation or the
        expected-value rule must not silently read the stale ones.
        """
        confidence = np.clip(_as_float_1d(confidence, "confidence", self.n), 0.0, 1.0)
        if self.has_model_abstentions:  # a recalibration maps answers; what the model declined stays declined
            confidence = np.where(self.model_abstained, MODEL_ABSTAINED, confidence)
        return replace(self, confidence=confidence, proba=None, logits=None,
                       sample_weight=self._given_weights)

    def normalised_proba(self) -> np.ndarray:
        """``proba`` with rows rescaled to sum to exactly 1, shape (n, n_classes).

        Input rows may deviate from 1 within the loader's tolerance; expected
        counts must still add up to the number of items.
        """
        self.require_proba("this computation")
        totals = self.proba.sum(axis=1, keepdims=True)
        return self.proba / np.where(totals > 0, totals, 1.0)
