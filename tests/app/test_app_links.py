"""Page-level choices travel in the link (AppTest).

For each page: make its choices, take the URL's query parameters, open a
fresh session with them, and the page shows the same thing: the same words,
widgets, tables and charts. Choices that follow a default (the best model,
values derived from the three values) keep following it until the user picks.
"""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

import valuecore as vc
from dashboard.settings import Settings
from dashboard.state import editor_key
from helpers.app_state import SAMPLES, clean, go, start

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

WIDGETS = ("selectbox", "radio", "checkbox", "toggle", "slider", "select_slider", "number_input", "multiselect")
WORDS = ("title", "header", "subheader", "markdown", "caption", "info", "warning", "success", "code")


def shown(at: AppTest) -> dict:
    """What the main area shows: words, metrics, widgets (by key), tables and chart specifications."""
    main = at.main
    out = {kind: [str(e.value) for e in main.get(kind)] for kind in WORDS}
    out["metric"] = [(m.label, m.value) for m in main.get("metric")]
    out["widgets"] = {w.key: w.value for kind in WIDGETS for w in main.get(kind)}
    out["tables"] = [d.value.to_json(orient="split", default_handler=str) for d in main.get("dataframe")]
    out["charts"] = [c.proto.spec for c in main.get("vega_lite_chart")]
    return out


def link_of(at: AppTest) -> dict[str, str]:
    return {key: at.query_params[key] for key in at.query_params}


def same_page_from_the_link(at: AppTest, page: str) -> AppTest:
    """Open ``page`` in a fresh session from ``at``'s link; it shows what ``at`` shows."""
    link = link_of(at)
    fresh = start(**link)
    go(fresh, page)
    assert fresh.session_state["settings"] == at.session_state["settings"]
    before, after = shown(at), shown(fresh)
    for part in before:
        assert after[part] == before[part], part
    return fresh


def act(at: AppTest, kind: str, key: str, value) -> None:
    getattr(at, kind)(key=key).set_value(value).run()
    clean(at)


# ------------------------------------------------------------- each page
CHOICES = {
    "value": [("checkbox", "value_show_tuning", True), ("selectbox", "value_hist_model", "mlp")],
    "voc": [("checkbox", "voc_bands", True)],
    "compare": [("selectbox", "compare_model_a", "svm_rbf"), ("selectbox", "compare_model_b", "naive_bayes")],
    "constraints": [("selectbox", "constraints_model", "naive_bayes"), ("number_input", "constraints_volume", 2500.0),
                    ("number_input", "constraints_capacity", 120.0), ("number_input", "constraints_reviewer", 7.5),
                    ("toggle", "constraints_per_class", True), ("select_slider", "constraints_max_risk", 0.02),
                    ("select_slider", "constraints_confidence", 0.99), ("number_input", "constraints_v_ok", 0.75),
                    ("number_input", "constraints_v_bad", -0.25), ("number_input", "constraints_cost", 0.125),
                    ("number_input", "reviewers_rate_low", 0.05), ("number_input", "reviewers_acc_low", 0.9),
                    ("number_input", "reviewers_rate_high", 0.25), ("number_input", "reviewers_acc_high", 0.75),
                    ("number_input", "reviewers_v_wrong", -6.5)],
    "cost_matrix": [("selectbox", "cost_matrix_model", "svm_rbf"), ("radio", "cost_matrix_rule", "expected_value")],
    "home": [("number_input", "home_volume_input", 250), ("selectbox", "home_period_input", "day")],
}
QUERY_KEY = {"value_show_tuning": "showtune", "value_hist_model": "hist", "voc_bands": "bands",
             "compare_model_a": "pair", "compare_model_b": "pair", "constraints_model": "cmodel",
             "constraints_volume": "perday", "constraints_capacity": "capacity", "constraints_reviewer": "reviewer",
             "constraints_per_class": "capclass", "constraints_max_risk": "maxrisk", "constraints_confidence": "sure",
             "constraints_v_ok": "vok", "constraints_v_bad": "vbad", "constraints_cost": "vconfirm",
             "reviewers_rate_low": "rvrate1", "reviewers_acc_low": "rvacc1", "reviewers_rate_high": "rvrate2",
             "reviewers_acc_high": "rvacc2", "reviewers_v_wrong": "rvwrong",
             "cost_matrix_model": "mmodel", "cost_matrix_rule": "mrule", "home_volume_input": "volume",
             "home_period_input": "per"}


@pytest.mark.parametrize("page", sorted(CHOICES))
def test_each_page_choice_is_in_the_link_and_a_fresh_session_shows_the_same_page(page):
    at = start(page, src="sample:breast_cancer")
    before = shown(at)
    for kind, key, value in CHOICES[page]:
        assert getattr(at, kind)(key=key).value != value, f"{key} already shows {value!r}: the test would prove nothing"
        act(at, kind, key, value)
        assert getattr(at, kind)(key=key).value == value
        assert QUERY_KEY[key] in at.query_params, key
    assert shown(at) != before
    fresh = same_page_from_the_link(at, page)
    for kind, key, value in CHOICES[page]:
        assert getattr(fresh, kind)(key=key).value == value, key
    # And it stays: two other pages, then back.
    go(fresh, "runs")
    go(fresh, "value" if page != "value" else "voc")
    go(fresh, page)
    for kind, key, value in CHOICES[page]:
        assert getattr(fresh, kind)(key=key).value == value, key


def test_the_voc_range_table_is_in_the_link():
    at = start("voc", src="sample:breast_cancer")
    at.session_state[editor_key("voc_area_ranges", at.session_state["settings"].voc_areas)] = {
        "edited_rows": {0: {"to": 0.5}}, "added_rows": [{"from": 4.0}, {}], "deleted_rows": [1]
    }
    at.run()
    clean(at)
    assert at.session_state["settings"].voc_areas == ((0.0, 0.5), (4.0, None), (None, None))
    assert json.loads(at.query_params["areas"]) == [[0.0, 0.5], [4.0, None], [None, None]]
    summary = next(d.value for d in at.dataframe if "omega_sup" in d.value.columns)
    assert {"area ω∈[0, 0.5]", "area ω∈[4, ∞]"} <= set(summary.columns)
    same_page_from_the_link(at, "voc")


def test_the_compare_pair_in_a_link_names_models_safely():
    pair = json.dumps(["svm_rbf", "logreg"])
    at = start("compare", src="sample:breast_cancer", pair=pair)
    assert (at.selectbox(key="compare_model_a").value, at.selectbox(key="compare_model_b").value) == (
        "svm_rbf", "logreg")
    assert json.loads(at.query_params["pair"]) == ["svm_rbf", "logreg"]
    # Back to the pair the page opens on (the recommended model and its closest rival): the default, left out
    # of the link.
    opened = start("compare", src="sample:breast_cancer")
    default = (opened.selectbox(key="compare_model_a").value, opened.selectbox(key="compare_model_b").value)
    assert default[0] == vc.recommend(vc.Pipeline(vc.load_runs(SAMPLES / "breast_cancer").models),
                                      vc.UseCase(1, 0, -4)).model
    act(at, "selectbox", "compare_model_a", default[0])
    act(at, "selectbox", "compare_model_b", default[1])
    assert "pair" not in at.query_params and at.session_state["settings"].compare_pair is None


def test_the_start_page_weighs_every_rule_whatever_rule_the_other_pages_show():
    at = start("home", src="sample:breast_cancer")
    before = ({m.label: m.value for m in at.metric}, at.subheader[0].value)
    go(at, "value")
    at.radio(key="value_policy_kind").set_value("class_thresholds").run()
    go(at, "home")
    assert ({m.label: m.value for m in at.metric}, at.subheader[0].value) == before  # one recommendation
    assert at.query_params["rule"] == "class_thresholds"  # and the pages' rule is kept


def test_a_page_model_follows_the_best_until_the_user_picks_one():
    at = start("value", src="sample:digits", vw="-1")
    best = at.selectbox(key="value_hist_model").value
    assert at.session_state["settings"].value_hist_model is None and "hist" not in at.query_params
    at.sidebar.number_input(key="sidebar_v_wrong_input").set_value(-30.0).run()
    clean(at)
    new_best = next(m.value for m in at.metric if m.label in ("Best model", "Highest on these items"))
    assert at.selectbox(key="value_hist_model").value == new_best.replace("\\_", "_")
    assert new_best.replace("\\_", "_") != best, "pick values where the best model changes"
    other = next(o for o in at.selectbox(key="value_hist_model").options if o != new_best.replace("\\_", "_"))
    act(at, "selectbox", "value_hist_model", other)
    assert at.query_params["hist"] == other
    at.sidebar.number_input(key="sidebar_v_wrong_input").set_value(-1.0).run()
    clean(at)
    assert at.selectbox(key="value_hist_model").value == other  # picked: it stays


def test_the_two_tier_values_follow_the_three_values_until_changed():
    at = start("constraints", src="sample:breast_cancer", vc="2")
    assert at.number_input(key="constraints_v_ok").value == 2.0
    assert "vok" not in at.query_params
    at.sidebar.number_input(key="sidebar_v_correct_input").set_value(3.0).run()
    clean(at)
    assert at.number_input(key="constraints_v_ok").value == 3.0
    assert at.session_state["settings"].constraints_v_ok is None


def test_the_reviewers_mistake_follows_the_wrong_answer_until_changed():
    at = start("constraints", src="sample:breast_cancer", vw="-3")
    assert at.number_input(key="reviewers_v_wrong").value == -3.0 and "rvwrong" not in at.query_params
    at.sidebar.number_input(key="sidebar_v_wrong_input").set_value(-5.0).run()
    clean(at)
    assert at.number_input(key="reviewers_v_wrong").value == -5.0
    assert at.session_state["settings"].reviewers_v_wrong is None


def test_a_link_with_hostile_reviewer_values_says_so_and_the_panel_still_answers():
    at = start("constraints", src="sample:breast_cancer", rvrate1="nan", rvacc1="2", rvrate2="1" * 50_000,
               rvwrong="<b>x</b>")
    sidebar = "\n".join(w.value for w in at.sidebar.warning)
    for key in ("rvrate1=", "rvacc1=", "rvrate2=", "rvwrong="):
        assert key in sidebar, key
    assert at.number_input(key="reviewers_rate_low").value == Settings().reviewers_rate_low
    assert at.number_input(key="reviewers_acc_low").value == Settings().reviewers_acc_low
    assert at.number_input(key="reviewers_rate_high").value == Settings().reviewers_rate_high
    assert not {"rvrate1", "rvacc1", "rvrate2", "rvwrong"} & set(at.query_params)
    assert any("For these reviewers the best rule is" in m.value for m in at.markdown)
    # shares in range but in the wrong order: the panel says so in words, no traceback
    at = start("constraints", src="sample:breast_cancer", rvrate1="0.5", rvrate2="0.2")
    assert any("must be larger than the first" in i.value for i in at.info)


def test_a_link_with_bad_page_choices_says_so_and_uses_the_defaults():
    at = start("constraints", src="sample:breast_cancer", sure="0.42", maxrisk="7", per="fortnight",
               cmodel="ghost")
    sidebar = "\n".join(w.value for w in at.sidebar.warning)
    assert "sure=" in sidebar and "maxrisk=" in sidebar and "per=" in sidebar
    assert at.select_slider(key="constraints_confidence").value == Settings().constraints_confidence
    assert at.select_slider(key="constraints_max_risk").value == Settings().constraints_max_risk
    recommended = vc.recommend(vc.Pipeline(vc.load_runs(SAMPLES / "breast_cancer").models), vc.UseCase(1, 0, -4))
    assert at.selectbox(key="constraints_model").value == recommended.model
    assert "cmodel" not in at.query_params  # a model that is not loaded: the recommended one is shown, and kept


def test_a_linked_error_rate_between_two_stops_is_shown_as_it_is_in_percent():
    at = start("constraints", src="sample:breast_cancer", maxrisk="0.0123")
    risk = at.select_slider(key="constraints_max_risk")
    assert risk.value == 0.0123 and at.query_params["maxrisk"] in ("0.0123", ["0.0123"])  # not moved to a stop
    # the stops read as percentages, every half percent to 30%, the linked rate between its neighbours
    assert risk.options[:5] == ["0.0%", "0.5%", "1.0%", "1.2%", "1.5%"] and risk.options[-1] == "30.0%"
    assert len(risk.options) == 62


def test_the_cost_matrix_class_set_and_awkward_model_names_travel_in_the_link(tmp_path):
    import shutil

    from helpers.app_state import SAMPLES

    folder = tmp_path / "runs"
    folder.mkdir()
    names = {"digits": "digits & co #1", "breast_cancer": "bc=50% ü?x"}  # URL characters in model names
    for sample, name in names.items():
        shutil.copy(SAMPLES / sample / "logreg.csv", folder / f"{name}.csv")
        shutil.copy(SAMPLES / sample / "mlp.csv", folder / f"{name} mlp.csv")
    at = start("cost_matrix", src=f"folder:{folder}")
    assert len(at.selectbox(key="cost_matrix_classes").options) == 2
    assert at.selectbox(key="cost_matrix_classes").index == 0 and "mclasses" not in at.query_params
    # AppTest cannot pick an option whose label is not its value: the link picks the other class set.
    second = next(run.classes for run in vc.load_runs(folder).models.values() if "benign" not in run.classes)
    at = start("cost_matrix", src=f"folder:{folder}", mclasses=json.dumps(list(second)))
    assert at.selectbox(key="cost_matrix_classes").index == 1
    assert "→ 9" in at.dataframe[0].value.columns and "→ malignant" not in at.dataframe[0].value.columns
    model = at.selectbox(key="cost_matrix_model").value
    other = next(o for o in at.selectbox(key="cost_matrix_model").options if o != model)
    act(at, "selectbox", "cost_matrix_model", other)
    assert other in names.values() or other.removesuffix(" mlp") in names.values()
    assert at.query_params["mmodel"] == other and json.loads(at.query_params["mclasses"]) == list(second)
    fresh = same_page_from_the_link(at, "cost_matrix")
    assert fresh.selectbox(key="cost_matrix_classes").index == 1
    assert fresh.selectbox(key="cost_matrix_model").value == other
