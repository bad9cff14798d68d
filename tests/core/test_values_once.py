"""Values become one ValueMatrix once, where they enter the pipeline, and every figure stays bit for bit.

A matrix made from a UseCase (``use_case.for_classes``) remembers it, so the triple's exact shortcuts still
apply below (``matrix.use_case``); a matrix given as a matrix keeps the matrix's arithmetic.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import valuecore as vc
from valuecore._engine.sorting import class_cumulative_gain, cumulative_gain

def same_result(a, b) -> bool:
    """Every field equal, bit for bit (a PolicyResult compares by identity)."""
    return all(np.array_equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))


KINDS = ("threshold", "class_thresholds", "calibrated_threshold", "calibrated_class_thresholds", "expected_value",
         "accept_all")


def weighted_run(seed: int = 3, n: int = 400, n_classes: int = 3) -> vc.Predictions:
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.full(n_classes, 0.6), size=n).round(2) + 1e-3  # repeated confidences: ties
    y_true = np.where(rng.random(n) < 0.7, proba.argmax(axis=1), rng.integers(0, n_classes, n))
    weight = rng.choice([0.1, 0.3, 1.7, 3.0], size=n)  # sums that are not exact in floating point
    return vc.Predictions.from_proba(proba / proba.sum(axis=1, keepdims=True), y_true=y_true, sample_weight=weight)


def test_a_matrix_made_from_a_use_case_remembers_it_and_one_given_as_a_matrix_does_not():
    use_case = vc.UseCase(1.3, 0.1, -4.7)
    made = use_case.for_classes(["a", "b", "c"])
    assert made.use_case is use_case and use_case.use_case is use_case
    given = vc.ValueMatrix(made.classes, made.values)
    assert given.as_use_case() == use_case and given.use_case is None


def test_both_kinds_of_values_answer_the_same_questions():
    use_case = vc.UseCase(2.5, -0.5, -7.25)
    assert (use_case.gain_correct, use_case.gain_wrong) == (3.0, -6.75)
    assert use_case.omega == 2.25 and use_case.as_use_case() is use_case
    made = use_case.for_classes(["x", "y"])
    assert made.for_classes(("x", "y")) is made and made.as_use_case() is use_case
    assert np.array_equal(made.gains, [[3.0, -6.75], [-6.75, 3.0]])
    assert vc.UseCase(1, 0, 0).omega == 0.0 and math.copysign(1, vc.UseCase(1, 0, 0).omega) == 1  # never -0.0
    with pytest.raises(ValueError, match=r"is for classes \['x', 'y'\] but the run has classes \['y', 'x'\]"):
        made.for_classes(["y", "x"])
    with pytest.raises(TypeError, match=r"values must be a UseCase or a ValueMatrix, got dict"):
        vc.policy_json.values_to_dict({"v_correct": 1})


@pytest.mark.parametrize("omega", [0.0, 0.37, 4.0, 1e6])
def test_the_use_case_and_its_matrix_give_the_same_bits(omega):
    p = weighted_run()
    run = vc.presort(p)
    use_case = vc.UseCase(0.9, 0.2, 0.2 - 0.7 * omega)
    matrix = use_case.for_classes(p.classes)
    assert np.array_equal(cumulative_gain(run, use_case), cumulative_gain(run, matrix))
    assert np.array_equal(class_cumulative_gain(run, use_case), class_cumulative_gain(run, matrix))
    for kind in KINDS:
        by_use_case = vc.fit_policy(kind, run, use_case)
        assert vc.fit_policy(kind, run, matrix) == by_use_case, kind
        assert same_result(vc.evaluate(by_use_case, p, matrix), vc.evaluate(by_use_case, p, use_case)), kind
    # the check can fail: the same entries given as a matrix take the matrix's (per-item) sums
    given = vc.ValueMatrix(matrix.classes, matrix.values)
    per_item = np.r_[0.0, np.cumsum(vc.curves.item_gains(p, given)[run.order])[run.group_end - 1]]
    assert np.array_equal(cumulative_gain(run, given), per_item)
    assert not np.array_equal(cumulative_gain(run, use_case), per_item)  # on this run the two sums differ


class Recording(vc.Pipeline):
    """A pipeline that records the values each overridable stage receives."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen = []

    def evaluate_split(self, model, split, policy, values):
        self.seen.append(("evaluate_split", values))
        return super().evaluate_split(model, split, policy, values)

    def interval_on(self, model, split, policy, values, result):
        self.seen.append(("interval_on", values))
        return super().interval_on(model, split, policy, values, result)

    def policy(self, model, kind, values):
        self.seen.append(("policy", values))
        return super().policy(model, kind, values)


def test_the_pipeline_converts_the_values_once_and_its_entries_are_unchanged():
    p = weighted_run()
    run = vc.runs.ModelRun("m", "m.csv", "0" * 64, p.classes, {"val": p, "test": weighted_run(seed=4)})
    use_case = vc.UseCase(1, 0, -3)
    pipeline = Recording({"m": run})
    entry = pipeline.entry("m", "threshold", use_case)
    kinds = [name for name, _ in pipeline.seen]
    assert kinds == ["policy", "evaluate_split", "interval_on"]
    matrices = [values for _, values in pipeline.seen]
    assert all(isinstance(v, vc.ValueMatrix) for v in matrices)
    assert all(v is matrices[0] for v in matrices)  # one conversion, passed down
    assert matrices[0].use_case is use_case
    # the public stages still take a UseCase, and give the entry's numbers
    policy = vc.Pipeline({"m": run}).policy("m", "threshold", use_case)
    assert policy == entry.policy
    assert vc.evaluate(policy, run.splits["test"], use_case).value_total == entry.evaluation["value_total"]
