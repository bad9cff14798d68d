"""Thresholds per segment with fairness caps, on known-truth scenarios: do the caps hold where they are promised
(the fitting items), and how far do the gaps drift on new items from the same scenario?

Each scenario has three segments of different sizes, base rates and calibration. A binary model's score s of
an item is drawn per segment from a Beta law; its true class is 1 with probability sigmoid(a * logit(s) + b),
with (a, b) the segment's own calibration (a = 1, b = 0: calibrated). The model acts on its top label,
confidence max(s, 1 - s). Values: a use case at omega 1, 20 and 1000 (a rare, costly error). For every seed the
thresholds are fitted on ``n_fit`` items with each cap in turn, and then scored on ``n_fresh`` new items.

    python benchmarks/bench_segments.py            # the grid of benchmarks/README.md ("Segments")
    python benchmarks/bench_segments.py --seeds 3  # quicker
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere, as the other benchmarks

import valuecore as vc  # noqa: E402
from valuecore.constraints import CAP_TOLERANCE, SegmentCaps, evaluate_segments, fit_segments  # noqa: E402

# (name, share of the items, Beta law of the score, calibration a, b)
SEGMENTS = (
    ("large_calibrated", 0.55, (2.0, 2.0), 1.0, 0.0),
    ("mid_overconfident", 0.30, (1.2, 2.5), 0.6, -0.3),
    ("small_rare_positive", 0.15, (0.8, 4.0), 1.4, 0.4),
)
OMEGAS = (1.0, 20.0, 1000.0)
CAPS = (("handoff_gap", 0.05), ("error_gap", 0.02), ("value_gap", 0.10))


def draw(rng: np.random.Generator, n: int):
    """(Predictions with labels, segment labels) of ``n`` new items."""
    names = np.array([s[0] for s in SEGMENTS])
    segment = rng.choice(len(SEGMENTS), n, p=[s[1] for s in SEGMENTS])
    score = np.empty(n)
    truth = np.empty(n, dtype=np.int64)
    for k, (_, _, (alpha, beta), a, b) in enumerate(SEGMENTS):
        rows = segment == k
        s = np.clip(rng.beta(alpha, beta, rows.sum()), 1e-6, 1 - 1e-6)
        p_one = 1 / (1 + np.exp(-(a * np.log(s / (1 - s)) + b)))
        score[rows] = s
        truth[rows] = rng.uniform(size=rows.sum()) < p_one
    proba = np.column_stack([1 - score, score])
    return vc.Predictions.from_proba(proba, y_true=truth, classes=["0", "1"]), names[segment]


@dataclass(frozen=True)
class Row:
    omega: float
    cap: str
    limit: float
    seed: int
    feasible: bool
    exact: bool
    fit_gap: float
    fresh_gap: float
    cap_cost_per_item: float
    fit_seconds: float


def tolerance(cap: str, values) -> float:
    if cap != "value_gap":
        return CAP_TOLERANCE
    matrix = values.for_classes(("0", "1"))
    return CAP_TOLERANCE * max(1.0, float(np.abs(matrix.values).max()))


def study(seeds=range(5), n_fit: int = 600, n_fresh: int = 600) -> list[Row]:
    rows = []
    for omega in OMEGAS:
        values = vc.UseCase.from_omega(omega)
        for cap, limit in CAPS:
            for seed in seeds:
                rng = np.random.default_rng([int(omega), seed])
                fit_run, fit_segments_ = draw(rng, n_fit)
                fresh_run, fresh_segments = draw(rng, n_fresh)
                start = time.perf_counter()
                fit = fit_segments(fit_run, fit_segments_, values, caps=SegmentCaps(**{cap: limit}))
                seconds = time.perf_counter() - start
                fresh = evaluate_segments(fit.policy, fresh_run, fresh_segments, values)
                rows.append(Row(omega, cap, limit, seed, fit.feasible, fit.exact, getattr(fit.evaluation, cap),
                                getattr(fresh, cap), fit.cap_cost_per_item, seconds))
    return rows


def summary(rows: list[Row]) -> list[tuple]:
    """Per (omega, cap): runs, caps held on the fitting items, held on fresh items, median and largest fresh gap,
    mean cost per item."""
    out = []
    for omega in OMEGAS:
        for cap, limit in CAPS:
            mine = [r for r in rows if r.omega == omega and r.cap == cap]
            held_fit = sum(r.feasible and not r.fit_gap > limit + tolerance(cap, vc.UseCase.from_omega(omega))
                           for r in mine)
            fresh = np.array([r.fresh_gap for r in mine if math.isfinite(r.fresh_gap)])
            held_fresh = int(np.sum(fresh <= limit))
            out.append((omega, cap, limit, len(mine), held_fit, held_fresh, float(np.median(fresh)),
                        float(fresh.max()), float(np.mean([r.cap_cost_per_item for r in mine])),
                        float(np.max([r.fit_seconds for r in mine]))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--n-fit", type=int, default=600)
    parser.add_argument("--n-fresh", type=int, default=600)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = study(range(args.seeds), args.n_fit, args.n_fresh)
    print(f"{args.seeds} seeds, {args.n_fit} fitting items, {args.n_fresh} fresh items per run; "
          f"{time.perf_counter() - start:.1f} s in all")
    print("| omega | cap | limit | runs | held on the fitting items | held on fresh items | fresh gap: median "
          "| fresh gap: largest | cap's cost per item (mean) | slowest fit (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for omega, cap, limit, n, held_fit, held_fresh, median, largest, cost, slowest in summary(rows):
        print(f"| {omega:g} | {cap} | {limit:g} | {n} | {held_fit} | {held_fresh} | {median:.3f} | {largest:.3f} "
              f"| {cost:.4f} | {slowest:.2f} |")


if __name__ == "__main__":
    main()
