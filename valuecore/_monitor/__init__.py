"""Monitoring and shift: a policy's value over time and on a new class mix, without labels.

``chunks`` (runs cut into chunks by rows or by period, the value of each, calibration-value tables),
``bands`` (label-free estimates with bands, alerts and drift tests; the monitoring reference a
policy JSON records) and ``prior_shift`` (the class mix of an unlabelled split estimated, and what a
rule re-tuned for it would earn).

May import: _model, _engine, _stats.
"""
