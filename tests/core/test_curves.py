"""Threshold, risk-coverage and discrimination curves (``valuecore/_engine/curves.py``) against
the exact references of ``tests/core/reference.py``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import reference as ref
from helpers.engine_reference import SETTINGS, build, close, label_free_values
from hypothesis import example, given, settings
from hypothesis import strategies as st

import valuecore as vc

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it


# -------------------------------------------------------------------------- curves
@settings(max_examples=100, **SETTINGS)
@given(ref.case_and_values())
def test_threshold_curve_labelled(case_vals):
    case, vals = case_vals
    _, run, values, r, M = build(case, vals)
    curve = vc.threshold_curve(run, values)
    rows = ref.threshold_curve(r, M)
    assert not curve.estimated
    assert len(curve.thresholds) == len(rows)
    assert math.isnan(curve.thresholds[0])
    for k, row in enumerate(rows):
        if k:
            assert curve.thresholds[k] == row["threshold"]
        for field in ("value_total", "value_per_item", "coverage", "n_correct", "n_wrong"):
            assert close(getattr(curve, field)[k], row[field], case.scale(vals)), (field, k)
    if case.exact and vals.exact:
        best = max(row["value_total"] for row in rows)
        assert curve.best_index == [row["value_total"] for row in rows].index(best)
    frame = curve.to_frame(max_points=None)
    assert len(frame) == len(rows)


@settings(max_examples=80, **SETTINGS)
@given(ref.cases().flatmap(lambda c: st.tuples(st.just(c), label_free_values(c))))
def test_threshold_curve_label_free(case_vals):
    case, vals = case_vals
    unlabeled = case.replace(y_true=None)
    _, run, values, r, M = build(unlabeled, vals)
    labelled_run = vc.presort(case.predictions())
    for curve in (vc.threshold_curve(run, values), vc.threshold_curve(labelled_run, values, estimate=True)):
        assert curve.estimated and curve.n_correct is None
        rows = ref.threshold_curve(r, M, estimate=True)
        for k, row in enumerate(rows):
            for field in ("value_total", "value_per_item", "coverage"):
                assert close(getattr(curve, field)[k], row[field], case.scale(vals)), (field, k)


@settings(max_examples=100, **SETTINGS)
@given(ref.cases())
# Found by exploration: a row summing to 1 within round-off holds 1.0000000000000002; confidences are capped at 1.
@example(case=ref.Case(n_classes=3, y_pred=[0] * 6, conf=[0.6666666666666666] * 5 + [1.0], y_true=[0] * 6,
                       weight=None, proba=[[0.6666666666666666, 0.3333333333333333, 0.0]] * 5
                       + [[1.0000000000000002, 0.0, 0.0]], exact=False))
def test_risk_coverage_curve_and_aurc(case):
    _, run, _, r, _ = build(case)
    rc = vc.curves.risk_coverage_curve(run)
    want = ref.risk_coverage(r)
    assert rc.thresholds.tolist() == want["thresholds"]
    for got, exp in zip(rc.risk.tolist(), want["risk"]):
        assert close(got, exp)
    for got, exp in zip(rc.coverage.tolist(), want["coverage"]):
        assert close(got, exp)
    assert close(rc.aurc, want["aurc"])


# ------------------------------------------------------------ discrimination, histogram
@settings(max_examples=60, **SETTINGS)
@given(ref.cases(), st.integers(1, 25))
def test_discrimination_and_confidence_histogram(case, bins):
    p, _, _, r, _ = build(case)
    want = ref.discrimination(r)
    got = vc.curves.discrimination(p)
    if isinstance(want, float) and math.isnan(want):
        assert math.isnan(got)
    else:
        assert close(got, want)
    frame = vc.curves.confidence_histogram(p, bins=bins)
    assert len(frame) == 2 * bins
    correct = frame[frame.outcome == "correct"]
    wrong = frame[frame.outcome == "wrong"]
    starts, ends = correct.bin_start.tolist(), correct.bin_end.tolist()
    assert starts[0] == 0.0 and ends[-1] == 1.0 and starts[1:] == ends[:-1]
    counted = ref.histogram(r, starts, ends)
    for got_c, want_c in zip(correct["count"].tolist(), counted["correct"]):
        assert close(got_c, want_c, case.scale())
    for got_w, want_w in zip(wrong["count"].tolist(), counted["wrong"]):
        assert close(got_w, want_w, case.scale())
    total = r.total
    assert close(frame["count"].sum(), total, case.scale())
    if total > 0:
        assert close(frame["share"].sum(), 1)
        n_correct = sum(counted["correct"], Fraction(0))
        assert close(correct["share"].sum(), n_correct / total)
