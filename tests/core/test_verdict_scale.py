"""Scaling every value by one positive number changes no choice (docs/run-format.md): the verdict's round-off
tolerance is relative to the use case's own values. With a fixed floor of 1 it was absolute (1e-12), and values
scaled by 1e-12 turned "deploy svm_rbf" into "deploy no model" (the best earning 8e-16 per item)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import valuecore as vc
from valuecore._decide.verdict import clearly_ahead

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"
# Powers of two: every value, product and sum then scales exactly (no round-off differs between scales), so
# any difference is the verdict's own. 2**-40 is about 9e-13, 2**-130 about 7e-40.
SCALES = [1.0, 2.0**-20, 2.0**-40, 2.0**-45, 2.0**-130, 2.0**20, 2.0**130]


def _choice(rec) -> tuple:
    policy = None if rec.policy is None else json.dumps(rec.policy.to_dict(), sort_keys=True)
    alternative = None if rec.alternative is None else rec.alternative.model
    standing = tuple((c.model, c.kind, c.contender, c.above_baseline, c.shown_to_earn) for c in rec.candidates)
    return rec.choice, rec.model, rec.kind, policy, alternative, standing


@pytest.fixture(scope="module")
def pipelines():
    return {name: vc.Pipeline(vc.load_runs([str(SAMPLES / name)]).models) for name in ("breast_cancer", "digits")}


@pytest.mark.parametrize("name, use_case", [
    ("breast_cancer", (1.0, 0.0, -5.0)),
    ("breast_cancer", (1.0, 0.2, -30.0)),
    ("digits", (1.0, 0.0, -4.0)),
    ("digits", (2.0, -0.5, -1000.0)),
])  # fmt: skip
def test_a_use_case_scaled_recommends_the_same(pipelines, name, use_case):
    seen = {scale: _choice(vc.recommend(pipelines[name], vc.UseCase(*(scale * v for v in use_case))))
            for scale in SCALES}  # fmt: skip
    assert len(set(seen.values())) == 1, seen


def test_a_value_matrix_scaled_recommends_the_same(pipelines):
    pipeline = pipelines["breast_cancer"]
    classes = next(iter(pipeline.runs.values())).classes
    matrix = np.array([[1.0, -6.0, 0.1], [-2.0, 1.5, 0.0]])
    seen = {scale: _choice(vc.recommend(pipeline, vc.ValueMatrix(classes, scale * matrix))) for scale in SCALES}
    assert len(set(seen.values())) == 1, seen


@pytest.mark.parametrize("name, use_case", [("breast_cancer", (1.0, 0.2, -30.0)), ("digits", (1.0, 0.0, -4.0))])
def test_which_rules_are_clearly_ahead_does_not_depend_on_the_scale(pipelines, name, use_case):
    pipeline = pipelines[name]
    rec = vc.recommend(pipeline, vc.UseCase(*use_case))
    runs = {(c.model, c.kind): (c.policy, pipeline.predictions(c.model, pipeline.plan(c.model).eval_split))
            for c in rec.candidates}  # fmt: skip
    seen = {scale: tuple(clearly_ahead(runs, vc.UseCase(*(scale * v for v in use_case)), key) for key in runs)
            for scale in SCALES}  # fmt: skip
    assert len(set(seen.values())) == 1, seen
    assert any(seen[1.0]), "no rule is clearly ahead of another here: the test would not see the tolerance"


def test_values_too_small_for_an_interval_are_refused_before_any_rule_is_weighed(pipelines):
    """Each rule is weighed by its interval, which squares the values: below 1e-100 they vanish from it, so
    the recommendation is refused in words rather than made on intervals of width 0."""
    with pytest.raises(ValueError, match="for an interval; got 1e-300"):
        vc.recommend(pipelines["breast_cancer"], vc.UseCase(1e-300, 0.0, -4e-300))
