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

from .._model.choices import VOC_MODES
from .sorting import SortedRun, acceptance_limits, dimensionless_value
from .._model.values import threshold_for_omega

__all__ = ["VOCCurve", "voc_curve", "dominance", "Dominance", "VOC_MODES", "voc_frame"]



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
            threshold = threshold_for_omega(omega)
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
            return threshold_for_omega(omega)
        return self.thresholds[self._piece(omega)]

    def _lines(self) -> tuple[np.ndarray, np.ndarray]:
        """Each piece's value line ``intercept - omega * slope``, per item; shapes (n_pieces,)."""
        if self.n_items <= 0:
            return np.zeros_like(self.n_correct), np.zeros_like(self.n_wrong)
        return self.n_correct / self.n_items, self.n_wrong / self.n_items

    def _in_force_after(self, omega: np.ndarray) -> np.ndarray:
        """The piece in force on ``(omega, omega + eps)`` for a small enough eps > 0.

        Found from the breaks themselves, never from a float inside the interval: an
        interval one ulp wide (or subnormal) has no float strictly inside, and its
        rounded midpoint lands on an end, where another piece may be in force.
        Zero-width pieces are never in force on an open interval, and are skipped.
        """
        return np.minimum(np.searchsorted(self.breaks, omega, side="right") - 1, self.n_correct.size - 1)

    def _spans(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Indices, starts and ends of the pieces in force on an open interval (width > 0).

        The other pieces have zero width: they hold at most at omega = 0 (a calibrated
        curve accepts a confidence of 0 there only), a single point that no area and no
        supremum beyond it can see, and that ``value_at`` answers for.
        """
        lo, hi = self.breaks[:-1], self.breaks[1:]
        keep = np.flatnonzero(hi > lo)
        return keep, lo[keep], hi[keep]

    @property
    def omega_sup(self) -> float:
        """``sup{omega >= 0 : value(omega) > 0}`` (seed 000); ``inf`` when never reached, 0 when never positive."""
        if self.n_items <= 0:
            return 0.0
        piece, lo, hi = self._spans()
        correct, wrong = self.n_correct[piece], self.n_wrong[piece]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # C / W past the floats: inf
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
        piece, lo, hi = self._spans()
        u = np.maximum(lo, omega_low)
        v = np.minimum(hi, omega_high)
        intercept, slope = (line[piece] for line in self._lines())
        correct, wrong = self.n_correct[piece], self.n_wrong[piece]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # C / W past the floats: inf
            root = np.where(wrong > 0, correct / wrong, np.where(correct > 0, np.inf, -np.inf))
        end = np.minimum(v, root)
        use = end > u
        if not use.any():
            return 0.0
        u, end, intercept, slope = u[use], end[use], intercept[use], slope[use]
        if np.isinf(end).any():
            return math.inf
        # Width times the value at the middle: no difference of squares (which cancels).
        integral = (end - u) * (intercept - slope * (u / 2 + end / 2))
        return float(integral.sum())

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
    if np.any(np.diff(wrong) < 0) or np.any(np.diff(correct) < 0):  # reviewers' mistakes folded in
        # Sort by wrong, best correct first, highest threshold first; one point per wrong.
        order = np.lexsort((np.arange(wrong.size), -correct, wrong))
        order = order[np.r_[True, wrong[order][1:] != wrong[order][:-1]]]
        vertices = order[_upper_hull(wrong[order], correct[order])]
    else:
        vertices = _upper_hull(wrong, correct)
    # Slopes between consecutive vertices are decreasing; vertex i is optimal
    # for omega in [slope_i, slope_{i-1}). Reverse so omega increases.
    # A slope past the largest float (a wrong weight of 5e-324 under a correct one of 1) is inf: the
    # vertex before it holds at every finite omega.
    with np.errstate(over="ignore"):
        slopes = np.diff(correct[vertices]) / np.diff(wrong[vertices])
    breaks = np.r_[0.0, slopes[::-1], np.inf]
    # A piece starting at inf is in force at no omega: drop it, so that breaks increase to the last.
    in_force = breaks[:-1] < np.inf
    return np.r_[breaks[:-1][in_force], np.inf], vertices[::-1][in_force]


def _thresholds_for_groups(run: SortedRun, groups: np.ndarray) -> np.ndarray:
    thresholds = np.full(groups.shape, np.nan)
    accepted = groups > 0
    thresholds[accepted] = run.thresholds[groups[accepted] - 1]
    return thresholds


def voc_curve(run: SortedRun, mode: str = "oracle", tune_run: SortedRun | None = None,
              reviewers=None) -> VOCCurve:
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
    reviewers : Reviewers, optional
        People who are not always right (``valuecore.constraints.Reviewers``):
        each threshold's value prices its hand-offs at the rate it produces,
        exactly (``reviewer_counts``); the thresholds are tuned for them.

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
    if reviewers is not None:  # docs/constraints.md, "People who are not always right"
        from .reviewers import reviewer_counts

        run = reviewer_counts(run, reviewers)
        tune_run = None if tune_run is None else reviewer_counts(tune_run, reviewers)
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
        # up to omega = c / (1 - c): the break is the last float the policy's own
        # test accepts there, so the curve and `confidence >= omega / (1 + omega)`
        # agree at every break (and see acceptance_limits in _sorted for floats just past one).
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
        ``leader`` is "a", "b" or "tie" (within ``tol``); consecutive segments
        differ. A segment names the leader at every omega strictly between its
        ends, however narrow (one ulp, subnormal). At an end shared by two
        segments the curves are level or one of the two leads. Where a curve
        jumps, its value at the jump itself may differ from both sides; when that
        makes a third leader, the point is a segment of its own,
        ``(omega, omega, leader)`` (e.g. at omega = 0 a calibrated curve accepts
        confidence 0 too).
    crossings : tuple of float
        Omegas where the leader changes (each once, increasing).
    dominant : str or None
        "a" or "b" when one is above or tying everywhere on the range (and
        strictly above somewhere), "tie" when identical, None when they cross.
    """

    omega_max: float
    segments: tuple
    crossings: tuple
    dominant: str | None


def _leader(difference: np.ndarray, tol: float) -> np.ndarray:
    return np.where(difference > tol, "a", np.where(difference < -tol, "b", "tie"))


def dominance(a: VOCCurve, b: VOCCurve, omega_max: float | None = None, *, tol: float = 1e-12) -> Dominance:
    """Compare two VOC curves exactly on ``[0, omega_max]``.

    ``omega_max`` defaults to the larger ``omega_sup`` of the two (seed 000:
    beyond it neither model is of use); when that is infinite, pass one.

    Between consecutive breaks of either curve each value is one line, known
    from the breaks themselves (which piece is in force there); their
    difference changes sign at most once, at its root. Every open interval is
    labelled by the difference at its real midpoint (the mean of its ends' for
    a line), so no float needs to lie inside it; every break is labelled by
    the curves' values there.
    """
    if omega_max is None:
        omega_max = max(a.omega_sup, b.omega_sup)
        if not math.isfinite(omega_max):
            raise ValueError("omega_sup is infinite: pass omega_max to bound the comparison")
    if not 0 <= omega_max < math.inf:
        raise ValueError(f"omega_max must be a finite omega >= 0, got {omega_max}")
    omega_max = float(omega_max)

    def inside(curve):
        return curve.breaks[(curve.breaks > 0) & (curve.breaks < omega_max)]

    cuts = np.unique(np.r_[0.0, inside(a), inside(b), omega_max])
    point_leader = _leader(a.value_at(cuts) - b.value_at(cuts), tol)
    if cuts.size == 1:  # omega_max = 0: a single point
        leader = str(point_leader[0])
        return Dominance(0.0, ((0.0, 0.0, leader),), (), leader)
    lo, hi = cuts[:-1], cuts[1:]
    (ca, wa), (cb, wb) = a._lines(), b._lines()
    pa, pb = a._in_force_after(lo), b._in_force_after(lo)
    intercept, slope = ca[pa] - cb[pb], wa[pa] - wb[pb]  # difference = intercept - omega * slope on (lo, hi)
    d_lo, d_hi = intercept - lo * slope, intercept - hi * slope
    sign_lo = np.sign(np.where(np.abs(d_lo) <= tol, 0.0, d_lo))
    sign_hi = np.sign(np.where(np.abs(d_hi) <= tol, 0.0, d_hi))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a subnormal slope: clipped below
        root = np.clip(intercept / slope, lo, hi)
    # An interval whose difference changes sign is split at its root; a part that
    # rounding leaves without width holds no omega and is dropped.
    split = (sign_lo * sign_hi < 0) & (root > lo) & (root < hi)
    parts = np.r_[np.arange(lo.size), np.flatnonzero(split)]
    starts = np.r_[lo, root[split]]
    order = np.lexsort((starts, parts))
    parts, starts = parts[order], starts[order]
    last = np.r_[parts[1:] != parts[:-1], True]  # the last part of its interval
    ends = np.where(last, hi[parts], np.r_[starts[1:], 0.0])
    middle = (intercept[parts] - starts * slope[parts]) / 2 + (intercept[parts] - ends * slope[parts]) / 2
    open_leader = _leader(middle, tol)

    # A break joins a neighbouring open part unless it has a leader of its own
    # (neither tie nor a neighbour's); then it is a segment (omega, omega, leader).
    none = np.array([""])
    before = np.concatenate([none, open_leader[last]])  # the open part ending at each cut ("" at 0)
    after = np.concatenate([open_leader[np.r_[True, last[:-1]]], none])  # the one starting there
    own = (point_leader != "tie") & (point_leader != before) & (point_leader != after)
    # In order: cut 0, the parts of interval 0, cut 1, ... (ties of the key: the cut first).
    position = np.r_[np.flatnonzero(own), parts]
    kind = np.r_[np.zeros(own.sum(), dtype=np.int64), np.ones(parts.size, dtype=np.int64)]
    atom_start = np.r_[cuts[own], starts]
    atom_leader = np.r_[point_leader[own], open_leader]
    order = np.lexsort((atom_start, kind, position))
    atom_start, atom_leader = atom_start[order], atom_leader[order]
    change = np.r_[True, atom_leader[1:] != atom_leader[:-1]]
    seg_starts, seg_leaders = atom_start[change], atom_leader[change]
    seg_ends = np.r_[seg_starts[1:], omega_max]
    result = tuple((float(s), float(e), str(lab)) for s, e, lab in zip(seg_starts, seg_ends, seg_leaders))
    leaders = {lab for _, _, lab in result} - {"tie"}
    dominant = "tie" if not leaders else (leaders.pop() if len(leaders) == 1 else None)
    crossings = tuple(sorted({s for s, _, _ in result[1:]}))
    return Dominance(omega_max, result, crossings, dominant)


def voc_frame(curves: dict[str, VOCCurve], omegas) -> pd.DataFrame:
    """Tidy frame of several curves: ``model, mode, omega, value, threshold``."""
    import pandas as pd
    frames = [curve.to_frame(omegas, model) for model, curve in curves.items()]
    if not frames:
        return pd.DataFrame(columns=["model", "mode", "omega", "value", "threshold"])
    return pd.concat(frames, ignore_index=True)


from .._model.predictions import Predictions  # noqa: E402,F401  (used in doctests)
from .sorting import presort  # noqa: E402,F401
