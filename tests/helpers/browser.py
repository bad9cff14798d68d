"""The browser tests' harness: a Streamlit server on a free port, Chromium driven by Playwright, and the
steps a user takes (open the app, go to a page, choose an upload), each with its screenshot on failure."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

# ---------------------------------------------------------------- first written for test_e2e_browser.py
ROOT = Path(__file__).resolve().parents[2]


ARTIFACTS = ROOT / "test-artifacts"


CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


TIMEOUT_MS = 30_000  # one rerun of a page; the sample runs take well under a second once cached


# title in the sidebar navigation -> the page's heading (URL paths are read from app.py, see url_path)
HOME = "Which model should we deploy?"  # the heading of the default (landing) page


PAGES = {
    "Start here: the verdict": HOME,
    "Runs": "Runs",
    "Value & thresholds": "Value & thresholds",
    "VOC curves": "VOC curves",
    "Values per class": "Values per class",
    "Calibration": "Calibration",
    "Compare two models": "Compare two models",
    "Monitor (no labels)": "Monitor",
    "Export policy": "Export policy",
    "How value works": "How value works",
}


# ---------------------------------------------------------------- harness
def chromium_path() -> str | None:
    """The Chromium to drive: ``$CHROMIUM_PATH`` or ``/usr/bin/chromium``; None when absent."""
    candidate = os.environ.get("CHROMIUM_PATH") or "/usr/bin/chromium"
    if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
        return candidate
    return shutil.which(candidate)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no output)"


def stop(process) -> None:
    """End a server process: asked first, killed if it does not stop within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@contextlib.contextmanager
def streamlit_server(timeout: float = 60.0, script: str = "app.py"):
    """Run ``streamlit run <script>`` (app.py by default) on a free port; yield its base URL; always stop it.

    The server's output goes to a log file (a pipe could fill up and block it);
    its tail is in every error message.
    """
    port = free_port()
    command = [
        sys.executable, "-m", "streamlit", "run", script,
        "--server.headless", "true",
        "--server.address", "127.0.0.1",
        "--server.port", str(port),
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",  # a file edited during a run must not trigger reruns
    ]
    with tempfile.TemporaryDirectory(prefix="e2e-streamlit-") as tmp:
        log_path = Path(tmp) / "server.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + timeout
            while True:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"streamlit exited with code {process.returncode} before answering on port {port}:\n"
                        + _tail(log_path)
                    )
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                        if response.read().strip() == b"ok":
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"streamlit did not answer {url}/_stcore/health with 'ok' within {timeout:.0f} s:\n"
                        + _tail(log_path)
                    )
                time.sleep(0.2)
            yield url
        finally:
            stop(process)


@contextlib.contextmanager
def chromium(executable: str):
    """Launch the given Chromium headless through Playwright; yield the browser; always close it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def wait_for_app(page, timeout: int = TIMEOUT_MS) -> None:
    """Wait until the app is connected and no script run is under way.

    Reruns are asynchronous: call this after checking (with ``expect``) for
    something the action changes, so that the run being waited for has started.
    """
    from playwright.sync_api import expect

    app = page.locator('[data-testid="stApp"]')
    expect(app).to_have_attribute("data-test-connection-state", "CONNECTED", timeout=timeout)
    expect(app).to_have_attribute("data-test-script-state", "notRunning", timeout=timeout)
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=timeout)


def errors_on(page) -> list[str]:
    """The text of every exception, error box and dialog (e.g. Streamlit's "Page not found") shown."""
    boxes = page.locator('[data-testid="stException"], [data-testid="stAlertContentError"], [role="dialog"]')
    return [" ".join(text.split())[:500] for text in boxes.all_inner_texts()]


def heading(page, text: str):
    return page.locator("h1").filter(has_text=re.compile(r"^\s*" + re.escape(text)))


# ---------------------------------------------------------------- fixtures
def _need_browser(reason: str):
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason}, and REQUIRE_BROWSER=1 says the browser test must run. "
                    "Install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH.", pytrace=False)
    pytest.skip(reason)


def warm_up(browser, url: str) -> None:
    """Run the entry point once in a throwaway session: the server's first run (imports, the sample runs'
    caches) is paid here, so that the tests sharing one server do not depend on which of them comes first.

    A fresh server's first request may be a deep link: test_deep_link_on_a_freshly_started_server checks that
    case with :func:`first_visit` (the e2e tests' shared server is warmed up by one).
    """
    from playwright.sync_api import expect

    context = browser.new_context()
    try:
        first = context.new_page()
        first.goto(url)
        expect(first.locator('[data-testid="stMain"] h1').first).to_be_visible(timeout=TIMEOUT_MS)
        wait_for_app(first)
    finally:
        context.close()


def first_visit(page, base: str, link: str, title: str) -> dict:
    """Open ``base/link`` (a server's first request, when the server is fresh) and note what a visitor sees:
    ``errors`` (errors_on), ``penalty`` (the Penalty ω tile once it says what the link's ``vw`` makes it, or
    what it says instead) and ``url``; or ``failed``, why the page did not open. Notes rather than asserts, so
    that a fixture can make this visit and a test judge it.
    """
    from playwright.sync_api import expect

    omega = str(-float(urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["vw"][0])).removesuffix(".0")
    try:
        with step(page, f"first-visit-{link.split('?')[0]}"):
            open_app(page, f"{base}/{link}", title)
    except Exception as error:  # noqa: BLE001 (noted for the test; the step saved a screenshot)
        return {"failed": f"{type(error).__name__}: {error}"}
    seen = {"errors": errors_on(page), "url": page.url}
    penalty = metric_value(page, "Penalty ω")
    with contextlib.suppress(AssertionError):
        expect(penalty).to_have_text(omega, timeout=TIMEOUT_MS)
    seen["penalty"] = " ".join(penalty.all_inner_texts())
    return seen


def new_page(browser, name: str):
    """A fresh browser context (own cookies, storage, downloads: a new Streamlit session) and its page."""
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.test_name = name  # names the failure screenshots
    return context, page


@contextlib.contextmanager
def step(page, name: str):
    """Run one step; on failure save a screenshot and the page's text in test-artifacts/."""
    try:
        yield
    except BaseException:
        ARTIFACTS.mkdir(exist_ok=True)
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{getattr(page, 'test_name', 'e2e')}-{name}")
        with contextlib.suppress(Exception):
            page.screenshot(path=str(ARTIFACTS / f"{stem}.png"), full_page=True, timeout=10_000)
        with contextlib.suppress(Exception):
            (ARTIFACTS / f"{stem}.txt").write_text(f"{page.url}\n\n{page.inner_text('body', timeout=5_000)}")
        raise


def open_app(page, url: str, title: str) -> None:
    """Load ``url`` in a new session and wait for the page with heading ``title`` to finish running."""
    from playwright.sync_api import expect

    page.goto(url)
    expect(heading(page, title)).to_be_visible(timeout=TIMEOUT_MS)
    wait_for_app(page)


def url_path(page: str) -> str:
    """The URL path app.py gives the page whose file is ``<page>.py`` ("" for the default page).

    Read from app.py's ``st.Page(...)`` calls, whatever folder the page files live in.
    """
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str) and Path(node.args[0].value).name == f"{page}.py"):
            keywords = {k.arg: k.value for k in node.keywords}
            if isinstance(keywords.get("default"), ast.Constant) and keywords["default"].value is True:
                return ""
            if isinstance(keywords.get("url_path"), ast.Constant):
                return keywords["url_path"].value
            return page
    raise AssertionError(f"app.py defines no st.Page for {page}.py")


def go_to(page, title: str) -> None:
    """Open a page through its sidebar navigation link (same session) and wait for it to finish."""
    from playwright.sync_api import expect

    link = page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title, exact=True)
    link.click(timeout=TIMEOUT_MS)
    expect(heading(page, PAGES[title])).to_be_visible(timeout=TIMEOUT_MS)
    wait_for_app(page)


def use_case_in_url(page) -> dict:
    query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    return {key: query.get(key, [None])[0] for key in ("vc", "va", "vw")}


def assert_default_use_case(page, when: str = "on load") -> None:
    """The sidebar shows, and the session holds, the default use case: correct 1, hand-off 0, wrong -4."""
    from playwright.sync_api import expect

    # Settings at their defaults are left out of the link.
    assert use_case_in_url(page) == {"vc": None, "va": None, "vw": None}, f"the use case changed by itself {when}"
    expect(metric_value(page, "Penalty ω")).to_have_text("4", timeout=TIMEOUT_MS)
    for label, shown in (("Correct answer", "1"), ("Hand-off to a person", "0"), ("Wrong answer", "-4")):
        expect(value_input(page, label)).to_have_value(shown, timeout=TIMEOUT_MS)


def value_input(page, label: str):
    """The sidebar's exact number box for one outcome value ("Wrong answer ($)"), not the slider beside it."""
    boxes = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"]')
    return boxes.get_by_label(re.compile(re.escape(label)))


def choose(page, selectbox, option_name: str) -> None:
    """Open ``selectbox`` and click its option ``option_name``."""
    option = page.get_by_role("option", name=option_name, exact=True)
    # A rerun that lands just then closes the list, or redraws it under the pointer: wait for the app to be
    # idle, open the list unless it is open, and try again until the option is clicked.
    for _ in range(6):
        with contextlib.suppress(Exception):
            wait_for_app(page)
            if not option.is_visible():
                selectbox.click(timeout=5_000)
                option.wait_for(state="visible", timeout=5_000)
            option.click(timeout=5_000)
            return
    raise AssertionError(f"could not pick {option_name!r}: its list did not stay open")


def metric_value(page, label: str):
    return page.locator('[data-testid="stMetric"]').filter(has_text=label).locator('[data-testid="stMetricValue"]')


def choose_upload(page):
    """Pick "Upload run files" as the sidebar's data source; return the drop zone's file input."""
    from playwright.sync_api import expect

    sidebar = page.locator('[data-testid="stSidebar"]')
    choose(page, sidebar.locator('[data-testid="stSelectbox"]').filter(has_text="Data source"), "Upload run files")
    uploader = sidebar.locator('[data-testid="stFileUploaderDropzoneInput"]')
    expect(uploader).to_be_attached()
    wait_for_app(page)
    return uploader


def best_by_command_line(omega: float, tmp_path: Path) -> tuple[str, str]:
    """The best model on the digits sample runs and its tuned threshold as the Value page writes it (the
    digits that tell its decision apart on the tuning and evaluated splits), per ``valuecore report``."""
    from valuecore._cli.commands import main

    out = tmp_path / f"policy-omega-{omega:g}.json"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["report", str(ROOT / "sample_runs" / "digits"), "--omega", f"{omega:g}", "--policy", "threshold",
                     "--json", str(out)]) == 0  # the Value page's rule, for every model
    entries = json.loads(out.read_text(encoding="utf-8"))["models"]
    best = max(entries, key=lambda e: e["evaluation"]["value_per_item"])
    import numpy as np

    import valuecore as vc

    splits = vc.load_runs([str(ROOT / "sample_runs" / "digits")]).models[best["model"]].splits
    confidences = np.concatenate([splits[s].confidence for s in ("val", "test")])
    return best["model"], vc.wording.threshold(best["policy"]["threshold"], confidences)


# ---------------------------------------------------------------- first written for test_e2e_fit.py
# Text elements whose content must fit their box: headings, metric labels and values, tab labels, buttons.
_TRUNCATION_PROBE = """
() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const selectors = ['h1', 'h2', 'h3', '[data-testid="stMetricLabel"]', '[data-testid="stMetricValue"]',
                     '[data-testid="stMetricLabel"] *', '[data-testid="stMetricValue"] *', 'button p',
                     '[data-testid="stWidgetLabel"] p'];
  const cut = [];
  for (const element of main.querySelectorAll(selectors.join(','))) {
    if (!element.offsetParent) continue;  // not displayed (e.g. a closed expander)
    if (element.scrollWidth > element.clientWidth + 1) {
      const text = element.innerText.slice(0, 60);
      cut.push(`${element.tagName} "${text}" ${element.scrollWidth}px in ${element.clientWidth}px`);
    }
  }
  for (const grid of main.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller')) {
    if (!grid.offsetParent) continue;
    if (grid.scrollWidth > grid.clientWidth + 1) {
      const frame = grid.closest('[data-testid="stDataFrame"]');
      cut.push(`table ${grid.scrollWidth}px wide in ${grid.clientWidth}px (${frame.innerText.slice(0, 60)})`);
    }
  }
  return cut;
}
"""


def draw_every_table(page) -> None:
    """Scroll each shown table into view until its grid is drawn: a grid below the fold is drawn only once seen,
    and one not drawn has no width to measure (a table that scrolls sideways there read as fitting)."""
    from playwright.sync_api import expect

    frames = page.locator('[data-testid="stMain"] [data-testid="stDataFrame"]:visible')
    for i in range(frames.count()):
        frames.nth(i).scroll_into_view_if_needed()
        expect(frames.nth(i).locator(".dvn-scroller")).to_be_attached()
    page.mouse.wheel(0, -100_000)


# ---------------------------------------------------------------- first written for test_e2e_sliders.py
def value_slider(tab, label: str):
    """The sidebar's slider for one outcome value (its stSlider block)."""
    sliders = tab.locator('[data-testid="stSidebar"] [data-testid="stSlider"]')
    return sliders.filter(has=tab.get_by_text(re.compile(r"^\s*" + re.escape(label) + r" \(")))
