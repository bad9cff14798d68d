"""Per-class thresholds per segment: the fit is the exhaustive optimum over every combination of per-class
thresholds in every segment, in exact fractions (``reference_segments.py``), with and without caps; a search
thinned to fit ``max_choices`` still holds the caps and never claims more than the optimum."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_segments as refs
import valuecore as vc
from valuecore.constraints import CAP_TOLERANCE, SegmentCaps, SegmentPolicy, evaluate_segments, fit_segments

ALL_CLASSES = ("a", "b", "c")
RATE_CAPS = (None, 0.0, 0.125, 0.25, 1 / 3, 0.5)
VALUE_CAPS = (None, 0.0, 0.25, 0.5, 1.0, 2.0)


@st.composite
def class_cases(draw, with_caps=True):
    n_classes = draw(st.integers(2, 3))
    n_segments = draw(st.integers(2, 3))
    names = ["n", "s", "e"][:n_segments]
    most = 4 if n_classes == 2 else 3
    items = []
    for name in names:
        for _ in range(draw(st.integers(1, most))):
            items.append(refs.Item(
                segment=name,
                confidence=draw(st.sampled_from((0.5, 0.6, 0.7, 0.8, 0.9, 1.0))),
                predicted=draw(st.integers(0, n_classes - 1)),
                truth=draw(st.integers(0, n_classes - 1)),
                weight=draw(st.integers(1, 3)),
            ))
    matrices = {}
    for name in names:
        if draw(st.booleans()):  # a use case: correct, abstain, wrong
            correct, abstain, wrong = draw(st.sampled_from(((1, 0, -1), (1, 0, -4), (2, 1, -20), (1, 0, -1000))))
            matrices[name] = [[correct if t == a else wrong for a in range(n_classes)] + [abstain]
                              for t in range(n_classes)]
        else:  # a matrix whose values depend on the classes, the abstain value on the true class
            matrices[name] = [[draw(st.integers(0, 3)) if t == a else draw(st.integers(-5, 0))
                               for a in range(n_classes)] + [draw(st.integers(-1, 1))] for t in range(n_classes)]
    caps = {}
    if with_caps:
        # Each cap left out half the time, so that one cap alone is common (a value cap merges no choices).
        caps = {name: draw(st.one_of(st.none(), st.sampled_from(given[1:])))
                for name, given in (("handoff_gap", RATE_CAPS), ("error_gap", RATE_CAPS), ("value_gap", VALUE_CAPS))}
    return items, names, n_classes, matrices, {k: v for k, v in caps.items() if v is not None}


def as_run(items, n_classes):
    classes = ALL_CLASSES[:n_classes]
    p = vc.Predictions.from_top_label(
        [classes[i.predicted] for i in items], [i.confidence for i in items], [classes[i.truth] for i in items],
        classes=classes, sample_weight=[float(i.weight) for i in items],
    )
    return p, [i.segment for i in items]


def as_values(matrices, n_classes):
    return {s: vc.ValueMatrix(ALL_CLASSES[:n_classes], np.array(m, dtype=float)) for s, m in matrices.items()}


def tolerances(matrices):
    scale = max([1] + [abs(v) for m in matrices.values() for row in m for v in row])
    return {"handoff_gap": CAP_TOLERANCE, "error_gap": CAP_TOLERANCE, "value_gap": CAP_TOLERANCE * scale}


def chosen_figures(fit, items, names, n_classes, matrices):
    """The exact figures of the fitted per-class thresholds of every segment."""
    figures = []
    for s in names:
        per_class = dict(fit.policy.class_thresholds_for(s))
        figures.append(refs.class_figures(items, s, [per_class[c] for c in ALL_CLASSES[:n_classes]], matrices[s]))
    return figures


@settings(max_examples=120, deadline=None)
@given(class_cases(with_caps=False))
def test_without_caps_each_segment_gets_its_exact_per_class_fit(case):
    items, names, n_classes, matrices, _ = case
    p, segments = as_run(items, n_classes)
    values = as_values(matrices, n_classes)
    fit = fit_segments(p, segments, values, rule="class_thresholds")
    _, free = refs.brute_force_classes(items, names, matrices, n_classes, {}, tolerances(matrices))
    figures = chosen_figures(fit, items, names, n_classes, matrices)
    assert sum(f[0] for f in figures) == free
    assert fit.unconstrained_value_total == pytest.approx(float(free), abs=1e-9)
    assert fit.rule == "class_thresholds" and fit.exact and fit.feasible and fit.cap_cost_per_item == 0
    labels = np.array(segments)
    for s in names:
        own = vc.fit_policy("class_thresholds", vc.presort(p.subset(labels == s)), values[s])
        assert fit.policy.class_thresholds_for(s) == own.class_thresholds
        assert fit.evaluation.standing(s).class_thresholds == own.class_thresholds


@pytest.mark.heavy  # a few seconds: every combination of per-class thresholds in every segment, per example
@settings(max_examples=200, deadline=None)
@given(class_cases())
def test_the_capped_per_class_fit_is_the_exhaustive_optimum_in_fractions(case):
    items, names, n_classes, matrices, caps = case
    p, segments = as_run(items, n_classes)
    fit = fit_segments(p, segments, as_values(matrices, n_classes), caps=SegmentCaps(**caps),
                       rule="class_thresholds")
    tol = tolerances(matrices)
    best, free = refs.brute_force_classes(items, names, n_classes=n_classes, matrices=matrices, caps=caps,
                                          tolerances=tol)
    assert fit.exact
    assert fit.unconstrained_value_total == pytest.approx(float(free), abs=1e-9)
    assert fit.feasible == (best is not None)
    if best is None:
        return
    refs.check_optimum(fit, names, chosen_figures(fit, items, names, n_classes, matrices), best, free, caps, tol)


@settings(max_examples=150, deadline=None)
@given(class_cases(), st.integers(1, 3))
def test_a_thinned_search_holds_the_caps_and_never_exceeds_the_optimum(case, max_choices):
    items, names, n_classes, matrices, caps = case
    p, segments = as_run(items, n_classes)
    fit = fit_segments(p, segments, as_values(matrices, n_classes), caps=SegmentCaps(**caps),
                       rule="class_thresholds", max_choices=max_choices)
    tol = tolerances(matrices)
    best, _ = refs.brute_force_classes(items, names, matrices=matrices, n_classes=n_classes, caps=caps,
                                       tolerances=tol)
    if not fit.feasible:
        assert best is None or not fit.exact  # infeasible is claimed exactly only when it is so
        return
    figures = chosen_figures(fit, items, names, n_classes, matrices)
    total = sum(f[0] for f in figures)
    assert best is not None and total <= best
    assert refs.holds(figures, caps, tol)
    assert fit.value_total <= fit.upper_bound + 1e-9
    if fit.exact:  # an exact claim is the optimum
        assert total == best


def test_a_thinned_search_says_so():
    rng = np.random.default_rng(3)
    n = 400
    y_pred = rng.integers(0, 3, n)
    correct = rng.random(n) < 0.7
    y_true = np.where(correct, y_pred, (y_pred + 1) % 3)
    p = vc.Predictions.from_top_label(np.array(ALL_CLASSES)[y_pred], rng.random(n).round(3) / 2 + 0.5,
                                      np.array(ALL_CLASSES)[y_true], classes=ALL_CLASSES)
    segments = rng.choice(["x", "y"], n)
    caps = SegmentCaps(error_gap=0.01)
    exact = fit_segments(p, segments, vc.UseCase(1, 0, -2), caps=caps, rule="class_thresholds")
    thinned = fit_segments(p, segments, vc.UseCase(1, 0, -2), caps=caps, rule="class_thresholds", max_choices=50)
    assert exact.exact and not thinned.exact
    assert thinned.n_choices <= 2 * 50 < exact.n_choices
    assert thinned.value_total <= exact.value_total
    assert thinned.evaluation.error_gap <= 0.01 + CAP_TOLERANCE


def test_a_per_class_segment_policy_decides_by_segment_and_predicted_class():
    p = vc.Predictions.from_top_label(["a", "b", "a", "b"], [0.9, 0.9, 0.7, 0.7], ["a", "b", "b", "b"],
                                      classes=["a", "b"])
    policy = SegmentPolicy(column="region", class_thresholds={"x": {"a": 0.8, "b": None}, "y": {"a": 0.6}})
    assert policy.rule == "class_thresholds" and policy.segments == ("x", "y")
    assert policy.decide(p, ["x", "x", "y", "y"]).tolist() == [0, 2, 0, 2]
    assert policy.decide(p, ["z", "x", "x", "y"]).tolist() == [2, 2, 2, 2]  # z is unseen: handed off
    assert SegmentPolicy.from_dict(policy.to_dict()) == policy
    evaluation = evaluate_segments(policy, p, ["x", "x", "y", "y"], vc.UseCase(1, 0, -1))
    assert evaluation.standing("x").class_thresholds == (("a", 0.8), ("b", None))
    with pytest.raises(ValueError, match="not both"):
        SegmentPolicy((("x", 0.5),), class_thresholds={"x": {"a": 0.5}})
    with pytest.raises(ValueError, match="class 'a' in segment 'x'"):
        SegmentPolicy(class_thresholds={"x": {"a": 1.5}})
    with pytest.raises(ValueError, match="rule must be one of"):
        fit_segments(p, ["x", "x", "y", "y"], vc.UseCase(1, 0, -1), rule="two_tier")
