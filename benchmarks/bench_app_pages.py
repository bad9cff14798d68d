"""Dashboard benchmark: the first visit of every page on five large runs.

Not a test: it prints figures and the goal, and asserts nothing.

Five synthetic 10-class runs of 10^6 predictions each (val and test splits of
5 x 10^5, Parquet, written by ``bench_app.synthetic_runs`` to a temporary
folder and read through the folder source; the models share their items, so
that the Compare page can pair them) are loaded once; then, for every
page, all of Streamlit's caches but the loaded runs are emptied, a new
session opens the app (the landing page, as every visitor does) and moves to
the page. The time of that move is the page's first visit: what a visitor
waits for after the files are read. Loading is timed apart (once per file
content; see the loader's section of benchmarks/README.md), and so is the
landing page's own first visit.

A second table visits every page in turn in one session, as a visitor
clicking through the menu does: there, what one page computed is served to
the next one from the cache.

Run: ``python benchmarks/bench_app_pages.py [--n 1000000] [--pages value,compare]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_app import synthetic_runs  # noqa: E402

GOAL_MS = 5000.0
HOME = "pages/home.py"
PAGES = {
    "home": ("Start here: the verdict", HOME),
    "runs": ("Runs", "pages/runs.py"),
    "value": ("Value & thresholds", "pages/value.py"),
    "voc": ("VOC curves", "pages/voc.py"),
    "cost_matrix": ("Cost matrix", "pages/cost_matrix.py"),
    "constraints": ("Capacity & guarantees", "pages/constraints.py"),
    "calibration": ("Calibration", "pages/calibration.py"),
    "compare": ("Compare two models", "pages/compare.py"),
    "monitor": ("Monitor (no labels)", "pages/monitor.py"),
    "export": ("Export policy", "pages/export.py"),
    "how_value_works": ("How value works", "pages/how_value_works.py"),
}


def _timed_run(at, what: str) -> float:
    start = time.perf_counter()
    at.run()
    elapsed = (time.perf_counter() - start) * 1000
    if at.exception:
        raise RuntimeError(f"{what}: {[e.value for e in at.exception]}")
    return elapsed


def _session(folder: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.query_params["src"] = f"folder:{folder}"
    return at


def _keep_only_the_loaded_runs(folder: str) -> float:
    """Empty every st.cache_resource / st.cache_data, then load the runs again (timed, ms)."""
    import streamlit as st

    from dashboard import data

    st.cache_resource.clear()
    st.cache_data.clear()
    start = time.perf_counter()
    report = data.load_folder(folder)
    if report.problems:
        raise RuntimeError([p.message for p in report.problems])
    return (time.perf_counter() - start) * 1000


def first_visits(folder: str, pages: list[str]) -> list[dict]:
    rows = []
    for name in pages:
        title, path = PAGES[name]
        load = _keep_only_the_loaded_runs(folder)
        at = _session(folder)
        landing = _timed_run(at, "landing page")
        visit = landing if path == HOME else _timed_run(at.switch_page(path), title)
        rows.append({"page": title, "load (ms)": load, "landing (ms)": landing, "first visit (ms)": visit})
        print(f"  {title:24s} first visit {visit:9,.0f} ms (landing {landing:,.0f} ms, load {load:,.0f} ms)",
              flush=True)
    return rows


def tour(folder: str, pages: list[str]) -> list[dict]:
    _keep_only_the_loaded_runs(folder)
    at = _session(folder)
    rows = [{"page": PAGES["home"][0], "in a tour (ms)": _timed_run(at, "landing page")}]
    for name in pages:
        title, path = PAGES[name]
        if path != HOME:
            rows.append({"page": title, "in a tour (ms)": _timed_run(at.switch_page(path), title)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="rows per synthetic run file")
    parser.add_argument("--pages", default=",".join(PAGES), help=f"comma-separated, among {','.join(PAGES)}")
    parser.add_argument("--no-tour", action="store_true", help="skip the visit of every page in one session")
    args = parser.parse_args()
    from streamlit import logger

    logger.set_log_level("error")  # not the bare-mode notices of every cache call made outside a session
    pages = [p for p in args.pages.split(",") if p]
    unknown = sorted(set(pages) - set(PAGES))
    if unknown:
        parser.error(f"unknown pages {unknown}")

    with tempfile.TemporaryDirectory(prefix="bench_app_pages_") as folder:
        folder = str(Path(folder).resolve())
        os.environ["VALUE_DASHBOARD_DATA_ROOTS"] = folder  # the operator allows this folder, and only it
        start = time.perf_counter()
        synthetic_runs(Path(folder), args.n, same_items=True)  # the Compare page pairs items
        print(f"wrote 5 synthetic runs of {args.n:,} rows in {time.perf_counter() - start:.1f} s; "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
        table = pd.DataFrame(first_visits(folder, pages))
        if not args.no_tour:
            table = table.merge(pd.DataFrame(tour(folder, pages)), on="page", how="left")
    table["within 5 s"] = (table["first visit (ms)"] <= GOAL_MS).map({True: "yes", False: "NO"})
    with pd.option_context("display.width", 200, "display.float_format", "{:,.0f}".format):
        print(table.to_string(index=False))
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end. 'first visit': the move from the landing page to "
          "the page, in a new session with nothing cached but the loaded runs; 'landing': that session's landing "
          "page; 'load': reading and checking the 5 files; 'in a tour': every page in turn in one session.")


if __name__ == "__main__":
    main()
