"""Loading, calibrating and presorting runs, once per file content.

Loading and presorting are the expensive steps (O(n log n)); a slider change
must only redo the cheap O(n) part. The heavy objects (loaded, recalibrated and
sorted runs) are kept in :class:`dashboard.memory.BudgetCache` caches, bounded in
bytes across sessions and released after a time to live (the server's memory
budget); the light derived ones with ``st.cache_resource``. Neither copies: the
objects are immutable (frozen dataclasses over numpy arrays), where
``cache_data`` would pickle a copy of millions of rows on every rerun.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import streamlit as st
from streamlit import dataframe_util

import valuecore as vc
from valuecore.runs import LoadProblem, LoadReport, ModelRun, load_run_file, load_runs

from . import serverfiles
from .memory import BudgetCache, upload_refusal
from .rules import rule_options

# The heavy caches, bounded by the server's memory budget (dashboard.memory, dashboard.limits).
_LOADED = BudgetCache("loaded runs")
_DERIVED = BudgetCache("recalibrated and sorted runs")


def _budgeted(cache: BudgetCache, key: tuple, compute, spinner: str | None = None):
    """``compute()`` once per key while it is kept, with a spinner while it runs."""
    def run():
        if spinner is None:
            return compute()
        with st.spinner(spinner):
            return compute()

    return cache.get(key, run)

SAMPLE_ROOT = Path(__file__).resolve().parent.parent / "sample_runs"
RUN_SUFFIXES = (".csv", ".parquet", ".pq")


def sample_sets() -> list[str]:
    """Names of the bundled sample-run folders."""
    if not SAMPLE_ROOT.is_dir():
        return []
    return sorted(
        p.name for p in SAMPLE_ROOT.iterdir() if p.is_dir() and any(f.suffix in RUN_SUFFIXES for f in p.iterdir())
    )


def _fingerprint(folder: Path, skip: tuple[str, ...] = ()) -> tuple:
    """The content hash of each run file of the folder, so the cache never serves stale runs.

    A file whose stat cannot be read (a dangling or looping link, no permission) or that is
    no regular file (a FIFO) is keyed by its name and the reason; the loader reports it.
    """
    from .filehash import file_key

    try:
        files = sorted(f for f in folder.iterdir() if f.suffix.lower() in RUN_SUFFIXES)
    except OSError as exc:
        return (("", f"cannot list: {exc.errno}"),)
    return tuple((f.name, "refused" if str(f) in skip else file_key(f)) for f in files)


def budgeted_load(key: tuple, compute, spinner: str | None = None) -> LoadReport:
    """A loaded report kept with the other loaded runs, within the server's memory budget."""
    return _budgeted(_LOADED, key, compute, spinner)


def kept_load(key: tuple, default=None):
    """What :func:`keep_load` kept under ``key`` (counted as a use), or ``default``: never computes."""
    return _LOADED.peek(key, default)


def keep_load(key: tuple, value) -> None:
    """Keep ``value`` (a loaded report, or an object holding one) with the loaded runs, weighed, within the
    server's memory budget and time to live; it replaces what ``key`` held."""
    _LOADED.put(key, value)


def _load_folder(folder: str, fingerprint: tuple, refused: tuple[str, ...] = ()) -> LoadReport:
    return _budgeted(_LOADED, ("folder", folder, fingerprint, refused), lambda: _read_folder(folder, refused),
                     "Loading and checking the run files…")


def _read_folder(folder: str, refused: tuple[str, ...]) -> LoadReport:
    if not refused:
        return load_runs(folder)
    # Files read by name, the refused links left out (the loader would follow them).
    files = [f for f in sorted(Path(folder).iterdir())
             if f.suffix.lower() in RUN_SUFFIXES and not f.name.startswith(".") and str(f) not in refused]
    report = load_runs(files)
    problems = tuple(LoadProblem(name, serverfiles.LINK_REFUSAL) for name in refused)
    return LoadReport(models=report.models, problems=problems + report.problems)


def load_folder(folder: str | Path, roots: tuple[Path, ...] | None = None) -> LoadReport:
    """All run files of a folder (cached per folder content), its paths shown as :func:`shown`.

    With ``roots`` (a server folder), a file that is a link leading outside them is refused, not read.
    """
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        problem = LoadProblem(shown(folder, roots), "this folder does not exist", None, (), "error")
        return LoadReport(models={}, problems=(problem,))
    folder = folder.resolve()
    refused = () if roots is None else tuple(
        str(f) for f in serverfiles.links_leaving_roots(folder, roots, suffixes=RUN_SUFFIXES))
    report = _load_folder(str(folder), _fingerprint(folder, skip=refused), refused)
    return shown_report(report, roots)


LMEVAL_SAMPLES = "samples_*.jsonl"  # lm-evaluation-harness's per-task logs in a model's folder
LOG_SUFFIXES = (".jsonl", ".eval", ".json")


def load_evaluation_logs(text: str, roots: tuple[Path, ...]) -> LoadReport:
    """Language-model evaluation logs named by a source typed in the sidebar (``lmeval[...]:PATH`` or
    ``inspect[...]:PATH``, as on the command line), read only inside the operator's ``roots``.

    PATH is resolved (links and ``..`` included) and refused outside the roots in the words a refused folder
    gets; a link inside it that leaves the roots refuses the whole source. A folder holding
    lm-evaluation-harness model folders (what its ``--output_path`` holds) reads one model per sub-folder,
    so the models of one evaluation compare side by side. Cached per file content, like run files.
    """
    prefix, path_text = vc.runs.split_evaluation_log(text)
    resolved = serverfiles.resolve_inside_roots(path_text)
    if resolved is None:
        return LoadReport(models={}, problems=(LoadProblem("evaluation logs", serverfiles.REFUSAL),))
    if not resolved.exists():
        problem = LoadProblem(prefix + shown(resolved, roots), "this file or folder does not exist", None, (), "error")
        return LoadReport(models={}, problems=(problem,))
    try:
        leaving = serverfiles.links_leaving_roots(resolved, roots, recursive=True) if resolved.is_dir() else []
    except ValueError as error:
        return LoadReport(models={}, problems=(LoadProblem(prefix + shown(resolved, roots), str(error)),))
    if leaving:
        where = prefix + shown(leaving[0], roots)
        return LoadReport(models={}, problems=(LoadProblem(where, serverfiles.LINK_REFUSAL),))
    sources = [resolved]
    if prefix.startswith("lmeval") and resolved.is_dir() and not any(resolved.glob(LMEVAL_SAMPLES)):
        sources = sorted(d for d in resolved.iterdir() if d.is_dir() and any(d.glob(LMEVAL_SAMPLES))) or sources
    key = ("evaluation logs", prefix, tuple(str(s) for s in sources), tuple(_log_fingerprint(s) for s in sources))
    # The paths in it are shown already (shown_report would cut "lmeval:runs/a" to "a").
    return _budgeted(_LOADED, key, lambda: _read_logs(prefix, sources, roots), "Reading the evaluation logs…")


def _log_fingerprint(path: Path) -> tuple:
    from .filehash import file_key

    if not path.is_dir():
        return ((path.name, file_key(path)),)
    return tuple((f.name, file_key(f)) for f in sorted(path.iterdir()) if f.suffix.lower() in LOG_SUFFIXES)


def _read_logs(prefix: str, sources: list[Path], roots: tuple[Path, ...]) -> LoadReport:
    """Each source read as the command line reads it; a model name met twice is refused the second time."""
    models: dict[str, ModelRun] = {}
    problems: list[LoadProblem] = []
    for source in sources:
        shown_as = prefix + shown(source, roots)
        try:
            report = vc.runs.read_evaluation_log(prefix + str(source))
        except (ValueError, ImportError) as error:  # bad options; inspect_ai not installed on this server
            problems.append(LoadProblem(shown_as, str(error)))
            continue
        hidden = prefix + str(source)  # the server's path, never shown: the reader names the source as given
        problems += [replace(p, file=p.file.replace(hidden, shown_as)) for p in report.problems]
        for name, run in report.models.items():
            if name in models:
                problems.append(LoadProblem(shown_as, f"model name {name!r} is already taken by "
                                                      f"{models[name].path}; this one was not loaded"))
                continue
            models[name] = replace(run, path=run.path.replace(hidden, shown_as))
    problems += [p for p in vc.runs.check_comparable(models) if p not in problems]
    return LoadReport(models=models, problems=tuple(problems))


def shown(path, roots: tuple[Path, ...] | None = None) -> str:
    """A server path as visitors see it: under the allowed root's name or ``sample_runs`` (never absolute)."""
    return serverfiles.shown_path(path, roots or (), named={SAMPLE_ROOT: SAMPLE_ROOT.name})


def shown_report(report: LoadReport, roots: tuple[Path, ...] | None = None) -> LoadReport:
    """``report`` with every file path (models and problems) as :func:`shown` (cheap: no data is copied)."""
    models = {m: replace(run, path=shown(run.path, roots)) for m, run in report.models.items()}
    return LoadReport(models=models, problems=tuple(replace(p, file=shown(p.file, roots)) for p in report.problems))


def _load_upload(name: str, sha256: str, data: bytes) -> LoadReport:
    refusal = upload_refusal(name, data)  # weighed from its size and header, before any parsing
    if refusal is not None:
        return LoadReport(models={}, problems=(LoadProblem(name, refusal),))
    return _budgeted(_LOADED, ("upload", name, sha256), lambda: load_run_file(data, name=name),
                     "Loading and checking the uploaded file…")


def load_uploads(files: list[tuple[str, bytes]]) -> LoadReport:
    """Uploaded run files as one report; a bad file never hides the good ones.

    ``files`` are ``(name, content)`` in upload order. A name uploaded again
    replaces the earlier upload (a corrected file keeps its place, with the new
    content); each file's problems are reported once. A model named by two files
    of different names is loaded from the first and the second is reported.
    """
    latest: dict[str, bytes] = {}
    for name, content in files:
        latest[name] = content  # a dict keeps the first upload's place and the last upload's content
    models: dict[str, ModelRun] = {}
    source: dict[str, str] = {}
    problems: dict[LoadProblem, None] = {}  # insertion-ordered set: each problem counted once
    for name, content in latest.items():
        report = _load_upload(name, hashlib.sha256(content).hexdigest(), content)
        problems.update(dict.fromkeys(report.problems))
        for model, run in report.models.items():
            if model in models:
                problem = LoadProblem(
                    name, f"model {model!r} is already loaded from {source[model]}; this file's is skipped "
                    "(remove one of the two files, or give the models different names)", "model", (), "error",
                )
                problems[problem] = None
                continue
            models[model], source[model] = run, name
    return LoadReport(models=models, problems=tuple(problems))


class StageCache:
    """The dashboard's cache of the pipeline's expensive stages, handed to ``vc.Pipeline`` as ``cache``.

    What a stage computes is kept across reruns and sessions, keyed on the run file's content
    (:func:`run_key`) and the settings: the heavy runs (recalibrated, sorted) in the memory budget's
    :class:`~dashboard.memory.BudgetCache`, the light results with ``st.cache_resource``. Within one
    script run a page asks for the same sorted run many times, and each lookup costs about a millisecond:
    those are remembered here too (one cache per workspace).
    """

    _SPINNERS = {"calibrator": "Fitting the calibration…", "sorted": "Sorting the run once…",
                 "recommendation": "Weighing every model and rule…",
                 "recommended_rules": "Choosing each model's rule…"}
    _HEAVY = frozenset({"calibrator", "calibrated", "sorted"})

    def __init__(self):
        self._memo: dict = {}

    def stage(self, pipeline: vc.Pipeline, stage: str, model: str | None, split: str | None, inputs: tuple,
              compute):
        if model is None:  # weighs the models together: every run and the settings shape it
            shape = (tuple((m, run_key(run)) for m, run in pipeline.runs.items()), pipeline.tune_split,
                     pipeline.eval_split, pipeline.calibration)
        else:
            shape = (run_key(pipeline.run(model)), model, split)
        key = (stage, *shape, *(_input_key(x) for x in inputs))
        if stage == "sorted" and key in self._memo:
            return self._memo[key]
        if stage in self._HEAVY:
            found = _budgeted(_DERIVED, key, compute, self._SPINNERS.get(stage))
        else:
            found = _kept(key, compute, self._SPINNERS.get(stage))
        if stage == "sorted":
            self._memo[key] = found
        return found


def _input_key(value):
    """A stage's input as a hashable text key: a policy, values, the models or rules weighed, a setting."""
    if isinstance(value, vc.Policy):
        return policy_key(value)
    if isinstance(value, (vc.UseCase, vc.ValueMatrix)):
        return values_key(value)
    if isinstance(value, (tuple, list)):
        return tuple(_input_key(v) for v in value)
    return value


@st.cache_resource(show_spinner=False, max_entries=1024)
def _kept(key: tuple, _compute, spinner: str | None):
    if spinner is None:
        return _compute()
    with st.spinner(spinner):
        return _compute()


class Workspace(vc.Pipeline):
    """``valuecore.Pipeline`` over the loaded runs, with a :class:`StageCache` handed in.

    The pipeline decides every number (splits, calibration, policy, value,
    interval, the recommendation); its cache only remembers them across reruns,
    keyed on the run file's SHA-256 and the settings. This class overrides none
    of the pipeline's stages: it adds the report the runs came from and the views
    the pages draw (threshold curves, histograms, VOC curves, the comparison table).

    Parameters
    ----------
    report : LoadReport
    tune_split, eval_split : str or None
    calibration : str
        "none", "temperature" or "isotonic"; fitted on the tuning split.
    """

    def __init__(self, report: LoadReport, tune_split: str | None, eval_split: str | None, calibration: str = "none"):
        super().__init__(report.models, tune_split, eval_split, calibration, cache=StageCache())
        self.report = report

    def run_key(self, model: str) -> str:
        """The cache key of a model's run: its file content and what the loader made of it (see :func:`run_key`)."""
        return run_key(self.run(model))

    # ------------------------------------------------------------ views
    def calibration_diagnostics(self, model: str, split: str | None, n_bins: int):
        """``valuecore.calibration.calibration_diagnostics`` of a labelled (calibrated) split, cached, or None."""
        predictions = self.calibrated(model, split)
        if predictions is None or not predictions.has_labels:
            return None
        return _calibration_diagnostics(self.run_key(model), model, split, self.calibration_key(model), n_bins,
                                        predictions)

    def tuning_split_for(self, model: str) -> str | None:
        """The split thresholds and calibration are fitted on (the pipeline's rule)."""
        return self.plan(model).tune_split

    def has_split(self, model: str, split: str | None) -> bool:
        return split is not None and split in self.run(model).splits

    def threshold_view(self, model: str, split: str | None, values, thresholds=(), max_points: int = 400):
        """Everything the Value page reads off one threshold curve of a (calibrated) split, cached.

        Returns a :class:`ThresholdView` (``frame`` as :meth:`curve_frame`, the value of always
        abstaining and of accepting all, and value and coverage at each of ``thresholds``), or None
        when the model lacks the split. One ``valuecore.threshold_curve`` per model and values.
        """
        run = self.sorted(model, split)
        if run is None:
            return None
        thresholds = tuple(None if t is None else float(t) for t in thresholds)
        key = (self.run_key(model), model, split, self.calibration_key(model), values_key(values), max_points,
               thresholds)
        return _threshold_view(key, run, values)

    def curve_frame(self, model: str, split: str | None, values, max_points: int = 400):
        """``threshold_curve(...).to_frame(max_points)`` of a split plus ``model`` and ``split`` columns.

        Cached (a light frame, not the curve); the "always abstain" row (threshold NaN) is left out.
        Do not modify the frame in place.
        """
        view = self.threshold_view(model, split, values, (), max_points=max_points)
        return None if view is None else view.frame

    def histogram(self, model: str, split: str | None, bins: int = 20):
        """Correct-vs-wrong confidence histogram of a labelled (calibrated) split, or None."""
        predictions = self.calibrated(model, split)
        if predictions is None or not predictions.has_labels:
            return None
        return _histogram(self.run_key(model), model, split, self.calibration_key(model), bins, predictions)

    def voc(self, model: str, mode: str) -> vc.curves.VOCCurve:
        """The VOC curve of ``mode`` on the evaluated split ("tuned" tunes on the tuning split).

        Raises ValueError (in plain words) when a split is missing or unlabelled.
        """
        split = self.eval_split
        run = self.sorted(model, split)
        if run is None:
            raise ValueError(f"{model} has no {split!r} split")
        if not run.predictions.has_labels:
            raise ValueError(f"the {split!r} split of {model} has no labels, and a VOC curve needs them")
        tune = None
        tune_split = None
        if mode == "tuned":
            tune_split = self.tuning_split_for(model)  # the pipeline's rule: the evaluated split as a fallback
            tune = self.sorted(model, tune_split)
            if not tune.predictions.has_labels:
                raise ValueError(f"the {tune_split!r} split of {model} has no labels to tune thresholds on")
        key = (self.run_key(model), model, split, tune_split, self.calibration_key(model))
        return _voc(key, mode, run, tune)

    def voc_band(self, model: str, mode: str, omegas, n_resamples: int = 200, seed: int = 0):
        """Bootstrap band of the VOC curve (``valuecore.uncertainty.voc_band``), cached.

        Raises ValueError when a split is unusable.
        """
        self.voc(model, mode)  # same checks, in plain words
        run = self.sorted(model, self.eval_split)
        tune_split = self.tuning_split_for(model) if mode == "tuned" else None
        tune = self.sorted(model, tune_split) if mode == "tuned" else None
        omegas = np.asarray(omegas, dtype=float)
        key = (self.run_key(model), model, self.eval_split, tune_split,
               self.calibration_key(model), mode, omegas.tobytes(), n_resamples, seed)
        return _band(key, vc.uncertainty.voc_band, run, tune, omegas)

    def comparison(self, models) -> vc.ComparisonTable:
        """Seed 003's comparison table of ``models`` (tuned on the tuning split when labelled)."""
        eval_runs, tune_runs, key = {}, {}, []
        for model in models:
            run = self.sorted(model, self.eval_split)
            if run is None or not run.predictions.has_labels:
                continue
            eval_runs[model] = run
            tune = self.sorted(model, self.tuning_split_for(model))
            tune_runs[model] = tune if tune.predictions.has_labels else run
            key.append((model, self.run_key(model), self.calibration_key(model)))
        if not eval_runs:
            raise ValueError("no selected model has labels on the evaluated split")
        return _comparison((tuple(key), self.eval_split, self.tune_split), eval_runs, tune_runs)


# --------------------------------------------------------------------------
# Cached derived objects for the pages (added for the value / VOC / matrix pages).
#
# Every cache below is keyed on plain strings (file hash, model, split,
# calibration, a text key of the values or the policy); the heavy objects are
# passed as underscore arguments, which Streamlit does not hash.


def run_key(run: ModelRun) -> str:
    """Everything that shapes a run's cached objects, as text: the file's SHA-256, the class order the
    loader imposed (a folder aligns its files' column orders, an upload of the same bytes does not), whether
    it is an aggregate, and the loader's options (the dashboard always uses the defaults, named here so a
    change of them changes the key). Keyed by the SHA-256 alone, one session's class order reached another's."""
    return f"{run.sha256}|{'ag' if run.aggregate else 'rows'}|{_LOADER_OPTIONS}|" + "\x1f".join(run.classes)


_LOADER_OPTIONS = "sum_tolerance=0.01,warn_tolerance=1e-06,splits=all"


def values_key(values) -> str:
    """A short text key that identifies a UseCase or ValueMatrix (for caches)."""
    if values is None:
        return repr(values)
    use_case = values.use_case
    if use_case is not None:
        return f"uc:{use_case.v_correct!r}:{use_case.v_abstain!r}:{use_case.v_wrong!r}"
    digest = hashlib.sha256(values.values.tobytes()).hexdigest()[:16]
    return "vm:" + "|".join(values.classes) + ":" + digest


def policy_key(policy: vc.Policy) -> str:
    import json

    return json.dumps(policy.to_dict(), sort_keys=True, default=str)


@st.cache_resource(show_spinner=False, max_entries=256)
def _histogram(run_key: str, model: str, split: str, calibration_key: str, bins: int, _predictions):
    return vc.curves.confidence_histogram(_predictions, bins=bins)


@st.cache_resource(show_spinner=False, max_entries=512)
def _calibration_diagnostics(run_key: str, model: str, split: str, calibration_key: str, n_bins: int, _predictions):
    return vc.calibration.calibration_diagnostics(_predictions, n_bins=n_bins)


@st.cache_resource(show_spinner="Computing the VOC curve…", max_entries=512)
def _voc(key: tuple, mode: str, _run, _tune_run):
    return vc.voc_curve(_run, mode, tune_run=_tune_run)


class ThresholdView:
    """What one threshold curve says (see :meth:`Workspace.threshold_view`).

    Attributes
    ----------
    frame : DataFrame
        ``threshold, value_total, value_per_item, coverage, model, split`` (light, for charts).
    no_model_total, no_model_per_item : float
        Value of always abstaining (the curve's first point).
    accept_all_total, accept_all_per_item : float
        Value of acting on every item (its last point).
    at : dict
        threshold (None = always abstain) -> (value_total, value_per_item, coverage).
    estimated : bool
        True when the split has no labels.
    """

    def __init__(self, frame, curve: vc.curves.ThresholdCurve, run: vc.curves.SortedRun, thresholds):
        self.frame = frame
        self.no_model_total = float(curve.value_total[0])
        self.no_model_per_item = float(curve.value_per_item[0])
        self.accept_all_total = float(curve.value_total[-1])
        self.accept_all_per_item = float(curve.value_per_item[-1])
        self.estimated = bool(curve.estimated)
        self.at = {}
        for t in thresholds:
            k = run.groups_accepted(t)
            self.at[t] = (float(curve.value_total[k]), float(curve.value_per_item[k]), float(curve.coverage[k]))


@st.cache_resource(show_spinner=False, max_entries=256)
def _threshold_view(key: tuple, _run, _values) -> ThresholdView:
    _, model, split, _, _, max_points, thresholds = key
    curve = vc.threshold_curve(_run, _values)
    frame = curve.to_frame(max_points=max_points)
    frame = frame[frame["threshold"].notna()].reset_index(drop=True)
    frame["model"] = model
    frame["split"] = split
    return ThresholdView(frame, curve, _run, thresholds)


@st.cache_resource(show_spinner=False, max_entries=256)
def _band(key: tuple, _voc_band, _run, _tune_run, _omegas):
    mode, n_resamples, seed = key[-4], key[-2], key[-1]
    return _voc_band(_run, mode, _omegas, tune_run=_tune_run, rng=np.random.default_rng(seed), n_resamples=n_resamples)


@st.cache_resource(show_spinner="Computing the comparison table…", max_entries=32)
def _comparison(key: tuple, _eval_runs, _tune_runs):
    return vc.comparison_table(_eval_runs, _tune_runs)


def workspace(selection, calibration: str | None = None) -> "Workspace":
    """The :class:`Workspace` of a :class:`~dashboard.state.Selection` (cheap: caches are global).

    ``calibration`` overrides the selection's recalibration (the Calibration page examines others).
    """
    method = selection.calibration if calibration is None else calibration
    ws = Workspace(selection.report, selection.tune_split, selection.eval_split, method)
    # The rule "recommended" is weighed among them, over the rules the pages offer, as on the first page.
    ws.recommend_models = tuple(selection.models)
    ws.recommend_kinds = lambda values, models: tuple(rule_options(ws, models, values)[0])
    return ws


def arrow_datasets(spec: dict) -> dict:
    """A Vega-Lite spec with its named datasets as the Arrow IPC bytes ``st.vega_lite_chart`` makes of them.

    The chart then sends them as they are: a spec kept across reruns (its data unchanged) is not converted
    again on each one. The same bytes either way; ``spec`` itself is not changed.
    """
    return {**spec, "datasets": {name: dataframe_util.convert_anything_to_arrow_bytes(rows)
                                 for name, rows in spec.get("datasets", {}).items()}}
