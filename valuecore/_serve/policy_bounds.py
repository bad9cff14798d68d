"""The schema's bounds on what the serving runtime reads of a policy document, checked without jsonschema.

``load_policy`` (``_serve/policy.py``) reads documents on servers that may not have jsonschema. Each value a
decision reads (the rule's kind and thresholds, the calibration and its parameters, the assisted tier, the
shortlist, the thresholds per segment, the recommendation's sentence) is held here to the bounds
``policy.schema.json`` gives it, and refused with a ValueError naming its key: never a TypeError or
OverflowError from deeper down, nor a value no decision could use (a temperature of 0 or NaN hands every item
off). The keys the runtime never reads (``tuned_on``, ``evaluation``, ``monitoring``, ``constraints``,
``prior_shift``, ``notes``, ``run_sha256``, a segment record's ``caps`` and ``tuning``, ...) are checked for their
JSON type only (``_check_entry_types``); the full schema is ``PolicyDocument.from_json``'s.

Absent keys the runtime reads as null keep that reading, as the documents of ``docs/serving.md`` rely on it:
``threshold``, ``class_thresholds``, ``assist_threshold`` and ``calibration`` (method none) of a policy.
"""

from __future__ import annotations

import re
from typing import Mapping

from .._model.choices import ALL_POLICY_KINDS
from .._model.values import json_number, shown_value
from .._pipeline.policy_json import values_from_dict

__all__ = ["check_policy", "check_recommendation", "check_segments", "check_threshold", "where"]

_ASSISTED_KEYS = ("v_confirmed_correct", "v_confirmed_wrong", "cost")
_SHORTLIST_KEYS = ("rule", "k", "level", "list_threshold", "values")
_SHORTLIST_SIZE = re.compile(r"[1-9][0-9]*")
# Which kinds take a global threshold and which per-class thresholds (the schema's allOf on kind).
_CLASS_KINDS = ("class_thresholds", "calibrated_class_thresholds")
_NO_THRESHOLD_KINDS = ("accept_all", "expected_value", *_CLASS_KINDS)


def where(path: str, message: str) -> ValueError:
    return ValueError(f"invalid policy document at {path}: {message}")


def check_threshold(value, path: str) -> None:
    if value is None:
        return
    number = json_number(value)  # None for a 400-digit int too: float() would raise OverflowError
    if number is None:
        raise where(path, f"{shown_value(value)} is not a number in [0, 1] or null")
    if not 0 <= number <= 1:
        raise where(path, f"{value!r} is not in [0, 1]")


def _check_number(value, path: str, low: float, high: float, what: str, *, above: bool = False) -> None:
    """``value`` a JSON number (not true/false, text or NaN; a float holds it) from ``low`` (excluded when
    ``above``) to ``high``; ``what`` words the range."""
    number = json_number(value)
    if number is None or not (low < number if above else low <= number) or number > high:
        raise where(path, f"{shown_value(value)} is not {what}")


def _finite(value, path: str) -> None:
    if json_number(value) is None:
        raise where(path, f"{shown_value(value)} is not a finite number")


def _check_boolean(value, path: str) -> None:
    if not isinstance(value, bool):
        raise where(path, f"must be true or false, got {shown_value(value)}")


def _check_object(value, path: str, what: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise where(path, f"must be an object {what}, got {shown_value(value)}")
    return value


def _require(record: Mapping, keys, path: str) -> None:
    missing = next((key for key in keys if key not in record), None)
    if missing is not None:
        raise where(path, f"{missing!r} is a required property")


def _refuse_other_keys(record: Mapping, allowed, path: str, what: str) -> None:
    other = sorted(str(key) for key in record if key not in allowed)
    if other:
        raise where(path, f"{what} takes no {other}; it takes {list(allowed)}")


# ---------------------------------------------------------------- the rule
def check_policy(policy: Mapping, path: str, n_classes: int) -> None:
    """``models[k].policy`` (an object) of a model of ``n_classes`` classes: its kind, thresholds, calibration and
    tiers within the schema's bounds."""
    _require(policy, ("kind",), path)
    kind = policy["kind"]
    if not isinstance(kind, str) or kind not in ALL_POLICY_KINDS:
        raise where(f"{path}.kind", f"unknown policy kind {shown_value(kind)}; expected one of "
                                    f"{list(ALL_POLICY_KINDS)}")
    for key in ("threshold", "assist_threshold"):
        check_threshold(policy.get(key), f"{path}.{key}")
    if kind in _NO_THRESHOLD_KINDS and policy.get("threshold") is not None:
        raise where(f"{path}.threshold", f"a {kind} policy takes no global threshold: it must be null")
    per_class = policy.get("class_thresholds")
    if kind in _CLASS_KINDS or per_class is not None:
        if kind not in _CLASS_KINDS:
            raise where(f"{path}.class_thresholds", f"a {kind} policy takes no class_thresholds: it must be null")
        _check_object(per_class, f"{path}.class_thresholds", "giving each class its threshold (or null)")
        for name, value in per_class.items():
            check_threshold(value, f"{path}.class_thresholds.{name}")
    if "calibration" in policy:  # an object (_check_document); absent, none
        check_calibration(policy["calibration"], f"{path}.calibration")
    if kind == "two_tier":
        _require(policy, ("assisted",), path)
        assisted = _check_object(policy["assisted"], f"{path}.assisted", "giving the assisted tier's values")
        _require(assisted, _ASSISTED_KEYS, f"{path}.assisted")
        for key in _ASSISTED_KEYS:
            _finite(assisted[key], f"{path}.assisted.{key}")
    if kind == "shortlist":
        _require(policy, ("shortlist",), path)
        _check_shortlist(policy["shortlist"], f"{path}.shortlist", n_classes)


def check_calibration(calibration: Mapping, path: str) -> None:
    """A calibration object: a known method with its parameters, of the schema's types and bounds."""
    _require(calibration, ("method",), path)
    method = calibration["method"]
    if method == "none" and isinstance(method, str):
        _refuse_other_keys(calibration, ("method",), path, "a none calibration")
        return
    # Imported where a recalibration will be (a few ms): a document without one needs none of it.
    from .._model.recalibration import _PARAM_SPEC, METHODS, PLATT_BOUND, TEMPERATURE_RANGE

    if not isinstance(method, str) or method not in METHODS:
        raise where(f"{path}.method", f"unknown calibration method {shown_value(method)}; choose one of "
                                      f"{list(METHODS)}")
    required, optional = _PARAM_SPEC[method]  # the optional parameters are true or false
    _require(calibration, required, path)
    _refuse_other_keys(calibration, ("method", *required, *optional), path, f"a {method} calibration")
    for key in optional:
        if key in calibration:
            _check_boolean(calibration[key], f"{path}.{key}")
    if method == "temperature":
        low, high = TEMPERATURE_RANGE
        _check_number(calibration["temperature"], f"{path}.temperature", low, high,
                      f"a temperature from {low:g} to {high:g} (positive, where the recalibrated confidences stay "
                      "finite)")
    elif method == "platt":
        for key in ("a", "b"):
            _check_number(calibration[key], f"{path}.{key}", -PLATT_BOUND, PLATT_BOUND,
                          f"a number from {-PLATT_BOUND:g} to {PLATT_BOUND:g}")
    elif method == "isotonic":
        for key in ("x", "y"):
            points = calibration[key]
            if not isinstance(points, (list, tuple)) or not points:  # a tuple: a dict made in Python
                raise where(f"{path}.{key}", f"must be a non-empty list of numbers in [0, 1], got "
                                             f"{shown_value(points)}")
            # One pass over plain numbers (a map may have thousands of breakpoints); the slow check finds the culprit.
            if not all((type(point) is float or type(point) is int) and 0 <= point <= 1 for point in points):
                for i, point in enumerate(points):
                    _check_number(point, f"{path}.{key}[{i}]", 0, 1, "a number in [0, 1]")


def _check_shortlist(shortlist, path: str, n_classes: int) -> None:
    _check_object(shortlist, path, "with its rule, list_threshold and values")
    _require(shortlist, ("rule", "list_threshold", "values"), path)
    _refuse_other_keys(shortlist, _SHORTLIST_KEYS, path, "a shortlist")
    rule = shortlist["rule"]
    if rule not in ("top_k", "cumulative") or not isinstance(rule, str):
        raise where(f"{path}.rule", f"{shown_value(rule)} is not one of ['top_k', 'cumulative']")
    check_threshold(shortlist["list_threshold"], f"{path}.list_threshold")
    k, level = shortlist.get("k"), shortlist.get("level")
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= n_classes):
        raise where(f"{path}.k", f"{shown_value(k)} is not a whole number from 1 to the {n_classes} classes, or null")
    if level is not None:
        _check_number(level, f"{path}.level", 0, 1, "a number above 0 and at most 1, or null", above=True)
    values = _check_object(shortlist["values"], f"{path}.values", "mapping a list size to [value if in, value if not]")
    if not values:
        raise where(f"{path}.values", "must give the values of at least one list size")
    for size, pair in values.items():
        if not isinstance(size, str) or not _SHORTLIST_SIZE.fullmatch(size):
            raise where(f"{path}.values", f"{shown_value(size)} is not a list size (a whole number from 1, as text)")
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise where(f"{path}.values.{size}", f"must be [value if the list holds the true class, value if not], "
                                                 f"got {shown_value(pair)}")
        for i, value in enumerate(pair):
            _finite(value, f"{path}.values.{size}[{i}]")


# ---------------------------------------------------------------- a threshold per segment
def check_segments(segments: Mapping, path: str) -> None:
    """``models[k].segments`` (an object): what ``SegmentPolicy`` and the segments' values read of it."""
    _require(segments, ("column", "unseen"), path)
    if not isinstance(segments["column"], str) or not segments["column"]:
        raise where(f"{path}.column", f"must be a non-empty string (the input's column), got "
                                      f"{shown_value(segments['column'])}")
    if segments["unseen"] != "abstain" or not isinstance(segments["unseen"], str):
        raise where(f"{path}.unseen", f"{shown_value(segments['unseen'])} is not one of ['abstain']")
    rule = segments.get("rule", "threshold")
    if rule not in ("threshold", "class_thresholds") or not isinstance(rule, str):
        raise where(f"{path}.rule", f"{shown_value(rule)} is not one of ['threshold', 'class_thresholds']")
    key, other = ("thresholds", "class_thresholds")[::1 if rule == "threshold" else -1]
    _require(segments, (key,), path)
    if other in segments:
        raise where(f"{path}.{other}", f"a segment rule {rule!r} takes {key}, not {other}")
    given = _check_object(segments[key], f"{path}.{key}", "giving each segment its threshold"
                          + (" per class" if key == "class_thresholds" else " (or null)"))
    if not given:
        raise where(f"{path}.{key}", "must name at least one segment")
    for segment, value in given.items():
        if key == "thresholds":
            check_threshold(value, f"{path}.thresholds.{segment}")
            continue
        _check_object(value, f"{path}.class_thresholds.{segment}", "giving each class its threshold (or null)")
        for name, threshold in value.items():
            check_threshold(threshold, f"{path}.class_thresholds.{segment}.{name}")
    use_cases = segments.get("use_cases", {})
    _check_object(use_cases, f"{path}.use_cases", "giving segments their values")
    for segment, values in use_cases.items():
        try:
            values_from_dict(values)
        except (ValueError, TypeError) as exc:
            raise where(f"{path}.use_cases.{segment}", str(exc)) from None


# ---------------------------------------------------------------- the recommendation
def check_recommendation(document: Mapping) -> None:
    """The recommendation, when given, an object (null would read as no recommendation at all), with the sentence
    a document recommending no model is served with (and warns) as text; the rest is ``_checked_recommendation``'s."""
    if "recommendation" not in document:
        return
    recommendation = _check_object(document["recommendation"], "recommendation", "naming the model to deploy")
    if "reason" in recommendation and not isinstance(recommendation["reason"], str):
        raise where("recommendation.reason", f"must be a string, got {shown_value(recommendation['reason'])}")
