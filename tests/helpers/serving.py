"""The serving tests' helpers: fitted estimators and their policy documents."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from valuecore.serving import load_policy


# ---------------------------------------------------------------- first written for test_estimator.py
# ------------------------------------------------------------------ breast cancer, end to end
def breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    names = np.array(["malignant", "benign"])[y]  # scikit-learn's order of target_names
    X_train, X_rest, y_train, y_rest = train_test_split(X, names, test_size=0.5, random_state=0, stratify=names)
    X_val, X_test, y_val, y_test = train_test_split(X_rest, y_rest, test_size=0.5, random_state=1, stratify=y_rest)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.05)).fit(X_train, y_train)
    return model, (X_val, y_val), (X_test, y_test)


# ---------------------------------------------------------------- first written for test_serving_round3.py
NO_CALIBRATION = {"method": "none"}


def document(classes=("benign", "malignant"), **policy) -> dict:
    rule = {"kind": "threshold", "threshold": 0.8, "class_thresholds": None, "calibration": NO_CALIBRATION, **policy}
    return {"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
            "models": [{"model": "m", "classes": list(classes), "policy": rule, "run_sha256": None,
                        "tuned_on": {"split": None, "n": 0}, "evaluation": None}]}


def fitted(classes, n=200):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    y = np.asarray(classes)[(X[:, 0] > 0).astype(int)]
    return LogisticRegression().fit(X, y), X, y


ASSISTED = {"v_confirmed_correct": 0.5, "v_confirmed_wrong": -1.0, "cost": 0.25}


def served(kind: str, classes: list[str], temperature: float | None, threshold: float, lower: float):
    """A loaded policy of ``kind``; no recalibration when ``temperature`` is None."""
    calibration = ({"method": "none"} if temperature is None else
                   {"method": "temperature", "temperature": temperature, "use_logits": False})
    policy = {"kind": kind, "calibration": calibration}
    if kind == "class_thresholds":
        policy["class_thresholds"] = {c: (threshold if k % 2 else lower) for k, c in enumerate(classes)}
    elif kind != "accept_all":
        policy["threshold"] = threshold
    if kind == "two_tier":
        policy.update(assist_threshold=lower, assisted=ASSISTED)
    return load_policy({"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
                        "models": [{"model": "m", "classes": classes, "policy": policy}]})
