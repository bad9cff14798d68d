"""The landing page ("Start here: the verdict"), driven through Streamlit's AppTest.

The page must answer "which model, at what threshold, worth how much" on the
sample runs; say ties and degenerate values in plain words; and never show
None or nan.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

import valuecore as vc
from dashboard.safetext import md_text as as_text

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SAMPLES = ROOT / "sample_runs"
BAD_TEXT = re.compile(r"\b(None|nan|NaN|inf)\b")


def start(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    return at


def page_text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [s.value for s in at.subheader]
    parts += [i.value for i in at.info] + [w.value for w in at.warning]
    parts += [f"{m.label}: {m.value}" for m in at.main.get("metric")]
    return "\n".join(parts)


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def tiles(at: AppTest) -> dict:
    return {m.label: m.value for m in at.main.get("metric")}


def assert_clean(at: AppTest) -> str:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    text = unescape(page_text(at))
    assert not BAD_TEXT.search(text), BAD_TEXT.search(text)
    for frame in at.dataframe:
        assert not frame.value.isna().any().any()
        assert not frame.value.astype(str).apply(lambda c: c.str.contains(BAD_TEXT)).any().any()
    return text


def recommended(folder: str, values) -> vc.recommendation.Recommendation:
    report = vc.load_runs([str(SAMPLES / folder)])
    return vc.recommend(vc.Pipeline(report.models), values)


def shown_confidences(rec: vc.recommendation.Recommendation, folder: str):
    """The recommended model's confidences on the data the landing page shows (tuning 'val', evaluated 'test')."""
    splits = vc.load_runs([str(SAMPLES / folder)]).models[rec.model].splits
    return np.concatenate([splits[s].confidence for s in ("val", "test") if s in splits])


def test_the_landing_page_is_the_recommendation_with_its_numbers():
    at = start(src="sample:digits", vc="1", va="0", vw="-1")
    text = assert_clean(at)
    assert at.title[0].value == "Which model should we deploy?"
    # The numbers are the core's recommendation over every rule, formatted by the one wording module.
    rec = recommended("digits", vc.UseCase(1, 0, -1))
    assert rec.model == "svm_rbf"
    assert unescape(at.subheader[0].value) == vc.wording.recommendation_headline(rec, shown_confidences(rec, "digits"))
    shown = tiles(at)
    assert shown["Acted on"] == vc.wording.percent(rec.coverage)
    assert shown["Value per item"] == vc.wording.money(rec.per_item, "$")
    assert shown["Value per month"] == vc.wording.projected(rec.per_item * 10_000, "$")
    assert shown["No model, per item"] == vc.wording.money(0.0, "$")
    assert vc.wording.recommendation_reason(rec, "$") in text
    assert "more than handing every item to a person" in text
    # The table holds every (model, rule) weighed, the recommended one marked, and the no-model row. It is
    # drawn only while its section is open.
    assert not at.dataframe
    at.session_state["home_candidates"] = True
    at.run()
    table = at.dataframe[0].value
    assert len(table) == len(rec.candidates) + 1 and table["Model"].iloc[-1].startswith("no model")
    marked = table[table["Against the best here"] == "recommended"]
    assert list(marked["Model"]) == [rec.model] and list(marked["Rule"]) == [vc.wording.rule_name(rec.kind)]


def test_one_threshold_reads_the_same_on_the_tile_in_the_sentence_and_in_the_value_and_export_tables():
    # digits at a wrong answer of -20: mlp with one threshold, 0.946393. The tile, the sentence, the value
    # table and the export table write it with the digits that tell its decision apart on the data shown
    # (tuning and evaluated splits); the tile's help and the exported JSON have every digit.
    at = start(src="sample:digits", vc="1", va="0", vw="-20")
    text = assert_clean(at)
    shown = tiles(at)["Threshold"]
    report = vc.load_runs([str(SAMPLES / "digits")])
    exact = vc.fit_policy("threshold", vc.presort(report.models["mlp"].splits["val"]), vc.UseCase(1, 0, -20))
    for split in ("val", "test"):  # the shown text acts on exactly the items the exact threshold acts on
        confidence = report.models["mlp"].splits[split].confidence
        assert np.array_equal(confidence >= float(shown), confidence >= exact.threshold), split
    assert len(shown.split(".")[1]) >= 3 and len(shown.replace(".", "").lstrip("0")) <= 6
    help_text = next(m.help for m in at.main.get("metric") if m.label == "Threshold")
    assert vc.wording.threshold(exact.threshold) in help_text
    assert f"Deploy mlp with one threshold (act when confidence ≥ {shown})." == unescape(at.subheader[0].value)
    assert "mlp with one threshold earns" in text
    at.switch_page("pages/value.py").run()
    assert not at.exception
    value_table = at.dataframe[0].value.set_index("Model")
    assert value_table.loc["mlp", "Threshold"] == shown
    at.switch_page("pages/export.py").run()
    assert not at.exception
    export_table = at.dataframe[0].value.set_index("Model")
    assert export_table.loc["mlp", "Threshold"] == shown
    assert f'"threshold": {json.dumps(exact.threshold)}' in at.code[0].value  # people copy the JSON


def test_the_expected_volume_turns_value_per_item_into_value_per_period():
    at = start(src="sample:digits")
    per_item = tiles(at)["Value per item"]
    at.number_input(key="home_volume_input").set_value(250).run()
    at.selectbox(key="home_period_input").set_value("day").run()
    assert_clean(at)
    amount = float(per_item.replace("$", "").replace(",", ""))
    shown = tiles(at)["Value per day"]
    # 250 items per day: the tile is the per-item value times 250, to the cent of the rounded value.
    assert abs(float(shown.replace("$", "").replace(",", "")) - 250 * amount) <= 250 * 0.005 + 1e-9


def test_a_tie_names_one_model_what_separates_it_and_how_many_items_would():
    # digits at ω = 5: one threshold earns a little more than acting on every item, within noise.
    at = start(src="sample:digits", vc="1", va="0", vw="-5")
    text = assert_clean(at)
    rec = recommended("digits", vc.UseCase(1, 0, -5))
    headline = unescape(at.subheader[0].value)
    assert headline.startswith(f"Deploy {rec.model} with") and " or " not in headline
    assert rec.choice in ("highest", "lower_bound") and ("is level within noise" in text or "90% sure" in text)
    assert re.search(r"about [\d,]+ labelled items in all would tell them apart", text)


def test_at_a_wrong_answer_of_minus_1000_the_page_says_not_yet_and_no_loser_is_level():
    # The example: at a wrong answer of -1000, 450 evaluated items cannot show that any rule earns; mlp
    # with one threshold (no wrong answer seen) is the most promising, and the rules losing money on these items
    # are clearly behind, never "level".
    at = start(src="sample:digits", vc="1", va="0", vw="-1000")
    text = assert_clean(at)
    assert unescape(at.subheader[0].value).startswith("Not yet: hand every item to a person")
    assert "No model is shown to earn more" in text and "labelled items in all" in text
    assert tiles(at)["Acted on"] == "0.0%"
    at.session_state["home_candidates"] = True  # open the section with the table
    table = at.run().dataframe[0].value
    says = table["Against the best here"]
    losing = table[table["Value per item"].str.startswith("-")]
    assert not losing.empty and losing["Against the best here"].str.endswith("(clearly behind)").all()
    assert not (says == "recommended").any()
    promising = table[says == "most promising"].iloc[0]
    assert promising["Model"] == "mlp" and promising["Rule"] == "one threshold"
    rec = recommended("digits", vc.UseCase(1, 0, -1000))
    assert all(c.gain_low <= 0 for c in rec.candidates)  # none is shown to earn
    assert list(table["Gain, 90% sure"].iloc[:-1]) == [vc.wording.amount(c.gain_low, "$") for c in rec.candidates]


def test_a_value_matrix_in_force_is_shown_and_weighed_with_every_rule():
    # breast_cancer with a missed malignant tumour at -50, set on the Cost matrix page (the example).
    at = start(src="sample:breast_cancer")
    at.switch_page("pages/cost_matrix.py").run()
    editor = at.data_editor[0]
    at.session_state[editor.key] = {"edited_rows": {1: {"→ benign": -50.0}}, "added_rows": [], "deleted_rows": []}
    at.run()
    at.switch_page("pages/home.py").run()
    text = assert_clean(at)
    assert "a wrong answer" not in text and "Per-class values from the Values per class page are in force" in text
    values = at.dataframe[0].value.set_index("True class")
    assert values.loc["malignant", "predicted benign"] == "-$50.00"
    assert values.loc["benign", "predicted malignant"] == "-$4.00"
    matrix = vc.ValueMatrix(("benign", "malignant"), [[1, -4, 0], [-50, 1, 0]])
    rec = recommended("breast_cancer", matrix)
    # 114 evaluated items cannot show a rule earns when a miss costs 50: not yet, every rule weighed
    assert rec.choice == "not_yet" and {"class_thresholds", "expected_value"} <= {c.kind for c in rec.candidates}
    assert unescape(at.subheader[0].value) == vc.wording.recommendation_headline(rec)
    assert tiles(at)["Value per item"] == vc.wording.money(rec.baseline_per_item, "$")


def coin_flip_run(path: Path) -> None:
    """A model whose confidence says nothing about being right: no threshold can make it pay at ω = 20."""
    rng = np.random.default_rng(0)
    n = 400
    confidence, y_true, y_pred = rng.uniform(0.5, 1, n), rng.integers(0, 2, n), rng.integers(0, 2, n)
    proba_1 = np.where(y_pred == 1, confidence, 1 - confidence)
    pd.DataFrame({"split": np.where(np.arange(n) < n // 2, "val", "test"), "y_true": y_true,
                  "proba_0": 1 - proba_1, "proba_1": proba_1}).to_csv(path, index=False)


def test_correct_equal_to_hand_off_is_said_in_plain_words_not_crowned():
    at = start(src="sample:breast_cancer", vc="0", va="0", vw="-1")
    text = assert_clean(at)
    assert unescape(at.subheader[0].value) == "Deploy no model: hand every item to a person."
    assert "no action earns more than handing an item to a person" in text
    assert tiles(at)["Rule"] == "Hand over" and "Best model" not in text


def test_every_model_useless_says_keep_handing_over(tmp_path):
    coin_flip_run(tmp_path / "coin.csv")
    at = start(src=f"folder:{tmp_path}", vc="1", va="0", vw="-20")
    text = assert_clean(at)
    assert unescape(at.subheader[0].value) == "Deploy no model: hand every item to a person."
    assert tiles(at)["Rule"] == "Hand over" and tiles(at)["Acted on"] == "0.0%"
    assert "No model earns more than handing every item to a person" in text


def test_abstaining_pointless_is_explained():
    at = start(src="sample:digits", vc="1", va="-1", vw="-1")
    text = assert_clean(at)
    assert "acting on every item is as good as any threshold" in text


def test_names_from_files_are_shown_as_text(tmp_path):
    frame = pd.read_csv(SAMPLES / "breast_cancer" / "logreg.csv")
    frame.to_csv(tmp_path / "**bold**[x](y).csv", index=False)
    at = start(src=f"folder:{tmp_path}")
    assert not at.exception
    headline = at.subheader[0].value
    assert "\\*\\*bold\\*\\*\\[x\\]\\(y\\)" in headline
    assert as_text("a_b") == "a\\_b"


def test_the_value_page_says_when_per_class_thresholds_overfit():
    at = start(src="sample:digits", vc="1", va="0", vw="-5")
    at.switch_page("pages/value.py").run()
    at.radio(key="value_policy_kind").set_value("class_thresholds").run()
    assert not at.exception
    infos = [unescape(i.value) for i in at.info]
    # The same comparison as the core makes, said by the wording module.
    use_case = vc.UseCase(1, 0, -5)
    report = vc.load_runs([str(SAMPLES / "digits")])
    expected = []
    for model, run in report.models.items():
        tuned = vc.presort(run.splits["val"])
        comparison = vc.recommendation.simpler_rule(vc.fit_policy("class_thresholds", tuned, use_case),
                                     vc.fit_policy("threshold", tuned, use_case), run.splits["test"], use_case)
        if comparison.prefer_simpler:
            expected.append(model)
    assert expected, "the sample runs should show a richer rule that does not pay"
    for model in expected:
        assert any(i.startswith(f"{model}: The richer rule") for i in infos), (model, infos)
    assert any("overfitting" in i or "within noise" in i for i in infos)
    at.radio(key="value_policy_kind").set_value("threshold").run()
    assert not any("richer rule" in unescape(i.value) for i in at.info)


def test_the_landing_page_offers_the_report():
    at = start(src="sample:digits")
    buttons = at.get("download_button")
    assert [b.proto.label for b in buttons] == ["Download report"]


def test_the_glossary_explains_every_technical_name():
    at = start(src="sample:digits")
    at.switch_page("pages/how_value_works.py").run()
    assert not at.exception
    glossary = next(m.value for m in at.markdown if m.value.startswith("- **ω (omega)**"))
    entries = dict(line[4:].split("**: ", 1) for line in glossary.splitlines())
    terms = " ".join(entries)
    for name in ("ω", "VOC", "ECE", vc.wording.BEST_POSSIBLE, "ω_sup", "MCE", "NLL", "threshold",
                 "no-model baseline", "VOC area", "learn-then-test", "dimensionless value", vc.wording.INTERVAL_HEADER):
        assert name in terms, name
    assert min(len(meaning) for meaning in entries.values()) > 40


def test_the_value_page_does_not_crown_a_model_when_none_adds_value():
    at = start(src="sample:breast_cancer", vc="0", va="0", vw="-1")
    at.switch_page("pages/value.py").run()
    assert not at.exception
    shown = tiles(at)
    assert shown["Best model"] == "none"
    text = unescape(page_text(at))
    assert "no model adds value" in text and "brings the most value" not in text
    assert not at.dataframe[0].value.astype(str).apply(lambda c: c.str.contains(BAD_TEXT)).any().any()


def test_the_value_page_says_when_the_best_cannot_be_told_apart():
    at = start(src="sample:digits", vc="1", va="0", vw="-5", rule="threshold")  # a rule chosen: one threshold
    at.switch_page("pages/value.py").run()
    assert not at.exception
    metric = next(m for m in at.main.get("metric") if m.label == "Highest on these items")
    assert unescape(metric.value) == "svm_rbf"  # shown as text (markdown-escaped)
    assert any(unescape(m.value).startswith("**With one threshold:** svm_rbf earns the most on these items;")
               for m in at.markdown)


def test_compare_capacity_and_monitor_open_on_the_recommended_model():
    # digits at a wrong answer of -1000: not yet, mlp the most promising (logreg is next); the pages open on it,
    # they used to open on logreg whatever the first page said.
    at = start(src="sample:digits", vc="1", va="0", vw="-1000")
    assert unescape(at.subheader[0].value).startswith("Not yet")
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    assert (at.selectbox(key="compare_model_a").value, at.selectbox(key="compare_model_b").value) == ("mlp", "logreg")
    at.switch_page("pages/constraints.py").run()
    assert not at.exception
    assert at.selectbox(key="constraints_model").value == "mlp"
    at.switch_page("pages/monitor.py").run()
    assert not at.exception
    assert at.selectbox(key="monitor_bands_model").value == "mlp"
    # Following the default stores nothing: the link follows the recommendation.
    assert at.session_state["settings"].compare_pair is None and at.session_state["settings"].constraints_model is None


def test_a_model_chosen_in_the_link_still_wins_over_the_recommendation():
    at = start(src="sample:digits", vc="1", va="0", vw="-1000", pair='["svm_rbf","naive_bayes"]', cmodel="logreg")
    at.switch_page("pages/compare.py").run()
    assert (at.selectbox(key="compare_model_a").value, at.selectbox(key="compare_model_b").value) == (
        "svm_rbf", "naive_bayes")
    at.switch_page("pages/constraints.py").run()
    assert at.selectbox(key="constraints_model").value == "logreg"
