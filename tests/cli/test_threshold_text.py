"""Thresholds where people read them: short on screen (the digits that tell the decision apart on the data
shown, at most 6 significant), exact in the policy JSON and in the report's tooltip.

Temperature scaling gives 16-digit confidences on the digits sample runs, so every tuned threshold there has
a long exact form to shorten.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

import valuecore as vc
from valuecore import wording
from valuecore._cli.commands import main

DIGITS = Path(__file__).resolve().parents[2] / "sample_runs" / "digits"


def run_cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_the_cli_prints_short_thresholds_and_the_json_keeps_the_exact_floats(tmp_path):
    path = tmp_path / "policy.json"
    code, out, err = run_cli("report", str(DIGITS), "--omega", "4", "--calibration", "temperature",
                             "--policy", "threshold", "--json", str(path), "--no-interval")
    assert code == 0, err
    document = json.loads(path.read_text(encoding="utf-8"))
    models = vc.load_runs([str(DIGITS)]).models
    printed = re.findall(r"^threshold\s+(\S+)\s+\(act iff", out, flags=re.M)
    entries = [e for e in document["models"] if e["policy"]["kind"] == "threshold"]
    assert len(printed) == len(entries) == len(models)
    shortened = 0
    for text, entry in zip(printed, entries):
        exact = entry["policy"]["threshold"]
        policy = vc.policy_json.PolicyDocument.from_json(path.read_text(encoding="utf-8")).entry(entry["model"]).policy
        assert policy.threshold == exact  # the JSON round-trips the float itself
        splits = models[entry["model"]].splits
        confidence = np.concatenate([policy.calibrate(splits[s]).confidence for s in ("val", "test")])
        assert text == wording.threshold_on_data(exact, confidence)
        assert len(text.replace(".", "").lstrip("0")) <= wording.THRESHOLD_SIGNIFICANT
        assert np.array_equal(confidence >= float(text), confidence >= exact)  # the same decisions on the data
        shortened += len(repr(exact)) > len(text)
    assert shortened >= 3  # temperature scaling's thresholds are long: most read shorter


@pytest.mark.heavy
def test_the_report_shows_the_short_threshold_with_the_exact_one_on_hover(tmp_path):
    models = vc.load_runs([str(DIGITS)]).models
    text = vc.report.html_report(models, vc.UseCase.from_omega(4), calibration_method="temperature")
    hovers = re.findall(r'title="exact threshold ([0-9.]+), as in the policy JSON">act when confidence ≥ ([0-9.]+)<',
                        text)
    assert hovers
    for exact, short in hovers:
        assert float(short) <= float(exact) and len(short) < len(exact)
        assert html.escape(f'"threshold": {exact}') in text  # the embedded policy JSON holds the exact float
