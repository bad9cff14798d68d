"""Uploads that behave: a file uploaded again under its name replaces the first one, removing a file
removes its model, and each problem is counted once (the sidebar, through AppTest, and
``dashboard.data.load_uploads`` on its own)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from dashboard.data import load_uploads
from dashboard.sidebar import UPLOADS_KEY, add_uploads

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SAMPLES = ROOT / "sample_runs"
MLP = (SAMPLES / "breast_cancer" / "mlp.csv").read_bytes()
LOGREG = (SAMPLES / "breast_cancer" / "logreg.csv").read_bytes()
BROKEN = b"y_true,proba_a,proba_b\na,0.5,oops\nb,0.2,0.8\n"


def corrected(content: bytes) -> bytes:
    """The same run with its last row dropped: a corrected file with other content."""
    return content[: content.rstrip(b"\n").rfind(b"\n") + 1]


def start_on_runs() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["src"] = "upload"
    at.run()
    at.switch_page("pages/runs.py").run()
    return at


def upload(at: AppTest, *files: tuple[str, bytes]) -> None:
    uploaders = at.sidebar.get("file_uploader")
    assert len(uploaders) == 1
    uploaders[0].set_value([(name, content, "text/csv") for name, content in files])
    at.run()


def runs_table(at: AppTest) -> pd.DataFrame:
    return at.dataframe[0].value.set_index("model")


def loaded_models(at: AppTest) -> list[str]:
    pickers = [m for m in at.sidebar.multiselect if m.key == "sidebar_models"]
    return list(pickers[0].options) if pickers else []  # no picker at all when nothing is loaded


def test_a_file_uploaded_again_under_its_name_replaces_the_first():
    at = start_on_runs()
    upload(at, ("mlp.csv", MLP), ("logreg.csv", LOGREG))
    assert not at.exception and not at.error
    assert loaded_models(at) == ["mlp", "logreg"]
    assert runs_table(at).loc["mlp", "sha256"] == hashlib.sha256(MLP).hexdigest()[:12]
    # The drop zone is empty again after each upload: the files in force are listed under it.
    assert at.sidebar.get("file_uploader")[0].value in (None, [])
    new = corrected(MLP)
    upload(at, ("mlp.csv", new))
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert loaded_models(at) == ["mlp", "logreg"]  # same place, new content
    assert runs_table(at).loc["mlp", "sha256"] == hashlib.sha256(new).hexdigest()[:12]
    assert list(at.session_state[UPLOADS_KEY]) == ["mlp.csv", "logreg.csv"]
    assert any("Replaced by the new upload" in c.value and "mlp.csv" in c.value for c in at.sidebar.caption)
    assert not any("already loaded" in e.value for e in at.error)


def test_removing_a_file_removes_its_model():
    at = start_on_runs()
    upload(at, ("mlp.csv", MLP), ("logreg.csv", LOGREG))
    remove_mlp = "sidebar_remove::" + hashlib.sha256(b"mlp.csv").hexdigest()[:16]
    at.sidebar.button(key=remove_mlp).click().run()
    assert not at.exception
    assert loaded_models(at) == ["logreg"]
    assert list(runs_table(at).index) == ["logreg"]
    remove_logreg = "sidebar_remove::" + hashlib.sha256(b"logreg.csv").hexdigest()[:16]
    at.sidebar.button(key=remove_logreg).click().run()
    assert not at.exception
    assert loaded_models(at) == []
    assert any("Upload one CSV or Parquet file" in i.value for i in at.info)


def test_a_bad_file_uploaded_twice_is_counted_once():
    at = start_on_runs()
    upload(at, ("broken.csv", BROKEN), ("mlp.csv", MLP))
    first = [e.value for e in at.error]
    upload(at, ("broken.csv", BROKEN))
    again = [e.value for e in at.error]
    assert first and again == first
    counted = f"{len(first)} error{'' if len(first) == 1 else 's'}:"  # said in words, never "error(s)"
    assert any(c.value.startswith(counted) for c in at.caption)
    assert loaded_models(at) == ["mlp"]


def test_add_uploads_replaces_in_place():
    store, replaced = add_uploads({}, [("a.csv", b"1"), ("b.csv", b"2")])
    store, replaced = add_uploads(store, [("b.csv", b"3"), ("b.csv", b"4"), ("c.csv", b"5")])
    assert store == {"a.csv": b"1", "b.csv": b"4", "c.csv": b"5"} and replaced == ["b.csv"]


def test_load_uploads_keeps_the_last_upload_of_a_name_and_each_problem_once():
    new = corrected(MLP)
    report = load_uploads([("mlp.csv", MLP), ("broken.csv", BROKEN), ("mlp.csv", new), ("broken.csv", BROKEN)])
    assert list(report.models) == ["mlp"]
    assert report.models["mlp"].sha256 == hashlib.sha256(new).hexdigest()
    alone = load_uploads([("broken.csv", BROKEN)])
    assert report.problems == alone.problems and len(alone.problems) >= 1


def test_one_model_in_two_files_is_loaded_from_the_first_and_the_second_is_named_once():
    frame = pd.read_csv(SAMPLES / "breast_cancer" / "mlp.csv")
    frame.insert(0, "model", "mlp")
    with_model = frame.to_csv(index=False).encode()
    report = load_uploads([("a.csv", with_model), ("b.csv", with_model), ("b.csv", with_model)])
    assert list(report.models) == ["mlp"]
    [problem] = report.problems
    assert problem.file == "b.csv" and "already loaded from a.csv" in problem.message
