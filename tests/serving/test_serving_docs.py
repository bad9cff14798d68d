"""Every example of docs/serving.md runs as written, in order, and prints what the page shows."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from valuecore.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "serving.md"


def blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of each fenced block, in page order."""
    return re.findall(r"^```(\w+)\n(.*?)^```", text, re.S | re.M)


def test_the_page_has_the_three_ways_each_with_code():
    text = PAGE.read_text(encoding="utf-8")
    for heading in ("## 1. The runtime", "## 2. scikit-learn", "## 3. MLflow"):
        assert heading in text
    languages = [language for language, _ in blocks(text)]
    assert languages.count("python") >= 4 and "bash" in languages and "text" in languages


def test_every_example_runs_and_prints_what_the_page_says(tmp_path, monkeypatch):
    pytest.importorskip("mlflow")  # requirements-mlflow.txt, installed by requirements-dev.txt and CI
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sample_runs").symlink_to(ROOT / "sample_runs")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
    namespace: dict = {"__name__": "docs_serving"}
    printed = None
    ran = {"python": 0, "bash": 0, "text": 0}
    for number, (language, code) in enumerate(blocks(PAGE.read_text(encoding="utf-8"))):
        if language == "python":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"docs/serving.md block {number}", "exec"), namespace)  # noqa: S102
            printed = out.getvalue()
        elif language == "bash":
            for line in code.splitlines():
                argv = shlex.split(line)
                assert argv[:3] == ["python", "-m", "valuecore"], line
                with contextlib.redirect_stdout(io.StringIO()):
                    assert main(argv[3:]) == 0, line
        elif language == "text":
            assert printed == code, f"block {number}: the page shows {code!r}, the example printed {printed!r}"
        ran[language] = ran.get(language, 0) + 1
    assert ran["python"] >= 4 and ran["bash"] >= 2 and ran["text"] >= 2
    assert (tmp_path / "policy.json").exists() and (tmp_path / "policy_from_mlflow.json").exists()
    assert (tmp_path / "cancer_model" / "MLmodel").exists()
