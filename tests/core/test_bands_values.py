"""The bands' copies' sums in numpy (issue 33): within a few ulps of the exact sums.

Each bootstrap copy's reference value was a dot over the reference's items (``mean @ weights``), which OpenBLAS
splits over its threads above 10^4 items: its bits were set by the machine's cores, and on a loaded machine its
threads cost seconds per new value on the Monitor page; each copy's estimate of a chunk was a bincount of every
item. The core now sums both over distinct confidences where the items of one share both outcomes
(``_Copies.reference_values`` and ``chunk_values``), else the reference item by item in numpy and the chunks by
bincount as before. Those bits are not the old ones, so the comparison is with the exact sums (each product
split exactly in two, then ``math.fsum``), in ulps of the items' mean size (the scale of a rounding error in a
sum that cancels): the new sums within 4 of it; every column of ``monitor_bands`` but the bands' edges is the
same bits as with the old sums (every alert and coverage flag), the edges within a few ulps of their row's
largest figure, and the same in the chart's tooltips.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import valuecore as vc
from valuecore import wording
from valuecore._monitor import bands

from reference_bands import SETTINGS, SlowReferenceBootstrap, bits, frames_same, proba_run, same_bits

NEW_ULPS = 4  # the new sums from the exact one, in ulps of the items' mean size (measured: at most 2)
DOT_ULPS = 16  # the dot's, one thread below 10^4 items, the machine's threads above (measured: at most 2)
BINCOUNT_ULPS = 64  # bincount's sum item after item (measured: at most 8 here, 157 on 6,250 items)
EDGE_ULPS = 16  # the bands' edges with the new sums and with the old, in ulps of the row's largest figure


def ulps(a, b, scale=None) -> np.ndarray:
    """Units in the last place between a and b: of the larger in size, or of ``scale`` (a sum whose terms
    cancel is off by the rounding of its terms, not of its result)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    size = np.maximum(np.abs(a), np.abs(b)) if scale is None else np.asarray(scale)
    return np.abs(a - b) / np.spacing(size)


def two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a * b == p + e`` exactly (Dekker's split; no overflow at these sizes)."""
    p = a * b

    def split(x):
        c = 134217729.0 * x
        high = c - (c - x)
        return high, x - high

    ah, al = split(a)
    bh, bl = split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def exact_reference_values(slow: SlowReferenceBootstrap, reference, values, rng) -> tuple[np.ndarray, np.ndarray]:
    """Each copy's exact weighted mean of its items' means (then one rounding, and the division), and its weighted
    mean of their sizes (the scale of a rounding error in a sum that cancels), from the same draws as ``slow``."""
    matrix = values.for_classes(reference.classes)
    outcome = bands._outcomes(slow._policy, reference, matrix)
    out = []
    for calibrator in slow.calibrators:
        while True:  # the draws slow made, skipping those it skipped (none fail to fit here)
            copies = reference.sample_weight * rng.multinomial(reference.n, np.full(reference.n, 1.0 / reference.n))
            if copies.sum() > 0:
                break
        mean, _ = bands._moments(bands._truth(bands._calibrated(calibrator, reference), matrix), outcome)
        p, e = two_product(mean, copies)
        out.append((math.fsum(np.concatenate([p, e])) / copies.sum(), float(np.abs(mean) @ copies / copies.sum())))
    return np.asarray(out).T


CLASS_THRESHOLDS = vc.Policy("class_thresholds", class_thresholds={f"c{k}": 0.3 + 0.05 * k for k in range(10)})
CASES = {
    **{name: (make, policy, pair, calibration) for name, (make, policy, pair, calibration) in SETTINGS.items()},
    # a threshold per class: the items of one confidence may not share their outcomes (summed item by item)
    "use case, ten classes, a threshold per class": (lambda rng: (proba_run(rng, 400, 10, True),
                                                                  proba_run(rng, 300, 10)),
                                                     CLASS_THRESHOLDS, (vc.UseCase(1, 0, -4),
                                                                        vc.UseCase(2, -1, -9)), "auto"),
    # above OpenBLAS's threading cut (10^4 items): the dot there was split over the machine's threads
    "use case, ten classes, 12,000 items": (lambda rng: (proba_run(rng, 12_000, 10), proba_run(rng, 2_000, 10)),
                                            vc.Policy("threshold", threshold=0.55), (vc.UseCase(1, 0, -4),
                                                                                     vc.UseCase(1, 0, -9.5)), "auto"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_copys_reference_value_is_within_a_few_ulps_of_the_exact_sum(case):
    make, policy, values_pair, calibration = CASES[case]
    reference, _ = make(np.random.default_rng(21))
    for values in values_pair:
        method = bands._estimation_method(reference, values, calibration)
        new = bands._ReferenceBootstrap(policy, reference, values, method, 8, np.random.default_rng(4))
        slow = SlowReferenceBootstrap(policy, reference, values, method, 8, np.random.default_rng(4))
        exact, scale = exact_reference_values(slow, reference, values, np.random.default_rng(4))
        assert same_bits(new.mu, slow.mu)  # the core's kept arrays sum as the items' means do
        assert ulps(new.mu, exact, scale).max() <= NEW_ULPS
        assert ulps(slow.mu_by_dot, exact, scale).max() <= DOT_ULPS


def exact_chunk_values(slow: SlowReferenceBootstrap, watched, rows: np.ndarray, n_chunks: int):
    """Each copy's exact weighted mean of its items' means over each chunk, and of their sizes."""
    matrix = slow._matrix
    outcome = bands._outcomes(slow._policy, watched, matrix)
    weight = watched.sample_weight
    exact, scale = np.zeros((len(slow.calibrators), n_chunks)), np.zeros((len(slow.calibrators), n_chunks))
    for b, calibrator in enumerate(slow.calibrators):
        mean, _ = bands._moments(bands._truth(bands._calibrated(calibrator, watched), matrix), outcome)
        for c in range(n_chunks):
            inside = rows == c
            p, e = two_product(mean[inside], weight[inside])
            exact[b, c] = math.fsum(np.concatenate([p, e])) / weight[inside].sum()
            scale[b, c] = np.abs(mean[inside]) @ weight[inside] / weight[inside].sum()
    return exact, scale


@pytest.mark.parametrize("case", list(CASES))
def test_each_copys_chunk_estimates_are_within_a_few_ulps_of_the_exact_sums(case):
    make, policy, values_pair, calibration = CASES[case]
    reference, watched = make(np.random.default_rng(22))
    rows = np.arange(watched.n) * 3 // watched.n
    for values in values_pair:
        method = bands._estimation_method(reference, values, calibration)
        new = bands._ReferenceBootstrap(policy, reference, values, method, 6, np.random.default_rng(5))
        slow = SlowReferenceBootstrap(policy, reference, values, method, 6, np.random.default_rng(5))
        exact, scale = exact_chunk_values(slow, watched, rows, 3)
        estimates = new.estimates(watched, rows, 3)
        assert same_bits(estimates, slow.estimates(watched, rows, 3))
        by_distinct = new._copies._cells(watched, bands._outcomes(policy, watched, new._matrix)) is not None
        assert ulps(estimates, exact, scale).max() <= (NEW_ULPS if by_distinct else BINCOUNT_ULPS)
        assert ulps(slow.estimates(watched, rows, 3, by_bincount=True), exact, scale).max() <= BINCOUNT_ULPS


def test_the_sum_by_distinct_confidence_is_the_path_taken_for_a_threshold_and_not_for_one_per_class(monkeypatch):
    """So the cases above test both sums."""
    taken = []
    cells = bands._Copies._cells
    monkeypatch.setattr(bands._Copies, "_cells",
                        lambda self, *args: taken.append(cells(self, *args) is not None) or cells(self, *args))
    reference = proba_run(np.random.default_rng(3), 400, 10)
    for policy in (vc.Policy("threshold", threshold=0.5), CLASS_THRESHOLDS):
        bands._ReferenceBootstrap(policy, reference, vc.UseCase(1, 0, -4), "isotonic", 4, np.random.default_rng(0))
    assert taken == [True, False]


def by_dot(self, reference, matrix, outcome):
    """The reference values as they were: OpenBLAS's dot, copy by copy."""
    return np.array([float(mean @ self.weights(reference, b) / self.totals[b])
                     for b, mean in enumerate(self.means(reference, matrix, outcome))])


def by_bincount(self, *args):
    """The chunks' sums as they were: numpy's bincount of every item, copy by copy (``estimates``' own loop)."""
    return None


@pytest.mark.parametrize("case", list(CASES))
def test_the_bands_are_the_old_sums_but_for_the_edges_within_ulps_and_no_alert_or_coverage_moves(monkeypatch, case):
    make, policy, values_pair, calibration = CASES[case]
    reference, watched = make(np.random.default_rng(6))
    splits = {"watched": watched, "reference again": reference}
    for values in values_pair:
        bands._BOOTSTRAP_COPIES.clear()
        new = vc.monitoring.monitor_bands(reference, splits, policy, values, n_chunks=4, n_resamples=12,
                                          calibration=calibration)
        with monkeypatch.context() as patched:
            patched.setattr(bands._Copies, "reference_values", by_dot)
            patched.setattr(bands._Copies, "chunk_values", by_bincount)
            bands._BOOTSTRAP_COPIES.clear()
            old = vc.monitoring.monitor_bands(reference, splits, policy, values, n_chunks=4, n_resamples=12,
                                              calibration=calibration)
        edges = ["band_low", "band_high", "reference_low", "reference_high"]
        assert frames_same(new.frame.drop(columns=edges), old.frame.drop(columns=edges))  # alerts, coverage too
        # an edge is an estimate less or plus a half-width: its rounding is of the larger of the two
        scale = np.abs(new.frame[["estimated_value_per_item", *edges]].to_numpy()).max(axis=1)[:, None]
        assert ulps(new.frame[edges], old.frame[edges], scale).max() <= EDGE_ULPS
        for column in ("band_low", "band_high"):  # as the chart's tooltips show them
            assert [wording.amount(x, "$") for x in new.frame[column]] == \
                [wording.amount(x, "$") for x in old.frame[column]]
        assert ulps(new.reference_mean_sd, old.reference_mean_sd) <= 64  # a spread of nearby sums: fewer bits
        assert new.reference_value_per_item == old.reference_value_per_item
    bands._BOOTSTRAP_COPIES.clear()


def test_the_ulp_comparison_sees_one_changed_copy():
    """Off by 1e-13 in one copy's reference value (about 500 ulps of 0.2) fails the bound the tests above use."""
    make, policy, (values, _), calibration = CASES["use case, ten classes, weighted"]
    reference, _ = make(np.random.default_rng(21))
    method = bands._estimation_method(reference, values, calibration)
    slow = SlowReferenceBootstrap(policy, reference, values, method, 8, np.random.default_rng(4))
    exact, scale = exact_reference_values(slow, reference, values, np.random.default_rng(4))
    nudged = slow.mu.copy()
    nudged[3] += 1e-13
    assert ulps(slow.mu, exact, scale).max() <= NEW_ULPS < ulps(nudged, exact, scale).max()
    assert not np.array_equal(bits(nudged), bits(slow.mu))
