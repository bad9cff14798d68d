"""Hostile inputs, through the loader, the command line and the app (issue 10).

Every file is built here, small (well under a megabyte) and fast; each case is
one way a shared server could be crashed, misled or made to leak. The loader
must answer with problems naming file, column and rows; the CLI must exit 0
(with warnings) or 2, never 1, with no traceback and bounded output; the app
must show no exception element.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import serverfiles
from dashboard.safetext import md_text
from valuecore._io.limits import clip_text, json_depth, load_json_limited
from valuecore.runs import load_run_file, load_runs
from valuecore._io.safecsv import neutralise_cell

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_runs" / "breast_cancer" / "logreg.csv"
N_ROWS = sum(1 for _ in SAMPLE.open()) - 1
HOSTILE_NAME = "=HYPERLINK(\"http://127.0.0.1:9/x\") **bold** ![img](http://127.0.0.1:9/x.png) :red[x] <b>h</b>"


def sample_frame() -> pd.DataFrame:
    return pd.read_csv(SAMPLE)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def with_column(name, value) -> bytes:
    frame = sample_frame()
    frame[name] = value
    return csv_bytes(frame)


def _parquet_times() -> bytes:
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = sample_frame().head(4).drop(columns=["timestamp"], errors="ignore")
    table = pa.Table.from_pandas(frame, preserve_index=False).append_column(
        "timestamp",
        pa.array([dt.datetime(9999, 12, 31), dt.datetime(1, 1, 1), dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 2)],
                 pa.timestamp("us")),
    )
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def _label_frame(label: str) -> bytes:
    frame = sample_frame().head(6)
    frame.loc[0, "y_true"] = label
    return csv_bytes(frame)


# name -> (file name, bytes, what the loader must say: substring of an error, or None for "loads")
CORPUS = {
    "200k columns": ("wide.csv", (",".join(f"c{i}" for i in range(200_000)) + "\n" + "1," * 199_999 + "1\n").encode(),
                     "too many columns"),
    "10 MB label echoed": ("label.csv", _label_frame("X" * 2_000_000), "are not among the classes"),
    "timestamp 9999-12-31": ("t.csv", with_column("timestamp", ["9999-12-31"] + ["2024-01-01"] * (N_ROWS - 1)), "outside the supported range"),  # noqa: E501
    "timestamp 0001-01-01": ("t.csv", with_column("timestamp", ["0001-01-01"] * N_ROWS), "outside the supported range"),
    "parquet timestamps": ("t.parquet", _parquet_times(), "outside the supported range"),
    "tiny weights": ("w.csv", with_column("weight", 1e-200), "weight must be 0 or between"),
    "huge weights": ("w.csv", with_column("weight", 1e160), "weight must be 0 or between"),
    "weights 1e50 load": ("w.csv", with_column("weight", 1e50), None),
    "hostile model name": ("m.csv", with_column("model", HOSTILE_NAME), None),
    "hostile class name": ("c.csv", b"y_true,proba_=cmd|' /C calc'!A0,proba_b\n=cmd|' /C calc'!A0,0.9,0.1\nb,0.2,0.8\n", None),  # noqa: E501
    "binary garbage": ("g.csv", bytes(range(256)) * 40, "binary data"),
    "not utf-8": ("u.csv", "y_true,proba_a,proba_b\né,0.5,0.5\n".encode("latin-1"), "UTF-8"),
    "empty": ("e.csv", b"", "empty file"),
    "header only": ("h.csv", b"y_true,proba_a,proba_b\n", "no data rows"),
    "nan probabilities": ("n.csv", b"y_true,proba_a,proba_b\na,nan,0.1\nb,0.2,0.8\n", "NaN"),
    "infinite probabilities": ("i.csv", b"y_true,proba_a,proba_b\na,inf,0.1\nb,0.2,0.8\n", "infinite"),
    "1e308 probabilities": ("p.csv", b"y_true,proba_a,proba_b\na,1e308,1e308\nb,0.2,0.8\n", "do not sum to 1"),
    "too many classes": ("k.csv", ("y_true," + ",".join(f"proba_{i}" for i in range(1500)) + "\n0,"
                                   + ",".join(["1"] + ["0"] * 1499) + "\n").encode(), "too many classes"),
    "duplicate hostile headers": ("d.csv", ("y_true,proba_a,proba_b," + "Z" * 5000 + "," + "Z" * 5000 + "\na,0.5,0.5,1,2\n").encode(),  # noqa: E501
                                  "duplicate column"),
    "deep quoting": ("q.csv", b'y_true,proba_a,proba_b\n"a' + b'""' * 10_000 + b'",0.5,0.5\n', "are not among the classes"),  # noqa: E501
}


@pytest.mark.parametrize("case", list(CORPUS))
def test_the_loader_answers_every_hostile_file_in_words(case):
    name, data, expected = CORPUS[case]
    report = load_run_file(data, name=name)
    text = "\n".join(str(p) for p in report.problems)
    assert len(text) < 20_000, "messages stay a few lines long"
    if expected is None:
        assert report.ok, text
        return
    assert not report.models
    assert expected in text, text
    assert name in text


def test_probabilities_a_hair_above_one_never_give_a_threshold_above_one():
    frame = sample_frame()
    proba = frame[["proba_benign", "proba_malignant"]].to_numpy(np.float32)
    proba[:5] = [np.float32(1.00000012), 0]
    frame[["proba_benign", "proba_malignant"]] = proba.astype(float)
    report = load_run_file(csv_bytes(frame), name="f32.csv")
    assert report.ok, report.problems
    for predictions in report.models["f32"].splits.values():
        assert predictions.confidence.max() <= 1.0
        assert predictions.proba.max() <= 1.0
    top = load_run_file(b"y_true,y_pred,confidence\na,a,1.00000012\nb,b,0.8\n", name="top.csv")
    assert top.ok and top.models["top"].splits["all"].confidence.max() == 1.0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_links_loops_fifos_and_unreadable_files_are_reported_and_the_others_load(tmp_path):
    (tmp_path / "good.csv").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "dangling.csv").symlink_to(tmp_path / "missing.csv")
    (tmp_path / "loop.csv").symlink_to(tmp_path / "loop.csv")
    os.mkfifo(tmp_path / "pipe.csv")
    locked = tmp_path / "locked.csv"
    locked.write_bytes(SAMPLE.read_bytes())
    locked.chmod(0)
    report = load_runs(tmp_path)
    assert list(report.models) == ["good"] or (os.geteuid() == 0 and "locked" in report.models)
    text = "\n".join(str(p) for p in report.problems)
    assert "dangling.csv" in text and "target is missing" in text
    assert "loop.csv" in text and "loops" in text
    assert "pipe.csv" in text and "not a regular file" in text
    if os.geteuid() != 0:  # root reads anything
        assert "locked.csv" in text
    direct = load_run_file(tmp_path / "pipe.csv")  # named on its own, it must not block either
    assert not direct.models and "not a regular file" in str(direct.problems[0])


def test_the_cache_key_follows_the_content_not_the_mtime(tmp_path):
    from dashboard.filehash import file_key

    path = tmp_path / "run.csv"
    path.write_bytes(b"a,b\n1,2\n")
    first = file_key(path)
    before = path.stat()
    path.write_bytes(b"a,b\n3,4\n")  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the old mtime
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert file_key(path) != first
    assert file_key(tmp_path / "missing.csv").startswith("unreadable")


def test_json_size_depth_and_huge_numbers_are_refused_in_words():
    with pytest.raises(ValueError, match="nested too deeply.*VALUECORE_MAX_JSON_DEPTH"):
        load_json_limited("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="too large to hold"):
        load_json_limited('{"a": ' + "9" * 4000 + "}")
    with pytest.raises(ValueError, match="too large to hold"):
        load_json_limited("1e999")
    with pytest.raises(ValueError, match="too large"):
        load_json_limited(" " * 11_000_001)
    assert json_depth('{"a": "[[[["}') == 1
    assert load_json_limited('{"a": [1, -2.5]}') == {"a": [1, -2.5]}


@pytest.mark.heavy
def test_schema_bounds_calibration_parameters():
    from valuecore._pipeline.policy_json import validate_policy_document

    document = json.loads(
        subprocess.run(
            [sys.executable, "-m", "valuecore", "report", str(SAMPLE), "--omega", "4", "--calibration",
             "temperature", "--json", "-", "--no-interval"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout
    )
    validate_policy_document(document)
    document["models"][0]["policy"]["calibration"]["temperature"] = 1e-320
    with pytest.raises(ValueError):
        validate_policy_document(document)


def test_text_helpers():
    assert clip_text("x" * 1000).endswith("…") and len(clip_text("x" * 1000)) == 200
    assert neutralise_cell("@SUM(A1)") == "'@SUM(A1)" and neutralise_cell("-1e3") == "-1e3"
    assert neutralise_cell("+cmd") == "'+cmd" and neutralise_cell("-2+3+cmd|' /C calc'!A0").startswith("'")
    assert "![" not in md_text(HOSTILE_NAME) and "**" not in md_text(HOSTILE_NAME)


# ------------------------------------------------------------------ CLI
def run_cli(*args) -> subprocess.CompletedProcess:
    """``python -m valuecore ARGS`` in this process (a subprocess per case would cost seconds each)."""
    import contextlib

    from valuecore._cli.commands import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def test_the_cli_as_a_process_exits_2_without_a_traceback(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_bytes(CORPUS["200k columns"][1])
    result = subprocess.run([sys.executable, "-m", "valuecore", "report", str(path), "--v-wrong", "-1e3",
                             "--v-correct", "1", "--v-abstain", "0"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "too many columns" in result.stderr and "VALUECORE_MAX_COLUMNS" in result.stderr


def assert_cli_clean(result: subprocess.CompletedProcess) -> None:
    assert result.returncode in (0, 2), (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr + result.stdout
    assert len(result.stdout) + len(result.stderr) < 200_000


@pytest.mark.parametrize("case", list(CORPUS))
def test_the_cli_never_fails_on_hostile_files(case, tmp_path):
    name, data, expected = CORPUS[case]
    path = tmp_path / name
    path.write_bytes(data)
    for command in (["validate"], ["report", "--omega", "4"], ["table"]):
        result = run_cli(command[0], path, *command[1:])
        assert_cli_clean(result)
        if expected is not None:
            assert result.returncode == 2


@pytest.mark.parametrize(
    "values",
    [
        ["--v-correct", "1e307", "--v-abstain", "0", "--v-wrong", "-1e307"],
        ["--v-correct", "1e-300", "--v-abstain", "0", "--v-wrong", "-4e-300"],
        ["--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-1e3"],
        ["--v-correct", "1", "--v-abstain", "-.5", "--v-wrong=-1E+3"],
        ["--omega", "-4"],
        ["--v-correct", "1e100", "--v-abstain", "-1e100", "--v-wrong", "-1e100"],
    ],
)
def test_the_cli_takes_extreme_and_negative_values(values):
    result = run_cli("report", SAMPLE, *values)
    assert_cli_clean(result)
    assert "expected one argument" not in result.stderr
    if "1e307" in values or "1e-300" in values:
        assert result.returncode == 2 and "in magnitude" in result.stderr
    else:
        assert result.returncode == 0, result.stderr


def test_cli_csv_outputs_are_spreadsheet_safe(tmp_path):
    frame = sample_frame()
    runs = tmp_path / "runs"  # the output goes beside the input folder: a CSV inside it would be read as a run
    runs.mkdir()
    (runs / "=HYPERLINK(1).csv").write_bytes(csv_bytes(frame))
    (runs / "-cmd.csv").write_bytes(csv_bytes(frame))
    table = run_cli("table", runs, "--csv")
    assert table.returncode == 0, table.stderr
    voc = run_cli("voc", runs, "--csv", tmp_path / "voc.csv", "--points", "3")
    assert voc.returncode == 0, voc.stderr
    for text in (table.stdout, (tmp_path / "voc.csv").read_text()):
        cells = [cell for line in text.splitlines() for cell in line.split(",")]
        assert "'=HYPERLINK(1)" in cells and "'-cmd" in cells
        assert not any(c.startswith(("=", "@", "+")) or (c.startswith("-") and c[1:2].isalpha()) for c in cells)


def test_cli_huge_weights_give_an_interval_of_nonzero_width(tmp_path):
    (tmp_path / "w.csv").write_bytes(with_column("weight", 3e40))
    (tmp_path / "p.csv").write_bytes(SAMPLE.read_bytes())
    lines = {}
    for name in ("w", "p"):
        result = run_cli("report", tmp_path / f"{name}.csv", "--omega", "4")
        assert result.returncode == 0, result.stderr
        lines[name] = next(line for line in result.stdout.splitlines() if line.startswith("95% interval"))
    assert lines["w"] == lines["p"]  # scaling every weight by one number changes nothing per item


# ------------------------------------------------------------------ app
def app_on_folder(folder: Path, page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["src"] = f"folder:{folder}"
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


def test_the_app_shows_hostile_files_as_problems_not_exceptions(tmp_path):
    for case, (name, data, _) in CORPUS.items():
        if case in ("200k columns", "10 MB label echoed", "too many classes"):
            continue  # covered by the loader test; keeps this test fast
        (tmp_path / f"{len(os.listdir(tmp_path))}_{name}").write_bytes(data)
    (tmp_path / "dangling.csv").symlink_to(tmp_path / "missing.csv")
    (tmp_path / "loop.csv").symlink_to(tmp_path / "loop.csv")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.csv")
    at = app_on_folder(tmp_path, "pages/runs.py")  # the file inventory lists every problem
    assert not at.exception, [e.value for e in at.exception]
    text = "\n".join(e.value for e in at.error)
    assert "dangling" in text and "loop" in text
    for page in ("pages/value.py", "pages/cost_matrix.py", "pages/monitor.py", "pages/export.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])


def rendered_texts(at: AppTest) -> list[str]:
    """Everything Streamlit renders as markdown on the page."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    for kind in (at.error, at.warning, at.info, at.success, at.subheader, at.header, at.title):
        parts += [e.value for e in kind]
    return parts


def test_hostile_model_names_are_shown_as_text_on_every_page(tmp_path):
    frame = sample_frame()
    frame["model"] = HOSTILE_NAME
    (tmp_path / "hostile.csv").write_bytes(csv_bytes(frame))
    at = app_on_folder(tmp_path)
    for page in ("pages/runs.py", "pages/value.py", "pages/voc.py", "pages/cost_matrix.py", "pages/calibration.py",
                 "pages/compare.py", "pages/monitor.py", "pages/export.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        for text in rendered_texts(at):
            assert "![img]" not in text and "**bold**" not in text and ":red[x]" not in text, (page, text)


def test_a_folder_outside_the_allowed_roots_is_refused_alike_whether_it_exists_or_not(tmp_path, monkeypatch):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "credentials.csv").write_text("username,password,api_key\nroot,hunter2,TOPSECRET-LABEL-42\n")
    (allowed / "escape").symlink_to(secret)
    monkeypatch.setenv(serverfiles.ENV_VAR, str(allowed))
    answers = []
    for target in (secret, tmp_path / "nothing-here", allowed / ".." / "secret", allowed / "escape", "/etc"):
        at = app_on_folder(target)
        assert not at.exception
        shown = "\n".join(rendered_texts(at) + [str(d.value) for d in at.dataframe])
        assert serverfiles.REFUSAL in shown
        for leak in ("credentials", "password", "api_key", "TOPSECRET", "hunter2", str(secret), "nothing-here"):
            assert leak not in shown, (target, leak)
        answers.append(shown)
    assert len(set(answers)) == 1  # existing and missing folders answer alike
    assert serverfiles.resolve_inside_roots(str(allowed / "sub")) == allowed.resolve() / "sub"
    assert serverfiles.resolve_inside_roots("sub") == allowed.resolve() / "sub"


def test_without_allowed_roots_no_server_folder_is_read(tmp_path, monkeypatch):
    monkeypatch.delenv(serverfiles.ENV_VAR, raising=False)
    (tmp_path / "good.csv").write_bytes(SAMPLE.read_bytes())
    assert serverfiles.allowed_roots() == ()
    assert serverfiles.resolve_inside_roots(str(tmp_path)) is None
    at = app_on_folder(tmp_path)
    assert not at.exception
    assert not at.dataframe or "good" not in str(at.dataframe[0].value)
    assert any(serverfiles.REFUSAL in e.value for e in at.error)
    assert serverfiles.roots_from_argv(["--data-root", "/a", "--data-root=/b", "x"]) == ("/a", "/b")


def test_the_export_page_refuses_deep_huge_and_overflowing_json_in_words():
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["src"] = "sample:breast_cancer"
    at.run()
    at.switch_page("pages/export.py").run()
    for text, expected in (
        ("[" * 50_000 + "]" * 50_000, "VALUECORE_MAX_JSON_DEPTH"),
        ('{"schema_version": 1, "use_case": {"v_correct": ' + "9" * 4000 + "}}", "too large to hold"),
        ('{"schema_version": 1, "use_case": {"v_correct": 1e999}}', "too large to hold"),
    ):
        at.text_area(key="export_paste").set_value(text).run()
        assert not at.exception, [e.value for e in at.exception]
        assert any(md_text(expected) in e.value for e in at.error), [e.value for e in at.error]
