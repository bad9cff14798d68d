"""The MLflow model of a policy with a threshold per segment acts as the scikit-learn wrapper does, item by item,
reading the segment from the input frame's column."""

from __future__ import annotations

import pytest

from optional import need  # noqa: E402

need("mlflow")
import mlflow  # noqa: E402

from segment_fixtures import segment_case  # noqa: E402
from valuecore.serving import RejectOptionClassifier, save_mlflow_model  # noqa: E402


@pytest.mark.heavy
@pytest.mark.parametrize("options", [(), ("--segment-rule", "class_thresholds")], ids=["threshold", "class_thresholds"])
def test_the_mlflow_model_reads_the_segment_column_and_acts_as_the_wrapper(tmp_path, options):
    model, _, policy_path, new = segment_case(tmp_path, options=options)
    clf = RejectOptionClassifier(model, policy=str(policy_path), abstain_label="abstain")
    save_mlflow_model(tmp_path / "model", clf, None)
    out = mlflow.pyfunc.load_model(str(tmp_path / "model")).predict(new)
    expected = clf.predict(new)
    assert [str(a) for a in out["action"]] == [str(a) for a in expected]
    assert (out["action"][new["region"] == "west"] == "abstain").all()
