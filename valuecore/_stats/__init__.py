"""Statistics: how sure a value is, and how calibrated the confidences are.

``uncertainty`` (intervals of a value per item on this data and on new data, paired comparisons,
bootstrap bands of curves and of the tuned threshold), ``bounded`` (the interval of a bounded,
few-valued mean that holds when the costly outcome is rare), ``grouped_bootstrap`` (bootstrap
re-tuning of a threshold over confidence groups) and ``calibration_metrics`` (reliability diagrams,
ECE, Brier score, log-loss).

May import: _model, _engine.
"""
