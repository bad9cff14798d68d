"""Uncertainty: how sure is a value, on this data and on new data?

A value on an evaluation split is a fact about that split; as an estimate of
the value on new items it needs an interval. :func:`mean_interval` and
:func:`bootstrap_interval` give an :class:`Interval` for per-item values;
:func:`policy_interval` for a fixed policy on a labelled split and
:func:`result_interval` for a realised :class:`~valuecore.PolicyResult`;
:func:`paired_comparison` tests two models on the same items
(:class:`PairedComparison`); :func:`voc_band` is a bootstrap band of a VOC
curve (:class:`VOCBand`) and :func:`threshold_stability` the spread of a tuned
threshold (:class:`ThresholdStability`). ``WEIGHT_KINDS`` names how sample
weights are read (frequency or probability weights).

The value intervals and the paired test are "bounded" by default: they allow
for every outcome the values hold, seen or not, so they keep their coverage
when a costly outcome (a wrong answer at -1000) is rare or never seen, where a
t interval does not (``method="t"`` still gives it, for comparison).

Arguments follow ``scipy.stats.bootstrap``: ``confidence_level``,
``n_resamples``, ``batch`` and an explicit ``rng`` (a
``numpy.random.Generator``) wherever something is random. Uses scipy (t
and beta quantiles).
"""

from ._stats import uncertainty as _uncertainty
from ._stats.uncertainty import *  # noqa: F403  (exactly the names of _uncertainty.__all__)

__all__ = list(_uncertainty.__all__)
