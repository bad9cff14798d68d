"""The sidebar shared by every page: data source, models, use case, splits."""

from __future__ import annotations

import math

import streamlit as st

from valuecore import UseCase, ValueMatrix

from . import data, serverfiles
from .limits import CLAMP_NOTE, clamp_value
from .state import CALIBRATION_METHODS, Selection, init_state, write_url

# (label, v_correct, v_abstain, v_wrong)
PRESETS = {
    "Accuracy: an error costs no more than a hand-off (ω = 0)": (1.0, 0.0, 0.0),
    "An error is as bad as a correct answer is good (ω = 1)": (1.0, 0.0, -1.0),
    "Errors 4× as bad as a correct answer is good (ω = 4)": (1.0, 0.0, -4.0),
    "Errors 10× as bad as a correct answer is good (ω = 10)": (1.0, 0.0, -10.0),
    "Support desk: automation saves $5, a hand-off costs $1, an error costs $30": (5.0, -1.0, -30.0),
}
SLIDER_LIMIT = 50.0
HOW_VALUE_WORKS = "pages/how_value_works.py"  # linked from the sidebar on every page
VALUE_MODE_REQUEST = "value_mode_request"  # session key a page sets to switch "Values" before the sidebar draws
VALUE_FIELDS = (("v_correct", "Correct answer"), ("v_abstain", "Abstention (hand-off)"), ("v_wrong", "Wrong answer"))


def _copy(from_key: str, to_key: str, canonical: str) -> None:
    value = float(st.session_state[from_key])
    st.session_state[canonical] = value
    st.session_state[to_key] = max(-SLIDER_LIMIT, min(SLIDER_LIMIT, value)) if to_key.endswith("_slider") else value


def _apply_preset() -> None:
    label = st.session_state.get("sidebar_preset")
    if label in PRESETS:
        for (name, _), value in zip(VALUE_FIELDS, PRESETS[label]):
            st.session_state[name] = value
            st.session_state[f"sidebar_{name}_input"] = value
            st.session_state[f"sidebar_{name}_slider"] = max(-SLIDER_LIMIT, min(SLIDER_LIMIT, value))


def _value_widgets(currency: str) -> UseCase:
    for name, label in VALUE_FIELDS:
        value = float(st.session_state[name])
        clipped = max(-SLIDER_LIMIT, min(SLIDER_LIMIT, value))
        st.session_state.setdefault(f"sidebar_{name}_input", value)
        st.session_state.setdefault(f"sidebar_{name}_slider", clipped)
        slider_col, input_col = st.columns([3, 2])
        # value= repeats the stored value on purpose: it becomes the widget's default in the browser,
        # so a widget the browser re-creates during a quick page change comes back with the user's
        # value, not with -50 / 0, which its on_change would then store. (It does not reset the
        # widget: keyed sliders and number inputs keep their identity when only the default changes.)
        slider_col.slider(
            f"{label} ({currency})",
            min_value=-SLIDER_LIMIT,
            max_value=SLIDER_LIMIT,
            value=clipped,
            step=0.5,
            key=f"sidebar_{name}_slider",
            on_change=_copy,
            args=(f"sidebar_{name}_slider", f"sidebar_{name}_input", name),
        )
        input_col.number_input(
            f"{label}, exact",
            value=value,
            step=0.5,
            format="%g",
            key=f"sidebar_{name}_input",
            on_change=_copy,
            args=(f"sidebar_{name}_input", f"sidebar_{name}_slider", name),
            label_visibility="hidden",
        )
    values = [clamp_value(st.session_state[name]) for name, _ in VALUE_FIELDS]
    if any(changed for _, changed in values):
        st.warning(CLAMP_NOTE)
    return UseCase(*(value for value, _ in values))


def _source_report():
    options = [f"sample:{name}" for name in data.sample_sets()] + ["upload", "folder"]
    labels = {"upload": "Upload run files", "folder": "A folder on the server (allowed by the operator)"}
    source = st.session_state.get("source", options[0] if options else "upload")
    if source.startswith("folder:"):
        st.session_state["sidebar_folder"] = st.session_state.get("sidebar_folder", source[len("folder:"):])
        source = "folder"
    if source not in options:
        source = options[0]
    choice = st.selectbox(
        "Data source",
        options,
        index=options.index(source),
        format_func=lambda o: labels.get(o, f"Sample runs: {o.split(':', 1)[-1]}"),
        key="sidebar_source",
    )
    if choice.startswith("sample:"):
        st.session_state["source"] = choice
        name = choice.split(":", 1)[1]
        return data.load_folder(data.SAMPLE_ROOT / name), f"sample runs '{name}'"
    if choice == "upload":
        st.session_state["source"] = "upload"
        files = st.file_uploader(
            "Run files (CSV or Parquet, one per model)",
            type=["csv", "parquet"],
            accept_multiple_files=True,
            key="sidebar_upload",
            help="See docs/run-format.md: y_true, proba_<class> columns (or y_pred + confidence), "
            "optional split, weight, id, timestamp.",
        )
        return data.load_uploads([(f.name, f.getvalue()) for f in files or []]), "uploaded files"
    return serverfiles.folder_source()


def _split_choice(label: str, splits: list[str], preferred: tuple[str, ...], key: str, state_key: str) -> str | None:
    if not splits:
        return None
    current = st.session_state.get(state_key)
    default = current if current in splits else next((s for s in preferred if s in splits), splits[0])
    choice = st.selectbox(label, splits, index=splits.index(default), key=key)
    st.session_state[state_key] = choice
    return choice


def render_sidebar() -> Selection:
    """Draw the sidebar and store the resulting :class:`Selection` in session state."""
    init_state()
    # A page may ask to switch the value mode (e.g. the Cost matrix page after an edit); it is
    # applied here, before the radio below is drawn, because a drawn widget's state is read-only.
    requested = st.session_state.pop(VALUE_MODE_REQUEST, None)
    if requested in ("simple", "matrix"):
        st.session_state["value_mode"] = requested
        st.session_state["sidebar_value_mode"] = requested
    with st.sidebar:
        report, source_label = _source_report()
        loaded = list(report.models)
        wanted = st.session_state.pop("url_models", None)
        if "sidebar_models" not in st.session_state or wanted is not None:
            st.session_state["sidebar_models"] = [m for m in (wanted or loaded) if m in loaded] or loaded
        else:
            kept = [m for m in st.session_state["sidebar_models"] if m in loaded]
            # When the loaded models change (another source, an upload), keep what is still
            # there or select them all; otherwise respect the user's choice, even an empty one.
            same_source = st.session_state.get("_models_offered") == loaded
            st.session_state["sidebar_models"] = kept if (kept or same_source) else loaded
        st.session_state["_models_offered"] = loaded
        models = st.multiselect("Models", loaded, key="sidebar_models")

        st.divider()
        st.subheader("What is each outcome worth?")
        currency = st.text_input(
            "Currency", value=st.session_state.get("currency", "$"), key="sidebar_currency", max_chars=5
        )
        st.session_state["currency"] = currency
        st.selectbox(
            "Preset", ["(keep my values)", *PRESETS], key="sidebar_preset", on_change=_apply_preset
        )
        use_case = _value_widgets(currency)
        omega = use_case.omega
        omega_text = "∞" if not math.isfinite(omega) else f"{omega:.3g}"
        st.metric("Penalty ω", omega_text, help=(
            "ω = (abstain − wrong) / (correct − abstain). A wrong answer costs ω times what a correct one earns, "
            "both measured against handing the item over."))
        regime = use_case.regime
        if regime.kind == "normal":
            st.caption(regime.reason)
        else:
            st.warning(regime.reason)

        value_mode = st.radio(
            "Values",
            ["simple", "matrix"],
            index=0 if st.session_state.get("value_mode") != "matrix" else 1,
            format_func=lambda m: (
                "Three values (above)" if m == "simple" else "Per-class value matrix (Cost matrix page)"
            ),
            key="sidebar_value_mode",
            horizontal=False,
        )
        st.session_state["value_mode"] = value_mode

        st.divider()
        splits = sorted({s for m in models for s in report.models[m].splits})
        tune_split = _split_choice(
            "Tune thresholds on", splits, ("val", "validation", "tune"), "sidebar_tune_split", "tune_split"
        )
        eval_split = _split_choice("Evaluate on", splits, ("test", "eval"), "sidebar_eval_split", "eval_split")
        calibration = st.selectbox(
            "Recalibrate before thresholding",
            CALIBRATION_METHODS,
            index=CALIBRATION_METHODS.index(st.session_state.get("calibration", "none"))
            if st.session_state.get("calibration") in CALIBRATION_METHODS else 0,
            key="sidebar_calibration",
            help="Fitted on the tuning split. Temperature scaling needs class probabilities.",
        )
        st.session_state["calibration"] = calibration

        st.divider()
        st.page_link(HOW_VALUE_WORKS, label="How value works", icon=":material/help:",
                     help="What ω means, tuned vs calibrated thresholds, VOC curves: a short read.")

    value_matrix = None
    notes = []
    if value_mode == "matrix" and models:
        value_matrix = matrix_for(report, models, use_case)
        if value_matrix is None:
            notes.append("The selected models do not share one class set, so the per-class matrix cannot apply.")
    selection = Selection(
        report=report,
        models=tuple(models),
        use_case=use_case,
        value_matrix=value_matrix,
        tune_split=tune_split,
        eval_split=eval_split,
        calibration=calibration,
        currency=currency,
        source_label=source_label,
        notes=tuple(notes),
    )
    st.session_state["selection"] = selection
    write_url(selection)
    return selection


def matrix_key(classes) -> str:
    return "value_matrix::" + "|".join(classes)


def matrix_for(report, models, use_case: UseCase) -> ValueMatrix | None:
    """The edited value matrix for the selected models' classes (from the use case until edited)."""
    class_sets = {report.models[m].classes for m in models}
    if len(class_sets) != 1:
        return None
    classes = next(iter(class_sets))
    stored = st.session_state.get(matrix_key(classes))
    if stored is None:
        return use_case.value_matrix(classes)
    return ValueMatrix(classes, stored)
