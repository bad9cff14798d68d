"""The seeded study of thresholds per segment (benchmarks/bench_segments.py): on every fitted run the caps hold
on the fitting items, where they are promised; how far the gaps drift on fresh items is printed, not promised.
Also checks the study's instrument: its calibrated segment is calibrated."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import valuecore as vc
from valuecore.constraints import SegmentCaps, fit_segments

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_segments as study  # noqa: E402

pytestmark = pytest.mark.slow


def test_the_caps_hold_on_every_fitted_run_and_the_drift_on_fresh_items_is_reported(capsys):
    rows = study.study(seeds=range(5), n_fit=600, n_fresh=600)
    assert len(rows) == len(study.OMEGAS) * len(study.CAPS) * 5
    for r in rows:
        values = vc.UseCase.from_omega(r.omega)
        assert r.feasible and r.exact, r
        assert r.fit_gap <= r.limit + study.tolerance(r.cap, values), r
        assert r.cap_cost_per_item >= 0, r
    with capsys.disabled():
        print("\nomega cap limit runs held_fit held_fresh median_fresh_gap largest_fresh_gap mean_cost")
        for line in study.summary(rows):
            print(" ".join(f"{x:.4g}" if isinstance(x, float) else str(x) for x in line[:9]))


def test_several_caps_at_once_hold_on_the_fitting_items():
    for seed in range(3):
        run, segments = study.draw(np.random.default_rng([7, seed]), 400)
        caps = SegmentCaps(handoff_gap=0.1, error_gap=0.05)
        fit = fit_segments(run, segments, vc.UseCase.from_omega(20), caps=caps)
        assert fit.feasible
        assert fit.evaluation.handoff_gap <= 0.1 + 1e-9 and fit.evaluation.error_gap <= 0.05 + 1e-9


def test_the_studys_calibrated_segment_is_calibrated_and_the_others_are_not():
    run, segments = study.draw(np.random.default_rng(99), 60_000)
    gaps = {}
    for name in np.unique(segments):
        mine = segments == name
        gaps[name] = float(run.correct[mine].mean() - run.confidence[mine].mean())
    assert abs(gaps["large_calibrated"]) < 0.01
    assert gaps["mid_overconfident"] < -0.03
