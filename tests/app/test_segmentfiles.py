"""Where the Segments page reads segment columns from (dashboard.segmentfiles): the data source's own run
files only, the run format's columns never offered, and a column missing from a file said in the core's words."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from dashboard import segmentfiles, serverfiles

from view_fixtures import SAMPLES


def test_a_sample_offers_its_files_and_a_made_up_sample_name_offers_none():
    files = segmentfiles.source_files("sample:diabetes", {})
    assert [name for name, _ in files] == sorted(p.name for p in (SAMPLES / "diabetes").glob("*.csv"))
    assert segmentfiles.source_files("sample:../diabetes", {}) == ()
    assert segmentfiles.source_files("sample:nope", {}) == ()
    assert segmentfiles.source_files("mlflow:abc", {}) == ()
    assert segmentfiles.source_files("upload", {"a.csv": b"x"}) == (("a.csv", b"x"),)


def test_only_columns_outside_the_run_format_are_offered():
    assert segmentfiles.candidate_columns(segmentfiles.source_files("sample:diabetes", {})) == ("sex", "age_band")
    assert segmentfiles.candidate_columns(segmentfiles.source_files("sample:breast_cancer", {})) == ()
    upload = b"id,split,y_true,proba_a,proba_b,logit_a,logit_b,weight,region,,tier\n"
    assert segmentfiles.candidate_columns([("u.csv", upload)]) == ("region", "tier")


def test_labels_follow_each_models_splits_and_a_missing_column_is_named(tmp_path, monkeypatch):
    labels, problems = segmentfiles.segment_labels(segmentfiles.source_files("sample:diabetes", {}), "sex")
    assert problems == () and set(labels) == {"logreg", "mlp", "naive_bayes", "random_forest", "svm_rbf"}
    frame = pd.read_csv(SAMPLES / "diabetes" / "mlp.csv", dtype=str)
    for split in ("val", "test"):
        np.testing.assert_array_equal(labels["mlp"][split].astype(str), frame.loc[frame["split"] == split, "sex"])
    root = tmp_path / "root"
    (root / "runs").mkdir(parents=True)
    frame.drop(columns=["sex"]).to_csv(root / "runs" / "mlp.csv", index=False)
    outside = tmp_path / "outside.csv"
    frame.to_csv(outside, index=False)
    os.symlink(outside, root / "runs" / "leak.csv")  # a link leaving the roots is never read
    monkeypatch.setenv(serverfiles.ENV_VAR, str(root))
    files = segmentfiles.source_files("folder:runs", {})
    assert [name for name, _ in files] == ["mlp.csv"]
    labels, problems = segmentfiles.segment_labels(files, "sex")
    assert labels == {} and len(problems) == 1 and "mlp.csv" in problems[0] and "sex" in problems[0]
    assert segmentfiles.source_files(f"folder:{tmp_path}", {}) == ()  # outside the roots
