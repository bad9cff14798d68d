"""Monitoring: the value of a model over time, with or without labels.

:func:`chunk_predictions` cuts a run into :class:`Chunk` objects (by time
period or by count); :func:`monitor` reports, per chunk, the value of a
policy estimated from the model's own probabilities and, where labels exist,
realised, as a tidy frame with the columns ``MONITOR_COLUMNS``;
:func:`monitor_summary` condenses it. :func:`calibration_value_table` (one
model) and :func:`calibration_value_tables` (several) build seed 003's Table
5: the value of the calibrated threshold before and after recalibration.

With a labelled reference split, :func:`monitor_bands` calibrates the
label-free estimate on it and adds, per chunk, a sampling-error band, alerts
against the reference band and a drift signal on the confidences, as a
:class:`MonitorBands` (frame columns ``BAND_COLUMNS``); :func:`monitor_estimates` is its estimate per
chunk alone, bit for bit, without bands, alerts or drift (frame columns ``ESTIMATE_COLUMNS``);
:func:`expected_item_values` is each item's estimated value and
:func:`monitoring_record` the summary the policy JSON keeps.

Under a new class mix (prior shift), :func:`estimate_priors` estimates the
mix of an unlabelled split (a :class:`PriorEstimate` with an interval, by
one of ``PRIOR_SHIFT_METHODS``: the EM of :func:`em_priors`, or the
black-box shift estimation of :func:`bbse_priors`, on hard predictions, or
of :func:`soft_bbse_priors`, on probabilities);
:func:`adjust_to_priors` moves calibrated posteriors to a new mix
(:func:`adjust_predictions`: the same, keeping the served decisions),
:func:`reweight_to_priors` re-weights a labelled split to it,
:func:`estimate_under_priors` is the label-free value under it, and
:func:`adapted_policy_document` re-tunes every model's policy for it (by one
of ``ADAPT_TUNINGS``), keeping a re-tuned rule only when
:func:`retuning_gain` (a :class:`RetuningGain`) finds its gain beyond noise.

Results are pandas frames.
"""

from ._monitor import bands as _bands
from ._monitor import chunks as _monitoring
from ._monitor import prior_shift as _prior_shift
from ._monitor.bands import *  # noqa: F403
from ._monitor.chunks import *  # noqa: F403  (exactly the names of _monitoring.__all__)
from ._monitor.prior_shift import *  # noqa: F403
from ._pipeline.adapted import adapted_policy_document

__all__ = [*_monitoring.__all__, *_bands.__all__, *_prior_shift.__all__, "adapted_policy_document"]
