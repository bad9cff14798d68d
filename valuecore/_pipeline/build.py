"""The policy JSON built by the pipeline: ``build_policy_document`` and ``build_policy_entry``.

They sit above both the document format (``policy_json``) and the
:class:`Pipeline` that fills it, so that the format knows nothing of how a
policy is fitted; ``valuecore.policy_json`` exports them with the format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from .._model.choices import RECOMMENDED_RULE
from .pipeline import Pipeline
from .._engine.fitting import ALL_POLICY_KINDS
from .policy_json import PolicyDocument, PolicyEntry
from .._model.values import Values, check_values

if TYPE_CHECKING:
    from .._io.runfiles import ModelRun

__all__ = ["build_policy_document", "build_policy_entry"]


def build_policy_entry(
    run: ModelRun,
    values: Values,
    *,
    kind: str = "threshold",
    calibration_method: str = "none",
    tune_split: str | None = None,
    eval_split: str | None = None,
    with_interval: bool = True,
    **constraints,
) -> tuple[PolicyEntry, list[str]]:
    """Fit and evaluate the policy of one model; see :func:`build_policy_document`.

    Raises ValueError when this model cannot get a policy (no evaluated split,
    a rule the run does not support). ``constraints`` are the keyword options
    of :meth:`Pipeline.constrained_policy` (``max_handoff_rate``, ``max_risk``,
    ``risk_confidence``, ``assisted``) and ``monitoring``.
    """
    if kind not in ALL_POLICY_KINDS:
        raise ValueError(f"unknown policy kind {kind!r}; expected one of {list(ALL_POLICY_KINDS)}")
    pipeline = Pipeline({run.model: run}, tune_split, eval_split, calibration_method)
    entry = pipeline.entry(run.model, kind, values, with_interval=with_interval, **constraints)
    return entry, list(entry.notes)


def build_policy_document(
    models: Mapping[str, ModelRun],
    values: Values,
    *,
    kind: str = "threshold",
    calibration_method: str = "none",
    tune_split: str | None = None,
    eval_split: str | None = None,
    with_interval: bool = True,
    **constraints,
) -> tuple[PolicyDocument, list[str]]:
    """Build the policy document of several models: the whole pipeline, in one place.

    For each model: pick the splits (:func:`choose_splits`); fit the
    calibration on the tuning split (unless ``"none"``); presort the
    calibrated tuning split and ``fit_policy(kind, ...)`` on it, recording
    the calibration in the policy; evaluate on the evaluated split (realised
    value when it is labelled, else :func:`estimate`, marked ``estimated``);
    attach a 95% interval of the value per item (labelled splits only; see ``mean_interval``).
    When a run has no separate tuning split, tuning happens on the evaluated
    split, ``tuned_on.split`` says so and a note warns that the value is
    optimistic.

    Parameters
    ----------
    models : dict of name -> ModelRun
    values : UseCase or ValueMatrix
        A value matrix is reordered to each run's class order.
    kind : str
        One of ``ALL_POLICY_KINDS``, or ``"recommended"``: each model the rule
        :func:`~valuecore.recommended_rules` says (weighed among ``models``).
    calibration_method : {"none", "temperature", "isotonic", "platt"}
    tune_split, eval_split : str, optional
        Split names; None picks the defaults of :func:`choose_splits`.
    with_interval : bool
        Compute ``evaluation.ci95`` (None otherwise).
    **constraints
        ``max_handoff_rate`` (kinds threshold, class_thresholds), ``max_risk``
        and ``risk_confidence`` (kind threshold), ``assisted`` (kind
        two_tier, required): tune under a review capacity, a certified risk,
        or with an assisted tier; recorded in ``models[].constraints``.

    Returns
    -------
    (PolicyDocument, list of str)
        The document, and notes for the reader: caveats and models skipped
        (a model that cannot get a policy is skipped with a note).

    Raises
    ------
    ValueError
        Unknown kind or calibration method, or no model could get a policy
        (the message gives every model's reason).
    """
    if kind not in ALL_POLICY_KINDS and kind != RECOMMENDED_RULE:
        raise ValueError(f"unknown policy kind {kind!r}; expected one of {[*ALL_POLICY_KINDS, RECOMMENDED_RULE]}")
    from .._model.recalibration import METHODS

    if calibration_method not in METHODS:
        raise ValueError(f"unknown calibration method {calibration_method!r}; choose one of {list(METHODS)}")
    if kind == "expected_value" and calibration_method == "isotonic":
        raise ValueError(
            "the expected_value policy needs calibrated probability vectors, and isotonic calibration only "
            "recalibrates the top-label confidence: use calibration none, temperature or platt"
        )
    check_values(values)
    if tune_split is not None and models and not any(tune_split in run.splits for run in models.values()):
        raise ValueError(f"no split {tune_split!r} in any model to tune on")
    pipeline = Pipeline(models, tune_split, eval_split, calibration_method)
    return pipeline.document(list(models), kind, values, with_interval=with_interval, **constraints)
