"""The How value works page's view model: it quotes the user's values, ω and ω/(1+ω) as the other pages do."""

import pytest

import valuecore as vc
from dashboard.views import how_value_works as view
from view_fixtures import selection


@pytest.mark.parametrize("wrong, omega", [(-4.0, "4"), (-1000.0, "1000"), (-0.5, "0.5")])
def test_omega_and_the_calibrated_threshold_are_the_use_cases(wrong, omega):
    chosen = selection("digits", values=(1.0, 0.0, wrong))
    page = view.build(chosen)
    assert page.omega == omega == vc.wording.omega(chosen.use_case.omega)
    threshold = chosen.use_case.calibrated_threshold
    assert page.calibrated == f"with your numbers ω/(1+ω) = {threshold:.3f}"
    assert page.values == f"$1.00, $0.00 and -${abs(wrong):,.2f}"
    assert dict(page.glossary) == vc.wording.GLOSSARY


def test_a_use_case_without_a_threshold_in_between_says_what_it_means():
    chosen = selection("digits", values=(1.0, 1.0, -4.0))  # a hand-off earns what a correct answer does
    page = view.build(chosen)
    assert "with your numbers it means" in page.calibrated
