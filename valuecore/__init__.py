"""valuecore: judge classifiers by the value they bring with a reject option.

Conventions (followed everywhere in the package)
------------------------------------------------
Run
    Per-item model output on one split, a :class:`Predictions`: optional
    ``y_true``, class probabilities ``(n, C)`` or only the top label
    ``(y_pred, confidence)``, optional non-negative ``sample_weight``. A weight
    of 2 gives exactly the result of the item written twice. Every per-item
    figure divides by the *weighted* number of items N, abstentions included.
Values
    A :class:`UseCase` ``(v_correct, v_abstain, v_wrong)`` in any currency, with
    penalty ``omega = (v_abstain - v_wrong) / (v_correct - v_abstain)`` and
    dimensionless value ``(N_correct - omega N_wrong) / N`` (0 = always
    abstain, 1 = perfect). Or a :class:`ValueMatrix` of shape ``(C, C + 1)``:
    rows the true class, columns the predicted class then "abstain" (the
    orientation of ``sklearn.metrics.confusion_matrix`` plus an abstain
    column). The use case is the special case; the binary TP/TN/FP/FN
    business-value matrix is another (``ValueMatrix.binary``). Orderings other
    than ``v_correct > v_abstain >= v_wrong`` are legal and explained by
    ``UseCase.regime``.
Accept rule
    Act on the predicted class iff ``confidence >= threshold``. Items of equal
    confidence are never split: a tuned threshold is always an observed
    confidence, the lowest accepted one. ``None`` means always abstain. Among
    thresholds of equal value the highest wins (fewest automated calls).
Exactness and speed
    Every distinct confidence is a candidate threshold. A run is sorted once
    (:func:`presort`, cache it); after that every question is a cumulative sum
    or a convex hull, with no Python loop over items or thresholds.

Examples
--------
>>> import valuecore as vc
>>> p = vc.Predictions.from_proba([[0.95, 0.05], [0.8, 0.2], [0.6, 0.4]], y_true=[0, 0, 1])
>>> use_case = vc.UseCase(v_correct=1, v_abstain=0, v_wrong=-4)
>>> policy = vc.fit_policy("threshold", vc.presort(p), use_case)
>>> policy.threshold, vc.evaluate(policy, p, use_case).value_total
(0.8, 2.0)
"""

from ._calibration import (
    Calibrator,
    brier_score,
    calibration_summary,
    describe_calibration,
    expected_calibration_error,
    fit_calibration,
    maximum_calibration_error,
    negative_log_likelihood,
    reliability_diagram,
)
from ._curves import (
    RiskCoverage,
    ThresholdCurve,
    confidence_histogram,
    discrimination,
    risk_coverage_curve,
    threshold_curve,
)
from ._evaluate import PolicyResult, decision_values, estimate, evaluate, item_values
from ._monitoring import (
    MONITOR_COLUMNS,
    Chunk,
    calibration_value_table,
    calibration_value_tables,
    chunk_predictions,
    monitor,
    monitor_summary,
)
from ._policy_json import (
    SCHEMA_VERSION,
    PolicyDocument,
    PolicyEntry,
    align_values,
    build_policy_document,
    build_policy_entry,
    check_against_runs,
    check_classes,
    choose_splits,
    policy_schema,
    validate_policy_document,
    values_from_dict,
    values_to_dict,
)
from ._pipeline import AppliedPolicy, ModelPlan, Pipeline, apply_policy_document, evaluation_record
from ._policies import POLICY_KINDS, Policy, fit_policy, item_gains, value_matrix_for
from ._predictions import Predictions
from ._runfiles import LoadProblem, LoadReport, ModelRun, check_comparable, load_run_file, load_runs
from ._sorted import SortedRun, presort
from ._table import DEFAULT_KS, ComparisonTable, comparison_table
from ._uncertainty import (
    WEIGHT_KINDS,
    Interval,
    PairedComparison,
    ThresholdStability,
    VOCBand,
    bootstrap_interval,
    mean_interval,
    paired_comparison,
    policy_interval,
    result_interval,
    threshold_stability,
    voc_band,
)
from ._usecase import Regime, UseCase, ValueMatrix
from ._voc import VOC_MODES, Dominance, VOCCurve, dominance, voc_curve, voc_frame

__version__ = "0.1.0"

__all__ = [
    "Calibrator",
    "brier_score",
    "calibration_summary",
    "describe_calibration",
    "expected_calibration_error",
    "fit_calibration",
    "maximum_calibration_error",
    "negative_log_likelihood",
    "reliability_diagram",
    "Chunk",
    "MONITOR_COLUMNS",
    "calibration_value_table",
    "calibration_value_tables",
    "chunk_predictions",
    "monitor",
    "monitor_summary",
    "SCHEMA_VERSION",
    "PolicyDocument",
    "PolicyEntry",
    "build_policy_document",
    "build_policy_entry",
    "check_against_runs",
    "check_classes",
    "policy_schema",
    "validate_policy_document",
    "align_values",
    "choose_splits",
    "values_from_dict",
    "values_to_dict",
    "AppliedPolicy",
    "ModelPlan",
    "Pipeline",
    "apply_policy_document",
    "evaluation_record",
    "LoadProblem",
    "LoadReport",
    "ModelRun",
    "check_comparable",
    "load_run_file",
    "load_runs",
    "WEIGHT_KINDS",
    "Interval",
    "PairedComparison",
    "ThresholdStability",
    "VOCBand",
    "bootstrap_interval",
    "mean_interval",
    "paired_comparison",
    "policy_interval",
    "result_interval",
    "threshold_stability",
    "voc_band",
    "ComparisonTable",
    "DEFAULT_KS",
    "Dominance",
    "POLICY_KINDS",
    "Policy",
    "PolicyResult",
    "Predictions",
    "Regime",
    "RiskCoverage",
    "SortedRun",
    "ThresholdCurve",
    "UseCase",
    "VOCCurve",
    "VOC_MODES",
    "ValueMatrix",
    "comparison_table",
    "confidence_histogram",
    "decision_values",
    "discrimination",
    "dominance",
    "estimate",
    "evaluate",
    "fit_policy",
    "item_gains",
    "item_values",
    "presort",
    "risk_coverage_curve",
    "threshold_curve",
    "value_matrix_for",
    "voc_curve",
    "voc_frame",
]
