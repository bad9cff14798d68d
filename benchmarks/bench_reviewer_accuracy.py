"""Coverage of the reviewers' accuracy interval (``Reviewers.from_sample``, exact Clopper-Pearson, 95%).

Seeded simulation: for each true accuracy p and sample size n, draw 20,000 labelled samples of
the reviewers' decisions and count how often the interval holds p. Prints a Markdown table.

    python benchmarks/bench_reviewer_accuracy.py
"""

from __future__ import annotations

import numpy as np
from scipy import stats

SEED = 2021
REPS = 20_000


def main() -> None:
    rng = np.random.default_rng(SEED)
    print(f"seed {SEED}, {REPS} samples per cell, nominal 95%")
    print("| accuracy p | n = 20 | n = 100 | n = 1000 | mean width at n = 100 |")
    print("|---|---|---|---|---|")
    for p in (0.5, 0.8, 0.95, 0.99, 0.999):
        cells, width = [], None
        for n in (20, 100, 1000):
            k = rng.binomial(n, p, size=REPS)
            low = np.where(k == 0, 0.0, stats.beta.ppf(0.025, k, n - k + 1))
            high = np.where(k == n, 1.0, stats.beta.ppf(0.975, k + 1, n - k))
            cells.append(f"{np.mean((low <= p) & (p <= high)):.3f}")
            if n == 100:
                width = float(np.mean(high - low))
        print(f"| {p} | " + " | ".join(cells) + f" | {width:.3f} |")


if __name__ == "__main__":
    main()
