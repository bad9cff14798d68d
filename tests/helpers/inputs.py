"""The input layer's test helpers: raw prediction logs, bad frames, and the loader's and the
aggregation's problems side by side."""

from __future__ import annotations

import typing
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import valuecore as vc
from valuecore._io import columns
from valuecore._io.aggregate import AggregateRefused, aggregate

# ---------------------------------------------------------------- first written for test_aggregate.py
CLASSES = ("a", "b", "c")


def raw_frame(seed: int, n: int, *, levels: int = 4, weights: bool = True, labelled_test: bool = True):
    """Probabilities on a coarse grid (many ties), integer weights, two splits."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, levels + 1, size=(n, 3))
    counts[counts.sum(axis=1) == 0, 0] = 1
    proba = counts / counts.sum(axis=1, keepdims=True)
    frame = pd.DataFrame({f"proba_{c}": proba[:, j] for j, c in enumerate(CLASSES)})
    frame["y_true"] = rng.choice(CLASSES, size=n)
    frame["split"] = np.where(np.arange(n) % 2 == 0, "val", "test")
    if not labelled_test:
        frame.loc[frame["split"] == "test", "y_true"] = None
    if weights:
        frame["weight"] = rng.integers(1, 4, size=n).astype(float)
    return frame


def nearly_distinct_scores(folder) -> Path:
    """3,000 rows of two-class scores, nearly every one its own group."""
    rng = np.random.default_rng(0)
    proba = rng.dirichlet([1, 1], size=3000)
    frame = pd.DataFrame({"proba_a": proba[:, 0], "proba_b": proba[:, 1], "y_true": rng.choice(["a", "b"], 3000)})
    raw = folder / "model.parquet"
    frame.to_parquet(raw)
    return raw


# ----------------------------------------------------------------- bad sources
def loader_problems(path: Path) -> list[str]:
    return [str(p) for p in vc.load_runs(path).problems if p.severity == "error"]


def aggregate_problems(source, tmp_path: Path, **options) -> list[str]:
    with pytest.raises(AggregateRefused) as refused:
        aggregate(str(source), tmp_path / "agg.parquet", **options)
    assert not (tmp_path / "agg.parquet").exists()
    return [str(p) for p in refused.value.problems if p.severity == "error"]


BAD_FRAMES = {
    "nan": pd.DataFrame({"proba_a": [0.9, np.nan, 0.2, np.nan], "proba_b": [0.1, 0.5, 0.8, 0.5],
                         "y_true": ["a", "b", "a", "b"]}),
    "negative": pd.DataFrame({"proba_a": [0.9, -0.5, 0.2], "proba_b": [0.1, 1.5, 0.8], "y_true": ["a", "b", "a"]}),
    "sum": pd.DataFrame({"proba_a": [0.9, 0.4, 0.2], "proba_b": [0.1, 0.4, 0.8], "y_true": ["a", "b", "a"]}),
    "unknown_label": pd.DataFrame({"proba_a": [0.9, 0.4], "proba_b": [0.1, 0.6], "y_true": ["a", "z"]}),
    "no_prediction_columns": pd.DataFrame({"y_true": ["a", "b"], "score": [0.2, 0.3]}),
    "one_class": pd.DataFrame({"proba_a": [1.0, 1.0], "y_true": ["a", "a"]}),
    "confidence": pd.DataFrame({"y_pred": ["a", "b", "a"], "confidence": [0.5, 1.5, np.nan],
                                "y_true": ["a", "b", "b"]}),
    "weight": pd.DataFrame({"proba_a": [0.9, 0.4], "proba_b": [0.1, 0.6], "y_true": ["a", "b"], "weight": [-1.0, 2]}),
    "weight_range": pd.DataFrame({"proba_a": [0.9, 0.4, 0.3], "proba_b": [0.1, 0.6, 0.7], "y_true": ["a", "b", "a"],
                                  "weight": [1e60, 2, 1e-60]}),
    "partly_labelled": pd.DataFrame({"proba_a": [0.9, 0.4, 0.3], "proba_b": [0.1, 0.6, 0.7],
                                     "y_true": ["a", None, "b"]}),
}  # fmt: skip


# ---------------------------------------------------------------- first written for test_columns.py
# Values a column can hold, read as DOUBLE: missing, NaN, both infinities, around 0 and 1, and the edges
# of the weight range.
VALUES = [None, np.nan, np.inf, -np.inf, -1.0, -0.0, 0.0, 1e-60, 1e-50, 0.5, 1.0, 1 + 5e-7, 1 + 2e-6, 1e50, 1e60]


NUMERIC_RULES = [r for r in typing.get_args(columns.Rule) if r != "empty"]
