"""Dashboard benchmark: server-side time of a rerun after the user changes V_wrong.

Not a test: it prints figures and the goals, and asserts nothing.

(a) the digits sample runs (5 models, 450 evaluated items each) on the Value
    page and on the VOC page; goal < 150 ms per rerun;
(b) five synthetic 10-class runs of 10^6 predictions each (val and test
    splits of 5 x 10^5, written as Parquet to a temporary folder and loaded
    through the folder source); goal < 500 ms per rerun.

A rerun is timed with Streamlit's AppTest (the whole script: sidebar,
navigation, page, charts serialised); each rerun moves V_wrong to a new
value so nothing that depends on it comes from a cache. The first visit of
each page (loading, sorting, VOC curves, comparison table) is shown apart:
it is paid once per file content.

Run: ``python benchmarks/bench_app.py [--reruns 7] [--n 1000000] [--skip-large]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboard import serverfiles  # noqa: E402

GOALS = {"digits": 150.0, "synthetic": 500.0}
PAGES = (("Value & thresholds", "pages/value.py"), ("VOC curves", "pages/voc.py"))


def synthetic_runs(folder: Path, n: int, n_models: int = 5, n_classes: int = 10, seed: int = 0,
                   same_items: bool = False) -> None:
    """Write ``n_models`` Parquet run files of ``n`` rows (half val, half test), like real exports.

    Probabilities are rounded to 4 decimals, as exported scores usually are,
    so many confidences tie; the rounding residue goes to the top class so
    rows still sum to 1. With ``same_items`` every model sees the same items
    (the same true label row by row), as models compared on one test set do.
    """
    rng = np.random.default_rng(seed)
    split = np.where(np.arange(n) < n // 2, "val", "test")
    shared = rng.integers(0, n_classes, n) if same_items else None
    for m in range(n_models):
        y = shared if same_items else rng.integers(0, n_classes, n)
        logits = rng.normal(size=(n, n_classes)) * 1.5
        logits[np.arange(n), y] += 1.5 + 0.4 * m
        proba = np.exp(logits - logits.max(axis=1, keepdims=True))
        proba /= proba.sum(axis=1, keepdims=True)
        proba = np.round(proba, 4)
        top = proba.argmax(axis=1)
        proba[np.arange(n), top] += 1.0 - proba.sum(axis=1)
        frame = pd.DataFrame({f"proba_{c}": proba[:, c] for c in range(n_classes)})
        frame.insert(0, "y_true", y.astype(str))
        frame.insert(0, "split", split)
        frame.to_parquet(folder / f"model_{m}.parquet", index=False)


def time_page(at: AppTest, page: str, reruns: int) -> tuple[float, list[float]]:
    """(first visit in ms, rerun times in ms after each V_wrong change)."""
    start = time.perf_counter()
    at.switch_page(page).run()
    first = (time.perf_counter() - start) * 1000
    if at.exception:
        raise RuntimeError(f"{page}: {[e.value for e in at.exception]}")
    times = []
    for i in range(reruns + 1):
        at.sidebar.number_input(key="sidebar_v_wrong_input").set_value(-4.0 - 0.5 * (i + 1))
        start = time.perf_counter()
        at.run()
        elapsed = (time.perf_counter() - start) * 1000
        if at.exception:
            raise RuntimeError(f"{page}: {[e.value for e in at.exception]}")
        if i > 0:  # the first change also warms what the page caches per setting
            times.append(elapsed)
    return first, times


def bench(label: str, source: str, reruns: int) -> list[dict]:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.query_params["src"] = source
    start = time.perf_counter()
    at.run()
    load = (time.perf_counter() - start) * 1000
    if at.exception:
        raise RuntimeError([e.value for e in at.exception])
    n_models = len(at.session_state["selection"].models)
    if n_models == 0:  # timing an empty page would measure nothing
        raise RuntimeError(f"{label}: no run loaded from {source!r}")
    rows = []
    for title, page in PAGES:
        first, times = time_page(at, page, reruns)
        rows.append({
            "runs": label,
            "models": n_models,
            "page": title,
            "first load (ms)": load,
            "first visit (ms)": first,
            "rerun median (ms)": statistics.median(times),
            "rerun min (ms)": min(times),
            "rerun max (ms)": max(times),
            "goal (ms)": GOALS[label],
        })
        load = float("nan")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=7, help="timed reruns per page (median reported)")
    parser.add_argument("--n", type=int, default=1_000_000, help="rows per synthetic run file")
    parser.add_argument("--skip-large", action="store_true", help="only the digits sample runs")
    args = parser.parse_args()

    rows = bench("digits", "sample:digits", args.reruns)
    if not args.skip_large:
        with tempfile.TemporaryDirectory(prefix="bench_app_") as folder:
            start = time.perf_counter()
            synthetic_runs(Path(folder), args.n)
            print(f"wrote 5 synthetic runs of {args.n:,} rows in {time.perf_counter() - start:.1f} s", flush=True)
            os.environ[serverfiles.ENV_VAR] = folder  # as the operator allows a folder (dashboard/serverfiles.py)
            rows += bench("synthetic", f"folder:{folder}", args.reruns)

    table = pd.DataFrame(rows)
    table["within goal"] = np.where(table["rerun median (ms)"] < table["goal (ms)"], "yes", "NO")
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:,.0f}".format):
        print(table.to_string(index=False))
    print(
        "\nServer-side time of one script rerun after a V_wrong change (AppTest, median of "
        f"{args.reruns}); goals: < {GOALS['digits']:.0f} ms on the digits samples, < {GOALS['synthetic']:.0f} ms "
        f"on 5 runs of {args.n:,} predictions. 'first load' / 'first visit' are paid once per file content."
    )


if __name__ == "__main__":
    main()
