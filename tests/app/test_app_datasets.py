"""The dashboard's "Parquet dataset" source (issue 11, item 4), driven through AppTest.

A folder inside the operator's roots whose data files sit in sub-folders (hive
partitions) is aggregated once with DuckDB, then every page reads the aggregate
like a run: the same threshold as on the raw rows. What needs each item's own
row (temperature scaling, the expected-value rule, a comparison paired item by
item) is not offered, and says why. A bad dataset is refused in words; a folder
outside the roots is never read.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import valuecore as vc
from dashboard import datasets, serverfiles
from helpers.app import start as start_app
from optional import need

need("duckdb")  # datasets are aggregated with DuckDB (requirements-spark.txt)

def plain(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def write_dataset(folder: Path, models=("alpha", "beta"), n: int = 300, seed: int = 0) -> pd.DataFrame:
    """A hive-partitioned prediction log (``split=<name>/part-<k>.parquet``); returns its rows with their split."""
    rng = np.random.default_rng(seed)
    frames = []
    for split in ("val", "test"):
        for model in models:
            y_true = rng.choice(["a", "b"], n)
            skill = 0.55 + 0.2 * (model == models[0])
            confidence = rng.integers(10, 21, n) / 20  # ties: many rows per group
            right = rng.random(n) < np.where(confidence > 0.7, confidence, skill)
            predicted = np.where(right, y_true, np.where(y_true == "a", "b", "a"))
            proba_a = np.where(predicted == "a", confidence, 1 - confidence)
            frames.append(pd.DataFrame({"model": model, "y_true": y_true, "proba_a": proba_a,
                                        "proba_b": 1 - proba_a, "split": split}))
    rows = pd.concat(frames, ignore_index=True)
    for split, part in rows.groupby("split"):
        (folder / f"split={split}").mkdir(parents=True, exist_ok=True)
        part = part.drop(columns="split")
        half = len(part) // 2
        for k, chunk in enumerate((part.iloc[:half], part.iloc[half:])):
            chunk.to_parquet(folder / f"split={split}" / f"part-{k}.parquet", index=False)
    return rows


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "aggregate-cache"
    monkeypatch.setenv(datasets.CACHE_ENV, str(folder))
    return folder


def start(source: str, page: str | None = None, **query) -> AppTest:
    return start_app(page, src=source, **query)


def test_a_parquet_dataset_is_aggregated_with_progress_and_answers_like_its_raw_rows(tmp_path, cache, monkeypatch):
    dataset = tmp_path / "logs"
    rows = write_dataset(dataset)
    fractions = []
    real = datasets.cached_aggregate

    def watched(folder, progress=None, **kwargs):
        progress(0.5)  # what DuckDB's progress poll does on a long query: the bar must take it
        fractions.append(0.5)
        return real(folder, progress=lambda done: fractions.append(done) or progress(done), **kwargs)

    monkeypatch.setattr(datasets, "cached_aggregate", watched)
    at = start(f"folder:{dataset}", "pages/value.py")
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert fractions and len(list(cache.glob("*.parquet"))) == 1
    # The cache's server path is never shown: the aggregate is named after the dataset as given.
    assert str(cache) not in "\n".join(str(e.value) for e in [*at.caption, *at.warning, *at.markdown])
    table = at.dataframe[0].value.set_index("Model")
    assert set(table.index) >= {"alpha", "beta"}
    # Exact: the threshold on the aggregate is the one fitted on the raw rows.
    flat = tmp_path / "flat"
    flat.mkdir()
    for model, part in rows.groupby("model"):
        part.drop(columns="model").to_csv(flat / f"{model}.csv", index=False)
    raw = vc.load_runs(str(flat))
    for model in ("alpha", "beta"):
        policy = vc.fit_policy("threshold", vc.presort(raw.models[model].splits["val"]), vc.UseCase(1, 0, -4))
        assert table.loc[model, "Threshold"] == vc.wording.threshold(policy.threshold)
    # The landing page gives a verdict on it, like on any run.
    at.switch_page("pages/home.py").run()
    assert not at.exception and at.subheader[0].value
    assert at.sidebar.caption and any("Parquet dataset" in c.value or "aggregated" in c.value
                                      for c in at.sidebar.caption)


def test_what_needs_each_items_own_row_is_not_offered_on_an_aggregate(tmp_path, cache):
    dataset = tmp_path / "logs"
    write_dataset(dataset)
    at = start(f"folder:{dataset}", "pages/value.py", cal="temperature")
    assert not at.exception
    assert "temperature" not in at.sidebar.selectbox(key="sidebar_calibration").options
    assert at.sidebar.selectbox(key="sidebar_calibration").value == "none"
    sidebar = plain("\n".join(c.value for c in at.sidebar.caption))
    assert "temperature scaling does not apply: it needs each item's own row" in sidebar
    assert "expected_value" not in at.radio(key="value_policy_kind").options
    assert any("the expected-value rule does not apply" in plain(c.value) for c in at.caption)
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    info = plain("\n".join(i.value for i in at.info))
    assert "a comparison paired item by item does not apply" in info and "Value page" in info
    assert not at.get("metric") or all("per item (this data)" not in m.label for m in at.main.get("metric"))
    at.switch_page("pages/calibration.py").run()
    assert not at.exception
    assert "temperature" not in at.radio(key="calibration_method").options
    assert any("temperature scaling does not apply" in plain(c.value) for c in at.caption)


def test_a_bad_dataset_is_refused_in_words(tmp_path, tmp_path_factory, cache):
    dataset = tmp_path / "logs"
    write_dataset(dataset, models=("alpha",))
    part = dataset / "split=val" / "part-1.parquet"
    frame = pd.read_parquet(part)
    frame.loc[3, "proba_a"] = np.nan
    frame.to_parquet(part, index=False)
    typed = str(dataset.relative_to(tmp_path_factory.getbasetemp()))  # inside the first allowed root
    at = start(f"folder:{typed}", "pages/runs.py")
    assert not at.exception
    errors = plain("\n".join(e.value for e in at.error))
    assert "could not be aggregated" in errors and "proba_a" in errors
    # Named from the dataset as the visitor gave it, never by the server's path.
    assert f"{typed}/split=val/part-1.parquet" in errors and str(tmp_path) not in errors
    assert not list(cache.glob("*.parquet"))


def test_a_dataset_outside_the_operators_roots_is_never_read(tmp_path_factory, cache, monkeypatch):
    allowed = tmp_path_factory.mktemp("allowed")
    outside = tmp_path_factory.mktemp("outside") / "logs"
    write_dataset(outside, models=("alpha",))
    monkeypatch.setenv(serverfiles.ENV_VAR, str(allowed))
    at = start(f"folder:{outside}", "pages/runs.py")
    assert not at.exception
    assert serverfiles.REFUSAL in "\n".join(e.value for e in at.error)
    assert not cache.exists() or not list(cache.glob("*.parquet"))
