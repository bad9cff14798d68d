"""Two-tier automation: act, act after a person confirms, or hand off.

Seed 000's Appendix A notes that confidence can buy more than act/abstain: a
fairly confident prediction can pre-fill a form that a person confirms. That
is a third action with its own values: a *confirmed correct* answer, a
*confirmed wrong* answer (the person may or may not catch it), and the cost of
the person's time. Three tiers by confidence::

    confidence >= threshold                    act automatically
    assist_threshold <= confidence < threshold act after a person confirms
    confidence < assist_threshold              hand off entirely

Tuning is exact and O(n_groups) after the sort: with ``A`` and ``S`` the
cumulative gains (over handing off) of acting and of assisting along the
confidence order, the value of the pair of group indices ``i <= j`` is
``A[i] + S[j] - S[i]``; for each ``i`` the best ``j >= i`` is a suffix
maximum. Ties go to the highest ``threshold``, then the highest
``assist_threshold`` (fewest automated calls, then fewest confirmations).
When confirming is worth no more than handing off, no item is assisted and
the answer is the one-threshold policy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .policy import Policy
from .._model.predictions import Predictions
from .sorting import SortedRun, cumulative_gain, group_cumulative
from .._model.tier_values import AssistedValues
from .._model.values import UseCase, ValueMatrix, Values, _check_magnitude

__all__ = ["AssistedValues", "TwoTierResult", "fit_two_tier", "evaluate_two_tier", "two_tier_item_values"]


def _assisted_item_values(predictions: Predictions, assisted: AssistedValues) -> np.ndarray:
    """Unweighted value of assisting each item, shape (n,)."""
    return np.where(
        predictions.correct, assisted.v_confirmed_correct, assisted.v_confirmed_wrong
    ) - assisted.cost


def _handoff_values(predictions: Predictions, matrix: ValueMatrix) -> np.ndarray:
    return matrix.values[predictions.y_true, -1]


def fit_two_tier(run: SortedRun, values: Values, assisted, *, calibration=None) -> Policy:
    """Tune both thresholds of a ``two_tier`` policy exactly on a labelled split.

    Parameters
    ----------
    run : SortedRun
        Labelled tuning split, presorted (calibrated first if the policy is).
    values : UseCase or ValueMatrix
        Values of acting automatically and of handing off.
    assisted : AssistedValues or mapping
    calibration : mapping, optional

    Examples
    --------
    >>> import valuecore as vc
    >>> p = vc.Predictions.from_top_label(["a"] * 4, [0.9, 0.8, 0.7, 0.6], ["a", "a", "b", "a"], classes=["a", "b"])
    >>> policy = fit_two_tier(vc.presort(p), vc.UseCase(1, 0, -4), AssistedValues(0.9, 0.0, 0.1))
    >>> policy.threshold, policy.assist_threshold
    (0.8, 0.6)
    """
    assisted = AssistedValues.from_dict(assisted)
    # The same bound as the use case's: the assisted gains below must stay finite.
    _check_magnitude(np.array([assisted.v_confirmed_correct, assisted.v_confirmed_wrong, assisted.cost]),
                     "the values of the assisted tier")
    predictions = run.predictions
    predictions.require_labels("tuning a two-tier policy")
    extra = {"calibration": calibration} if calibration else {}
    if predictions.n == 0:
        return Policy("two_tier", threshold=None, assist_threshold=None, assisted=assisted.to_dict(), **extra)
    act_cum = cumulative_gain(run, values)
    use_case = values.use_case
    if use_case is not None:
        # Assisting is a use case of its own against the same hand-off: O(n_groups) from cached counts.
        assisting = UseCase(
            assisted.v_confirmed_correct - assisted.cost, use_case.v_abstain, assisted.v_confirmed_wrong - assisted.cost
        )
        assist_cum = cumulative_gain(run, assisting)
    else:
        matrix = values.for_classes(predictions.classes)
        assist_gains = _assisted_item_values(predictions, assisted) - _handoff_values(predictions, matrix)
        assist_cum = group_cumulative(run, assist_gains * predictions.sample_weight)
    i, j, _ = best_tier_pair(act_cum, assist_cum)
    threshold = None if i == 0 else float(run.thresholds[i - 1])
    assist_threshold = None if j == 0 else float(run.thresholds[j - 1])
    return Policy(
        "two_tier", threshold=threshold, assist_threshold=assist_threshold, assisted=assisted.to_dict(), **extra
    )


def best_tier_pair(act_cum: np.ndarray, middle_cum: np.ndarray) -> tuple[int, int, float]:
    """Best group indices ``i <= j`` for act / middle tier / hand off, and their gain.

    ``act_cum`` and ``middle_cum`` are cumulative gains over handing off (shape
    (n_groups + 1,)); the gain of the pair is ``act_cum[i] + middle_cum[j] -
    middle_cum[i]``. Ties go to the smallest ``i`` (highest automatic
    threshold), then the smallest ``j``. O(n_groups).
    """
    # best j >= i of middle_cum[j], ties to the smallest j: scan from the end,
    # an equal value at a smaller index replaces the record.
    reverse = middle_cum[::-1]
    record = np.maximum.accumulate(reverse)
    last_hit = np.maximum.accumulate(np.where(reverse == record, np.arange(reverse.size), 0))
    suffix_best = record[::-1]
    suffix_index = (reverse.size - 1 - last_hit)[::-1]
    total = act_cum - middle_cum + suffix_best
    i = int(np.argmax(total))  # ties: the highest automatic threshold
    return i, int(suffix_index[i]), float(total[i])


def two_tier_item_values(policy: Policy, predictions: Predictions, values: Values) -> np.ndarray:
    """Per-item realised value of a two-tier policy, shape (n,), unweighted."""
    if policy.kind != "two_tier":
        raise ValueError(f"not a two-tier policy: {policy.kind!r}")
    predictions.require_labels("the realised value")
    assisted = AssistedValues.from_dict(policy.assisted)
    tiers = policy.tiers(predictions)
    matrix = values.for_classes(predictions.classes)
    calibrated = policy.calibrate(predictions)
    acted = matrix.values[predictions.y_true, calibrated.y_pred]
    return np.select(
        [tiers == 0, tiers == 1],
        [acted, _assisted_item_values(calibrated, assisted)],
        default=_handoff_values(predictions, matrix),
    )


@dataclass(frozen=True, eq=False)
class TwoTierResult:
    """Realised value and volumes of a two-tier policy (weighted counts).

    Attributes
    ----------
    n_items, value_total, value_per_item : float
    n_auto, n_assisted, n_handoff : float
        Items in each tier.
    n_auto_wrong, n_assisted_wrong : float
        Wrong answers acted on automatically / put to a person.
    """

    n_items: float
    value_total: float
    value_per_item: float
    n_auto: float
    n_assisted: float
    n_handoff: float
    n_auto_wrong: float
    n_assisted_wrong: float

    def to_dict(self) -> dict:
        return {
            "n_auto": self.n_auto,
            "n_assisted": self.n_assisted,
            "n_handoff": self.n_handoff,
            "n_auto_wrong": self.n_auto_wrong,
            "n_assisted_wrong": self.n_assisted_wrong,
        }


def evaluate_two_tier(policy: Policy, predictions: Predictions, values: Values) -> TwoTierResult:
    """Realised value of a two-tier policy on a labelled split. O(n).

    Examples
    --------
    >>> import valuecore as vc
    >>> p = vc.Predictions.from_top_label(["a"] * 4, [0.9, 0.8, 0.7, 0.6], ["a", "a", "b", "a"], classes=["a", "b"])
    >>> policy = vc.Policy("two_tier", threshold=0.8, assist_threshold=0.6,
    ...                    assisted={"v_confirmed_correct": 0.9, "v_confirmed_wrong": 0.0, "cost": 0.1})
    >>> r = evaluate_two_tier(policy, p, vc.UseCase(1, 0, -4))
    >>> round(r.value_total, 6), r.n_auto, r.n_assisted, r.n_handoff
    (2.7, 2.0, 2.0, 0.0)
    """
    per_item = two_tier_item_values(policy, predictions, values)
    weight = predictions.sample_weight
    tiers = policy.tiers(predictions)
    wrong = ~policy.calibrate(predictions).correct
    n_items = predictions.total_weight
    total = float(per_item @ weight)
    return TwoTierResult(
        n_items=n_items,
        value_total=total,
        value_per_item=total / n_items if n_items > 0 else 0.0,
        n_auto=float(weight[tiers == 0].sum()),
        n_assisted=float(weight[tiers == 1].sum()),
        n_handoff=float(weight[tiers == 2].sum()),
        n_auto_wrong=float(weight[(tiers == 0) & wrong].sum()),
        n_assisted_wrong=float(weight[(tiers == 1) & wrong].sum()),
    )
