"""Value under prior shift: class-mix estimates (EM, BBSE), re-weighted tuning, report --adapt-to."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers.core import gaussian_run

import valuecore as vc
from valuecore.cli import main
from valuecore.monitoring import (
    adjust_predictions,
    adjust_to_priors,
    bbse_priors,
    em_priors,
    estimate_priors,
    estimate_under_priors,
    retuning_gain,
    reweight_to_priors,
    soft_bbse_priors,
)
from valuecore.policy_json import PolicyDocument

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.parametrize("mix", [(0.9, 0.1), (0.1, 0.9), (0.6, 0.3, 0.1), (0.1, 0.2, 0.3, 0.4)])
def test_em_recovers_known_priors_on_exactly_calibrated_data(mix):
    rng = np.random.default_rng(11)
    n_classes = len(mix)
    reference = gaussian_run(np.full(n_classes, 1 / n_classes), 4000, rng)
    unlabelled = gaussian_run(mix, 20_000, rng, labelled=False)
    estimate = estimate_priors(unlabelled, reference, "em")
    assert estimate.converged
    assert np.max(np.abs(np.array(estimate.priors) - mix)) < 0.02
    assert all(lo <= p <= hi for lo, p, hi in zip(estimate.low, estimate.priors, estimate.high))
    assert estimate.method == "em" and estimate.n_items == 20_000


def test_em_fixed_point_satisfies_its_equation_with_weights():
    rng = np.random.default_rng(3)
    proba = rng.dirichlet([1.0, 2.0, 0.5], size=500)
    weight = rng.uniform(0.2, 3.0, size=500)
    reference = np.array([0.5, 0.3, 0.2])
    priors, iterations, converged = em_priors(proba, reference, weight, tol=1e-13)
    assert converged and iterations > 1
    mean_posterior = weight @ adjust_to_priors(proba, reference, priors) / weight.sum()
    np.testing.assert_allclose(mean_posterior, priors, atol=1e-11)
    assert abs(priors.sum() - 1) < 1e-12


def test_em_weights_equal_replicated_items():
    rng = np.random.default_rng(5)
    proba = rng.dirichlet([1.0, 1.0], size=50)
    counts = rng.integers(1, 4, size=50)
    weighted, _, _ = em_priors(proba, [0.5, 0.5], counts, tol=1e-14)
    replicated, _, _ = em_priors(np.repeat(proba, counts, axis=0), [0.5, 0.5], tol=1e-14)
    np.testing.assert_allclose(weighted, replicated, atol=1e-12)


def test_adjust_to_priors_is_bayes_rule():
    proba = np.array([[0.8, 0.2], [0.3, 0.7]])
    adjusted = adjust_to_priors(proba, [0.5, 0.5], [0.9, 0.1])
    by_hand = np.array([[0.8 * 0.9 / (0.8 * 0.9 + 0.2 * 0.1), 0.2 * 0.1 / (0.8 * 0.9 + 0.2 * 0.1)],
                        [0.3 * 0.9 / (0.3 * 0.9 + 0.7 * 0.1), 0.7 * 0.1 / (0.3 * 0.9 + 0.7 * 0.1)]])
    np.testing.assert_allclose(adjusted, by_hand)
    np.testing.assert_allclose(adjust_to_priors(proba, [0.3, 0.7], [0.3, 0.7]), proba)


def test_adjusted_predictions_keep_the_served_decisions():
    rng = np.random.default_rng(6)
    reference = gaussian_run((0.5, 0.5), 1000, rng)
    unlabelled = gaussian_run((0.9, 0.1), 2000, rng, labelled=False)
    estimate = estimate_priors(unlabelled, reference, "em")
    adjusted = adjust_predictions(unlabelled, estimate)
    np.testing.assert_array_equal(adjusted.y_pred, unlabelled.y_pred)
    np.testing.assert_array_equal(adjusted.confidence, unlabelled.confidence)
    np.testing.assert_allclose(adjusted.proba, adjust_to_priors(unlabelled.proba, estimate.reference_priors,
                                                                estimate.priors))
    # The mean adjusted posterior is the EM estimate (its fixed point).
    np.testing.assert_allclose(adjusted.proba.mean(axis=0), estimate.priors, atol=1e-8)


def test_the_schema_refuses_an_unknown_prior_shift_method(tmp_path, capsys):
    path = write_run(tmp_path / "model.csv")
    out = tmp_path / "policy.json"
    assert run_cli(capsys, "report", path, "--omega", "4", "--adapt-to", "prod", "--json", out)[0] == 0
    data = json.loads(out.read_text())
    data["models"][0]["prior_shift"]["method"] = "guess"
    with pytest.raises(ValueError, match="prior_shift"):
        PolicyDocument.from_dict(data)
    del data["models"][0]["prior_shift"]["estimated_priors"]
    data["models"][0]["prior_shift"]["method"] = "em"
    with pytest.raises(ValueError, match="estimated_priors"):
        PolicyDocument.from_dict(data)


def test_bbse_equals_a_direct_linear_solve():
    rng = np.random.default_rng(8)
    n_classes = 3
    reference_true = rng.integers(0, n_classes, 300)
    reference_pred = np.where(rng.random(300) < 0.7, reference_true, rng.integers(0, n_classes, 300))
    unlabelled_pred = rng.choice(n_classes, size=500, p=[0.5, 0.3, 0.2])
    confusion = np.zeros((n_classes, n_classes))
    for predicted, true in zip(reference_pred, reference_true):
        confusion[predicted, true] += 1 / 300
    mu = np.array([np.mean(unlabelled_pred == j) for j in range(n_classes)])
    importance = np.linalg.inv(confusion) @ mu
    expected = importance * confusion.sum(axis=0)
    assert np.all(expected > 0)  # no clipping: the estimate is the solve itself
    got = bbse_priors(reference_pred, reference_true, unlabelled_pred, n_classes)
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_bbse_refuses_a_singular_confusion_matrix():
    with pytest.raises(ValueError, match="invertible confusion matrix"):
        bbse_priors([0, 0, 0, 0], [0, 1, 0, 1], [0, 0], 2)


def test_soft_bbse_equals_a_direct_solve_and_hard_bbse_on_one_hot_probabilities():
    rng = np.random.default_rng(9)
    n_classes = 3
    reference_proba = rng.dirichlet([0.3, 0.3, 0.3], size=400)
    reference_true = np.array([rng.choice(n_classes, p=row) for row in reference_proba])
    # The unlabelled items: reference items drawn at another class mix.
    by_class = rng.choice(n_classes, size=600, p=[0.5, 0.3, 0.2])
    unlabelled_proba = reference_proba[[rng.choice(np.flatnonzero(reference_true == k)) for k in by_class]]
    weight = rng.uniform(0.5, 2.0, size=400)
    confusion = np.zeros((n_classes, n_classes))
    for row, true, w in zip(reference_proba, reference_true, weight):
        confusion[:, true] += w * row / weight.sum()
    expected = np.linalg.solve(confusion, unlabelled_proba.mean(axis=0)) * confusion.sum(axis=0)
    assert np.all(expected > 0)
    got = soft_bbse_priors(reference_proba, reference_true, unlabelled_proba, reference_weight=weight)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    # With one-hot probabilities the soft estimate is the hard one.
    reference_pred = reference_proba.argmax(axis=1)
    unlabelled_pred = unlabelled_proba.argmax(axis=1)
    eye = np.eye(n_classes)
    np.testing.assert_allclose(soft_bbse_priors(eye[reference_pred], reference_true, eye[unlabelled_pred]),
                               bbse_priors(reference_pred, reference_true, unlabelled_pred, n_classes), atol=1e-12)


def test_soft_bbse_is_less_noisy_than_hard_bbse():
    # The reason it exists: over seeded replicates its error is smaller than the hard solve's.
    rng = np.random.default_rng(12)
    mix = np.array([0.5, 0.2, 0.15, 0.1, 0.05])
    hard, soft = [], []
    for _ in range(8):
        reference = gaussian_run(np.full(5, 0.2), 3000, rng)
        unlabelled = gaussian_run(mix, 5000, rng, labelled=False)
        for method, errors in (("bbse", hard), ("bbse_soft", soft)):
            estimate = estimate_priors(unlabelled, reference, method, n_resamples=20, rng=1)
            errors.append(np.abs(np.array(estimate.priors) - mix).mean())
    assert np.mean(soft) < np.mean(hard)


def test_bbse_estimate_and_its_bootstrap_are_seeded():
    rng = np.random.default_rng(2)
    reference = gaussian_run((0.5, 0.5), 3000, rng)
    unlabelled = gaussian_run((0.8, 0.2), 10_000, rng, labelled=False)
    first = estimate_priors(unlabelled, reference, "bbse", n_resamples=100, rng=np.random.default_rng(4))
    again = estimate_priors(unlabelled, reference, "bbse", n_resamples=100, rng=np.random.default_rng(4))
    assert first == again
    assert abs(first.priors[0] - 0.8) < 0.02
    assert first.low[0] < first.priors[0] < first.high[0]
    soft = estimate_priors(unlabelled, reference, "bbse_soft", n_resamples=100, rng=np.random.default_rng(4))
    assert soft == estimate_priors(unlabelled, reference, "bbse_soft", n_resamples=100, rng=np.random.default_rng(4))
    assert soft.method == "bbse_soft" and abs(soft.priors[0] - 0.8) < 0.02
    assert soft.low[0] < soft.priors[0] < soft.high[0]


def brute_force_threshold(confidence, correct, counts, omega):
    """Best threshold by trying every distinct confidence (and None) on items written out `counts` times."""
    confidence = np.repeat(confidence, counts)
    correct = np.repeat(correct, counts)
    best, best_value = None, 0.0
    for threshold in sorted(set(confidence.tolist()), reverse=True):
        accepted = confidence >= threshold
        value = np.sum(correct[accepted]) - omega * np.sum(~correct[accepted])
        if value > best_value + 1e-12:
            best, best_value = threshold, value
    return best


@pytest.mark.parametrize("kind", ["threshold", "class_thresholds"])
def test_reweighted_tuning_equals_tuning_on_physically_replicated_items(kind):
    rng = np.random.default_rng(21)
    # 10 items of class 0 and 30 of class 1: the mix 0.5/0.5 gives weights 2 and 2/3, i.e. 6:2 replicas.
    y = np.array([0] * 10 + [1] * 30)
    proba1 = np.clip(np.where(y == 1, 0.7, 0.3) + rng.normal(0, 0.25, 40), 0.01, 0.99).round(2)
    proba = np.column_stack([1 - proba1, proba1])
    tune = vc.Predictions.from_proba(proba, y_true=np.array(["a", "b"])[y], classes=("a", "b"))
    reweighted = reweight_to_priors(tune, [0.5, 0.5])
    np.testing.assert_allclose(reweighted.sample_weight, np.where(y == 0, 2.0, 2 / 3))
    counts = np.where(y == 0, 6, 2)
    replicated = tune.subset(np.repeat(np.arange(40), counts))
    use_case = vc.UseCase.from_omega(3.0)
    by_weight = vc.fit_policy(kind, vc.presort(reweighted), use_case)
    by_copies = vc.fit_policy(kind, vc.presort(replicated), use_case)
    assert by_weight == by_copies
    if kind == "threshold":
        expected = brute_force_threshold(tune.confidence, tune.correct, counts, 3.0)
        assert by_weight.threshold == expected


def test_estimate_under_the_reference_mix_is_the_ordinary_estimate():
    rng = np.random.default_rng(9)
    reference = gaussian_run((0.5, 0.3, 0.2), 2000, rng)
    unlabelled = gaussian_run((0.5, 0.3, 0.2), 3000, rng, labelled=False)
    use_case = vc.UseCase.from_omega(4.0)
    policy = vc.fit_policy("threshold", vc.presort(reference), use_case)
    estimate = estimate_priors(unlabelled, reference, "em")
    same_mix = type(estimate)(**{**estimate.__dict__, "priors": estimate.reference_priors})
    shifted = estimate_under_priors(policy, unlabelled, use_case, same_mix)
    plain = vc.estimate(policy, unlabelled, use_case)
    assert shifted.value_total == pytest.approx(plain.value_total, rel=1e-12)
    np.testing.assert_allclose(shifted.confusion, plain.confusion, atol=1e-9)


def test_label_free_value_under_the_estimated_mix_tracks_the_realised_one():
    rng = np.random.default_rng(13)
    reference = gaussian_run((0.5, 0.5), 4000, rng)
    production = gaussian_run((0.9, 0.1), 10_000, rng)
    unlabelled = vc.Predictions.from_proba(production.proba, classes=production.classes)
    use_case = vc.UseCase.from_omega(4.0)
    estimate = estimate_priors(unlabelled, reference, "em")
    policy = vc.fit_policy("class_thresholds", vc.presort(reweight_to_priors(reference, estimate.priors)), use_case)
    realised = vc.evaluate(policy, production, use_case).value_per_item
    adjusted = estimate_under_priors(policy, unlabelled, use_case, estimate).value_per_item
    naive = vc.estimate(policy, unlabelled, use_case).value_per_item
    assert abs(adjusted - realised) < 0.02
    assert abs(naive - realised) > abs(adjusted - realised)


def test_retuning_gain_is_the_item_by_item_expectation_and_label_noise():
    # Written out item by item: the posterior under the estimated mix, the two rules' actions, the value matrix.
    rng = np.random.default_rng(31)
    reference = gaussian_run((0.5, 0.5), 2000, rng)
    unlabelled = gaussian_run((0.8, 0.2), 400, rng, labelled=False)
    unlabelled = vc.Predictions.from_proba(unlabelled.proba, classes=unlabelled.classes,
                                           sample_weight=rng.uniform(0.5, 2.0, size=400))
    use_case = vc.UseCase(1.0, 0.0, -4.0)
    estimate = estimate_priors(unlabelled, reference, "em")
    low, high = vc.Policy("threshold", threshold=0.7), vc.Policy("threshold", threshold=0.9)
    gain = retuning_gain(low, high, unlabelled, use_case, estimate)
    posterior = adjust_to_priors(unlabelled.proba, estimate.reference_priors, estimate.priors)
    total = unlabelled.sample_weight.sum()
    mean = variance = n_differ = 0.0
    for proba, confidence, predicted, weight in zip(posterior, unlabelled.confidence, unlabelled.y_pred,
                                                    unlabelled.sample_weight):
        if not 0.7 <= confidence < 0.9:
            continue  # both rules act, or both hand off: no difference
        n_differ += weight
        # The lower threshold acts on it (+1 when right, -4 when wrong), the higher hands it off (0).
        outcomes = np.where(np.arange(2) == predicted, 1.0, -4.0)
        expected = proba @ outcomes
        mean += weight * expected / total
        variance += weight**2 * (proba @ outcomes**2 - expected**2) / total**2  # fractional: sampling weights
    assert gain.gain_per_item == pytest.approx(mean, rel=1e-12)
    assert gain.standard_error == pytest.approx(np.sqrt(variance), rel=1e-12)
    assert gain.n_differ == pytest.approx(n_differ)
    assert gain.worst_gain_per_item <= gain.gain_per_item
    assert gain.adopted == (gain.worst_gain_per_item > 1.645 * gain.standard_error)
    # The same rule twice: nothing to gain, nothing adopted.
    same = retuning_gain(high, high, unlabelled, use_case, estimate)
    assert (same.gain_per_item, same.standard_error, same.adopted) == (0.0, 0.0, False)
    # A large real gain is adopted: per-class thresholds tuned for the mix against acting on everything.
    tuned = vc.fit_policy("class_thresholds", vc.presort(reweight_to_priors(reference, estimate.priors)), use_case)
    assert retuning_gain(tuned, vc.Policy("accept_all"), unlabelled, use_case, estimate).adopted


# ------------------------------------------------------------------- CLI
def write_run(path: Path, *, top_label: bool = False) -> Path:
    rng = np.random.default_rng(17)
    parts = []
    for split, mix, n, labelled in (("val", (0.5, 0.5), 2000, True), ("test", (0.85, 0.15), 1000, True),
                                    ("prod", (0.85, 0.15), 5000, False)):
        run = gaussian_run(mix, n, rng)
        frame = pd.DataFrame({"split": [split] * n})
        frame["y_true"] = np.asarray(run.classes)[run.y_true] if labelled else ""
        if top_label:
            frame["y_pred"] = np.asarray(run.classes)[run.y_pred]
            frame["confidence"] = run.confidence.round(6)
        else:
            for k, name in enumerate(run.classes):
                frame[f"proba_{name}"] = run.proba[:, k].round(6)
        parts.append(frame)
    pd.concat(parts).to_csv(path, index=False)
    return path


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("method", ["em", "bbse", "bbse_soft"])
def test_report_adapt_to_round_trips_through_the_json_and_apply(tmp_path, capsys, method):
    path = write_run(tmp_path / "model.csv")
    out = tmp_path / "policy.json"
    code, stdout, stderr = run_cli(capsys, "report", path, "--omega", "4", "--policy", "class_thresholds",
                                   "--adapt-to", "prod", "--adapt-method", method, "--json", out)
    assert code == 0, stderr
    assert "tuned for the class mix estimated on split 'prod'" in stdout
    data = json.loads(out.read_text())
    shift = data["models"][0]["prior_shift"]
    assert shift["split"] == "prod" and shift["method"] == method
    assert abs(shift["estimated_priors"]["c0"] - 0.85) < 0.03
    assert abs(sum(shift["estimated_priors"].values()) - 1) < 1e-9
    document = PolicyDocument.from_json(out.read_text())
    assert document.entries[0].prior_shift["estimated_priors"] == shift["estimated_priors"]
    assert PolicyDocument.from_json(document.to_json()) == document
    # The policy is the ordinary fit on the re-weighted tuning split.
    runs = vc.load_runs([str(path)]).models
    run = runs["model"]
    tune = reweight_to_priors(run.splits["val"], list(shift["estimated_priors"].values()))
    expected = vc.fit_policy("class_thresholds", vc.presort(tune), vc.UseCase.from_omega(4))
    assert document.entries[0].policy == expected
    code, stdout, stderr = run_cli(capsys, "apply", out, path)
    assert code == 0, stderr
    unadapted = tmp_path / "plain.json"
    assert run_cli(capsys, "report", path, "--omega", "4", "--policy", "class_thresholds", "--json", unadapted)[0] == 0
    assert "prior_shift" not in json.loads(unadapted.read_text())["models"][0]
    adapted_value = data["models"][0]["evaluation"]["value_per_item"]
    plain_value = json.loads(unadapted.read_text())["models"][0]["evaluation"]["value_per_item"]
    assert adapted_value > plain_value  # test is labelled and shifted like prod


@pytest.mark.parametrize("kind", ["threshold", "class_thresholds"])
def test_report_label_free_tuning_is_the_estimate_mode_fit_on_the_adjusted_split(tmp_path, capsys, kind):
    path = write_run(tmp_path / "model.csv")
    out = tmp_path / "policy.json"
    code, stdout, stderr = run_cli(capsys, "report", path, "--omega", "4", "--policy", kind, "--adapt-to", "prod",
                                   "--adapt-tuning", "label_free", "--json", out)
    assert code == 0, stderr
    document = PolicyDocument.from_json(out.read_text())
    entry = document.entries[0]
    assert entry.tuned_on == {"split": "prod", "n": 5000}
    assert entry.prior_shift["tuning"] == "label_free"
    run = vc.load_runs([str(path)]).models["model"]
    estimate = estimate_priors(run.splits["prod"], run.splits["val"], "em")
    expected = vc.fit_policy(kind, vc.presort(adjust_predictions(run.splits["prod"], estimate)),
                             vc.UseCase.from_omega(4), estimate=True)
    assert entry.policy == expected
    assert run_cli(capsys, "apply", out, path)[0] == 0
    code, _, stderr = run_cli(capsys, "report", path, "--omega", "4", "--policy", kind, "--adapt-to", "prod",
                              "--adapt-tuning", "label_free", "--max-handoff-rate", "0.2")
    assert code == 2 and "labelled items" in stderr


def test_report_adapt_to_the_evaluated_unlabelled_split_estimates_under_the_new_mix(tmp_path, capsys):
    path = write_run(tmp_path / "model.csv")
    out = tmp_path / "policy.json"
    code, _, stderr = run_cli(capsys, "report", path, "--omega", "4", "--adapt-to", "prod", "--eval-split", "prod",
                              "--json", out)
    assert code == 0, stderr
    entry = json.loads(out.read_text())["models"][0]
    assert entry["evaluation"]["estimated"] is True
    assert entry["evaluation"]["value_per_item"] == pytest.approx(entry["prior_shift"]["estimated_value_per_item"])


@pytest.mark.parametrize("kind", ["threshold", "class_thresholds"])
def test_report_adapt_to_keeps_the_rule_as_tuned_unless_the_gain_clears_its_noise(tmp_path, capsys, kind):
    path = write_run(tmp_path / "model.csv")
    guarded, always = tmp_path / "guarded.json", tmp_path / "always.json"
    base = ("report", path, "--omega", "20", "--policy", kind, "--adapt-to", "prod", "--no-interval")
    assert run_cli(capsys, *base, "--json", guarded)[0] == 0
    assert run_cli(capsys, *base, "--adapt-always", "--json", always)[0] == 0
    entry = PolicyDocument.from_dict(json.loads(guarded.read_text())).entries[0]
    retuned = PolicyDocument.from_dict(json.loads(always.read_text())).entries[0]
    record = entry.prior_shift["retuning"]
    assert "retuning" not in retuned.prior_shift  # no guard, nothing to record
    models = vc.load_runs([str(path)]).models
    run = models["model"]
    as_tuned = vc.fit_policy(kind, vc.presort(run.splits["val"]), vc.UseCase.from_omega(20))
    estimate = estimate_priors(run.splits["prod"], run.splits["val"], "em")
    reweighted = vc.fit_policy(kind, vc.presort(reweight_to_priors(run.splits["val"], estimate.priors)),
                               vc.UseCase.from_omega(20))
    assert retuned.policy == reweighted
    gain = retuning_gain(reweighted, as_tuned, run.splits["prod"], vc.UseCase.from_omega(20), estimate)
    assert record["adopted"] == gain.adopted
    assert record["estimated_gain_per_item"] == pytest.approx(gain.gain_per_item)
    assert entry.policy == (reweighted if gain.adopted else as_tuned)
    assert any(("is within noise" in n) != gain.adopted for n in entry.notes)


def test_report_adapt_to_a_missing_split_is_a_usage_error(tmp_path, capsys):
    path = write_run(tmp_path / "model.csv")
    code, _, stderr = run_cli(capsys, "report", path, "--omega", "4", "--adapt-to", "nope")
    assert code == 2
    assert "no split 'nope' to adapt to" in stderr and "Traceback" not in stderr


def test_report_adapt_to_needs_probabilities(tmp_path, capsys):
    path = write_run(tmp_path / "model.csv", top_label=True)
    code, _, stderr = run_cli(capsys, "report", path, "--omega", "4", "--adapt-to", "prod")
    assert code == 2
    assert "full probability vector" in stderr and "Traceback" not in stderr


def test_report_adapt_to_the_tuning_split_is_refused(tmp_path, capsys):
    path = write_run(tmp_path / "model.csv")
    code, _, stderr = run_cli(capsys, "report", path, "--omega", "4", "--adapt-to", "val")
    assert code == 2
    assert "another, labelled split to tune on" in stderr


def test_reweighting_to_a_class_the_split_lacks_is_refused():
    tune = vc.Predictions.from_proba([[0.9, 0.1], [0.8, 0.2]], y_true=["a", "a"], classes=("a", "b"))
    with pytest.raises(ValueError, match=r"no item of class\(es\) \['b'\]"):
        reweight_to_priors(tune, [0.5, 0.5])


# ------------------------------------------------------------ simulation
@pytest.mark.slow
def test_simulation_pins_the_documented_figures():
    """The figures of docs/constraints.md ("When the class mix moves"), on fewer replicates."""
    sys.path.insert(0, str(BENCHMARKS))
    import bench_prior_shift as bench

    estimation, values = bench.simulate(replicates=6, seed=7, n_resamples=100)
    assert estimation["em_error"].max() < 0.02
    assert estimation["bbse_error"].max() < 0.04
    assert estimation["soft_error"].max() < 0.03
    assert estimation["soft_error"].mean() < estimation["bbse_error"].mean()  # probabilities carry more
    assert estimation["em_error"].mean() < estimation["soft_error"].mean()  # and EM, the default, most
    assert estimation["em_converged"].all()
    # Intervals: per-class coverage of the 95% intervals, pooled, not far below 95%.
    for method in ("em", "bbse", "soft"):
        assert estimation[f"{method}_covered"].mean() > 0.85
    gap = values["adapted"] - values["unadapted"]
    per_class = values["rule"] == "class_thresholds"
    assert gap[per_class].min() > 0  # per-class thresholds: re-tuning always earned more
    assert gap[~per_class].min() > -0.06  # one threshold: re-weighting is within noise of the old one (docs)
    assert abs(gap[~per_class].mean()) < 0.01
    # The guard of report --adapt-to: never worse in these cases, and it keeps the per-class gains.
    guarded = values["guarded"] - values["unadapted"]
    assert guarded.min() >= 0
    assert values.loc[per_class, "adopted"].mean() > 0.9
    assert guarded[per_class].mean() > 0.9 * gap[per_class].mean()
    label_free_gap = values["label_free"] - values["unadapted"]
    assert label_free_gap[~per_class].mean() > 0  # label-free tuning on production gains on average
    assert label_free_gap[per_class].min() > 0
    assert values["estimate_error"].abs().mean() < values["naive_estimate_error"].abs().mean()


def test_report_adapt_to_after_isotonic_recalibration_is_refused(tmp_path, capsys):
    path = write_run(tmp_path / "model.csv")
    code, _, stderr = run_cli(capsys, "report", path, "--omega", "4", "--adapt-to", "prod", "--calibration", "isotonic")
    assert code == 2
    assert "keeps only the top-label confidence" in stderr and "Traceback" not in stderr


def test_report_adapt_to_recommends_among_the_adapted_rules(tmp_path, capsys):
    # The recommendation weighs every rule on the adapted pipeline: the entry it names (refitted when its rule
    # is not one threshold) is tuned for the estimated mix and says so, like every other entry.
    path = write_run(tmp_path / "model.csv")
    out = tmp_path / "policy.json"
    code, stdout, stderr = run_cli(capsys, "report", path, "--omega", "4", "--adapt-to", "prod", "--json", out)
    assert code == 0, stderr
    data = json.loads(out.read_text())
    recommendation = data["recommendation"]
    assert stdout.startswith("recommendation: ")
    entry = next(e for e in data["models"] if e["model"] == recommendation["model"])
    assert entry["policy"]["kind"] == recommendation["policy"]
    if recommendation["policy"] in ("threshold", "class_thresholds"):
        assert entry["prior_shift"]["split"] == "prod"
    assert all("prior_shift" in e for e in data["models"])


# ------------------------------------------------------------ bounded work (issue 36, item 16)
def test_the_em_interval_runs_em_once_whatever_the_number_of_classes(monkeypatch):
    """The interval's derivative in the reference mix is in closed form: EM ran 2C more times for it
    (813 s for --adapt-to on 400 rows of 200 classes)."""
    import valuecore._monitor.prior_shift as prior_shift

    calls = []
    em = prior_shift.em_priors
    monkeypatch.setattr(prior_shift, "em_priors", lambda *a, **k: calls.append(1) or em(*a, **k))
    rng = np.random.default_rng(2)
    n_classes = 12
    reference = gaussian_run(np.full(n_classes, 1 / n_classes), 600, rng)
    unlabelled = gaussian_run(rng.dirichlet(np.ones(n_classes)), 600, rng, labelled=False)
    estimate = estimate_priors(unlabelled, reference, "em")
    assert len(calls) == 1
    assert all(lo <= p <= hi for lo, p, hi in zip(estimate.low, estimate.priors, estimate.high))


@pytest.mark.parametrize("n_classes, concentration", [(3, 2.0), (5, 0.5), (8, 0.3)])
def test_the_closed_form_derivative_of_em_in_the_reference_mix_is_that_of_em_itself(n_classes, concentration):
    """Central differences of EM run to 1e-14 (what the interval used before), interior and boundary mixes."""
    from valuecore._monitor.prior_shift import _em_reference_jacobian

    rng = np.random.default_rng(n_classes)
    proba = rng.dirichlet(np.full(n_classes, concentration), size=300)
    weight = rng.integers(1, 4, size=300).astype(float)
    reference = rng.dirichlet(np.full(n_classes, 5.0))
    priors, _, converged = em_priors(proba, reference, weight)
    assert converged
    step, numeric = 1e-6, np.zeros((n_classes, n_classes))
    for k in range(n_classes):
        shift = np.eye(n_classes)[k] * step
        up, _, _ = em_priors(proba, reference + shift, weight, tol=1e-14)
        down, _, _ = em_priors(proba, reference - shift, weight, tol=1e-14)
        numeric[:, k] = (up - down) / (2 * step)
    np.testing.assert_allclose(_em_reference_jacobian(proba, reference, priors, weight), numeric, atol=1e-5)


def plain_em(proba, reference, weight, tol=1e-15):
    """Saerens et al.'s EM step by step, without acceleration, to ``tol``: the reference of em_priors."""
    priors = np.asarray(reference, dtype=float)
    for _ in range(100_000):
        updated = weight @ adjust_to_priors(proba, reference, priors) / weight.sum()
        if np.max(np.abs(updated - priors)) <= tol:
            return updated
        priors = updated
    raise AssertionError("plain EM did not converge")


def test_em_with_shares_near_zero_reaches_the_fixed_point_of_plain_em_in_few_steps():
    """Plain EM crawls when shares head for 0 (567 steps here; 5,493 steps of 20,000 items and 100 classes
    took 275 s): SQUAREM's jumps reach the same fixed point."""
    rng = np.random.default_rng(8)
    n_classes = 30
    uniform = np.full(n_classes, 1 / n_classes)
    proba = gaussian_run(rng.dirichlet(np.full(n_classes, 0.3)), 400, rng, labelled=False).proba
    weight = rng.integers(1, 3, size=400).astype(float)
    priors, steps, converged = em_priors(proba, uniform, weight)
    assert converged and steps < 200
    np.testing.assert_allclose(priors, plain_em(proba, uniform, weight), atol=1e-9)
    assert np.min(priors) < 1e-6  # the case it is about


@pytest.mark.parametrize("n_classes", [2, 4, 9])
def test_the_worst_gain_is_the_smallest_over_each_share_at_either_end_of_its_interval(n_classes):
    """Written out mix by mix (each class's share at an end of its interval, the others rescaled), as the
    guard's definition says; the guard weighs them all at once, O(items x classes) where one at a time cost
    O(items x classes^2)."""
    rng = np.random.default_rng(40 + n_classes)
    reference = gaussian_run(np.full(n_classes, 1 / n_classes), 1500, rng)
    mix = rng.dirichlet(np.full(n_classes, 0.7))
    unlabelled = gaussian_run(mix, 600, rng, labelled=False)
    use_case = vc.UseCase(1.0, 0.0, -3.0)
    estimate = estimate_priors(unlabelled, reference, "em")
    retuned = vc.fit_policy("class_thresholds", vc.presort(reweight_to_priors(reference, estimate.priors)),
                            use_case)
    as_tuned = vc.fit_policy("class_thresholds", vc.presort(reference), use_case)
    gain = retuning_gain(retuned, as_tuned, unlabelled, use_case, estimate)
    matrix = use_case.for_classes(unlabelled.classes).values
    new, old = retuned.decide(unlabelled, use_case), as_tuned.decide(unlabelled, use_case)
    per_item = matrix[:, new] - matrix[:, old]  # (true class, item)
    priors = np.array(estimate.priors)
    gains = []
    for k in range(n_classes):
        for end in (estimate.low[k], estimate.high[k]):
            if priors[k] >= 1 or end >= 1:
                continue
            moved = priors * (1 - end) / (1 - priors[k])
            moved[k] = end
            truth = adjust_to_priors(unlabelled.proba, estimate.reference_priors, moved)
            gains.append(np.sum(truth * per_item.T) / unlabelled.n)
    assert gain.n_differ > 0
    assert gain.worst_gain_per_item == pytest.approx(min(gains + [gain.gain_per_item]), rel=1e-12, abs=1e-15)
