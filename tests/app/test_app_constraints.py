"""The "Capacity & guarantees" page, driven through the whole app with AppTest:
its sentences must carry the figures valuecore computes, and its JSON must load."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dashboard.safetext import md_text
from streamlit.testing.v1 import AppTest

import valuecore as vc
from helpers.app import APP, ROOT, _money, _per_day, capacity_page

DIGITS = ROOT / "sample_runs" / "digits"


@pytest.fixture(scope="module")
def page():
    return capacity_page()


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def _charts(at) -> int:
    return sum(1 for e in at.main if getattr(e, "type", None) == "vega_lite_chart")


def test_the_page_answers_in_pm_words_with_valuecore_figures(page):
    page.selectbox(key="constraints_model").set_value("naive_bayes").run()  # a model the team's capacity binds
    page.toggle(key="constraints_per_class").set_value(False).run()  # its recommended rule is per class
    text = _markdown(page)
    assert "Your team can review **30 items a day**" in text
    assert "one more reviewer (10 reviews a day) adds" in text
    assert _charts(page) == 5  # capacity, certified risk, two tiers, shortlist, reviewers
    model = page.selectbox(key="constraints_model").value
    run = vc.load_runs([str(DIGITS)]).models[model]
    use_case = vc.UseCase(1, 0, -4)
    tuned = vc.constraints.fit_capacity(vc.presort(run.splits["val"]), use_case, max_handoff_rate=30 / 1000)
    per_day = vc.evaluate(tuned.policy, run.splits["test"], use_case).value_per_item * 1000
    written_text = re.search(r"best rule \*\*threshold ([\d.]+)\*\*", text).group(1)
    written = float(written_text)
    confidence = run.splits["val"].confidence
    assert np.array_equal(confidence >= written, confidence >= tuned.policy.threshold)  # the same decisions
    shown = _money(text, f"best rule **threshold {written_text}")
    assert shown == _per_day(per_day)
    # One more reviewer is judged where the rules are chosen (the tuning split), as the curve and the slot value are.
    more = vc.constraints.fit_capacity(vc.presort(run.splits["val"]), use_case, max_handoff_rate=40 / 1000)
    n_tuning = run.splits["val"].total_weight
    extra = (more.value_total - tuned.value_total) / n_tuning * 1000
    assert extra > 0.005 and _money(text, "adds ") == _per_day(extra)
    limit = (tuned.unconstrained_value_total - tuned.value_total) / n_tuning * 1000
    assert _money(text, "lifting the limit altogether would add ") == _per_day(limit)


def test_a_large_team_is_not_the_bottleneck_and_a_zero_risk_cannot_be_promised(page):
    page.number_input(key="constraints_capacity").set_value(1000.0).run()
    page.select_slider(key="constraints_max_risk").set_value(0.0).run()
    assert not page.exception, [e.value for e in page.exception]
    text = _markdown(page)
    assert "The team is not the bottleneck" in text
    assert "Nothing can be guaranteed" in text and "hand every item to people" in text


def test_the_two_tier_section_answers_and_offers_the_policy_json(page):
    page.number_input(key="constraints_cost").set_value(0.5).run()
    assert not page.exception
    (button,) = [e for e in page.main if getattr(e, "type", None) == "download_button"]
    text = _markdown(page)
    assert "ask a person to confirm from" in text or "does not pay" in text
    assert button.proto.label == "Download this two-tier policy (JSON)"


def test_per_class_capacity_renders(page):
    page.toggle(key="constraints_per_class").set_value(True).run()
    assert not page.exception, [e.value for e in page.exception]
    assert md_text("per-class thresholds (") in _markdown(page)  # escaped: class names are text


def test_a_weighted_run_gets_no_silent_certificate():
    """Weights that may not be independent copies: the page says why there is no guarantee, and a box
    states what the weights mean (issue 19, item 4d)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(9)
    n = 300
    conf = rng.uniform(0.5, 1, n).round(3)
    frame = pd.DataFrame({"y_pred": "a", "confidence": conf, "y_true": np.where(rng.uniform(size=n) < conf, "a", "b"),
                          "weight": rng.integers(1, 3, n), "split": np.where(np.arange(n) < 150, "val", "test")})
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["src"] = "upload"
    at.run()
    at.sidebar.get("file_uploader")[0].set_value([("weighted.csv", frame.to_csv(index=False).encode(), "text/csv")])
    at.run()
    at.switch_page("pages/constraints.py").run()
    assert not at.exception, [e.value for e in at.exception]
    warnings = "\n".join(w.value for w in at.warning)
    assert "No guaranteed error rate" in warnings and "weights other than 1" in warnings
    at.checkbox(key="constraints_weights_are_copies").check().run()
    assert not at.exception
    assert "No guaranteed error rate" not in "\n".join(w.value for w in at.warning)
    assert any("each weight counts as that many independent items" in c.value for c in at.caption)


def test_the_shortlist_section_answers_for_both_list_rules(page):
    page.number_input(key="constraints_list_in").set_value(0.6).run()
    assert not page.exception, [e.value for e in page.exception]
    text = _markdown(page)
    assert "hand off with the 2 likeliest classes" in text or "A shortlist does not pay" in text
    page.radio(key="constraints_list_rule").set_value("cumulative").run()
    assert not page.exception, [e.value for e in page.exception]
    text = _markdown(page)
    assert "add up to" in text or "A shortlist does not pay" in text


def test_the_shortlist_inputs_are_kept_by_a_link():
    # issue 35: "The page's own inputs are not kept by a link or the export."
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page("pages/constraints.py").run()
    at.number_input(key="constraints_list_size").set_value(3).run()
    at.number_input(key="constraints_list_in").set_value(0.7).run()
    at.radio(key="constraints_list_rule").set_value("cumulative").run()
    assert not at.exception, [e.value for e in at.exception]
    assert (at.query_params["listk"], at.query_params["listin"], at.query_params["listrule"]) == (
        "3", "0.7", "cumulative")
    assert "listout" not in at.query_params  # still following the three values
    again = AppTest.from_file(APP, default_timeout=90)
    for key in ("listk", "listin", "listrule"):
        again.query_params[key] = at.query_params[key]
    again.run()
    again.switch_page("pages/constraints.py").run()
    assert again.number_input(key="constraints_list_size").value == 3
    assert again.number_input(key="constraints_list_in").value == 0.7
    assert again.radio(key="constraints_list_rule").value == "cumulative"
    assert "add up to" in _markdown(again) or "A shortlist does not pay" in _markdown(again)


def test_the_money_boxes_read_as_the_sidebar_does_and_name_the_currency(page):
    # "1.00", "0.25", "-4.00" with no currency under a sidebar that says "Correct answer ($)" and "1"
    keys = ("constraints_v_ok", "constraints_v_bad", "constraints_cost", "constraints_list_in",
            "constraints_list_out", "reviewers_v_wrong")
    for key in keys:
        box = page.number_input(key=key)
        assert box.proto.format == "%g", key
        assert "$" in box.proto.help, key
