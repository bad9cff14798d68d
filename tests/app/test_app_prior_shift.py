"""The Monitor page's class-mix section, through the whole app with AppTest: its table carries the
figures of valuecore.monitoring on the breast_cancer sample's unlabelled prod split."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import valuecore as vc
from dashboard.views.monitor import mix_table

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def test_class_mix_per_chunk_on_the_production_sample():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.sidebar.selectbox(key="sidebar_source").set_value("sample:breast_cancer").run()
    at.switch_page("pages/monitor.py").run()
    assert not at.exception, [e.value for e in at.exception]
    model = at.selectbox(key="monitor_prior_model").value
    assert at.selectbox(key="monitor_prior_split").value == "prod"
    shown = next(frame.value for frame in at.dataframe if "Share of benign" in frame.value.columns)
    run = vc.load_runs([str(ROOT / "sample_runs" / "breast_cancer")]).models[model]
    values = vc.UseCase(1, 0, -4)
    # the pages' default rule: the model's recommended one
    runs = vc.load_runs([str(ROOT / "sample_runs" / "breast_cancer")]).models
    policy = vc.Pipeline(runs, "val", "test").policy(model, vc.RECOMMENDED_RULE, values)
    expected = mix_table(run.splits["val"], run.splits["prod"], policy, values, policy.kind, 6)
    assert list(shown["Share of benign"]) == list(expected["Share of benign"])
    assert shown["As tuned"].tolist() == pytest.approx(expected["As tuned"].tolist())
    assert shown["Gain"].tolist() == pytest.approx(expected["Gain"].tolist())
    # Each chunk's estimate is EM on that chunk alone.
    first = vc.monitoring.chunk_predictions(run.splits["prod"], n_chunks=6)[0].predictions
    estimate = vc.monitoring.estimate_priors(first, run.splits["val"], "em")
    assert shown["Share of benign"].iloc[0].startswith(f"{vc.wording.percent(estimate.priors[0])} (")
    assert list(shown["Rule used"]) == list(expected["Rule used"])  # the guard's decision, per chunk
    assert shown["Re-tuned (raw)"].tolist() == pytest.approx(expected["Re-tuned (raw)"].tolist())
    text = "\n".join(m.value for m in at.markdown)
    if expected["Gain"].max() > 0:
        assert "Re-tuning for the estimated mix is adopted on" in text
    else:  # the sample's production mix is close to its tuning mix, or the gain is within noise
        assert "would not earn more on any chunk" in text or "clear its noise" in text
    # and every model over the whole split, as `report --adapt-to` decides
    per_model = next(frame.value for frame in at.dataframe if "Estimated mix" in frame.value.columns)
    assert sorted(per_model["Model"]) == sorted(run_name for run_name in runs)
    assert "report --adapt-to" in text


def test_mix_table_finds_the_gain_of_re_tuning_per_class_thresholds_under_a_shift():
    import numpy as np
    from helpers.core import gaussian_run

    rng = np.random.default_rng(31)
    reference = gaussian_run((0.5, 0.5), 3000, rng)
    watched = gaussian_run((0.9, 0.1), 6000, rng, labelled=False)
    values = vc.UseCase.from_omega(4)
    policy = vc.fit_policy("class_thresholds", vc.presort(reference), values)
    table = mix_table(reference, watched, policy, values, "class_thresholds", 3)
    assert len(table) == 3 and table["Items"].sum() == 6000
    assert all(float(cell.split()[0].strip("<>%")) > 85 for cell in table["Share of c0"])  # shares in percent
    assert (table["Gain"] > 0).all()


def monitor_on_the_production_sample() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.sidebar.selectbox(key="sidebar_source").set_value("sample:breast_cancer").run()
    at.switch_page("pages/monitor.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def class_mix_tables(at) -> set:
    return {name for frame in at.dataframe for name in ("Share of benign", "Estimated mix")
            if name in frame.value.columns}


def test_a_long_class_mix_estimate_waits_for_the_visitor_and_then_runs(monkeypatch):
    """Issue 36: the Monitor page re-tuned on every view (136 s for one 50-class run of 600 rows). Past a
    bound of items x classes^2 it asks first; the bound is lowered here so the small sample crosses it."""
    from dashboard.views import monitor as view

    monkeypatch.setattr(view, "MIX_AUTO_WORK", 0)
    view._MIXED.clear()  # the tables an earlier test made are kept
    calls = []
    table = view.mix_table
    monkeypatch.setattr(view, "mix_table", lambda *a, **k: calls.append(1) or table(*a, **k))
    at = monitor_on_the_production_sample()
    assert not class_mix_tables(at) and not calls  # nothing estimated on the view itself
    assert "item·class²" in "\n".join(c.value for c in at.caption)
    at.toggle(key="monitor_prior_run").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    assert class_mix_tables(at) == {"Share of benign", "Estimated mix"} and calls  # chunks, and every model


def test_a_class_mix_estimate_beyond_the_pages_bound_names_the_command_line(monkeypatch):
    from dashboard.views import monitor as view

    monkeypatch.setattr(view, "MIX_AUTO_WORK", 0)
    monkeypatch.setattr(view, "MIX_MAX_WORK", 0)
    at = monitor_on_the_production_sample()
    assert not class_mix_tables(at)
    assert not [t for t in at.toggle if t.key == "monitor_prior_run"]
    assert "--adapt-to" in "\n".join(i.value for i in at.info)


def test_em_steps_are_bounded_per_view_and_an_unconverged_estimate_is_said(monkeypatch):
    """EM's steps vary with the data (1,509 for 10^5 items of 200 classes): the page bounds them by the cells
    of its estimates, and says where EM stopped before converging."""
    from dashboard.views import monitor as view

    monkeypatch.setattr(view, "MIX_EM_CELLS", 0)
    monkeypatch.setattr(view, "EM_MIN_STEPS", 1)
    view._MIXED.clear()
    steps = []
    estimate = vc.monitoring.estimate_priors
    monkeypatch.setattr(vc.monitoring, "estimate_priors",
                        lambda *a, **k: steps.append(k.get("max_iter")) or estimate(*a, **k))
    at = monitor_on_the_production_sample()
    assert steps and set(steps) == {1}
    text = "\n".join([m.value for m in at.markdown] + [w.value for w in at.warning])
    assert "EM stopped on chunk(s)" in text and "EM stopped over the whole split" in text
    assert "runs EM to convergence" in text
