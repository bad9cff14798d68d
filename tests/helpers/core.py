"""The core's test helpers: runs built for a test, and small compositions of the engine's private steps
(written as the core once did) that tests compare against."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import strategies as st

import valuecore as vc
from valuecore._engine.sorting import _group_ranks, _order_by_rank
from valuecore._monitor.bands import _ks_test, _SortedECDF
from valuecore._stats.uncertainty import _band_tables, _band_values, _direct_values


# ---------------------------------------------------------------- the engine
def descending_order(confidence: np.ndarray) -> np.ndarray:
    """``np.argsort(-confidence, kind="stable")``, faster when confidences repeat.

    Ties keep their order, so the result is identical.
    """
    ranked = _group_ranks(confidence)
    rank, thresholds = ranked if ranked is not None else (None, None)
    return _order_by_rank(rank, 0 if thresholds is None else thresholds.shape[0], confidence)


# ---------------------------------------------------------------- statistics
def voc_values(
    mode: str,
    omegas: np.ndarray,
    evaluated,
    eval_counts: np.ndarray,
    tune=None,
    tune_counts: np.ndarray | None = None,
) -> np.ndarray:
    """Dimensionless VOC values of a batch of resamples, shape (batch, m).

    With counts of ones (unit weights) this is ``voc_curve(...).value_at(omegas)``.
    """
    if mode in ("accept_all", "calibrated"):
        return _direct_values(mode, omegas, evaluated, eval_counts)
    return _band_values(mode, omegas, evaluated, tune, _band_tables(mode, evaluated, eval_counts, tune, tune_counts))


# ---------------------------------------------------------------- monitoring
def weighted_ks(reference: np.ndarray, ref_weight: np.ndarray, sample: np.ndarray, weight: np.ndarray):
    """(distance, p-value) of the weighted two-sample Kolmogorov-Smirnov test."""
    if ref_weight.sum() <= 0 or weight.sum() <= 0:
        return math.nan, math.nan
    return _ks_test(_SortedECDF(reference, ref_weight), ref_weight, sample, weight)


# ---------------------------------------------------------------- first written for test_prior_shift.py
def gaussian_run(mix, n, rng, *, separation=2.0, labelled=True):
    """Exactly calibrated under the uniform mix: class-conditional Gaussians, Bayes posteriors."""
    n_classes = len(mix)
    y = rng.choice(n_classes, size=n, p=np.asarray(mix))
    x = rng.standard_normal((n, n_classes)) + separation * np.eye(n_classes)[y]
    logits = separation * x
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    classes = tuple(f"c{k}" for k in range(n_classes))
    return vc.Predictions.from_proba(proba, y_true=np.asarray(classes)[y] if labelled else None, classes=classes)


# ---------------------------------------------------------------- first written for test_pipeline.py
ROOT = Path(__file__).resolve().parents[2]


DIGITS = ROOT / "sample_runs" / "digits"


def awkward_runs(folder: Path) -> Path:
    """A (val and test), B (test only), C (unlabelled val), D (top label only) from the digits samples."""
    frame = pd.read_csv(DIGITS / "logreg.csv")
    frame.to_csv(folder / "A.csv", index=False)
    mlp = pd.read_csv(DIGITS / "mlp.csv")
    mlp[mlp["split"] == "test"].to_csv(folder / "B.csv", index=False)
    svm = pd.read_csv(DIGITS / "svm_rbf.csv")
    svm["y_true"] = svm["y_true"].astype("Int64").astype(object)
    svm.loc[svm["split"] == "val", "y_true"] = None
    svm.to_csv(folder / "C.csv", index=False)
    nb = pd.read_csv(DIGITS / "naive_bayes.csv")
    proba = nb.filter(like="proba_").to_numpy()
    pd.DataFrame({"id": nb["id"], "split": nb["split"], "y_true": nb["y_true"], "y_pred": proba.argmax(axis=1),
                  "confidence": proba.max(axis=1)}).to_csv(folder / "D.csv", index=False)
    return folder


# ---------------------------------------------------------------- first written for test_sorting.py
ATTRIBUTES = ("order", "thresholds", "group_end", "cum_accepted", "cum_correct", "cum_wrong", "class_order",
              "class_group_end", "class_group_class", "class_group_threshold", "class_cum_correct", "class_cum_wrong")


def _assert_identical(got, expected):
    for name in ATTRIBUTES:
        a, b = getattr(got, name), getattr(expected, name)
        if b is None:
            assert a is None, name
            continue
        np.testing.assert_array_equal(a, b, err_msg=name)
        assert a.dtype == b.dtype, name


# ---------------------------------------------------------------- first written for test_recommend_tally.py
@st.composite
def whole_number_rows(draw, n, n_classes, top):
    """Float array (n, n_classes) of whole numbers 0..top, no row all zeros (rows of probabilities to scale).

    Drawn as one flat list, faster than a list of rows each filtered; a row of zeros becomes a tie between
    every class instead of a rejected draw.
    """
    cells = draw(st.lists(st.integers(0, top), min_size=n * n_classes, max_size=n * n_classes))
    rows = np.array(cells, dtype=float).reshape(n, n_classes)
    rows[rows.sum(axis=1) == 0] = 1.0
    return rows


@st.composite
def labelled_runs(draw, max_n=60, kinds=("unit", "integer", "fractional")):
    """(Predictions, weight kind) with few distinct probabilities (ties in confidence and between classes);
    the weights' kind is one of ``kinds``."""
    n_classes = draw(st.integers(2, 4))
    n = draw(st.integers(2, max_n))
    grid = draw(st.integers(1, 6))
    proba = draw(whole_number_rows(n, n_classes, grid))
    proba /= proba.sum(axis=1, keepdims=True)
    y_true = draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n))
    kind = draw(st.sampled_from(kinds))
    if kind == "unit":
        weight = None
    elif kind == "integer":
        weight = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n).filter(lambda w: sum(w) > 1))
    else:
        # 0 or above 1e-3, drawn without the filter that rejected a fifth of the runs' draws
        positive = st.floats(1e-3, 10.0, exclude_min=True)
        weight = draw(st.lists(st.one_of(st.just(0.0), positive), min_size=n, max_size=n)
                      .filter(lambda w: sum(w) > 1e-2))
    return vc.Predictions.from_proba(proba, y_true=y_true, sample_weight=weight), kind
