"""What Streamlit and the browser cost for the first page's elements alone, with nothing computed.

The first page's goal (issue 23): a new outcome value shows its numbers within 1.5x
the round trip of a bare Streamlit app (one number input, one line of text). This
script asks how much of that budget the page's *elements* take before any work of
ours: it times, in Chromium, side by side and interleaved in one run,

- the bare app (``bench_app_roundtrip.BARE_APP``);
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

from bench_app_roundtrip import (  # noqa: E402
    BARE_APP,
    _bare_locators,
    _dashboard_locators,
    _ms,
    _open,
    _round_trips,
    _values,
)
from test_e2e_browser import CHROMIUM_ARGS, chromium_path, streamlit_server  # noqa: E402

FLOOR_APP = '''"""The first page's elements for a new outcome value, nothing computed (bench_app_floor.py)."""
import sys

import streamlit as st

sys.path.insert(0, {root!r})
from dashboard.sidebar import SLIDER_DECADES, one_side, slider_decades, slider_sides, slider_stops, stop_label  # noqa

VARIANT = {variant!r}
DEFAULTS = (("Correct answer", 1.0), ("Hand-off to a person", 0.0), ("Wrong answer", -4.0))

values_slot = st.sidebar.container()
st.sidebar.selectbox("Data source", ["Sample runs", "A folder"])
st.sidebar.multiselect("Models", ["a", "b", "c", "d", "e"], default=["a", "b", "c", "d", "e"])


def stops(value):
    low, high = slider_decades([value])
    below, above = slider_sides(value)
    return one_side(slider_stops(value, (int(max(low, high - SLIDER_DECADES)), int(high))), below, above)


@st.fragment
def values_and_page():
    values = []
    with values_slot:
        st.markdown("**What is each outcome worth?**", help="Drag a slider, or type an exact value.")
        with st.container(gap="xsmall"):
            for label, default in DEFAULTS:
                slider_column, box_column = st.columns([2, 1], gap="xsmall", vertical_alignment="bottom")
                box_value = st.session_state.get("box " + label, default)
                with slider_column:  # the slider moves with the box, as the dashboard's does
                    if VARIANT == "select sliders":
                        st.session_state["slider " + label] = box_value
                        st.select_slider(label + " ($)", options=stops(box_value), format_func=stop_label,
                                         key="slider " + label)
                    elif VARIANT == "numeric sliders":
                        st.session_state["slider " + label] = max(-10.0, min(10.0, box_value))
                        st.slider(label + " ($)", -10.0, 10.0, step=0.01, key="slider " + label)
                with box_column:
                    values.append(st.number_input(label + " ($), exact", value=default, step=0.5, format="%g",
                                                  key="box " + label, label_visibility="collapsed"))
        if VARIANT != "minimal":
            st.selectbox("…or start from a preset", ["Your values", "Fraud review", "Support triage"], help="Presets.")
            st.metric("Error cost ratio ω", f"{{(values[1] - values[2]) / (values[0] - values[1]):g}}",
                      help="What a wrong answer costs against what a correct one earns.")
            st.caption("A wrong answer costs more than a correct one earns.")
    wrong = values[2]
    st.title("Which model should we deploy?")
    st.caption(f"A correct answer earns $1.00, a hand-off to a person $0.00, a wrong answer ${{wrong:,.2f}}. "
               "Thresholds are tuned on 'val', value is measured on 'test'. Change the values in the sidebar.")
    st.subheader(f"Deploy model_3 with one confidence threshold: act when its confidence is at least "
                 f"0.{{int(-wrong * 1000) % 1000:03d}}.", anchor=False)
    if VARIANT == "minimal":
        st.metric("Value per month", f"${{-wrong * 417.3:,.2f}}")
        return

    @st.fragment
    def per_period():
        volume_column, period_column, _ = st.columns([2, 2, 3])
        volume = volume_column.number_input("Items you expect", min_value=1, value=10_000, step=1000, help="Volume.")
        period = period_column.selectbox("per", ["month", "week", "day"])
        labels = ("Rule", "Automated", "Value per item", "Value per month", "Without a model", "Gain")
        for row in (labels[:3], labels[3:]):
            for i, (column, label) in enumerate(zip(st.columns(3), row)):
                column.metric(label, f"${{-wrong * 417.3 + i:,.2f}}", help="What this tile means.")
        st.markdown(f"model_3 earns **${{-wrong * 0.17:.2f}}** per item, clearly more than the other models.")
        st.caption("model_3: likely between $0.15 and $0.19 per item (95%), from 500,000 items.")
        st.markdown(f"At {{volume}} items per {{period}} that is ${{-wrong * 1680:,.2f}} per {{period}}.")
        st.download_button("Download report", lambda: "report", file_name="report.html", on_click="ignore",
                           help="One HTML file to share.")

    per_period()
    st.expander("Every model and rule weighed, best first")


values_and_page()
'''
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
