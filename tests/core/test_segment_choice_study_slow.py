"""The seeded study of the recommendation with thresholds per segment among its candidates
(benchmarks/bench_segment_choice.py) on a small grid of scenarios with known truth: no answer loses money there,
and weighing the segments costs nothing where they are alike and earns more where they differ (the full grid's
figures, one loss in 180 included, are in benchmarks/README.md); also checks the study's closed-form value."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_segment_choice as study  # noqa: E402

pytestmark = pytest.mark.slow


def test_the_closed_form_value_is_what_items_drawn_from_the_scenario_earn():
    rng = np.random.default_rng(3)
    frame = study.draw(rng, 400_000, 0.2)
    confidence = frame[["proba_a", "proba_b"]].max(axis=1).to_numpy()
    right = (frame.proba_a >= 0.5).to_numpy() == (frame.y_true == "a").to_numpy()
    for segment, shift in (("easy", 0.0), ("hard", 0.2)):
        for t in (0.6, 0.8, 0.95):
            acted = (frame.region == segment).to_numpy() & (confidence >= t)
            earned = np.where(right, 1.0, -4.0)[acted].sum() / (frame.region == segment).sum()
            assert abs(earned - study.true_value(t, shift, 4.0)) < 0.01, (segment, t)


def test_weighing_the_segments_never_loses_money_and_costs_nothing_against_leaving_them_out():
    table = study.study(seeds=range(3), shifts=(0.0, 0.35), sizes=(1000,), omegas=(4.0,))
    assert not table.loses.any()
    mean = table.groupby(["shift", "chooser"]).regret.mean()
    for shift in (0.0, 0.35):
        assert mean[(shift, "with segments")] <= mean[(shift, "without")] + 0.005, mean
    far_apart = table[(table["shift"] == 0.35) & (table.chooser == "with segments")]
    assert far_apart.segments.any() and mean[(0.35, "with segments")] < mean[(0.35, "without")], table
