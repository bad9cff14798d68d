"""VOC curves, their area, omega_sup and dominance (``valuecore/_engine/voc.py``) against brute
force in Fractions over a grid of penalties.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import numpy as np
import pytest
import reference as ref
from helpers.engine_reference import (
    REL,
    SETTINGS,
    build,
    check_curve_shape,
    close,
    floats_inside,
    omega_grid,
    paired_cases,
    piece_value,
    piece_value_between,
    same_threshold,
    value_fns,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st

import valuecore as vc

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it


@settings(max_examples=70, **SETTINGS)
@given(paired_cases(max_n=14), st.lists(st.floats(0.0, 50.0), max_size=3))
# Found by exploration: at omega near 2**53 a value of 2e15 is one ulp (0.25) off its exact piece.
@example(
    pair=(
        ref.Case(n_classes=3, y_pred=[0] * 14, conf=[0.0] * 13 + [0.9999999999999999], y_true=[0] * 11 + [1] * 3,
                 weight=None, proba=None, exact=False),
        ref.Case(n_classes=3, y_pred=[], conf=[], y_true=[], weight=None, proba=None, exact=False),
    ),
    random_omegas=[],
)
# Found by exploration: tuning weights 1 and 0.1 tie exactly at omega = 1, but fl(1 + 0.1) is 2**-53 above
# 1 + 0.1 and the engine's (float) counts put the break one ulp past 1: the tie is float round-off's to decide.
@example(
    pair=(
        ref.Case(n_classes=3, y_pred=[], conf=[], y_true=[], weight=None, proba=None, exact=False),
        ref.Case(n_classes=3, y_pred=[0] * 10, conf=[0.0] * 5 + [1.0] + [0.0] * 4,
                 y_true=[0, 0, 1, 1, 1, 0, 1, 0, 1, 0],
                 weight=[0.0] * 5 + [1.0, 0.0, 0.0, 0.1, 0.1], proba=None, exact=False),
    ),
    random_omegas=[],
)
# Found by exploration: a wrong weight of 5e-324 beside a correct one of 1 puts a break past the floats.
@example(
    pair=(
        ref.Case(n_classes=3, y_pred=[], conf=[], y_true=[], weight=None, proba=None, exact=False),
        ref.Case(n_classes=3, y_pred=[0] * 10, conf=[0.1] * 10, y_true=[0, 0, 1, 1, 1, 0, 1, 0, 1, 0],
                 weight=[0.0] * 8 + [5e-324, 1.0], proba=None, exact=False),
    ),
    random_omegas=[],
)
def test_voc_curves_match_brute_force(pair, random_omegas):
    ev_case, tune_case = pair
    _, ev_run, _, ev, _ = build(ev_case)
    _, tune_run, _, tune, _ = build(tune_case)
    ev_table, tune_table = ref.count_table(ev), ref.count_table(tune)
    ev_counts = {t: ref.counts(ev, t) for t, *_ in tune_table}  # eval counts of every tunable threshold
    curves = {
        "oracle": vc.voc_curve(ev_run, "oracle"),
        "tuned": vc.voc_curve(ev_run, "tuned", tune_run=tune_run),
        "calibrated": vc.voc_curve(ev_run, "calibrated"),
        "accept_all": vc.voc_curve(ev_run, "accept_all"),
    }
    for mode, curve in curves.items():
        check_curve_shape(curve, mode, ev.total)
    omegas = omega_grid(*curves.values(), extra=random_omegas)
    for omega in omegas:
        scale = 1 + omega
        # oracle: best of every threshold on the evaluated data; in force: the highest maximiser
        oracle = curves["oracle"]
        assert close(oracle.value_at(omega), ref.oracle_value(ev, omega, ev_table), scale), omega
        choice, ambiguous = ref.tuned_choice(ev, omega, table=ev_table)
        if not ambiguous:
            assert same_threshold(float(oracle.threshold_at(omega)), choice), (omega, choice)
        # tuned: brute-force tuning on the tuning run (tie rule), applied to the evaluated run
        threshold, ambiguous = ref.tuned_choice(tune, omega, table=tune_table)
        if not ambiguous:
            _, c, w = ev_counts[threshold]
            tuned = curves["tuned"]
            assert same_threshold(float(tuned.threshold_at(omega)), threshold), (omega, threshold)
            assert close(tuned.value_at(omega), ref.line_value(c, w, ev.total, Fraction(omega)), scale), omega
        # calibrated: accept iff confidence >= omega / (1 + omega)
        assert close(curves["calibrated"].value_at(omega), ref.calibrated_value(ev, omega), scale), omega
        assert close(curves["accept_all"].value_at(omega), ref.accept_all_value(ev, omega), scale)
        # the pieces (what areas, omega_sup and dominance use) hold the same value, except
        # at isolated floats just past a calibrated break (see acceptance_limits), within the
        # same round-off allowance as the values themselves (a value near omega * N_wrong / N)
        for mode, curve in curves.items():
            piece = int(curve._piece(np.array([omega]))[0])
            wobble = mode == "calibrated" and 0 < np.min(np.abs(curve.breaks - omega)) <= 64 * np.spacing(omega)
            assert wobble or close(piece_value(curve, piece, omega), Fraction(float(curve.value_at(omega))), scale), (
                mode, omega)
    # vectorised evaluation agrees with the scalar one
    grid = np.array(omegas)
    for curve in curves.values():
        assert np.array_equal(curve.value_at(grid), np.array([float(curve.value_at(o)) for o in omegas]))


@pytest.mark.parametrize(
    "confidence, omega_of",
    [
        # fl(c / (1 - c)) rounds *below* k for c = fl(k / (k + 1)), k = 2, 6, 8, 10: at omega = k
        # the stored threshold fl(k / (k + 1)) == c accepts, the curve rejects.
        (2 / 3, lambda curve: 2.0),
        (8 / 9, lambda curve: 8.0),
        (10 / 11, lambda curve: 10.0),
        # fl(c / (1 - c)) rounds *above* the boundary: at that break omega_b the threshold
        # fl(omega_b / (1 + omega_b)) = 0.5625000000000001 > c rejects, the curve accepts.
        (0.5625, lambda curve: float(curve.breaks[1])),
    ],
    ids=["c=2/3,omega=2", "c=8/9,omega=8", "c=10/11,omega=10", "c=0.5625,omega=own-break"],
)
def test_calibrated_voc_agrees_with_the_calibrated_policy(confidence, omega_of):
    """The calibrated VOC curve at omega must be the value of the calibrated policy
    (threshold omega / (1 + omega), accept iff confidence >= threshold) and of the
    comparison table's value_calibrated_k column. The curve places its breaks at
    fl(c / (1 - c)), which rounds either side of the policy's boundary."""
    p = vc.Predictions.from_proba([[confidence, 1 - confidence]], y_true=[0])
    run = vc.presort(p)
    curve = vc.voc_curve(run, "calibrated")
    omega = omega_of(curve)
    use_case = vc.UseCase.from_omega(omega)
    policy = vc.fit_policy("calibrated_threshold", None, use_case)
    by_policy = vc.evaluate(policy, p, use_case).value_dimensionless
    by_table = vc.comparison_table({"m": run}, ks=(omega,)).metrics[f"value_calibrated_k{omega:g}"].iloc[0]
    assert by_policy == by_table
    assert float(curve.value_at(omega)) == by_policy


def test_calibrated_voc_at_zero_accepts_confidence_zero():
    """Seed 000 eq. 5b at omega = 0: threshold 0 / (1 + 0) = 0 accepts every item
    (confidence >= 0), so the calibrated VOC at 0 is the accuracy. A top-label run
    may hold confidence 0; the engine's calibrated curve drops those items at 0."""
    p = vc.Predictions.from_top_label(["0", "1", "0"], [0.0, 0.9, 0.5], ["0", "1", "1"], classes=["0", "1"])
    curve = vc.voc_curve(vc.presort(p), "calibrated")
    policy = vc.fit_policy("calibrated_threshold", None, vc.UseCase.from_omega(0.0))
    assert policy.threshold == 0.0
    assert vc.evaluate(policy, p, vc.UseCase.from_omega(0.0)).value_dimensionless == pytest.approx(2 / 3)
    assert float(curve.value_at(0.0)) == pytest.approx(2 / 3)  # engine: 1/3


def tuning_is_ambiguous(tune, tune_table, points) -> bool:
    """Whether tuning on ``tune`` is ambiguous (a near tie that float counts may decide otherwise) at some omega
    where the tuned value can change: the critical omegas, between them, and beyond the last."""
    points = sorted(set(points) | {Fraction(0)})
    probes = points + [(a + b) / 2 for a, b in zip(points[:-1], points[1:])] + [2 * points[-1] + 1]
    return any(ref.tuned_choice(tune, omega, table=tune_table)[1] for omega in probes)


@settings(max_examples=80, **SETTINGS)
@given(paired_cases(max_n=12))
# Found by exploration: confidence 1 - 2**-53 keeps the calibrated rule accepting up to omega = 2**54.
@example(pair=(
    ref.Case(n_classes=3, y_pred=[1, 1, 1], conf=[0.6666666666666666, 0.6666666666666666, 0.9999999999999999],
             y_true=[1, 1, 1], weight=None,
             proba=[[0.0, 0.6666666666666666, 0.3333333333333333]] * 2 + [[0.0, 0.9999999999999999, 0.0]],
             exact=False),
    ref.Case(n_classes=3, y_pred=[], conf=[], y_true=[], weight=None, proba=None, exact=False),
))
# Found by exploration: a wrong weight of 1e-12 puts omega_sup at 1e11, one ulp from C / W.
@example(pair=(
    ref.Case(n_classes=3, y_pred=[0] * 6, conf=[0.3333333333333333] * 6, y_true=[1, 1, 1, 0, 1, 0],
             weight=[0.0, 0.0, 0.0, 0.0, 1e-12, 0.1], proba=[[0.3333333333333333] * 3] * 6, exact=False),
    ref.Case(n_classes=3, y_pred=[], conf=[], y_true=[], weight=None, proba=None, exact=False),
))
# Found by exploration: tuning weights 2.2e-313 and 1 of correct items; float64's 1 + 2.2e-313 is 1, a tie that
# exact arithmetic breaks (the tuned curve's omega_sup is 0 in floats, inf exactly).
@example(pair=(
    ref.Case(n_classes=5, y_pred=[0] * 3, conf=[0.2] * 3, y_true=[0] * 3, weight=None, proba=[[0.2] * 5] * 3,
             exact=False),
    ref.Case(n_classes=5, y_pred=[0, 4, 0, 0, 0, 0], conf=[0.2, 1.0, 0.2, 0.2, 0.2, 0.2], y_true=[0, 4, 0, 0, 0, 0],
             weight=[2.2250738585e-313, 1.0, 0.0, 0.0, 0.0, 0.0],
             proba=[[0.2] * 5, [0.0, 0.0, 0.0, 0.0, 1.0]] + [[0.2] * 5] * 4, exact=False),
))
# Found by exploration: C / W = 1 / 5e-324 is past the floats, as evaluated and as tuned on.
@example(pair=(
    ref.Case(n_classes=3, y_pred=[1] * 6, conf=[0.1, 0.1, 0.1, 0.5, 0.1, 0.1], y_true=[2, 2, 2, 1, 2, 2],
             weight=[0.0, 0.0, 0.0, 1.0, 0.0, 5e-324], proba=None, exact=False),
    ref.Case(n_classes=3, y_pred=[], conf=[], y_true=[], weight=None, proba=None, exact=False),
))
@example(pair=(
    ref.Case(n_classes=3, y_pred=[], conf=[], y_true=[], weight=None, proba=None, exact=False),
    ref.Case(n_classes=3, y_pred=[1] * 6, conf=[0.1] * 6, y_true=[2, 2, 2, 1, 2, 2],
             weight=[0.0, 0.0, 0.0, 1.0, 0.0, 5e-324], proba=None, exact=False),
))
def test_omega_sup_matches_brute_force(pair):
    ev_case, tune_case = pair
    _, ev_run, _, ev, _ = build(ev_case)
    _, tune_run, _, tune, _ = build(tune_case)
    ev_table, tune_table = ref.count_table(ev), ref.count_table(tune)
    oracle = vc.voc_curve(ev_run, "oracle")
    # omega_sup is a quotient C / W: compare it relative to its size (0.1 / 1e-12 is one ulp off 1e11).
    want = ref.oracle_omega_sup(ev)
    assert close(oracle.omega_sup, want, 1 + abs(float(want))), (oracle.omega_sup, want)
    for mode, (fn, points) in value_fns(ev, tune, ev_table, tune_table).items():
        curve = vc.voc_curve(ev_run, mode, tune_run=tune_run)
        want = ref.omega_sup(fn, points)
        if want != math.inf and want > sys.float_info.max:  # C / W past the floats (W = 5e-324): inf is nearest
            assert curve.omega_sup == math.inf, (mode, curve.omega_sup)
            continue
        if mode == "tuned" and tuning_is_ambiguous(tune, tune_table, points):
            continue  # float round-off may tune another threshold than exact arithmetic (checked in the curve test)
        if mode == "calibrated" and any(1 - 2.0**-50 <= c < 1 for c in ev.conf) and curve.omega_sup > want:
            # The float test omega / (1 + omega) <= c wobbles over a wide range when c is within a few ulps
            # of 1: c = 1 - 2**-53 is accepted at every other float up to 2**54, not only up to
            # c / (1 - c) = 2**53 - 1, so the value is not one line between the reference's points.
            # The engine's sup is then a float the rule accepts at a positive value, at or above the exact
            # sup, and no float rule accepts a confidence below 1 from 2**54 on (1 + omega rounds to omega).
            # (Bisection in the wobble finds a flip, not always the last acceptance: 2**54 - 4.5e8 here.)
            sup = float(curve.omega_sup)
            below = [sup]
            for _ in range(4):
                below.append(math.nextafter(below[-1], 0.0))
            assert any(fn(Fraction(o)) > 0 for o in below), (sup, want)
            assert want <= Fraction(sup) <= 2**54, (sup, want)
            continue
        if mode == "calibrated" and want is not None and math.isfinite(curve.omega_sup):
            # The policy's own float test omega / (1 + omega) <= c resolves omega / (1 + omega) to an ulp
            # of 1, i.e. omega to about (1 + omega)**2 ulps of 1: the exact c / (1 - c) of the reference
            # and the float rule's flip may differ by that much (c = 1 - 1e-9: about 100 at omega = 1e9).
            slack = Fraction(4 * (1 + abs(float(want))) ** 2) * Fraction(2) ** -53
            if abs(Fraction(float(curve.omega_sup)) - Fraction(want)) <= slack:
                continue
        assert close(curve.omega_sup, want, 1 + abs(float(want))), (mode, curve.omega_sup, want)


@settings(max_examples=60, **SETTINGS)
@given(paired_cases(max_n=10), st.floats(0.0, 6.0), st.floats(0.0, 6.0))
# Found by exploration: confidence 1 - 2**-52, which the float rule accepts up to omega 6.0e15, past the exact
# c / (1 - c) = 2**52 - 1 (see test_omega_sup_matches_brute_force).
@example((ref.Case(n_classes=3, y_pred=[0] * 6, conf=[0.0] * 5 + [0.9999999999999998], y_true=[0] * 6, weight=None,
                   proba=None, exact=False),
          ref.Case(n_classes=3, y_pred=[], conf=[], y_true=[], weight=None, proba=None, exact=False)), 0.0, 0.0)
# ... and 1 - 1e-12, whose sup the float rule places 5.6e7 (about (1 + omega)**2 ulps) from the exact one.
@example((ref.Case(n_classes=5, y_pred=[0] * 3, conf=[0.2, 0.2, 0.9999999999989999], y_true=[0] * 3, weight=None,
                   proba=None, exact=False),
          ref.Case(n_classes=5, y_pred=[], conf=[], y_true=[], weight=None, proba=None, exact=False)), 0.0, 0.0)
def test_voc_area_matches_integration(pair, a, b):
    lo, hi = min(a, b), max(a, b)
    ev_case, tune_case = pair
    _, ev_run, _, ev, _ = build(ev_case)
    _, tune_run, _, tune, _ = build(tune_case)
    ev_table, tune_table = ref.count_table(ev), ref.count_table(tune)
    for mode, (fn, points) in value_fns(ev, tune, ev_table, tune_table).items():
        curve = vc.voc_curve(ev_run, mode, tune_run=tune_run)
        # Exact: between critical omegas the value is one line, whose mean is its midpoint value.
        def exact_area(low, high):
            cuts = sorted({Fraction(low), Fraction(high)} | {p for p in points if low < p < high})
            return sum(((v - u) * max(fn((u + v) / 2), Fraction(0)) for u, v in zip(cuts[:-1], cuts[1:])), Fraction(0))

        assert close(curve.area(lo, hi), exact_area(lo, hi), 1 + hi), (mode, lo, hi)
        # Numerical: a fine trapezoid of max(value, 0) of the brute-force values. The
        # integrand is piecewise linear: the rule errs only on grid cells holding a kink
        # or (tuned, calibrated) a jump, by at most h * |value| + h^2 there.
        xs = np.linspace(lo, hi, 20001)
        ys = np.maximum(ref.grid_values(mode, ev, xs, tune), 0.0)
        h = (hi - lo) / 20000
        kinks = 2 + sum(1 for p in points if lo <= p <= hi)
        bound = kinks * (h * (2 * float(np.abs(ys).max(initial=0.0)) + 1) + h * h) + 1e-9
        assert abs(curve.area(lo, hi) - float(np.trapezoid(ys, xs))) <= bound, mode
        # Unbounded: infinite iff the value stays positive; else the area up to omega_sup.
        sup = ref.omega_sup(fn, points)
        if mode == "calibrated" and sup != math.inf and math.isfinite(curve.omega_sup) and curve.omega_sup != sup:
            # The calibrated rule's own float test omega / (1 + omega) <= c places the engine's sup within about
            # (1 + omega)**2 ulps of 1 of the exact c / (1 - c), and a confidence within a few ulps of 1 is
            # accepted up to 2**54 (test_omega_sup_matches_brute_force). Between the two sups the value per item
            # lies in [0, 1]: the areas differ by at most the gap.
            gap = abs(Fraction(float(curve.omega_sup)) - Fraction(sup))
            slack = Fraction(4 * (1 + abs(float(sup))) ** 2) * Fraction(2) ** -53
            wobble = any(1 - 2.0**-50 <= c < 1 for c in ev.conf) and sup < curve.omega_sup <= 2.0**54
            assert gap <= slack or wobble, (mode, curve.omega_sup, sup)
            assert abs(Fraction(curve.area(0.0, math.inf)) - exact_area(0, sup)) <= gap + Fraction(REL) * (1 + sup)
        elif sup == math.inf:
            assert curve.area(0.0, math.inf) == math.inf
        else:
            assert close(curve.area(0.0, math.inf), exact_area(0, sup), 1 + float(sup)), mode
        assert curve.area(lo, lo) == 0.0


# Issue 15: [0, 5e-324] was a tie: its float midpoint rounds to 0, where the calibrated
# curve still accepts confidence 0; on (0, 5e-324] it accepts 1 item of 6, a far lower value.
@example(
    pair=(
        ref.Case(n_classes=3, y_pred=[0] * 12, conf=[0.1] * 12, y_true=[0] * 12, weight=[0.0] * 11 + [1.0],
                 proba=None, exact=False),
        ref.Case(n_classes=3, y_pred=[0] * 6, conf=[0.0] * 5 + [5e-324], y_true=[0] * 6, weight=None,
                 proba=None, exact=False),
    ),
    mode_a="oracle", mode_b="calibrated", omega_max=1.0,
)
# Found by exploration: a wrong weight of 2.2e-313 makes the difference's slope subnormal.
@example(
    pair=(
        ref.Case(n_classes=3, y_pred=[], conf=[], y_true=[], weight=None, proba=None, exact=False),
        ref.Case(n_classes=3, y_pred=[0] * 11, conf=[0.3333333333333333] * 11,
                 y_true=[0, 0, 1] + [0] * 4 + [1, 0, 0, 0],
                 weight=[0.0, 1.0] + [0.0] * 5 + [2.2250738585e-313, 0.0, 0.0, 0.0], proba=None, exact=False),
    ),
    mode_a="oracle", mode_b="oracle", omega_max=1.0,
)
# Found by exploration: tuning values 3.425... and 3.425... + 6.5e-91 are equal in floats.
@example(
    pair=(
        ref.Case(n_classes=9, y_pred=[1] * 8, conf=[0.1] * 8, y_true=[1] * 8,
                 weight=[0.0, 6.45561559828309e-91, 0.0, 0.0, 0.0, 0.1, 4.6251307920402605, 0.0],
                 proba=None, exact=False),
        ref.Case(n_classes=9, y_pred=[1] * 8, conf=[0.6647116051697842] + [0.0] * 4 + [0.738003418943091, 0.0, 0.0],
                 y_true=[1] * 8, weight=[0.0] * 5 + [3.425247481946993, 6.45561559828309e-91, 0.0],
                 proba=None, exact=False),
    ),
    mode_a="tuned", mode_b="calibrated", omega_max=6.641409323623857,
)
# Found by exploration: cumulative wrong weight taken as accepted - correct lost a 1e-167 weight
# (1 + 1e-167 - 1 = 0), decreased, and the hull divided by zero.
@example(
    pair=(
        ref.Case(n_classes=9, y_pred=[], conf=[], y_true=[], weight=None, proba=None, exact=False),
        ref.Case(n_classes=9, y_pred=[7, 1, 7, 7, 7, 7], conf=[0.5, 1.0, 0.5, 0.5, 0.5, 0.5], y_true=[7, 2, 1, 7, 7, 7],
                 weight=[0.0, 9.55263986005629e-168, 0.0, 0.0, 0.0, 1.0],
                 proba=[[0.0] * 7 + [0.5, 0.5], [0.0, 1.0] + [0.0] * 7] + [[0.0] * 7 + [0.5, 0.5]] * 4, exact=False),
    ),
    mode_a="oracle", mode_b="oracle", omega_max=1.0,
)
@settings(max_examples=80, **SETTINGS)
@given(
    paired_cases(max_n=12),
    st.sampled_from(("oracle", "calibrated", "accept_all", "tuned")),
    st.sampled_from(("oracle", "calibrated", "accept_all")),
    st.floats(0.01, 8.0),
)
def test_dominance_segments_name_the_higher_curve(pair, mode_a, mode_b, omega_max):
    """Every segment names the leader at every float strictly inside it (checked at both
    ends' neighbours, however narrow); at a shared end the curves are level or one of the
    two segments' leaders leads; a point segment (omega, omega, leader) is exact."""
    case_a, case_b = pair
    _, run_a, _, ra, _ = build(case_a)
    _, run_b, _, rb, _ = build(case_b)
    table_a = ref.count_table(ra)
    fn_a = value_fns(ra, rb, table_a, ref.count_table(rb))[mode_a][0]
    fn_b = value_fns(rb, rb, ref.count_table(rb), ref.count_table(rb))[mode_b][0]
    curve_a = vc.voc_curve(run_a, mode_a, tune_run=run_b)
    curve_b = vc.voc_curve(run_b, mode_b)
    result = vc.dominance(curve_a, curve_b, omega_max)
    segments = result.segments
    assert segments[0][0] == 0.0 and segments[-1][1] == omega_max
    for (s0, e0, l0), (s1, e1, l1) in zip(segments[:-1], segments[1:]):
        assert e0 == s1 and l0 != l1 and s0 <= e0
    assert result.crossings == tuple(sorted({s for s, _, _ in segments[1:]}))
    tol = 1e-9

    def agrees(diff, leader):
        return {"a": diff > -tol, "b": diff < tol, "tie": abs(diff) <= tol}[leader]

    def near_break(omega):
        # The calibrated rule omega / (1 + omega) is not monotone at the last ulp: just
        # past a break the float test may accept again (documented in _acceptance_limits).
        return any(c.mode == "calibrated" and np.any(np.abs(c.breaks - omega) <= 64 * np.spacing(omega))
                   for c in (curve_a, curve_b))

    def ambiguous(omega):
        # Tuning thresholds whose values differ below round-off (e.g. a weight of 6e-91
        # next to 3.4): the engine cannot see the difference, the tie rule decides.
        return mode_a == "tuned" and ref.tuned_choice(rb, omega)[1]

    signs = set()
    for start, end, leader in segments:
        inside = floats_inside(start, end)
        for omega in inside:
            diff = fn_a(omega) - fn_b(omega)
            if (near_break(omega) or ambiguous(omega)) and not agrees(diff, leader):
                continue
            assert agrees(diff, leader), (start, end, leader, omega, float(diff))
            if abs(diff) > tol:
                signs.add("a" if diff > 0 else "b")
        if start < end and not inside:
            # No float inside (one ulp, e.g. [0, 5e-324]): the curves' piecewise-linear
            # form there, checked against the reference at floats in test_voc_curves_match_brute_force.
            diff = piece_value_between(curve_a, start) - piece_value_between(curve_b, start)
            assert agrees(diff, leader), (start, end, leader, float(diff))
    for omega in sorted({s for s, _, _ in segments} | {omega_max}):
        if ambiguous(omega):
            continue
        diff = fn_a(omega) - fn_b(omega)
        holding = [lab for s, e, lab in segments if s <= omega <= e]
        points = [lab for s, e, lab in segments if s == omega == e]
        assert agrees(diff, points[0]) if points else any(agrees(diff, lab) for lab in holding), (
            omega, holding, float(diff))
        if abs(diff) > tol:
            signs.add("a" if diff > 0 else "b")
    leaders = {lab for _, _, lab in segments} - {"tie"}
    if result.dominant == "tie":
        assert not leaders and not signs
    elif result.dominant in ("a", "b"):
        assert leaders == {result.dominant} and signs <= {result.dominant}
    else:
        assert len(leaders) == 2
    if len(signs) == 2:
        assert result.dominant is None


def test_dominance_names_a_single_omega_where_a_jump_gives_a_third_leader():
    """At omega = 0 the calibrated threshold 0 accepts confidence 0 too: there the
    calibrated curve leads, while on (0, omega_max] the other one does. Neither curve
    is above or level everywhere, and the point is a segment of its own."""
    steady = vc.presort(vc.Predictions.from_top_label(["0", "0"], [0.9, 0.1], ["0", "1"], classes=["0", "1"]))
    zeros = vc.presort(vc.Predictions.from_top_label(["0"] * 4, [0.0, 0.0, 0.0, 0.5], ["0"] * 4, classes=["0", "1"]))
    a, b = vc.voc_curve(steady, "oracle"), vc.voc_curve(zeros, "calibrated")
    assert float(a.value_at(0.0)) == 0.5 and float(b.value_at(0.0)) == 1.0
    assert float(b.value_at(5e-324)) == 0.25
    result = vc.dominance(a, b, 2.0)
    assert result.segments == ((0.0, 0.0, "b"), (0.0, 2.0, "a"))
    assert result.crossings == (0.0,) and result.dominant is None
    assert vc.dominance(a, b, 0.0) == vc.Dominance(0.0, ((0.0, 0.0, "b"),), (), "b")
    with pytest.raises(ValueError, match=r"omega_max must be a finite omega >= 0, got -1.0"):
        vc.dominance(a, b, -1.0)
