"""The policy JSON: the contract between valuecore and a serving system.

A :class:`PolicyDocument` holds the values (a use case or a value matrix) and
one :class:`PolicyEntry` per model; ``to_json`` / ``from_json`` write and
read it, and :func:`validate_policy_document` checks a parsed document against
:func:`policy_schema` (JSON Schema draft 2020-12, version ``SCHEMA_VERSION``; a document without
thresholds per segment is still written as ``UNSEGMENTED_SCHEMA_VERSION``).
:func:`build_policy_document` runs the whole pipeline (pick the splits with
:func:`choose_splits` into a :class:`SplitChoice`, calibrate, tune, evaluate,
interval), one model at a time through :func:`build_policy_entry`;
:func:`tuning_note` is the caveat when a policy was tuned on the evaluated
split. :func:`check_against_runs` and :func:`check_classes` compare a document
with run files. :func:`values_to_dict`, :func:`values_from_dict` and
:func:`align_values` convert the values (``values.for_classes(classes)`` then makes the one
:class:`~valuecore.ValueMatrix` of a run's classes that every stage takes); a use case's
:class:`Regime` says how its ordering reads, and ``VALUE_LIMIT`` is the largest value magnitude computed
exactly. ``ACCEPT_RULE`` is the rule in words, ``POLICY_KINDS`` the rules a policy can be
(``ALL_POLICY_KINDS`` adds ``two_tier``) and ``DATA_FREE_KINDS`` those fitted without data. The
pipeline behind the document (:class:`~valuecore.Pipeline`) plans each model's splits
(:class:`ModelPlan`) and records each evaluation (:func:`evaluation_record`);
:func:`~valuecore.apply_policy_document` evaluates a stored document as stored, an
:class:`AppliedPolicy` per model.
:func:`load_json_limited` parses JSON after checking its size and nesting
depth (the limits of ``docs/run-format.md``). The format is
described key by key in ``docs/policy-json.md``.

Thresholds per segment (schema version 3, ``docs/segments.md``): :func:`segment_document` builds the
document of runs loaded with a ``segment_column`` (each model's thresholds fitted on its tuning split within
the caps, scored on its evaluated split), :func:`segment_evaluation` the ``evaluation`` record of a segment
policy on one split; ``SEGMENT_NOTE`` is the rule in words.

Uses jsonschema (validation).
"""

from ._pipeline import build as _policy_build
from ._pipeline import policy_json as _policy_json
from ._pipeline.build import *  # noqa: F403  (exactly the names of _policy_build.__all__)
from ._pipeline.policy_json import *  # noqa: F403  (exactly the names of _policy_json.__all__)

from ._engine.fitting import ALL_POLICY_KINDS as ALL_POLICY_KINDS
from ._engine.fitting import POLICY_KINDS as POLICY_KINDS
from ._model.values import VALUE_LIMIT as VALUE_LIMIT
from ._model.values import Regime as Regime
from ._pipeline.pipeline import AppliedPolicy as AppliedPolicy
from ._pipeline.pipeline import ModelPlan as ModelPlan
from ._pipeline.pipeline import evaluation_record as evaluation_record
from ._pipeline.segments import SEGMENT_NOTE as SEGMENT_NOTE
from ._pipeline.segments import segment_document as segment_document
from ._pipeline.segments import segment_evaluation as segment_evaluation

__all__ = sorted([*_policy_json.__all__, *_policy_build.__all__, "ALL_POLICY_KINDS", "POLICY_KINDS", "VALUE_LIMIT",
                  "Regime", "AppliedPolicy", "ModelPlan", "evaluation_record",
                  "SEGMENT_NOTE", "segment_document", "segment_evaluation"])
