"""Uploads that behave, in a real browser: a corrected file uploaded under the same name replaces the first,
and removing a file removes its model (Playwright's ``set_input_files`` on the sidebar's drop zone)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pandas as pd

import pytest

from helpers.browser import (
    choose_upload, open_app, step, url_path, wait_for_app,
)

pytestmark = pytest.mark.e2e
SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"


def rows_of_last_split(content: bytes) -> str:
    """How the Runs table describes the split of the file's last row, e.g. "prod: 1,008" (its header says rows)."""
    splits = pd.read_csv(io.BytesIO(content))["split"]
    return f"{splits.iloc[-1]}: {int((splits == splits.iloc[-1]).sum()):,}"


def test_upload_again_replaces_and_remove_removes(server, page, tmp_path):  # noqa: F811 (fixtures)
    from playwright.sync_api import expect

    first = (SAMPLES / "breast_cancer" / "mlp.csv").read_bytes()
    corrected = first[: first.rstrip(b"\n").rfind(b"\n") + 1]  # the last row dropped
    upload = tmp_path / "mlp.csv"
    main = page.locator('[data-testid="stMain"]')
    sidebar = page.locator('[data-testid="stSidebar"]')
    with step(page, "open-runs"):
        open_app(page, f"{server}/{url_path('runs')}", "Runs")  # the page a link opens: one run, not two
        uploader = choose_upload(page)
    with step(page, "upload"):
        upload.write_bytes(first)
        uploader.set_input_files(upload)
        expect(main).to_contain_text("1 model loaded")
        wait_for_app(page)
        expect(main).to_contain_text(rows_of_last_split(first))
    with step(page, "upload-again"):
        upload.write_bytes(corrected)
        sidebar.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(upload)
        expect(main).to_contain_text(rows_of_last_split(corrected))
        wait_for_app(page)
        expect(main).to_contain_text("1 model loaded")
        assert "already loaded" not in main.inner_text()
        expect(sidebar).to_contain_text("Replaced by the new upload of the same name: mlp.csv")
        if shots := os.environ.get("E2E_SCREENSHOTS"):
            page.screenshot(path=f"{shots}/upload-replaced.png")
        assert page.locator('[data-testid="stException"]').count() == 0
    with step(page, "remove"):
        sidebar.get_by_role("button", name="Remove", exact=True).click()
        expect(main).to_contain_text("Upload one CSV or Parquet file per model")
        wait_for_app(page)
        if shots := os.environ.get("E2E_SCREENSHOTS"):
            page.wait_for_timeout(1500)
            page.screenshot(path=f"{shots}/upload-removed.png")
        expect(sidebar.locator('[data-testid="stMultiSelect"]')).to_have_count(0)  # no stale chip of mlp
