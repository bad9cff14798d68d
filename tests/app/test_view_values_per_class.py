"""The "Values per class" view model (dashboard.views.values_per_class), without Streamlit:
the matrix round-trips through its table, and every value is valuecore's on the same runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from view_selection import selection

import valuecore as vc
from dashboard.settings import Settings
from dashboard.views import values_per_class as view

FRAUD = vc.ValueMatrix(("0", "1"), np.array([[1.0, -2.0, 0.0], [-10.0, 5.0, -0.5]]))


@pytest.fixture(scope="module")
def breast_cancer():
    chosen, ws = selection("breast_cancer")
    return chosen, ws, view.build(chosen, ws, chosen.report.models["logreg"].classes)


def test_the_matrix_table_reads_back_and_an_empty_cell_is_said(breast_cancer):
    frame = view.matrix_frame(FRAUD)
    assert list(frame.columns) == ["→ 0", "→ 1", "hand off"] and frame.loc["true 1", "hand off"] == -0.5
    assert np.array_equal(view.frame_matrix(frame, FRAUD.classes).values, FRAUD.values)
    edited = frame.copy()
    edited.iloc[1, 0] = -20.0
    changes, problem = view.edited_changes(edited, FRAUD)
    assert problem is None and Settings(matrix=changes["matrix"]).value_matrix.values[1, 0] == -20.0
    assert view.edited_changes(frame, FRAUD) == (None, None)  # unchanged: nothing to put in force
    edited.iloc[0, 2] = np.nan
    changes, problem = view.edited_changes(edited, FRAUD)
    assert changes is None and "empty cells" in problem and "row true 0, column hand off" in problem.replace("\\", "")


def test_the_binary_preset_lands_in_the_classes_own_order():
    changes = view.binary_changes(("no", "yes"), "no", tp=3, tn=1, fp=-2, fn=-7, abstain=-0.5)
    matrix = Settings(matrix=changes["matrix"]).value_matrix
    # "no" is positive: a true "no" predicted "no" is a true positive (3), predicted "yes" a false negative (-7).
    assert matrix.classes == ("no", "yes")
    assert matrix.values.tolist() == [[3, -7, -0.5], [-2, 1, -0.5]]


def test_without_a_matrix_the_page_shows_the_three_values(breast_cancer):
    chosen, _, page = breast_cancer
    assert np.array_equal(page.matrix.values, chosen.use_case.for_classes(page.classes).values)
    assert page.status.startswith("This starts from the three values")
    assert page.editor.shape == (2, 3) and len(page.cells) == 6


def test_each_rule_is_worth_what_valuecore_says(breast_cancer):
    chosen, ws, page = breast_cancer
    summary = page.summary.set_index(["model", "rule"])
    run = chosen.report.models["mlp"]
    matrix = page.matrix
    for kind in view.MATRIX_KINDS:
        policy = vc.fit_policy(kind, vc.presort(run.splits["val"]), matrix)
        result = vc.evaluate(policy, run.splits["test"], matrix)
        row = summary.loc[("mlp", view.POLICY_LABELS[kind])]
        assert row["value_total"] == pytest.approx(result.value_total)
        assert row["coverage"] == pytest.approx(result.coverage)
    # The highlighted row of each model is its best rule.
    styled = page.summary_styled.to_html()
    best = page.summary.loc[page.summary.groupby("model")["value_per_item"].idxmax()]
    assert styled.count("font-weight: 600") >= 1 and len(best) == len(page.models)
    assert f">{vc.wording.percent(page.summary['coverage'].iloc[0])}<" in styled  # the wording's percentages


def test_the_detail_counts_every_item_and_sums_to_the_total(breast_cancer):
    chosen, _, page = breast_cancer
    for kind in page.rules("svm_rbf"):
        detail = page.detail("svm_rbf", kind)
        _, result, _ = page.fitted["svm_rbf"][kind]
        assert detail.cells["count"].sum() == pytest.approx(len(chosen.report.models["svm_rbf"].splits["test"].y_true))
        assert detail.cells["value"].sum() == pytest.approx(result.value_total)
        assert chosen.money(result.value_total) in detail.caption
    table = page.detail("svm_rbf", "class_thresholds").thresholds
    policy = page.fitted["svm_rbf"]["class_thresholds"][0]
    for (_, exact), written in zip(policy.class_thresholds, table["Tuned"]):
        for split in ("val", "test"):  # the written threshold decides as the exact one on the data shown
            confidence = chosen.report.models["svm_rbf"].splits[split].confidence
            assert np.array_equal(confidence >= float(written), confidence >= exact)


def test_a_matrix_in_force_is_evaluated_and_models_of_other_classes_are_left_out():
    chosen, ws = selection("breast_cancer")
    classes = chosen.report.models["logreg"].classes
    matrix = vc.ValueMatrix(classes, FRAUD.values)
    chosen = type(chosen)(**{**chosen.__dict__, "settings": Settings(matrix=(classes, tuple(map(tuple, FRAUD.values)))),
                             "value_matrix": matrix})
    page = view.build(chosen, ws, classes)
    assert page.status.startswith("Every page uses this matrix")
    assert np.array_equal(page.matrix.values, FRAUD.values)
    run = chosen.report.models["logreg"]
    expected = vc.evaluate(vc.fit_policy("expected_value", vc.presort(run.splits["val"]), matrix),
                           run.splits["test"], matrix)
    row = page.summary.set_index(["model", "rule"]).loc[("logreg", "Expected-value rule")]
    assert row["value_per_item"] == pytest.approx(expected.value_per_item)
    other = view.build(chosen, ws, ("a", "b"))
    assert other.models == () and other.left_out_note.startswith("Left out (other classes): ")
    assert isinstance(other.summary, pd.DataFrame) and other.summary.empty


def test_the_summary_shows_its_note_column_only_when_a_row_has_a_note(breast_cancer):
    """An empty "Note" column beside every rule read as missing data (and widened the table past 800 px)."""
    _, _, page = breast_cancer
    assert not page.summary["note"].astype(bool).any()  # every rule fitted, labelled: nothing to note
    assert page.summary_columns == ("Model", "Rule", "Total value", "Value per item", "Acted on")
    # "Total value" waits in the details: with it the table was 536 px, past the 466 px it has at 800 px.
    assert page.summary_shown == ("Model", "Rule", "Value per item", "Acted on")
    noted = page.summary.assign(note=["estimated without labels"] + [""] * (len(page.summary) - 1))
    assert view.summary_columns(noted)[-1] == "Note" and view.summary_shown(noted)[-1] == "Note"
