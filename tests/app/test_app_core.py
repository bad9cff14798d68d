"""The Runs, Value, VOC, Cost matrix and How-value-works pages, driven through Streamlit's AppTest.

Each test starts the whole app (app.py: sidebar, navigation, page) on the
sample runs or on small files it writes, acts like a user (sidebar widgets,
page widgets, uploads, URL) and reads what the page shows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.safetext import md_text
from dashboard.state import editor_key
from helpers.app import APP, ROOT, assert_clean, start, value_table

SAMPLES = ROOT / "sample_runs"
MY_PAGES = ("pages/runs.py", "pages/value.py", "pages/voc.py", "pages/cost_matrix.py", "pages/how_value_works.py")


def texts(at: AppTest) -> str:
    """All markdown, captions, infos and warnings of the page as one string."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [i.value for i in at.info] + [w.value for w in at.warning] + [s.value for s in at.success]
    return "\n".join(parts)


def top_label_csv(path: Path) -> None:
    """A top-label run (y_pred + confidence, no probabilities) made from a sample run."""
    frame = pd.read_csv(SAMPLES / "digits" / "logreg.csv")
    proba = frame.filter(like="proba_").to_numpy()
    out = pd.DataFrame({
        "split": frame["split"],
        "y_true": frame["y_true"],
        "y_pred": proba.argmax(axis=1),
        "confidence": proba.max(axis=1).round(4),
    })
    out.to_csv(path, index=False)


BAD_CSV = b"split,y_true,proba_a,proba_b\nval,a,0.9,0.3\nval,b,0.2,0.8\n"


# ----------------------------------------------------------------- rendering
@pytest.mark.parametrize("sample", ["digits", "breast_cancer", "digits_shifted"])
def test_every_page_renders_on_the_sample_runs(sample):
    at = start(src=f"sample:{sample}")
    assert_clean(at)
    for page in MY_PAGES:
        at.switch_page(page).run()
        assert_clean(at)
        assert at.title, page


def test_unlabelled_evaluation_split_is_explained_not_an_error():
    at = start("pages/value.py", src="sample:breast_cancer", eval="prod")
    assert at.sidebar.selectbox(key="sidebar_eval_split").value == "prod"
    assert_clean(at)
    assert "no labels" in texts(at) and "estimated" in texts(at)
    assert value_table(at).loc["logreg", "Total value"] == pytest.approx(value_table(at).loc["logreg", "Total value"])
    for page in ("pages/voc.py", "pages/cost_matrix.py"):
        at.switch_page(page).run()
        assert_clean(at)
    at.switch_page("pages/voc.py").run()
    assert "needs labels" in texts(at) or "no labels" in texts(at)


def test_sidebar_links_to_how_value_works():
    at = start("pages/voc.py")
    links = [link for link in at.sidebar.get("page_link")]
    assert any(link.proto.page == "how-value-works" and link.proto.label == "How value works" for link in links)


# ------------------------------------------------------------ value page
def test_a_larger_penalty_raises_the_tuned_threshold():
    at = start("pages/value.py", src="sample:digits")
    assert_clean(at)
    before = value_table(at)["Threshold"]
    assert at.metric[0].value.replace("\\", "") in before.index  # the best model is named at the top (escaped)
    at.sidebar.number_input(key="sidebar_v_wrong_input").set_value(-40.0).run()
    assert_clean(at)
    after = value_table(at)["Threshold"]
    models = [m for m in before.index if not m.startswith("no model")]
    # NaN = "always hand off", the highest threshold of all.
    assert all(np.isnan(after[m]) or after[m] >= before[m] for m in models)
    assert after["logreg"] > before["logreg"]
    assert at.session_state["settings"].v_wrong == -40.0


def test_value_table_has_the_no_model_baseline_and_a_best_model():
    at = start("pages/value.py", src="sample:digits")
    table = value_table(at)
    assert "no model (hand off all)" in table.index
    assert table.loc["no model (hand off all)", "Total value"] == 0.0
    assert (table["★"] == "★").sum() == 1
    best = table.index[table["★"] == "★"][0]
    assert table.loc[best, "Value per item"] == table["Value per item"].max()
    assert "brings the most value" in texts(at)


def test_every_policy_kind_and_the_what_if_threshold():
    at = start("pages/value.py", src="sample:breast_cancer")
    radio = at.radio(key="value_policy_kind")
    assert "expected_value" in radio.options or any("Expected" in o for o in radio.options)
    for kind in ("calibrated_threshold", "accept_all", "class_thresholds", "expected_value", "threshold"):
        at.radio(key="value_policy_kind").set_value(kind).run()
        assert_clean(at)
        assert len(value_table(at)) == 6  # five models and "no model"
    at.toggle(key="value_what_if").set_value(True).run()
    at.slider(key="value_manual_threshold").set_value(0.99).run()
    assert_clean(at)
    table = value_table(at)
    assert "Yours: per item" in table.columns
    acted_on = table["Yours: acted on"].drop("no model (hand off all)")
    # shown as text ("87.5%") when the no-model row leaves the column empty (st.dataframe would say None)
    acted_on = pd.to_numeric(acted_on.astype(str).str.rstrip("%")) / (100 if acted_on.dtype != float else 1)
    assert acted_on.max() < 1.0
    at.checkbox(key="value_show_tuning").check().run()
    at.selectbox(key="value_hist_model").set_value("mlp").run()
    assert_clean(at)


def test_top_label_runs_explain_what_is_unavailable(tmp_path):
    top_label_csv(tmp_path / "toplabel.csv")
    at = start("pages/value.py", src=f"folder:{tmp_path}")
    assert_clean(at)
    radio = at.radio(key="value_policy_kind")
    assert "expected_value" not in radio.options and not any("Expected" in o for o in radio.options)
    assert "top label only" in texts(at)
    at.sidebar.selectbox(key="sidebar_calibration").set_value("temperature").run()
    assert_clean(at)
    at.switch_page("pages/cost_matrix.py").run()
    assert_clean(at)
    notes = " ".join(str(v) for v in at.dataframe[1].value["Note"])
    assert "full probability vector" in notes
    at.switch_page("pages/runs.py").run()
    assert_clean(at)
    assert at.dataframe[0].value.loc[0, "probabilities"] == "top label only"


# --------------------------------------------------------------- VOC page
def test_voc_page_lists_every_selected_model():
    at = start("pages/voc.py", src="sample:digits")
    assert_clean(at)
    selected = list(at.sidebar.multiselect(key="sidebar_models").value)
    assert len(selected) == 5
    summary = next(df.value for df in at.dataframe if "omega_sup" in df.value.columns)
    assert list(summary["model"]) == selected
    words = texts(at)
    assert all(f"**{md_text(m)}**" in words for m in selected)  # dominance and comparison, in words
    at.sidebar.multiselect(key="sidebar_models").set_value(["mlp", "svm_rbf"]).run()
    assert_clean(at)
    summary = next(df.value for df in at.dataframe if "omega_sup" in df.value.columns)
    assert list(summary["model"]) == ["mlp", "svm_rbf"]


def test_voc_modes_ranges_and_bands():
    at = start("pages/voc.py", src="sample:breast_cancer", vw="-9")
    assert at.slider(key="voc_omega_range").value == (0.0, 18.0)  # default 0 .. max(10, 2ω)
    for mode in ("oracle", "calibrated", "accept_all", "tuned"):
        at.radio(key="voc_mode").set_value(mode).run()
        assert_clean(at)
    at.slider(key="voc_omega_range").set_value((0.0, 5.0)).run()
    at.checkbox(key="voc_bands").check().run()
    assert_clean(at)
    at.session_state[editor_key("voc_area_ranges", at.session_state["settings"].voc_areas)] = {
        "edited_rows": {1: {"to": None}}, "added_rows": [{"from": 2.0, "to": 3.0}], "deleted_rows": []
    }
    at.run()
    assert_clean(at)
    summary = next(df.value for df in at.dataframe if "omega_sup" in df.value.columns)
    assert {"area ω∈[0, 1]", "area ω∈[1, ∞]", "area ω∈[2, 3]"} <= set(summary.columns)
    assert at.session_state["settings"].voc_areas == ((0.0, 1.0), (1.0, None), (2.0, 3.0))
    assert at.query_params["areas"] == "[[0.0,1.0],[1.0,null],[2.0,3.0]]"


# -------------------------------------------------------- cost matrix page
def test_editing_the_cost_matrix_changes_the_value_everywhere():
    at = start("pages/cost_matrix.py", src="sample:breast_cancer")
    assert_clean(at)

    def tuned_value(app: AppTest) -> float:
        summary = app.dataframe[1].value
        row = summary[(summary["Model"] == "logreg") & (summary["Rule"] == "One threshold, tuned")]
        return float(row["Total value"].iloc[0])

    before = tuned_value(at)
    editor = at.data_editor[0]
    assert editor.key.startswith("cost_matrix_editor")
    assert list(editor.value.columns) == ["→ benign", "→ malignant", "hand off"]
    # A missed malignant tumour (true malignant, predicted benign) now costs 50.
    at.session_state[editor.key] = {"edited_rows": {1: {"→ benign": -50.0}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert_clean(at)
    assert tuned_value(at) != before
    assert at.session_state["settings"].matrix is not None
    assert at.sidebar.button(key="sidebar_use_three_values")  # the way back, in the sidebar
    assert not [n for n in at.sidebar.number_input if n.key == "sidebar_v_wrong_input"]  # no live sliders
    at.switch_page("pages/value.py").run()
    assert_clean(at)
    assert value_table(at).loc["logreg", "Total value"] == pytest.approx(tuned_value_from_value_page(at))
    at.switch_page("pages/cost_matrix.py").run()
    at.button(key="cost_matrix_reset").click().run()
    assert_clean(at)
    assert tuned_value(at) == pytest.approx(before)


def tuned_value_from_value_page(at: AppTest) -> float:
    return float(value_table(at).loc["logreg", "Total value"])


def test_binary_preset_sets_the_matrix():
    at = start("pages/cost_matrix.py", src="sample:breast_cancer")
    at.number_input(key="cost_matrix_tp").set_value(10.0)
    at.number_input(key="cost_matrix_fn").set_value(-100.0)
    at.number_input(key="cost_matrix_fp").set_value(-5.0)
    at.form_submit_button[0].click().run()
    assert_clean(at)
    matrix = at.data_editor[0].value.to_numpy()
    # rows: true benign, true malignant; columns: → benign, → malignant, abstain (positive = malignant)
    np.testing.assert_allclose(matrix, [[1.0, -5.0, 0.0], [-100.0, 10.0, 0.0]])
    assert at.session_state["settings"].value_matrix.values.tolist() == [[1.0, -5.0, 0.0], [-100.0, 10.0, 0.0]]


def test_cost_matrix_handles_models_with_different_classes(tmp_path):
    for name in ("logreg", "mlp"):
        (tmp_path / f"{name}.csv").write_bytes((SAMPLES / "digits" / f"{name}.csv").read_bytes())
    (tmp_path / "bc.csv").write_bytes((SAMPLES / "breast_cancer" / "logreg.csv").read_bytes())
    at = start("pages/cost_matrix.py", src=f"folder:{tmp_path}")
    assert not at.exception
    assert len(at.selectbox(key="cost_matrix_classes").options) == 2
    assert "Left out (other classes): logreg, mlp" in texts(at)  # bc.csv loads first
    assert set(at.dataframe[1].value["Model"]) == {"bc"}
    at.selectbox(key="cost_matrix_classes").set_value(tuple(str(d) for d in range(10))).run()
    assert not at.exception
    assert "Left out (other classes): bc" in texts(at)
    assert set(at.dataframe[1].value["Model"]) == {"logreg", "mlp"}
    assert list(at.data_editor[0].value.columns)[-1] == "hand off" and len(at.data_editor[0].value) == 10


# -------------------------------------------------- files, uploads and URL
def test_a_bad_file_shows_its_error_and_the_good_ones_stay_usable(tmp_path):
    (tmp_path / "good.csv").write_bytes((SAMPLES / "breast_cancer" / "logreg.csv").read_bytes())
    (tmp_path / "bad.csv").write_bytes(BAD_CSV)
    at = start("pages/runs.py", src=f"folder:{tmp_path}")
    assert not at.exception
    assert any("bad.csv" in e.value for e in at.error)
    assert list(at.dataframe[0].value["model"]) == ["good"]
    for page in ("pages/value.py", "pages/voc.py", "pages/cost_matrix.py"):
        at.switch_page(page).run()
        assert_clean(at)
    # Back to the sample runs: nothing wrong there.
    at.switch_page("pages/runs.py").run()
    at.sidebar.selectbox(key="sidebar_source").set_value("sample:digits").run()
    assert_clean(at)
    assert len(at.dataframe[0].value) == 5


def test_uploaded_files_good_and_bad():
    at = start("pages/runs.py", src="upload")
    assert_clean(at)
    assert "Upload one CSV or Parquet file" in texts(at)
    good = (SAMPLES / "breast_cancer" / "mlp.csv").read_bytes()
    at.sidebar.get("file_uploader")[0].set_value([("mlp.csv", good, "text/csv"), ("broken.csv", BAD_CSV, "text/csv")])
    at.run()
    assert not at.exception
    assert any("broken.csv" in e.value for e in at.error)
    assert list(at.dataframe[0].value["model"]) == ["mlp"]
    at.switch_page("pages/value.py").run()
    assert_clean(at)
    assert "mlp" in value_table(at).index


def test_no_run_loaded_is_explained_on_every_page():
    at = start(src="upload")
    for page in MY_PAGES:
        at.switch_page(page).run()
        assert_clean(at)


def test_url_query_parameters_restore_the_use_case():
    at = start("pages/value.py", vw="-10", vc="2", cur="€")
    assert_clean(at)
    assert at.sidebar.number_input(key="sidebar_v_wrong_input").value == -10.0
    assert at.sidebar.number_input(key="sidebar_v_correct_input").value == 2.0
    omega = next(m for m in at.sidebar.metric if m.label.startswith("Penalty"))
    assert omega.value == "5"
    assert "ω = 5" in at.caption[0].value
    assert "€" in at.metric[2].value  # value per item in the chosen currency


# ------------------------------------------------- the cache is an object, not a subclass
def test_the_workspace_overrides_no_stage_of_the_pipeline_and_hands_it_its_cache():
    """The dashboard keeps the pipeline's numbers by handing it a cache; its Workspace only adds the views the
    pages draw, so no number can come from a dashboard override of a core stage."""
    import valuecore as vc
    from dashboard.data import StageCache, Workspace, load_folder

    overridden = sorted(name for name, member in vars(Workspace).items()
                        if callable(member) and name != "__init__" and hasattr(vc.Pipeline, name))
    assert overridden == []
    report = load_folder(SAMPLES / "digits")
    ws = Workspace(report, "val", "test", "temperature")
    assert isinstance(ws.cache, StageCache)
    bare = vc.Pipeline(report.models, "val", "test", "temperature")
    values = vc.UseCase(1, 0, -7)
    for model in report.models:
        for kind in ("threshold", "class_thresholds"):
            policy = ws.policy(model, kind, values)
            assert policy.to_dict() == bare.policy(model, kind, values).to_dict()
            cached, direct = ws.result(model, policy, values), bare.result(model, policy, values)
            assert (cached.value_total, cached.coverage) == (direct.value_total, direct.coverage)
    assert ws.recommended_rules(values) == bare.recommended_rules(values)


# ------------------------------------------------- shortcuts stay exact
def test_threshold_view_and_fast_interval_match_valuecore():
    """The Value page reads baselines off one threshold curve and computes intervals from confusion cells;
    both must equal valuecore's direct answers."""
    import valuecore as vc
    from dashboard.data import Workspace, load_folder

    uncertainty = pytest.importorskip("valuecore._stats.uncertainty")
    report = load_folder(SAMPLES / "breast_cancer")
    ws = Workspace(report, "val", "test")
    predictions = ws.predictions("mlp", "test")
    matrix = vc.ValueMatrix.binary(tp=10, tn=1, fp=-5, fn=-50, abstain=-1, classes=predictions.classes)
    for values in (vc.UseCase(1, 0, -7), matrix):
        tuned = ws.policy("mlp", "threshold", values)
        result = ws.result("mlp", tuned, values)
        view = ws.threshold_view("mlp", "test", values, (tuned.threshold, 0.5, None))
        assert view.at[tuned.threshold][1] == pytest.approx(result.value_per_item)
        assert view.at[tuned.threshold][2] == pytest.approx(result.coverage)
        at_half = vc.evaluate(vc.Policy("threshold", threshold=0.5), predictions, values)
        assert view.at[0.5][1] == pytest.approx(at_half.value_per_item)
        no_model = vc.evaluate(vc.Policy("threshold", threshold=None), predictions, values)
        accept_all = vc.evaluate(vc.Policy("accept_all"), predictions, values)
        assert view.no_model_total == pytest.approx(no_model.value_total)
        assert view.accept_all_per_item == pytest.approx(accept_all.value_per_item)
        fast = ws.interval("mlp", tuned, values, result)
        direct = uncertainty.policy_interval(tuned, predictions, values)
        expected = (direct.mean, direct.low, direct.high, direct.n)
        assert (fast.mean, fast.low, fast.high, fast.n) == pytest.approx(expected)


@pytest.mark.parametrize("page", ["value", "voc", "cost_matrix", "calibration", "monitor"])
def test_no_selected_model_is_explained_not_an_error(page):
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.sidebar.multiselect(key="sidebar_models").set_value([]).run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception
    assert not at.error
    assert any("No model is selected" in info.value for info in at.info)
