"""A :class:`~dashboard.state.Selection` built as the sidebar would, without Streamlit running,
for the fast tests of the pages' view models (``tests/test_view_*.py``)."""

from __future__ import annotations

from pathlib import Path

import valuecore as vc
from dashboard.data import workspace
from dashboard.settings import Settings
from dashboard.state import Selection

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"


def selection(sample: str = "digits", *, use_case=vc.UseCase(1, 0, -4), matrix=None, models=None,
              tune: str = "val", evaluate: str = "test", calibration: str = "none", currency: str = "$"):
    """The selection of a sample's runs and the workspace over it."""
    report = vc.load_runs([str(SAMPLES / sample)])
    chosen = Selection(
        settings=Settings(), report=report, models=tuple(models or report.models), use_case=use_case,
        value_matrix=matrix, tune_split=tune, eval_split=evaluate, calibration=calibration, currency=currency,
    )
    return chosen, workspace(chosen)
