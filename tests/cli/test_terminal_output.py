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

