"""How value works: the ideas behind the dashboard, for a product manager, in five short parts."""

import streamlit as st

from dashboard.state import current
from dashboard.views import how_value_works as view

page = view.build(current())

st.title("How value works")
st.markdown(
    """
Accuracy counts how often a model is right. A business cares about something else: what the model's
answers **earn**, once the cost of its mistakes is paid. And a model does not have to answer everything:
when it is unsure it can **hand the item over** to a person. This dashboard puts a price on the three
outcomes and asks which model, with which hand-off rule, earns the most.
"""
)

st.header("Three numbers, and ω")
st.markdown(
    f"""
You set what a **correct answer**, a **hand-off** and a **wrong answer** are worth (sidebar). Right now:
{page.values}.

Only one ratio matters for choosing a model and a threshold: the penalty

> **ω = (hand-off − wrong) ÷ (correct − hand-off)**

how much an error costs compared with what a correct answer earns, both measured against handing the
item over. With your numbers **ω = {page.omega}**: one error wipes out the gain of
{page.omega} correct answers. ω = 0 is plain accuracy (errors cost nothing extra); large ω is a
use case where mistakes are expensive (medicine, payments, legal).

The **dimensionless value** per item, (correct − ω × wrong) ÷ items, is 0 for "no model" (hand everything
over) and 1 for a perfect model. It lets use cases of any currency be compared.
"""
)

st.header("Higher accuracy can be worth less, even less than no model")
st.markdown(
    """
Take two models, 95% and 90% accurate, and ω = 20 (an error costs twenty correct answers).
Answering everything, the first earns 0.95 − 20 × 0.05 = **−0.05** per item: it *loses* money, and
switching it off ("no model") would be better. What saves a model is knowing **when it is unsure**: if
the 90% model puts nearly all of its errors among its low-confidence answers and hands those over, it
can earn more than the 95% model that is confidently wrong. Accuracy cannot see this; value can.
That is why the Value page always shows the "no model" row: it is the bar every model must clear.
"""
)

st.header("Tuned threshold or calibrated threshold")
st.markdown(
    f"""
The model acts on an item when its confidence is at least a **threshold**, and hands it over otherwise.
Two ways to choose it:

- **Tuned**: try every threshold on a labelled *tuning* split and keep the one that earns the most, then
  measure the value on a separate *evaluation* split. Works whatever the model's confidences mean.
- **Calibrated**: if a confidence of 0.8 really means "right 80% of the time", acting pays exactly when
  confidence ≥ **ω/(1+ω)** ({page.calibrated}). No tuning needed, but most models are over-confident,
  so this threshold is often too low. Recalibrating (sidebar) first helps.

When the two disagree a lot, the model's confidences are not to be taken at face value.
"""
)

st.header("VOC curves: every use case at once")
st.markdown(
    f"""
A VOC (value operating characteristic) curve draws a model's dimensionless value for **every** ω.
Where the curve drops below zero, at **ω_sup**, the model is worth less than no model at all. If one
model's curve is above another's everywhere up to ω_sup, it is better for every use case, whatever
the prices. Where curves cross, the right model depends on your ω: the VOC page says where, in words.
The **area** under the positive part of a curve over a range of ω sums up how useful a model is over
that family of use cases.

The **{page.best_possible}** curve picks each ω's best threshold on the very data it is scored on. No
deployed system can do that, so read it as an **upper bound**, not a forecast; the *tuned* curve is the honest
one.
"""
)

st.header("When errors are not all alike")
st.markdown(
    """
Missing a fraud can cost a hundred times more than flagging a good customer. The Values per class page gives
each (true class, action) pair its own value; the dashboard then tunes one threshold **per predicted
class**, or takes for each item the action with the highest expected value (this needs the model's full
probability vector).
"""
)

st.header("Glossary", anchor="glossary")
st.caption("The technical names the other pages keep in their tooltips, in plain words.")
st.markdown("\n".join(f"- **{term}**: {meaning}" for term, meaning in page.glossary))

st.header("Read more")
st.markdown(
    """
- Fabio Casati, Pierre-André Noël, Jie Yang: *On the Value of ML Models*. NeurIPS 2021 workshop on
  human and machine decisions. The three values, ω, the dimensionless value, tuned and calibrated
  thresholds, VOC curves, ω_sup and dominance.
- Burcu Sayin, Jie Yang, Xinyue Chen, Andrea Passerini, Fabio Casati: *Rethinking and Recomputing the
  Value of Machine Learning Models*. Value with rejection, per-class costs and thresholds, and tables
  where accuracy and value rank models differently (the table at the bottom of the VOC page).
"""
)
