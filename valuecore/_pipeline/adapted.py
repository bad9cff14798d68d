"""The pipeline re-tuned for the class mix of an unlabelled split: ``report --adapt-to``.

The estimates, the re-weighting and the guard are ``valuecore._monitor.prior_shift``'s; here the ordinary
:class:`~valuecore.Pipeline` tunes on the tuning split re-weighted to the estimated mix (or, label-free, on
the adapted split's adjusted posteriors) and records ``prior_shift`` in each entry.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from .._engine.evaluate import PolicyResult
from .._engine.fitting import Policy, fit_policy
from .._engine.sorting import presort
from .._model.predictions import Predictions
from .._monitor.prior_shift import (
    _FITTED_KINDS,
    ADAPT_TUNINGS,
    PRIOR_SHIFT_METHODS,
    PriorEstimate,
    RetuningGain,
    adjust_predictions,
    estimate_priors,
    estimate_under_priors,
    retuning_gain,
    reweight_to_priors,
)
from .pipeline import Pipeline
from .policy_json import _count, align_values

__all__ = ["adapted_pipeline", "adapted_policy_document"]


class _AdaptedPipeline(Pipeline):
    """The ordinary pipeline, with the tuning split re-weighted to the mix estimated on ``adapt_to``."""

    def __init__(self, runs: Mapping, adapt_to: str, method: str, *, tuning: str = "reweight", rng=None,
                 guard: bool = True, **options):
        super().__init__(runs, **options)
        self._as_tuned = Pipeline(runs, **options)  # the same tuning, not re-weighted: what the guard compares with
        self.guard = guard
        self._gains: dict = {}
        if method not in PRIOR_SHIFT_METHODS:
            raise ValueError(f"unknown prior-shift method {method!r}; choose one of {list(PRIOR_SHIFT_METHODS)}")
        if tuning not in ADAPT_TUNINGS:
            raise ValueError(f"unknown adapted tuning {tuning!r}; choose one of {list(ADAPT_TUNINGS)}")
        self.adapt_to = adapt_to
        self.method = method
        self.tuning = tuning
        self.rng = rng
        self._estimates: dict = {}

    def prior_estimate(self, model: str) -> PriorEstimate:
        if model not in self._estimates:
            self._estimates[model] = self._estimate(model)
        return self._estimates[model]

    def _estimate(self, model: str) -> PriorEstimate:
        run = self.run(model)
        plan = self.plan(model)
        if plan.skip is not None:
            raise ValueError(plan.skip)
        if self.adapt_to not in run.splits:
            raise ValueError(f"no split {self.adapt_to!r} to adapt to (its splits: {', '.join(run.splits)})")
        if plan.tune_split == self.adapt_to or not run.splits[plan.tune_split].has_labels:
            raise ValueError(f"adapting to split {self.adapt_to!r} needs another, labelled split to tune on "
                             f"(the tuning split is {plan.tune_split!r}); give --tune-split")
        if not all(run.splits[s].has_proba for s in (plan.tune_split, self.adapt_to)):
            raise ValueError("adapting to a new class mix needs the full probability vector (proba_<class> "
                             "columns); this run only has the top label and its confidence")
        reference = Pipeline.calibrated(self, model, plan.tune_split)
        target = Pipeline.calibrated(self, model, self.adapt_to)
        if not (reference.has_proba and target.has_proba):
            raise ValueError(f"the {self.calibration} recalibration keeps only the top-label confidence; adapting "
                             "to a new class mix needs probability vectors: use calibration none, temperature or platt")
        return estimate_priors(target, reference, self.method, rng=self.rng)

    def calibrated(self, model: str, split: str | None) -> Predictions | None:
        predictions = super().calibrated(model, split)
        if predictions is None or split != self.plan(model).tune_split:
            return predictions
        return reweight_to_priors(predictions, self.prior_estimate(model).priors)

    def _label_free(self, kind: str) -> bool:
        return self.tuning == "label_free" and kind in _FITTED_KINDS

    def _guarded(self, model: str, kind: str, values, retuned: Policy) -> Policy:
        """The re-tuned rule when its label-free gain on ``adapt_to`` clears its noise, else the rule as tuned."""
        if not (self.guard and kind in _FITTED_KINDS):
            return retuned
        as_tuned = self._as_tuned.policy(model, kind, values)
        unlabelled = self.predictions(model, self.adapt_to)
        gain = retuning_gain(retuned, as_tuned, unlabelled, align_values(values, self.run(model).classes),
                             self.prior_estimate(model))
        self._gains[(model, kind)] = gain
        return retuned if gain.adopted else as_tuned

    def retuning_gain(self, model: str, kind: str) -> RetuningGain | None:
        """The guard's figures for the last ``policy(model, kind, …)``; None when no guard applied."""
        return self._gains.get((model, kind))

    def policy(self, model: str, kind: str, values) -> Policy:
        policy = super().policy(model, kind, values)  # every check of the ordinary pipeline, and re-weighted tuning
        if not self._label_free(kind):
            return self._guarded(model, kind, values, policy)
        adapted = adjust_predictions(Pipeline.calibrated(self, model, self.adapt_to), self.prior_estimate(model))
        return fit_policy(kind, presort(adapted), align_values(values, self.run(model).classes),
                          calibration=self.calibration_dict(model), estimate=True)

    def constrained_policy(self, model: str, kind: str, values, **constraints):
        if self._label_free(kind) or (self.tuning == "label_free" and kind == "two_tier"):
            raise ValueError("constraints and two tiers are fitted on labelled items: adapt them with "
                             "re-weighting (the default), not label-free tuning")
        return super().constrained_policy(model, kind, values, **constraints)

    def evaluate_split(self, model: str, split: str, policy: Policy, values) -> PolicyResult:
        predictions = self.predictions(model, split)
        if split != self.adapt_to or predictions.has_labels:
            return super().evaluate_split(model, split, policy, values)
        return estimate_under_priors(policy, predictions, align_values(values, self.run(model).classes),
                                     self.prior_estimate(model))

    def entry(self, model: str, kind: str, values, *, with_interval: bool = True, **constraints):
        estimate = self.prior_estimate(model)  # first, so a model that cannot be adapted is refused in words
        constraints_given = any(v is not None for k, v in constraints.items() if k != "monitoring")
        self._gains.pop((model, kind), None)
        entry = super().entry(model, kind, values, with_interval=with_interval, **constraints)
        record = {"split": self.adapt_to, **estimate.to_dict(), "tuning": self.tuning}
        notes = [f"{model}: tuned for the class mix estimated on split {self.adapt_to!r} ({self.method}): "
                 + ", ".join(f"{c} {p:.3f}" for c, p in zip(estimate.classes, estimate.priors))]
        gain = self.retuning_gain(model, kind) if kind in _FITTED_KINDS and not constraints_given else None
        if gain is not None:
            record["retuning"] = gain.to_dict()
            if gain.adopted:
                notes.append(f"{model}: re-tuning earns an estimated {gain.gain_per_item:+.4f} per item on "
                             f"{self.adapt_to!r} (at worst {gain.worst_gain_per_item:+.4f} over the mix's "
                             f"interval, standard error {gain.standard_error:.4f}): the re-tuned rule is used")
            else:
                notes.append(f"{model}: re-tuning's estimated gain on {self.adapt_to!r} "
                             f"({gain.gain_per_item:+.4f} per item, at worst {gain.worst_gain_per_item:+.4f}, "
                             f"standard error {gain.standard_error:.4f}) is within noise: the rule as tuned is kept")
        if self._label_free(kind):
            adapted_split = self.run(model).splits[self.adapt_to]
            entry = replace(entry, tuned_on={"split": self.adapt_to, "n": _count(adapted_split.total_weight)})
            notes.append(f"{model}: tuned without labels on {self.adapt_to!r}, its posteriors adjusted to that mix")
        if kind in ("accept_all", "calibrated_threshold", "calibrated_class_thresholds", "expected_value"):
            notes.append(f"{model}: the {kind} rule is not fitted on data, so re-weighting does not change it")
        if kind != "two_tier":
            adapted = self.predictions(model, self.adapt_to)
            aligned = align_values(values, self.run(model).classes)
            result = estimate_under_priors(entry.policy, adapted, aligned, estimate)
            record["estimated_value_per_item"] = result.value_per_item
            record["estimated_value_dimensionless"] = result.value_dimensionless
            notes.append(f"{model}: its value per item on {self.adapt_to!r} under that mix, estimated without "
                         f"labels: {result.value_per_item:.4f}")
        return replace(entry, prior_shift=record, notes=tuple(entry.notes) + tuple(notes))


def adapted_policy_document(models: Mapping, values, adapt_to: str, *, method: str = "em", tuning: str = "reweight",
                            kind: str = "threshold", guard: bool = True,
                            calibration_method: str = "none", tune_split: str | None = None,
                            eval_split: str | None = None, with_interval: bool = True, rng=None, **constraints):
    """The policy document of ``models`` re-tuned for the class mix of split ``adapt_to``.

    The same arguments as :func:`~valuecore.policy_json.build_policy_document`,
    plus ``adapt_to`` (the unlabelled split), ``method`` ("em" or "bbse"),
    ``tuning``, ``guard`` and ``rng`` (BBSE's bootstrap). ``tuning="reweight"`` re-weights
    the labelled tuning split to the estimated mix (with ``guard``, the default,
    a re-tuned ``threshold`` or ``class_thresholds`` rule is used only when
    :func:`retuning_gain` adopts it, else the rule as tuned is kept); ``"label_free"`` tunes the
    ``threshold`` and ``class_thresholds`` rules without labels on
    ``adapt_to`` itself, its posteriors adjusted to the mix (less noisy in the
    simulation of ``docs/constraints.md``; no constraints). Each entry records
    ``prior_shift``: the split, method, tuning, estimated priors with their
    interval, the guard's figures (``retuning``), and the label-free value of
    the policy on ``adapt_to`` under that mix.

    Returns (PolicyDocument, notes); ValueError when no model can be adapted.
    """
    pipeline = adapted_pipeline(models, adapt_to, method=method, tuning=tuning, calibration_method=calibration_method,
                                tune_split=tune_split, eval_split=eval_split, rng=rng, guard=guard)
    return pipeline.document(list(models), kind, values, with_interval=with_interval, **constraints)


def adapted_pipeline(models: Mapping, adapt_to: str, *, method: str = "em", tuning: str = "reweight",
                     calibration_method: str = "none", tune_split: str | None = None,
                     eval_split: str | None = None, rng=None, guard: bool = True):
    """The :class:`~valuecore.Pipeline` of ``models`` whose tuning follows the class mix of split ``adapt_to``.

    Arguments as :func:`adapted_policy_document`; every policy it fits (``policy``, ``entry``, ``document``)
    is re-tuned for the estimated mix and its entries record ``prior_shift``, so the recommendation and the
    export weigh the same adapted rules.
    """
    return _AdaptedPipeline(models, adapt_to, method, tuning=tuning, rng=rng, guard=guard, tune_split=tune_split,
                            eval_split=eval_split, calibration=calibration_method)
