"""What several test modules share, in one place (test modules import helpers from here, never from
another test module): small compositions of the core's private steps, written as the core once did."""

from __future__ import annotations

import math

import numpy as np

from valuecore._engine.sorting import _group_ranks, _order_by_rank
from valuecore._monitor.bands import _SortedECDF, _ks_test
from valuecore._stats.uncertainty import _band_tables, _band_values, _direct_values


# ---------------------------------------------------------------- the engine
def descending_order(confidence: np.ndarray) -> np.ndarray:
    """``np.argsort(-confidence, kind="stable")``, faster when confidences repeat.

    Ties keep their order, so the result is identical.
    """
    ranked = _group_ranks(confidence)
    rank, thresholds = ranked if ranked is not None else (None, None)
    return _order_by_rank(rank, 0 if thresholds is None else thresholds.shape[0], confidence)


# ---------------------------------------------------------------- statistics
def voc_values(
    mode: str,
    omegas: np.ndarray,
    evaluated,
    eval_counts: np.ndarray,
    tune=None,
    tune_counts: np.ndarray | None = None,
) -> np.ndarray:
    """Dimensionless VOC values of a batch of resamples, shape (batch, m).

    With counts of ones (unit weights) this is ``voc_curve(...).value_at(omegas)``.
    """
    if mode in ("accept_all", "calibrated"):
        return _direct_values(mode, omegas, evaluated, eval_counts)
    return _band_values(mode, omegas, evaluated, tune, _band_tables(mode, evaluated, eval_counts, tune, tune_counts))


# ---------------------------------------------------------------- monitoring
def weighted_ks(reference: np.ndarray, ref_weight: np.ndarray, sample: np.ndarray, weight: np.ndarray):
    """(distance, p-value) of the weighted two-sample Kolmogorov-Smirnov test."""
    if ref_weight.sum() <= 0 or weight.sum() <= 0:
        return math.nan, math.nan
    return _ks_test(_SortedECDF(reference, ref_weight), ref_weight, sample, weight)
