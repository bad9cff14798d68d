"""What a rerun of the first page costs around the recommendation: no setting rewritten by itself, the page's
caches serving the same answers as the uncached code, and dropped when the workspace changes."""

from __future__ import annotations

import shutil
from pathlib import Path

from streamlit.testing.v1 import AppTest

from dashboard import state

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SAMPLES = ROOT / "sample_runs"


def test_a_rerun_over_a_folder_rewrites_no_setting_and_no_url(tmp_path, monkeypatch):
    # The source selectbox shows "folder" for "folder:<path>": it used to store "folder", then the folder box
    # stored "folder:<path>" again, two settings and two URL changes sent to the browser on every rerun.
    for run in (SAMPLES / "digits").glob("*.csv"):
        shutil.copy(run, tmp_path / run.name)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["src"] = f"folder:{tmp_path}"
    at.run()
    assert not at.exception and at.session_state["selection"].models
    stored = []
    real_store = state._store
    monkeypatch.setattr(state, "_store", lambda settings: (stored.append(settings), real_store(settings)))
    at.run()
    assert stored == [] and at.session_state["settings"].source == f"folder:{tmp_path}"
    # a value typed is stored once, and the source with it stays the folder
    at.sidebar.number_input(key="sidebar_v_wrong_input").set_value(-7.0).run()
    assert [s.v_wrong for s in stored] == [-7.0] and stored[0].source == f"folder:{tmp_path}"
    # picking another source still changes it
    at.sidebar.selectbox(key="sidebar_source").set_value("sample:breast_cancer").run()
    assert at.session_state["settings"].source == "sample:breast_cancer"
    assert set(at.session_state["selection"].models) == {p.stem for p in (SAMPLES / "breast_cancer").glob("*.csv")}



def test_the_server_does_not_collect_garbage_after_every_run():
    # With five 10^6-row runs loaded Streamlit's collection after each run took 87-106 ms of a new value's round
    # trip (the server's profile, benchmarks/README.md); the dashboard collects when it evicts (dashboard.memory).
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is False
