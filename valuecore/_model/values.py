"""What each outcome is worth: the simple use case and the value matrix.

A :class:`UseCase` is the triple ``(v_correct, v_abstain, v_wrong)`` of seed
000 (Casati et al., eq. 2). A :class:`ValueMatrix` is the general form of
Appendix A / seed 003 section 3.4: shape ``(C, C + 1)``, rows the true class,
columns the predicted class then one last "abstain" column. Every value
computation in the package goes through the matrix; the triple is the special
case whose matrix has ``v_correct`` on the diagonal, ``v_wrong`` elsewhere and
``v_abstain`` in the last column.

Values are made once, at the edge (the dashboard's settings, the command line,
the policy JSON), and the core asks them what it needs through the protocol
both types share, never converting them itself nor asking which type it holds:

- ``values.for_classes(classes)``: the ``(C, C + 1)`` matrix for a run's classes;
- ``values.use_case``: the triple the values were given as (a matrix made by
  ``for_classes`` remembers it), or None for a matrix given as a matrix; where
  it is set, the triple's exact shortcuts (gains from cached counts, the
  calibrated threshold) give bit for bit what they gave the triple;
- ``values.as_use_case()``: the equivalent triple when the entries have its
  shape (for the label-free checks), else None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence, Union

import numpy as np

__all__ = ["UseCase", "ValueMatrix", "Regime", "float_or_infinite", "json_number", "shown_value"]


def float_or_infinite(value) -> float:
    """``float(value)`` of a number, an int too large for a float (400 digits) read as infinite rather than
    raising OverflowError: the callers then refuse it as they refuse 1e400, in words."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def json_number(value) -> float | None:
    """``value`` as a float when it is a JSON number (an int or a float; never true/false, text or a list) that a
    float holds finitely; None otherwise, a 400-digit int included."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float_or_infinite(value)
    return number if math.isfinite(number) else None


def shown_value(value, max_chars: int = 40) -> str:
    """``repr(value)`` for a message, cut to ``max_chars`` (a 400-digit number is not printed whole)."""
    text = repr(value)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


@dataclass(frozen=True)
class Regime:
    """How the ordering of the three values shapes the decision.

    Attributes
    ----------
    kind : {"normal", "abstain_never_pays", "abstain_always_pays", "inverted"}
    reason : str
        One plain-language sentence for a product manager.
    """

    kind: str
    reason: str


@dataclass(frozen=True)
class UseCase:
    """Value, in any currency, of a correct answer, an abstention and a wrong answer.

    Any three finite numbers are legal; orderings other than
    ``v_correct > v_abstain >= v_wrong`` get a defined answer and a
    :attr:`regime` explaining it, never an error or a NaN.

    Examples
    --------
    >>> u = UseCase(v_correct=1.0, v_abstain=0.0, v_wrong=-4.0)
    >>> u.omega, u.calibrated_threshold
    (4.0, 0.8)
    >>> UseCase(1.0, 2.0, 0.0).regime.kind
    'abstain_always_pays'
    """

    v_correct: float
    v_abstain: float
    v_wrong: float

    def __post_init__(self):
        for name in ("v_correct", "v_abstain", "v_wrong"):
            value = getattr(self, name)
            # float() first: math.isfinite raises OverflowError on a 400-digit int
            number = float_or_infinite(value) if isinstance(value, (int, float, np.floating, np.integer)) else math.nan
            if not math.isfinite(number):
                raise ValueError(f"{name} must be a finite number, got {shown_value(value)}")
            object.__setattr__(self, name, number)

    @classmethod
    def from_omega(cls, omega: float) -> "UseCase":
        """The dimensionless use case: correct 1, abstain 0, wrong ``-omega``."""
        return cls(1.0, 0.0, -float(omega))

    @property
    def omega(self) -> float:
        """Penalty ``(v_abstain - v_wrong) / (v_correct - v_abstain)`` (seed 000, eq. 3).

        ``inf`` when a correct answer is worth no more than an abstention
        (abstaining always pays); negative when a wrong answer beats abstaining.
        """
        if self.gain_correct <= 0:
            return math.inf
        return (self.v_abstain - self.v_wrong) / self.gain_correct  # not -gain_wrong: 0.0, never -0.0

    @property
    def gain_correct(self) -> float:
        """What a correct answer earns over abstaining, ``v_correct - v_abstain``."""
        return self.v_correct - self.v_abstain

    @property
    def gain_wrong(self) -> float:
        """What a wrong answer earns over abstaining, ``v_wrong - v_abstain`` (negative in the normal regime)."""
        return self.v_wrong - self.v_abstain

    @property
    def use_case(self) -> "UseCase":
        """Itself (the protocol :class:`ValueMatrix` shares)."""
        return self

    def as_use_case(self) -> "UseCase":
        """Itself (the protocol :class:`ValueMatrix` shares)."""
        return self

    @property
    def regime(self) -> Regime:
        c, a, w = self.v_correct, self.v_abstain, self.v_wrong
        if c > a >= w:
            return Regime("normal", "A prediction is worth acting on when the model is confident enough.")
        if c > a and w > a:
            return Regime(
                "abstain_never_pays",
                "Even a wrong answer is worth more than handing the item over, so the model should answer everything.",
            )
        if a >= c and a >= w:
            return Regime(
                "abstain_always_pays",
                "Handing the item over is worth at least as much as a correct answer, "
                "so the model adds no value: always abstain.",
            )
        return Regime(
            "inverted",
            "A wrong answer is worth more than a correct one; check the values. "
            "A confidence threshold cannot express the best rule here.",
        )

    @property
    def calibrated_threshold(self) -> float | None:
        """Threshold ``omega / (1 + omega)`` for a calibrated model (seed 000 eq. 5b).

        Accept iff ``confidence >= threshold``. ``0.0`` accepts everything;
        ``None`` means always abstain.
        """
        return _calibrated_threshold(self.gain_correct, self.gain_wrong)

    def for_classes(self, classes: Sequence) -> "ValueMatrix":
        """The equivalent ``(C, C + 1)`` value matrix for these classes; it remembers this use case
        (``matrix.use_case``)."""
        n_classes = len(classes)
        values = np.full((n_classes, n_classes + 1), self.v_wrong)
        values[np.arange(n_classes), np.arange(n_classes)] = self.v_correct
        values[:, -1] = self.v_abstain
        matrix = ValueMatrix(tuple(str(c) for c in classes), values)
        object.__setattr__(matrix, "_use_case", self)  # see ValueMatrix.use_case
        return matrix

    def to_dict(self) -> dict:
        omega = self.omega
        return {
            "v_correct": self.v_correct,
            "v_abstain": self.v_abstain,
            "v_wrong": self.v_wrong,
            "omega": omega if math.isfinite(omega) else None,
        }


# Values are multiplied by weights (up to WEIGHT_RANGE) and squared for intervals; within these
# bounds no sum of a run overflows or underflows float64. A UseCase takes any finite numbers (its
# algebra, omega and the calibrated threshold, is exact for all of them); the check is made when
# values meet a run, through its value matrix. Thresholds do not change when every value
# is multiplied by one positive number, so larger or smaller amounts can always be rescaled.
VALUE_LIMIT = 1e100


def _check_magnitude(values: np.ndarray, name: str, *, tiny: bool = False) -> None:
    """Refuse magnitudes above VALUE_LIMIT (and, with ``tiny``, nonzero ones below 1/VALUE_LIMIT)."""
    magnitude = np.abs(values)
    bad = magnitude > VALUE_LIMIT
    if tiny:
        bad |= (magnitude > 0) & (magnitude < 1 / VALUE_LIMIT)
    if bad.any():
        limits = f"0 or between {1 / VALUE_LIMIT:g} and {VALUE_LIMIT:g}" if tiny else f"at most {VALUE_LIMIT:g}"
        raise ValueError(
            f"{name} must be {limits} in magnitude{' for an interval' if tiny else ''}; "
            f"got {values[bad].flat[0]:g}. Express the values in a larger or smaller unit: multiplying "
            "every value by one positive number changes no threshold"
        )


def check_values(values, *, or_else: str | None = None) -> None:
    """Refuse (TypeError, in words) anything but a UseCase or a ValueMatrix (``or_else`` names what else a
    caller takes): the one test of the values' type, where they come in."""
    if not isinstance(values, (UseCase, ValueMatrix)):
        kinds = "a UseCase or a ValueMatrix" if or_else is None else f"a UseCase, a ValueMatrix or {or_else}"
        raise TypeError(f"values must be {kinds}, got {type(values).__name__}")


def check_value_range(values, *, interval: bool = False) -> None:
    """Refuse (ValueError, in words) values that a run's sums cannot hold.

    Called where values meet a run (policies, evaluation, curves, intervals). Values of any
    magnitude up to VALUE_LIMIT are exact for thresholds and totals; an interval squares them,
    so there nonzero values below 1/VALUE_LIMIT are refused too.
    """
    if values is None:
        return
    check_values(values)
    use_case = values.use_case
    if use_case is not None:  # a matrix made from a use case is checked as the use case, every value
        entries = (use_case.v_correct, use_case.v_abstain, use_case.v_wrong)
        # Three floats: checked in Python (a slider move pays for this check), in numpy only to word a refusal.
        if all(abs(v) <= VALUE_LIMIT and not (interval and 0 < abs(v) < 1 / VALUE_LIMIT) for v in entries):
            return
        entries = np.array(entries)
    else:
        entries = values.values
    _check_magnitude(entries, "the values of the use case", tiny=interval)


def _calibrated_threshold(gain_correct: float, gain_wrong: float) -> float | None:
    """Lowest calibrated confidence ``c`` with ``c * gain_correct + (1 - c) * gain_wrong >= 0``.

    Gains are relative to abstaining. Returns 0.0 (accept all) or None (never).
    """
    if gain_correct <= 0 and gain_wrong <= 0:
        # Acting never beats abstaining; ties go to abstaining (fewer automated calls).
        return None
    if gain_wrong >= 0 and gain_correct >= 0:
        return 0.0
    if gain_correct <= gain_wrong:
        # Confidence does not raise the expected gain: accept all or nothing.
        return 0.0 if gain_wrong > 0 else None
    # Through omega, so that policies, VOC curves and acceptance limits share one float formula.
    omega = -gain_wrong / gain_correct
    if math.isinf(omega):  # overflowed: only certainty is worth acting on
        return 1.0
    return max(0.0, float(threshold_for_omega(omega)))


def threshold_for_omega(omega):
    """The calibrated threshold ``omega / (1 + omega)`` (seed 000 eq. 5b), scalar or array.

    The one float formula of the package: the calibrated policy, the calibrated VOC curve and
    :func:`acceptance_limits` all call it, so that an item exactly at the threshold is accepted by
    all of them or by none (``-g_w / (g_c - g_w)`` differs from it by an ulp in about a third of
    use cases). NaN at ``omega = inf`` (always abstain).
    """
    return omega / (1.0 + omega)


@dataclass(frozen=True, eq=False)
class ValueMatrix:
    """Value of each (true class, action) pair.

    Attributes
    ----------
    classes : tuple of str, length C
    values : ndarray of shape (C, C + 1)
        ``values[i, j]`` is the value of predicting class ``j`` when the true
        class is ``i``; ``values[i, C]`` the value of abstaining on class ``i``
        (same orientation as ``sklearn.metrics.confusion_matrix``).

    Examples
    --------
    >>> m = ValueMatrix.binary(tp=10, tn=1, fp=-5, fn=-50, abstain=0, classes=["ok", "fraud"])
    >>> m.values.tolist()
    [[1.0, -5.0, 0.0], [-50.0, 10.0, 0.0]]
    """

    classes: tuple[str, ...]
    values: np.ndarray

    def __post_init__(self):
        # Composed form (NFC), as the loader reads a run's classes: "é" as one character or as "e" and an
        # accent is one class, never a matrix that matches no run.
        classes = tuple(str(c) for c in self.classes)
        if not all(c.isascii() for c in classes):
            import unicodedata

            classes = tuple(unicodedata.normalize("NFC", c) for c in classes)
        repeated = sorted({c for c in classes if classes.count(c) > 1})
        if repeated:
            raise ValueError(f"the value matrix names the classes {repeated} more than once")
        values = np.array(self.values, dtype=np.float64)
        n_classes = len(classes)
        if values.shape != (n_classes, n_classes + 1):
            raise ValueError(
                f"a value matrix for {n_classes} classes must have shape "
                f"({n_classes}, {n_classes + 1}) (true class x predicted classes + abstain), got {values.shape}"
            )
        if not np.isfinite(values).all():
            rows = np.flatnonzero(~np.isfinite(values).all(axis=1)).tolist()
            raise ValueError(f"the value matrix has NaN or infinite entries in rows (true classes) {rows}")
        _check_magnitude(values, "the value matrix")
        values.setflags(write=False)
        object.__setattr__(self, "classes", classes)
        object.__setattr__(self, "values", values)

    @classmethod
    def binary(cls, *, tp: float, tn: float, fp: float, fn: float, abstain: float = 0.0, classes=("0", "1")):
        """The TP/TN/FP/FN business-value matrix of seed 002, plus an abstain value.

        ``classes[1]`` is the positive class.
        """
        return cls(tuple(classes), np.array([[tn, fp, abstain], [fn, tp, abstain]], dtype=float))

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def use_case(self) -> UseCase | None:
        """The use case this matrix was made from (:meth:`UseCase.for_classes`), else None.

        A matrix given as a matrix keeps the matrix's arithmetic even when its entries have the
        use case's shape (:meth:`as_use_case`).
        """
        return getattr(self, "_use_case", None)

    def for_classes(self, classes: Sequence) -> "ValueMatrix":
        """Itself, once checked to be for these classes (in this order)."""
        if self.classes != tuple(str(c) for c in classes):
            raise ValueError(
                f"the value matrix is for classes {list(self.classes)} but the run has classes "
                f"{list(str(c) for c in classes)}"
            )
        return self

    @property
    def gains(self) -> np.ndarray:
        """Shape (C, C): value of predicting ``j`` minus abstaining, for true class ``i``."""
        return self.values[:, :-1] - self.values[:, -1:]

    def as_use_case(self) -> UseCase | None:
        """The equivalent simple use case, or None when the matrix is not of that form."""
        if self.use_case is not None:  # made from it: these are its entries
            return self.use_case
        diagonal = np.diag(self.values[:, :-1])
        off = self.values[:, :-1][~np.eye(self.n_classes, dtype=bool)]
        abstain = self.values[:, -1]
        if np.all(diagonal == diagonal[0]) and np.all(off == off[0]) and np.all(abstain == abstain[0]):
            return UseCase(float(diagonal[0]), float(abstain[0]), float(off[0]))
        return None

    def calibrated_class_thresholds(self) -> dict[str, float | None]:
        """Per predicted class, the threshold a calibrated model should use.

        Seed 003 eqs. 7-8 generalised to C classes: for predicted class ``j``
        the confidence ``c`` is the probability that ``j`` is right; the other
        ``1 - c`` is charged at the worst gain among the other true classes,
        so the threshold is never too permissive. For two classes this is
        exactly eqs. 7-8.
        """
        gains = self.gains
        thresholds = {}
        for j, label in enumerate(self.classes):
            others = np.delete(gains[:, j], j)
            thresholds[label] = _calibrated_threshold(float(gains[j, j]), float(others.min()))
        return thresholds

    def to_dict(self) -> dict:
        return {"classes": list(self.classes), "value_matrix": self.values.tolist()}

    @classmethod
    def from_dict(cls, data: dict) -> "ValueMatrix":
        """Read ``{"classes": [...], "value_matrix": [[...], ...]}`` (parsed JSON); ValueError naming the key, row
        or entry at fault: the classes a list of names, one row per class, each of C + 1 JSON numbers (true/false
        and text such as "1" are no numbers, as the policy schema says)."""
        classes = data["classes"]
        if not isinstance(classes, (list, tuple)) or not all(isinstance(c, str) and c for c in classes):
            raise ValueError(f"the value matrix's classes must be a list of class names (non-empty strings), got "
                             f"{shown_value(classes)}")
        rows = data["value_matrix"]
        if not isinstance(rows, (list, tuple)):
            raise ValueError(f"the value matrix must be a list of rows, one per true class, got {type(rows).__name__}")
        width, columns = len(classes) + 1, [*classes, "abstain"]
        shape = (f"a value matrix for {len(classes)} classes must have shape ({len(classes)}, {width}) (true class x "
                 "predicted classes + abstain)")
        if len(rows) != len(classes):
            raise ValueError(f"{shape}, got {len(rows)} rows")
        for i, (row, true) in enumerate(zip(rows, classes)):
            if not isinstance(row, (list, tuple)):
                raise ValueError(f"{shape}; row {i} (true class {true!r}) is a {type(row).__name__}, not a list of "
                                 "numbers")
            if len(row) != width:  # ragged or not, the row at fault named (numpy's words named none)
                raise ValueError(f"{shape}; row {i} (true class {true!r}) has {len(row)} values")
            for j, value in enumerate(row):
                if json_number(value) is None:
                    number = isinstance(value, (int, float)) and not isinstance(value, bool)
                    raise ValueError(f"the value matrix's row {i} (true class {true!r}), column {j} "
                                     f"({columns[j]!r}): {shown_value(value)} is not a "
                                     f"{'finite number' if number else 'number (text and true/false are not)'}")
        return cls(tuple(classes), np.asarray(rows, dtype=float))


# A value as the public functions take it: made once at the edge, asked (never converted) below.
Values = Union[UseCase, ValueMatrix]
