"""The "Trust the numbers" and "Ship it" pages, driven through the whole app with AppTest.

Calibration, Compare, Monitor and Export must render on the sample runs
without an exception, explain their empty states in words, and the exported
policy JSON must be valid and restore the use case through the paste box.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from jsonschema import Draft202012Validator
from streamlit.testing.v1 import AppTest

import valuecore as vc
from valuecore.runs import load_runs
from valuecore._stats.uncertainty import paired_comparison
from dashboard.safetext import md_text

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SCHEMA = json.loads((ROOT / "valuecore" / "policy.schema.json").read_text(encoding="utf-8"))


def _app(source: str | None = None) -> AppTest:
    """The app after its first run, on the digits sample or on ``source``.

    ``"sample:<name>"`` is chosen in the sidebar; ``"folder:<path>"`` comes
    from the link (``?src=folder:<path>``), as a shared link would bring it.
    """
    at = AppTest.from_file(APP, default_timeout=60)
    if source is not None and source.startswith("folder:"):
        at.query_params["src"] = source
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if source is not None and source.startswith("sample:"):
        at.sidebar.selectbox(key="sidebar_source").set_value(source).run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def _open(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    # The page must run inside app.py's frame (a rerun that runs the page file alone, Streamlit's
    # legacy pages-folder mode, would leave the sidebar out and the page on a stale selection).
    assert at.sidebar.children, "the page ran without app.py's sidebar"
    return at


def _texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def _frame(at: AppTest, column: str):
    """The first dataframe on the page with this column."""
    for element in at.dataframe:
        if column in element.value.columns:
            return element.value
    raise AssertionError(f"no table with a column {column!r}; tables: {[list(d.value.columns) for d in at.dataframe]}")


# ---------------------------------------------------------------- calibration
def test_calibration_page_shows_metrics_before_and_after_and_table5():
    at = _open(_app(), "calibration")
    metrics = _frame(at, "ECE, equal width")
    for column in ("ECE, equal mass", "MCE", "Brier", "NLL"):
        assert column in metrics.columns
    assert set(metrics["Confidence"]) == {"raw", "temperature"}  # the sidebar says none: the page examines temperature
    assert len(metrics) == 2 * 5
    raw = metrics[metrics["Confidence"] == "raw"].set_index("Model")
    run = load_runs(ROOT / "sample_runs" / "digits").models["logreg"].splits["test"]
    assert raw.loc["logreg", "ECE, equal width"] == pytest.approx(vc_ece(run))

    table5 = _frame(at, "Value, ω/(1+ω) raw")
    assert sorted(set(table5["Penalty ω"])) == [0, 1, 2, 4, 8, 10]
    assert "Value, ω/(1+ω) recalibrated" in table5.columns and "Value, tuned raw" in table5.columns
    assert "What it means" in _texts(at.markdown)
    assert len(at.get("vega_lite_chart")) == 2 * 5  # a panel a model in each of the two charts, each a chart

    at.radio(key="calibration_method").set_value("isotonic").run()
    assert not at.exception
    assert set(_frame(at, "ECE, equal width")["Confidence"]) == {"raw", "isotonic"}


def test_calibration_page_can_adopt_its_recalibration_for_every_page():
    at = _open(_app(), "calibration")
    assert at.session_state["selection"].calibration == "none"
    at.button(key="calibration_apply").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["selection"].calibration == "temperature"  # the sidebar ran with it
    assert "The other pages use the same recalibration" in _texts(at.caption)


def test_calibration_page_explains_top_label_only_runs(tmp_path):
    rng = np.random.default_rng(0)
    truth = {split: rng.choice(["a", "b"], 40) for split in ("val", "test")}
    for model in ("alpha", "beta"):
        lines = ["id,split,y_true,y_pred,confidence"]
        for split, labels in truth.items():
            for i, label in enumerate(labels):
                confidence = rng.uniform(0.5, 1.0)
                predicted = label if rng.random() < confidence else ("b" if label == "a" else "a")
                lines.append(f"{split}-{i},{split},{label},{predicted},{confidence:.3f}")
        (tmp_path / f"{model}.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    at = _open(_app(f"folder:{tmp_path}"), "calibration")
    warnings = _texts(at.warning)
    assert "temperature recalibration cannot be fitted" in warnings and "Isotonic regression works" in warnings
    # no probability vector, no log-likelihood: shown as a dash, never "None"
    assert _frame(at, "NLL")["NLL"].map(lambda v: v == "–" or (isinstance(v, float) and v != v)).all()
    at.radio(key="calibration_method").set_value("isotonic").run()
    assert not at.exception, [e.value for e in at.exception]
    assert set(_frame(at, "ECE, equal width")["Confidence"]) == {"raw", "isotonic"}
    _open(at, "compare")
    assert "On these 40 items, " in _texts(at.markdown)


def vc_ece(predictions) -> float:
    from valuecore._stats.calibration_metrics import expected_calibration_error

    return expected_calibration_error(predictions, 15, "uniform")


def test_calibration_page_explains_an_unlabelled_evaluation_split():
    at = _app("sample:breast_cancer")
    at.selectbox(key="sidebar_eval_split").set_value("prod").run()
    _open(at, "calibration")
    assert "has no labels" in _texts(at.warning)


# -------------------------------------------------------------------- compare
def test_compare_page_states_the_difference_its_interval_and_its_one_test():
    at = _open(_app(), "compare")
    # It opens on the recommended model; this test compares logreg with mlp.
    at.selectbox(key="compare_model_a").set_value("logreg").run()
    at.selectbox(key="compare_model_b").set_value("mlp").run()
    metrics = {m.label: m.value for m in at.metric}
    assert "A − B, per item (this data)" in metrics
    assert any(h.value == "The difference in value: logreg − mlp" for h in at.subheader)
    markdown = _texts(at.markdown)

    # The numbers are valuecore's: the same paired comparison computed directly.
    runs = load_runs(ROOT / "sample_runs" / "digits").models
    use_case = vc.UseCase(1, 0, -4)
    policies = {m: vc.fit_policy("threshold", vc.presort(runs[m].splits["val"]), use_case) for m in ("logreg", "mlp")}
    expected = paired_comparison(
        policies["logreg"],
        runs["logreg"].splits["test"],
        policies["mlp"],
        runs["mlp"].splits["test"],
        use_case,
    )
    # ... said by the one wording module that the CLI and the HTML report use (names escaped as text).
    on_data, on_new_data = vc.wording.paired_sentences(expected, ("logreg", "mlp"), "$")
    assert on_data.startswith("On these 450 items, ") and vc.wording.p_value(expected.p_value) in on_new_data
    assert md_text(on_data) in markdown and md_text(on_new_data) in markdown
    assert metrics["A − B, per item (this data)"] == vc.wording.amount(expected.mean_difference, "$")
    assert metrics["95% interval (new data)"] == (f"{vc.wording.amount(expected.low, '$')} to "
                                                  f"{vc.wording.amount(expected.high, '$')}")
    assert metrics["Paired test"] == vc.wording.p_value(expected.p_value)
    assert "Paired t-test" not in metrics and "t-test" not in on_new_data and "bootstrap" not in on_new_data
    # One figure, and a word on how to read it under it.
    reading = ("Below 5%: the interval excludes 0, a real difference." if expected.p_value < 0.05
               else "Not below 5%: the interval includes 0, no difference shown.")
    assert reading in _texts(at.caption)
    assert "Tuned threshold" in _frame(at, "Spread").columns


def test_compare_page_needs_two_models():
    at = _app()
    at.multiselect(key="sidebar_models").set_value(["logreg"]).run()
    _open(at, "compare")
    assert "Comparing needs two models" in _texts(at.info)


def test_compare_page_explains_runs_that_cannot_be_paired(tmp_path):
    header = "id,split,y_true,proba_a,proba_b\n"
    rows = {"one": range(0, 6), "two": range(100, 106)}  # the same split, different items
    for model, ids in rows.items():
        lines = [f"{i},{split},{'a' if i % 2 else 'b'},0.7,0.3\n" for split in ("val", "test") for i in ids]
        (tmp_path / f"{model}.csv").write_text(header + "".join(lines), encoding="utf-8")
    at = _open(_app(source=f"folder:{tmp_path}"), "compare")
    errors = _texts(at.error)
    assert "cannot be compared item by item" in errors and "ids" in errors


# -------------------------------------------------------------------- monitor
def test_monitor_page_estimates_production_chunks_of_breast_cancer():
    at = _open(_app("sample:breast_cancer"), "monitor")
    assert "rely on calibration" in _texts(at.markdown)
    production = _frame(at, "Estimated value per item ($)")
    assert len(production) == 5 and (production["Chunks"] == 6).all()  # six weeks of prod
    backtest = _frame(at, "Realised per item ($)")
    assert "Estimate − realised ($)" in backtest.columns

    at.radio(key="monitor_chunking").set_value("count").run()
    assert not at.exception
    assert (_frame(at, "Estimated value per item ($)")["Chunks"] == 10).all()


def test_monitor_page_without_unlabelled_split_explains_and_still_backtests():
    at = _open(_app(), "monitor")
    info = _texts(at.info)
    assert "nothing to monitor" in info and "breast_cancer" in info
    assert at.button(key="monitor_load_sample").label == "Load the breast_cancer sample"
    assert len(_frame(at, "Realised per item ($)")) == 5


# --------------------------------------------------------------------- export
def _exported(at: AppTest) -> dict:
    return json.loads(at.code[0].value)


def test_export_json_is_valid_and_round_trips_through_the_paste_box():
    at = _open(_app(), "export")
    document = _exported(at)
    Draft202012Validator(SCHEMA).validate(document)
    assert "Valid against the policy schema" in _texts(at.success)
    assert at.get("download_button")[0].label == "Download policy JSON"
    assert [m["model"] for m in document["models"]] == ["logreg", "mlp", "naive_bayes", "random_forest", "svm_rbf"]

    document["use_case"] = {"v_correct": 3.0, "v_abstain": -1.0, "v_wrong": -12.0}
    document["models"][0]["policy"]["threshold"] = 0.987
    at.text_area(key="export_paste").input(json.dumps(document)).run()
    assert not at.exception, [e.value for e in at.exception]

    assert at.session_state["selection"].use_case == vc.UseCase(3.0, -1.0, -12.0)  # the sidebar ran with it
    assert at.session_state["sidebar_v_wrong_input"] == -12.0
    assert at.session_state["sidebar_v_correct_input"] == 3.0
    assert "Restored from the pasted text" in _texts(at.success)
    # The stored policies' table (a per-class rule also gets a table of its own thresholds).
    restored = next(d.value for d in reversed(at.dataframe) if "Threshold" in d.value.columns).set_index("Model")
    assert restored.loc["logreg", "Threshold"] == "0.987"  # as valuecore.wording writes thresholds
    assert "Value per item" in restored.columns  # its cells say the currency (test_view_export), not its header
    # The page now exports with the restored use case.
    assert _exported(at)["use_case"]["v_wrong"] == -12.0


def test_export_restores_a_value_matrix():
    at = _open(_app("sample:breast_cancer"), "export")
    document = _exported(at)
    matrix = [[2.0, -10.0, 0.0], [-50.0, 5.0, -1.0]]
    document["use_case"] = {"classes": ["benign", "malignant"], "value_matrix": matrix}
    at.text_area(key="export_paste").input(json.dumps(document)).run()
    assert not at.exception, [e.value for e in at.exception]
    selection = at.session_state["selection"]
    assert selection.value_matrix is not None
    assert selection.value_matrix.values.tolist() == matrix
    assert _exported(at)["use_case"]["value_matrix"] == matrix


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda text, doc: "{not json", "not valid JSON"),
        (lambda text, doc: json.dumps({**doc, "schema_version": 4}), "schema_version 4 is not supported"),
        (
            lambda text, doc: json.dumps({**{k: v for k, v in doc.items() if k != "recommendation"},
                                          "models": [{**doc["models"][0], "classes": ["cat", "dog"]}]}),
            "does not fit the loaded runs",
        ),
        (
            lambda text, doc: json.dumps({**doc, "recommendation": {**doc["recommendation"], "model": "ghost"}}),
            "invalid policy document at recommendation: it names model 'ghost'",
        ),
        (lambda text, doc: json.dumps({**doc, "use_case": {"v_correct": 1}}), "Nothing was restored"),
    ],
)
def test_export_refuses_a_bad_policy_with_a_clear_error(edit, message):
    at = _open(_app(), "export")
    text = at.code[0].value
    at.text_area(key="export_paste").input(edit(text, json.loads(text))).run()
    assert not at.exception, [e.value for e in at.exception]
    assert md_text(message) in _texts(at.error)  # names from the file are shown as text (escaped)
    assert at.session_state["selection"].use_case == vc.UseCase(1.0, 0.0, -4.0)  # nothing applied
