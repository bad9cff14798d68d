"""The command line's test helpers: ``main`` run in process, its errors checked, run files written."""

from __future__ import annotations

import ast
import contextlib
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import softmax

from valuecore._cli.commands import main

# ---------------------------------------------------------------- first written for test_cli.py
VALUES = ["--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-4"]


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_clean_error(code, out, err, *fragments, expected_code=2):
    assert code == expected_code, (out, err)
    assert "Traceback" not in err and "Traceback" not in out
    for fragment in fragments:
        assert fragment in err, err


# --------------------------------------------------------------------------
# small run files written to tmp_path
# --------------------------------------------------------------------------
def write_run(path: Path, *, classes=("neg", "pos"), splits=("val", "test"), n=80, seed=0, unlabeled=()):
    rng = np.random.default_rng(seed)
    frames = []
    for split in splits:
        logits = rng.normal(0, 2, size=(n, len(classes)))
        proba = softmax(logits * 1.5, axis=1)
        y = np.array([rng.choice(len(classes), p=p) for p in softmax(logits, axis=1)])
        frame = pd.DataFrame({f"proba_{c}": proba[:, i].round(6) for i, c in enumerate(classes)})
        frame[f"proba_{classes[-1]}"] = (1 - frame[[f"proba_{c}" for c in classes[:-1]]].sum(axis=1)).round(6)
        frame.insert(0, "y_true", "" if split in unlabeled else np.asarray(classes, dtype=object)[y])
        if splits != ("all",):
            frame.insert(0, "split", split)
        frames.append(frame)
    pd.concat(frames).to_csv(path, index=False)
    return path


# ---------------------------------------------------------------- first written for test_hostile_cli.py
def cli_run(*args) -> subprocess.CompletedProcess:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def refused(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "likely a bug" not in result.stderr and "Traceback" not in result.stderr
    for word in words:
        assert word in result.stdout + result.stderr, result.stderr[-2000:]


# ---------------------------------------------------------------- first written for test_policy_json.py
ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------
# the serving-side reference implementation printed in docs/policy-json.md
# --------------------------------------------------------------------------
def _docs_reference_code() -> dict:
    text = (ROOT / "docs" / "policy-json.md").read_text(encoding="utf-8")
    blocks = text.split("```python\n")[1:]
    code = next(block.split("```")[0] for block in blocks if "def decide(document" in block)
    namespace: dict = {}
    exec(compile(code, "docs/policy-json.md", "exec"), namespace)  # noqa: S102 - our own documentation
    return namespace


# ---------------------------------------------------------------- first written for test_toplevel.py
# Runs ``python -m valuecore ARGS`` in this interpreter (runpy, as -m does), then lists the modules it loaded
# (by repr, so that the listing itself imports nothing the tests look for, json included).
_LIST_MODULES = """
import runpy, sys
sys.argv = ["valuecore", *sys.argv[1:]]
try:
    runpy.run_module("valuecore", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
sys.__stderr__.write("MODULES " + repr(sorted(sys.modules)) + "\\n")
"""


def modules_loaded_by(*argv: str) -> set[str]:
    """The modules a fresh ``python -m valuecore ARGV`` loaded (its output captured, not shown)."""
    done = subprocess.run([sys.executable, "-c", _LIST_MODULES, *argv], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=120)
    line = [row for row in done.stderr.splitlines() if row.startswith("MODULES ")][-1]
    return set(ast.literal_eval(line[len("MODULES "):]))
