"""Three tables that scrolled sideways at 800 px wide (a laptop with the sidebar open leaves a table 466 px) show
their first columns only, and lose none: Segments' table of segments (566 px with six columns), Values per class's
summary, model by model (536 px with "Total value") and Calibration's value table (715 px with the formula's two
values). The widths themselves are measured in a browser: tests/e2e/test_e2e_fit.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def opened(page: str, src: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["src"] = src
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown_and_whole(at: AppTest, column: str):
    """(the columns shown of the first table holding ``column``, every column of the table in the expander below)."""
    tables = [d for d in at.dataframe if column in d.value.columns]
    shown = [list(d.proto.column_order) for d in tables if d.proto.column_order]
    whole = [list(d.value.columns) for expander in at.expander for d in expander.dataframe if column in d.value.columns]
    assert shown and whole, ([list(d.value.columns) for d in at.dataframe], [e.label for e in at.expander])
    return shown[0], whole[0]


@pytest.mark.parametrize("page, src, column, first", [
    ("pages/segments.py", "sample:diabetes", "Segment",
     ["Segment", "Rule", "Hand-off rate", "Error rate", "Value per item"]),  # the three measures the caps hold
    ("pages/cost_matrix.py", "sample:digits", "Acted on", ["Model", "Rule", "Value per item", "Acted on"]),
    ("pages/calibration.py", "sample:digits", "Penalty ω",
     # the three values the "What it means" sentence quotes
     ["Model", "Penalty ω", "Value, ω/(1+ω) raw", "Value, ω/(1+ω) recalibrated", "Value, tuned raw"]),
])
def test_a_wide_table_shows_its_first_columns_and_the_rest_one_click_away(page, src, column, first):
    shown, whole = shown_and_whole(opened(page, src), column)
    assert shown == first
    assert len(whole) > len(shown) and set(shown) <= set(whole)  # what left the table is in its details
