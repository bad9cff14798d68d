"""Curves: value over the threshold and over the penalty omega, and the primitive beneath them.

Over the threshold: :func:`threshold_curve` (:class:`ThresholdCurve`, the
value of every candidate threshold), :func:`risk_coverage_curve`
(:class:`RiskCoverage`, with its area), :func:`confidence_histogram` and
:func:`discrimination`. Over the penalty: :func:`voc_curve` (an exact,
piecewise-linear :class:`VOCCurve` in one of ``VOC_MODES``), :func:`dominance`
(:class:`Dominance`, which of two curves is higher where) and
:func:`voc_frame` (several curves as one tidy frame).

The value primitive that every curve, the tuning, the comparison table,
monitoring and the bootstrap share, on a presorted run
(:class:`SortedRun`, made by :func:`~valuecore.presort`, whose ``value_at`` and ``coverage_at`` read one
threshold): :func:`item_gains` (each item's gain over handing it to a person, by true and predicted
class), :func:`decision_values` (each item's value for given actions), :func:`cumulative_gain` (the gain
of accepting the ``k`` most confident groups, for every ``k``), :func:`class_cumulative_gain` (its
per-class form), :func:`dimensionless_value` (seed 000's
``(N_correct - omega N_wrong) / N``) and :func:`acceptance_limits` (the
largest omega at which the calibrated threshold ``omega / (1 + omega)`` still
accepts a confidence).

The curves users call most (:func:`~valuecore.threshold_curve`, :func:`~valuecore.voc_curve`,
:func:`~valuecore.voc_frame`, :func:`~valuecore.dominance`) are also at the top of the package.
Frames need pandas.
"""

from ._engine.curves import (
    RiskCoverage,
    ThresholdCurve,
    confidence_histogram,
    discrimination,
    risk_coverage_curve,
    threshold_curve,
)
from ._engine.evaluate import decision_values
from ._engine.sorting import (
    SortedRun,
    acceptance_limits,
    class_cumulative_gain,
    cumulative_gain,
    dimensionless_value,
    item_gains,
)
from ._engine.voc import VOC_MODES, Dominance, VOCCurve, dominance, voc_curve, voc_frame

__all__ = [
    "RiskCoverage",
    "ThresholdCurve",
    "confidence_histogram",
    "discrimination",
    "risk_coverage_curve",
    "threshold_curve",
    "VOC_MODES",
    "Dominance",
    "VOCCurve",
    "dominance",
    "voc_curve",
    "voc_frame",
    "acceptance_limits",
    "class_cumulative_gain",
    "cumulative_gain",
    "dimensionless_value",
    "SortedRun",
    "decision_values",
    "item_gains",
]
