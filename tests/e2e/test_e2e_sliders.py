"""The sidebar's value sliders in a real browser (Chromium via Playwright; harness of test_e2e_browser.py).

* Dragging the wrong answer's slider with the mouse, and moving the correct
  answer's with the keyboard, changes the first page's numbers to what the
  command line computes for the new ω, the box beside it and the link.
* The dragged value survives two page changes (the browser keeps its own copy
  of each widget's value, which once undid a setting on the next page).
* At 1280×800 and 1440×900 the three sliders, their boxes and the preset's
  label are inside the window and the sidebar, not cut (screenshots in
  test-artifacts/).
"""

from __future__ import annotations

import urllib.parse

import pytest

from helpers.browser import (
    ARTIFACTS,
    HOME,
    TIMEOUT_MS,
    best_by_command_line,
    errors_on,
    go_to,
    metric_value,
    open_app,
    step,
    value_input,
    wait_for_app,
)
from helpers.browser import value_slider

pytestmark = pytest.mark.e2e
LABELS = ("Correct answer", "Hand-off to a person", "Wrong answer")


def thumb_text(tab, label: str):
    return value_slider(tab, label).locator('[data-testid="stSliderThumbValue"]')


def url_value(tab, key: str) -> str | None:
    return urllib.parse.parse_qs(urllib.parse.urlparse(tab.url).query).get(key, [None])[0]


def shows_everywhere(tab, label: str, key: str, text: str) -> None:
    """Box, slider and link all say ``text``."""
    from playwright.sync_api import expect

    expect(value_input(tab, label)).to_have_value(text)
    expect(thumb_text(tab, label)).to_have_text(text)
    assert float(url_value(tab, key)) == float(text), tab.url


def test_dragging_a_slider_changes_the_first_page_and_survives_two_page_changes(server, page, tmp_path):
    from playwright.sync_api import expect

    with step(page, "open"):
        open_app(page, server, HOME)
        threshold = metric_value(page, "Threshold")
        expect(metric_value(page, "Penalty ω")).to_have_text("4")
        before = threshold.inner_text()
        assert errors_on(page) == []
    with step(page, "drag-wrong-answer"):
        track = value_slider(page, "Wrong answer").locator('[data-orientation="horizontal"]').first
        thumb = value_slider(page, "Wrong answer").locator('input[type="range"]')
        box = track.bounding_box()
        start_x = box["x"] + box["width"] * (int(thumb.get_attribute("value")) + 0.5) / (
            int(thumb.get_attribute("max")) + 1)
        y = box["y"] + box["height"] / 2
        page.mouse.move(start_x, y)
        page.mouse.down()
        # Near the left end: on the symmetric-log stops a wrong answer between -6 and -10 (ω = 4 and ω = 6 give
        # different thresholds on the digits runs; ω = 0.1 to 4 do not). The slider holds the negative stops only
        # (-1000 to 0, evenly spaced in relative terms: -10 at 40 %, -6 at 45 %): 42 % in lands near -8.4. The
        # reference is the best mean among one-threshold rules; from
        # ω ≈ 9.5 the recommendation (first page and `report --policy recommended` alike) is mlp at 0.946, not
        # random_forest at 0.390: the two are within noise and mlp's likely range starts higher, by design.
        page.mouse.move(box["x"] + box["width"] * 0.42, y, steps=8)
        page.mouse.up()
        expect(metric_value(page, "Penalty ω")).not_to_have_text("4")
        wait_for_app(page)
        dragged = thumb_text(page, "Wrong answer").inner_text().strip()
        v_wrong = float(dragged)
        assert -10.0 <= v_wrong <= -6.0, dragged
        shows_everywhere(page, "Wrong answer", "vw", dragged)
        omega = -v_wrong
        expect(metric_value(page, "Penalty ω")).to_have_text(f"{omega:.3g}")
        _, threshold_cli = best_by_command_line(omega, tmp_path)
        expect(threshold).to_have_text(threshold_cli)
        assert threshold.inner_text() != before, "pick another drag: the threshold did not move"
        assert errors_on(page) == []
    with step(page, "keyboard-correct-answer"):
        thumb = value_slider(page, "Correct answer").locator('input[type="range"]')
        thumb.focus()
        page.keyboard.press("ArrowRight")
        expect(value_input(page, "Correct answer")).to_have_value("1.02")
        wait_for_app(page)
        shows_everywhere(page, "Correct answer", "vc", "1.02")
        expect(metric_value(page, "Penalty ω")).to_have_text(f"{omega / 1.02:.3g}")
    with step(page, "two-page-changes"):
        go_to(page, "Value & thresholds")
        go_to(page, "VOC curves")
        shows_everywhere(page, "Wrong answer", "vw", dragged)
        shows_everywhere(page, "Correct answer", "vc", "1.02")
        expect(metric_value(page, "Penalty ω")).to_have_text(f"{omega / 1.02:.3g}")
        assert errors_on(page) == []


def test_typing_a_value_beyond_the_slider_moves_the_slider_to_it(server, page):
    from playwright.sync_api import expect

    with step(page, "type"):
        open_app(page, server, HOME)
        field = value_input(page, "Wrong answer")
        field.fill("-250")
        field.press("Enter")
        expect(metric_value(page, "Penalty ω")).to_have_text("250")
        wait_for_app(page)
        shows_everywhere(page, "Wrong answer", "vw", "-250")
        assert errors_on(page) == []


SIZES = ((1280, 800), (1440, 900))


def test_the_values_and_the_preset_are_above_the_fold_and_not_cut(server, browser):
    """At 1280×800 and 1440×900: one visit, the window resized (the browser lays the sidebar out again)."""
    width, height = SIZES[0]
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(TIMEOUT_MS)
    window = context.new_page()
    window.test_name = "sidebar"
    try:
        with step(window, "open"):
            _open(window, server)
        for width, height in SIZES:
            with step(window, f"look-{width}x{height}"):
                window.set_viewport_size({"width": width, "height": height})
                _look(window, width, height)
    finally:
        context.close()


def _open(tab, url: str) -> None:
    """Open the first page and wait for the sidebar's values to be drawn."""
    from playwright.sync_api import expect

    open_app(tab, url, HOME)
    for label, shown in zip(LABELS, ("1", "0", "-4")):  # drawn, not a placeholder
        expect(value_input(tab, label)).to_have_value(shown)
    expect(tab.locator('[data-testid="stSkeleton"]')).to_have_count(0)


def _look(tab, width: int, height: int) -> None:
    """Screenshot the first page at this size, and check the values and the preset are in view."""
    tab.wait_for_timeout(300)  # let the sidebar's layout settle before measuring it
    ARTIFACTS.mkdir(exist_ok=True)
    tab.screenshot(path=str(ARTIFACTS / f"sidebar_{width}x{height}.png"))
    sidebar = tab.locator('[data-testid="stSidebar"]').bounding_box()
    parts = {}
    for label in LABELS:
        parts[f"{label} slider"] = value_slider(tab, label)
        parts[f"{label} box"] = value_input(tab, label)
    preset = tab.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(
        has_text="start from a preset")
    parts["preset label"] = preset.locator('[data-testid="stWidgetLabel"]')
    for name, part in parts.items():
        box = part.bounding_box()
        assert box is not None, f"{name} is not drawn"
        assert box["y"] >= 0 and box["y"] + box["height"] <= height, f"{name} is below the fold: {box}"
        assert box["x"] >= sidebar["x"] and box["x"] + box["width"] <= sidebar["x"] + sidebar["width"], (
            f"{name} is cut at the sidebar's edge: {box}")
    # The preset's label and chosen option are shown whole (no text wider than its box).
    text_fits = preset.evaluate(
        "e => [...e.querySelectorAll('*')].filter(x => x.children.length === 0 && x.textContent.trim())"
        ".every(x => x.scrollWidth <= x.clientWidth + 1)")
    assert text_fits, "the preset's label or option is cut"
