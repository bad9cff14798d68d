"""What a new value on the Monitor page no longer computes twice gives the bits it gave (issue 33, sixth pass).

* ``monitor(..., estimated=False)``: the frame without monitor's own estimate (the page puts the bands' in) is, in
  every other column, the frame with it, bit for bit, and refuses what it refuses in the same words;
* monitor's realised value is ``evaluate`` of the chunk, bit for bit (it now reuses the actions decided for
  the coverage);
* ``monitor_bands`` takes each chunk's outcomes once for the calibrated and the raw estimate, and the
  reference's once for its moments and the bootstrap: its estimate, calibration-shift term and reference value
  are those of ``expected_item_values`` called on its own, as before.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._monitor import bands

ESTIMATE_COLUMNS = ("estimated_value_total", "estimated_value_per_item")


def same_bits(a, b) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


def assert_same_frames_but_the_estimate(without: pd.DataFrame, full: pd.DataFrame) -> None:
    assert list(without.columns) == list(full.columns) and without.dtypes.equals(full.dtypes)
    for column in full.columns:
        if column in ESTIMATE_COLUMNS:
            assert without[column].isna().all(), column
        elif full[column].dtype.kind == "f":
            assert same_bits(without[column], full[column]), column
        else:
            assert without[column].tolist() == full[column].tolist(), column


@st.composite
def monitored_runs(draw):
    """A run (probabilities or top label only, labelled or not, weighted or not, timestamps or not), a policy,
    values (a use case or a matrix) and a chunking."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 400))
    n_classes = draw(st.integers(2, 4))
    proba = np.round(rng.dirichlet(np.ones(n_classes) * draw(st.sampled_from([0.3, 1.0, 5.0])), n), 3)
    proba[np.arange(n), proba.argmax(axis=1)] += 1.0 - proba.sum(axis=1)
    labels = rng.integers(0, n_classes, n) if draw(st.booleans()) else None
    weight = rng.integers(0, 4, n).astype(float) * draw(st.sampled_from([1.0, 0.37])) if draw(st.booleans()) else None
    if weight is not None and weight.sum() == 0:
        weight[0] = 1.0
    times = (pd.Timestamp("2026-01-05") + pd.to_timedelta(np.sort(rng.integers(0, 40 * 86_400, n)), unit="s")
             if draw(st.booleans()) else None)
    if draw(st.booleans()):
        run = vc.Predictions.from_proba(proba, y_true=labels, sample_weight=weight, timestamp=times)
    else:
        top = proba.argmax(axis=1)
        run = vc.Predictions.from_top_label([str(c) for c in top], proba.max(axis=1),
                                            None if labels is None else [str(c) for c in labels],
                                            classes=[str(c) for c in range(n_classes)], sample_weight=weight,
                                            timestamp=times)
    kind = draw(st.sampled_from(["threshold", "accept_all", "expected_value", "class_thresholds"]))
    if draw(st.booleans()):
        values = vc.UseCase(1, draw(st.sampled_from([0.0, -0.5])), draw(st.sampled_from([-1.0, -4.0, -20.0])))
    else:
        matrix = rng.normal(size=(n_classes, n_classes + 1)).round(2)
        matrix[:, -1] = 0.0
        values = vc.ValueMatrix(tuple(run.classes), matrix)
    how = draw(st.sampled_from([{"n_chunks": 1}, {"n_chunks": 3}, {"size": 7}] + ([{"period": "W"}] if times is not None
                                                                                    else [])))
    return run, kind, values, how, draw(st.booleans())


def policy_for(run, kind: str, values):
    if kind == "threshold":
        return vc.Policy("threshold", threshold=float(np.quantile(run.confidence, 0.4)))
    if kind == "class_thresholds":
        thresholds = np.linspace(0.3, 0.7, run.n_classes)
        return vc.Policy("class_thresholds", class_thresholds=dict(zip(run.classes, thresholds)))
    return vc.Policy(kind)


def outcome_of(call):
    """(the result, None) or (None, (type, message)) of a call."""
    try:
        return call(), None
    except (ValueError, TypeError) as error:
        return None, (type(error), str(error))


@settings(max_examples=120, deadline=None)
@given(monitored_runs())
def test_the_frame_without_the_estimate_is_the_frame_with_it_but_for_the_estimate(case):
    run, kind, values, how, retune = case
    policy = policy_for(run, kind, values)
    full, refused = outcome_of(lambda: vc.monitoring.monitor(run, policy, values, retune=retune, **how))
    without, refused_too = outcome_of(lambda: vc.monitoring.monitor(run, policy, values, retune=retune,
                                                                    estimated=False, **how))
    assert refused_too == refused  # the same refusal, in the same words, or none
    if refused is None:
        assert_same_frames_but_the_estimate(without, full)


def test_refusals_without_the_estimate_are_the_estimate_s():
    """The refusals estimate() makes (which the frame without it must still make): a value matrix on a run of top
    labels of three classes, a two-tier policy."""
    run = vc.Predictions.from_top_label(["a", "b", "c"] * 4, [0.9, 0.6, 0.7] * 4, ["a", "c", "c"] * 4,
                                        classes=["a", "b", "c"])
    matrix = vc.ValueMatrix(("a", "b", "c"), np.array([[1.0, -1, -2, 0], [-3, 1, -1, 0], [-1, -1, 2, 0]]))
    two_tier = vc.Policy("two_tier", threshold=0.8, assist_threshold=0.6,
                         assisted={"v_confirmed_correct": 0.9, "v_confirmed_wrong": -0.5, "cost": 0.1})
    cases = [(vc.Policy("threshold", threshold=0.65), matrix), (two_tier, vc.UseCase(1, 0, -4))]
    for policy, values in cases:
        full, refused = outcome_of(lambda: vc.monitoring.monitor(run, policy, values, n_chunks=2))
        _, refused_too = outcome_of(lambda: vc.monitoring.monitor(run, policy, values, n_chunks=2, estimated=False))
        assert refused is not None and refused_too == refused


def test_the_realised_value_is_evaluate_s_bit_for_bit():
    rng = np.random.default_rng(3)
    proba = rng.dirichlet(np.ones(5), 3_000)
    run = vc.Predictions.from_proba(proba, y_true=rng.integers(0, 5, 3_000), sample_weight=rng.uniform(0, 3, 3_000))
    values = vc.UseCase(1, -0.1, -4)
    per_class = dict(zip(run.classes, [0.3, 0.4, 0.5, 0.6, 0.7]))
    for policy in (vc.Policy("threshold", threshold=0.45), vc.Policy("class_thresholds", class_thresholds=per_class)):
        for estimated in (True, False):
            frame = vc.monitoring.monitor(run, policy, values, n_chunks=7, estimated=estimated)
            for chunk, row in zip(vc.monitoring.chunk_predictions(run, n_chunks=7), frame.itertuples()):
                realised = vc.evaluate(policy, chunk.predictions, values).value_total
                assert same_bits(row.realised_value_total, realised)
                assert same_bits(row.realised_value_per_item, realised / chunk.predictions.total_weight)


@pytest.mark.parametrize("calibration", ["auto", "none"])
@pytest.mark.parametrize("top_label", [False, True])
def test_the_bands_value_each_outcome_once_with_the_bits_of_expected_item_values(calibration, top_label):
    rng = np.random.default_rng(11)
    n, n_classes = 4_000, 4
    proba = np.round(rng.dirichlet(np.ones(n_classes) * 0.6, 2 * n), 3)
    proba[np.arange(2 * n), proba.argmax(axis=1)] += 1.0 - proba.sum(axis=1)
    labels = rng.integers(0, n_classes, 2 * n)
    if top_label:
        classes = [str(c) for c in range(n_classes)]
        run = vc.Predictions.from_top_label([str(c) for c in proba.argmax(axis=1)], proba.max(axis=1),
                                            [str(c) for c in labels], classes=classes)
    else:
        run = vc.Predictions.from_proba(proba, y_true=labels, sample_weight=rng.uniform(0.5, 2, 2 * n))
    reference, watched = run.subset(slice(0, n)), run.subset(slice(n, 2 * n))
    policy = vc.Policy("threshold", threshold=0.5)
    for values in (vc.UseCase(1, 0, -4), vc.UseCase(1, -0.2, -9)):
        result = vc.monitoring.monitor_bands(reference, watched, policy, values, n_chunks=5, n_resamples=10,
                                             calibration=calibration)
        method = bands._estimation_method(reference, values, calibration)
        calibrator, _ = bands._estimation_calibrator(reference, values, method)
        mu, sd = bands._reference_moments(policy, reference, values, calibrator)  # its own outcomes, as before
        assert same_bits(result.reference_value_per_item, mu) and same_bits(result.reference_sd, sd)
        chunks = vc.monitoring.chunk_predictions(watched, n_chunks=5)
        for chunk, row in zip(chunks, result.frame.itertuples()):
            p = chunk.predictions
            weight = p.sample_weight
            total = float(weight.sum())
            mean, _ = vc.monitoring.expected_item_values(policy, p, values, calibrator)
            estimated = float(mean @ weight / total)
            raw = float(vc.monitoring.expected_item_values(policy, p, values, None)[0] @ weight / total)
            shift = row.drift_statistic * abs(estimated - raw) if calibrator.method != "none" else 0.0
            assert same_bits(row.estimated_value_per_item, estimated)
            assert same_bits(row.calibration_shift, shift)
            assert math.isfinite(row.band_low) and row.band_low <= estimated <= row.band_high
