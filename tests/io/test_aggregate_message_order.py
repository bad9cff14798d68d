"""The aggregation's messages come in one order, run after run: several partly labelled splits are named by
model, then split (their query had no ORDER BY, and DuckDB's threads gave 4-6 of 200 small files another order
on a rerun)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from helpers.inputs import aggregate_problems


def test_partly_labelled_splits_are_named_in_model_then_split_order(tmp_path):
    rng = np.random.default_rng(3)
    n = 30_000  # rows enough for DuckDB to group in several threads
    p = rng.uniform(size=n)
    models, splits = rng.choice(["m3", "m1", "m2"], n), rng.choice(["val", "test", "prod", "dev"], n)
    y_true = np.where(rng.uniform(size=n) < 0.3, "", rng.choice(["a", "b"], n))
    frame = pd.DataFrame({"model": models, "split": splits, "y_true": y_true, "proba_a": p, "proba_b": 1 - p})
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    seen = [aggregate_problems(path, tmp_path) for _ in range(3)]
    named = [(m, s) for m in ("m1", "m2", "m3") for s in ("dev", "prod", "test", "val")]
    wanted = [f"split {s!r} of model {m!r}" for m, s in named]
    for problems in seen:
        labels = [p for p in problems if "y_true is missing" in p]
        assert len(labels) == len(wanted)
        assert all(context in message for context, message in zip(wanted, labels)), labels
