"""From runs and settings to a policy, once: the one pipeline behind the screen, the CLI and the JSON.

The stages, per model::

    choose splits -> fit calibration -> sort -> fit policy -> evaluate -> interval

:class:`Pipeline` holds each stage as a method. The command line calls it as
it is (``build_policy_document``); the dashboard hands it a cache (``cache=``,
an object with one method, :meth:`StageCache.stage`) that keeps the expensive
stages (calibrating, sorting, evaluating, recommending) across reruns, which
changes how fast a number comes, never which number. What the Value page shows, what the Export
page writes and what ``python -m valuecore report`` prints are therefore the
same policies, to the last digit.

One rule for the awkward cases, everywhere
------------------------------------------
* **No usable tuning split** (the model lacks it, or it has no labels): what
  needs fitting is fitted on the evaluated split itself, and a note says the
  value there is optimistic (an upper bound). When the evaluated split has
  no labels either, thresholds are tuned without labels, on the models' own
  probabilities, and a note says so.
* **A calibration that cannot be fitted** (temperature scaling on a run that
  only has the top label, no labels to fit on...): the model's raw
  confidences are used, the policy records ``{"method": "none"}`` and a note
  says why.
* **No evaluated split**, or a rule the run cannot support (the expected-value
  rule without probability vectors, or after isotonic recalibration): the
  model gets no policy, with the reason in words.

:func:`apply_policy_document` is the inverse direction: it evaluates stored
policies *as stored* (thresholds, calibration parameters, rule; nothing
refitted) on run files. On the runs a document was built from it reproduces
the document's evaluation exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Protocol

import numpy as np

from .._engine.evaluate import PolicyResult, estimate, evaluate
from .._model.choices import RECOMMENDED_RULE, TIERED_KINDS
from .._engine.fitting import ALL_POLICY_KINDS, POLICY_KINDS, Policy, fit_policy
from .policy_json import (
    DATA_FREE_KINDS,
    DEFAULT_TUNE_SPLIT,
    PolicyDocument,
    PolicyEntry,
    _count,
    _jsonable,
    align_values,
    check_classes,
    choose_splits,
)
from .._model.predictions import Predictions
from .._engine.sorting import SortedRun, presort
from .._stats.uncertainty import interval_basis_record
from .._model.values import ValueMatrix, check_value_range, check_values
from .._model.predictions import NO_PROBA_NOTE as NO_PROBA

__all__ = [
    "AppliedPolicy",
    "ModelPlan",
    "NO_PROBA_NOTE",
    "Pipeline",
    "apply_policy_document",
    "evaluation_record",
]

NO_PROBA_NOTE = "the expected-value rule " + NO_PROBA


class StageCache(Protocol):
    """What :class:`Pipeline` asks of a cache handed to it: one method.

    ``stage(pipeline, stage, model, split, inputs, compute)`` returns ``compute()``, or what an earlier
    call returned for the same stage of the same run, split, settings and ``inputs`` (the recalibration
    in force, a policy, values, the models and rules weighed). Only the cache knows how to identify a run
    across calls (a file's hash, say) and for how long to keep what it computed.
    """

    def stage(self, pipeline: Pipeline, stage: str, model: str | None, split: str | None, inputs: tuple,
              compute: Callable[[], Any]) -> Any: ...


@dataclass(frozen=True)
class ModelPlan:
    """Which splits one model uses, and why.

    Attributes
    ----------
    model : str
    eval_split : str or None
        None when the model cannot be evaluated (``skip`` says why).
    tune_split : str or None
        The split thresholds and calibration are fitted on: the requested
        tuning split, or the evaluated split when that one is missing or
        unlabelled (``fallback`` says why).
    labelled_tuning : bool
        False when tuning must go without labels (estimated from probabilities).
    fallback : str or None
        Why the requested tuning split is not used, in words.
    skip : str or None
        Why the model cannot get a policy at all, in words.
    """

    model: str
    eval_split: str | None
    tune_split: str | None
    labelled_tuning: bool = True
    fallback: str | None = None
    skip: str | None = None


class Pipeline:
    """The policy pipeline over a set of runs and one choice of splits and recalibration.

    Parameters
    ----------
    runs : mapping of model name -> ModelRun
    tune_split, eval_split : str or None
        Requested splits. None picks the defaults of
        :func:`~valuecore.choose_splits` (evaluate "test", tune on "val").
    calibration : {"none", "temperature", "isotonic", "platt"}
        Recalibration fitted on the tuning split before anything is tuned.

    cache : StageCache, optional
        Keeps what the expensive stages compute (``"calibrator"``, ``"calibrated"``, ``"sorted"``,
        ``"evaluated"``, ``"interval"``, ``"recommendation"``, ``"recommended_rules"``) beyond this
        object's life; it must return what the stage computes. None: nothing is kept.
    """

    def __init__(self, runs: Mapping, tune_split: str | None = None, eval_split: str | None = None,
                 calibration: str = "none", cache: StageCache | None = None):
        from .._model.recalibration import METHODS

        if calibration not in METHODS:
            raise ValueError(f"unknown calibration method {calibration!r}; choose one of {list(METHODS)}")
        self.runs = runs
        self.tune_split = tune_split
        self.eval_split = eval_split
        self.calibration = calibration
        self._plans: dict = {}
        self._calibrators: dict = {}
        self._recommended: dict = {}
        # The models the choice "recommended" is weighed among, when not told (None: every run).
        self.recommend_models: tuple | None = None
        # The rules it weighs, when not told: a function of (values, models) (None: every rule that applies).
        self.recommend_kinds = None
        self.cache = cache

    def _stage(self, stage: str, model: str | None, split: str | None, compute, *inputs):
        """``compute()``, or what the cache kept for the same stage, model, split and inputs."""
        if self.cache is None:
            return compute()
        return self.cache.stage(self, stage, model, split, inputs, compute)

    # ------------------------------------------------------------ splits
    def run(self, model: str):
        return self.runs[model]

    def plan(self, model: str) -> ModelPlan:
        """Choose the splits of one model (see the module docstring for the rule)."""
        if model not in self._plans:
            self._plans[model] = self._plan(model)
        return self._plans[model]

    def _plan(self, model: str) -> ModelPlan:
        splits = self.run(model).splits
        if self.eval_split is not None:
            if self.eval_split not in splits:
                return ModelPlan(model, None, None, skip=f"no split {self.eval_split!r} to evaluate "
                                                          f"(its splits: {', '.join(splits)})")
            evaluated = self.eval_split
        else:
            try:
                evaluated = choose_splits(self.run(model), self.tune_split if self.tune_split in splits else None
                                          ).evaluate
            except ValueError as error:
                return ModelPlan(model, None, None, skip=str(error))
        wanted = self.tune_split if self.tune_split is not None else DEFAULT_TUNE_SPLIT
        if wanted == evaluated:
            fallback = f"thresholds are tuned and evaluated on the same split {evaluated!r}"
        elif wanted not in splits:
            fallback = "no separate tuning split" if self.tune_split is None else f"no {wanted!r} split to tune on"
        elif not splits[wanted].has_labels:
            fallback = f"the {wanted!r} split has no labels to tune on"
        else:
            return ModelPlan(model, evaluated, wanted)
        labelled = splits[evaluated].has_labels
        return ModelPlan(model, evaluated, evaluated, labelled_tuning=labelled, fallback=fallback)

    def tuning_note(self, model: str, kind: str = "threshold") -> str | None:
        """The caveat when what is fitted for ``kind`` is fitted on the evaluated split; None otherwise."""
        plan = self.plan(model)
        if plan.fallback is None or not self._fits_on_data(kind):
            return None
        if not plan.labelled_tuning:
            return (f"{model}: {plan.fallback}, and {plan.eval_split!r} has no labels either: thresholds are "
                    "tuned on the model's own probabilities (an estimate)")
        return (f"{model}: {plan.fallback}, so it is tuned on {plan.eval_split!r}, the split it is judged on: "
                "its value there is optimistic (an upper bound)")

    def _fits_on_data(self, kind: str) -> bool:
        return kind not in DATA_FREE_KINDS or self.calibration != "none"

    # -------------------------------------------------------- calibration
    def calibrator(self, model: str):
        """(Calibrator or None, note or None): the fitted recalibration, or why the raw confidences are used."""
        if self.calibration == "none":
            return None, None
        if model not in self._calibrators:
            self._calibrators[model] = self._fit_calibrator(model)
        return self._calibrators[model]

    def _fit_calibrator(self, model: str):
        plan = self.plan(model)
        if plan.skip is not None:
            return None, None
        predictions = self.run(model).splits[plan.tune_split]
        try:
            if not predictions.has_labels:
                raise ValueError(f"the {plan.tune_split!r} split has no labels to fit it on")
            return self.fit_calibration(model, plan.tune_split, predictions), None
        except ValueError as error:
            return None, (f"{model}: the {self.calibration} recalibration cannot be fitted ({error}); "
                          "its raw confidences are used")

    def fit_calibration(self, model: str, split: str, predictions: Predictions):
        """Fit the recalibration on one split (a stage the dashboard caches)."""
        from .._model.recalibration import fit_calibration

        return self._stage("calibrator", model, split, lambda: fit_calibration(predictions, self.calibration),
                           self.calibration)

    def calibration_dict(self, model: str) -> dict | None:
        calibrator, _ = self.calibrator(model)
        return None if calibrator is None else calibrator.to_dict()

    def calibration_key(self, model: str) -> str:
        """Text naming the calibration in force for a model ("none" when raw confidences are used)."""
        calibrator, _ = self.calibrator(model)
        return "none" if calibrator is None else f"{self.calibration}@{self.plan(model).tune_split}"

    # ------------------------------------------------------ data of a split
    def predictions(self, model: str, split: str | None) -> Predictions | None:
        """Raw predictions of one split, or None when the model lacks it."""
        if split is None:
            return None
        return self.run(model).splits.get(split)

    def calibrated(self, model: str, split: str | None) -> Predictions | None:
        """A split with the model's recalibration applied (raw when none is in force)."""
        predictions = self.predictions(model, split)
        calibrator, _ = self.calibrator(model)
        if predictions is None or calibrator is None:
            return predictions
        return self._stage("calibrated", model, split, lambda: calibrator.apply(predictions),
                           self.calibration_key(model))

    def sorted(self, model: str, split: str | None) -> SortedRun | None:
        """The (recalibrated) split, presorted."""
        predictions = self.calibrated(model, split)
        if predictions is None:
            return None
        return self._stage("sorted", model, split, lambda: presort(predictions), self.calibration_key(model))

    def has_proba(self, model: str) -> bool:
        return all(p.has_proba for p in self.run(model).splits.values())

    # --------------------------------------------------------------- values
    def values_for(self, model: str, values) -> ValueMatrix:
        """``values`` (a UseCase or a ValueMatrix in any class order) as the one ValueMatrix of the
        model's classes that every stage below takes; converted where a value enters the pipeline
        (a no-op on a matrix already converted). One made from a UseCase keeps the triple's exact
        shortcuts (``ValueMatrix.use_case``), so every figure is the one the UseCase gave.
        """
        classes = self.run(model).classes
        check_value_range(values)  # in the words of the values given (a use case's, a matrix's)
        return align_values(values, classes).for_classes(classes)

    # --------------------------------------------------------------- policy
    def _weighed(self, values, models, kinds) -> tuple:
        models = tuple(models if models is not None else self.recommend_models or self.runs)
        if kinds is None and self.recommend_kinds is not None:
            kinds = self.recommend_kinds(values, models)
        return models, None if kinds is None else tuple(kinds)

    def recommendation(self, values, models=None, kinds=None):
        """The one (model, rule) to deploy (:func:`~valuecore.recommend`) among ``models`` over ``kinds``.

        ``models``: default :attr:`recommend_models`, else every run; ``kinds``: default
        :attr:`recommend_kinds` of the values and models, else every rule that applies.
        """
        from .._decide.recommend import recommend

        models, kinds = self._weighed(values, models, kinds)
        return self._stage("recommendation", None, None, lambda: recommend(self, values, models, kinds=kinds),
                           values, models, kinds)

    def recommended_rules(self, values, models=None, **constraints) -> dict:
        """Each model's rule under the choice ``"recommended"`` (:func:`~valuecore.recommended_rules`).

        ``models`` and the rules weighed: as :meth:`recommendation`, whose answer it reads (when no
        constraint is given).
        """
        from .._decide.recommend import recommended_rules

        models, kinds = self._weighed(values, models, None)
        key = (models, kinds, repr(values), repr(sorted((k, repr(v)) for k, v in constraints.items())))
        if key not in self._recommended:
            if constraints:
                self._recommended[key] = recommended_rules(self, values, models, **constraints)
            else:
                self._recommended[key] = self._stage(
                    "recommended_rules", None, None,
                    lambda: recommended_rules(self, values, models, kinds=kinds,
                                              recommendation=self.recommendation(values, models, kinds)),
                    values, models, kinds)
        return self._recommended[key]

    def rule(self, model: str, kind: str, values, **constraints) -> str:
        """``kind``, or for the choice ``"recommended"`` the rule it means for ``model``."""
        if kind != RECOMMENDED_RULE:
            return kind
        weighed = {k: v for k, v in constraints.items() if k != "monitoring"}
        rules = self.recommended_rules(values, **weighed)
        if model not in rules:  # not among those weighed together: weighed alone
            rules = self.recommended_rules(values, (model,), **weighed)
        return rules.get(model, "threshold")

    def policy(self, model: str, kind: str, values) -> Policy:
        """Fit a policy of ``kind`` for ``values`` on the model's tuning split.

        ``kind`` may be ``"recommended"``: the rule :meth:`rule` says for the model.
        Raises ValueError, in words, when the model cannot get one.
        """
        kind = self.rule(model, kind, values)
        if kind not in POLICY_KINDS:
            raise ValueError(f"unknown policy kind {kind!r}; expected one of {list(POLICY_KINDS)}")
        plan = self.plan(model)
        if plan.skip is not None:
            raise ValueError(plan.skip)
        if kind == "expected_value":
            if not self.has_proba(model):
                raise ValueError(NO_PROBA_NOTE)
            if self.calibration == "isotonic" and self.calibration_dict(model) is not None:
                raise ValueError("the expected-value rule needs calibrated probability vectors, and isotonic "
                                 "recalibration only changes the top-label confidence: use none or temperature")
        values = self.values_for(model, values)
        run = self.sorted(model, plan.tune_split) if self._fits_on_data(kind) else None
        return fit_policy(kind, run, values, calibration=self.calibration_dict(model),
                          estimate=run is not None and not plan.labelled_tuning)

    def result(self, model: str, policy: Policy, values, split: str | None = None) -> PolicyResult | None:
        """Value of ``policy`` on a split (default: the evaluated one); estimated when it has no labels."""
        split = self.plan(model).eval_split if split is None else split
        if self.predictions(model, split) is None:
            return None
        return self.evaluate_split(model, split, policy, self.values_for(model, values))

    def evaluate_split(self, model: str, split: str, policy: Policy, values) -> PolicyResult:
        """The evaluation stage on a split the model has (the dashboard caches it)."""
        predictions = self.predictions(model, split)
        values = self.values_for(model, values)
        measure = evaluate if predictions.has_labels else estimate
        return self._stage("evaluated", model, split, lambda: measure(policy, predictions, values), policy, values)

    def interval(self, model: str, policy: Policy, values, result: PolicyResult | None = None,
                 split: str | None = None):
        """95% interval of the value per item (bounded method) on a labelled split (None without labels)."""
        split = self.plan(model).eval_split if split is None else split
        predictions = self.predictions(model, split)
        if predictions is None or not predictions.has_labels:
            return None
        values = self.values_for(model, values)
        if result is None:
            result = self.result(model, policy, values, split)
        return self.interval_on(model, split, policy, values, result)

    def interval_on(self, model: str, split: str, policy: Policy, values, result: PolicyResult):
        """The interval stage on a labelled split (the dashboard caches it)."""
        values = self.values_for(model, values)
        return self._stage("interval", model, split,
                           lambda: _interval(policy, self.predictions(model, split), values, result), policy, values)

    # ------------------------------------------------------------- entries
    def notes(self, model: str, kind: str) -> list[str]:
        """Every caveat of one model's policy, in words (tuning fallback, calibration, estimates)."""
        notes = []
        tuning = self.tuning_note(model, kind)
        if tuning:
            notes.append(tuning)
        _, calibration_note = self.calibrator(model)
        if calibration_note:
            notes.append(calibration_note)
        plan = self.plan(model)
        predictions = self.predictions(model, plan.eval_split)
        if predictions is not None and not predictions.has_labels:
            notes.append(f"{model}: split {plan.eval_split!r} has no labels, so its value is estimated from the "
                         "model's (calibrated) probabilities; it is only as good as their calibration")
        return notes

    def entry(self, model: str, kind: str, values, *, with_interval: bool = True, **constraints) -> PolicyEntry:
        """The policy JSON entry of one model: the policy, where it was tuned, what it is worth.

        ``constraints`` are those of :meth:`constrained_policy`, plus
        ``monitoring=True`` to record the monitoring reference of the policy.
        Raises ValueError, in words, when the model cannot get a policy.
        """
        kind = self.rule(model, kind, values, **constraints)
        run = self.run(model)
        plan = self.plan(model)
        if plan.skip is not None:
            raise ValueError(plan.skip)
        values = self.values_for(model, values)  # once: every stage below takes this ValueMatrix
        with_monitoring = bool(constraints.pop("monitoring", False))
        records: list = []
        notes = self.notes(model, kind)
        if kind in TIERED_KINDS or any(value is not None for value in constraints.values()):
            policy, records, constraint_notes = self.constrained_policy(model, kind, values, **constraints)
            notes.extend(f"{model}: {note}" for note in constraint_notes)
        else:
            policy = self.policy(model, kind, values)
        if self._fits_on_data(kind):
            tune = run.splits[plan.tune_split]
            tuned_on = {"split": plan.tune_split, "n": _count(tune.total_weight)}
        else:
            tuned_on = {"split": None, "n": 0}
        evaluated = run.splits[plan.eval_split]
        if kind in TIERED_KINDS:
            from .._decide.constrained import two_tier_evaluation

            if not evaluated.has_labels:
                raise ValueError(f"the evaluated split {plan.eval_split!r} of model {model!r} has no labels; "
                                 f"a {kind} policy is evaluated on labels only")
            record = two_tier_evaluation(policy, evaluated, values, with_interval=with_interval)
            evaluation = _jsonable({"split": plan.eval_split, **record, "estimated": False,
                                    **{key: _count(record[key]) for key in ("n", "n_correct", "n_wrong",
                                                                            "n_abstain")}})
        else:
            result = self.result(model, policy, values)
            interval = self.interval(model, policy, values, result) if with_interval else None
            evaluation = evaluation_record(plan.eval_split, evaluated, result, interval)
        monitoring = None
        if with_monitoring:
            reference = run.splits[plan.tune_split]
            if reference.has_labels and kind not in TIERED_KINDS:
                from .._monitor.bands import monitoring_record

                monitoring = _jsonable(monitoring_record(reference, policy, values, reference_split=plan.tune_split))
            else:
                notes.append(f"{model}: no monitoring reference: split {plan.tune_split!r} has no labels"
                             if not reference.has_labels else f"{model}: {kind} policies are not monitored")
        return PolicyEntry(model=model, run_sha256=run.sha256, classes=run.classes, policy=policy,
                           tuned_on=tuned_on, evaluation=evaluation, notes=tuple(notes),
                           constraints=tuple(_jsonable(r) for r in records), monitoring=monitoring)

    def constrained_policy(self, model: str, kind: str, values, *, max_handoff_rate=None, max_risk=None,
                           risk_confidence=None, assisted=None, risk_weights=None, shortlist_values=None,
                           shortlist_rule=None) -> tuple[Policy, list, list]:
        """(policy, constraint records, notes) under a review capacity, a certified risk or two tiers.

        The constraints hold on the labelled tuning split, so a model without one
        is refused (ValueError) rather than tuned on the evaluated items.
        """
        from .._decide.constrained import fit_constrained

        if kind not in ALL_POLICY_KINDS:
            raise ValueError(f"unknown policy kind {kind!r}; expected one of {list(ALL_POLICY_KINDS)}")
        plan = self.plan(model)
        if plan.skip is not None:
            raise ValueError(plan.skip)
        values = self.values_for(model, values)
        run = self.sorted(model, plan.tune_split) if self._fits_on_data(kind) else None
        if run is not None and not self.run(model).splits[plan.tune_split].has_labels:
            raise ValueError(f"the tuning split {plan.tune_split!r} has no labels; a review capacity, a certified "
                             "risk or two tiers are fitted on labelled items")
        return fit_constrained(kind, run, values, calibration=self.calibration_dict(model),
                               max_handoff_rate=max_handoff_rate, max_risk=max_risk,
                               risk_confidence=risk_confidence, assisted=assisted, risk_weights=risk_weights,
                               shortlist_values=shortlist_values, shortlist_rule=shortlist_rule)

    def document(self, models, kind: str, values, *, with_interval: bool = True,
                 **constraints) -> tuple[PolicyDocument, list]:
        """The policy document of ``models``; a model that cannot get a policy is skipped with a note.

        Returns (document, notes): skipped models first, then every entry's caveats.
        Raises ValueError when no model gets a policy, or when the constraints
        cannot apply to ``kind``.
        """
        from .._decide.constrained import check_constraint_options

        check_values(values)
        weighed = {k: v for k, v in constraints.items() if k != "monitoring"}
        models = list(models)
        if kind == RECOMMENDED_RULE:  # each model its own rule, weighed among the models of the document
            rules = self.recommended_rules(values, models, **weighed)
            for rule in dict.fromkeys(rules.values()):
                check_constraint_options(rule, **weighed)
        else:
            check_constraint_options(kind, **weighed)
            rules = dict.fromkeys(models, kind)
        entries, notes, failures = [], [], []
        for model in models:
            try:
                entry = self.entry(model, rules[model], values, with_interval=with_interval, **dict(constraints))
            except ValueError as error:
                failures.append(f"{model}: skipped: {error}")
                continue
            entries.append(entry)
            notes.extend(entry.notes)
        if not entries:
            reasons = "; ".join(failures) if failures else "no models were given"
            raise ValueError(f"no policy could be built ({reasons})")
        return PolicyDocument(values=values, entries=tuple(entries)), failures + notes


def _interval(policy: Policy, predictions: Predictions, values, result: PolicyResult):
    """The bounded interval: from the confusion cells when weights are counts (exact, O(C^2)), else the items."""
    from .._stats.uncertainty import policy_interval, result_interval

    weight = predictions.sample_weight
    # Like the "auto" weight kind: whole numbers are counts only while their total is exact in floats.
    if not result.estimated and bool(np.all(weight == np.round(weight))) and float(weight.sum()) <= 2.0**53:
        return result_interval(result, values, policy=policy)
    return policy_interval(policy, predictions, values)


def evaluation_record(split: str, predictions: Predictions, result: PolicyResult, interval=None) -> dict:
    """The ``evaluation`` object of the policy JSON for a result on one split."""
    record = {"split": split, **result.to_dict(), "estimated": bool(result.estimated)}
    record["n"] = predictions.total_weight  # exact; an estimated confusion matrix sums to it only roughly
    for key in ("n", "n_correct", "n_wrong", "n_abstain"):
        record[key] = _count(record[key])
    if predictions.has_model_abstentions:  # of n_abstain, the items the model itself declined
        declined = predictions.model_abstained
        weight = predictions.sample_weight
        record["n_abstain_by_model"] = _count(weight[declined].sum())
        if predictions.has_labels:
            record["n_false_abstentions"] = _count(weight[declined & predictions.correct].sum())
    record["ci95"] = None if interval is None else [interval.low, interval.high]
    if interval is not None:
        record["std_error"] = interval.std_error
        record["ci95_basis"] = interval_basis_record(interval)
    return _jsonable(record)


# ------------------------------------------------------------------ apply
@dataclass(frozen=True)
class AppliedPolicy:
    """A stored policy evaluated as stored on one run.

    Attributes
    ----------
    model : str
    split : str or None
    evaluation : dict or None
        Same keys as the document's ``evaluation`` (None when not evaluated).
    result : PolicyResult or None
        With the confusion matrix (rows true class, columns predicted class then abstain).
    same_run : bool or None
        True when the run file's SHA-256 is the one the policy was built from.
    note : str
        Why the model was not evaluated, or a caveat.
    recommended : bool
        The document's ``recommendation`` names this model (and so this policy).
    """

    model: str
    split: str | None
    evaluation: dict | None
    result: PolicyResult | None
    same_run: bool | None
    note: str = ""
    recommended: bool = False


def apply_policy_document(document: PolicyDocument, runs: Mapping, split: str | None = None,
                          *, with_interval: bool = True) -> list[AppliedPolicy]:
    """Evaluate each stored policy as stored (nothing refitted) on the loaded runs.

    Parameters
    ----------
    document : PolicyDocument
    runs : mapping of model name -> ModelRun
    split : str, optional
        The split to evaluate on; default the split each entry was evaluated on.
    with_interval : bool

    Returns
    -------
    list of AppliedPolicy, one per entry of the document, in its order; the
    one the document's ``recommendation`` names is marked ``recommended``.

    Raises
    ------
    ValueError
        When a policy's classes differ from its run's classes.
    """
    out = []
    for entry in document.entries:
        run = runs.get(entry.model)
        if run is None:
            out.append(AppliedPolicy(entry.model, None, None, None, None, "no run of this model is loaded"))
            continue
        check_classes(entry, run.classes)
        same = None if not (entry.run_sha256 and run.sha256) else entry.run_sha256 == run.sha256
        name = split or (entry.evaluation or {}).get("split")
        if name is None or name not in run.splits:
            out.append(AppliedPolicy(entry.model, name, None, None, same,
                                     f"no split {name!r} (its splits: {', '.join(run.splits)})"))
            continue
        if entry.segments is not None:  # a threshold per segment (schema version 3)
            from .segments import apply_segment_entry

            record, result, note = apply_segment_entry(entry, name, run, document.values)
            out.append(AppliedPolicy(entry.model, name, record, result, same, note))
            continue
        predictions = run.splits[name]
        values = align_values(document.values, run.classes)
        if entry.policy.kind in TIERED_KINDS:
            out.append(_apply_two_tier(entry, name, predictions, values, same, with_interval=with_interval))
            continue
        if predictions.has_labels:
            result = evaluate(entry.policy, predictions, values)
        else:
            result = estimate(entry.policy, predictions, values)
        interval = _interval(entry.policy, predictions, values, result) if (
            with_interval and predictions.has_labels) else None
        note = "" if predictions.has_labels else "no labels: the value is estimated from the probabilities"
        out.append(AppliedPolicy(entry.model, name, evaluation_record(name, predictions, result, interval),
                                 result, same, note))
    chosen = (document.recommendation or {}).get("model")
    return [replace(item, recommended=item.model == chosen) for item in out]


def _apply_two_tier(entry, name: str, predictions: Predictions, values, same, *, with_interval: bool) -> AppliedPolicy:
    """A stored two-tier policy on one split: its evaluation record, and the automatic tier's confusion matrix.

    Two tiers are valued on labels only (the assisted tier's worth rests on what a person does with the
    suggestion, which no probability tells), so an unlabelled split is named, not estimated.
    """
    from .._decide.constrained import two_tier_evaluation

    if not predictions.has_labels:
        return AppliedPolicy(entry.model, name, None, None, same,
                             f"split {name!r} has no labels; a {entry.policy.kind} policy is evaluated on labels only")
    if entry.policy.kind == "shortlist" and predictions.proba is None:
        return AppliedPolicy(entry.model, name, None, None, same, f"split {name!r} gives no probability vectors; "
                             "a shortlist policy reads its lists off them")
    record = two_tier_evaluation(entry.policy, predictions, values, with_interval=with_interval)
    evaluation = _jsonable({"split": name, **record, "estimated": False,
                            **{key: _count(record[key]) for key in ("n", "n_correct", "n_wrong", "n_abstain")}})
    automatic = Policy("threshold", threshold=entry.policy.threshold, calibration=entry.policy.calibration)
    return AppliedPolicy(entry.model, name, evaluation, evaluate(automatic, predictions, values), same,
                         "the confusion matrix is the automatic tier's; 'abstain' holds both tiers a person sees")

