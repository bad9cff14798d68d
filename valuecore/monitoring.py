"""Monitoring: the value of a model over time, with or without labels.

:func:`chunk_predictions` cuts a run into :class:`Chunk` objects (by time
period or by count); :func:`monitor` reports, per chunk, the value of a
policy estimated from the model's own probabilities and, where labels exist,
realised, as a tidy frame with the columns ``MONITOR_COLUMNS``;
:func:`monitor_summary` condenses it. :func:`calibration_value_table` (one
model) and :func:`calibration_value_tables` (several) build seed 003's Table
5: the value of the calibrated threshold before and after recalibration.

Results are pandas frames.
"""

from . import _monitoring
from ._monitoring import *  # noqa: F403  (exactly the names of _monitoring.__all__)

__all__ = list(_monitoring.__all__)
