"""Shared strategies and checks of the engine tests (moved from test_engine_reference.py)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import reference as ref
from hypothesis import HealthCheck, assume
from hypothesis import strategies as st

import valuecore as vc

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


REL = 1e-9


def close(engine, expected, scale: float = 1.0, rel: float = REL) -> bool:
    """``engine`` (float / None) equals ``expected`` (Fraction / None) within rel * scale."""
    if expected is None or engine is None:
        return engine is None and expected is None
    if isinstance(expected, float) and math.isnan(expected):
        return math.isnan(engine)
    if expected in (math.inf, -math.inf):
        return engine == expected
    return abs(Fraction(float(engine)) - Fraction(expected)) <= Fraction(rel) * Fraction(max(1.0, scale))


def same_threshold(engine, expected) -> bool:
    """Engine threshold (float, NaN or None) vs reference (float or None)."""
    if expected is None:
        return engine is None or (isinstance(engine, float) and math.isnan(engine))
    return engine is not None and not math.isnan(engine) and float(engine) == expected


def build(case: ref.Case, vals: ref.Vals | None = None):
    p = case.predictions()
    run = vc.presort(p)
    values = None if vals is None else vals.engine(case.classes)
    matrix = None if vals is None else vals.ref(case.n_classes)
    return p, run, values, case.ref(), matrix


@st.composite
def policies_for(draw, case: ref.Case):
    """A policy of any kind with thresholds drawn from the run's confidences or anywhere."""
    kinds = ["accept_all", "threshold", "calibrated_threshold", "class_thresholds", "calibrated_class_thresholds"]
    if case.proba is not None:
        kinds.append("expected_value")
    kind = draw(st.sampled_from(kinds))
    threshold = st.one_of(st.none(), st.sampled_from(case.conf or [0.5]), st.floats(0.0, 1.0))
    if kind in ("threshold", "calibrated_threshold"):
        return vc.Policy(kind, threshold=draw(threshold))
    if kind.endswith("class_thresholds"):
        return vc.Policy(kind, class_thresholds=tuple((c, draw(threshold)) for c in case.classes))
    return vc.Policy(kind)


def ref_actions(policy: vc.Policy, run: ref.RefRun, matrix) -> list:
    """The reference decision of a policy, from its kind and thresholds."""
    if policy.kind == "accept_all":
        return ref.accept_all_actions(run)
    if policy.kind in ("threshold", "calibrated_threshold"):
        return ref.threshold_actions(run, policy.threshold)
    if policy.kind.endswith("class_thresholds"):
        mapping = dict(policy.class_thresholds)
        return ref.class_threshold_actions(run, [mapping[str(k)] for k in range(run.n_classes)])
    return ref.expected_value_actions(run, matrix)


def check_result(result: vc.PolicyResult, expected: dict, scale: float, confusion: bool = True) -> None:
    tiny = Fraction(REL) * Fraction(scale)
    for field in (
        "n_items", "value_total", "value_per_item", "value_dimensionless", "coverage",
        "selective_accuracy", "selective_risk", "n_correct", "n_wrong", "n_abstain",
    ):
        got, want = getattr(result, field), expected[field]
        # A ratio whose denominator is below round-off (e.g. an accepted mass of 1e-296
        # on a run of weight 1) is ill-conditioned: None or any value is acceptable. An
        # accepted mass of exactly 0 must give None, and is compared.
        if field.startswith("selective") and 0 < expected["accepted"] <= tiny:
            continue
        if field == "value_dimensionless" and abs(expected["dimensionless_scale"]) <= tiny:
            continue
        assert close(got, want, scale), (field, got, want)
    if confusion:
        C = len(expected["confusion"])
        assert result.confusion.shape == (C, C + 1)
        for k in range(C):
            for a in range(C + 1):
                assert close(result.confusion[k, a], expected["confusion"][k][a], scale)
                assert close(result.cell_values[k, a], expected["cell_values"][k][a], scale)


def label_free_values(case: ref.Case):
    """Any values for a full-proba run; a use case for a top-label run (documented)."""
    return ref.values_for(case.n_classes, case.exact) if case.proba is not None else ref.use_cases(case.exact)


# ----------------------------------------------------------------------------- VOC
DYADIC_OMEGAS = (0.0, 0.125, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 8.0, 10.0, 64.0)


def omega_grid(*curves, extra=()):
    """Dyadic omegas, every break of the curves and the midpoints between them."""
    points = set(DYADIC_OMEGAS) | set(extra)
    for curve in curves:
        finite = [b for b in curve.breaks.tolist() if math.isfinite(b)]
        points |= set(finite)
        points |= {(a + b) / 2 for a, b in zip(finite[:-1], finite[1:])}
    return sorted(points)


@st.composite
def paired_cases(draw, **kwargs):
    """An evaluation run and a tuning run with the same classes."""
    n_classes = draw(st.integers(2, 10))
    kwargs.update(min_classes=n_classes, max_classes=n_classes)
    exact = draw(st.booleans())
    return draw(ref.cases(exact=exact, **kwargs)), draw(ref.cases(exact=exact, **kwargs))


def check_curve_shape(curve: vc.curves.VOCCurve, mode: str, n_items):
    assert curve.mode == mode
    assert curve.breaks[0] == 0.0 and curve.breaks[-1] == math.inf
    # Non-decreasing: a calibrated curve keeps zero-width pieces (at omega = 0 a confidence of 0 is accepted).
    assert np.all(np.diff(curve.breaks) >= 0), curve.breaks
    assert curve.n_correct.shape == curve.n_wrong.shape == curve.thresholds.shape == (curve.breaks.size - 1,)
    assert close(curve.n_items, n_items)


def value_fns(ev, tune, ev_table, tune_table):
    """Exact reference value functions and their critical omegas, per mode."""
    return {
        "oracle": (lambda o: ref.oracle_value(ev, o, ev_table), ref.critical_omegas(ev_table)),
        "tuned": (lambda o: ref.tuned_value(tune, ev, o, tune_table)[0], ref.critical_omegas(tune_table, ev_table)),
        "calibrated": (
            lambda o: ref.calibrated_value(ev, o),
            sorted(set(ref.calibrated_critical_omegas(ev)) | set(ref.critical_omegas(ev_table))),
        ),
        "accept_all": (lambda o: ref.accept_all_value(ev, o), ref.critical_omegas(ev_table[:1] + ev_table[-1:])),
    }


def piece_value(curve: vc.curves.VOCCurve, piece: int, omega) -> Fraction:
    """Exact value of one piece of a curve at a (real) omega."""
    if curve.n_items <= 0:
        return Fraction(0)
    c, w = Fraction(float(curve.n_correct[piece])), Fraction(float(curve.n_wrong[piece]))
    return (c - Fraction(omega) * w) / Fraction(float(curve.n_items))


def piece_value_between(curve: vc.curves.VOCCurve, omega: float) -> Fraction:
    """The value at the real midpoint of (omega, next float): the piece holding that open interval."""
    upper = math.nextafter(omega, math.inf)
    holding = [j for j in range(curve.breaks.size - 1) if curve.breaks[j] <= omega and upper <= curve.breaks[j + 1]
               and curve.breaks[j] < curve.breaks[j + 1]]
    assert len(holding) == 1, (omega, curve.breaks)
    return piece_value(curve, holding[0], (Fraction(omega) + Fraction(upper)) / 2)


def floats_inside(start: float, end: float) -> list:
    """Floats strictly between start and end: both ends' neighbours and three inner ones."""
    points = {math.nextafter(start, math.inf), math.nextafter(end, -math.inf)}
    points |= {start + (end - start) * f for f in (0.1, 0.5, 0.9)}
    return sorted(p for p in points if start < p < end)


# ------------------------------------------------------------------ comparison table
@st.composite
def model_family(draw):
    """2-3 models scored on the same labelled items, plus tuning runs."""
    n_classes = draw(st.integers(2, 4))
    n = draw(st.integers(1, 12))
    kw = dict(min_n=n, max_n=n, min_classes=n_classes, max_classes=n_classes, exact=True)
    base = draw(ref.cases(**kw))
    assume(sum(base.weights_or_ones) > 0)
    n_models = draw(st.integers(2, 3))
    models = [base]
    for _ in range(n_models - 1):
        models.append(draw(ref.cases(**kw)).replace(y_true=base.y_true, weight=base.weight))
    tune_n = draw(st.integers(0, 10))
    tune_kw = dict(kw, min_n=tune_n, max_n=tune_n)
    tunes = [draw(ref.cases(**tune_kw)) for _ in models] if draw(st.booleans()) else None
    return models, tunes
