"""The decision rule as deployed: a recorded recalibration, then thresholds.

A :class:`Policy` is a small immutable object that turns predictions into
actions (a class index, or ``n_classes`` for "abstain") and serialises to a
plain dict for the policy JSON. It composes two steps: the recalibration it
records (``calibration``, the mapping of ``Calibrator.to_dict``) maps the
confidences, then the rule compares the mapped confidences with its
thresholds. The modules that tune and evaluate rules (``sorting``,
``fitting``, ``twotier``, ``shortlist``) see only mapped confidences and
reach the mapping only through :meth:`Policy.calibrate`; this module is the
one place that turns the recorded mapping into a map.
"""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Mapping

import numpy as np

from .._model.choices import ALL_POLICY_KINDS
from .._model.predictions import Predictions
from .._model.values import ValueMatrix, Values

__all__ = ["Policy"]


_NO_CALIBRATION = {"method": "none"}


def _check_threshold(value, name: str) -> float | None:
    if value is None:
        return None
    try:
        if isinstance(value, (str, bytes, bool, np.bool_)):  # float() would read "0.5" and true
            raise TypeError
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or null (always abstain), got {value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number or null (always abstain), got {value}")
    return value


def _class_threshold_pairs(given) -> list:
    """``(class, threshold)`` pairs of a mapping or of an iterable of pairs; ValueError for anything else
    (a list of bare thresholds would leave the classes to guess)."""
    if isinstance(given, Mapping):
        return list(given.items())
    try:
        pairs = [tuple(pair) for pair in given]
    except TypeError:
        pairs = None
    if pairs is None or any(len(pair) != 2 for pair in pairs):
        raise ValueError(f"class_thresholds must map each class to its threshold (or null), got "
                         f"{type(given).__name__} {str(given)[:80]}")
    return pairs


# A frozen dataclass, its methods written out below: those the decorator would generate are compiled when this
# module is imported (about 0.6 ms of a fresh process; every plain threshold imports it), these with the module.
# tests/core/test_policy_dataclass.py checks them against the generated ones.
@dataclass(init=False, repr=False, eq=False)
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

    def __init__(self, kind: str, threshold: float | None = None, class_thresholds: tuple | None = None,
                 calibration: Mapping | None = None, assist_threshold: float | None = None,
                 assisted: Mapping | None = None, shortlist: Mapping | None = None):
        # calibration None: __post_init__ makes it {"method": "none"}, as the field's default would be.
        fields = self.__dict__
        fields["kind"], fields["threshold"], fields["class_thresholds"] = kind, threshold, class_thresholds
        fields["calibration"] = dict(_NO_CALIBRATION) if calibration is None else calibration
        fields["assist_threshold"], fields["assisted"], fields["shortlist"] = assist_threshold, assisted, shortlist
        self.__post_init__()

    def _fields(self) -> tuple:
        return (self.kind, self.threshold, self.class_thresholds, self.calibration, self.assist_threshold,
                self.assisted, self.shortlist)

    def __repr__(self) -> str:
        return (f"{self.__class__.__qualname__}(kind={self.kind!r}, threshold={self.threshold!r}, "
                f"class_thresholds={self.class_thresholds!r}, calibration={self.calibration!r}, "
                f"assist_threshold={self.assist_threshold!r}, assisted={self.assisted!r}, "
                f"shortlist={self.shortlist!r})")

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._fields() == other._fields()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __setattr__(self, name, value):
        if type(self) is Policy or name in _POLICY_FIELDS:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super().__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is Policy or name in _POLICY_FIELDS:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super().__delattr__(name)

    def __post_init__(self):
        if self.kind not in ALL_POLICY_KINDS:
            raise ValueError(f"unknown policy kind {self.kind!r}; expected one of {list(ALL_POLICY_KINDS)}")
        object.__setattr__(self, "threshold", _check_threshold(self.threshold, "threshold"))
        if self.kind in ("class_thresholds", "calibrated_class_thresholds"):
            if self.class_thresholds is None:
                raise ValueError(f"a {self.kind} policy needs class_thresholds")
            pairs = _class_threshold_pairs(self.class_thresholds)
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

    @classmethod
    def _tuned(cls, kind: str, threshold: float | None = None, class_thresholds: tuple | None = None) -> "Policy":
        """``Policy(kind, threshold=..., class_thresholds=...)`` with no calibration, for the rules tuning makes.

        Fields as tuning makes them (a Python float or None per threshold, ``(str, threshold)`` pairs in a
        tuple) come out of ``__post_init__`` unchanged, so its checks, a good part of a slider move, are skipped
        for them; anything else goes through them.
        """
        if kind == "threshold":
            plain = class_thresholds is None and (threshold is None or (type(threshold) is float
                                                                       and math.isfinite(threshold)))
        else:
            plain = (kind == "class_thresholds" and threshold is None and type(class_thresholds) is tuple
                     and all(type(pair) is tuple and len(pair) == 2 and type(pair[0]) is str
                             and (pair[1] is None or (type(pair[1]) is float and math.isfinite(pair[1])))
                             for pair in class_thresholds))
        if not plain:
            return cls(kind, threshold=threshold, class_thresholds=class_thresholds)
        return cls._plain(kind, threshold, class_thresholds)

    @classmethod
    def _plain(cls, kind: str, threshold: float | None, class_thresholds: tuple | None) -> "Policy":
        """What :meth:`_tuned` makes of fields it found plain, unchecked: for a caller that knows they are (per-class
        thresholds from a run whose classes are str and whose confidences are finite)."""
        policy = object.__new__(cls)
        fields = policy.__dict__
        fields.update(_PLAIN_FIELDS)  # in the fields' order, as __init__ sets them
        fields["kind"], fields["threshold"], fields["class_thresholds"] = kind, threshold, class_thresholds
        return policy

    def _check_two_tier(self) -> None:
        if self.kind != "two_tier":
            if self.assist_threshold is not None or self.assisted is not None:
                raise ValueError(f"a {self.kind} policy takes no assist_threshold or assisted values")
            return
        if self.assisted is None:
            raise ValueError("a two_tier policy needs the values of its assisted tier")
        from .._model.tier_values import AssistedValues  # only two-tier rules need it: a plain threshold is lighter

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
        from .._model.tier_values import check_shortlist_spec  # as for two tiers: only shortlists need it

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
        if self.kind == "expected_value":
            if values is None:
                raise ValueError("the expected-value rule needs a use case or a value matrix")
            return _expected_value_actions(predictions, values.for_classes(predictions.classes))
        if self.kind == "accept_all" and not predictions.has_model_abstentions:
            return predictions.y_pred.copy()
        return np.where(self.accepts(predictions), predictions.y_pred, predictions.n_classes)

    def accepts(self, calibrated: Predictions) -> np.ndarray:
        """Of shape (n,): the items a threshold rule acts on (its predicted class), the others handed over.

        ``calibrated``: predictions the policy has already calibrated (:meth:`calibrate`). For
        ``two_tier`` and ``shortlist``, the automatic tier; not defined for the expected-value rule.
        """
        if self.kind == "accept_all":  # every answer the model gave: not what it declined
            return ~calibrated.model_abstained
        if self.kind in ("class_thresholds", "calibrated_class_thresholds"):
            return calibrated.confidence >= self.thresholds_by_index(calibrated.classes)[calibrated.y_pred]
        if self.kind == "expected_value":
            raise ValueError("the expected-value rule weighs each item's probabilities, not one threshold")
        # threshold, calibrated_threshold; two_tier and shortlist: their automatic tier (see ``tiers``)
        if self.threshold is None:
            return np.zeros(calibrated.n, dtype=bool)
        return calibrated.confidence >= self.threshold

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
        from .._model.recalibration import Calibrator  # the calibration module is optional here

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


_NO_CALIBRATION_FROZEN = _FrozenDict(_NO_CALIBRATION)  # read-only: every tuned policy may hold the same one
_POLICY_FIELDS = ("kind", "threshold", "class_thresholds", "calibration", "assist_threshold", "assisted", "shortlist")
# A tuned policy's fields but its kind and thresholds (Policy._plain).
_PLAIN_FIELDS = dict(kind=None, threshold=None, class_thresholds=None, calibration=_NO_CALIBRATION_FROZEN,
                     assist_threshold=None, assisted=None, shortlist=None)


def _expected_value_actions(predictions: Predictions, matrix: ValueMatrix,
                            screen: "_EvScreen | None" = None) -> np.ndarray:
    """The expected-value rule's actions, shape (n,): a threshold on the top share for a three-value use case.

    ``screen``: :func:`_ev_screen` of these predictions, when kept (by ``valuecore._engine.tally``).
    """
    predictions.require_proba("the expected-value rule")
    plan = _ev_plan(predictions, matrix, screen)
    if plan is None:
        return _expected_value_actions_exactly(predictions.proba, predictions.y_pred, matrix.values)
    return plan.actions()


def _expected_value_actions_exactly(proba: np.ndarray, y_pred: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Every item's action from its expected values (C + 1, n): proba (n, C), y_pred (n,), values (C, C + 1)."""
    expected = _expected_values(proba, values)  # (C + 1, n)
    best = expected.max(axis=0)
    n, n_classes = proba.shape
    # Ties prefer the argmax class, then abstaining, then the lowest class index.
    keep_argmax = expected[y_pred, np.arange(n)] >= best
    abstain = expected[n_classes] >= best
    other = np.argmax(expected[:n_classes], axis=0)
    return np.where(keep_argmax, y_pred, np.where(abstain, n_classes, other)).astype(np.int64)


# The shortcut screens out the items whose top class leads another by less than this share of the row sum (and
# gives up when the round-off margin is wider): such near ties are rare, and are decided item by item.
_TIE_CAP = 1e-9
_EV_CHUNK = 1 << 16


# The two plain classes below hold the expected-value rule's working arrays. They are not dataclasses, whose
# generated methods are compiled when this module is imported (about 1 ms each): every plain threshold imports
# this module, and only the expected-value rule makes them.
class _EvScreen:
    """What the expected-value shortcut needs of one split, whatever the values.

    Attributes
    ----------
    ratio : ndarray (n,) or None
        ``proba[i, y_pred[i]] / proba[i].sum()``, the top class's share of the row (None when presorted:
        ``ratio_sorted`` and ``position`` hold it).
    total_min : float
        The smallest row sum.
    near_tie, near_tie_gap : ndarray (m,)
        The items whose top class leads every other class by at most ``_TIE_CAP`` of the row sum
        (or not at all), and that lead; ascending by lead.
    order, ratio_sorted, position : ndarray (n,) or None
        ``ratio``'s stable ascending order, ``ratio`` in it, and each item's place in it (kept when the
        screen is reused).
    """

    __slots__ = ("ratio", "total_min", "near_tie", "near_tie_gap", "order", "ratio_sorted", "position")

    def __init__(self, ratio: np.ndarray | None, total_min: float, near_tie: np.ndarray, near_tie_gap: np.ndarray,
                 order: np.ndarray | None = None, ratio_sorted: np.ndarray | None = None,
                 position: np.ndarray | None = None):
        self.ratio, self.total_min, self.near_tie, self.near_tie_gap = ratio, total_min, near_tie, near_tie_gap
        self.order, self.ratio_sorted, self.position = order, ratio_sorted, position


def _ev_screen(predictions: Predictions, presort: bool = False) -> _EvScreen | None:
    """The :class:`_EvScreen` of a split with probabilities; None when a row is negative or sums to 0 (no shortcut).

    O(n C) (O(n log n) more with ``presort``).
    """
    proba, y_pred = predictions.proba, predictions.y_pred
    n = predictions.n
    ratio, lead = np.empty(n), np.empty(n)
    total_min, lowest = np.inf, 0.0
    for start in range(0, n, _EV_CHUNK):  # blocks of rows: the masked copy stays small
        block = np.array(proba[start:start + _EV_CHUNK], dtype=np.float64)
        rows = np.arange(block.shape[0])
        picked = y_pred[start:start + _EV_CHUNK]
        top = block[rows, picked]
        total = block.sum(axis=1)
        lowest = min(lowest, float(block.min()))
        total_min = min(total_min, float(total.min()))
        block[rows, picked] = -np.inf
        with np.errstate(invalid="ignore", divide="ignore"):
            np.divide(top, total, out=ratio[start:start + _EV_CHUNK])
            np.divide(top - block.max(axis=1), total, out=lead[start:start + _EV_CHUNK])
    if n == 0 or lowest < 0 or not total_min > 0 or not np.isfinite(ratio).all():
        return None
    near = np.flatnonzero(lead <= _TIE_CAP)
    near = near[np.argsort(lead[near], kind="stable")]
    order = ratio_sorted = position = None
    if presort:
        order = np.argsort(ratio, kind="stable")
        order = order.astype(np.int32) if n < 2**31 else order  # kept per split: 4 bytes an item
        ratio_sorted = ratio[order]
        position = np.empty_like(order)
        position[order] = np.arange(n, dtype=order.dtype)
        ratio = None  # kept per split: the order and the places say all the cut needs
    return _EvScreen(ratio, total_min, near, lead[near], order, ratio_sorted, position)


class _EvPlan:
    """The expected-value rule's actions for one three-value use case, in two parts.

    Items whose top share is above ``cut`` (+ margin) act on their top class, those below abstain; the
    ``exact`` items (near the cut, or near a tie between classes) are decided by their expected values:
    ``exact_actions``. ``acted`` is where the acting items start in ``screen.order`` (None: no order kept).
    """

    __slots__ = ("screen", "y_pred", "n_classes", "high", "acted", "band_start", "exact", "exact_actions")

    def __init__(self, screen: _EvScreen, y_pred: np.ndarray, n_classes: int, high: float, acted: int | None,
                 band_start: int | None, exact: np.ndarray, exact_actions: np.ndarray):
        self.screen, self.y_pred, self.n_classes, self.high = screen, y_pred, n_classes, high
        self.acted, self.band_start, self.exact, self.exact_actions = acted, band_start, exact, exact_actions

    @property
    def key(self) -> tuple:
        """Equal keys, equal actions (on the same split, with the screen's ``order`` kept)."""
        return (self.band_start, self.acted, self.exact.tobytes(), self.exact_actions.tobytes())

    def acting(self, items=slice(None)) -> np.ndarray:
        """Whether the bulk rule acts on ``items`` (all by default): their top share is above the cut's margin."""
        if self.screen.order is None:
            return self.screen.ratio[items] > self.high
        return self.screen.position[items] >= self.acted

    def actions(self) -> np.ndarray:
        # A comparison over every item is faster than scattering through ``order``; both name the same items.
        actions = np.where(self.acting(), self.y_pred, self.n_classes).astype(np.int64)
        actions[self.exact] = self.exact_actions
        return actions


def _ev_plan(predictions: Predictions, matrix: ValueMatrix, screen: _EvScreen | None = None) -> _EvPlan | None:
    """The shortcut's plan, or None where it does not apply (not a three-value use case, correct <= wrong, ...).

    For the use case (c, a, w) acting on class k is worth ``p_k c + (S - p_k) w`` and abstaining ``S a``
    (``S`` the row sum), so with ``c > w`` the top class beats every other one and beats abstaining
    exactly when its share ``p_top / S`` reaches ``(a - w) / (c - w)``. Items within a round-off margin of
    that cut, or whose top class leads another by less than the margin, are decided as before, by
    :func:`_expected_values` (whose tie rule they need); for every other item both ways agree.
    """
    use_case = matrix.as_use_case()
    if use_case is None or not use_case.v_correct > use_case.v_wrong:
        return None
    if screen is None:
        screen = _ev_screen(predictions)
        if screen is None:
            return None
    correct, abstain, wrong = use_case.v_correct, use_case.v_abstain, use_case.v_wrong
    n_classes = predictions.n_classes
    finfo = np.finfo(np.float64)
    cut = (abstain - wrong) / (correct - wrong)
    scale = max(abs(correct), abs(abstain), abs(wrong))
    # Each expected value is within 2 (C + 1) (eps |row| max|V| + tiny) of exact (see _expected_values): the
    # comparison is sure beyond twice that, here doubled again, plus the round-off of the share and the cut.
    margin = (8 * (n_classes + 1) * (finfo.eps * scale + finfo.smallest_subnormal / screen.total_min)
              / (correct - wrong) + 8 * finfo.eps * (abs(cut) + 1))
    if not (math.isfinite(cut) and margin < _TIE_CAP):
        return None
    low, high = cut - margin, cut + margin
    tied = screen.near_tie[:np.searchsorted(screen.near_tie_gap, margin, side="right")]
    if screen.order is None:
        band = np.flatnonzero((screen.ratio >= low) & (screen.ratio <= high))
        band_start = acted = None
    else:
        band_start = int(np.searchsorted(screen.ratio_sorted, low, side="left"))
        acted = int(np.searchsorted(screen.ratio_sorted, high, side="right"))
        band = screen.order[band_start:acted]
    exact = np.union1d(band, tied).astype(np.intp)
    exact_actions = _expected_value_actions_exactly(predictions.proba[exact], predictions.y_pred[exact],
                                                    matrix.values)
    return _EvPlan(screen, predictions.y_pred, n_classes, high, acted, band_start, exact, exact_actions)


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
