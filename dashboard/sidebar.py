"""The sidebar shared by every page: the outcome values first, then data, models, splits, recalibration.

Every widget here shows one setting (see ``dashboard.state`` for the rules);
:func:`render_sidebar` resolves the settings against the loaded runs into the
:class:`~dashboard.state.Selection` the pages read.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import replace
from pathlib import Path

import streamlit as st

import valuecore as vc
from valuecore import UseCase, ValueMatrix
from valuecore.policy_json import align_values

from . import data, datasets, serverfiles, state
from .limits import CLAMP_NOTE, clamp_value
from .safetext import md_text
from .settings import CALIBRATION_METHODS, Settings

# label -> (v_correct, v_abstain, v_wrong)
PRESETS = {
    "Accuracy: an error costs no more than a hand-off (ω = 0)": (1.0, 0.0, 0.0),
    "An error is as bad as a correct answer is good (ω = 1)": (1.0, 0.0, -1.0),
    "Errors 4× as bad as a correct answer is good (ω = 4)": (1.0, 0.0, -4.0),
    "Errors 10× as bad as a correct answer is good (ω = 10)": (1.0, 0.0, -10.0),
    "Support desk: automation saves $5, a hand-off costs $1, an error costs $30": (5.0, -1.0, -30.0),
}
YOUR_VALUES = "(your own values)"
HOW_VALUE_WORKS = "pages/how_value_works.py"  # linked from the sidebar on every page
COST_MATRIX = "pages/cost_matrix.py"
VALUE_FIELDS = (("v_correct", "Correct answer"), ("v_abstain", "Hand-off to a person"), ("v_wrong", "Wrong answer"))
UPLOAD_LINK_NOTE = (
    "Uploaded files are not part of a link: whoever opens it must upload the same run files in the sidebar "
    "(the exported policy JSON records each file's SHA-256, so the Export page can check they match)."
)


def _apply_preset() -> None:
    label = st.session_state.get("sidebar_preset")
    if label in PRESETS:
        v_correct, v_abstain, v_wrong = PRESETS[label]
        state.request(v_correct=v_correct, v_abstain=v_abstain, v_wrong=v_wrong, matrix=None)


def _use_three_values() -> None:
    state.request(matrix=None)


def _values_section(settings: Settings) -> UseCase:
    """Preset and the three values, or, with a value matrix in force, its summary and the way back."""
    use_case = settings.use_case
    if settings.matrix is not None:
        classes = settings.matrix[0]
        st.markdown("**What is each outcome worth?**")
        st.info(f"Values come from a per-class value matrix ({len(classes)} classes), edited on the Cost matrix "
                "page. The three outcome values do not apply while it is in force.")
        st.page_link(COST_MATRIX, label="See or edit the matrix", icon=":material/grid_on:")
        st.button("Use the three values instead", key="sidebar_use_three_values", on_click=_use_three_values,
                  icon=":material/undo:")
        return use_case
    # The three values come first: with the page list above them they must end above the fold at 1440×900.
    st.markdown("**What is each outcome worth?**")
    currency = settings.currency
    for name, label in VALUE_FIELDS:
        state.value(st.number_input, name, f"{label} ({currency})", key=f"sidebar_{name}_input", step=0.5,
                    format="%g", convert=_within_range)
    if any(clamp_value(st.session_state.get(f"sidebar_{name}_input", 0.0))[1] for name, _ in VALUE_FIELDS):
        st.warning(CLAMP_NOTE)
    # The preset shows the values in force after the inputs above (the browser's copy too), so that its
    # old label never comes back on the next rerun and undoes what was just typed.
    in_force = state.get().use_case
    current = (in_force.v_correct, in_force.v_abstain, in_force.v_wrong)
    labels = [YOUR_VALUES, *PRESETS]
    matching = next((i for i, v in enumerate(PRESETS.values(), start=1) if v == current), 0)
    state.show("sidebar_preset", labels[matching])
    st.selectbox("…or start from a preset", labels, index=matching, key="sidebar_preset",
                 on_change=_apply_preset, help="Sets the three values above; change any of them afterwards.")
    settings = state.get()
    use_case = settings.use_case
    omega = use_case.omega
    omega_text = "∞" if not math.isfinite(omega) else f"{omega:.3g}"
    st.metric("Penalty ω", omega_text, help=(
        "ω = (hand-off − wrong) / (correct − hand-off). A wrong answer costs ω times what a correct one earns, "
        "both measured against handing the item over."))
    regime = use_case.regime
    if regime.kind == "normal":
        st.caption(regime.reason)
    else:
        st.warning(regime.reason)
    return use_case


def _folder_report(path: str):
    """A server folder, read only inside the operator's allowed roots (the refusal reveals nothing of it)."""
    if not path:
        return data.LoadReport(models={}, problems=()), "a folder (none given yet)"
    resolved = serverfiles.resolve_inside_roots(path)
    if resolved is None:
        st.error(serverfiles.REFUSAL, icon=":material/block:")
        return (data.LoadReport(models={}, problems=(data.LoadProblem("server folder", serverfiles.REFUSAL),)),
                "a folder (refused)")
    roots = serverfiles.allowed_roots()
    if datasets.is_dataset(resolved):
        try:
            leaving = serverfiles.links_leaving_roots(resolved, roots, recursive=True)
        except ValueError as error:
            leaving, message = [resolved], f"The Parquet dataset was not read: {error}."
        else:
            message = (f"The Parquet dataset was not read: {_inside(str(leaving[0]), resolved, path)} "
                       f"{serverfiles.LINK_REFUSAL}.") if leaving else ""
        if leaving:  # a linked part file or folder would be read by the aggregation
            st.error(md_text(message), icon=":material/block:")
            return data.LoadReport(models={}, problems=(data.LoadProblem(path, message),)), "a folder (refused)"
        return _dataset_report(resolved, path), f"Parquet dataset {path}"
    return data.load_folder(resolved, roots), f"folder {path}"


def _load_aggregate(path: str, shown_as: str) -> data.LoadReport:
    """The aggregate run file (its name holds the dataset's fingerprint), its cache path shown as the dataset.

    Kept within the server's memory budget, like every loaded run (dashboard.memory)."""
    return data.budgeted_load(("aggregate", path, shown_as), lambda: _read_aggregate(path, shown_as),
                              "Loading the aggregate…")


def _read_aggregate(path: str, shown_as: str) -> data.LoadReport:
    report = vc.load_runs(path)

    def shown(file: str) -> str:
        return shown_as if file == path else file

    models = {m: replace(run, path=shown(run.path)) for m, run in report.models.items()}
    return data.LoadReport(models=models, problems=tuple(replace(p, file=shown(p.file)) for p in report.problems))


def _dataset_report(folder, shown_as: str) -> data.LoadReport:
    """A Parquet dataset (a partitioned prediction log) aggregated once per fingerprint, then loaded like a run.

    The aggregation is DuckDB's, memory-capped, with its progress on a bar; a refusal is said in words.
    """
    label = f"Aggregating the Parquet dataset {md_text(shown_as)} (once; later visits use the stored result)…"
    bar = st.progress(0.0, text=label)
    try:
        path = datasets.cached_aggregate(folder, progress=lambda done: bar.progress(min(max(float(done), 0.0), 1.0),
                                                                                     text=label))
    except vc.aggregation.AggregateRefused as refused:
        bar.empty()
        problems = tuple(replace(p, file=_inside(p.file, folder, shown_as)) for p in refused.problems)
        st.error("The Parquet dataset could not be aggregated: "
                 + md_text("; ".join(str(p) for p in problems if p.severity == "error")[:1000] or str(refused)),
                 icon=":material/block:")
        return data.LoadReport(models={}, problems=problems)
    except OSError as error:  # the cache folder cannot be written: the operator's to fix, said without its path
        bar.empty()
        message = ("The Parquet dataset could not be aggregated: the server cannot store the result "
                   f"({error.strerror or 'input/output error'}). Tell the dashboard's operator.")
        st.error(message, icon=":material/block:")
        return data.LoadReport(models={}, problems=(data.LoadProblem(shown_as, message),))
    bar.empty()
    return _load_aggregate(str(path), shown_as)


def _inside(file: str, folder, shown_as: str) -> str:
    """A file of the dataset named from the dataset as the visitor named it, not by its server path."""
    try:
        return str(Path(shown_as) / Path(file).relative_to(folder))
    except ValueError:
        return file


def _within_range(value) -> float:
    """A typed amount inside the range the core computes exactly (see dashboard.limits)."""
    return clamp_value(value)[0]


# The uploaded files in force live here, not in the drop zone: Streamlit's uploader keeps every file
# dropped on it, two of the same name included, so a corrected file could not replace its first version.
UPLOADS_KEY = "sidebar_uploaded_files"  # file name -> content, in upload order (kept across pages)
UPLOAD_NOTE_KEY = "sidebar_upload_replaced"
_UPLOADER_ROUND_KEY = "sidebar_upload_round"


def add_uploads(store: dict[str, bytes], files) -> tuple[dict[str, bytes], list[str]]:
    """``store`` with ``files`` (``(name, content)`` pairs) added; a name already there is replaced in place.

    Returns the new store and the names that replaced an earlier upload.

    >>> add_uploads({"a.csv": b"1", "b.csv": b"2"}, [("a.csv", b"3"), ("c.csv", b"4")])
    ({'a.csv': b'3', 'b.csv': b'2', 'c.csv': b'4'}, ['a.csv'])
    """
    store = dict(store)
    replaced = [name for name, _ in files if name in store]
    for name, content in files:
        store[name] = content
    return store, list(dict.fromkeys(replaced))


def _uploader_key() -> str:
    return f"sidebar_upload_{st.session_state.get(_UPLOADER_ROUND_KEY, 0)}"


def _take_uploads() -> None:
    """Move the files just dropped into the store, and empty the drop zone (a new widget key)."""
    files = st.session_state.get(_uploader_key()) or []
    store, replaced = add_uploads(st.session_state.get(UPLOADS_KEY, {}), [(f.name, f.getvalue()) for f in files])
    st.session_state[UPLOADS_KEY] = store
    st.session_state[UPLOAD_NOTE_KEY] = replaced
    st.session_state[_UPLOADER_ROUND_KEY] = st.session_state.get(_UPLOADER_ROUND_KEY, 0) + 1


def _remove_upload(name: str) -> None:
    store = dict(st.session_state.get(UPLOADS_KEY, {}))
    store.pop(name, None)
    st.session_state[UPLOADS_KEY] = store
    st.session_state[UPLOAD_NOTE_KEY] = []


def _upload_section() -> list[tuple[str, bytes]]:
    """The drop zone, then each file in force with a button that removes it (and so its model)."""
    st.file_uploader(
        "Run files (CSV or Parquet, one per model)",
        type=["csv", "parquet"],
        accept_multiple_files=True,
        key=_uploader_key(),
        on_change=_take_uploads,
        help="See docs/run-format.md: y_true, proba_<class> columns (or y_pred + confidence), "
        "optional split, weight, id, timestamp. A file with the name of one already uploaded replaces it.",
    )
    store = st.session_state.get(UPLOADS_KEY, {})
    for name in store:
        name_column, button_column = st.columns([3, 2], vertical_alignment="center")
        name_column.caption(":material/description: " + md_text(name))
        button_column.button("Remove", key=f"sidebar_remove::{hashlib.sha256(name.encode()).hexdigest()[:16]}",
                             on_click=_remove_upload, args=(name,), type="tertiary", icon=":material/close:",
                             help="Remove this file and its model.")
    replaced = [n for n in st.session_state.get(UPLOAD_NOTE_KEY, ()) if n in store]
    if replaced:
        st.caption(f"Replaced by the new upload of the same name: {md_text(', '.join(replaced))}.")
    return list(store.items())


def _source_section(settings: Settings):
    options = [f"sample:{name}" for name in data.sample_sets()] + ["upload", "folder"]
    labels = {"upload": "Upload run files", "folder": "A folder on the server (allowed by the operator)"}
    source = settings.source
    shown = "folder" if source.startswith("folder:") or source == "folder" else source
    if shown not in options:
        shown = options[0]
    choice = state.choice(
        st.selectbox, "source", "Data source", options, key="sidebar_source",
        fallback=options.index(shown), format_func=lambda o: labels.get(o, f"Sample runs: {o.split(':', 1)[-1]}"),
    )
    if choice.startswith("sample:"):
        name = choice.split(":", 1)[1]
        return data.load_folder(data.SAMPLE_ROOT / name), f"sample runs '{name}'"
    if choice == "upload":
        return data.load_uploads(_upload_section()), "uploaded files"
    path = source[len("folder:"):] if source.startswith("folder:") else ""
    if not serverfiles.allowed_roots():
        # Off unless the operator allowed folders: a link naming one gets the same words, whatever it names.
        message = serverfiles.REFUSAL + " " + serverfiles.DISABLED if path else serverfiles.DISABLED
        (st.error if path else st.info)(message, icon=":material/block:")
        problems = (data.LoadProblem("server folder", message),) if path else ()
        return data.LoadReport(models={}, problems=problems), "a server folder (switched off)"
    folder = st.text_input(
        "Folder with run files", value=path, key="sidebar_folder", placeholder="runs/2024-05",
        help="A folder inside the ones the operator allowed; a relative path is taken inside the first of them. "
        "A folder of run files loads them; a Parquet dataset (data files in sub-folders, e.g. split=val/...) "
        "is aggregated once and then used like a run.",
    )
    state.from_widget("source", f"folder:{folder}" if folder else "folder")
    return _folder_report(folder)


def _resolve_matrix(settings: Settings, report, models) -> tuple[ValueMatrix | None, list[str]]:
    """The value matrix in force for the selected models (reordered to their classes), or why none is."""
    matrix = settings.value_matrix
    if matrix is None or not models:
        return None, []
    class_sets = {report.models[m].classes for m in models}
    if len(class_sets) != 1:
        return None, ["The selected models do not share one class set, so the per-class value matrix cannot "
                      "apply: the three values are used."]
    classes = next(iter(class_sets))
    try:
        return align_values(matrix, classes), []
    except ValueError:
        return None, [f"The value matrix is for the classes {md_text(', '.join(matrix.classes))}, not the selected "
                      "models' classes: the three values are used."]


def render_sidebar() -> state.Selection:
    """Draw the sidebar and publish the resulting :class:`~dashboard.state.Selection`."""
    settings = state.init()
    with st.sidebar:
        _values_section(settings)
        state.value(st.text_input, "currency", "Currency", key="sidebar_currency", max_chars=5)

        st.divider()
        report, source_label = _source_section(state.get())
        loaded = list(report.models)
        if loaded:
            state.note_link_once(_missing_from_runs(state.get(), report))
        # Without options the browser would keep showing the last chips (a removed file's model), greyed out.
        models = state.multi(st.multiselect, "models", "Models", loaded, key="sidebar_models") if loaded else []

        splits = sorted({s for m in models for s in report.models[m].splits})
        tune_split = state.choice(st.selectbox, "tune_split", "Tune thresholds on", splits,
                                  key="sidebar_tune_split", fallback=_preferred(splits, ("val", "validation", "tune")))
        eval_split = state.choice(st.selectbox, "eval_split", "Evaluate on", splits, key="sidebar_eval_split",
                                  fallback=_preferred(splits, ("test", "eval")))
        aggregated = datasets.aggregated_models(report, models)
        methods = [m for m in CALIBRATION_METHODS if not (aggregated and m == "temperature")]
        calibration = state.choice(
            st.selectbox, "calibration", "Recalibrate before thresholding", methods,
            key="sidebar_calibration",
            help="Fitted on the tuning split. Temperature scaling needs class probabilities.",
        )
        if aggregated:
            st.caption(md_text(datasets.per_item_note(aggregated, "temperature scaling")) + " It is not offered.")
        for note in state.link_notes():
            st.warning(md_text(note), icon=":material/link_off:")  # notes quote the link's own text

        st.divider()
        st.page_link(HOW_VALUE_WORKS, label="How value works", icon=":material/help:",
                     help="What ω means, tuned vs calibrated thresholds, VOC curves: a short read.")

    settings = state.get()
    value_matrix, notes = _resolve_matrix(settings, report, models)
    if settings.source == "upload" and not report.models:
        notes.append(UPLOAD_LINK_NOTE)
    selection = state.Selection(
        settings=settings,
        report=report,
        models=tuple(models),
        use_case=settings.use_case,
        value_matrix=value_matrix,
        tune_split=tune_split,
        eval_split=eval_split,
        calibration=calibration,
        currency=settings.currency,
        source_label=source_label,
        notes=tuple(notes),
    )
    state.publish(selection)
    state.write_url(settings)
    return selection


def _missing_from_runs(settings: Settings, report) -> list[str]:
    """Notes on models and splits the settings (a link) name but the loaded runs lack."""
    notes = []
    missing = [m for m in settings.models or () if m not in report.models]
    if missing:
        notes.append(f"The link names models that are not loaded here ({', '.join(missing)}); "
                     "the loaded ones are selected instead.")
    splits = {s for run in report.models.values() for s in run.splits}
    for label, split in (("tuning", settings.tune_split), ("evaluated", settings.eval_split)):
        if split is not None and split not in splits:
            notes.append(f"The link's {label} split {split!r} is not in the loaded runs; the default is used.")
    return notes


def _preferred(splits: list[str], names: tuple[str, ...]) -> int:
    return next((splits.index(n) for n in names if n in splits), 0)
