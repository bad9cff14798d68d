"""The browser tests' shared fixtures: one app server per test process (an xdist worker), beside the one Chromium
(``browser``, tests/conftest.py),
shared by every module that uses them, since starting them is what costs (20-35 s each on 2 busy cores).

The helpers they use live in ``helpers.browser``. Modules that need a server of another kind (allowed
roots, hostile files) start their own; a test that needs a freshly started server starts one itself, but for the
case the shared server's first request covers (FIRST_LINK).
"""

from __future__ import annotations


import pytest

from helpers.browser import first_visit, new_page, streamlit_server, url_path, warm_up

# The shared server's first request: a shared link to a page with a value in it, as a first visitor may bring.
# test_deep_link_on_a_freshly_started_server judges what it showed (a server of its own costs 30-50 s on 2 busy
# cores), and opens the other kind of link (an old one) on a fresh server.
FIRST_LINK = (f"{url_path('constraints')}?vw=-10", "Capacity & guarantees")


@pytest.fixture(scope="session")
def shared_server(browser):
    """A server whose entry point has run once, for its first request (FIRST_LINK), that link and what it showed
    (helpers.browser.first_visit): the tests that share the server start from any page."""
    with streamlit_server() as url:
        context, page = new_page(browser, "shared-server-first-visit")
        try:
            seen = first_visit(page, url, *FIRST_LINK)
        finally:
            context.close()
        if "failed" in seen:  # the entry point may not have run: run it (that test reports the failure)
            warm_up(browser, url)
        yield url, FIRST_LINK, seen


@pytest.fixture(scope="session")
def server(shared_server):
    return shared_server[0]


@pytest.fixture
def page(browser, request):
    context, new = new_page(browser, request.node.name)
    try:
        yield new
    finally:
        context.close()
