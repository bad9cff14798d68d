"""The Compare page's tiles are whole at 800 px (a laptop with the sidebar open) and at 1280 px.

In three fixed columns, at 800 px the first tile's label and the interval's figure were cut ("A − B, per item
(this data)" 145 px in 84, "-$0.0313 to $0.0977" 289 px in 184): the tiles now wrap. Measured with the probe
of ``test_e2e_fit`` (content wider than its box). The stability table's seven columns were 640 px at 800 px:
it now shows four (the rest under "All columns") and must fit at both widths.
"""

from __future__ import annotations

import pytest

from helpers.browser import _TRUNCATION_PROBE, draw_every_table, new_page, open_app, step, url_path

pytestmark = pytest.mark.e2e


def test_the_compare_tiles_are_whole_at_800_and_1280_px(server, browser):
    from playwright.sync_api import expect

    context, page = new_page(browser, "compare-tiles")
    cut = {}
    try:
        with step(page, "open at 800 px"):
            page.set_viewport_size({"width": 800, "height": 1000})
            open_app(page, f"{server}/{url_path('compare')}", "Compare two models")
            tiles = page.locator('[data-testid="stMain"] [data-testid="stMetric"]')
            expect(tiles).to_have_count(3)
            expect(page.locator('[data-testid="stMain"] [data-testid="stDataFrame"]').first).to_be_visible()
        for width in (800, 1280):
            with step(page, f"probe at {width} px"):
                page.set_viewport_size({"width": width, "height": 1000})
                page.wait_for_timeout(300)  # let the row wrap and the grid lay out its columns
                draw_every_table(page)
                found = page.evaluate(_TRUNCATION_PROBE)
                if found:
                    cut[width] = found
    finally:
        context.close()
    assert cut == {}, f"cut: {cut}"
