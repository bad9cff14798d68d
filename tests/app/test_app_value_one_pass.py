"""A new value draws the Value page in one pass: its script runs once and each element is sent once (issue 33).

In Chromium the page took 7-14x its floor (the same elements replayed, nothing computed) while the first page
took 1.5-1.8x. The fifth pass looked for a second pass: a rerun (``st.rerun``, a state adopted by rerunning, a
fragment and a full run), or elements sent and then sent again (a placeholder filled in later, a chart drawn
twice). There was none (the gap was the benchmark's: its floor drew nothing of the page, benchmarks/README.md).
These tests keep it so: a second pass would add its own wait to every value.
"""

from __future__ import annotations

from pathlib import Path

import dashboard
from helpers.app import assert_clean, each_new_value, start
import streamlit.delta_generator as delta_generator

NEW_VALUES = (-9.0, -25.0, -4.5)


def _runs_of_the_page(monkeypatch) -> list:
    """The Value page's script runs, counted where the frame runs a page (app.py calls dashboard.run_script)."""
    runs = []
    real = dashboard.run_script

    def counted(path):
        if Path(path).name == "value.py":
            runs.append(1)
        return real(path)

    monkeypatch.setattr(dashboard, "run_script", counted)
    return runs


def _messages(monkeypatch) -> list:
    """Every delta the page's elements enqueue, as they enqueue it: Streamlit's queue merges two deltas to one
    place sent before a flush (all of an AppTest run), where a browser may well receive both."""
    found = []
    real = delta_generator._enqueue_message

    def keep(message):
        found.append(type(message).FromString(message.SerializeToString()))
        return real(message)

    monkeypatch.setattr(delta_generator, "_enqueue_message", keep)
    return found


def test_a_new_value_runs_the_value_page_once(monkeypatch):
    at = start("pages/value.py", src="sample:digits")
    assert_clean(at)
    runs = _runs_of_the_page(monkeypatch)
    for value in each_new_value(at, NEW_VALUES, runs):
        assert len(runs) == 1, value


def test_a_new_value_sends_each_element_of_the_value_page_once(monkeypatch):
    at = start("pages/value.py", src="sample:digits")
    assert_clean(at)
    messages = _messages(monkeypatch)
    for value in each_new_value(at, NEW_VALUES, messages):
        paths = [tuple(m.metadata.delta_path) for m in messages
                 if m.HasField("delta") and m.delta.WhichOneof("type") in ("new_element", "add_block")]
        assert paths and len(paths) == len(set(paths)), (value, sorted(p for p in paths if paths.count(p) > 1))
        # the main area's charts and table are among them, once each
        kinds = [m.delta.new_element.WhichOneof("type") for m in messages
                 if m.HasField("delta") and m.delta.WhichOneof("type") == "new_element"
                 and m.metadata.delta_path[0] == 0]
        assert kinds.count("vega_lite_chart") == 2 and kinds.count("dataframe") == 1, (value, kinds)
