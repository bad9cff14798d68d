"""How many of the tuned thresholds the sidebar's value sliders can reach.

With a correct answer worth 1 and a hand-off 0, the wrong answer's value is -ω.
For each run, the thresholds that are best for some ω in [0, ω_max] are the
vertices of the upper hull of (wrong, correct) counts; a vertex is reached when
some slider stop falls in its ω interval. Printed for the sample runs (every
labelled split) and for seeded synthetic runs of growing size (confidences
Beta(5, 1), each answer correct with probability its confidence).

Not a test: it prints a table and asserts nothing (tests/app/test_app_sliders.py
asserts the sample runs). Run: ``python benchmarks/bench_slider_reach.py``
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import valuecore as vc  # noqa: E402
from dashboard.sidebar import slider_decades, slider_stops  # noqa: E402


def hull_intervals(n_correct: np.ndarray, n_wrong: np.ndarray) -> list[tuple[float, float]]:
    """ω interval [low, high] in which each upper-hull vertex of (n_wrong, n_correct) is the best threshold."""
    hull: list[int] = []
    for i in range(n_wrong.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (n_correct[b] - n_correct[a]) * (n_wrong[i] - n_wrong[a]) <= \
                    (n_correct[i] - n_correct[a]) * (n_wrong[b] - n_wrong[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    with np.errstate(divide="ignore"):
        slopes = np.diff(n_correct[hull]) / np.diff(n_wrong[hull])
    return list(zip(np.r_[slopes, 0.0], np.r_[np.inf, slopes]))


def reach(n_correct, n_wrong, omega_max: float) -> tuple[int, int]:
    stops = np.array(slider_stops(-4.0, slider_decades([-omega_max])))
    omegas = -stops[(stops <= 0) & (stops >= -omega_max)]
    intervals = [(low, high) for low, high in hull_intervals(n_correct, n_wrong) if low <= omega_max]
    reached = sum(bool(np.any((omegas >= low) & (omegas <= high))) for low, high in intervals)
    return reached, len(intervals)


def main() -> None:
    print(f"{'runs':<34} {'ω max':>6} {'thresholds':>10} {'reached':>8}")
    for sample in ("digits", "breast_cancer", "digits_shifted"):
        report = vc.load_runs(ROOT / "sample_runs" / sample)
        for omega_max in (10.0, 1000.0):
            reached = total = 0
            for run in report.models.values():
                for predictions in run.splits.values():
                    curve = vc.threshold_curve(vc.presort(predictions), vc.UseCase(1, 0, -4))
                    if curve.n_correct is not None:
                        r, t = reach(curve.n_correct.astype(float), curve.n_wrong.astype(float), omega_max)
                        reached, total = reached + r, total + t
            print(f"{'sample ' + sample + ' (all splits)':<34} {omega_max:>6g} {total:>10} {reached:>8}")
    rng = np.random.default_rng(0)
    for n in (2_000, 20_000, 200_000, 1_000_000):
        confidence = rng.beta(5, 1, n)
        correct = rng.random(n) < confidence
        order = np.argsort(-confidence, kind="stable")
        n_correct = np.r_[0, np.cumsum(correct[order])].astype(float)
        n_wrong = np.r_[0, np.cumsum(~correct[order])].astype(float)
        for omega_max in (10.0, 1000.0):
            r, t = reach(n_correct, n_wrong, omega_max)
            print(f"{f'synthetic n={n:,}':<34} {omega_max:>6g} {t:>10} {r:>8}")


if __name__ == "__main__":
    main()
