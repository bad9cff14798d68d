"""Monitoring with bands: the per-item moments against a double loop, band
coverage without drift close to nominal, and alerts on an injected drift."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc

USE_CASE = vc.UseCase(1, 0, -2)


def draw(rng, n, low=0.5, high=1.0, power=1.5):
    """Known model: confidence ~ U(low, high), right with probability confidence ** power
    (over-confident, so the raw estimate is biased and calibration matters)."""
    conf = rng.uniform(low, high, n)
    right = rng.uniform(size=n) < conf**power
    return vc.Predictions.from_top_label(["a"] * n, conf, np.where(right, "a", "b"), classes=["a", "b"])


def test_moments_are_the_double_loop_over_items_and_true_classes():
    rng = np.random.default_rng(1)
    proba = rng.dirichlet([1, 1, 1], 30)
    p = vc.Predictions.from_proba(proba, classes=["x", "y", "z"], sample_weight=rng.integers(0, 3, 30))
    matrix = vc.ValueMatrix(("x", "y", "z"), [[2, -1, -3, 0], [-1, 1, -2, 0], [-4, -1, 3, -0.5]])
    policy = vc.Policy("threshold", threshold=0.5)
    from valuecore._monitor.bands import expected_item_values

    mean, variance = expected_item_values(policy, p, matrix)
    actions = policy.decide(p)
    for i in range(p.n):
        outcomes = [matrix.values[k, actions[i]] for k in range(3)]
        m = sum(proba[i, k] / proba[i].sum() * outcomes[k] for k in range(3))
        s = sum(proba[i, k] / proba[i].sum() * (outcomes[k] - m) ** 2 for k in range(3))
        assert mean[i] == pytest.approx(m) and variance[i] == pytest.approx(s, abs=1e-12)
    # the estimate with no calibration is vc.estimate's
    out = vc.monitoring.monitor_bands(_labelled(p, rng), p, policy, matrix, n_chunks=1, calibration="none")
    assert out.frame["estimated_value_per_item"].iloc[0] == pytest.approx(vc.estimate(policy, p, matrix).value_per_item)
    assert "no calibration" in out.calibration_text


def _labelled(p, rng):
    y = rng.integers(0, 3, p.n).astype(str)
    return vc.Predictions.from_proba(p.proba, np.array(p.classes)[y.astype(int)], classes=p.classes)


def test_default_calibration_is_fitted_on_the_reference_and_said():
    rng = np.random.default_rng(2)
    reference, production = draw(rng, 2000), draw(rng, 2000)
    raw = vc.monitoring.monitor_bands(
        reference, production, vc.Policy("accept_all"), USE_CASE, n_chunks=4, calibration="none"
    )
    calibrated = vc.monitoring.monitor_bands(reference, production, vc.Policy("accept_all"), USE_CASE, n_chunks=4)
    assert calibrated.calibration["method"] == "isotonic"
    assert "isotonic calibration fitted on the labelled reference split (2000 items)" == calibrated.calibration_text
    truth = production.accuracy * 3 - 2  # value per item of accept_all: 1 right, -2 wrong
    assert abs(calibrated.frame["estimated_value_per_item"].mean() - truth) < abs(
        raw.frame["estimated_value_per_item"].mean() - truth
    )


@pytest.mark.heavy
def test_whole_number_weights_are_copies():
    rng = np.random.default_rng(4)
    reference, production = draw(rng, 300), draw(rng, 200, high=0.9)
    weight = rng.integers(1, 4, 200)
    labels = np.array(["a", "b"])[production.y_true]
    weighted = vc.Predictions.from_top_label(
        ["a"] * 200, production.confidence, labels, classes=["a", "b"], sample_weight=weight
    )
    copies = production.subset(np.repeat(np.arange(200), weight))
    policy = vc.Policy("threshold", threshold=0.7)
    a = vc.monitoring.monitor_bands(reference, weighted, policy, USE_CASE, n_chunks=1).frame.iloc[0]
    b = vc.monitoring.monitor_bands(reference, copies, policy, USE_CASE, n_chunks=1).frame.iloc[0]
    for column in (
        "n",
        "estimated_value_per_item",
        "band_low",
        "band_high",
        "reference_low",
        "drift_statistic",
        "drift_p_value",
        "realised_value_per_item",
    ):
        assert a[column] == pytest.approx(b[column], rel=1e-9), column


def test_bad_options_are_refused():
    rng = np.random.default_rng(3)
    p = draw(rng, 100)
    unlabeled = vc.Predictions.from_top_label(["a"] * 5, [0.9] * 5, classes=["a", "b"])
    with pytest.raises(ValueError, match="labels"):
        vc.monitoring.monitor_bands(unlabeled, p, vc.Policy("accept_all"), USE_CASE, n_chunks=2)
    with pytest.raises(ValueError, match="confidence"):
        vc.monitoring.monitor_bands(p, p, vc.Policy("accept_all"), USE_CASE, n_chunks=2, confidence=1.0)
    with pytest.raises(ValueError, match="calibration for monitoring"):
        vc.monitoring.monitor_bands(p, p, vc.Policy("accept_all"), USE_CASE, n_chunks=2, calibration="beta")
    three = vc.Predictions.from_proba([[0.5, 0.3, 0.2], [0.1, 0.8, 0.1]] * 10, y_true=[0, 1] * 10)
    matrix = vc.ValueMatrix(three.classes, [[1, -1, -1, 0], [-1, 1, -3, 0], [-1, -1, 1, 0]])
    with pytest.raises(ValueError, match="platt calibration is for two classes"):
        vc.monitoring.monitor_bands(three, three, vc.Policy("accept_all"), matrix, n_chunks=2, calibration="platt")
    with pytest.raises(ValueError, match="n_resamples"):
        vc.monitoring.monitor_bands(p, p, vc.Policy("accept_all"), USE_CASE, n_chunks=2, n_resamples=1)


def test_a_binary_value_matrix_is_calibrated_with_an_intercept_per_class():
    """Temperature scaling has no intercept: a model whose log-odds are shifted stays biased under it.

    The default for a binary value matrix is isotonic regression of the truth on P(positive), as NannyML's
    CBPE calibrates: it corrects a shift of the log-odds, which moves the two predicted classes apart
    (a top-label map, pooling both, missed every chunk here).
    """
    rng = np.random.default_rng(5)
    n = 4000
    true_logit = rng.normal(0, 2, n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-true_logit))).astype(int)
    shown = 1 / (1 + np.exp(-(true_logit + 1.5)))  # the model over-rates the positive class
    p = vc.Predictions.from_proba(np.column_stack([1 - shown, shown]), np.array(["neg", "pos"])[y],
                                  classes=["neg", "pos"])
    matrix = vc.ValueMatrix(("neg", "pos"), [[1.0, -5.0, 0.0], [-2.0, 3.0, 0.0]])
    reference, watched = p.subset(slice(0, 2000)), p.subset(slice(2000, n))
    policy = vc.Policy("accept_all")
    runs = {name: vc.monitoring.monitor_bands(reference, watched, policy, matrix, n_chunks=4, n_resamples=30,
                                              calibration=name) for name in ("auto", "temperature")}
    assert runs["auto"].calibration["method"] == "isotonic" and runs["auto"].calibration["positive_class"]
    assert "isotonic calibration of P(positive class) fitted" in runs["auto"].calibration_text
    error = {name: np.abs(out.frame["estimated_value_per_item"] - out.frame["realised_value_per_item"]).mean()
             for name, out in runs.items()}
    assert error["auto"] < error["temperature"] / 3, error
    assert runs["auto"].backtest_coverage >= 0.75
    assert runs["temperature"].backtest_coverage == 0.0


def test_where_the_confidences_moved_the_band_allows_for_the_maps_unchecked_correction():
    """Car-loan-like: the confidences move (0.55-0.8 instead of 0.5-1) and P(right | confidence) moves with them,
    to between the raw confidence and the reference's map. The map cannot see it; the variance-only band
    missed 8 of 20 chunks of 1,000 items here, the band with the calibration-shift term (KS distance times the
    map's correction) misses none. Without a map there is no correction to doubt: the term is 0."""
    rng = np.random.default_rng(20261124)
    reference = draw(rng, 5000)  # right with probability confidence ** 1.5
    moved = draw(rng, 20 * 1000, low=0.55, high=0.8, power=1.2)
    policy = vc.Policy("threshold", threshold=0.7)
    out = vc.monitoring.monitor_bands(reference, moved, policy, USE_CASE, size=1000, n_resamples=50)
    frame = out.frame
    realised, shift = frame["realised_value_per_item"], frame["calibration_shift"]
    without = ((frame["band_low"] + shift <= realised) & (realised <= frame["band_high"] - shift)).mean()
    assert frame["drift"].all() and (shift > 0).all()
    assert out.backtest_coverage >= 0.95 and without <= 0.7, (out.backtest_coverage, without)
    raw = vc.monitoring.monitor_bands(reference, moved, policy, USE_CASE, size=1000, n_resamples=5,
                                      calibration="none")
    assert (raw.frame["calibration_shift"] == 0).all()


def test_alert_band_counts_the_reference_sampling_error():
    """A 500-item reference watched in 20,000-item chunks: the reference's own error dominates the band."""
    rng = np.random.default_rng(6)
    reference, watched = draw(rng, 500), draw(rng, 40_000)
    out = vc.monitoring.monitor_bands(reference, watched, vc.Policy("threshold", threshold=0.7), USE_CASE,
                                      size=20_000, n_resamples=50)
    row = out.frame.iloc[0]
    half = (row["reference_high"] - row["reference_low"]) / 2
    chunk_only = 2.5758 * out.reference_sd / np.sqrt(20_000)
    assert half > 2 * chunk_only
    assert out.reference_mean_sd > out.reference_sd / np.sqrt(500) * 0.5


def test_bands_stop_at_the_values_an_item_can_take():
    """Small chunks at a costly wrong answer: the plain band would reach above what a correct answer earns."""
    rng = np.random.default_rng(7)
    reference, watched = draw(rng, 300, low=0.9), draw(rng, 400, low=0.9)
    costly = vc.UseCase(1, 0, -1000)
    out = vc.monitoring.monitor_bands(reference, watched, vc.Policy("threshold", threshold=0.95), costly,
                                      n_chunks=8, n_resamples=20)
    frame = out.frame
    assert (frame["band_high"] <= 1).all() and (frame["band_low"] >= -1000).all()
    assert (frame["reference_high"] <= 1).all() and (frame["reference_low"] >= -1000).all()
    assert (frame["band_high"] == 1).any()  # the clip is reached: without it this run's bands pass $1
    realised = frame["realised_value_per_item"]
    inside = (frame["band_low"] <= realised) & (realised <= frame["band_high"])
    assert (inside == frame["covered"].astype(bool)).all()  # coverage is read on the same bands


def test_a_new_value_reuses_the_reference_maps_and_gives_the_bands_of_a_fresh_seed():
    """The bootstrap maps kept per reference (default seed) give, for other values and another policy, the very
    bands a fresh numpy.random.default_rng(0) gives, and no bootstrap map is fitted again."""
    from valuecore._monitor import bands

    rng = np.random.default_rng(8)
    reference, watched = draw(rng, 400), draw(rng, 600)
    vc.monitoring.monitor_bands(reference, watched, vc.Policy("threshold", threshold=0.7), USE_CASE, n_chunks=3,
                                n_resamples=20)
    other, policy = vc.UseCase(2, -0.5, -7), vc.Policy("threshold", threshold=0.8)
    fits = []
    fit = bands._fit_estimation_calibrator
    bands._fit_estimation_calibrator = lambda *args: fits.append(args) or fit(*args)
    try:
        kept = vc.monitoring.monitor_bands(reference, watched, policy, other, n_chunks=3, n_resamples=20)
    finally:
        bands._fit_estimation_calibrator = fit
    fresh = vc.monitoring.monitor_bands(reference, watched, policy, other, n_chunks=3, n_resamples=20,
                                        rng=np.random.default_rng(0))
    assert [args[0] for args in fits] == [reference]  # the estimate's own map only, on the whole reference
    assert kept.frame.equals(fresh.frame)
    assert kept.reference_mean_sd == fresh.reference_mean_sd


@pytest.mark.slow
def test_band_coverage_without_drift_is_close_to_nominal_and_drift_raises_alerts():
    rng = np.random.default_rng(20261123)
    start = time.perf_counter()
    reference = draw(rng, 5000)
    policy = vc.Policy("threshold", threshold=0.7)
    steady = draw(rng, 300 * 200)
    out = vc.monitoring.monitor_bands(reference, steady, policy, USE_CASE, size=300)
    # 200 chunks of 300 items, no drift: the 95% band covers the realised value about 95% of the time
    coverage = out.backtest_coverage
    false_alerts = out.n_alerts / len(out.frame)
    false_drift = out.n_drift / len(out.frame)
    # drift: confidences fall (the model sees harder items) in 20 further chunks
    shifted = draw(rng, 300 * 20, low=0.5, high=0.85)
    drifted = vc.monitoring.monitor_bands(
        reference, {"steady": steady.subset(slice(0, 6000)), "shifted": shifted}, policy, USE_CASE, size=300
    )
    alerts = drifted.frame.groupby("split")[["alert", "drift"]].mean()
    print(
        f"{time.perf_counter() - start:.1f} s; coverage {coverage:.3f} over {out.n_backtest} chunks; "
        f"false alerts {false_alerts:.3f}; false drift {false_drift:.3f}; after drift:\n{alerts}"
    )
    assert out.n_backtest == 200
    assert 0.90 <= coverage <= 0.99
    assert false_alerts <= 0.05 and false_drift <= 0.05
    assert alerts.loc["shifted", "alert"] >= 0.9 and alerts.loc["shifted", "drift"] >= 0.9
    assert alerts.loc["steady", "alert"] <= 0.1


def _union_grid_ks_distance(reference, ref_weight, sample, weight):
    """The drift distance as first written: both ECDFs on every point of the union of the values."""
    grid = np.union1d(reference, sample)

    def ecdf(x, w):
        order = np.argsort(x, kind="stable")
        cum = np.cumsum(w[order]) / w.sum()
        index = np.searchsorted(x[order], grid, side="right")
        return np.where(index > 0, cum[np.maximum(index - 1, 0)], 0.0)

    return float(np.max(np.abs(ecdf(reference, ref_weight) - ecdf(sample, weight))))



@pytest.mark.heavy
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_drift_distance_on_a_reference_sorted_once_is_the_union_grid_distance_exactly(data):
    # few distinct values, so ties within and across the samples are common; weights 0 included
    grid_values = data.draw(st.lists(st.floats(0, 1), min_size=1, max_size=6, unique=True))
    values = st.sampled_from(grid_values)
    weights = st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, 1 / 3, 7.25])
    n_ref, n_sample = data.draw(st.integers(1, 30)), data.draw(st.integers(1, 30))
    reference = np.array(data.draw(st.lists(values, min_size=n_ref, max_size=n_ref)))
    sample = np.array(data.draw(st.lists(values, min_size=n_sample, max_size=n_sample)))
    ref_weight = np.array(data.draw(st.lists(weights, min_size=n_ref, max_size=n_ref)))
    weight = np.array(data.draw(st.lists(weights, min_size=n_sample, max_size=n_sample)))
    from helpers.core import weighted_ks
    from valuecore._monitor.bands import _SortedECDF, _ks_distance

    distance, _ = weighted_ks(reference, ref_weight, sample, weight)
    if ref_weight.sum() <= 0 or weight.sum() <= 0:
        assert np.isnan(distance)
        return
    expected = _union_grid_ks_distance(reference, ref_weight, sample, weight)
    assert distance == expected  # the same floats, not approximately
    assert _ks_distance(_SortedECDF(reference, ref_weight), _SortedECDF(sample, weight)) == expected


def test_drift_distance_at_scale_is_the_union_grid_distance_exactly():
    rng = np.random.default_rng(7)
    reference, sample = rng.uniform(size=20_000).round(3), rng.beta(3, 2, 3_000).round(4)
    ref_weight, weight = rng.uniform(0, 2, reference.size), rng.integers(0, 3, sample.size).astype(float)
    from helpers.core import weighted_ks

    assert weighted_ks(reference, ref_weight, sample, weight)[0] == _union_grid_ks_distance(
        reference, ref_weight, sample, weight
    )


def _bench_module():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_monitor_bands.py"
    spec = importlib.util.spec_from_file_location("bench_monitor_bands", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_false_alerts_stay_within_twice_the_claim_at_every_chunk_size():
    """Calibrated by construction, 5,000-item references: 1% false alerts claimed, at most 2% allowed.

    The mean squared alert score (1 when the band's width is right) pins the width itself: without the
    reference's own error it was about 1 + 20000/5000 = 5 at 20,000-item chunks.
    """
    bench = _bench_module()
    start = time.perf_counter()
    result = bench.simulate("use case", 12, np.random.default_rng(20261124), n_resamples=40)
    print(f"{time.perf_counter() - start:.1f} s; {result}")
    for size, (alert_rate, coverage, n, score, shift) in result.items():
        assert alert_rate <= 0.02, (size, alert_rate)
        assert 0.4 <= score <= 1.6, (size, score)
        assert coverage >= 0.8, (size, coverage)  # 24 chunks of 20,000 items: a loose check; the benchmark has more
        assert shift <= 0.15, (size, shift)  # without a shift the calibration-shift term hardly widens the band
    assert sum(n for _, _, n, _, _ in result.values()) == 12 * (20 + 6 + 2)


def test_the_positive_class_map_round_trips_and_serves_as_it_estimates():
    from valuecore.calibration import Calibrator

    cal = Calibrator("isotonic", {"x": [0.1, 0.5, 0.9], "y": [0.0, 0.3, 0.8], "positive_class": True})
    assert Calibrator.from_dict(cal.to_dict()) == cal and cal.to_dict()["positive_class"] is True
    assert "positive_class" not in Calibrator("isotonic", {"x": [0.5], "y": [0.5]}).to_dict()
    proba = np.array([[0.9, 0.1], [0.5, 0.5], [0.3, 0.7], [0.05, 0.95]])
    p = vc.Predictions.from_proba(proba, classes=["neg", "pos"])
    applied = cal.apply(p)
    assert applied.proba[:, 1].tolist() == pytest.approx([0.0, 0.3, 0.55, 0.8])
    assert cal.apply_confidence(p.confidence, proba=proba).tolist() == pytest.approx(applied.confidence.tolist())
    with pytest.raises(ValueError, match="two-column proba"):
        cal.apply_confidence(p.confidence)
