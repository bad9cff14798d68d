"""Export: the policy JSON for a serving system, and importing a saved one (its exact inverse).

Reads top to bottom like the page: the rule and settings the policies are
made with, the per-model summary, the JSON itself with its validation status
and a download button; then "Import a saved policy" from an uploaded file or
pasted text.

The policies come from the same pipeline as the Value page
(``dashboard.data.Workspace``, a cached ``valuecore.Pipeline``): the
thresholds here are the ones shown there, to the last digit. Importing puts
every setting the document records in force (``dashboard.state.request``,
called from the widgets' callbacks, so the sidebar shows them on the rerun
that follows); on the same runs (same SHA-256) the page then exports the very
same policies. On other runs it says which differ, and shows the stored
policies applied as they are (``valuecore.apply_policy_document``, what
``python -m valuecore apply`` prints).
"""

from __future__ import annotations

import json
from dataclasses import fields

import pandas as pd
import streamlit as st

import valuecore as vc

from dashboard import home, state, views
from dashboard.data import workspace
from dashboard.settings import document_with_settings, settings_from_document
from dashboard.tables import compact_dataframe
from dashboard.safetext import md_text
from dashboard.tables import dataframe as show_dataframe

STATUS_KEY = "export_restore_status"
RESTORED_KEY = "export_restored_document"


# ---------------------------------------------------------------- helpers
def _threshold(value) -> str:
    """Enough digits to reproduce the decision (never 1.0000 for 0.999997): people copy it from here."""
    return "never (abstain)" if value is None else vc.wording.threshold(float(value))


def _thresholds_text(policy: dict) -> str:
    if policy.get("class_thresholds") is not None:
        return ", ".join(f"{c}: {_threshold(t)}" for c, t in policy["class_thresholds"].items())
    if policy["kind"] in ("accept_all", "expected_value"):
        return "–"
    return "always abstain" if policy.get("threshold") is None else _threshold(policy["threshold"])


def _summary(document: dict, currency: str) -> pd.DataFrame:
    rows = []
    for entry in document["models"]:
        evaluation = entry.get("evaluation") or {}
        ci = evaluation.get("ci95") or [None, None]
        rows.append(
            {
                "Model": entry["model"],
                "Policy": views.POLICY_LABELS.get(entry["policy"]["kind"], entry["policy"]["kind"]),
                "Threshold(s)": _thresholds_text(entry["policy"]),
                "Calibration": vc.calibration.describe_calibration(entry["policy"]["calibration"]),
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


def _applied_table(applied: list, currency: str) -> pd.DataFrame:
    rows = []
    for item in applied:
        evaluation = item.evaluation or {}
        rows.append({
            "Model": item.model,
            "Same run file": {True: "yes", False: "no (other SHA-256)", None: "unknown"}[item.same_run],
            "Split": item.split,
            f"Value per item ({currency})": evaluation.get("value_per_item"),
            "Coverage": evaluation.get("coverage"),
            "Note": item.note,
        })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- importing
def _restore(text: str | bytes | None, source: str) -> None:
    """Parse, validate and check a saved policy against the loaded runs, then put its settings in force."""
    if text is None or (isinstance(text, str) and not text.strip()):
        st.session_state.pop(STATUS_KEY, None)
        return
    try:
        data = vc.policy_json.load_json_limited(text, "the policy file")
        document = vc.policy_json.PolicyDocument.from_dict(data)
        restored, notes = settings_from_document(data, state.get())
    except ValueError as error:  # LimitError and JSON errors are ValueErrors, in words
        st.session_state[STATUS_KEY] = {"level": "error", "message": f"Nothing was restored from the {source}: "
                                                                      f"{md_text(error)}."}
        return
    runs = state.current().report.models
    try:
        warnings = vc.policy_json.check_against_runs(document, runs)
    except ValueError as error:
        st.session_state[STATUS_KEY] = {
            "level": "error",
            "message": f"Nothing was restored: the policy does not fit the loaded runs. {md_text(error)}.",
        }
        return
    current = state.get()
    changes = {f.name: getattr(restored, f.name) for f in fields(restored)
               if getattr(restored, f.name) != getattr(current, f.name)}
    state.request(**changes)
    same = all(e.model in runs and e.run_sha256 == runs[e.model].sha256 for e in document.entries)
    stored = document.recommendation
    recommends = "" if stored is None else (
        " The document recommends no model." if stored["model"] is None else
        f" The document recommends {md_text(stored['model'])} with {vc.wording.rule_name(stored['policy'])}.")
    values = document.values
    described = ("a value matrix for the classes " + md_text(", ".join(values.classes))
                 if isinstance(values, vc.ValueMatrix)
                 else f"correct {values.v_correct!r}, hand-off {values.v_abstain!r}, wrong {values.v_wrong!r}")
    st.session_state[RESTORED_KEY] = data
    st.session_state[STATUS_KEY] = {
        "level": "success",
        "message": f"Restored from the {source}: {described}; decision rule, recalibration, splits and models "
        f"as recorded ({len(document.entries)} model polic" + ("y)." if len(document.entries) == 1 else "ies).")
        + recommends,
        "warnings": [md_text(w) for w in warnings + notes],  # they quote the document's names and keys
        "same_runs": same,
    }


def _restore_paste() -> None:
    _restore(st.session_state.get("export_paste"), "pasted text")


def _restore_upload() -> None:
    uploaded = st.session_state.get("export_upload")
    if uploaded is not None:
        _restore(uploaded.getvalue(), f"file {md_text(uploaded.name)}")


# ---------------------------------------------------------------- the page
selection = state.current()
st.title("Export policy")
st.markdown(
    "The policy JSON tells a serving system, for each model, when to act on a prediction and when to hand the "
    "item over: the accept rule, the thresholds, the recalibration to apply first, and what the policy was worth "
    "on the evaluated split. It holds the very policies the Value page shows (same settings, same pipeline)."
)
for note in selection.notes:
    st.warning(note)

models = list(selection.models)
if not models:
    st.info("No model is selected: load run files and pick models in the sidebar to export their policies.")
else:
    ws = workspace(selection)
    values = selection.values
    kinds, rule_notes = views.rule_options(ws, models, values)
    kind = state.choice(st.selectbox, "rule", "Decision rule", kinds, format_func=views.POLICY_LABELS.get,
                        key="export_policy_kind", help="The same rule on every page.")
    for note in rule_notes:
        st.caption(note)
    what = (
        "the per-class value matrix"
        if isinstance(values, vc.ValueMatrix)
        else (
            f"correct {selection.money(values.v_correct)}, hand-off {selection.money(values.v_abstain)}, "
            f"wrong {selection.money(values.v_wrong)}"
        )
    )
    st.caption(
        f"Values: {what}. Recalibration: {selection.calibration}. Tuned on {views.split_text(selection.tune_split)}, "
        f"evaluated on {views.split_text(selection.eval_split)}."
    )
    document = None
    try:
        with st.spinner("Fitting the policies and their 95% intervals…"):
            document, notes = ws.document(models, kind, values)
            # The one recommendation of the first page; its model's entry holds the recommended rule.
            recommendation = home.page_recommendation(ws, models, values)
            reason = vc.wording.recommendation_reason(recommendation, selection.currency)
            document, more = vc.recommended_document(ws, document, recommendation, values, reason)
            notes = [*notes, *more]  # escaped once, where they are shown
    except ValueError as error:
        st.error(f"No policy could be built: {md_text(error)}")
    if document is not None:
        for note in notes:
            st.warning(md_text(note))  # the pipeline's words quote model and split names
        data = document_with_settings(document, state.get())
        text = json.dumps(data, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
        st.subheader("What the policy says")
        st.info(md_text(f"{vc.wording.recommendation_headline(recommendation)} {reason} The JSON's "
                        "\"recommendation\" names it."))
        compact_dataframe(
            _summary(data, selection.currency),
            ["Model", "Threshold(s)", f"Value per item ({selection.currency})", "95% low", "95% high", "Coverage"],
            details="All columns (policy, calibration, splits)",
            hide_index=True,
            column_config={
                f"Value per item ({selection.currency})": st.column_config.NumberColumn(format="%.4f"),
                "95% low": st.column_config.NumberColumn(format="%.4f"),
                "95% high": st.column_config.NumberColumn(format="%.4f"),
                "Coverage": st.column_config.NumberColumn(format="percent"),
            },
        )
        try:
            vc.policy_json.validate_policy_document(json.loads(text))
        except ValueError as error:
            st.error(f"The document does not match the policy schema: {md_text(error)}")
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
        st.caption("Check it later against newly labelled data, exactly as stored: "
                   "`python -m valuecore apply policy.json RUNS... [--split NAME]`.")
        with st.expander("The policy JSON", expanded=True):
            st.code(text, language="json", height=420)

# -- import a saved policy
st.header("Import a saved policy")
st.markdown(
    "Load a policy JSON saved earlier: every setting it records is put in force on every page (values or value "
    "matrix, decision rule, recalibration, splits, models). On the same run files (same SHA-256) the policies "
    "above are then the stored ones, digit for digit; on other runs they are re-tuned, and the stored ones are "
    "shown below as they are."
)
st.file_uploader("Policy JSON file", type=["json"], key="export_upload", on_change=_restore_upload)
st.text_area(
    "…or paste the JSON here",
    key="export_paste",
    height=160,
    on_change=_restore_paste,
    placeholder=f'{{"schema_version": {vc.policy_json.SCHEMA_VERSION}, "use_case": {{...}}, "models": [...]}}',
)
st.button("Import the pasted JSON", key="export_restore", on_click=_restore_paste)

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
            st.markdown("**The stored policies**")
            show_dataframe(_summary(restored, selection.currency), hide_index=True)
            stored = vc.policy_json.PolicyDocument.from_dict(restored)
            if status.get("same_runs"):
                st.caption("The loaded run files are the ones these policies were made from (same SHA-256), so "
                           "the export above re-creates them exactly.")
            else:
                st.warning("Some loaded run files are not the ones these policies were made from (see above). "
                           "The export above re-tunes the policies on the loaded runs; to keep the stored "
                           "thresholds as they are, use the stored JSON itself. Here is what the stored policies "
                           "are worth on the loaded runs, applied as stored:")
                try:
                    applied = vc.apply_policy_document(stored, selection.report.models)
                except ValueError as error:
                    st.error(f"The stored policies cannot be applied to the loaded runs: {md_text(error)}.")
                else:
                    show_dataframe(_applied_table(applied, selection.currency), hide_index=True,
                                 column_config={"Coverage": st.column_config.NumberColumn(format="percent")})
