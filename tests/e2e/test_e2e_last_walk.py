"""The last new-user walk's layout items (issue 33), measured in Chromium: Runs and Values per class at 800 px,
Calibration's and Segments' small multiples at 1280 px. The words: tests/app/test_app_last_walk.py.
"""

from __future__ import annotations

import re

import pytest

from helpers.browser import _TRUNCATION_PROBE, draw_every_table, new_page, open_app, step, url_path

pytestmark = pytest.mark.e2e

MAIN = '[data-testid="stMain"]'


def _at(page, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.wait_for_timeout(500)  # let the grids lay out their columns, the charts their width


def test_runs_shows_its_accuracies_at_800_px(server, browser):
    """At 800 px (a laptop with the sidebar open: a page of about 466 px) the Runs table was 619 px wide and cut
    its accuracy columns."""
    from playwright.sync_api import expect

    context, page = new_page(browser, "last-walk-runs-800")
    _at(page, 800)
    try:
        with step(page, "runs"):
            open_app(page, f"{server}/{url_path('runs')}", "Runs")
            expect(page.locator(f'{MAIN} [data-testid="stDataFrame"]').first).to_be_visible()
            _at(page, 800)
            draw_every_table(page)
            assert page.evaluate(_TRUNCATION_PROBE) == []
    finally:
        context.close()


def test_the_value_matrix_keeps_hand_off_in_view_at_800_px(server, browser):
    """At 800 px the value matrix's editor (ten classes) hid "hand off", the one column unlike the others, behind
    a sideways scroll."""
    from playwright.sync_api import expect

    context, page = new_page(browser, "last-walk-matrix-800")
    _at(page, 800)
    try:
        with step(page, "values per class"):
            open_app(page, f"{server}/{url_path('cost_matrix')}", "Values per class")
            editor = page.locator(f'{MAIN} [data-testid="stDataFrame"]').first
            expect(editor).to_be_visible()
            _at(page, 800)
            editor.scroll_into_view_if_needed()
            # A grid writes out only the columns in view, in an accessible table beside its canvas
            # (hidden from view: a role query would skip it).
            expect(editor.locator('th[role="columnheader"]').filter(has_text=re.compile(r"^hand off$"))
                   ).to_have_count(1)
    finally:
        context.close()


def test_the_small_multiples_take_the_page_s_width_at_1280_px(server, browser):
    """Calibration's two charts of a panel per model and Segments' chart of a panel per measure were faceted
    charts of fixed width: at 1280 px they filled about half of the page. Each row of panels now spans it."""
    from playwright.sync_api import expect

    context, page = new_page(browser, "last-walk-1280")
    _at(page, 1280)
    try:
        for name, title, query in (("calibration", "Calibration", ""), ("segments", "Segments",
                                                                          "?src=sample:diabetes")):
            with step(page, name):
                open_app(page, f"{server}/{url_path(name)}{query}", title)
                _at(page, 1280)
                page.wait_for_timeout(1000)  # the charts draw once in view of their width
                room = page.locator(f'{MAIN} [data-testid="stMainBlockContainer"]').evaluate(
                    "(block) => block.clientWidth")
                charts = page.locator(f'{MAIN} [data-testid="stVegaLiteChart"]')
                expect(charts.first.locator("canvas, svg.marks").first).to_be_visible()
                for i in range(charts.count()):  # each drawn once seen: wait for its drawing before measuring
                    charts.nth(i).scroll_into_view_if_needed()
                    expect(charts.nth(i).locator("canvas, svg.marks").first).to_be_visible()
                # A row: the charts side by side in one row of columns, or a chart on its own. Measured: the
                # drawing itself, not its block (which may span the page around a narrower chart).
                rows = page.evaluate("""(main) => {
                    const rows = new Map();
                    for (const chart of document.querySelectorAll(main + ' [data-testid="stVegaLiteChart"]')) {
                        const block = chart.closest('[data-testid="stHorizontalBlock"]');
                        const drawn = chart.querySelector('canvas, svg.marks').getBoundingClientRect();
                        if (!rows.has(block || chart)) rows.set(block || chart, {columns: !!block, drawn: []});
                        rows.get(block || chart).drawn.push([drawn.left, drawn.right]);
                    }
                    return [...rows.values()];
                }""", MAIN)
                assert rows, name
                for row in rows:
                    span = max(right for _, right in row["drawn"]) - min(left for left, _ in row["drawn"])
                    # A lone panel in a row of two columns (an odd count of models) fills its half.
                    lone = row["columns"] and len(row["drawn"]) == 1
                    assert span >= (0.4 if lone else 0.8) * room, (name, row, room)
    finally:
        context.close()
