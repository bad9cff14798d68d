"""The Segments page in Chromium on the sample whose runs carry segment columns: it opens from a link, shows
each segment's row and the chart, and a cap moved in the browser changes the table, with no error box."""

from __future__ import annotations

import pytest

from helpers.browser import TIMEOUT_MS, errors_on, new_page, open_app, step, url_path, wait_for_app

pytestmark = pytest.mark.e2e


def test_the_segments_page_opens_on_the_diabetes_sample_and_a_cap_changes_it(server, browser):
    from playwright.sync_api import expect

    context, page = new_page(browser, "segments")
    page.set_viewport_size({"width": 1280, "height": 800})
    try:
        with step(page, "open"):
            open_app(page, f"{server}/{url_path('segments')}?src=sample:diabetes&segmodel=logreg", "Segments")
            assert errors_on(page) == []
            grid = page.locator('[data-testid="stDataFrame"]').first
            expect(grid).to_be_visible(timeout=TIMEOUT_MS)
            page.locator(".vega-embed > canvas, .vega-embed > svg").first.wait_for(state="attached",
                                                                                   timeout=TIMEOUT_MS)
            expect(page.get_by_text("No caps: each segment has its own best threshold.")).to_be_visible()
        with step(page, "cap"):
            # The hand-off cap's slider, moved one stop right with the keyboard: from "no cap" to 0.0%.
            cap = page.locator('[data-testid="stMain"] [data-testid="stSlider"]').filter(
                has=page.get_by_text("Gap in hand-off rate", exact=True))
            expect(cap.locator('[data-testid="stSliderThumbValue"]')).to_have_text("no cap")
            cap.locator('input[type="range"]').focus()
            page.keyboard.press("ArrowRight")
            expect(cap.locator('[data-testid="stSliderThumbValue"]')).to_have_text("0.0%")
            expect(page.get_by_text("The caps cost")).to_be_visible(timeout=TIMEOUT_MS)
            wait_for_app(page)
            assert errors_on(page) == []
    finally:
        context.close()
