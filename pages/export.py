"""Export: the policy JSON for a serving system, and restoring a saved one.

Reads top to bottom like the page: what will be exported (policy kind, use
case, calibration from the sidebar), the per-model summary, the JSON itself
with its validation status and a download button; then "Restore a saved
policy" from an uploaded file or pasted text.

Restoring runs in widget callbacks: they run before the sidebar is drawn, so
the sidebar's own widget keys can be set there and the sidebar shows the
restored use case on the same rerun (setting a widget's key after the widget
is drawn is refused by Streamlit, and ``st.rerun()`` inside a callback is a
no-op, so no explicit rerun is needed).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.sidebar import SLIDER_LIMIT, VALUE_FIELDS, VALUE_MODE_REQUEST, matrix_key
from dashboard.state import CALIBRATION_METHODS, current
from dashboard.views import POLICY_LABELS
from dashboard.tables import dataframe as show_dataframe
from dashboard.safetext import md_text
from valuecore import POLICY_KINDS, UseCase, ValueMatrix
from valuecore._calibration import describe_calibration
from valuecore._policy_json import (
    PolicyDocument,
    align_values,
    build_policy_document,
    check_against_runs,
    validate_policy_document,
    values_to_dict,
)

STATUS_KEY = "export_restore_status"
# The pages' policy-kind widgets; each is drawn with index= from the canonical "policy_kind".
KIND_WIDGETS = ("export_policy_kind", "value_policy_kind", "compare_policy_kind", "monitor_policy_kind")
RESTORED_KEY = "restored_policy_document"


# ---------------------------------------------------------------- building
@st.cache_resource(show_spinner=False, max_entries=64)
def _build(key: str, _models: dict, _values, kind: str, calibration: str, tune: str | None, evaluated: str | None):
    """build_policy_document, cached per (runs, values, kind, calibration, splits) in ``key``."""
    return build_policy_document(
        _models, _values, kind=kind, calibration_method=calibration, tune_split=tune, eval_split=evaluated
    )


def _thresholds_text(policy: dict) -> str:
    if policy.get("class_thresholds") is not None:
        return ", ".join(f"{c}: {'never' if t is None else f'{t:.4f}'}" for c, t in policy["class_thresholds"].items())
    if policy["kind"] in ("accept_all", "expected_value"):
        return "–"
    return "always abstain" if policy.get("threshold") is None else f"{policy['threshold']:.4f}"


def _summary(document: dict, currency: str) -> pd.DataFrame:
    rows = []
    for entry in document["models"]:
        evaluation = entry.get("evaluation") or {}
        ci = evaluation.get("ci95") or [None, None]
        rows.append(
            {
                "Model": entry["model"],
                "Policy": entry["policy"]["kind"],
                "Threshold(s)": _thresholds_text(entry["policy"]),
                "Calibration": describe_calibration(entry["policy"]["calibration"]),
                "Tuned on": entry["tuned_on"]["split"] or "nothing (from the values)",
                "Evaluated on": evaluation.get("split"),
                f"Value per item ({currency})": evaluation.get("value_per_item"),
                "95% low": ci[0],
                "95% high": ci[1],
                "Coverage": evaluation.get("coverage"),
                "Estimated": bool(evaluation.get("estimated", False)),
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- restoring
def _set_choice(canonical: str, widget_key: str, value) -> None:
    """Set a sidebar choice: the canonical key, and drop the widget's own state so the
    sidebar redraws the widget from the canonical key (it passes ``index=`` from it)."""
    st.session_state[canonical] = value
    st.session_state.pop(widget_key, None)


def _set_values(values) -> str:
    """Write the restored use case into the canonical keys and the sidebar's widget keys."""
    if isinstance(values, UseCase):
        for (name, _), value in zip(VALUE_FIELDS, (values.v_correct, values.v_abstain, values.v_wrong)):
            st.session_state[name] = value
            st.session_state[f"sidebar_{name}_input"] = value
            st.session_state[f"sidebar_{name}_slider"] = max(-SLIDER_LIMIT, min(SLIDER_LIMIT, value))
        st.session_state[VALUE_MODE_REQUEST] = "simple"  # the sidebar switches "Values" before drawing
        return f"correct {values.v_correct:g}, abstain {values.v_abstain:g}, wrong {values.v_wrong:g}"
    st.session_state[matrix_key(values.classes)] = np.asarray(values.values, dtype=float)
    # The Cost matrix page keys its editor by this version: a new one shows the restored matrix.
    st.session_state["cost_matrix_version"] = st.session_state.get("cost_matrix_version", 0) + 1
    st.session_state[VALUE_MODE_REQUEST] = "matrix"
    return f"a value matrix for the classes {', '.join(values.classes)}"


def _restore(text: str | bytes | None, source: str) -> None:
    """Parse, validate, check against the loaded runs and apply a saved policy document."""
    if text is None or (isinstance(text, str) and not text.strip()):
        st.session_state.pop(STATUS_KEY, None)
        return
    try:
        document = PolicyDocument.from_json(text)
    except ValueError as error:
        st.session_state[STATUS_KEY] = {
            "level": "error",
            "message": f"Nothing was restored from the {source}: {md_text(error)}.",
        }
        return
    selection = st.session_state.get("selection")
    runs = selection.report.models if selection is not None else {}
    try:
        warnings = check_against_runs(document, runs)
    except ValueError as error:
        st.session_state[STATUS_KEY] = {
            "level": "error",
            "message": f"Nothing was restored: the policy does not fit the loaded runs. {md_text(error)}.",
        }
        return
    values = document.values
    if isinstance(values, ValueMatrix):
        loaded = [e for e in document.entries if e.model in runs]
        if loaded:
            values = align_values(values, runs[loaded[0].model].classes)
    described = _set_values(values)

    notes = []
    kinds = {e.policy.kind for e in document.entries}
    if len(kinds) == 1:
        st.session_state["policy_kind"] = kinds.pop()
        for widget_key in KIND_WIDGETS:  # redrawn from "policy_kind"
            st.session_state.pop(widget_key, None)
    else:
        notes.append(f"The models use different policy kinds ({', '.join(sorted(kinds))}); the policy kind was kept.")
    methods = {e.policy.calibration.get("method", "none") for e in document.entries}
    if len(methods) == 1 and (method := next(iter(methods))) in CALIBRATION_METHODS:
        _set_choice("calibration", "sidebar_calibration", method)
    else:
        notes.append(
            f"The recalibration ({', '.join(sorted(methods))}) cannot be chosen in the sidebar; it was kept as it was."
        )
    loaded_models = [m for m in document.models if m in runs]
    if loaded_models:
        st.session_state["sidebar_models"] = loaded_models
    for name, getter in (
        ("tune_split", lambda e: e.tuned_on.get("split")),
        ("eval_split", lambda e: (e.evaluation or {}).get("split")),
    ):
        splits = {getter(e) for e in document.entries if e.model in runs}
        if len(splits) == 1 and (split := next(iter(splits))) and all(split in runs[m].splits for m in loaded_models):
            _set_choice(name, f"sidebar_{name}", split)
    st.session_state[RESTORED_KEY] = document.to_dict()
    st.session_state[STATUS_KEY] = {
        "level": "success",
        "message": f"Restored from the {source}: {described}; {len(document.entries)} model polic"
        + ("y." if len(document.entries) == 1 else "ies."),
        "warnings": warnings + notes,
    }


def _restore_paste() -> None:
    _restore(st.session_state.get("export_paste"), "pasted text")


def _restore_upload() -> None:
    uploaded = st.session_state.get("export_upload")
    if uploaded is not None:
        _restore(uploaded.getvalue(), f"file {md_text(uploaded.name)}")


# ---------------------------------------------------------------- the page
selection = current()
st.title("Export policy")
st.markdown(
    "The policy JSON tells a serving system, for each model, when to act on a prediction and when to hand the "
    "item over: the accept rule, the thresholds, the recalibration to apply first, and what the policy was worth "
    "on the evaluated split. It uses the use case, recalibration and splits chosen in the sidebar."
)

models = list(selection.models)
if not models:
    st.info("No model is selected: load run files and pick models in the sidebar to export their policies.")
else:
    default_kind = st.session_state.get("policy_kind", "threshold")
    kind = st.selectbox(
        "Policy kind",
        list(POLICY_KINDS),
        index=list(POLICY_KINDS).index(default_kind) if default_kind in POLICY_KINDS else 1,
        format_func=POLICY_LABELS.get,
        key="export_policy_kind",
    )
    st.session_state["policy_kind"] = kind  # one policy kind across the pages
    values = selection.values
    for note in selection.notes:
        st.warning(note + " The three values are exported instead.")
    what = (
        "the per-class value matrix"
        if isinstance(values, ValueMatrix)
        else (
            f"correct {selection.money(values.v_correct)}, abstain {selection.money(values.v_abstain)}, "
            f"wrong {selection.money(values.v_wrong)}"
        )
    )
    st.caption(
        f"Use case: {what}. Recalibration: {selection.calibration}. Tuned on {selection.tune_split!r}, "
        f"evaluated on {selection.eval_split!r}."
    )
    runs = {m: selection.report.models[m] for m in models}
    key = json.dumps(
        {
            "runs": [(m, r.sha256) for m, r in runs.items()],
            "values": values_to_dict(values),
            "kind": kind,
            "calibration": selection.calibration,
            "splits": [selection.tune_split, selection.eval_split],
        },
        sort_keys=True,
    )
    document = None
    try:
        with st.spinner("Fitting the policies and their 95% intervals…"):
            document, notes = _build(
                key, runs, values, kind, selection.calibration, selection.tune_split, selection.eval_split
            )
    except ValueError as error:
        st.error(f"No policy could be built: {error}")
    if document is not None:
        for note in notes:
            st.warning(note)
        data = document.to_dict()
        text = document.to_json()
        st.subheader("What the policy says")
        show_dataframe(
            _summary(data, selection.currency),
            hide_index=True,
            column_config={
                f"Value per item ({selection.currency})": st.column_config.NumberColumn(format="%.4f"),
                "95% low": st.column_config.NumberColumn(format="%.4f"),
                "95% high": st.column_config.NumberColumn(format="%.4f"),
                "Coverage": st.column_config.NumberColumn(format="percent"),
            },
        )
        try:
            validate_policy_document(json.loads(text))
        except ValueError as error:
            st.error(f"The document does not match the policy schema: {error}")
        else:
            st.success(f"Valid against the policy schema (schema_version {data['schema_version']}).")
        st.download_button(
            "Download policy JSON",
            text,
            file_name="policy.json",
            mime="application/json",
            key="export_download",
            icon=":material/download:",
            on_click="ignore",  # downloading needs no rerun
        )
        with st.expander("The policy JSON", expanded=True):
            st.code(text, language="json", height=420)

# -- restore a saved policy
st.header("Restore a saved policy")
st.markdown(
    "Load a policy JSON saved earlier: its use case (or value matrix), policy kind, recalibration, models and "
    "splits are set in the sidebar, and its thresholds are checked against the loaded runs' classes."
)
st.file_uploader("Policy JSON file", type=["json"], key="export_upload", on_change=_restore_upload)
st.text_area(
    "…or paste the JSON here",
    key="export_paste",
    height=160,
    on_change=_restore_paste,
    placeholder='{"schema_version": 1, "use_case": {...}, "models": [...]}',
)
st.button("Restore from the pasted JSON", key="export_restore", on_click=_restore_paste)

status = st.session_state.get(STATUS_KEY)
if status:
    if status["level"] == "error":
        st.error(status["message"])
    else:
        st.success(status["message"])
        for warning in status.get("warnings", ()):
            st.warning(warning)
        restored = st.session_state.get(RESTORED_KEY)
        if restored:
            st.markdown("**Restored thresholds**")
            show_dataframe(_summary(restored, selection.currency), hide_index=True)
