"""Bad input gets a clear ValueError that names the problem.

Every test asserts on the message content: a user must learn from it what is
wrong and where (which rows, which classes, which shape).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import valuecore as vc

PROBA = [[0.9, 0.1], [0.4, 0.6], [0.7, 0.3]]
USE_CASE = vc.UseCase(1.0, 0.0, -2.0)


def labelled():
    return vc.Predictions.from_proba(PROBA, y_true=[0, 1, 1])


def unlabelled():
    return vc.Predictions.from_proba(PROBA)


def top_label_only():
    return vc.Predictions.from_top_label(["0", "1", "1"], [0.9, 0.6, 0.7], ["0", "1", "0"], classes=["0", "1"])


# ------------------------------------------------------------------ probabilities
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_probability_names_the_row(bad):
    proba = [[0.9, 0.1], [bad, 0.5], [0.7, 0.3]]
    with pytest.raises(ValueError, match=r"proba has NaN or infinite values at rows 1\b"):
        vc.Predictions.from_proba(proba)


def test_negative_probability_names_the_row():
    with pytest.raises(ValueError, match=r"negative probabilities at rows 2\b"):
        vc.Predictions.from_proba([[0.9, 0.1], [0.4, 0.6], [1.2, -0.2]])


def test_rows_not_summing_to_one_name_the_rows_and_deviation():
    with pytest.raises(ValueError, match=r"rows must sum to 1 \(worst deviation 0\.5\) at rows 0, 2\b"):
        vc.Predictions.from_proba([[0.9, 0.6], [0.4, 0.6], [0.2, 0.3]])
    vc.Predictions.from_proba([[0.9, 0.1005]])  # within the default tolerance of 1e-3


def test_many_bad_rows_are_summarised():
    proba = np.full((12, 2), 0.7)
    with pytest.raises(ValueError, match=r"at rows 0, 1, 2, 3, 4 \(and 7 more\)"):
        vc.Predictions.from_proba(proba)


def test_proba_shape_and_class_count():
    with pytest.raises(ValueError, match=r"proba must have shape \(n, n_classes\), got \(3,\)"):
        vc.Predictions.from_proba([0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match=r"at least 2 class columns, got 1"):
        vc.Predictions.from_proba([[1.0], [1.0]])
    with pytest.raises(ValueError, match=r"3 classes given for 2 probability columns"):
        vc.Predictions.from_proba(PROBA, classes=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"classes must be distinct, got \['a', 'a'\]"):
        vc.Predictions.from_proba(PROBA, classes=["a", "a"])


def test_top_label_confidence_out_of_range_or_nan():
    with pytest.raises(ValueError, match=r"confidence must lie in \[0, 1\]; it does not at rows 1\b"):
        vc.Predictions.from_top_label(["a", "b"], [0.5, 1.5], classes=["a", "b"])
    with pytest.raises(ValueError, match=r"confidence has NaN or infinite values at rows 0\b"):
        vc.Predictions.from_top_label(["a", "b"], [math.nan, 0.5], classes=["a", "b"])
    with pytest.raises(ValueError, match=r"y_pred has 1 items but confidence has 2"):
        vc.Predictions.from_top_label(["a"], [0.5, 0.5], classes=["a", "b"])
    with pytest.raises(ValueError, match=r"at least 2 classes"):
        vc.Predictions.from_top_label(["a"], [0.5], classes=["a"])


# ------------------------------------------------------------------------ lengths
def test_y_true_length_mismatch():
    with pytest.raises(ValueError, match=r"y_true has 2 items but the run has 3"):
        vc.Predictions.from_proba(PROBA, y_true=[0, 1])


def test_weight_length_mismatch():
    with pytest.raises(ValueError, match=r"sample_weight has 4 items but the run has 3"):
        vc.Predictions.from_proba(PROBA, sample_weight=[1, 1, 1, 1])


# ------------------------------------------------------------------------- labels
def test_labels_not_among_the_classes_are_listed_with_rows():
    message = r"y_true has labels that are not among the classes \['0', '1'\]: \['7'\] at rows 1\b"
    with pytest.raises(ValueError, match=message):
        vc.Predictions.from_proba(PROBA, y_true=[0, 7, 1])
    message = r"y_pred has labels that are not among the classes \['a', 'b'\]: \['c'\] at rows 0\b"
    with pytest.raises(ValueError, match=message):
        vc.Predictions.from_top_label(["c", "a"], [0.5, 0.5], classes=["a", "b"])


# ------------------------------------------------------------------------ weights
def test_negative_weight_names_the_row():
    with pytest.raises(ValueError, match=r"sample_weight must be non-negative; it is negative at rows 1\b"):
        vc.Predictions.from_proba(PROBA, sample_weight=[1.0, -0.5, 1.0])


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_nan_or_infinite_weight_names_the_row(bad):
    with pytest.raises(ValueError, match=r"sample_weight has NaN or infinite values at rows 2\b"):
        vc.Predictions.from_proba(PROBA, sample_weight=[1.0, 1.0, bad])


# ------------------------------------------------------------------------- values
def test_wrong_value_matrix_shape():
    with pytest.raises(ValueError, match=r"value matrix for 2 classes must have shape \(2, 3\).*got \(2, 2\)"):
        vc.ValueMatrix(("0", "1"), [[1.0, -1.0], [-1.0, 1.0]])
    with pytest.raises(ValueError, match=r"must have shape \(3, 4\)"):
        vc.ValueMatrix(("0", "1", "2"), np.zeros((3, 3)))


def test_value_matrix_with_nan_names_the_rows():
    with pytest.raises(ValueError, match=r"NaN or infinite entries in rows \(true classes\) \[1\]"):
        vc.ValueMatrix(("0", "1"), [[1.0, -1.0, 0.0], [math.nan, 1.0, 0.0]])


def test_value_matrix_for_other_classes_than_the_run():
    matrix = vc.ValueMatrix(("a", "b"), [[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0]])
    message = r"value matrix is for classes \['a', 'b'\] but the run has classes \['0', '1'\]"
    with pytest.raises(ValueError, match=message):
        vc.evaluate(vc.Policy("accept_all"), labelled(), matrix)
    with pytest.raises(ValueError, match=message):
        vc.fit_policy("threshold", vc.presort(labelled()), matrix)
    with pytest.raises(ValueError, match=message):
        vc.threshold_curve(vc.presort(labelled()), matrix)
    with pytest.raises(ValueError, match=message):
        vc.curves.item_gains(labelled(), matrix)


def test_use_case_values_must_be_finite_numbers():
    with pytest.raises(ValueError, match=r"v_wrong must be a finite number, got nan"):
        vc.UseCase(1.0, 0.0, math.nan)
    with pytest.raises(ValueError, match=r"v_correct must be a finite number, got 'a'"):
        vc.UseCase("a", 0.0, -1.0)


def test_values_missing_or_of_the_wrong_type():
    with pytest.raises(ValueError, match=r"needs a use case or a value matrix"):
        vc.Policy("expected_value").decide(labelled())
    with pytest.raises(TypeError, match=r"values must be a UseCase or a ValueMatrix, got dict"):
        vc.evaluate(vc.Policy("accept_all"), labelled(), {"v_correct": 1})


# ----------------------------------------------------------------------- policies
def test_unknown_policy_kind_in_a_policy():
    with pytest.raises(ValueError, match=r"unknown policy kind 'best'; expected one of \["):
        vc.Policy("best")
    with pytest.raises(ValueError, match=r"unknown policy kind 'best'"):
        vc.Policy.from_dict({"kind": "best"})


def test_unknown_policy_kind_when_fitting_on_a_labelled_run():
    with pytest.raises(ValueError, match=r"unknown policy kind 'best'"):
        vc.fit_policy("best", vc.presort(labelled()), USE_CASE)


def test_unknown_policy_kind_when_fitting_without_a_run():
    """BUG: the message must name the real problem (an unknown kind), not ask for a
    tuning run; the engine says "a best policy is tuned on data: pass the tuning run"."""
    with pytest.raises(ValueError, match=r"unknown policy kind 'best'"):
        vc.fit_policy("best", None, USE_CASE)


def test_unknown_policy_kind_when_fitting_on_an_unlabelled_run():
    """BUG: the engine says "tuning a best policy needs true labels" instead."""
    with pytest.raises(ValueError, match=r"unknown policy kind 'best'"):
        vc.fit_policy("best", vc.presort(unlabelled()), USE_CASE)


def test_policy_arguments_that_do_not_fit_the_kind():
    with pytest.raises(ValueError, match=r"a class_thresholds policy needs class_thresholds"):
        vc.Policy("class_thresholds")
    with pytest.raises(ValueError, match=r"a threshold policy takes no class_thresholds"):
        vc.Policy("threshold", threshold=0.5, class_thresholds={"0": 0.5})
    with pytest.raises(ValueError, match=r"a accept_all policy takes no global threshold"):
        vc.Policy("accept_all", threshold=0.5)
    with pytest.raises(ValueError, match=r"threshold must be a finite number or null"):
        vc.Policy("threshold", threshold=math.nan)
    with pytest.raises(ValueError, match=r"threshold of class 1 must be a finite number or null"):
        vc.Policy("class_thresholds", class_thresholds={"0": 0.5, "1": math.inf})
    with pytest.raises(ValueError, match=r"a policy must be an object with a 'kind'"):
        vc.Policy.from_dict({"threshold": 0.5})
    with pytest.raises(ValueError, match=r"calibration needs a 'method'"):
        vc.Policy("accept_all", calibration={"temperature": 2.0})


def test_policy_naming_classes_the_run_does_not_have():
    policy = vc.Policy("class_thresholds", class_thresholds={"0": 0.5, "cat": 0.5})
    message = r"the policy names classes \['cat'\] that the run does not have \(\['0', '1'\]\)"
    with pytest.raises(ValueError, match=message):
        policy.decide(labelled())


def test_tuned_policy_needs_a_run():
    with pytest.raises(ValueError, match=r"a threshold policy is tuned on data: pass the tuning run"):
        vc.fit_policy("threshold", None, USE_CASE)


@pytest.mark.parametrize("kind", ["threshold", "class_thresholds"])
def test_tuning_on_an_unlabelled_split(kind):
    message = rf"tuning a {kind} policy needs true labels \(y_true\), but this split is unlabeled"
    with pytest.raises(ValueError, match=message):
        vc.fit_policy(kind, vc.presort(unlabelled()), USE_CASE)


def test_calibrated_class_thresholds_need_the_classes():
    with pytest.raises(ValueError, match=r"calibrated class thresholds need the classes \(pass the run\)"):
        vc.fit_policy("calibrated_class_thresholds", None, USE_CASE)


# ------------------------------------------------------------ needs labels / proba
def test_expected_value_rule_on_a_top_label_run():
    with pytest.raises(ValueError, match=r"the expected-value rule needs the full probability vector"):
        vc.Policy("expected_value").decide(top_label_only(), USE_CASE)
    with pytest.raises(ValueError, match=r"only has the top label and its confidence"):
        vc.evaluate(vc.Policy("expected_value"), top_label_only(), USE_CASE)


def test_label_free_per_class_matrix_on_a_top_label_run():
    matrix = vc.ValueMatrix(("0", "1"), [[1.0, -5.0, 0.0], [-1.0, 2.0, 0.0]])
    message = r"label-free estimation with a per-class value matrix needs the full probability vector"
    with pytest.raises(ValueError, match=message):
        vc.estimate(vc.Policy("accept_all"), top_label_only(), matrix)
    with pytest.raises(ValueError, match=message):
        vc.curves.item_gains(top_label_only(), matrix, estimate=True)
    with pytest.raises(ValueError, match=message):
        vc.fit_policy("threshold", vc.presort(top_label_only()), matrix, estimate=True)


@pytest.mark.parametrize(
    "call, what",
    [
        (lambda: vc.evaluate(vc.Policy("accept_all"), unlabelled(), USE_CASE), "evaluating a policy"),
        (lambda: vc.voc_curve(vc.presort(unlabelled())), "a VOC curve"),
        (lambda: vc.curves.risk_coverage_curve(vc.presort(unlabelled())), "a risk-coverage curve"),
        (lambda: vc.curves.confidence_histogram(unlabelled()), "a correct-vs-wrong confidence histogram"),
        (lambda: vc.curves.item_gains(unlabelled(), USE_CASE), "the realised value"),
        (lambda: vc.item_values(vc.Policy("accept_all"), unlabelled(), USE_CASE), "per-item values"),
        (lambda: vc.comparison_table({"m": vc.presort(unlabelled())}), r"the comparison table \(m\)"),
        (lambda: unlabelled().accuracy, "correctness"),
    ],
)
def test_labels_required(call, what):
    with pytest.raises(ValueError, match=rf"{what} needs true labels \(y_true\), but this split is unlabeled"):
        call()


def test_tuned_voc_on_an_unlabelled_tuning_run():
    with pytest.raises(ValueError, match=r"tuning thresholds for a VOC curve needs true labels"):
        vc.voc_curve(vc.presort(labelled()), "tuned", tune_run=vc.presort(unlabelled()))


# ---------------------------------------------------------------------------- VOC
def test_voc_mode_and_arguments():
    run = vc.presort(labelled())
    with pytest.raises(ValueError, match=r"unknown VOC mode 'best'; expected one of \['oracle', 'tuned'"):
        vc.voc_curve(run, "best")
    with pytest.raises(ValueError, match=r"a tuned VOC curve needs the tuning run \(tune_run\)"):
        vc.voc_curve(run, "tuned")
    with pytest.raises(ValueError, match=r"the omega range must have low <= high, got \[2.0, 1.0\]"):
        vc.voc_curve(run).area(2.0, 1.0)


def test_dominance_with_unbounded_omega_sup_asks_for_omega_max():
    perfect = vc.presort(vc.Predictions.from_proba(PROBA, y_true=[0, 1, 0]))
    curve = vc.voc_curve(perfect, "oracle")
    assert curve.omega_sup == math.inf
    with pytest.raises(ValueError, match=r"omega_sup is infinite: pass omega_max"):
        vc.dominance(curve, curve)
