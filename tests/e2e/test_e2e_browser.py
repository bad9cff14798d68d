"""End to end in a real browser: the dashboard as a user meets it.

Starts ``streamlit run app.py`` on a free port, drives Debian's Chromium through
Playwright for Python (never Playwright's own browser download), and checks:
the app loads without errors; a deep link works on a freshly started server;
every page opens from the sidebar and the sidebar's values survive page changes
(also quick ones); changing the wrong-answer value changes the tuned threshold
to the one ``valuecore report`` computes; the exported policy JSON downloads,
matches the schema and restores; a malformed upload is reported with its file name.

Without Chromium the tests are skipped, unless ``REQUIRE_BROWSER=1`` (CI), then
they fail. Set ``CHROMIUM_PATH`` to use another Chromium binary. On failure a
screenshot and the page's text go to ``test-artifacts/``.

The harness (``streamlit_server``, ``chromium``, ``wait_for_app``, ...) lives in
``tests/helpers/browser.py``; ``docs/take_screenshots.py`` uses it too.
"""

from __future__ import annotations

import contextlib
import json
import re
import time

import pytest
from helpers.browser import (
    HOME, ROOT, TIMEOUT_MS, assert_default_use_case, best_by_command_line, choose, choose_upload, errors_on,
    first_visit, go_to, metric_value, new_page, open_app, step, streamlit_server, url_path, use_case_in_url,
    value_input, wait_for_app,
)

SCHEMA = ROOT / "valuecore" / "policy.schema.json"


def best_model_tile(page):
    """The Value page's best-model tile: "Best model", or "Highest on these items" when the data cannot
    tell the best from other models."""
    tiles = page.locator('[data-testid="stMetric"]').filter(has_text=re.compile("Best model|Highest on these items"))
    return tiles.locator('[data-testid="stMetricValue"]')


# ---------------------------------------------------------------- tests
pytestmark = pytest.mark.e2e


# One page's path and one old link's: every URL path hands over through the same function, and
# tests/app/test_pages_are_layouts.py checks that each has its file and that the file only hands over. Each case
# needs a server whose first request is its link, so the list is kept to one of each kind; the first is the shared
# server's own first request (tests/e2e/conftest.py, FIRST_LINK), the other starts a server of its own.
@pytest.mark.parametrize(("path", "title"), [
    (url_path("constraints"), "Capacity & guarantees"),
    ("cost-matrix", "Values per class"),  # an old link, kept by a hidden twin
])
def test_deep_link_on_a_freshly_started_server(page, browser, shared_server, path, title):
    """The first visitor of a new server may arrive through a shared link to a page, not the front page:
    the page opens with the link's values, without a dialog, and so does a later visitor's link.

    Until the entry point has run once in the server process, a folder named ``pages/`` (our layout) puts
    Streamlit 1.67 in its legacy multipage mode: ``script_runner._mpa_v1`` runs the file of ``pages/``
    whose name is the link's path and sends ``page_not_found`` ("Page not found") for any other path,
    before app.py runs. Each URL path has a file of its name that hands the run to app.py
    (``dashboard.hand_over_to_the_frame``); without those files this test sees the dialog.
    """
    from playwright.sync_api import expect

    link = f"{path}?vw=-10"
    shared, first_link, first_seen = shared_server
    with contextlib.ExitStack() as servers:
        if first_link == (link, title):  # the shared server's first request was this link
            base, seen = shared, first_seen
        else:
            base = servers.enter_context(streamlit_server())
            seen = first_visit(page, base, link, title)
        with step(page, f"deep-link-{path}"):
            assert "failed" not in seen, f"the first visitor's deep link did not open: {seen.get('failed')}"
            assert seen["errors"] == [], "the first visitor's deep link shows a dialog or an error"
            assert seen["penalty"] == "10", f"Penalty ω says {seen['penalty']!r} for the link's vw=-10"
            assert seen["url"].split("?")[0].endswith(f"/{path}"), seen["url"]

            second = browser.new_context().new_page()
            try:
                open_app(second, f"{base}/{url_path('voc')}?vw=-2", "VOC curves")
                assert errors_on(second) == [], "a later visitor's deep link shows a dialog or an error"
                expect(metric_value(second, "Penalty ω")).to_have_text("2")
            finally:
                second.context.close()


def test_sidebar_values_survive_a_quick_page_change(server, browser):
    """Visitors who open another page the moment the first one is drawn keep their use case.

    What went wrong was a race in the browser (the sidebar's sliders and inputs fell back to their
    defaults, -50 and 0, which the next rerun then stored), so each visit showed it only sometimes
    (about two visits in three on a 2-core machine): three visits make a miss unlikely.
    """
    for visit in range(3):
        context, page = new_page(browser, f"quick-page-change-{visit}")
        try:
            with step(page, "visit"):
                open_app(page, server, HOME)
                go_to(page, "Value & thresholds")  # at once, with no check in between: that is the point
                go_to(page, "VOC curves")
                assert_default_use_case(page, f"after two quick page changes (visit {visit + 1} of 3)")
        finally:
            context.close()


def test_wrong_answer_value_moves_the_threshold(server, page, tmp_path):
    from playwright.sync_api import expect

    best_4, threshold_4 = best_by_command_line(4, tmp_path)
    best_30, threshold_30 = best_by_command_line(30, tmp_path)
    assert threshold_4 != threshold_30, "pick another V_wrong: the command line gives the same threshold"
    with step(page, "open-value"):
        open_app(page, f"{server}/{url_path('value')}", "Value & thresholds")
        threshold = metric_value(page, "Its threshold")
        expect(metric_value(page, "Penalty ω")).to_have_text("4")
        expect(best_model_tile(page)).to_have_text(best_4)
        expect(threshold).to_have_text(threshold_4)
        assert errors_on(page) == []
    with step(page, "type-v-wrong"):
        field = value_input(page, "Wrong answer")
        field.fill("-30")
        field.press("Enter")
        expect(metric_value(page, "Penalty ω")).to_have_text("30")
        expect(threshold).not_to_have_text(threshold_4)
        wait_for_app(page)
        expect(best_model_tile(page)).to_have_text(best_30)
        expect(threshold).to_have_text(threshold_30)
        assert "vw=-30.0" in page.url, "the URL should carry the new value"
        assert errors_on(page) == []


def test_export_downloads_a_valid_policy_json(server, page, tmp_path):
    import jsonschema
    from playwright.sync_api import expect

    with step(page, "open-export"):
        open_app(page, f"{server}/{url_path('export')}", "Export policy")
        assert errors_on(page) == []
        button = page.locator('[data-testid="stDownloadButton"]').filter(has_text="Download policy JSON")
        expect(button).to_be_visible()
    with step(page, "download"):
        with page.expect_download() as info:
            button.locator("button").click()
        download = info.value
        assert download.suggested_filename == "policy.json"
        saved = tmp_path / "policy.json"
        download.save_as(saved)
        document = json.loads(saved.read_text(encoding="utf-8"))
        jsonschema.validate(document, json.loads(SCHEMA.read_text(encoding="utf-8")))
        assert {entry["model"] for entry in document["models"]} == {
            "logreg", "mlp", "naive_bayes", "random_forest", "svm_rbf"}
        assert document["use_case"]["v_wrong"] == -4
    with step(page, "restore"):
        document["use_case"].update(v_wrong=-7.5, omega=7.5)
        changed = tmp_path / "changed.json"
        changed.write_text(json.dumps(document), encoding="utf-8")
        page.locator('[data-testid="stMain"] [data-testid="stFileUploaderDropzoneInput"]').set_input_files(changed)
        expect(page.get_by_text("Restored from the file changed.json")).to_be_visible()
        expect(metric_value(page, "Penalty ω")).to_have_text("7.5")
        wait_for_app(page)
        assert errors_on(page) == []
    with step(page, "restored-stays"):  # in force on the next pages, in the sidebar and in the URL
        go_to(page, "VOC curves")
        go_to(page, "Value & thresholds")
        expect(metric_value(page, "Penalty ω")).to_have_text("7.5")
        expect(value_input(page, "Wrong answer")).to_have_value("-7.5")
        assert use_case_in_url(page)["vw"] == "-7.5"


def test_a_page_button_stays_in_force_in_the_browser(server, page):
    """The Calibration page's "Use ... on every page": the sidebar shows it at once, and it stays after
    two more pages (the browser keeps its own copy of each widget's value, which must follow)."""
    from playwright.sync_api import expect

    sidebar_calibration = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(
        has_text="Recalibrate before thresholding").get_by_role("combobox")
    with step(page, "open-calibration"):
        open_app(page, f"{server}/{url_path('calibration')}?vw=-5", "Calibration")
        expect(sidebar_calibration).to_have_value(re.compile("^none", re.I))
    with step(page, "use-on-every-page"):
        page.locator('[data-testid="stButton"]').filter(has_text="on every page").locator("button").click()
        wait_for_app(page)
        expect(sidebar_calibration).to_have_value(re.compile("^temperature", re.I))
    with step(page, "two-more-pages"):
        go_to(page, "Value & thresholds")
        go_to(page, "VOC curves")
        expect(sidebar_calibration).to_have_value(re.compile("^temperature", re.I))
        assert "cal=temperature" in page.url, page.url


def main_text(page) -> str:
    """The main area's text (what the page says, without the sidebar)."""
    return page.locator('[data-testid="stMain"]').inner_text(timeout=TIMEOUT_MS)


def settled_main_text(page) -> str:
    """The main area's text once the page has finished drawing: the same on two reads a second apart.

    A loaded machine may report the script as finished while the browser is still laying out its last
    elements; reading then would capture half a page.
    """
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    wait_for_app(page)
    text = main_text(page)
    while time.monotonic() < deadline:
        page.wait_for_timeout(1_000)
        wait_for_app(page)
        again = main_text(page)
        if again == text:
            return text
        text = again
    return text


def test_a_link_opened_in_a_fresh_browser_shows_the_same_page(server, browser, page):
    """Change a value, the decision rule and page-level choices (the VOC mode; the Value page's tuning-split
    curves and histogram model); the page's URL, opened in a fresh browser context (a new session), shows the
    same text in the main area and the same choices."""
    from playwright.sync_api import expect

    with step(page, "open-value"):
        open_app(page, f"{server}/{url_path('value')}?src=sample:breast_cancer", "Value & thresholds")
    with step(page, "change-value"):
        field = value_input(page, "Wrong answer")
        field.fill("-4.1234567")
        field.press("Enter")
        expect(metric_value(page, "Penalty ω")).to_have_text("4.12")
        wait_for_app(page)
    with step(page, "change-rule"):
        rule = page.locator('[data-testid="stMain"] [data-testid="stRadio"]').filter(has_text="Decision rule")
        rule.get_by_text("Per-class thresholds, tuned", exact=True).click()
        wait_for_app(page)
        expect(page.get_by_text("Per-class thresholds, tuned", exact=True)).to_be_visible()
    with step(page, "page-level-choice"):
        go_to(page, "VOC curves")
        mode = page.locator('[data-testid="stMain"] [data-testid="stRadio"]').filter(has_text="Thresholds")
        mode.get_by_text(re.compile("^Best possible")).click()
        wait_for_app(page)
        expect(page.get_by_text(re.compile("The best possible curve"))).to_be_visible()
        voc_text = settled_main_text(page)
        voc_link = page.url
        go_to(page, "Value & thresholds")
    with step(page, "value-page-choices"):
        main = page.locator('[data-testid="stMain"]')
        tuning = main.locator('[data-testid="stCheckbox"]').filter(has_text="Also draw the tuning split")
        tuning.locator("label").click()
        expect(page).to_have_url(re.compile(r"[?&]showtune=1(&|$)"))  # the rerun it starts has run
        wait_for_app(page)
        expect(tuning.locator("input")).to_be_checked()
        histogram_model = main.locator('[data-testid="stSelectbox"]').filter(has_text="Model")
        pick = "naive_bayes" if histogram_model.get_by_role("combobox").input_value() != "naive_bayes" else "mlp"
        choose(page, histogram_model, pick)
        expect(page).to_have_url(re.compile(rf"[?&]hist={pick}(&|$)"))
        wait_for_app(page)
        expect(histogram_model.get_by_role("combobox")).to_have_value(pick)
        value_text = settled_main_text(page)
        value_link = page.url
    for link in (value_link, voc_link):
        assert "vw=-4.1234567" in link and "rule=class_thresholds" in link and "voc=oracle" in link, link
    assert f"hist={pick}" in value_link and "showtune=1" in value_link, value_link
    for link, title, shown in ((value_link, "Value & thresholds", value_text), (voc_link, "VOC curves", voc_text)):
        context, fresh = new_page(browser, f"link-{title}")
        try:
            with step(fresh, f"fresh-{title}"):
                open_app(fresh, link, title)
                assert errors_on(fresh) == []
                expect(metric_value(fresh, "Penalty ω")).to_have_text("4.12")
                # A loaded machine may still be drawing the page: wait for it to settle, then compare.
                deadline = time.monotonic() + TIMEOUT_MS / 1000
                while main_text(fresh) != shown and time.monotonic() < deadline:
                    fresh.wait_for_timeout(500)
                    wait_for_app(fresh)
                assert main_text(fresh) == shown
                if title == "Value & thresholds":  # choices shown by widgets, not as text
                    main = fresh.locator('[data-testid="stMain"]')
                    checkbox = main.locator('[data-testid="stCheckbox"]').filter(has_text="Also draw the tuning split")
                    expect(checkbox.locator("input")).to_be_checked()
                    histogram_model = main.locator('[data-testid="stSelectbox"]').filter(has_text="Model")
                    expect(histogram_model.get_by_role("combobox")).to_have_value(pick)
        finally:
            context.close()


def test_malformed_upload_is_reported_with_its_file_name(server, page, tmp_path):
    from playwright.sync_api import expect

    bad = tmp_path / "broken_model.csv"
    bad.write_text("y_true,proba_a,proba_b\na,0.5,oops\nb,0.2,0.8\n", encoding="utf-8")
    with step(page, "open-runs"):
        open_app(page, f"{server}/{url_path('runs')}", "Runs")  # the page a link opens: one run, not two
    with step(page, "choose-upload"):
        uploader = choose_upload(page)
    with step(page, "upload"):
        uploader.set_input_files(bad)
        error = page.locator('[data-testid="stMain"] [data-testid="stAlertContentError"]')
        expect(error.first).to_contain_text("broken_model.csv")
        expect(error.first).to_contain_text("proba_b")
        wait_for_app(page)
        assert page.locator('[data-testid="stException"]').count() == 0
