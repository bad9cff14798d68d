"""Serve a policy: apply an exported policy JSON to new model outputs.

:func:`load_policy` reads a policy document (a path, parsed JSON or a
``PolicyDocument``) and returns a :class:`ServingPolicy` for one of its
models, whose ``decide`` turns model outputs (a probability matrix, or the
top label and its confidence) into actions: the class acted on, ``"abstain"``,
for a ``two_tier`` policy ``"confirm"`` (a person confirms the predicted
class), for a ``shortlist`` policy ``"shortlist"`` (a person picks from the
list that :meth:`ServingPolicy.shortlists` gives). It applies the stored recalibration, thresholds, expected-value rule
and tie rules with the very code that ``python -m valuecore apply`` evaluates
(``Policy.decide``), so the two agree on every item. ``decisions`` gives the
action codes with the calibrated confidence and predicted class, a
:class:`Decisions`; ``ABSTAIN``, ``CONFIRM`` and ``SHORTLIST`` are the default labels.

The decision path imports numpy and the standard library only: no pandas,
scipy, scikit-learn or jsonschema. The document is checked with the few rules
a decision needs (schema version, one entry per model, the rule's kind and
parameters, thresholds in [0, 1], calibration parameters, classes); a full
JSON Schema check is ``PolicyDocument.from_json``.

Two integrations load their library on first use of their name:
:class:`RejectOptionClassifier` wraps a fitted scikit-learn classifier (its
``predict`` returns the action, an abstain label when the policy abstains)
and tunes its policy on validation data with valuecore
(``fit(X_val, y_val, use_case=...)``); :func:`save_mlflow_model` writes an
MLflow pyfunc model that carries the policy; see ``docs/serving.md``. MLflow runs are
a data source too: :func:`list_mlflow_runs` lists the runs of a tracking server and
:func:`read_mlflow_run` reads the prediction tables of one (``mlflow:<run_id>`` or
``mlflow:<experiment>/<run>``) as run files, under the rules of a folder, leaving nothing on disk;
:func:`mlflow_run_artifacts`, :func:`download_mlflow_tables` and :func:`load_mlflow_tables` are its
three steps (list, download with a content digest, load), for a server that keeps runs and looks for
changes; :func:`mlflow_runs_folder` downloads them into a folder of run files.

Examples
--------
>>> doc = {"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
...        "models": [{"model": "m", "classes": ["no", "yes"],
...                    "policy": {"kind": "threshold", "threshold": 0.8,
...                               "calibration": {"method": "none"}}}]}
>>> policy = load_policy(doc)
>>> policy.decide([[0.9, 0.1], [0.3, 0.7], [0.15, 0.85]]).tolist()
['no', 'abstain', 'yes']
>>> policy.decide(y_pred=["yes"], confidence=[0.8]).tolist()
['yes']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ._serve.policy import ABSTAIN, CONFIRM, SHORTLIST, Decisions, ServingPolicy, load_policy

if TYPE_CHECKING:  # pragma: no cover
    from ._serve.mlflow_bridge import (
        download_mlflow_tables,
        list_mlflow_runs,
        load_mlflow_tables,
        mlflow_run_artifacts,
        mlflow_runs_folder,
        read_mlflow_run,
        save_mlflow_model,
    )
    from ._serve.estimator import RejectOptionClassifier

__all__ = [
    "ABSTAIN",
    "CONFIRM",
    "Decisions",
    "SHORTLIST",
    "RejectOptionClassifier",
    "ServingPolicy",
    "download_mlflow_tables",
    "list_mlflow_runs",
    "load_mlflow_tables",
    "load_policy",
    "mlflow_run_artifacts",
    "mlflow_runs_folder",
    "read_mlflow_run",
    "save_mlflow_model",
]

# Names whose library (scikit-learn, MLflow) is imported only when they are used.
_LAZY = {
    "RejectOptionClassifier": "_serve.estimator",
    "save_mlflow_model": "_serve.mlflow_bridge",
    "list_mlflow_runs": "_serve.mlflow_bridge",
    "mlflow_runs_folder": "_serve.mlflow_bridge",
    "read_mlflow_run": "_serve.mlflow_bridge",
    "mlflow_run_artifacts": "_serve.mlflow_bridge",
    "download_mlflow_tables": "_serve.mlflow_bridge",
    "load_mlflow_tables": "_serve.mlflow_bridge",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__package__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
