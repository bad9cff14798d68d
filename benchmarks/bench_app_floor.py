"""What Streamlit and the browser cost for the first page's elements alone, with nothing computed.

The first page's goal (issue 23): a new outcome value shows its numbers within 1.5x
the round trip of a bare Streamlit app (one number input, one line of text). This
script asks how much of that budget the page's *elements* take before any work of
ours: it times, in Chromium, side by side and interleaved in one run,

- the bare app (``bench_app_browser.BARE_APP``);
- "floor": a scratch app drawing what the first page draws for a new value, in the
  same fragment layout as ``app.py`` (the sidebar's values and the page in one
  ``st.fragment``, the tiles in a nested one), with texts that follow the typed
  value but no data, no view model and no recommendation: the heading and three
  outcome rows (a select slider with the dashboard's own stops, from
  ``dashboard.sidebar``, beside an exact box), the preset, the ω tile and its
  caption; the title, the caption, the headline, the volume and period boxes,
  six tiles with help, three sentences, the report button and the closed
  candidates section;
- "floor, numeric sliders": the same with ``st.slider(-10, 10, step=0.01)`` in
  place of the select sliders (what a slider without symmetric-log stops costs);
- "floor, no sliders": the same without the sliders;
- "floor, minimal": the three boxes, the title, the caption, the headline and
  one tile.

Each round types a new wrong-answer value in the sidebar box, presses Enter and
waits (on every animation frame) until the "Value per month" tile shows another
number, as ``bench_app_roundtrip.py`` does for the dashboard. The floor apps are
scratch apps written to a temporary folder; they are hand-made replicas of the
page's elements (counted from ``pages/home.py`` and ``dashboard/sidebar.py``),
not the page itself. Not a test: prints the figures.

Run: ``python benchmarks/bench_app_floor.py [--rounds 9]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / d) for d in ("", "e2e", "app", "core", "io", "cli", "serving")]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from bench_app_browser import (  # noqa: E402
    BARE_APP,
    FLOOR_APP,
    _bare_locators,
    _dashboard_locators,
    _ms,
    _open,
    _round_trips,
    _values,
    chromium_path,
    CHROMIUM_ARGS,
    streamlit_server,
)

VARIANTS = ("select sliders", "numeric sliders", "no sliders", "minimal")


async def _measure(urls: dict[str, str], rounds: int) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                                   args=CHROMIUM_ARGS)
        try:
            pages = {}
            for name, url in urls.items():
                ready = "wrong answer is worth" if name == "bare" else "Which model should we deploy?"
                pages[name] = (await _open(browser, url, ready))[1]
            times = {name: [] for name in urls}
            for value in _values(0, rounds):  # interleaved: every app sees the same load
                for name, page in pages.items():
                    locate = _bare_locators if name == "bare" else _dashboard_locators
                    times[name] += await _round_trips(page, *locate(page), [value])
            bare = statistics.median(times["bare"])
            for name, found in times.items():
                label = "bare app" if name == "bare" else f"floor, {name}"
                ratio = "" if name == "bare" else f"  -> {statistics.median(found) / bare:.2f}x the bare app"
                print(f"{label:<24} {_ms(found)}{ratio}")
        finally:
            await browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9, help="values typed in each app")
    args = parser.parse_args()
    if chromium_path() is None:
        sys.exit("No Chromium at /usr/bin/chromium (or $CHROMIUM_PATH).")
    print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        scripts = {"bare": Path(tmp) / "bare.py"}
        scripts["bare"].write_text(BARE_APP)
        for i, variant in enumerate(VARIANTS):
            scripts[variant] = Path(tmp) / f"floor_{i}.py"
            scripts[variant].write_text(FLOOR_APP.format(root=str(ROOT), variant=variant))
        servers = [streamlit_server(timeout=120, script=str(path)) for path in scripts.values()]
        urls = {name: server.__enter__() for name, server in zip(scripts, servers)}
        try:
            asyncio.run(_measure(urls, args.rounds))
        finally:
            for server in reversed(servers):
                server.__exit__(None, None, None)
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
