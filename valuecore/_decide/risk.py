"""Certified selective risk: the most valuable threshold whose error rate is guaranteed.

A team promises "errors on accepted items stay under alpha". A threshold
tuned on a finite split can keep that promise on the split and break it on
new data. :func:`fit_certified` returns the value-maximising threshold among
those whose *selective risk* (share of wrong answers among accepted items) is
certified at most ``alpha`` with confidence ``1 - delta``.

Method: Learn-then-Test (Angelopoulos, Bates, Candes, Jordan and Lei, 2021).
For a candidate threshold accepting ``m`` items of which ``e`` are wrong, the
null hypothesis "risk > alpha" has the exact binomial p-value
``P(Binomial(m, alpha) <= e)``; rejecting it at level ``l`` is the same as the
one-sided Clopper-Pearson upper bound at confidence ``1 - l`` being at most
``alpha``. The family-wise error of the tests is at most ``delta``, so the
chance that *any* certified threshold has a risk above ``alpha`` is at most
``delta``, and the guarantee holds for the threshold actually chosen whatever
the value criterion that picks it among the certified ones. Two ways to
control the family-wise error:

``"fixed_sequence"`` (default)
    A grid of at most ``n_grid`` (default 50) candidates equally spaced in
    accepted weight, chosen from the confidences alone, tested from the
    highest threshold down, each at the full level ``delta``, stopping at the
    first that fails. Fixed-sequence testing over *every* distinct confidence
    stops almost at once (near the top a threshold rests on a handful of
    items, and one unlucky error ends the sequence); the grid keeps a step of
    about ``N / n_grid`` items between tests. Candidates whose accepted count
    could not be certified even with no error (``(1 - alpha)^m > delta``) are
    dropped first, from the counts alone.
``"bonferroni"``
    Every distinct confidence that could be certified with no error is tested
    at level ``delta / M`` (M of them). Exact over all candidates, but the
    correction costs power when M is large.

In the seeded simulation of ``tests/core/test_risk.py`` (400 tuning
splits of 1,000 items, confidence uniform on [0.5, 1] and right with
probability equal to it, alpha = delta = 0.1) the chosen threshold broke the
promise on the population in 5.75% of the splits with the fixed sequence and
0% with Bonferroni (at most 10% allowed); choosing by the empirical risk
alone broke it in 54%. Mean coverage: 27.5% (fixed sequence) and 7.5%
(Bonferroni) against the oracle's 40%.

Weights. The binomial test counts independent items. A weight of k is
certified as k independent items only when the caller says so
(``weights="copies"``: e.g. an aggregated log, where a group of k rows with
the same prediction and truth *is* k items); then ``m`` and ``e`` are weighted
counts and the weights must be whole numbers. By default (``weights="unit"``)
a run whose positive weights are not all 1 is refused with a ValueError that
says why: integer weights that are not independent copies (duplicated rows,
importance or survey weights) broke the promise in 15-20% of seeded runs
against delta = 10%, silently (as reported in issue 19). Such weights need another method.

The threshold candidates are the observed confidences (as in Geifman and
El-Yaniv's selection with guaranteed risk); the finite-sample argument is
exact for candidates fixed in advance, and the seeded simulation in the tests
checks the observed-confidence version.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._engine.fitting import Policy, Values
from .._engine.sorting import SortedRun, cumulative_gain

__all__ = ["CertifiedRisk", "METHODS", "WEIGHT_MEANINGS", "fit_certified", "binomial_p_values", "upper_bounds"]

METHODS = ("fixed_sequence", "bonferroni")
WEIGHT_MEANINGS = ("unit", "copies")
_METHOD_TEXT = {
    "fixed_sequence": "learn-then-test, fixed-sequence testing on a label-free grid, exact binomial tail",
    "bonferroni": "learn-then-test, Bonferroni over every candidate that could be certified, exact binomial tail",
}


def binomial_p_values(n_accepted, n_wrong, max_risk: float) -> np.ndarray:
    """``P(Binomial(m, alpha) <= e)`` elementwise, for (weighted) counts m and e.

    1 where nothing is accepted or everything accepted is wrong.
    """
    from scipy.special import betainc

    m = np.asarray(n_accepted, dtype=np.float64)
    e = np.minimum(np.asarray(n_wrong, dtype=np.float64), m)
    out = np.ones(np.broadcast(m, e).shape)
    ok = (m > 0) & (m - e > 0)
    # P(Bin(m, a) <= e) = I_{1-a}(m - e, e + 1)
    out[ok] = betainc(m[ok] - e[ok], e[ok] + 1.0, 1.0 - max_risk)
    return out


def upper_bounds(n_accepted, n_wrong, level: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound of the risk at confidence ``1 - level``."""
    from scipy.special import betaincinv

    m = np.asarray(n_accepted, dtype=np.float64)
    e = np.minimum(np.asarray(n_wrong, dtype=np.float64), m)
    out = np.ones(m.shape)
    ok = (m > 0) & (m - e > 0)
    # the bound u solves I_{1-u}(m - e, e + 1) = level
    out[ok] = 1.0 - betaincinv(m[ok] - e[ok], e[ok] + 1.0, level)
    return out


@dataclass(frozen=True, eq=False)
class CertifiedRisk:
    """The certified choice and the evidence behind it (tuning split).

    Attributes
    ----------
    policy : Policy
        A ``threshold`` policy; threshold None (always abstain) when nothing
        that is worth accepting could be certified.
    max_risk, confidence : float
        ``alpha`` and ``1 - delta``.
    method : str
    n_tested : int
        Candidates whose p-value was compared with the level.
    n_certified : int
        Candidates certified.
    upper_bound : float or None
        Certified upper bound of the risk at the chosen threshold (the
        Clopper-Pearson bound at the level of its test); None when abstaining
        on everything.
    n_accepted, n_wrong : float
        Weighted items the certificate rests on (accepted at the threshold), and the wrong ones.
    value_total : float
        Value of the chosen policy on the tuning split.
    empirical_threshold : float or None
        What choosing by the empirical risk alone would pick (value-maximising
        with empirical risk <= alpha): no guarantee; shown for comparison.
    thresholds, tested, certified, bounds : ndarray of shape (n_groups,)
        Per candidate: the threshold, tested after the screen, certified,
        and the upper bound (NaN where not tested).
    """

    policy: Policy
    max_risk: float
    confidence: float
    method: str
    n_tested: int
    n_certified: int
    upper_bound: float | None
    n_accepted: float
    n_wrong: float
    value_total: float
    empirical_threshold: float | None
    thresholds: np.ndarray
    tested: np.ndarray
    certified: np.ndarray
    bounds: np.ndarray

    @property
    def delta(self) -> float:
        return 1.0 - self.confidence

    @property
    def any_certified(self) -> bool:
        return self.n_certified > 0

    def to_dict(self) -> dict:
        """The constraint record of the policy JSON."""
        return {
            "type": "certified_risk",
            "max_risk": self.max_risk,
            "confidence": self.confidence,
            "delta": self.delta,
            "method": self.method,
            "n_tested": self.n_tested,
            "n_certified": self.n_certified,
            "certified_upper_bound": self.upper_bound,
            "n_accepted": self.n_accepted,
            "n_wrong": self.n_wrong,
        }


def _check_share(value, name: str, *, open_low: bool) -> float:
    value = float(value)
    low_ok = value > 0 if open_low else value >= 0
    if not (math.isfinite(value) and low_ok and value < 1):
        bound = "(0, 1)" if open_low else "[0, 1)"
        raise ValueError(f"{name} must be in {bound}, got {value!r}")
    return value


def check_risk_weights(weight: np.ndarray, weights: str) -> None:
    """Refuse (ValueError, in words) weights the binomial certificate cannot count as independent items."""
    from .._model.predictions import _first_rows

    if weights not in WEIGHT_MEANINGS:
        raise ValueError(f"weights must say what the sample weights mean, one of {list(WEIGHT_MEANINGS)}, "
                         f"not {weights!r}")
    if weights == "unit":
        other = (weight > 0) & (weight != 1)
        if other.any():
            raise ValueError(
                "a certified error rate counts every item as one independent draw, but this split has weights "
                f"other than 1 (rows {_first_rows(other)}). If a weight of k stands for k independent items with "
                "the same prediction and truth (e.g. an aggregated log), say so: weights='copies' (command line "
                "--weights-are-copies, or the box on the Capacity & guarantees page). Duplicated rows, "
                "importance or survey weights cannot be certified this way."
            )
    else:
        fractional = weight != np.round(weight)
        if fractional.any():
            raise ValueError(
                f"weights that count copies must be whole numbers; rows {_first_rows(fractional)} are not"
            )


def _grid(accepted: np.ndarray, n_grid: int) -> np.ndarray:
    """Indices of at most ``n_grid`` candidates equally spaced in accepted weight (label-free)."""
    if accepted.size == 0 or accepted[-1] <= 0:
        return np.zeros(0, dtype=np.int64)
    targets = np.arange(1, n_grid + 1) * (accepted[-1] / n_grid)
    index = np.searchsorted(accepted, targets * (1 - 1e-12), side="left")
    return np.unique(np.minimum(index, accepted.size - 1))


def fit_certified(
    run: SortedRun,
    values: Values,
    *,
    max_risk: float,
    confidence: float = 0.9,
    method: str = "fixed_sequence",
    n_grid: int = 50,
    calibration=None,
    weights: str = "unit",
) -> CertifiedRisk:
    """Value-maximising threshold whose selective risk is certified <= ``max_risk``.

    Parameters
    ----------
    run : SortedRun
        Labelled tuning split, presorted (calibrated first if the policy is).
    values : UseCase or ValueMatrix
    max_risk : float in [0, 1)
        alpha: the largest acceptable share of wrong answers among accepted items.
    confidence : float in (0, 1)
        1 - delta: the probability that the guarantee holds.
    method : {"fixed_sequence", "bonferroni"}
        How the family-wise error is controlled (see the module docstring).
    n_grid : int
        Grid size of the fixed sequence.
    calibration : mapping, optional
        Recorded in the policy.
    weights : {"unit", "copies"}
        What the sample weights mean. "unit" (default): every item counts
        once, and a run with weights other than 0 and 1 is refused
        (ValueError). "copies": a whole-number weight k is k independent items.

    Examples
    --------
    >>> import valuecore as vc
    >>> p = vc.Predictions.from_top_label(["a"] * 60, [0.9] * 50 + [0.6] * 10, ["a"] * 55 + ["b"] * 5,
    ...                                  classes=["a", "b"])
    >>> r = fit_certified(vc.presort(p), vc.UseCase(1, 0, -1), max_risk=0.1, confidence=0.9)
    >>> r.policy.threshold, r.n_accepted, r.n_tested, round(r.upper_bound, 3)
    (0.9, 50.0, 2, 0.045)
    """
    alpha = _check_share(max_risk, "max_risk", open_low=False)
    confidence = _check_share(confidence, "confidence", open_low=True)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {list(METHODS)}")
    if int(n_grid) != n_grid or n_grid < 1:
        raise ValueError(f"n_grid must be a positive whole number, got {n_grid!r}")
    delta = 1.0 - confidence
    run.predictions.require_labels("certifying the risk")
    check_risk_weights(run.predictions.sample_weight, weights)
    accepted = run.cum_accepted[1:]
    wrong = run.cum_wrong[1:]
    # log of (1 - alpha)^m, the p-value of zero errors; 0 when m = 0 or alpha = 0
    log_zero_error_p = accepted * np.log1p(-alpha)

    def could_pass(level: float) -> np.ndarray:  # label-free; equality up to round-off passes
        return log_zero_error_p <= np.log(level) + 1e-12

    p_values = binomial_p_values(accepted, wrong, alpha)
    tested = np.zeros(accepted.shape, dtype=bool)
    certified = np.zeros(accepted.shape, dtype=bool)
    if method == "bonferroni":
        # label-free screen: could zero errors certify this candidate at level delta / (all candidates)?
        tested = could_pass(delta / max(accepted.size, 1))
        level = delta / max(int(tested.sum()), 1)
        certified = tested & (p_values <= level)
    else:
        level = delta
        grid = _grid(accepted, int(n_grid))
        grid = grid[could_pass(delta)[grid]]
        passed = p_values[grid] <= level
        stop = passed.size if passed.all() else int(np.argmin(passed))  # the first failure ends the sequence
        tested[grid[: stop + 1]] = True
        certified[grid[:stop]] = True
    bounds = np.full(accepted.shape, np.nan)
    if tested.any():
        bounds[tested] = upper_bounds(accepted[tested], wrong[tested], level)

    cum_gain = cumulative_gain(run, values)
    allowed = np.r_[True, certified]  # index 0: always abstain, allowed whatever happens
    best = int(np.argmax(np.where(allowed, cum_gain, -np.inf)))  # ties: the highest threshold
    empirical_ok = np.r_[True, (accepted > 0) & (wrong <= alpha * accepted)]
    naive = int(np.argmax(np.where(empirical_ok, cum_gain, -np.inf)))

    from .capacity import _abstain_value

    extra = {"calibration": calibration} if calibration else {}
    threshold = None if best == 0 else float(run.thresholds[best - 1])
    return CertifiedRisk(
        policy=Policy("threshold", threshold=threshold, **extra),
        max_risk=alpha,
        confidence=confidence,
        method=_METHOD_TEXT[method],
        n_tested=int(tested.sum()),
        n_certified=int(certified.sum()),
        upper_bound=None if best == 0 else float(bounds[best - 1]),
        n_accepted=float(run.cum_accepted[best]),
        n_wrong=float(run.cum_wrong[best]),
        value_total=float(cum_gain[best]) + _abstain_value(run, values),
        empirical_threshold=None if naive == 0 else float(run.thresholds[naive - 1]),
        thresholds=run.thresholds,
        tested=tested,
        certified=certified,
        bounds=bounds,
    )
