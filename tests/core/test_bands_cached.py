"""The bands' bootstrap keeps what does not depend on the values (issue 33): the same bits as the slow reference.

``valuecore._monitor.bands._ReferenceBootstrap`` keeps, per reference and default seed, each copy's draws,
map and calibrated probabilities of every split, so that a new value only values them again. Every figure it
gives (each copy's reference value and estimate of every chunk, hence the bands, alerts and all columns of
``monitor_bands``) must equal, bit for bit, what the computation before the cache gives
(``tests/core/reference_bands.py``, where each copy's sums are taken from the items' means as the core takes
them since 2026-11-30; ``test_bands_values.py`` compares those sums with the dot and bincount they were): for
a simple use case (isotonic map of the top label, the fast two-term path), a binary value matrix (isotonic
map of P(positive)), a value matrix of three classes (temperature), no calibration, weights, a first call
and a call with kept copies. The comparison is of bits, so a change of 1e-12 in one item fails (checked below).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import valuecore as vc
from valuecore._monitor import bands

from reference_bands import SETTINGS, SlowReferenceBootstrap, frames_same, same_bits


def both(setting: str, seed: int, values, seeded: bool, reference, watched, policy, calibration):
    """(new, slow) bootstraps on the same data and draws; seeded: the new one under the kept default seed."""
    method = bands._estimation_method(reference, values, calibration)
    new = bands._ReferenceBootstrap(policy, reference, values, method, 12,
                                    np.random.default_rng(0 if seeded else seed), seeded)
    if seeded:  # the kept path ignores its rng; the slow one draws the default seed's copies again
        assert new._copies is bands._BOOTSTRAP_COPIES[(id(reference), method, 12)]
    slow = SlowReferenceBootstrap(policy, reference, values, method, 12,
                                  np.random.default_rng(0 if seeded else seed))
    return new, slow


def chunking(watched, n_chunks=5):
    return np.arange(watched.n) * n_chunks // watched.n, n_chunks


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("seed", [3, 11])
def test_each_copy_gives_the_bits_of_the_computation_before_the_cache(setting, seed):
    make, policy, (first, second), calibration = SETTINGS[setting]
    reference, watched = make(np.random.default_rng(seed))
    # an explicit rng (nothing kept), then the default seed: first call draws and keeps, second reuses
    for values, seeded in ((first, False), (first, True), (second, True), (first, True)):
        new, slow = both(setting, seed, values, seeded, reference, watched, policy, calibration)
        assert same_bits(new.mu, slow.mu)
        rows, n_chunks = chunking(watched)
        assert same_bits(new.estimates(watched, rows, n_chunks), slow.estimates(watched, rows, n_chunks))
        assert same_bits(new.estimates(reference, *chunking(reference, 3)),
                         slow.estimates(reference, *chunking(reference, 3)))


def slow_bands(monkeypatch, *args, **kwargs):
    with monkeypatch.context() as patched:
        patched.setattr(bands, "_ReferenceBootstrap", SlowReferenceBootstrap)
        return vc.monitoring.monitor_bands(*args, **kwargs)


@pytest.mark.parametrize("setting", ["use case, ten classes, weighted", "binary matrix, isotonic of P(positive)",
                                     "three-class matrix, temperature", "use case, no calibration"])
def test_every_column_of_the_bands_is_the_slow_references_at_each_new_value(monkeypatch, setting):
    make, policy, (first, second), calibration = SETTINGS[setting]
    reference, watched = make(np.random.default_rng(5))
    splits = {"watched": watched, "reference again": reference}
    for values in (first, second, first):  # the second and third calls read the kept copies
        new = vc.monitoring.monitor_bands(reference, splits, policy, values, n_chunks=4, n_resamples=12,
                                          calibration=calibration)
        slow = slow_bands(monkeypatch, reference, splits, policy, values, n_chunks=4, n_resamples=12,
                          calibration=calibration, rng=np.random.default_rng(0))
        assert frames_same(new.frame, slow.frame)
        assert same_bits(new.reference_mean_sd, slow.reference_mean_sd)
        assert new.n_resamples == slow.n_resamples == 12
    assert new.frame["estimated_value_per_item"].notna().all()


def test_the_fallbacks_give_the_same_bits(monkeypatch):
    """Split too large to keep (recomputed per call), and an einsum that fuses multiply and add (truth rebuilt)."""
    make, policy, (first, second), _ = SETTINGS["use case, ten classes, weighted"]
    reference, watched = make(np.random.default_rng(7))
    rows, n_chunks = chunking(watched)
    for kept_floats, fast in ((0, True), (bands._KEPT_FLOATS, False), (0, False)):
        with monkeypatch.context() as patched:
            patched.setattr(bands, "_KEPT_FLOATS", kept_floats)
            patched.setattr(bands, "_two_terms_add_as_einsum", lambda fast=fast: fast)
            bands._BOOTSTRAP_COPIES.clear()
            for values in (first, second):
                new, slow = both("", 7, values, True, reference, watched, policy, "auto")
                assert (new._copies._split_state(watched, 10)[2] is None) == (kept_floats == 0)
                assert same_bits(new.mu, slow.mu)
                assert same_bits(new.estimates(watched, rows, n_chunks), slow.estimates(watched, rows, n_chunks))
    bands._BOOTSTRAP_COPIES.clear()


def test_the_two_term_sum_is_einsums_on_this_machine():
    """The fast path is the one taken here (else the check above tests only the fallback)."""
    assert bands._two_terms_add_as_einsum()


def test_the_comparison_sees_a_change_no_tolerance_would(monkeypatch):
    """A new path off by 1e-12 in one chunk's sum of one copy fails the comparison the tests above make, where a
    comparison with pytest.approx's tolerance would pass it."""
    make, policy, (first, _), _ = SETTINGS["use case, two classes, top label"]
    reference, watched = make(np.random.default_rng(9))
    chunk_values = bands._Copies.chunk_values

    def nudged(self, predictions, *args):
        out = chunk_values(self, predictions, *args)
        if predictions is watched:
            out = out.copy()
            out[4, 1] += 1e-12
        return out

    monkeypatch.setattr(bands._Copies, "chunk_values", nudged)
    new, slow = both("", 9, first, False, reference, watched, policy, "auto")
    rows, n_chunks = chunking(watched)
    assert same_bits(new.mu, slow.mu)
    changed, before = new.estimates(watched, rows, n_chunks), slow.estimates(watched, rows, n_chunks)
    assert not same_bits(changed, before)
    assert changed == pytest.approx(before)


def test_kept_chunks_and_drift_tests_give_what_fresh_objects_give():
    """chunk_predictions gives the same chunk objects for the same run and chunking (so the drift test and the
    sorted chunks are kept per object); the bands and monitor's frame are those of fresh copies of the data."""
    from dataclasses import replace

    make, policy, (first, second), _ = SETTINGS["use case, ten classes, weighted"]
    reference, watched = make(np.random.default_rng(13))
    chunks = vc.monitoring.chunk_predictions(watched, n_chunks=4)
    again = vc.monitoring.chunk_predictions(watched, n_chunks=4)
    assert again is not chunks and all(a is b for a, b in zip(chunks, again)) and len(again) == 4
    assert vc.monitoring.chunk_predictions(watched, n_chunks=5)[0] is not chunks[0]
    for values in (first, second):
        kept = vc.monitoring.monitor_bands(reference, watched, policy, values, n_chunks=4, n_resamples=4)
        fresh = vc.monitoring.monitor_bands(replace(reference), replace(watched), policy, values, n_chunks=4,
                                            n_resamples=4)
        assert frames_same(kept.frame, fresh.frame)
        assert frames_same(vc.monitoring.monitor(watched, policy, values, n_chunks=4),
                           vc.monitoring.monitor(replace(watched), policy, values, n_chunks=4))


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("setting", ["use case, two classes, top label", "use case, ten classes, weighted",
                                     "use case, three classes, continuous"])
def test_expected_item_values_of_the_top_label_are_the_truths_einsum(monkeypatch, setting, fast):
    """Both moments of every item under the top-label map, without the (n, C) truth: the einsum's bits."""
    make, policy, values_pair, _ = SETTINGS[setting]
    reference, watched = make(np.random.default_rng(17))
    calibrator = bands._fit_estimation_calibrator(reference, "isotonic")
    monkeypatch.setattr(bands, "_two_terms_add_as_einsum", lambda: fast)
    for values in values_pair:
        matrix = values.for_classes(watched.classes)
        mean, variance = bands.expected_item_values(policy, watched, values, calibrator)
        slow_mean, slow_variance = bands._moments(bands._truth(calibrator.apply(watched), matrix),
                                                  bands._outcomes(policy, watched, matrix))
        assert same_bits(mean, slow_mean) and same_bits(variance, slow_variance)


# ---- monitor_estimates: the estimate alone (the Monitor page's back-test shows no band), issue 33
# Bit for bit the estimate column of monitor_bands: every setting above, several splits at once, time periods,
# and a chunk of no weight (left out by both).
def _estimates_and_bands(reference, analysis, policy, values, calibration, **how):
    bands = vc.monitoring.monitor_bands(reference, analysis, policy, values, calibration=calibration,
                                        n_resamples=2, **how).frame
    alone = vc.monitoring.monitor_estimates(reference, analysis, policy, values, calibration=calibration, **how)
    return bands, alone


def _assert_same_estimates(bands: pd.DataFrame, alone: pd.DataFrame) -> None:
    assert list(alone.columns) == list(vc.monitoring.ESTIMATE_COLUMNS)
    for column in ("split", "chunk", "start", "end"):
        assert alone[column].tolist() == bands[column].tolist(), column
    for column in ("n", "estimated_value_per_item"):
        assert same_bits(alone[column].to_numpy(), bands[column].to_numpy()), column


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_the_estimate_alone_is_the_bands_estimate_bit_for_bit(setting):
    make, policy, values_pair, calibration = SETTINGS[setting]
    reference, watched = make(np.random.default_rng(5))
    for values in values_pair:
        splits = {"test": watched, "again": watched.subset(slice(0, 120))}
        _assert_same_estimates(*_estimates_and_bands(reference, splits, policy, values, calibration, n_chunks=4))


def test_periods_and_a_chunk_of_no_weight():
    rng = np.random.default_rng(2)
    n = 400
    conf = rng.uniform(0.4, 1.0, n)
    truth = np.where(rng.uniform(size=n) < conf, "a", "b")
    times = np.datetime64("2024-01-01") + rng.integers(0, 21, n).astype("timedelta64[D]")
    weight = rng.integers(1, 3, n).astype(float)
    weight[(times >= np.datetime64("2024-01-08")) & (times < np.datetime64("2024-01-15"))] = 0.0  # a week of none
    run = vc.Predictions.from_top_label(["a"] * n, conf, truth, classes=["a", "b"], sample_weight=weight,
                                        timestamp=times)
    reference = vc.Predictions.from_top_label(["a"] * 300, rng.uniform(0.4, 1.0, 300),
                                              np.where(rng.uniform(size=300) < 0.7, "a", "b"), classes=["a", "b"])
    policy = vc.Policy("threshold", threshold=0.65)
    bands, alone = _estimates_and_bands(reference, run, policy, vc.UseCase(1, 0, -3), "auto", period="W")
    assert len(alone) < len(vc.monitoring.chunk_predictions(run, period="W"))  # the chunk of no weight is out
    _assert_same_estimates(bands, alone)


def test_the_comparison_sees_one_changed_bit():
    make, policy, (values, _), calibration = SETTINGS["use case, ten classes, weighted"]
    reference, watched = make(np.random.default_rng(5))
    bands, alone = _estimates_and_bands(reference, watched, policy, values, calibration, n_chunks=3)
    changed = alone.copy()
    changed.loc[1, "estimated_value_per_item"] = np.nextafter(changed.loc[1, "estimated_value_per_item"], np.inf)
    with pytest.raises(AssertionError):
        _assert_same_estimates(bands, changed)


def test_the_same_refusals_as_the_bands():
    make, policy, (values, _), _ = SETTINGS["use case, two classes, top label"]
    reference, watched = make(np.random.default_rng(1))
    with pytest.raises(ValueError, match="two_tier"):
        vc.monitoring.monitor_estimates(reference, watched, vc.Policy("two_tier", threshold=0.5), values, n_chunks=2)
    with pytest.raises(TypeError, match="Policy"):
        vc.monitoring.monitor_estimates(reference, watched, "threshold", values, n_chunks=2)
