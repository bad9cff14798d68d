"""`report --html` with names that XML forbids (a vertical tab, other controls, U+FFFE) in the model, the
split and the classes: vl-convert, which lays out the charts' text through an SVG parser, panicked on them and
aborted the whole process (exit 134, no report). Each chart now shows such a character as its escape."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

FORBIDDEN = ["\v", "\x01", "\x1f", "\ufffe"]


@pytest.mark.parametrize("char", FORBIDDEN, ids=["vt", "soh", "us", "fffe"])
def test_a_report_draws_its_charts_whatever_the_names_hold(tmp_path, char):
    rng = np.random.default_rng(0)
    n = 120
    proba = rng.dirichlet([1, 1], n)
    classes = [f"no{char}", f"yes{char}"]
    pd.DataFrame({
        "model": [f"m{char}1"] * n + [f"m{char}2"] * n,
        "split": ([f"val{char}"] * (n // 2) + ["test"] * (n // 2)) * 2,
        "y_true": [classes[k] for k in rng.integers(0, 2, 2 * n)],
        f"proba_{classes[0]}": np.r_[proba[:, 0], proba[::-1, 0]],
        f"proba_{classes[1]}": np.r_[proba[:, 1], proba[::-1, 1]],
    }).to_csv(tmp_path / "runs.csv", index=False)
    out = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "valuecore", "report", str(tmp_path / "runs.csv"), "--omega", "1",
                           "--html", str(out)], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    page = out.read_text(encoding="utf-8")
    escape = char.encode("unicode_escape").decode()
    assert page.count("<svg") >= 2
    figures = page[page.index("<svg"):]
    assert f"m{escape}1" in figures and f"m{escape}2" in figures  # each model keeps its own name in the charts
