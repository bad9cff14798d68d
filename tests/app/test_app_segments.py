"""The Segments page through the whole app with AppTest: it opens on every sample, says so plainly where no
run has a segment column, shows valuecore's segment fit on the diabetes sample, its cap sliders change the
table and the caps hold in what it shows, its choices are in the link, and names from files read as text."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import valuecore as vc
from dashboard import serverfiles
from dashboard.views import segments as view

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
DIABETES = ROOT / "sample_runs" / "diabetes"
PAGE = "pages/segments.py"


def start(src: str, **link: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["src"] = src
    for key, value in link.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def table(at: AppTest, column: str = "Segment") -> pd.DataFrame:
    found = [d.value for d in at.dataframe if column in d.value.columns]
    assert found, [list(d.value.columns) for d in at.dataframe]
    return found[-1]  # the whole table (the one above it shows its first columns)


def expected(model: str, column: str, caps: vc.constraints.SegmentCaps):
    """valuecore's segment fit on 'val' and its evaluation on 'test', the labels read from the file as written."""
    run = vc.load_runs([str(DIABETES)]).models[model]
    frame = pd.read_csv(DIABETES / f"{model}.csv", dtype=str, keep_default_na=False)
    labels = {s: frame.loc[frame["split"] == s, column].to_numpy() for s in ("val", "test")}
    fit = vc.constraints.fit_segments(run.splits["val"], labels["val"], vc.UseCase(1, 0, -4), caps=caps,
                                      column=column)
    return fit, vc.constraints.evaluate_segments(fit.policy, run.splits["test"], labels["test"], vc.UseCase(1, 0, -4))


@pytest.mark.parametrize("sample", ["digits", "digits_shifted", "breast_cancer"])
def test_without_a_segment_column_the_page_says_so_and_points_to_the_sample(sample):
    at = start(f"sample:{sample}")
    assert [i.value for i in at.info] == [view.no_column_note()]
    assert "**diabetes**" in at.info[0].value
    assert not at.dataframe
    assert not [w.key for w in at.select_slider if str(w.key).startswith("segments_")]


@pytest.fixture(scope="module")
def diabetes():
    return start("sample:diabetes", segmodel="logreg")


def test_the_diabetes_sample_shows_each_segment_as_valuecore_fits_it(diabetes):
    at = diabetes
    assert at.selectbox(key="segments_column").options == ["sex", "age_band"]
    assert at.selectbox(key="segments_column").value == "sex"
    # Every cap starts off.
    assert [at.select_slider(key=f"segments_{name}").value for _, _, name in view.CAPS] == [view.NO_CAP] * 3
    fit, evaluation = expected("logreg", "sex", vc.constraints.SegmentCaps())
    shown = table(at)
    assert shown["Segment"].tolist() == ["1", "2"]
    assert shown["Value per item"].tolist() == [vc.wording.money(r.value_per_item, "$") for r in evaluation.segments]
    assert shown["Hand-off rate"].tolist() == [vc.wording.percent(r.handoff_rate) for r in evaluation.segments]
    markdown = "\n".join(m.value for m in at.markdown)
    assert "No caps: each segment has its own best threshold. Move a cap above" in markdown
    # The segments are small: the page says so.
    # One sentence a split naming every small segment, not one clause a segment that repeats itself.
    small = [w.value.replace("\\", "") for w in at.warning if "too small to say anything" in w.value]
    assert small and all(w.count("too small") == 1 for w in small)
    assert all("segments '1' (" in w and " and '2' (" in w for w in small), small
    # One chart a measure (hand-off rate, error rate, value per item), each as wide as the page.
    assert sum(1 for e in at.main if getattr(e, "type", None) == "vega_lite_chart") == 3


def test_a_cap_changes_the_table_holds_on_the_tuning_split_and_is_costed():
    at = start("sample:diabetes", segmodel="logreg")
    before = table(at)["Rule"].tolist()
    at.select_slider(key="segments_segment_cap_handoff").set_value(0.0).run()
    assert not at.exception, [e.value for e in at.exception]
    fit, evaluation = expected("logreg", "sex", vc.constraints.SegmentCaps(handoff_gap=0.0))
    assert fit.cap_cost_per_item > 0
    after = table(at)
    assert after["Rule"].tolist() != before
    assert after["Value per item"].tolist() == [vc.wording.money(r.value_per_item, "$") for r in evaluation.segments]
    markdown = "\n".join(m.value for m in at.markdown)
    assert f"**{vc.wording.segment_cap_sentence(fit, '$')}**" in markdown
    assert f"The caps cost {vc.wording.amount(fit.cap_cost_per_item, '$')} per item" in markdown
    # What the page shows for the tuning split keeps within the cap, read back from its own cells.
    gaps = table(at, "").set_index("")
    assert list(gaps.columns) == ["Hand-off rate", "Error rate", "Value per item"]
    assert gaps.loc["Cap", "Hand-off rate"] == "0.0%"
    assert gaps.loc["Gap on val (tuning)", "Hand-off rate"] == "0.0%"
    rates = at.session_state["settings"]
    assert rates.segment_cap_handoff == 0.0 and at.query_params["caphandoff"] == "0.0"


def test_the_column_and_caps_come_back_from_the_link():
    at = start("sample:diabetes", segcol="age_band", segmodel="svm_rbf", caperror="0.05", capvalue="0.1")
    assert at.selectbox(key="segments_column").value == "age_band"
    assert at.selectbox(key="segments_model").value == "svm_rbf"
    assert at.select_slider(key="segments_segment_cap_error").value == 0.05
    assert at.select_slider(key="segments_segment_cap_value").value == 0.1
    fit, _ = expected("svm_rbf", "age_band", vc.constraints.SegmentCaps(error_gap=0.05, value_gap=0.1))
    assert fit.evaluation.error_gap <= 0.05 + 1e-9 and fit.evaluation.value_gap <= 0.1 + 1e-9
    assert table(at)["Segment"].tolist() == list(fit.policy.segments)


HOSTILE = "**B** $M$ [x](http://127.0.0.1:9/) ![i](http://127.0.0.1:9/i.png) <b>h</b>"


def test_hostile_segment_and_column_names_read_as_text(tmp_path, monkeypatch):
    root = tmp_path / "root"
    (root / "runs").mkdir(parents=True)
    frame = pd.read_csv(DIABETES / "logreg.csv", dtype=str, keep_default_na=False)
    frame["sex"] = frame["sex"].map({"1": HOSTILE, "2": ":red[two] @x"})
    frame.rename(columns={"sex": "grp " + HOSTILE}).to_csv(root / "runs" / "logreg.csv", index=False)
    monkeypatch.setenv(serverfiles.ENV_VAR, str(root))
    at = start("folder:runs")
    assert HOSTILE in table(at)["Segment"].tolist()  # a table cell: the name as written
    texts = [m.value for m in at.markdown] + [w.value for w in at.warning] + [s.value for s in at.subheader]
    texts += [i.value for i in at.info] + [c.value for c in at.caption]
    for text in texts:
        for piece in ("**B**", "$M$", "](http://127.0.0.1:9", "<b>h</b>", ":red[two]"):
            assert piece not in text, (piece, text)
    assert any("\\*\\*B\\*\\*" in text for text in texts)  # the name is there, escaped


@pytest.mark.parametrize("value", ["1e101", "-1", "nan", "0", HOSTILE])
def test_every_setting_set_to_a_hostile_value_in_a_link_breaks_not_the_page(value):
    from dashboard.settings import QUERY_KEYS

    link = {key: value for key in sorted(QUERY_KEYS) if key != "src"}
    at = start("sample:diabetes", **link)  # start() checks that no exception is shown
    assert at.selectbox(key="segments_column").value in ("sex", "age_band")
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("values", [(1e308, 0.0, -1e308), (0.0, 0.0, 0.0), (-1.0, 0.0, 1.0)])
def test_extreme_and_degenerate_values_break_not_the_page(values):
    v_correct, v_abstain, v_wrong = values
    at = start("sample:diabetes", vc=repr(v_correct), va=repr(v_abstain), vw=repr(v_wrong), capvalue="0.0")
    assert not at.error, [e.value for e in at.error]
    assert table(at)["Segment"].tolist() == ["1", "2"]
