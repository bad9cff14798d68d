"""Predictions and the presorted run against the slow references of ``tests/core/reference.py``.

Hypothesis draws runs (ties, weights with zeros, 2 to 10 classes, empty runs); the exact
reference is computed in Fractions (see ``helpers.engine_reference``).
"""

from __future__ import annotations

import pytest
import reference as ref
from helpers.engine_reference import SETTINGS, build, close
from hypothesis import given, settings

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it


# ---------------------------------------------------------------------------- input
@settings(max_examples=60, **SETTINGS)
@given(ref.cases())
def test_predictions_follow_the_definitions(case):
    p, run, _, r, _ = build(case)
    assert p.y_pred.tolist() == r.y_pred
    assert p.confidence.tolist() == r.conf
    assert close(p.total_weight, r.total, case.scale())
    assert close(run.total_weight, r.total, case.scale())
    if case.n and r.total > 0:
        assert close(p.accuracy, ref.accuracy(r), 1.0)
    # the candidate thresholds are exactly the distinct confidences, decreasing
    assert run.thresholds.tolist() == ref.candidates(r)[1:]
