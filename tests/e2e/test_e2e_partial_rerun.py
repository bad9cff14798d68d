"""What a setting reruns, read from the messages the server sends the browser (Chromium via Playwright).

A new outcome value (typed in the sidebar's box) reruns the fragment that holds
the values and the page (app.py), not the whole app: the server sends no new
page list, sends fewer elements, and ends the run as a fragment run; the numbers
still change. A new currency, drawn outside that fragment, reruns the whole app (the
check can tell the two apart). A page's button that changes a setting drawn
outside the fragment (Calibration's "Use ... on every page") is covered by
test_e2e_browser.test_a_page_button_stays_in_force_in_the_browser.
"""

from __future__ import annotations

import time

import re

import pytest

from helpers.browser import HOME, metric_value, open_app, step, url_path, value_input, wait_for_app

pytestmark = pytest.mark.e2e


class Messages:
    """Every message the server sends the page over its websocket, decoded (Streamlit's ForwardMsg)."""

    def __init__(self, tab) -> None:
        self.kinds: list[str] = []
        self.finished: list[int] = []
        tab.on("websocket", self._watch)

    def _watch(self, socket) -> None:
        socket.on("framereceived", self._frame)

    def _frame(self, payload) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if isinstance(payload, str):
            return
        message = ForwardMsg()
        message.ParseFromString(payload)
        kind = message.WhichOneof("type")
        self.kinds.append(kind)
        if kind == "script_finished":
            self.finished.append(message.script_finished)

    def clear(self) -> None:
        self.kinds.clear()
        self.finished.clear()

    def until_finished(self, tab, seconds: float = 60.0) -> None:
        """Wait for the run's end: the page may show its new value before the rest of the run is drawn."""
        deadline = time.monotonic() + seconds
        while not self.finished and time.monotonic() < deadline:
            tab.wait_for_timeout(100)  # lets Playwright deliver the socket's frames


def _type(tab, label: str, text: str) -> None:
    box = value_input(tab, label) if label != "Currency" else tab.get_by_label("Currency")
    box.fill(text)
    box.press("Enter")
    wait_for_app(tab)


def test_a_new_value_reruns_the_values_and_the_page_and_a_new_currency_everything(server, page):
    from playwright.sync_api import expect
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    messages = Messages(page)
    with step(page, "open"):
        open_app(page, server, HOME)
        expect(metric_value(page, "Penalty ω")).to_have_text("4")
        threshold = metric_value(page, "Threshold").inner_text()
        assert "new_session" in messages.kinds and "navigation" in messages.kinds, messages.kinds
    with step(page, "new-value"):
        messages.clear()
        _type(page, "Wrong answer", "-40")
        expect(metric_value(page, "Penalty ω")).to_have_text("40")
        expect(metric_value(page, "Threshold")).not_to_have_text(threshold)
        assert "delta" in messages.kinds, messages.kinds
        messages.until_finished(page)
        assert "navigation" not in messages.kinds, messages.kinds  # the page list is not sent again
        assert messages.finished == [ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY], messages.finished
        value_deltas = messages.kinds.count("delta")
    with step(page, "new-currency"):
        messages.clear()
        _type(page, "Currency", "CHF")
        expect(metric_value(page, "Value per item")).to_contain_text("CHF")
        messages.until_finished(page)
        assert "navigation" in messages.kinds, messages.kinds
        assert messages.finished == [ForwardMsg.FINISHED_SUCCESSFULLY], messages.finished
        assert value_deltas < messages.kinds.count("delta"), (value_deltas, messages.kinds.count("delta"))


def test_a_page_button_that_changes_the_data_source_redraws_the_sidebar(server, page):
    # The button is inside the fragment, the data source outside it: dashboard.state.request asks for a full run.
    from playwright.sync_api import expect

    source = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(
        has_text="Data source").get_by_role("combobox")
    with step(page, "open-monitor"):
        open_app(page, f"{server}/{url_path('monitor')}?src=sample:digits", "Monitor (no labels)")
        expect(source).to_have_value(re.compile("digits"))
    with step(page, "load-the-sample"):
        page.locator('[data-testid="stButton"]').filter(has_text="Load the breast_cancer sample").locator(
            "button").click()
        wait_for_app(page)
        expect(source).to_have_value(re.compile("breast_cancer"))
        assert "src=sample%3Abreast_cancer" in page.url or "src=sample:breast_cancer" in page.url, page.url


def test_the_table_of_every_model_and_rule_is_drawn_when_its_section_opens(server, page):
    # Closed, the section holds nothing (a new value then redraws no table); opened, the table is there and
    # follows a new value.
    from playwright.sync_api import expect

    section = page.locator('[data-testid="stExpander"]').filter(has_text="Every model and rule weighed")
    with step(page, "open"):
        open_app(page, server, HOME)
        expect(section).to_be_visible()
        expect(section.locator('[data-testid="stDataFrame"]')).to_have_count(0)
    with step(page, "open-the-section"):
        section.locator("summary").click()
        wait_for_app(page)
        expect(section.locator('[data-testid="stDataFrame"]')).to_be_visible()
    with step(page, "new-value"):
        _type(page, "Wrong answer", "-40")
        expect(metric_value(page, "Penalty ω")).to_have_text("40")
        expect(section.locator('[data-testid="stDataFrame"]')).to_be_visible()
