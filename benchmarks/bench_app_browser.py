"""What the browser benchmarks of the first page share: the apps they time beside the dashboard, the patch that
leaves the recommendation out, and the round trip (type a value, wait until a tile shows another number).

Used by ``bench_app_roundtrip.py``, ``bench_app_sessions.py`` and ``bench_app_floor.py``; not run on its own.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / d) for d in ("", "e2e", "app", "core", "io", "cli", "serving")]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from bench_app import synthetic_runs as synthetic_runs  # noqa: E402  (the benchmarks' runs)
from helpers.browser import (  # noqa: E402  (the browser tests' server and Chromium)
    CHROMIUM_ARGS as CHROMIUM_ARGS,
    HOME as HOME,
    chromium_path as chromium_path,
    streamlit_server as streamlit_server,
)

BARE_APP = '''import streamlit as st

wrong = st.number_input("Wrong answer", value=-4.0, step=0.5)
st.markdown(f"A wrong answer is worth {wrong:g}.")
'''
# Loaded at the start of the dashboard's server with --exclude-recommend (see the docstring). Only the
# benchmark's server sees it: it is written to a temporary folder put first on the server's PYTHONPATH.
RECOMMEND_EXCLUDED = '''"""The benchmark's "recommend excluded" patch: vc.recommend answers from a memo."""
import dataclasses
import importlib

import valuecore as vc

_real = vc.recommend
_first = {}


def recommend(pipeline, values, models=None, **options):
    key = (None if models is None else tuple(models), tuple(options.get("kinds") or ()))
    if key not in _first:
        _first[key] = _real(pipeline, values, models, **options)
        return _first[key]
    r = _first[key]
    if r.model is None or values.use_case is None:
        return r
    policy = pipeline.policy(r.model, r.kind, values)
    result = pipeline.result(r.model, policy, values)
    return dataclasses.replace(r, policy=policy, per_item=result.value_per_item, coverage=result.coverage,
                               baseline_per_item=float(values.v_abstain))


vc.recommend = recommend
importlib.import_module("valuecore._decide.recommend").recommend = recommend  # what Pipeline.recommendation calls
'''
# The first page's elements with nothing computed: bench_app_floor.py times it (and --floor here, beside the
# dashboard).
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
TIMEOUT_MS = 600_000  # a first load of five 10^6-row runs on a busy machine
PERIOD_TILE = "Value per month"


async def _idle(page) -> None:
    from playwright.async_api import expect

    app = page.locator('[data-testid="stApp"]')
    await expect(app).to_have_attribute("data-test-script-state", "notRunning", timeout=TIMEOUT_MS)
    await expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=TIMEOUT_MS)


async def _open(browser, url: str, ready: str):
    from playwright.async_api import expect

    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    await page.goto(url, timeout=TIMEOUT_MS)
    await expect(page.get_by_text(ready).first).to_be_visible(timeout=TIMEOUT_MS)
    await _idle(page)
    return context, page


# The text shown, read in the page. Playwright's expect() polls at 100, 250, 500 and then 1000 ms, which would
# round every round trip up to its schedule; this is checked on every animation frame instead.
_TEXT_NOW = """([tile, marker]) => {
  const found = [...document.querySelectorAll(tile ? '[data-testid="stMetric"]' : '[data-testid="stMarkdown"]')]
    .filter(e => e.innerText.includes(marker));
  if (!found.length) return null;
  return tile ? found[0].querySelector('[data-testid="stMetricValue"]').innerText : found[0].innerText;
}"""
_CHANGED = "(args) => { const now = (" + _TEXT_NOW + ")(args.slice(0, 2)); return now !== null && now !== args[2]; }"


async def _round_trips(page, box, shown, values) -> list[float]:
    """Seconds from Enter until the text ``shown`` = (is a tile, marker) changes, per value typed in ``box``."""
    times = []
    for value in values:
        before = await page.evaluate(_TEXT_NOW, list(shown))
        await box.fill(f"{value:g}")
        start = time.perf_counter()
        await box.press("Enter")
        await page.wait_for_function(_CHANGED, arg=[*shown, before], polling="raf", timeout=TIMEOUT_MS)
        times.append(time.perf_counter() - start)
        await _idle(page)
    return times


def _dashboard_locators(page):
    sidebar_boxes = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"]')
    box = sidebar_boxes.filter(has_text="Wrong answer").locator("input")
    return box, (True, PERIOD_TILE)


def _volume_locators(page):
    box = page.locator('[data-testid="stMain"] [data-testid="stNumberInput"]').filter(has_text="Items you expect")
    return box.locator("input"), _dashboard_locators(page)[1]


def _bare_locators(page):
    box = page.locator('[data-testid="stNumberInput"]').locator("input")
    return box, (False, "wrong answer is worth")


def _values(session: int, rounds: int) -> list[float]:
    """Distinct wrong-answer values per session and round (never a cached one)."""
    return [-4.0 - 0.5 * (r + 1) - 0.01 * (session + 1) for r in range(rounds)]


def _ms(times) -> str:
    times = sorted(1000 * t for t in times)
    p90 = times[min(len(times) - 1, int(round(0.9 * (len(times) - 1))))]
    return f"median {statistics.median(times):6.0f}  p90 {p90:6.0f}  min {times[0]:6.0f} ms ({len(times)})"


def _p90(times) -> float:
    times = sorted(times)
    return times[min(len(times) - 1, int(round(0.9 * (len(times) - 1))))]
