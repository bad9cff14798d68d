"""One file parsed into runs: its columns read once, then cut into one run per (model, split)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..columns import (
    SPECS,
)
from ..fastload import in_background
from ..identity import BytesDigest, DeferredDigest, stat_key
from ..._model.predictions import ClassCodes, Predictions
from ..._engine.sorting import _small_ints
from ..lazy import LazyModule
from ..format import (
    DEFAULT_SPLIT, LoadProblem, _FileProblems, _RunKind, _nfc, _run_kind, _warn_unknown_columns, max_file_bytes,
    too_large_message,
)
from .results import ModelRun
from .reading import _Layout, _disk_path, _read_table, _release_arrow_memory, _sha256
from .cells import (
    _MISSING, _confidence, _group_column, _ids, _infer_classes, _label_column, _logits, _probabilities, _timestamps,
    _weights,
)
pd = LazyModule("pandas")  # imported on first use


def _load_bytes(
    data: bytes, display: str, *, sum_tolerance: float, warn_tolerance: float, splits
) -> tuple[list[ModelRun], list[LoadProblem], bool]:
    """Parse and check one file. Returns (runs, problems, classes_were_inferred).

    Any error in a file means none of its models is loaded: a half-loaded
    multi-model file would make comparisons silently incomplete.
    """
    problems = _FileProblems(display)
    # A Parquet file, or a larger CSV one, is read from disk (``data`` stands for its path), anything else from
    # its bytes.
    path = _disk_path(data)
    info = None if path is None else path.stat()
    size = len(data) if info is None else info.st_size
    if size > max_file_bytes():
        problems.add(too_large_message(size))
        return [], problems.items, False
    try:
        runs, inferred = _parse_file(data, display, problems, sum_tolerance, warn_tolerance, splits,
                                     None if info is None else (path, stat_key(info)))  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - the loader promises no traceback for any input
        problems.add(f"could not be loaded ({type(exc).__name__}: {exc})")
        runs, inferred = [], False
    if problems.has_errors:
        runs = []
    return runs, problems.items, inferred


def _parse_file(data, display, problems: _FileProblems, sum_tolerance, warn_tolerance, splits, key=None):
    """Read one file, check every column, then cut it into runs by model and split.

    ``key``: (path, :func:`stat_key`) of a file read from disk (``data`` stands for it), taken before reading it.
    """
    table = _read_table(data, display, problems)
    if table is None:
        return [], False
    frame = table.frame
    if len(frame) == 0:
        problems.add("file has a header but no data rows")
        return [], False
    _warn_unknown_columns(table.columns, problems)
    kind = _run_kind(table.columns, problems)
    if kind is None:
        return [], False
    # A file on disk, and small bytes in memory, are hashed only when the digest is asked for; larger bytes while
    # the columns convert (held until asked for, they would keep the file's bytes alive).
    if key is not None:
        sha = lambda: DeferredDigest(key[0], display, key[1])  # noqa: E731
    elif len(data) <= _HASHED_INLINE_BYTES:
        sha = lambda: BytesDigest(data)  # noqa: E731
    else:
        sha = in_background(lambda: _sha256(data))
    parsed = _parse_columns(frame, kind, display, problems, sum_tolerance, warn_tolerance, table.floats,
                            table.classes)
    aggregate, arrow = table.aggregate, table.arrow
    del frame, table  # the file's columns are converted: free them before the splits are cut
    if arrow:
        _release_arrow_memory()
    if key is not None and not _unchanged(*key):
        problems.add("changed while it was being read; load it again")
    if parsed is None or problems.has_errors:
        return [], kind.inferred
    return _build_runs(parsed, display, sha(), problems, splits, aggregate), kind.inferred


# Bytes in memory up to which they are held and hashed when the digest is first asked for, on the asking thread
# (a thread's start and hand-off cost a fresh process 0.15-0.4 ms of CPU, what hashing 0.3-0.7 MB does, SHA-256
# at about 1.7 GB/s, and on a busy machine the thread waits for a core anyway); larger ones on a thread of
# their own while the columns convert.
_HASHED_INLINE_BYTES = 1 << 20


def _unchanged(path: Path, key: tuple) -> bool:
    """Whether the file at ``path`` is still the one whose :func:`stat_key` was ``key``."""
    try:
        return stat_key(path.stat()) == key
    except OSError:
        return False


class _ParsedColumns:
    """Every column of one file, checked, as arrays (n,) with the rows ordered by (model, split).

    ``groups`` maps each (model index, split index) to (its file rows, for problems; its
    rows of the arrays, a slice); ``y_true_codes``, ``proba``, ``logits``, ``y_pred_codes``,
    ``confidence``, ``weight``, ``timestamp`` and ``ids`` are arrays or None.

    A plain slotted class, not a dataclass: a private record that nothing compares, hashes or copies, on
    every run file's path, where a dataclass costs about a millisecond of each fresh process.
    """

    __slots__ = ("classes", "groups", "model_names", "split_names", "y_true_codes", "proba", "logits",
                 "y_pred_codes", "confidence", "weight", "timestamp", "ids")

    def __init__(self, classes: tuple[str, ...], groups: dict, model_names: list[str], split_names: list[str],
                 y_true_codes, proba, logits, y_pred_codes, confidence, weight, timestamp, ids):
        self.classes, self.groups, self.model_names, self.split_names = classes, groups, model_names, split_names
        self.y_true_codes, self.proba, self.logits, self.y_pred_codes = y_true_codes, proba, logits, y_pred_codes
        self.confidence, self.weight, self.timestamp, self.ids = confidence, weight, timestamp, ids

    @property
    def class_text(self) -> np.ndarray:
        return np.asarray(self.classes, dtype=object)


def _parse_columns(frame, kind: _RunKind, display, problems: _FileProblems, sum_tolerance, warn_tolerance, floats,
                   recorded=None):
    """Check and convert every column; None when the classes cannot be known.

    ``floats``: None, or the reader of the file's float columns that ``frame`` lacks
    (the probabilities and logits of a Parquet file, read straight into their matrices). ``recorded``: the classes
    an aggregate records, or None (``_infer_classes``).
    """
    n = len(frame)
    model_codes, model_names = _group_column(frame, "model", _display_stem(display), problems, n)
    split_codes, split_names = _group_column(frame, "split", DEFAULT_SPLIT, problems, n)
    if "model" in frame.columns or "split" in frame.columns:
        layout = _layout(model_codes, split_codes, len(split_names))
    else:  # one model, one split: the file's order is theirs
        layout = _Layout(None, None, np.zeros(1, dtype=np.int64), {(0, 0): (0, n)})
    del model_codes, split_codes
    order = layout.order
    weight = _weights(frame, problems)
    timestamp = _timestamps(frame, problems)
    ids = _ids(frame)
    classes = kind.classes if kind.classes is not None else _infer_classes(frame, problems, recorded)
    if classes is None:
        return None
    y_true_codes = _label_column(frame, "y_true", classes, problems)
    # Every column is put in (model, split) order once, so that each split is a view
    # (a slice), not a copy; Parquet probabilities are read into that order directly.
    laid_out = floats is not None and not kind.inferred
    groups = {key: (_rows(order, a, b), slice(a, b)) for key, (a, b) in layout.bounds.items()}
    if kind.inferred:
        proba = logits = None
        y_pred_codes, confidence = _top_label_columns(frame, kind, classes, problems)
    else:
        proba, logits, top = _probability_columns(
            frame, kind, classes, problems, sum_tolerance, warn_tolerance, floats, layout if laid_out else None
        )
        # For a full-probability run these hold the argmax and max found while checking (or None).
        y_pred_codes, confidence = (None, None) if top is None else top
        if not laid_out:
            proba, logits = _in_order(proba, order), _in_order(logits, order)
    y_true_codes, y_pred_codes, confidence = (_in_order(v, order) for v in (y_true_codes, y_pred_codes, confidence))
    weight, timestamp, ids = (_in_order(v, order) for v in (weight, timestamp, ids))
    return _ParsedColumns(
        classes, groups, model_names, split_names, y_true_codes, proba, logits,
        y_pred_codes, confidence, weight, timestamp, ids,
    )  # fmt: skip


def _in_order(values: np.ndarray | None, order: np.ndarray | None) -> np.ndarray | None:
    """Rows of ``values`` (file order) in the (model, split) order."""
    return values if values is None or order is None else values[order]


def _rows(order: np.ndarray | None, start: int, stop: int):
    """File rows start:stop of the (model, split) order: a slice when the file is already in that order."""
    return slice(start, stop) if order is None else order[start:stop]


def _probability_columns(
    frame, kind: _RunKind, classes, problems: _FileProblems, sum_tolerance, warn_tolerance, floats=None, layout=None
):
    """(proba, logits, top) of a full-probability run; a given y_pred is only compared.

    With ``floats`` the matrices are read from the file with their rows in the
    ``layout`` order; problems still name file rows. ``top``: each row's (argmax, max)
    in file order, found while checking, or None.
    """
    order = None
    if floats is None:
        proba, top = _probabilities(frame, list(kind.proba_columns), problems, sum_tolerance, warn_tolerance)
        logits = _logits(frame, list(kind.logit_columns), classes, problems)
    else:
        order = layout.order
        proba, top = floats.probabilities(list(kind.proba_columns), layout, problems, sum_tolerance, warn_tolerance)
        logits = floats.logits(list(kind.logit_columns), classes, layout, problems)
        floats.close()
    if "y_pred" in frame.columns:
        y_pred_given = _label_column(frame, "y_pred", classes, problems)
        if proba is not None and y_pred_given is not None:
            if top is not None:  # both in file order
                disagree = (y_pred_given >= 0) & (y_pred_given != top[0])
            else:
                if order is not None:
                    y_pred_given = y_pred_given[order]
                disagree = (y_pred_given >= 0) & (y_pred_given != np.argmax(proba, axis=1))
                if order is not None:
                    disagree = order[disagree]
            if disagree.any():
                problems.add(
                    "y_pred differs from the most probable proba_ column; predictions are "
                    "taken from the probabilities and y_pred/confidence are ignored",
                    column="y_pred",
                    where=disagree,
                    severity="warning",
                )
    return proba, logits, top


def _top_label_columns(frame, kind: _RunKind, classes, problems: _FileProblems):
    """(y_pred codes, confidence) of a top-label run."""
    if kind.logit_columns:
        problems.add(
            "logit_ columns are ignored in a top-label run (they need proba_ columns)",
            column=kind.logit_columns[0],
            severity="warning",
        )
    y_pred_codes = _label_column(frame, "y_pred", classes, problems)
    if y_pred_codes is not None:
        missing = y_pred_codes == _MISSING
        if missing.any():
            problems.add(SPECS["y_pred"].rules[0].text("y_pred"), column="y_pred", where=missing)
    return y_pred_codes, _confidence(frame, problems)


def _build_runs(parsed: _ParsedColumns, display, sha, problems: _FileProblems, splits, aggregate: bool):
    """One :class:`ModelRun` per model of the file, each holding its requested splits."""
    runs = []
    groups = parsed.groups
    several_models = len(parsed.model_names) > 1
    # Splits left out must not keep a whole laid-out matrix alive through views of it.
    copy = splits is not None and any(parsed.split_names[s] not in splits for _, s in groups)
    weightless: set[str] = set()  # models with a split left out for its weights
    for model_index, model in enumerate(parsed.model_names):
        model_splits: dict[str, Predictions] = {}
        for split_index, split in enumerate(parsed.split_names):
            if splits is not None and split not in splits:
                continue
            rows = groups.get((model_index, split_index))
            if rows is None:
                continue  # this model has no rows in that split; reported below if asked for
            context = _context(split, model if several_models else None)
            prediction = _build_split(*rows, context, problems, parsed, copy)
            if prediction is _NO_ITEM:
                weightless.add(model)
            elif prediction is not None:
                model_splits[split] = prediction
        if splits is not None and not _report_missing_splits(model, model_splits, splits, problems):
            continue
        if not model_splits and model in weightless:
            if several_models and not problems.has_errors:  # its splits left out for their weights (warned above)
                problems.add(f"model {model!r} is left out: every split's weights are all zero", column="weight",
                             severity="warning")
            continue
        runs.append(ModelRun(model, display, sha, parsed.classes, model_splits, aggregate))
    if not runs and weightless and not problems.has_errors:  # every split was left out for its weights
        problems.add("the file has no item to read: every split's weights are all zero", column="weight")
    return runs


def _report_missing_splits(model, model_splits, splits, problems: _FileProblems) -> bool:
    """Warn about requested splits a model lacks; False when it has none of them."""
    for wanted in splits:
        if wanted not in model_splits:
            problems.add(f"model {model!r} has no rows in split {wanted!r}", column="split", severity="warning")
    if not model_splits:
        problems.add(f"model {model!r} has no rows in the requested splits {list(splits)}")
        return False
    return True


def _display_stem(display: str) -> str:
    """Model name implied by a file name: its stem (``runs/logreg.csv`` -> ``logreg``)."""
    return _nfc(Path(display).stem)  # as a model column's names: é.csv and e\u0301.csv are one model


def _layout(model_codes: np.ndarray, split_codes: np.ndarray, n_splits: int) -> _Layout:
    key = model_codes * n_splits + split_codes
    if key.size == 0 or (key[1:] >= key[:-1]).all():
        order = None
        sorted_keys = key
    else:
        # Stable: rows stay in file order within a group; a radix sort when the keys are small.
        radix = key if key.min() < 0 else _small_ints(key, int(key.max()) + 1)
        order = np.argsort(radix, kind="stable")
        sorted_keys = key[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    ends = np.r_[starts[1:], key.size]
    distinct = sorted_keys[starts]
    group = None
    if order is not None:
        # Keys are below models x splits (at most MAX_GROUPS ** 2): a lookup table, not a search.
        shift = int(distinct[0])
        # int16 when it can: half the memory, and numpy sorts it by radix (see _FloatColumns).
        small = np.int16 if distinct.size <= np.iinfo(np.int16).max else np.int32
        lookup = np.zeros(int(distinct[-1]) - shift + 1, dtype=small)
        lookup[distinct - shift] = np.arange(distinct.size, dtype=small)
        group = lookup[key - shift if shift else key]
    bounds = {
        (int(k) // n_splits, int(k) % n_splits): (int(a), int(b)) for k, a, b in zip(distinct, starts, ends)
    }
    return _Layout(order, group, starts, bounds)


# What _build_split gives for a split that holds no item (all its weights zero): left out, not refused.
_NO_ITEM = object()


def _context(split: str, model: str | None) -> str:
    return f"split {split!r}" + (f" of model {model!r}" if model is not None else "")


def _build_split(file_rows, rows: slice, context, problems: _FileProblems, parsed: _ParsedColumns, copy: bool):
    """Make the :class:`Predictions` of one split of one model: None when refused (the problems say why),
    ``_NO_ITEM`` when left out for holding no item (its weights all zero).

    ``file_rows``: its rows in the file (positions or a slice), for problems; ``rows``:
    its rows of ``parsed``'s arrays, copied when ``copy`` (else views of them).
    """

    def absolute(mask):
        """File row positions of a mask over this split's rows."""
        return np.flatnonzero(mask) + file_rows.start if isinstance(file_rows, slice) else file_rows[mask]

    if copy:
        rows = np.arange(rows.start, rows.stop)  # indexing by positions copies
    ok, y_true = _split_labels(parsed, rows, context, absolute, problems)
    if not ok:
        return None
    ok, split_time = _split_times(parsed.timestamp, rows, context, absolute, problems)
    if not ok:
        return None
    ok, split_ids = _split_ids(parsed.ids, rows, context, absolute, problems)
    if not ok:
        return None
    split_weight = None if parsed.weight is None else parsed.weight[rows]
    if split_weight is not None and not (split_weight > 0).any():
        # A weight of 0 leaves an item out, so such a split holds no item: there is nothing to tune on, value or
        # compare (an interval's mean is undefined), as for a split the file does not have.
        problems.add(f"{context} is left out: all its weights are zero (a weight of 0 leaves an item out)",
                     column="weight", severity="warning", where=absolute(np.ones(len(split_weight), dtype=bool)))
        return _NO_ITEM
    common = {"classes": parsed.classes, "sample_weight": split_weight, "ids": split_ids, "timestamp": split_time}
    try:
        if parsed.proba is not None:
            logits = None if parsed.logits is None else parsed.logits[rows]
            # Checked column by column above; a second pass over (n, C) would only cost time and memory.
            top = None if parsed.confidence is None else (parsed.y_pred_codes[rows], parsed.confidence[rows])
            return Predictions._from_checked_proba(parsed.proba[rows], y_true, logits=logits, top=top,
                                                   capped=top is not None, **common)  # fmt: skip
        y_pred = parsed.class_text[parsed.y_pred_codes[rows]]
        return Predictions.from_top_label(y_pred, parsed.confidence[rows], y_true, **common)
    except ValueError as exc:
        # Safety net only: the checks above should catch everything first. Row
        # numbers inside this message count from 0 within the split.
        problems.add(f"{context}: {exc}")
        return None


def _split_labels(parsed: _ParsedColumns, rows, context, absolute, problems: _FileProblems):
    """(ok, y_true text or None): a split is wholly labelled or wholly unlabelled."""
    if parsed.y_true_codes is None:
        return True, None
    codes = parsed.y_true_codes[rows]
    missing = codes == _MISSING
    if missing.all():
        return True, None  # a whole split without labels (e.g. prod) is simply unlabeled
    if missing.any():
        problems.add(
            f"y_true is missing in {context}, which has labels elsewhere "
            "(leave y_true empty for a whole split to mark it unlabeled)",
            column="y_true",
            where=absolute(missing),
        )
        return False, None
    return True, ClassCodes(codes)


def _split_times(timestamp, rows, context, absolute, problems: _FileProblems):
    """(ok, timestamps or None): a split has a time on every row or on none."""
    if timestamp is None:
        return True, None
    values = timestamp[rows]
    missing = np.isnat(values)
    if missing.all():
        return True, None
    if missing.any():
        problems.add(
            f"timestamp is missing in {context}, which has timestamps elsewhere",
            column="timestamp",
            where=absolute(missing),
        )
        return False, None
    return True, values


def _split_ids(ids, rows, context, absolute, problems: _FileProblems):
    """(ok, ids or None): ids on every row or none; duplicates are a warning."""
    if ids is None:
        return True, None
    values = ids[rows]
    missing = pd.isna(values)
    if missing.all():
        return True, None
    if missing.any():
        problems.add(f"id is missing in {context}, which has ids elsewhere", column="id", where=absolute(missing))
        return False, None
    duplicated = pd.Series(values).duplicated(keep="first").to_numpy()
    if duplicated.any():
        problems.add(
            f"duplicate ids in {context} (models are paired by id)",
            column="id",
            where=absolute(duplicated),
            severity="warning",
        )
    return True, values
