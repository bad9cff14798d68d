"""The diagnostics that judge how calibrated confidences are: reliability diagrams, ECE, MCE, Brier, log-loss.

The top label's confidences are binned (``"uniform"``: the bins ``[k/B, (k+1)/B)``, the last closed at 1;
``"quantile"``: equal weight per bin) and each bin's mean confidence set against its accuracy; the
negative log-likelihood floors the probability of the true class at float64's machine epsilon, as
scikit-learn's ``log_loss`` does. Everything is weighted by ``Predictions.sample_weight``. The maps that
recalibrate are ``valuecore._model.recalibration``; both are public in ``valuecore.calibration``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from .._model.predictions import Predictions

__all__ = [
    "CalibrationDiagnostics",
    "brier_score",
    "calibration_diagnostics",
    "calibration_summary",
    "expected_calibration_error",
    "maximum_calibration_error",
    "negative_log_likelihood",
    "reliability_diagram",
]

STRATEGIES = ("uniform", "quantile")
_NLL_FLOOR = float(np.finfo(np.float64).eps)  # as scikit-learn's log_loss
_Z_95 = 1.959963984540054

_RELIABILITY_COLUMNS = [
    "bin_lower",
    "bin_upper",
    "mean_confidence",
    "accuracy",
    "count",
    "accuracy_low",
    "accuracy_high",
]


def _check_bins(n_bins, strategy) -> None:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown binning strategy {strategy!r}; choose one of {list(STRATEGIES)}")


# --------------------------------------------------------------------------
# diagnostics
# --------------------------------------------------------------------------
def _top_label(predictions: Predictions, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Confidence, correctness and weight of the rows with positive weight."""
    predictions.require_labels(what)
    keep = predictions.sample_weight > 0
    if predictions.has_model_abstentions:  # what the model declined has no confidence to check
        keep &= ~predictions.model_abstained
    keep = slice(None) if keep.all() else keep  # no copies when every row counts (callers never write to them)
    return (
        predictions.confidence[keep],
        predictions.correct[keep].astype(np.float64),
        predictions.sample_weight[keep],
    )


def _uniform_bin(confidence: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin ``k`` with ``k/B <= confidence < (k+1)/B`` (1 in the last bin).

    The edges are the correctly rounded floats ``k/B`` (``np.arange(B + 1) / B``), so
    a confidence written as 0.6 lies in bin 6 of 10. ``np.linspace(0, 1, 11)`` would
    make the edge 0.6000000000000001 and put 0.6 and 0.7 in the bin below.
    """
    edges = np.arange(n_bins + 1) / n_bins
    return np.clip(np.searchsorted(edges, confidence, side="right") - 1, 0, n_bins - 1)


def _bin_index(confidence: np.ndarray, weight: np.ndarray, n_bins: int, strategy: str):
    """Bin of each row, plus the lower/upper edge of each of the ``n_bins`` bins.

    Uniform: ``[k/B, (k+1)/B)``, the last bin closed at 1. Quantile: the
    distinct confidence values, sorted, go to bin ``floor(B * m / W)`` where
    ``m`` is the weight below the value plus half its own weight (its mass
    midpoint) and ``W`` the total. Identical confidences therefore never
    straddle two bins; a heavy tie makes its bin heavier and can leave other
    bins empty. Quantile edges tile [0, 1]: a bin runs from its smallest
    confidence (0 for the first non-empty bin) to the smallest confidence of
    the next non-empty bin (1 for the last).
    """
    if strategy == "uniform":
        edges = np.arange(n_bins + 1) / n_bins
        return _uniform_bin(confidence, n_bins), edges[:-1], edges[1:]
    values, inverse = _distinct_values(confidence)
    value_weight = np.bincount(inverse, weights=weight, minlength=values.size)
    total = value_weight.sum()
    midpoint = np.cumsum(value_weight) - value_weight / 2.0
    value_bin = np.clip(np.floor(n_bins * midpoint / total).astype(np.int64), 0, n_bins - 1)
    index = value_bin[inverse]
    lower = np.full(n_bins, np.nan)
    # values are sorted, so the first value landing in a bin is its minimum
    first = np.unique(value_bin, return_index=True)
    lower[first[0]] = values[first[1]]
    upper = np.full(n_bins, np.nan)
    occupied = first[0]
    if occupied.size:
        upper[occupied[:-1]] = lower[occupied[1:]]
        upper[occupied[-1]] = 1.0
        lower[occupied[0]] = 0.0
    return index, lower, upper


def _distinct_values(confidence: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(confidence, return_inverse=True)``, by hashing when the values repeat (as presort groups them)."""
    from .._engine.sorting import _group_ranks

    ranked = _group_ranks(confidence)
    if ranked is None:
        return np.unique(confidence, return_inverse=True)
    rank, decreasing = ranked
    return decreasing[::-1], (decreasing.shape[0] - 1) - rank.astype(np.intp)


def _bin_table(predictions: Predictions, n_bins: int, strategy: str, what: str) -> dict[str, np.ndarray]:
    _check_bins(n_bins, strategy)
    confidence, correct, weight = _top_label(predictions, what)
    if confidence.size == 0:
        empty = np.zeros(0)
        return {"lower": empty, "upper": empty, "weight": empty, "confidence": empty, "accuracy": empty}
    index, lower, upper = _bin_index(confidence, weight, int(n_bins), strategy)
    bin_weight = np.bincount(index, weights=weight, minlength=n_bins)
    bin_conf = np.bincount(index, weights=weight * confidence, minlength=n_bins)
    bin_correct = np.bincount(index, weights=weight * correct, minlength=n_bins)
    used = bin_weight > 0
    return {
        "lower": lower[used],
        "upper": upper[used],
        "weight": bin_weight[used],
        "confidence": bin_conf[used] / bin_weight[used],
        "accuracy": bin_correct[used] / bin_weight[used],
    }


def expected_calibration_error(predictions: Predictions, n_bins: int = 15, strategy: str = "uniform") -> float:
    """Weighted expected calibration error of the top-label confidence.

    ``ECE = sum_b (W_b / W) * |accuracy_b - mean_confidence_b|`` over the
    bins of :func:`reliability_diagram`.

    Parameters
    ----------
    predictions : Predictions
        Labelled; uses ``confidence`` (so it sees isotonic recalibration).
    n_bins : int
    strategy : {"uniform", "quantile"}
        Equal-width bins ``[k/B, (k+1)/B)`` (last closed), or equal-mass bins
        from weighted quantiles that never split identical confidences.

    Returns
    -------
    float
        In [0, 1]; NaN when no item has positive weight.

    Examples
    --------
    >>> p = Predictions.from_top_label(["a", "a", "a", "a"], [0.2, 0.4, 0.7, 0.9],
    ...                                ["a", "b", "a", "a"], classes=["a", "b"])
    >>> round(expected_calibration_error(p, n_bins=2), 6)  # (2*|0.5-0.3| + 2*|1-0.8|) / 4
    0.2
    """
    return _ece_of(_bin_table(predictions, n_bins, strategy, "the expected calibration error"))


def _ece_of(table: dict[str, np.ndarray]) -> float:
    total = table["weight"].sum()
    if total <= 0:
        return float("nan")
    gaps = np.abs(table["accuracy"] - table["confidence"])
    return float(np.dot(table["weight"], gaps) / total)


def maximum_calibration_error(predictions: Predictions, n_bins: int = 15, strategy: str = "uniform") -> float:
    """Largest ``|accuracy_b - mean_confidence_b|`` over non-empty bins.

    Same bins as :func:`expected_calibration_error`; a bin counts as empty
    when its items weigh nothing. NaN when every bin is empty.

    Examples
    --------
    >>> p = Predictions.from_top_label(["a", "a", "a", "a"], [0.2, 0.4, 0.7, 0.9],
    ...                                ["a", "b", "a", "a"], classes=["a", "b"])
    >>> round(maximum_calibration_error(p, n_bins=2), 6)
    0.2
    """
    return _mce_of(_bin_table(predictions, n_bins, strategy, "the maximum calibration error"))


def _mce_of(table: dict[str, np.ndarray]) -> float:
    if table["weight"].size == 0:
        return float("nan")
    return float(np.max(np.abs(table["accuracy"] - table["confidence"])))


def _weighted_mean(values: np.ndarray, weight: np.ndarray) -> float:
    total = weight.sum()
    if total <= 0:
        return float("nan")
    return float(np.dot(weight, values) / total)


def brier_score(predictions: Predictions, *, top_label: bool = False) -> float:
    """Weighted Brier score.

    With ``proba`` (and ``top_label=False``): the multiclass score, the
    weighted mean over items of ``sum_c (p_c - onehot_c)^2``, in [0, 2].
    Without ``proba``, or with ``top_label=True``: the binary Brier score of
    the top-label confidence against correctness, ``(confidence - correct)^2``,
    in [0, 1]; only this form sees an isotonic recalibration, which leaves
    ``proba`` untouched. The two forms are on different scales; do not
    compare a top-label-only run with a full-vector one.

    Returns
    -------
    float
        NaN when no item has positive weight.

    Examples
    --------
    >>> p = Predictions.from_proba([[0.8, 0.2], [0.4, 0.6]], y_true=[0, 0])
    >>> round(brier_score(p), 6)  # ((0.2^2 + 0.2^2) + (0.6^2 + 0.6^2)) / 2
    0.4
    >>> round(brier_score(p, top_label=True), 6)  # ((0.8 - 1)^2 + (0.6 - 0)^2) / 2
    0.2
    """
    predictions.require_labels("the Brier score")
    if predictions.has_model_abstentions:  # of the answers the model gave
        predictions = predictions.subset(~predictions.model_abstained)
    weight = predictions.sample_weight
    if top_label or predictions.proba is None:
        errors = (predictions.confidence - predictions.correct) ** 2
    else:
        proba = predictions.proba
        true_p = proba[np.arange(predictions.n), predictions.y_true]
        # sum_c (p_c - 1[c = y])^2 without building the one-hot matrix
        errors = np.einsum("ij,ij->i", proba, proba) - 2.0 * true_p + 1.0
    return _weighted_mean(errors, weight)


def negative_log_likelihood(predictions: Predictions) -> float:
    """Weighted mean of ``-log(max(p_true, eps))``, ``eps`` = float64 machine epsilon (2.2e-16).

    The floor is scikit-learn's ``log_loss`` one, so the two agree: a true class given
    probability 0 costs ``-log(eps)`` = 36.04, not infinity.

    Raises
    ------
    ValueError
        Unlabeled split, or a run without ``proba``.

    Examples
    --------
    >>> p = Predictions.from_proba([[0.5, 0.5], [0.25, 0.75]], y_true=[0, 1])
    >>> round(negative_log_likelihood(p), 4)  # -(log 0.5 + log 0.75) / 2
    0.4904
    """
    predictions.require_labels("the negative log-likelihood")
    predictions.require_proba("the negative log-likelihood")
    true_p = predictions.proba[np.arange(predictions.n), predictions.y_true]
    return _weighted_mean(-np.log(np.clip(true_p, _NLL_FLOOR, 1.0)), predictions.sample_weight)


def _wilson(accuracy: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    z2 = _Z_95**2
    denominator = 1.0 + z2 / n
    centre = (accuracy + z2 / (2.0 * n)) / denominator
    half = _Z_95 * np.sqrt(np.maximum(accuracy * (1.0 - accuracy), 0.0) / n + z2 / (4.0 * n * n)) / denominator
    # the interval always contains the point estimate; rounding at 0 and 1
    # could otherwise push an end past it by an ulp
    return np.clip(centre - half, 0.0, accuracy), np.clip(centre + half, accuracy, 1.0)


def reliability_diagram(predictions: Predictions, n_bins: int = 15, strategy: str = "uniform") -> pd.DataFrame:
    """Per-bin confidence against accuracy, the data of a reliability plot.

    Parameters
    ----------
    predictions : Predictions
        Labelled.
    n_bins : int
    strategy : {"uniform", "quantile"}
        As in :func:`expected_calibration_error`. Quantile bins are reported
        with edges that tile [0, 1]: from the bin's smallest confidence (0 for
        the first bin) up to, excluding, the next bin's smallest (1 for the
        last).

    Returns
    -------
    pandas.DataFrame
        One row per bin whose items weigh more than 0, in increasing
        confidence, with float columns ``bin_lower``, ``bin_upper``,
        ``mean_confidence``, ``accuracy`` (weighted), ``count`` (weighted;
        the column sums to the total weight), ``accuracy_low`` and
        ``accuracy_high``: a 95% Wilson score interval that takes the
        weighted count as the number of trials. That is right for frequency
        weights; for weights on another scale (e.g. summing to 1) the
        interval is too wide or too narrow by that scale.

    Examples
    --------
    >>> p = Predictions.from_top_label(["a", "a", "a", "a"], [0.2, 0.4, 0.7, 0.9],
    ...                                ["a", "b", "a", "a"], classes=["a", "b"])
    >>> reliability_diagram(p, n_bins=2)[["bin_lower", "bin_upper", "accuracy", "count"]]
       bin_lower  bin_upper  accuracy  count
    0        0.0        0.5       0.5    2.0
    1        0.5        1.0       1.0    2.0
    """
    return _reliability_of(_bin_table(predictions, n_bins, strategy, "a reliability diagram"))


def _reliability_of(table: dict[str, np.ndarray]) -> pd.DataFrame:
    import pandas as pd
    if table["weight"].size:
        low, high = _wilson(table["accuracy"], table["weight"])
    else:
        low = high = np.zeros(0)
    return pd.DataFrame(
        {
            "bin_lower": table["lower"],
            "bin_upper": table["upper"],
            "mean_confidence": table["confidence"],
            "accuracy": table["accuracy"],
            "count": table["weight"],
            "accuracy_low": low,
            "accuracy_high": high,
        },
        columns=_RELIABILITY_COLUMNS,
    ).astype(np.float64)


def calibration_summary(predictions: Predictions, n_bins: int = 15) -> dict[str, float | None]:
    """All calibration diagnostics of a labelled run in one dict.

    Returns
    -------
    dict
        ``ece_uniform`` and ``ece_quantile`` (:func:`expected_calibration_error`
        with each strategy), ``mce`` (:func:`maximum_calibration_error`,
        uniform bins), ``brier`` (:func:`brier_score`, multiclass form when
        ``proba`` is present) and ``nll`` (:func:`negative_log_likelihood`,
        None when the run has no ``proba``). Plain floats.

    Examples
    --------
    >>> p = Predictions.from_top_label(["a", "a", "a", "a"], [0.2, 0.4, 0.7, 0.9],
    ...                                ["a", "b", "a", "a"], classes=["a", "b"])
    >>> s = calibration_summary(p, n_bins=2)
    >>> sorted(s), s["nll"]
    (['brier', 'ece_quantile', 'ece_uniform', 'mce', 'nll'], None)
    """
    predictions.require_labels("a calibration summary")
    return calibration_diagnostics(predictions, n_bins).summary()


@dataclass(frozen=True, eq=False)
class CalibrationDiagnostics:
    """Every diagnostic of :func:`calibration_diagnostics` for one labelled split.

    Attributes
    ----------
    n_bins : int
    reliability_uniform, reliability_quantile : DataFrame
        :func:`reliability_diagram` with each binning strategy.
    ece_uniform, ece_quantile, mce, brier, brier_top_label : float
        As :func:`calibration_summary`; ``brier_top_label`` is
        ``brier_score(predictions, top_label=True)``.
    nll : float or None
        None when the run has no ``proba``.
    """

    n_bins: int
    reliability_uniform: pd.DataFrame
    reliability_quantile: pd.DataFrame
    ece_uniform: float
    ece_quantile: float
    mce: float
    brier: float
    brier_top_label: float
    nll: float | None

    def reliability(self, strategy: str = "uniform") -> pd.DataFrame:
        """The reliability diagram with ``strategy`` bins ("uniform" or "quantile")."""
        _check_bins(self.n_bins, strategy)
        return self.reliability_uniform if strategy == "uniform" else self.reliability_quantile

    def summary(self) -> dict[str, float | None]:
        """The dict of :func:`calibration_summary`."""
        return {"ece_uniform": self.ece_uniform, "ece_quantile": self.ece_quantile, "mce": self.mce,
                "brier": self.brier, "nll": self.nll}


def calibration_diagnostics(predictions: Predictions, n_bins: int = 15) -> CalibrationDiagnostics:
    """Reliability diagrams (both binnings), ECEs, MCE, Brier scores and NLL of a labelled split at once.

    The same numbers as :func:`reliability_diagram`, :func:`expected_calibration_error`,
    :func:`maximum_calibration_error`, :func:`brier_score` and
    :func:`negative_log_likelihood` called one by one, with each binning computed
    once instead of once per diagnostic (the equal-mass one sorts the confidences).

    Examples
    --------
    >>> p = Predictions.from_top_label(["a", "a", "a", "a"], [0.2, 0.4, 0.7, 0.9],
    ...                                ["a", "b", "a", "a"], classes=["a", "b"])
    >>> d = calibration_diagnostics(p, n_bins=2)
    >>> round(d.ece_uniform, 6), round(d.mce, 6), d.reliability("uniform")["count"].tolist()
    (0.2, 0.2, [2.0, 2.0])
    """
    predictions.require_labels("calibration diagnostics")
    uniform = _bin_table(predictions, n_bins, "uniform", "calibration diagnostics")
    quantile = _bin_table(predictions, n_bins, "quantile", "calibration diagnostics")
    return CalibrationDiagnostics(
        n_bins=int(n_bins),
        reliability_uniform=_reliability_of(uniform),
        reliability_quantile=_reliability_of(quantile),
        ece_uniform=_ece_of(uniform),
        ece_quantile=_ece_of(quantile),
        mce=_mce_of(uniform),
        brier=brier_score(predictions),
        brier_top_label=brier_score(predictions, top_label=True),
        nll=negative_log_likelihood(predictions) if predictions.has_proba else None,
    )
