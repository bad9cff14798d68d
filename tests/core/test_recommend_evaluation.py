"""The recommendation carries its policy's evaluation and interval: exactly what the pipeline gives.

``Recommendation.result`` is read off the verdict's tally of the recommended decision and
``Recommendation.interval`` from that result's confusion; a page showing them must show the
numbers ``pipeline.result`` and ``pipeline.interval`` give, bit for bit, or get None and ask the
pipeline itself (fractional weights, tiered rules).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import valuecore as vc

SAMPLES = Path(vc.__file__).parent.parent / "sample_runs"


def _same_result(got: vc.PolicyResult, want: vc.PolicyResult) -> None:
    assert got.to_dict() == want.to_dict()
    assert repr(got.to_dict()) == repr(want.to_dict())  # the same floats, not only equal ones
    for name in ("confusion", "cell_values"):
        assert getattr(got, name).tobytes() == getattr(want, name).tobytes(), name
    assert got.classes == want.classes and got.estimated == want.estimated


@pytest.mark.parametrize("values", [vc.UseCase(1, 0, -4), vc.UseCase(1, -0.3, -9.7), vc.UseCase(2, 0.5, -3),
                                    vc.UseCase(1, 0, -20)])
@pytest.mark.parametrize("sample", ["digits", "breast_cancer"])
def test_the_recommendation_carries_the_pipelines_result_and_interval(sample, values):
    pipeline = vc.Pipeline(vc.load_runs([str(SAMPLES / sample)]).models)
    r = vc.recommend(pipeline, values)
    assert r.model is not None and r.result is not None and r.interval is not None
    want = pipeline.result(r.model, r.policy, values)
    _same_result(r.result, want)
    assert repr(r.interval) == repr(pipeline.interval(r.model, r.policy, values, want))
    assert r.result.coverage == r.coverage  # the verdict's coverage is the result's


def _weighted_runs(weights: str, n: int = 3000, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    runs = {}
    for m in range(3):
        y = rng.integers(0, 4, n)
        logits = rng.normal(size=(n, 4)) * 1.2
        logits[np.arange(n), y] += 1.0 + 0.5 * m
        proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        weight = {"unit": np.ones(n), "integer": rng.integers(0, 4, n).astype(float),
                  "fractional": rng.uniform(0.1, 3.0, n)}[weights]
        split = np.where(np.arange(n) < n // 2, "val", "test")
        splits = {s: vc.Predictions.from_proba(proba[split == s], y_true=y[split == s],
                                               sample_weight=weight[split == s]) for s in ("val", "test")}
        runs[f"m{m}"] = vc.runs.ModelRun(f"m{m}", f"m{m}.csv", "0" * 64, splits["val"].classes, splits)
    return runs


@pytest.mark.parametrize("weights", ["unit", "integer", "fractional"])
def test_weights_that_are_counts_give_the_interval_others_leave_it_to_the_pipeline(weights):
    pipeline = vc.Pipeline(_weighted_runs(weights))
    for wrong in (-2.0, -5.5, -30.0):
        values = vc.UseCase(1, 0, wrong)
        r = vc.recommend(pipeline, values)
        if r.model is None:
            assert r.result is None and r.interval is None
            continue
        want = pipeline.result(r.model, r.policy, values)
        _same_result(r.result, want)
        if weights == "fractional":
            assert r.interval is None
        else:
            assert repr(r.interval) == repr(pipeline.interval(r.model, r.policy, values, want))


def test_no_model_carries_no_result():
    pipeline = vc.Pipeline(vc.load_runs([str(SAMPLES / "digits")]).models)
    r = vc.recommend(pipeline, vc.UseCase(0, 0, -1))  # nothing beats handing over
    assert r.model is None and r.result is None and r.interval is None
