"""The Runs page's view model (dashboard.views.runs), without Streamlit: its figures are the loader's."""

from __future__ import annotations

from pathlib import Path

import pytest

import valuecore as vc
from dashboard.settings import Settings
from dashboard.state import Selection
from dashboard.views import runs as view

ROOT = Path(__file__).resolve().parents[2]


def selection(report, source="sample:digits", models=None, notes=()) -> Selection:
    return Selection(settings=Settings(source=source), report=report,
                     models=tuple(report.models if models is None else models), use_case=vc.UseCase(1, 0, -4),
                     source_label="sample runs 'digits'", notes=tuple(notes))


def test_the_tables_carry_the_loader_s_figures():
    report = vc.load_runs([str(ROOT / "sample_runs" / "digits")])
    page = view.build(selection(report, models=["logreg"]))
    assert page.heading == f"{len(report.models)} models loaded" and "model(s)" not in page.heading
    table = page.runs.set_index("model")
    for name, run in report.models.items():
        assert table.loc[name, "selected"] == (name == "logreg")
        assert table.loc[name, "sha256"] == run.sha256[:12]
        for split, predictions in run.splits.items():
            assert table.loc[name, f"accuracy on {split}"] == pytest.approx(predictions.accuracy)
            assert f"{split}: {predictions.n:,}" in table.loc[name, "splits"]
    assert page.accuracy_columns == tuple(f"accuracy on {s}" for s in ("val", "test"))
    # The accuracies before the splits' rows: at 800 px "val: 449 rows (labelled) · test: 450 rows (labelled)"
    # pushed them past the edge (issue 33's walk); the splits now read "val: 449 · test: 450".
    assert page.shown_first == ("model", *page.accuracy_columns, "splits")
    assert table.loc["logreg", "splits"] == "val: 449 · test: 450"
    # "All columns", as on every page: the details hold every column, the model's name first
    assert page.details == tuple(page.runs.columns) and page.details[0] == "model"
    splits = page.splits.set_index(["model", "split"])
    run = report.models["mlp"]
    assert splits.loc[("mlp", "test"), "weighted items"] == run.splits["test"].total_weight
    assert splits.loc[("mlp", "test"), "accuracy"] == pytest.approx(run.splits["test"].accuracy)
    assert page.errors == () and page.top_label_note == "" and page.empty == ""


def test_a_bad_file_is_an_error_with_its_count_and_the_good_ones_load(tmp_path):
    (tmp_path / "bad_*model*.csv").write_text("split,y_true,proba_a,proba_b\nval,a,0.9,0.3\n")
    (tmp_path / "good.csv").write_bytes((ROOT / "sample_runs" / "digits" / "logreg.csv").read_bytes())
    report = vc.load_runs([str(tmp_path)])
    page = view.build(selection(report, source="folder:x"))
    assert page.errors_note.startswith(f"{len(report.errors)} error") and "error(s)" not in page.errors_note
    assert len(page.errors) == len(report.errors)
    assert any("bad\\_\\*model\\*.csv" in e for e in page.errors), page.errors  # shown as text, not markdown
    assert page.heading == "1 model loaded"


def test_no_model_says_what_to_do():
    empty = vc.runs.LoadReport(models={}, problems=())
    page = view.build(selection(empty, source="upload", notes=["Uploaded files are not part of a link."]))
    assert page.runs is None and page.empty.startswith("Upload one CSV")
    assert page.empty_notes == ("Uploaded files are not part of a link.",)
    assert view.build(selection(empty)).empty.startswith("No run is loaded yet")


def test_counts_read_as_words():
    assert [view.count_text(n, "model") for n in (0, 1, 2, 1200)] == ["0 models", "1 model", "2 models",
                                                                      "1,200 models"]


def test_a_split_without_labels_gets_no_column_of_dashes():
    # issue 35: at 1280 px "Accuracy on prod", all dashes, pushed the table past the edge ("Accu…").
    report = vc.load_runs([str(ROOT / "sample_runs" / "breast_cancer")])
    page = view.build(selection(report, source="sample:breast_cancer"))
    assert page.accuracy_columns == ("accuracy on val", "accuracy on test")
    assert "accuracy on prod" not in page.runs.columns
    assert all("prod: 1,008 (no labels)" in cell for cell in page.runs["splits"])


def test_the_page_is_built_once_per_report_and_selection_and_is_the_page_built_anew():
    """Nothing on the Runs page depends on the outcome values: a new value finds the page built (issue 33),
    the same tables as built anew; another selection, source or run gets its own; a page goes with its runs."""
    import gc
    from dataclasses import replace

    import pandas as pd

    report = vc.load_runs([str(ROOT / "sample_runs" / "digits")])
    first = view.build(selection(report, models=["logreg"]))
    assert view.build(selection(report, models=["logreg"])) is first
    anew = view.build_anew(selection(report, models=["logreg"]))
    for name in ("runs", "splits"):
        pd.testing.assert_frame_equal(getattr(first, name), getattr(anew, name), check_exact=True)
    assert first.heading == anew.heading and first.source == anew.source and first.details == anew.details
    other = view.build(selection(report, models=["mlp"]))
    assert other is not first and other.runs.set_index("model").loc["mlp", "selected"]
    assert view.build(selection(report, models=["logreg"], source="folder:x")) is not first
    assert view.build(selection(report, models=["logreg"], notes=["a note"])) is not first
    # the sidebar wraps the same loaded runs anew on every rerun (a new report, each run with its path as shown):
    # the page is found again; another path shown is another page
    rewrapped = vc.runs.LoadReport(models={m: replace(run) for m, run in report.models.items()},
                                   problems=report.problems)
    assert view.build(selection(rewrapped, models=["logreg"])) is first
    moved = vc.runs.LoadReport(models={m: replace(run, path="elsewhere/" + m) for m, run in report.models.items()},
                               problems=report.problems)
    assert view.build(selection(moved, models=["logreg"])).runs["file"].str.startswith("elsewhere/").all()
    problem = vc.runs.LoadProblem("x.csv", "unreadable")
    with_a_problem = vc.runs.LoadReport(models=dict(report.models), problems=(problem,))
    shown = view.build(selection(with_a_problem, models=["logreg"]))
    assert shown is not first and shown.errors == view.build_anew(selection(with_a_problem, models=["logreg"])).errors
    again = vc.load_runs([str(ROOT / "sample_runs" / "digits")])
    assert view.build(selection(again, models=["logreg"])) is not first  # runs loaded anew: their own page
    kept = len(view._BUILT)
    del report, rewrapped, moved, with_a_problem, first, anew, other, shown
    gc.collect()
    assert len(view._BUILT) < kept  # the first runs' pages went with them
