"""Which model and rule to deploy: the verdict a product manager reads, and the one recommendation.

:func:`verdict` judges models on the same items (a :class:`Verdict` of :class:`Standing` rows: the best
model and those the data cannot separate from it); :func:`simpler_rule` asks whether a richer rule really
earns more than one threshold (a :class:`RuleComparison`). :func:`recommend` weighs every rule the
settings allow (a :class:`Candidate` each) and returns a :class:`Recommendation`: the one model, rule and
threshold(s) to deploy, or "not yet"; :func:`recommended_document` is the policy JSON that names it (with
a :class:`RuleRefitted` for an entry it refitted) and :func:`recommended_rules` each model's rule under
the choice ``RECOMMENDED_RULE`` (the default of every page and of ``report``). With a segment column,
:func:`segment_rules` fits each model's thresholds per segment (a :class:`SegmentRule`, kind
``SEGMENT_RULE``), one more candidate for ``recommend(..., segment_rules=...)``. The everyday names are also
at the top of the package.
"""

from ._decide.recommend import (
    RECOMMENDED_RULE,
    SEGMENT_RULE,
    SegmentRule,
    Candidate,
    Recommendation,
    RuleRefitted,
    recommend,
    recommended_document,
    recommended_rules,
)
from ._decide.verdict import RuleComparison, Standing, Verdict, simpler_rule, verdict
from ._pipeline.segment_candidates import segment_rules

__all__ = [
    "Candidate",
    "RECOMMENDED_RULE",
    "Recommendation",
    "RuleComparison",
    "RuleRefitted",
    "SEGMENT_RULE",
    "SegmentRule",
    "Standing",
    "Verdict",
    "recommend",
    "recommended_document",
    "recommended_rules",
    "segment_rules",
    "simpler_rule",
    "verdict",
]
