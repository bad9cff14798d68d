"""The browser tests' shared fixtures: one Chromium and one app server per test process (an xdist worker),
shared by every module that uses them, since starting them is what costs (20-35 s each on 2 busy cores).

The helpers they use live in ``test_e2e_browser``. Modules that need a server of another kind (allowed
roots, hostile files) start their own; a test that needs a freshly started server starts one itself.
"""

from __future__ import annotations

import os

import pytest

from helpers.browser import _need_browser, chromium, chromium_path, new_page, streamlit_server, warm_up


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _need_browser("the playwright package is not installed")
    executable = chromium_path()
    if executable is None:
        _need_browser(f"no Chromium at {os.environ.get('CHROMIUM_PATH') or '/usr/bin/chromium'}")
    return executable


@pytest.fixture(scope="session")
def browser(chromium_executable):
    with chromium(chromium_executable) as launched:
        yield launched


@pytest.fixture(scope="session")
def server(browser):
    """A server whose entry point has run once (see warm_up): the tests that share it start from any page."""
    with streamlit_server() as url:
        warm_up(browser, url)
        yield url


@pytest.fixture
def page(browser, request):
    context, new = new_page(browser, request.node.name)
    try:
        yield new
    finally:
        context.close()
