"""Every threshold and amount reads the same on every surface (issue 35, "one vocabulary", end to end).

``test_app_one_vocabulary`` follows the recommended model's threshold through the first page, Value &
thresholds, Capacity, Export, the CLI and the HTML report. Here, on the sample runs:

* each model's threshold, not only the recommended one's, in the tables of the Value page and the Export
  page, the CLI's section of the model and the HTML report's value table (a rule fitted on no data, the
  calibrated threshold ω/(1+ω), used to be written on the evaluated split alone by the CLI and the report:
  0.990 there, 0.99009 on the pages);
* the recommended model's value per item, total value and likely range on the first page, the Value page,
  the Export page, the CLI and the HTML report (the CLI wrote 0.9400 for $0.94, the tables $423.00 for the
  sentence's $423, the interval $0.87 to $0.98 beside the sentence's $0.867 to $0.979);
* no page writes a threshold with more than six significant digits (after temperature scaling the
  Calibration page wrote 0.42461220986113973);
* no table says the currency twice, in its header and in its cells (Export's "Value per item ($)" over
  "$0.94");
* the Segments page's one threshold for every segment, "the Value page's", reads as on the Value page, its
  value per item too ($0.135 there beside the Value page's $0.14);
* the Calibration page's formula threshold ω/(1+ω) reads as the Value page writes the calibrated threshold
  (a column format of four decimals wrote 0.9091 where the Value page writes 0.909 and 0.90909).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from helpers.app import tables_of
from streamlit.testing.v1 import AppTest

import valuecore as vc
from valuecore.cli import main

pytestmark = pytest.mark.heavy  # whole-app walks (README's quick loop leaves them out)

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
DIGITS = ROOT / "sample_runs" / "digits"
NUMBER = r"-?\$?-?[\d,]+(?:\.\d+)?"


def app(page: str | None = None, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"src": "sample:digits", **query})
    at.run()
    if page is not None:
        at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def tables(at: AppTest):
    """Each table of the page as the reader sees it: a Styler's display text, else the frame."""
    yield from tables_of(at.dataframe)


def column(at: AppTest, name: str) -> dict[str, str]:
    """model -> the text of ``name`` in the first table of the page with a Model and that column."""
    for table in tables(at):
        if name in table.columns and "Model" in table.columns:
            return {str(m): str(v) for m, v in zip(table["Model"], table[name])}
    raise AssertionError(f"no table with a {name!r} column")


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.main.get("metric") if m.label == label)


def words(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    return re.sub(r"\\(.)", r"\1", "\n".join(parts))


def cli_report(tmp_path, capsys, *args) -> tuple[str, str]:
    """(the text of ``report``, the HTML report's text with its tags in place)."""
    report = tmp_path / "report.html"
    assert main(["report", str(DIGITS), "--v-correct", "1", "--v-abstain", "0", *args, "--currency", "$",
                 "--html", str(report)]) == 0
    return capsys.readouterr().out, html.unescape(report.read_text(encoding="utf-8"))


def cli_section(out: str, model: str) -> dict[str, str]:
    """The ``key  value`` lines of the model's section of the CLI report."""
    section = out[out.index(f"== {model} "):].split("\n\n")[0]
    lines = re.finditer(r"^([A-Za-z0-9%][A-Za-z0-9% ]*?) {2,}(.+)$", section, re.M)
    return {m.group(1): m.group(2).strip() for m in lines}


def html_value_rows(page: str) -> dict[str, list[str]]:
    """model -> the cells of its row in the HTML report's value table (Model, Rule, Value per item, Total value,
    Acted on, Right when acting, 95% interval)."""
    table = page[page.index('id="value"'):]
    table = table[: table.index("</table>")]
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", table, re.S):
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        if cells:
            rows[cells[0]] = cells
    return rows


def one_threshold(text: str) -> str | None:
    """The threshold of a one-threshold rule in a cell or a line; None for per-class rules and words."""
    found = re.fullmatch(r"(?:act when confidence ≥ )?(\d\.\d+|1)(?:  \(act iff.*)?", text.strip())
    return found.group(1) if found else None


@pytest.mark.parametrize("v_wrong, calibration", [(-100.0, "none"), (-4.0, "temperature")],
                         ids=["digits at -100", "digits at -4, temperature"])
def test_every_models_threshold_reads_the_same_on_every_surface(v_wrong, calibration, tmp_path, capsys):
    query = {"vw": repr(v_wrong), "cal": calibration}
    value_page = column(app("value", **query), "Threshold")
    export_page = column(app("export", **query), "Threshold")
    out, page = cli_report(tmp_path, capsys, "--v-wrong", repr(v_wrong), "--calibration", calibration)
    html_rows = html_value_rows(page)
    models = [m for m in value_page if m in export_page and one_threshold(value_page[m])]
    assert len(models) >= 3, value_page  # enough one-threshold models to tell spellings apart
    differ = {}
    for model in models:
        spelled = {
            "Value & thresholds": value_page[model],
            "Export": export_page[model],
            "CLI": one_threshold(cli_section(out, model).get("threshold", "")),
            "HTML report": one_threshold(html_rows[model][1]),
        }
        if len(set(spelled.values())) != 1:
            differ[model] = spelled
    assert not differ, f"thresholds read differently: {differ}"


def test_the_recommended_models_amounts_read_the_same_on_every_surface(tmp_path, capsys):
    runs = vc.load_runs([str(DIGITS)]).models
    rec = vc.recommend(vc.Pipeline(runs, "val", "test", "none"), vc.UseCase(1, 0, -4))
    model = rec.model
    first = app()
    value = app("value")
    export = app("export")
    out, page = cli_report(tmp_path, capsys, "--v-wrong", "-4")
    cli = cli_section(out, model)
    html_row = html_value_rows(page)[model]

    per_item = {
        "first page, tile": metric(first, "Value per item"),
        "Value & thresholds, tile": metric(value, "Value per item"),
        "Value & thresholds, table": column(value, "Value per item")[model],
        "Export, table": column(export, "Value per item")[model],
        "CLI": cli["value per item"],
        "HTML report, value table": html_row[2],
    }
    sentence = next(line for line in words(value).splitlines() if "brings the most value" in line)
    total = {
        "Value & thresholds, sentence": re.search(rf"\(({NUMBER}) in all", sentence).group(1),
        "Value & thresholds, table": column(value, "Total value")[model],
        "CLI": cli["value total"],
        "HTML report, value table": html_row[3],
    }
    likely = re.search(rf"{model}: Likely range ({NUMBER}) to ({NUMBER}) per item", words(value))
    likely_range = {
        "Value & thresholds, sentence": f"{likely.group(1)} to {likely.group(2)}",
        "Value & thresholds, table": column(value, "95% interval")[model],
        "Export, table": column(export, "95% interval")[model],
        "CLI": cli["95% interval"].split("  (")[0],
        "HTML report, value table": html_row[6],
    }
    differ = {what: spelled for what, spelled in
              (("value per item", per_item), ("total value", total), ("likely range", likely_range))
              if len(set(spelled.values())) != 1}
    assert not differ, f"{model}'s amounts read differently: {differ}"


def significant_digits(text: str) -> int:
    return len(text.replace(".", "").lstrip("0"))


def test_no_page_writes_a_threshold_with_more_than_six_significant_digits():
    """After temperature scaling every threshold is a 16-digit float; every page writes at most 6 digits of it
    (the exact one is in the tooltip and the policy JSON)."""
    too_long = {}
    for page in ("value", "compare", "constraints", "cost_matrix", "calibration", "export"):
        at = app(page, cal="temperature")
        found = re.findall(r"≥ \**(\d\.\d+)", words(at))
        for table in tables(at):
            for name in table.columns:
                if "threshold" in str(name).lower():
                    found += [str(v) for v in table[name] if re.fullmatch(r"\d\.\d+", str(v))]
        long = sorted({t for t in found if significant_digits(t) > vc.wording.THRESHOLD_SIGNIFICANT})
        if long:
            too_long[page] = long[:5]
    assert not too_long, f"thresholds with more than 6 significant digits: {too_long}"


def shown_tables(at: AppTest):
    """Each table of the page with its cells as Streamlit draws them: a number column's printf format applied
    (``st.column_config.NumberColumn(format="%.4f")`` draws 0.9090909 as 0.9091), text as it is."""
    for element, table in zip(at.dataframe, tables(at)):
        config = json.loads(element.proto.columns or "{}")
        table = table.copy()
        for name, column_config in config.items():
            type_config = column_config.get("type_config") or {}
            printf = type_config.get("format")
            if name in table.columns and type_config.get("type") == "number" and printf and "%" in printf:
                table[name] = [printf % float(v) for v in table[name]]
        yield table


def test_the_formula_threshold_on_calibration_reads_as_on_the_value_page():
    omega = max(vc.DEFAULT_KS)  # Table 5 runs ω = 0..10; the sidebar's wrong answer -ω makes it the Value page's
    value_page = column(app("value", vw=repr(-float(omega)), rule="calibrated_threshold"), "Threshold")
    table5 = next(t for t in shown_tables(app("calibration")) if "ω/(1+ω)" in t.columns)
    calibration_page = {str(m): str(t) for m, k, t in zip(table5["Model"], table5["Penalty ω"], table5["ω/(1+ω)"])
                        if float(k) == omega}
    models = [m for m in value_page if m in calibration_page]
    assert len(models) >= 3 and len({value_page[m] for m in models}) > 1, value_page  # spellings to tell apart
    assert {m: calibration_page[m] for m in models} == {m: value_page[m] for m in models}


@pytest.mark.parametrize("page", ["export", "value", "cost_matrix", "compare", "constraints", "segments"])
def test_no_table_names_the_currency_in_its_header_and_in_its_cells(page):
    query = {"src": "sample:diabetes"} if page == "segments" else {}
    repeated = {}
    for table in shown_tables(app(page, **query)):
        for name in table.columns:
            if "($)" in str(name) and any("$" in str(cell) for cell in table[name]):
                repeated[str(name)] = [str(cell) for cell in table[name]][:3]
    assert not repeated, f"the currency in the header and in the cells on {page!r}: {repeated}"


def test_the_segments_pages_one_threshold_reads_as_on_the_value_page():
    segments = app("segments", src="sample:diabetes")
    headings = re.sub(r"\\(.)", r"\1", "\n".join(h.value for h in segments.subheader))  # markdown-escaped names
    model = re.search(r"One threshold per \S+ for (\S+)", headings).group(1)
    said = re.search(rf"one threshold for every segment \((\S+), the Value page's\) earns ({NUMBER})", words(segments))
    value_page = app("value", src="sample:diabetes", rule="threshold")
    assert said.groups() == (column(value_page, "Threshold")[model], column(value_page, "Value per item")[model])
