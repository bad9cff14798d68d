"""A hostile visitor against the app, round two (issue 24, the dashboard part).

Names from files, link parameters and imported policies are shown as text on
every page (M2/M3); link and imported values a widget cannot show are snapped or
refused in words (M4); shared caches never hand one session's class order to
another (M5); file links inside a root that point outside are refused (M6);
visitors never see server paths; the start page's own path works.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import serverfiles
from dashboard.safetext import md_text
from helpers.app import HOSTILE, HOSTILE_2, ROOT, SAMPLE, hostile_frame

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

APP = str(ROOT / "app.py")
PAGES = ("pages/home.py", "pages/runs.py", "pages/value.py", "pages/voc.py", "pages/cost_matrix.py",
         "pages/constraints.py", "pages/calibration.py", "pages/compare.py", "pages/monitor.py",
         "pages/export.py", "pages/how_value_works.py")

# Pieces of the hostile names that survive only when markdown would render them: md_text turns each
# of these characters into an escaped one (\*\*B\*\*, \$M\$, \]\(http\:...), so none is found in escaped text.
_UNESCAPED = (
    ("bold", "**B**"), ("bold", "**c1**"), ("LaTeX", "$M$"), ("LaTeX", "$K$"),
    ("link or image", "](http://127.0.0.1:9"), ("image", "](/i.png)"), ("HTML", "<b>h</b>"), ("HTML", "<b>c2</b>"),
    ("link in a parameter name", "[Sign in again]"), ("link in a file name", "[X](http:127"),
)


def markdown_bodies(at: AppTest) -> list[tuple[str, str]]:
    """(element kind, text) of everything AppTest exposes that Streamlit renders as markdown."""
    out = [("markdown", m.value) for m in at.markdown] + [("caption", c.value) for c in at.caption]
    for kind in ("error", "warning", "info", "success", "exception", "subheader", "header", "title", "toast"):
        out += [(kind, str(e.value)) for e in getattr(at, kind, ())]
    out += [("metric label", m.label) for m in at.metric] + [("metric value", str(m.value)) for m in at.metric]
    out += [("metric help", str(m.proto.help)) for m in at.metric]
    out += [("expander label", e.label) for e in at.expander]
    out += [("tab label", t.label) for t in at.tabs]
    for kind in ("selectbox", "multiselect", "radio", "number_input", "slider", "select_slider", "text_input",
                 "checkbox", "toggle", "button", "text_area", "date_input"):
        for widget in getattr(at, kind, ()):
            out.append((f"{kind} label", str(getattr(widget, "label", ""))))
            out.append((f"{kind} help", str(getattr(widget, "help", "") or "")))
    return out


def unescaped(at: AppTest) -> list[tuple[str, str, str]]:
    found = []
    for kind, text in markdown_bodies(at):
        for what, piece in _UNESCAPED:
            if piece in text:
                found.append((kind, what, text[:300]))
    return found


@pytest.fixture
def hostile_root(tmp_path, monkeypatch):
    root = tmp_path / "root"
    (root / "runs").mkdir(parents=True)
    hostile_frame().to_csv(root / "runs" / "hostile.csv", index=False)
    (root / "runs" / "bad_[X](http:127.0.0.1:9).csv").write_text("not,a,run\n1,2,3\n")  # a load-problem caption
    monkeypatch.setenv(serverfiles.ENV_VAR, str(root))
    return root


def test_every_page_shows_hostile_names_and_link_parameters_as_text(hostile_root):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["src"] = "folder:runs"
    at.query_params["[Sign in again](http://127.0.0.1:9/login)"] = "1"
    at.query_params["m"] = json.dumps(["![x](http://127.0.0.1:9/x.png)", HOSTILE, HOSTILE_2])
    at.query_params["rule"] = HOSTILE
    at.query_params["cal"] = HOSTILE
    at.query_params["boot"] = HOSTILE
    at.query_params["bt"] = HOSTILE
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["selection"].models == (HOSTILE, HOSTILE_2)
    problems = []
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        problems += [(page, *found) for found in unescaped(at)]
    assert not problems, problems[:8]


@pytest.mark.parametrize("rule", ["class_thresholds", "calibrated_class_thresholds"])
def test_per_class_rules_show_hostile_class_names_as_text(hostile_root, rule):
    # The Value page's sentence quotes the best model's class thresholds ("c1: 0.53, c2: 0.69"): class names
    # from the file reached markdown unescaped under a per-class rule.
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["src"] = "folder:runs"
    at.query_params["rule"] = rule
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    problems = []
    for page in ("pages/value.py", "pages/home.py", "pages/export.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        problems += [(page, *found) for found in unescaped(at)]
    assert not problems, problems[:8]


def test_refused_split_names_in_a_link_are_shown_as_text(hostile_root):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["src"] = "folder:runs"
    at.query_params["tune"] = HOSTILE
    at.query_params["eval"] = "**B** $M$ ![i](/i.png)"
    at.query_params["mon"] = HOSTILE
    at.run()
    assert not at.exception
    for page in ("pages/home.py", "pages/monitor.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert not unescaped(at), unescaped(at)[:5]


def hostile_policy() -> dict:
    """A valid policy JSON whose model name and dashboard_settings keys and values are hostile."""
    import valuecore as vc

    report = vc.load_runs(str(ROOT / "sample_runs" / "breast_cancer"))
    run = report.models["logreg"]
    pipeline = vc.Pipeline({HOSTILE: run}, "val", "test", "none")
    document, _ = pipeline.document([HOSTILE], "threshold", vc.UseCase(1, 0, -4))
    data = document.to_dict()
    data["dashboard_settings"] = {HOSTILE: "1", "[Sign in again](http://127.0.0.1:9/login)": "1", "rule": HOSTILE,
                                  "tune": HOSTILE, "boot": "100", "vok": "1e101", "vocr": "[0,1e308]"}
    return data


def test_an_imported_hostile_policy_is_shown_as_text(hostile_root):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["src"] = "sample:breast_cancer"
    at.run()
    at.switch_page("pages/export.py").run()
    at.text_area(key="export_paste").set_value(json.dumps(hostile_policy())).run()
    assert not at.exception, [e.value for e in at.exception]
    found = unescaped(at)
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        found += [(page, *f) for f in unescaped(at)]
    assert not found, found[:8]


# ------------------------------------------------------------------ M4: link values a widget cannot show
HOSTILE_VALUES = ("100", "2001", "100000", "1e101", "-1e101", "1e308", "-1e308", "1e-300", "5", "41", "-1",
                  "0", "nan", "inf", "[0,1e308]", "[0,100.2]", "[1e308,1e309]", "[[0,1e308],[1e308,null]]",
                  '["x","y"]', HOSTILE, "")


def _every_setting_set_to(value: str) -> dict[str, str]:
    from dashboard.settings import QUERY_KEYS

    return {key: value for key in sorted(QUERY_KEYS) if key != "src"}


@pytest.mark.parametrize("link", [
    {"boot": "100"}, {"boot": "2001"}, {"boot": "100000"}, {"vok": "1e101"}, {"vbad": "-1e101"},
    {"vocr": "[0,1e308]"}, {"whatif": "5"}, {"areas": "[[0,1e308]]"},
])
def test_the_issue_links_open_their_page_without_an_error(link):
    page = {"boot": "pages/compare.py", "vok": "pages/constraints.py", "vbad": "pages/constraints.py",
            "vocr": "pages/voc.py", "whatif": "pages/value.py", "areas": "pages/voc.py"}[next(iter(link))]
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["src"] = "sample:breast_cancer"
    for key, value in link.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = "\n".join(e.value for e in at.warning)
    assert "refused" in shown or at.session_state["settings"].to_query().get(next(iter(link))) is not None


@pytest.mark.slow
@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_every_setting_set_to_a_hostile_value_breaks_no_page(value):
    """Every query parameter at once (the same parser reads an imported policy's dashboard_settings)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["src"] = "sample:breast_cancer"
    for key, text in _every_setting_set_to(value).items():
        at.query_params[key] = text
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, value, [e.value for e in at.exception])


# ------------------------------------------------------------------ M5: shared caches and class order
def test_a_session_never_gets_another_sessions_class_order_from_the_caches(tmp_path):
    """A folder aligns X.csv (proba_b, proba_a) to its first file's order (a, b); an upload of X's bytes keeps
    (b, a). Keyed by the SHA-256 alone, the upload got the folder's sorted run and its value matrix failed."""
    from dashboard import data

    rng = np.random.default_rng(0)
    p_a = rng.uniform(size=60)
    y = np.where(rng.uniform(size=60) < p_a, "a", "b")
    pd.DataFrame({"y_true": y, "proba_a": p_a, "proba_b": 1 - p_a}).to_csv(tmp_path / "A.csv", index=False)
    pd.DataFrame({"y_true": y, "proba_b": 1 - p_a, "proba_a": p_a}).to_csv(tmp_path / "X.csv", index=False)
    in_folder = data.Workspace(data.load_folder(tmp_path), "all", "all")
    uploaded = data.Workspace(data.load_uploads([("X.csv", (tmp_path / "X.csv").read_bytes())]), "all", "all")
    assert in_folder.run("X").classes == ("a", "b") and uploaded.run("X").classes == ("b", "a")
    for ws in (in_folder, uploaded, in_folder):
        assert ws.sorted("X", "all").predictions.classes == ws.run("X").classes
        assert ws.calibrated("X", "all").classes == ws.run("X").classes
    import valuecore as vc

    matrix = vc.ValueMatrix(("b", "a"), [[1, -5, 0], [-1, 2, 0]])
    document, _ = uploaded.document(["X"], "class_thresholds", matrix)
    assert document.entries[0].model == "X"


# ------------------------------------------------------------------ M6: file links inside a root
def _app_on(source: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["src"] = source
    at.run()
    at.switch_page("pages/runs.py").run()
    return at


def _everything_shown(at: AppTest) -> str:
    return "\n".join([text for _, text in markdown_bodies(at)] + [d.value.to_csv() for d in at.dataframe])


def test_a_linked_run_file_leading_outside_the_roots_is_refused(tmp_path, monkeypatch):
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    (root / "linkfile").mkdir(parents=True)
    elsewhere.mkdir()
    secret = pd.read_csv(SAMPLE).head(50)
    secret["y_true"] = secret["y_true"].map({"benign": "TOPSECRET_A", "malignant": "TOPSECRET_B"})
    secret = secret.rename(columns={"proba_benign": "proba_TOPSECRET_A", "proba_malignant": "proba_TOPSECRET_B"})
    secret.to_csv(elsewhere / "creds.csv", index=False)
    (root / "linkfile" / "leak.csv").symlink_to(elsewhere / "creds.csv")
    (root / "linkfile" / "good.csv").write_bytes(SAMPLE.read_bytes())
    (root / "linkfile" / "inside.csv").symlink_to(root / "linkfile" / "good.csv")  # a link within the root is fine
    monkeypatch.setenv(serverfiles.ENV_VAR, str(root))
    at = _app_on(f"folder:{root / 'linkfile'}")
    assert not at.exception
    shown = _everything_shown(at)
    assert "TOPSECRET" not in shown
    assert set(at.session_state["selection"].report.models) == {"good", "inside"}
    assert "leak.csv" in shown and md_text(serverfiles.LINK_REFUSAL) in shown


def test_a_linked_part_file_in_a_parquet_dataset_is_refused(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    part = root / "log" / "split=test"
    part.mkdir(parents=True)
    elsewhere.mkdir()
    frame = pd.read_csv(SAMPLE).drop(columns=["split", "id", "timestamp"]).head(60)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), part / "part-0.parquet")
    secret = frame.assign(y_true=frame["y_true"].map({"benign": "TOPSECRET_A", "malignant": "TOPSECRET_B"}))
    secret = secret.rename(columns={"proba_benign": "proba_TOPSECRET_A", "proba_malignant": "proba_TOPSECRET_B"})
    pq.write_table(pa.Table.from_pandas(secret, preserve_index=False), elsewhere / "creds.parquet")
    (part / "part-1.parquet").symlink_to(elsewhere / "creds.parquet")
    monkeypatch.setenv(serverfiles.ENV_VAR, str(root))
    monkeypatch.setenv("VALUE_DASHBOARD_AGGREGATE_CACHE", str(tmp_path / "cache"))
    at = _app_on("folder:log")
    assert not at.exception, [e.value for e in at.exception]
    shown = _everything_shown(at)
    assert "TOPSECRET" not in shown and not at.session_state["selection"].report.models
    assert "part-1.parquet" in shown and md_text(serverfiles.LINK_REFUSAL) in shown
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


# ------------------------------------------------------------------ paths shown to visitors
def test_visitors_see_paths_under_the_roots_name_never_the_server_path(tmp_path, monkeypatch):
    root = tmp_path / "team-runs"
    (root / "2024").mkdir(parents=True)
    (root / "2024" / "logreg.csv").write_bytes(SAMPLE.read_bytes())
    (root / "2024" / "broken.csv").write_text("nothing,useful\n1,2\n")
    monkeypatch.setenv(serverfiles.ENV_VAR, str(root))
    for source in ("folder:2024", f"folder:{root / '2024'}"):
        at = _app_on(source)
        assert not at.exception
        shown = _everything_shown(at)
        assert str(tmp_path) not in shown, shown
        assert "team-runs/2024/logreg.csv" in shown and md_text("team-runs/2024/broken.csv") in shown
    at = _app_on("sample:breast_cancer")
    assert str(ROOT) not in _everything_shown(at)
    assert at.session_state["selection"].report.models["logreg"].path == "sample_runs/breast_cancer/logreg.csv"


# ------------------------------------------------------------------ H1: the server's memory budget
def test_the_heavy_caches_are_bounded_in_bytes_across_caches_and_expire(monkeypatch):
    from dashboard import limits, memory

    monkeypatch.setenv(limits.MEMORY_ENV, "1")  # 1 MiB for every budgeted cache together
    first, second = memory.BudgetCache("test a"), memory.BudgetCache("test b")
    try:
        for i in range(6):
            cache = first if i % 2 else second
            cache.get(("k", i), lambda: np.zeros(400_000 // 8))  # 400 kB each
            assert memory.total_bytes() <= 2**20
        assert len(first) + len(second) == 2  # the four least recently used were dropped
        assert first.get(("k", 5), lambda: "recomputed") is not None
        assert isinstance(second.get(("k", 0), lambda: "recomputed"), str)  # dropped, so computed again
        monkeypatch.setenv(limits.TTL_ENV, "5")
        import time

        assert memory.expire(time.monotonic() + 6) >= 2 and len(first) + len(second) == 0
    finally:
        memory._CACHES.remove(first)
        memory._CACHES.remove(second)


def test_an_upload_too_large_for_the_budget_is_refused_from_its_header_before_parsing(monkeypatch):
    from dashboard import data, limits

    content = b"y_true,proba_a,proba_b\n" + b"a,0.9,0.1\n" * 200_000  # 2 MB, about 200,000 rows
    monkeypatch.setenv(limits.MEMORY_ENV, "4")

    def never(*args, **kwargs):
        raise AssertionError("the upload was parsed")

    monkeypatch.setattr(data, "load_run_file", never)
    report = data.load_uploads([("big.csv", content)])
    assert not report.models
    message = str(report.problems[0])
    assert re.search(r"about 200,\d{3} rows", message) and "budget of 4 MB" in message and limits.MEMORY_ENV in message
    monkeypatch.setenv(limits.MEMORY_ENV, "2048")
    monkeypatch.undo()
    assert data.load_uploads([("big.csv", content)]).models  # within the budget it loads


def _numbers_as_text():
    from hypothesis import strategies as st

    floats = st.floats(allow_nan=True, allow_infinity=True).map(repr)
    huge = st.sampled_from(["1e308", "-1e308", "1e101", "1e-300", "100", "2001", "100000", "5", "-0.0", "nan"])
    pairs = st.lists(st.one_of(st.floats(), st.integers(-10**400, 10**400), st.none()), max_size=3).map(
        lambda v: json.dumps(v, allow_nan=True))
    return st.one_of(floats, huge, pairs, st.text(max_size=30), st.integers(-10**30, 10**30).map(str))


def test_any_link_value_for_any_setting_gives_a_setting_its_widget_can_show():
    """Property: whatever a link (or an imported policy's dashboard_settings) says, parsing never raises,
    and the settings a widget shows stay inside what that widget can show."""
    from hypothesis import given, settings as hypothesis_settings, strategies as st

    import valuecore as vc
    from dashboard.settings import (COMPARE_RESAMPLES, PROMISE_CONFIDENCES, QUERY_KEYS, VOC_AREA_MAX,
                                    VOC_OMEGA_MAX, Settings)

    @hypothesis_settings(max_examples=400)
    @given(key=st.sampled_from(sorted(QUERY_KEYS)), raw=_numbers_as_text())
    def check(key, raw):
        parsed, _ = Settings.from_query({key: raw})
        parsed.to_query()
        assert parsed.compare_resamples in COMPARE_RESAMPLES
        assert parsed.voc_range is None or 0 <= parsed.voc_range[0] < parsed.voc_range[1] <= VOC_OMEGA_MAX
        assert parsed.what_if is None or 0 <= parsed.what_if <= 1
        for amount in (parsed.constraints_v_ok, parsed.constraints_v_bad):
            assert amount is None or abs(amount) <= vc.policy_json.VALUE_LIMIT
        assert all(c is None or 0 <= c <= VOC_AREA_MAX for row in parsed.voc_areas for c in row)
        assert parsed.constraints_confidence in PROMISE_CONFIDENCES
        assert 2 <= parsed.monitor_chunks <= 40 and 2 <= parsed.backtest_chunks <= 20
        assert 5 <= parsed.calibration_bins <= 30 and 0 <= parsed.constraints_max_risk <= 0.3

    check()


def test_importing_a_policy_made_from_another_file_names_the_loaded_file_without_its_server_path(
        tmp_path, monkeypatch):
    import valuecore as vc

    root = tmp_path / "team-runs"
    (root / "2024").mkdir(parents=True)
    (root / "2024" / "logreg.csv").write_bytes(SAMPLE.read_bytes() + b"\n")  # the same rows, another file
    monkeypatch.setenv(serverfiles.ENV_VAR, str(root))
    report = vc.load_runs(str(SAMPLE.parent))
    document, _ = vc.Pipeline({"logreg": report.models["logreg"]}, "val", "test", "none").document(
        ["logreg"], "threshold", vc.UseCase(1, 0, -4))
    at = _app_on("folder:2024")
    at.switch_page("pages/export.py").run()
    at.text_area(key="export_paste").set_value(json.dumps(document.to_dict())).run()
    assert not at.exception
    shown = _everything_shown(at)
    assert md_text("team-runs/2024/logreg.csv") in shown  # the warning names the loaded file...
    assert str(tmp_path) not in shown and str(ROOT) not in shown  # ...never by its server path
