"""The last new-user walk's open items (issue 33), each checked where the reader meets it.

The layout items (Runs and Values per class at 800 px, the small multiples at 1280 px) are measured in Chromium:
tests/e2e/test_e2e_last_walk.py. The Capacity chart's axis: tests/app/test_chartspecs.py.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import valuecore as vc
from dashboard.views import capacity as capacity_view
from dashboard.views import voc as voc_view
from helpers.app import start as start_app
from view_selection import selection

pytestmark = pytest.mark.heavy  # whole-app runs; the full suite runs them


def start(page: str | None = None, **query: str) -> AppTest:
    at = start_app(page, **{"src": "sample:digits", **query})
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [s.value for s in at.subheader]
    parts += [h.value for h in at.header] + [i.value for i in at.info] + [r.options for r in at.radio]
    return "\n".join(map(str, parts))


def glossary(at: AppTest) -> dict[str, str]:
    listed = next(m.value for m in at.markdown if m.value.startswith("- **ω (omega)**"))
    return dict(line[4:].split("**: ", 1) for line in listed.splitlines())


# ---- 1. what the error-rate guarantee rests on, said once
def test_the_guarantee_rests_on_the_tuning_items_and_both_pages_say_so_in_the_same_words():
    """The glossary said "items the tuning never saw"; Capacity said the tuning items. valuecore's fit_certified
    tests the tuning split itself: the items the certificate counts are the tuning items the chosen threshold
    accepts."""
    chosen, ws = selection("digits")
    risk = capacity_view.risk_view(ws, "svm_rbf", chosen.values, max_risk=0.05, confidence=0.9, volume=1000)
    run = ws.sorted("svm_rbf", ws.tuning_split_for("svm_rbf"))
    accepted = run.predictions.confidence >= risk.result.policy.threshold
    assert risk.result.n_accepted == accepted.sum()  # the certificate's items are the tuning items it acts on
    said = vc.wording.CERTIFIED_ON
    assert "tuning items" in said and "never saw" not in said
    assert said in vc.wording.GLOSSARY["learn-then-test"]
    assert said in capacity_view.RISK_CAPTION
    on_page = start("pages/constraints.py")
    assert any(said in c.value for c in on_page.caption)
    assert not any("never saw" in meaning for meaning in vc.wording.GLOSSARY.values())


# ---- 2. the VOC table's heading and its cell
def test_the_voc_table_s_heading_promises_what_it_shows_and_its_cells_read_with_their_header():
    at = start("pages/voc.py")
    heading = voc_view.AREAS_HEADING
    assert heading in [s.value for s in at.subheader] and "area" not in heading.lower()
    assert any(voc_view.AREAS_DETAILS in c.value for c in at.caption)  # the caption says where the areas are
    assert voc_view.AREAS_DETAILS in [e.label for e in at.expander]
    # A model never below no model: "Worth more than no model up to" + the cell reads as one phrase.
    curve = vc.voc_curve(vc.presort(vc.Predictions.from_top_label(["a"] * 3, [0.9] * 3, ["a"] * 3,
                                                                  classes=["a", "b"])), "oracle")
    assert math.isinf(curve.omega_sup)
    cell = voc_view.voc_summary({"m": curve}, 4.0, []).loc[0, "useful_up_to"]
    assert "never worth less" not in cell and cell.startswith("any ω")


# ---- 3. an outcome's value is money, written as money
def test_an_outcome_s_value_in_the_likely_range_reads_as_money():
    sentence = vc.wording.likely_range_sentence(low=-0.5, high=0.9, n_items=450, n_acted=400, n_worst=3,
                                                worst_value=-10.0, one_more_worst=0.024, currency="$")
    assert "(-$10.00 each)" in sentence and "-$10.0 " not in sentence
    assert vc.wording.money(-10.0, "$") == "-$10.00"


# ---- 4. every page's details are "All columns", and hold every column
@pytest.mark.parametrize("page,label", [("pages/export.py", "All columns (rule, calibration, splits)"),
                                        ("pages/runs.py", "All columns (classes, probabilities, file, hash)")])
def test_the_details_are_all_columns_on_every_page(page, label):
    at = start(page)
    labels = [e.label for e in at.expander]
    assert label in labels and not any(lab.startswith("More columns") for lab in labels)
    details = next(e for e in at.expander if e.label == label)
    shown, inside = at.dataframe[0], details.dataframe[0]
    assert shown.proto.column_order and set(shown.proto.column_order) < set(inside.proto.column_order)
    frame = inside.value.data if hasattr(inside.value, "data") else inside.value
    # Every column of the table; the interval's two ends are its one "95% interval" column.
    assert set(frame.columns) - set(inside.proto.column_order) <= {"ci95_low", "ci95_high"}


# ---- 5. one name for the threshold tuned on the items it is scored on
def test_the_best_possible_curve_has_one_name_on_every_page():
    how = start("pages/how_value_works.py")
    words = glossary(how)
    assert vc.wording.BEST_POSSIBLE in words and "oracle" not in words
    prose = "\n".join(m.value for m in how.markdown if not m.value.startswith("- **ω (omega)**"))
    assert f"**{vc.wording.BEST_POSSIBLE}** curve" in prose and "oracle" not in prose.lower()
    voc = start("pages/voc.py", voc="oracle")
    shown = texts(voc)
    assert vc.wording.BEST_POSSIBLE.capitalize() in shown and "oracle" not in shown.lower()


# ---- 9. the interval's glossary entry is named as the tables' column
def test_the_interval_s_glossary_entry_is_named_as_the_tables_column():
    words = glossary(start("pages/how_value_works.py"))
    named = [term for term in words if vc.wording.INTERVAL_HEADER in term]
    assert named and "likely range" in named[0]
    assert "confidence interval" not in words


# ---- 10. each volume says what it is per, and that the other is another setting
def test_each_volume_says_what_it_is_per_and_that_the_other_page_has_its_own():
    capacity = start("pages/constraints.py")
    volume = capacity.number_input(key="constraints_volume")
    assert volume.label.endswith("per day") and "first page" in volume.help
    home = start()
    expected = home.number_input(key="home_volume_input")
    assert "Capacity & guarantees has its own setting, per day" in expected.help
    assert home.selectbox(key="home_period_input").value == "month"  # the period beside it says what it is per


def test_the_panels_share_their_value_axis_and_keep_every_row():
    """Drawn apart (tests/e2e: as wide as the page), the calibration value panels still share one value axis
    holding 0, and each holds exactly its model's rows."""
    chosen, ws = selection("digits")
    from dashboard.views import calibration as view

    page = view.build(chosen, view.options(chosen), "temperature", 15, "uniform")
    spec = vc.chartspecs.calibration_value_spec(page.value_long, list(chosen.models))
    panels = vc.chartspecs.facet_panels(spec)
    (rows,) = spec["datasets"].values()
    assert [p["title"]["text"] for p in panels] == spec["facet"]["sort"]
    assert sum(len(next(iter(p["datasets"].values()))) for p in panels) == len(rows)
    values = [r["value"] for r in rows]
    domains = {json.dumps(layer["encoding"]["y"]["scale"]["domain"]) for p in panels for layer in p["layer"]
               if "y" in layer["encoding"]}
    assert domains == {json.dumps([min(0.0, *values), max(0.0, *values)])}
    assert np.isfinite(values).all()


def test_a_panel_the_facet_does_not_name_is_drawn_last_not_dropped():
    """Vega's facet drew rows of a value missing from its sort after the named ones; apart, so do the panels."""
    rows = [{"model": m, "value": v} for m, v in (("a", 1.0), ("b", -2.0), ("c", 3.0), ("a", 0.5))]
    spec = {"facet": {"field": "model", "sort": ["b"]}, "datasets": {"rows": rows},
            "spec": {"layer": [{"mark": "line", "encoding": {"y": {"field": "value"}}}]}}
    panels = vc.chartspecs.facet_panels(spec)
    assert [p["title"]["text"] for p in panels] == ["b", "a", "c"]
    assert [len(next(iter(p["datasets"].values()))) for p in panels] == [1, 2, 1]
    assert len(vc.chartspecs.facet_panels({**spec, "facet": {"field": "model"}})) == 3


# ---- 6. the heatmap labels every class
def test_the_value_heatmap_labels_every_class_and_wraps_hand_off():
    """At 800 px the default overlap rule dropped every other class label: "hand off", wider than its cell,
    overlapped "9"."""
    rows = [{"true": t, "predicted": p, "count": 1, "value": 1.0} for t in map(str, range(10))
            for p in [*map(str, range(10)), "hand off"]]
    for spec in (vc.chartspecs.confusion_value_spec(rows, currency="$"), vc.chartspecs.value_matrix_spec(rows)):
        axis = spec["layer"][0]["encoding"]["x"]["axis"]
        assert axis["labelOverlap"] is False
        assert "['hand', 'off']" in axis["labelExpr"]
