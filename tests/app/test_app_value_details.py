"""The Value page's "All columns" details: the whole table is made only when they are open (issue 33).

A closed expander's table was still marshalled on every new value, as much work as the shown table;
opened, it shows the very table the page shows, every column of it.
"""

from __future__ import annotations

import pandas as pd

from helpers.app import assert_clean, start


def _details(at):
    return next(e for e in at.expander if e.label == "All columns")


def test_the_whole_table_is_drawn_only_once_its_details_are_open():
    at = start("pages/value.py", src="sample:digits")
    assert_clean(at)
    assert len(at.dataframe) == 1 and not _details(at).dataframe  # closed: the shown table alone
    shown = at.dataframe[0]
    at.session_state["value_all_columns"] = True  # the user opens the details
    at.run()
    assert_clean(at)
    whole = _details(at).dataframe
    assert len(whole) == 1 and len(at.dataframe) == 2
    pd.testing.assert_frame_equal(whole[0].value, shown.value)  # the same table, every column
    assert list(shown.proto.column_order) == ["★", "Model", "Threshold", "Value per item", "Acted on"]
    assert not whole[0].proto.column_order
    assert {"Total value", "95% interval", "Over no model", "Note"} <= set(whole[0].value.columns)


def test_open_details_follow_a_new_value():
    at = start("pages/value.py", src="sample:digits")
    at.session_state["value_all_columns"] = True
    at.run()
    before = _details(at).dataframe[0].value
    at.sidebar.number_input(key="sidebar_v_wrong_input").set_value(-9.0).run()
    assert_clean(at)
    after = _details(at).dataframe[0].value
    pd.testing.assert_frame_equal(after, at.dataframe[0].value)
    assert not after["Total value"].equals(before["Total value"])
