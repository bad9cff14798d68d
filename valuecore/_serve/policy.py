"""The numpy-only decision path of ``valuecore.serving``: a stored policy, ready to decide.

:class:`ServingPolicy`, :func:`load_policy`, :class:`Decisions` and the default
labels ``ABSTAIN``, ``CONFIRM`` and ``SHORTLIST``; documented in ``valuecore.serving``, which
exports them beside the integrations (``estimator``, ``mlflow_bridge``)
that build on this module.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np

from .._io.limits import load_json_limited, read_limited
from .._engine.fitting import Policy
from .._pipeline.policy_json import (
    READABLE_VERSIONS,
    PolicyDocument,
    PolicyEntry,
    _check_version_features,
    align_values,
    values_from_dict,
)
from .._model.predictions import Predictions, _first_rows, _label_text
from .._model.values import check_value_range, shown_value
from .policy_bounds import check_policy, check_recommendation, check_segments
from .policy_bounds import where as _where

__all__ = ["ABSTAIN", "CONFIRM", "SHORTLIST", "Decisions", "ServingPolicy", "check_action_labels", "load_policy"]

ABSTAIN = "abstain"
CONFIRM = "confirm"
SHORTLIST = "shortlist"

# How far from 1 a row of probabilities may sum (as a run file's): ``decide`` with a temperature bounds the
# recalibrated confidences by it (``_serve/screen.py``).
SUM_TOLERANCE = 1e-3


@dataclass(frozen=True, eq=False)
class Decisions:
    """What a policy does with each item, as arrays of shape (n,).

    Attributes
    ----------
    action : ndarray of int64
        The class index acted on; ``n_classes`` = abstain; ``n_classes + 1`` =
        a person confirms the predicted class (``two_tier`` only);
        ``n_classes + 2`` = a person picks from a shortlist (``shortlist`` only).
    predicted : ndarray of int64
        The predicted class index after recalibration (Platt scaling can change it).
    confidence : ndarray of float64
        The recalibrated confidence the thresholds compare.
    list_order : ndarray of int64, shape (n, m), or None
        ``shortlist`` only: each listed item's ``m`` most probable classes, most
        probable first (ties to the lower index), ``m`` the longest list shown
        (-1 elsewhere); the list of item ``i`` is ``list_order[i, :list_size[i]]``.
    list_size : ndarray of int64 or None
        ``shortlist`` only: how many classes the item's list shows (0 unless
        its action is the shortlist).
    """

    action: np.ndarray
    predicted: np.ndarray
    confidence: np.ndarray
    list_order: np.ndarray | None = None
    list_size: np.ndarray | None = None


class ServingPolicy:
    """One model's stored policy, ready to decide; build it with :func:`load_policy`.

    Attributes
    ----------
    model : str
    classes : tuple of str
        The order of the probability columns ``decide`` expects.
    policy : Policy
        The decision rule with its calibration.
    values : UseCase or ValueMatrix
        The document's values, in the order of ``classes``.
    segment_policy : SegmentPolicy or None
        A per-segment entry's thresholds (schema version 3): ``decide`` then needs each item's segment.
    segment_column : str or None
        The input column the document says holds the segment.
    """

    def __init__(self, entry: PolicyEntry, values):
        self.model = entry.model
        self.classes = entry.classes
        self.policy = entry.policy
        self.segment_policy = entry.segment_policy
        self.segment_column = None if entry.segments is None else entry.segments["column"]
        self.values = align_values(values, entry.classes)
        self._matrix = self.values.for_classes(self.classes)
        self._lookup = {c: i for i, c in enumerate(self.classes)}
        self.reason: str | None = None

    @classmethod
    def hand_over(cls, entry: PolicyEntry, values, reason: str) -> "ServingPolicy":
        """Hand every item to a person: what a document recommending no model (yet) serves by default.

        ``entry`` gives the classes the outputs are checked against (the model the document names as most
        promising, else its first); ``model`` is None and ``reason`` the document's own sentence.
        """
        served = cls(replace(entry, policy=Policy("threshold", threshold=None)), values)
        served.model, served.reason = None, reason
        return served

    @property
    def kind(self) -> str:
        return self.policy.kind

    def __repr__(self) -> str:
        method = self.policy.calibration.get("method", "none")
        return f"ServingPolicy(model={self.model!r}, kind={self.kind!r}, calibration={method!r})"

    # ------------------------------------------------------------- inputs
    def predictions(self, proba=None, *, y_pred=None, confidence=None, logits=None) -> Predictions:
        """The model outputs as checked :class:`~valuecore.Predictions` (raw, not recalibrated).

        Numbers only (no complex, true/false, text or masked arrays). The columns of a DataFrame are
        matched to the classes by name (``benign`` or ``proba_benign``), in any order; a frame whose
        columns were never named (0, 1, ...) is read in the order of ``classes``.
        """
        if logits is not None:
            logits = _numbers(self._by_class(logits, "logits"), "logits")
        if proba is not None:
            if y_pred is not None or confidence is not None:
                raise ValueError("give proba, or y_pred with confidence, not both")
            proba = _numbers(self._by_class(proba, "proba"), "proba")
            if proba.ndim == 2 and proba.shape[1] != len(self.classes):
                raise ValueError(
                    f"proba has {proba.shape[1]} columns but model {self.model!r} has "
                    f"{len(self.classes)} classes {list(self.classes)} (one column per class, in this order)"
                )
            return Predictions.from_proba(proba, classes=self.classes, logits=logits, sum_tolerance=SUM_TOLERANCE)
        if y_pred is None or confidence is None:
            raise ValueError("give proba (n, n_classes), or both y_pred and confidence")
        if logits is not None:
            raise ValueError("logits go with proba, not with the top label")
        return self._top_label(y_pred, confidence)

    def _by_class(self, frame, name: str):
        """A frame's columns in the order of ``classes``, matched by name; anything else as it is."""
        columns = getattr(frame, "columns", None)
        if columns is None or not hasattr(frame, "to_numpy"):
            return frame
        if type(columns).__name__ == "RangeIndex":  # never named: in the order of the classes
            return _frame_numbers(frame)
        names = [str(c) for c in columns]
        prefix = {"proba": "proba_", "logits": "logit_"}[name]  # the run files' column names
        where: dict = {}
        for k, label in enumerate(names):
            where.setdefault(label.removeprefix(prefix), []).append(k)
        found = [where.get(c, []) for c in self.classes]
        if len(names) != len(self.classes) or any(len(k) != 1 for k in found):
            raise ValueError(
                f"{name}'s columns {_short(names)} are not the classes {_short(self.classes)} of model "
                f"{self.model!r}: name each column by its class (or {prefix}<class>), in any order, or give an "
                "array in the order of the classes"
            )
        return _frame_numbers(frame.iloc[:, [k[0] for k in found]])

    def _top_label(self, y_pred, confidence) -> Predictions:
        confidence = _numbers(confidence, "confidence").astype(np.float64)
        if confidence.ndim != 1:
            raise ValueError(f"confidence must be one-dimensional, got shape {confidence.shape}")
        bad = ~np.isfinite(confidence) | (confidence < 0) | (confidence > 1)
        if bad.any():
            raise ValueError(f"confidence must be a number in [0, 1]; it is not at rows {_first_rows(bad)}")
        codes = self._encode(y_pred)
        if codes.shape[0] != confidence.shape[0]:
            raise ValueError(f"y_pred has {codes.shape[0]} items but confidence has {confidence.shape[0]}")
        return Predictions._finish(self.classes, codes, confidence, None, None, None, None, None, None)

    def _encode(self, labels) -> np.ndarray:
        """Labels (compared as text, as the run files) to class indices, one lookup per distinct label."""
        labels = np.asarray(labels)
        if labels.ndim != 1:
            raise ValueError(f"y_pred must be one-dimensional, got shape {labels.shape}")
        if labels.size == 0:
            return np.zeros(0, np.int64)
        uniques, inverse = np.unique(labels, return_inverse=True)
        codes = np.array([self._lookup.get(_label_text(v), -1) for v in uniques.tolist()], dtype=np.int64)
        result = codes[inverse.reshape(-1)]
        unknown = result < 0
        if unknown.any():
            shown = sorted({str(v) for v in labels[unknown][:50].tolist()})[:5]
            raise ValueError(
                f"y_pred has labels that are not among the classes {list(self.classes)} of model "
                f"{self.model!r}: {shown} at rows {_first_rows(unknown)}"
            )
        return result

    # ------------------------------------------------------------ decisions
    def decisions(self, proba=None, *, y_pred=None, confidence=None, logits=None, segments=None) -> Decisions:
        """Action codes, predicted class and recalibrated confidence of each item; see :class:`Decisions`.

        ``segments`` (shape (n,)): each item's segment, read by a per-segment policy only (required there)."""
        predictions = self.predictions(proba, y_pred=y_pred, confidence=confidence, logits=logits)
        calibrated = self.policy.calibrate(predictions)  # cached: decide() and tiers() below reuse it
        if self.segment_policy is not None:
            if segments is None:
                raise ValueError(f"the policy of model {self.model!r} sets a threshold per segment: give each "
                                 f"item's segment (segments=..., the input's column {self.segment_column!r})")
            action = self.segment_policy.decide(predictions, segments)
        elif self.kind == "two_tier":  # tiers: 0 act, 1 a person confirms, 2 hand off (as evaluate_two_tier)
            tiers = self.policy.tiers(predictions)
            codes = np.array([0, len(self.classes) + 1, len(self.classes)], dtype=np.int64)[tiers]
            action = np.where(tiers == 0, calibrated.y_pred, codes)
        elif self.kind == "shortlist":  # act, hand off with a list, or blank (as evaluate_shortlist)
            from .._engine.shortlist import shortlist_sets

            action = self.policy.decide(predictions, self._matrix)
            order, sizes = shortlist_sets(self.policy, predictions)
            action = np.where(sizes > 0, len(self.classes) + 2, action)
            return Decisions(np.asarray(action, dtype=np.int64), calibrated.y_pred, calibrated.confidence,
                             order, sizes)
        else:
            action = self.policy.decide(predictions, self._matrix)
        return Decisions(np.asarray(action, dtype=np.int64), calibrated.y_pred, calibrated.confidence)

    def labels(self, abstain=ABSTAIN, confirm=CONFIRM, shortlist=SHORTLIST) -> np.ndarray:
        """The label of each action code: the classes, then ``abstain``, ``confirm``, ``shortlist`` (objects).

        ValueError when a label this policy can give (``confirm`` for two tiers, ``shortlist`` for a
        shortlist) equals a class or another such label, as a value or as text."""
        actions = {"abstain": abstain, **({"confirm": confirm} if self.kind == "two_tier" else {}),
                   **({"shortlist": shortlist} if self.kind == "shortlist" else {})}
        check_action_labels(self.classes, actions, self.model)
        out = np.empty(len(self.classes) + 3, dtype=object)
        out[:] = [*self.classes, abstain, confirm, shortlist]
        return out

    def shortlists(self, proba=None, *, logits=None) -> list[tuple]:
        """The classes a person picks from, per item, most probable first; ``()`` for an item acted on or
        handed off blank. ``shortlist`` policies only (they read the probability vector).

        Examples
        --------
        >>> doc = {"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
        ...        "models": [{"model": "m", "classes": ["a", "b", "c"],
        ...                    "policy": {"kind": "shortlist", "threshold": 0.9, "calibration": {"method": "none"},
        ...                               "shortlist": {"rule": "top_k", "k": 2, "list_threshold": 0.5,
        ...                                             "values": {"2": [0.5, -0.1]}}}}]}
        >>> policy = load_policy(doc)
        >>> proba = [[0.95, 0.03, 0.02], [0.1, 0.6, 0.3], [0.4, 0.3, 0.3]]
        >>> policy.decide(proba).tolist()
        ['a', 'shortlist', 'abstain']
        >>> policy.shortlists(proba)
        [(), ('b', 'c'), ()]
        """
        if self.kind != "shortlist":
            raise ValueError(f"model {self.model!r} has a {self.kind} policy, which offers no shortlist")
        decisions = self.decisions(proba, logits=logits)
        names = np.asarray(self.classes, dtype=object)
        return [tuple(names[order[:size]].tolist())
                for order, size in zip(decisions.list_order, decisions.list_size.tolist())]

    def decide(self, proba=None, *, y_pred=None, confidence=None, logits=None,
               abstain=ABSTAIN, confirm=CONFIRM, shortlist=SHORTLIST, segments=None) -> np.ndarray:
        """The action of each item: its class label, ``abstain``, (two tiers) ``confirm`` or (a
        shortlist policy) ``shortlist``, whose list :meth:`shortlists` gives.

        Parameters
        ----------
        proba : array-like of shape (n, n_classes), optional
            Raw (uncalibrated) probabilities in the order of ``classes``.
        y_pred, confidence : array-like of shape (n,), optional
            Instead of ``proba``: the predicted label and its raw confidence
            (calibration none or isotonic, and not the expected-value rule).
        logits : array-like of shape (n, n_classes), optional
            Read by temperature and Platt scaling when the stored
            calibration says ``use_logits``.
        abstain, confirm, shortlist : labels written for those actions.
        segments : array-like of shape (n,), optional
            Each item's segment, for a per-segment policy (schema version 3; required there). An item of a
            segment the policy does not list is handed off.

        Returns
        -------
        ndarray of shape (n,), dtype object
        """
        labels = self.labels(abstain, confirm, shortlist)
        if proba is not None and y_pred is None and confidence is None and logits is None:
            fused, proba = self._fused(proba, labels)
            if fused is not None:
                return fused
        return labels[self._actions(proba, y_pred, confidence, logits, segments)]

    def _fused(self, proba, labels) -> tuple[np.ndarray | None, Any]:
        """(``labels[decisions(proba).action]`` or None, the probabilities as an array): the labels in one pass
        over the probabilities (``_serve/fused.py``) for a threshold rule, per-class thresholds or two tiers
        with no recalibration or a temperature; None where that path does not apply or doubts the input
        (then the general path decides, or names the rows at fault). ``labels``: of each action code."""
        method = self.policy.calibration.get("method", "none")
        if (self.segment_policy is not None or method not in ("none", "temperature")
                or self.kind not in _FUSED_KINDS or (self.kind == "accept_all" and method != "none")):
            return None, proba
        proba = _numbers(self._by_class(proba, "proba"), "proba")
        if proba.ndim != 2 or proba.shape[1] != len(self.classes):
            return None, proba
        from .fused import threshold_labels

        policy, n_classes = self.policy, len(self.classes)
        if self.kind == "accept_all":
            thresholds = [-np.inf]
        elif self.kind == "two_tier":
            thresholds = [np.inf if t is None else t for t in (policy.threshold, policy.assist_threshold)]
        elif self.kind in ("class_thresholds", "calibrated_class_thresholds"):
            thresholds = [policy.thresholds_by_index(self.classes)]  # one per predicted class
        else:
            thresholds = [np.inf if policy.threshold is None else policy.threshold]
        # The labels by (tiers missed, predicted class): acted on, (two tiers) confirmed, handed off.
        lower = [n_classes + 1, n_classes] if self.kind == "two_tier" else [n_classes]
        table = np.take(labels, np.concatenate([np.arange(n_classes), *(np.full(n_classes, c) for c in lower)]))
        temperature = policy.calibration["temperature"] if method == "temperature" else None
        return threshold_labels(proba, thresholds, table, SUM_TOLERANCE, temperature), proba

    def _actions(self, proba, y_pred, confidence, logits, segments=None) -> np.ndarray:
        """``decisions(...).action``; for a threshold rule or two tiers with a temperature, read from
        probabilities alone, without the recalibrated matrix (see ``_serve/screen.py``): the same actions."""
        kinds = ("threshold", "calibrated_threshold", "class_thresholds", "calibrated_class_thresholds", "two_tier")
        if (self.kind not in kinds or self.policy.calibration.get("method") != "temperature" or proba is None
                or logits is not None or y_pred is not None or confidence is not None
                or self.segment_policy is not None):
            return self.decisions(proba, y_pred=y_pred, confidence=confidence, logits=logits,
                                  segments=segments).action
        from .screen import temperature_reaches

        predictions = self.predictions(proba)
        y_pred, n_classes, policy = predictions.y_pred, len(self.classes), self.policy
        if self.kind == "two_tier":
            thresholds = [np.inf if t is None else t for t in (policy.threshold, policy.assist_threshold)]
        elif self.kind in ("class_thresholds", "calibrated_class_thresholds"):
            thresholds = [policy.thresholds_by_index(self.classes)]  # one per predicted class
        else:
            thresholds = [np.inf if policy.threshold is None else policy.threshold]
        reached = temperature_reaches(predictions.proba, y_pred, predictions.confidence,
                                      policy.calibration["temperature"], thresholds, SUM_TOLERANCE)
        if self.kind != "two_tier":
            return np.where(reached[0], y_pred, n_classes)
        return np.where(reached[0], y_pred, np.where(reached[1], n_classes + 1, n_classes))


# The rules ``_fused`` serves in one pass: a threshold (one, one per class, or two tiers) on the confidence.
_FUSED_KINDS = ("accept_all", "threshold", "calibrated_threshold", "class_thresholds", "calibrated_class_thresholds",
                "two_tier")


def _short(items, limit: int = 8) -> str:
    items = [str(i) for i in items]
    return str(items[:limit])[:-1] + (f", ... ({len(items)} in all)]" if len(items) > limit else "]")


def _frame_numbers(frame) -> np.ndarray:
    """A DataFrame's values; pandas' nullable numbers (Float64, Int64) as floats, a missing one as NaN."""
    if all(getattr(dtype, "kind", "O") in "iuf" for dtype in frame.dtypes):
        return frame.to_numpy(dtype=np.float64, na_value=np.nan)
    return frame.to_numpy()  # text, true/false or objects: refused by _numbers, naming them


def _numbers(values, name: str) -> np.ndarray:
    """``values`` as an array of real numbers; ValueError naming what else it holds."""
    if np.ma.isMaskedArray(values):
        raise ValueError(f"{name} is a masked array: fill or drop its masked entries first (a masked entry is no "
                         "number)")
    array = np.asarray(values)
    kind = array.dtype.kind
    what = {"c": "complex numbers", "b": "true/false values", "O": "text or objects", "U": "text", "S": "text",
            "M": "dates", "m": "durations", "V": "records"}.get(kind)
    if what is not None:
        raise ValueError(f"{name} holds {what} (dtype {array.dtype}), not real numbers")
    return array


def _same_label(a, b) -> bool:
    """Whether two labels cannot be told apart: equal as text (as run files compare them) or as values
    (``True == 1``, ``1.0 == 1``)."""
    if _label_text(a) == _label_text(b):
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # an array, or a type that refuses the comparison
        return False


def check_action_labels(classes, actions: Mapping, model: str | None = None, advice: str | None = None) -> None:
    """Refuse (ValueError) action labels (``{"abstain": label, ...}``) that equal a class or each other,
    as values or as text: acting on that class could not be told from the action. ``advice``: what to do
    instead (default: pass another label)."""
    names = list(actions)
    for i, name in enumerate(names):
        for other in names[:i]:
            if _same_label(actions[name], actions[other]):
                raise ValueError(f"the labels of {other} and {name} must differ; both are {actions[name]!r}")
        clash = next((c for c in classes if _same_label(actions[name], c)), None)
        if clash is not None:
            whose = f" of model {model!r}" if model is not None else ""
            raise ValueError(f"the {name} label {actions[name]!r} is also a class{whose} ({clash!r}): acting on "
                             f"that class could not be told from {name}; {advice or f'pass {name}= another label'}")


# ------------------------------------------------------------------ loading
def load_policy(path_or_dict, model: str | None = None) -> ServingPolicy:
    """Read a policy document and return the :class:`ServingPolicy` of one model.

    Parameters
    ----------
    path_or_dict : str, os.PathLike, Mapping or PolicyDocument
        A policy JSON file, its parsed content, or a document.
    model : str, optional
        Which model's policy. By default the only model of the document, or
        the one its ``recommendation`` names.

    Raises
    ------
    ValueError
        The file cannot be read or is not a valid policy document (the
        message names the key); the model is unknown; or the document has
        several models and names none as its recommendation.
    """
    if isinstance(path_or_dict, PolicyDocument):
        document = path_or_dict
    else:
        document = _check_document(_read(path_or_dict))
    recommendation = document.recommendation or {}
    recommended = recommendation.get("model")
    models = list(document.models)
    if model is None:
        if recommendation and recommended is None:
            # The document says to deploy no model (yet): serve exactly that, and say so.
            settle = recommendation.get("would_settle") or {}
            entry = document.entry(settle["model"] if settle.get("model") in models else models[0])
            reason = recommendation.get("reason") or "the policy document recommends no model"
            warnings.warn(f"the policy document recommends no model, so every item is handed to a person: {reason} "
                          "(pass model=... to serve one anyway)", UserWarning, stacklevel=2)
            return ServingPolicy.hand_over(entry, document.values, reason)
        if len(models) == 1:
            model = models[0]
        elif recommended in models:
            model = recommended
        else:
            raise ValueError(
                f"the policy document has {len(models)} models {models} and recommends none: "
                "say which one to serve (model=...)"
            )
    if model not in models:
        raise ValueError(f"the policy document has no model {model!r}; it has {models}")
    return ServingPolicy(document.entry(model), document.values)


def _read(source) -> Any:
    if isinstance(source, Mapping):
        return source
    if isinstance(source, (str, os.PathLike)):
        try:  # a regular file, read no further than the JSON limit: a FIFO or /dev/zero is refused at once
            text = read_limited(source, "the policy")
        except FileNotFoundError:
            raise ValueError(f"{os.fspath(source)}: cannot read the policy file (no such file)") from None
        return load_json_limited(text, f"the policy file {os.fspath(source)}")
    raise TypeError(f"load_policy takes a path, a dict or a PolicyDocument, got {type(source).__name__}")


# The optional keys of a model entry, with the JSON types the schema gives them (``policy.schema.json``):
# checked here too, for the serving runtime reads documents without jsonschema.
_ENTRY_KEY_TYPES = {
    "run_sha256": ((str, type(None)), "a string or null"),
    "tuned_on": (Mapping, "an object"),
    "evaluation": ((Mapping, type(None)), "an object or null"),
    "notes": (list, "a list of strings"),
    "constraints": (list, "a list of objects"),
    "monitoring": (Mapping, "an object"),
    "prior_shift": (Mapping, "an object"),
    "segments": (Mapping, "an object"),
}


def _check_entry_types(item: Mapping, k: int) -> None:
    """Each optional key of ``models[k]`` of its JSON type: a TypeError deeper down names no key."""
    for key, (types, what) in _ENTRY_KEY_TYPES.items():
        if key in item and not isinstance(item[key], types):
            raise _where(f"models[{k}].{key}", f"must be {what}, got {shown_value(item[key])}")
    for key, kind, what in (("notes", str, "a string"), ("constraints", Mapping, "an object")):
        for i, element in enumerate(item.get(key, ())):
            if not isinstance(element, kind):
                raise _where(f"models[{k}].{key}[{i}]", f"must be {what}, got {shown_value(element)}")


def _check_document(data) -> PolicyDocument:
    """The checks a decision needs, without jsonschema; the document they leave."""
    if not isinstance(data, Mapping):
        raise ValueError(f"a policy document must be a JSON object, got {type(data).__name__}")  # noqa: TRY004
    version = data.get("schema_version")
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        raise ValueError(
            f"schema_version {shown_value(version)} is not supported; the serving runtime reads versions "
            f"{', '.join(str(v) for v in READABLE_VERSIONS)}"
        )
    models = data.get("models")
    if not isinstance(models, list) or not models:
        raise _where("models", "must be a non-empty list")
    for k, item in enumerate(models):
        if not isinstance(item, Mapping):
            raise _where(f"models[{k}]", "must be an object")
        for key in ("model", "classes", "policy"):
            if key not in item:
                raise _where(f"models[{k}]", f"{key!r} is a required property")
        if not isinstance(item["model"], str):
            raise _where(f"models[{k}].model", "must be a string")
        if not item["model"]:
            raise _where(f"models[{k}].model", "must not be empty (it names the model)")
        classes = item["classes"]
        if (not isinstance(classes, list) or len(classes) < 2 or len(set(map(str, classes))) != len(classes)
                or not all(isinstance(c, str) and c for c in classes)):
            raise _where(f"models[{k}].classes", "must be a list of at least 2 distinct, non-empty strings")
        _check_entry_types(item, k)
        policy = item["policy"]
        if not isinstance(policy, Mapping) or not isinstance(policy.get("calibration", {}), Mapping):
            raise _where(f"models[{k}].policy", "must be an object with a calibration object")
        check_policy(policy, f"models[{k}].policy", len(classes))
        if "segments" in item:
            check_segments(item["segments"], f"models[{k}].segments")
    _check_version_features(data)
    check_recommendation(data)
    try:
        values = values_from_dict(data.get("use_case"))
        check_value_range(values)  # as a decision will, when the values meet the classes
    except (ValueError, TypeError) as exc:
        raise _where("use_case", str(exc)) from None
    defaults = {"run_sha256": None, "tuned_on": {"split": None, "n": 0}, "evaluation": None}
    entries = tuple(PolicyEntry.from_dict({**defaults, **item}) for item in models)
    # A serving system reads the recommendation for its default model: checked as the document reader checks it.
    return PolicyDocument(values=values, entries=entries, generated_by=data.get("generated_by"),
                          recommendation=data.get("recommendation"))

