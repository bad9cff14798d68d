"""Capacity & guarantees: the best policy under a review capacity, with a
guaranteed error rate, and with a tier where a person confirms.

Reads top to bottom like the page: the volume of a day, then the questions
a team asks once the best threshold is known, each answered in one sentence
and one chart. Each section's widgets are laid out first, in its own
container; ``dashboard.views.capacity.build`` then answers them all, and each
answer is written under its widgets.
"""

import streamlit as st

import valuecore as vc
from dashboard import home, state, views
from dashboard.data import workspace
from dashboard.settings import LIST_RULES, PROMISE_CONFIDENCES
from dashboard.state import current, stop_unless_models
from dashboard.views import capacity as view
from dashboard.views import reviewers as reviewers_view

selection = current()
ws = workspace(selection)
use_case = selection.use_case

st.title("Capacity & guarantees")
st.markdown(view.intro(selection))
stop_unless_models(selection)

labelled = view.labelled_models(selection, ws)
if not labelled:
    st.info("These answers need a labelled tuning split; none of the selected models has one.")
    st.stop()
model = state.choice(st.selectbox, "constraints_model", "Model", labelled, key="constraints_model",
                     default=home.recommended_model(selection, among=labelled) or labelled[0])
# A whole number of items, written as on the landing page ("10000", not "1000.00").
# Its own setting, per day, not the first page's volume: that one is per a period of the visitor's choosing (a
# month by default), and a month is not a fixed number of a review team's days (30? 21 working days?); a guess
# there would move every figure here. The label and the help say which is which.
volume = state.value(st.number_input, "constraints_volume", "Items the model sees per day", min_value=1.0,
                     step=100.0, format="%.0f", key="constraints_volume", convert=float,
                     help="How many items the model sees in a day; every per-day figure on this page scales with "
                     "it. This page's own setting: the first page's 'Items you expect' is per the period chosen "
                     "there.")

# ---- 1. review capacity
st.header("Review capacity")
left, middle = st.columns(2)
capacity = state.value(left.number_input, "constraints_capacity", "Reviews your team can do per day",
                       min_value=0.0, step=10.0, format="%g", key="constraints_capacity", convert=float)
reviewer = state.value(middle.number_input, "constraints_reviewer", "Reviews one more reviewer adds per day",
                       min_value=1.0, step=5.0, format="%g", key="constraints_reviewer", convert=float)
# A short label: at 1280 px a third of the page cut "(one shared budget)"; the help keeps it. Under the two boxes,
# not in a third column beside them: at 800 px wide that third cut even the short label to "Per-class th…".
# Off or on as the pages' rule for this model (the recommended one by default), until the user flips it.
rule_per_class = ws.rule(model, selection.rule, selection.values) in ("class_thresholds", "calibrated_class_thresholds")
per_class = state.value(st.toggle, "constraints_per_class", "Per-class thresholds",
                        key="constraints_per_class", help="One threshold per predicted class, all classes sharing "
                        "the team's review budget.", default=rule_per_class,
                        convert=lambda on: None if on == rule_per_class else on)
capacity_answer = st.container()

# ---- 2. certified error rate
st.header("A guaranteed error rate")
left, right = st.columns(2)
max_risk = state.value(left.select_slider, "constraints_max_risk", "Most wrong answers you accept among automated ones",
                       options=view.risk_stops(state.get().constraints_max_risk),
                       format_func=lambda r: views.percent(r, 1), key="constraints_max_risk", convert=float)
confidence = state.value(right.select_slider, "constraints_confidence", "How sure the promise must be",
                         options=PROMISE_CONFIDENCES, format_func=lambda c: views.percent(c, 0),
                         key="constraints_confidence", convert=float)
copies = view.tuning_weighted(ws, model) and state.value(
    st.checkbox, "constraints_weights_are_copies",
    "Each weight counts that many independent items (e.g. an aggregated log)",
    key="constraints_weights_are_copies",
    help="The guarantee counts independent items. Duplicated rows, importance or survey weights cannot be "
    "counted this way.",
)
risk_answer = st.container()

# ---- 3. two tiers
st.header("A person confirms the uncertain ones")
left, middle, right = st.columns(3)
default = view.default_assisted(use_case)
defaults = {"constraints_v_ok": default.v_confirmed_correct, "constraints_v_bad": default.v_confirmed_wrong,
            "constraints_cost": default.cost}


def _follow(name):
    """None (follow the three values) while the input shows the default."""
    return lambda shown: None if float(shown) == defaults[name] else float(shown)


# Money boxes read as the sidebar's ("1", not "1.00"); the currency is in their help (in the label it wrapped).
money_box = dict(format="%g", help=f"In {selection.currency}, as the values in the sidebar.")
v_ok = state.value(left.number_input, "constraints_v_ok", "Value of a confirmed correct answer", **money_box,
                   default=defaults["constraints_v_ok"], key="constraints_v_ok", convert=_follow("constraints_v_ok"))
v_bad = state.value(middle.number_input, "constraints_v_bad", "Value of a wrong answer put to a person", **money_box,
                    default=defaults["constraints_v_bad"], key="constraints_v_bad",
                    convert=_follow("constraints_v_bad"))
cost = state.value(right.number_input, "constraints_cost", "Cost of a confirmation", min_value=0.0, **money_box,
                   default=defaults["constraints_cost"], key="constraints_cost", convert=_follow("constraints_cost"))
tiers_answer = st.container()

# ---- 4. a shortlist instead of a blank hand-off
st.header("A shortlist instead of a blank hand-off")
st.caption("When a person picks the answer from a list, the model's likeliest classes save time if the right one "
           "is among them. Say what such a hand-off is worth; valuecore finds both thresholds exactly.")
n_classes = view.class_count(ws, model)
listed_in, listed_out = view.default_list_values(use_case)
size_col, in_col, out_col, rule_col = st.columns(4)
list_default = min(2, n_classes)
if (state.get().constraints_list_size or 0) > n_classes:
    state.from_widget("constraints_list_size", None)  # a link's list longer than this run has classes
list_size = int(state.value(size_col.number_input, "constraints_list_size", "Classes on the list", min_value=1,
                            max_value=n_classes, step=1, key="constraints_list_size", default=list_default,
                            convert=lambda shown: None if int(shown) == list_default else int(shown)))
# Short labels: at 1280 px a quarter of the page wrapped "Value when the list holds the answer" onto two lines.
# None (follow the three values) while a box shows its default.
v_listed_in = state.value(in_col.number_input, "constraints_list_in", "Value, answer listed", default=listed_in,
                          key="constraints_list_in", format="%g", help="What a hand-off is worth when the list holds "
                          f"the right answer, in {selection.currency}.",
                          convert=lambda shown: None if float(shown) == listed_in else float(shown))
v_listed_out = state.value(out_col.number_input, "constraints_list_out", "Value, answer not listed",
                           default=listed_out, key="constraints_list_out", format="%g",
                           help=f"What a hand-off is worth when the right answer is not on the list, in "
                           f"{selection.currency}.",
                           convert=lambda shown: None if float(shown) == listed_out else float(shown))
list_rule = state.choice(rule_col.radio, "constraints_list_rule", "List", LIST_RULES, key="constraints_list_rule",
                         format_func=lambda r: "a fixed length" if r == "top_k" else "grows with doubt")
shortlist_answer = st.container()

inputs = view.Inputs(volume=volume, capacity=capacity, reviewer=reviewer, per_class=per_class, max_risk=max_risk,
                     confidence=confidence, weights="copies" if copies else "unit",
                     assisted=vc.constraints.AssistedValues(v_ok, v_bad, cost), list_size=list_size,
                     list_values=(v_listed_in, v_listed_out), list_rule=list_rule)
with st.spinner("Finding the best rules within capacity…"):
    page = view.build(selection, ws, model, inputs)


def _write(section, where, chart):
    with where:
        if section.notice is not None:
            getattr(st, section.notice[0])(section.notice[1])
            return
        for sentence in section.sentences:
            st.markdown(sentence)
        if section.chart is not None:
            st.vega_lite_chart(spec=chart(section.chart), width="stretch")
        if section.caption:
            st.caption(section.caption, help=section.caption_help)
        if section.document is not None:
            st.download_button("Download this two-tier policy (JSON)", section.document,
                               file_name="two_tier_policy.json", mime="application/json", key="constraints_download")


_write(page.capacity, capacity_answer, lambda curve: vc.chartspecs.capacity_spec(curve, capacity, selection.currency))
_write(page.risk, risk_answer, lambda table: vc.chartspecs.certified_risk_spec(table, max_risk))
_write(page.tiers, tiers_answer, vc.chartspecs.tiers_spec)
_write(page.shortlist, shortlist_answer, vc.chartspecs.tiers_spec)

# ---- 5. reviewers who are not always right
st.header("People who are not always right")
st.caption("The hand-off value assumes a person who always gets it right. Say how often your reviewers are "
           "right when they see few items and when they see many; in between it is a straight line. valuecore tries "
           "every threshold and prices each at the share "
           "it hands over.")
if selection.value_matrix is not None:
    st.info("Reviewers are priced for the three values (correct, hand-off, wrong), not a value matrix.")
    st.stop()
low_rate, low_acc, high_rate, high_acc, wrong = st.columns(5)
shares = dict(min_value=0.0, max_value=1.0, step=0.01, format="%.2f", convert=float)
# Short labels, each on one line at 1280 px ("Few items: share handed over" wrapped, and its box sat lower than
# its neighbours'); the help says the rest.
rate_1 = state.value(low_rate.number_input, "reviewers_rate_low", "Handed over: few", key="reviewers_rate_low",
                     help="A small share of the items handed to the reviewers (0.02 = 2%).", **shares)
accuracy_1 = state.value(low_acc.number_input, "reviewers_acc_low", "Right with few", key="reviewers_acc_low",
                         help="How often they are right when they get that small share.", **shares)
rate_2 = state.value(high_rate.number_input, "reviewers_rate_high", "Handed over: many", key="reviewers_rate_high",
                     help="A larger share of the items handed to the reviewers; in between, their accuracy is a "
                     "straight line.", **shares)
accuracy_2 = state.value(high_acc.number_input, "reviewers_acc_high", "Right with many", key="reviewers_acc_high",
                         help="How often they are right when they get that larger share.", **shares)
# None (follow the wrong answer's value) while the box shows it.
v_person_wrong = state.value(wrong.number_input, "reviewers_v_wrong", "Value of their mistake", **money_box,
                             default=float(use_case.v_wrong), key="reviewers_v_wrong",
                             convert=lambda shown: None if float(shown) == float(use_case.v_wrong) else float(shown))
reviewers_page = reviewers_view.build(ws, model, selection, workload=((rate_1, accuracy_1), (rate_2, accuracy_2)),
                                      v_person_wrong=v_person_wrong, volume=volume)
if reviewers_page.notice is not None:
    st.info(reviewers_page.notice)
else:
    st.markdown(reviewers_page.sentence)
    st.vega_lite_chart(spec=vc.chartspecs.reviewer_value_spec(reviewers_page.answer.curve,
                                                              reviewers_page.answer.chosen, selection.currency),
                       width="stretch")
