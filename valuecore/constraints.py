"""Decisions under real constraints and with guarantees.

Review capacity: :func:`fit_capacity` finds the most valuable policy that hands
off at most a given share of the items (one threshold exactly; per-class
thresholds with one shared budget at hull vertices, with an upper bound), and
:func:`capacity_curve` gives value against capacity, as a
:class:`CapacityCurve`; a fit is a :class:`CapacityResult`.

Certified risk: :func:`fit_certified` maximises value among thresholds whose
selective risk is certified at most alpha with confidence 1 - delta
(Learn-then-Test with exact binomial p-values, ``METHODS``), a
:class:`CertifiedRisk`; :func:`binomial_p_values` and :func:`upper_bounds`
are its building blocks. Its ``weights`` says what sample weights mean
(``WEIGHT_MEANINGS``): a weighted run is refused unless they are copies.

Two-tier automation: act, act after a person confirms, or hand off.
:class:`AssistedValues` holds the confirmed tier's values, :func:`fit_two_tier`
tunes both thresholds exactly, :func:`evaluate_two_tier` scores them (a
:class:`TwoTierResult`) and :func:`two_tier_item_values` gives each item's value.

People who are not always right: :class:`Reviewers` (their accuracy, from a
sample with an exact interval, and a workload curve: accuracy against the
hand-off rate) prices a hand-off; :func:`fit_reviewer_threshold` finds the exact
best threshold when value is non-linear in the hand-off rate (a
:class:`ReviewerFit`), :func:`reviewer_value_curve` gives the value of every
candidate threshold; :func:`priced_use_case` prices a fixed policy's hand-offs at
its own rate (what ``verdict(..., reviewers=)`` does) and :func:`reviewer_counts`
folds the reviewers' mistakes into a run's counts (``voc_curve(..., reviewers=)``);
:func:`fit_reviewer_class_thresholds` finds the exact best per-class thresholds
on a workload curve (a :class:`ReviewerClassFit`; at most ``EXACT_CLASS_BUDGET``
steps).

A shortlist instead of a blank hand-off: act, hand off with a list of the
model's top classes, or hand off blank. :class:`ShortlistValues` holds the
value of a list of ``k`` classes that holds the true class and of one that
misses it; :func:`fit_shortlist` tunes both thresholds and ``k`` (or, with the
``cumulative`` rule of ``SHORTLIST_RULES``, the probability level of a
conformal-style set, over :func:`shortlist_levels`) exactly
(:func:`shortlist_level_grid` says which levels when they are too many);
:func:`evaluate_shortlist` scores it (a :class:`ShortlistResult`) and
:func:`shortlist_item_values` gives each item's value; :func:`shortlist_sets`
gives the list each item is handed off with (what a server shows).

Thresholds per segment (region, product, customer tier) with fairness caps: :func:`fit_segments` fits one
threshold per segment, the most valuable in total, within optional :class:`SegmentCaps` on how far the
hand-off rate, the selective error rate or the value per item may differ between segments, exactly (a search
over bands; see ``valuecore._decide.segments``). It returns a :class:`SegmentFit`: the :class:`SegmentPolicy`,
what the caps cost per item, whether any choice holds them, and a :class:`SegmentEvaluation` of
:class:`SegmentStanding` rows (each segment's threshold, hand-off rate, error rate, value per item with its
interval, certified error bound, and a too-small warning by the rule ``MIN_SEGMENT_ITEMS``).
:func:`evaluate_segments` scores a segment policy on new labelled items; :func:`segment_labels` reads each
item's segment. Caps count as held up to ``CAP_TOLERANCE`` of round-off; items of a segment the policy does
not know follow ``UNSEEN_SEGMENT_RULES`` (hand them off). ``fit_segments(..., rule="class_thresholds")`` fits
a threshold per predicted class in each segment instead (``SEGMENT_RULES``): exact without caps, and with caps
exact while each segment's choices of per-class thresholds fit ``max_choices`` (else ``exact=False``).
"""

from ._decide import capacity as _capacity
from ._engine import reviewers as _reviewers
from ._decide import risk as _risk
from ._decide import segments as _segments
from ._engine import shortlist as _shortlist
from ._engine import twotier as _twotier
from ._decide.capacity import *  # noqa: F403
from ._engine.reviewers import *  # noqa: F403
from ._decide.risk import *  # noqa: F403
from ._decide.segments import *  # noqa: F403
from ._engine.shortlist import *  # noqa: F403
from ._engine.twotier import *  # noqa: F403

__all__ = [*_capacity.__all__, *_risk.__all__, *_twotier.__all__, *_reviewers.__all__, *_shortlist.__all__,
           *_segments.__all__]
