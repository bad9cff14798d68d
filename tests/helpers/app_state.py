"""The app-state tests' helpers: the app started clean on a page, and what its widgets show."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

# ---------------------------------------------------------------- first written for test_app_state.py
ROOT = Path(__file__).resolve().parents[2]


APP = str(ROOT / "app.py")


SAMPLES = ROOT / "sample_runs"


BREAST_MATRIX = '{"classes":["benign","malignant"],"values":[[1.5,-3.25,0.0],[-40.0,2.0,-0.5]]}'


def start(page: str | None = None, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    clean(at)
    if page is not None:
        go(at, page)
    return at


def go(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py").run()
    clean(at)
    assert at.sidebar.children, "the page ran without app.py's sidebar"
    return at


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    parts += [w.value for w in at.warning] + [s.value for s in at.success] + [m.value for m in at.metric]
    return "\n".join(str(p) for p in parts)


def screen_policies(at: AppTest) -> dict:
    """The Value page's exact rule per model (its "as in the exported policy JSON" block)."""
    return json.loads(next(c.value for c in at.code if c.language == "json"))
