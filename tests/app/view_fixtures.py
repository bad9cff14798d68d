"""A Selection over the sample runs, built without Streamlit, for the view-model tests (tests/test_view_*.py)."""

from __future__ import annotations

from pathlib import Path

import valuecore as vc
from dashboard.settings import Settings
from dashboard.state import Selection

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"


def selection(folder: str = "digits", values=(1.0, 0.0, -4.0), models=None, *, tune: str | None = "val",
              evaluate: str | None = "test", matrix=None, currency: str = "$") -> Selection:
    report = vc.load_runs([str(SAMPLES / folder)])
    chosen = tuple(report.models) if models is None else tuple(models)
    return Selection(settings=Settings(), report=report, models=chosen, use_case=vc.UseCase(*values),
                     value_matrix=matrix, tune_split=tune, eval_split=evaluate, currency=currency)


def pipeline(chosen: Selection) -> vc.Pipeline:
    """The core's own pipeline over the same runs (no dashboard cache in between)."""
    return vc.Pipeline(chosen.report.models, chosen.tune_split, chosen.eval_split, chosen.calibration)
