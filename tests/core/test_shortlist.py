"""A shortlist instead of a blank hand-off: exhaustive search over every pair of
thresholds and every list size or level, and the policy's round trips."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference as ref
import reference_shortlist as refs
import valuecore as vc
from valuecore.constraints import ShortlistValues, evaluate_shortlist, fit_shortlist

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
halves = st.integers(-8, 8).map(lambda x: x / 2)


@st.composite
def shortlist_values(draw, n_classes: int):
    sizes = draw(st.lists(st.integers(1, n_classes), min_size=1, max_size=n_classes, unique=True))
    return {k: (draw(halves), draw(halves)) for k in sizes}


@st.composite
def case_values_and_lists(draw, max_n=10, max_classes=5):
    case = draw(ref.cases(kind="proba", exact=True, max_n=max_n, max_classes=max_classes))
    vals = draw(ref.values_for(case.n_classes, True))
    return case, vals, draw(shortlist_values(case.n_classes))


def _engine_values(lists: dict) -> dict:
    return {str(k): list(v) for k, v in lists.items()}


@pytest.mark.heavy
@settings(max_examples=150, **SETTINGS)
@given(case_values_and_lists())
def test_top_k_shortlist_is_the_exhaustive_optimum(data):
    case, vals, lists = data
    p = case.predictions()
    values = vals.engine(case.classes)
    r, M = case.ref(), vals.ref(case.n_classes)
    policy = fit_shortlist(vc.presort(p), values, _engine_values(lists))
    t_auto, t_list, k, best = refs.shortlist_search(r, M, lists, "top_k")
    spec = policy.shortlist
    got = (policy.threshold, spec["list_threshold"], spec["k"])
    assert refs.shortlist_value(r, M, got[0], got[1], "top_k", got[2], lists) == best
    assert got == (t_auto, t_list, k), "ties: highest act threshold, then highest list threshold, then smallest k"
    result = evaluate_shortlist(policy, p, values)
    assert Fraction(result.value_total) == best
    assert result.n_auto + result.n_listed + result.n_handoff == pytest.approx(p.total_weight)


@pytest.mark.heavy
@settings(max_examples=80, **SETTINGS)
@given(case_values_and_lists(max_n=7, max_classes=4))
def test_cumulative_shortlist_is_the_exhaustive_optimum_over_every_level(data):
    case, vals, lists = data
    p = case.predictions()
    values = vals.engine(case.classes)
    r, M = case.ref(), vals.ref(case.n_classes)
    policy = fit_shortlist(vc.presort(p), values, _engine_values(lists), rule="cumulative")
    best = refs.shortlist_search(r, M, lists, "cumulative")
    spec = policy.shortlist
    if p.n == 0:
        assert (policy.threshold, spec["list_threshold"]) == (None, None)
        return
    got = (policy.threshold, spec["list_threshold"], spec["level"])
    assert refs.shortlist_value(r, M, got[0], got[1], "cumulative", got[2], lists) == best[3]
    assert got == best[:3], "ties: highest act threshold, then highest list threshold, then lowest level"
    assert Fraction(evaluate_shortlist(policy, p, values).value_total) == best[3]


@pytest.mark.heavy
@settings(max_examples=80, **SETTINGS)
@given(ref.case_and_values(exact=True, kind="proba", max_n=14), halves, halves)
def test_a_list_of_one_is_a_confirmed_answer(case_vals, v_in, v_out):
    # top-1 is the predicted class, so its list holds the truth iff the prediction is right:
    # the two-tier policy with the same values, exactly.
    case, vals = case_vals
    p = case.predictions()
    values = vals.engine(case.classes)
    run = vc.presort(p)
    listed = fit_shortlist(run, values, {"1": [v_in, v_out]})
    tiered = vc.constraints.fit_two_tier(run, values, vc.constraints.AssistedValues(v_in, v_out, 0.0))
    assert (listed.threshold, listed.shortlist["list_threshold"]) == (tiered.threshold, tiered.assist_threshold)
    assert evaluate_shortlist(listed, p, values).value_total == vc.constraints.evaluate_two_tier(
        tiered, p, values).value_total


def _digits_like(n=300, n_classes=5, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, n_classes)) * 2
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(n_classes, p=row) for row in proba])
    return vc.Predictions.from_proba(proba, y_true=y)


def test_a_worthwhile_list_beats_the_two_tier_and_single_threshold_rules():
    p = _digits_like()
    run = vc.presort(p)
    uc = vc.UseCase(1, 0, -3)
    policy = vc.fit_policy("shortlist", run, uc, shortlist_values={"2": [0.6, -0.1], "3": [0.5, -0.1]})
    single = vc.evaluate(vc.fit_policy("threshold", run, uc), p, uc).value_total
    result = evaluate_shortlist(policy, p, uc)
    assert result.value_total > single
    assert result.n_listed > 0 and 0 < result.n_listed_hit <= result.n_listed
    assert result.mean_list_size == policy.shortlist["k"]


def test_shortlist_policy_round_trips_and_refuses_bad_input():
    p = _digits_like(60)
    policy = fit_shortlist(vc.presort(p), vc.UseCase(1, 0, -3), {"2": [0.6, -0.1]}, rule="cumulative")
    assert vc.Policy.from_dict(policy.to_dict()) == policy
    top = vc.Predictions.from_top_label(["a", "b"], [0.9, 0.6], ["a", "a"], classes=["a", "b"])
    with pytest.raises(ValueError, match="probability vector"):
        fit_shortlist(vc.presort(top), vc.UseCase(1, 0, -3), {"1": [0.5, 0.0]})
    with pytest.raises(ValueError, match="exceed the 5 classes"):
        fit_shortlist(vc.presort(p), vc.UseCase(1, 0, -3), {"6": [0.5, 0.0]})
    with pytest.raises(ValueError, match="K:IN:OUT"):
        ShortlistValues.parse("2:0.5")
    with pytest.raises(ValueError, match="at least 1"):
        ShortlistValues.parse("0:0.5:0")
    with pytest.raises(ValueError, match="must not exceed"):
        vc.Policy("shortlist", threshold=0.5, shortlist={"k": 1, "list_threshold": 0.7, "values": {"1": [1, 0]}})
    with pytest.raises(ValueError, match="one of the sizes"):
        vc.Policy("shortlist", threshold=0.9, shortlist={"k": 3, "list_threshold": 0.7, "values": {"1": [1, 0]}})
    with pytest.raises(ValueError, match="takes no shortlist"):
        vc.Policy("threshold", threshold=0.9, shortlist={"values": {"1": [1, 0]}})
    with pytest.raises(ValueError, match="needs the values"):
        vc.fit_policy("shortlist", vc.presort(p), vc.UseCase(1, 0, -3))


# ------------------------------------------------------------ command line and policy JSON
from pathlib import Path  # noqa: E402

from jsonschema import Draft202012Validator  # noqa: E402

from valuecore._cli.commands import main  # noqa: E402
from valuecore._pipeline.policy_json import PolicyDocument, policy_schema  # noqa: E402

DIGITS = Path(__file__).resolve().parents[2] / "sample_runs" / "digits"
LISTS = "2:0.6:-0.1,3:0.5:-0.1"


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.heavy
@pytest.mark.parametrize("rule", ["top_k", "cumulative"])
def test_report_writes_a_shortlist_policy_that_apply_scores_as_stored(capsys, tmp_path, rule):
    import json

    policy, applied = tmp_path / "shortlist.json", tmp_path / "applied.json"
    code, out, err = run_cli(capsys, "report", DIGITS, "--omega", "5", "--policy", "shortlist",
                             "--shortlist-values", LISTS, "--shortlist-rule", rule, "--json", policy)
    assert code == 0, err
    assert "list threshold" in out and "handed off with a list" in out
    data = json.loads(policy.read_text())
    Draft202012Validator(policy_schema()).validate(data)
    assert PolicyDocument.from_json(policy.read_text()).to_dict() == data, "the document round-trips"
    for model in data["models"]:
        assert model["policy"]["kind"] == "shortlist"
        assert model["policy"]["shortlist"]["rule"] == rule
    code, out, err = run_cli(capsys, "apply", policy, DIGITS, "--json", applied)
    assert code == 0, err
    stored = {m["model"]: m["evaluation"] for m in data["models"]}
    scored = {m["model"]: m for m in json.loads(applied.read_text())["models"]}
    assert set(scored) == set(stored)
    for name, evaluation in stored.items():
        assert scored[name]["evaluation"] == evaluation
        tiers = evaluation["shortlist"]
        counts = np.asarray(scored[name]["confusion"]["counts"])
        assert counts[:, -1].sum() == tiers["n_listed"] + tiers["n_handoff"]


def test_the_stored_shortlist_value_is_the_core_value_on_the_evaluated_split(capsys, tmp_path):
    import json

    policy = tmp_path / "shortlist.json"
    code, _, err = run_cli(capsys, "report", DIGITS, "--omega", "5", "--policy", "shortlist",
                           "--shortlist-values", LISTS, "--json", policy)
    assert code == 0, err
    runs = vc.load_runs([str(DIGITS)]).models
    for model in json.loads(policy.read_text())["models"]:
        tune, test = runs[model["model"]].splits["val"], runs[model["model"]].splits["test"]
        fitted = fit_shortlist(vc.presort(tune), vc.UseCase(1, 0, -5), ShortlistValues.parse(LISTS))
        assert fitted == vc.Policy.from_dict(model["policy"])
        assert evaluate_shortlist(fitted, test, vc.UseCase(1, 0, -5)).value_total == pytest.approx(
            model["evaluation"]["value_total"], abs=1e-9)


def test_report_refuses_a_shortlist_without_values_or_probabilities_in_words(capsys, tmp_path):
    code, out, err = run_cli(capsys, "report", DIGITS, "--omega", "5", "--policy", "shortlist")
    assert code == 2 and "Traceback" not in err and "per list size k" in err
    code, out, err = run_cli(capsys, "report", DIGITS, "--omega", "5", "--policy", "shortlist",
                             "--shortlist-values", "2:0.6")
    assert code == 2 and "Traceback" not in err and "K:IN:OUT" in err
    code, out, err = run_cli(capsys, "report", DIGITS, "--omega", "5", "--policy", "threshold",
                             "--shortlist-values", LISTS)
    assert code == 2 and "Traceback" not in err and "shortlist values apply to the shortlist policy kind" in err
    top = tmp_path / "top.csv"
    top.write_text("id,split,y_true,y_pred,confidence\n" + "".join(
        f"{i},{'val' if i % 2 else 'test'},{i % 3},{(i * 7) % 3},{0.4 + (i % 6) / 10}\n" for i in range(30)))
    code, out, err = run_cli(capsys, "report", top, "--omega", "5", "--policy", "shortlist",
                             "--shortlist-values", LISTS)
    assert code == 2 and "Traceback" not in err and "probability vector" in err, err


@pytest.mark.heavy
@pytest.mark.parametrize(("policy_args", "phrase"), [
    (("--policy", "shortlist", "--shortlist-values", LISTS), "handed off with a shortlist"),
    (("--policy", "two_tier", "--v-confirmed-correct", "0.6", "--v-confirmed-wrong", "-1"), "a person confirms from"),
])
def test_the_html_report_takes_the_tiers_values_and_names_the_tiers(capsys, tmp_path, policy_args, phrase):
    # the HTML report used to be built without the tier's values, and refused both tiered kinds
    html = tmp_path / "report.html"
    code, _, err = run_cli(capsys, "report", DIGITS, "--omega", "5", *policy_args, "--html", html)
    assert code == 0, err
    text = html.read_text(encoding="utf-8")
    assert phrase in text
    assert "a threshold per predicted class" not in text


def test_too_many_levels_are_searched_on_a_stated_grid(monkeypatch):
    from valuecore._engine import shortlist as _shortlist
    p = _digits_like(200)
    run = vc.presort(p)
    every = _shortlist.shortlist_levels(p)
    monkeypatch.setattr(_shortlist, "EXACT_LEVEL_BUDGET", 10)
    monkeypatch.setattr(_shortlist, "LEVEL_GRID_SIZE", 50)
    policy, _, notes = _shortlist.fit_shortlist_for_pipeline(run, vc.UseCase(1, 0, -3), {"2": [0.6, -0.1]},
                                                             rule="cumulative")
    assert len(notes) == 1 and f"of the {every.size} distinct cumulative levels" in notes[0]
    assert policy.shortlist["level"] in set(every.tolist())
    exact = fit_shortlist(run, vc.UseCase(1, 0, -3), {"2": [0.6, -0.1]}, rule="cumulative")
    # the grid can only lose value against every level, on the tuning split
    assert (evaluate_shortlist(policy, p, vc.UseCase(1, 0, -3)).value_total
            <= evaluate_shortlist(exact, p, vc.UseCase(1, 0, -3)).value_total)


@pytest.mark.heavy
@pytest.mark.parametrize("rule", ["top_k", "cumulative"])
def test_a_served_shortlist_holds_what_apply_counted(capsys, tmp_path, rule):
    # report -> JSON -> load_policy: the lists a server shows are those apply scored (sizes, hits, value).
    import json

    from valuecore.serving import SHORTLIST, load_policy

    policy = tmp_path / "shortlist.json"
    code, _, err = run_cli(capsys, "report", DIGITS, "--omega", "5", "--policy", "shortlist",
                           "--shortlist-values", LISTS, "--shortlist-rule", rule, "--json", policy)
    assert code == 0, err
    runs = vc.load_runs([str(DIGITS)]).models
    prices = {int(k): pair for k, pair in ShortlistValues.parse(LISTS).to_dict().items()}
    for model in json.loads(policy.read_text())["models"]:
        test = runs[model["model"]].splits["test"]
        served = load_policy(policy, model=model["model"])
        actions = served.decide(test.proba)
        lists = served.shortlists(test.proba)
        listed = actions == SHORTLIST
        assert [bool(items) for items in lists] == listed.tolist()
        truth = np.asarray(test.classes, dtype=object)[test.y_true]
        hits = [t in items for t, items in zip(truth, lists)]
        tiers = model["evaluation"]["shortlist"]
        assert listed.sum() == tiers["n_listed"] and sum(hits) == tiers["n_listed_hit"]
        assert np.mean([len(items) for items in lists if items] or [0]) == pytest.approx(tiers["mean_list_size"])
        listed_value = sum(prices[len(items)][0 if hit else 1] for items, hit in zip(lists, hits) if items)
        acted = [a for a in actions if a not in (SHORTLIST, "abstain")]
        assert len(acted) == tiers["n_auto"]
        # every list is the item's most probable classes, in order
        for row, items in zip(test.proba, lists):
            if items:
                top = np.argsort(-row, kind="stable")[:len(items)]
                assert items == tuple(np.asarray(test.classes)[top])
        blank = np.sum(actions == "abstain")
        use_case = vc.UseCase(1, 0, -5)
        acted_value = sum(use_case.v_correct if a == t else use_case.v_wrong for a, t in zip(actions, truth)
                          if a not in (SHORTLIST, "abstain"))
        assert acted_value + listed_value + blank * use_case.v_abstain == pytest.approx(
            model["evaluation"]["value_total"], abs=1e-9)
