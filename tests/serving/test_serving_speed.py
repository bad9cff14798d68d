"""``RejectOptionClassifier.predict`` at scikit-learn's cost gives what it gave before, bit for bit.

Numeric labels are gathered as numbers: the same values, in the same dtype, as the object array converted
afterwards (the way before); other labels stay objects. The loaded policy is kept between calls and read
again when its source changes (another object, a file rewritten, a mapping edited in place).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from valuecore.serving import RejectOptionClassifier


def document(classes, threshold=0.7):
    return {"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
            "models": [{"model": "m", "classes": [str(c) for c in classes],
                        "policy": {"kind": "threshold", "threshold": threshold,
                                   "calibration": {"method": "none"}}}]}


def the_way_before(classes, abstain_label, action):
    """What predict returned before: an object array of the labels, converted when every label is a number."""
    labels = np.empty(len(classes) + 1, dtype=object)
    labels[:] = [*classes.tolist(), abstain_label]
    out = labels[np.minimum(action, len(classes))]
    dtype = np.result_type(classes.dtype, np.asarray(abstain_label).dtype)
    return out.astype(dtype) if dtype.kind in "iufb" else out


@pytest.mark.parametrize("labels, abstain_label", [
    (np.array([0, 1]), -1), (np.array([3, 7, 9]), -1), (np.array([False, True]), -1),
    (np.array([2, 5], dtype=np.uint8), -1), (np.array([2, 5], dtype=np.uint8), 300),
    (np.array(["cat", "dog"]), "nobody"), (np.array(["cat", "dog"]), -1), (np.array([0, 1]), "abstain"),
])
def test_predict_gives_the_same_values_and_dtype_as_before(labels, abstain_label):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = labels[np.digitize(X[:, 0] + 0.3 * rng.normal(size=400), np.linspace(-1, 1, len(labels) + 1)[1:-1])]
    estimator = LogisticRegression().fit(X, y)
    classes = np.asarray(estimator.classes_)
    wrapped = RejectOptionClassifier(estimator, policy=document(classes, 0.6), abstain_label=abstain_label)
    got = wrapped.predict(X)
    expected = the_way_before(classes, abstain_label, wrapped.decisions(X).action)
    assert got.dtype == expected.dtype
    assert got.tolist() == expected.tolist()
    assert (got == abstain_label).any() and (got != abstain_label).any()


def test_a_policy_is_read_again_when_its_source_changes(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    estimator = LogisticRegression().fit(X, rng.integers(0, 2, 300))
    abstaining = {0.5: None, 0.99: None}
    for threshold in abstaining:
        abstaining[threshold] = int((RejectOptionClassifier(estimator, policy=document([0, 1], threshold))
                                     .predict(X) == -1).sum())
    assert abstaining[0.5] < abstaining[0.99]

    mapping = document([0, 1], 0.5)
    wrapped = RejectOptionClassifier(estimator, policy=mapping)
    assert (wrapped.predict(X) == -1).sum() == abstaining[0.5]
    mapping["models"][0]["policy"]["threshold"] = 0.99  # edited in place
    assert (wrapped.predict(X) == -1).sum() == abstaining[0.99]

    path = tmp_path / "policy.json"
    path.write_text(json.dumps(document([0, 1], 0.5)))
    wrapped = RejectOptionClassifier(estimator, policy=str(path))
    assert (wrapped.predict(X) == -1).sum() == abstaining[0.5]
    path.write_text(json.dumps(document([0, 1], 0.99)) + " " * 8)  # rewritten
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert (wrapped.predict(X) == -1).sum() == abstaining[0.99]

    wrapped.set_params(policy=document([0, 1], 0.5))  # another object
    assert (wrapped.predict(X) == -1).sum() == abstaining[0.5]
