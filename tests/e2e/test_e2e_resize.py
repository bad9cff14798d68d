"""A chart follows its column when the window changes size (issue 35, "what a user reads kept consistent").

Narrowed from 1440 to 1280 px, the Values per class page showed its value matrix "as colours" 946 px wide in a
786 px column: drawn at load inside the closed expander, where Chromium skips the rendering of a closed
``<details>`` (so no resize reaches the chart), it kept its old width and was shown that way when opened, until
Streamlit noticed and redrew it (0.2 to 1.2 s on a busy machine).

Measured, not eyeballed: once the shown charts are redrawn at 1280 px (while the window itself changes size,
any Streamlit chart lags a frame or two behind it), on every animation frame through opening the expander each
chart drawing a visitor can see (not inside a closed expander) lies within the element Streamlit gives it and
within its column; it then fills its element to the pixel, and again when the window is widened.
"""

from __future__ import annotations

import pytest

from helpers.browser import TIMEOUT_MS, new_page, open_app, step, url_path

pytestmark = pytest.mark.e2e

WIDE, NARROW = (1440, 900), (1280, 800)
EXPANDER = "See the matrix as colours"

# Every chart drawing a visitor can see, with the boxes it must fit: its element and its column (the main block
# when it is in none). A drawing inside a closed <details> is not seen, whatever its size.
_CHARTS = """
() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const charts = [];
  for (const drawing of main.querySelectorAll('.vega-embed > canvas, .vega-embed > svg')) {
    if (drawing.closest('details:not([open])') || drawing.offsetParent === null) continue;
    const holder = drawing.closest('[data-testid="stElementContainer"]');
    const column = drawing.closest('[data-testid="stColumn"]')
                || drawing.closest('[data-testid="stMainBlockContainer"]');
    const [d, h, c] = [drawing, holder, column].map((e) => e.getBoundingClientRect());
    charts.push({expander: !!drawing.closest('details'), drawing: Math.round(d.width), holder: Math.round(h.width),
                 fits: d.left >= h.left - 1 && d.right <= h.right + 1 && d.left >= c.left - 1 && d.right <= c.right + 1,
                 fills: Math.abs(d.width - h.width) <= 1});
  }
  return charts;
}
"""

# Every chart of the main area (shown or in a closed expander) has its drawing, and the layout has held still
# for `quiet` ms; gives up after `most` ms (false), and the assertions then measure what is there.
_ALL_DRAWN = """
([quiet, most]) => new Promise((resolve) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const layout = () => {
    const embeds = [...main.querySelectorAll('.vega-embed')];
    if (!embeds.length || !embeds.every((e) => e.querySelector(':scope > canvas, :scope > svg'))) return null;
    return embeds.map((e) => e.getBoundingClientRect().width + ',' + e.firstElementChild.getBoundingClientRect().width)
      .join(';');
  };
  const start = performance.now();
  let last = layout(), since = start;
  const tick = () => {
    if (performance.now() - start >= most) return resolve(false);
    const now = layout();
    if (now === null || now !== last) { last = now; since = performance.now(); }
    else if (performance.now() - since >= quiet) return resolve(true);
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})
"""

# Records, on every animation frame until window.__stopWatching is set, each seen chart that does not fit.
_WATCH = "() => { const charts = " + _CHARTS.strip() + """;
  window.__misfits = [];
  window.__frames = 0;
  window.__stopWatching = false;
  const tick = () => {
    window.__frames += 1;
    for (const chart of charts()) if (!chart.fits) window.__misfits.push(chart);
    if (!window.__stopWatching) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""


def charts(page) -> list[dict]:
    return page.evaluate(_CHARTS)


def wait_until(page, condition: str, what: str) -> None:
    """Wait for ``condition`` over the seen charts (a JS expression of ``charts``), failing with what is drawn."""
    from playwright.sync_api import Error

    try:
        page.wait_for_function(f"() => {{ const charts = ({_CHARTS})(); return {condition}; }}", timeout=TIMEOUT_MS)
    except Error:
        raise AssertionError(f"{what}: {charts(page)}") from None


def test_the_value_matrix_follows_its_column_when_the_window_narrows_and_widens(server, browser):
    context, page = new_page(browser, "resize-values-per-class")
    try:
        with step(page, "load at 1440"):
            page.set_viewport_size(dict(zip(("width", "height"), WIDE)))
            open_app(page, f"{server}/{url_path('cost_matrix')}", "Values per class")
            assert page.evaluate(_ALL_DRAWN, [300, TIMEOUT_MS]), "the charts of Values per class are not drawn"
            assert charts(page), "no chart shown on Values per class"
        with step(page, "narrow to 1280, open the expander"):
            page.set_viewport_size(dict(zip(("width", "height"), NARROW)))
            wait_until(page, "charts.length > 0 && charts.every((c) => c.fills)", "not redrawn at 1280 px")
            page.evaluate(_WATCH)
            page.get_by_text(EXPANDER, exact=True).click()
            wait_until(page, "charts.some((c) => c.expander) && charts.every((c) => c.fills)",
                       "the value matrix is not drawn at its column's width once opened")
            page.evaluate("() => { window.__stopWatching = true; }")
            misfits, frames = page.evaluate("() => [window.__misfits, window.__frames]")
            assert frames > 0
            assert not misfits, (f"a chart was shown wider than its box in {len(misfits)} of {frames} frames "
                                 f"after opening {EXPANDER!r} at 1280 px, e.g. {misfits[:3]}")
        with step(page, "widen to 1440"):
            page.set_viewport_size(dict(zip(("width", "height"), WIDE)))
            wait_until(page, "charts.filter((c) => c.expander).length === 1 && charts.every((c) => c.fills && c.fits)",
                       "a chart does not fill its box again at 1440 px")
    finally:
        context.close()
