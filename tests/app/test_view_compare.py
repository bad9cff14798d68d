"""The "Compare two models" view model (dashboard.views.compare), without Streamlit:
its figures are valuecore's paired comparison and threshold stability on the same runs."""

from __future__ import annotations

import numpy as np
import pytest
from view_selection import selection

import valuecore as vc
from dashboard.views import compare


@pytest.fixture(scope="module")
def digits():
    return selection("digits")


def _expected(chosen, a, b, kind="threshold"):
    runs = chosen.report.models
    policies = {m: vc.fit_policy(kind, vc.presort(runs[m].splits["val"]), chosen.values) for m in (a, b)}
    return vc.uncertainty.paired_comparison(policies[a], runs[a].splits["test"], policies[b], runs[b].splits["test"],
                                            chosen.values)


def test_the_tiles_and_sentences_are_the_paired_comparison(digits):
    chosen, ws = digits
    page = compare.build(chosen, ws, model_a="logreg", model_b="mlp", kind="threshold", n_resamples=500, seed=3)
    assert not page.stop
    expected = _expected(chosen, "logreg", "mlp")
    tiles = {t.label: t.value for t in page.tiles}
    assert tiles["A − B, per item (this data)"] == vc.wording.amount(expected.mean_difference, "$")
    assert tiles["95% interval (new data)"] == (f"{vc.wording.amount(expected.low, '$')} to "
                                                f"{vc.wording.amount(expected.high, '$')}")
    assert tiles["Paired test"] == vc.wording.p_value(expected.p_value)
    # One test, read in words: it rejects exactly when the interval excludes 0.
    assert [t.label for t in page.tiles] == ["A − B, per item (this data)", "95% interval (new data)", "Paired test"]
    reading = next(t.caption for t in page.tiles if t.label == "Paired test")
    excluded = expected.low > 0 or expected.high < 0
    assert (expected.p_value < 0.05) == excluded
    assert reading == ("Below 5%: the interval excludes 0, a real difference." if excluded
                       else "Not below 5%: the interval includes 0, no difference shown.")
    assert "t-test" not in " ".join(page.sentences) and "bootstrap" not in page.caption
    assert page.sentences[0].startswith("On these 450 items, ")
    # The difference chart's counts hold every item once, and their weighted mean is the mean difference.
    counts = page.differences
    assert counts["items"].sum() == pytest.approx(450)
    assert (counts["difference"] * counts["items"]).sum() / 450 == pytest.approx(expected.mean_difference)
    # The interval chart holds each model's pipeline interval around its value per item on 'test'.
    for model in ("logreg", "mlp"):
        policy = ws.policy(model, "threshold", chosen.values)
        per_item = vc.evaluate(policy, chosen.report.models[model].splits["test"], chosen.values).value_per_item
        row = page.intervals.set_index("model").loc[model]
        assert row["mean"] == pytest.approx(per_item) and row["low"] <= per_item <= row["high"]


def test_the_fact_on_this_data_does_not_depend_on_the_seed(digits):
    chosen, ws = digits
    one = compare.build(chosen, ws, model_a="svm_rbf", model_b="naive_bayes", kind="threshold", n_resamples=500,
                        seed=1)
    two = compare.build(chosen, ws, model_a="svm_rbf", model_b="naive_bayes", kind="threshold", n_resamples=500,
                        seed=2)
    assert one.sentences[0] == two.sentences[0]
    assert one.comparison.mean_difference > 0  # svm_rbf earns more than naive_bayes on the digits
    assert one.comparison == two.comparison == _expected(chosen, "svm_rbf", "naive_bayes")  # nothing drawn


def test_threshold_stability_is_the_cores(digits):
    chosen, ws = digits
    page = compare.build(chosen, ws, model_a="logreg", model_b="mlp", kind="threshold", n_resamples=200, seed=0)
    table = page.stability.table.set_index("Model")
    for model in ("logreg", "mlp"):
        expected = vc.uncertainty.threshold_stability(ws.sorted(model, "val"), chosen.values,
                                                      rng=np.random.default_rng(0), n_resamples=200)
        confidence = chosen.report.models[model].splits["val"].confidence
        shown = {"Tuned threshold": table.loc[model, "Tuned threshold"],
                 "95% interval, high": table.loc[model, "95% interval"].split(" to ")[1]}
        for column, exact in (("Tuned threshold", expected.tuned_threshold), ("95% interval, high", expected.high)):
            written = float(shown[column])  # decides every tuning item as the exact threshold does
            assert np.array_equal(confidence >= written, confidence >= exact) and abs(written - exact) < 1e-3
        kept = np.count_nonzero(~np.isnan(np.asarray(expected.thresholds, dtype=float)))  # NaN: always abstain
        assert page.stability.counts.query("model == @model")["resamples"].sum() == kept


def test_what_stops_the_page_is_said():
    assert compare.needs_two_models(["a"], ["a", "b"]).endswith("Select at least two of the 2 loaded models in "
                                                                 "the sidebar.")
    assert compare.needs_two_models(["a", "b"], ["a", "b"]) is None
    chosen, ws = selection("breast_cancer", evaluate="prod")
    page = compare.build(chosen, ws, model_a="logreg", model_b="mlp", kind="threshold", n_resamples=200, seed=0)
    assert page.stop and "has no labels" in page.stop[0].text
    same = compare.build(chosen, ws, model_a="mlp", model_b="mlp", kind="threshold", n_resamples=200, seed=0)
    assert same.stop[0].text == "Pick two different models."


def _fresh(ws, model, values, seed, n_resamples):
    return vc.uncertainty.threshold_stability(ws.sorted(model, ws.tuning_split_for(model)), values,
                                              rng=np.random.default_rng(seed), n_resamples=n_resamples)


def test_the_kept_stability_is_drawn_again_exactly_when_what_it_depends_on_changes():
    """Kept across reruns (a new rule or another model B draws nothing again), drawn anew for new values, seed,
    resamples, calibration or tuning split: every kept one is what a fresh call gives, bit for bit."""
    chosen, ws = selection("digits")

    def kept(ws, values=chosen.values, seed=4, n_resamples=300, model="logreg"):
        return compare._stability(ws, model, ws.tuning_split_for(model),
                                  ws.sorted(model, ws.tuning_split_for(model)), values, seed, n_resamples)

    first = kept(ws)
    assert kept(ws) is first and kept(selection("digits")[1]) is first  # the next rerun's workspace keeps it too
    np.testing.assert_array_equal(first.thresholds, _fresh(ws, "logreg", chosen.values, 4, 300).thresholds)
    other_values = vc.UseCase(1, 0, -7)
    changes = {
        "values": (ws, dict(values=other_values), (ws, other_values, 4, 300)),
        "seed": (ws, dict(seed=5), (ws, chosen.values, 5, 300)),
        "resamples": (ws, dict(n_resamples=301), (ws, chosen.values, 4, 301)),
    }
    calibrated = selection("digits", calibration="temperature")[1]
    changes["calibration"] = (calibrated, {}, (calibrated, chosen.values, 4, 300))
    tuned_on_test = selection("digits", tune="test", evaluate="val")[1]
    changes["tuning split"] = (tuned_on_test, {}, (tuned_on_test, chosen.values, 4, 300))
    for change, (workspace_, arguments, (fresh_ws, values, seed, n_resamples)) in changes.items():
        got = kept(workspace_, **arguments)
        assert got is not first, change
        want = _fresh(fresh_ws, "logreg", values, seed, n_resamples)
        np.testing.assert_array_equal(got.thresholds, want.thresholds, err_msg=change)
        assert (got.tuned_threshold, got.low, got.high) == (want.tuned_threshold, want.low, want.high), change
    # The page: another rule and another model B leave model A's resamples as they were.
    one = compare.threshold_stability(ws, ("logreg", "mlp"), chosen.values, n_resamples=300, seed=4)
    two = compare.threshold_stability(ws, ("logreg", "svm_rbf"), chosen.values, n_resamples=300, seed=4)
    assert one.table.iloc[0].equals(two.table.iloc[0]) and kept(ws) is first


def test_the_stability_table_shows_four_columns_and_the_hand_off_share_only_when_a_model_has_any():
    import pandas as pd

    row = {"Model": "m", "Tuned on": "val", "Tuned threshold": "0.5", "Resampled median": "0.5",
           vc.wording.INTERVAL_HEADER: "0.4 to 0.6", "Spread": "0.1", compare.ALWAYS_HAND_OFF: 0.0}  # fmt: skip
    never = pd.DataFrame([row, {**row, "Model": "n"}])
    assert compare.stability_columns(never) == ("Model", "Tuned threshold", vc.wording.INTERVAL_HEADER, "Spread")
    sometimes = pd.DataFrame([row, {**row, "Model": "n", compare.ALWAYS_HAND_OFF: 0.02}])
    assert compare.stability_columns(sometimes)[-1] == compare.ALWAYS_HAND_OFF
    assert set(compare.stability_columns(sometimes)) <= set(sometimes.columns)
