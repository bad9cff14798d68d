"""Runs: what is loaded, and what is wrong with the files that did not load.

Reads top to bottom like the page: problems found in the files, the table of
models, the table of splits, then how to bring your own runs.
"""

from pathlib import Path

import streamlit as st

from dashboard import views
from dashboard.state import current
from dashboard.tables import compact_dataframe
from dashboard.safetext import md_text
from dashboard.tables import dataframe as show_dataframe

selection = current()
report = selection.report

st.title("Runs")
st.caption(f"Loaded from {md_text(selection.source_label)}.")

# ---- problems: every error and warning, in plain words; good files still load
errors, warnings = report.errors, report.warnings
if errors or warnings:
    st.subheader("Problems found in the files")
    if errors:
        st.caption(f"{len(errors)} error(s): the file (or the model named) was not loaded. Fix it and load it again.")
    for problem in errors:
        st.error(md_text(problem), icon=":material/error:")
    for problem in warnings:
        st.warning(md_text(problem), icon=":material/warning:")

# ---- models
if not report.models:
    if errors:
        st.info("No model could be loaded: see the problems above.")
    elif selection.settings.source == "upload":
        st.info("Upload one CSV or Parquet file per model in the sidebar to start.")
        for note in selection.notes:
            st.caption(note)
    else:
        st.info("No run is loaded yet. Choose the sample runs or a folder of run files in the sidebar.")
else:
    st.subheader(f"{len(report.models)} model(s) loaded")
    table = views.runs_table(report, selected=selection.models)
    accuracy_columns = {
        column: st.column_config.NumberColumn(column.capitalize(), format="percent", help="Accuracy without hand-offs")
        for column in table.columns
        if column.startswith("accuracy on ")
    }
    compact_dataframe(
        table,
        ["model", "splits", *accuracy_columns],
        details="All columns (classes, probabilities, file, hash)",
        hide_index=True,
        width="stretch",
        column_config={
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
        },
    )
    top_label = [m for m, run in report.models.items() if not all(p.has_proba for p in run.splits.values())]
    if top_label:
        st.caption(
            f"{views.short_list(top_label)}: top label only. The expected-value rule and temperature scaling need "
            "one probability column per class and are not offered for these models."
        )
    with st.expander("Per split"):
        show_dataframe(
            views.splits_table(report),
            hide_index=True,
            width="stretch",
            column_config={
                "weighted items": st.column_config.NumberColumn("Weighted items", format="%.0f"),
                "accuracy": st.column_config.NumberColumn("Accuracy", format="percent"),
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
