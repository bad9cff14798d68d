"""Per-class thresholds searched together (``hull.Segments``): one move answers every class from intervals kept
at the build, and must choose what the search per class chose before it (``per_segment_reference``, one
``hull.first_best`` per class) and what the scan chooses: the same thresholds, NaN where a class accepts none.

Counts drawn to be hard (``cumulative_counts``: ties, collinear points, weights down to subnormal), values on a
hull edge's slope (ties between vertices), every sign of the gains; runs whose classes are empty, a single
group, all correct (always act) or all wrong (never act).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._engine import fitting, hull

from helpers.hull import SETTINGS, cumulative_counts, gains_for, per_segment_reference, per_segment_scan


def _same(got, expected) -> bool:
    """Equal floats, NaN where NaN (bit for bit: repr tells -0.0 from 0.0)."""
    return repr([float(v) for v in got]) == repr([float(v) for v in expected])


@st.composite
def spans_of(draw, size: int):
    """Consecutive non-empty segments covering ``[0, size)``: the classes' groups in the class order."""
    cuts = sorted(draw(st.sets(st.integers(1, size - 1), max_size=min(6, size - 1)))) if size > 1 else []
    bounds = [0, *cuts, size]
    return list(zip(bounds[:-1], bounds[1:]))


@settings(max_examples=80, **SETTINGS)
@given(cumulative_counts().flatmap(lambda cw: st.tuples(
    st.just(cw), spans_of(cw[0].size), st.lists(gains_for(*cw), min_size=1, max_size=6),
    st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=3))))
def test_segments_choose_as_the_search_per_segment_and_the_scan(drawn):
    (correct, wrong), spans, moves, omegas = drawn
    labels = np.linspace(1.0, 0.0, correct.size)  # a threshold per point, decreasing as confidences do
    cache: dict = {}
    segments = hull.segments_of(cache, "c", correct, wrong, spans, labels)
    assert segments is not None  # the drawn counts never decrease
    for a, b in moves + [(1.0, -omega) for omega in omegas]:
        got = segments.choose(a, b)
        expected = per_segment_reference(a, b, correct, wrong, spans, labels)
        assert (got is None) == (expected is None), (a, b)
        if got is not None:
            assert _same(got, expected), (a, b, spans)
            assert _same(got, per_segment_scan(a, b, correct, wrong, spans, labels)), (a, b, spans)


def test_most_moves_answer_every_segment_at_once(monkeypatch):
    """The intervals answer most moves (else the test above would check the search per segment against
    itself), and as the search per segment does."""
    rng = np.random.default_rng(5)
    n = 6000
    correct_now = rng.random(n) < np.tile(np.linspace(1.0, 0.2, n // 6), 6)
    weight = rng.choice([1.0, 2.0, 0.5], n)
    correct = np.cumsum(np.where(correct_now, weight, 0.0))
    wrong = np.cumsum(np.where(correct_now, 0.0, weight))
    spans = [(k * n // 6, (k + 1) * n // 6) for k in range(6)]
    labels = np.linspace(1.0, 0.0, n)
    segments = hull.segments_of({}, "c", correct, wrong, spans, labels)
    searched = []
    one = hull.choose_one
    monkeypatch.setattr(hull, "choose_one", lambda *args: searched.append(args[6]) or one(*args))
    omegas = np.geomspace(0.05, 50.0, 80)
    for omega in omegas:
        got = segments.choose(1.0, -float(omega))
        assert _same(got, per_segment_reference(1.0, -float(omega), correct, wrong, spans, labels)), omega
    assert len(searched) <= len(omegas) * len(spans) // 10, len(searched)


def test_a_segment_outside_its_interval_takes_its_own_search():
    """A value on a hull edge's slope (two vertices tie) is no vertex's sure interval: that segment's own search
    answers, the others from the intervals, each as the scan."""
    correct = np.array([1.0, 2.0, 3.0, 3.0, 5.0, 5.0])
    wrong = np.array([0.0, 1.0, 1.0, 2.0, 2.0, 4.0])
    spans, labels = [(0, 3), (3, 6)], np.array([0.9, 0.8, 0.7, 0.9, 0.8, 0.7])
    segments = hull.segments_of({}, "c", correct, wrong, spans, labels)
    for a, b in [(1.0, -1.0), (1.0, -0.5), (2.0, -2.0), (1.0, -3.0), (1.0, -1e-300), (1e-300, -1.0)]:
        assert _same(segments.choose(a, b), per_segment_scan(a, b, correct, wrong, spans, labels)), (a, b)


# ------------------------------------------------------------------ fit_policy: classes that are hard for it
CLASS_KINDS = ("empty", "single", "all_correct", "all_wrong", "mixed", "mixed")


@st.composite
def runs_with_hard_classes(draw):
    """Top-label predictions of 2-5 classes, each empty, one group, all correct, all wrong or mixed; confidences
    from a few values (ties within and across classes), weights none, whole or any."""
    n_classes = draw(st.integers(2, 5))
    kinds = [draw(st.sampled_from(CLASS_KINDS)) for _ in range(n_classes)]
    weighting = draw(st.sampled_from(("none", "whole", "any")))
    levels = draw(st.lists(st.sampled_from((0.35, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)), min_size=1,
                           max_size=5))
    y_pred, y_true, confidence, weight = [], [], [], []
    for k, kind in enumerate(kinds):
        size = {"empty": 0, "single": 1}.get(kind, draw(st.integers(2, 12)))
        group = draw(st.sampled_from(levels))
        for _ in range(size):
            right = {"all_correct": True, "all_wrong": False}.get(kind, draw(st.booleans()))
            y_pred.append(k)
            y_true.append(k if right else (k + 1) % n_classes)
            confidence.append(group if kind == "single" else draw(st.sampled_from(levels)))
            weight.append({"none": 1.0, "whole": float(draw(st.integers(0, 3))),
                           "any": draw(st.floats(0.0, 5.0))}[weighting])
    if not y_pred:  # every class empty: one item, so that there is a run
        y_pred, y_true, confidence, weight = [0], [0], [0.5], [1.0]
    classes = [f"c{k}" for k in range(n_classes)]
    names = np.array(classes)
    return vc.Predictions.from_top_label(names[y_pred], np.array(confidence), names[y_true], classes=classes,
                                         sample_weight=None if weighting == "none" else np.array(weight))


def _old_per_class(run, a: float, b: float):
    """The per-class thresholds as fitting found them before ``hull.Segments``: one search per class."""
    bounds = np.searchsorted(run.class_group_class, np.arange(run.predictions.n_classes + 1)).tolist()
    spans = [(start, stop) for start, stop in zip(bounds[:-1], bounds[1:]) if start < stop]
    chosen = per_segment_reference(a, b, run.class_cum_correct, run.class_cum_wrong, spans,
                                   run.class_group_threshold)
    if chosen is None:
        return None
    by_class = dict(zip([k for k, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:])) if start < stop],
                        chosen))
    return tuple((c, None if np.isnan(by_class.get(k, np.nan)) else by_class[k])
                 for k, c in enumerate(run.predictions.classes))


@settings(max_examples=60, **SETTINGS)
@given(runs_with_hard_classes(), st.lists(st.one_of(
    st.sampled_from((0.0, 1e-300, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 1e12)), st.floats(1e-3, 1e3)),
    min_size=1, max_size=5), st.booleans())
def test_fit_policy_per_class_on_the_hull_as_before_and_as_the_scan(predictions, omegas, as_matrix):
    run = vc.presort(predictions)
    for omega in omegas:
        use_case = vc.UseCase(1.0, 0.0, -omega)
        values = use_case.for_classes(predictions.classes) if as_matrix else use_case
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(fitting, "HULL_MIN_GROUPS", 0)
            on_hulls = vc.fit_policy("class_thresholds", run, values).class_thresholds
            patch.setattr(fitting, "HULL_MIN_GROUPS", 10**18)
            scanned = vc.fit_policy("class_thresholds", run, values).class_thresholds
        assert repr(on_hulls) == repr(scanned), omega
        before = _old_per_class(run, use_case.gain_correct, use_case.gain_wrong)
        assert before is None or repr(on_hulls) == repr(before), omega


@pytest.mark.parametrize("n_classes", [3, 50])
def test_many_or_few_classes_on_a_large_run_choose_as_the_scan(n_classes):
    rng = np.random.default_rng(n_classes)
    n = 30_000
    confidence = rng.uniform(0.2, 1.0, n)
    y_pred = rng.integers(0, n_classes, n)
    y_pred[y_pred == 1] = 0  # class 1 predicted never: an empty class
    y_true = np.where(rng.random(n) < confidence, y_pred, (y_pred + 1) % n_classes)
    classes = [f"k{j}" for j in range(n_classes)]
    p = vc.Predictions.from_top_label(np.array(classes)[y_pred], confidence, np.array(classes)[y_true],
                                      classes=classes)
    run = vc.presort(p)
    for omega in (0.0, 0.3, 1.0, 2.5, 7.0, 40.0, 1e6):
        values = vc.UseCase(1.0, 0.0, -omega)
        on_hulls = vc.fit_policy("class_thresholds", run, values).class_thresholds
        assert repr(on_hulls) == repr(_old_per_class(run, 1.0, -omega)), omega
    assert isinstance(hull.run_cache(run)["class hulls"].segments, hull.Segments), "the classes were searched together"


@pytest.mark.parametrize("prior_wrong", [0.0, 1e7, 3e15])
def test_points_whose_gains_round_together_are_left_to_the_own_search(prior_wrong):
    """After a class with many wrong answers the gains carry a large total, whose rounding merges points that
    differ by an ulp (a run's lower point then ties with the vertex and comes first) or by a little more than
    omega's distance to an edge's slope: no interval may claim such a vertex, the scan's first maximum decides."""
    ulp = np.spacing(1.0)
    # (wrong, correct) per point; the first segment holds the prior wrong answers.
    points = [(prior_wrong, 0.0),
              (prior_wrong, 1.0), (prior_wrong, 1.0 + ulp), (prior_wrong + 1, 2.0), (prior_wrong + 1, 2.0 + 4 * ulp),
              (prior_wrong + 2, 2.5), (prior_wrong + 3, 2.75)]
    wrong, correct = (np.array(column) for column in zip(*points))
    spans, labels = [(0, 1), (1, len(points))], np.linspace(1.0, 0.0, len(points))
    segments = hull.segments_of({}, "c", correct, wrong, spans, labels)
    omegas = [omega * (1 + k * 2.0**-32) for omega in (1.0, 0.5, 0.25, 2.0) for k in range(-40, 41, 3)]
    omegas += [0.7, 1.5, 3.0, 1e-9, 1e9]
    for omega in omegas:
        got = segments.choose(1.0, -omega)
        assert _same(got, per_segment_scan(1.0, -omega, correct, wrong, spans, labels)), omega
        assert _same(got, per_segment_reference(1.0, -omega, correct, wrong, spans, labels)), omega
