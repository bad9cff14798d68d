"""Calibration: can the models' confidences be taken at face value, and what does recalibrating change?

Reads top to bottom like the page: the recalibration to examine, reliability
diagrams, the calibration metrics before and after, then seed 003's Table 5
(value at ω = 0..10 with the formula threshold ω/(1+ω), before and after
recalibration, against the tuned threshold). The figures come from
``dashboard.views.calibration``.

The recalibration examined here is a setting of its own (it is in the link):
this page is where a recalibration is examined before it is adopted, so it
always shows "before" (raw) next to "after". A button makes it the
recalibration of every page and of the export (``dashboard.state.request``).
"""

from __future__ import annotations

import streamlit as st

import valuecore as vc

from dashboard import state
from dashboard.settings import BIN_STRATEGIES
from dashboard.state import stop_unless_models
from dashboard.tables import compact_dataframe
from dashboard.views import calibration as view


def _adopt(method: str) -> None:
    """Make this page's recalibration the one every page uses, from the next rerun on."""
    state.request(calibration=method)


def small_multiples(spec: dict) -> None:
    """A faceted chart as its title and two panels a row, each as wide as its column: one faceted chart has panels
    of a fixed width, which filled half the page at 1280 px (three a row ran past the page's edge at 800 px)."""
    title = spec["title"]
    if isinstance(title, str):
        st.markdown(f"**{title}**")
    else:
        subtitle = title.get("subtitle", [])
        st.markdown(f"**{title['text']}**")
        st.caption(subtitle if isinstance(subtitle, str) else " ".join(subtitle))
    panels = vc.chartspecs.facet_panels(spec)
    for start in range(0, len(panels), 2):
        for column, panel in zip(st.columns(2), panels[start:start + 2]):
            column.vega_lite_chart(spec=panel, width="stretch")


selection = state.current()
st.title("Calibration")
st.markdown(
    "A model is **calibrated** when, among the answers it gives with confidence 0.8, about 80% are right. "
    "The threshold formula ω/(1+ω) of the value pages assumes exactly that; recalibration (fitted on the "
    "tuning split) repairs the confidences without changing which class is predicted."
)
all_models = list(selection.report.models)
stop_unless_models(selection)
opts = view.options(selection)
if opts.stop is not None:
    getattr(st, opts.stop_severity)(opts.stop)
    st.stop()
if opts.left_out:
    st.caption(opts.left_out)

# -- the recalibration to examine
controls = st.columns([3, 2, 2])
with controls[0]:
    method = state.choice(
        st.radio, "calibration_examined", "Recalibration to examine", list(opts.methods),
        # Not examined yet: the sidebar's recalibration, or the first recalibration when it is none.
        fallback=opts.first_examined,
        format_func=view.METHOD_LABELS.get,
        key="calibration_method",
        horizontal=True,
        help="Only this page: it shows raw confidences next to recalibrated ones. "
        "The sidebar's 'Recalibrate before thresholding' is what the other pages and the export use.",
    )
with controls[1]:
    n_bins = state.value(st.slider, "calibration_bins", "Bins", key="calibration_bins", min_value=5, max_value=30,
                         help="For the diagrams, ECE and MCE.")
with controls[2]:
    strategy = state.choice(st.radio, "calibration_strategy", "Diagram bins", BIN_STRATEGIES,
                            format_func=view.STRATEGY_LABELS.get, key="calibration_strategy", horizontal=True)
if opts.aggregated_note:
    st.caption(opts.aggregated_note)
st.caption(view.method_note(method, opts.sidebar_method))
if method != opts.sidebar_method:
    st.button(f"Use {view.METHOD_LABELS[method].lower()} on every page", key="calibration_apply", on_click=_adopt,
              args=(method,))

page = view.build(selection, opts, method, n_bins, strategy)
for problem in page.problems:
    st.warning(problem)

# -- reliability diagrams
st.subheader("Reliability diagrams")
st.markdown(page.reliability_text)

small_multiples(vc.chartspecs.reliability_spec(page.reliability, all_models))

# -- metrics table
st.subheader("Calibration metrics")
compact_dataframe(
    page.metrics,
    view.METRICS_SHOWN,
    details="All metrics (equal-mass ECE, MCE, top-label Brier, the fitted recalibration)",
    hide_index=True,
    column_config={c: st.column_config.NumberColumn(format="%.4f", help=text) for c, text in view.METRIC_HELP.items()},
)
st.caption(page.metrics_caption)

# -- seed 003 Table 5
st.subheader("What calibration does to value")
for severity, text in page.value_notes:
    getattr(st, severity)(text)
if page.table is not None:
    small_multiples(vc.chartspecs.calibration_value_spec(page.value_long, all_models))
    st.markdown(page.meaning)
    compact_dataframe(
        page.table,
        view.TABLE5_SHOWN,
        details=view.TABLE5_DETAILS,
        hide_index=True,
        column_config={
            # Dimensionless values per item with three decimals, as on the Value and VOC pages (wording.number).
            **{c: st.column_config.NumberColumn(format="%.3f" if c.startswith("Value") else "%.4f",
                                                help=view.TABLE5_HELP.get(c))
               for c in page.table.columns if c.startswith(("Value", "ω/"))},
            # Thresholds come as text, written as on every page (valuecore.wording.threshold_on_data).
            **{c: st.column_config.TextColumn(help=view.TABLE5_HELP.get(c)) for c in page.table.columns
               if c.startswith("Tuned")},
            **{c: st.column_config.NumberColumn(format="percent") for c in page.table.columns
               if c.startswith("Acted on")},
            "Penalty ω": st.column_config.NumberColumn(format="%g", help=view.TABLE5_HELP["Penalty ω"]),
        },
    )
    st.caption(page.table_caption)
