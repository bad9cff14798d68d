"""The sample runs load cleanly, tell the intended story, and regenerate byte for byte."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from valuecore.runs import load_runs

SAMPLE_RUNS = Path(__file__).resolve().parents[2] / "sample_runs"
SCRIPT = SAMPLE_RUNS / "make_sample_runs.py"
SETS = ("digits", "digits_shifted", "breast_cancer", "diabetes")
SEGMENT_COLUMNS = ("sex", "age_band")  # in the diabetes set
MODELS = ("logreg", "mlp", "naive_bayes", "random_forest", "svm_rbf")


def generate(out: Path, *extra: str) -> None:
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), *extra], check=True, capture_output=True)


def generated_files(root: Path) -> dict[str, bytes]:
    """Every file the script writes under ``root``, by relative path."""
    files = [root / "generated_with.txt", *(p for s in SETS for p in (root / s).glob("*.csv"))]
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


def unexpected_problems(report, declared: str | None = None) -> list[str]:
    """The load problems, except the loader's note that it set aside the segment columns not ``declared``
    (each read on request)."""
    aside = [c for c in SEGMENT_COLUMNS if c != declared]
    return [str(p) for p in report.problems
            if not (p.severity == "warning" and str(p).endswith(f"ignored unknown columns {aside}"))]


def load_script_module():
    spec = importlib.util.spec_from_file_location("make_sample_runs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.heavy
def test_small_generation_is_byte_for_byte_reproducible_and_loads(tmp_path):
    generate(tmp_path / "first", "--small")
    generate(tmp_path / "second", "--small")
    first, second = generated_files(tmp_path / "first"), generated_files(tmp_path / "second")
    assert len(first) == 1 + 2 * len(SETS)  # two models per set in --small mode
    assert first.keys() == second.keys()
    assert [name for name in first if first[name] != second[name]] == []
    for set_name in SETS:
        report = load_runs(tmp_path / "first" / set_name)
        assert unexpected_problems(report) == []
        assert set(report.models) == {"logreg", "naive_bayes"}


@pytest.mark.parametrize("set_name", SETS)
def test_committed_sample_runs_load_without_problems(set_name):
    report = load_runs(SAMPLE_RUNS / set_name)
    assert unexpected_problems(report) == []
    assert tuple(sorted(report.models)) == MODELS


def test_digits_runs_have_ten_classes_and_labelled_val_and_test():
    for set_name in ("digits", "digits_shifted"):
        for run in load_runs(SAMPLE_RUNS / set_name).models.values():
            assert run.classes == tuple(str(d) for d in range(10))
            assert run.split_names == ("val", "test")
            assert all(p.has_labels and p.has_proba and p.ids is not None for p in run.splits.values())


def test_shifted_digits_share_the_clean_val_split_and_lose_accuracy_on_test():
    clean = load_runs(SAMPLE_RUNS / "digits").models
    shifted = load_runs(SAMPLE_RUNS / "digits_shifted").models
    for name in MODELS:
        np.testing.assert_array_equal(clean[name].splits["val"].proba, shifted[name].splits["val"].proba)
        np.testing.assert_array_equal(clean[name].splits["test"].ids, shifted[name].splits["test"].ids)
        assert shifted[name].splits["test"].accuracy < clean[name].splits["test"].accuracy - 0.03


def test_models_differ_in_accuracy_and_confidence():
    runs = load_runs(SAMPLE_RUNS / "digits").models.values()
    accuracy = [r.splits["test"].accuracy for r in runs]
    gap = [r.splits["test"].confidence.mean() - r.splits["test"].accuracy for r in runs]
    assert max(accuracy) - min(accuracy) > 0.05
    assert min(gap) < -0.1 and max(gap) > 0.05  # some under-, some overconfident


def test_breast_cancer_has_text_classes_and_an_unlabelled_timestamped_prod_split():
    for run in load_runs(SAMPLE_RUNS / "breast_cancer").models.values():
        assert run.classes == ("benign", "malignant")
        assert run.split_names == ("val", "test", "prod")
        prod = run.splits["prod"]
        assert not prod.has_labels
        assert prod.timestamp.dtype == np.dtype("datetime64[ns]")
        assert (np.diff(prod.timestamp) == np.timedelta64(1, "h")).all()
        assert prod.timestamp[-1] - prod.timestamp[0] >= np.timedelta64(5 * 7, "D")
        assert run.splits["test"].has_labels and run.splits["test"].timestamp is None


def test_written_probabilities_have_six_decimals_and_rows_sum_to_one():
    for set_name in SETS:
        for run in load_runs(SAMPLE_RUNS / set_name).models.values():
            for split in run.splits.values():
                np.testing.assert_allclose(split.proba.sum(axis=1), 1.0, atol=1e-9)
                np.testing.assert_allclose(split.proba, np.round(split.proba, 6), atol=1e-12)


def test_diabetes_runs_carry_two_real_segment_columns_with_small_segments():
    """Every row names its patient's sex and age band; each segment holds 50 to 60 rows of a split."""
    for run in load_runs(SAMPLE_RUNS / "diabetes").models.values():
        assert run.classes == ("low", "high")
        assert run.split_names == ("val", "test")
    frames = {path.stem: pd.read_csv(path, dtype=str) for path in sorted((SAMPLE_RUNS / "diabetes").glob("*.csv"))}
    assert tuple(frames) == MODELS
    first = frames["logreg"]
    for frame in frames.values():  # the same patients, in the same order, in every model's file
        pd.testing.assert_frame_equal(frame[["id", "split", "sex", "age_band", "y_true"]],
                                      first[["id", "split", "sex", "age_band", "y_true"]])
    assert set(first["sex"]) == {"1", "2"}
    assert set(first["age_band"]) == {"under_50", "50_plus"}
    sizes = first.groupby(["split", "sex"]).size().tolist() + first.groupby(["split", "age_band"]).size().tolist()
    assert len(sizes) == 8 and min(sizes) >= 50 and max(sizes) <= 60, sizes
    # The label is progression above the median of all 442 patients: about half high in each split.
    assert first.groupby("split")["y_true"].apply(lambda y: (y == "high").mean()).between(0.4, 0.6).all()


@pytest.mark.parametrize("column", SEGMENT_COLUMNS)
def test_diabetes_runs_load_with_either_segment_column_declared(column):
    report = load_runs(SAMPLE_RUNS / "diabetes", segment_column=column)
    assert unexpected_problems(report, declared=column) == [] and not report.errors
    frame = pd.read_csv(SAMPLE_RUNS / "diabetes" / "svm_rbf.csv", dtype=str)
    run = report.models["svm_rbf"]
    for split in ("val", "test"):
        assert run.segments[split].tolist() == frame.loc[frame["split"] == split, column].tolist()


def test_diabetes_models_err_more_often_in_one_sex_than_the_other_on_test():
    """The segments differ for real (a gap a per-segment threshold can act on), not by construction."""
    gaps = []
    for path in sorted((SAMPLE_RUNS / "diabetes").glob("*.csv")):
        test = pd.read_csv(path, dtype={"sex": str}).query("split == 'test'")
        predicted = np.where(test["proba_high"] > test["proba_low"], "high", "low")
        accuracy = (predicted == test["y_true"]).groupby(test["sex"]).mean()
        gaps.append(accuracy["2"] - accuracy["1"])
    assert max(gaps) > 0.05, gaps


@pytest.mark.slow
def test_full_regeneration_matches_the_committed_files(tmp_path):
    recorded = (SAMPLE_RUNS / "generated_with.txt").read_text()
    current = load_script_module().environment_fingerprint()
    if recorded != current:
        pytest.skip(f"sample runs were made with\n{recorded}but this environment has\n{current}")
    generate(tmp_path)
    fresh, committed = generated_files(tmp_path), generated_files(SAMPLE_RUNS)
    assert fresh.keys() == committed.keys()
    differing = [name for name in fresh if fresh[name] != committed[name]]
    assert differing == [], "run `python sample_runs/make_sample_runs.py` and commit the result"
