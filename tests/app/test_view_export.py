"""The Export page's view model (dashboard.views.export), without Streamlit: the JSON it shows is the
pipeline's document, and an import reads back the settings it records."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import valuecore as vc
from dashboard.data import Workspace
from dashboard.settings import Settings
from dashboard.state import Selection
from dashboard.views import export as view

ROOT = Path(__file__).resolve().parents[2]
REPORT = vc.load_runs([str(ROOT / "sample_runs" / "digits")])
VALUES = vc.UseCase(1, 0, -4)


def selection(models=("logreg", "mlp"), settings=None) -> Selection:
    settings = settings or Settings()
    return Selection(settings=settings, report=REPORT, models=tuple(models), use_case=settings.use_case,
                     tune_split="val", eval_split="test", calibration="none", currency="€")


def workspace() -> Workspace:
    return Workspace(REPORT, "val", "test", "none")


def as_shown(model: str, threshold: float) -> str:
    """A threshold as every page writes it: the digits that tell its decision apart on val and test."""
    splits = REPORT.models[model].splits
    return vc.wording.threshold_on_data(threshold, np.concatenate([splits[s].confidence for s in ("val", "test")]))


def test_the_summary_is_the_pipeline_s_document_with_the_recommendation():
    page = view.build(selection(), workspace(), "threshold", Settings())
    assert page.error is None and page.schema_error is None
    expected, _ = vc.Pipeline(REPORT.models, "val", "test", "none").document(["logreg", "mlp"], "threshold", VALUES)
    data = json.loads(page.text)
    assert data == page.document and data["schema_version"] == page.schema_version
    assert data["recommendation"]["model"] in ("logreg", "mlp", None)
    summary = page.summary.set_index("Model")
    for entry in expected.to_dict()["models"]:
        model = entry["model"]
        recommended = data["recommendation"]["model"] == model and data["recommendation"]["policy"] != "threshold"
        if recommended:
            continue  # the recommended model's entry holds the recommended rule
        assert summary.loc[model, "Value per item"] == pytest.approx(entry["evaluation"]["value_per_item"])
        ci = [summary.loc[model, "ci95_low"], summary.loc[model, "ci95_high"]]
        assert ci == pytest.approx(entry["evaluation"]["ci95"])
        assert summary.loc[model, "Threshold"] == as_shown(model, entry["policy"]["threshold"])
    assert page.summary_columns[2] == "Value per item"  # its cells read in euros (summary_formats)
    assert "correct €1.00, hand-off €0.00, wrong -€4.00" in page.values_caption
    assert page.headline.endswith('The JSON\'s "recommendation" names it.')


def test_a_rule_that_cannot_be_fitted_is_an_error_in_words(tmp_path):
    import pandas as pd

    frame = pd.read_csv(ROOT / "sample_runs" / "digits" / "logreg.csv")
    proba = frame.filter(like="proba_").to_numpy()
    pd.DataFrame({"split": frame["split"], "y_true": frame["y_true"], "y_pred": proba.argmax(axis=1),
                  "confidence": proba.max(axis=1)}).to_csv(tmp_path / "top.csv", index=False)
    report = vc.load_runs([str(tmp_path)])
    top = Selection(settings=Settings(), report=report, models=("top",), use_case=VALUES, tune_split="val",
                    eval_split="test")
    page = view.build(top, Workspace(report, "val", "test", "none"), "expected_value", Settings())
    assert page.document is None and page.error.startswith("No policy could be built: ")
    assert "probability" in page.error


def test_an_import_of_the_export_restores_its_settings_on_the_same_runs():
    settings = Settings(v_wrong=-7.5, rule="class_thresholds", tune_split="val", eval_split="test")
    page = view.build(selection(settings=settings), workspace(), "class_thresholds", settings)
    # ten thresholds do not fit a cell: a table of its own, one row per class (every digit is in the JSON)
    per_class = page.class_thresholds.set_index("Predicted class")
    for entry in page.document["models"]:
        thresholds = entry["policy"].get("class_thresholds")
        summary = page.summary.set_index("Model").loc[entry["model"], "Threshold"]
        assert (summary == view.PER_CLASS) == (thresholds is not None)
        for label, threshold in (thresholds or {}).items():
            assert per_class.loc[str(label), entry["model"]] == as_shown(entry["model"], threshold)
    restored = view.restore(page.text, "pasted text", Settings(), REPORT.models)
    assert restored.status.ok and restored.status.same_runs
    assert restored.changes["v_wrong"] == -7.5 and restored.changes["rule"] == "class_thresholds"
    assert replace(Settings(), **restored.changes).use_case == vc.UseCase(1, 0, -7.5)
    assert restored.document == json.loads(page.text)
    assert "Restored from the pasted text: correct 1.0, hand-off 0.0, wrong -7.5" in restored.status.message
    shown = view.stored(restored.document, restored.status, REPORT.models)
    assert shown.same_runs and shown.applied is None
    assert list(shown.summary["Model"]) == ["logreg", "mlp"]


def test_an_import_on_other_runs_is_applied_as_stored():
    page = view.build(selection(), workspace(), "threshold", Settings())
    other = vc.load_runs([str(ROOT / "sample_runs" / "digits_shifted")]).models
    restored = view.restore(page.text, "file p.json", Settings(), other)
    assert restored.status.ok and not restored.status.same_runs  # same models and classes, other files
    shown = view.stored(restored.document, restored.status, other)
    applied = vc.apply_policy_document(vc.policy_json.PolicyDocument.from_dict(restored.document), other)
    assert [a.evaluation["value_per_item"] for a in applied] == pytest.approx(list(shown.applied["Value per item"]))


def test_bad_text_is_refused_in_words_and_empty_text_clears():
    refused = view.restore("{not json", "pasted text", Settings(), REPORT.models)
    assert refused.status.level == "error" and refused.changes == {}
    assert refused.status.message.startswith("Nothing was restored from the pasted text:")
    assert view.restore("  ", "pasted text", Settings(), REPORT.models).status is None


def test_an_import_giving_a_key_twice_is_refused_naming_it():
    page = view.build(selection(), workspace(), "threshold", Settings())
    # The same document with the first model's threshold given twice: a reader taking the last would serve 0.
    text = page.text.replace('"threshold": ', '"threshold": 0.0, "threshold": ', 1)
    assert text != page.text
    refused = view.restore(text, "pasted text", Settings(), REPORT.models)
    assert refused.status.level == "error" and refused.changes == {}
    assert "'threshold' more than once" in refused.status.message


def test_the_summary_reads_its_money_as_every_page_does():
    # issue 35: "0.9400" on Export beside "$0.94" on the first page; 2026-11-30: the interval in one cell, as the
    # Value page writes it.
    chosen = selection()
    page = view.build(chosen, workspace(), "threshold", Settings())
    table = view.summary_table(page.summary, chosen)
    shown = table.to_html()
    for _, row in page.summary.iterrows():
        assert chosen.money(row["Value per item"]) in shown
        interval = f"{chosen.amount(row['ci95_low'])} to {chosen.amount(row['ci95_high'])}"
        assert table.data.set_index("Model").loc[row["Model"], vc.wording.INTERVAL_HEADER] == interval
        assert vc.wording.percent(row["Acted on"]) in shown
        assert f"{row['Value per item']:.4f}" not in shown


def test_the_stored_policies_read_their_money_as_the_summary_does():
    # A bare 0.9412 under "Value per item ($)" beside "$0.94" everywhere else; applied as stored on other runs too.
    from dashboard.tables import styled

    chosen = selection()
    page = view.build(chosen, workspace(), "threshold", Settings())
    other = vc.load_runs([str(ROOT / "sample_runs" / "digits_shifted")]).models
    restored = view.restore(page.text, "file p.json", Settings(), other)
    shown = view.stored(restored.document, restored.status, other)
    for frame in (shown.summary, shown.applied):
        html = styled(frame, view.summary_formats(chosen)).to_html()
        for _, row in frame.iterrows():
            assert chosen.money(row["Value per item"]) in html and vc.wording.percent(row["Acted on"]) in html
            assert f"{row['Value per item']:.4f}" not in html
    assert set(view.STORED_COLUMNS) <= set(shown.summary.columns)
