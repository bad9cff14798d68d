"""Value under prior shift: a new class mix, estimated without labels, and the policy re-tuned for it.

Under *prior shift* (label shift) the class mix moves while each class looks
the same: p(x | y) is fixed, pi(y) changes. A model calibrated under the
reference mix ``pi`` then has, under the new mix ``q``, the exact posteriors

    p'(y | x) = p(y | x) q(y) / pi(y) / sum_k p(k | x) q(k) / pi(k).

Two estimators of ``q`` from an unlabelled split:

* ``"em"``: the EM of Saerens, Latinne & Decaestecker (2002), the maximum
  likelihood estimate of the mixing weights given calibrated posteriors. Its
  fixed point is ``q = mean_i p'(. | x_i)``. Interval: Wald, by the delta
  method over both splits: the exact observed information of the mixture
  likelihood on the unlabelled items (a sandwich when the weights are
  fractional sampling weights), plus the noise of the reference mix, the
  class shares of the labelled split, through EM's derivative in it.
* ``"bbse"``: black-box shift estimation (Lipton, Wang & Smola 2018). With
  ``C[j, k] = P(predicted j, true k)`` on the labelled reference split and
  ``mu[j] = P(predicted j)`` on the unlabelled one, solve ``C w = mu``; then
  ``q(k) = w(k) pi(k)``. It needs hard predictions only, and is consistent
  even when the probabilities are not calibrated. Interval: percentile
  bootstrap over the items of both splits (seeded by ``rng``).
* ``"bbse_soft"``: the same solve with the probability vector in place of the
  one-hot prediction, ``C[j, k] = E[p(j | x) 1{y = k}]`` and ``mu[j] =
  E[p(j | x)]`` (any fixed function of ``x`` gives a consistent estimate under
  prior shift, calibrated or not). It keeps what the hard prediction throws
  away, so it is less noisy (docs/constraints.md: its largest error fell from
  0.030 to about 0.02 at five classes); the same bootstrap.

Why BBSE misses by more than EM: in the simulation the confusion matrix is
well conditioned (condition number 1.2 to 1.7), so the inversion is not the
cause. About half of its error comes from the labelled split (with 200,000
labelled items instead of 5,000 the hard estimate's largest error fell from
0.029 to 0.018 at five classes) and the rest from the hard predictions, which
carry less information about the mix than the probabilities EM uses. EM, the
maximum-likelihood estimate given calibrated probabilities, is the default.

Re-tuning: the labelled tuning split re-weighted to the new mix, item weight
``w_i = q(y_i) / pi(y_i)`` (a sampling weight, the package's convention),
then the ordinary ``fit_policy`` through the ordinary :class:`Pipeline` (``valuecore._pipeline.adapted``).
The label-free value on the unlabelled split uses the adjusted posteriors.

The guard (:func:`retuning_gain`): re-weighting shrinks the tuning split's
effective size, so an exact threshold re-tuned on it is noisier than the one
tuned as it was; where the best threshold barely moves with the mix (one
global threshold), that noise can cost more than the mix earns, even when the
mix is known exactly. So the re-tuned rule is adopted only when its gain over
the rule as tuned, estimated without labels on the unlabelled split (which
the tuning never saw) under the estimated mix, stays above ``z`` standard
errors of the label noise at every end of the class-mix interval; otherwise
the rule as tuned is kept, and the document says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .._engine.evaluate import PolicyResult, _result
from .._engine.fitting import Policy
from .._model.predictions import Predictions

__all__ = [
    "ADAPT_TUNINGS",
    "PRIOR_SHIFT_METHODS",
    "PriorEstimate",
    "RetuningGain",
    "adjust_predictions",
    "adjust_to_priors",
    "bbse_priors",
    "em_priors",
    "estimate_priors",
    "estimate_under_priors",
    "retuning_gain",
    "reweight_to_priors",
    "soft_bbse_priors",
]

PRIOR_SHIFT_METHODS = ("em", "bbse", "bbse_soft")
ADAPT_TUNINGS = ("reweight", "label_free")
_FITTED_KINDS = ("threshold", "class_thresholds")
_BOOTSTRAP_CELLS = 4_000_000  # items x resamples held in memory at once
GUARD_Z = 1.645  # one-sided 95%: the re-tuned rule must beat the old one by this many standard errors


@dataclass(frozen=True)
class PriorEstimate:
    """The class mix of an unlabelled split, estimated from a model's outputs.

    Attributes
    ----------
    classes : tuple of str
    priors : tuple of float
        Estimated share of each class, summing to 1.
    low, high : tuple of float
        The interval of each share, at ``confidence_level``.
    reference_priors : tuple of float
        The class mix of the labelled reference split (the mix the
        probabilities are calibrated for).
    method : {"em", "bbse", "bbse_soft"}
    iterations : int
        EM iterations (0 for BBSE, a direct solve).
    converged : bool
    n_items : float
        Weighted number of unlabelled items.
    confidence_level : float
    """

    classes: tuple
    priors: tuple
    low: tuple
    high: tuple
    reference_priors: tuple
    method: str
    iterations: int
    converged: bool
    n_items: float
    confidence_level: float

    def to_dict(self) -> dict:
        """Numbers by class name, for the policy JSON."""
        named = lambda values: {c: float(v) for c, v in zip(self.classes, values)}  # noqa: E731
        return {
            "method": self.method,
            "estimated_priors": named(self.priors),
            "interval": {c: [float(lo), float(hi)] for c, lo, hi in zip(self.classes, self.low, self.high)},
            "confidence_level": float(self.confidence_level),
            "reference_priors": named(self.reference_priors),
            "iterations": int(self.iterations),
            "converged": bool(self.converged),
            "n": float(self.n_items),
        }


# ------------------------------------------------------------------ core
def _weights(sample_weight, n: int) -> np.ndarray:
    return np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)


def _check_priors(priors, n_classes: int, what: str) -> np.ndarray:
    priors = np.asarray(priors, dtype=float)
    if priors.shape != (n_classes,) or not np.all(np.isfinite(priors)) or np.any(priors < 0):
        raise ValueError(f"{what} must be {n_classes} non-negative numbers, got {priors.tolist()}")
    if priors.sum() <= 0:
        raise ValueError(f"{what} must not all be zero")
    return priors / priors.sum()


def adjust_to_priors(proba, reference_priors, new_priors) -> np.ndarray:
    """Posteriors under ``new_priors`` of a model calibrated under ``reference_priors``, shape (n, C).

    ``p'(y|x) ∝ p(y|x) new(y) / reference(y)``: exact under prior shift. A
    class absent from the reference mix keeps probability 0.
    """
    proba = np.asarray(proba, dtype=float)
    reference = _check_priors(reference_priors, proba.shape[1], "reference_priors")
    return _adjusted(proba, reference, _check_priors(new_priors, proba.shape[1], "new_priors"))


def _adjusted(proba: np.ndarray, reference: np.ndarray, new: np.ndarray) -> np.ndarray:
    """:func:`adjust_to_priors` of checked, normalised mixes (EM's inner step, without the checks)."""
    ratio = np.divide(new, reference, out=np.zeros_like(new), where=reference > 0)
    scaled = proba * ratio
    totals = scaled.sum(axis=1, keepdims=True)
    # An item whose every possible class vanished under the new mix keeps its old posterior.
    return np.where(totals > 0, scaled / np.where(totals > 0, totals, 1.0), proba)


def em_priors(proba, reference_priors, sample_weight=None, *, tol: float = 1e-10,
              max_iter: int = 10_000) -> tuple[np.ndarray, int, bool]:
    """Saerens-Latinne-Decaestecker EM: (priors, EM steps taken, converged).

    Starts at ``reference_priors``; each EM step sets the priors to the weighted
    mean of the posteriors adjusted to the current priors; stops when a step
    moves no share by more than ``tol``, and returns that step. Between steps,
    SQUAREM (Varadhan & Roland 2008) jumps along two steps' direction where the
    jump keeps every share positive and raises the likelihood more than the
    steps did: with shares near 0 plain EM crawls (5,493 steps of 20,000 items
    and 100 classes), and the likelihood never falls, so the fixed point is
    EM's own.
    """
    proba = np.asarray(proba, dtype=float)
    weight = _weights(sample_weight, proba.shape[0])
    reference = _check_priors(reference_priors, proba.shape[1], "reference_priors")
    total = weight.sum()
    if total <= 0:
        raise ValueError("the unlabelled split has no items (total weight 0)")
    step = _EMStep(proba, reference, weight, total)
    priors, steps = reference.copy(), 0
    while steps < max_iter:
        first = step(priors)
        steps += 1
        if np.max(np.abs(first - priors)) <= tol or steps == max_iter:
            return first, steps, bool(np.max(np.abs(first - priors)) <= tol)
        second = step(first)
        steps += 1
        if np.max(np.abs(second - first)) <= tol:
            return second, steps, True
        priors = step.extrapolated(priors, first, second)
    return priors, steps, False


class _EMStep:
    """EM's step as two products with ``a = p / pi`` (n, C): the mean posterior is ``q * (w / (a q)) a / W``,
    ``O(nC)`` without the (n, C) temporaries; an item whose every class has share 0 keeps its posterior."""

    def __init__(self, proba: np.ndarray, reference: np.ndarray, weight: np.ndarray, total: float):
        self.scaled = proba * np.divide(1.0, reference, out=np.zeros_like(reference), where=reference > 0)
        self.proba, self.weight, self.total = proba, weight, total
        self._last: tuple[bytes, np.ndarray] = (b"", np.empty(0))

    def _densities(self, priors: np.ndarray) -> np.ndarray:
        """``a q`` per item; the last one kept, since the step after a likelihood check starts where it ended."""
        key = priors.tobytes()
        if self._last[0] != key:
            self._last = (key, self.scaled @ priors)
        return self._last[1]

    def __call__(self, priors: np.ndarray) -> np.ndarray:
        density = self._densities(priors)
        live = density > 0
        per_item = np.divide(self.weight, density, out=np.zeros_like(density), where=live)
        updated = priors * (per_item @ self.scaled)
        if not live.all():
            updated = updated + self.weight[~live] @ self.proba[~live]
        updated = updated / self.total
        return updated / updated.sum()

    def log_likelihood(self, priors: np.ndarray) -> float:
        density = self._densities(priors)
        live = density > 0
        return float(self.weight[live] @ np.log(density[live]))

    def extrapolated(self, start: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """SQUAREM's jump from ``start`` over two EM steps (its third steplength), or ``second``.

        The jump is taken only when it keeps the likelihood at least at the two steps'. A share EM is
        driving to 0 falls geometrically, and the jump would land on or below 0, where EM (which
        multiplies shares) could never bring it back: the jump takes a share at most to a thousandth of
        where the two steps left it.
        """
        moved, bent = first - start, second - 2 * first + start
        bend = np.linalg.norm(bent)
        if bend == 0:
            return second
        alpha = min(-np.linalg.norm(moved) / bend, -1.0)
        if alpha == -1.0:
            return second
        jump = np.maximum(start - 2 * alpha * moved + alpha**2 * bent, second * 1e-3)
        jump = jump / jump.sum()
        below = self.log_likelihood(second)
        return jump if self.log_likelihood(jump) >= below else second  # jump's products kept for its step


def _covariance_of_shares(shares_of_items: np.ndarray, weight: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Covariance of a weighted mean of per-item vectors: whole-number weights are counts, others sampling weights."""
    centred = shares_of_items - mean
    total = weight.sum()
    if np.all(weight == np.round(weight)):
        return centred.T @ (centred * weight[:, None]) / total**2
    return centred.T @ (centred * (weight**2)[:, None]) / total**2


def _em_covariance(proba, reference, priors, weight) -> np.ndarray:
    """Covariance of the EM shares from the unlabelled items (the observed information, exact Hessian)."""
    ratio = np.divide(1.0, reference, out=np.zeros_like(reference), where=reference > 0)
    scaled = proba * ratio  # a_ic = p(c|x_i) / pi(c); l_i(q) = log(a_i . q)
    density = scaled @ priors
    score = scaled / np.where(density > 0, density, 1.0)[:, None]
    free = score[:, :-1] - score[:, -1:]  # gradient in the first C-1 shares (the last is 1 - their sum)
    information = free.T @ (free * weight[:, None])  # minus the Hessian: exactly sum w_i d_i d_i^T
    inverse = np.linalg.pinv(information)
    if np.all(weight == np.round(weight)):  # whole numbers are counts: the information is the variance
        covariance_free = inverse
    else:  # fractional weights are sampling weights: sandwich
        covariance_free = inverse @ (free.T @ (free * (weight**2)[:, None])) @ inverse
    n_classes = len(priors)
    to_all = np.vstack([np.eye(n_classes - 1), -np.ones((1, n_classes - 1))])
    return to_all @ covariance_free @ to_all.T


def _em_reference_jacobian(proba, reference, priors, weight) -> np.ndarray:
    """d(EM shares) / d(reference shares), shape (C, C), at EM's fixed point ``priors``, in closed form.

    EM's fixed point is ``q = F(q, pi) = mean_i t_i`` with the adjusted posteriors ``t_ic = p_ic r_c /
    sum_k p_ik r_k`` and ``r = q / pi``. Differentiating, ``dF = (diag(q) - S) diag(1/r) dr`` with ``S =
    mean_i t_i t_i^T`` (weighted), and ``dr = diag(1/pi) dq - diag(q/pi^2) dpi``; solving ``dq = dF`` gives
    ``dq/dpi = diag(r) - diag(q) S^+ diag(r)`` (implicit function theorem). O(n C^2 + C^3), where
    differentiating EM numerically ran it 2C more times to 1e-14 (minutes at 100 classes); the two agree to
    1e-6 and the standard errors to 1e-8 (tests/core/test_prior_shift.py). A class whose share EM drove to
    0 has a null row and column of ``S``: the pseudo-inverse leaves it at 0, as its share stays there.
    """
    posteriors = adjust_to_priors(proba, reference, priors)
    second_moment = posteriors.T @ (posteriors * weight[:, None]) / weight.sum()
    ratio = np.divide(priors, reference, out=np.zeros_like(priors), where=reference > 0)
    return np.diag(ratio) - priors[:, None] * (np.linalg.pinv(second_moment, hermitian=True) * ratio[None, :])


def _em_interval(proba, weight, reference, reference_items, priors, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wald interval by the delta method over both splits: the unlabelled items and the labelled reference mix."""
    covariance = _em_covariance(proba, reference, priors, weight)
    labels, reference_weight = reference_items
    onehot = np.eye(len(reference))[labels]
    jacobian = _em_reference_jacobian(proba, reference, priors, weight)
    covariance = covariance + jacobian @ _covariance_of_shares(onehot, reference_weight, reference) @ jacobian.T
    error = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    return np.clip(priors - z * error, 0.0, 1.0), np.clip(priors + z * error, 0.0, 1.0)


def _confusion_shares(y_pred, y_true, weight, n_classes: int) -> np.ndarray:
    """C[j, k] = weighted share of (predicted j, true k)."""
    cells = np.bincount(y_pred * n_classes + y_true, weights=weight, minlength=n_classes * n_classes)
    return cells.reshape(n_classes, n_classes) / weight.sum()


def bbse_priors(reference_pred, reference_true, unlabelled_pred, n_classes: int, *,
                reference_weight=None, unlabelled_weight=None) -> np.ndarray:
    """Black-box shift estimation: solve ``C w = mu``; priors ``w * pi``, clipped at 0 and renormalised.

    Raises ValueError when the confusion matrix is singular (a class never
    predicted, or two classes the model cannot tell apart).
    """
    reference_pred = np.asarray(reference_pred, dtype=np.int64)
    reference_true = np.asarray(reference_true, dtype=np.int64)
    unlabelled_pred = np.asarray(unlabelled_pred, dtype=np.int64)
    confusion = _confusion_shares(reference_pred, reference_true,
                                  _weights(reference_weight, len(reference_pred)), n_classes)
    weight = _weights(unlabelled_weight, len(unlabelled_pred))
    predicted = np.bincount(unlabelled_pred, weights=weight, minlength=n_classes) / weight.sum()
    return _bbse_solve(confusion, predicted)


def _bbse_solve(confusion: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    reference = confusion.sum(axis=0)
    if np.linalg.matrix_rank(confusion) < confusion.shape[0]:
        raise ValueError("black-box shift estimation needs an invertible confusion matrix on the labelled "
                         "split: every class must be predicted, and the classes told apart")
    importance = np.linalg.solve(confusion, predicted)
    priors = np.clip(importance * reference, 0.0, None)
    return priors / priors.sum() if priors.sum() > 0 else reference


def _bbse_scores(predictions: Predictions, soft: bool) -> np.ndarray:
    """(n, C) per-item scores BBSE averages: the one-hot prediction, or the probability vector."""
    if soft:
        return predictions.normalised_proba()
    return np.eye(predictions.n_classes)[predictions.y_pred]


def soft_bbse_priors(reference_proba, reference_true, unlabelled_proba, *, reference_weight=None,
                     unlabelled_weight=None) -> np.ndarray:
    """Black-box shift estimation on probabilities: ``C[j, k] = mean p(j|x) 1{y=k}``, ``mu = mean p(.|x)``.

    Raises ValueError when that matrix is singular.
    """
    reference_proba = np.asarray(reference_proba, dtype=float)
    unlabelled_proba = np.asarray(unlabelled_proba, dtype=float)
    n_classes = reference_proba.shape[1]
    reference_true = np.asarray(reference_true, dtype=np.int64)
    weight = _weights(reference_weight, len(reference_true))
    confusion = (reference_proba * weight[:, None]).T @ np.eye(n_classes)[reference_true] / weight.sum()
    unlabelled = _weights(unlabelled_weight, len(unlabelled_proba))
    return _bbse_solve(confusion, unlabelled @ unlabelled_proba / unlabelled.sum())


def _bbse_bootstrap(reference: Predictions, unlabelled: Predictions, n_resamples: int, rng,
                    soft: bool = False) -> np.ndarray:
    """(n_resamples, C) BBSE priors, items of both splits resampled with replacement."""
    n_classes = reference.n_classes
    out = np.empty((n_resamples, n_classes))
    reference_scores = _bbse_scores(reference, soft) * reference.sample_weight[:, None]
    unlabelled_scores = _bbse_scores(unlabelled, soft) * unlabelled.sample_weight[:, None]
    batch = max(1, _BOOTSTRAP_CELLS // max(reference.n, unlabelled.n, 1))
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        offsets = np.arange(size)[:, None]
        rows = rng.integers(0, reference.n, size=(size, reference.n))
        cells = (offsets * n_classes + reference.y_true[rows]).ravel()
        confusion = np.stack([np.bincount(cells, weights=reference_scores[rows, j].ravel(),
                                          minlength=size * n_classes).reshape(size, n_classes)
                              for j in range(n_classes)], axis=1)  # (size, predicted j, true k)
        rows = rng.integers(0, unlabelled.n, size=(size, unlabelled.n))
        predicted = np.stack([unlabelled_scores[rows, j].sum(axis=1) for j in range(n_classes)], axis=1)
        for k in range(size):  # a C x C solve per resample; C is a handful
            try:
                out[start + k] = _bbse_solve(confusion[k] / confusion[k].sum(), predicted[k] / predicted[k].sum())
            except ValueError:
                out[start + k] = np.nan
    return out


def _reference_priors(reference: Predictions) -> np.ndarray:
    reference.require_labels("estimating a class mix (the labelled reference split)")
    counts = np.bincount(reference.y_true, weights=reference.sample_weight, minlength=reference.n_classes)
    if not counts.sum() > 0:
        raise ValueError("every weight of the labelled split the class mix is measured against is zero, so its "
                         "class mix is unknown: tune on a split whose items weigh something")
    return counts / counts.sum()


def adjust_predictions(predictions: Predictions, estimate: PriorEstimate) -> Predictions:
    """The same served decisions (``y_pred``, ``confidence``), with ``proba`` adjusted to the estimated mix.

    Label-free tools that read ``proba`` as the chance of each true class
    (``fit_policy(..., estimate=True)``, the expected gains) then reason under
    the new mix, while thresholds still apply to the confidence as served.
    Pass predictions already recalibrated like those the estimate was made on.
    """
    predictions.require_proba("adjusting probabilities to a new class mix")
    adjusted = adjust_to_priors(predictions.normalised_proba(), estimate.reference_priors, estimate.priors)
    return replace(predictions, proba=adjusted, logits=None)


def estimate_priors(unlabelled: Predictions, reference: Predictions, method: str = "em", *,
                    confidence_level: float = 0.95, n_resamples: int = 500, rng=None,
                    tol: float = 1e-10, max_iter: int = 10_000) -> PriorEstimate:
    """Estimate the class mix of ``unlabelled`` from a model's calibrated outputs.

    Parameters
    ----------
    unlabelled : Predictions
        The split whose mix is wanted (its labels, if any, are not read).
    reference : Predictions
        A labelled split of the reference mix, the one the probabilities are
        calibrated on (for BBSE: the confusion matrix).
    method : {"em", "bbse", "bbse_soft"}
        ``"em"`` (the default, the most accurate with calibrated
        probabilities), ``"bbse"`` (hard predictions), ``"bbse_soft"``
        (BBSE on the probability vectors).
    confidence_level : float
    n_resamples : int
        Bootstrap resamples (BBSE only).
    rng : numpy.random.Generator, optional
        For the BBSE bootstrap.

    Raises
    ------
    ValueError
        Unknown method, no probabilities (EM), different classes, an
        unlabelled reference, a singular confusion matrix (BBSE).
    """
    from scipy.stats import norm

    if method not in PRIOR_SHIFT_METHODS:
        raise ValueError(f"unknown prior-shift method {method!r}; choose one of {list(PRIOR_SHIFT_METHODS)}")
    if tuple(unlabelled.classes) != tuple(reference.classes):
        raise ValueError(f"the two splits have different classes: {list(reference.classes)} and "
                         f"{list(unlabelled.classes)}")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level}")
    reference_priors = _reference_priors(reference)
    if unlabelled.total_weight <= 0:
        raise ValueError("the unlabelled split has no items (total weight 0)")
    tail = (1 - confidence_level) / 2
    if method == "em":
        unlabelled.require_proba("estimating a class mix by EM")
        proba = unlabelled.normalised_proba()
        priors, iterations, converged = em_priors(proba, reference_priors, unlabelled.sample_weight,
                                                  tol=tol, max_iter=max_iter)
        low, high = _em_interval(proba, unlabelled.sample_weight, reference_priors,
                                 (reference.y_true, reference.sample_weight), priors, norm.ppf(1 - tail))
    else:
        rng = np.random.default_rng(rng)
        soft = method == "bbse_soft"
        if soft:
            for split in (reference, unlabelled):
                split.require_proba("estimating a class mix by soft BBSE")
            priors = soft_bbse_priors(reference.normalised_proba(), reference.y_true, unlabelled.normalised_proba(),
                                      reference_weight=reference.sample_weight,
                                      unlabelled_weight=unlabelled.sample_weight)
        else:
            priors = bbse_priors(reference.y_pred, reference.y_true, unlabelled.y_pred, reference.n_classes,
                                 reference_weight=reference.sample_weight, unlabelled_weight=unlabelled.sample_weight)
        draws = _bbse_bootstrap(reference, unlabelled, int(n_resamples), rng, soft)
        draws = draws[np.all(np.isfinite(draws), axis=1)]
        if len(draws) == 0:
            low = high = priors
        else:
            low, high = np.quantile(draws, tail, axis=0), np.quantile(draws, 1 - tail, axis=0)
        iterations, converged = 0, True
    as_tuple = lambda values: tuple(float(v) for v in values)  # noqa: E731
    return PriorEstimate(tuple(unlabelled.classes), as_tuple(priors), as_tuple(low), as_tuple(high),
                         as_tuple(reference_priors), method, int(iterations), bool(converged),
                         float(unlabelled.total_weight), float(confidence_level))


def reweight_to_priors(reference: Predictions, priors) -> Predictions:
    """The labelled split re-weighted to the class mix ``priors``: weight times ``q(y) / pi(y)``.

    Sums to the same total weight; a class absent from the split cannot be
    represented (ValueError when ``priors`` gives it a share).
    """
    reference_priors = _reference_priors(reference)
    priors = _check_priors(priors, reference.n_classes, "priors")
    missing = [c for c, p, r in zip(reference.classes, priors, reference_priors) if p > 0 and r == 0]
    if missing:
        raise ValueError(f"the labelled split has no item of class(es) {missing}, so it cannot be re-weighted "
                         "to a mix that contains them")
    ratio = np.divide(priors, reference_priors, out=np.zeros_like(priors), where=reference_priors > 0)
    return replace(reference, sample_weight=reference.sample_weight * ratio[reference.y_true])


@dataclass(frozen=True)
class RetuningGain:
    """What re-tuning for a new class mix earns over the rule as tuned, estimated without labels.

    Attributes
    ----------
    gain_per_item : float
        Value per item of the re-tuned rule minus the rule as tuned, on the
        unlabelled split, its posteriors adjusted to the estimated mix.
    worst_gain_per_item : float
        The smallest such gain with one class's share moved to either end of
        its interval (the others rescaled), or at the estimate.
    standard_error : float
        Standard error per item of the realised gain around its estimate: the
        label noise of the items the two rules treat differently.
    z : float
    adopted : bool
        ``worst_gain_per_item > z * standard_error``: the re-tuned rule is used.
    n_differ : float
        Weighted number of items the two rules treat differently.
    """

    gain_per_item: float
    worst_gain_per_item: float
    standard_error: float
    z: float
    adopted: bool
    n_differ: float

    def to_dict(self) -> dict:
        return {"estimated_gain_per_item": self.gain_per_item, "worst_gain_per_item": self.worst_gain_per_item,
                "standard_error": self.standard_error, "z": self.z, "adopted": self.adopted,
                "n_differ": self.n_differ}


def _gains_at_interval_ends(proba, reference, estimate: PriorEstimate, difference, weight, total) -> np.ndarray:
    """The gain per item with each class's share at either end of its interval, the others rescaled.

    All mixes at once: moving share ``k`` to ``e`` makes the mix ``s q + d e_k`` (``s = (1 - e) / (1 -
    q_k)``, ``d = e - s q_k``), so each item's adjusted posterior weighs its ``a = p / pi`` by ``s (a q) + d
    a_k``; O(items x classes) where one mix at a time cost O(items x classes^2).
    """
    priors = np.asarray(estimate.priors)
    scaled = proba * np.divide(1.0, reference, out=np.zeros_like(reference), where=reference > 0)
    density = scaled @ priors
    weighed = (scaled * difference) @ priors  # sum_c a_c q_c (gain if the truth is c)
    fallback = np.sum(proba * difference, axis=1)  # an item whose every class vanished keeps its posterior
    gains = []
    rest = 1.0 - priors
    for end in (np.asarray(estimate.low), np.asarray(estimate.high)):
        movable = (rest > 0) & (end < 1)
        shrink = np.divide(1.0 - end, rest, out=np.ones_like(rest), where=movable)
        shift = end - shrink * priors
        below = shrink * density[:, None] + shift * scaled
        above = shrink * weighed[:, None] + shift * scaled * difference
        mean = np.where(below > 0, above / np.where(below > 0, below, 1.0), fallback[:, None])
        gains.append((weight @ mean / total)[movable])
    return np.concatenate(gains)


def retuning_gain(retuned: Policy, as_tuned: Policy, unlabelled: Predictions, values, estimate: PriorEstimate, *,
                  z: float = GUARD_Z) -> RetuningGain:
    """Whether ``retuned`` earns more than ``as_tuned`` on ``unlabelled`` under the mix ``estimate``.

    Only the items the two rules treat differently count. Given the items,
    their realised gain has the mean ``d_i = sum_k p'(k|x_i) (M[k, a_i] -
    M[k, b_i])`` and the variance ``sum_k p'(k|x_i) (M[k, a_i] - M[k, b_i])^2 -
    d_i^2`` (``M`` the value matrix, ``a``, ``b`` the two rules' actions,
    ``p'`` the posteriors adjusted to the mix; whole-number weights are
    counts, other weights sampling weights). The mix's own uncertainty is
    taken at the ends of its interval (the worst gain). Both rules must share
    their recalibration (they are tuned on the same split).
    """
    matrix = values.for_classes(unlabelled.classes)
    new_actions, old_actions = retuned.decide(unlabelled, matrix), as_tuned.decide(unlabelled, matrix)
    differ = np.flatnonzero(new_actions != old_actions)
    total = unlabelled.total_weight
    if len(differ) == 0 or total <= 0:
        return RetuningGain(0.0, 0.0, 0.0, float(z), False, 0.0)
    # (items, true class): the realised gain of each differing item for each true class
    difference = (matrix.values[:, new_actions[differ]] - matrix.values[:, old_actions[differ]]).T
    weight = unlabelled.sample_weight[differ]
    proba = retuned.calibrate(unlabelled.subset(differ)).normalised_proba()
    truth = adjust_to_priors(proba, estimate.reference_priors, estimate.priors)
    mean = np.sum(truth * difference, axis=1)
    gain = float(weight @ mean / total)
    spread = np.clip(np.sum(truth * difference**2, axis=1) - mean**2, 0.0, None)
    counts = np.all(weight == np.round(weight))
    error = float(np.sqrt(float((weight if counts else weight**2) @ spread) / total**2))
    reference = _check_priors(estimate.reference_priors, len(estimate.priors), "reference_priors")
    worst = min(gain, float(np.min(_gains_at_interval_ends(proba, reference, estimate, difference, weight, total),
                                   initial=gain)))
    return RetuningGain(gain, worst, error, float(z), bool(worst > z * error), float(weight.sum()))


def estimate_under_priors(policy: Policy, predictions: Predictions, values, estimate: PriorEstimate) -> PolicyResult:
    """Label-free value of ``policy`` on ``predictions`` when its class mix is ``estimate.priors``.

    Decisions are the policy's, on the model's (calibrated) outputs as served;
    the chance of each true class is the calibrated posterior adjusted to the
    new mix. With the reference mix this is :func:`~valuecore.estimate`.
    """
    if policy.kind == "two_tier":
        raise ValueError("a two_tier policy's value includes its assisted tier: it is evaluated on labels only")
    matrix = values.for_classes(predictions.classes)
    actions = policy.decide(predictions, matrix)
    truth = adjust_predictions(policy.calibrate(predictions), estimate).proba
    weighted_truth = truth * predictions.sample_weight[:, None]
    n_classes = predictions.n_classes
    confusion = weighted_truth.T @ np.eye(n_classes + 1)[actions]
    return _result(predictions.classes, confusion, matrix.values, weighted_truth.sum(axis=0), estimated=True,
                   n_items=predictions.total_weight)
