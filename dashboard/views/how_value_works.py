"""The How value works page's view model: the few sentences that quote the user's own values.

The rest of the page is fixed prose. Nothing here draws or touches Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

import valuecore as vc

from . import threshold_text


@dataclass(frozen=True)
class HowValuePage:
    """The user's three values, ω and the calibrated threshold, in the words the page quotes them with."""

    values: str  # "$1.00, $0.00 and -$4.00"
    omega: str  # ω written as everywhere else ("4", "∞")
    calibrated: str  # "with your numbers ω/(1+ω) = 0.800", or what the threshold means when it is not in (0, 1)
    glossary: tuple[tuple[str, str], ...]
    best_possible: str = vc.wording.BEST_POSSIBLE  # the VOC page's name for the curve tuned on what it is scored on


def build(selection) -> HowValuePage:
    use_case = selection.use_case
    threshold = use_case.calibrated_threshold
    calibrated = (f"with your numbers ω/(1+ω) = {vc.wording.number(threshold)}"
                  if threshold is not None and 0 < threshold < 1
                  else "with your numbers it means " + threshold_text(threshold))
    values = (f"{selection.money(use_case.v_correct)}, {selection.money(use_case.v_abstain)} and "
              f"{selection.money(use_case.v_wrong)}")
    return HowValuePage(values, vc.wording.omega(selection.omega), calibrated, tuple(vc.wording.GLOSSARY.items()))
