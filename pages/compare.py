"""Compare two models: is the difference in value real, or luck of this split?

Reads top to bottom like the page: pick models A and B, the paired
comparison on the same items of the evaluated split, stated twice (a fact on
this data, an estimate with a 95% interval and its p-value for new data from
the same distribution: seed 004), the charts, then how stable each model's
tuned threshold is. The figures come from ``dashboard.views.compare.build``.
"""

from __future__ import annotations

import streamlit as st

import valuecore as vc

from dashboard import home, state, views
from dashboard.data import workspace as make_workspace
from dashboard.settings import COMPARE_RESAMPLES
from dashboard.tables import compact_dataframe
from dashboard.views import compare as view

RESAMPLES = COMPARE_RESAMPLES  # a link may name only these (dashboard.settings)
TILE_CAPTION_WIDTH = 220  # px: a tile with a reading under it (the caption wraps at this width)


def _show(notice: view.Notice) -> None:
    getattr(st, notice.severity)(notice.text)


def _settings(selection, workspace, model_a: str, model_b: str) -> tuple[str, int, int, list]:
    """The decision rule, the bootstrap resamples and the seed side by side, and the rule's notes."""
    columns = st.columns(3)
    kinds, rule_notes = views.rule_options(workspace, [model_a, model_b], selection.values)
    kind = state.choice(
        columns[0].selectbox, "rule", "Decision rule", kinds,
        format_func=lambda k: views.POLICY_LABELS.get(k, k),
        key="compare_policy_kind",
        help="Each model gets its own policy of this kind, tuned on its tuning split (the same rule on every page).",
    )
    n_resamples = state.value(columns[1].select_slider, "compare_resamples", "Bootstrap resamples",
                              key="compare_resamples", options=RESAMPLES,
                              help="Resamples of each tuning split for the threshold stability below; the paired "
                                   "test draws nothing.")
    seed = int(state.value(columns[2].number_input, "compare_seed", "Random seed", key="compare_seed", min_value=0,
                           step=1, convert=int, help="Of the threshold stability's resamples."))
    return kind, n_resamples, seed, rule_notes


selection = state.current()
st.title("Compare two models")
st.markdown(
    "Two models judged on the **same items** can be compared item by item: the differences cancel the luck of "
    "which items ended up in the split. The result is said twice: what is certain **on this data**, and what "
    "to expect **on new data from the same distribution**, with a 95% interval and a paired test."
)

models = list(selection.models)
all_models = list(selection.report.models)
if (why := view.needs_two_models(models, all_models)) is not None:
    st.info(why)
    st.stop()

left, right = st.columns(2)
model_a, model_b = state.pair((left.selectbox, right.selectbox), "compare_pair", ("Model A", "Model B"), models,
                              keys=("compare_model_a", "compare_model_b"),
                              default=home.recommended_pair(selection, models))  # the recommended one first
workspace = make_workspace(selection)
kind, n_resamples, seed, rule_notes = _settings(selection, workspace, model_a, model_b)
for note in rule_notes:
    st.caption(note)

with st.spinner("Comparing the two models item by item…"):
    page = view.build(selection, workspace, model_a=model_a, model_b=model_b, kind=kind, n_resamples=n_resamples,
                      seed=seed)
if page.stop:
    for notice in page.stop:
        _show(notice)
    st.stop()
for notice in page.notes:
    _show(notice)

# -- the result, said twice
# Model names can be long: they go in the heading, and the tile says A − B (the selectboxes above).
st.subheader(page.heading)
# A row that wraps, each tile as wide as its figure: in three fixed columns, at 800 px (a laptop with the sidebar
# open) the interval ("-$0.0313 to $0.0977") and the first tile's label were cut.
tiles = st.container(horizontal=True, gap="medium")
for tile in page.tiles:
    box = tiles.container(width=TILE_CAPTION_WIDTH if tile.caption else "content", gap="small")
    box.metric(tile.label, tile.value, help=tile.help, width="content")
    if tile.caption:
        box.caption(tile.caption)
for sentence in page.sentences:
    st.markdown(sentence)
st.caption(page.caption)

# One under the other, each the page's width: side by side, at 800 px (a laptop with the sidebar open) the
# item-by-item chart's axis title and legend ran past the page's edge and the other chart's title was cut off.
st.vega_lite_chart(spec=vc.chartspecs.value_interval_spec(page.intervals, all_models, currency=selection.currency),
                   width="stretch")
st.vega_lite_chart(spec=vc.chartspecs.difference_spec(page.differences, model_a=model_a, model_b=model_b,
                                                      currency=selection.currency, models=all_models),
                   width="stretch")

# -- threshold stability
st.subheader("How stable is each tuned threshold?")
st.markdown(
    "The one-threshold policy is re-tuned on bootstrap resamples of each model's tuning split. A wide range "
    "means the chosen threshold owes much to which items happened to be in that split."
)
for notice in page.stability.notices:
    _show(notice)
if not page.stability.table.empty:
    st.vega_lite_chart(spec=vc.chartspecs.stability_spec(page.stability.counts, all_models, tuned=page.stability.tuned),
                       width="stretch")
    compact_dataframe(page.stability.table, view.stability_columns(page.stability.table), hide_index=True,
                      column_config={view.ALWAYS_HAND_OFF: st.column_config.NumberColumn(format="percent")})
    st.caption(
        "Black ticks: the threshold tuned on the whole tuning split. A dash (–) means always handing off was best."
    )
