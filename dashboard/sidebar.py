"""The sidebar shared by every page: the outcome values first, then data, models, splits, recalibration.

Every widget here shows one setting (see ``dashboard.state`` for the rules).
:func:`render_sidebar` draws all but the outcome values and resolves the data,
models and splits into a :class:`Frame`; :func:`render_values` draws the values
in the slot the frame keeps for them and publishes the
:class:`~dashboard.state.Selection` the pages read. app.py calls the second
inside the fragment that also runs the page, so that a new value reruns the
values and the page only.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import math
from dataclasses import dataclass, replace
from pathlib import Path

import streamlit as st

import valuecore as vc
from valuecore import UseCase, ValueMatrix
from valuecore.policy_json import align_values

from . import data, datasets, mlflowsource, serverfiles, state
from .limits import CLAMP_NOTE, clamp_value
from .safetext import md_text
from .settings import CALIBRATION_METHODS, Settings

# label -> (v_correct, v_abstain, v_wrong); labels short enough to show whole in the sidebar's box
PRESETS = {
    "ω = 0: plain accuracy": (1.0, 0.0, 0.0),
    "ω = 1: errors cost 1×": (1.0, 0.0, -1.0),
    "ω = 4: errors cost 4×": (1.0, 0.0, -4.0),
    "ω = 10: errors cost 10×": (1.0, 0.0, -10.0),
    "Support desk: 5, −1, −30": (5.0, -1.0, -30.0),
}
PRESETS_HELP = (
    "Sets the three values above; change any of them afterwards. ω = 4: a wrong answer costs 4 times what a "
    "correct one earns (a hand-off is worth 0). Support desk: automation saves 5, a hand-off costs 1, an error 30."
)
YOUR_VALUES = "(your own values)"
HOW_VALUE_WORKS = "pages/how_value_works.py"  # linked from the sidebar on every page
COST_MATRIX = "pages/cost_matrix.py"
VALUE_FIELDS = (("v_correct", "Correct answer"), ("v_abstain", "Hand-off to a person"), ("v_wrong", "Wrong answer"))
# On a laptop screen the page list (12 pages, 500 px) pushed the outcome values below the fold: at 1280×800
# the wrong-answer box and the preset were out of sight. On screens up to 960 px high the list is drawn
# tighter (22 px rows instead of 34), so the three values, their sliders and the preset's label end above
# the fold at 1280×800 and 1440×900 (checked in Chromium by tests/e2e/test_e2e_sliders.py). Style only, by the
# nav's test ids; with another Streamlit version that renames them the list merely keeps its height.
COMPACT_PAGE_LIST = """<style>
@media (max-height: 960px) {
  [data-testid="stSidebarNavItems"] li { margin: 0.125rem 0 0; }
  [data-testid="stSidebarNavLink"] { height: 1.375rem; line-height: 1.375rem; margin-top: 0; margin-bottom: 0; }
  [data-testid="stSidebarNavItems"] > div + div { margin-top: 0.5rem; }
}
</style>"""
UPLOAD_LINK_NOTE = (
    "Uploaded files are not part of a link: whoever opens it must upload the same run files in the sidebar "
    "(the exported policy JSON records each file's SHA-256, so the Export page can check they match)."
)


def _apply_preset() -> None:
    label = state.widget_value("sidebar_preset")
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
        st.info(f"Values come from a per-class value matrix ({len(classes)} classes), edited on the Values per class "
                "page. The three outcome values do not apply while it is in force.")
        st.page_link(COST_MATRIX, label="See or edit the matrix", icon=":material/grid_on:")
        st.button("Use the three values instead", key="sidebar_use_three_values", on_click=_use_three_values,
                  icon=":material/undo:")
        return use_case
    # The three values come first: with the page list above them they must end above the fold at 1280×800.
    st.markdown("**What is each outcome worth?**", help=(
        "Drag a slider for a quick look (round numbers, finer near 0, on the side of 0 the value is on), or "
        "type an exact value in the box beside it. Every page recomputes at once."))
    with st.container(gap="xsmall"):  # three compact rows: at 1280×800 they end above the fold
        for name, label in VALUE_FIELDS:
            _value_row(name, label, settings.currency)
    if any(clamp_value(state.widget_value(f"sidebar_{name}_input", 0.0))[1] for name, _ in VALUE_FIELDS):
        st.warning(CLAMP_NOTE)
    # The preset shows the values in force after the inputs above (the browser's copy too), so that its
    # old label never comes back on the next rerun and undoes what was just typed.
    in_force = state.get().use_case
    current = (in_force.v_correct, in_force.v_abstain, in_force.v_wrong)
    labels = [YOUR_VALUES, *PRESETS]
    matching = next((i for i, v in enumerate(PRESETS.values(), start=1) if v == current), 0)
    state.show("sidebar_preset", labels[matching])
    st.selectbox("…or start from a preset", labels, index=matching, key="sidebar_preset",
                 on_change=_apply_preset, help=PRESETS_HELP)
    settings = state.get()
    use_case = settings.use_case
    omega = use_case.omega
    omega_text = vc.wording.omega(omega)  # 1000, not 1e+03
    st.metric(vc.wording.OMEGA_LABEL, omega_text, help=(
        "ω = (hand-off − wrong) / (correct − hand-off). A wrong answer costs ω times what a correct one earns, "
        "both measured against handing the item over."))
    regime = use_case.regime
    if regime.kind == "normal":
        st.caption(regime.reason)
    else:
        st.warning(regime.reason)
    return use_case


# ----------------------------------------------------------- the sliders
# Why a symmetric-log scale of round numbers, and not a linear slider: the value of a wrong answer runs from
# -0.5 to -1000 and more, and what the thresholds follow is the ratio ω = (hand-off − wrong) / (correct −
# hand-off). A linear slider wide enough for -1000 moves in steps of several units and cannot tell ω = 0.5
# from ω = 1; one fine enough for 0.5 cannot reach -1000. Stops spaced evenly in relative terms resolve every
# magnitude alike: two nonzero stops are at most 2.5 % apart, so with a hand-off worth 0 one stop of the
# wrong (or correct) answer's slider moves ω by at most 2.5 % and the break-even confidence p = ω/(1+ω), where
# the accept threshold sits for calibrated confidences, by at most 2.5 %·p(1−p) ≤ 0.63 percentage points,
# whatever the magnitude. On the sample runs the stops reach every threshold the exact values reach
# (tests/app/test_app_sliders.py); on runs of 10^6 items some neighbouring thresholds lie closer than one stop,
# and only the box reaches those (benchmarks/bench_slider_reach.py). The stops are round numbers (1, 1.02,
# …, 2, 2.05, …, 5, 5.1, …) so a dragged value reads well, and the value in force is always one of them (a
# typed -3.14159 is added), so the slider and the box show the same number. The range covers 0.01 to 1000
# on the value's side of 0 (slider_sides) and grows, by decades, to hold any value in use (typed, linked,
# imported), at most SLIDER_DECADES decades below the largest; it never shrinks during a session, so a stop
# stays where it was.
_MANTISSAS = tuple([f"{1 + i / 50:.2f}" for i in range(50)] + [f"{2 + i / 20:.2f}" for i in range(60)]
                   + [f"{5 + i / 10:.1f}" for i in range(50)])
# From 0.01 to 1000 before any value asks for more: a wrong answer of -1000 (a costly error, the README's example)
# is a drag away; the slider used to stop at -10, and -1000 had to be typed.
SLIDER_RANGE = (-2, 3)  # powers of ten: stops from 0.01 to 1000 (and the same below 0)
SLIDER_DECADES = 6  # at most this many decades of stops (about 2,000 stops): a rerun stays cheap


def slider_decades(values) -> tuple[int, int]:
    """The powers of ten the stops span to hold ``values``: ``(low, high)``, stops from 10**low to 10**high.

    >>> slider_decades([1.0, 0.0, -4.0]), slider_decades([5.0, -1.0, -10000.0]), slider_decades([0.001])
    ((-2, 3), (-2, 4), (-3, 3))
    """
    magnitudes = [abs(v) for v in values if v != 0 and math.isfinite(v)]
    low = min([SLIDER_RANGE[0], *(math.floor(math.log10(m)) for m in magnitudes)])
    high = max([SLIDER_RANGE[1], *(math.ceil(math.log10(m)) for m in magnitudes)])
    return max(low, high - SLIDER_DECADES), high


@functools.lru_cache(maxsize=16)
def _slider_grid(low: int, high: int) -> tuple[float, ...]:
    positive = [float(f"{m}e{e}") for e in range(low, high) for m in _MANTISSAS] + [float(f"1e{high}")]
    return (*(-v for v in reversed(positive)), 0.0, *positive)


def slider_stops(value: float, decades: tuple[int, int]) -> tuple[float, ...]:
    """The slider's stops over ``decades``, ascending, with ``value`` among them.

    >>> stops = slider_stops(-3.14159, (-2, 1))
    >>> len(stops), stops[0], stops[-1], -3.14159 in stops, -4.0 in stops, 0.0102 in stops
    (964, -10.0, 10.0, True, True, True)
    """
    grid = _slider_grid(*decades)
    at = bisect.bisect_left(grid, value)
    if at < len(grid) and grid[at] == value:
        return grid
    return (*grid[:at], value, *grid[at:])


# Each slider holds the stops on the side of zero its value is on (a wrong answer's from -1000 to 0, a correct
# answer's from 0 to 1000), both sides only for a value of 0 or once a value on the other side was in use (typed,
# linked, imported; like the range, the sides never shrink during a session). Half the stops halve what a rerun
# sends and what Chromium redraws for the slider (a select_slider carries every stop's label, ~9 kB at 964 stops,
# on every rerun), and the thresholds follow ω, whose reach needs only one side (bench_slider_reach.py,
# tests/app/test_app_sliders.py). The box beside it takes any value.
def slider_sides(value: float) -> tuple[int, int]:
    """Which sides of zero a slider showing ``value`` needs: ``(-1 or 0, 0 or 1)``, both for zero.

    >>> slider_sides(-4.0), slider_sides(2.5), slider_sides(0.0)
    ((-1, 0), (0, 1), (-1, 1))
    """
    return (-1 if value <= 0 else 0), (1 if value >= 0 else 0)


def one_side(stops: tuple[float, ...], below: float, above: float) -> tuple[float, ...]:
    """The ``stops`` on the sides asked for: below zero when ``below`` < 0, above when ``above`` > 0; 0 always.

    >>> one_side((-10.0, -1.0, 0.0, 1.0, 10.0), -1, 0), one_side((-10.0, -1.0, 0.0, 1.0, 10.0), 0, 1)
    ((-10.0, -1.0, 0.0), (0.0, 1.0, 10.0))
    """
    if below < 0 and above > 0:
        return stops
    zero = bisect.bisect_left(stops, 0.0)
    return stops[:zero + 1] if below < 0 else stops[zero:]


@functools.lru_cache(maxsize=4096)
def stop_label(value: float) -> str:
    """A stop as the slider shows it: a round number as such, any other to its last digit.

    >>> stop_label(-4.0), stop_label(0.0102), stop_label(-0.0), stop_label(-3.14159265), stop_label(1000.0)
    ('-4', '0.0102', '0', '-3.14159265', '1000')
    """
    value = value + 0.0  # -0.0 reads as 0
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def _value_row(name: str, label: str, currency: str) -> None:
    """One outcome value: its slider beside its exact box, both showing the setting, whichever moved last."""
    box_key, slider_key = f"sidebar_{name}_input", f"sidebar_{name}_slider"
    settings = state.get()
    in_force = getattr(settings, name)
    low, high = state.widest(slider_key, *slider_decades([in_force]))
    below, above = state.widest(f"{slider_key}:sides", *slider_sides(in_force))
    stops = one_side(slider_stops(in_force, (int(max(low, high - SLIDER_DECADES)), int(high))), below, above)
    slider_column, box_column = st.columns([2, 1], gap="xsmall", vertical_alignment="bottom")
    with slider_column:
        state.value(st.select_slider, name, f"{label} ({currency})", key=slider_key, options=stops,
                    format_func=stop_label, convert=float)
    with box_column:
        state.value(st.number_input, name, f"{label} ({currency}), exact", key=box_key, step=0.5, format="%g",
                    convert=_within_range, label_visibility="collapsed")


def _folder_report(path: str):
    """A server folder, read only inside the operator's allowed roots (the refusal reveals nothing of it)."""
    if not path:
        return data.LoadReport(models={}, problems=()), "a folder (none given yet)"
    if vc.runs.is_evaluation_log(path):
        report = data.load_evaluation_logs(path, serverfiles.allowed_roots())
        if not report.models and any(p.message == serverfiles.REFUSAL for p in report.problems):
            st.error(serverfiles.REFUSAL, icon=":material/block:")
            return report, "evaluation logs (refused)"
        return report, f"evaluation logs {path}"
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


def _currency(text: str) -> str:
    """The currency as typed, without the spaces around it (a trailing space wrote "1.00 CHF ,")."""
    return str(text).strip()


def _within_range(value) -> float:
    """A typed amount inside the range the core computes exactly (see dashboard.limits)."""
    return clamp_value(value)[0]


# The uploaded files in force live in the session (dashboard.state): the names stay importable from here.
UPLOADS_KEY = state.UPLOADS_KEY
add_uploads = state.add_uploads


def _upload_section() -> list[tuple[str, bytes]]:
    """The drop zone, then each file in force with a button that removes it (and so its model)."""
    st.file_uploader(
        "Run files (CSV or Parquet, one per model)",
        type=["csv", "parquet"],
        accept_multiple_files=True,
        key=state.uploader_key(),
        on_change=state.take_uploads,
        help="See docs/run-format.md: y_true, proba_<class> columns (or y_pred + confidence), "
        "optional split, weight, id, timestamp. A file with the name of one already uploaded replaces it.",
    )
    store = state.uploads()
    for name in store:
        name_column, button_column = st.columns([3, 2], vertical_alignment="center")
        name_column.caption(":material/description: " + md_text(name))
        button_column.button("Remove", key=f"sidebar_remove::{hashlib.sha256(name.encode()).hexdigest()[:16]}",
                             on_click=state.remove_upload, args=(name,), type="tertiary", icon=":material/close:",
                             help="Remove this file and its model.")
    replaced = state.replaced_uploads()
    if replaced:
        st.caption(f"Replaced by the new upload of the same name: {md_text(', '.join(replaced))}.")
    return list(store.items())


def _source_section(settings: Settings):
    options = [f"sample:{name}" for name in data.sample_sets()] + ["upload", "folder"]
    options += ["mlflow"] if mlflowsource.tracking_uri() else []  # only when the operator named a server
    # Short labels: at the sidebar's width "A folder on the server (allowed by the operator)" and "Runs logged to
    # MLflow (the operator's tracking server)" were cut; the help says whose they are.
    labels = {"upload": "Upload run files", "folder": "A server folder", "mlflow": "Runs in MLflow"}
    source = settings.source
    shown = "folder" if source.startswith("folder:") or source == "folder" else source
    shown = "mlflow" if source.startswith(mlflowsource.PREFIX) else shown
    if shown not in options:
        shown = options[0]
    # "folder" and "mlflow" stand for the folder or run the setting names: left as they are, they keep it (the
    # setting flipped to "folder" and back on every rerun, and the URL with it, twice a rerun).
    choice = state.choice(
        st.selectbox, "source", "Data source", options, key="sidebar_source",
        fallback=options.index(shown), format_func=lambda o: labels.get(o, f"Sample runs: {o.split(':', 1)[-1]}"),
        means=lambda picked: source if picked == shown else picked,
        help="Sample runs ship with the app. A server folder: one inside the folders the operator allowed. Runs in "
        "MLflow: runs logged to the operator's tracking server (offered only when the operator set one up).",
    )
    if choice.startswith("sample:"):
        name = choice.split(":", 1)[1]
        return data.load_folder(data.SAMPLE_ROOT / name), f"sample runs '{name}'"
    if choice == "upload":
        return data.load_uploads(_upload_section()), "uploaded files"
    if choice == "mlflow":
        return mlflowsource.section(source)
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
        "is aggregated once and then used like a run. Language-model evaluation logs: `lmeval:FOLDER` "
        "(lm-evaluation-harness's --output_path, one model per sub-folder) or `inspect:FOLDER`, with the "
        "options of the command line in brackets, e.g. `lmeval[split=val-test,idk=I don't know]:runs`.",
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


@dataclass(frozen=True)
class Frame:
    """What the sidebar resolved outside the outcome values, and the slot the values are drawn in.

    A change of source, models, splits, recalibration or currency reruns the whole app; the values and the page
    are drawn by :func:`render_values` inside one fragment (app.py), so a new value reruns only them.
    """

    values_slot: object
    report: object
    models: tuple
    source_label: str
    tune_split: str | None
    eval_split: str | None
    calibration: str


def render_sidebar() -> Frame:
    """Draw the sidebar but the outcome values (their slot first), and resolve what does not depend on them."""
    state.init()
    state.app_rerun_done()
    # What the user just changed takes effect before anything showing it is drawn: the labels say the new
    # currency at once.
    state.adopt("currency", {"sidebar_currency": _currency})
    with st.sidebar:
        st.html(COMPACT_PAGE_LIST)
        values_slot = st.container()
        state.value(st.text_input, "currency", "Currency", key="sidebar_currency", max_chars=5, convert=_currency)

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
    return Frame(values_slot=values_slot, report=report, models=tuple(models), source_label=source_label,
                 tune_split=tune_split, eval_split=eval_split, calibration=calibration)


def render_values(frame: Frame) -> state.Selection:
    """Draw the outcome values in their slot and publish the resulting :class:`~dashboard.state.Selection`.

    Runs inside the fragment that also draws the page: a value typed or dragged reruns the two, nothing else.
    """
    if state.app_rerun_needed():  # a page changed a setting drawn outside the fragment (e.g. the models)
        st.rerun(scope="app")
    # A moved slider or a typed box moves the other one on this very run.
    for name, _ in VALUE_FIELDS:
        state.adopt(name, {f"sidebar_{name}_slider": float, f"sidebar_{name}_input": _within_range})
    with frame.values_slot:
        _values_section(state.get())
    settings = state.get()
    report = frame.report
    value_matrix, notes = _resolve_matrix(settings, report, frame.models)
    if settings.source == "upload" and not report.models:
        notes.append(UPLOAD_LINK_NOTE)
    selection = state.Selection(
        settings=settings,
        report=report,
        models=frame.models,
        use_case=settings.use_case,
        value_matrix=value_matrix,
        tune_split=frame.tune_split,
        eval_split=frame.eval_split,
        calibration=frame.calibration,
        currency=settings.currency,
        source_label=frame.source_label,
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
