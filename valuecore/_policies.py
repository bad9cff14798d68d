"""Decision policies: when to act on a prediction and when to abstain.

A :class:`Policy` is a small immutable object that turns predictions into
actions (a class index, or ``n_classes`` for "abstain") and serialises to a
plain dict for the policy JSON. The ``fit_policy`` family tunes one on a
(tuning) split, exactly: every distinct confidence is a candidate threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Union

import numpy as np

from ._usecase import check_value_range as _check_value_range
from ._predictions import Predictions
from ._sorted import (
    SortedRun,
    best_prefix,
    best_prefix_per_class_cumulative,
    class_cumulative_gain,
    cumulative_gain,
)
from ._usecase import UseCase, ValueMatrix
from ._choices import ALL_POLICY_KINDS, POLICY_KINDS

__all__ = [
    "Policy",
    "POLICY_KINDS",
    "ALL_POLICY_KINDS",
    "fit_policy",
    "value_matrix_for",
    "item_gains",
]

Values = Union[UseCase, ValueMatrix]


_NO_CALIBRATION = {"method": "none"}


def _check_threshold(value, name: str) -> float | None:
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number or null (always abstain), got {value}")
    return value


@dataclass(frozen=True)
class Policy:
    """An abstaining decision rule.

    Attributes
    ----------
    kind : str
        One of ``ALL_POLICY_KINDS`` (``POLICY_KINDS`` and ``two_tier``).
    threshold : float or None
        For ``threshold`` / ``calibrated_threshold``: accept iff
        ``confidence >= threshold``; None abstains on everything.
    class_thresholds : tuple of (class, float or None) pairs, or None
        For the per-class kinds: the threshold for items *predicted* as each
        class; None never accepts that class.
    calibration : mapping
        How confidences are recalibrated before the rule applies
        (``{"method": "none"}`` by default); see ``Calibrator.to_dict``.
    assist_threshold : float or None
        For ``two_tier``: items with ``assist_threshold <= confidence <
        threshold`` are acted on after a person confirms; below it they are
        handed off. None (with ``threshold`` None) assists nothing.
    assisted : mapping or None
        For ``two_tier``: ``{"v_confirmed_correct", "v_confirmed_wrong",
        "cost"}``, the values of the assisted tier (see ``AssistedValues``).
    shortlist : mapping or None
        For ``shortlist``: ``{"rule", "k", "level", "list_threshold",
        "values"}``; items with ``list_threshold <= confidence < threshold``
        are handed off with a list of classes (see ``fit_shortlist``).

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.4, 0.6]])
    >>> Policy("threshold", threshold=0.8).decide(p).tolist()  # 2 = abstain
    [0, 2]
    >>> Policy.from_dict(Policy("threshold", threshold=0.8).to_dict()) == Policy("threshold", threshold=0.8)
    True
    """

    kind: str
    threshold: float | None = None
    class_thresholds: tuple | None = None
    calibration: Mapping = field(default_factory=lambda: dict(_NO_CALIBRATION))
    assist_threshold: float | None = None
    assisted: Mapping | None = None
    shortlist: Mapping | None = None

    def __post_init__(self):
        if self.kind not in ALL_POLICY_KINDS:
            raise ValueError(f"unknown policy kind {self.kind!r}; expected one of {list(ALL_POLICY_KINDS)}")
        object.__setattr__(self, "threshold", _check_threshold(self.threshold, "threshold"))
        if self.kind in ("class_thresholds", "calibrated_class_thresholds"):
            if self.class_thresholds is None:
                raise ValueError(f"a {self.kind} policy needs class_thresholds")
            pairs = self.class_thresholds
            if isinstance(pairs, Mapping):
                pairs = pairs.items()
            pairs = tuple((str(c), _check_threshold(t, f"threshold of class {c}")) for c, t in pairs)
            object.__setattr__(self, "class_thresholds", pairs)
        elif self.class_thresholds is not None:
            raise ValueError(f"a {self.kind} policy takes no class_thresholds")
        if self.kind in ("accept_all", "expected_value", "class_thresholds", "calibrated_class_thresholds"):
            if self.threshold is not None:
                raise ValueError(f"a {self.kind} policy takes no global threshold")
        self._check_two_tier()
        self._check_shortlist()
        calibration = dict(self.calibration or _NO_CALIBRATION)
        if "method" not in calibration:
            raise ValueError("calibration needs a 'method' (e.g. 'none', 'temperature')")
        object.__setattr__(self, "calibration", _FrozenDict(calibration))

    def _check_two_tier(self) -> None:
        if self.kind != "two_tier":
            if self.assist_threshold is not None or self.assisted is not None:
                raise ValueError(f"a {self.kind} policy takes no assist_threshold or assisted values")
            return
        from ._twotier import AssistedValues

        if self.assisted is None:
            raise ValueError("a two_tier policy needs the values of its assisted tier")
        assisted = AssistedValues.from_dict(self.assisted).to_dict()
        object.__setattr__(self, "assisted", _FrozenDict(assisted))
        assist = _check_threshold(self.assist_threshold, "assist_threshold")
        object.__setattr__(self, "assist_threshold", assist)
        if assist is None and self.threshold is not None:
            raise ValueError("a two_tier policy with an automatic threshold needs an assist_threshold (<= it)")
        if assist is not None and self.threshold is not None and assist > self.threshold:
            raise ValueError(
                f"assist_threshold {assist} must not exceed the automatic threshold {self.threshold}"
            )

    def _check_shortlist(self) -> None:
        if self.kind != "shortlist":
            if self.shortlist is not None:
                raise ValueError(f"a {self.kind} policy takes no shortlist")
            return
        from ._shortlist import check_shortlist_spec

        spec = check_shortlist_spec(self.shortlist)
        listed = spec["list_threshold"]
        if listed is None and self.threshold is not None:
            raise ValueError("a shortlist policy with an automatic threshold needs a list_threshold (<= it)")
        if listed is not None and self.threshold is not None and listed > self.threshold:
            raise ValueError(f"list_threshold {listed} must not exceed the automatic threshold {self.threshold}")
        spec["values"] = _FrozenDict({k: tuple(v) for k, v in spec["values"].items()})
        object.__setattr__(self, "shortlist", _FrozenDict(spec))

    def tiers(self, predictions: Predictions) -> np.ndarray:
        """For ``two_tier``: 0 act, 1 act after a person confirms, 2 hand off; shape (n,)."""
        if self.kind != "two_tier":
            raise ValueError(f"tiers are defined for two_tier policies, not {self.kind!r}")
        confidence = self.calibrate(predictions).confidence
        auto = np.inf if self.threshold is None else self.threshold
        assist = np.inf if self.assist_threshold is None else self.assist_threshold
        return np.where(confidence >= auto, 0, np.where(confidence >= assist, 1, 2)).astype(np.int64)

    # -------------------------------------------------------------- decisions
    def decide(self, predictions: Predictions, values: Values | None = None) -> np.ndarray:
        """Actions of shape (n,): the class index acted on, or ``n_classes`` to abstain.

        ``predictions`` are raw (uncalibrated); the policy applies its own
        calibration first. ``values`` is needed by the expected-value rule only.
        """
        predictions = self.calibrate(predictions)
        n_classes = predictions.n_classes
        if self.kind == "accept_all":
            return predictions.y_pred.copy()
        if self.kind in ("threshold", "calibrated_threshold", "two_tier", "shortlist"):
            # two_tier, shortlist: the automatic tier; the others need a person (see ``tiers``)
            if self.threshold is None:
                return np.full(predictions.n, n_classes, dtype=np.int64)
            accept = predictions.confidence >= self.threshold
            return np.where(accept, predictions.y_pred, n_classes)
        if self.kind in ("class_thresholds", "calibrated_class_thresholds"):
            per_class = self.thresholds_by_index(predictions.classes)
            accept = predictions.confidence >= per_class[predictions.y_pred]
            return np.where(accept, predictions.y_pred, n_classes)
        return _expected_value_actions(predictions, value_matrix_for(values, predictions.classes))

    def thresholds_by_index(self, classes) -> np.ndarray:
        """Per-class thresholds as an array of shape (n_classes,); +inf = never accept."""
        mapping = dict(self.class_thresholds or ())
        unknown = set(mapping) - set(classes)
        if unknown:
            raise ValueError(f"the policy names classes {sorted(unknown)} that the run does not have ({list(classes)})")
        return np.array(
            [np.inf if mapping.get(c) is None else mapping[c] for c in classes], dtype=np.float64
        )

    def calibrate(self, predictions: Predictions) -> Predictions:
        """Apply the policy's recorded calibration (a no-op for method "none")."""
        if self.calibration.get("method", "none") == "none":
            return predictions
        from ._calibration import Calibrator  # the calibration module is optional here

        if self.kind == "expected_value" and self.calibration["method"] == "isotonic":
            raise ValueError(
                "the expected-value rule needs calibrated probability vectors; "
                "isotonic recalibrates only the top-label confidence (use temperature or none)"
            )
        return Calibrator.from_dict(dict(self.calibration)).apply(predictions)

    # ---------------------------------------------------------- serialisation
    def to_dict(self) -> dict:
        out = {
            "kind": self.kind,
            "threshold": self.threshold,
            "class_thresholds": None if self.class_thresholds is None else dict(self.class_thresholds),
            "calibration": dict(self.calibration),
        }
        if self.kind == "two_tier":
            out["assist_threshold"] = self.assist_threshold
            out["assisted"] = dict(self.assisted)
        if self.kind == "shortlist":
            out["shortlist"] = {**self.shortlist, "values": {k: list(v) for k, v in self.shortlist["values"].items()}}
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> "Policy":
        if not isinstance(data, Mapping) or "kind" not in data:
            raise ValueError("a policy must be an object with a 'kind'")
        return cls(
            kind=data["kind"],
            threshold=data.get("threshold"),
            class_thresholds=data.get("class_thresholds"),
            calibration=data.get("calibration") or _NO_CALIBRATION,
            assist_threshold=data.get("assist_threshold"),
            assisted=data.get("assisted"),
            shortlist=data.get("shortlist"),
        )


class _FrozenDict(dict):
    """A dict that refuses mutation, so a Policy stays immutable and hashable."""

    def __hash__(self):
        import json

        return hash(json.dumps(self, sort_keys=True, default=str))

    def _refuse(self, *args, **kwargs):
        raise TypeError("policy calibration is read-only")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = _refuse

    def __reduce__(self):
        # pickle would refill a dict subclass item by item, which __setitem__ refuses
        return (type(self), (dict(self),))


# ----------------------------------------------------------------- values
def value_matrix_for(values: Values | None, classes) -> ValueMatrix:
    """The ``(C, C + 1)`` value matrix of ``values`` for these classes."""
    classes = tuple(str(c) for c in classes)
    if values is None:
        raise ValueError("this computation needs a use case or a value matrix")
    if isinstance(values, UseCase):
        return values.value_matrix(classes)
    if isinstance(values, ValueMatrix):
        if values.classes != classes:
            raise ValueError(
                f"the value matrix is for classes {list(values.classes)} but the run has classes {list(classes)}"
            )
        return values
    raise TypeError(f"values must be a UseCase or a ValueMatrix, got {type(values).__name__}")


def item_gains(predictions: Predictions, values: Values, *, estimate: bool = False) -> np.ndarray:
    """Weighted gain over abstaining of acting on each item's predicted class.

    Returns shape (n,). With ``estimate=False`` the gain uses the true label;
    with ``estimate=True`` it is the expectation under the model's own
    probabilities (label-free; only as good as the calibration). A run with
    only top-label confidence supports the simple use case only, where the
    predicted class is right with probability ``confidence``.
    """
    matrix = value_matrix_for(values, predictions.classes)
    gains = matrix.gains  # (C, C): true x predicted
    y_pred = predictions.y_pred
    if not estimate:
        predictions.require_labels("the realised value")
        per_item = gains[predictions.y_true, y_pred]
    elif predictions.has_proba:
        per_item = np.einsum("ik,ki->i", predictions.normalised_proba(), gains[:, y_pred])
    else:
        if matrix.as_use_case() is None:
            predictions.require_proba("label-free estimation with a per-class value matrix")
        masked = np.where(np.eye(matrix.n_classes, dtype=bool), np.inf, gains)
        worst_wrong = masked.min(axis=0)  # (C,) per predicted class
        confidence = predictions.confidence
        per_item = confidence * np.diag(gains)[y_pred] + (1 - confidence) * worst_wrong[y_pred]
    return per_item * predictions.sample_weight


def _expected_value_actions(predictions: Predictions, matrix: ValueMatrix) -> np.ndarray:
    predictions.require_proba("the expected-value rule")
    expected = _expected_values(predictions.proba, matrix.values)  # (C + 1, n)
    best = expected.max(axis=0)
    n, n_classes = predictions.n, predictions.n_classes
    # Ties prefer the argmax class, then abstaining, then the lowest class index.
    keep_argmax = expected[predictions.y_pred, np.arange(n)] >= best
    abstain = expected[n_classes] >= best
    other = np.argmax(expected[:n_classes], axis=0)
    return np.where(keep_argmax, predictions.y_pred, np.where(abstain, n_classes, other)).astype(np.int64)


def _expected_values(proba: np.ndarray, values: np.ndarray, chunk: int = 1 << 14) -> np.ndarray:
    """Expected value of every action, shape (C + 1, n), from ``proba`` (n, C) and ``values`` (C, C + 1).

    The tie rule needs exactly equal expected values to come out equal in
    floating point. A matrix product does not promise that: with the use case
    (0, -2, -1.9375) and the row (2/7, 2/7, 1/7, 2/7), classes 0 and 3 add
    the same four products in a different order and differ by one ulp. So the
    value of an action is the sum of its terms ``proba[k] * values[k, action]``
    sorted in ascending order: actions whose terms are equal up to order (equal
    probabilities, a symmetric matrix) get bit-identical values. Sorting costs
    several matrix products, so it is done only for the items where some
    action comes within the matrix product's round-off of the best one;
    elsewhere the best action is the same under either summation.
    """
    # Class-major layout (C + 1, n): reductions across a few long rows are much
    # faster than across many rows of C + 1 entries.
    by_action = np.ascontiguousarray(values.T)
    expected = by_action @ proba.T
    n_terms = values.shape[0]
    # Round-off of a sum of C products, in any order: at most C ulps of the sum
    # of their magnitudes, plus the absolute error of subnormal products.
    magnitude = (np.abs(by_action) @ np.abs(proba).T).max(axis=0)
    slack = 2 * (n_terms + 1) * (np.finfo(np.float64).eps * magnitude + np.finfo(np.float64).smallest_subnormal)
    with np.errstate(invalid="ignore"):
        near = (expected >= expected.max(axis=0) - 2 * slack).sum(axis=0) > 1
    redo = np.flatnonzero(near | ~np.isfinite(slack))
    for start in range(0, len(redo), chunk):
        items = redo[start:start + chunk]
        terms = proba[items, None, :] * values.T[None, :, :]  # (items, C + 1, C)
        terms.sort(axis=2)
        expected[:, items] = terms.sum(axis=2).T
    return expected


# ------------------------------------------------------------------ tuning
def _tune_global(run: SortedRun, values: Values, estimate: bool) -> float | None:
    predictions = run.predictions
    if predictions.n == 0:
        return None
    k = best_prefix(cumulative_gain(run, values, estimate=estimate))
    return None if k == 0 else float(run.thresholds[k - 1])


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
        if isinstance(values, UseCase):
            return Policy(kind, threshold=values.calibrated_threshold, **extra)
        from ._usecase import _calibrated_threshold

        # A general matrix: charge correct and wrong at their worst gains.
        return Policy(kind, threshold=_calibrated_threshold(*_worst_case_use_case(values)), **extra)
    if kind == "calibrated_class_thresholds":
        classes = run.predictions.classes if run is not None else getattr(values, "classes", None)
        if classes is None:
            raise ValueError("calibrated class thresholds need the classes (pass the run)")
        matrix = value_matrix_for(values, classes)
        return Policy(kind, class_thresholds=tuple(matrix.calibrated_class_thresholds().items()), **extra)
    if run is None:
        raise ValueError(f"a {kind} policy is tuned on data: pass the tuning run")
    if not estimate:
        run.predictions.require_labels(f"tuning a {kind} policy")
    if kind == "threshold":
        return Policy(kind, threshold=_tune_global(run, values, estimate), **extra)
    if kind == "two_tier":
        if estimate:
            raise ValueError("a two_tier policy is tuned on labels (the assisted tier's values depend on them)")
        from ._twotier import fit_two_tier

        return fit_two_tier(run, values, assisted, calibration=calibration)
    if kind == "shortlist":
        if estimate:
            raise ValueError("a shortlist policy is tuned on labels (whether a list holds the answer depends on them)")
        if shortlist_values is None:
            raise ValueError("a shortlist policy needs the values of a hand-off with a shortlist, per size k")
        from ._shortlist import fit_shortlist

        return fit_shortlist(run, values, shortlist_values, rule=shortlist_rule, calibration=calibration)
    if kind == "class_thresholds":
        at_end = class_cumulative_gain(run, values, estimate=estimate)
        thresholds, _ = best_prefix_per_class_cumulative(at_end, run)
        pairs = tuple(
            (c, None if np.isnan(t) else float(t)) for c, t in zip(run.predictions.classes, thresholds)
        )
        return Policy(kind, class_thresholds=pairs, **extra)
    raise ValueError(f"unknown policy kind {kind!r}; expected one of {list(ALL_POLICY_KINDS)}")


from ._sorted import presort  # noqa: E402,F401  (used in doctests)
