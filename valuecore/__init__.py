"""valuecore: judge classifiers by the value they bring with a reject option.

Conventions (followed everywhere in the package)
------------------------------------------------
Run
    Per-item model output on one split, a :class:`Predictions`: optional
    ``y_true``, class probabilities ``(n, C)`` or only the top label
    ``(y_pred, confidence)``, optional non-negative ``sample_weight``. A weight
    of 2 gives exactly the result of the item written twice. Every per-item
    figure divides by the *weighted* number of items N, abstentions included.
Values
    A :class:`UseCase` ``(v_correct, v_abstain, v_wrong)`` in any currency, with
    penalty ``omega = (v_abstain - v_wrong) / (v_correct - v_abstain)`` and
    dimensionless value ``(N_correct - omega N_wrong) / N`` (0 = always
    abstain, 1 = perfect). Or a :class:`ValueMatrix` of shape ``(C, C + 1)``:
    rows the true class, columns the predicted class then "abstain" (the
    orientation of ``sklearn.metrics.confusion_matrix`` plus an abstain
    column). The use case is the special case; the binary TP/TN/FP/FN
    business-value matrix is another (``ValueMatrix.binary``). Orderings other
    than ``v_correct > v_abstain >= v_wrong`` are legal and explained by
    ``UseCase.regime``.
Accept rule
    Act on the predicted class iff ``confidence >= threshold``. Items of equal
    confidence are never split: a tuned threshold is always an observed
    confidence, the lowest accepted one. ``None`` means always abstain. Among
    thresholds of equal value the highest wins (fewest automated calls).
Exactness and speed
    Every distinct confidence is a candidate threshold. A run is sorted once
    (:func:`presort`, cache it); after that every question is a cumulative sum
    or a convex hull, with no Python loop over items. One loop runs over
    thresholds: the upper hull of each class's prefixes when per-class
    thresholds share a review capacity (``valuecore.constraints``), amortised
    O(groups). Approximations are explicit and bounded: those per-class
    thresholds solve the linear relaxation (the result's ``exact`` and
    ``upper_bound`` say how close), and an aggregate whose confidences were
    rounded to a ``resolution`` has its cost bounded by ``resolution_bound``
    (``valuecore.aggregation``).
Randomness
    Everything random takes an explicit ``rng`` (a ``numpy.random.Generator``);
    interval arguments are named as in ``scipy.stats.bootstrap``
    (``confidence_level``, ``n_resamples``, ``batch``).

Where things live
-----------------
The names a user calls are at the top of the package:

- runs and values: :class:`Predictions`, :class:`UseCase`, :class:`ValueMatrix`,
  :func:`load_runs` (one file: ``valuecore.runs.load_run_file``);
- sorting, policies and their value: :func:`presort`, :class:`Policy`, :func:`fit_policy`,
  :func:`evaluate`, :func:`estimate` (without labels), :class:`PolicyResult`, :func:`item_values`;
- curves and comparisons: :func:`threshold_curve`, :func:`voc_curve`, :func:`voc_frame`,
  :func:`dominance` (a :class:`Dominance`), :func:`comparison_table` (a :class:`ComparisonTable` at the
  coverages ``DEFAULT_KS``);
- one pipeline from settings to policy, the same for the dashboard, the command
  line and the export: :class:`Pipeline` (choose splits, fit the recalibration,
  sort, fit the policy, evaluate, interval), and :func:`apply_policy_document`, which evaluates
  an exported policy as stored;
- the decision: :func:`verdict` (the best model and those the data cannot separate from it),
  :func:`recommend` (the one model, rule and threshold(s) to deploy, or "not yet"),
  :func:`recommended_document` (the policy JSON that names it) and :func:`recommended_rules` (each
  model's rule under the choice ``RECOMMENDED_RULE``, the default of every page and of ``report``).

The rest is grouped in public submodules, each documented on its own:
``valuecore.runs`` (reading run files: the runs, the load report and its problems),
``valuecore.curves`` (every curve, the presorted run and the value primitive they share),
``valuecore.recommendation`` (the verdict, the recommendation and their result types),
``valuecore.policy_json`` (the policy file for a serving system, the policy kinds, the values as a
document holds them),
``valuecore.calibration`` (recalibration and its diagnostics),
``valuecore.uncertainty`` (intervals, paired tests, bootstrap bands),
``valuecore.constraints`` (review capacity, certified risk, two-tier automation),
``valuecore.monitoring`` (value over time, without labels), ``valuecore.serving`` (a policy JSON applied to new
model outputs with numpy alone, a scikit-learn wrapper and an MLflow model), ``valuecore.aggregation``
(prediction logs larger than memory, reduced with DuckDB or Spark), ``valuecore.wording`` (numbers and
sentences for people: the one formatting module of the CLI, the dashboard and
the report), ``valuecore.chartspecs`` (charts as plain Vega-Lite dicts, one palette, drawn by the app
and the report alike), ``valuecore.report`` (the self-contained HTML report) and
``valuecore.cli`` (the command line). Modules whose name starts with ``_`` are private; what moved in
release 0.2 is listed in ``CHANGELOG.md``.

Dependencies and start-up
-------------------------
numpy does the arithmetic. pandas is a required dependency, mostly not of the
arithmetic: it encodes the labels when a :class:`Predictions` is built with
``y_true`` (or ``y_pred`` given as labels), reads run files (with pyarrow for
Parquet), and holds every tidy-frame result (``to_frame``,
:func:`comparison_table`, ``valuecore.monitoring``); its hashing also speeds
up :func:`presort` on runs of 32768 items or more whose confidences repeat
(the order is the same without it). scipy fits and applies the recalibrations
of ``valuecore.calibration`` (scikit-learn the isotonic one) and gives its
quantiles and distributions to ``valuecore.uncertainty`` (t),
:func:`verdict` (normal), the monitoring bands (normal, Kolmogorov-Smirnov)
and the certified risk of ``valuecore.constraints`` (beta); jsonschema checks
``valuecore.policy_json``; vl-convert-python draws the charts of
``valuecore.report``; DuckDB or PySpark, optional installs
(``requirements-spark.txt``), run ``valuecore.aggregation``. Each is
imported where it is used, and the names of this package load on first use,
so neither ``import valuecore`` nor ``python -m valuecore --help`` loads any
of them, not even numpy: ``--help`` loads the standard library and the
package's numpy-free modules, a command the rest when it runs (timed by
``benchmarks/bench_import.py``, checked by ``tests/core/test_public_api.py``).

Examples
--------
>>> import valuecore as vc
>>> p = vc.Predictions.from_proba([[0.95, 0.05], [0.8, 0.2], [0.6, 0.4]], y_true=[0, 0, 1])
>>> use_case = vc.UseCase(v_correct=1, v_abstain=0, v_wrong=-4)
>>> policy = vc.fit_policy("threshold", vc.presort(p), use_case)
>>> policy.threshold, vc.evaluate(policy, p, use_case).value_total
(0.8, 2.0)
"""

from __future__ import annotations

import importlib

__version__ = "0.2.0"

# Each public top-level name and the private module that defines it. Names are
# loaded on first use (PEP 562), so that ``import valuecore`` and
# ``python -m valuecore --help`` pay for no numpy, pandas or scipy.
_TOP_LEVEL = {
    "Predictions": "_model.predictions",
    "UseCase": "_model.values",
    "ValueMatrix": "_model.values",
    "load_runs": "_io.runfiles",
    "presort": "_engine.sorting",
    "Policy": "_engine.policy",
    "fit_policy": "_engine.fitting",
    "evaluate": "_engine.evaluate",
    "estimate": "_engine.evaluate",
    "PolicyResult": "_engine.evaluate",
    "item_values": "_engine.evaluate",
    "threshold_curve": "_engine.curves",
    "voc_curve": "_engine.voc",
    "voc_frame": "_engine.voc",
    "dominance": "_engine.voc",
    "Dominance": "_engine.voc",
    "comparison_table": "_engine.table",
    "ComparisonTable": "_engine.table",
    "DEFAULT_KS": "_engine.table",
    "Pipeline": "_pipeline.pipeline",
    "apply_policy_document": "_pipeline.pipeline",
    "verdict": "_decide.verdict",
    "recommend": "_decide.recommend",
    "recommended_document": "_decide.recommend",
    "recommended_rules": "_decide.recommend",
    "RECOMMENDED_RULE": "_decide.recommend",
}

_SUBMODULES = (
    "aggregation",
    "calibration",
    "chartspecs",
    "cli",
    "constraints",
    "curves",
    "monitoring",
    "policy_json",
    "recommendation",
    "report",
    "runs",
    "serving",
    "uncertainty",
    "wording",
)

__all__ = [*_TOP_LEVEL, *_SUBMODULES]


def __getattr__(name: str):
    if name in _TOP_LEVEL:
        value = getattr(importlib.import_module(f"{__name__}.{_TOP_LEVEL[name]}"), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
