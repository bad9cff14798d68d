"""A small classifier whose run carries a segment column, and the policy JSON ``report --segment`` writes for it."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from valuecore.cli import main

FEATURES = ["f0", "f1", "f2"]
REGIONS = np.array(["north", "south", "east"])


def draw(rng, n: int, regions=REGIONS):
    """Features, the region and a label that is noisier in the south."""
    region = rng.choice(regions, n)
    X = rng.normal(size=(n, 3))
    noise = np.where(region == "south", 2.0, 0.7)
    y = (X @ np.array([1.5, -1.0, 0.5]) + rng.normal(scale=noise) > 0).astype(int)
    return pd.DataFrame(X, columns=FEATURES).assign(region=region), y


def segment_case(tmp_path, caps=("--cap-handoff-gap", "0.05"), options=()):
    """(fitted model, run file path, policy JSON path, new frame with an unseen region 'west'). ``options``: more
    for ``report`` (``--segment-rule class_thresholds``: per-class thresholds per segment)."""
    rng = np.random.default_rng(7)
    train, y_train = draw(rng, 600)
    model = LogisticRegression().fit(train[FEATURES], y_train)
    frames = []
    for split, n in (("val", 500), ("test", 400)):
        X, y = draw(rng, n)
        proba = model.predict_proba(X[FEATURES])
        frames.append(pd.DataFrame({"y_true": y, "proba_0": proba[:, 0], "proba_1": proba[:, 1],
                                    "region": X["region"], "split": split}))
    run = tmp_path / "logreg.csv"
    pd.concat(frames).to_csv(run, index=False)
    policy = tmp_path / "policy.json"
    assert main(["report", str(run), "--segment", "region", "--policy", "segment_thresholds",
                 "--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-4",
                 *caps, *options, "--json", str(policy)]) == 0
    new, _ = draw(rng, 300, np.array(["north", "south", "east", "west"]))
    return model, run, policy, new
