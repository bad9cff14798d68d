"""Tests of valuecore.calibration: the recalibration maps (_model.recalibration) and the diagnostics
(_stats.calibration_metrics)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import softmax

from valuecore.calibration import (
    Calibrator,
    brier_score,
    calibration_summary,
    expected_calibration_error,
    fit_calibration,
    maximum_calibration_error,
    negative_log_likelihood,
    reliability_diagram,
)
from valuecore._model.predictions import Predictions

SETTINGS = settings(max_examples=60, deadline=None)


# --------------------------------------------------------------------------
# synthetic data
# --------------------------------------------------------------------------
def softmax_model(n, n_classes, temperature, seed, *, scale=2.0, with_logits=True, weights=False):
    """Labels drawn from softmax(z); the model reports softmax(z * temperature).

    The model is overconfident for temperature > 1 and dividing its logits
    by ``temperature`` recovers the true distribution exactly.
    """
    rng = np.random.default_rng(seed)
    true_logits = rng.normal(0.0, scale, size=(n, n_classes))
    true_p = softmax(true_logits, axis=1)
    y = (rng.random(n)[:, None] > np.cumsum(true_p, axis=1)).sum(axis=1)
    y = np.minimum(y, n_classes - 1)
    logits = true_logits * temperature
    weight = rng.uniform(0.2, 3.0, size=n) if weights else None
    return Predictions.from_proba(
        softmax(logits, axis=1),
        y_true=y,
        logits=logits if with_logits else None,
        sample_weight=weight,
    )


def top_label_run(confidence, correct, weight=None):
    confidence = np.asarray(confidence, dtype=float)
    correct = np.asarray(correct, dtype=bool)
    y_pred = np.zeros(confidence.size, dtype=int)
    y_true = np.where(correct, 0, 1)
    return Predictions.from_top_label(
        y_pred, confidence, y_true, classes=["0", "1"], sample_weight=weight
    )


# --------------------------------------------------------------------------
# temperature scaling
# --------------------------------------------------------------------------
@pytest.mark.parametrize("with_logits", [True, False])
def test_temperature_recovers_known_temperature(with_logits):
    run = softmax_model(20_000, 4, 2.5, seed=1, with_logits=with_logits, weights=True)
    cal = fit_calibration(run, "temperature")
    assert cal.params["use_logits"] is with_logits
    assert cal.params["temperature"] == pytest.approx(2.5, abs=0.15)


def test_temperature_recovers_an_underconfident_temperature():
    run = softmax_model(20_000, 3, 0.5, seed=2)
    assert fit_calibration(run, "temperature").params["temperature"] == pytest.approx(0.5, abs=0.05)


def test_temperature_uses_sample_weight():
    # Two halves with different true temperatures: weighting one half up
    # must pull the fitted temperature towards it.
    hot = softmax_model(6_000, 3, 3.0, seed=3)
    cold = softmax_model(6_000, 3, 1.0, seed=4)
    proba = np.vstack([hot.proba, cold.proba])
    y = np.concatenate([hot.y_true, cold.y_true])
    weight_hot = np.concatenate([np.full(6_000, 10.0), np.ones(6_000)])
    weight_cold = weight_hot[::-1]
    t_hot = fit_calibration(Predictions.from_proba(proba, y, sample_weight=weight_hot), "temperature")
    t_cold = fit_calibration(Predictions.from_proba(proba, y, sample_weight=weight_cold), "temperature")
    assert t_hot.params["temperature"] > 2.2
    assert t_cold.params["temperature"] < 1.6


def _nll_at(run: Predictions, temperature: float) -> float:
    """Weighted NLL of softmax(log(clip(proba)) / T) on the rows of positive weight, straight from the definition."""
    from scipy.special import log_softmax

    keep = run.sample_weight > 0
    scores = np.log(np.clip(run.proba[keep], 1e-12, 1.0)) / temperature
    log_p = log_softmax(scores, axis=1)[np.arange(keep.sum()), run.y_true[keep]]
    weight = run.sample_weight[keep]
    return float(-np.dot(weight, log_p) / weight.sum())


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 300),
    n_classes=st.integers(2, 6),
    labels=st.sampled_from(["from_the_model", "random", "always_top"]),
    weights=st.sampled_from(["none", "uniform", "with_zeros"]),
    sharpness=st.sampled_from([0.05, 0.5, 2.0, 8.0]),
)
def test_temperature_newton_reaches_the_nll_minimum(seed, n, n_classes, labels, weights, sharpness):
    from scipy.optimize import minimize_scalar

    rng = np.random.default_rng(seed)
    proba = softmax(rng.normal(0.0, sharpness, (n, n_classes)), axis=1)
    y = {"from_the_model": (rng.random(n)[:, None] > np.cumsum(proba, axis=1)).sum(axis=1).clip(0, n_classes - 1),
         "random": rng.integers(0, n_classes, n), "always_top": proba.argmax(axis=1)}[labels]  # fmt: skip
    weight = {"none": None, "uniform": rng.uniform(0.1, 3.0, n),
              "with_zeros": np.where(rng.random(n) < 0.3, 0.0, rng.uniform(0.1, 3.0, n))}[weights]  # fmt: skip
    if weight is not None and not (weight > 0).any():
        weight[0] = 1.0
    run = Predictions.from_proba(proba, y_true=y, sample_weight=weight)
    fitted = fit_calibration(run, "temperature").params["temperature"]
    assert 0.05 <= fitted <= 20.0
    # The reference: a bounded scalar search of the NLL itself, in log T, far tighter than needed.
    reference = math.exp(minimize_scalar(lambda log_t: _nll_at(run, math.exp(log_t)), method="bounded",
                                         bounds=(math.log(0.05), math.log(20.0)),
                                         options={"xatol": 1e-10}).x)  # fmt: skip
    assert _nll_at(run, fitted) <= _nll_at(run, reference) + 1e-12 * max(1.0, abs(_nll_at(run, reference)))
    # and no better temperature nearby (a minimum, not a plateau the steps stopped on)
    for nearby in (fitted * (1 - 1e-6), fitted * (1 + 1e-6)):
        if 0.05 <= nearby <= 20.0:
            assert _nll_at(run, fitted) <= _nll_at(run, nearby) + 1e-13


def test_temperature_stops_at_the_bounds():
    rng = np.random.default_rng(0)
    n = 2000
    # Random labels under confident scores: softer is always better, up to T = 20.
    confident = softmax(rng.normal(0.0, 4.0, (n, 4)), axis=1)
    random = Predictions.from_proba(confident, y_true=rng.integers(0, 4, n))
    assert fit_calibration(random, "temperature").params["temperature"] == 20.0
    # Always right yet hesitant: sharper is always better, down to T = 0.05.
    hesitant = softmax(rng.normal(0.0, 0.01, (n, 4)), axis=1)
    sure = Predictions.from_proba(hesitant, y_true=hesitant.argmax(axis=1))
    assert fit_calibration(sure, "temperature").params["temperature"] == 0.05


def test_a_split_is_fitted_once_per_method():
    run = softmax_model(500, 3, 2.0, seed=1)
    first = fit_calibration(run, "temperature")
    assert fit_calibration(run, "temperature") is first
    assert fit_calibration(run, "temperature", use_logits=False) is not first  # another fit: log(proba)
    copy = run.subset(slice(None))
    assert fit_calibration(copy, "temperature") is not first
    assert fit_calibration(copy, "temperature") == first  # same data, same answer


def test_temperature_lowers_held_out_nll_and_keeps_accuracy():
    run = softmax_model(8_000, 5, 3.0, seed=5, weights=True)
    tune, valid = run.subset(slice(0, 4_000)), run.subset(slice(4_000, None))
    cal = fit_calibration(tune, "temperature")
    after = cal.apply(valid)
    assert negative_log_likelihood(after) < negative_log_likelihood(valid) - 0.1
    assert expected_calibration_error(after) < expected_calibration_error(valid)
    assert np.array_equal(after.y_pred, valid.y_pred)
    assert after.accuracy == valid.accuracy
    # the scaled logits travel with the result and agree with its proba
    np.testing.assert_allclose(softmax(after.logits, axis=1), after.proba, atol=1e-12)


def test_temperature_keeps_prediction_when_rescaling_creates_a_tie():
    # 0.4 - 1ulp and 0.4 merge into one value after log / T / exp, and a
    # recomputed argmax would then pick column 0 instead of column 1.
    low = np.nextafter(0.4, 0.0)
    run = Predictions.from_proba([[low, 0.4, 1.0 - 0.4 - low]], y_true=[1])
    assert run.y_pred.tolist() == [1]
    out = Calibrator("temperature", {"temperature": 5.0}).apply(run)
    assert out.proba[0, 0] == out.proba[0, 1]  # the tie really appears
    assert out.y_pred.tolist() == [1]
    assert out.accuracy == 1.0
    assert out.confidence[0] == out.proba[0].max()


@st.composite
def tied_probabilities(draw):
    n = draw(st.integers(1, 12))
    n_classes = draw(st.integers(2, 5))
    # small integer counts make exact ties common; zeros exercise the floor
    counts = draw(st.lists(st.lists(st.integers(0, 4), min_size=n_classes, max_size=n_classes), min_size=n, max_size=n))
    counts = np.asarray(counts, dtype=float)
    counts[counts.sum(axis=1) == 0, 0] = 1.0
    proba = counts / counts.sum(axis=1, keepdims=True)
    if draw(st.booleans()):
        # near-ties one ulp apart, which rescaling may merge
        proba[:, 0] = np.nextafter(proba[:, 0], 0.0)
    y = draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n))
    return proba, np.asarray(y)


@SETTINGS
@given(data=tied_probabilities(), temperature=st.floats(0.05, 20.0), use_logits=st.booleans())
def test_temperature_never_changes_predictions(data, temperature, use_logits):
    proba, y = data
    run = Predictions.from_proba(proba, y_true=y, logits=np.log(np.clip(proba, 1e-300, 1)) if use_logits else None)
    out = Calibrator("temperature", {"temperature": temperature}).apply(run)
    assert np.array_equal(out.y_pred, run.y_pred)
    assert out.accuracy == run.accuracy
    np.testing.assert_allclose(out.proba.sum(axis=1), 1.0, atol=1e-9)
    # the kept class is still a largest probability, so confidence is the max
    np.testing.assert_array_equal(out.confidence, out.proba.max(axis=1))
    fitted = fit_calibration(run, "temperature").apply(run)
    assert np.array_equal(fitted.y_pred, run.y_pred)


def test_temperature_auto_ignores_logits_that_disagree_with_the_prediction():
    proba = np.array([[0.7, 0.3], [0.2, 0.8]])
    logits = np.array([[0.0, 5.0], [0.0, 1.0]])  # row 0 ranks the other class first
    run = Predictions.from_proba(proba, y_true=[0, 1], logits=logits)
    assert fit_calibration(run, "temperature").params["use_logits"] is False
    assert fit_calibration(run, "temperature", use_logits=True).params["use_logits"] is True


def test_temperature_apply_confidence_matches_apply():
    run = softmax_model(500, 4, 2.0, seed=6)
    cal = fit_calibration(run, "temperature")
    np.testing.assert_allclose(
        cal.apply_confidence(run.confidence, proba=run.proba, logits=run.logits), cal.apply(run).confidence, atol=1e-15
    )
    from_proba_only = cal.apply_confidence(run.confidence, proba=run.proba)
    np.testing.assert_allclose(from_proba_only, cal.apply(run).confidence, atol=1e-9)


# --------------------------------------------------------------------------
# isotonic and Platt
# --------------------------------------------------------------------------
def overconfident_top_label(n, seed, weights=False):
    rng = np.random.default_rng(seed)
    confidence = rng.uniform(0.5, 1.0, n)
    correct = rng.random(n) < confidence**3  # much less often right than claimed
    weight = rng.uniform(0.1, 4.0, n) if weights else None
    return top_label_run(confidence, correct, weight)


def test_isotonic_is_monotone_and_lowers_ece_on_fitting_data():
    run = overconfident_top_label(3_000, seed=7, weights=True)
    cal = fit_calibration(run, "isotonic")
    out = cal.apply(run)
    order = np.argsort(run.confidence, kind="stable")
    assert np.all(np.diff(out.confidence[order]) >= 0)
    assert np.all(np.diff(cal.params["y"]) >= 0)
    before, after = expected_calibration_error(run), expected_calibration_error(out)
    assert before > 0.1
    assert after < before / 3
    assert np.array_equal(out.y_pred, run.y_pred)


def test_isotonic_breakpoints_reproduce_sklearn_and_drop_stale_proba():
    from sklearn.isotonic import IsotonicRegression

    run = softmax_model(2_000, 3, 2.0, seed=8, weights=True)
    cal = fit_calibration(run, "isotonic")
    out = cal.apply(run)
    # Only the confidence is recalibrated; the old vector would contradict it.
    assert out.proba is None and out.logits is None
    assert np.array_equal(out.y_pred, run.y_pred)
    reference = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(
        run.confidence, run.correct.astype(float), sample_weight=run.sample_weight
    )
    probe = np.linspace(0.0, 1.0, 1001)
    served = np.interp(probe, cal.to_dict()["x"], cal.to_dict()["y"])
    np.testing.assert_allclose(served, reference.predict(probe), atol=1e-12)
    np.testing.assert_array_equal(cal.apply_confidence(probe), served)


def binary_miscalibrated(n, seed, shift=1.5, slope=2.5):
    """Binary data whose reported log-odds are stretched and shifted."""
    rng = np.random.default_rng(seed)
    true_logit = rng.normal(0.0, 1.5, n)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-true_logit))).astype(int)
    reported = slope * true_logit + shift
    p1 = 1.0 / (1.0 + np.exp(-reported))
    return Predictions.from_proba(np.column_stack([1 - p1, p1]), y_true=y)


def test_platt_lowers_nll_on_a_binary_miscalibrated_case():
    run = binary_miscalibrated(6_000, seed=9)
    tune, valid = run.subset(slice(0, 3_000)), run.subset(slice(3_000, None))
    cal = fit_calibration(tune, "platt")
    assert cal.params["a"] == pytest.approx(1 / 2.5, abs=0.06)
    assert cal.params["b"] == pytest.approx(-1.5 / 2.5, abs=0.15)
    assert negative_log_likelihood(cal.apply(tune)) < negative_log_likelihood(tune) - 0.05
    assert negative_log_likelihood(cal.apply(valid)) < negative_log_likelihood(valid) - 0.05


def test_platt_can_change_predictions_and_stays_consistent():
    run = binary_miscalibrated(3_000, seed=10, shift=2.0, slope=1.0)
    out = fit_calibration(run, "platt").apply(run)
    assert not np.array_equal(out.y_pred, run.y_pred)  # documented: it may
    assert np.array_equal(out.y_pred, out.proba.argmax(axis=1))
    np.testing.assert_array_equal(out.confidence, out.proba.max(axis=1))
    assert out.accuracy > run.accuracy


def test_platt_separable_data_gives_finite_parameters():
    run = Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.1, 0.9]], y_true=[0, 0, 1, 1])
    cal = fit_calibration(run, "platt")
    assert math.isfinite(cal.params["a"]) and 0 < cal.params["a"] < 50


# --------------------------------------------------------------------------
# serialisation
# --------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["none", "temperature", "isotonic", "platt"])
def test_round_trip_through_json_gives_identical_outputs(method):
    run = binary_miscalibrated(800, seed=11)
    cal = fit_calibration(run, method)
    text = json.dumps(cal.to_dict())
    back = Calibrator.from_dict(json.loads(text))
    assert back == cal and hash(back) == hash(cal)
    a, b = cal.apply(run), back.apply(run)
    assert np.array_equal(a.confidence, b.confidence)
    assert np.array_equal(a.y_pred, b.y_pred)
    assert (a.proba is None and b.proba is None) or np.array_equal(a.proba, b.proba)
    assert np.array_equal(
        cal.apply_confidence(run.confidence, proba=run.proba), back.apply_confidence(run.confidence, proba=run.proba)
    )


def test_to_dict_shapes():
    assert Calibrator("none", {}).to_dict() == {"method": "none"}
    d = Calibrator.from_dict({"method": "temperature", "temperature": 1.73}).to_dict()
    assert d == {"method": "temperature", "temperature": 1.73, "use_logits": True}
    d = Calibrator("isotonic", {"x": np.array([0.5, 1.0]), "y": (0.25, 0.75)}).to_dict()
    assert d == {"method": "isotonic", "x": [0.5, 1.0], "y": [0.25, 0.75]}
    assert all(type(v) is float for v in d["x"] + d["y"])
    assert Calibrator("none").apply(top_label_run([0.7], [True])).confidence.tolist() == [0.7]


# --------------------------------------------------------------------------
# diagnostics against hand-worked numbers
# --------------------------------------------------------------------------
HAND_CONF = [0.15, 0.25, 0.55, 0.65, 0.95, 0.85]
HAND_RIGHT = [True, False, True, False, True, True]


def test_ece_hand_worked_uniform():
    run = top_label_run(HAND_CONF, HAND_RIGHT)
    # [0, 0.5): 0.15, 0.25 -> confidence 0.2, accuracy 1/2, gap 0.3, mass 2/6
    # [0.5, 1]: 0.55, 0.65, 0.95, 0.85 -> confidence 0.75, accuracy 3/4, gap 0
    assert expected_calibration_error(run, n_bins=2) == pytest.approx(2 / 6 * 0.3)
    assert maximum_calibration_error(run, n_bins=2) == pytest.approx(0.3)
    # weight 3 on the 0.25 (wrong) item: bin 0 confidence (0.15 + 3*0.25)/4
    # = 0.225, accuracy 1/4, gap 0.025, mass 4/8; bin 1 unchanged (gap 0)
    weighted = top_label_run(HAND_CONF, HAND_RIGHT, [1, 3, 1, 1, 1, 1])
    assert expected_calibration_error(weighted, n_bins=2) == pytest.approx(4 / 8 * 0.025)
    table = reliability_diagram(weighted, n_bins=2)
    assert table["count"].tolist() == [4.0, 4.0]
    assert table["mean_confidence"].tolist() == pytest.approx([0.225, 0.75])
    assert table["accuracy"].tolist() == pytest.approx([0.25, 0.75])


def test_ece_hand_worked_quantile():
    run = top_label_run(HAND_CONF, HAND_RIGHT)
    # sorted 0.15 0.25 0.55 | 0.65 0.85 0.95 (three per bin)
    # bin 0: confidence 0.95/3, accuracy 2/3, gap 0.35
    # bin 1: confidence 2.45/3, accuracy 2/3, gap 0.15
    assert expected_calibration_error(run, n_bins=2, strategy="quantile") == pytest.approx(0.5 * 0.35 + 0.5 * 0.15)
    assert maximum_calibration_error(run, n_bins=2, strategy="quantile") == pytest.approx(0.35)
    table = reliability_diagram(run, n_bins=2, strategy="quantile")
    assert table["bin_lower"].tolist() == [0.0, 0.65]
    assert table["bin_upper"].tolist() == [0.65, 1.0]


def test_uniform_bin_edges_are_half_open_with_the_last_closed():
    run = top_label_run([0.0, 0.5, 1.0], [True, True, False])
    table = reliability_diagram(run, n_bins=2)
    assert table["count"].tolist() == [1.0, 2.0]  # 0.5 opens the second bin; 1.0 is in it


def test_uniform_bins_agree_with_their_reported_edges():
    # floor(c * B) would put 0.29 (29 * 0.01 = 28.999...) into the 0.28 bin; the edges are the floats k/B
    edges = np.arange(101) / 100
    run = top_label_run(edges, [True] * 101)
    table = reliability_diagram(run, n_bins=100)
    assert table["count"].tolist() == [1.0] * 99 + [2.0]
    np.testing.assert_array_equal(table["mean_confidence"].to_numpy()[:99], edges[:99])
    np.testing.assert_array_equal(table["bin_lower"].to_numpy(), edges[:-1])


def test_wilson_interval_by_hand():
    # 8 right out of 10 in one bin: Wilson 95% interval (0.4902, 0.9433)
    run = top_label_run([0.8] * 10, [True] * 8 + [False] * 2)
    row = reliability_diagram(run, n_bins=5).iloc[0]
    assert row["accuracy_low"] == pytest.approx(0.4902, abs=1e-4)
    assert row["accuracy_high"] == pytest.approx(0.9433, abs=1e-4)


def test_brier_and_nll_by_hand():
    run = Predictions.from_proba([[0.7, 0.2, 0.1], [0.5, 0.25, 0.25]], y_true=[0, 2], sample_weight=[1, 3])
    # row 0: 0.3^2 + 0.2^2 + 0.1^2 = 0.14; row 1: 0.5^2 + 0.25^2 + 0.75^2 = 0.875
    assert brier_score(run) == pytest.approx((0.14 + 3 * 0.875) / 4)
    # top label: (0.7 - 1)^2 = 0.09, (0.5 - 0)^2 = 0.25
    assert brier_score(run, top_label=True) == pytest.approx((0.09 + 3 * 0.25) / 4)
    assert negative_log_likelihood(run) == pytest.approx(-(math.log(0.7) + 3 * math.log(0.25)) / 4)
    certain_and_wrong = Predictions.from_proba([[1.0, 0.0]], y_true=[1])
    assert negative_log_likelihood(certain_and_wrong) == pytest.approx(-math.log(np.finfo(np.float64).eps))
    top = top_label_run([0.7, 0.5], [True, False], [1, 3])
    assert brier_score(top) == pytest.approx((0.09 + 3 * 0.25) / 4)


def test_summary_contents():
    full = softmax_model(300, 3, 2.0, seed=12)
    summary = calibration_summary(full, n_bins=10)
    assert set(summary) == {"ece_uniform", "ece_quantile", "mce", "brier", "nll"}
    assert summary["nll"] == pytest.approx(negative_log_likelihood(full))
    assert summary["ece_quantile"] == pytest.approx(expected_calibration_error(full, 10, "quantile"))
    assert all(type(v) is float for v in summary.values())
    top = calibration_summary(top_label_run(HAND_CONF, HAND_RIGHT), n_bins=2)
    assert top["nll"] is None
    assert top["ece_uniform"] == pytest.approx(0.1)


def test_empty_and_zero_weight_runs():
    empty = top_label_run([], [])
    assert math.isnan(expected_calibration_error(empty))
    assert math.isnan(maximum_calibration_error(empty))
    table = reliability_diagram(empty)
    assert table.empty and list(table.columns) == [
        "bin_lower", "bin_upper", "mean_confidence", "accuracy", "count", "accuracy_low", "accuracy_high",
    ]
    # zero-weight items are ignored, not counted as an empty-weight bin
    run = top_label_run([0.1, 0.9], [False, True], [0.0, 2.0])
    assert reliability_diagram(run, n_bins=2)["count"].tolist() == [2.0]
    assert expected_calibration_error(run, n_bins=2) == pytest.approx(0.1)


# --------------------------------------------------------------------------
# diagnostics against brute force
# --------------------------------------------------------------------------
def brute_force_ece(confidence, correct, weight, n_bins, strategy):
    """ECE and per-bin mass by explicit loops over bins and items."""
    keep = [i for i in range(len(confidence)) if weight[i] > 0]
    total = sum(weight[i] for i in keep)
    if strategy == "uniform":
        edges = np.arange(n_bins + 1) / n_bins
        members = []
        for b in range(n_bins):
            lo, hi = edges[b], edges[b + 1]
            last = b == n_bins - 1
            inside = [i for i in keep if lo <= confidence[i] and (confidence[i] < hi or (last and confidence[i] <= hi))]
            members.append(inside)
    else:
        # each distinct value goes where the midpoint of its mass falls
        members = [[] for _ in range(n_bins)]
        below = 0.0
        for value in sorted({confidence[i] for i in keep}):
            rows = [i for i in keep if confidence[i] == value]
            mass = sum(weight[i] for i in rows)
            b = min(n_bins - 1, math.floor(n_bins * (below + mass / 2) / total))
            members[b].extend(rows)
            below += mass
    ece, masses = 0.0, []
    for rows in members:
        mass = sum(weight[i] for i in rows)
        if mass <= 0:
            continue
        conf = sum(weight[i] * confidence[i] for i in rows) / mass
        acc = sum(weight[i] * correct[i] for i in rows) / mass
        ece += mass / total * abs(acc - conf)
        masses.append(mass)
    return ece, masses


@st.composite
def weighted_top_label(draw):
    n = draw(st.integers(1, 40))
    grid = draw(st.booleans())  # coarse grids produce ties and values on bin edges
    value = st.integers(0, 20).map(lambda k: k / 20) if grid else st.floats(0.0, 1.0)
    confidence = draw(st.lists(value, min_size=n, max_size=n))
    correct = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    weight = draw(st.lists(st.one_of(st.just(0.0), st.floats(0.01, 10.0)), min_size=n, max_size=n))
    if sum(weight) == 0:
        weight[0] = 1.0
    return confidence, correct, weight


@pytest.mark.heavy
@SETTINGS
@given(data=weighted_top_label(), n_bins=st.integers(1, 12), strategy=st.sampled_from(["uniform", "quantile"]))
def test_ece_matches_brute_force(data, n_bins, strategy):
    confidence, correct, weight = data
    run = top_label_run(confidence, correct, weight)
    expected, masses = brute_force_ece(confidence, correct, weight, n_bins, strategy)
    assert expected_calibration_error(run, n_bins, strategy) == pytest.approx(expected, abs=1e-12)
    table = reliability_diagram(run, n_bins, strategy)
    np.testing.assert_allclose(table["count"].to_numpy(), masses, rtol=1e-12)
    assert table["count"].sum() == pytest.approx(sum(weight), rel=1e-12)
    assert maximum_calibration_error(run, n_bins, strategy) >= expected_calibration_error(run, n_bins, strategy) - 1e-12
    # bins tile upwards and contain their mean confidence
    assert np.all(table["bin_lower"].to_numpy() <= table["mean_confidence"].to_numpy() + 1e-12)
    assert np.all(table["mean_confidence"].to_numpy() <= table["bin_upper"].to_numpy() + 1e-12)
    assert np.all((table["accuracy_low"] <= table["accuracy"]) & (table["accuracy"] <= table["accuracy_high"]))


def test_equal_mass_bins_have_roughly_equal_counts():
    rng = np.random.default_rng(13)
    run = top_label_run(rng.beta(5, 2, 3_000), rng.random(3_000) < 0.7)
    table = reliability_diagram(run, n_bins=15, strategy="quantile")
    assert len(table) == 15
    assert table["count"].min() >= 199 and table["count"].max() <= 201
    weighted = top_label_run(rng.beta(5, 2, 3_000), rng.random(3_000) < 0.7, rng.uniform(0.5, 2.0, 3_000))
    table = reliability_diagram(weighted, n_bins=10, strategy="quantile")
    target = weighted.total_weight / 10
    assert np.all(np.abs(table["count"] - target) <= 2.0)  # within one item's weight either side


def test_equal_mass_bins_never_split_identical_confidences():
    confidence = [0.9] * 50 + list(np.linspace(0.5, 0.8, 50))
    run = top_label_run(confidence, [True] * 100)
    table = reliability_diagram(run, n_bins=4, strategy="quantile")
    tied = np.isclose(table["mean_confidence"], 0.9, rtol=0, atol=1e-12)
    assert tied.sum() == 1
    assert table.loc[tied, "count"].item() == 50
    assert table.loc[tied, "bin_lower"].item() == 0.9
    assert table["count"].sum() == 100


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------
def test_errors_are_clear():
    labelled = softmax_model(50, 3, 1.0, seed=14)
    unlabeled = Predictions.from_proba(labelled.proba)
    top = top_label_run([0.6, 0.7], [True, False])
    with pytest.raises(ValueError, match="unlabeled"):
        fit_calibration(unlabeled, "temperature")
    with pytest.raises(ValueError, match="unlabeled"):
        expected_calibration_error(unlabeled)
    with pytest.raises(ValueError, match="unknown calibration method 'beta'"):
        fit_calibration(labelled, "beta")
    with pytest.raises(ValueError, match="binary runs only; this run has 3 classes"):
        fit_calibration(labelled, "platt")
    with pytest.raises(ValueError, match="binary runs only"):
        Calibrator("platt", {"a": 1.0, "b": 0.0}).apply(labelled)
    with pytest.raises(ValueError, match="temperature scaling needs the full probability vector"):
        fit_calibration(top, "temperature")
    with pytest.raises(ValueError, match="temperature scaling needs the full probability vector"):
        Calibrator("temperature", {"temperature": 2.0}).apply(top)
    with pytest.raises(ValueError, match="negative log-likelihood needs the full probability vector"):
        negative_log_likelihood(top)
    with pytest.raises(ValueError, match="use_logits=True"):
        fit_calibration(softmax_model(50, 3, 1.0, seed=14, with_logits=False), "temperature", use_logits=True)
    with pytest.raises(ValueError, match="use_logits must be"):
        fit_calibration(labelled, "temperature", use_logits="yes")
    with pytest.raises(ValueError, match="positive sample_weight"):
        fit_calibration(top_label_run([0.6], [True], [0.0]), "isotonic")
    with pytest.raises(ValueError, match="n_bins must be a positive integer"):
        expected_calibration_error(top, n_bins=0)
    with pytest.raises(ValueError, match="unknown binning strategy"):
        reliability_diagram(top, strategy="kmeans")
    with pytest.raises(ValueError, match="needs proba or logits"):
        Calibrator("temperature", {"temperature": 2.0}).apply_confidence([0.5])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"temperature": 1.0}, "needs a 'method' key"),
        ({"method": "beta", "a": 1.0}, "unknown calibration method 'beta'"),
        ({"method": "temperature"}, r"needs the parameters \['temperature'\]"),
        ({"method": "platt", "a": 1.0}, r"needs the parameters \['b'\]"),
        ({"method": "isotonic", "x": [0.1]}, r"needs the parameters \['y'\]"),
        ({"method": "temperature", "temprature": 1.0, "temperature": 1.0}, "unexpected parameters"),
        ({"method": "temperature", "temperature": -1.0}, "must be positive"),
        ({"method": "temperature", "temperature": "1.7"}, "must be a number"),
        ({"method": "platt", "a": float("nan"), "b": 0.0}, "must be finite"),
        ({"method": "isotonic", "x": [0.1, 0.2], "y": [0.5]}, "differ in length"),
        ({"method": "isotonic", "x": [0.2, 0.1], "y": [0.1, 0.5]}, "non-decreasing order"),
        ({"method": "isotonic", "x": [0.1, 0.2], "y": [0.5, 0.1]}, "non-decreasing"),
        ({"method": "isotonic", "x": [0.1, 0.2], "y": [0.5, 1.5]}, r"lie in \[0, 1\]"),
        ({"method": "temperature", "temperature": 1.0, "use_logits": "yes"}, "true or false"),
        (["temperature", 1.0], "must be a mapping"),
    ],
)
def test_from_dict_rejects_bad_dicts(data, message):
    with pytest.raises(ValueError, match=message):
        Calibrator.from_dict(data)


def test_reliability_diagram_is_a_float_frame():
    table = reliability_diagram(softmax_model(400, 3, 2.0, seed=15), n_bins=8)
    assert isinstance(table, pd.DataFrame)
    assert all(dtype == np.float64 for dtype in table.dtypes)
    assert table["bin_lower"].is_monotonic_increasing


def test_uniform_bins_are_exactly_k_over_b():
    # np.linspace(0, 1, 11) has the edges 0.6000000000000001 and 0.7000000000000001 (issue 10)
    confidence = [0.05, 0.3, 0.6, 0.7, 0.95, 1.0]
    table = reliability_diagram(top_label_run(confidence, [True] * 6), n_bins=10)
    occupied = table[table["count"] > 0]
    assert occupied["bin_lower"].tolist() == [0.0, 0.3, 0.6, 0.7, 0.9]
    assert occupied["count"].tolist() == [1.0, 1.0, 1.0, 1.0, 2.0]


def test_nll_uses_the_floor_of_scikit_learn_log_loss():
    from sklearn.metrics import log_loss

    rng = np.random.default_rng(3)
    proba = rng.dirichlet([0.3, 0.3, 0.3], size=300)
    proba[:7] = [1.0, 0.0, 0.0]  # true class 1 or 2 gets probability 0 on some rows
    y = rng.integers(0, 3, size=300)
    weight = rng.uniform(0.5, 2.0, size=300)
    run = Predictions.from_proba(proba, y, sample_weight=weight)
    expected = log_loss(y, proba, labels=[0, 1, 2], sample_weight=weight)
    assert negative_log_likelihood(run) == pytest.approx(expected, rel=1e-12)


def test_isotonic_never_pools_confidences_a_threshold_tells_apart():
    low, high = 0.5, float(np.nextafter(0.5, 1.0))  # 1e-16 apart: scikit-learn would merge them
    run = Predictions.from_top_label(["1"] * 4, [low, low, high, high], ["0", "0", "1", "1"], classes=["0", "1"])
    calibrated = fit_calibration(run, "isotonic").apply(run).confidence
    assert calibrated.tolist() == [0.0, 0.0, 1.0, 1.0]


@pytest.mark.parametrize("use_logits", [True, False])
def test_fitting_and_applying_leave_the_run_untouched(use_logits):
    run = softmax_model(300, 4, 2.0, seed=3)
    before = {name: getattr(run, name).copy() for name in ("proba", "logits", "confidence", "y_pred")}
    calibrator = fit_calibration(run, "temperature", use_logits=use_logits)
    after = calibrator.apply(run)
    assert calibrator.apply(run) is after  # applied once per run and calibrator
    for name, array in before.items():
        np.testing.assert_array_equal(getattr(run, name), array, err_msg=name)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 3000), decimals=st.sampled_from([1, 2, 4, 12]))
def test_distinct_values_by_hashing_equal_numpy_unique(seed, n, decimals):
    from valuecore._engine import sorting as _sorted
    from valuecore._stats import calibration_metrics
    confidence = np.round(np.random.default_rng(seed).random(n), decimals)
    saved = _sorted._FAST_SORT_MIN_ITEMS
    _sorted._FAST_SORT_MIN_ITEMS = 0  # the hashing path on small inputs too
    try:
        values, inverse = calibration_metrics._distinct_values(confidence)
    finally:
        _sorted._FAST_SORT_MIN_ITEMS = saved
    expected_values, expected_inverse = np.unique(confidence, return_inverse=True)
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(inverse, expected_inverse)


def test_the_warm_start_on_a_subsample_reaches_the_same_minimum():
    from valuecore._model import recalibration as _calibration
    run = softmax_model(70_000, 4, 1.7, seed=8, with_logits=False, weights=True)  # > 2 * 2**15 rows: warm start
    warm = fit_calibration(run, "temperature").params["temperature"]
    scores = np.log(np.clip(run.proba, 1e-12, 1.0))
    scores -= scores[np.arange(run.n), run.y_pred][:, None]
    weight = run.sample_weight / run.sample_weight.sum()
    cold = 1.0 / _calibration._minimise_nll_in_inverse_temperature(scores, scores[np.arange(run.n), run.y_true], weight)
    assert warm == pytest.approx(cold, rel=1e-12)
    assert warm == pytest.approx(1.7, rel=0.05)


@pytest.mark.parametrize("source", ["proba64", "proba32", "logits"])
def test_temperature_applied_in_blocks_is_scipy_softmax_bit_for_bit(source):
    # more rows than one block, and a last block that is not full
    n = 3 * (1 << 13) + 17
    p = softmax_model(n, 7, 1.8, seed=11)
    proba = p.proba.astype(np.float32) if source == "proba32" else p.proba
    use_logits = source == "logits"
    run = Predictions.from_proba(proba, p.y_true, logits=p.logits if use_logits else None)
    calibrator = Calibrator("temperature", {"temperature": 1.37, "use_logits": use_logits})
    scores = (np.asarray(p.logits, dtype=np.float64) if use_logits
              else np.log(np.clip(np.asarray(proba, dtype=np.float64), 1e-12, 1.0)))
    expected = softmax(scores / 1.37, axis=1)
    applied = calibrator.apply(run)
    assert np.array_equal(applied.proba, expected)
    assert np.array_equal(applied.confidence, np.clip(expected[np.arange(n), run.y_pred], 0.0, 1.0))
    if use_logits:
        assert np.array_equal(applied.logits, scores / 1.37)
    else:
        assert applied.logits is None
    served = calibrator.apply_confidence(run.confidence, proba=proba, logits=run.logits)
    assert np.array_equal(served, np.clip(expected.max(axis=1), 0.0, 1.0))


@pytest.mark.parametrize("n_bins", [1, 4, 15])
@pytest.mark.parametrize("kind", ["proba", "top_label", "weighted_ties"])
def test_diagnostics_at_once_are_the_diagnostics_one_by_one(kind, n_bins):
    from valuecore._stats.calibration_metrics import calibration_diagnostics

    if kind == "proba":
        run = softmax_model(700, 5, 1.6, seed=21, weights=True)
    else:
        rng = np.random.default_rng(22)
        confidence = rng.uniform(0.3, 1.0, 700).round(1 if kind == "weighted_ties" else 6)
        weight = rng.integers(0, 4, 700).astype(float) if kind == "weighted_ties" else None
        run = top_label_run(confidence, rng.random(700) < confidence, weight)
    diagnostics = calibration_diagnostics(run, n_bins=n_bins)
    for strategy in ("uniform", "quantile"):
        pd.testing.assert_frame_equal(diagnostics.reliability(strategy), reliability_diagram(run, n_bins, strategy),
                                      check_exact=True)
    assert diagnostics.summary() == calibration_summary(run, n_bins)
    one_by_one = {
        "ece_uniform": expected_calibration_error(run, n_bins, "uniform"),
        "ece_quantile": expected_calibration_error(run, n_bins, "quantile"),
        "mce": maximum_calibration_error(run, n_bins, "uniform"),
        "brier": brier_score(run),
        "nll": negative_log_likelihood(run) if run.has_proba else None,
    }
    assert diagnostics.summary() == one_by_one  # the same floats
    assert diagnostics.brier_top_label == brier_score(run, top_label=True)
    with pytest.raises(ValueError, match="strategy"):
        diagnostics.reliability("equal")
