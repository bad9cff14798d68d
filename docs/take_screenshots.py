"""Regenerate docs/screenshot-voc.png and docs/screenshot-value.png from the real app.

    python docs/take_screenshots.py

Starts ``streamlit run app.py`` and drives Debian's Chromium (or ``$CHROMIUM_PATH``)
with the same harness as the browser tests (tests/helpers/browser.py), on the
bundled digits sample runs with the default use case (correct 1, hand-off 0,
wrong -4), and waits for every chart to be drawn before taking each picture.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / d) for d in ("", "e2e", "app", "core", "io", "cli", "serving")]

import helpers.browser as harness  # noqa: E402  (the browser tests' server and harness)

WIDTH = 1500
# file -> (page file name without .py, its heading, viewport height: from the page top down to its main chart)
SHOTS = {
    "screenshot-voc.png": ("voc", "VOC curves", 1000),
    "screenshot-value.png": ("value", "Value & thresholds", 1265),
}
HIDE_TOOLBAR = '[data-testid="stToolbar"] { visibility: hidden !important; }'  # "Deploy" and the menu


def wait_for_charts(page, timeout: int = harness.TIMEOUT_MS) -> int:
    """Wait until every Vega-Lite chart on the page has drawn a non-empty canvas or SVG; return their count."""
    from playwright.sync_api import expect

    charts = page.locator('[data-testid="stVegaLiteChart"]')
    expect(charts.first).to_be_visible(timeout=timeout)
    page.wait_for_function(
        """() => {
            const charts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')];
            return charts.length > 0 && charts.every(chart => {
                const drawn = chart.querySelector('canvas, svg.marks');
                if (!drawn) return false;
                const box = drawn.getBoundingClientRect();
                return box.width > 100 && box.height > 100;
            });
        }""",
        timeout=timeout,
    )
    expect(page.locator('[data-testid="stSpinner"]')).to_have_count(0, timeout=timeout)
    return charts.count()


def main() -> int:
    executable = harness.chromium_path()
    if executable is None:
        print("No Chromium found: install Debian's chromium or set CHROMIUM_PATH.", file=sys.stderr)
        return 1
    started = time.monotonic()
    with harness.streamlit_server() as url, harness.chromium(executable) as browser:
        # Open the front page once first, so that no picture waits for the server's first, uncached run.
        warm_up = browser.new_context()
        harness.open_app(warm_up.new_page(), url, "Runs")
        warm_up.close()
        for name, (page_file, title, height) in SHOTS.items():
            # Each page in its own session, opened by its URL: nothing carried over from another page.
            context = browser.new_context(viewport={"width": WIDTH, "height": height}, device_scale_factor=1)
            page = context.new_page()
            harness.open_app(page, f"{url}/{harness.url_path(page_file)}", title)
            errors = harness.errors_on(page)
            if errors:
                print(f"{title}: the page shows errors, no screenshot taken:\n" + "\n".join(errors), file=sys.stderr)
                return 1
            harness.assert_default_use_case(page, f"on the {title} page")  # the pictures show ω = 4
            count = wait_for_charts(page)
            page.mouse.move(0, 0)  # no hover tooltip in the picture
            out = ROOT / "docs" / name
            page.screenshot(path=str(out), style=HIDE_TOOLBAR)
            print(f"{out.relative_to(ROOT)}: {title}, {count} chart(s)")
            context.close()
    print(f"done in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
