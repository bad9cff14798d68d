"""Synthetic runs with a segment column whose best thresholds per segment differ, or do not."""

from __future__ import annotations

import numpy as np
import pandas as pd


def frame_far_apart(seed: int = 7, n: int = 3000, unseen: int = 0) -> pd.DataFrame:
    """One run whose two segments want very different thresholds: in "easy" a confidence is as likely right as
    it says; in "hard" it is right 35 points less often (so "hard" is best handed off nearly always).
    ``unseen``: that many evaluated items of a segment "new" that the tuning split lacks."""
    rng = np.random.default_rng(seed)
    rows = []
    for split in ("val", "test"):
        size = n + (unseen if split == "test" else 0)
        region = rng.choice(["easy", "hard"], size)
        if split == "test" and unseen:
            region[:unseen] = "new"
        confidence = rng.uniform(0.5, 1.0, size)
        right = rng.uniform(size=size) < confidence - np.where(region == "hard", 0.35, 0.0)
        predicted_a = rng.uniform(size=size) < 0.5
        truth = np.where(right == predicted_a, "a", "b")
        proba_a = np.where(predicted_a, confidence, 1 - confidence)
        rows.append(pd.DataFrame({"id": [f"{split}-{k}" for k in range(size)], "split": split, "region": region,
                                  "y_true": truth, "proba_a": proba_a, "proba_b": 1 - proba_a}))
    return pd.concat(rows, ignore_index=True)


def frame_alike() -> pd.DataFrame:
    """Two segments with exactly the same items: confidences 0.6 (60% right), 0.8 (90%) and 0.95 (99%), so
    each segment's best threshold is the one best threshold, 0.8, and the decisions are the same."""
    rows = []
    for split in ("val", "test"):
        for region in ("north", "south"):
            for confidence, n_items, n_right in ((0.6, 200, 120), (0.8, 200, 180), (0.95, 200, 198)):
                for k in range(n_items):
                    right = k < n_right
                    predicted_a = k % 2 == 0
                    truth = "a" if right == predicted_a else "b"
                    proba_a = confidence if predicted_a else 1 - confidence
                    rows.append({"split": split, "region": region, "y_true": truth, "proba_a": proba_a,
                                 "proba_b": 1 - proba_a})
    return pd.DataFrame(rows)
