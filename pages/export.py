"""Export: the policy JSON for a serving system, and importing a saved one (its exact inverse).

Reads top to bottom like the page: the rule and settings the policies are
made with, the per-model summary, the JSON itself with its validation status
and a download button; then "Import a saved policy" from an uploaded file or
pasted text.

The policies come from the same pipeline as the Value page
(``dashboard.data.Workspace``, a cached ``valuecore.Pipeline``): the
thresholds here are the ones shown there, to the last digit. What the page
shows comes from ``dashboard.views.export`` (its view model); the page lays it out. Importing puts
every setting the document records in force (``dashboard.state.request``,
called from the widgets' callbacks, so the sidebar shows them on the rerun
that follows); on the same runs (same SHA-256) the page then exports the very
same policies. On other runs it says which differ, and shows the stored
policies applied as they are (``valuecore.apply_policy_document``, what
``python -m valuecore apply`` prints).
"""

from __future__ import annotations

import streamlit as st

import valuecore as vc

from dashboard import segmentfiles, state
from dashboard.home import segment_choice
from dashboard.data import workspace
from dashboard.safetext import md_text
from dashboard.tables import dataframe as show_dataframe, styled
from dashboard.views import export as view


# ---------------------------------------------------------------- importing
def _restore(text: str | bytes | None, source: str) -> None:
    """Put a saved policy's settings in force (on the rerun that follows) and record what the import said."""
    restored = view.restore(text, source, state.get(), state.current().report.models)
    if restored.status is None:
        state.clear_restore_status()
        return
    if restored.changes:
        state.request(**restored.changes)
    state.set_restore_status(restored.status, restored.document)


def _restore_paste() -> None:
    _restore(state.widget_value("export_paste"), "pasted text")


def _restore_upload() -> None:
    uploaded = state.widget_value("export_upload")
    if uploaded is not None:
        _restore(uploaded.getvalue(), f"file {md_text(uploaded.name)}")


def _policies(selection) -> None:
    """The rule, the per-model summary, the JSON with its validation status and the download."""
    ws = workspace(selection)
    segments = segment_choice(selection, segmentfiles.source_files(selection.settings.source, state.uploads()))
    # with a segment column set, thresholds per segment for every model are one more pick (this page's alone)
    kinds, rule_notes = view.rule_options(ws, selection.models, selection.values, segments)
    kind = state.choice_or_flag(st.selectbox, "rule", "export_segment_rule", vc.recommendation.SEGMENT_RULE,
                                "Decision rule", kinds, format_func=lambda k: view.rule_label(k, segments),
                                key="export_policy_kind", help="The same rule on every page; thresholds per "
                                "segment (with the Segments page's column and caps) on this page only.")
    for note in rule_notes:
        st.caption(note)
    with st.spinner("Fitting the policies and their 95% intervals…"):
        shown = view.build(selection, ws, kind, state.get(), segments)
    st.caption(shown.values_caption)
    if shown.raw_confidence_note:
        st.info(shown.raw_confidence_note, icon=":material/info:")
    if shown.error:
        st.error(shown.error)
        return
    for note in shown.notes:
        st.warning(note)
    st.subheader("What the policy says")
    st.info(shown.headline)
    # "0.9400" beside "$0.94" on the first page: the numbers read as everywhere (valuecore.wording).
    show_dataframe(view.summary_table(shown.summary, selection), column_order=list(shown.summary_columns),
                   hide_index=True)
    if shown.class_thresholds is not None:
        st.caption("Per-class thresholds: act on a prediction of a class when its confidence is at least:")
        show_dataframe(shown.class_thresholds, hide_index=True)
    with st.expander("All columns (rule, calibration, splits)", icon=":material/table_view:"):
        show_dataframe(view.summary_table(shown.summary, selection), column_order=list(shown.details_columns),
                       hide_index=True)
    if shown.schema_error:
        st.error(shown.schema_error)
    else:
        st.success(f"Valid against the policy schema (schema_version {shown.schema_version}).")
    st.download_button(
        "Download policy JSON",
        shown.text,
        file_name="policy.json",
        mime="application/json",
        key="export_download",
        icon=":material/download:",
        on_click="ignore",  # downloading needs no rerun
    )
    st.caption("Check it later against newly labelled data, exactly as stored: "
               "`python -m valuecore apply policy.json RUNS... [--split NAME]`.")
    with st.expander("The policy JSON", expanded=True):
        st.code(shown.text, language="json", height=420)


def _stored(selection, status) -> None:
    """The stored policies of an imported document, and what they are worth on the loaded runs."""
    document = state.restored_document()
    if not document:
        return
    st.markdown("**The stored policies**")
    policies = view.stored(document, status, selection.report.models)
    # the stored value reads in money as everywhere, not as a bare 0.9412
    show_dataframe(view.summary_table(policies.summary, selection), column_order=list(view.STORED_COLUMNS),
                   hide_index=True)
    if policies.class_thresholds is not None:
        show_dataframe(policies.class_thresholds, hide_index=True)
    if policies.same_runs:
        st.caption("The loaded run files are the ones these policies were made from (same SHA-256), so "
                   "the export above re-creates them exactly.")
    else:
        st.warning("Some loaded run files are not the ones these policies were made from (see above). "
                   "The export above re-tunes the policies on the loaded runs; to keep the stored "
                   "thresholds as they are, use the stored JSON itself. Here is what the stored policies "
                   "are worth on the loaded runs, applied as stored:")
        if policies.applied_error:
            st.error(policies.applied_error)
        else:
            show_dataframe(styled(policies.applied, view.summary_formats(selection)), hide_index=True)


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

if not selection.models:
    st.info("No model is selected: load run files and pick models in the sidebar to export their policies.")
else:
    _policies(selection)

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

status = state.restore_status()
if status is not None and not status.ok:
    st.error(status.message)
elif status is not None:
    st.success(status.message)
    for warning in status.warnings:
        st.warning(warning)
    _stored(selection, status)
