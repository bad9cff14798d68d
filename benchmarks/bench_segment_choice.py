"""Does weighing thresholds per segment make the one recommendation better on new items? A seeded study.

Two segments of equal size, "easy" and "hard"; a binary model whose top-class confidence ``c`` is uniform on
[0.5, 1] and right with probability ``c`` in "easy" and ``c - shift`` in "hard", so the truth, and the true
value per item of any threshold per segment, is known in closed form (no sample of new items needed). For each
scenario (shift, items per split, omega, seed) the runs are drawn (tuning split ``val``, evaluated split
``test``), and ``vc.recommend`` is asked twice, weighing one threshold and per-class thresholds, with and
without each model's thresholds per segment (``segment_rules``). The table gives, per cell, the true value
per item of each answer ("not yet" and "no model" hand every item over: 0), its regret against the best
thresholds per segment, how often it loses money (true value below handing over), and how often the segment
candidate was chosen.

    python benchmarks/bench_segment_choice.py [--seeds 10]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere, as the other benchmarks

import valuecore as vc  # noqa: E402

SEGMENTS = ("easy", "hard")
KINDS = ("threshold", "class_thresholds")


def draw(rng, n: int, shift: float) -> pd.DataFrame:
    segment = rng.choice(SEGMENTS, n)
    confidence = rng.uniform(0.5, 1.0, n)
    right = rng.uniform(size=n) < confidence - np.where(segment == "hard", shift, 0.0)
    predicted_a = rng.uniform(size=n) < 0.5
    proba_a = np.where(predicted_a, confidence, 1 - confidence)
    return pd.DataFrame({"region": segment, "y_true": np.where(right == predicted_a, "a", "b"),
                         "proba_a": proba_a, "proba_b": 1 - proba_a})


def true_value(t, shift: float, omega: float) -> float:
    """Expected value per item of acting iff confidence >= t in one segment (correct 1, abstain 0, wrong -omega)."""
    if t is None or (isinstance(t, float) and math.isnan(t)):
        return 0.0
    t = min(max(float(t), 0.5), 1.0)
    return 2 * ((1 + omega) * ((1 - t * t) / 2 - shift * (1 - t)) - omega * (1 - t))


def policy_value(r, shift: float, omega: float) -> float:
    """The true value per item of a recommendation (0 for none)."""
    shifts = {"easy": 0.0, "hard": shift}
    if r.model is None:
        return 0.0
    if r.kind == vc.recommendation.SEGMENT_RULE:
        thresholds = dict(r.policy.policy.thresholds)
        return sum(0.5 * true_value(thresholds.get(s), shifts[s], omega) for s in SEGMENTS)
    if r.kind == "threshold":
        return sum(0.5 * true_value(r.policy.threshold, shifts[s], omega) for s in SEGMENTS)
    per_class = dict(r.policy.class_thresholds)  # each predicted class half the items, in each segment
    return sum(0.25 * true_value(per_class.get(c), shifts[s], omega) for s in SEGMENTS for c in ("a", "b"))


def oracle(shift: float, omega: float) -> float:
    best = omega / (1 + omega)
    return sum(0.5 * max(0.0, true_value(min(1.0, best + shifts), shifts, omega)) for shifts in (0.0, shift))


def study(seeds=range(10), shifts=(0.0, 0.15, 0.35), sizes=(300, 1000, 3000), omegas=(4.0, 20.0)) -> pd.DataFrame:
    """One row per (shift, items per split, omega, seed, chooser): the answer's true value per item, its regret
    against the best thresholds per segment, whether it loses money, names thresholds per segment, or none."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.csv"
        for shift in shifts:
            for n in sizes:
                for omega in omegas:
                    values = vc.UseCase.from_omega(omega)
                    best = oracle(shift, omega)
                    for seed in seeds:
                        rng = np.random.default_rng([seed, n, int(omega), int(shift * 100)])
                        frame = pd.concat([draw(rng, n, shift).assign(split=split) for split in ("val", "test")])
                        frame.to_csv(path, index=False)
                        pipeline = vc.Pipeline(vc.load_runs(path, segment_column="region").models, "val", "test")
                        rules, _ = vc.recommendation.segment_rules(pipeline, values, column="region")
                        for chooser, segment_rules, kinds in (
                                ("with segments", rules, (*KINDS, vc.recommendation.SEGMENT_RULE)),
                                ("without", None, KINDS)):
                            r = vc.recommend(pipeline, values, kinds=kinds, segment_rules=segment_rules)
                            value = policy_value(r, shift, omega)
                            rows.append({"shift": shift, "n": n, "omega": omega, "seed": seed, "chooser": chooser,
                                         "value": value, "regret": best - value, "loses": value < -1e-12,
                                         "segments": r.kind == vc.recommendation.SEGMENT_RULE,
                                         "none": r.model is None})
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    table = study(range(args.seeds))
    cells = table.groupby(["shift", "n", "omega", "chooser"], sort=True).agg(
        runs=("value", "size"), value=("value", "mean"), regret=("regret", "mean"), loses=("loses", "sum"),
        segments=("segments", "mean"), not_yet=("none", "mean"))
    print(f"{args.seeds} seeds per cell; {time.perf_counter() - started:.0f} s in all")
    print(cells.round(4).to_string())
    print()
    print(table.groupby(["shift", "chooser"]).agg(value=("value", "mean"), regret=("regret", "mean"),
                                                   loses=("loses", "sum"), segments=("segments", "mean"))
          .round(4).to_string())


if __name__ == "__main__":
    main()
