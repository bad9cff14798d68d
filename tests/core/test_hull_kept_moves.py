"""A slider move answered by what earlier moves kept with the run (``fitting._moved``), against the path it skips.

Once a run's hulls are kept, ``fit_policy`` with a ``UseCase`` (no calibration, labels) checks the three values in
place and goes straight to them: the per-class search (``fitting._ClassHulls``) reads each class's pair off a table
kept per answer when every class is sure, and the threshold rule reads its kept chain. Each is compared here with
the general path (``_moved`` switched off) and with the scan, policy field by field; and each condition that sends a
move back to the general path (the values' range, other signs, calibration, label-free tuning, ``HULL_MIN_GROUPS``)
is checked to do so.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._engine import fitting, hull
from valuecore._engine.policy import Policy
from valuecore._model.values import VALUE_LIMIT, check_value_range

from helpers.hull import SETTINGS, cumulative_counts


def _same(fast: Policy, general: Policy) -> None:
    assert fast == general and hash(fast) == hash(general)
    assert repr(fast) == repr(general) and list(vars(fast)) == list(vars(general))
    assert [type(v) for v in vars(fast).values()] == [type(v) for v in vars(general).values()]
    types = [[tuple(map(type, pair)) for pair in policy.class_thresholds or ()] for policy in (fast, general)]
    assert types[0] == types[1]
    assert pickle.loads(pickle.dumps(fast)) == general


def _run(n: int, n_classes: int, seed: int, empty_class: bool = False, ties: bool = False, top: float = 1.0):
    rng = np.random.default_rng(seed)
    confidence = rng.uniform(0.2, top, n)
    if ties:  # few distinct confidences: long runs of equal x on the hulls
        confidence = np.round(confidence, 4)
    y_pred = rng.integers(0, n_classes, n)
    if empty_class:
        y_pred[y_pred == 1] = 0  # class 1 never predicted: no pairs table (a class without groups)
    y_true = np.where(rng.random(n) < confidence, y_pred, (y_pred + 1) % n_classes)
    classes = [f"k{j}" for j in range(n_classes)]
    names = np.array(classes)
    return vc.presort(vc.Predictions.from_top_label(names[y_pred], confidence, names[y_true], classes=classes))


def _general(kind: str, run, values, **kwargs) -> Policy:
    """``fit_policy`` by its general path (what ``_moved`` skips)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fitting, "_moved", lambda *args: None)
        return vc.fit_policy(kind, run, values, **kwargs)


def _scanned(kind: str, run, values) -> Policy:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fitting, "HULL_MIN_GROUPS", 10**18)
        return vc.fit_policy(kind, run, values)


OMEGAS = [0.0, 1e-9, 0.1, 0.3, 0.5, 1.0, 1.7, 2.0, 2.5, 4.0, 7.0, 19.0, 40.0, 1e6, 1e90]


@pytest.mark.parametrize("n_classes, empty_class, ties", [(3, False, False), (10, False, True), (50, True, False),
                                                          (7, False, False)])
def test_kept_moves_make_the_general_paths_policy(n_classes, empty_class, ties):
    run = _run(30_000, n_classes, n_classes, empty_class, ties)
    for kind in ("threshold", "threshold", "class_thresholds"):  # a run's first threshold scans, its second keeps
        vc.fit_policy(kind, run, vc.UseCase(1.0, 0.0, -4.0))  # the hull
    kept = hull.run_cache(run)
    assert isinstance(kept["class hulls"], fitting._ClassHulls) and isinstance(kept["threshold hull"], hull.Chain)
    assert (kept["class hulls"].pairs is None) == empty_class
    taken = {"fast": 0}
    original = fitting._moved

    def counting(*args):
        moved = original(*args)
        taken["fast"] += moved is not None
        return moved

    omegas = OMEGAS + np.geomspace(0.05, 60.0, 40).tolist()
    for omega in omegas:
        for values in (vc.UseCase(1.0, 0.0, -omega), vc.UseCase(2.5, 0.5, 0.5 - omega * 2.0)):
            for kind in ("threshold", "class_thresholds"):
                with pytest.MonkeyPatch.context() as patch:
                    patch.setattr(fitting, "_moved", counting)
                    fast = vc.fit_policy(kind, run, values)
                _same(fast, _general(kind, run, values))
                assert repr(fast) == repr(_scanned(kind, run, values)), (kind, omega)
    assert taken["fast"] >= 2 * 2 * len(omegas) - 8  # the kept hulls answered (else this tested nothing)


def test_the_pairs_table_answers_as_the_thresholds_do():
    """Every move on a 10-class run: the table's pairs (when every class is sure) as the thresholds' pairs, classes
    that accept none (None) included."""
    run = _run(20_000, 10, 5, top=0.7)
    vc.fit_policy("class_thresholds", run, vc.UseCase(1.0, 0.0, -4.0))
    classes = hull.run_cache(run)["class hulls"]
    read, nones = 0, 0
    for omega in np.geomspace(0.01, 100.0, 400).tolist():
        pairs = classes.segments.sure_take(1.0, -omega, classes.pairs)
        through = fitting._class_policy(classes.classes, classes.thresholds(1.0, -omega), classes.plain)
        _same(classes.policy(1.0, -omega), through)
        if pairs is not None:
            read += 1
            assert tuple(pairs.tolist()) == through.class_thresholds
            assert repr(tuple(pairs.tolist())) == repr(through.class_thresholds)
            nones += sum(threshold is None for _, threshold in through.class_thresholds)
    assert read >= 300 and nones >= 100


@settings(max_examples=40, **SETTINGS)
@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.booleans(),
       st.lists(st.one_of(st.floats(1e-3, 1e3), st.sampled_from((0.0, 0.5, 1.0, 2.0, 3.0))), min_size=2, max_size=6))
def test_kept_moves_on_small_runs_with_ties_make_the_general_paths_policy(n_classes, seed, ties, omegas):
    run = _run(300, n_classes, seed, ties=ties)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fitting, "HULL_MIN_GROUPS", 0)
        for omega in omegas:
            for kind in ("threshold", "class_thresholds"):
                values = vc.UseCase(1.0, 0.0, -omega)
                fast = vc.fit_policy(kind, run, values)
                _same(fast, _general(kind, run, values))
    for omega in omegas:
        for kind in ("threshold", "class_thresholds"):
            assert repr(_scanned(kind, run, vc.UseCase(1.0, 0.0, -omega)).to_dict()) == repr(
                _general(kind, run, vc.UseCase(1.0, 0.0, -omega)).to_dict())


@pytest.fixture(scope="module")
def kept_run():
    run = _run(20_000, 4, 11)
    for kind in ("threshold", "class_thresholds"):
        vc.fit_policy(kind, run, vc.UseCase(1.0, 0.0, -4.0))
    return run


@pytest.mark.parametrize("value", [VALUE_LIMIT, -VALUE_LIMIT, math.nextafter(VALUE_LIMIT, math.inf), -1e300])
@pytest.mark.parametrize("kind", ["threshold", "class_thresholds"])
def test_a_move_refuses_the_values_check_value_range_refuses(kept_run, kind, value):
    for values in (vc.UseCase(value, 0.0, -1.0), vc.UseCase(1.0, value, -1.0), vc.UseCase(1.0, 0.0, value)):
        try:
            check_value_range(values)
        except ValueError as refused:
            with pytest.raises(ValueError) as moved:
                vc.fit_policy(kind, kept_run, values)
            assert str(moved.value) == str(refused)
        else:
            _same(vc.fit_policy(kind, kept_run, values), _general(kind, kept_run, values))


def test_values_that_are_not_a_use_case_are_refused_as_before(kept_run):
    with pytest.raises(TypeError, match="values must be a UseCase or a ValueMatrix, got tuple"):
        vc.fit_policy("class_thresholds", kept_run, (1.0, 0.0, -1.0))


@pytest.mark.parametrize("values", [vc.UseCase(1.0, 0.0, 0.5), vc.UseCase(0.0, 1.0, -1.0), vc.UseCase(-1.0, 0.0, 2.0),
                                    vc.UseCase(1.0, 1.0, 0.0), vc.UseCase(1.0, 0.0, 0.0)])
@pytest.mark.parametrize("kind", ["threshold", "class_thresholds"])
def test_other_signs_take_the_general_path(kept_run, kind, values):
    assert fitting._moved(kind, kept_run, values) is None
    assert repr(vc.fit_policy(kind, kept_run, values)) == repr(_scanned(kind, kept_run, values))


@pytest.mark.parametrize("kind", ["threshold", "class_thresholds"])
def test_a_calibration_or_label_free_tuning_takes_the_general_path(kept_run, kind):
    values = vc.UseCase(1.0, 0.0, -1.3)
    calibration = {"method": "temperature", "temperature": 1.5}
    calibrated = vc.fit_policy(kind, kept_run, values, calibration=calibration)
    assert dict(calibrated.calibration) == calibration
    assert calibrated == _general(kind, kept_run, values, calibration=calibration)
    for omega in (0.2, 1.3, 3.0, 9.0):
        values = vc.UseCase(1.0, 0.0, -omega)
        assert vc.fit_policy(kind, kept_run, values, estimate=True) == _general(kind, kept_run, values, estimate=True)
        assert vc.fit_policy(kind, kept_run, values, estimate=True) != vc.fit_policy(kind, kept_run, values)


@pytest.mark.parametrize("kind", ["threshold", "class_thresholds"])
def test_hull_min_groups_is_honoured_at_every_move(kept_run, kind, monkeypatch):
    def refused(*args):
        raise AssertionError("a kept hull answered below HULL_MIN_GROUPS")

    monkeypatch.setattr(fitting, "HULL_MIN_GROUPS", 10**18)
    monkeypatch.setattr(hull.Segments, "sure_take", refused)
    monkeypatch.setattr(hull.Segments, "choose", refused)
    monkeypatch.setattr(hull.Chain, "first_best", refused)
    for omega in (0.5, 2.0, 7.0):
        vc.fit_policy(kind, kept_run, vc.UseCase(1.0, 0.0, -omega))


# ------------------------------------------------------------------ the table of positions (Segments._table)
def _searched(segments: hull.Segments, q: float) -> tuple[list, bool]:
    """What the table replaces: the search of every (segment, q) among the keys, and whether each is odd."""
    p = segments._keys.searchsorted(segments._slots + complex(0.0, q))
    return p.tolist(), bool((p & 1).all())


def _places(ends: np.ndarray) -> list:
    """Every end, the floats beside it and the midpoints between ends: every place a value can take among them."""
    finite = np.unique(ends[np.isfinite(ends)])
    return sorted({*finite.tolist(), *np.nextafter(finite, -np.inf).tolist(), *np.nextafter(finite, np.inf).tolist(),
                   *((finite[1:] + finite[:-1]) / 2).tolist(), -1e300, 1e300, -5e-324, 0.0})


@settings(max_examples=60, **SETTINGS)
@given(cumulative_counts(), st.integers(1, 5), st.data())
def test_the_table_of_positions_is_the_search(counts, n_spans, data):
    correct, wrong = counts
    if correct.size < 2:
        return
    cuts = sorted(set(data.draw(st.lists(st.integers(1, correct.size - 1), max_size=n_spans - 1))))
    bounds = [0, *cuts, correct.size]
    spans = [(start, stop) for start, stop in zip(bounds[:-1], bounds[1:])]
    segments = hull.segments_of({}, "t", correct, wrong, spans, np.linspace(1.0, 0.0, correct.size))
    if segments is None:
        return
    assert segments._rows is not None
    for q in _places(segments._keys.imag):
        positions, sure = segments._positions(q)
        assert (positions.tolist(), sure) == _searched(segments, q), q


@pytest.mark.parametrize("n_classes, ties", [(3, False), (10, True), (50, False)])
def test_the_table_of_positions_is_the_search_on_large_runs(n_classes, ties, monkeypatch):
    run = _run(30_000, n_classes, n_classes + 1, ties=ties, top=0.8)
    vc.fit_policy("class_thresholds", run, vc.UseCase(1.0, 0.0, -4.0))
    segments = hull.run_cache(run)["class hulls"].segments
    assert segments._rows is not None
    for q in _places(segments._keys.imag):
        positions, sure = segments._positions(q)
        assert (positions.tolist(), sure) == _searched(segments, q), q
    # Without the table (more entries than _TABLE_MAX) the search answers, and every move chooses alike.
    monkeypatch.setattr(hull, "_TABLE_MAX", 0)
    unlisted = hull.segments_of({}, "u", run.class_cum_correct, run.class_cum_wrong, segments.spans,
                                run.class_group_threshold)
    assert unlisted._rows is None
    for omega in np.geomspace(0.05, 80.0, 150).tolist():
        assert repr(unlisted.choose(1.0, -omega).tolist()) == repr(segments.choose(1.0, -omega).tolist()), omega
        assert repr(unlisted._positions(-omega)[0].tolist()) == repr(segments._positions(-omega)[0].tolist())


@pytest.mark.parametrize("n_classes, ties", [(3, False), (10, True), (50, False)])
def test_the_rows_pairs_are_the_pairs_table_and_the_thresholds(n_classes, ties):
    """Each sure row's pairs, made at the build (``_ClassHulls.row_pairs``), at every place of b / a among the ends:
    as the pairs table's take and as the thresholds' pairs."""
    run = _run(30_000, n_classes, n_classes + 2, ties=ties, top=0.8)
    vc.fit_policy("class_thresholds", run, vc.UseCase(1.0, 0.0, -4.0))
    classes = hull.run_cache(run)["class hulls"]
    assert classes.row_pairs is not None
    read = 0
    for q in _places(classes.segments._keys.imag):
        if not q < 0:
            continue
        row = classes.segments.sure_row(1.0, q)
        taken = classes.segments.sure_take(1.0, q, classes.pairs)
        assert (row is None) == (taken is None), q
        policy = classes.policy(1.0, q)
        _same(policy, fitting._class_policy(classes.classes, classes.thresholds(1.0, q), classes.plain))
        if row is not None:
            read += 1
            assert classes.row_pairs[row] == tuple(taken.tolist()) == policy.class_thresholds, q
            assert repr(classes.row_pairs[row]) == repr(tuple(taken.tolist())), q
    assert read >= 100


@pytest.mark.parametrize("ties", [False, True])
def test_a_runs_first_threshold_is_scanned_and_is_the_hulls(ties):
    # A run's first threshold fit scans (a hull pays for moves, not for one fit); its second builds the hull and
    # keeps it. Each use case's first fit on a fresh run is the policy the hull gives on a run fitted before.
    warmed = _run(20_000, 4, 11, ties=ties)
    vc.fit_policy("threshold", warmed, vc.UseCase(1.0, 0.0, -1.0))
    built = []
    for omega in OMEGAS:
        values = vc.UseCase(1.0, 0.0, -omega)
        fresh = _run(20_000, 4, 11, ties=ties)
        assert fresh.n_groups >= fitting.HULL_MIN_GROUPS
        first = vc.fit_policy("threshold", fresh, values)
        assert "threshold hull" not in hull.run_cache(fresh)
        _same(first, _general("threshold", warmed, values))
        _same(vc.fit_policy("threshold", fresh, values), first)  # the second fit, on the hull it builds
        built.append(isinstance(hull.run_cache(fresh).get("threshold hull"), hull.Chain))
    assert isinstance(hull.run_cache(warmed)["threshold hull"], hull.Chain) and all(built[1:]), built
