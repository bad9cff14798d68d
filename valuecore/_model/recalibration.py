"""Post-hoc recalibration of confidences: the maps, fitted on a labelled split and applied anywhere.

A reject option accepts a prediction iff its confidence reaches a threshold,
and the value-optimal threshold of seed 003 (eq. 6) assumes the confidence is
calibrated. Seed 003 section 4.2.3 recalibrates every model with temperature
scaling (Guo et al., 2017) before thresholding; this module offers that and
two alternatives, fitted on a labelled tuning split and applied anywhere:

``"temperature"``
    ``softmax(logits / T)`` with one ``T > 0`` chosen to minimise the weighted
    negative log-likelihood. The class ranking of every row is kept, so
    predictions and accuracy never change. Needs the probability vector.
``"isotonic"``
    A monotone non-decreasing map of the top-label confidence to the chance of
    being correct. Only ``confidence`` changes; ``proba`` is left as it was,
    so afterwards the confidence no longer equals the largest probability.
    Works for runs that only report the top label.
``"platt"``
    A logistic regression of the true class on the log-odds of the positive
    class (``classes[1]``), binary runs only. It returns a new probability
    vector and the prediction becomes its argmax, so unlike temperature
    scaling it can change predictions (when the fitted intercept moves the
    decision point away from 0.5).
``"none"``
    The identity, so that "no recalibration" is a calibrator like the others.

Everything is weighted by ``Predictions.sample_weight``.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

# scipy and scikit-learn are imported where they are used: importing valuecore (and
# the command line, which names calibrations) stays light.

from .predictions import Predictions
from .values import float_or_infinite, shown_value

__all__ = [
    "Calibrator",
    "describe_calibration",
    "fit_calibration",
]

METHODS = ("none", "temperature", "isotonic", "platt")

# Wrongly typed parameters raise ValueError, not TypeError (hence the
# "noqa: TRY004"s): they come from user-edited JSON and the dashboard reports
# every ValueError as a message.

# Probabilities are floored before taking logs so that a model that claims
# certainty and is wrong costs a large but finite amount.
_PROBA_FLOOR = 1e-12
# Temperatures outside [0.05, 20] mean the scores carry (almost) no usable
# ranking information; capping keeps the optimiser away from degenerate ends.
_T_BOUNDS = (0.05, 20.0)

# name -> (required keys, optional keys with their defaults)
_PARAM_SPEC: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "none": ((), {}),
    "temperature": (("temperature",), {"use_logits": True}),
    "isotonic": (("x", "y"), {"positive_class": False}),
    "platt": (("a", "b"), {"use_logits": True}),
}

# The range of a stored temperature and of Platt's a and b, as policy.schema.json states them: beyond it a
# temperature of 1e-320 divides scores into infinities (NaN confidences, every item silently handed off).
TEMPERATURE_RANGE = (1e-6, 1e6)
PLATT_BOUND = 1e6

# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------
def _check_method(method) -> str:
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"unknown calibration method {method!r}; choose one of {list(METHODS)}")
    return method


def _finite_float(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"calibrator parameter {name!r} must be a number, got {value!r}")  # noqa: TRY004
    number = float_or_infinite(value)
    if not math.isfinite(number):
        raise ValueError(f"calibrator parameter {name!r} must be finite, got {shown_value(value)}")
    return number


def _float_tuple(values, name: str) -> tuple[float, ...]:
    raw = np.asarray(values, dtype=object) if isinstance(values, (list, tuple)) else np.asarray(values)
    if raw.ndim != 1 or raw.size == 0:
        raise ValueError(f"calibrator parameter {name!r} must be a non-empty list of numbers")
    # Numbers only: "0.5" or true would be read as 0.5 and 1.0 by a float conversion.
    if not all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
               for v in raw.tolist()):
        raise ValueError(f"calibrator parameter {name!r} must be a list of numbers (not text or true/false)")
    array = raw.astype(np.float64)
    if not np.isfinite(array).all():
        raise ValueError(f"calibrator parameter {name!r} has NaN or infinite values")
    if array.min() < 0 or array.max() > 1:
        raise ValueError(f"calibrator parameter {name!r} must lie in [0, 1] (confidences), got values from "
                         f"{array.min():g} to {array.max():g}")
    return tuple(float(v) for v in array)


def _validate_params(method: str, params) -> dict[str, Any]:
    if not isinstance(params, Mapping):
        raise ValueError(f"calibrator params must be a mapping, got {type(params).__name__}")  # noqa: TRY004
    required, optional = _PARAM_SPEC[method]
    missing = [key for key in required if key not in params]
    if missing:
        raise ValueError(f"a {method!r} calibrator needs the parameters {missing}; got {sorted(params)}")
    unknown = sorted(set(params) - set(required) - set(optional))
    if unknown:
        raise ValueError(
            f"unexpected parameters {unknown} for a {method!r} calibrator; "
            f"it takes {list(required) + list(optional)}"
        )
    out: dict[str, Any] = {}
    if method == "temperature":
        temperature = _finite_float(params["temperature"], "temperature")
        low, high = TEMPERATURE_RANGE
        if not low <= temperature <= high:
            raise ValueError(f"temperature must be positive, from {low:g} to {high:g} (where the recalibrated "
                             f"confidences stay finite), got {temperature!r}")
        out["temperature"] = temperature
    elif method == "platt":
        out["a"] = _finite_float(params["a"], "a")
        out["b"] = _finite_float(params["b"], "b")
    elif method == "isotonic":
        x = _float_tuple(params["x"], "x")
        y = _float_tuple(params["y"], "y")
        if len(x) != len(y):
            raise ValueError(f"isotonic breakpoints x and y differ in length ({len(x)} vs {len(y)})")
        if np.any(np.diff(x) < 0):
            raise ValueError("isotonic breakpoints x must be sorted in non-decreasing order")
        if np.any(np.diff(y) < 0):
            raise ValueError("isotonic values y must be non-decreasing (the map is monotone)")
        out["x"], out["y"] = x, y
    for key, default in optional.items():
        value = params.get(key, default)
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"calibrator parameter {key!r} must be true or false, got {value!r}")  # noqa: TRY004
        out[key] = bool(value)
    if method == "isotonic" and not out["positive_class"]:
        del out["positive_class"]  # the usual top-label map keeps its plain {x, y} form
    return out


def _require_binary(classes: tuple[str, ...] | int, what: str) -> None:
    n_classes = classes if isinstance(classes, int) else len(classes)
    if n_classes != 2:
        shown = "" if isinstance(classes, int) else f" {list(classes)}"
        raise ValueError(
            f"{what} works on binary runs only; this run has {n_classes} classes{shown}. "
            "Use 'temperature' or 'isotonic' for multiclass runs"
        )


# --------------------------------------------------------------------------
# the score each parametric method rescales
# --------------------------------------------------------------------------
def _log_proba(proba: np.ndarray) -> np.ndarray:
    """``log(clip(proba, 1e-12, 1))`` in float64, by blocks of rows that stay in cache (same bits, no temporary)."""
    out = np.empty(proba.shape)
    for start in range(0, proba.shape[0], _SOFTMAX_ROWS_PER_BLOCK):
        block = out[start:start + _SOFTMAX_ROWS_PER_BLOCK]
        block[...] = proba[start:start + _SOFTMAX_ROWS_PER_BLOCK]
        np.log(np.clip(block, _PROBA_FLOOR, 1.0, out=block), out=block)
    return out


def _logits_agree(logits: np.ndarray, y_pred: np.ndarray) -> bool:
    # Logits that rank another class first (e.g. taken from a different model
    # or rounded differently) would make temperature scaling disagree with the
    # reported prediction; "auto" then falls back to the probabilities.
    if logits.shape[0] == 0:
        return True
    rows = np.arange(logits.shape[0])
    return bool(np.all(logits[rows, y_pred] >= logits.max(axis=1)))


def _resolve_use_logits(predictions: Predictions, use_logits, what: str) -> bool:
    if isinstance(use_logits, str) and use_logits == "auto":
        return predictions.logits is not None and _logits_agree(predictions.logits, predictions.y_pred)
    if not isinstance(use_logits, (bool, np.bool_)):
        raise ValueError(f"use_logits must be 'auto', True or False, got {use_logits!r}")  # noqa: TRY004
    if use_logits and predictions.logits is None:
        raise ValueError(f"{what} was asked to use logits (use_logits=True) but this run has none")
    return bool(use_logits)


def _temperature_scores(proba, logits, use_logits: bool) -> tuple[np.ndarray, bool]:
    """Scores whose softmax is the model's probability, and whether they are logits."""
    if logits is not None and (use_logits or proba is None):
        return np.asarray(logits, dtype=np.float64), True
    # log p is the logit up to a per-row constant, which softmax ignores, so
    # for a softmax model both inputs give the same result (up to the floor).
    return _log_proba(np.asarray(proba)), False


_SOFTMAX_ROWS_PER_BLOCK = 1 << 13


def _temperature_softmax(proba, logits, use_logits: bool, temperature: float):
    """``softmax(scores / temperature)`` of :func:`_temperature_scores`, in cache-sized blocks of rows.

    Returns ``(proba, scaled, used_logits)``: the new probabilities, shape (n, n_classes),
    float64; ``scores / temperature`` when the scores are logits (else None); whether they
    are. The same float operations as ``scipy.special.softmax`` row by row (maximum,
    shift, exp, sum, divide), so the same bits, about three times faster: each block
    stays in cache and no full-size temporary is made.
    """
    used_logits = logits is not None and (use_logits or proba is None)
    source = np.asarray(logits if used_logits else proba)
    n, n_classes = source.shape
    # Only logits can overflow (log-probabilities stay above log 1e-12), and only for a temperature below 1.
    if used_logits and temperature < 1 and n and np.abs(source).max() > np.finfo(np.float64).max * temperature:
        raise ValueError(f"logits as large as {float(np.abs(source).max()):.3g}, divided by the temperature "
                         f"{temperature:g}, exceed the largest number a float holds: the confidences would be NaN")
    out = np.empty((n, n_classes))
    scaled = np.empty((n, n_classes)) if used_logits else None
    for start in range(0, n, _SOFTMAX_ROWS_PER_BLOCK):
        stop = min(start + _SOFTMAX_ROWS_PER_BLOCK, n)
        block = out[start:stop]
        block[...] = source[start:stop]  # float64, as _temperature_scores converts
        if not used_logits:
            np.log(np.clip(block, _PROBA_FLOOR, 1.0, out=block), out=block)
        np.divide(block, temperature, out=block)
        if used_logits:
            scaled[start:stop] = block
        np.subtract(block, block.max(axis=1, keepdims=True), out=block)
        np.exp(block, out=block)
        np.divide(block, block.sum(axis=1, keepdims=True), out=block)
    return out, scaled, used_logits


def _platt_scores(proba, logits, use_logits: bool) -> np.ndarray:
    """Log-odds of the positive class ``classes[1]``."""
    if logits is not None and (use_logits or proba is None):
        logits = np.asarray(logits, dtype=np.float64)
        return logits[:, 1] - logits[:, 0]
    p = np.clip(np.asarray(proba, dtype=np.float64)[:, 1], _PROBA_FLOOR, 1.0 - _PROBA_FLOOR)
    return np.log(p) - np.log1p(-p)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-z))`` in numpy alone, so that the serving runtime (numpy only) and the
    pipeline compute the same bits; an overflowing exp gives exactly 0, as scipy's expit."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-z))


# --------------------------------------------------------------------------
# the calibrator
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Calibrator:
    """A fitted recalibration map, serialisable to plain JSON.

    Build one with :func:`fit_calibration`, or from a stored dict with
    :meth:`from_dict`. The constructor validates and normalises ``params``
    (numbers become ``float``, breakpoint lists become tuples).

    Parameters
    ----------
    method : {"none", "temperature", "isotonic", "platt"}
    params : dict
        ``{}`` for ``"none"``; ``{"temperature": T, "use_logits": bool}``;
        ``{"x": [...], "y": [...]}`` for isotonic (breakpoints of the map,
        reproduced by ``np.interp(confidence, x, y)``, which also clips
        outside ``[x[0], x[-1]]``); ``{"a": a, "b": b, "use_logits": bool}``
        for Platt, where ``P(classes[1]) = 1 / (1 + exp(-(a * s + b)))`` and
        ``s`` is the log-odds of ``classes[1]``. ``use_logits`` (default
        True) says to read ``logits`` when the predictions carry them rather
        than ``log(proba)``; for a softmax model both give the same answer.

    Examples
    --------
    >>> cal = Calibrator("temperature", {"temperature": 2.0})
    >>> cal.to_dict()
    {'method': 'temperature', 'temperature': 2.0, 'use_logits': True}
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.2, 0.8]], y_true=[0, 0])
    >>> q = cal.apply(p)
    >>> q.y_pred.tolist(), q.confidence.round(3).tolist()
    ([0, 1], [0.75, 0.667])
    """

    method: str
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        method = _check_method(self.method)
        object.__setattr__(self, "params", _validate_params(method, self.params))

    def __hash__(self) -> int:
        # params holds only floats, bools and tuples after validation
        return hash((self.method, tuple(sorted(self.params.items()))))

    # ------------------------------------------------------------- apply
    def apply(self, predictions: Predictions) -> Predictions:
        """Recalibrated copy of ``predictions``.

        Parameters
        ----------
        predictions : Predictions
            Any split, labelled or not, of the same model and classes.

        Returns
        -------
        Predictions
            ``"temperature"``: new ``proba`` (and ``logits / T`` when logits
            were used, else ``logits=None``); ``y_pred`` is kept as it was, so
            accuracy is exactly unchanged even where rescaling creates
            floating-point ties, and ``confidence`` is the new probability of
            that class. ``"isotonic"``: only ``confidence`` changes.
            ``"platt"``: new binary ``proba``, ``y_pred`` its argmax (may
            change), ``logits=None``. ``"none"``: ``predictions`` itself.
            Computed once per ``predictions`` object and calibrator: asking
            again returns the same object.

        Raises
        ------
        ValueError
            Temperature or Platt on a run without probabilities, Platt on a
            run that is not binary.
        """
        if self.method == "none":
            return predictions
        with _FITTED_LOCK:
            applied = _APPLIED.get(predictions, {}).get(self)
        if applied is None:
            applied = self._apply(predictions)
            with _FITTED_LOCK:
                _APPLIED.setdefault(predictions, {})[self] = applied
        return applied

    def _apply(self, predictions: Predictions) -> Predictions:
        method = self.method
        if method == "isotonic" and self.params.get("positive_class"):
            _require_binary(predictions.classes, "isotonic calibration of the positive class")
            predictions.require_proba("isotonic calibration of the positive class")
            positive = self._isotonic(predictions.normalised_proba()[:, 1])
            return predictions.with_proba(np.column_stack([1.0 - positive, positive]))
        if method == "isotonic":
            return predictions.with_confidence(self._isotonic(predictions.confidence))
        if method == "temperature":
            predictions.require_proba("temperature scaling")
            proba, scaled, used_logits = _temperature_softmax(
                predictions.proba, predictions.logits, self.params["use_logits"], self.params["temperature"]
            )
            rows = np.arange(predictions.n)
            # T > 0 keeps each row's order, but log, division and exp can merge
            # nearly equal scores into exact ties whose argmax would pick the
            # first column; keeping y_pred makes the no-op on predictions exact.
            return replace(
                predictions,
                proba=proba,
                confidence=np.clip(proba[rows, predictions.y_pred], 0.0, 1.0),
                logits=scaled if used_logits else None,
            )
        # platt
        _require_binary(predictions.classes, "Platt scaling")
        predictions.require_proba("Platt scaling")
        positive = self._platt(_platt_scores(predictions.proba, predictions.logits, self.params["use_logits"]))
        return predictions.with_proba(np.column_stack([1.0 - positive, positive]))

    def apply_confidence(self, confidence, proba=None, logits=None) -> np.ndarray:
        """Recalibrated top-label confidence from raw arrays (serving path).

        Parameters
        ----------
        confidence : array-like of shape (n,)
            Top-label confidence; the only input isotonic uses.
        proba : array-like of shape (n, n_classes), optional
            Needed by temperature and Platt (Platt: 2 columns) unless
            ``logits`` is given.
        logits : array-like of shape (n, n_classes), optional

        Returns
        -------
        ndarray of shape (n,), float64 in [0, 1]
            For temperature, the largest rescaled probability; for Platt,
            ``max(q, 1 - q)`` with ``q`` the new ``P(classes[1])``.

        Examples
        --------
        >>> Calibrator("isotonic", {"x": [0.5, 1.0], "y": [0.4, 0.9]}).apply_confidence([0.6, 1.0])
        array([0.5, 0.9])
        """
        confidence = np.asarray(confidence, dtype=np.float64)
        if confidence.ndim != 1:
            raise ValueError(f"confidence must be one-dimensional, got shape {confidence.shape}")
        if self.method == "none":
            return confidence.copy()
        if self.method == "isotonic" and not self.params.get("positive_class"):
            return self._isotonic(confidence)
        if self.method == "isotonic":
            if proba is None or np.shape(proba)[-1] != 2:
                raise ValueError("isotonic calibration of the positive class needs the two-column proba")
            positive = self._isotonic(np.asarray(proba, dtype=np.float64)[:, 1])
            return np.maximum(positive, 1.0 - positive)
        if proba is None and logits is None:
            raise ValueError(f"{self.method} calibration needs proba or logits, not only the confidence")
        for name, array in (("proba", proba), ("logits", logits)):
            if array is not None:
                shape = np.shape(array)
                if len(shape) != 2 or shape[0] != confidence.shape[0]:
                    raise ValueError(
                        f"{name} must have shape ({confidence.shape[0]}, n_classes), got {shape}"
                    )
        if self.method == "temperature":
            scaled_proba, _, _ = _temperature_softmax(proba, logits, self.params["use_logits"],
                                                      self.params["temperature"])
            return np.clip(scaled_proba.max(axis=1), 0.0, 1.0)
        _require_binary(np.shape(proba if proba is not None else logits)[1], "Platt scaling")
        positive = self._platt(_platt_scores(proba, logits, self.params["use_logits"]))
        return np.maximum(positive, 1.0 - positive)

    def _isotonic(self, confidence: np.ndarray) -> np.ndarray:
        return np.clip(np.interp(confidence, self.params["x"], self.params["y"]), 0.0, 1.0)

    def _platt(self, scores: np.ndarray) -> np.ndarray:
        return _sigmoid(self.params["a"] * scores + self.params["b"])

    # ------------------------------------------------------------- serialise
    def to_dict(self) -> dict[str, Any]:
        """Plain ``json.dumps``-able dict; see :meth:`from_dict`.

        Examples
        --------
        >>> Calibrator("platt", {"a": 1.5, "b": -0.25}).to_dict()
        {'method': 'platt', 'a': 1.5, 'b': -0.25, 'use_logits': True}
        """
        out: dict[str, Any] = {"method": self.method}
        for key, value in self.params.items():
            out[key] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibrator:
        """Inverse of :meth:`to_dict`.

        Raises
        ------
        ValueError
            Not a mapping, no or unknown ``method``, missing, unexpected or
            invalid parameters.

        Examples
        --------
        >>> Calibrator.from_dict({"method": "temperature", "temperature": 1.73}).params
        {'temperature': 1.73, 'use_logits': True}
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"a calibrator dict must be a mapping, got {type(data).__name__}")  # noqa: TRY004
        if "method" not in data:
            raise ValueError(f"a calibrator dict needs a 'method' key (one of {list(METHODS)})")
        method = _check_method(data["method"])
        return cls(method, {k: v for k, v in data.items() if k != "method"})


# --------------------------------------------------------------------------
# fitting
# --------------------------------------------------------------------------
def fit_calibration(predictions: Predictions, method: str, *, use_logits="auto") -> Calibrator:
    """Fit a recalibration map on a labelled (tuning) split.

    Parameters
    ----------
    predictions : Predictions
        Labelled predictions of the split to fit on; ``sample_weight``
        weights every item.
    method : {"none", "temperature", "isotonic", "platt"}
    use_logits : {"auto", True, False}
        Temperature and Platt only: fit on ``predictions.logits`` (True), on
        ``log(clip(proba, 1e-12, 1))`` (False), or on logits when present and
        ranking the reported prediction first in every row ("auto").

    Returns
    -------
    Calibrator
        Temperature minimises the weighted NLL of ``softmax(scores / T)``
        over ``T`` in ``[0.05, 20]`` (Newton's method in ``1/T``, where the
        NLL is convex, to a relative step of 1e-9: about five passes over
        the data; a result at a bound means the data asked for more). Isotonic is
        scikit-learn's weighted ``IsotonicRegression`` of correctness on
        top-label confidence. Platt minimises the weighted log-loss of
        ``sigmoid(a * s + b)`` with Platt's (1999) smoothed targets
        ``(W+ + 1) / (W+ + 2)`` and ``1 / (W- + 2)``, where ``W+``/``W-``
        are the weighted class totals rescaled so the weights sum to the
        number of weighted rows; the smoothing keeps ``a`` finite on
        separable data. Fitted once per ``predictions`` object, method and
        ``use_logits``: asking again returns the same calibrator.

    Raises
    ------
    ValueError
        Unknown method, unlabeled split, no positive weight, temperature or
        Platt without probabilities, Platt on a non-binary run.

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.1, 0.9]],
    ...                            y_true=[0, 1, 1, 0])
    >>> cal = fit_calibration(p, "temperature")
    >>> cal.params["temperature"] > 1  # half right at 80-90%: soften
    True
    >>> fit_calibration(p, "isotonic").to_dict()["y"]
    [0.5, 0.5]
    """
    method = _check_method(method)
    is_auto = isinstance(use_logits, str) and use_logits == "auto"
    if not is_auto and not isinstance(use_logits, (bool, np.bool_)):
        raise ValueError(f"use_logits must be 'auto', True or False, got {use_logits!r}")
    predictions.require_labels(f"fitting a {method!r} calibrator")
    if method == "none":
        return Calibrator("none", {})
    weight = predictions.sample_weight
    if predictions.n == 0 or not (weight > 0).any():
        raise ValueError(f"fitting a {method!r} calibrator needs at least one item with positive sample_weight")
    key = (method, "auto" if is_auto else bool(use_logits))
    with _FITTED_LOCK:
        fitted = _FITTED.get(predictions, {}).get(key)
    if fitted is None:
        # Fitted on the answers the model gave: what it declined has no confidence to map.
        answers = predictions.subset(~predictions.model_abstained) if predictions.has_model_abstentions else predictions
        fitted = {"temperature": _fit_temperature, "isotonic": lambda p, _: _fit_isotonic(p),
                  "platt": _fit_platt}[method](answers, use_logits)  # fmt: skip
        with _FITTED_LOCK:
            _FITTED.setdefault(predictions, {})[key] = fitted
    return fitted


# Fitted calibrators by Predictions object (immutable), method and use_logits: a
# run's split is fitted once however many pages, tables and reports ask (the
# dashboard's Calibration page asks twice per model). Entries go with the run.
_FITTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# Likewise a calibrator applied to a split, kept while the raw split lives (the page's
# table applies the calibrator the dashboard has already applied).
_APPLIED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_FITTED_LOCK = threading.Lock()


def _fit_temperature(predictions: Predictions, use_logits) -> Calibrator:
    predictions.require_proba("temperature scaling")
    chosen = _resolve_use_logits(predictions, use_logits, "temperature scaling")
    keep = predictions.sample_weight > 0
    kept = slice(None) if keep.all() else keep  # no copy of the matrices when every row counts
    logits = predictions.logits[kept] if chosen else None
    scores, used = _temperature_scores(predictions.proba[kept], logits, chosen)
    rows = np.arange(scores.shape[0])
    # Shifting each row by a constant changes no softmax; with each row's largest
    # score at 0, exp(beta * score) lies in (0, 1] for every beta > 0 (no overflow).
    if used:  # may be the run's own logits: a new array
        scores = scores - scores.max(axis=1, keepdims=True)
    else:  # a fresh array; log(clip(p)) is largest at the predicted class (argmax p)
        scores -= scores[rows, predictions.y_pred[kept]][:, None]
    weight = predictions.sample_weight[kept] / predictions.sample_weight[kept].sum()
    true_score = scores[rows, predictions.y_true[kept]]
    # Newton from where a strided subsample's minimum lies: two or three passes over all
    # rows instead of about five. The result is the minimum on all rows either way.
    stride = max(1, scores.shape[0] // _WARM_START_ROWS)
    start = 1.0
    if stride > 1:
        sample_weight = weight[::stride]
        if sample_weight.sum() > 0:
            start = _minimise_nll_in_inverse_temperature(
                scores[::stride], true_score[::stride], sample_weight / sample_weight.sum(), rtol=1e-4
            )
    beta = _minimise_nll_in_inverse_temperature(scores, true_score, weight, start=start)
    # At a bound, the bound itself (1 / (1 / 20) is 19.999999999999996).
    temperature = {_BETA_BOUNDS[0]: _T_BOUNDS[1], _BETA_BOUNDS[1]: _T_BOUNDS[0]}.get(beta, 1.0 / beta)
    return Calibrator("temperature", {"temperature": temperature, "use_logits": used})


# In 1/T: the bounds of T, reversed.
_BETA_BOUNDS = (1.0 / _T_BOUNDS[1], 1.0 / _T_BOUNDS[0])
_NEWTON_RTOL = 1e-9
_NEWTON_MAX_STEPS = 100
_ROWS_PER_BLOCK = 1 << 12  # 330 kB of 10 classes: 5x faster than 1 << 15 (2.6 MB) on this machine
_WARM_START_ROWS = 1 << 15


def _nll_slope_and_curvature(scores, true_score, weight, beta: float) -> tuple[float, float]:
    """First and second derivative in ``beta = 1/T`` of the weighted NLL of ``softmax(beta * scores)``.

    ``NLL(beta) = sum_i w_i (logsumexp(beta s_i) - beta s_i,y)``, so its slope
    is ``sum_i w_i (E[s_i] - s_i,y)`` and its curvature ``sum_i w_i Var(s_i)``,
    moments of the scores under the row's softmax. One pass over the rows, in
    blocks that stay in cache; ``scores`` rows have maximum 0.
    """
    n, n_classes = scores.shape
    ones = np.ones(n_classes)
    buffer = np.empty((min(n, _ROWS_PER_BLOCK), n_classes))
    slope = curvature = 0.0
    for start in range(0, n, _ROWS_PER_BLOCK):
        block = scores[start:start + _ROWS_PER_BLOCK]
        e = buffer[: block.shape[0]]
        np.exp(np.multiply(block, beta, out=e), out=e)
        total = e @ ones  # row sums by a matrix-vector product: several times faster than sum(axis=1)
        e *= block
        mean = (e @ ones) / total
        second = np.einsum("ij,ij->i", e, block) / total
        w = weight[start:start + _ROWS_PER_BLOCK]
        slope += float(np.dot(w, mean - true_score[start:start + _ROWS_PER_BLOCK]))
        curvature += float(np.dot(w, np.maximum(second - mean * mean, 0.0)))
    return slope, curvature


def _minimise_nll_in_inverse_temperature(scores, true_score, weight, *, start: float = 1.0,
                                         rtol: float = _NEWTON_RTOL) -> float:  # fmt: skip
    """The ``beta = 1/T`` in ``_BETA_BOUNDS`` minimising the weighted NLL, by safeguarded Newton steps.

    The NLL is convex in ``beta`` (its curvature is a variance), so its slope
    is non-decreasing and the minimum is where the slope crosses 0, or the
    bound it points beyond. Newton's steps converge quadratically (about 5
    passes over the data from ``beta = 1``): a step below ``_NEWTON_RTOL``
    leaves an error of about its square. A step leaving the bracket known to
    hold the minimum tries the bound there once, then bisects.
    """
    low, high = _BETA_BOUNDS
    tried_low = tried_high = False
    beta = min(max(start, low), high)
    for _ in range(_NEWTON_MAX_STEPS):
        slope, curvature = _nll_slope_and_curvature(scores, true_score, weight, beta)
        if slope == 0.0:
            return beta
        if slope > 0:  # the minimum lies at a smaller beta
            high, tried_high = beta, True
        else:
            low, tried_low = beta, True
        if low >= high:
            return beta  # at a bound, with the slope pointing beyond it
        step = -slope / curvature if curvature > 0 else math.copysign(math.inf, -slope)
        if abs(step) <= rtol * beta:
            return min(max(beta + step, _BETA_BOUNDS[0]), _BETA_BOUNDS[1])
        candidate = beta + step
        if candidate >= high:
            candidate, tried_high = (high, True) if not tried_high else (0.5 * (low + high), True)
        elif candidate <= low:
            candidate, tried_low = (low, True) if not tried_low else (0.5 * (low + high), True)
        beta = candidate
    return beta


def _fit_isotonic(predictions: Predictions, *, positive_class: bool = False) -> Calibrator:
    """Isotonic map of the top-label confidence to being right, or (``positive_class``, binary runs
    with probabilities, as NannyML's CBPE calibrates) of P(classes[1]) to the truth being classes[1]."""
    from sklearn.isotonic import IsotonicRegression

    keep = predictions.sample_weight > 0
    if positive_class:
        _require_binary(predictions.classes, "isotonic calibration of the positive class")
        predictions.require_proba("isotonic calibration of the positive class")
        score, target = predictions.normalised_proba()[keep, 1], predictions.y_true[keep] == 1
    else:
        score, target = predictions.confidence[keep], predictions.correct[keep]
    model = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
    # Fitted on the rank of each distinct confidence: scikit-learn merges inputs closer than
    # float64 resolution (1e-15) into one, which would pool confidences a threshold tells apart.
    distinct, rank = np.unique(score, return_inverse=True)
    model.fit(
        rank.astype(np.float64),
        target.astype(np.float64),
        sample_weight=predictions.sample_weight[keep],
    )
    # scikit-learn predicts by linear interpolation between these thresholds
    # and clips outside them, which is exactly np.interp.
    x = distinct[np.rint(np.asarray(model.X_thresholds_)).astype(np.int64)]
    y = np.clip(np.maximum.accumulate(np.asarray(model.y_thresholds_, dtype=np.float64)), 0.0, 1.0)
    return Calibrator("isotonic", {"x": x.tolist(), "y": y.tolist(), "positive_class": positive_class})


def _fit_platt(predictions: Predictions, use_logits) -> Calibrator:
    from scipy.optimize import minimize
    from scipy.special import expit
    _require_binary(predictions.classes, "Platt scaling")
    predictions.require_proba("Platt scaling")
    chosen = _resolve_use_logits(predictions, use_logits, "Platt scaling")
    keep = predictions.sample_weight > 0
    logits = predictions.logits[keep] if chosen else None
    scores = _platt_scores(predictions.proba[keep], logits, chosen)
    positive = predictions.y_true[keep] == 1
    weight = predictions.sample_weight[keep]
    weight = weight * (weight.size / weight.sum())
    w_pos, w_neg = float(weight[positive].sum()), float(weight[~positive].sum())
    target = np.where(positive, (w_pos + 1.0) / (w_pos + 2.0), 1.0 / (w_neg + 2.0))
    weight = weight / weight.sum()

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = theta[0] * scores + theta[1]
        # log(1 + e^z) - t z is the stable form of the cross-entropy
        value = float(np.dot(weight, np.logaddexp(0.0, z) - target * z))
        residual = weight * (expit(z) - target)
        return value, np.array([np.dot(residual, scores), residual.sum()])

    # start from the identity map (a=1, b=0 returns the input probability)
    result = minimize(loss, x0=np.array([1.0, 0.0]), jac=True, method="L-BFGS-B")
    a, b = (float(v) for v in result.x)
    return Calibrator("platt", {"a": a, "b": b, "use_logits": chosen})


def describe_calibration(calibration) -> str:
    """One line in plain words for a calibration dict (``Calibrator.to_dict()``).

    Examples
    --------
    >>> describe_calibration({"method": "temperature", "temperature": 1.734})
    'temperature scaling, T = 1.734'
    >>> describe_calibration({"method": "none"})
    'none'
    """
    method = calibration.get("method", "none")
    if method == "temperature":
        return f"temperature scaling, T = {calibration['temperature']:.4g}"
    if method == "isotonic":
        of = " of P(positive class)" if calibration.get("positive_class") else ""
        return f"isotonic{of} ({len(calibration.get('x', []))} breakpoints)"
    if method == "platt":
        return f"Platt scaling, a = {calibration['a']:.4g}, b = {calibration['b']:.4g}"
    return "none"
