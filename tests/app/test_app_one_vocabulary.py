"""One threshold reads the same everywhere a person reads it (issue 35, "one vocabulary").

The recommended model's threshold, on the sample runs, as the first page, Value & thresholds, Capacity &
guarantees (its capacity answer and its reviewers' answer), the Export page's table and headline, the CLI's
report and the HTML report write it: each must be ``valuecore.wording.threshold_on_data`` on the model's
(recalibrated) confidences on its tuning and evaluated splits. The cases are chosen so that this text is
not the exact threshold (0.632 for 0.632951…, and after temperature scaling a threshold of 16 digits),
where the pages used to print the exact one on some surfaces and the short one on others.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import valuecore as vc
from valuecore.cli import main

pytestmark = pytest.mark.heavy  # whole-app walks (README's quick loop leaves them out)

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
DIGITS = ROOT / "sample_runs" / "digits"
CASES = {  # id: (wrong answer's value, recalibration)
    "digits at -4": (-4.0, "none"),
    "digits at -100": (-100.0, "none"),
    "digits at -4, temperature": (-4.0, "temperature"),
}


def expected(v_wrong: float, calibration: str):
    """(model, exact threshold, the text every surface must show)."""
    runs = vc.load_runs([str(DIGITS)]).models
    values = vc.UseCase(1, 0, v_wrong)
    rec = vc.recommend(vc.Pipeline(runs, "val", "test", calibration), values)
    assert rec.kind == "threshold", rec.kind
    confidences = np.concatenate([rec.policy.calibrate(runs[rec.model].splits[s]).confidence for s in ("val", "test")])
    text = vc.wording.threshold_on_data(rec.policy.threshold, confidences)
    assert text != vc.wording.threshold(rec.policy.threshold)  # else this case would not tell the spellings apart
    return rec.model, rec.policy.threshold, text


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def app(v_wrong: float, calibration: str, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"src": "sample:digits", "vw": repr(v_wrong), "cal": calibration, **query})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def words(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [s.value for s in at.subheader] + [i.value for i in at.info]
    parts += [c.value for c in at.caption]
    return unescape("\n".join(parts))


def cell(at: AppTest, model: str, column: str) -> str:
    """The text of ``column`` in the row of ``model``, in the first table of the page that has that column."""
    for frame in at.dataframe:
        table = frame.value
        table = getattr(table, "data", table)  # a Styler keeps its frame in .data
        if column in table.columns and "Model" in table.columns:
            return str(table.set_index("Model").at[model, column])
    raise AssertionError(f"no table with a {column!r} column")


def thresholds_in(text: str) -> set[str]:
    return set(re.findall(r"≥ (\d\.\d+)", text)) | set(re.findall(r"threshold \**(\d\.\d+)", text))


@pytest.mark.parametrize("case", list(CASES))
def test_one_threshold_reads_the_same_on_every_surface(case, tmp_path, capsys):
    v_wrong, calibration = CASES[case]
    model, exact, text = expected(v_wrong, calibration)
    spelled = {}

    at = app(v_wrong, calibration)  # the first page
    spelled["first page, headline"] = thresholds_in(at.subheader[0].value)
    spelled["first page, tile"] = {m.value for m in at.main.get("metric") if m.label == "Threshold"}

    at.switch_page("pages/value.py").run()
    spelled["Value & thresholds, table"] = {cell(at, model, "Threshold")}
    spelled["Value & thresholds, sentence"] = thresholds_in(
        next(m.value for m in at.markdown if "brings the most value" in m.value))

    # Capacity: a team that can review everything, so the capacity answer is the unconstrained threshold.
    at = app(v_wrong, calibration, capacity="1000000")
    at.switch_page("pages/constraints.py").run()
    assert not at.exception, [e.value for e in at.exception]
    page = words(at)
    spelled["Capacity, capacity answer"] = thresholds_in(
        next(line for line in page.splitlines() if "items a day" in line and "best rule" in line))
    reviewers = next(line for line in page.splitlines() if line.startswith("For these reviewers"))
    # Today's threshold (tuned as if people were always right): the recommended one.
    today = reviewers if "It is today's threshold" in reviewers else reviewers[reviewers.index("Today's"):]
    spelled["Capacity, reviewers"] = set(thresholds_in(today.split(". ")[0]))

    at.switch_page("pages/export.py").run()
    spelled["Export, table"] = {cell(at, model, "Threshold")}
    spelled["Export, headline"] = thresholds_in(unescape(at.info[0].value).split(". ")[0])

    report = tmp_path / "report.html"
    assert main(["report", str(DIGITS), "--v-correct", "1", "--v-abstain", "0", "--v-wrong", repr(v_wrong),
                 "--calibration", calibration, "--html", str(report), "--currency", "$"]) == 0
    out = capsys.readouterr().out
    spelled["CLI, recommendation"] = thresholds_in(out.splitlines()[0])
    section = out[out.index(f"== {model} "):]
    spelled["CLI, the model's rule"] = set(re.findall(r"^threshold +(\d\.\d+)", section, re.M)[:1])
    page = html.unescape(report.read_text(encoding="utf-8"))
    spelled["HTML report, headline"] = thresholds_in(re.search(r'class="headline">([^<]*)<', page).group(1))
    row = re.search(rf"<tr><td>{re.escape(model)}</td><td[^>]*>([^<]*)<", page[page.index('id="value"'):]).group(1)
    spelled["HTML report, value table"] = thresholds_in(row)

    wrong = {where: found for where, found in spelled.items() if found != {text}}
    assert not wrong, f"{model}'s threshold {exact!r} should read {text} everywhere: {wrong}"


def _everything_shown(at: AppTest) -> str:
    """The page's words: texts, headings, notes, widget labels, tables' headers and text cells, tiles."""
    parts = [words(at)] + [e.value for kind in ("title", "header", "warning", "success", "error")
                           for e in getattr(at, kind)]
    for kind in ("selectbox", "radio", "checkbox", "toggle", "number_input", "slider", "select_slider",
                 "text_input", "text_area", "button", "multiselect"):
        parts += [str(w.label) for w in getattr(at, kind)]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    for frame in [*at.dataframe, *at.get("data_editor")]:
        table = getattr(frame.value, "data", frame.value)
        parts += [str(c) for c in table.columns]
        parts += [str(v) for c in table.columns if table[c].dtype == object for v in table[c]]
    return unescape("\n".join(parts))


def test_every_page_says_hand_off_never_abstain():
    """The sidebar's "Hand-off to a person" is the pages' one word for it; "abstain" is the policy JSON's and the
    serving API's term (``"kind"``, ``decide``'s action), not a word a product manager reads on a page."""
    from helpers.app import pages_in_app

    at = app(-4.0, "none", rule="class_thresholds")
    said = {}
    for page in pages_in_app():
        at.switch_page(page["file"]).run()
        assert not at.exception, (page["file"], [e.value for e in at.exception])
        found = re.findall(r"[^\n]{0,60}\babstain\w*[^\n]{0,40}", _everything_shown(at), flags=re.IGNORECASE)
        if found:
            said[page["file"]] = found
    assert not said, said


# The names a 95% interval went by before "95% interval" was its one name (2026-11-30): "95% low" and "95% high"
# (Export), "95% interval per item" (Value & thresholds), "95% range" (Compare), "Likely range (95%)" and
# "likely value per item (95%)" (the HTML report, the CLI's segment table), "95% CI" (the CLI).
OTHER_INTERVAL_NAMES = re.compile(r"95\s?%\s?(?:low|high|range|CI)\b|\(95\s?%\)|95% interval per item",
                                  flags=re.IGNORECASE)


def _headers(at: AppTest) -> set[str]:
    return {str(c) for frame in [*at.dataframe, *at.get("data_editor")]
            for c in getattr(frame.value, "data", frame.value).columns}


def test_every_page_and_the_report_name_the_interval_95_percent_interval(tmp_path, capsys):
    """The interval reads "95% interval" on every page and in the HTML report: its tables' headers, tiles,
    notes and widgets name it no other way; and the tables that hold one (Value & thresholds, Export, Segments,
    the report's verdict and value tables) name it so."""
    from helpers.app import pages_in_app

    said, headers = {}, {}
    at = app(-4.0, "none", rule="class_thresholds")
    for page in pages_in_app():
        at.switch_page(page["file"]).run()
        assert not at.exception, (page["file"], [e.value for e in at.exception])
        found = OTHER_INTERVAL_NAMES.findall(_everything_shown(at))
        if found:
            said[page["file"]] = found
        headers[page["file"]] = _headers(at)
    # The segments table: on the sample whose runs carry segment columns.
    segments = AppTest.from_file(APP, default_timeout=120)
    segments.query_params.update({"src": "sample:diabetes"})
    segments.run()
    segments.switch_page("pages/segments.py").run()
    assert not segments.exception, [e.value for e in segments.exception]
    if found := OTHER_INTERVAL_NAMES.findall(_everything_shown(segments)):
        said["pages/segments.py, diabetes"] = found
    headers["pages/segments.py, diabetes"] = _headers(segments)
    assert not said, said
    for page in ("pages/value.py", "pages/export.py", "pages/segments.py, diabetes", "pages/compare.py"):
        assert vc.wording.INTERVAL_HEADER in headers[page], (page, headers[page])

    report = tmp_path / "report.html"
    assert main(["report", str(DIGITS), "--omega", "4", "--html", str(report), "--currency", "$"]) == 0
    capsys.readouterr()
    page = html.unescape(report.read_text(encoding="utf-8"))
    assert not OTHER_INTERVAL_NAMES.findall(page), OTHER_INTERVAL_NAMES.findall(page)
    table_headers = re.findall(r"<thead><tr>(.*?)</tr></thead>", page)
    with_interval = [h for h in table_headers if "95%" in h]
    assert len(with_interval) >= 2 and all(f"<th>{vc.wording.INTERVAL_HEADER}</th>" in h for h in with_interval), \
        with_interval
