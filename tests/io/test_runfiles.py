"""Tests of the run-file loader: every bad input gets one clear problem, good input loads."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from valuecore._model.predictions import Predictions
from valuecore._io.runfiles import (
    LoadProblem,
    LoadReport,
    ModelRun,
    check_comparable,
    load_run_file,
    load_runs,
)

GOOD_CSV = """id,split,y_true,proba_a,proba_b
1,val,a,0.9,0.1
2,val,b,0.2,0.8
3,test,a,0.6,0.4
4,test,b,0.45,0.55
"""


def load_text(text: str, name: str = "run.csv", **kwargs) -> LoadReport:
    return load_run_file(text.encode(), name=name, **kwargs)


def only_error(report: LoadReport) -> LoadProblem:
    assert len(report.errors) == 1, [str(p) for p in report.problems]
    return report.errors[0]


def write(folder, name: str, text: str):
    path = folder / name
    path.write_text(text)
    return path


# ----------------------------------------------------------------- good input
def test_good_file_loads_splits_in_file_order():
    report = load_text(GOOD_CSV, name="logreg.csv")
    assert report.ok and report.problems == ()
    run = report.models["logreg"]
    assert run.classes == ("a", "b")
    assert run.split_names == ("val", "test")
    assert run.n_rows == 4
    val = run.splits["val"]
    assert isinstance(val, Predictions)
    assert val.y_true.tolist() == [0, 1]
    assert val.y_pred.tolist() == [0, 1]
    assert val.ids.tolist() == ["1", "2"]
    np.testing.assert_allclose(run.splits["test"].proba, [[0.6, 0.4], [0.45, 0.55]])


def test_no_split_column_means_one_split_named_all():
    report = load_text("y_true,proba_0,proba_1\n0,0.7,0.3\n1,0.1,0.9\n")
    assert report.models["run"].split_names == ("all",)


def test_bytes_upload_hashes_the_bytes_and_names_the_model_after_the_file():
    data = GOOD_CSV.encode()
    report = load_run_file(data, name="uploads/my model.csv")
    run = report.models["my model"]
    assert run.sha256 == hashlib.sha256(data).hexdigest()
    assert run.path == "uploads/my model.csv"


def test_path_and_bytes_give_the_same_run(tmp_path):
    path = write(tmp_path, "logreg.csv", GOOD_CSV)
    from_path = load_run_file(path).models["logreg"]
    from_bytes = load_run_file(path.read_bytes(), name="logreg.csv").models["logreg"]
    assert from_path.sha256 == from_bytes.sha256
    np.testing.assert_array_equal(from_path.splits["test"].proba, from_bytes.splits["test"].proba)


def test_multi_model_file_with_model_column():
    text = (
        "model,split,y_true,proba_x,proba_y\n"
        "m1,val,x,0.8,0.2\nm2,val,x,0.3,0.7\nm1,test,y,0.4,0.6\nm2,test,y,0.1,0.9\n"
    )
    report = load_text(text, name="many.csv")
    assert report.ok
    assert list(report.models) == ["m1", "m2"]
    assert report.models["m1"].splits["test"].proba.tolist() == [[0.4, 0.6]]
    assert report.models["m2"].splits["val"].y_pred.tolist() == [1]
    assert report.models["m1"].sha256 == report.models["m2"].sha256


def test_top_label_only_file_infers_sorted_classes():
    text = "split,y_true,y_pred,confidence\nval,cat,dog,0.7\nval,dog,dog,0.9\nprod,,cat,0.6\n"
    report = load_text(text, name="top.csv")
    assert report.ok
    run = report.models["top"]
    assert run.classes == ("cat", "dog")
    val = run.splits["val"]
    assert not val.has_proba
    assert val.y_true.tolist() == [0, 1] and val.y_pred.tolist() == [1, 1]
    assert run.splits["prod"].y_true is None


def test_top_label_integer_classes_sort_numerically():
    text = "y_true,y_pred,confidence\n10,2,0.7\n2,10,0.9\n"
    assert load_text(text).models["run"].classes == ("2", "10")


def test_top_label_run_is_widened_to_the_class_set_of_the_other_models(tmp_path):
    write(tmp_path, "full.csv", "y_true,proba_a,proba_b,proba_c\na,0.5,0.3,0.2\nb,0.2,0.7,0.1\n")
    write(tmp_path, "top.csv", "y_true,y_pred,confidence\na,a,0.6\nb,a,0.55\n")
    report = load_runs(tmp_path)
    assert report.ok, [str(p) for p in report.problems]
    top = report.models["top"]
    assert top.classes == ("a", "b", "c")
    assert top.splits["all"].y_true.tolist() == [0, 1]


def test_parquet_round_trip_equals_csv(tmp_path):
    frame = pd.read_csv(pd.io.common.StringIO(GOOD_CSV))
    frame.to_parquet(tmp_path / "logreg.parquet")
    write(tmp_path, "logreg.csv", GOOD_CSV)
    from_parquet = load_runs(tmp_path / "logreg.parquet").models["logreg"]
    from_csv = load_runs(tmp_path / "logreg.csv").models["logreg"]
    for split in ("val", "test"):
        np.testing.assert_array_equal(from_parquet.splits[split].proba, from_csv.splits[split].proba)
        np.testing.assert_array_equal(from_parquet.splits[split].y_true, from_csv.splits[split].y_true)
    assert from_parquet.classes == from_csv.classes


def test_parquet_integer_labels_stored_as_float_with_nan_are_read_as_integers(tmp_path):
    # An int label column with NaN (an unlabeled split) is float in pandas/Parquet: 1.0 must match proba_1.
    frame = pd.DataFrame(
        {
            "split": ["val", "val", "prod"],
            "y_true": [0.0, 1.0, np.nan],
            "proba_0": [0.8, 0.3, 0.5],
            "proba_1": [0.2, 0.7, 0.5],
        }
    )
    frame.to_parquet(tmp_path / "m.parquet")
    report = load_runs(tmp_path / "m.parquet")
    assert report.ok, [str(p) for p in report.problems]
    assert report.models["m"].splits["val"].y_true.tolist() == [0, 1]
    assert report.models["m"].splits["prod"].y_true is None


def test_csv_labels_written_as_floats_match_integer_classes():
    text = "split,y_true,proba_0,proba_1\nval,1.0,0.4,0.6\nprod,,0.5,0.5\n"
    report = load_text(text)
    assert report.ok
    assert report.models["run"].splits["val"].y_true.tolist() == [1]


def test_na_is_a_legal_class_name_in_text_columns():
    text = "y_true,proba_NA,proba_EU\nNA,0.7,0.3\nEU,0.2,0.8\n"
    report = load_text(text)
    assert report.ok
    assert report.models["run"].splits["all"].y_true.tolist() == [0, 1]


def test_parquet_bytes_are_recognised_whatever_the_name(tmp_path):
    pd.read_csv(pd.io.common.StringIO(GOOD_CSV)).to_parquet(tmp_path / "x.parquet")
    report = load_run_file((tmp_path / "x.parquet").read_bytes(), name="renamed.csv")
    assert report.ok and "renamed" in report.models


def test_folder_loads_csv_and_parquet_in_name_order_not_recursively(tmp_path):
    write(tmp_path, "b_model.csv", GOOD_CSV)
    pd.read_csv(pd.io.common.StringIO(GOOD_CSV)).to_parquet(tmp_path / "a_model.parquet")
    write(tmp_path, "notes.txt", "not a run")
    write(tmp_path, "._b_model.csv", "macOS resource fork junk")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "c_model.csv", GOOD_CSV)
    report = load_runs(tmp_path)
    assert report.ok
    assert list(report.models) == ["a_model", "b_model"]


def test_list_of_files_and_folders(tmp_path):
    (tmp_path / "set").mkdir()
    write(tmp_path / "set", "m1.csv", GOOD_CSV)
    single = write(tmp_path, "m2.csv", GOOD_CSV)
    report = load_runs([tmp_path / "set", str(single)])
    assert list(report.models) == ["m1", "m2"]


def test_weights_become_sample_weight():
    text = "weight,y_true,proba_a,proba_b\n3,a,0.9,0.1\n0,b,0.9,0.1\n1,b,0.2,0.8\n"
    split = load_text(text).models["run"].splits["all"]
    assert split.sample_weight.tolist() == [3.0, 0.0, 1.0]
    assert split.total_weight == 4.0
    assert split.accuracy == pytest.approx(1.0)  # the only wrong row weighs nothing


def test_without_weight_column_every_row_counts_once():
    split = load_text(GOOD_CSV).models["run"].splits["val"]
    assert split.sample_weight.tolist() == [1.0, 1.0]


def test_timestamps_parse_to_datetime64_ns_and_offsets_go_to_utc():
    text = (
        "split,timestamp,y_true,proba_a,proba_b\n"
        "val,,a,0.5,0.5\n"
        "prod,2024-03-04T10:00:00,,0.5,0.5\n"
        "prod,2024-03-04T12:00:00+01:00,,0.5,0.5\n"
    )
    report = load_text(text)
    assert report.ok, [str(p) for p in report.problems]
    run = report.models["run"]
    assert run.splits["val"].timestamp is None  # a split without any timestamp has none
    times = run.splits["prod"].timestamp
    assert times.dtype == np.dtype("datetime64[ns]")
    assert times.tolist() == [
        np.datetime64("2024-03-04T10:00:00", "ns").item(),
        np.datetime64("2024-03-04T11:00:00", "ns").item(),
    ]


def test_parquet_timezone_aware_timestamps_become_naive_utc(tmp_path):
    frame = pd.DataFrame(
        {
            "timestamp": pd.to_datetime(["2024-01-01T01:00:00"]).tz_localize("Europe/Paris"),
            "proba_a": [0.5],
            "proba_b": [0.5],
        }
    )
    frame.to_parquet(tmp_path / "tz.parquet")
    split = load_runs(tmp_path / "tz.parquet").models["tz"].splits["all"]
    assert split.timestamp[0] == np.datetime64("2024-01-01T00:00:00")


def test_logit_columns_are_kept_in_class_order():
    text = "y_true,proba_a,proba_b,logit_b,logit_a\na,0.7,0.3,-1.0,2.0\n"
    split = load_text(text).models["run"].splits["all"]
    assert split.logits.tolist() == [[2.0, -1.0]]


def test_same_classes_in_another_column_order_are_aligned(tmp_path):
    write(tmp_path, "m1.csv", "y_true,proba_a,proba_b\na,0.9,0.1\n")
    write(tmp_path, "m2.csv", "y_true,proba_b,proba_a\na,0.2,0.8\n")
    report = load_runs(tmp_path)
    assert report.ok and report.problems == ()
    m2 = report.models["m2"]
    assert m2.classes == ("a", "b")
    assert m2.splits["all"].proba.tolist() == [[0.8, 0.2]]
    assert m2.splits["all"].y_true.tolist() == [0]


def test_tolerances_are_parameters():
    text = "y_true,proba_a,proba_b\na,0.5,0.52\n"
    assert not load_text(text).ok
    assert load_text(text, sum_tolerance=0.05).ok


# ------------------------------------------------------------------ bad input
def test_missing_prediction_columns():
    problem = only_error(load_text("id,y_true,score\n1,a,0.3\n"))
    assert "no prediction columns" in problem.message
    assert "proba_<class>" in problem.message and "y_pred and confidence" in problem.message


def test_semicolon_separated_csv_gets_a_hint():
    problem = only_error(load_text("y_true;proba_a;proba_b\na;0.5;0.5\n"))
    assert "comma-separated" in problem.message


def test_y_pred_without_confidence():
    problem = only_error(load_text("y_true,y_pred\na,a\n"))
    assert "no confidence column" in problem.message


def test_single_probability_column():
    problem = only_error(load_text("y_true,proba_1\n1,0.9\n"))
    assert problem.column == "proba_1" and "one probability column" in problem.message


def test_duplicate_csv_columns_are_found_in_the_raw_header():
    # pandas would silently rename the second one to "proba_a.1".
    problem = only_error(load_text("y_true,proba_a,proba_b,proba_a\na,0.5,0.5,0.5\n"))
    assert problem.column == "proba_a"
    assert "duplicate column" in problem.message


def test_duplicate_parquet_columns(tmp_path):
    table = pa.table([pa.array(["a"]), pa.array([0.5]), pa.array([0.5]), pa.array([0.5])],
                     names=["y_true", "proba_a", "proba_b", "proba_b"])  # fmt: skip
    pq.write_table(table, tmp_path / "dup.parquet")
    problem = only_error(load_runs(tmp_path / "dup.parquet"))
    assert problem.column == "proba_b" and "duplicate column" in problem.message


def test_nan_probabilities_name_column_and_one_based_data_rows():
    text = "y_true,proba_a,proba_b\na,0.5,0.5\nb,,1.0\na,0.5,0.5\nb,NaN,0.5\n"
    problem = only_error(load_text(text, name="digits/logreg.csv"))
    assert problem.column == "proba_a"
    assert problem.rows == (2, 4)  # data rows: header excluded, first data row is 1
    assert str(problem) == "digits/logreg.csv, column proba_a: NaN or missing probabilities at rows 2, 4"


def test_text_in_probability_column_is_reported_once():
    problem = only_error(load_text("y_true,proba_a,proba_b\na,0.5,0.5\na,high,0.5\n"))
    assert problem.column == "proba_a" and problem.rows == (2,)
    assert "not numbers" in problem.message


def test_negative_probabilities():
    problem = only_error(load_text("y_true,proba_a,proba_b\na,0.5,0.5\na,1.2,-0.2\n"))
    assert problem.column == "proba_b" and problem.rows == (2,)
    assert "negative" in problem.message


def test_rows_not_summing_to_one_beyond_tolerance_are_errors_with_worst_deviation():
    text = "y_true,proba_a,proba_b\na,0.5,0.6\nb,0.5,0.5\na,0.3,0.3\n"
    problem = only_error(load_text(text))
    assert problem.rows == (1, 3)
    assert "worst deviation 0.4" in problem.message


def test_rows_slightly_off_one_are_a_warning_and_still_load():
    text = "y_true,proba_a,proba_b\na,0.5,0.5001\nb,0.5,0.5\n"
    report = load_text(text)
    assert report.ok and "run" in report.models
    (warning,) = report.warnings
    assert warning.rows == (1,) and "worst deviation 0.0001" in warning.message
    assert report.models["run"].splits["all"].proba[0].tolist() == [0.5, 0.5001]  # not renormalised


def test_y_true_label_absent_from_classes():
    text = "y_true,proba_a,proba_b\na,0.5,0.5\nc,0.5,0.5\nd,0.5,0.5\n"
    problem = only_error(load_text(text))
    assert problem.column == "y_true" and problem.rows == (2, 3)
    assert "'c'" in problem.message and "'d'" in problem.message


def test_y_pred_label_absent_from_probability_columns():
    text = "y_true,y_pred,proba_a,proba_b\na,a,0.7,0.3\na,z,0.7,0.3\n"
    problem = only_error(load_text(text))
    assert problem.column == "y_pred" and problem.rows == (2,)


def test_y_pred_disagreeing_with_probabilities_is_a_warning():
    text = "y_true,y_pred,confidence,proba_a,proba_b\na,a,0.7,0.7,0.3\na,a,0.6,0.4,0.6\n"
    report = load_text(text)
    assert report.ok
    (warning,) = report.warnings
    assert warning.column == "y_pred" and warning.rows == (2,)


def test_partially_missing_y_true_within_a_split():
    text = "split,y_true,proba_a,proba_b\ntest,a,0.5,0.5\ntest,,0.5,0.5\nprod,,0.5,0.5\n"
    problem = only_error(load_text(text))
    assert problem.column == "y_true" and problem.rows == (2,)
    assert "'test'" in problem.message


def test_problem_rows_of_one_split_are_file_rows():
    text = "split,y_true,proba_a,proba_b\nval,a,0.5,0.5\ntest,a,0.5,0.5\nval,a,0.5,0.5\ntest,,0.5,0.5\n"
    assert only_error(load_text(text)).rows == (4,)


def test_mixed_class_sets_across_models(tmp_path):
    write(tmp_path, "m1.csv", "y_true,proba_a,proba_b\na,0.5,0.5\n")
    write(tmp_path, "m2.csv", "y_true,proba_a,proba_b\nb,0.5,0.5\n")
    write(tmp_path, "m3.csv", "y_true,proba_a,proba_c\na,0.5,0.5\n")
    report = load_runs(tmp_path)
    problem = only_error(report)
    assert problem.file.endswith("m3.csv")
    assert "missing ['b']" in problem.message and "extra ['c']" in problem.message
    assert set(report.models) == {"m1", "m2", "m3"}  # loaded, but flagged as not comparable


def test_check_comparable_directly():
    def run(name, classes):
        proba = np.full((1, len(classes)), 1 / len(classes))
        return ModelRun(name, f"{name}.csv", "0", classes, {"all": Predictions.from_proba(proba, classes=classes)})

    same = [run("a", ("x", "y")), run("b", ("x", "y"))]
    assert check_comparable(same) == []
    reordered = check_comparable({"a": run("a", ("x", "y")), "b": run("b", ("y", "x"))})
    assert [p.severity for p in reordered] == ["warning"]
    different = check_comparable([run("a", ("x", "y")), run("b", ("x", "y")), run("c", ("x", "y", "z"))])
    assert [(p.severity, p.file) for p in different] == [("error", "c.csv")]


def test_empty_file():
    problem = only_error(load_text("", name="empty.csv"))
    assert "empty file" in problem.message


def test_header_without_rows():
    problem = only_error(load_text("y_true,proba_a,proba_b\n"))
    assert "no data rows" in problem.message


def test_empty_parquet(tmp_path):
    pd.DataFrame({"proba_a": pd.Series([], dtype=float), "proba_b": pd.Series([], dtype=float)}).to_parquet(
        tmp_path / "e.parquet"
    )
    assert "no data rows" in only_error(load_runs(tmp_path / "e.parquet")).message


@pytest.mark.parametrize(
    ("name", "data", "words"),
    [
        ("garbage.csv", bytes(range(256)) * 4, "binary"),
        ("garbage.parquet", b"PAR1 this is not parquet at all", "Parquet"),
        ("sheet.xlsx", b"PK\x03\x04 zipped sheet", "spreadsheet"),
        ("run.json", b'{"y_true": 1}', "unsupported file type"),
        ("latin1.csv", "y_true,proba_é,proba_b\n".encode("latin-1"), "UTF-8"),
    ],
)
def test_unreadable_files(name, data, words):
    report = load_run_file(data, name=name)
    problem = only_error(report)
    assert words in problem.message and report.models == {}


@pytest.mark.parametrize("bad_row", [1, 2])
def test_rows_with_more_fields_than_the_header(bad_row):
    rows = ["a,0.5,0.5", "a,0.5,0.5"]
    rows[bad_row - 1] = "a,0,5,0.5"
    problem = only_error(load_text("y_true,proba_a,proba_b\n" + "\n".join(rows) + "\n"))
    # pandas takes two code paths here (a warning for the first row, an error later).
    assert "fields" in problem.message and "header has" in problem.message
    assert problem.rows == (bad_row,)


def test_a_bad_file_does_not_stop_the_others(tmp_path):
    write(tmp_path, "good.csv", GOOD_CSV)
    write(tmp_path, "bad.csv", "y_true,proba_a,proba_b\na,-1,2\n")
    report = load_runs(tmp_path)
    assert list(report.models) == ["good"]
    assert only_error(report).file.endswith("bad.csv")


def test_missing_path_and_empty_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    report = load_runs([tmp_path / "nope.csv", tmp_path / "empty"])
    assert [p.message for p in report.errors] == [
        "no such file or folder",
        "folder holds no .csv or .parquet run files",
    ]


def test_split_filter_that_leaves_a_split_empty():
    report = load_text(GOOD_CSV, splits=["test", "prod"])
    assert report.ok
    (warning,) = report.warnings
    assert "no rows in split 'prod'" in warning.message
    assert report.models["run"].split_names == ("test",)


def test_split_filter_accepts_one_split_name_as_text():
    assert load_text(GOOD_CSV, splits="val").models["run"].split_names == ("val",)


def test_split_filter_that_leaves_nothing():
    problem = only_error(load_text(GOOD_CSV, splits=["prod"]))
    assert "no rows in the requested splits" in problem.message


def test_duplicate_model_names_across_files(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    write(tmp_path / "a", "logreg.csv", GOOD_CSV)
    write(tmp_path / "b", "logreg.csv", GOOD_CSV)
    report = load_runs([tmp_path / "a", tmp_path / "b"])
    problem = only_error(report)
    assert problem.file == str(tmp_path / "b" / "logreg.csv")
    assert "already taken" in problem.message
    assert report.models["logreg"].path == str(tmp_path / "a" / "logreg.csv")


def test_duplicate_model_name_from_model_column_and_file_stem(tmp_path):
    write(tmp_path, "m1.csv", GOOD_CSV)
    write(tmp_path, "zz.csv", "model,y_true,proba_a,proba_b\nm1,a,0.5,0.5\n")
    assert "already taken" in only_error(load_runs(tmp_path)).message


def test_negative_weights():
    problem = only_error(load_text("weight,y_true,proba_a,proba_b\n1,a,0.5,0.5\n-2,a,0.5,0.5\n"))
    assert problem.column == "weight" and problem.rows == (2,)


def test_nan_weights():
    problem = only_error(load_text("weight,y_true,proba_a,proba_b\n,a,0.5,0.5\nnan,a,0.5,0.5\n"))
    assert problem.column == "weight" and problem.rows == (1, 2)


@pytest.mark.parametrize(
    ("cells", "rows"),
    [(["2024-01-01", "yesterday"], (2,)), (["03/04/2024", "1700000000"], (1, 2))],  # ISO 8601 only
)
def test_unparseable_timestamps(cells, rows):
    text = "timestamp,y_true,proba_a,proba_b\n" + "".join(f"{c},a,0.5,0.5\n" for c in cells)
    problem = only_error(load_text(text))
    assert problem.column == "timestamp" and problem.rows == rows
    assert "ISO 8601" in problem.message


def test_numeric_timestamps_are_refused_not_guessed(tmp_path):
    pd.DataFrame({"timestamp": [1_700_000_000], "proba_a": [0.5], "proba_b": [0.5]}).to_parquet(tmp_path / "t.parquet")
    assert only_error(load_runs(tmp_path / "t.parquet")).column == "timestamp"


def test_partially_missing_timestamps_within_a_split():
    text = "timestamp,proba_a,proba_b\n2024-01-01,0.5,0.5\n,0.5,0.5\n"
    problem = only_error(load_text(text))
    assert problem.column == "timestamp" and problem.rows == (2,)


def test_model_column_with_missing_values():
    text = "model,y_true,proba_a,proba_b\nm1,a,0.5,0.5\n,a,0.5,0.5\n"
    problem = only_error(load_text(text))
    assert problem.column == "model" and problem.rows == (2,)


def test_logit_columns_with_another_class_set():
    problem = only_error(load_text("proba_a,proba_b,logit_a,logit_c\n0.5,0.5,0,0\n"))
    assert "logit_" in problem.message and "'c'" in problem.message


def test_confidence_outside_zero_one_in_top_label_run():
    problem = only_error(load_text("y_pred,confidence\na,0.5\nb,1.5\n"))
    assert problem.column == "confidence" and problem.rows == (2,)


def test_unknown_columns_are_a_warning_with_a_hint():
    report = load_text("Y_True,proba_a,proba_b\na,0.5,0.5\n")
    (warning,) = report.warnings
    assert "'y_true' for 'Y_True'" in warning.message


# ------------------------------------------------------------ the messages
def test_problem_text_shows_five_rows_and_how_many_more():
    text = "y_true,proba_a,proba_b\n" + "a,,1\n" * 8
    problem = only_error(load_text(text, name="digits/logreg.csv"))
    assert problem.rows == (1, 2, 3, 4, 5) and problem.row_count == 8
    assert str(problem) == (
        "digits/logreg.csv, column proba_a: NaN or missing probabilities at rows 1, 2, 3, 4, 5 (and 3 more)"
    )


def test_problem_text_without_column_or_rows():
    assert str(LoadProblem("a.csv", "empty file (0 bytes)")) == "a.csv: empty file (0 bytes)"
    assert str(LoadProblem("a.csv", "bad", "w", (7,))) == "a.csv, column w: bad at row 7"


def test_report_sorts_errors_from_warnings():
    report = LoadReport({}, (LoadProblem("a", "x", severity="warning"), LoadProblem("b", "y")))
    assert [p.file for p in report.errors] == ["b"]
    assert [p.file for p in report.warnings] == ["a"]
    assert not report.ok


HEADER_NAMES = ["y_true", "y_pred", "confidence", "proba_a", "proba_b", "logit_a", "split", "weight", "timestamp",
                "model", "id", "x", "proba_a"]  # fmt: skip
CELL_TEXTS = ["", "a", "b", "0.5", "-1", "nan", "inf", "-inf", "2024-01-01", "1e400", '"', ",", "é", " "]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    header=st.lists(st.sampled_from(HEADER_NAMES), max_size=6),
    cells=st.lists(st.lists(st.sampled_from(CELL_TEXTS), max_size=7), max_size=5),
)
def test_any_csv_text_gives_a_report_never_an_exception(header, cells):
    text = ",".join(header) + "\n" + "\n".join(",".join(row) for row in cells)
    report = load_text(text)
    assert isinstance(report, LoadReport)
    assert report.ok == (len(report.errors) == 0)
    if not report.ok:
        assert report.models == {}


@given(data=st.binary(max_size=300))
@settings(max_examples=100, deadline=None)
def test_any_bytes_give_a_report_never_an_exception(data):
    for name in ("x.csv", "x.parquet"):
        assert isinstance(load_run_file(data, name=name), LoadReport)


# ------------------------------------------------------------------ speed
@pytest.mark.slow
def test_million_row_parquet_loads_whole(tmp_path):
    # Speed is measured by benchmarks/bench_core.py, never asserted here (shared CI machines vary);
    # this checks that a million-row file loads whole and that its splits add up.
    rng = np.random.default_rng(0)
    n, n_classes = 1_000_000, 10
    proba = rng.dirichlet(np.full(n_classes, 0.3), size=n)
    frame = pd.DataFrame(proba, columns=[f"proba_{c}" for c in range(n_classes)])
    frame.insert(0, "y_true", rng.integers(0, n_classes, n))
    frame.insert(0, "split", np.where(rng.random(n) < 0.5, "val", "test"))
    frame.insert(0, "id", np.arange(n))
    frame.to_parquet(tmp_path / "big.parquet")
    report = load_runs(tmp_path / "big.parquet")
    assert report.ok
    run = report.models["big"]
    assert run.n_rows == n
    assert sum(p.n for p in run.splits.values()) == n
    assert run.splits["val"].n == int((frame["split"] == "val").sum())


@pytest.mark.parametrize("column", ["label", "target", "y", "class", "Truth"])
def test_a_label_like_column_without_y_true_is_an_error_naming_file_and_column(column):
    report = load_run_file(f"{column},proba_a,proba_b\na,0.9,0.1\nb,0.3,0.7\n".encode(), name="logreg.csv")
    assert not report.models
    (error,) = report.errors
    assert error.file == "logreg.csv" and error.column == column
    assert "y_true" in str(error) and repr(column) in str(error)


def test_a_label_like_column_beside_y_true_is_only_ignored():
    report = load_run_file(b"y_true,label,proba_a,proba_b\na,x,0.9,0.1\nb,y,0.3,0.7\n", name="logreg.csv")
    assert report.models and not report.errors
    assert any("ignored unknown columns" in str(w) for w in report.warnings)
