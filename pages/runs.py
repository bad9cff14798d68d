"""Runs: what is loaded, and what is wrong with the files that did not load.

Reads top to bottom like the page: problems found in the files, the table of
models, the table of splits, then how to bring your own runs. What it shows
comes from ``dashboard.views.runs`` (its view model); the page lays it out.
"""

from pathlib import Path

import streamlit as st

from dashboard.state import current
from dashboard.tables import dataframe as show_dataframe
from dashboard.views import runs as view

shown = view.build(current())

st.title("Runs")
st.caption(shown.source)

# ---- problems: every error and warning, in plain words; good files still load
if shown.errors or shown.warnings:
    st.subheader("Problems found in the files")
    if shown.errors_note:
        st.caption(shown.errors_note)
    for problem in shown.errors:
        st.error(problem, icon=":material/error:")
    for problem in shown.warnings:
        st.warning(problem, icon=":material/warning:")

# ---- models
if shown.runs is None:
    st.info(shown.empty)
    for note in shown.empty_notes:
        st.caption(note)
else:
    st.subheader(shown.heading)
    accuracy_columns = {
        column: st.column_config.NumberColumn(column.capitalize(), format="percent", help="Accuracy without hand-offs")
        for column in shown.accuracy_columns
    }
    config = {
        "model": st.column_config.TextColumn("Model"),
        "selected": st.column_config.CheckboxColumn("Selected", help="Selected in the sidebar"),
        "classes": st.column_config.TextColumn("Classes"),
        "probabilities": st.column_config.TextColumn(
            "Probabilities", help="'top label only': the file has y_pred and confidence, not one column per class"
        ),
        "splits": st.column_config.TextColumn("Splits (rows)"),
        **accuracy_columns,
        "file": st.column_config.TextColumn("File"),
        "sha256": st.column_config.TextColumn("SHA-256", help="First 12 hex digits of the file's hash"),
    }
    show_dataframe(shown.runs, column_order=list(shown.shown_first), hide_index=True, width="stretch",
                   column_config=config)
    with st.expander("All columns (classes, probabilities, file, hash)", icon=":material/table_view:"):
        show_dataframe(shown.runs, column_order=list(shown.details), hide_index=True, width="stretch",
                       column_config=config)
    if shown.top_label_note:
        st.caption(shown.top_label_note)
    for note in shown.model_abstention_notes:  # a language model's own "I don't know", told from the threshold's
        st.caption(note)
    with st.expander("Per split"):
        show_dataframe(
            shown.splits,
            hide_index=True,
            width="stretch",
            column_config={
                "model": st.column_config.TextColumn("Model"),
                "split": st.column_config.TextColumn("Split"),
                "rows": st.column_config.NumberColumn("Rows"),
                "weighted items": st.column_config.NumberColumn("Weighted items", format="%.0f"),
                "labelled": st.column_config.CheckboxColumn("Labelled"),
                "accuracy": st.column_config.NumberColumn("Accuracy", format="percent"),
                "probabilities": st.column_config.TextColumn("Probabilities"),
                "declined by the model": st.column_config.NumberColumn(
                    "Declined by the model", format="%.0f", help="Items the model itself declined ('I don't know')"),
                "false abstentions": st.column_config.NumberColumn(
                    "False abstentions", format="%.0f", help="Declined, yet the model's top choice was right"),
            },
        )

# ---- how to bring your own runs
with st.expander("How to bring your own runs", icon=":material/upload_file:"):
    st.markdown(
        """
One file per model (CSV or Parquet), one row per prediction:

- `y_true`: the true class (leave it out, or empty, for production data without labels);
- one `proba_<class>` column per class, e.g. `proba_cat`, `proba_dog` (rows sum to 1),
  **or** just `y_pred` and `confidence` when only the top label is known;
- optional: `split` (`val`, `test`, `prod`…), `weight`, `id` (to pair models item by item), `timestamp`.

The file name is the model name. In the sidebar, choose *Upload run files* or (when the operator allowed
server folders) *A folder on the server*.
The complete format, its checks and limits are in `docs/run-format.md`.
"""
    )
    doc = Path(__file__).resolve().parent.parent / "docs" / "run-format.md"
    if doc.is_file():
        if st.toggle("Show docs/run-format.md here", key="runs_show_format"):
            st.markdown(doc.read_text(encoding="utf-8"))
