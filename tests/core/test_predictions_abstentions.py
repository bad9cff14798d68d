"""Items the model itself declined (a language model's "I don't know") are always hand-offs.

Checked against brute force in exact fractions: every rule, at every candidate threshold, values a declined
item as a hand-off, counts it in N, and never offers its confidence as a threshold.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import valuecore as vc
from valuecore._model.predictions import MODEL_ABSTAINED


def _run(rng, n: int, n_classes: int = 3):
    """A small top-label run with repeated confidences, some items declined (both right and wrong top choices)."""
    classes = [str(k) for k in range(n_classes)]
    y_true = rng.integers(0, n_classes, n)
    y_pred = np.where(rng.random(n) < 0.6, y_true, rng.integers(0, n_classes, n))
    confidence = rng.choice([0.0, 0.25, 0.5, 0.5, 0.75, 1.0], n)
    declined = rng.random(n) < 0.3
    predictions = vc.Predictions.from_top_label(y_pred.astype(str), confidence, y_true.astype(str), classes=classes,
                                                model_abstained=declined)
    return predictions, y_true, y_pred, confidence, declined


def _brute_value(use_case, y_true, y_pred, accepted, declined) -> Fraction:
    """Total value in fractions: a declined item is a hand-off whatever the rule says."""
    total = Fraction(0)
    for t, p, a, d in zip(y_true, y_pred, accepted, declined):
        if d or not a:
            total += Fraction(use_case.v_abstain)
        else:
            total += Fraction(use_case.v_correct if t == p else use_case.v_wrong)
    return total


USE_CASES = [vc.UseCase(1, 0, -10), vc.UseCase(1, 0, -1), vc.UseCase(3, 1, -2)]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("use_case", USE_CASES, ids=str)
def test_threshold_curve_and_tuning_match_brute_force(seed, use_case):
    predictions, y_true, y_pred, confidence, declined = _run(np.random.default_rng(seed), 14)
    run = vc.presort(predictions)
    answered = sorted(set(confidence[~declined].tolist()), reverse=True)
    assert run.thresholds.tolist() == answered  # the declined confidence is no candidate
    assert run.total_weight == len(y_true)  # declined items count in N
    curve = vc.threshold_curve(run, use_case)
    expected = [_brute_value(use_case, y_true, y_pred, np.zeros(len(y_true), bool), declined)]
    expected += [_brute_value(use_case, y_true, y_pred, confidence >= t, declined) for t in answered]
    assert [Fraction(v) for v in curve.value_total] == expected
    best = max(expected)
    policy = vc.fit_policy("threshold", run, use_case)
    result = vc.evaluate(policy, predictions, use_case)
    assert Fraction(result.value_total) == best
    accepted = np.zeros(len(y_true), bool) if policy.threshold is None else confidence >= policy.threshold
    assert result.n_abstain == int((declined | ~accepted).sum())
    assert vc.item_values(policy, predictions, use_case).sum() == float(best)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("use_case", USE_CASES, ids=str)
def test_per_class_thresholds_match_brute_force(seed, use_case):
    predictions, y_true, y_pred, confidence, declined = _run(np.random.default_rng(100 + seed), 12)
    run = vc.presort(predictions)
    per_class = []
    for k in range(3):
        mine = confidence[(y_pred == k) & ~declined]
        per_class.append([None, *sorted(set(mine.tolist()), reverse=True)])
    best = max(
        _brute_value(use_case, y_true, y_pred,
                     np.array([t is not None and c >= t for c, t in zip(confidence, [combo[p] for p in y_pred])]),
                     declined)
        for combo in itertools.product(*per_class)
    )
    policy = vc.fit_policy("class_thresholds", run, use_case)
    assert all(t is None or t >= 0 for _, t in policy.class_thresholds)
    assert Fraction(vc.evaluate(policy, predictions, use_case).value_total) == best


@pytest.mark.parametrize("seed", range(6))
def test_accept_all_hands_over_what_the_model_declined(seed):
    predictions, y_true, y_pred, confidence, declined = _run(np.random.default_rng(200 + seed), 15)
    use_case = vc.UseCase(1, 0, -10)
    accept_all = vc.Policy("accept_all")
    result = vc.evaluate(accept_all, predictions, use_case)
    expected = _brute_value(use_case, y_true, y_pred, np.ones(len(y_true), bool), declined)
    assert Fraction(result.value_total) == expected
    assert result.n_abstain == int(declined.sum())
    assert (accept_all.decide(predictions) == np.where(declined, 3, y_pred)).all()
    # The VOC baseline (no rejection by the rule) and the calibrated rule leave them out too.
    run = vc.presort(predictions)
    omega = 10.0
    expected_dimensionless = float((expected - 0) / len(y_true))
    assert vc.voc_curve(run, "accept_all").value_at(omega) == pytest.approx(expected_dimensionless, abs=1e-12)
    calibrated = vc.fit_policy("calibrated_threshold", None, use_case)
    accepted = confidence >= calibrated.threshold
    assert Fraction(vc.evaluate(calibrated, predictions, use_case).value_total) == _brute_value(
        use_case, y_true, y_pred, accepted, declined)


def test_mask_kept_by_subset_and_recalibration():
    predictions, _, _, confidence, declined = _run(np.random.default_rng(7), 20)
    assert (predictions.model_abstained == declined).all()
    assert (predictions.confidence[declined] == MODEL_ABSTAINED).all()
    half = predictions.subset(np.arange(10))
    assert (half.model_abstained == declined[:10]).all()
    recalibrated = predictions.with_confidence(np.full(20, 0.9))
    assert (recalibrated.model_abstained == declined).all()


def test_a_run_without_declines_is_unchanged():
    rng = np.random.default_rng(3)
    y_true = rng.integers(0, 2, 30)
    confidence = rng.choice([0.5, 0.7, 0.9], 30)
    plain = vc.Predictions.from_top_label(y_true.astype(str), confidence, y_true.astype(str), classes=["0", "1"])
    masked = vc.Predictions.from_top_label(y_true.astype(str), confidence, y_true.astype(str), classes=["0", "1"],
                                           model_abstained=np.zeros(30, bool))
    assert not masked.has_model_abstentions
    assert vc.presort(plain).thresholds.tolist() == vc.presort(masked).thresholds.tolist()


def test_isotonic_recalibration_is_fitted_on_the_answers_and_keeps_the_declines():
    from valuecore._model.recalibration import fit_calibration

    predictions, _, _, _, declined = _run(np.random.default_rng(11), 40)
    fitted = fit_calibration(predictions, "isotonic")
    answers = predictions.subset(~declined)
    plain = vc.Predictions.from_top_label(np.asarray(predictions.classes)[answers.y_pred], answers.confidence,
                                          np.asarray(predictions.classes)[answers.y_true], classes=predictions.classes)
    assert fitted.to_dict() == fit_calibration(plain, "isotonic").to_dict()
    assert min(fitted.to_dict()["x"]) >= 0  # no declined item's MODEL_ABSTAINED among the fitted points
    assert (fitted.apply(predictions).model_abstained == declined).all()


def test_calibration_diagnostics_and_histogram_describe_the_answers_only():
    from valuecore._stats.calibration_metrics import brier_score, expected_calibration_error

    predictions, _, _, _, declined = _run(np.random.default_rng(12), 40)
    answers = predictions.subset(~declined)
    plain = vc.Predictions.from_top_label(np.asarray(predictions.classes)[answers.y_pred], answers.confidence,
                                          np.asarray(predictions.classes)[answers.y_true], classes=predictions.classes)
    assert expected_calibration_error(predictions) == expected_calibration_error(plain)
    assert brier_score(predictions) == brier_score(plain)
    histogram = vc.curves.confidence_histogram(predictions, bins=4)
    assert histogram["count"].sum() == (~declined).sum()
    assert histogram["share"].sum() == pytest.approx((~declined).mean())
