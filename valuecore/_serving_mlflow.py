"""MLflow both ways (``valuecore.serving``): a pyfunc model that carries the policy, and runs as a data source.

Imported only when used: ``valuecore.serving.save_mlflow_model``, a ``mlflow:`` run source of the
command line, ``report --log-mlflow``. MLflow itself is an optional install (``requirements-mlflow.txt``).
"""

from __future__ import annotations

import atexit
import json
import os
import pickle
import shutil
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["MLFLOW_PREFIX", "is_mlflow_source", "list_mlflow_runs", "log_report_to_mlflow", "mlflow_runs_folder",
           "save_mlflow_model"]

MLFLOW_PREFIX = "mlflow:"
RUN_FILE_SUFFIXES = (".csv", ".parquet", ".json")
CLASSIFIER_ARTIFACT = "classifier"
POLICY_ARTIFACT = "policy"
OUTPUT_COLUMNS = ("action", "confidence", "predicted_class")


def _mlflow():
    try:
        import mlflow
    except ImportError:
        raise ValueError(
            "MLflow is not installed: python -m pip install -r requirements-mlflow.txt"
        ) from None
    return mlflow


# ------------------------------------------------------------------ the pyfunc model
def _python_model_class():
    mlflow = _mlflow()

    class PolicyModel(mlflow.pyfunc.PythonModel):
        """A fitted classifier and its valuecore policy: ``predict`` gives action, confidence, predicted_class.

        ``feature_names``: the feature columns in the order the classifier reads them (None: by position)."""

        def __init__(self, feature_names=None):
            self.feature_names = None if feature_names is None else [str(name) for name in feature_names]

        def load_context(self, context):
            with open(context.artifacts[CLASSIFIER_ARTIFACT], "rb") as handle:
                self.classifier = pickle.load(handle)  # noqa: S301 (the model's own artifact)

        def predict(self, context, model_input, params=None):
            return policy_frame(self.classifier, model_input, getattr(self, "feature_names", None))

    return PolicyModel


def policy_frame(classifier, features, feature_names=None):
    """The pyfunc output for a frame of features: action, confidence and predicted_class per row.

    A DataFrame's columns are matched by name to ``feature_names`` (or the estimator's own
    ``feature_names_in_``), in any order; a frame that lacks one, or has one more, is refused.
    Without names, columns are taken by position."""
    import pandas as pd

    X = features
    estimator = classifier._served()[0]
    known = getattr(estimator, "feature_names_in_", None)
    names = [str(n) for n in (known if known is not None else feature_names or [])]
    if isinstance(features, pd.DataFrame) and names:
        columns = [str(c) for c in features.columns]
        missing = [n for n in names if n not in columns]
        extra = [c for c in columns if c not in names]
        if missing or extra or len(set(columns)) != len(columns):
            raise ValueError(f"the model reads the feature columns {names[:20]}; the frame "
                             + (f"lacks {missing[:20]}" if missing else "")
                             + ("; it " if missing and extra else "") + (f"has {extra[:20]} too" if extra else "")
                             + ("names a column twice" if not (missing or extra) else ""))
        X = features.set_axis(columns, axis=1)[names]  # by name, in the order the estimator was fitted in
    if isinstance(X, pd.DataFrame) and known is None:
        X = X.to_numpy()  # fitted on an array: give it an array, without a feature-name warning
    actions = classifier.predict(X)
    decisions = classifier.decisions(X)
    classes = np.asarray(classifier.classes_)
    index = getattr(features, "index", None)
    return pd.DataFrame(
        {"action": actions, "confidence": decisions.confidence, "predicted_class": classes[decisions.predicted]},
        index=index,
    )


def save_mlflow_model(path, estimator, policy, model=None, *, abstain_label=-1, feature_names=None, **kwargs):
    """Write an MLflow pyfunc model at ``path`` that serves ``estimator`` under the stored ``policy``.

    Parameters
    ----------
    path : str or os.PathLike
        A new folder (MLflow refuses an existing one).
    estimator : fitted classifier with ``predict_proba`` and ``classes_``, or a ``RejectOptionClassifier``
    policy : path, dict or PolicyDocument (ignored when ``estimator`` is a ``RejectOptionClassifier``)
    model : str, optional
        Which model of the document (default: its only one, or its recommendation).
    abstain_label :
        The ``action`` of an item handed to a person (never a class, as a value or as text).
    feature_names : list of str, optional
        The feature columns, in the order the estimator reads them, for an estimator fitted on an
        array: the served model then matches a DataFrame's columns by name. An estimator fitted on a
        DataFrame knows them (``feature_names_in_``); so does a DataFrame ``input_example``.
        Without names, a frame's columns are taken by position.
    **kwargs
        Passed to ``mlflow.pyfunc.save_model`` (e.g. ``signature``, ``input_example``).

    ``mlflow.pyfunc.load_model(path).predict(frame)`` returns a DataFrame with the columns
    ``action`` (the class label, or ``abstain_label``), ``confidence`` (recalibrated) and
    ``predicted_class``, the actions of ``RejectOptionClassifier.predict``. The policy JSON is
    stored beside the model as the artifact ``policy``.
    """
    mlflow = _mlflow()
    from ._serving_sklearn import RejectOptionClassifier

    if isinstance(estimator, RejectOptionClassifier):
        classifier = estimator
    else:
        classifier = RejectOptionClassifier(estimator, policy, model, abstain_label)
    fitted, served = classifier._served()  # refuses here, not at load time, a policy that cannot be read
    if served.model is None:  # saving a model only to hand every item over is a mistake worth a sentence
        raise ValueError(f"the policy document recommends no model, so there is nothing to save: {served.reason} "
                         "Pass model=... to save one of its models anyway.")
    classifier._check_served(fitted, served)  # nor one for other classes, or an abstain label that is a class
    if feature_names is None and getattr(fitted, "feature_names_in_", None) is None:
        example = kwargs.get("input_example")
        feature_names = list(example.columns) if hasattr(example, "columns") else None
    document = getattr(classifier, "document_", None)
    staging = Path(tempfile.mkdtemp(prefix="valuecore-mlflow-"))
    try:
        with open(staging / "classifier.pkl", "wb") as handle:
            pickle.dump(classifier, handle)
        policy_text = _policy_text(classifier, served, document)
        (staging / "policy.json").write_text(policy_text, encoding="utf-8")
        requirements = kwargs.pop("pip_requirements", None) or _requirements()
        mlflow.pyfunc.save_model(
            os.fspath(path),
            python_model=_python_model_class()(feature_names),
            artifacts={CLASSIFIER_ARTIFACT: str(staging / "classifier.pkl"),
                       POLICY_ARTIFACT: str(staging / "policy.json")},
            pip_requirements=requirements,
            **kwargs,
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _policy_text(classifier, served, document) -> str:
    if document is not None:
        return document.to_json()
    from ._policy_json import PolicyDocument

    policy = classifier.policy
    if isinstance(policy, PolicyDocument):
        return policy.to_json()
    if isinstance(policy, (str, os.PathLike)):
        return Path(policy).read_text(encoding="utf-8")
    if isinstance(policy, dict):
        return json.dumps(policy, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    from ._policy_json import values_to_dict

    document = {"schema_version": 2, "use_case": values_to_dict(served.values),
                "models": [{"model": served.model, "classes": list(served.classes), "policy": served.policy.to_dict()}]}
    return json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def _requirements() -> list[str]:
    """Pinned to what is installed here, so MLflow need not trace the imports (slow)."""
    from importlib.metadata import version

    return [f"{name}=={version(name)}" for name in ("numpy", "pandas", "scikit-learn", "mlflow-skinny")]


# ------------------------------------------------------------------ runs as a data source
def is_mlflow_source(text: str) -> bool:
    return isinstance(text, str) and text.startswith(MLFLOW_PREFIX)


def _client(tracking_uri: str | None = None):
    """A client of ``tracking_uri`` (default: MLflow's own, from ``MLFLOW_TRACKING_URI``); the process-wide
    setting is never changed."""
    mlflow = _mlflow()
    return mlflow.tracking.MlflowClient(tracking_uri=tracking_uri)


def list_mlflow_runs(tracking_uri: str | None = None, max_runs: int = 1000) -> list[tuple[str, str, str]]:
    """``(experiment name, run id, run name)`` of the runs at ``tracking_uri``, newest first per experiment."""
    client = _client(tracking_uri)
    out = []
    for experiment in client.search_experiments():
        for run in client.search_runs([experiment.experiment_id], max_results=max_runs):
            out.append((experiment.name, run.info.run_id, run.info.run_name or ""))
    return out


def resolve_run_id(source: str, tracking_uri: str | None = None) -> str:
    """The run id of ``mlflow:<run_id>`` or ``mlflow:<experiment>/<run name or id>``.

    ValueError naming what is missing (run, experiment) at the tracking URI."""
    client = _client(tracking_uri)
    reference = source[len(MLFLOW_PREFIX):].strip()
    if not reference:
        raise ValueError(f"{source!r}: give mlflow:<run_id> or mlflow:<experiment>/<run>")
    if "/" not in reference:
        try:
            return client.get_run(reference).info.run_id
        except Exception as exc:  # MlflowException, or a malformed id
            raise ValueError(f"{source!r}: no MLflow run with id {reference!r} at the tracking URI "
                             f"{client.tracking_uri!r} ({type(exc).__name__})") from None
    experiment_name, run = reference.split("/", 1)
    experiment = client.get_experiment_by_name(experiment_name)
    if experiment is None:
        raise ValueError(f"{source!r}: no MLflow experiment named {experiment_name!r}")
    runs = client.search_runs([experiment.experiment_id], max_results=1000)
    matches = [r for r in runs if run in (r.info.run_id, r.info.run_name)]
    if len(matches) != 1:
        names = sorted({r.info.run_name or r.info.run_id for r in runs})[:10]
        how = "no run" if not matches else f"{len(matches)} runs"
        raise ValueError(f"{source!r}: {how} named {run!r} in experiment {experiment_name!r} (runs: {names})")
    return matches[0].info.run_id


def _artifacts(client, run_id: str, folder: str = ""):
    for item in client.list_artifacts(run_id, folder or None):
        if item.is_dir:
            if not item.path.startswith("valuecore"):  # what --log-mlflow wrote back is no run file
                yield from _artifacts(client, run_id, item.path)
        elif item.path.lower().endswith(RUN_FILE_SUFFIXES):
            yield item


def mlflow_runs_folder(source: str, tracking_uri: str | None = None) -> str:
    """Download the prediction tables of an MLflow run into a temporary folder of run files; its path.

    Tables logged with ``mlflow.log_table`` (JSON with ``columns`` and ``data``) become CSV files;
    CSV and Parquet artifacts are copied. Each file is one model, named by its file name, in the
    run format of ``docs/run-format.md``. The folder is removed when the process ends.
    """
    from ._limits import LimitError, limit, refusal

    client = _client(tracking_uri)
    run_id = resolve_run_id(source, tracking_uri)
    items = list(_artifacts(client, run_id))
    if not items:
        raise ValueError(f"{source!r}: the MLflow run {run_id} has no prediction table "
                         f"(a log_table JSON, CSV or Parquet artifact)")
    total = sum(item.file_size or 0 for item in items)
    if total > limit("file_mb") * 1024 * 1024:
        raise LimitError(refusal("file_mb", f"{source!r}: the run's tables", f"{total / 2**20:,.1f} MB"))
    folder = Path(tempfile.mkdtemp(prefix="valuecore-mlflow-run-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    for item in items:
        local = Path(client.download_artifacts(run_id, item.path, str(folder / "download")))
        name = Path(item.path).name
        if name.lower().endswith(".json"):
            _table_to_csv(local, folder / (Path(name).stem + ".csv"), source)
        else:
            shutil.copyfile(local, folder / name)
    shutil.rmtree(folder / "download", ignore_errors=True)
    return str(folder)


def _table_to_csv(path: Path, out: Path, source: str) -> None:
    import pandas as pd

    from ._limits import load_json_limited

    data = load_json_limited(path.read_bytes(), f"{source}: {path.name}")
    if not (isinstance(data, dict) and isinstance(data.get("columns"), list) and isinstance(data.get("data"), list)):
        raise ValueError(f"{source!r}: {path.name} is not a table logged with mlflow.log_table "
                         "(a JSON object with 'columns' and 'data')")
    pd.DataFrame(data["data"], columns=[str(c) for c in data["columns"]]).to_csv(out, index=False)


def log_report_to_mlflow(source: str, policy_json: str, html: str | None) -> str:
    """Log the policy JSON (and the HTML report) to the run ``source`` names; the run id."""
    client = _client()
    run_id = resolve_run_id(source)
    client.log_text(run_id, policy_json, "valuecore/policy.json")
    if html is not None:
        client.log_text(run_id, html, "valuecore/report.html")
    return run_id


# ------------------------------------------------------------------ the command line's two hooks
def local_run_sources(paths) -> list[str]:
    """``paths`` with each ``mlflow:`` source replaced by a local folder of its run files."""
    return [mlflow_runs_folder(path) if is_mlflow_source(str(path)) else path for path in paths]


def log_report_to_runs(paths, document, html: str, say) -> None:
    """``report --log-mlflow``: the policy JSON and the HTML report, logged to each MLflow run among ``paths``."""
    sources = [path for path in paths if is_mlflow_source(str(path))]
    if not sources:
        raise ValueError("--log-mlflow logs to the MLflow run the runs came from: name it as mlflow:<run_id> "
                         "or mlflow:<experiment>/<run>")
    for source in sources:
        run_id = log_report_to_mlflow(source, document.to_json(), html)
        say(f"logged valuecore/policy.json and valuecore/report.html to the MLflow run {run_id}")
