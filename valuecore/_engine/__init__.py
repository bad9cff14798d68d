"""The engine: sort a run once, then tally, fit and evaluate decision rules exactly.

``sorting`` (a run sorted once; the value primitive, gain and its cumulative sum; ``bitsort`` its
radix sort), ``policy`` (a decision rule as deployed, with the recalibration it applies first; ``segment_policy`` a
threshold per segment),
``fitting`` (``fit_policy``: every distinct confidence a candidate threshold; ``hull`` answers a new value
for a threshold rule from the upper concave hull of the cumulative counts, in O(log n)), ``twotier``,
``shortlist`` and ``reviewers`` (hand-offs a person confirms, picks from a list, or gets wrong),
``evaluate`` (what a rule is worth on a split, with labels or estimated), ``tally`` (a decision's
counts per true class and action, cached per split), ``curves``, ``voc`` and ``table`` (value over
the threshold, over the penalty, and the comparison table). Confidences arrive recalibrated; numbers
leave as numbers.

May import: _model.
"""
