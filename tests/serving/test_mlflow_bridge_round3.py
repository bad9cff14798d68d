"""Issue 36, part A, the MLflow model: refused when saved if it could never serve, feature columns by name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from optional import need  # noqa: E402
from sklearn.linear_model import LogisticRegression

need("mlflow")  # requirements-mlflow.txt: skipped without it, required in CI
import mlflow  # noqa: E402
from helpers.serving import document, fitted  # noqa: E402


def test_save_mlflow_model_refuses_what_could_never_serve(tmp_path):
    from valuecore.serving import save_mlflow_model

    model, X, y = fitted(("no", "yes"))
    policy = document(classes=("benign", "malignant"))
    with pytest.raises(ValueError, match="classes"):
        save_mlflow_model(tmp_path / "a", model, policy)
    assert not (tmp_path / "a").exists()
    right = document(classes=("no", "yes"))
    with pytest.raises(ValueError, match="is one of the classes"):
        save_mlflow_model(tmp_path / "b", model, right, abstain_label="no")
    assert not (tmp_path / "b").exists()


def test_the_mlflow_model_matches_feature_columns_by_name(tmp_path):
    from valuecore.serving import save_mlflow_model

    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(300, 3)), columns=["age", "dose", "weight"])
    y = np.where(frame["dose"] - 0.5 * frame["age"] > 0, "yes", "no")
    named = LogisticRegression().fit(frame, y)
    unnamed = LogisticRegression().fit(frame.to_numpy(), y)
    policy = document(classes=("no", "yes"), threshold=0.7)
    save_mlflow_model(tmp_path / "named", named, policy)
    save_mlflow_model(tmp_path / "unnamed", unnamed, policy, feature_names=["age", "dose", "weight"])
    reordered = frame[["weight", "dose", "age"]]
    for folder in ("named", "unnamed"):
        served = mlflow.pyfunc.load_model(str(tmp_path / folder))
        expected = served.predict(frame)["action"].tolist()
        assert served.predict(reordered)["action"].tolist() == expected
        with pytest.raises(Exception, match="dose"):
            served.predict(frame[["age", "weight"]])
