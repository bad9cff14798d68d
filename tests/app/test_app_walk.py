"""A new user's walk through the pages: one quantity, one name and one spelling on every page.

Each test names a difference a reader met walking the sample runs page by page (screenshots at 1280 and
800 px): the same number under two headers, or the same kind of number written two ways.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.app import tables_of
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.heavy  # whole-app walks (README's quick loop leaves them out)

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def app(page: str, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"src": "sample:digits", **query})
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def tables(at: AppTest):
    """Each table of the page as the reader sees it: a Styler's display text, else the frame."""
    yield from tables_of(at.dataframe)


def header_of(at: AppTest, model: str, text: str) -> str:
    """The header of the first column whose cell on ``model``'s row reads ``text``."""
    for table in tables(at):
        if "Model" not in table.columns:
            continue
        rows = table[table["Model"].astype(str) == model]
        for name in table.columns:
            if any(str(cell) == text for cell in rows[name]):
                return name
    raise AssertionError(f"no table shows {text!r} on {model}'s row")


def test_the_share_acted_on_has_the_value_pages_name_on_the_export_page():
    value = app("value")
    export = app("export")
    share = "99.6%"  # svm_rbf's share of items acted on, at -4 for a wrong answer
    assert header_of(export, "svm_rbf", share) == header_of(value, "svm_rbf", share)


def words(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [m.label for m in at.metric])


def test_the_compare_page_calls_its_range_an_interval_everywhere():
    """The tile says "95% interval (new data)", the verdict "the interval includes 0": the sentence between
    them said "95% CI" for the same range."""
    text = words(app("compare"))
    assert "95% interval" in text
    assert " CI " not in text


def headers(at: AppTest) -> list[str]:
    """Every column header a reader sees on the page: a table's index name, then each shown column under its
    configured label (hidden columns left out)."""
    shown = []
    for frame in at.dataframe:
        config = json.loads(frame.proto.columns) if frame.proto.columns else {}
        table = next(tables_of([frame]))
        if table.index.name:
            shown.append(str(table.index.name))
        for name in table.columns:
            column = config.get(f"name:{name}", config.get(str(name))) or {}
            if not column.get("hidden"):
                shown.append(str(column.get("label") or name))
    return shown


@pytest.mark.parametrize("page", ["voc", "cost_matrix"])
def test_every_table_header_starts_with_a_capital_as_on_the_value_page(page):
    """"Model", "Value per item" on every table; the VOC page's comparison read "metric", "best model" and
    Values per class's thresholds "predicted class", "tuned". Model names are data, written as loaded."""
    models = {"logreg", "mlp", "naive_bayes", "random_forest", "svm_rbf"}
    # The value matrix's editor names outcomes, not quantities: rows "true 0", actions "→ 0" … "hand off", as the
    # page's caption quotes them.
    outcomes = {"truth", "hand off"}
    lower = [h for h in headers(app(page)) if h not in models | outcomes and h[:1].islower()]
    assert not lower, lower


@pytest.mark.parametrize("page", ["calibration", "export", "cost_matrix"])
def test_no_table_calls_the_share_acted_on_coverage(page):
    """The Value page heads the share of items acted on "Acted on"; the Calibration page's table said
    "Coverage, ω/(1+ω) raw" for the same share at the formula threshold."""
    value = app("value")
    assert header_of(value, "svm_rbf", "99.6%") == "Acted on"
    assert not [h for h in headers(app(page)) if "coverage" in h.lower()]


def charts_in_columns(node, inside: bool = False) -> int:
    """How many charts under ``node`` sit in a column, beside something else."""
    if getattr(node, "type", None) == "vega_lite_chart":
        return int(inside)
    children = getattr(node, "children", None)
    if not isinstance(children, dict):
        return 0
    inside = inside or type(node).__name__ == "Column"
    return sum(charts_in_columns(child, inside) for child in children.values())


def test_the_compare_pages_charts_each_take_the_pages_width():
    """Side by side, at 800 px the item-by-item chart's axis title and legend ran past the page's edge
    (screenshot w800-compare-models)."""
    at = app("compare")
    assert at.get("vega_lite_chart")  # the page draws its charts
    assert charts_in_columns(at.main) == 0


def switches_in_columns(node, inside: bool = False) -> list[str]:
    """The labels of the checkboxes and toggles under ``node`` that share a row with other widgets."""
    if getattr(node, "type", None) in ("checkbox", "toggle"):
        return [node.label] if inside else []
    children = getattr(node, "children", None)
    if not isinstance(children, dict):
        return []
    inside = inside or type(node).__name__ == "Column"
    return [label for child in children.values() for label in switches_in_columns(child, inside)]


@pytest.mark.parametrize("page", ["voc", "constraints"])
def test_a_switch_has_a_row_of_its_own(page):
    """At 800 px a quarter or a third of the row cut "Bootstrap bands" to "Bootstra…" (VOC curves) and
    "Per-class thresholds" to "Per-class th…" (Capacity), screenshots w800-voc-curves and w800-capacity."""
    at = app(page)
    assert at.checkbox or at.toggle  # the page draws its switch
    assert switches_in_columns(at.main) == []


@pytest.mark.parametrize("page", ["how_value_works", "value", "calibration", "compare", "constraints"])
def test_a_percentage_is_written_without_a_space(page):
    """Every page writes "95%" (wording.percent); How value works wrote "95 %" and "80 %" in its prose."""
    text = "\n".join([m.value for m in app(page).markdown])
    assert "%" in text  # the page writes percentages at all
    assert re.findall(r"\d %", text) == []


def test_the_stability_tables_share_says_what_it_is_a_share_of():
    """Its column read "Always hand off in" over "0.0%": in what? The chart above counts resamples."""
    at = app("compare")
    frame = next(f for f in at.dataframe if "Tuned threshold" in next(tables_of([f])).columns)
    config = json.loads(frame.proto.columns)
    shares = [column.get("label") or name for name, column in config.items()
              if (column.get("type_config") or {}).get("format", "").endswith("%%")]
    assert shares, config  # the share is there, written as a percentage
    assert all("resamples" in name.lower() for name in shares), shares


@pytest.mark.parametrize("page,query,panels", [("calibration", {}, 2 * 5), ("segments", {"src": "sample:diabetes"}, 3)])
def test_a_chart_of_panels_takes_the_page_s_width(page, query, panels):
    """At 800 px wide the main column holds about 468 px (800 − a 300 px sidebar − padding); three panels in a row
    ran past its edge on the Calibration page (w800-calibration-check.t1.png: naive_bayes's panel cut off). Two of
    fixed width a row then filled half the page at 1280 px (issue 33's walk). Each panel is now a chart of its own
    with no width of its own: it takes its column's, at any window size (the browser test measures it)."""
    specs = [json.loads(c.proto.spec) for c in app(page, **query).get("vega_lite_chart")]
    assert len(specs) == panels  # every model's panel (two charts of them), or every measure's
    for spec in specs:
        assert "facet" not in spec and "width" not in spec, spec.get("title")
        assert "width" not in spec.get("spec", {}), spec.get("title")


def test_the_per_class_thresholds_beside_a_one_threshold_rule_say_whose_they_are():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"src": "sample:breast_cancer"})
    at.run()
    at.switch_page("pages/cost_matrix.py").run()
    assert at.radio(key="cost_matrix_rule").value == "threshold"  # one threshold for every class
    bold = [m.value for m in at.markdown if m.value.startswith("**")]
    assert "**The per-class rules' thresholds**" in bold and "**Per-class thresholds**" not in bold
