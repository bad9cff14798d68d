"""Fitting decision policies: the ``fit_policy`` family.

A :class:`Policy` (defined in ``policy``) turns predictions into actions; the
``fit_policy`` family tunes one on a (tuning) split, exactly: every distinct
confidence is a candidate threshold. Tuning sees confidences already mapped by
the recalibration (the pipeline applies it first) and only records the
calibration's mapping in the policy; this module knows nothing of calibration.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .._model.choices import ALL_POLICY_KINDS, POLICY_KINDS
from .policy import Policy
from .policy import _FrozenDict  # noqa: F401  (pickles of a Policy made before it moved name it here)
from .._model.predictions import Predictions  # noqa: F401  (used in doctests)
from .sorting import (
    SortedRun,
    presort,  # noqa: F401  (used in doctests)
    best_prefix,
    best_prefix_per_class_cumulative,
    class_cumulative_gain,
    cumulative_gain,
    item_gains,
)
from .sorting import run_cache
from .._model.values import UseCase, ValueMatrix, Values, _calibrated_threshold
from .._model.values import check_value_range as _check_value_range

__all__ = [
    "Policy",
    "POLICY_KINDS",
    "ALL_POLICY_KINDS",
    "fit_policy",
    "item_gains",
]


# ------------------------------------------------------------------ tuning
# Below this many groups the scan over every group is as fast as a hull's first build and its search.
HULL_MIN_GROUPS = 4096
# The per-class pairs of every sure row of the classes' table are made at the build up to this many (rows times
# classes; a pointer each, with a tuple a row): 50 classes of a 10^6-row run need about 600,000.
ROW_PAIRS_MAX = 1 << 20


def _hull_gains(run: SortedRun, values: Values, estimate: bool, n_groups: int) -> tuple[float, float] | None:
    """The gains ``(a, b)`` of a correct and a wrong item over abstaining when the hull answers (a use case on
    labels, enough groups), else None (the scan answers)."""
    use_case = values.use_case
    if use_case is None or estimate or run.cum_correct is None or n_groups < HULL_MIN_GROUPS:
        return None
    # The same floats cumulative_gain multiplies the counts by.
    return use_case.gain_correct, use_case.gain_wrong


def _hull():
    """The ``hull`` module, imported on first use: a run of fewer than ``HULL_MIN_GROUPS`` groups (a small file's)
    never needs it, and its import is a good part of a small run's first fit."""
    global _hull_module
    if _hull_module is None:
        from . import hull

        _hull_module = hull
    return _hull_module


_hull_module = None


def _tune_global(run: SortedRun, values: Values, estimate: bool) -> float | None:
    predictions = run.predictions
    if predictions.n == 0:
        return None
    n_groups = run.n_groups
    gains = _hull_gains(run, values, estimate, n_groups)
    k = None
    if gains is not None and "threshold fitted" not in run_cache(run):
        # A run's first fit scans (the same threshold): a hull pays for the moves that follow, not for one fit (in a
        # fresh process its import and first build cost 1.0-1.5 ms of CPU against the scan's 0.1 at 10^4 rows).
        run_cache(run)["threshold fitted"] = True
        gains = None
    if gains is not None:
        cache, hull = run_cache(run), _hull()
        k = hull.first_best(cache, "threshold", gains[0], run.cum_correct, gains[1], run.cum_wrong, 0, n_groups + 1)
        if "threshold hull" not in cache:  # kept for the next moves (_moved), when built
            chain = hull.kept_chain(cache, "threshold", 0, n_groups + 1)
            if chain is not None:
                cache["threshold hull"] = chain
    if k is None:
        k = best_prefix(cumulative_gain(run, values, estimate=estimate))
    return None if k == 0 else float(run.thresholds[k - 1])


def _tune_per_class(run: SortedRun, values: Values, estimate: bool) -> np.ndarray:
    """Each predicted class's best threshold (NaN: accept none of it), shape (n_classes,)."""
    gains = _hull_gains(run, values, estimate, int(run.class_group_end.size))
    if gains is not None:
        thresholds = _tune_per_class_on_hulls(run, *gains)
        if thresholds is not None:
            return thresholds
    at_end = class_cumulative_gain(run, values, estimate=estimate)
    return best_prefix_per_class_cumulative(at_end, run)[0]


def _tune_per_class_on_hulls(run: SortedRun, a: float, b: float) -> np.ndarray | None:
    """:func:`best_prefix_per_class_cumulative` of the gains ``a * correct + b * wrong`` cumulated along the class
    order, bit for bit, from each class's hull (all classes in one search for the usual signs); None when a
    class needs the scan."""
    cache = run_cache(run)
    if a > 0 > b:  # the usual values: every class in one search, kept with the run
        kept = cache.get("class hulls")
        if kept is None:
            kept = cache["class hulls"] = _ClassHulls(run, cache)
        return kept.thresholds(a, b)
    hull = _hull()
    indices, spans = _class_spans(run, cache)
    chosen = [hull.choose_one(cache, "class_thresholds", a, run.class_cum_correct, b, run.class_cum_wrong, start,
                              stop, run.class_group_threshold) for start, stop in spans]
    return None if None in chosen else _by_class(np.array(chosen, dtype=float), indices, run.predictions.n_classes)


def _by_class(chosen: np.ndarray, indices: list, n_classes: int) -> np.ndarray:
    """The thresholds ``chosen`` for the classes ``indices`` (those with groups), NaN for the others: (n_classes,)."""
    if len(indices) == n_classes:
        return chosen
    thresholds = np.full(n_classes, np.nan)
    thresholds[indices] = chosen
    return thresholds


class _ClassHulls:
    """Every class's hull of a run, searched together (``hull.Segments``), and what a move needs besides, kept with
    the run (``run_cache(run)["class hulls"]``): a slider move then costs one search and the policy's pairs.

    Attributes
    ----------
    indices : list of int
        The predicted classes with groups (the segments), by index.
    segments : hull.Segments or None
        Their hulls; None when one cannot be built (the scan answers).
    classes : tuple
        The run's classes; ``n_classes`` their number.
    plain : bool
        :func:`_plain_classes` of the run (the pairs need no checks).
    n_groups : int
        The run's per-class groups, compared with ``HULL_MIN_GROUPS`` at every move (tests move it).
    """

    __slots__ = ("indices", "segments", "classes", "n_classes", "plain", "n_groups", "pairs", "row_pairs")

    def __init__(self, run: SortedRun, cache: dict):
        self.indices, spans = _class_spans(run, cache)
        self.segments = _hull().segments_of(cache, "class_thresholds", run.class_cum_correct, run.class_cum_wrong,
                                            spans, run.class_group_threshold)
        self.classes, self.n_classes = run.predictions.classes, run.predictions.n_classes
        self.plain, self.n_groups = _plain_classes(run), int(run.class_group_end.size)
        self.pairs = self._pairs()
        self.row_pairs = self._row_pairs()

    def _row_pairs(self) -> list | None:
        """Per row of the segments' table whose every class is sure, the policy's pairs (a tuple, ``pairs`` at the
        row's positions), else None; None without a table or beyond ``ROW_PAIRS_MAX`` entries: a move whose row
        is sure then reads its pairs whole (about 8 bytes a class a row)."""
        rows = None if self.pairs is None else self.segments.sure_rows
        if rows is None or len(rows) * len(self.indices) > ROW_PAIRS_MAX:
            return None
        return [None if row is None else tuple(self.pairs.take(row).tolist()) for row in rows]

    def _pairs(self) -> np.ndarray | None:
        """Per position of the segments' answers, the policy's pair it makes: ``(class, threshold or None)``, as
        :func:`_class_policy` makes it from the answer (object array, shape (P,)); None unless every class has
        groups (then a move's pairs are one take)."""
        if self.segments is None or len(self.indices) != self.n_classes:
            return None
        pairs = np.empty(self.segments.answers.size, dtype=object)
        names = [self.classes[k] for k in self.indices]
        for position, (slot, answer) in enumerate(zip(self.segments.answer_slots.tolist(),
                                                      self.segments.answers.tolist())):
            if slot >= 0:
                pairs[position] = (names[slot], answer if answer == answer else None)  # NaN: None
        return pairs

    def thresholds(self, a: float, b: float) -> np.ndarray | None:
        """Each class's threshold (NaN: none of it) for ``a > 0 > b``, shape (n_classes,); None: the scan answers."""
        chosen = None if self.segments is None else self.segments.choose(a, b)
        return None if chosen is None else _by_class(chosen, self.indices, self.n_classes)

    def policy(self, a: float, b: float) -> Policy | None:
        """The tuned ``class_thresholds`` policy for ``a > 0 > b`` (what :func:`fit_policy` returns); None when
        the scan answers."""
        if self.row_pairs is not None:
            row = self.segments.sure_row(a, b)
            if row is not None:  # every class's answer sure: the row's pairs, made at the build
                pairs = self.row_pairs[row]
                return (Policy._plain("class_thresholds", None, pairs) if self.plain
                        else Policy._tuned("class_thresholds", class_thresholds=pairs))
        if self.pairs is not None:
            pairs = self.segments.sure_take(a, b, self.pairs)
            if pairs is not None:  # every class's answer sure: its pair read off the table
                pairs = tuple(pairs.tolist())
                return (Policy._plain("class_thresholds", None, pairs) if self.plain
                        else Policy._tuned("class_thresholds", class_thresholds=pairs))
        thresholds = self.thresholds(a, b)
        return None if thresholds is None else _class_policy(self.classes, thresholds, self.plain)


def _class_policy(classes: tuple, thresholds: np.ndarray, plain: bool) -> Policy:
    """The tuned per-class policy of ``thresholds`` (NaN: None), unchecked when ``plain`` (:func:`_plain_classes`)."""
    pairs = tuple(zip(classes, [t if t == t else None for t in thresholds.tolist()]))  # NaN: None
    return Policy._plain("class_thresholds", None, pairs) if plain else Policy._tuned("class_thresholds",
                                                                                     class_thresholds=pairs)


def _moved(kind: str, run: SortedRun, use_case: UseCase) -> Policy | None:
    """A slider move's policy from the hulls earlier moves kept with the run (a use case on labels, no
    calibration): what the general path below answers, with its checks and lookups made once per run; None when
    nothing is kept for it (the general path answers, and keeps it)."""
    kept = vars(run).get("_hulls")
    if kept is None:
        return None
    a, b = use_case.gain_correct, use_case.gain_wrong
    if not a > 0 > b:
        return None
    if kind == "class_thresholds":
        classes = kept.get("class hulls")
        if classes is not None and classes.n_groups >= HULL_MIN_GROUPS:
            return classes.policy(a, b)
    elif kind == "threshold":
        chain = kept.get("threshold hull")
        if chain is not None and chain.stop - 1 >= HULL_MIN_GROUPS:  # stop - 1: the run's groups
            k = chain.first_best(a, b, 0.0)
            if k is not None:
                return Policy._tuned(kind, threshold=None if k == 0 else run.thresholds.item(k - 1))
    return None


def _class_spans(run: SortedRun, cache: dict) -> tuple[list, list]:
    """The predicted classes with groups, and each one's groups ``[start, stop)`` in the class order (kept)."""
    classes = cache.get("class segments")
    if classes is None:
        bounds = np.searchsorted(run.class_group_class, np.arange(run.predictions.n_classes + 1)).tolist()
        kept = [(k, (start, stop)) for k, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:])) if start < stop]
        classes = cache["class segments"] = ([k for k, _ in kept], [span for _, span in kept])
    return classes


def _plain_classes(run: SortedRun) -> bool:
    """Whether the run's classes are a tuple of str and its per-class thresholds finite (kept with the run)."""
    cache = run_cache(run)
    plain = cache.get("plain classes")
    if plain is None:
        classes = run.predictions.classes
        plain = cache["plain classes"] = (type(classes) is tuple and all(type(c) is str for c in classes)
                                          and bool(np.isfinite(run.class_group_threshold).all()))
    return plain


def _worst_case_use_case(matrix: ValueMatrix) -> tuple[float, float]:
    gains = matrix.gains
    off = gains[~np.eye(matrix.n_classes, dtype=bool)]
    return float(np.diag(gains).min()), float(off.min())


def fit_policy(
    kind: str,
    run: SortedRun | None,
    values: Values,
    *,
    calibration: Mapping | None = None,
    estimate: bool = False,
    assisted=None,
    shortlist_values=None,
    shortlist_rule: str = "top_k",
) -> Policy:
    """Fit a policy of ``kind`` for ``values`` on a tuning run.

    Parameters
    ----------
    kind : str
        One of ``POLICY_KINDS``. ``accept_all``, the calibrated kinds and
        ``expected_value`` need no data (``run`` may be None).
    run : SortedRun
        The tuning split, presorted, *already calibrated* with ``calibration``.
    values : UseCase or ValueMatrix
    calibration : mapping, optional
        Recorded in the policy (``Calibrator.to_dict()``), applied by ``decide``.
    estimate : bool
        Tune on expected gains from the probabilities instead of the labels
        (label-free tuning on production data).
    assisted : AssistedValues or mapping, optional
        The values of the confirmed tier; required by ``two_tier`` (labels only).
    shortlist_values, shortlist_rule : optional
        For ``shortlist`` (labels and probability vectors): the value of a
        hand-off with a list of ``k`` classes, per ``k`` (``ShortlistValues``
        or ``{k: [value if in, value if not]}``), and the list rule
        (``"top_k"`` or ``"cumulative"``).

    Examples
    --------
    >>> p = Predictions.from_proba([[0.95, 0.05], [0.8, 0.2], [0.6, 0.4]], y_true=[0, 0, 1])
    >>> fit_policy("threshold", presort(p), UseCase(1, 0, -4)).threshold
    0.8
    >>> fit_policy("calibrated_threshold", None, UseCase(1, 0, -4)).threshold
    0.8
    """
    if run is not None:  # the calibrated threshold needs no run, and no sums
        _check_value_range(values)
        if not (calibration or estimate) and values.use_case is values:
            # A slider move (a use case): what earlier moves kept with the run answers, kept after the checks
            # below passed for this run.
            moved = _moved(kind, run, values)
            if moved is not None:
                return moved
    if kind not in ALL_POLICY_KINDS:
        raise ValueError(f"unknown policy kind {kind!r}; expected one of {list(ALL_POLICY_KINDS)}")
    extra = {"calibration": calibration} if calibration else {}
    if kind == "accept_all":
        return Policy("accept_all", **extra)
    if kind == "expected_value":
        return Policy("expected_value", **extra)
    if kind == "calibrated_threshold":
        use_case = values.use_case
        if use_case is not None:
            return Policy(kind, threshold=use_case.calibrated_threshold, **extra)
        # A general matrix: charge correct and wrong at their worst gains.
        return Policy(kind, threshold=_calibrated_threshold(*_worst_case_use_case(values)), **extra)
    if kind == "calibrated_class_thresholds":
        classes = run.predictions.classes if run is not None else getattr(values, "classes", None)
        if classes is None:
            raise ValueError("calibrated class thresholds need the classes (pass the run)")
        matrix = values.for_classes(classes)
        return Policy(kind, class_thresholds=tuple(matrix.calibrated_class_thresholds().items()), **extra)
    if run is None:
        raise ValueError(f"a {kind} policy is tuned on data: pass the tuning run")
    if not estimate:
        run.predictions.require_labels(f"tuning a {kind} policy")
    if kind == "threshold":
        threshold = _tune_global(run, values, estimate)
        return Policy(kind, threshold=threshold, **extra) if extra else Policy._tuned(kind, threshold=threshold)
    if kind == "two_tier":
        if estimate:
            raise ValueError("a two_tier policy is tuned on labels (the assisted tier's values depend on them)")
        from .twotier import fit_two_tier  # imported when first asked: a fresh process fitting a threshold skips it

        return fit_two_tier(run, values, assisted, calibration=calibration)
    if kind == "shortlist":
        if estimate:
            raise ValueError("a shortlist policy is tuned on labels (whether a list holds the answer depends on them)")
        if shortlist_values is None:
            raise ValueError("a shortlist policy needs the values of a hand-off with a shortlist, per size k")
        from .shortlist import fit_shortlist  # imported when first asked, as the two tiers above

        return fit_shortlist(run, values, shortlist_values, rule=shortlist_rule, calibration=calibration)
    if kind == "class_thresholds":
        thresholds = _tune_per_class(run, values, estimate)
        if extra:
            pairs = tuple(zip(run.predictions.classes, [t if t == t else None for t in thresholds.tolist()]))
            return Policy(kind, class_thresholds=pairs, **extra)
        # Pairs of a str and a finite float or None: what the checks would leave unchanged, known once per run.
        return _class_policy(run.predictions.classes, thresholds, _plain_classes(run))
    raise ValueError(f"unknown policy kind {kind!r}; expected one of {list(ALL_POLICY_KINDS)}")

