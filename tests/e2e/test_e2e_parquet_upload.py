"""A Parquet run uploaded in a real browser reads as the same run in CSV: the pages that read every probability
(Calibration, Values per class, Monitor) make the matrix the loader kept as Arrow's columns (``ColumnMatrix``)
and show what they show for the CSV file, word for word."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from helpers.browser import choose_upload, go_to, new_page, open_app, step, url_path, wait_for_app

pytestmark = pytest.mark.e2e
SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"
PAGES_READING_PROBABILITIES = ("Calibration", "Values per class", "Monitor (no labels)")


def main_text_of_each_page(browser, server: str, upload: Path) -> dict[str, str]:
    from playwright.sync_api import expect

    context, page = new_page(browser, f"parquet-{upload.suffix}")
    texts = {}
    try:
        with step(page, f"upload {upload.name}"):
            open_app(page, f"{server}/{url_path('runs')}", "Runs")
            choose_upload(page).set_input_files(upload)
            main = page.locator('[data-testid="stMain"]')
            expect(main).to_contain_text("1 model loaded")
            wait_for_app(page)
        for title in PAGES_READING_PROBABILITIES:
            with step(page, f"{upload.suffix} {title}"):
                go_to(page, title)
                page.wait_for_timeout(500)
                wait_for_app(page)
                assert page.locator('[data-testid="stException"]').count() == 0, title
                texts[title] = page.locator('[data-testid="stMain"]').inner_text()
                if shots := os.environ.get("E2E_SCREENSHOTS"):
                    page.screenshot(path=f"{shots}/upload{upload.suffix}-{title.split()[0].lower()}.png")
    finally:
        context.close()
    return texts


def test_a_parquet_upload_reads_as_its_csv(server, browser, tmp_path):
    frame = pd.read_csv(SAMPLES / "breast_cancer" / "mlp.csv")
    csv_path, parquet_path = tmp_path / "mlp.csv", tmp_path / "mlp.parquet"
    frame.to_csv(csv_path, index=False)
    frame.to_parquet(parquet_path, index=False)
    from_csv = main_text_of_each_page(browser, server, csv_path)
    from_parquet = main_text_of_each_page(browser, server, parquet_path)
    for title in PAGES_READING_PROBABILITIES:
        assert from_parquet[title].replace("mlp.parquet", "mlp.csv") == from_csv[title], title
        assert "Brier" in from_csv["Calibration"] or "calibrat" in from_csv["Calibration"].lower()
