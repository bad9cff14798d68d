"""Value operating characteristic (VOC) curves, exactly.

The VOC curve of seed 000 plots the dimensionless value per item
``(N_correct - omega * N_wrong) / N`` against the penalty ``omega >= 0``.
For a fixed threshold that is a straight line in omega, so every curve here
is *piecewise linear*: a list of omega intervals, each with the weighted
counts (correct, wrong) of the threshold in force there. From that form any
omega grid, ``omega_sup``, the area over any omega range and the dominance
between two models follow exactly, at a cost in the number of pieces, never in
the number of items.

The oracle curve (threshold tuned on the evaluated data itself) is the upper
envelope of the lines ``C_k - omega * W_k`` over every prefix ``k`` of the
confidence ranking, i.e. the upper convex hull of the points ``(W_k, C_k)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd  # imported where a frame is built, so that importing the module stays light

from ._sorted import SortedRun, acceptance_limits, dimensionless_value

__all__ = ["VOCCurve", "voc_curve", "dominance", "Dominance", "VOC_MODES", "voc_frame"]

VOC_MODES = ("oracle", "tuned", "calibrated", "accept_all")


@dataclass(frozen=True, eq=False)
class VOCCurve:
    """A piecewise-linear VOC curve.

    Attributes
    ----------
    mode : str
        One of ``VOC_MODES``. "oracle" is an upper bound (tuned on the
        evaluated data itself), not an achievable value.
    breaks : ndarray of shape (n_pieces + 1,), non-decreasing
        Piece boundaries in omega, from 0 to ``inf`` (a calibrated curve may
        keep zero-width pieces, e.g. confidence 0 accepted only at omega = 0).
    n_correct, n_wrong : ndarray of shape (n_pieces,)
        Weighted counts of the threshold in force on each piece.
    thresholds : ndarray of shape (n_pieces,)
        That threshold (NaN = always abstain, 0 = accept all).
    n_items : float
        Weighted number of evaluated items.
    closed : {"left", "right"}
        Which end of a piece a breakpoint belongs to: "left" for tuned curves
        (ties go to the higher threshold), "right" for the calibrated one
        (``confidence >= omega / (1 + omega)`` still accepts at the boundary).
    """

    mode: str
    breaks: np.ndarray
    n_correct: np.ndarray
    n_wrong: np.ndarray
    thresholds: np.ndarray
    n_items: float
    closed: str = "left"
    # Calibrated curves only: the run's distinct confidences (decreasing) and
    # cumulative counts, so that values at given omegas use the policy's own
    # float test `confidence >= omega / (1 + omega)`, which no float breakpoint
    # reproduces at every ulp.
    group_confidence: np.ndarray | None = None
    group_cum_correct: np.ndarray | None = None
    group_cum_wrong: np.ndarray | None = None

    def _counts_at(self, omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.group_confidence is not None:
            threshold = omega / (1 + omega)
            groups = np.searchsorted(-self.group_confidence, -threshold, side="right")
            return self.group_cum_correct[groups], self.group_cum_wrong[groups]
        piece = self._piece(omega)
        return self.n_correct[piece], self.n_wrong[piece]

    def _piece(self, omega: np.ndarray) -> np.ndarray:
        side = "right" if self.closed == "left" else "left"
        return np.clip(np.searchsorted(self.breaks, omega, side=side) - 1, 0, self.n_correct.size - 1)

    def value_at(self, omega) -> np.ndarray:
        """Dimensionless value per item at each omega; shape of ``omega``.

        Examples
        --------
        >>> p = Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3]], y_true=[0, 1, 0])
        >>> c = voc_curve(presort(p), "accept_all")
        >>> c.value_at([0.0, 1.0]).tolist()
        [0.6666666666666666, 0.3333333333333333]
        """
        omega = np.asarray(omega, dtype=np.float64)
        if self.n_items <= 0:
            return np.zeros_like(omega)
        correct, wrong = self._counts_at(omega)
        return dimensionless_value(correct, wrong, omega, self.n_items)

    def threshold_at(self, omega) -> np.ndarray:
        """The threshold in force at each omega (NaN = always abstain)."""
        omega = np.asarray(omega, dtype=np.float64)
        if self.mode == "calibrated":
            return omega / (1 + omega)
        return self.thresholds[self._piece(omega)]

    @property
    def omega_sup(self) -> float:
        """``sup{omega >= 0 : value(omega) > 0}`` (seed 000); ``inf`` when never reached, 0 when never positive."""
        lo, hi = self.breaks[:-1], self.breaks[1:]
        correct, wrong = self.n_correct, self.n_wrong
        with np.errstate(divide="ignore", invalid="ignore"):
            root = np.where(wrong > 0, correct / wrong, np.where(correct > 0, np.inf, -np.inf))
        positive = root > lo
        if not positive.any():
            return 0.0
        return float(np.minimum(hi, root)[positive].max())

    def area(self, omega_low: float = 0.0, omega_high: float = math.inf) -> float:
        """VOC area ``integral of max(value, 0) d omega`` over ``[omega_low, omega_high]``.

        Exact; ``inf`` when the value stays positive on an unbounded range.
        """
        if not omega_low <= omega_high:
            raise ValueError(f"the omega range must have low <= high, got [{omega_low}, {omega_high}]")
        if self.n_items <= 0:
            return 0.0
        u = np.maximum(self.breaks[:-1], omega_low)
        v = np.minimum(self.breaks[1:], omega_high)
        correct, wrong = self.n_correct, self.n_wrong
        with np.errstate(divide="ignore", invalid="ignore"):
            root = np.where(wrong > 0, correct / wrong, np.where(correct > 0, np.inf, -np.inf))
        end = np.minimum(v, root)
        use = end > u
        if not use.any():
            return 0.0
        u, end, correct, wrong = u[use], end[use], correct[use], wrong[use]
        if np.isinf(end).any():
            return math.inf
        integral = correct * (end - u) - wrong * (end**2 - u**2) / 2
        return float(integral.sum() / self.n_items)

    def to_frame(self, omegas, model: str = "") -> pd.DataFrame:
        """Tidy frame ``model, mode, omega, value, threshold`` on an omega grid."""
        import pandas as pd
        omegas = np.asarray(omegas, dtype=np.float64)
        return pd.DataFrame(
            {
                "model": model,
                "mode": self.mode,
                "omega": omegas,
                "value": self.value_at(omegas),
                "threshold": self.threshold_at(omegas),
            }
        )


# ------------------------------------------------------------------ hulls
def _upper_hull(wrong: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """Indices of the strict vertices of the upper hull, by increasing ``wrong``.

    ``wrong`` and ``correct`` are non-decreasing (cumulative counts along the
    confidence ranking). Vectorised pruning: a point on or below the segment
    joining its current neighbours is never a hull vertex, so all such points
    can be dropped at once; repeat until none is left.
    """
    k = np.arange(wrong.size)
    # Equal (W, C) pairs: keep the first (the highest threshold); then for
    # equal W keep the largest C, which is the last of the run.
    same = np.r_[False, (wrong[1:] == wrong[:-1]) & (correct[1:] == correct[:-1])]
    k = k[~same]
    w = wrong[k]
    k = k[np.r_[w[1:] != w[:-1], True]]
    while k.size >= 3:
        x, y = wrong[k], correct[k]
        cross = (x[2:] - x[:-2]) * (y[1:-1] - y[:-2]) - (y[2:] - y[:-2]) * (x[1:-1] - x[:-2])
        drop = np.r_[False, cross <= 0, False]
        if not drop.any():
            break
        k = k[~drop]
    # A last edge of slope 0 adds wrong answers for no correct ones: never optimal for omega >= 0.
    while k.size >= 2 and correct[k[-1]] <= correct[k[-2]]:
        k = k[:-1]
    return k


def _hull_pieces(run: SortedRun):
    """Oracle pieces of a labelled run: (breaks, group counts k per piece)."""
    run.predictions.require_labels("a VOC curve")
    wrong, correct = run.cum_wrong, run.cum_correct
    vertices = _upper_hull(wrong, correct)
    # Slopes between consecutive vertices are decreasing; vertex i is optimal
    # for omega in [slope_i, slope_{i-1}). Reverse so omega increases.
    slopes = np.diff(correct[vertices]) / np.diff(wrong[vertices])
    breaks = np.r_[0.0, slopes[::-1], np.inf]
    return breaks, vertices[::-1]


def _thresholds_for_groups(run: SortedRun, groups: np.ndarray) -> np.ndarray:
    thresholds = np.full(groups.shape, np.nan)
    accepted = groups > 0
    thresholds[accepted] = run.thresholds[groups[accepted] - 1]
    return thresholds


def voc_curve(run: SortedRun, mode: str = "oracle", tune_run: SortedRun | None = None) -> VOCCurve:
    """The exact VOC curve of a labelled, presorted run.

    Parameters
    ----------
    run : SortedRun
        The evaluated split.
    mode : {"oracle", "tuned", "calibrated", "accept_all"}
        "oracle": threshold tuned on ``run`` itself (an upper bound).
        "tuned": tuned on ``tune_run`` for every omega, applied to ``run``.
        "calibrated": threshold ``omega / (1 + omega)``, no tuning.
        "accept_all": no rejection (the accuracy baseline, a straight line).
    tune_run : SortedRun, optional
        Required for "tuned".

    Cost: O(n_groups) for the hull, O(pieces log n) for "tuned".

    Examples
    --------
    >>> p = Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3]], y_true=[0, 1, 0])
    >>> c = voc_curve(presort(p))
    >>> c.breaks.tolist(), c.omega_sup
    ([0.0, 1.0, inf], inf)
    """
    run.predictions.require_labels("a VOC curve")
    n_items = run.total_weight
    if mode == "oracle":
        breaks, groups = _hull_pieces(run)
        return VOCCurve(
            mode, breaks, run.cum_correct[groups], run.cum_wrong[groups], _thresholds_for_groups(run, groups), n_items
        )
    if mode == "tuned":
        if tune_run is None:
            raise ValueError("a tuned VOC curve needs the tuning run (tune_run)")
        tune_run.predictions.require_labels("tuning thresholds for a VOC curve")
        breaks, tune_groups = _hull_pieces(tune_run)
        thresholds = _thresholds_for_groups(tune_run, tune_groups)
        groups = np.zeros(thresholds.shape, dtype=np.int64)
        accepted = ~np.isnan(thresholds)
        groups[accepted] = run.groups_accepted(thresholds[accepted])
        return VOCCurve(mode, breaks, run.cum_correct[groups], run.cum_wrong[groups], thresholds, n_items)
    if mode == "calibrated":
        # Group g (confidence c) is accepted while omega / (1 + omega) <= c, i.e.
        # up to omega = c / (1 - c). Breaks are then nudged to the float the policy's
        # own test flips at, so the curve and `confidence >= omega / (1 + omega)`
        # agree at every omega, boundaries included.
        limits = acceptance_limits(run.thresholds)  # decreasing with the confidence
        finite = limits[np.isfinite(limits)][::-1]  # increasing
        n_always = int(np.isinf(limits).sum())
        # On piece j (finite[j-1], finite[j]] the groups with limit >= finite[j] are
        # accepted. Zero-width pieces are kept: at omega = 0 a confidence of 0 is accepted.
        breaks = np.r_[0.0, finite, np.inf]
        groups = np.r_[np.arange(run.n_groups, n_always, -1), n_always].astype(np.int64)
        thresholds = breaks[:-1] / (1 + breaks[:-1])
        thresholds[groups == 0] = np.nan
        return VOCCurve(
            mode, breaks, run.cum_correct[groups], run.cum_wrong[groups], thresholds, n_items, closed="right",
            group_confidence=run.thresholds, group_cum_correct=run.cum_correct, group_cum_wrong=run.cum_wrong,
        )
    if mode == "accept_all":
        return VOCCurve(
            mode,
            np.array([0.0, np.inf]),
            run.cum_correct[-1:],
            run.cum_wrong[-1:],
            np.array([0.0]),
            n_items,
        )
    raise ValueError(f"unknown VOC mode {mode!r}; expected one of {list(VOC_MODES)}")


# -------------------------------------------------------------- dominance
@dataclass(frozen=True)
class Dominance:
    """Which of two VOC curves is higher where, on ``[0, omega_max]``.

    Attributes
    ----------
    omega_max : float
    segments : tuple of (omega_start, omega_end, leader)
        ``leader`` is "a", "b" or "tie"; consecutive segments differ.
    crossings : tuple of float
        Omegas where the leader changes.
    dominant : str or None
        "a" or "b" when one is above or tying everywhere on the range (and
        strictly above somewhere), "tie" when identical, None when they cross.
    """

    omega_max: float
    segments: tuple
    crossings: tuple
    dominant: str | None


def dominance(a: VOCCurve, b: VOCCurve, omega_max: float | None = None, *, tol: float = 1e-12) -> Dominance:
    """Compare two VOC curves exactly on ``[0, omega_max]``.

    ``omega_max`` defaults to the larger ``omega_sup`` of the two (seed 000:
    beyond it neither model is of use); when that is infinite, pass one.
    """
    if omega_max is None:
        omega_max = max(a.omega_sup, b.omega_sup)
        if not math.isfinite(omega_max):
            raise ValueError("omega_sup is infinite: pass omega_max to bound the comparison")
    if omega_max <= 0:
        return Dominance(0.0, ((0.0, 0.0, "tie"),), (), "tie")
    cuts = np.unique(np.r_[0.0, a.breaks[(a.breaks > 0) & (a.breaks < omega_max)],
                           b.breaks[(b.breaks > 0) & (b.breaks < omega_max)], omega_max])
    lo, hi = cuts[:-1], cuts[1:]
    middle = (lo + hi) / 2  # the piece in force inside each merged interval
    pa, pb = a._piece(middle), b._piece(middle)
    na, nb = max(a.n_items, 1e-300), max(b.n_items, 1e-300)
    intercept = a.n_correct[pa] / na - b.n_correct[pb] / nb
    slope = a.n_wrong[pa] / na - b.n_wrong[pb] / nb  # difference = intercept - omega * slope
    d_lo, d_hi = intercept - lo * slope, intercept - hi * slope
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(slope != 0, intercept / slope, np.nan)
    crosses = (np.sign(np.where(np.abs(d_lo) <= tol, 0, d_lo)) * np.sign(np.where(np.abs(d_hi) <= tol, 0, d_hi))) < 0
    # Split crossing intervals at their root, then label each sub-interval by its midpoint.
    starts = np.sort(np.r_[lo, root[crosses]])
    ends = np.r_[starts[1:], omega_max]
    mids = (starts + ends) / 2
    piece = np.clip(np.searchsorted(cuts, mids, side="right") - 1, 0, lo.size - 1)
    diff = intercept[piece] - mids * slope[piece]
    labels = np.where(diff > tol, "a", np.where(diff < -tol, "b", "tie"))
    change = np.r_[True, labels[1:] != labels[:-1]]
    seg_starts = starts[change]
    seg_ends = np.r_[seg_starts[1:], omega_max]
    seg_labels = labels[change]
    segments = tuple((float(s), float(e), str(lab)) for s, e, lab in zip(seg_starts, seg_ends, seg_labels))
    leaders = set(seg_labels.tolist()) - {"tie"}
    dominant = "tie" if not leaders else (leaders.pop() if len(leaders) == 1 else None)
    crossings = tuple(float(s) for s in seg_starts[1:])
    return Dominance(float(omega_max), segments, crossings, dominant)


def voc_frame(curves: dict[str, VOCCurve], omegas) -> pd.DataFrame:
    """Tidy frame of several curves: ``model, mode, omega, value, threshold``."""
    import pandas as pd
    frames = [curve.to_frame(omegas, model) for model, curve in curves.items()]
    if not frames:
        return pd.DataFrame(columns=["model", "mode", "omega", "value", "threshold"])
    return pd.concat(frames, ignore_index=True)


from ._predictions import Predictions  # noqa: E402,F401  (used in doctests)
from ._sorted import presort  # noqa: E402,F401
