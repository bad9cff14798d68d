"""Tests of valuecore.wording: the one place numbers become text.

The threshold text must decide every item as the exact threshold does; it is
checked on every tuned threshold of the sample runs and, under Hypothesis, on
confidences crowded near 0 and 1 where a short rounding would move items.
"""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import valuecore as vc
from valuecore import wording

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"


def decisions(confidence: np.ndarray, threshold: float) -> np.ndarray:
    return confidence >= threshold


def sample_runs():
    for folder in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        report = vc.load_runs([str(folder)])
        for model, run in report.models.items():
            for split, predictions in run.splits.items():
                yield f"{folder.name}/{model}/{split}", predictions


# --------------------------------------------------------------- thresholds
def test_printed_thresholds_decide_the_sample_runs_like_the_exact_ones():
    checked = 0
    for name, predictions in sample_runs():
        run = vc.presort(predictions)
        confidence = predictions.confidence
        # Every tuned threshold of the sample runs, for a spread of penalties, plus the extreme candidates.
        candidates = {float(run.thresholds[0]), float(run.thresholds[-1])}
        if predictions.has_labels:
            for omega in (0.5, 1, 2, 4, 9, 49, 999):
                policy = vc.fit_policy("threshold", run, vc.UseCase.from_omega(omega))
                if policy.threshold is not None:
                    candidates.add(policy.threshold)
        for threshold in candidates:
            exact = decisions(confidence, threshold)
            with_run = wording.threshold(threshold, confidences=confidence)
            alone = wording.threshold(threshold)
            assert np.array_equal(decisions(confidence, float(with_run)), exact), (name, threshold, with_run)
            assert np.array_equal(decisions(confidence, float(alone)), exact), (name, threshold, alone)
            assert len(with_run.split(".")[1]) >= 3
            checked += 1
    assert checked > 100


def test_a_threshold_just_below_one_never_reads_as_one():
    assert wording.threshold(0.999997) == "0.999997"
    assert wording.threshold(1 - 2**-52) != "1.000"
    assert float(wording.threshold(1 - 2**-52)) == 1 - 2**-52
    # With the run, the shortest text that still leaves the next lower confidence out.
    assert wording.threshold(0.999997, confidences=[1.0, 0.999997, 0.9]) == "0.999"
    assert wording.threshold(0.999997, confidences=[1.0, 0.999997, 0.9999]) == "0.99999"


def test_a_threshold_of_one_never_reads_as_never_act():
    # "≥ 1.000" reads as "never act"; on the data it acts on the items at exactly 1.
    confidence = np.array([1.0, 1.0, 0.9975, 0.5])
    for text in (wording.threshold(1.0, confidences=confidence), wording.threshold_on_data(1.0, confidence)):
        assert text == "0.999"
        assert np.array_equal(decisions(confidence, float(text)), decisions(confidence, 1.0))
    assert wording.threshold_on_data(1.0, [1.0, 0.99998]) == "0.99999"
    assert wording.threshold_phrase(1.0, confidence) == "act when confidence ≥ 0.999"
    # Only when six digits cannot stay above the next lower confidence does 1 itself show, as 1.
    assert wording.threshold_on_data(1.0, [1.0, 0.99999975]) == "1"
    assert wording.threshold(1.0) == "1" and wording.threshold_phrase(1.0) == "act when confidence ≥ 1"


near_edges = st.one_of(
    st.floats(min_value=0.0, max_value=1e-6),
    st.floats(min_value=1 - 1e-6, max_value=1.0),
    st.floats(min_value=0.0, max_value=1.0),
    st.integers(min_value=1, max_value=60).map(lambda k: 1 - 2.0**-k),
    st.integers(min_value=1, max_value=60).map(lambda k: 2.0**-k),
)


@given(st.lists(near_edges, min_size=1, max_size=40), st.data())
def test_printed_thresholds_decide_like_exact_ones_near_0_and_1(confidences, data):
    confidence = np.asarray(confidences)
    threshold = data.draw(st.sampled_from(sorted(set(confidences))))
    exact = decisions(confidence, threshold)
    with_run = wording.threshold(threshold, confidences=confidence)
    alone = wording.threshold(threshold)
    assert np.array_equal(decisions(confidence, float(with_run)), exact), with_run
    assert float(alone) == threshold
    assert float(with_run) <= threshold
    assert "e" not in with_run and "e" not in alone  # plain decimals, which people copy


@given(st.floats(min_value=0.0, max_value=1.0))
def test_threshold_text_reads_back_exactly(threshold):
    assert float(wording.threshold(threshold)) == threshold


# What a person reads next to the data: as many digits as tell the decision apart there, at most 6 significant.
def significant_digits(text: str) -> int:
    return len(text.replace(".", "").lstrip("0").rstrip("0") or "0")


def floor_decimals(value: float, decimals: int) -> float:
    from decimal import ROUND_FLOOR, Decimal

    return float(Decimal(value).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_FLOOR))


crowded = st.one_of(
    near_edges,
    st.tuples(st.floats(min_value=0.0, max_value=1.0), st.integers(min_value=1, max_value=12)).map(
        lambda pair: round(pair[0], pair[1])),
)


@given(st.lists(crowded, min_size=1, max_size=40), st.data())
def test_threshold_on_data_separates_the_decision_with_at_most_six_digits(confidences, data):
    confidence = np.asarray(confidences)
    threshold = data.draw(st.sampled_from(sorted(set(confidences))))
    text = wording.threshold_on_data(threshold, confidence)
    shown = float(text)
    assert "e" not in text and significant_digits(text) <= wording.THRESHOLD_SIGNIFICANT, text
    # Never above the exact threshold: every item the policy acts on, the text acts on too.
    assert shown <= threshold
    below = confidence[confidence < threshold]
    # Whenever six significant digits can tell the accepted items from the rejected ones, the text does.
    exponent = math.floor(math.log10(threshold)) if threshold > 0 else 0
    six = floor_decimals(threshold, max(wording.THRESHOLD_SIGNIFICANT - 1 - exponent, 0))
    if below.size == 0 or six > below.max():
        assert np.array_equal(decisions(confidence, shown), decisions(confidence, threshold)), text
    # And no more digits than that: one decimal fewer (down to three) would let a rejected item in.
    decimals = len(text.partition(".")[2])
    if decimals > 3 and below.size and significant_digits(text) < wording.THRESHOLD_SIGNIFICANT:
        # (A threshold of 1 reads 0.99…9, which "≥ 1.000" would not: one nine fewer is its shorter text.)
        fewer = floor_decimals(threshold, decimals - 1) if threshold < 1 else float("0." + "9" * (decimals - 1))
        assert fewer <= below.max(), text


def test_a_threshold_below_a_millionth_is_written_without_an_exponent():
    """Found by exploration: Decimal's str() wrote the rounded-down 4.828232e-7 as 4.828E-7."""
    confidences = [0.0, 4.826200289205958e-07, 4.828232341172037e-07, 2.430043687176174e-07,
                   3.1438511564936517e-07, 7.080532313700606e-08, 7.898549560426594e-08, 2.2250738585e-313]
    for value in confidences[1:]:
        for text in (wording.threshold(value, confidences), wording.threshold_on_data(value, confidences)):
            assert "e" not in text.lower() and float(text) <= value, text
            assert np.array_equal(decisions(np.asarray(confidences), float(text)),
                                  decisions(np.asarray(confidences), value)), text
    assert wording.threshold_on_data(4.828232341172037e-07, confidences) == "0.0000004828"


def test_threshold_on_data_on_the_sample_runs_is_short_and_exact_on_them():
    longest = 0
    for name, predictions in sample_runs():
        run = vc.presort(predictions)
        if not predictions.has_labels:
            continue
        for omega in (1, 4, 49):
            policy = vc.fit_policy("threshold", run, vc.UseCase.from_omega(omega))
            if policy.threshold is None:
                continue
            text = wording.threshold_on_data(policy.threshold, predictions.confidence)
            exact = decisions(predictions.confidence, policy.threshold)
            assert np.array_equal(decisions(predictions.confidence, float(text)), exact), (name, text)
            longest = max(longest, significant_digits(text))
    assert 3 <= longest <= wording.THRESHOLD_SIGNIFICANT


def test_threshold_on_data_without_data_is_the_exact_threshold():
    assert wording.threshold_on_data(0.5340621214869945) == "0.5340621214869945"
    assert wording.threshold_on_data(0.5340621214869945, [0.9, 0.5340621214869945, 0.41]) == "0.534"
    assert wording.threshold_phrase(0.5340621214869945, [0.9, 0.41]) == "act when confidence ≥ 0.534"


def test_the_small_formatters_write_each_thing_once():
    assert wording.level(0.95) == "95%" and wording.level(0.999) == "99.9%"
    assert wording.count(1797) == "1,797" and wording.count(2.5) == "2.5"
    assert wording.short_list(["a", "b", "c"], limit=2) == "a, b, … (3 in all)"
    assert wording.names(["a", "b", "c"]) == "a, b and c"
    assert wording.policy_label("threshold") == wording.POLICY_LABELS["threshold"]
    assert "probability vector" in wording.NO_PROBA_NOTE and "ω" in wording.OMEGA_LABEL


# ------------------------------------------------------------ money, shares
def test_money_in_the_chosen_currency():
    assert wording.money(1234.5, "$") == "$1,234.50"
    assert wording.money(-0.91, "$") == "-$0.91"
    assert wording.money(0.91, "EUR") == "0.91 EUR"
    assert wording.money(-0.0001, "€") == "-€0.0001"  # below a cent is not "zero"
    assert wording.money(-0.001, "") == "-0.001"
    assert wording.money(0.0, "$") == "$0.00"


def test_amounts_over_a_volume_have_no_cents_from_100_up():
    assert wording.projected(9400.0, "$") == "$9,400"
    assert wording.projected(939.11, "$") == "$939"
    assert wording.projected(-1600.0, "€") == "-€1,600"
    assert wording.projected(99.5, "$") == "$99.50" and wording.projected(0.004, "$") == "$0.004"
    assert wording.projected(None, "$") == wording.DASH


def test_percentages_have_one_precision_and_never_round_to_all_or_nothing():
    assert wording.percent(0.9444) == "94.4%"
    assert wording.percent(0.94) == "94.0%"
    assert wording.percent(0.99997) == ">99.9%"
    assert wording.percent(0.00002) == "<0.1%"
    assert wording.percent(0.0) == "0.0%" and wording.percent(1.0) == "100.0%"


@pytest.mark.parametrize("missing", [None, math.nan])
def test_missing_numbers_read_as_a_dash_never_none_or_nan(missing):
    for text in (wording.money(missing, "$"), wording.percent(missing), wording.number(missing),
                 wording.threshold(missing), wording.significant(missing), wording.omega(missing)):
        assert text == wording.DASH
    assert wording.threshold_phrase(missing) == "always hand off"


def test_the_dashboard_and_the_cli_use_the_same_threshold_text():
    from dashboard import views
    from valuecore._cli import commands as _cli
    threshold = 0.999997
    assert views.threshold_number(threshold) == wording.threshold(threshold)
    lines = _cli._describe_rule(vc.Policy("threshold", threshold=threshold))
    assert wording.threshold(threshold) in lines[0]
    assert views.percent(0.94444) == _cli._pct(0.94444) == "94.4%"


def test_paired_comparison_holds_numbers_and_wording_says_them():
    p = vc.Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.3, 0.7]], y_true=[0, 0, 1, 1])
    result = vc.uncertainty.paired_comparison(
        vc.Policy("accept_all"), p, vc.Policy("threshold", threshold=0.85), p, vc.UseCase(1, 0, -4),
    )
    assert not any(isinstance(getattr(result, f), str) for f in result.__dataclass_fields__)
    assert result.total_weight == 4.0 and result.total_difference == pytest.approx(4 * result.mean_difference)
    on_data, on_distribution = wording.paired_sentences(result, names=("all", "strict"), currency="$")
    assert on_data.startswith("On these 4 items, all is worth")
    assert "all minus strict" in on_distribution


# ------------------------------------------------- counts near 0, numbers too large to write out
# Head 2565fbe's formatting of ordinary numbers, kept here as the reference the new one must match.
def count_before(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def significant_before(x: float) -> str:
    text = f"{x:,.0f}" if abs(x) >= 999.5 else f"{x:.3g}"
    return "0" if text in ("-0", "0.0", "-0.0") else text


def money_body_before(x: float, digits: int) -> str:
    return f"{abs(x):.3g}" if x != 0 and abs(x) < 0.5 * 10**-digits else f"{abs(x):,.{digits}f}"


def read_back(text: str) -> Decimal:
    """The number a person reads in ``text`` (currency and thousands separators dropped); a Decimal, since
    ``1.80e+308`` is beyond the floats."""
    return Decimal(text.replace(",", "").replace("$", ""))


def reads_close(text: str, x: float, abs_tol: float) -> bool:
    """Whether ``text`` reads as ``x`` to three significant digits or to ``abs_tol``."""
    gap = abs(read_back(text) - Decimal(x))
    return gap <= Decimal(abs_tol) or gap <= Decimal("0.005") * abs(Decimal(x))


BELOW_WRITTEN_OUT = 999_999_999_999_999.0  # the largest whole number still written out in full
finite = st.floats(allow_nan=False, allow_infinity=False)


def test_fractional_counts_that_one_decimal_rounds_to_zero_keep_their_digits():
    # Items weighing 0.01 each: "0.0 wrong" beside "rests on 0.02 wrong answers" (head 2565fbe).
    assert wording.count(0.020000000000000018) == "0.02"
    assert wording.count(1e-50) == "1e-50" and wording.count(4.8e-49) == "4.8e-49"
    assert wording.count(0.049) == "0.049" and wording.count(0.05) == "0.1"
    assert wording.count(0.0) == "0" and wording.count(-0.0) == "0"


def test_numbers_too_large_to_write_out_read_in_three_significant_digits():
    # 100 items weighing 1e50: some 50 digits that mean nothing (head 2565fbe).
    assert wording.significant(9.999999999999999e51) == "1.00e+52"
    assert wording.count(1e52) == "1.00e+52" and wording.count(1234567890123456.0) == "1.23e+15"
    assert wording.projected(1.4000000000000004e51) == "1.40e+51"
    assert wording.money(9.035087719298246e47, "$") == "$9.04e+47"
    assert wording.money(-9.035087719298246e47, "EUR") == "-9.04e+47 EUR"
    assert wording.amount(8.01e99, "$") == "$8.01e+99" and wording.amount(9.6e99, "$") == "$9.60e+99"
    # The last number written out, and the first that is not (also when rounding would reach it).
    assert wording.significant(BELOW_WRITTEN_OUT) == "999,999,999,999,999"
    assert wording.significant(1e15) == wording.significant(999_999_999_999_999.5) == "1.00e+15"
    assert wording.money(999_999_999_999_999.875, "$") == "$999,999,999,999,999.88"
    assert wording.projected(999_999_999_999_999.875, "$") == "$1.00e+15"


@given(finite)
def test_a_count_reads_zero_exactly_when_it_is_zero_and_close_to_itself(x):
    text = wording.count(x)
    assert (read_back(text) == 0) == (x == 0), (x, text)
    assert reads_close(text, x, 0.05), (x, text)


@given(finite)
def test_every_finite_number_reads_in_a_few_characters_and_close_to_itself(x):
    for text, decimals in ((wording.significant(x), 0), (wording.count(x), 1), (wording.money(x, "$"), 2),
                           (wording.projected(x, "$"), 2), (wording.amount(x, "$"), 2)):
        # At most "-$999,999,999,999,999.99": the longest still written out.
        assert len(text) <= 24, (x, text)
        assert reads_close(text, x, 0.5 * 10**-decimals), (x, text)


ordinary = st.one_of(st.integers(-BELOW_WRITTEN_OUT, BELOW_WRITTEN_OUT).map(float),
                     st.floats(-BELOW_WRITTEN_OUT, BELOW_WRITTEN_OUT), st.floats(-1e4, 1e4),
                     st.floats(-1, 1))


@given(ordinary)
def test_ordinary_numbers_read_as_before(x):
    assert wording.significant(x) == significant_before(x)
    assert wording.money(x) == ("-" if x < 0 and money_body_before(x, 2).strip("0.,") else "") + money_body_before(x, 2)
    assert wording.money(x, "$", 0).lstrip("-$") == money_body_before(x, 0)
    if abs(x) >= 0.05:
        assert wording.count(x) == count_before(x)
