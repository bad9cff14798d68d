"""What a new user sees (issue 23.6): every page at 1280×800 and 1440×900, screenshotted, with nothing
sticking out of its box, no two blocks drawn over each other, no heading, tile or table cut (the probe of
``test_e2e_fit``), no error box or dialog and no Deploy button, the default use case kept all the way. One
walk does all of it, since loading every page is what costs (the browser's drawing of it, far more than the
server's run): each page is opened once and measured at both sizes, the window resized in between, as a visitor
resizing it would (the browser lays the page out again; the measuring waits until every chart is drawn again
and nothing moves). Each page is opened at the size the previous one ended at, so every size sees pages that
were opened at it and pages resized to it.

Measured, not eyeballed, from the elements' bounding boxes:

- a chart's drawing (the canvas or SVG Vega renders: axis titles and legends included) lies inside the
  element Streamlit gives it and inside the page's main column, so nothing is cut off at the edge;
- blocks stacked in one column do not overlap (a chart title drawn under the paragraph above it did);
- columns side by side do not overlap (an axis title over the next chart did).

The screenshots are kept in ``test-artifacts/new-user/`` to be looked at.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from helpers.browser import _TRUNCATION_PROBE, draw_every_table
from helpers.browser import (
    ARTIFACTS, HOME, PAGES, TIMEOUT_MS, assert_default_use_case, errors_on, heading, new_page, open_app, step,
    wait_for_app,
)

pytestmark = pytest.mark.e2e

# Every page in the navigation, with its heading (the shared list leaves Capacity out).
ALL_PAGES = {**PAGES, "Capacity & guarantees": "Capacity & guarantees", "Segments": "Segments"}
SIZES = ((1280, 800), (1440, 900))
SHOTS = ARTIFACTS / "new-user"
# The pictures of every page (what a visitor sees first, and the whole page) are for a person to look at:
# E2E_SCREENSHOTS=DIR (as for the uploads test) keeps them, in test-artifacts/new-user/. They assert nothing,
# and drawing two of every page at both sizes (one as tall as the page) is a good part of the walk's time, so a
# plain run (CI) leaves them out.
# A failing step still saves its screenshot (helpers.browser.step).
KEEP_SHOTS = bool(os.environ.get("E2E_SCREENSHOTS"))

_OVERFLOW_PROBE = """
() => {
  const main = document.querySelector('[data-testid="stMain"] [data-testid="stMainBlockContainer"]')
            || document.querySelector('[data-testid="stMain"]');
  const box = (element) => element.getBoundingClientRect();
  const shown = (element) => element.offsetParent !== null && box(element).width > 0 && box(element).height > 0;
  const name = (element) => (element.innerText || element.getAttribute('aria-label') || '').trim().slice(0, 50);
  const problems = [];
  let charts = 0;
  const outer = box(main);
  // 1. Each chart's drawing inside its element and inside the main column.
  for (const drawing of main.querySelectorAll('.vega-embed > canvas, .vega-embed > svg')) {
    charts += 1;
    if (!shown(drawing)) continue;
    const inner = box(drawing);
    const holder = drawing.closest('[data-testid="stElementContainer"]') || drawing.parentElement;
    const cell = box(holder);
    const label = (drawing.getAttribute('aria-label') || 'chart').slice(0, 60);
    if (inner.right > cell.right + 1 || inner.left < cell.left - 1) {
      problems.push(`${label}: drawn ${Math.round(inner.width)}px wide in a ${Math.round(cell.width)}px box`);
    }
    if (inner.right > outer.right + 1) {
      problems.push(`${label}: runs ${Math.round(inner.right - outer.right)}px past the main column`);
    }
  }
  // 2. Blocks of one column do not overlap; 3. columns side by side do not overlap.
  for (const block of main.querySelectorAll('[data-testid="stVerticalBlock"]')) {
    const children = [...block.children].filter(shown);
    for (let i = 0; i + 1 < children.length; i++) {
      const above = box(children[i]), below = box(children[i + 1]);
      if (above.bottom > below.top + 1) {
        problems.push(`"${name(children[i])}" overlaps "${name(children[i + 1])}" by ${
          Math.round(above.bottom - below.top)}px`);
      }
    }
  }
  for (const row of main.querySelectorAll('[data-testid="stHorizontalBlock"]')) {
    const columns = [...row.children].filter(shown);
    for (let i = 0; i + 1 < columns.length; i++) {
      const left = box(columns[i]), right = box(columns[i + 1]);
      if (left.right > right.left + 1 && left.top < right.bottom && right.top < left.bottom) {
        problems.push(`column "${name(columns[i])}" overlaps the next by ${Math.round(left.right - right.left)}px`);
      }
    }
    // An element wider than its column spills into the next one.
    for (const column of columns) {
      const edge = box(column);
      for (const drawing of column.querySelectorAll('.vega-embed > canvas, .vega-embed > svg')) {
        if (shown(drawing) && box(drawing).right > edge.right + 1) {
          problems.push(`a chart in column "${name(column)}" spills ${Math.round(box(drawing).right - edge.right)
            }px into the next column`);
        }
      }
    }
  }
  return {problems, charts};
}
"""
# Pages that draw charts on the sample runs: the probe must have found some there, or it measured nothing.
CHART_PAGES = ("Value & thresholds", "VOC curves", "Values per class", "Calibration", "Compare two models",
               "Capacity & guarantees")


def go_to(page, title: str) -> None:
    from playwright.sync_api import expect

    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title, exact=True).click(timeout=TIMEOUT_MS)
    expect(heading(page, ALL_PAGES[title])).to_be_visible(timeout=TIMEOUT_MS)
    wait_for_app(page)


# Resolves once every shown chart of the main area has its drawing and nothing in it has moved or resized for
# `quiet` ms (checked on each animation frame): the charts and the grids have laid themselves out. After
# `most` ms it resolves anyway (false), and the probes measure what is there.
_SETTLED = """
([quiet, most]) => new Promise((resolve) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const layout = () => {
    // A chart not displayed (a closed expander, another tab) may never be drawn: only shown ones count.
    const embeds = [...main.querySelectorAll('.vega-embed')].filter((embed) => embed.offsetParent !== null);
    const drawn = embeds.every((embed) => embed.querySelector(':scope > canvas, :scope > svg'));
    const boxes = [...main.querySelectorAll(
      '[data-testid="stElementContainer"], .vega-embed > canvas, .vega-embed > svg, .dvn-scroller')].map((e) => {
      const b = e.getBoundingClientRect();
      return `${b.left},${b.top},${b.width},${b.height},${e.scrollWidth}`;
    });
    return drawn ? boxes.join(';') : null;
  };
  const start = performance.now();
  let last = layout(), since = start;
  const tick = () => {
    if (performance.now() - start >= most) return resolve(false);
    const now = layout();
    if (now === null || now !== last) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= quiet) {
      return resolve(true);
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})
"""


def settle(page) -> None:
    """Let Vega draw every chart (it renders after the script run ends) and the grids lay out: wait until
    each chart is drawn and the main area's layout has stayed the same for 300 ms."""
    page.evaluate(_SETTLED, [300, 10_000])


def _pictures(page, stem: Path, width: int, height: int) -> None:
    """What the visitor sees first, and the whole page, as ``<stem>_<width>x<height>[_full].png``."""
    shot = f"{stem}_{width}x{height}"
    page.screenshot(path=f"{shot}.png")
    # The whole page: Streamlit scrolls its main block, not the window, so the window is made as tall as the
    # content for this picture (the width, and so the layout, stays the same).
    tall = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": min(int(tall) + 50, 12000)})
    settle(page)
    page.screenshot(path=f"{shot}_full.png")
    page.set_viewport_size({"width": width, "height": height})


def _measure(page, width: int, height: int, problems: dict, where: str) -> dict:
    """Resize the window to ``width``×``height``, let it settle, and add what the probes find (and a Deploy button)
    to ``problems[where]``; return the overflow probe's result."""
    page.set_viewport_size({"width": width, "height": height})
    settle(page)
    found = page.evaluate(_OVERFLOW_PROBE)
    draw_every_table(page)
    cut = page.evaluate(_TRUNCATION_PROBE)
    if page.locator('[data-testid="stAppDeployButton"]').count():
        cut.append("a Deploy button is shown")
    if found["problems"] or cut:
        problems[where] = found["problems"] + cut
    return found


def test_every_page_fits_its_boxes_at_both_sizes(server, browser):
    context, page = new_page(browser, "new-user")
    page.set_viewport_size(dict(zip(("width", "height"), SIZES[0])))
    if KEEP_SHOTS:
        SHOTS.mkdir(parents=True, exist_ok=True)
    problems = {size: {} for size in SIZES}
    checked = dict.fromkeys(SIZES, 0)
    sizes = list(SIZES)  # the size the window has first, then the other
    try:
        with step(page, "load"):
            open_app(page, server, HOME)
        for title in ALL_PAGES:
            with step(page, title):
                if title != "Start here: the verdict":
                    go_to(page, title)
                assert errors_on(page) == [], f"page {title!r} shows errors on the sample runs"
                assert_default_use_case(page, f"after opening {title!r}")
                if title in CHART_PAGES:  # Vega draws after the script run ends
                    page.locator(".vega-embed > canvas, .vega-embed > svg").first.wait_for(
                        state="attached", timeout=TIMEOUT_MS)
                for width, height in sizes:
                    found = _measure(page, width, height, problems[width, height], title)
                    if title in CHART_PAGES:
                        assert found["charts"] > 0, f"no chart measured on {title!r}"
                    if KEEP_SHOTS:
                        _pictures(page, SHOTS / re.sub(r"[^A-Za-z0-9]+", "_", title).strip("_").lower(), width,
                                  height)
                    checked[width, height] += 1
                sizes.reverse()  # the next page opens at the size this one ends at
        with step(page, "what-if"):  # the what-if adds tiles and columns: they must fit too
            from playwright.sync_api import expect

            go_to(page, "Value & thresholds")
            page.get_by_text("What if I pick the threshold?", exact=True).click()
            expect(page.locator('[data-testid="stMetric"]').filter(has_text="Value per item, your threshold")
                   ).to_be_visible(timeout=TIMEOUT_MS)
            wait_for_app(page)
            for width, height in sizes:
                _measure(page, width, height, problems[width, height], "Value & thresholds, what-if")
                if KEEP_SHOTS:
                    page.screenshot(path=str(SHOTS / f"value_what_if_{width}x{height}.png"))
    finally:
        context.close()
    for width, height in SIZES:
        assert checked[width, height] == len(ALL_PAGES)
        assert problems[width, height] == {}, (
            f"overflowing, overlapping or cut at {width}×{height}: {problems[width, height]}")
