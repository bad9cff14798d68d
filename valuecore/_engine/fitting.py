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
from .hull import choose_one, first_best, run_cache, segments_of
from .._model.values import UseCase  # noqa: F401  (used in doctests)
from .._model.values import ValueMatrix, Values, _calibrated_threshold
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


def _hull_gains(run: SortedRun, values: Values, estimate: bool, n_groups: int) -> tuple[float, float] | None:
    """The gains ``(a, b)`` of a correct and a wrong item over abstaining when the hull answers (a use case on
    labels, enough groups), else None (the scan answers)."""
    use_case = values.use_case
    if use_case is None or estimate or run.cum_correct is None or n_groups < HULL_MIN_GROUPS:
        return None
    # The same floats cumulative_gain multiplies the counts by.
    return use_case.gain_correct, use_case.gain_wrong


def _tune_global(run: SortedRun, values: Values, estimate: bool) -> float | None:
    predictions = run.predictions
    if predictions.n == 0:
        return None
    n_groups = run.n_groups
    gains = _hull_gains(run, values, estimate, n_groups)
    k = None if gains is None else first_best(run_cache(run), "threshold", gains[0], run.cum_correct, gains[1],
                                              run.cum_wrong, 0, n_groups + 1)
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
            indices, spans = _class_spans(run, cache)
            kept = cache["class hulls"] = (indices, segments_of(cache, "class_thresholds", run.class_cum_correct,
                                                                run.class_cum_wrong, spans, run.class_group_threshold))
        indices, searched = kept
        chosen = None if searched is None else searched.choose(a, b)
    else:
        indices, spans = _class_spans(run, cache)
        chosen = [choose_one(cache, "class_thresholds", a, run.class_cum_correct, b, run.class_cum_wrong, start, stop,
                             run.class_group_threshold) for start, stop in spans]
        chosen = None if None in chosen else np.array(chosen, dtype=float)
    if chosen is None:
        return None
    if len(indices) == run.predictions.n_classes:
        return chosen
    thresholds = np.full(run.predictions.n_classes, np.nan)
    thresholds[indices] = chosen
    return thresholds


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
        pairs = tuple(zip(run.predictions.classes, [t if t == t else None for t in thresholds.tolist()]))  # NaN: None
        if extra:
            return Policy(kind, class_thresholds=pairs, **extra)
        # Pairs of a str and a finite float or None: what the checks would leave unchanged, known once per run.
        return Policy._plain(kind, None, pairs) if _plain_classes(run) else Policy._tuned(kind, class_thresholds=pairs)
    raise ValueError(f"unknown policy kind {kind!r}; expected one of {list(ALL_POLICY_KINDS)}")

