"""The policy JSON: the contract between valuecore and a serving system.

A :class:`PolicyDocument` holds the values of the use case (or the value
matrix) and, per model, the fitted :class:`Policy` with the facts a reviewer
needs: which run file it came from (``run_sha256``), its classes, where it was
tuned and what it was worth on the evaluated split. ``to_json`` writes it;
``from_json`` reads it back, refusing anything that does not match the schema
shipped with the package (``policy.schema.json``, JSON Schema draft 2020-12).
The format is described key by key in ``docs/policy-json.md``.

:func:`build_policy_document` is the one place where the pipeline "pick the
splits, fit the calibration, tune the policy, evaluate it, attach a confidence
interval" lives; the command line and the dashboard both call it.

Examples
--------
>>> import valuecore as vc
>>> p = vc.Predictions.from_proba([[0.95, 0.05], [0.8, 0.2], [0.6, 0.4]], y_true=[0, 0, 1])
>>> policy = vc.fit_policy("threshold", vc.presort(p), vc.UseCase(1, 0, -4))
>>> entry = PolicyEntry("demo", None, p.classes, policy, {"split": "val", "n": 3}, None)
>>> doc = PolicyDocument(vc.UseCase(1, 0, -4), (entry,))
>>> again = PolicyDocument.from_json(doc.to_json())
>>> again.entries[0].policy == policy, again.values == doc.values
(True, True)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Mapping, Union

import numpy as np

from .._decide.segment_rule import SEGMENT_RULE
from .._model.choices import ALL_POLICY_KINDS
from .._engine.fitting import Policy
from .._model.predictions import Predictions
from .._io.limits import LimitError, limit, load_json_limited, refusal
from .._model.values import UseCase, ValueMatrix, check_values, json_number, shown_value

if TYPE_CHECKING:  # pragma: no cover
    from .._io.runfiles import ModelRun

__all__ = [
    "ACCEPT_RULE",
    "DATA_FREE_KINDS",
    "SCHEMA_VERSION",
    "UNSEGMENTED_SCHEMA_VERSION",
    "PolicyDocument",
    "PolicyEntry",
    "SplitChoice",
    "align_values",
    "check_against_runs",
    "check_classes",
    "choose_splits",
    "load_json_limited",
    "policy_schema",
    "tuning_note",
    "validate_policy_document",
    "values_from_dict",
    "values_to_dict",
]

Values = Union[UseCase, ValueMatrix]

SCHEMA_VERSION = 3
# Version 2 adds the two_tier policy kind and models[].constraints; version 3 adds models[].segments (a threshold
# per segment). A document without segments is still written as version 2, so that every reader of version 2
# reads it; versions 1 and 2 still load.
READABLE_VERSIONS = (1, 2, 3)
UNSEGMENTED_SCHEMA_VERSION = 2
SCHEMA_FILE = "policy.schema.json"
ACCEPT_RULE = "act on the predicted class iff confidence >= threshold; null = always abstain"

# Kinds whose rule follows from the values alone: they are fitted on data only
# when a calibration is fitted first.
DATA_FREE_KINDS = ("accept_all", "calibrated_threshold", "calibrated_class_thresholds", "expected_value")

DEFAULT_TUNE_SPLIT = "val"
DEFAULT_EVAL_SPLIT = "test"


def _version() -> str:
    # Imported lazily: the package __init__ imports this module before it
    # defines __version__.
    from .. import __version__

    return __version__


# ----------------------------------------------------------------- schema
def policy_schema() -> dict:
    """The JSON Schema (draft 2020-12) of the policy document, as a dict (a fresh copy)."""
    return json.loads(_schema_text())


@lru_cache(maxsize=1)
def _schema_text() -> str:
    return resources.files("valuecore").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _validator():
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(_schema_text()))


def _json_path(path) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the top level"


def validate_policy_document(data: Any) -> None:
    """Check a policy document (parsed JSON) against the schema.

    Raises
    ------
    ValueError
        Not an object; no, or an unsupported, ``schema_version``; or the
        first schema violation, naming the key (``models[0].policy.threshold``)
        and what is wrong with it.

    Examples
    --------
    >>> validate_policy_document({"schema_version": 4})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: schema_version 4 is not supported; this is valuecore ... which reads versions 1, 2 and 3
    """
    from jsonschema.exceptions import best_match

    if not isinstance(data, Mapping):
        raise ValueError(f"a policy document must be a JSON object, got {type(data).__name__}")  # noqa: TRY004
    if "schema_version" not in data:
        raise ValueError(
            f"the policy document has no schema_version; this is valuecore {_version()} "
            f"which reads {_readable()}"
        )
    version = data["schema_version"]
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        shown = version if isinstance(version, (int, float)) and not isinstance(version, bool) else repr(version)
        raise ValueError(
            f"schema_version {shown} is not supported; this is valuecore {_version()} "
            f"which reads {_readable()}"
        )
    errors = list(_validator().iter_errors(data))
    if not errors:
        _check_version_features(data)
        return
    error = best_match(errors)
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    raise ValueError(f"invalid policy document at {_json_path(error.absolute_path)}: {error.message}{more}")


def _readable() -> str:
    *first, last = (str(v) for v in READABLE_VERSIONS)
    return f"versions {', '.join(first)} and {last}" if first else f"version {last}"


def _check_version_features(data: Mapping) -> None:
    """A version 1 document cannot hold what version 2 introduced, nor a version 2 one per-segment entries; a
    per-segment entry's own policy is the rule for unseen segments: hand them off."""
    for k, model in enumerate(data["models"]):
        if "segments" not in model:
            continue
        if data["schema_version"] < 3:
            raise ValueError(f"invalid policy document at models[{k}]: segments need schema_version 3")
        policy = model["policy"]
        if (policy.get("kind") != "threshold" or policy.get("threshold") is not None
                or (policy.get("calibration") or {"method": "none"}).get("method", "none") != "none"):
            raise ValueError(f"invalid policy document at models[{k}].policy: with segments, the policy is the rule "
                             "for unseen segments, which hands them off: kind threshold, threshold null, "
                             "calibration none")
    if data["schema_version"] != 1:
        return
    for k, model in enumerate(data["models"]):
        new = [key for key in ("constraints", "monitoring") if key in model]
        tiered = model["policy"]["kind"] in ("two_tier", "shortlist")
        if tiered or new:
            what = f"a {model['policy']['kind']} policy" if tiered else " and ".join(new)
            raise ValueError(f"invalid policy document at models[{k}]: {what} need schema_version 2")


# ----------------------------------------------------------------- values
def values_to_dict(values: Values) -> dict:
    """The ``use_case`` object of the policy JSON (a simple use case or a value matrix)."""
    check_values(values)
    return _jsonable(values.to_dict())


def values_from_dict(data: Mapping) -> Values:
    """Inverse of :func:`values_to_dict`.

    Reads ``{"v_correct", "v_abstain", "v_wrong"}`` (``omega`` is derived and
    ignored) or ``{"classes", "value_matrix"}``; raises ValueError otherwise.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"the values must be a JSON object, got {type(data).__name__}")  # noqa: TRY004
    if "value_matrix" in data:
        if "classes" not in data:
            raise ValueError("a value matrix needs its 'classes' (the row and column order)")
        return ValueMatrix.from_dict(data)
    missing = [k for k in ("v_correct", "v_abstain", "v_wrong") if k not in data]
    if missing:
        raise ValueError(
            f"the use case misses {missing}: give v_correct, v_abstain and v_wrong, or classes and value_matrix"
        )
    for key in ("v_correct", "v_abstain", "v_wrong"):
        if json_number(data[key]) is None:
            raise ValueError(f"use case {key} must be a finite number, got {shown_value(data[key])}")
    return UseCase(data["v_correct"], data["v_abstain"], data["v_wrong"])


def align_values(values: Values, classes) -> Values:
    """``values`` for a run with these classes: a value matrix is reordered to them.

    Raises ValueError when a value matrix names other classes than the run.
    """
    check_values(values)
    classes = tuple(str(c) for c in classes)
    if isinstance(values, UseCase) or values.classes == classes:
        return values
    if set(values.classes) != set(classes) or len(values.classes) != len(classes):
        raise ValueError(
            f"the value matrix is for classes {list(values.classes)} but the run has classes {list(classes)}"
        )
    order = [values.classes.index(c) for c in classes]
    return ValueMatrix(classes, values.values[np.ix_(order, order + [len(classes)])])


# --------------------------------------------------------------- documents
def _jsonable(obj):
    """Plain JSON types; NaN and infinities become None."""
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        value = float(obj)
        return value if math.isfinite(value) else None
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"cannot write {type(obj).__name__} to the policy JSON")


def _count(value):
    """A weighted count: an int when it is a whole number (450, not 450.0)."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


@dataclass(frozen=True)
class PolicyEntry:
    """The policy of one model, with where it came from and what it is worth.

    Attributes
    ----------
    model : str
    run_sha256 : str or None
        SHA-256 of the run file the policy was built from.
    classes : tuple of str
        The model's classes, in probability-column order.
    policy : Policy
    tuned_on : dict
        ``{"split": name or None, "n": weighted items}``.
    evaluation : dict or None
        ``{"split", "n", "estimated", "value_total", "value_per_item",
        "value_dimensionless", "coverage", "selective_accuracy",
        "selective_risk", "n_correct", "n_wrong", "n_abstain", "ci95"}``.
    notes : tuple of str
        Caveats a reader must see (e.g. "tuned on the evaluated split").
    constraints : tuple of dict
        Constraint records the policy was tuned under (review capacity,
        certified risk); see ``docs/policy-json.md``.
    monitoring : dict or None
        The reference for label-free alerts (see ``monitoring_record``).
    prior_shift : dict or None
        The class mix the policy was re-tuned for (``report --adapt-to``).
    segments : dict or None
        Schema version 3: a threshold per segment (``SegmentFit.to_dict``): ``{"column", "unseen",
        "thresholds": {segment: threshold or None}, "use_cases": {segment: values}, ...}``, or per-class
        thresholds per segment: ``"rule": "class_thresholds"`` and ``"class_thresholds": {segment: {class:
        threshold or None}}`` instead of ``thresholds``. Then ``policy`` is the rule for segments without a
        threshold: always hand off. See ``docs/segments.md``.
    """

    model: str
    run_sha256: str | None
    classes: tuple[str, ...]
    policy: Policy
    tuned_on: Mapping = field(default_factory=lambda: {"split": None, "n": 0})
    evaluation: Mapping | None = None
    notes: tuple[str, ...] = ()
    constraints: tuple = ()
    monitoring: Mapping | None = None
    prior_shift: Mapping | None = None
    segments: Mapping | None = None

    def __post_init__(self):
        object.__setattr__(self, "constraints", tuple(dict(c) for c in self.constraints))
        if self.segments is not None:
            object.__setattr__(self, "segments", _checked_segments(self.segments, self.classes, self.model))
        object.__setattr__(self, "classes", tuple(str(c) for c in self.classes))
        object.__setattr__(self, "notes", tuple(str(n) for n in self.notes))
        if not isinstance(self.policy, Policy):
            raise TypeError(f"policy must be a Policy, got {type(self.policy).__name__}")

    def to_dict(self) -> dict:
        out = {
            "model": self.model,
            "run_sha256": self.run_sha256,
            "classes": list(self.classes),
            "policy": self.policy.to_dict(),
            "tuned_on": dict(self.tuned_on),
            "evaluation": None if self.evaluation is None else dict(self.evaluation),
        }
        if self.notes:
            out["notes"] = list(self.notes)
        if self.constraints:
            out["constraints"] = [dict(c) for c in self.constraints]
        if self.monitoring is not None:
            out["monitoring"] = dict(self.monitoring)
        if self.prior_shift is not None:
            out["prior_shift"] = dict(self.prior_shift)
        if self.segments is not None:
            out["segments"] = dict(self.segments)
        return _jsonable(out)

    @property
    def segment_policy(self):
        """The :class:`~valuecore.constraints.SegmentPolicy` of a per-segment entry; None otherwise."""
        if self.segments is None:
            return None
        from .._engine.segment_policy import SegmentPolicy

        return SegmentPolicy.from_dict(self.segments)

    def segment_values(self, default: Values) -> dict:
        """Each segment's values (the document's ``default`` where the entry gives none), aligned to ``classes``."""
        given = (self.segments or {}).get("use_cases") or {}
        return {s: align_values(values_from_dict(given[s]) if s in given else default, self.classes)
                for s in self.segment_policy.segments}

    @classmethod
    def from_dict(cls, data: Mapping) -> PolicyEntry:
        """Read one entry of ``models`` (already schema-checked); checks the policy against the classes."""
        model = data["model"]
        classes = tuple(data["classes"])
        if len(classes) > limit("classes"):
            raise LimitError(refusal("classes", f"the policy of model {model!r} has too many classes",
                                     f"{len(classes):,} classes"))
        try:
            policy = Policy.from_dict(data["policy"])
            if policy.calibration.get("method", "none") != "none":
                from .._model.recalibration import Calibrator

                Calibrator.from_dict(dict(policy.calibration))
            _check_stored_ranges(policy, classes)
        except ValueError as exc:
            raise ValueError(f"the policy of model {model!r} is invalid: {exc}") from exc
        if policy.class_thresholds is not None:
            named = [c for c, _ in policy.class_thresholds]
            unknown = [c for c in named if c not in classes]
            missing = [c for c in classes if c not in named]
            if unknown or missing:
                raise ValueError(
                    f"the class_thresholds of model {model!r} must give one threshold (or null) per class "
                    f"{list(classes)}"
                    + (f"; unknown {unknown}" if unknown else "")
                    + (f"; missing {missing}" if missing else "")
                )
        return cls(
            model=model,
            run_sha256=data["run_sha256"],
            classes=classes,
            policy=policy,
            tuned_on=dict(data["tuned_on"]),
            evaluation=None if data["evaluation"] is None else dict(data["evaluation"]),
            notes=tuple(data.get("notes", ())),
            constraints=tuple(data.get("constraints", ())),
            monitoring=data.get("monitoring"),
            prior_shift=data.get("prior_shift"),
            segments=data.get("segments"),
        )


def _checked_segments(record: Mapping, classes: tuple, model: str) -> dict:
    """A per-segment record as a plain dict; ValueError (naming the model and segment) when a threshold or
    the values of a segment cannot be used."""
    from .._engine.segment_policy import SegmentPolicy

    record = dict(record)
    if not isinstance(record.get("column"), str) or not record["column"]:
        raise ValueError(f"the segments of model {model!r} need the name of their column")
    try:
        policy = SegmentPolicy.from_dict(record)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"the segments of model {model!r} are invalid: {exc}") from exc
    for segment, pairs in policy.class_thresholds or ():
        unknown = sorted({c for c, _ in pairs} - {str(c) for c in classes})
        if unknown:
            raise ValueError(f"the class_thresholds of segment {segment!r} of model {model!r} name classes {unknown} "
                             f"that the model does not have ({list(classes)})")
    for segment, values in (record.get("use_cases") or {}).items():
        try:
            align_values(values_from_dict(values), classes)
        except ValueError as exc:
            raise ValueError(f"the values of segment {segment!r} of model {model!r} are invalid: {exc}") from exc
    return record


def _check_stored_ranges(policy: Policy, classes: tuple) -> None:
    """What a stored policy must hold beyond a Policy's own checks (the schema's bounds, checked here too
    for the serving runtime, which reads documents without jsonschema)."""
    from .._model.recalibration import PLATT_BOUND

    calibration = policy.calibration
    if calibration.get("method") == "platt":
        for key in ("a", "b"):
            value = calibration.get(key)
            if isinstance(value, (int, float)) and not -PLATT_BOUND <= value <= PLATT_BOUND:
                raise ValueError(f"Platt's parameter {key!r} must lie between {-PLATT_BOUND:g} and {PLATT_BOUND:g}, "
                                 f"got {value!r}")
    k = (policy.shortlist or {}).get("k")
    if k is not None and k > len(classes):
        raise ValueError(f"the shortlist size k={k} exceeds the {len(classes)} classes")


@dataclass(frozen=True, eq=False)
class PolicyDocument:
    """A policy JSON document: the values, and one :class:`PolicyEntry` per model.

    Attributes
    ----------
    values : UseCase or ValueMatrix
    entries : tuple of PolicyEntry
    generated_by : str or None
        Written as ``"valuecore <version>"`` when None; kept as read otherwise.
    recommendation : dict or None
        ``{"model": name or None, "policy": kind or None, "reason": text}``:
        the one model and rule to deploy (see :func:`valuecore.recommend`);
        the named model's entry holds that rule. None: not written.
    reviewers : dict or None
        The people who take the hand-offs when they are not always right
        (``report --reviewer-accuracy``; see docs/constraints.md): their
        accuracy, workload curve and the value of a hand-off they get wrong.
        ``priced_in_use_case`` true: ``use_case`` already holds the expected
        value of a hand-off; false: each policy's value is priced at its own
        hand-off rate. None: not written.
    """

    values: Values
    entries: tuple[PolicyEntry, ...]
    generated_by: str | None = None
    recommendation: Mapping | None = None
    reviewers: Mapping | None = None

    def __post_init__(self):
        check_values(self.values)
        entries = tuple(self.entries)
        names = [e.model for e in entries]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"a policy document names each model once; repeated: {repeated}")
        if isinstance(self.values, ValueMatrix):
            for entry in entries:
                align_values(self.values, entry.classes)  # raises on another class set
        object.__setattr__(self, "entries", entries)
        if self.recommendation is not None:
            object.__setattr__(self, "recommendation", _checked_recommendation(self.recommendation, entries))

    def __eq__(self, other) -> bool:
        if not isinstance(other, PolicyDocument):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    # ------------------------------------------------------------- access
    @property
    def models(self) -> tuple[str, ...]:
        return tuple(e.model for e in self.entries)

    def entry(self, model: str) -> PolicyEntry:
        for entry in self.entries:
            if entry.model == model:
                return entry
        raise KeyError(f"the policy document has no model {model!r}; it has {list(self.models)}")

    def decide(self, model: str, predictions: Predictions, segments=None) -> np.ndarray:
        """Actions of ``model``'s policy on raw predictions: class index, or ``n_classes`` = abstain.

        ``segments`` (shape (n,)): each item's segment, needed by a per-segment entry."""
        entry = self.entry(model)
        check_classes(entry, predictions.classes)
        if entry.segments is not None:
            if segments is None:
                raise ValueError(f"the policy of model {model!r} sets a threshold per segment: give each item's "
                                 f"segment (column {entry.segments['column']!r})")
            return entry.segment_policy.decide(predictions, segments)
        return entry.policy.decide(
            predictions, align_values(self.values, entry.classes).for_classes(entry.classes)
        )

    # ------------------------------------------------------ serialisation
    def to_dict(self) -> dict:
        """Plain JSON-able dict (NaN and infinities written as null)."""
        return _jsonable(
            {
                "schema_version": (SCHEMA_VERSION if any(e.segments is not None for e in self.entries)
                                   else UNSEGMENTED_SCHEMA_VERSION),
                "generated_by": self.generated_by or f"valuecore {_version()}",
                "accept_rule": ACCEPT_RULE,
                "use_case": values_to_dict(self.values),
                "models": [entry.to_dict() for entry in self.entries],
                **({} if self.recommendation is None else {"recommendation": dict(self.recommendation)}),
                **({} if self.reviewers is None else {"reviewers": dict(self.reviewers)}),
            }
        )

    def to_json(self) -> str:
        """The document as JSON text (indent 2, UTF-8 safe, never NaN)."""
        return json.dumps(self.to_dict(), indent=2, allow_nan=False, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: Mapping) -> PolicyDocument:
        """Read a parsed document, validating it against the schema first.

        Raises ValueError naming the offending key.
        """
        validate_policy_document(data)
        try:
            values = values_from_dict(data["use_case"])
        except ValueError as exc:
            raise ValueError(f"invalid policy document at use_case: {exc}") from exc
        entries = tuple(PolicyEntry.from_dict(item) for item in data["models"])
        reviewers = data.get("reviewers")
        if reviewers is not None:
            from .._engine.reviewers import Reviewers

            try:
                Reviewers.from_dict(reviewers)
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"invalid policy document at reviewers: {exc}") from exc
        return cls(values=values, entries=entries, generated_by=data.get("generated_by"),
                   recommendation=data.get("recommendation"), reviewers=reviewers)

    @classmethod
    def from_json(cls, text: str | bytes) -> PolicyDocument:
        """Parse and validate policy JSON text; ValueError if it is not JSON or not a valid document."""
        from .._io.limits import load_json_limited

        # Size and nesting depth are checked before parsing; numbers must be finite.
        data = load_json_limited(text, "the policy file")
        return cls.from_dict(data)


RECOMMENDATION_STATUSES = ("deploy", "not_yet", "no_model")


def _checked_recommendation(recommendation: Mapping, entries) -> dict:
    """The recommendation as a plain dict; ValueError when it names a model or rule the entries do not hold.

    Required keys ``model``, ``policy``, ``reason``; optional ``status`` ("deploy", "not_yet": no model is
    shown to earn more than handing items over yet, "no_model": none earns more on the evaluated items) and,
    with "not_yet", ``would_settle``: the most promising (model, policy) and the labelled items in all that
    would show whether it earns more, if its results held (null: no number would).
    """
    where = "invalid policy document at recommendation"
    keys = set(recommendation) if isinstance(recommendation, Mapping) else set()
    if not isinstance(recommendation, Mapping) or not {"model", "policy", "reason"} <= keys or \
            keys - {"model", "policy", "reason", "status", "would_settle"}:
        raise ValueError(f"{where}: it needs the keys model, policy and reason, and may have status and "
                         "would_settle")
    model, kind = recommendation["model"], recommendation["policy"]
    if model is None:
        if kind is not None:
            raise ValueError(f"{where}: no model is recommended, so its policy must be null")
    else:
        entry = next((e for e in entries if e.model == model), None)
        if entry is None:
            raise ValueError(f"{where}: it names model {model!r}, which has no "
                             f"entry in models (they are {[e.model for e in entries]})")
        held = SEGMENT_RULE if entry.segments is not None else entry.policy.kind  # its thresholds per segment
        if held != kind:
            raise ValueError(f"{where}: it names the {kind!r} policy of model "
                             f"{model!r}, whose entry holds a {held!r} policy")
    out = {"model": model, "policy": kind, "reason": str(recommendation["reason"])}
    if "status" in keys:
        status = recommendation["status"]
        if status not in RECOMMENDATION_STATUSES or (status == "deploy") != (model is not None):
            raise ValueError(f"{where}.status: {status!r} must be one of {list(RECOMMENDATION_STATUSES)}, "
                             "\"deploy\" exactly when a model is named")
        out["status"] = status
    if "would_settle" in keys:
        out["would_settle"] = _checked_settle(recommendation["would_settle"], out.get("status"), entries, where)
    return out


def _checked_settle(settle, status, entries, where: str) -> dict:
    where = f"{where}.would_settle"
    if status != "not_yet":
        raise ValueError(f"{where}: only a \"not_yet\" status names what would settle it")
    if not isinstance(settle, Mapping) or set(settle) != {"model", "policy", "labelled_items"}:
        raise ValueError(f"{where}: it needs exactly the keys model, policy and labelled_items")
    models = [e.model for e in entries]
    if settle["model"] not in models:
        raise ValueError(f"{where}: it names model {settle['model']!r}, which has no entry in models "
                         f"(they are {models})")
    if settle["policy"] not in (*ALL_POLICY_KINDS, SEGMENT_RULE):
        raise ValueError(f"{where}.policy: {settle['policy']!r} is not a policy kind")
    items = settle["labelled_items"]
    if items is not None and (isinstance(items, bool) or not isinstance(items, (int, float))
                              or not math.isfinite(items) or items <= 0):
        raise ValueError(f"{where}.labelled_items: {items!r} is not a positive number or null")
    return {"model": settle["model"], "policy": settle["policy"], "labelled_items": items}


# ------------------------------------------------------------ run checks
def check_classes(entry: PolicyEntry, classes) -> None:
    """Refuse (ValueError) when ``entry``'s classes are not exactly ``classes``, in order."""
    classes = tuple(str(c) for c in classes)
    if entry.classes == classes:
        return
    how = (
        "the same classes in another order (class order is the probability-column order)"
        if set(entry.classes) == set(classes) and len(entry.classes) == len(classes)
        else "different classes"
    )
    raise ValueError(
        f"the policy for model {entry.model!r} was made for classes {list(entry.classes)} "
        f"but its run has classes {list(classes)}: {how}"
    )


def check_against_runs(document: PolicyDocument, models: Mapping[str, ModelRun]) -> list[str]:
    """Check a document against loaded runs before applying it.

    Raises
    ------
    ValueError
        When a policy's classes differ from its run's classes (every such
        model is named, with both class lists).

    Returns
    -------
    list of str
        Warnings: a model of the document with no run, or a run file whose
        SHA-256 differs from the one the policy was built from.
    """
    errors, warnings = [], []
    for entry in document.entries:
        run = models.get(entry.model)
        if run is None:
            warnings.append(f"model {entry.model!r} of the policy document is not among the runs ({list(models)})")
            continue
        try:
            check_classes(entry, run.classes)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        if entry.run_sha256 and run.sha256 and entry.run_sha256 != run.sha256:
            warnings.append(
                f"model {entry.model!r}: the run file {run.path} (sha256 {run.sha256[:12]}...) is not the one "
                f"the policy was built from (sha256 {entry.run_sha256[:12]}...)"
            )
    if errors:
        raise ValueError("; ".join(errors))
    return warnings


# ---------------------------------------------------------------- pipeline
@dataclass(frozen=True)
class SplitChoice:
    """Which split of a run tunes the policy and which one is evaluated.

    ``tune`` is None when the run has no separate tuning split: whatever needs
    fitting is then fitted on the evaluated split itself (optimistic).
    """

    tune: str | None
    evaluate: str

    @property
    def tuning_split(self) -> str:
        """The split actually used for tuning (the evaluated one when there is no other)."""
        return self.evaluate if self.tune is None else self.tune


def choose_splits(run: ModelRun, tune_split: str | None = None, eval_split: str | None = None) -> SplitChoice:
    """Pick the tuning and evaluated splits of a run.

    Defaults: evaluate ``"test"`` if present, else the only split, else the
    only split besides the tuning one; tune on ``"val"`` if present (and not
    the evaluated split), else on nothing (``tune=None``). An explicitly named
    split that the run lacks is a ValueError naming the run's splits.
    """
    names = list(run.splits)
    if not names:
        raise ValueError(f"model {run.model!r} has no splits")
    if eval_split is not None:
        if eval_split not in run.splits:
            raise ValueError(f"model {run.model!r} has no split {eval_split!r} to evaluate (its splits: {names})")
        evaluated = eval_split
    elif DEFAULT_EVAL_SPLIT in run.splits:
        evaluated = DEFAULT_EVAL_SPLIT
    elif len(names) == 1:
        evaluated = names[0]
    else:
        others = [s for s in names if s != (tune_split or DEFAULT_TUNE_SPLIT)]
        if len(others) != 1:
            raise ValueError(
                f"model {run.model!r} has splits {names} and none is called {DEFAULT_EVAL_SPLIT!r}: "
                "say which one to evaluate (--eval-split)"
            )
        evaluated = others[0]
    if tune_split is not None:
        if tune_split not in run.splits:
            raise ValueError(f"model {run.model!r} has no split {tune_split!r} to tune on (its splits: {names})")
        tune = tune_split
    elif DEFAULT_TUNE_SPLIT in run.splits and evaluated != DEFAULT_TUNE_SPLIT:
        tune = DEFAULT_TUNE_SPLIT
    else:
        tune = None
    return SplitChoice(tune=tune, evaluate=evaluated)


def tuning_note(model: str, choice: SplitChoice, what: str = "the threshold") -> str | None:
    """The caveat to show when ``what`` was fitted on the evaluated split; None otherwise."""
    if choice.tune is None:
        return (
            f"{model}: no separate tuning split, so {what} was tuned on the evaluated split "
            f"{choice.evaluate!r} itself: its value there is optimistic (an upper bound)"
        )
    if choice.tune == choice.evaluate:
        return (
            f"{model}: {what} was tuned and evaluated on the same split {choice.evaluate!r}: "
            "its value there is optimistic (an upper bound)"
        )
    return None
