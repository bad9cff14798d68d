"""What the commands print is safe to show and to pipe: names from files cannot send terminal controls, and a
reader that stops early (``| head``, ``| grep -m1``) does not stop the files the command was asked to write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
CANCER = ROOT / "sample_runs" / "breast_cancer"


def test_a_reader_that_stops_at_once_still_gets_every_file_written(tmp_path):
    # The reader's end of the pipe is closed before the command prints a line: every print fails with EPIPE.
    # The files are what was asked for; before, the command stopped "quietly" with exit 0 and wrote none.
    policy, html = tmp_path / "policy.json", tmp_path / "report.html"
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "valuecore", "report", str(CANCER), "--omega", "2",
                               "--no-interval", "--json", str(policy), "--html", str(html)],
                              stdout=write, stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=240,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    finally:
        os.close(write)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert json.loads(policy.read_text())["models"], "the policy JSON holds no model"
    assert html.read_text().lstrip().lower().startswith("<!doctype html")


def test_a_name_holding_terminal_controls_is_printed_as_escapes(tmp_path, capsys):
    name = "m\x1b[2K\x1b[31mRED\x1b[0m\u202egnp.exe\x07"
    lines = ["model,split,y_true,proba_a,proba_b"]
    lines += [f'"{name}",{"val" if i % 2 else "test"},' + ("a,0.9,0.1" if i % 3 else "b,0.2,0.8") for i in range(20)]
    (tmp_path / "a.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for command in (("validate", tmp_path / "a.csv"), ("report", tmp_path / "a.csv", "--omega", "2")):
        code, out, err = run_cli(capsys, *command)
        assert code == 0, err
        assert "m\\x1b[2K\\x1b[31mRED\\x1b[0m\\u202egnp.exe\\x07" in out
        for control in ("\x1b", "\u202e", "\x07"):
            assert control not in out + err


@pytest.mark.parametrize("text, shown", [
    ("plain text, a tab\tand\na line end", "plain text, a tab\tand\na line end"),
    ("\x00\x08\x0b\x0c\r\x1b\x7f\x85\x9f", "\\x00\\x08\\x0b\\x0c\\x0d\\x1b\\x7f\\x85\\x9f"),
    ("\u200e\u200f\u202a\u202e\u2066\u2069", "\\u200e\\u200f\\u202a\\u202e\\u2066\\u2069"),
    ("é ≥ 0.5 · $1,000 — ok", "é ≥ 0.5 · $1,000 — ok"),
])
def test_controls_are_escaped_and_the_rest_is_kept(text, shown):
    from valuecore._cli.common import shown_on_terminal

    assert shown_on_terminal(text) == shown



# ------------------------------------------------------------- names holding line breaks
# Each separator a terminal or a reader splitting lines breaks on, each followed by text that would start a line.
SEPARATORS = ("\n", "\r", "\v", "\f", "\u2028", "\u2029", "\x85")


def _name(stem: str, tag: str, hostile: bool) -> str:
    return stem + "".join(f"{sep if hostile else '_'}FORGED {tag}{i}: recommended" for i, sep in enumerate(SEPARATORS))


def _names(hostile: bool) -> dict:
    return {"MODEL": _name("m", "model", hostile), "CLASS": _name("a", "class", hostile),
            "VAL": _name("val", "split", hostile), "TEST": _name("test", "split", hostile),
            "PROD": _name("prod", "split", hostile), "SEGMENT": _name("seg", "segment", hostile)}


def _names_run(path: Path, hostile: bool) -> dict:
    """A top-label run whose model, class, split and segment names hold every separator (or ``_`` in their
    place: the twin whose output has the lines the hostile one must have); a second, plain model beside it."""
    import csv

    import numpy as np

    names = _names(hostile)
    rng = np.random.default_rng(0)
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["model", "split", "y_true", "y_pred", "confidence", "segment"])
        for model, skill in ((names["MODEL"], 0.9), ("plain", 0.6)):
            for split in (names["VAL"], names["TEST"], names["PROD"]):
                for i in range(60):
                    truth = names["CLASS"] if rng.uniform() < 0.5 else "b"
                    predicted = truth if rng.uniform() < skill else ({names["CLASS"], "b"} - {truth}).pop()
                    writer.writerow([model, split, "" if split == names["PROD"] else truth, predicted,
                                     round(rng.uniform(0.5, 1.0), 3), names["SEGMENT"] if i % 2 else "plain"])
    return names


def _run_both(tmp_path, capsys, *argv):
    """(hostile, plain) results of one command on the two twin run files: code, stdout, stderr."""
    results = []
    for hostile in (True, False):
        folder = tmp_path / ("hostile" if hostile else "plain")
        folder.mkdir(exist_ok=True)
        names = _names_run(folder / "run.csv", hostile)
        given = [str(folder / a[1:]) if str(a).startswith("@") else names.get(a, a) for a in argv]
        results.append(run_cli(capsys, *given))
    return results


def _assert_no_forged_line(hostile, plain, *, json_on_stdout: bool = False) -> None:
    """Every name stays inside its line: as many lines as the twin's, none starting with the forged text,
    each separator shown as its escape. ``json_on_stdout``: stdout is the policy JSON, names kept as they are."""
    (code, out, err), (plain_code, plain_out, plain_err) = hostile, plain
    assert code == plain_code, err
    if json_on_stdout:
        import json

        assert _names(hostile=True)["MODEL"] in [e["model"] for e in json.loads(out)["models"]]
        out = plain_out = ""
    for shown, twin in ((out, plain_out), (err, plain_err)):
        lines = shown.splitlines()
        assert [line for line in lines if line.startswith("FORGED")] == []
        assert len(lines) == len(twin.splitlines()), shown
    assert "\\nFORGED" in out + err and "\\u2028FORGED" in out + err


SPLITS = ("--tune-split", "VAL", "--eval-split", "TEST")


@pytest.mark.parametrize("code, argv", [
    (0, ("validate", "@run.csv")),
    (0, ("report", "@run.csv", "--omega", "2", *SPLITS)),
    (0, ("report", "@run.csv", "--omega", "2", *SPLITS, "--policy", "class_thresholds")),
    (0, ("report", "@run.csv", "--omega", "2", *SPLITS, "--segment", "segment", "--policy", "segment_thresholds")),
    (0, ("report", "@run.csv", "--omega", "2", *SPLITS, "--json", "-")),  # the readable report on stderr
    (2, ("report", "@run.csv", "--omega", "2")),  # no split "test": the error quotes the names
    (0, ("table", "@run.csv", *SPLITS)),
    (0, ("table", "@run.csv", *SPLITS, "--markdown")),
    (0, ("voc", "@run.csv", *SPLITS)),
    (0, ("monitor", "@run.csv", "--omega", "2", *SPLITS, "--split", "PROD")),
], ids=lambda given: given if isinstance(given, int) else " ".join(a for a in given if not a.startswith("@")))
def test_a_name_holding_a_line_break_cannot_start_a_line_of_its_own(tmp_path, capsys, code, argv):
    hostile, plain = _run_both(tmp_path, capsys, *argv)
    assert hostile[0] == code, hostile[2]
    _assert_no_forged_line(hostile, plain, json_on_stdout="-" in argv)


@pytest.mark.parametrize("policy", ["class_thresholds", "segment_thresholds"])
def test_apply_shows_the_names_on_their_lines_and_the_json_keeps_them_as_they_are(tmp_path, capsys, policy):
    import json

    segment = ("--segment", "segment") if policy == "segment_thresholds" else ()
    made = _run_both(tmp_path, capsys, "report", "@run.csv", "--omega", "2", *SPLITS, "--policy", policy, *segment,
                     "--json", "@policy.json")
    _assert_no_forged_line(*made)
    _assert_no_forged_line(*_run_both(tmp_path, capsys, "apply", "@policy.json", "@run.csv", "--split", "TEST",
                                      "--json", "@applied.json"))
    names = _names(hostile=True)
    entry = next(e for e in json.loads((tmp_path / "hostile" / "policy.json").read_text(encoding="utf-8"))["models"]
                 if e["model"] != "plain")
    assert entry["model"] == names["MODEL"] and names["CLASS"] in entry["classes"]
    assert entry["tuned_on"]["split"] == names["VAL"] and entry["evaluation"]["split"] == names["TEST"]
    if policy == "class_thresholds":
        assert names["CLASS"] in entry["policy"]["class_thresholds"]
    else:
        assert names["SEGMENT"] in entry["segments"]["thresholds"]
    applied = json.loads((tmp_path / "hostile" / "applied.json").read_text(encoding="utf-8"))
    assert names["MODEL"] in [m["model"] for m in applied["models"]] and applied["split"] == names["TEST"]


@pytest.mark.parametrize("command", [("validate",), ("report", "--omega", "2"), ("aggregate", "--out", "@.parquet")])
def test_a_file_name_holding_a_line_break_stays_inside_its_problem(tmp_path, capsys, command):
    # The model is named by the file's stem, and the loader's problems name the file: each is one line
    # (validate lists them on stdout, the other commands warn on stderr).
    results = []
    for hostile in (True, False):
        run = tmp_path / str(hostile) / f"{_name('run', 'file', hostile)}.csv"
        run.parent.mkdir()
        rows = [f"test,a,{'a' if i % 3 else 'b'},0.{5 + i % 5},x" for i in range(20)]
        run.write_text("\n".join(["split,y_true,y_pred,confidence,extra", *rows]) + "\n", encoding="utf-8")
        given = [str(run.parent / a[1:]) if a.startswith("@") else a for a in command[1:]]
        results.append(run_cli(capsys, command[0], run, *given))
    hostile, plain = results
    assert hostile[0] == 0, hostile[2]
    assert "ignored unknown columns" in hostile[1] + hostile[2]  # a problem that names the file
    _assert_no_forged_line(hostile, plain)


@pytest.mark.parametrize("text, shown", [
    ("a\nb\rc\vd\fe", "a\\nb\\rc\\vd\\fe"),
    ("\x1c\x1d\x1e\x85\u2028\u2029", "\\x1c\\x1d\\x1e\\x85\\u2028\\u2029"),
    ("a tab\tand é ≥ 0.5 — ok", "a tab\tand é ≥ 0.5 — ok"),
])
def test_one_line_escapes_every_line_break_and_keeps_the_rest(text, shown):
    from valuecore._cli.common import one_line

    assert one_line(text) == shown
    assert len(one_line(text).splitlines()) == 1
