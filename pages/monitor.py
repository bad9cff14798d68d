"""Monitor: what the policy is worth in production, where no labels exist yet.

Reads top to bottom like the page: why these are estimates, the production
split chunk by chunk (estimated value, coverage, best threshold), bands and
alerts, then a back-test on a labelled split where the estimate can be checked
against the realised value (seed 002: label-free estimation and per-chunk
monitoring), and the class mix. Every label-free value here is one estimate
(``dashboard.views.monitor``, the page's view model); the page lays it out.
"""

from __future__ import annotations

import streamlit as st

from dashboard import data, state, views
from dashboard.data import workspace as make_workspace
from dashboard.settings import CHUNKINGS, PERIODS as PERIOD_CODES
from dashboard.safetext import md_text
from dashboard.tables import compact_dataframe, dataframe as show_dataframe, styled
from dashboard.views import monitor as view

PERIODS = {"D": "Day", "W": "Week (Monday to Sunday)", "MS": "Calendar month"}
CHUNKING = {"period": "By time period", "count": "By number of chunks"}


def _load_sample() -> None:
    """Make the sample with a production split the data source of every page, from the next rerun on."""
    state.request(source=f"sample:{view.SAMPLE_WITH_PRODUCTION}", models=None)


def _show_charts(frame, models, currency: str, *, by_time: bool) -> None:
    value, coverage, threshold = view.chart_specs(frame, models, currency, by_time=by_time)
    st.vega_lite_chart(spec=value)
    left, right = st.columns(2)
    left.vega_lite_chart(spec=coverage)
    right.vega_lite_chart(spec=threshold)


def _show_class_mix(mix, formats: dict) -> None:
    # Each column says what it holds on hover; the numbers read as in the back-test (valuecore.wording).
    mix_columns = {"Rule used": st.column_config.TextColumn(help=view.MIX_COLUMN_HELP["Rule used"]),
                   **{c: st.column_config.Column(help=view.MIX_COLUMN_HELP[c]) for c in view.MIX_NUMBER_COLUMNS}}
    if mix.error:
        st.warning(mix.error)
    else:
        st.markdown(mix.intro)
        compact_dataframe(styled(mix.table, formats), mix.shown_columns, hide_index=True, column_config=mix_columns)
        (st.caption if mix.verdict_is_caption else st.markdown)(mix.verdict)
    for problem in mix.per_model_problems:
        st.warning(problem)
    if mix.per_model is not None:
        st.markdown(mix.per_model_intro)
        compact_dataframe(styled(mix.per_model, formats), mix.per_model_columns, hide_index=True,
                          column_config=mix_columns, details="All columns of the models' table")


def _rule(workspace, selection) -> str:
    kinds, rule_notes = views.rule_options(workspace, selection.models, selection.values)
    kind = state.choice(
        st.selectbox, "rule", "Decision rule", kinds,
        format_func=lambda k: views.POLICY_LABELS.get(k, k),
        key="monitor_policy_kind",
        help="Tuned on each model's tuning split (with the sidebar's values and recalibration), then applied as is: "
        "the same rule on every page and in the export.",
    )
    for note in rule_notes:
        st.caption(note)
    return kind


def _page_or_stop(selection, workspace, kind: str):
    page = view.build(selection, workspace, kind, data.sample_sets())
    (st.warning if page.raw_probabilities else st.caption)(page.recalibration_note)
    for problem in page.problems:
        st.warning(problem)
    if not page.models:
        st.stop()
    return page


def _chunking(workspace, page, split: str) -> tuple[str, dict, bool]:
    """The production split's chunking (by period or count), its settings and the re-tune box, in three columns."""
    has_times = view.has_times(workspace, page.unlabelled[split], split)
    columns = st.columns(3)
    with columns[0]:
        chunking = state.choice(
            st.radio, "monitor_chunking", "Chunks", list(CHUNKINGS),
            format_func=CHUNKING.get, key="monitor_chunking", horizontal=True,
        ) if has_times else "count"
        if not has_times:
            st.caption(f"Split {md_text(repr(split))} has no timestamps, so it is cut into chunks of consecutive rows.")
    with columns[1]:
        if chunking == "period":
            how = {"period": state.choice(st.selectbox, "monitor_period", "Period", PERIOD_CODES,
                                          format_func=PERIODS.get, key="monitor_period")}
        else:
            how = {"n_chunks": state.value(st.slider, "monitor_chunks", "Number of chunks", key="monitor_n_chunks",
                                           min_value=2, max_value=40)}
    with columns[2]:
        retune = state.value(
            st.checkbox, "monitor_retune", "Re-tune the threshold on each chunk", key="monitor_retune",
            help="Re-tune a tuned threshold without labels on every chunk and apply that instead. "
            "Its estimated value is then optimistic (tuned and judged on the same chunk).",
        )
    return chunking, how, retune


def _production(selection, page, workspace, all_models, calibration: str):
    """The production split, chunk by chunk: (the production view or None, the split, its chunking)."""
    if not page.unlabelled:
        st.info(
            "None of the selected runs has a split without labels, so there is nothing to monitor yet. "
            "A production split is a split whose rows have no `y_true` (ideally with a `timestamp` column, to chunk "
            "by day or week). To see how monitoring works, load the **breast_cancer** sample: its `prod` split has "
            "six weeks of unlabelled, time-stamped predictions. The back-test below works on any labelled split."
        )
        if page.offer_sample:
            st.button("Load the breast_cancer sample", key="monitor_load_sample", on_click=_load_sample)
        return None, None, None
    split = state.choice(st.selectbox, "monitor_split", "Split to monitor", list(page.unlabelled), key="monitor_split")
    chunking, how, retune = _chunking(workspace, page, split)
    with st.spinner("Estimating the value of every chunk…"):
        production = view.production(selection, page, workspace, split, how, retune=retune, calibration=calibration)
    for problem in production.problems:
        st.warning(problem)
    if not production.empty:
        _show_charts(production.frame, all_models, selection.currency, by_time=chunking == "period")
        st.caption(production.estimate_note)
        st.markdown(f"**Over the whole split {md_text(repr(split))}** (estimated, per item in {selection.currency}):")
        show_dataframe(styled(production.summary, view.summary_formats(selection)), hide_index=True)
        st.markdown(production.drift)
    return production, split, how


def _bands(selection, page, workspace, production, split, how, calibration: str) -> None:
    """Bands, alerts and drift: by default they watch what the production chart shows (its split, the
    recommended or first model, its chunks), with the same estimate."""
    options = view.bands_options(selection, workspace, page.models, production.bands_model if production else None)
    if not options.candidates:
        st.info("Bands need a labelled reference split; none of the selected models has one.")
        return
    if production is not None and production.alerts:
        st.markdown(production.alerts)
    columns = st.columns(4)
    model = state.choice(columns[0].selectbox, "monitor_bands_model", "Model", options.candidates,
                         key="monitor_bands_model", default=options.opening)
    reference = columns[1].selectbox(
        "Labelled reference split", options.labelled[model], index=options.reference_default(workspace, model),
        key="monitor_bands_reference",
        help="Fits the calibration of the estimate and sets the reference band and confidence distribution.",
    )
    watchable = options.watched(workspace, model, reference, split)
    watched = state.choice(columns[2].selectbox, "monitor_bands_split", "Split to watch", watchable,
                           key="monitor_bands_split", default=watchable[0])
    if watched == split and how is not None:
        bands_how = dict(how)
        columns[3].caption("Chunks as in the production chart above.")
    else:
        bands_how = {"n_chunks": columns[3].slider("Chunks", 2, 40, 8, key="monitor_bands_chunks")}
    shown = view.bands(selection, page, workspace, model, reference, watched, bands_how, calibration=calibration,
                       charted_split=split, charted_bands=production.charted_bands if production else None)
    if shown.mismatch:
        st.caption(shown.mismatch)
    if shown.error:
        st.warning(shown.error)
        return
    st.caption(shown.calibration_text)
    st.vega_lite_chart(spec=view.band_spec(shown.frame, selection.currency))
    for line in shown.sentences:
        st.markdown(line)
    (st.caption if shown.backtest_is_caption else st.markdown)(shown.backtest)


def _backtest(selection, page, workspace, all_models, calibration: str) -> None:
    """A labelled split, estimated vs realised."""
    if not page.labelled:
        st.info("None of the selected runs has a labelled split, so the estimate cannot be checked against the truth.")
        st.stop()
    columns = st.columns(2)
    backtest_split = state.choice(columns[0].selectbox, "backtest_split", "Labelled split", list(page.labelled),
                                  key="monitor_backtest_split", fallback=page.labelled.index(page.backtest_default))
    n_chunks = state.value(columns[1].slider, "backtest_chunks", "Number of chunks", key="monitor_backtest_chunks",
                           min_value=2, max_value=20)
    with st.spinner("Estimating and measuring every chunk…"):
        checked = view.backtest(selection, page, workspace, backtest_split, n_chunks, calibration=calibration)
    if checked.in_sample:
        st.caption(checked.in_sample)
    for problem in checked.problems:
        st.warning(problem)
    if not checked.empty:
        st.markdown(checked.intro)
        _show_charts(checked.frame, all_models, selection.currency, by_time=False)
        st.caption(checked.estimate_note)
        show_dataframe(styled(checked.table, view.backtest_formats(selection)), hide_index=True)
        st.markdown(checked.verdict)


def _class_mix(selection, page, workspace, kind: str) -> None:
    """The class mix per chunk, and what re-tuning for it would earn (prior shift)."""
    candidates = view.class_mix_candidates(workspace, page.models)
    if not candidates:
        st.info("The class mix is estimated on a split without labels, from probability vectors (proba_ columns), "
                "against a labelled tuning split: none of the selected runs has all three.")
        return
    columns = st.columns(3)
    mix_model = columns[0].selectbox("Model", list(candidates), key="monitor_prior_model")
    mix_split = columns[1].selectbox("Split", candidates[mix_model], key="monitor_prior_split")
    mix_chunks = columns[2].slider("Number of chunks", min_value=1, max_value=20, value=6, key="monitor_prior_chunks")
    # Bounded work for every visitor: a large estimate runs when asked, with progress; a huge one not here.
    mix_work = view.class_mix_work(workspace, page.models, mix_model, mix_split)
    if mix_work > view.MIX_MAX_WORK:
        st.info(view.class_mix_refusal(mix_work))
    elif mix_work <= view.MIX_AUTO_WORK or st.toggle("Estimate the class mix", key="monitor_prior_run",
                                                     help=view.class_mix_asks(mix_work)):
        bar = st.progress(0.0, text="Estimating the class mix…")

        def _progress_of(name: str):
            return lambda share: bar.progress(share, text=f"Estimating the class mix: {name}")

        _show_class_mix(view.class_mix(selection, page, workspace, mix_model, mix_split, mix_chunks, kind,
                                       _progress_of), view.mix_formats(selection))
        bar.empty()
    else:
        st.caption(view.class_mix_asks(mix_work))


# ---------------------------------------------------------------- the page
selection = state.current()
st.title("Monitor (no labels)")
st.markdown(
    "In production the truth arrives late or never. The value of a policy can still be **estimated** from the "
    "model's own probabilities: an answer given with confidence 0.9 counts as 90% correct. These are estimates "
    "that rely on calibration: if the model is over-confident, the estimate is too rosy. A back-test on a "
    "labelled split (below) shows how far off the estimate is where it can be checked."
)
state.stop_unless_models(selection)

workspace = make_workspace(selection)
all_models = list(selection.report.models)
kind = _rule(workspace, selection)
page = _page_or_stop(selection, workspace, kind)
calibration = st.radio(
    "Calibrate the estimate", list(view.ESTIMATE_CALIBRATIONS), horizontal=True, key="monitor_bands_calibration",
    format_func=view.ESTIMATE_CALIBRATIONS.get,
    help="One estimate for the whole page: the production chart, the bands and alerts, and the back-test.",
)

st.header("Production (no labels)")
production, split, how = _production(selection, page, workspace, all_models, calibration)

st.header("Bands, alerts and drift")
_bands(selection, page, workspace, production, split, how, calibration)

st.header("Back-test on a labelled split")
_backtest(selection, page, workspace, all_models, calibration)

st.header("Class mix")
_class_mix(selection, page, workspace, kind)
