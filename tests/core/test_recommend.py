"""Tests of valuecore.recommend: one model and rule to deploy, or none, and never one that loses money.

The recommendation weighs every (model, rule) the settings allow, fitted by the
export's pipeline and judged by the verdict; it must never name a candidate at
or below handing every item over, and never one that another candidate beats
beyond noise.
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore import wording
from valuecore._decide.recommend import RULE_SIMPLICITY
from valuecore._stats.uncertainty import possible_range
from valuecore.uncertainty import mean_interval

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"
MALIGNANT_MISSED = vc.ValueMatrix(("benign", "malignant"), [[1, -4, 0], [-50, 1, 0]])


def sample(name):
    return vc.load_runs([str(SAMPLES / name)]).models


def run_of(name, seed, n, skill, n_classes=2, ids=True):
    rng = np.random.default_rng(seed)
    classes = tuple(f"c{k}" for k in range(n_classes))
    splits = {}
    for split in ("val", "test"):
        y = rng.integers(0, n_classes, n)
        logits = rng.normal(0, 1, (n, n_classes))
        logits[np.arange(n), y] += skill
        proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        splits[split] = vc.Predictions.from_proba(
            proba, y_true=np.asarray(classes, dtype=object)[y], classes=classes,
            ids=np.arange(n) if ids else None)
    return vc.runs.ModelRun(name, f"{name}.csv", hashlib.sha256(name.encode()).hexdigest(), classes, splits)


def same_items_runs(seed, n, skills, n_classes=2):
    """Models judged on the same items (same labels, same ids), so comparisons are paired."""
    base = run_of("m0", seed, n, skills[0], n_classes)
    runs = {"m0": base}
    rng = np.random.default_rng(seed + 1)
    for k, skill in enumerate(skills[1:], start=1):
        splits = {}
        for split, p in base.splits.items():
            y = p.y_true
            logits = rng.normal(0, 1, (n, n_classes))
            logits[np.arange(n), y] += skill
            proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
            splits[split] = vc.Predictions.from_proba(proba, y_true=np.asarray(base.classes, dtype=object)[y],
                                                      classes=base.classes, ids=np.arange(n))
        runs[f"m{k}"] = vc.runs.ModelRun(f"m{k}", f"m{k}.csv", str(k), base.classes, splits)
    return runs


def realised(rec_or_candidate, predictions, values):
    return vc.item_values(rec_or_candidate.policy, predictions, values)


# ---------------------------------------------------------------- examples
def with_copies(run, split, copies):
    """``run`` with each item of ``split`` weighted ``copies`` times (the same shares, ``copies`` times the items)."""
    p = run.splits[split]
    weighted = vc.Predictions.from_proba(p.proba, y_true=np.asarray(p.classes, dtype=object)[p.y_true],
                                         classes=p.classes, ids=p.ids, sample_weight=np.full(p.n, float(copies)))
    return vc.runs.ModelRun(run.model, run.path, f"{run.sha256}x{copies}", run.classes, {**run.splits, split: weighted})


def test_digits_at_a_wrong_answer_of_minus_1000_says_not_yet_and_how_many_items_would_settle_it():
    # 450 evaluated items cannot show that a model earns when one wrong answer wipes out 1000 right ones: the
    # best on these items (mlp, no wrong answer among its 356 automated items) may be a lucky fit.
    runs = sample("digits")
    rec = vc.recommend(vc.Pipeline(runs), vc.UseCase(1, 0, -1000))
    assert rec.is_none and rec.choice == "not_yet" and rec.policy is None
    promising = rec.alternative
    assert promising.above_baseline and not promising.shown_to_earn
    assert not any(c.shown_to_earn for c in rec.candidates)
    assert promising.gain_low == max(c.gain_low for c in rec.candidates if c.above_baseline)
    needed = rec.items_to_separate
    assert math.isfinite(needed) and needed > rec.n_items
    # The items named are what it takes, if the shares held: the same items copied just enough times show it,
    # one copy fewer does not.
    n = rec.n_items
    for copies, shown in ((math.ceil(needed / n), True), (math.ceil(needed / n) - 1, False)):
        if copies < 1:
            continue
        copied = {**runs, promising.model: with_copies(runs[promising.model], "test", copies)}
        again = vc.recommend(vc.Pipeline(copied), vc.UseCase(1, 0, -1000), [promising.model],
                             kinds=[promising.kind])
        assert again.candidates[0].shown_to_earn is (copies * n >= needed) is shown
    words = wording.recommendation_reason(rec, "$")
    assert words.startswith("No model is shown to earn more") and promising.model in words
    assert wording.significant(needed) in words and "nan" not in words
    assert wording.recommendation_headline(rec).startswith("Not yet")
    # every candidate losing money on these items is judged and, as before, never level with one that earns
    losers = [c for c in rec.candidates if c.per_item <= 0]
    assert losers and all(not c.contender for c in losers)


def test_a_recommended_rule_is_shown_to_earn_and_has_the_firmest_gain():
    for values in (vc.UseCase(1, 0, -1), vc.UseCase(1, 0, -4), vc.UseCase(1, 0, -20)):
        rec = vc.recommend(vc.Pipeline(sample("digits")), values)
        chosen = next(c for c in rec.candidates if (c.model, c.kind) == (rec.model, rec.kind))
        assert chosen.shown_to_earn and rec.clears_baseline
        assert chosen.gain_low == max(c.gain_low for c in rec.candidates)
        # equal bounds (rules making the same decisions) go to the simpler rule
        tied = [c for c in rec.candidates if c.gain_low == chosen.gain_low]
        assert RULE_SIMPLICITY[chosen.kind] == min(RULE_SIMPLICITY[c.kind] for c in tied)


def test_the_gain_bounds_are_the_value_bounds_less_a_constant_hand_off():
    # With the use case a hand-off is worth the same for every item: the gain's bounds are the value's, moved;
    # each one-sided at 90% (the ends of the 80% interval).
    values = vc.UseCase(3, -1, -9)
    runs = sample("digits")
    rec = vc.recommend(vc.Pipeline(runs), values)
    assert rec.sure == 0.9
    for c in rec.candidates[:6]:
        p = runs[c.model].splits["test"]
        low, high = possible_range(values, p.classes, c.policy)
        value = mean_interval(vc.item_values(c.policy, p, values), confidence_level=0.8, value_range=(low, high))
        assert c.gain_low == pytest.approx(value.low - c.baseline, abs=1e-9)
        assert c.gain_high == pytest.approx(value.high - c.baseline, abs=1e-9)


def test_with_a_class_dependent_hand_off_the_gain_is_judged_item_by_item():
    # A hand-off worth 10 for one class and -10 for the other: the baseline measured on these items is itself
    # uncertain, so the gain's interval is not the value's interval less the measured baseline.
    values = vc.ValueMatrix(("benign", "malignant"), [[1, -4, 10], [-50, 1, -10]])
    rec = vc.recommend(vc.Pipeline(sample("breast_cancer")), values)
    test = sample("breast_cancer")
    cells = np.asarray(values.values, dtype=float)
    gain_cells = cells - cells[:, -1:]  # [[-9, -14, 0], [-40, 11, 0]]
    for c in rec.candidates[:3]:
        p = test[c.model].splits["test"]
        acted = vc.item_values(c.policy, p, values)
        gains = mean_interval(acted - cells[p.y_true, -1], confidence_level=0.8,
                              value_range=(gain_cells.min(), gain_cells.max()))
        assert c.gain_low == pytest.approx(gains.low, rel=1e-9)


def test_the_verdict_never_puts_a_model_losing_money_level_with_one_that_earns():
    use_case = vc.UseCase(1, 0, -1000)
    runs = {m: (vc.fit_policy("threshold", vc.presort(r.splits["val"]), use_case), r.splits["test"])
            for m, r in sample("digits").items()}
    v = vc.verdict(runs, use_case)
    assert v.best_per_item > 0
    for s in v.standings[1:]:
        if s.per_item <= 0:
            assert not s.contender and s.items_to_separate is None, s
    # the same runs with the losers' sign flipped into earning would be judged on the noise alone
    assert all(s.model in v.contenders for s in v.standings[1:] if s.contender)


def test_a_value_matrix_is_weighed_with_every_rule_it_allows():
    rec = vc.recommend(vc.Pipeline(sample("breast_cancer")), MALIGNANT_MISSED)
    kinds = {c.kind for c in rec.candidates}
    assert {"class_thresholds", "calibrated_class_thresholds", "expected_value"} <= kinds
    assert "calibrated_threshold" not in kinds  # needs one ω, a matrix has none
    # 114 items cannot rule out a loss when a miss costs 50 times a correct answer: said, not hidden
    assert rec.is_none and rec.choice == "not_yet"
    assert "No model is shown to earn more" in wording.recommendation_reason(rec, "$")


def test_no_model_when_every_candidate_loses_against_handing_over():
    rec = vc.recommend(vc.Pipeline(sample("digits")), vc.UseCase(1, 0, -1e7), kinds=["accept_all"])
    assert rec.is_none and rec.policy is None and rec.choice == "all_useless"
    assert rec.alternative.per_item < rec.baseline_per_item
    assert wording.recommendation_headline(rec) == "Deploy no model: hand every item to a person."
    assert "No model earns more" in wording.recommendation_reason(rec, "$")


def test_no_action_worth_more_than_handing_over_is_pointless():
    rec = vc.recommend(vc.Pipeline(sample("digits")), vc.UseCase(0, 0, -4))
    assert rec.is_none and rec.choice == "pointless"


def test_an_exact_tie_says_more_items_would_not_separate_them():
    runs = same_items_runs(3, 200, (2.0,))
    runs["twin"] = vc.runs.ModelRun("twin", "twin.csv", "t", runs["m0"].classes, dict(runs["m0"].splits))
    rec = vc.recommend(vc.Pipeline(runs), vc.UseCase(1, 0, -2), kinds=["threshold"])
    assert rec.choice in ("highest", "lower_bound") and rec.items_to_separate == math.inf
    assert "would not separate" in wording.recommendation_reason(rec)


def test_skipped_rules_are_named():
    runs = sample("digits")
    rec = vc.recommend(vc.Pipeline(runs, calibration="isotonic"), vc.UseCase(1, 0, -4))
    assert any("expected_value" in note for note in rec.skipped)
    assert "expected_value" not in {c.kind for c in rec.candidates}


def test_two_tiers_are_weighed_when_the_assisted_values_are_given():
    runs = same_items_runs(5, 300, (1.5, 2.0))
    assisted = {"v_confirmed_correct": 0.9, "v_confirmed_wrong": -0.5, "cost": 0.0}
    rec = vc.recommend(vc.Pipeline(runs), vc.UseCase(1, 0, -4), assisted=assisted)
    assert "two_tier" in {c.kind for c in rec.candidates}


def test_the_recommended_document_holds_the_recommended_rule():
    runs = sample("breast_cancer")
    pipeline = vc.Pipeline(runs)
    values = vc.UseCase(1, 0, -4)
    rec = vc.recommend(pipeline, values)
    assert rec.kind not in (None, "threshold")  # so the document written with one threshold must be refitted
    document, _ = pipeline.document(list(runs), "threshold", values)
    out, notes = vc.recommended_document(pipeline, document, rec, values, "because")
    assert out.entry(rec.model).policy.kind == rec.kind
    assert out.to_dict()["recommendation"] == {"model": rec.model, "policy": rec.kind, "reason": "because",
                                               "status": "deploy"}
    assert notes == [vc.recommendation.RuleRefitted(rec.model, rec.kind, "threshold")]
    assert vc.wording.refitted_note(notes[0]) == (
        f"{rec.model}: its policy is the recommended rule, {vc.wording.rule_name(rec.kind)}, not one threshold")
    back = vc.policy_json.PolicyDocument.from_json(out.to_json())
    assert back.recommendation == out.recommendation and back == out


# ---------------------------------------------------------------- property
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(30, 200),
    skills=st.lists(st.floats(0.0, 3.0), min_size=1, max_size=3),
    omega=st.sampled_from([0.5, 2.0, 10.0, 100.0, 1000.0]),
    n_classes=st.sampled_from([2, 3]),
)
def test_the_recommendation_earns_and_is_never_clearly_beaten(seed, n, skills, omega, n_classes):
    runs = same_items_runs(seed, n, skills, n_classes)
    values = vc.UseCase.from_omega(omega)
    rec = vc.recommend(vc.Pipeline(runs), values)
    assert rec.candidates
    for text in (wording.recommendation_headline(rec), wording.recommendation_reason(rec, "$")):
        assert text and not re.search(r"\b(None|nan|NaN|inf)\b", text), text
    if rec.is_none:
        assert rec.choice in ("all_useless", "pointless", "not_yet")
        if rec.choice == "not_yet":  # something earns on these items, nothing is shown to on new ones
            assert rec.candidates[0].above_baseline and not any(c.shown_to_earn for c in rec.candidates)
        else:
            assert all(c.per_item <= c.baseline + 1e-9 for c in rec.candidates[:1])
        return
    assert next(c for c in rec.candidates if (c.model, c.kind) == (rec.model, rec.kind)).shown_to_earn
    test = {m: r.splits["test"] for m, r in runs.items()}
    mine = realised(rec, test[rec.model], values)
    assert np.mean(mine) > 0  # no model is worth 0 for a use case built from ω
    for c in rec.candidates:
        diff = mean_interval(realised(c, test[c.model], values) - mine)
        assert not (diff.low > 1e-12), (c.model, c.kind, diff)


def test_a_rival_worth_exactly_the_same_is_named_without_a_zero_gap():
    rec = vc.recommend(vc.Pipeline(sample("breast_cancer")), vc.UseCase(1, 0, -4))
    reason = wording.recommendation_reason(rec, "$")
    assert rec.alternative is not None and rec.alternative_gap == 0
    assert "$0 less" not in reason and "worth exactly the same" in reason
