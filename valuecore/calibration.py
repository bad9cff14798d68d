"""Calibration: recalibrate confidences, and measure how calibrated they are.

The value-optimal threshold ``omega / (1 + omega)`` assumes calibrated
confidences (seed 003). Fit a recalibration on a labelled tuning split with
:func:`fit_calibration` (temperature, isotonic, Platt or none), which returns
a :class:`Calibrator` to apply anywhere and to record in a policy
(``Calibrator.to_dict``); :func:`describe_calibration` names a recorded one in
a short phrase. The diagnostics: :func:`expected_calibration_error`,
:func:`maximum_calibration_error`, :func:`brier_score`,
:func:`negative_log_likelihood`, :func:`reliability_diagram` (a tidy frame)
and :func:`calibration_summary` (all of them at once);
:func:`calibration_diagnostics` returns them all, both reliability diagrams
included, as a :class:`CalibrationDiagnostics`, binning the confidences once
per strategy (what a page showing them together asks for).

Uses scipy (fitting) and pandas (the reliability diagram).
"""

from ._model import recalibration as _recalibration
from ._model.recalibration import *  # noqa: F403  (exactly the names of its __all__)
from ._stats import calibration_metrics as _metrics
from ._stats.calibration_metrics import *  # noqa: F403  (exactly the names of its __all__)

__all__ = [*_recalibration.__all__, *_metrics.__all__]
