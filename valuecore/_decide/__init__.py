"""Decisions built on the engine and the statistics: which model and rule to deploy, under which limits.

``verdict`` (the best model and those the data cannot separate from it; does a richer rule earn its
keep), ``recommend`` (the one model, rule and threshold to deploy, or "not yet"), ``capacity`` (the
best policy within a review capacity), ``risk`` (the most valuable threshold whose error rate is
certified), ``segments`` (a threshold per segment, with caps on the gaps between segments) and
``constrained`` (those limits and the tiered rules as the pipeline fits them).

May import: _model, _engine, _stats.
"""
