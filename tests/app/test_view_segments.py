"""The Segments view model (dashboard.views.segments) and its chart, without Streamlit: every figure is
valuecore's segment fit and evaluation on the diabetes sample's real segments (sex, age band)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import valuecore as vc
from valuecore.chartspecs import segment_chart_rows as segment_rows, segments_spec
from vegalite import valid
from dashboard.safetext import md_text
from dashboard import segmentfiles
from dashboard.views import segments

DIABETES = Path(__file__).resolve().parents[2] / "sample_runs" / "diabetes"
USE_CASE = vc.UseCase(1, 0, -4)


def _split(model: str, split: str, column: str):
    """The model's predictions on a split and that split's segment labels, read from the file as written."""
    run = vc.load_runs([str(DIABETES)]).models[model]
    frame = pd.read_csv(DIABETES / f"{model}.csv", dtype=str, keep_default_na=False)
    return run.splits[split], frame.loc[frame["split"] == split, column].to_numpy()


def _fitted(model="logreg", column="sex", caps=None):
    tuning, tune_labels = _split(model, "val", column)
    evaluated, eval_labels = _split(model, "test", column)
    fit = vc.constraints.fit_segments(tuning, tune_labels, USE_CASE, caps=caps, column=column)
    return fit, vc.constraints.evaluate_segments(fit.policy, evaluated, eval_labels, USE_CASE)


def test_the_table_holds_each_segments_figures_as_the_core_computes_them():
    fit, evaluation = _fitted()
    numbers = segments.segment_numbers(fit, evaluation)
    assert numbers["segment"].tolist() == ["1", "2"]
    assert numbers["value_per_item"].tolist() == [r.value_per_item for r in evaluation.segments]
    table = segments.segment_table(evaluation, None, "$")
    assert tuple(table.columns) == segments.TABLE_COLUMNS
    # The CLI's words (report --segment), cell for cell, and a note on the small segments.
    words = vc.wording.segment_rows(evaluation, "$")
    assert [tuple(row[:-1]) for row in table.itertuples(index=False)] == words
    for row, standing in zip(table.itertuples(index=False), evaluation.segments):
        assert row.Segment == standing.segment
        assert row.Note == ("too few items to say much" if standing.too_small else "")
    # The thresholds are the tuned ones: each segment's own best on 'val' without caps.
    tuning, labels = _split("logreg", "val", "sex")
    for segment, threshold in fit.policy.thresholds:
        own = vc.fit_policy("threshold", vc.presort(tuning.subset(labels == segment)), USE_CASE).threshold
        assert threshold == own


def test_without_a_cap_the_page_says_so_and_with_one_it_says_its_cost():
    fit, _ = _fitted()
    assert segments.cost_sentence(fit, "$").startswith(vc.wording.segment_cap_sentence(fit, "$") + " Move a cap")
    tight = vc.constraints.SegmentCaps(handoff_gap=0.02, error_gap=0.0)
    capped, _ = _fitted(caps=tight)
    assert capped.feasible and capped.cap_cost_per_item > 0
    sentence = segments.cost_sentence(capped, "$")
    assert sentence == f"**{vc.wording.segment_cap_sentence(capped, '$')}**"
    assert sentence.startswith(f"**The caps cost {vc.wording.amount(capped.cap_cost_per_item, '$')} per item")


def test_a_free_cap_that_moves_the_thresholds_is_not_said_to_be_held_already():
    # logreg by sex: its own best thresholds are 13.4% apart in hand-off rate on 'val'; others within 5% earn as
    # much there, so the cap is free, but the thresholds move.
    fit, _ = _fitted(caps=vc.constraints.SegmentCaps(handoff_gap=0.05))
    assert fit.cap_cost_per_item == 0 and fit.policy.thresholds != fit.unconstrained.thresholds
    assert fit.unconstrained_value_total == fit.value_total
    sentence = segments.cost_sentence(fit, "$")
    assert sentence.startswith("The caps cost nothing on the tuning split: each segment's own best thresholds break")
    assert "already hold" not in sentence
    free, _ = _fitted(caps=vc.constraints.SegmentCaps(handoff_gap=0.5))  # held by the best thresholds themselves
    assert free.policy.thresholds == free.unconstrained.thresholds
    assert segments.cost_sentence(free, "$") == vc.wording.segment_cap_sentence(free, "$")


def test_the_gaps_on_the_tuning_split_keep_within_the_caps_shown():
    caps = vc.constraints.SegmentCaps(handoff_gap=0.05, value_gap=0.1)
    fit, evaluation = _fitted(column="age_band", caps=caps)
    gaps = segments.gaps_table(fit, evaluation, "val", "test", "$")
    assert gaps.iloc[0].tolist() == ["Cap", "5.0%", "no cap", "$0.10"]
    assert gaps.iloc[1, 0] == "Gap on val (tuning)" and gaps.iloc[2, 0] == "Gap on test"
    assert fit.evaluation.handoff_gap <= 0.05 + 1e-9 and fit.evaluation.value_gap <= 0.1 + 1e-9
    assert gaps.iloc[1, 1] == vc.wording.percent(fit.evaluation.handoff_gap)


def test_caps_of_zero_hand_everything_off_and_cost_what_the_segments_earned():
    # Equal values, hand-off and error rates at once: only handing every item off holds them all.
    fit, _ = _fitted(caps=vc.constraints.SegmentCaps(value_gap=0.0, handoff_gap=0.0, error_gap=0.0))
    assert fit.feasible and fit.policy.thresholds == (("1", None), ("2", None))
    _, evaluation = _fitted(caps=fit.caps)
    table = segments.segment_table(evaluation, None, "$")
    assert table["Rule"].tolist() == ["always hand off"] * 2 and table["Error rate"].tolist() == ["–"] * 2
    assert fit.cap_cost_per_item == pytest.approx(fit.unconstrained_value_total / fit.n_items)
    # Caps no choice holds (possible with values per segment) are said plainly, not costed.
    assert segments.cost_sentence(replace(fit, feasible=False), "$").startswith(
        "No choice of thresholds holds the caps")


def test_small_segments_are_named_in_a_warning():
    fit, evaluation = _fitted()
    warnings = segments.too_small_warnings(fit, evaluation, "val", "test")
    small_val = [r for r in fit.evaluation.segments if r.too_small]
    assert small_val, "the diabetes segments are small on purpose"
    assert warnings[0].startswith("On 'val': ")
    assert warnings[0] == f"On 'val': {md_text(vc.wording.segments_too_small(fit.evaluation.segments))}."
    assert all(f"{r.segment!r} ({vc.wording.count(r.n_items)} items, {vc.wording.count(r.n_acted)} acted on)"
               in warnings[0].replace("\\", "") for r in small_val)
    # One sentence per split, none for a split without small segments; one split said once.
    assert len(segments.too_small_warnings(fit, fit.evaluation, "val", "val")) == 1


def test_the_cap_sliders_start_with_no_cap_and_keep_a_setting_from_a_link():
    options = segments.cap_options("handoff_gap", USE_CASE, None)
    assert options[0] == segments.NO_CAP and options[1:4] == [0.0, 0.01, 0.02] and options[-1] == 0.5
    assert 0.123 in segments.cap_options("error_gap", USE_CASE, 0.123)
    value = segments.cap_options("value_gap", USE_CASE, None)  # spread 5: up to 2.5 in steps of 0.05
    assert value[1:4] == [0.0, 0.05, 0.1] and value[-1] == 2.5
    assert segments.cap_text("value_gap", 0.05, "€") == vc.wording.money(0.05, "€")
    assert segments.cap_text("handoff_gap", 0.01) == "1.0%" and segments.cap_text("error_gap", 0.045) == "4.5%"
    assert segments.cap_text("error_gap", segments.NO_CAP) == "no cap"
    extreme = segments.cap_options("value_gap", vc.UseCase(1e308, 0, -1e308), None)
    assert all(math.isfinite(stop) for stop in extreme[1:]) and extreme[-1] > 1e307
    caps = segments.caps_of({"handoff_gap": segments.NO_CAP, "error_gap": 0.03, "value_gap": segments.NO_CAP})
    assert caps.as_dict() == {"error_gap": 0.03}


def test_the_chart_spec_draws_every_segment_in_three_panels_and_validates():
    fit, evaluation = _fitted(column="age_band")
    numbers = segments.segment_numbers(fit, evaluation)
    rows = segment_rows(numbers, "$")
    assert len(rows) == 3 * len(numbers)
    value_rows = [r for r in rows if r["measure"] == "Value per item ($)"]
    assert [r["value"] for r in value_rows] == pytest.approx(numbers["value_per_item"].tolist())
    assert all(r["low"] <= r["value"] <= r["high"] for r in value_rows)
    handoffs = [r for r in rows if r["measure"] == "Hand-off rate (%)"]  # in percent, as the table and tooltip
    assert [r["value"] for r in handoffs] == pytest.approx((100 * numbers["handoff_rate"]).tolist())
    assert [r["shown"] for r in handoffs] == [vc.wording.percent(x) for x in numbers["handoff_rate"]]
    errors = [r for r in rows if r["measure"] == "Error rate (%)" and r["value"] is not None]
    assert errors and all(r["low"] == r["value"] <= r["high"] for r in errors)  # the certified bound, in percent
    assert [r["high"] for r in errors] == pytest.approx(
        [100 * b for b, e in zip(numbers["error_bound"], numbers["error_rate"]) if not math.isnan(e)])
    spec = segments_spec(numbers, "$")
    assert spec["facet"]["sort"] == ["Hand-off rate (%)", "Error rate (%)", "Value per item ($)"]
    valid(spec)  # a valid Vega-Lite spec


def test_a_segment_acting_on_nothing_has_no_error_bar():
    numbers = pd.DataFrame([{"segment": "a", "threshold": math.nan, "items": 40.0, "handoff_rate": 1.0,
                             "error_rate": math.nan, "error_bound": math.nan, "value_per_item": 0.0, "low": 0.0,
                             "high": 0.0, "too_small": False}])
    errors = [r for r in segment_rows(numbers) if r["measure"] == "Error rate (%)"]
    assert errors == [{"segment": "a", "measure": "Error rate (%)", "value": None, "low": None, "high": None,
                       "shown": "–"}]
    assert np.isnan(numbers.loc[0, "error_rate"])


@pytest.mark.parametrize("column,caps", [("sex", {}), ("age_band", {"handoff_gap": 0.05, "value_gap": 0.1})])
def test_the_page_and_report_segment_write_the_same_thresholds_and_cost(tmp_path, capsys, column, caps):
    """One surface more that agrees: the view's policy is the one `report --segment ... --json` stores."""
    import json

    from valuecore.cli import main
    from view_selection import selection

    flags = {"handoff_gap": "--cap-handoff-gap", "error_gap": "--cap-error-gap", "value_gap": "--cap-value-gap"}
    out = tmp_path / "policy.json"
    args = [str(DIABETES), "--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-4", "--segment", column,
            "--policy", "segment_thresholds", "--json", str(out)]
    assert main(["report", *args, *(a for k, v in caps.items() for a in (flags[k], repr(v)))]) == 0
    stored = {m["model"]: m["segments"] for m in json.loads(out.read_text())["models"]}
    capsys.readouterr()
    chosen, ws = selection("diabetes")
    files = segmentfiles.source_files("sample:diabetes", {})
    for model in ("logreg", "svm_rbf"):
        page = segments.build(chosen, ws, model=model, column=column, caps=vc.constraints.SegmentCaps(**caps),
                              files=files)
        assert not page.stop, page.stop
        assert dict(page.fit.policy.thresholds) == stored[model]["thresholds"]
        assert page.fit.cap_cost_per_item == pytest.approx(stored[model]["cap_cost_per_item"] or 0.0, abs=1e-12)


def test_the_segments_chart_fits_the_page_at_800_px():
    """At 800 px wide the main column holds about 468 px (800 − a 300 px sidebar − padding). Three panels of 200 px
    side by side and an 85-character title ran past its edge, cutting off the value per item panel."""
    numbers = pd.DataFrame([{"segment": "north-east", "threshold": 0.7, "items": 40.0, "handoff_rate": 0.2,
                             "error_rate": 0.05, "error_bound": 0.1, "value_per_item": 0.5, "low": 0.3,
                             "high": 0.6, "too_small": False}])
    spec = segments_spec(numbers, "$")
    room, label = 468, 80  # px: the page's column; the segment names and an axis's labels beside the panels
    panels_in_a_row = spec.get("columns", 3)
    assert panels_in_a_row * (spec["spec"]["width"] + label) <= room
    title = spec["title"] if isinstance(spec["title"], dict) else {"text": spec["title"]}
    assert all(len(line) * 7 <= room for line in (title["text"], title.get("subtitle", "")))  # ~7 px a character
    valid(spec)
