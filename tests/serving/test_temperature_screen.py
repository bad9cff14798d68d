"""`decide` with a temperature reads a float32 estimate and recomputes in float64 only near a threshold:
the same actions as `decisions`, whose confidence is the pipeline's float64 one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from valuecore import Predictions
from valuecore.calibration import Calibrator
from valuecore._serve.screen import estimated_temperature_confidence
from valuecore.serving import load_policy

ASSISTED = {"v_confirmed_correct": 0.5, "v_confirmed_wrong": -1.0, "cost": 0.25}


def served(kind: str, classes: list[str], temperature: float, threshold: float, lower: float):
    policy = {"kind": kind, "calibration": {"method": "temperature", "temperature": temperature,
                                            "use_logits": False}}
    if kind == "class_thresholds":
        policy["class_thresholds"] = {c: (threshold if k % 2 else lower) for k, c in enumerate(classes)}
    else:
        policy["threshold"] = threshold
    if kind == "two_tier":
        policy.update(assist_threshold=lower, assisted=ASSISTED)
    return load_policy({"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
                        "models": [{"model": "m", "classes": classes, "policy": policy}]})


def exact_confidence(proba, temperature):
    predictions = Predictions.from_proba(proba)
    return Calibrator("temperature", {"temperature": temperature, "use_logits": False}).apply(predictions).confidence


@pytest.mark.parametrize(("n_classes", "alpha", "temperature"),
                         [(2, 1.0, 0.5), (3, 0.01, 7.0), (10, 0.3, 0.8), (50, 0.2, 0.05), (300, 0.05, 0.3),
                          (10, 0.3, 1e5), (10, 0.3, 1e-6)])
def test_the_estimate_is_within_its_bound(n_classes, alpha, temperature):
    proba = np.random.default_rng(n_classes).dirichlet(np.full(n_classes, alpha), size=20_000)
    estimate, slack = estimated_temperature_confidence(proba, proba.max(axis=1), temperature)
    exact = exact_confidence(proba, temperature)
    assert np.all(np.abs(estimate - exact) <= slack)
    if temperature >= 0.05:  # the bound is tight enough that almost no row is recomputed
        assert np.all(slack <= 1e-3 * exact)
    else:  # a float32 estimate says nothing at T = 1e-6: every row is recomputed
        assert np.all(np.isinf(slack))


def ties_and_neighbours(confidence, rows):
    """Thresholds at exact recalibrated confidences and at the floats just above and below them."""
    chosen = confidence[rows]
    return np.concatenate([chosen, np.nextafter(chosen, 2.0), np.nextafter(chosen, -1.0)])


@pytest.mark.parametrize("kind", ["threshold", "class_thresholds", "two_tier"])
@pytest.mark.parametrize("temperature", [0.8, 2.5])
def test_decide_acts_as_decisions_at_ties(kind, temperature):
    rng = np.random.default_rng(7)
    classes = [f"c{k}" for k in range(6)]
    proba = rng.dirichlet(np.full(6, 0.4), size=5_000)
    proba[:50] = proba[50:100]  # repeated rows: ties in confidence
    confidence = exact_confidence(proba, temperature)
    for threshold in ties_and_neighbours(confidence, rng.choice(5_000, 4, replace=False)):
        policy = served(kind, classes, temperature, float(threshold), float(threshold) * 0.75)
        expected = policy.labels()[policy.decisions(proba).action]
        assert np.array_equal(policy.decide(proba), expected)


@settings(max_examples=40, deadline=None)
@given(n_classes=st.integers(2, 12), rows=st.integers(1, 300), alpha=st.sampled_from([0.05, 0.5, 3.0]),
       temperature=st.sampled_from([0.1, 0.5, 1.0, 1.7, 40.0]), pick=st.integers(0, 10**6),
       kind=st.sampled_from(["threshold", "class_thresholds", "two_tier"]), float32=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_decide_acts_as_decisions(n_classes, rows, alpha, temperature, pick, kind, float32, seed):
    proba = np.random.default_rng(seed).dirichlet(np.full(n_classes, alpha), size=rows)
    if float32:
        proba = proba.astype(np.float32)
    proba[rows // 2:] = np.round(proba[rows // 2:], 2)  # equal maxima, entries at 0
    proba /= proba.sum(axis=1, keepdims=True)
    classes = [f"c{k}" for k in range(n_classes)]
    threshold = float(exact_confidence(proba, temperature)[pick % rows])  # a tie with some row
    policy = served(kind, classes, temperature, threshold, threshold / 2)
    assert np.array_equal(policy.decide(proba), policy.labels()[policy.decisions(proba).action])
