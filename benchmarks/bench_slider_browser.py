"""A slider move against a typed value, in Chromium: time until the sidebar shows the new ω.

Starts the app (the browser tests' harness, tests/helpers/browser.py), opens the first page on the digits
sample runs, and alternates, eight times: one arrow key on the wrong answer's
slider (one stop), then a typed wrong answer in the box beside it. Prints the
median and minimum of each. Not a test; needs Chromium and Playwright.

Run: ``python benchmarks/bench_slider_browser.py``
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / d) for d in ("", "e2e", "app", "core", "io", "cli", "serving")]
sys.path.insert(0, str(ROOT))

from helpers.browser import (  # noqa: E402
    HOME, chromium, chromium_path, metric_value, open_app, streamlit_server, value_input, wait_for_app)
from helpers.browser import value_slider  # noqa: E402


def main(rounds: int = 8) -> None:
    from playwright.sync_api import expect

    with streamlit_server() as url, chromium(chromium_path()) as browser:
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        open_app(page, url, HOME)
        thumb = value_slider(page, "Wrong answer").locator('input[type="range"]')
        box = value_input(page, "Wrong answer")
        omega = metric_value(page, "Penalty ω")
        timings: dict[str, list[float]] = {"slider, one arrow key": [], "box, typed value + Enter": []}
        for i in range(rounds):
            before = omega.inner_text()
            thumb.focus()
            start = time.perf_counter()
            page.keyboard.press("ArrowLeft" if i % 2 == 0 else "ArrowRight")
            expect(omega).not_to_have_text(before)
            timings["slider, one arrow key"].append(time.perf_counter() - start)
            wait_for_app(page)
            before, shown = omega.inner_text(), float(box.input_value())
            box.fill(f"{shown - 0.5:g}")
            start = time.perf_counter()
            box.press("Enter")
            expect(omega).not_to_have_text(before)
            timings["box, typed value + Enter"].append(time.perf_counter() - start)
            wait_for_app(page)
            box.fill(f"{shown:g}")
            box.press("Enter")
            expect(omega).to_have_text(before)
            wait_for_app(page)
        for name, times in timings.items():
            print(f"{name:<26} until the new ω shows: median {1000 * statistics.median(times):4.0f} ms, "
                  f"min {1000 * min(times):4.0f} ms ({len(times)} moves)")


if __name__ == "__main__":
    main()
