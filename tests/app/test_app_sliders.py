"""The sidebar's sliders for the three outcome values (AppTest, and the stops as plain functions).

Each value has a slider beside its exact box. Both show the one setting: a
moved slider moves the box (and every number on the page), a typed box moves
the slider (growing its range when the value leaves it), and a link, a preset
and an imported policy move both, on every page. The stops are round numbers
on a symmetric-log scale; on the sample runs they reach every tuned threshold
the exact values reach.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import valuecore as vc
from dashboard.sidebar import SLIDER_DECADES, SLIDER_RANGE, slider_decades, slider_stops, stop_label
from helpers.app_state import ROOT, clean, go, screen_policies, start, texts

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

NAMES = ("v_correct", "v_abstain", "v_wrong")


TOP = 10.0 ** SLIDER_RANGE[1]  # where a slider ends before a value asks for more


def slider(at, name: str = "v_wrong"):
    return at.sidebar.select_slider(key=f"sidebar_{name}_slider")


def box(at, name: str = "v_wrong"):
    return at.sidebar.number_input(key=f"sidebar_{name}_input")


def shows(at, name: str, value: float) -> None:
    """The setting, its slider, its box and the link all say ``value``."""
    assert getattr(at.session_state["settings"], name) == value
    assert slider(at, name).value == value
    assert box(at, name).value == value
    assert stop_label(value) in slider(at, name).options


def tiles(at) -> dict:
    return {m.label: m.value for m in at.metric}


# ------------------------------------------------------------------ stops
@pytest.mark.parametrize("decades", [SLIDER_RANGE, (-2, 3), (-3, 3)])
def test_the_stops_are_round_ascending_symmetric_and_finely_spaced(decades):
    stops = np.array(slider_stops(0.0, decades))
    assert np.all(np.diff(stops) > 0)
    assert np.array_equal(stops, -stops[::-1])
    assert (stops[0], stops[-1]) == (-(10.0 ** decades[1]), 10.0 ** decades[1])
    positive = stops[stops > 0]
    assert positive[0] == 10.0 ** decades[0]
    assert np.max(positive[1:] / positive[:-1]) <= 1.025 + 1e-12  # at most 2.5 % between two stops
    labels = [stop_label(s) for s in stops]
    assert len(set(labels)) == len(labels)  # the browser sends the label back: each names one stop
    assert all(float(label) == s for label, s in zip(labels, stops))
    for preset in (1.0, 0.0, -1.0, -4.0, -10.0, 5.0, -30.0 if decades[1] >= 2 else -3.0):
        assert preset in stops


def test_a_value_off_the_stops_is_added_exactly_and_labelled_to_its_last_digit():
    stops = slider_stops(-3.14159265358979, SLIDER_RANGE)
    assert -3.14159265358979 in stops and len(stops) == len(slider_stops(-4.0, SLIDER_RANGE)) + 1
    assert float(stop_label(-3.14159265358979)) == -3.14159265358979
    assert list(stops) == sorted(stops)
    assert stop_label(-0.0) == stop_label(0.0) == "0"


def test_the_range_holds_every_value_in_use_within_a_bounded_number_of_decades():
    assert slider_decades([1.0, 0.0, -4.0]) == SLIDER_RANGE
    assert slider_decades([-1000.0]) == (-2, 3)
    assert slider_decades([-1001.0]) == (-2, 4)
    assert slider_decades([0.004]) == (-3, SLIDER_RANGE[1])
    low, high = slider_decades([1e100, 1e-100])
    assert high == 100 and high - low == SLIDER_DECADES


def _exact_thresholds(n_correct, n_wrong, omega_max: float) -> set[int]:
    """Every candidate the exact values make the best for some ω in [0, omega_max] (ties: the highest)."""
    dc = n_correct[None, :] - n_correct[:, None]
    dw = n_wrong[None, :] - n_wrong[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = dc / dw
    breaks = np.unique(slopes[np.isfinite(slopes) & (slopes >= 0) & (slopes <= omega_max)])
    omegas = np.unique(np.r_[0.0, omega_max, breaks, (breaks[1:] + breaks[:-1]) / 2])
    return _best(n_correct, n_wrong, omegas)


def _best(n_correct, n_wrong, omegas) -> set[int]:
    return set(np.argmax(n_correct[None, :] - omegas[:, None] * n_wrong[None, :], axis=1).tolist())


@pytest.mark.parametrize("sample", ["digits", "breast_cancer", "digits_shifted"])
@pytest.mark.parametrize("v_wrong_range", [10.0, 1000.0])
def test_the_stops_reach_every_threshold_the_exact_values_reach_on_the_sample_runs(sample, v_wrong_range):
    """With a correct answer worth 1 and a hand-off 0, ω = -(wrong answer): dragging the wrong answer's
    slider over its stops gives every tuned threshold that some exact value in the range gives."""
    report = vc.load_runs(ROOT / "sample_runs" / sample)
    stops = np.array(slider_stops(-4.0, slider_decades([-v_wrong_range])))
    omegas = -stops[(stops <= 0) & (stops >= -v_wrong_range)]
    thresholds_that_move = 0
    for model, run in report.models.items():
        for split, predictions in run.splits.items():
            curve = vc.threshold_curve(vc.presort(predictions), vc.UseCase(1, 0, -4))
            if curve.n_correct is None:
                continue  # a split without labels (production): nothing to tune
            c, w = curve.n_correct.astype(float), curve.n_wrong.astype(float)
            exact = _exact_thresholds(c, w, v_wrong_range)
            thresholds_that_move += len(exact) - 1
            assert _best(c, w, omegas) >= exact, (model, split)
    assert thresholds_that_move >= 10, "runs whose threshold never moves prove nothing"


# ------------------------------------------------------------- the sidebar
def test_every_value_has_a_slider_beside_its_box_showing_the_same_number():
    at = start("value", src="sample:digits")
    for name, value in zip(NAMES, (1.0, 0.0, -4.0)):
        shows(at, name, value)
        assert slider(at, name).label == box(at, name).label.removesuffix(", exact")


def test_moving_a_slider_moves_the_box_and_the_page_numbers():
    at = start("value", src="sample:digits")
    before_tiles, before_policies = tiles(at), screen_policies(at)
    slider(at).set_value(-0.5).run()
    clean(at)
    shows(at, "v_wrong", -0.5)
    assert at.query_params["vw"] == "-0.5"
    assert tiles(at) != before_tiles and tiles(at)["Penalty ω"] == "0.5"
    assert screen_policies(at) != before_policies
    # The very numbers a typed -0.5 gives.
    typed = start("value", src="sample:digits")
    box(typed).set_value(-0.5).run()
    clean(typed)
    assert screen_policies(typed) == screen_policies(at) and tiles(typed) == tiles(at)
    # The other two values stayed where they were.
    shows(at, "v_correct", 1.0)
    shows(at, "v_abstain", 0.0)


def test_a_slider_move_stays_after_two_page_changes():
    at = start("home", src="sample:digits")
    slider(at, "v_correct").set_value(2.5).run()
    clean(at)
    go(at, "value")
    go(at, "voc")
    shows(at, "v_correct", 2.5)
    assert at.query_params["vc"] == "2.5"


def test_typing_outside_the_range_grows_it_and_moves_the_slider_and_it_never_shrinks_under_the_hand():
    at = start("value", src="sample:digits")
    assert float(slider(at).options[0]) == -TOP
    box(at).set_value(-5000.0).run()
    clean(at)
    shows(at, "v_wrong", -5000.0)
    assert float(slider(at).options[0]) == -10_000.0
    # Back to a small, odd value: the slider shows it exactly and keeps the range it had.
    box(at).set_value(-3.14159).run()
    clean(at)
    shows(at, "v_wrong", -3.14159)
    assert float(slider(at).options[0]) == -10_000.0
    # A small value beyond the finest stop extends the range downwards.
    box(at, "v_abstain").set_value(0.0004).run()
    clean(at)
    shows(at, "v_abstain", 0.0004)
    assert min(abs(float(o)) for o in slider(at, "v_abstain").options if float(o)) <= 0.0004


def test_a_link_moves_both():
    at = start("voc", src="sample:digits", vw="-250", vc="0.3")
    shows(at, "v_wrong", -250.0)
    shows(at, "v_correct", 0.3)
    assert float(slider(at).options[0]) <= -250.0


def test_a_preset_moves_both_on_every_page():
    at = start("value", src="sample:digits")
    label = next(o for o in at.sidebar.selectbox(key="sidebar_preset").options if o.startswith("Support desk"))
    at.sidebar.selectbox(key="sidebar_preset").set_value(label).run()
    clean(at)
    go(at, "voc")
    go(at, "runs")
    for name, value in zip(NAMES, (5.0, -1.0, -30.0)):
        shows(at, name, value)
    # A slider move afterwards makes the values one's own.
    slider(at).set_value(-20.0).run()
    clean(at)
    assert at.sidebar.selectbox(key="sidebar_preset").value == "(your own values)"
    shows(at, "v_wrong", -20.0)


def test_an_imported_policy_moves_both():
    sender = start("export", src="sample:digits", vw="-7.5", va="-0.25")
    text = sender.code[0].value
    at = start("export", src="sample:digits")
    at.text_area(key="export_paste").input(text).run()
    clean(at)
    go(at, "value")
    go(at, "voc")
    shows(at, "v_wrong", -7.5)
    shows(at, "v_abstain", -0.25)


def test_a_new_currency_is_in_the_labels_at_once_and_without_spaces():
    at = start("value", src="sample:digits")
    at.sidebar.text_input(key="sidebar_currency").set_value("CHF ").run()
    clean(at)
    assert at.session_state["settings"].currency == "CHF"
    assert slider(at).label == "Wrong answer (CHF)"
    assert at.query_params["cur"] == "CHF"
    assert not any("CHF ," in str(m.value) for m in [*at.markdown, *at.caption])
    # A link with the space gets the same, on the first page too.
    linked = start("home", src="sample:digits", cur="CHF ")
    assert linked.session_state["settings"].currency == "CHF"
    assert "CHF" in texts(linked) and "CHF ," not in texts(linked)


def test_no_sliders_while_a_value_matrix_is_in_force():
    from helpers.app_state import BREAST_MATRIX

    at = start("value", src="sample:breast_cancer", vm=BREAST_MATRIX)
    assert not [s for s in at.sidebar.select_slider if s.key.startswith("sidebar_v_")]
    at.sidebar.button(key="sidebar_use_three_values").click().run()
    clean(at)
    shows(at, "v_wrong", -4.0)


def test_a_huge_typed_value_is_clamped_and_the_slider_stays_cheap():
    at = start("value", src="sample:digits")
    box(at).set_value(-1e300).run()
    clean(at)
    settings = at.session_state["settings"]
    assert settings.v_wrong == -vc.policy_json.VALUE_LIMIT and slider(at).value == -vc.policy_json.VALUE_LIMIT
    assert len(slider(at).options) <= 2 * 160 * SLIDER_DECADES + 4
    assert math.isfinite(float(slider(at).options[0]))


def test_each_slider_holds_its_values_side_of_zero_and_grows_to_the_other_when_a_value_goes_there():
    at = start("value", src="sample:digits")
    wrong = [float(o) for o in slider(at).options]
    correct = [float(o) for o in slider(at, "v_correct").options]
    hand_off = [float(o) for o in slider(at, "v_abstain").options]
    assert (min(wrong), max(wrong)) == (-TOP, 0.0) and (min(correct), max(correct)) == (0.0, TOP)
    assert (min(hand_off), max(hand_off)) == (-TOP, TOP)  # a value of 0: both sides
    assert len(wrong) == len(correct) == (len(hand_off) + 1) // 2
    # A wrong answer worth something (typed) is on the slider at once; the negative side stays.
    box(at).set_value(0.5).run()
    clean(at)
    shows(at, "v_wrong", 0.5)
    both = [float(o) for o in slider(at).options]
    assert (min(both), max(both)) == (-TOP, TOP)
    box(at).set_value(-2.0).run()
    clean(at)
    shows(at, "v_wrong", -2.0)
    assert max(float(o) for o in slider(at).options) == TOP  # never shrinks under the hand


def test_a_wrong_answer_of_minus_1000_is_a_drag_away():
    # issue 35: the wrong answer's slider stopped at -10, so -1000 (a costly error) had to be typed.
    at = start("home", src="sample:digits")
    assert -1000.0 in [float(o) for o in slider(at).options]
    slider(at).set_value(-1000.0).run()
    clean(at)
    shows(at, "v_wrong", -1000.0)
    assert float(at.query_params["vw"]) == -1000.0
