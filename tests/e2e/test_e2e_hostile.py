"""A hostile visitor in a real browser (issue 24): names from files and link parameters stay text, and the
start page's own URL path opens it.

Uses the harness of ``tests/e2e/test_e2e_browser.py`` (Debian's Chromium through Playwright, a real
``streamlit run`` on a free loopback port). The server reads one allowed folder holding a run whose
model, split and class names are markdown that would fetch from 127.0.0.1:9 if rendered. ``E2E_SCREENSHOTS=DIR``
keeps a picture of each page the hostile link opens in DIR.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.parse
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers.browser import (  # noqa: E402
    HOME, TIMEOUT_MS, errors_on, heading, new_page, streamlit_server, wait_for_app,
)
from helpers.app import HOSTILE, HOSTILE_2, hostile_frame  # noqa: E402

pytestmark = pytest.mark.e2e

BAD_HOST = "127.0.0.1:9"  # nothing listens there: any request to it was made from data


@pytest.fixture(scope="module")
def hostile_server(chromium_executable, tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-root")
    (root / "runs").mkdir()
    hostile_frame().to_csv(root / "runs" / "hostile.csv", index=False)
    (root / "runs" / "bad_[X](http:127.0.0.1:9).csv").write_text("not,a,run\n1,2,3\n")
    before = os.environ.get("VALUE_DASHBOARD_DATA_ROOTS")
    os.environ["VALUE_DASHBOARD_DATA_ROOTS"] = str(root)  # the server process inherits it
    try:
        with streamlit_server() as url:
            yield url
    finally:
        if before is None:
            os.environ.pop("VALUE_DASHBOARD_DATA_ROOTS", None)
        else:
            os.environ["VALUE_DASHBOARD_DATA_ROOTS"] = before


@pytest.fixture
def hostile_page(browser, request):
    context, page = new_page(browser, request.node.name)
    page.requests_to_bad_host = []
    page.on("request", lambda r: BAD_HOST in r.url and page.requests_to_bad_host.append(r.url))
    try:
        yield page
    finally:
        context.close()


def rendered_from_data(page) -> list[str]:
    """Links, images, bold and LaTeX that can only have come from the hostile names."""
    found = []
    for selector in (f'a[href*="{BAD_HOST}"]', f'img[src*="{BAD_HOST}"]', 'img[src="/i.png"]', ".katex"):
        found += [f"{selector}: {html[:200]}" for html in page.locator(selector).evaluate_all(
            "nodes => nodes.map(n => n.outerHTML)")]
    for text in page.locator("strong, b").all_inner_texts():
        if text.strip() in ("B", "c1", "c2", "h"):
            found.append(f"bold: {text}")
    return found


def test_the_start_page_opens_at_its_own_path_on_every_visit(hostile_server, hostile_page):
    from playwright.sync_api import expect

    # The module's first test: its first visit is the fresh server's first request (no "Page not found" either).
    for visit in range(2):
        hostile_page.goto(f"{hostile_server}/verdict")
        expect(heading(hostile_page, HOME)).to_be_visible(timeout=TIMEOUT_MS)
        wait_for_app(hostile_page)
        assert not errors_on(hostile_page), (visit, errors_on(hostile_page))


def test_a_path_named_like_a_page_file_leads_to_the_dashboard_not_a_traceback(hostile_server, hostile_page):
    """/runs, /value: Streamlit's folder navigation runs pages/<name>.py alone, without app.py and its sidebar
    (before st.navigation is called in a session); the page sends the visitor to the dashboard instead."""
    from playwright.sync_api import expect

    for name in ("runs", "value", "monitor"):
        hostile_page.goto(f"{hostile_server}/{name}")
        expect(heading(hostile_page, HOME)).to_be_visible(timeout=TIMEOUT_MS)
        wait_for_app(hostile_page)
        main = hostile_page.locator('[data-testid="stMain"]').inner_text()
        assert "RuntimeError" not in main and "Traceback" not in main, (name, main[:500])
        # Streamlit may say the path is no page of the app ("Page not found"), which is true; nothing else.
        others = [e for e in errors_on(hostile_page) if not e.startswith("Page not found")]
        assert not others, (name, others)


@pytest.mark.parametrize("path", ["verdict", "loaded-runs", "value-and-thresholds", "compare-models",
                                  "monitor-production"])
def test_hostile_names_and_link_parameters_render_as_text_in_the_browser(hostile_server, hostile_page, path):
    from playwright.sync_api import expect

    query = urllib.parse.urlencode({
        "src": "folder:runs",
        "[Sign in again](http://127.0.0.1:9/login)": "1",
        "m": json.dumps(["![x](http://127.0.0.1:9/x.png)", HOSTILE, HOSTILE_2]),
        "rule": HOSTILE,
        "tune": "**B** $M$ ![i](/i.png)",
    })
    hostile_page.goto(f"{hostile_server}/{path}?{query}")
    expect(hostile_page.locator('[data-testid="stSidebar"]')).to_contain_text("Sign in again", timeout=TIMEOUT_MS)
    wait_for_app(hostile_page)
    expect(hostile_page.locator('[data-testid="stMain"]')).to_contain_text("**B**", timeout=TIMEOUT_MS)
    if shots := os.environ.get("E2E_SCREENSHOTS"):  # to look at; a whole-page picture asserts nothing and costs
        hostile_page.screenshot(path=str(Path(shots) / f"hostile-{path}.png"), full_page=True)
    assert not rendered_from_data(hostile_page), rendered_from_data(hostile_page)
    assert not hostile_page.requests_to_bad_host, hostile_page.requests_to_bad_host
    assert not hostile_page.locator('[data-testid="stException"]').count()
