"""The shareable HTML report: ``python -m valuecore report ... --html`` and valuecore.report.

One file, every section, names from files escaped, the verdict's own words;
and, in a real Chromium with the network off, every chart drawn and no
request leaving the page.
"""

from __future__ import annotations

import contextlib
import html
import io
from pathlib import Path

import pandas as pd
import pytest

import valuecore as vc
from valuecore._cli.commands import main
from valuecore.report import REPORT_SECTIONS, html_report

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_runs"
HOSTILE = '<img src=x onerror="alert(1)">&b'


def run_cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def digits_report(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "REPORT.html"
    code, out, err = run_cli("report", str(SAMPLES / "digits"), "--omega", "5", "--html", str(path),
                             "--currency", "$", "--volume", "5000", "--period", "week")
    assert code == 0, err
    assert f"wrote the HTML report to {path}" in out
    return path


def recommended_runs(report, use_case) -> dict:
    """Each model with the rule report uses by default (its recommended one), on the test split."""
    pipeline = vc.Pipeline(report.models)
    return {m: (pipeline.policy(m, vc.RECOMMENDED_RULE, use_case), r.splits["test"])
            for m, r in report.models.items()}


@pytest.mark.heavy
def test_the_report_has_every_section_and_the_verdict_in_the_wording_modules_words(digits_report):
    text = digits_report.read_text(encoding="utf-8")
    for section in REPORT_SECTIONS:
        assert f'<section id="{section}">' in text
    use_case = vc.UseCase.from_omega(5)
    report = vc.load_runs([str(SAMPLES / "digits")])
    runs = recommended_runs(report, use_case)  # the default rule: each model's recommended one
    verdict = vc.verdict(runs, use_case)
    best = report.models[verdict.best].splits  # its threshold reads on the items shown (tuning and evaluated)
    best_confidences = [*best["val"].confidence, *best["test"].confidence]
    for sentence in vc.wording.verdict_sentences(verdict, "$", period="week", volume=5000,
                                                 confidences=best_confidences):
        assert html.escape(sentence) in text
    # It leads with the one recommendation, weighed over every rule by the export's pipeline.
    pipeline = vc.Pipeline(report.models)
    recommended = vc.recommend(pipeline, use_case)
    # Its threshold reads with the digits that tell the decision apart on the items shown (tuning and evaluated).
    shown = report.models[recommended.model].splits
    confidences = [*shown["val"].confidence, *shown["test"].confidence]
    headline = html.escape(vc.wording.recommendation_headline(recommended, confidences))
    assert text.index(headline) < text.index('<section id="settings">')
    reason = vc.wording.recommendation_reason(recommended, "$")
    assert html.escape(reason) in text
    # The policy JSON is the one the CLI writes, and it is the same document, naming the recommendation.
    document, _ = vc.policy_json.build_policy_document(report.models, use_case, kind=vc.RECOMMENDED_RULE)
    document, _ = vc.recommended_document(pipeline, document, recommended, use_case, reason)
    assert html.escape(document.to_json()) in text
    assert text.count("<svg") == 3  # VOC, value against threshold, calibration
    assert "<script" not in text and "http://" not in text.replace("http://www.w3.org", "")


def test_names_from_files_are_escaped(tmp_path):
    frame = pd.read_csv(SAMPLES / "breast_cancer" / "logreg.csv")
    frame.to_csv(tmp_path / f"{HOSTILE}.csv", index=False)
    report = vc.load_runs([str(tmp_path)])
    assert list(report.models) == [HOSTILE]
    text = html_report(report.models, vc.UseCase(1, 0, -4), currency="<b>")
    assert HOSTILE not in text and "<b>" not in text
    assert html.escape(HOSTILE) in text


@pytest.mark.heavy
def test_a_bad_html_path_is_a_clear_error(tmp_path):
    code, _, err = run_cli("report", str(SAMPLES / "digits"), "--omega", "5",
                           "--html", str(tmp_path / "missing" / "r.html"))
    assert code == 2 and "cannot write the HTML report" in err and "Traceback" not in err


@pytest.mark.e2e
def test_the_report_opens_offline_with_every_chart_drawn(digits_report, browser):
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        requests, failures = [], []
        page.on("request", lambda r: requests.append(r.url))
        page.on("requestfailed", lambda r: failures.append(r.url))
        page.on("console", lambda m: failures.append(m.text) if m.type == "error" else None)
        url = digits_report.resolve().as_uri()
        page.goto(url)
        page.wait_for_load_state("load")
        assert requests == [url], requests  # nothing but the file itself
        assert failures == []
        charts = page.locator("figure svg")
        assert charts.count() == 3
        for i in range(3):
            chart = charts.nth(i)
            box = chart.bounding_box()
            assert box["width"] > 300 and box["height"] > 200
            # Drawn: marks (lines, points) and axis labels are in the SVG.
            assert chart.locator("path").count() > 10
            assert chart.locator("text").count() > 10
        assert page.locator("h1").inner_text() == "Which model to deploy"
    finally:
        context.close()  # the browser is the process's shared one (tests/conftest.py)


@pytest.mark.heavy
def test_the_command_line_says_the_verdict_in_the_same_words():
    code, out, _ = run_cli("report", str(SAMPLES / "digits"), "--omega", "5", "--currency", "$")
    assert code == 0
    use_case = vc.UseCase.from_omega(5)
    report = vc.load_runs([str(SAMPLES / "digits")])
    runs = recommended_runs(report, use_case)
    verdict = vc.verdict(runs, use_case)
    kinds = {policy.kind for policy, _ in runs.values()}
    rule = f" ({vc.wording.rule_name(kinds.pop())})" if len(kinds) == 1 else ""
    assert f"verdict{rule}: {vc.wording.verdict_headline(verdict, '$')}" in out
    assert "labelled items in all" in out


def test_the_settings_never_say_tuned_on_none(tmp_path):
    # issue 35: at a wrong answer of -1000 two models get a threshold from ω alone (calibrated_threshold):
    # the report's settings read "Tuned on / evaluated on: None / test, val / test".
    out = tmp_path / "report.html"
    code, _, err = run_cli("report", str(SAMPLES / "digits"), "--v-correct", "1", "--v-abstain", "0",
                           "--v-wrong", "-1000", "--html", str(out))
    assert code == 0, err
    text = html.unescape(out.read_text(encoding="utf-8"))
    row = text.split("Tuned on / evaluated on</td><td>")[1].split("</td>")[0]
    assert "None" not in row and row.startswith("val / test")
    assert "set from the values alone, no tuning split / test" in row
