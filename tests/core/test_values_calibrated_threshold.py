"""One float formula for the calibrated threshold: policies, VOC curves and acceptance limits agree.

The threshold ``omega / (1 + omega)`` can be written ``-g_w / (g_c - g_w)`` too; the two differ by an
ulp in about a third of use cases, and an item lying exactly on one of them was accepted by the
calibrated policy and refused by the calibrated VOC curve (issue 19, item 4a).
"""

from __future__ import annotations

import numpy as np
import pytest

import valuecore as vc
from valuecore.curves import acceptance_limits


def _random_use_cases(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        v_correct = float(rng.uniform(0.01, 10))
        v_abstain = float(rng.uniform(-1, 1)) if rng.uniform() < 0.5 else 0.0
        v_wrong = v_abstain - float(rng.uniform(0.001, 50))
        if v_correct > v_abstain:
            yield vc.UseCase(v_correct, v_abstain, v_wrong)


def _on_the_edges(use_case: vc.UseCase) -> list[float]:
    """Confidences lying exactly on either way of writing the threshold, and one ulp around."""
    g_c, g_w = use_case.v_correct - use_case.v_abstain, use_case.v_wrong - use_case.v_abstain
    other = -g_w / (g_c - g_w)
    omega = use_case.omega
    one = omega / (1 + omega)
    return sorted({other, one, np.nextafter(one, 0), np.nextafter(one, 1)})


def test_the_issue_example_agrees():
    use_case = vc.UseCase(8.176950185803168, 0, -0.23665115849038992)
    for confidence in _on_the_edges(use_case):
        p = vc.Predictions.from_top_label(["a", "a"], [confidence, 0.2], ["a", "b"], classes=["a", "b"])
        result = vc.evaluate(vc.fit_policy("calibrated_threshold", None, use_case), p, use_case)
        curve = vc.voc_curve(vc.presort(p), "calibrated")
        assert curve.value_at(use_case.omega) == pytest.approx(result.value_dimensionless, abs=1e-12)


@pytest.mark.heavy
def test_policy_voc_and_acceptance_limits_share_the_threshold():
    checked = 0
    for use_case in _random_use_cases(400):
        omega = use_case.omega
        threshold = use_case.calibrated_threshold
        edges = np.asarray(_on_the_edges(use_case))
        n = edges.size
        p = vc.Predictions.from_top_label(["a"] * n, edges, ["a"] * n, classes=["a", "b"])
        policy = vc.fit_policy("calibrated_threshold", None, use_case)
        accepted_by_policy = policy.decide(p, use_case.for_classes(p.classes)) != p.n_classes
        curve = vc.voc_curve(vc.presort(p), "calibrated")
        # every item is correct, so the VOC value counts the accepted items
        assert curve.value_at(omega) * n == pytest.approx(accepted_by_policy.sum(), abs=1e-9)
        # each limit is an omega whose calibrated threshold still accepts the confidence
        limits = acceptance_limits(edges)
        finite = np.isfinite(limits)
        assert np.all(limits[finite] / (1 + limits[finite]) <= edges[finite])
        assert np.array_equal(edges >= threshold, accepted_by_policy)
        checked += 1
    assert checked > 300
