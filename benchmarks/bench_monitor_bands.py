"""Seeded simulation of the monitoring bands: false alerts and band coverage, as the Monitor page claims them.

Probabilities are calibrated by construction, so no chunk should alert: every alert is a false alert,
and the claimed rate is ``1 - alert_confidence`` (1%). For each replicate a fresh labelled reference
of 5,000 items fits the estimation calibration (with its bootstrap), then chunks of 300, 2,000 and
20,000 items drawn from the same distribution are watched, labelled so that the 95% band of the
realised value can be checked too. Two settings:

``use case``
    top label only: confidence ~ U(0.5, 1), right with probability equal to it; use case (1, 0, -2),
    threshold 0.7; the estimate is calibrated by isotonic regression (the default).
``binary matrix``
    P(positive) ~ Beta(0.7, 0.7), the truth drawn from it; value matrix TN 1, FP -5, FN -2, TP 3,
    abstain 0, threshold 0.6; isotonic calibration (the default for a binary matrix too).

Run: ``python benchmarks/bench_monitor_bands.py [--replicates 200]`` (prints a markdown table);
``tests/core/test_bands.py`` runs a smaller version as a slow test.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import valuecore as vc  # noqa: E402

CHUNK_SIZES = (300, 2_000, 20_000)
CHUNKS_PER_SIZE = {300: 20, 2_000: 6, 20_000: 2}
REFERENCE_SIZE = 5_000
MATRIX = vc.ValueMatrix(("neg", "pos"), [[1.0, -5.0, 0.0], [-2.0, 3.0, 0.0]])


def draw(setting: str, n: int, rng: np.random.Generator) -> vc.Predictions:
    if setting == "use case":
        confidence = rng.uniform(0.5, 1.0, n)
        right = rng.uniform(size=n) < confidence
        return vc.Predictions.from_top_label(["a"] * n, confidence, np.where(right, "a", "b"), classes=["a", "b"])
    positive = rng.beta(0.7, 0.7, n)
    truth = np.where(rng.uniform(size=n) < positive, "pos", "neg")
    return vc.Predictions.from_proba(np.column_stack([1 - positive, positive]), truth, classes=["neg", "pos"])


def setting_values(setting: str):
    if setting == "use case":
        return vc.Policy("threshold", threshold=0.7), vc.UseCase(1, 0, -2)
    return vc.Policy("threshold", threshold=0.6), MATRIX


def simulate(setting: str, n_replicates: int, rng: np.random.Generator, n_resamples: int = 100) -> dict:
    """Per chunk size: (false-alert rate, band coverage, chunks, mean squared alert score, mean share of the band's
    half-width that is the calibration-shift term) over the references.

    The alert score of a chunk is its estimate's distance to the reference value in units of the alert
    band's standard deviation: its mean square is 1 when the band's width is right.
    """
    policy, values = setting_values(setting)
    alerts = {size: [] for size in CHUNK_SIZES}
    covered = {size: [] for size in CHUNK_SIZES}
    scores = {size: [] for size in CHUNK_SIZES}
    shifts = {size: [] for size in CHUNK_SIZES}
    for _ in range(n_replicates):  # loop over replicates
        reference = draw(setting, REFERENCE_SIZE, rng)
        watched = {f"{size}": draw(setting, size * CHUNKS_PER_SIZE[size], rng) for size in CHUNK_SIZES}
        for size in CHUNK_SIZES:
            out = vc.monitoring.monitor_bands(reference, watched[f"{size}"], policy, values, size=size,
                                              n_resamples=n_resamples, rng=rng)
            frame = out.frame
            alerts[size].extend(frame["alert"].tolist())
            # the calibration-shift term's share of the band's half-width
            shifts[size].extend((frame["calibration_shift"] * 2 / (frame["band_high"] - frame["band_low"])).tolist())
            covered[size].extend(frame["covered"].astype(bool).tolist())
            sd = (frame["reference_high"] - frame["reference_low"]) / 2 / out_z(out.alert_confidence)
            scores[size].extend(((frame["estimated_value_per_item"] - out.reference_value_per_item) / sd).tolist())
    return {size: (float(np.mean(alerts[size])), float(np.mean(covered[size])), len(alerts[size]),
                   float(np.mean(np.square(scores[size]))), float(np.mean(shifts[size]))) for size in CHUNK_SIZES}


def out_z(confidence: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + confidence / 2))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261124)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"{args.replicates} references of {REFERENCE_SIZE} items each, seed {args.seed}; claimed: 1% false "
          "alerts (alert_confidence 0.99), 95% band coverage\n")
    print("| setting | chunk size | chunks | false alerts | mean squared alert score (1 = right width) "
          "| band coverage | calibration-shift share of the band |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for setting in ("use case", "binary matrix"):
        start = time.perf_counter()
        result = simulate(setting, args.replicates, rng)
        for size, (alert_rate, coverage, n, score, shift) in result.items():
            print(f"| {setting} | {size:,} | {n:,} | {100 * alert_rate:.2f}% | {score:.2f} | {100 * coverage:.1f}% "
                  f"| {100 * shift:.0f}% |")
        print(f"<!-- {setting}: {time.perf_counter() - start:.0f} s -->", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
