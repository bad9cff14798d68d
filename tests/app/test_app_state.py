"""One source of truth, through the whole app (AppTest): what a user sees, shares and exports is one policy.

* For every decision rule x recalibration x (three values or a value matrix)
  on the sample runs: the thresholds and values on the Value page equal those
  in the exported JSON to the last digit, and ``apply`` on that JSON
  reproduces them.
* A page button that changes a global setting keeps it in force after two
  further reruns on two other pages (in the settings, in the sidebar, in the URL).
* A link reproduces the page; a model without a tuning split and one whose
  calibration cannot be fitted behave the same on screen, in the export and in
  the CLI; a link to uploads says what to do; matrix mode shows no live sliders.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import valuecore as vc
from dashboard.safetext import md_text
from dashboard.settings import Settings
from dashboard.sidebar import UPLOAD_LINK_NOTE
from valuecore._cli.commands import main
from helpers.app_state import BREAST_MATRIX, SAMPLES, clean, go, screen_policies, start, texts

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

def screen_table(at: AppTest) -> pd.DataFrame:
    return at.dataframe[0].value.set_index("Model")


def exported(at: AppTest) -> dict:
    return json.loads(at.code[0].value)


def refitted_for_the_recommendation(document: dict, rule: str) -> str | None:
    """The model whose exported entry holds the recommended rule instead of the pages' ``rule`` (None: none)."""
    recommendation = document["recommendation"]
    if rule == vc.RECOMMENDED_RULE:  # every entry holds its model's recommended rule: nothing is refitted
        entry = next((e for e in document["models"] if e["model"] == recommendation["model"]), None)
        assert entry is None or entry["policy"]["kind"] == recommendation["policy"]
        return None
    if recommendation["model"] is None or recommendation["policy"] == rule:
        return None
    entry = next(e for e in document["models"] if e["model"] == recommendation["model"])
    assert entry["policy"]["kind"] == recommendation["policy"]
    return recommendation["model"]


def set_rule(at: AppTest, kind: str) -> None:
    at.radio(key="value_policy_kind").set_value(kind).run()
    clean(at)


# ------------------------------------------------------ screen == export == apply
COMBINATIONS = [(values, calibration) for values in ("three values", "matrix")
                for calibration in ("none", "temperature", "isotonic")]


@pytest.mark.parametrize(("values", "calibration"), COMBINATIONS)
def test_value_page_export_and_apply_agree_to_the_last_digit(values, calibration, tmp_path, capsys):
    query = {"src": "sample:breast_cancer", "vw": "-6.123456789", "vc": "1.25"}
    if values == "matrix":
        query["vm"] = BREAST_MATRIX
    at = start("value", **query)
    if calibration != "none":
        at.sidebar.selectbox(key="sidebar_calibration").set_value(calibration).run()
        clean(at)
    runs = vc.load_runs(SAMPLES / "breast_cancer").models
    expected_kinds = [vc.RECOMMENDED_RULE, *(k for k in vc.policy_json.POLICY_KINDS
                                             if not (values == "matrix" and k == "calibrated_threshold"))]
    assert sorted(at.radio(key="value_policy_kind").options) == sorted(_label(k) for k in expected_kinds)
    for n, kind in enumerate(expected_kinds):
        if kind == "expected_value" and calibration == "isotonic":
            _refused_alike_on_screen_in_the_export_and_the_cli(at, query, tmp_path, capsys)
            continue
        if n:  # the first rule is set on the Value page that start() opened; the others after the Export page
            go(at, "value")
        set_rule(at, kind)
        policies = screen_policies(at)
        table = screen_table(at)
        go(at, "export")
        assert at.selectbox(key="export_policy_kind").value == kind  # one rule, every page
        document = exported(at)
        vc.policy_json.validate_policy_document(document)
        by_model = {entry["model"]: entry for entry in document["models"]}
        assert set(by_model) == set(policies), kind
        refitted = refitted_for_the_recommendation(document, kind)
        for model, policy in policies.items():
            if model == refitted:
                continue  # it holds the recommended rule; apply below still reproduces its evaluation
            entry = by_model[model]
            assert entry["policy"] == policy, (kind, calibration, model)  # every digit of every threshold
            evaluation = entry["evaluation"]
            assert table.loc[model, "Total value"] == evaluation["value_total"]
            assert table.loc[model, "Value per item"] == evaluation["value_per_item"]
            assert table.loc[model, "Acted on"] == evaluation["coverage"]
            assert policy["calibration"]["method"] == calibration
        stored = vc.policy_json.PolicyDocument.from_dict(document)
        for item in vc.apply_policy_document(stored, runs):
            assert item.same_run is True
            assert item.evaluation == by_model[item.model]["evaluation"], (kind, calibration, item.model)


def _refused_alike_on_screen_in_the_export_and_the_cli(at: AppTest, query: dict, tmp_path, capsys) -> None:
    """The expected-value rule after isotonic recalibration (which leaves no probability vector) is refused,
    with its reason, on the Value page, by the export and by the command line."""
    reason = "needs calibrated probability vectors"
    go(at, "value")
    set_rule(at, "expected_value")
    assert reason in " ".join(w.value for w in at.warning)
    at.switch_page("pages/export.py").run()
    assert not at.exception
    assert reason in " ".join(e.value for e in at.error) and not at.code
    argv = ["report", str(SAMPLES / "breast_cancer"), "--policy", "expected_value", "--calibration", "isotonic"]
    if "vm" in query:
        matrix = tmp_path / "matrix.json"
        link = json.loads(query["vm"])
        matrix.write_text(json.dumps({"classes": link["classes"], "value_matrix": link["values"]}), encoding="utf-8")
        argv += ["--value-matrix", str(matrix)]
    else:
        argv += ["--v-correct", query["vc"], "--v-abstain", "0", "--v-wrong", query["vw"]]
    capsys.readouterr()
    assert main(argv) != 0
    assert reason in capsys.readouterr().err


def _label(kind: str) -> str:
    from dashboard.views import POLICY_LABELS

    return POLICY_LABELS[kind]


def test_the_cli_apply_on_a_dashboard_export_reproduces_the_screen(tmp_path, capsys):
    at = start("value", src="sample:digits", vw="-5")
    at.sidebar.selectbox(key="sidebar_calibration").set_value("temperature").run()
    table = screen_table(at)
    go(at, "export")
    path = tmp_path / "policy.json"
    path.write_text(at.code[0].value, encoding="utf-8")
    out = tmp_path / "applied.json"
    assert main(["apply", str(path), str(SAMPLES / "digits"), "--json", str(out)]) == 0
    capsys.readouterr()
    refitted = refitted_for_the_recommendation(json.loads(path.read_text(encoding="utf-8")), vc.RECOMMENDED_RULE)
    checked = 0
    for item in json.loads(out.read_text(encoding="utf-8"))["models"]:
        if item["model"] != refitted:
            checked += 1
            assert item["evaluation"]["value_per_item"] == table.loc[item["model"], "Value per item"]
    assert checked >= 4
    exported_models = json.loads(path.read_text(encoding="utf-8"))["models"]
    assert {e["policy"]["calibration"]["method"] for e in exported_models} == {"temperature"}
    # svm_rbf at ω = 5 on digits with temperature scaling: the recalibrated threshold (not the raw 0.682); the
    # export names a recommendation and holds its rule (refitted only when it is not the pages' rule).
    go(at, "value")
    assert round(screen_policies(at)["svm_rbf"]["threshold"], 4) == 0.7186
    recommendation = json.loads(path.read_text(encoding="utf-8"))["recommendation"]
    assert recommendation["model"] is not None
    assert next(e for e in exported_models if e["model"] == recommendation["model"])[
        "policy"]["kind"] == recommendation["policy"]
    assert refitted is None or refitted == recommendation["model"]


# ------------------------------------------------ page buttons stay in force
def _two_more_pages(at: AppTest, first: str = "value", second: str = "voc") -> None:
    go(at, first)
    go(at, second)


def test_the_calibration_button_stays_in_force_on_every_page():
    at = start("calibration", src="sample:digits", vw="-5")
    at.button(key="calibration_apply").click().run()
    clean(at)
    _two_more_pages(at, "value", "compare")
    assert at.session_state["settings"].calibration == "temperature"
    assert at.sidebar.selectbox(key="sidebar_calibration").value == "temperature"
    assert at.query_params["cal"] == "temperature"
    go(at, "value")
    policy = screen_policies(at)["svm_rbf"]
    assert policy["calibration"]["method"] == "temperature"
    assert round(policy["threshold"], 4) == 0.7186  # not the raw 0.682


def test_the_monitor_sample_button_stays_in_force_after_other_pages_and_a_value_change():
    at = start("monitor", src="sample:digits")
    at.button(key="monitor_load_sample").click().run()
    clean(at)
    assert "Production (no labels)" in [h.value for h in at.header]
    go(at, "value")
    at.sidebar.number_input(key="sidebar_v_wrong_input").set_value(-9.0).run()
    clean(at)
    go(at, "compare")
    assert at.session_state["settings"].source == "sample:breast_cancer"
    assert at.sidebar.selectbox(key="sidebar_source").value == "sample:breast_cancer"
    assert at.query_params["src"] == "sample:breast_cancer"
    go(at, "monitor")
    assert at.selectbox(key="monitor_split").value == "prod"


def test_an_imported_policy_stays_in_force_on_every_page():
    at = start("value", src="sample:digits", vw="-5")
    at.sidebar.selectbox(key="sidebar_calibration").set_value("temperature").run()
    set_rule(at, "class_thresholds")
    before = screen_policies(at)
    go(at, "export")
    text = at.code[0].value
    # Somebody else, in a fresh session with the defaults, imports it.
    other = start("export", src="sample:digits")
    other.text_area(key="export_paste").input(text).run()
    clean(other)
    assert "Restored from the pasted text" in texts(other)
    _two_more_pages(other, "voc", "value")
    settings = other.session_state["settings"]
    assert (settings.v_wrong, settings.calibration, settings.rule) == (-5.0, "temperature", "class_thresholds")
    assert other.sidebar.selectbox(key="sidebar_calibration").value == "temperature"
    assert other.radio(key="value_policy_kind").value == "class_thresholds"
    assert screen_policies(other) == before  # same runs, same SHA-256: the very same thresholds
    go(other, "export")
    assert json.loads(other.code[0].value)["models"] == json.loads(text)["models"]


def test_a_cost_matrix_preset_stays_in_force_on_every_page():
    at = start("cost_matrix", src="sample:breast_cancer")
    at.number_input(key="cost_matrix_fn").set_value(-100.0)
    at.form_submit_button[0].click().run()
    clean(at)
    _two_more_pages(at, "voc", "compare")
    matrix = at.session_state["settings"].value_matrix
    assert matrix is not None and matrix.values[1, 0] == -100.0
    assert json.loads(at.query_params["vm"])["values"][1][0] == -100.0
    go(at, "value")
    assert "per-class value matrix" in texts(at)
    go(at, "export")
    assert exported(at)["use_case"]["value_matrix"][1][0] == -100.0


def test_a_sidebar_preset_stays_in_force_on_every_page():
    at = start("value", src="sample:digits")
    label = next(o for o in at.sidebar.selectbox(key="sidebar_preset").options if "ω = 10" in o)
    at.sidebar.selectbox(key="sidebar_preset").set_value(label).run()
    clean(at)
    _two_more_pages(at, "voc", "export")
    assert at.session_state["settings"].v_wrong == -10.0
    assert at.sidebar.number_input(key="sidebar_v_wrong_input").value == -10.0
    assert at.sidebar.selectbox(key="sidebar_preset").value == label
    assert exported(at)["use_case"]["v_wrong"] == -10.0


def test_the_matrix_editor_its_reset_and_the_sidebars_way_back_stay_in_force_on_every_page():
    at = start("cost_matrix", src="sample:breast_cancer")
    editor = at.data_editor[0]
    at.session_state[editor.key] = {"edited_rows": {1: {"→ benign": -50.0}}, "added_rows": [], "deleted_rows": []}
    at.run()
    clean(at)
    _two_more_pages(at, "voc", "compare")
    assert at.session_state["settings"].value_matrix.values[1, 0] == -50.0
    assert json.loads(at.query_params["vm"])["values"][1][0] == -50.0
    go(at, "value")
    assert "per-class value matrix" in texts(at)
    go(at, "cost_matrix")
    at.button(key="cost_matrix_reset").click().run()
    clean(at)
    _two_more_pages(at, "value", "export")
    assert at.session_state["settings"].matrix is None and "vm" not in at.query_params
    assert exported(at)["use_case"].get("value_matrix") is None
    assert at.sidebar.number_input(key="sidebar_v_wrong_input").value == -4.0
    # The sidebar's way back, from any page.
    at = start("value", src="sample:breast_cancer", vm=BREAST_MATRIX)
    at.sidebar.button(key="sidebar_use_three_values").click().run()
    clean(at)
    _two_more_pages(at, "cost_matrix", "compare")
    assert at.session_state["settings"].matrix is None and "vm" not in at.query_params
    go(at, "value")
    assert "per-class value matrix" not in texts(at)


# ------------------------------------------------------------------ links
def test_a_link_reproduces_the_page():
    at = start("value", src="sample:breast_cancer")
    at.sidebar.number_input(key="sidebar_v_wrong_input").set_value(-4.1234567).run()
    set_rule(at, "class_thresholds")
    go(at, "voc")
    at.radio(key="voc_mode").set_value("oracle").run()
    go(at, "value")
    link = dict(at.query_params)
    assert link["vw"] == "-4.1234567" and link["rule"] == "class_thresholds" and link["voc"] == "oracle"
    fresh = start("value", **link)
    assert fresh.session_state["settings"] == at.session_state["settings"]
    assert texts(fresh) == texts(at)
    assert screen_policies(fresh) == screen_policies(at)
    go(fresh, "voc")
    assert fresh.radio(key="voc_mode").value == "oracle"


def test_a_bad_link_is_refused_with_a_note_not_a_traceback():
    at = start("value", vw="abc", rule="magic", vm="[1,2]", zz="1")
    sidebar = "\n".join(w.value for w in at.sidebar.warning)
    assert "vw=" in sidebar and "rule=" in sidebar and "vm=" in sidebar and "'zz'" in sidebar
    assert at.session_state["settings"] == Settings(source="sample:digits", tune_split="val", eval_split="test")


def test_a_link_naming_models_or_splits_that_are_not_loaded_says_so():
    at = start("value", src="sample:digits", m='["logreg","ghost"]', tune="holdout")
    sidebar = "\n".join(w.value for w in at.sidebar.warning)
    assert "ghost" in sidebar and "'holdout'" in sidebar
    assert list(at.sidebar.multiselect(key="sidebar_models").value) == ["logreg"]
    assert at.sidebar.selectbox(key="sidebar_tune_split").value == "val"


def test_a_link_to_uploads_says_what_to_do_instead_of_none():
    at = start("value", src="upload")
    assert UPLOAD_LINK_NOTE in [w.value for w in at.warning]
    assert "None" not in texts(at)
    go(at, "runs")
    assert "None" not in texts(at)


# ------------------------------------------------------------ matrix mode
def test_matrix_mode_shows_the_matrix_and_a_way_back_not_live_sliders():
    at = start("value", src="sample:breast_cancer", vm=BREAST_MATRIX)
    assert not [n for n in at.sidebar.number_input if n.key.startswith("sidebar_v_")]
    assert "per-class value matrix" in "\n".join(i.value for i in at.sidebar.info)
    assert _label("calibrated_threshold") not in at.radio(key="value_policy_kind").options
    assert "needs one penalty ω" in texts(at)
    at.sidebar.button(key="sidebar_use_three_values").click().run()
    clean(at)
    assert at.session_state["settings"].matrix is None
    assert at.sidebar.number_input(key="sidebar_v_wrong_input").value == -4.0
    assert _label("calibrated_threshold") in at.radio(key="value_policy_kind").options
    assert "vm" not in at.query_params


# ------------------------------------------- awkward runs: one rule everywhere
def test_models_without_a_tuning_split_or_a_fittable_calibration_are_the_same_everywhere(tmp_path, capsys):
    from helpers.core import awkward_runs

    folder = tmp_path / "runs"
    folder.mkdir()
    awkward_runs(folder)
    at = start("value", src=f"folder:{folder}", vw="-5", cal="temperature", tune="val", eval="test")
    table = screen_table(at)
    assert {"A", "B", "C", "D"} <= set(table.index)
    words = texts(at)
    assert md_text("B: no 'val' split to tune on") in words and md_text("C: the 'val' split has no labels") in words
    assert md_text("D: the temperature recalibration cannot be fitted") in words
    policies = screen_policies(at)
    go(at, "export")
    document = exported(at)
    refitted = refitted_for_the_recommendation(document, vc.RECOMMENDED_RULE)
    assert {e["model"]: e["policy"] for e in document["models"] if e["model"] != refitted} == {
        m: p for m, p in policies.items() if m != refitted}
    out = tmp_path / "cli.json"
    assert main(["report", str(folder), "--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-5",
                 "--calibration", "temperature", "--tune-split", "val", "--eval-split", "test", "--currency", "$",
                 "--json", str(out)]) == 0
    capsys.readouterr()
    cli = json.loads(out.read_text(encoding="utf-8"))
    # The export and the command line: the same document, the recommendation and its entry included.
    assert cli["models"] == document["models"] and cli["recommendation"] == document["recommendation"]
    for model in set("ABCD") - {refitted}:
        cli_value = next(e for e in cli["models"] if e["model"] == model)["evaluation"]["value_per_item"]
        assert table.loc[model, "Value per item"] == cli_value


def test_importing_a_policy_for_other_run_files_says_which_and_shows_the_stored_policies_applied(tmp_path):
    at = start("export", src="sample:digits")
    text = at.code[0].value
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in ("logreg", "mlp"):
        frame = pd.read_csv(SAMPLES / "digits" / f"{name}.csv")
        (frame.iloc[:-1] if name == "mlp" else frame).to_csv(folder / f"{name}.csv", index=False)
    other = start("export", src=f"folder:{folder}")
    other.text_area(key="export_paste").input(text).run()
    clean(other)
    words = texts(other)
    assert md_text("model 'mlp': the run file") in words and "is not the one the policy was built from" in words
    assert "applied as stored" in words
    applied = next(d.value for d in other.dataframe if "Same run file" in d.value.columns).set_index("Model")
    assert applied.loc["mlp", "Same run file"] == "no (other SHA-256)"
    assert applied.loc["logreg", "Same run file"] == "yes"
    stored = vc.policy_json.PolicyDocument.from_json(text)
    runs = vc.load_runs(folder).models
    expected = vc.evaluate(stored.entry("mlp").policy, runs["mlp"].splits["test"], stored.values)
    shown = applied.loc["mlp", "Value per item"]
    # Read in money (dashboard.tables.styled); a column with a missing number is text, "–" there, never "None"
    assert shown == expected.value_per_item or shown == vc.wording.money(expected.value_per_item, "$")
