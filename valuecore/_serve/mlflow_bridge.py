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
from dataclasses import dataclass
from pathlib import Path


__all__ = ["MLFLOW_PREFIX", "MlflowArtifacts", "MlflowTables", "download_mlflow_tables", "is_mlflow_source",
           "list_mlflow_runs", "load_mlflow_tables", "load_run_sources", "log_report_to_mlflow", "mlflow_run_artifacts",
           "mlflow_runs_folder", "read_mlflow_run", "save_mlflow_model"]

MLFLOW_PREFIX = "mlflow:"
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
    estimator, served = classifier._served()
    segments = None
    if served.segment_policy is not None:  # the segment read from the whole frame, before the features are picked
        features, segments = classifier._segments_of(features, estimator, served)
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
    elif isinstance(features, pd.DataFrame):
        X = features
    if isinstance(X, pd.DataFrame) and known is None:
        X = X.to_numpy()  # fitted on an array: give it an array, without a feature-name warning
    classes, decisions = classifier._codes(X, segments=segments)
    actions = classifier._predicted(classes, decisions.action)
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
    from .estimator import RejectOptionClassifier

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
    from .._pipeline.policy_json import PolicyDocument

    policy = classifier.policy
    if isinstance(policy, PolicyDocument):
        return policy.to_json()
    if isinstance(policy, (str, os.PathLike)):
        return Path(policy).read_text(encoding="utf-8")
    if isinstance(policy, dict):
        return json.dumps(policy, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    from .._pipeline.policy_json import values_to_dict

    document = {"schema_version": 2, "use_case": values_to_dict(served.values),
                "models": [{"model": served.model, "classes": list(served.classes), "policy": served.policy.to_dict()}]}
    return json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def _requirements() -> list[str]:
    """Pinned to what is installed here, so MLflow need not trace the imports (slow)."""
    from importlib.metadata import version

    return [f"{name}=={version(name)}" for name in ("numpy", "pandas", "scikit-learn", "mlflow-skinny")]


# ------------------------------------------------------------------ runs as a data source
# What report --log-mlflow logs back to a run: skipped when the run is read, every other artifact is looked at.
WRITTEN_BACK = ("valuecore/policy.json", "valuecore/report.html")
TABLE_SUFFIXES = (".csv", ".parquet", ".pq", ".json")
# The run format's own prediction columns (and the misspellings the loader names): a table with none of them
# is an ordinary artifact (features, metrics), ignored with a note, not a run file with errors.
PREDICTION_COLUMNS = ("y_pred", "confidence")
PREDICTION_PREFIXES = ("proba_", "logit_", "prob_", "probability_")
LOGGED_TABLES_TAG = "mlflow.loggedArtifacts"  # where mlflow.log_table lists the tables it wrote
MAX_SLASHES = 16  # readings of mlflow:<experiment>/<run> tried, one server request each


def _named(source: str) -> str:
    """A source as messages quote it: cut to the length of a name in a message (a hostile one can be long)."""
    from .._io.limits import clip_text

    return repr(clip_text(source))


def is_mlflow_source(text: str) -> bool:
    return isinstance(text, str) and text.startswith(MLFLOW_PREFIX)


def _client(tracking_uri: str | None = None):
    """A client of ``tracking_uri`` (default: MLflow's own, from ``MLFLOW_TRACKING_URI``); the process-wide
    setting is never changed. ValueError saying what to set when MLflow refuses the URI."""
    mlflow = _mlflow()
    try:
        return mlflow.tracking.MlflowClient(tracking_uri=tracking_uri)
    except Exception as exc:  # MlflowException and its kin: a store MLflow refuses or cannot use
        raise ValueError(_server_failure(exc, tracking_uri)) from None


def _server_failure(exc: Exception, tracking_uri: str | None, what: str = "") -> str:
    """A sentence for a failure of MLflow's client: what to set or check, never a traceback."""
    from .._io.limits import clip_text

    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI", "").strip()
    text = " ".join(str(exc).split())
    prefix = f"{what}: " if what else ""
    if not uri:
        return (f"{prefix}MLFLOW_TRACKING_URI is not set, and MLflow's default store cannot be read here "
                f"({clip_text(text, 120)}); set MLFLOW_TRACKING_URI to the tracking server that holds the runs "
                "(e.g. http://mlflow.example.com:5000), a database, or a folder store with "
                "MLFLOW_ALLOW_FILE_STORE=true")
    if "MLFLOW_ALLOW_FILE_STORE" in text:
        return (f"{prefix}the MLflow tracking URI {uri!r} is a folder (MLflow's file store), which MLflow 3 reads "
                "only when MLFLOW_ALLOW_FILE_STORE=true is set: set it, or use a tracking server or a database")
    if "Unsupported" in type(exc).__name__ or "unsupported URI" in text:
        return (f"{prefix}MLflow cannot use the tracking URI {uri!r} here ({clip_text(text, 120)}); a database "
                "URI such as sqlite:///mlflow.db needs the full mlflow package, mlflow-skinny reads a tracking "
                "server or a folder store")
    if "Max retries exceeded" in text or "Failed to establish" in text or "ConnectionError" in text:
        return f"{prefix}the MLflow tracking server {uri!r} cannot be reached ({clip_text(text, 200)})"
    return f"{prefix}MLflow could not read the tracking URI {uri!r} ({type(exc).__name__}: {clip_text(text, 200)})"


def _call(what: str, tracking_uri: str | None, function, *args, **kwargs):
    """``function(*args, **kwargs)`` of MLflow's client, its failures said as a ValueError naming ``what``."""
    try:
        return function(*args, **kwargs)
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 (a server's or a store's failure: the user's to fix, in words)
        raise ValueError(_server_failure(exc, tracking_uri, what)) from None


def list_mlflow_runs(tracking_uri: str | None = None, max_runs: int = 1000) -> list[tuple[str, str, str]]:
    """``(experiment name, run id, run name)`` of the runs at ``tracking_uri``, newest first per experiment."""
    client = _client(tracking_uri)
    out = []
    for experiment in _call("listing the experiments", tracking_uri, client.search_experiments):
        for run in _call("listing the runs", tracking_uri, client.search_runs, [experiment.experiment_id],
                         max_results=max_runs):
            out.append((experiment.name, run.info.run_id, run.info.run_name or ""))
    return out


def _is_missing(exc: Exception) -> bool:
    return getattr(exc, "error_code", "") in ("RESOURCE_DOES_NOT_EXIST", "INVALID_PARAMETER_VALUE") or (
        "not found" in str(exc).lower() or "does not exist" in str(exc).lower())


def resolve_run_id(source: str, tracking_uri: str | None = None) -> str:
    """The run id of ``mlflow:<run_id>`` or ``mlflow:<experiment>/<run name or id>``.

    An experiment's name may hold ``/`` (``mlflow:team/cancer/nightly``): every split of the
    reference into an existing experiment and one of its runs is tried, and more than one match is
    refused. ValueError naming what is missing (run, experiment) at the tracking URI.
    """
    client = _client(tracking_uri)
    reference = source[len(MLFLOW_PREFIX):].strip()
    if not reference:
        raise ValueError(f"{_named(source)}: give mlflow:<run_id> or mlflow:<experiment>/<run>")
    if "/" not in reference:
        try:
            return client.get_run(reference).info.run_id
        except Exception as exc:  # MlflowException, or a malformed id
            if not _is_missing(exc):
                raise ValueError(_server_failure(exc, tracking_uri, _named(source))) from None
            raise ValueError(f"{_named(source)}: no MLflow run with id {_named(reference)} at the tracking URI "
                             f"{client.tracking_uri!r} ({type(exc).__name__})") from None
    cuts = [i for i, c in enumerate(reference) if c == "/" and 0 < i < len(reference) - 1]
    if len(cuts) > MAX_SLASHES:  # each reading asks the server once
        raise ValueError(f"{_named(source)}: more than {MAX_SLASHES} '/' in an experiment and run name; name the "
                         "run by its id, mlflow:<run_id>")
    found, experiments = [], []
    for cut in cuts:
        experiment_name, run = reference[:cut], reference[cut + 1:]
        experiment = _call(_named(source), tracking_uri, client.get_experiment_by_name, experiment_name)
        if experiment is None:
            continue
        runs = _call(_named(source), tracking_uri, client.search_runs, [experiment.experiment_id], max_results=1000)
        experiments.append((experiment_name, run, runs))
        found += [(experiment_name, r) for r in runs if run in (r.info.run_id, r.info.run_name)]
    if len(found) == 1:
        return found[0][1].info.run_id
    if not experiments:
        raise ValueError(f"{_named(source)}: no MLflow experiment named {_named(reference.rsplit('/', 1)[0])}")
    if not found:
        experiment_name, run, runs = experiments[-1]
        names = sorted({(r.info.run_name or r.info.run_id)[:60] for r in runs})[:10]
        raise ValueError(f"{_named(source)}: no run named {_named(run)} in experiment {_named(experiment_name)} "
                         f"(runs: {names})")
    matches = ", ".join(f"{name!r} run {r.info.run_id}" for name, r in found[:10])
    raise ValueError(f"{_named(source)}: {len(found)} runs match ({matches}); name the run by its id, mlflow:<run_id>")


def _run_files(client, run_id: str, tracking_uri, folder: str = ""):
    """Every artifact file of the run, depth first (FileInfo: path, is_dir, file_size)."""
    for item in _call(f"listing the artifacts of the MLflow run {run_id}", tracking_uri, client.list_artifacts,
                      run_id, folder or None):
        if item.is_dir:
            yield from _run_files(client, run_id, tracking_uri, item.path)
        else:
            yield item


@dataclass(frozen=True)
class MlflowArtifacts:
    """What an MLflow run holds, listed without downloading anything (:func:`mlflow_run_artifacts`).

    Attributes
    ----------
    run_id : str
    tables : tuple of (artifact path, size in bytes or None)
        The artifacts that may be prediction tables (CSV, Parquet, JSON), in artifact path order.
    ignored : tuple of (artifact path, why)
        The others, and the JSON documents too large to be anything but a logged table.
    logged_tables : frozenset of str
        The JSON artifacts ``mlflow.log_table`` wrote (the run's tag): read with the run files' limits.
    deleted : bool
        The run is in MLflow's trash.
    """

    run_id: str
    tables: tuple
    ignored: tuple
    logged_tables: frozenset
    deleted: bool

    @property
    def listing(self) -> tuple:
        """Every artifact's path and size: a change of it is a change of the run."""
        return (self.tables, tuple(path for path, _ in self.ignored), tuple(sorted(self.logged_tables)))


def mlflow_run_artifacts(source: str, tracking_uri: str | None = None) -> MlflowArtifacts:
    """List the artifacts of the run ``source`` names (``mlflow:<run_id>`` or ``mlflow:<experiment>/<run>``)."""
    from .._io.limits import limit

    client = _client(tracking_uri)
    run_id = resolve_run_id(source, tracking_uri)
    run = _call(_named(source), tracking_uri, client.get_run, run_id)
    try:
        logged = {entry["path"] for entry in json.loads(run.data.tags.get(LOGGED_TABLES_TAG, "[]"))
                  if isinstance(entry, dict) and entry.get("type") == "table" and isinstance(entry.get("path"), str)}
    except (ValueError, TypeError, RecursionError):  # a tag MLflow did not write: no table counts as logged
        logged = set()
    tables, ignored = [], []
    for item in sorted(_run_files(client, run_id, tracking_uri), key=lambda item: item.path):
        path, size = item.path, item.file_size
        if path in WRITTEN_BACK:
            continue
        if not path.lower().endswith(TABLE_SUFFIXES):
            ignored.append((path, "not a CSV, Parquet or JSON table"))
        elif (path.lower().endswith(".json") and path not in logged and size is not None
              and size > limit("json_mb") * 1_000_000):
            ignored.append((path, "a JSON document larger than the limit of JSON documents, not logged with "
                                  "mlflow.log_table"))
        else:
            tables.append((path, size))
    return MlflowArtifacts(run_id, tuple(tables), tuple(ignored), frozenset(logged),
                           getattr(run.info, "lifecycle_stage", "") == "deleted")


@dataclass(frozen=True)
class MlflowTables:
    """The prediction tables of an MLflow run, downloaded as run files (:func:`download_mlflow_tables`).

    Attributes
    ----------
    run_id : str
    files : tuple of (local file, artifact path)
        One run file per table, in artifact path order; a ``log_table`` JSON becomes a CSV file.
        Each is one model, named by its file name, as in a folder.
    notes : tuple of LoadProblem
        The artifacts that are not prediction tables (a warning naming them), a deleted run.
    digest : str
        SHA-256 over the tables' artifact paths and contents: a change of it is a change of the run.
    """

    run_id: str
    files: tuple
    notes: tuple
    digest: str


def download_mlflow_tables(artifacts: MlflowArtifacts, folder, name: str,
                           tracking_uri: str | None = None) -> MlflowTables:
    """Download the prediction tables of ``artifacts`` into ``folder`` (the caller's, removed by the caller).

    ``name`` names the run in messages (``<name>/<artifact path>``). As in a folder, a table that cannot
    be read (above the run files' size limit, checked before it is downloaded when the store gives its
    size; a broken ``log_table`` JSON) is an error naming it, and the others are read; an artifact that
    turns out not to be a prediction table (a configuration JSON, a table of features) is ignored with a
    note. The digest covers every table's artifact path and downloaded bytes.
    """
    import hashlib

    from .._io.runfiles import LoadProblem
    from .._io.limits import clip_text, limit, refusal

    client = _client(tracking_uri)
    folder = Path(folder)
    files, ignored, errors, digest = [], list(artifacts.ignored), [], hashlib.sha256()
    for index, (path, size) in enumerate(artifacts.tables):
        shown = f"{name}/{path}"
        digest.update(path.encode("utf-8") + b"\0")
        if size is not None and size > limit("file_mb") * 2**20:
            digest.update(str(size).encode())
            errors.append(LoadProblem(shown, refusal("file_mb", "the table is too large", f"{size / 2**20:,.1f} MB")))
            continue
        place = folder / str(index)
        place.mkdir(parents=True)
        try:
            local = Path(client.download_artifacts(artifacts.run_id, path, str(place)))
        except Exception as exc:  # noqa: BLE001 (the store's failure for this artifact: an error naming it)
            digest.update(b"unreadable")
            errors.append(LoadProblem(shown, "cannot be downloaded from the tracking server "
                                             f"({type(exc).__name__}: {clip_text(' '.join(str(exc).split()), 200)})"))
            continue
        _digest_file(digest, local)
        if local.stat().st_size > limit("file_mb") * 2**20:
            errors.append(LoadProblem(shown, refusal("file_mb", "the table is too large",
                                                     f"{local.stat().st_size / 2**20:,.1f} MB")))
            continue
        why = None
        if path.lower().endswith(".json"):
            table = place / (Path(path).stem + ".csv")
            try:
                why = _log_table_to_csv(local, table, path in artifacts.logged_tables)
            except ValueError as exc:  # a broken log_table, or one above a limit: an error for this table
                errors.append(LoadProblem(shown, str(exc)))
                continue
            finally:
                local.unlink()
            local = table
        else:
            why = _not_a_prediction_table(local)
        if why is not None:
            ignored.append((path, why))
            continue
        files.append((str(local), path))
    notes = tuple(errors) + _notes(artifacts, ignored, name)
    return MlflowTables(artifacts.run_id, tuple(files), notes, digest.hexdigest())


def _digest_file(digest, path: Path) -> None:
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    digest.update(b"\0")


def _notes(artifacts: MlflowArtifacts, ignored: list, name: str) -> tuple:
    from .._io.runfiles import LoadProblem

    notes = []
    if artifacts.deleted:
        notes.append(LoadProblem(name, "this MLflow run is deleted (in MLflow's trash); its tables were read",
                                 severity="warning"))
    if ignored:
        shown = "; ".join(f"{path} ({why})" for path, why in sorted(ignored)[:10])
        more = f"; and {len(ignored) - 10} more" if len(ignored) > 10 else ""
        notes.append(LoadProblem(name, f"{len(ignored)} artifact(s) of the run are not prediction tables and were "
                                       f"not read: {shown}{more}", severity="warning"))
    return tuple(notes)


def _not_a_prediction_table(path: Path) -> str | None:
    """Why a CSV or Parquet artifact is no prediction table (no prediction column in its header), or None."""
    if path.suffix.lower() in (".parquet", ".pq"):
        try:
            import pyarrow.parquet as pq

            names = pq.read_schema(path).names
        except Exception:  # noqa: BLE001 (not readable as Parquet: the loader says why, naming the file)
            return None
    else:
        import csv

        with open(path, "rb") as handle:
            head = handle.read(1 << 20)
        if b"\n" not in head and len(head) == 1 << 20:
            return None  # a header this long is the loader's to refuse, in its words
        line = head.split(b"\n", 1)[0].decode("utf-8-sig", errors="replace")
        names = next(csv.reader([line]), [])
    if any(_is_prediction_column(str(name)) for name in names):
        return None
    return "no y_pred, confidence, proba_ or logit_ column"


def _is_prediction_column(name: str) -> bool:
    name = name.strip()
    return name in PREDICTION_COLUMNS or name.startswith(PREDICTION_PREFIXES)


def _log_table_to_csv(path: Path, out: Path, logged: bool) -> str | None:
    """A ``log_table`` JSON as a CSV run file at ``out``; or why it is not a prediction table.

    A table ``mlflow.log_table`` wrote has the run files' limits (its size is checked by the caller);
    any other JSON artifact is a document, read only within the JSON limits (``load_json_limited``).
    ValueError for a logged table that cannot be read.
    """
    import pandas as pd

    from .._io.limits import LimitError, limit, load_json_limited, refusal

    if logged:
        try:
            data = json.loads(path.read_bytes(), parse_constant=_no_constant)
        except RecursionError:
            raise ValueError("nested too deeply to be a table logged with mlflow.log_table") from None
        except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise ValueError(f"not a table logged with mlflow.log_table: {exc}") from None
    else:
        try:
            data = load_json_limited(path.read_bytes(), "the JSON")
        except LimitError:
            return "a JSON document above the limits of JSON documents, not logged with mlflow.log_table"
        except ValueError:
            return "not valid JSON"
    if not (isinstance(data, dict) and isinstance(data.get("columns"), list) and isinstance(data.get("data"), list)):
        return "a JSON document, not a table logged with mlflow.log_table"
    columns = [str(c) for c in data["columns"]]
    if not any(_is_prediction_column(c) for c in columns):
        return "a table with no y_pred, confidence, proba_ or logit_ column"
    if len(columns) > limit("columns"):
        raise LimitError(refusal("columns", "the table has too many columns", f"{len(columns):,}"))
    try:
        frame = pd.DataFrame(data["data"], columns=columns)
    except (ValueError, TypeError) as exc:  # rows of another width than the columns
        raise ValueError(f"its rows do not match its {len(columns)} columns ({exc})") from None
    frame.to_csv(out, index=False)
    return None


def _no_constant(text: str):
    raise ValueError(f"{text} is not a number a table can hold")


def load_mlflow_tables(tables, paths=(), names: dict | None = None):
    """Load the run files of one or more :class:`MlflowTables` (and any other run files or folders ``paths``)
    as one :func:`~valuecore.load_runs`, so one model name comes from one table; files named
    ``<name>/<artifact path>`` (``names``: run id -> name)."""
    from dataclasses import replace

    from .._io.runfiles import LoadReport, load_runs

    tables = [tables] if isinstance(tables, MlflowTables) else list(tables)
    names = names or {}
    shown = {local: f"{names.get(t.run_id, MLFLOW_PREFIX + t.run_id)}/{artifact}"
             for t in tables for local, artifact in t.files}
    report = load_runs([*shown, *paths]) if shown or paths else LoadReport(models={}, problems=())

    def named(text: str) -> str:
        for local, name in shown.items():
            text = text.replace(local, name)
        return text

    models = {m: replace(run, path=named(run.path)) for m, run in report.models.items()}
    problems = tuple(replace(p, file=named(p.file), message=named(p.message)) for p in report.problems)
    notes = tuple(note for t in tables for note in t.notes)
    from .._io.runfiles import LoadProblem

    notes += tuple(LoadProblem(names.get(t.run_id, MLFLOW_PREFIX + t.run_id),
                               "the MLflow run has no prediction table (a log_table JSON, CSV or Parquet "
                               "artifact with proba_, logit_, y_pred or confidence columns)")
                   for t in tables if not t.files and not any(n.severity == "error" for n in t.notes))
    return LoadReport(models=models, problems=notes + problems)


def load_run_sources(paths):
    """``load_runs(paths)`` where each ``mlflow:`` source is the run's prediction tables, named
    ``<source>/<artifact path>``; the downloaded copies are removed before this returns."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="valuecore-mlflow-"))
    try:
        tables, names, others = [], {}, []
        for number, path in enumerate(paths):
            if not is_mlflow_source(str(path)):
                others.append(path)
                continue
            artifacts = mlflow_run_artifacts(str(path))
            downloaded = download_mlflow_tables(artifacts, folder / str(number), str(path))
            tables.append(downloaded)
            names[downloaded.run_id] = str(path)
        return load_mlflow_tables(tables, others, names)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def read_mlflow_run(source: str, tracking_uri: str | None = None, *, name: str | None = None):
    """The prediction tables of an MLflow run as a :class:`~valuecore.runs.LoadReport`, its files named
    ``<name>/<artifact path>`` (default ``name``: ``source``). Nothing is left on disk.

    Tables logged with ``mlflow.log_table`` (JSON with ``columns`` and ``data``, read within the run
    files' limits), CSV and Parquet artifacts with prediction columns are read as run files
    (``docs/run-format.md``), each one model named by its file name; two tables giving one model name
    are refused as two files of a folder are. Other artifacts are ignored with a note naming them;
    ``valuecore/policy.json`` and ``valuecore/report.html`` (what ``report --log-mlflow`` logs) are skipped.
    """
    artifacts = mlflow_run_artifacts(source, tracking_uri)
    folder = tempfile.mkdtemp(prefix="valuecore-mlflow-")
    try:
        tables = download_mlflow_tables(artifacts, folder, name or source, tracking_uri)
        return load_mlflow_tables(tables, names={tables.run_id: name or source})
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def mlflow_runs_folder(source: str, tracking_uri: str | None = None) -> str:
    """Download the prediction tables of an MLflow run into a new temporary folder of run files; its path.

    The tables of :func:`read_mlflow_run`, each named by its file name (a ``log_table`` JSON as CSV):
    ValueError when two of them have one file name (they would be one model). The folder is the
    caller's to remove (it is removed at the latest when the process ends); :func:`read_mlflow_run`
    leaves nothing on disk.
    """
    artifacts = mlflow_run_artifacts(source, tracking_uri)
    folder = Path(tempfile.mkdtemp(prefix="valuecore-mlflow-run-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    tables = download_mlflow_tables(artifacts, folder / ".download", source, tracking_uri)
    taken: dict[str, str] = {}
    for local, artifact in tables.files:
        file_name = Path(local).name
        if file_name in taken:
            shutil.rmtree(folder, ignore_errors=True)
            raise ValueError(f"{source}/{artifact}: model name {Path(file_name).stem!r} is already taken by "
                             f"{source}/{taken[file_name]}; rename one of the two tables")
        taken[file_name] = artifact
        shutil.move(local, folder / file_name)
    shutil.rmtree(folder / ".download", ignore_errors=True)
    return str(folder)


def _writable_run(source: str) -> str:
    """The id of the run ``source`` names, refused (ValueError) when it is deleted."""
    client = _client()
    run_id = resolve_run_id(source)
    run = _call(_named(source), None, client.get_run, run_id)
    if getattr(run.info, "lifecycle_stage", "") == "deleted":
        raise ValueError(f"the MLflow run {run_id} is deleted (in MLflow's trash): restore it "
                         f"(mlflow runs restore --run-id {run_id}) or name another run")
    return run_id


def log_report_to_mlflow(source: str, policy_json: str, html: str | None, run_id: str | None = None
                         ) -> tuple[str, bool]:
    """Log the policy JSON (and the HTML report) to the run ``source`` names; (run id, whether an earlier
    policy was replaced). ValueError for a deleted run."""
    client = _client()
    run_id = run_id or _writable_run(source)
    earlier = {item.path for item in _call(_named(source), None, client.list_artifacts, run_id, "valuecore")}
    _call(_named(source), None, client.log_text, run_id, policy_json, "valuecore/policy.json")
    if html is not None:
        _call(_named(source), None, client.log_text, run_id, html, "valuecore/report.html")
    return run_id, bool(earlier & set(WRITTEN_BACK))


# ------------------------------------------------------------------ the command line's hook
def log_report_to_runs(paths, document, html: str, say) -> None:
    """``report --log-mlflow``: the policy JSON and the HTML report, logged to each MLflow run among ``paths``
    (every run checked before anything is logged)."""
    sources = [path for path in paths if is_mlflow_source(str(path))]
    if not sources:
        raise ValueError("--log-mlflow logs to the MLflow run the runs came from: name it as mlflow:<run_id> "
                         "or mlflow:<experiment>/<run>")
    runs: dict[str, str] = {}  # run id -> the first source naming it: a run named twice is logged to once
    for source in sources:
        runs.setdefault(_writable_run(source), source)
    for run_id, source in runs.items():
        run_id, replaced = log_report_to_mlflow(source, document.to_json(), html, run_id)
        what = " and ".join(WRITTEN_BACK if html is not None else WRITTEN_BACK[:1])
        say(f"logged {what} to the MLflow run {run_id}"
            + (f", replacing the {what} logged before (MLflow keeps no earlier version)" if replaced else ""))
