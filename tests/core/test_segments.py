"""Thresholds per segment with fairness caps: the fit is the exhaustive optimum in exact fractions
(``reference_segments.py``), its thresholds hold the caps, and without caps each segment's threshold is the
single-threshold fit on its own items."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_segments as refs
import valuecore as vc
from valuecore.constraints import CAP_TOLERANCE, SegmentCaps, SegmentPolicy, evaluate_segments, fit_segments

CLASSES = ("a", "b")
RATE_CAPS = (None, 0.0, 0.125, 0.25, 1 / 3, 0.5)
VALUE_CAPS = (None, 0.0, 0.25, 0.5, 1.0, 2.0)


@st.composite
def segment_cases(draw):
    n_segments = draw(st.integers(2, 3))
    names = ["n", "s", "e"][:n_segments]
    items = []
    for name in names:
        for _ in range(draw(st.integers(1, 4))):
            items.append(refs.Item(
                segment=name,
                confidence=draw(st.sampled_from((0.5, 0.6, 0.7, 0.8, 0.9, 1.0))),
                predicted=draw(st.integers(0, 1)),
                truth=draw(st.integers(0, 1)),
                weight=draw(st.integers(1, 3)),
            ))
    matrices = {}
    for name in names:
        if draw(st.booleans()):  # a use case: correct, abstain, wrong
            correct, abstain, wrong = draw(st.sampled_from(((1, 0, -1), (1, 0, -4), (2, 1, -20), (1, 0, -1000))))
            matrices[name] = [[correct, wrong, abstain], [wrong, correct, abstain]]
        else:  # a matrix whose abstain value depends on the true class
            matrices[name] = [[draw(st.integers(0, 3)), draw(st.integers(-5, 0)), draw(st.integers(-1, 1))],
                              [draw(st.integers(-5, 0)), draw(st.integers(0, 3)), draw(st.integers(-1, 1))]]
    caps = {"handoff_gap": draw(st.sampled_from(RATE_CAPS)), "error_gap": draw(st.sampled_from(RATE_CAPS)),
            "value_gap": draw(st.sampled_from(VALUE_CAPS))}
    return items, names, matrices, {k: v for k, v in caps.items() if v is not None}


def as_run(items):
    p = vc.Predictions.from_top_label(
        [CLASSES[i.predicted] for i in items], [i.confidence for i in items], [CLASSES[i.truth] for i in items],
        classes=CLASSES, sample_weight=[float(i.weight) for i in items],
    )
    return p, [i.segment for i in items]


def as_values(matrices):
    return {s: vc.ValueMatrix(CLASSES, np.array(m, dtype=float)) for s, m in matrices.items()}


def tolerances(matrices):
    scale = max([1] + [abs(v) for m in matrices.values() for row in m for v in row])
    return {"handoff_gap": CAP_TOLERANCE, "error_gap": CAP_TOLERANCE, "value_gap": CAP_TOLERANCE * scale}


@pytest.mark.heavy  # about 25 s: 300 runs, each against every combination of thresholds
@settings(max_examples=300)
@given(segment_cases())
def test_the_capped_fit_is_the_exhaustive_optimum_in_fractions(case):
    items, names, matrices, caps = case
    p, segments = as_run(items)
    fit = fit_segments(p, segments, as_values(matrices), caps=SegmentCaps(**caps))
    tol = tolerances(matrices)
    best, free = refs.brute_force(items, names, matrices, caps, tol)
    assert fit.exact
    assert fit.unconstrained_value_total == float(free)
    assert fit.feasible == (best is not None)
    if best is None:
        return
    chosen = dict(fit.policy.thresholds)
    figures = [refs.segment_figures(items, s, chosen[s], matrices[s]) for s in names]
    refs.check_optimum(fit, names, figures, best, free, caps, tol)


@settings(max_examples=100)
@given(segment_cases())
def test_without_caps_each_segment_gets_its_own_single_threshold_fit(case):
    items, names, matrices, _ = case
    p, segments = as_run(items)
    values = as_values(matrices)
    fit = fit_segments(p, segments, values)
    labels = np.array(segments)
    for s in names:
        own = vc.fit_policy("threshold", vc.presort(p.subset(labels == s)), values[s])
        assert fit.policy.threshold_for(s) == own.threshold
    assert fit.cap_cost_per_item == 0 and fit.feasible and fit.exact


def small_run():
    p = vc.Predictions.from_top_label(["a"] * 6, [0.9, 0.8, 0.6, 0.9, 0.7, 0.6], ["a", "a", "b", "a", "b", "a"],
                                      classes=["a", "b"])
    return p, ["x", "x", "x", "y", "y", "y"]


def test_caps_that_no_choice_holds_are_reported_not_raised():
    p, segments = small_run()
    # Abstaining is worth 0 in x and 2 in y: over every pair of thresholds the values per item stay at least 1 apart
    values = {"x": vc.UseCase(1, 0, -10), "y": vc.UseCase(3, 2, -10)}
    fit = fit_segments(p, segments, values, caps=SegmentCaps(value_gap=0.5))
    assert not fit.feasible
    assert np.isnan(fit.value_total) and np.isnan(fit.cap_cost_per_item)
    assert fit.policy.thresholds == fit.unconstrained.thresholds


def test_the_cap_cost_is_in_the_values_currency_per_item():
    p, segments = small_run()
    fit = fit_segments(p, segments, vc.UseCase(100, 0, -100), caps=SegmentCaps(handoff_gap=0))
    # without caps x earns 200 (0.8) and y 100 (0.9); hand-offs equal: 100 + 100 at best
    assert fit.unconstrained_value_total == 300 and fit.value_total == 200
    assert fit.cap_cost_per_item == pytest.approx(100 / 6)


def test_weights_count_as_repeated_items():
    p, segments = small_run()
    w = np.array([1, 2, 1, 3, 1, 2])
    weighted = vc.Predictions.from_top_label(p.classes[0:1] * 6, p.confidence, np.array(p.classes)[p.y_true],
                                             classes=p.classes, sample_weight=w)
    rows = np.repeat(np.arange(6), w)
    repeated = p.subset(rows)
    caps = SegmentCaps(handoff_gap=0.2, error_gap=0.3)
    a = fit_segments(weighted, segments, vc.UseCase(1, 0, -3), caps=caps)
    b = fit_segments(repeated, np.array(segments)[rows], vc.UseCase(1, 0, -3), caps=caps)
    assert a.policy.thresholds == b.policy.thresholds and a.value_total == b.value_total


def test_too_small_segments_are_flagged_and_intervals_and_bounds_come_per_segment():
    rng = np.random.default_rng(3)
    n = 400
    segments = np.where(np.arange(n) < 380, "big", "tiny")
    confidence = rng.uniform(0.5, 1, n)
    truth = np.where(rng.uniform(size=n) < confidence, "a", "b")
    p = vc.Predictions.from_top_label(["a"] * n, confidence, truth, classes=["a", "b"])
    fit = fit_segments(p, segments, vc.UseCase(1, 0, -2))
    big, tiny = fit.evaluation.standing("big"), fit.evaluation.standing("tiny")
    assert not big.too_small and tiny.too_small
    assert big.interval.low <= big.value_per_item <= big.interval.high
    assert big.risk_upper_bound >= big.selective_risk
    same = vc.uncertainty.policy_interval(vc.Policy("threshold", threshold=big.threshold),
                                          p.subset(segments == "big"), vc.UseCase(1, 0, -2))
    assert (same.low, same.high) == (big.interval.low, big.interval.high)


def test_unseen_segments_are_handed_off_and_bad_labels_name_the_rows():
    policy = SegmentPolicy((("x", 0.5), ("y", None)), column="region")
    p = vc.Predictions.from_top_label(["a"] * 4, [0.9, 0.9, 0.9, 0.4], classes=["a", "b"])
    assert policy.decide(p, ["x", "y", "z", "x"]).tolist() == [0, 2, 2, 2]
    with pytest.raises(ValueError, match=r"region is empty at rows 1, 3"):
        policy.decide(p, ["x", None, "x", " "])
    labelled = vc.Predictions.from_top_label(["a"] * 4, [0.9, 0.9, 0.9, 0.4], ["a"] * 4, classes=["a", "b"])
    evaluation = evaluate_segments(policy, labelled, ["x", "y", "z", "x"], vc.UseCase(1, 0, -1))
    assert evaluation.n_unseen == 1 and evaluation.standing("z").threshold is None
    with pytest.raises(ValueError, match=r"no values for the segments \['y'\]"):
        fit_segments(labelled, ["x", "y", "x", "x"], {"x": vc.UseCase(1, 0, -1)})
