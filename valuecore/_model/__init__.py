"""The data model: what a run and a use case are, before any threshold is tried.

``predictions`` (a model's per-item output on one split, validated once: :class:`Predictions`),
``values`` (what each outcome is worth: ``UseCase``, ``ValueMatrix``, the penalty omega),
``recalibration`` (the maps that recalibrate confidences: temperature, isotonic, Platt, fitted and
applied), ``tier_values`` (the values of a confirmed tier or a shortlist) and ``choices`` (the names
of the rules and modes, importable without numpy).

May import: nothing inside valuecore.
"""
