"""Segments: one threshold per segment, and caps on how far the segments may differ.

Reads top to bottom like the page: the segment column (one of the columns the runs carry, picked here)
and the model; the three caps as sliders, "no cap" by default; then where the thresholds were tuned and
what the caps cost, the segments too small to say much, each segment's threshold, hand-off rate, error
rate and value side by side, the chart of the same, and the gaps beside the caps. The figures come from
``dashboard.views.segments.build``.
"""

import streamlit as st

import valuecore as vc
from dashboard import home, segmentfiles, state
from dashboard.data import workspace as make_workspace
from dashboard.state import current, stop_unless_models
from dashboard.tables import compact_dataframe, dataframe as show_dataframe
from dashboard.views import segments as view

selection = current()
st.title("Segments")
st.markdown(
    "One model often serves groups whose items differ: regions, products, customer tiers, groups of people. "
    "Here each **segment** gets its own confidence threshold, the one that earns the most. A **cap** keeps the "
    "segments' hand-off rates, error rates or values per item within a gap of each other, so that handing items "
    "to people does not fall much harder on one group; the page says what the cap costs."
)
stop_unless_models(selection)
files = segmentfiles.source_files(selection.settings.source, state.uploads())
columns = view.segment_columns(files)
if not columns:
    st.info(view.no_column_note())
    st.stop()

left, right = st.columns(2)
column = state.choice(left.selectbox, "segment_column", "Segment column", columns, key="segments_column",
                      default=columns[0], help="The run files' column that names each item's segment.")
models = list(selection.models)
model = state.choice(right.selectbox, "segment_model", "Model", models, key="segments_model",
                     default=home.recommended_model(selection, among=models) or models[0])

st.subheader("Caps on the gaps between segments")
st.caption("A gap is the largest minus the smallest over the segments. Each cap is off until you move it.")
picked = {}
for place, (cap, words, name) in zip(st.columns(len(view.CAPS)), view.CAPS):
    # A select slider whose first stop is "no cap"; state.choice hands it the stop to show by index.
    picked[cap] = state.choice(
        lambda label, options, index, place=place, **kwargs: place.select_slider(label, options,
                                                                                 value=options[index], **kwargs),
        name, f"Gap in {words}", view.cap_options(cap, selection.values, getattr(state.get(), name)),
        key=f"segments_{name}", default=view.NO_CAP,
        format_func=lambda option, cap=cap: view.cap_text(cap, option, selection.currency),
    )

with st.spinner("Fitting a threshold per segment…"):
    page = view.build(selection, make_workspace(selection), model=model, column=column,
                      caps=view.caps_of(picked), files=files)
if page.stop:
    for notice in page.stop:
        getattr(st, notice.severity)(notice.text)
    st.stop()
for notice in page.notes:
    getattr(st, notice.severity)(notice.text)

st.subheader(page.heading)
for sentence in page.sentences:
    st.markdown(sentence)
for warning in page.warnings:
    st.warning(warning)
# The columns a reader needs first (the table fits 800 px); items, error rate, interval and bound one click away.
helps = {header: st.column_config.Column(help=text) for header, text in view.TABLE_HELP.items()}
compact_dataframe(page.table, view.TABLE_SHOWN, hide_index=True, column_config=helps)
st.caption(view.TABLE_CAPTION)
# Three charts as wide as the page, not one faceted chart of fixed width (half the page at 1280 px).
for panel in vc.chartspecs.segment_panel_specs(page.numbers, currency=selection.currency):
    st.vega_lite_chart(spec=panel, width="stretch")
st.markdown("**The gaps between segments, beside the caps**")
show_dataframe(page.gaps, hide_index=True)
