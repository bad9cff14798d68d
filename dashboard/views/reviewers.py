"""The reviewers panel of Capacity & guarantees: people who are not always right, and get tired.

``reviewers_answer`` computes (no Streamlit): the threshold tuned for the
reviewers by the exact prefix scan (``valuecore.constraints.fit_reviewer_threshold``)
and today's threshold (tuned as if the person were always right), each judged on
the evaluated split with its hand-offs priced at the rate it produces there.
``build`` turns the page's inputs into a ``ReviewersPage`` (a notice, or the
answer and its sentence); the page lays out the inputs and shows it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

import valuecore as vc

__all__ = ["ReviewersAnswer", "reviewers_answer", "reviewers_sentence", "ReviewersPage", "build"]


@dataclass(frozen=True)
class ReviewersAnswer:
    """Numbers of the panel. Rates are shares of the evaluated items; values per day at ``volume``."""

    threshold: float | None
    today_threshold: float | None
    handoff_rate: float
    today_handoff_rate: float
    accuracy: float
    today_accuracy: float
    value_per_day: float
    today_value_per_day: float
    everything_per_day: float
    curve: pd.DataFrame
    chosen: pd.DataFrame
    confidences: object = None  # the model's confidences on the data shown, to write thresholds with


def _priced_per_item(ws, model: str, split: str, policy: vc.Policy, use_case, reviewers) -> tuple[float, float]:
    """(hand-off rate, value per item) of ``policy`` on ``split``, its hand-offs priced at that rate."""
    predictions = ws.predictions(model, split)
    priced = vc.constraints.priced_use_case(reviewers, use_case, policy, predictions)
    result = vc.evaluate(policy, predictions, priced)
    return float(result.n_abstain / result.n_items) if result.n_items > 0 else 0.0, result.value_per_item


def reviewers_answer(ws, model: str, use_case, reviewers, *, eval_split: str, volume: float,
                     confidences=None) -> ReviewersAnswer:
    """The panel's numbers for one model (tuned on its tuning split, judged on ``eval_split``, labelled);
    ``confidences``, the model's on the data shown, only say how its thresholds are written."""
    tuning = ws.sorted(model, ws.plan(model).tune_split)
    fit = vc.constraints.fit_reviewer_threshold(tuning, use_case, reviewers)
    calibration = ws.calibration_dict(model)
    extra = {"calibration": calibration} if calibration else {}
    policy = vc.Policy("threshold", threshold=fit.threshold, **extra)
    today = ws.policy(model, "threshold", use_case)
    rate, per_item = _priced_per_item(ws, model, eval_split, policy, use_case, reviewers)
    today_rate, today_per_item = _priced_per_item(ws, model, eval_split, today, use_case, reviewers)
    n_items = tuning.total_weight
    handoff = (n_items - tuning.cum_accepted) / n_items if n_items > 0 else np.zeros(tuning.n_groups + 1)
    loaded = vc.constraints.reviewer_value_curve(tuning, use_case, reviewers) / max(n_items, 1e-300) * volume
    perfect = vc.constraints.reviewer_value_curve(tuning, use_case, vc.constraints.Reviewers()) / max(
        n_items, 1e-300) * volume
    with_people, always_right = "with these reviewers", "as if always right"
    curve = pd.concat([pd.DataFrame({"handoff_rate": handoff, "value_per_day": loaded, "pricing": with_people}),
                       pd.DataFrame({"handoff_rate": handoff, "value_per_day": perfect, "pricing": always_right})],
                      ignore_index=True)
    k_loaded = tuning.groups_accepted(fit.threshold)
    k_today = tuning.groups_accepted(today.threshold)
    chosen = pd.DataFrame({"handoff_rate": [handoff[k_loaded], handoff[k_today]],
                           "value_per_day": [loaded[k_loaded], loaded[k_today]],
                           "pricing": ["threshold for these reviewers", "today's threshold, with these reviewers"]})
    return ReviewersAnswer(
        threshold=fit.threshold, today_threshold=today.threshold, handoff_rate=rate, today_handoff_rate=today_rate,
        accuracy=float(reviewers.accuracy_at(rate)), today_accuracy=float(reviewers.accuracy_at(today_rate)),
        value_per_day=per_item * volume, today_value_per_day=today_per_item * volume,
        everything_per_day=float(reviewers.handoff_value(use_case, 1.0)) * volume, curve=curve, chosen=chosen,
        confidences=confidences)


def _threshold_text(threshold, confidences=None) -> str:
    """As on every page (``views.threshold_text``): the digits that tell the decision apart on the data shown."""
    from dashboard import views

    return ("hand every item over" if threshold is None else
            f"threshold **{views.threshold_text(threshold, confidences)}**")


def reviewers_sentence(answer: ReviewersAnswer, money, percent) -> str:
    """One paragraph in a product manager's words (``money``: amounts over a day, ``projected``'s rule)."""
    change = answer.value_per_day - answer.today_value_per_day
    same = answer.threshold == answer.today_threshold
    head = (f"For these reviewers the best rule is {_threshold_text(answer.threshold, answer.confidences)}: "
            "it hands over "
            f"{percent(answer.handoff_rate)} of the evaluated items, where they get "
            f"{percent(answer.accuracy)} right, and earns **{money(answer.value_per_day)} a day**.")
    if same:
        tail = " It is today's threshold: these reviewers do not change the best rule."
    else:
        tail = (f" Today's {_threshold_text(answer.today_threshold, answer.confidences).replace('**', '')} hands over "
                f"{percent(answer.today_handoff_rate)}, where they get {percent(answer.today_accuracy)} right: "
                f"{money(answer.today_value_per_day)} a day, so tuning for them "
                f"{'earns' if change >= 0 else 'loses'} {money(abs(change))} a day on these items.")
    return head + tail + f" Handing every item to them would be worth {money(answer.everything_per_day)} a day."


@dataclass(frozen=True)
class ReviewersPage:
    """What the reviewers panel shows: a notice instead of an answer, or the answer and its sentence."""

    notice: str | None
    answer: object | None = None
    sentence: str = ""


def build(ws, model: str, selection, *, workload, v_person_wrong: float, volume: float) -> ReviewersPage:
    """The panel's answer for reviewers right ``workload[i][1]`` of the time at hand-off share ``workload[i][0]``."""
    from dashboard import views

    (rate_1, _), (rate_2, _) = workload
    if rate_2 <= rate_1:
        return ReviewersPage("The second share handed over must be larger than the first.")
    eval_split = selection.eval_split
    evaluated = ws.predictions(model, eval_split)
    if evaluated is None or not evaluated.has_labels:
        return ReviewersPage(f"The evaluated split {views.split_text(eval_split)} has no labels, so the reviewers' "
                             "value cannot be measured.")
    reviewers = vc.constraints.Reviewers(workload=tuple(workload), v_person_wrong=v_person_wrong)
    answer = reviewers_answer(ws, model, selection.use_case, reviewers, eval_split=eval_split, volume=volume,
                              confidences=views.shown_confidences(ws, model))
    return ReviewersPage(None, answer, reviewers_sentence(answer, selection.projected, views.percent))
