"""Capacity & guarantees: the best policy under a review capacity, with a
guaranteed error rate, and with a tier where a person confirms.

Reads top to bottom like the page: the volume of a day, then three questions
a team asks once the best threshold is known, each answered in one sentence
and one chart. The logic lives in ``dashboard.constraints``.
"""

import streamlit as st

import valuecore as vc
from dashboard import constraints as view
from dashboard import home, state, views
from dashboard.charts.constraints import capacity_chart, certified_risk_chart, tiers_chart
from dashboard.data import workspace
from dashboard.safetext import md_text
from dashboard.settings import PROMISE_CONFIDENCES
from dashboard.state import current, stop_unless_models

selection = current()
ws = workspace(selection)
values = selection.values
money = selection.money

st.title("Capacity & guarantees")
st.markdown(
    "The best threshold is the first answer. The next questions are about limits and promises: what to do when "
    "the team can only review so many items, how to promise an error rate and keep the promise on new data, and "
    "whether a person confirming a pre-filled answer pays. Thresholds are chosen on the tuning split "
    f"{views.split_text(selection.tune_split)}; values per day are measured on "
    f"{views.split_text(selection.eval_split)} and scaled to your volume."
)
stop_unless_models(selection)

labelled = [m for m in selection.models if (p := ws.predictions(m, ws.tuning_split_for(m))) is not None
            and p.has_labels]
if not labelled:
    st.info("These answers need a labelled tuning split; none of the selected models has one.")
    st.stop()
model = state.choice(st.selectbox, "constraints_model", "Model", labelled, key="constraints_model",
                     default=home.recommended_model(selection, among=labelled) or labelled[0])
# A whole number of items, written as on the landing page ("10000", not "1000.00").
volume = state.value(st.number_input, "constraints_volume", "Items per day", min_value=1.0, step=100.0,
                     format="%.0f", key="constraints_volume", convert=float,
                     help="How many items the model sees in a day; every per-day figure scales with it.")

# ---- 1. review capacity
st.header("Review capacity")
left, middle, right = st.columns(3)
capacity = state.value(left.number_input, "constraints_capacity", "Reviews your team can do per day",
                       min_value=0.0, step=10.0, key="constraints_capacity", convert=float)
reviewer = state.value(middle.number_input, "constraints_reviewer", "Reviews one more reviewer adds per day",
                       min_value=1.0, step=5.0, key="constraints_reviewer", convert=float)
# A short label: at 1280 px a third of the page cut "(one shared budget)"; the help keeps it.
# Off or on as the pages' rule for this model (the recommended one by default), until the user flips it.
rule_per_class = ws.rule(model, selection.rule, values) in ("class_thresholds", "calibrated_class_thresholds")
per_class = state.value(right.toggle, "constraints_per_class", "Per-class thresholds",
                        key="constraints_per_class", help="One threshold per predicted class, all classes sharing "
                        "the team's review budget.", default=rule_per_class,
                        convert=lambda on: None if on == rule_per_class else on)
with st.spinner("Finding the best rule within capacity…"):
    capacity_answer = view.capacity_view(ws, model, values, volume=volume, capacity=capacity, reviewer=reviewer,
                                         per_class=per_class)
st.markdown(view.capacity_sentence(capacity_answer, capacity=capacity, reviewer=reviewer, money=money))
st.altair_chart(capacity_chart(capacity_answer.curve, capacity, selection.currency), width="stretch")
st.caption(
    f"On the tuning split each extra review slot is worth {money(capacity_answer.marginal_per_slot)} "
    "(the slope of the best value against capacity, smoothed to diminishing returns, just past your capacity: "
    "more reviews pay while a slot costs less). The curve is for one global threshold."
)

# ---- 2. certified error rate
st.header("A guaranteed error rate")
left, right = st.columns(2)
max_risk = state.value(left.slider, "constraints_max_risk", "Most wrong answers you accept among automated ones",
                       min_value=0.0, max_value=0.3, step=0.005, format="%.3f", key="constraints_max_risk",
                       convert=float)
confidence = state.value(right.select_slider, "constraints_confidence", "How sure the promise must be",
                         options=PROMISE_CONFIDENCES, format_func=lambda c: views.percent(c, 0),
                         key="constraints_confidence", convert=float)
copies = view.tuning_weighted(ws, model) and st.checkbox(
    "Each weight counts that many independent items (e.g. an aggregated log)", value=False,
    key="constraints_weights_are_copies",
    help="The guarantee counts independent items. Duplicated rows, importance or survey weights cannot be "
    "certified this way.",
)
try:
    risk_answer = view.risk_view(ws, model, values, max_risk=max_risk, confidence=confidence, volume=volume,
                                 weights="copies" if copies else "unit")
except ValueError as error:
    st.warning(f"No guaranteed error rate for **{md_text(model)}**: {md_text(error)}")
    risk_answer = None
if risk_answer is not None:
    for line in view.risk_sentences(risk_answer, max_risk=max_risk, confidence=confidence, money=money,
                                    percent=views.percent):
        st.markdown(line)
    if not risk_answer.table.empty:
        st.altair_chart(certified_risk_chart(risk_answer.table, max_risk), width="stretch")
    # A plain label first; the method's name (learn-then-test, ...) for those who look it up, in the glossary too.
    st.caption("How the guarantee is checked: each candidate threshold is tested in turn on the tuning items, "
               "from the safest, and the walk stops at the first that fails (method: "
               f"{md_text(risk_answer.result.method)}, see learn-then-test under How value works); "
               + ("each weight counts as that many independent items." if copies else "every item counts once."),
               help=vc.wording.GLOSSARY["learn-then-test"])

# ---- 3. two tiers
st.header("A person confirms the uncertain ones")
use_case = selection.use_case
left, middle, right = st.columns(3)
# By default from the three values; a person's time: half of what an automatic correct answer gains over a hand-off.
defaults = {"constraints_v_ok": float(use_case.v_correct), "constraints_v_bad": float(use_case.v_abstain),
            "constraints_cost": float(max((use_case.v_correct - use_case.v_abstain) / 2, 0.0))}


def _follow(name):
    """None (follow the three values) while the input shows the default."""
    return lambda shown: None if float(shown) == defaults[name] else float(shown)


v_ok = state.value(left.number_input, "constraints_v_ok", "Value of a confirmed correct answer",
                   default=defaults["constraints_v_ok"], key="constraints_v_ok", convert=_follow("constraints_v_ok"))
v_bad = state.value(middle.number_input, "constraints_v_bad", "Value of a wrong answer put to a person",
                    default=defaults["constraints_v_bad"], key="constraints_v_bad",
                    convert=_follow("constraints_v_bad"))
cost = state.value(right.number_input, "constraints_cost", "Cost of a confirmation", min_value=0.0,
                   default=defaults["constraints_cost"], key="constraints_cost", convert=_follow("constraints_cost"))
tiers = view.two_tier_view(ws, model, values, vc.constraints.AssistedValues(v_ok, v_bad, cost), volume=volume)
if tiers is None:
    st.info(f"The evaluated split {views.split_text(selection.eval_split)} has no labels, so the tiers cannot "
            f"be measured.")
else:
    st.markdown(view.two_tier_sentence(tiers, money))
    st.altair_chart(tiers_chart(tiers.tiers), width="stretch")
    document, _ = vc.policy_json.build_policy_document(
        {model: ws.run(model)}, values, kind="two_tier", calibration_method=selection.calibration,
        tune_split=ws.tuning_split_for(model), eval_split=selection.eval_split,
        assisted=vc.constraints.AssistedValues(v_ok, v_bad, cost).to_dict(),
    )
    st.download_button("Download this two-tier policy (JSON)", document.to_json(), file_name="two_tier_policy.json",
                       mime="application/json", key="constraints_download")

# ---- 4. a shortlist instead of a blank hand-off
st.header("A shortlist instead of a blank hand-off")
st.caption("When a person picks the answer from a list, the model's likeliest classes save time if the right one "
           "is among them. Say what such a hand-off is worth; valuecore finds both thresholds exactly "
           "(docs/constraints.md).")
n_classes = len(ws.run(model).classes)
size_col, in_col, out_col, rule_col = st.columns(4)
list_size = int(size_col.number_input("Classes on the list", min_value=1, max_value=n_classes,
                                      value=min(2, n_classes), step=1, key="constraints_list_size"))
v_listed_in = in_col.number_input("Value when the list holds the answer",
                                  value=float(use_case.v_abstain + (use_case.v_correct - use_case.v_abstain) / 2),
                                  key="constraints_list_in")
v_listed_out = out_col.number_input("Value when it does not", value=float(use_case.v_abstain),
                                    key="constraints_list_out")
list_rule = rule_col.radio("List", ("top_k", "cumulative"), key="constraints_list_rule",
                           format_func=lambda r: "a fixed length" if r == "top_k" else "grows with doubt")
listing = view.shortlist_view(ws, model, values, {str(list_size): [v_listed_in, v_listed_out]}, list_rule,
                              volume=volume)
if isinstance(listing, str):
    st.info(listing)
else:
    st.markdown(view.shortlist_sentence(listing, money))
    st.altair_chart(tiers_chart(listing.tiers))
