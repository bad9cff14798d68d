"""The Monitor page's view model (dashboard.views.monitor), without Streamlit: one estimate everywhere,
and its figures are valuecore's (monitor_bands for the estimate, monitor for coverage)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import valuecore as vc
from dashboard.data import Workspace
from dashboard.settings import Settings
from dashboard.state import Selection
from dashboard.views import monitor as view

ROOT = Path(__file__).resolve().parents[2]
VALUES = vc.UseCase(1, 0, -4)


def setup(sample="breast_cancer", calibration="none", models=None):
    """A selection of ``models`` (all by default) of a sample, its workspace and the page's top."""
    report = vc.load_runs([str(ROOT / "sample_runs" / sample)])
    selection = Selection(settings=Settings(source=f"sample:{sample}", calibration=calibration), report=report,
                          models=tuple(models or report.models), use_case=VALUES, tune_split="val", eval_split="test",
                          calibration=calibration)
    ws = Workspace(report, "val", "test", calibration)
    return report, selection, ws, view.build(selection, ws, "threshold", ["breast_cancer"])


def policy_of(run):
    return vc.fit_policy("threshold", vc.presort(run.splits["val"]), VALUES)


def test_the_production_chart_shows_the_bands_estimate():
    report, selection, ws, page = setup(models=("logreg", "random_forest"))
    assert page.unlabelled == {"prod": ("logreg", "random_forest")} and page.labelled == ("test", "val")
    shown = view.production(selection, page, ws, "prod", {"period": "W"})
    for model in page.models:
        run = report.models[model]
        policy = policy_of(run)
        bands = vc.monitoring.monitor_bands(run.splits["val"], run.splits["prod"], policy, VALUES, period="W")
        part = shown.frame[shown.frame["model"] == model]
        assert part["estimated_value_per_item"].tolist() == pytest.approx(
            bands.frame["estimated_value_per_item"].tolist())
        raw = vc.monitoring.monitor(run.splits["prod"], policy, VALUES, period="W")
        assert part["estimated_coverage"].tolist() == pytest.approx(raw["estimated_coverage"].tolist())
        row = shown.summary.set_index("Model").loc[model]
        n = bands.frame["n"].to_numpy()
        assert row["Estimated value ($)"] == pytest.approx(float(n @ bands.frame["estimated_value_per_item"]))
        assert row["Estimated value per item ($)"] == pytest.approx(
            float(n @ bands.frame["estimated_value_per_item"] / n.sum()))
        # "coverage" reads "Acted on" here as on every page (the summary said "Estimated coverage")
        assert row["Acted on (estimated)"] == pytest.approx(
            float(n @ raw["estimated_coverage"].to_numpy() / n.sum()))
        assert not [c for c in shown.summary.columns if "coverage" in c.lower()]
        assert f"{model.replace('_', chr(92) + '_')}** {bands.n_alerts} of {len(bands.frame)} chunks" in shown.alerts
    assert "the same estimate as the bands" in shown.estimate_note
    # the bands section on the model it opens on and the charted split: the very numbers of the chart
    charted = shown.bands_model
    bands = view.bands(selection, page, ws, charted, "val", "prod", {"period": "W"},
                       charted_split="prod", charted_bands=shown.charted_bands)
    part = shown.frame[shown.frame["model"] == charted]
    assert bands.frame["estimated_value_per_item"].tolist() == pytest.approx(
        part["estimated_value_per_item"].tolist())
    assert bands.mismatch == "" and bands.backtest.startswith("Back-test on the labelled split 'test'")


def test_uncalibrated_the_estimate_is_monitor_s_on_the_probabilities_the_policy_acts_on():
    # "none" values the policy's decisions under the probabilities it acts on: valuecore.monitor's estimate,
    # with the sidebar's temperature scaling applied as the policy applies it.
    report, selection, ws, page = setup("digits", calibration="temperature")
    shown = view.backtest(selection, page, ws, "test", 4, calibration="none")
    for model in report.models:
        policy = page.policies[model]
        assert dict(policy.calibration)["method"] == "temperature"
        expected = vc.monitoring.monitor(report.models[model].splits["test"], policy, VALUES, n_chunks=4)
        part = shown.frame[shown.frame["model"] == model]
        assert part["estimated_value_per_item"].tolist() == pytest.approx(
            expected["estimated_value_per_item"].tolist())
        assert part["realised_value_per_item"].tolist() == pytest.approx(expected["realised_value_per_item"].tolist())
    calibrated = view.backtest(selection, page, ws, "test", 4, calibration="auto")
    assert not np.allclose(calibrated.frame["estimated_value_per_item"], shown.frame["estimated_value_per_item"])


def test_the_back_test_table_is_the_bands_estimate_against_the_truth():
    report, selection, ws, page = setup("digits", models=("logreg", "mlp"))
    shown = view.backtest(selection, page, ws, "test", 5)
    table = shown.table.set_index("Model")
    assert list(table.index) == ["logreg", "mlp"]
    for model in page.models:
        run = report.models[model]
        policy = policy_of(run)
        bands = vc.monitoring.monitor_bands(run.splits["val"], run.splits["test"], policy, VALUES, n_chunks=5)
        n = bands.frame["n"].to_numpy()
        estimated = float(n @ bands.frame["estimated_value_per_item"] / n.sum())
        realised = vc.evaluate(policy, run.splits["test"], VALUES).value_total / run.splits["test"].total_weight
        assert table.loc[model, "Estimated per item ($)"] == pytest.approx(estimated)
        assert table.loc[model, "Realised per item ($)"] == pytest.approx(realised)
        assert table.loc[model, "Estimate − realised ($)"] == pytest.approx(estimated - realised)
    assert shown.in_sample == ""
    assert view.backtest(selection, page, ws, "val", 5).in_sample.startswith("Split 'val' is also where")


def test_re_tuned_chunks_say_their_estimate_is_not_the_bands():
    report, selection, ws, page = setup()
    shown = view.production(selection, page, ws, "prod", {"n_chunks": 3}, retune=True)
    model = next(iter(report.models))
    expected = vc.monitoring.monitor(report.models[model].splits["prod"], page.policies[model], VALUES, n_chunks=3,
                                     retune=True)
    part = shown.frame[shown.frame["model"] == model]
    assert part["estimated_value_per_item"].tolist() == pytest.approx(expected["estimated_value_per_item"].tolist())
    assert "not calibrated on the reference split like the bands" in shown.estimate_note
    assert shown.alerts == ""


def test_the_class_mix_is_the_core_s():
    report, selection, ws, page = setup()
    candidates = view.class_mix_candidates(ws, page.models)
    assert candidates == {m: ["prod"] for m in report.models}
    shown = view.class_mix(selection, page, ws, "logreg", "prod", 4, "threshold")
    run = report.models["logreg"]
    expected = view.mix_table(run.splits["val"], run.splits["prod"], policy_of(run), VALUES, "threshold", 4)
    assert shown.table["As tuned"].tolist() == pytest.approx(expected["As tuned"].tolist())
    assert list(shown.table["Share of benign"]) == list(expected["Share of benign"])
    assert ("would earn up to" in shown.verdict) == (expected["Gain"].max() > 0)


def test_without_a_production_split_the_sample_is_offered():
    _, selection, ws, page = setup("digits")
    assert page.unlabelled == {} and page.offer_sample
    options = view.bands_options(selection, ws, page.models)
    assert options.candidates == page.models and options.labelled["mlp"] == ("val", "test")
    assert options.watched(ws, "mlp", "val", None) == ["test"]


# ------------------------------------------------------- class mix: the re-tuning guard
def _half_shifted(rng):
    """A tuning split at 50/50, and an unlabelled split whose first half keeps that mix and second half is 90/10."""
    from helpers.core import gaussian_run

    reference = gaussian_run((0.5, 0.5), 3000, rng)
    same, shifted = (gaussian_run(mix, 3000, rng, labelled=False) for mix in ((0.5, 0.5), (0.9, 0.1)))
    watched = vc.Predictions.from_proba(np.vstack([same.proba, shifted.proba]), classes=same.classes)
    return reference, watched


def test_the_gain_per_chunk_is_that_of_the_rule_the_guard_keeps():
    reference, watched = _half_shifted(np.random.default_rng(31))
    values = vc.UseCase.from_omega(4)
    policy = vc.fit_policy("class_thresholds", vc.presort(reference), values)
    table = view.mix_table(reference, watched, policy, values, "class_thresholds", 4)
    raw = table["Re-tuned (raw)"] - table["As tuned"]
    adopted = table["Rule used"] == view.GUARD_WORDS["adopted"]
    # Where the mix did not move, re-tuning still finds a little (noise): kept, and its gain counts as 0.
    assert list(adopted) == [False, False, True, True]
    assert (raw[~adopted] > 0).any() and (table.loc[~adopted, "Gain"] == 0).all()
    assert table.loc[adopted, "Gain"].tolist() == pytest.approx(raw[adopted].tolist())
    assert (adopted == (table["Worst gain"] > table["Noise bar"])).all()
    # The guard is the core's, chunk by chunk.
    for chunk, (_, row) in zip(vc.monitoring.chunk_predictions(watched, n_chunks=4), table.iterrows()):
        estimate = vc.monitoring.estimate_priors(chunk.predictions, reference, "em")
        retuned = vc.fit_policy("class_thresholds", vc.presort(vc.monitoring.reweight_to_priors(
            reference, estimate.priors)), values)
        gain = vc.monitoring.retuning_gain(retuned, policy, chunk.predictions, values, estimate)
        assert (row["Rule used"] == view.GUARD_WORDS["adopted"]) == gain.adopted
        assert row["Worst gain"] == pytest.approx(gain.worst_gain_per_item)
        assert row["Noise bar"] == pytest.approx(gain.z * gain.standard_error)
    assert view.GUARD_Z == pytest.approx(1.645) and "1.645 standard errors" in view.GUARD_RULE


def test_the_class_mix_verdict_counts_only_adopted_gains():
    """On the breast_cancer sample with per-class thresholds: some chunks' raw gains are positive, none adopted."""
    report, _, _, _ = setup()
    selection = Selection(settings=Settings(source="sample:breast_cancer", rule="class_thresholds"), report=report,
                          models=tuple(report.models), use_case=VALUES, tune_split="val", eval_split="test")
    ws = Workspace(report, "val", "test", "none")
    page = view.build(selection, ws, "class_thresholds")
    within_noise = set()
    for model in page.models:
        shown = view.class_mix(selection, page, ws, model, "prod", 6, "class_thresholds")
        table = shown.table
        adopted = table["Rule used"] == view.GUARD_WORDS["adopted"]
        raw = table["Re-tuned (raw)"] - table["As tuned"]
        assert (table.loc[~adopted, "Gain"] == 0).all()
        if adopted.any():
            assert f"adopted on {int(adopted.sum())} of 6 chunks" in shown.verdict
        elif raw.max() > 0:
            assert "On no chunk does re-tuning's gain clear its noise" in shown.verdict
            assert "would earn up to" not in shown.verdict
            within_noise.add(model)
        else:
            assert "would not earn more on any chunk" in shown.verdict
    # Before the guard, these two read "re-tuning would earn up to ..." while `report --adapt-to` kept the rule.
    assert within_noise == {"random_forest", "svm_rbf"}


@pytest.mark.parametrize("calibration", ["none", "temperature"])
def test_the_class_mix_per_model_says_what_report_adapt_to_does(tmp_path, capsys, calibration):
    """The page's whole-split table and the command line's `report --adapt-to`, on the same sample."""
    import json

    from valuecore.cli import main

    report = vc.load_runs([str(ROOT / "sample_runs" / "breast_cancer")])
    selection = Selection(settings=Settings(source="sample:breast_cancer", calibration=calibration,
                                            rule="class_thresholds"), report=report, models=tuple(report.models),
                          use_case=VALUES, tune_split="val", eval_split="test", calibration=calibration)
    ws = Workspace(report, "val", "test", calibration)
    page = view.build(selection, ws, "class_thresholds")
    shown = view.class_mix(selection, page, ws, "svm_rbf", "prod", 6, "class_thresholds")
    out = tmp_path / "adapted.json"
    code = main(["report", str(ROOT / "sample_runs" / "breast_cancer"), "--omega", "4", "--policy",
                 "class_thresholds", "--calibration", calibration, "--tune-split", "val", "--eval-split", "test",
                 "--adapt-to", "prod", "--no-interval", "--json", str(out)])
    assert code == 0, capsys.readouterr().err
    entries = json.loads(out.read_text())["models"]
    rows = shown.per_model.set_index("Model")
    assert sorted(rows.index) == sorted(e["model"] for e in entries)
    decisions = set()
    for entry in entries:
        record, row = entry["prior_shift"]["retuning"], rows.loc[entry["model"]]
        adopted = row["Rule used"] == view.GUARD_WORDS["adopted"]
        decisions.add(adopted)
        assert adopted == record["adopted"], entry["model"]
        assert row["Gain"] == pytest.approx(record["estimated_gain_per_item"] if adopted else 0.0, abs=1e-12)
        assert row["Worst gain"] == pytest.approx(record["worst_gain_per_item"], abs=1e-12)
        assert row["Noise bar"] == pytest.approx(record["z"] * record["standard_error"], abs=1e-12)
        assert row["As tuned"] + row["Gain"] == pytest.approx(entry["prior_shift"]["estimated_value_per_item"])
        share = entry["prior_shift"]["estimated_priors"]["benign"]
        assert row["Estimated mix"].startswith(f"benign {vc.wording.percent(share)}, malignant ")
    if calibration == "none":
        assert decisions == {True, False}  # svm_rbf's re-tuned rule is adopted, random_forest's kept
    assert "report --adapt-to" in shown.per_model_intro and "1.645 standard errors" in shown.intro
    # Two values per item for one model on one split (this table's and the production table's) say why they differ.
    assert view.MIX_AGAINST_PRODUCTION in shown.per_model_intro
    assert "Worst gain" not in shown.shown_columns and "Rule used" in shown.shown_columns


# ---- what a new user saw (issue 35): the bands open where the alerts are, and the words agree with them
def test_the_bands_open_on_the_model_that_alerts_most_and_name_the_others():
    _, selection, ws, page = setup()
    shown = view.production(selection, page, ws, "prod", {"period": "W"})
    alerts = {m: r.n_alerts for m, r in shown.charted_bands.items()}
    assert max(alerts.values()) > 0  # the sample's production split raises alerts
    assert alerts[shown.bands_model] == max(alerts.values())
    options = view.bands_options(selection, ws, page.models, shown.bands_model)
    assert options.opening == shown.bands_model
    opened = view.bands(selection, page, ws, shown.bands_model, "val", "prod", {"period": "W"},
                        charted_split="prod", charted_bands=shown.charted_bands)
    assert "raised an alert" in " ".join(opened.sentences)
    quiet = next(m for m, n in alerts.items() if n == 0)
    other = view.bands(selection, page, ws, quiet, "val", "prod", {"period": "W"}, charted_split="prod",
                       charted_bands=shown.charted_bands)
    no_alert = next(s for s in other.sentences if s.startswith("No alert"))
    # "No alert" under a line counting another model's alerts used to say nothing of them.
    assert f"No alert for **{quiet.replace('_', chr(92) + '_')}**" in no_alert
    assert "Other models do raise alerts" in no_alert
    # The chart above plots every model: the mismatch note never says it shows one.
    elsewhere = view.bands(selection, page, ws, quiet, "val", "test", {"n_chunks": 8}, charted_split="prod",
                           charted_bands=shown.charted_bands)
    assert elsewhere.mismatch.startswith("The production chart above shows every model on split 'prod'")


def test_a_drop_within_the_bands_is_not_called_worth_investigating(tmp_path):
    # A production split that is a random sample of the reference: its estimate moves by chance, and no chunk
    # leaves the band, so the page must not send anyone to investigate.
    import pandas as pd

    frame = pd.read_csv(ROOT / "sample_runs" / "breast_cancer" / "logreg.csv")
    prod = frame[frame["split"] == "val"].sample(frac=1.0, random_state=0).drop(columns=["y_true"])
    pd.concat([frame[frame["split"] != "prod"], prod.assign(split="prod")]).to_csv(tmp_path / "logreg.csv",
                                                                                  index=False)
    report = vc.load_runs([str(tmp_path)])
    selection = Selection(settings=Settings(), report=report, models=("logreg",), use_case=VALUES,
                          tune_split="val", eval_split="test")
    ws = Workspace(report, "val", "test", "none")
    page = view.build(selection, ws, "threshold", [])
    shown = view.production(selection, page, ws, "prod", {"n_chunks": 6})
    assert shown.charted_bands["logreg"].n_alerts == 0
    assert "moved by -$" in shown.drift  # a drop, by chance
    assert "worth investigating" not in shown.drift and "no alert" in shown.drift


def test_amounts_per_item_have_three_significant_digits_and_the_bands_are_not_below():
    _, selection, ws, page = setup()
    shown = view.production(selection, page, ws, "prod", {"period": "W"})
    bands = view.bands(selection, page, ws, shown.bands_model, "val", "prod", {"period": "W"}, charted_split="prod",
                       charted_bands=shown.charted_bands)
    checked = view.backtest(selection, page, ws, "test", 5)
    for text in (shown.drift, *bands.sentences, checked.verdict):
        assert not re.search(r"\$\d+\.\d{4}", text), text  # "moved by -$0.3865" read as false precision
    # The back-test sits below the bands: its note must not point "below" to them.
    assert "bands below" not in checked.estimate_note and "bands below" not in shown.estimate_note


def test_the_tables_read_money_as_every_page_does():
    # issue 35: "0.9035" and "103.00" in the production summary, four decimals in the back-test.
    from dashboard.tables import styled

    _, selection, ws, page = setup()
    shown = view.production(selection, page, ws, "prod", {"period": "W"})
    html = styled(shown.summary, view.summary_formats(selection)).to_html()
    for _, row in shown.summary.iterrows():
        assert selection.amount(row.iloc[4]) in html and selection.amount(row.iloc[3]) in html
    assert not re.search(r">-?\d+\.\d{4}<", html), html
    checked = view.backtest(selection, page, ws, "test", 5)
    html = styled(checked.table, view.backtest_formats(selection)).to_html()
    assert selection.amount(checked.table.iloc[0, 2]) in html
    assert not re.search(r">-?\d+\.\d{4}<", html), html


def test_the_page_reads_every_amount_one_way_a_small_split_s_total_too():
    # issue 33: a small split's total read "$0.94" (projected: cents below 100) beside the bands' "around $0.911"
    # (three significant digits): the page reads every amount with wording.amount.
    from dashboard.tables import styled

    _, selection, ws, page = setup()
    shown = view.production(selection, page, ws, "prod", {"period": "W"})
    small = shown.summary.copy()
    total = small.columns[3]
    small[total] = [0.94123, 12.3456, 867.386, 1234.5, -0.5][: len(small)]
    html = styled(small, view.summary_formats(selection)).to_html()
    for figure in small[total]:
        assert f">{selection.amount(figure)}<" in html
    assert ">$0.941<" in html and ">$12.3<" in html and "$0.94<" not in html and "$12.35" not in html
    assert set(view.summary_formats(selection).values()) - {vc.wording.count, vc.wording.percent} == {selection.amount}


def test_the_class_mix_tables_read_values_per_item_as_the_back_test():
    # issue 35: the class-mix table wrote its values per item to four decimals ("%.4f") where every other table
    # reads them at three significant digits in the currency.
    from dashboard.tables import styled

    _, selection, ws, page = setup()
    shown = view.class_mix(selection, page, ws, "logreg", "prod", 4, "threshold")
    for table in (shown.table, shown.per_model):
        html = styled(table, view.mix_formats(selection)).to_html()
        for column in view.MIX_NUMBER_COLUMNS:
            assert selection.amount(table[column].iloc[0]) in html, column
        assert not re.search(r">-?\d+\.\d{4}<", html), html


def test_a_back_test_that_could_not_run_is_small_print():
    assert not view.BandsView(backtest="Back-test on 'test': the bands held on 5 of 5 chunks.").backtest_is_caption
    assert view.BandsView(backtest="No labelled split besides the reference, so the bands cannot be "
                                   "checked.").backtest_is_caption


@pytest.mark.parametrize("calibration", ["auto", "none"])
def test_the_back_test_without_bands_is_the_former_two_copy_back_test(monkeypatch, calibration):
    # The back-test shows no band: it computes the estimate alone (monitor_estimates), where it asked
    # monitor_bands with two bootstrap copies before; every frame, table and word is the same.
    report, selection, ws, page = setup("digits", models=("logreg", "mlp", "naive_bayes"))
    shown = view.backtest(selection, page, ws, "test", 5, calibration=calibration)

    def two_copies(key, reference, watched, policy, values):  # the former call: the same key, with 2 copies
        return view._banded((*key[:-1], 2), reference, watched, policy, values).frame

    monkeypatch.setattr(view, "_estimates", two_copies)
    former = view.backtest(selection, page, ws, "test", 5, calibration=calibration)
    assert shown.frame.equals(former.frame) and shown.table.equals(former.table)
    for column in ("estimated_value_per_item", "estimated_value_total"):
        assert np.array_equal(shown.frame[column].to_numpy().view(np.int64),
                              former.frame[column].to_numpy().view(np.int64))
    assert (shown.intro, shown.verdict, shown.estimate_note, shown.in_sample, shown.problems) == (
        former.intro, former.verdict, former.estimate_note, former.in_sample, former.problems)
