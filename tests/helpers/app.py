"""The app's test helpers: the app started by AppTest on a page, the capacity page run once, hostile names."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

import valuecore as vc

# ---------------------------------------------------------------- first written for test_app_core.py
ROOT = Path(__file__).resolve().parents[2]


APP = str(ROOT / "app.py")


def pages_in_app(app: Path = ROOT / "app.py") -> list[dict]:
    """Every page app.py registers, in its order, as {file, title, url_path, visibility, default, ...}: each call
    whose first argument is a page script (``pages/x.py``), with its constant keywords. Only these files are
    pages; the other files of pages/ hand a fresh server's first request to app.py."""
    found = []
    for node in ast.walk(ast.parse(app.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and str(node.args[0].value).startswith("pages/")):
            words = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
            found.append({"file": node.args[0].value, **words})
    return found


def tables_of(frames):
    """Each table (AppTest's dataframe elements) as the reader sees it: a Styler's display text, else the frame."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    for frame in frames:
        arrow = frame.proto.arrow_data
        if arrow.HasField("styler"):
            yield convert_arrow_bytes_to_pandas_df(arrow.styler.display_values)
        else:
            table = frame.value
            yield getattr(table, "data", table)


def start(page: str | None = None, **query: str) -> AppTest:
    """The app after its first run (URL query parameters set before it), optionally on ``page``."""
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


def capacity_page() -> AppTest:
    """The "Capacity & guarantees" page, run once through the whole app (a module's fixture)."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page("pages/constraints.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _money(text: str, after: str) -> str:
    """The first amount in dollars written after ``after`` (a day's amount: whole dollars from $100 up)."""
    match = re.search(re.escape(after) + r"[^$\d-]*(-?\$[\d,]+(?:\.\d+)?)", text)
    assert match, (after, text)
    return match.group(1)


def _per_day(amount: float) -> str:
    return vc.wording.projected(amount, "$")


SAMPLE = ROOT / "sample_runs" / "breast_cancer" / "logreg.csv"


HOSTILE = "**B** $M$ [x](http://127.0.0.1:9/) ![i](http://127.0.0.1:9/i.png) <b>h</b>"


HOSTILE_2 = HOSTILE + " v2"  # a second model, for the pages that compare two


def hostile_frame(rows: int = 400) -> pd.DataFrame:
    """Two models of the sample run with hostile model names, hostile split names and hostile class names."""
    frame = pd.read_csv(SAMPLE)
    frame = frame[frame["y_true"].notna()].head(rows).drop(columns=["id"]).reset_index(drop=True)
    frame["model"] = HOSTILE
    frame["split"] = np.where(np.arange(len(frame)) % 2 == 0, "val " + HOSTILE, "test " + HOSTILE)
    classes = {"benign": "**c1** $K$ [y](http://127.0.0.1:9/c)", "malignant": "<b>c2</b> ![j](http://127.0.0.1:9/j.png)"}
    frame["y_true"] = frame["y_true"].map(classes)
    frame = frame.rename(columns={f"proba_{old}": f"proba_{new}" for old, new in classes.items()})
    frame["timestamp"] = pd.date_range("2024-01-01", periods=len(frame), freq="h").astype(str)
    second = frame.assign(model=HOSTILE_2)
    probability = [c for c in frame if c.startswith("proba_")]
    second[probability] = (second[probability] * 0.9 + 0.05).round(6)  # another model, still rows summing to 1
    return pd.concat([frame, second], ignore_index=True)


def assert_clean(at: AppTest, *, errors_allowed: bool = False) -> None:
    """No traceback on the page, and no st.error unless errors are expected (bad files)."""
    assert not at.exception, [e.value for e in at.exception]
    if not errors_allowed:
        assert not at.error, [e.value for e in at.error]


def value_table(at: AppTest) -> pd.DataFrame:
    frame = at.dataframe[0].value
    assert "Threshold" in frame.columns and "Model" in frame.columns
    # The table shows thresholds as text, words where no one threshold stands (always hand off, a rule per class,
    # the expected-value rule, none for the no-model row); compare them as numbers.
    words = ("–", "always hand off", "per class", "expected-value rule", "none")
    shown = frame["Threshold"].replace(list(words), np.nan).replace("act on every item", 0.0)
    frame["Threshold"] = pd.to_numeric(shown, errors="raise")
    return frame.set_index("Model")


def model_declines_table(at: AppTest) -> pd.DataFrame:
    """The Runs page's table of splits with the model's own declines (a language model's "I don't know"),
    indexed by model."""
    frames = [d.value for d in at.dataframe if "declined by the model" in d.value.columns]
    assert len(frames) == 1, [list(d.value.columns) for d in at.dataframe]
    return frames[0].set_index("model")


def each_new_value(at: AppTest, values, recorded: list, key: str = "sidebar_v_wrong_input"):
    """Type each of ``values`` in the sidebar's box ``key`` and rerun; yield it with ``recorded`` holding only what
    that rerun recorded (it is emptied before each), the page checked clean."""
    for value in values:
        recorded.clear()
        at.sidebar.number_input(key=key).set_value(value).run()
        assert_clean(at)
        yield value
