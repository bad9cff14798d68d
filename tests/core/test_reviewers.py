"""Imperfect, loaded reviewers: the fast prefix scan against brute force, and the reduction to today's policy."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference as ref
import reference_reviewers as rref
import valuecore as vc
from valuecore.constraints import Reviewers, fit_reviewer_threshold, reviewer_value_curve

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
REL = 1e-9

# Dyadic accuracies and rates keep every float operation of an exact case exact, or
# within round-off far below the gap between two distinct exact values.
ACCURACIES = st.integers(0, 16).map(lambda k: k / 16)


@st.composite
def reviewers(draw):
    v_person_wrong = draw(st.one_of(st.none(), st.integers(-6, 4).map(float)))
    if draw(st.booleans()):
        return Reviewers(accuracy=draw(ACCURACIES), v_person_wrong=v_person_wrong)
    rates = sorted(draw(st.sets(st.integers(0, 8), min_size=1, max_size=4)))
    workload = tuple((r / 8, draw(ACCURACIES)) for r in rates)
    return Reviewers(workload=workload, v_person_wrong=v_person_wrong)


def ref_args(r: Reviewers) -> dict:
    return dict(accuracy=r.accuracy, workload=r.workload, v_person_wrong=r.v_person_wrong)


def scale_of(case: ref.Case, vals: ref.Vals, r: Reviewers) -> float:
    return case.scale(vals) * (1.0 + abs(r.v_person_wrong or 0.0))


@settings(max_examples=300, **SETTINGS)
@given(ref.cases(max_n=12, max_classes=4), ref.use_cases(exact=True), reviewers())
def test_the_prefix_scan_is_the_exhaustive_optimum(case, vals, r):
    run, rr = vc.presort(case.predictions()), case.ref()
    fit = fit_reviewer_threshold(run, vals.engine(case.classes), r)
    search = rref.search_threshold(rr, vals.data, **ref_args(r))
    assert fit.threshold is None or fit.threshold in rr.conf
    scale = scale_of(case, vals, r)
    achieved = search.value_of(fit.threshold)
    assert abs(Fraction(fit.value_total) - achieved) <= Fraction(REL) * Fraction(scale)
    assert search.best_value - achieved <= Fraction(REL) * Fraction(scale)
    if case.exact:
        # Exact inputs: among the maximisers, the highest threshold (None highest of all).
        assert fit.threshold == search.best_threshold, (fit.threshold, search.maximisers())


@settings(max_examples=150, **SETTINGS)
@given(ref.cases(max_n=12, max_classes=4), ref.use_cases(exact=False), reviewers())
def test_the_curve_is_the_brute_force_value_at_every_candidate(case, vals, r):
    run, rr = vc.presort(case.predictions()), case.ref()
    curve = reviewer_value_curve(run, vals.engine(case.classes), r)
    search = rref.search_threshold(rr, vals.data, **ref_args(r))
    assert len(curve) == len(search.table)
    scale = scale_of(case, vals, r)
    for got, (_, want) in zip(curve, search.table):
        assert abs(Fraction(float(got)) - want) <= Fraction(REL) * Fraction(scale)


PERFECT = (Reviewers(), Reviewers(accuracy=1.0, v_person_wrong=-50.0), Reviewers(workload=((0.2, 1.0), (0.7, 1.0))))


@settings(max_examples=200, **SETTINGS)
@given(ref.cases(max_n=20), ref.use_cases(exact=False), st.sampled_from(PERFECT))
def test_a_perfect_reviewer_and_a_flat_curve_give_todays_threshold(case, vals, r):
    p = case.predictions()
    run = vc.presort(p)
    use_case = vals.engine(case.classes)
    fit = fit_reviewer_threshold(run, use_case, r)
    today = vc.fit_policy("threshold", run, use_case)
    assert fit.threshold == today.threshold  # bit for bit, floats included
    assert math.isclose(fit.value_total, vc.evaluate(today, p, use_case).value_total,
                        rel_tol=1e-12, abs_tol=1e-9 * case.scale(vals))


@settings(max_examples=150, **SETTINGS)
@given(ref.cases(max_n=20), ref.use_cases(exact=False), ACCURACIES, st.integers(-6, 4))
def test_a_flat_accuracy_is_todays_policy_for_the_effective_use_case(case, vals, accuracy, person_wrong):
    run = vc.presort(case.predictions())
    use_case = vals.engine(case.classes)
    r = Reviewers(accuracy=accuracy, v_person_wrong=float(person_wrong))
    effective = r.effective_use_case(use_case)
    assert effective.v_abstain == pytest.approx(accuracy * use_case.v_abstain + (1 - accuracy) * person_wrong)
    assert fit_reviewer_threshold(run, use_case, r).threshold == vc.fit_policy("threshold", run, effective).threshold


@settings(max_examples=150, **SETTINGS)
@given(ref.cases(max_n=12, max_classes=4), ref.use_cases(exact=True), reviewers())
def test_total_value_from_counts_is_the_definition(case, vals, r):
    rr = case.ref()
    for t in ref.candidates(rr):
        c, w, h = rref.counts(rr, ref.threshold_actions(rr, t))
        want = rref.value(c, w, h, vals.data, **ref_args(r))
        got = r.total_value(float(c), float(w), float(h), vals.engine(case.classes))
        assert abs(Fraction(float(got)) - want) <= Fraction(REL) * Fraction(scale_of(case, vals, r))


def test_a_loaded_team_hands_off_less():
    # 100 items, confidence i/100, correct iff i >= 30: hand-offs are the low ones.
    conf = np.arange(100) / 100
    p = vc.Predictions.from_top_label(["a"] * 100, conf, ["a" if i >= 30 else "b" for i in range(100)],
                                      classes=["a", "b"])
    run = vc.presort(p)
    use_case = vc.UseCase(1.0, 0.0, -1.0)
    rested = fit_reviewer_threshold(run, use_case, Reviewers(accuracy=1.0))
    assert rested.threshold == 0.3 and rested.handoff_rate == 0.3
    # Past 20% hand-offs the team's accuracy falls to a coin flip: the best trades errors for hand-offs.
    tired = Reviewers(workload=((0.2, 1.0), (0.3, 0.5)))
    fit = fit_reviewer_threshold(run, use_case, tired)
    values = reviewer_value_curve(run, use_case, tired)
    assert fit.value_total == values.max()
    assert fit.handoff_rate < 0.3 and fit.threshold is not None and fit.threshold < 0.3
    assert fit.reviewer_accuracy == pytest.approx(tired.accuracy_at(fit.handoff_rate))


def test_bad_reviewers_are_refused_with_a_reason():
    with pytest.raises(ValueError, match="between 0 and 1"):
        Reviewers(accuracy=1.2)
    with pytest.raises(ValueError, match="strictly increasing"):
        Reviewers(workload=((0.5, 0.9), (0.5, 0.8)))
    with pytest.raises(ValueError, match="finite"):
        Reviewers(v_person_wrong=math.inf)
    with pytest.raises(ValueError, match="n_right <= n_reviewed"):
        Reviewers.from_sample(5, 3)
    with pytest.raises(ValueError, match="couples"):
        Reviewers(workload=((0.1, 0.9), (0.5, 0.8))).effective_use_case(vc.UseCase(1, 0, -1))
    p = vc.Predictions.from_top_label(["a", "b"], [0.9, 0.6], ["a", "a"], classes=["a", "b"])
    matrix = vc.ValueMatrix(("a", "b"), [[1, -1, 0], [-1, 1, 0]])
    with pytest.raises(ValueError, match="value matrix"):
        fit_reviewer_threshold(vc.presort(p), matrix, Reviewers(accuracy=0.9))


def test_round_trip_and_sample_interval():
    r = Reviewers.from_sample(180, 200, workload=((0.1, 0.95), (0.4, 0.85)), v_person_wrong=-3.0)
    assert r.accuracy == 0.9 and r.sample == (180, 200)
    low, high = r.accuracy_interval
    assert low < 0.9 < high and 0.84 < low and high < 0.94
    assert Reviewers.from_dict(r.to_dict()) == r


def _coverage(p: float, n: int, reps: int, rng) -> float:
    from scipy import stats

    k = rng.binomial(n, p, size=reps)
    # Clopper-Pearson bounds, vectorised (what binomtest's "exact" interval computes).
    low = np.where(k == 0, 0.0, stats.beta.ppf(0.025, k, n - k + 1))
    high = np.where(k == n, 1.0, stats.beta.ppf(0.975, k + 1, n - k))
    return float(np.mean((low <= p) & (p <= high)))


@pytest.mark.slow
def test_the_sample_interval_covers_the_accuracy():
    from scipy import stats

    rng = np.random.default_rng(2021)
    # the vectorised bounds are the ones from_sample reports
    for k, n in ((0, 20), (7, 20), (20, 20), (993, 1000)):
        low, high = Reviewers.from_sample(k, n).accuracy_interval
        assert low == pytest.approx(0.0 if k == 0 else stats.beta.ppf(0.025, k, n - k + 1), abs=1e-12)
        assert high == pytest.approx(1.0 if k == n else stats.beta.ppf(0.975, k + 1, n - k), abs=1e-12)
    for p in (0.5, 0.8, 0.95, 0.99, 0.999):
        for n in (20, 100, 1000):
            assert _coverage(p, n, 20_000, rng) >= 0.95 - 0.004, (p, n)


def test_a_tie_hidden_by_round_off_goes_to_the_highest_threshold():
    # Found by search: 0.7 and 0.5 are worth exactly the same, but the interpolated
    # accuracy at 3/8 vs 2/8 hand-offs rounds 0.5's float value a few ulps higher.
    conf = [0.5, 1.0, 0.7, 0.1, 0.3, 0.7, 1.0, 0.3]
    y_true = [1, 0, 1, 0, 1, 1, 1, 0]
    case = ref.Case(2, [0] * 8, conf, y_true, None, None, True)
    use_case, workload = (2.0, 5.0, -4.0), ((0.25, 0.6875), (0.875, 0.0))
    search = rref.search_threshold(case.ref(), use_case, workload=workload)
    assert search.maximisers() == [0.7, 0.5]
    curve = reviewer_value_curve(vc.presort(case.predictions()), vc.UseCase(*use_case), Reviewers(workload=workload))
    assert curve[3] > curve[2]  # the float values do split the tie
    fit = fit_reviewer_threshold(vc.presort(case.predictions()), vc.UseCase(*use_case), Reviewers(workload=workload))
    assert fit.threshold == 0.7


# ------------------------------------------------------------------ command line and policy JSON
DIGITS = str(__import__("pathlib").Path(__file__).resolve().parents[2] / "sample_runs" / "digits")
USE_CASE = ["--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-4", "--no-interval"]


def cli(capsys, *argv):
    from valuecore._cli.commands import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def report_json(capsys, tmp_path, name, *extra):
    path = tmp_path / name
    code, out, err = cli(capsys, "report", DIGITS, *USE_CASE, *extra, "--json", path)
    assert code == 0, err
    return json.loads(path.read_text()), path, out


def test_a_flat_accuracy_is_priced_into_the_use_case_for_every_rule(capsys, tmp_path):
    with_people, _, out = report_json(capsys, tmp_path, "a.json", "--reviewer-accuracy", "0.75")
    # 0.75 x 0 + 0.25 x (-4): the same report as a use case whose hand-off is worth -1
    code, _, err = cli(capsys, "report", DIGITS, "--v-correct", "1", "--v-abstain", "-1", "--v-wrong", "-4",
                       "--no-interval", "--json", tmp_path / "b.json")
    assert code == 0, err
    priced = json.loads((tmp_path / "b.json").read_text())
    assert with_people["use_case"]["v_abstain"] == -1.0
    assert with_people["models"] == priced["models"] and with_people["recommendation"] == priced["recommendation"]
    record = with_people["reviewers"]
    assert record["priced_in_use_case"] is True and record["v_abstain_if_right"] == 0.0
    assert record["accuracy"] == 0.75 and record["v_person_wrong"] == -4.0
    assert "reviewers' accuracy 75.0%" in out  # a share, as the Capacity page writes it


def test_a_perfect_reviewer_changes_nothing_but_the_record(capsys, tmp_path):
    plain, _, _ = report_json(capsys, tmp_path, "a.json")
    perfect, _, _ = report_json(capsys, tmp_path, "b.json", "--reviewer-accuracy", "1")
    assert perfect.pop("reviewers")["priced_in_use_case"] is True
    assert perfect == plain


def test_a_workload_report_is_the_exact_scan_and_apply_reads_it_back(capsys, tmp_path):
    document, path, out = report_json(capsys, tmp_path, "w.json", "--reviewer-sample", "180/200",
                                      "--workload", "0.02:0.95,0.10:0.6", "--v-person-wrong", "-6")
    record = document["reviewers"]
    assert record["priced_in_use_case"] is False and record["sample"] == {"n_right": 180, "n_reviewed": 200}
    assert record["workload"] == [{"handoff_rate": 0.02, "accuracy": 0.95}, {"handoff_rate": 0.1, "accuracy": 0.6}]
    r = Reviewers.from_dict(record)
    use_case = vc.UseCase(1, 0, -4)
    runs = vc.load_runs(DIGITS).models
    for entry in document["models"]:
        splits = runs[entry["model"]].splits
        fit = fit_reviewer_threshold(vc.presort(splits["val"]), use_case, r)
        assert entry["policy"]["threshold"] == fit.threshold
        test = vc.presort(splits["test"])
        accepted, correct, wrong = test.counts_at(fit.threshold)
        want = r.total_value(correct, wrong, test.total_weight - accepted, use_case)
        assert entry["evaluation"]["value_total"] == pytest.approx(want, rel=1e-12)
    best = max(document["models"], key=lambda e: e["evaluation"]["value_per_item"])
    assert document["recommendation"]["model"] == best["model"]
    code, _, err = cli(capsys, "apply", path, DIGITS, "--no-interval", "--json", tmp_path / "applied.json")
    assert code == 0, err
    applied = json.loads((tmp_path / "applied.json").read_text())
    stored = {e["model"]: e["evaluation"]["value_total"] for e in document["models"]}
    assert {m["model"]: m["evaluation"]["value_total"] for m in applied["models"]} == pytest.approx(stored, rel=1e-12)


@pytest.mark.parametrize(("extra", "fragment"), [
    (["--workload", "0.5:0.9,0.2:0.8"], "strictly increasing"),
    (["--workload", "0.5"], "RATE:ACCURACY"),
    (["--reviewer-accuracy", "1.5"], "between 0 and 1"),
    (["--reviewer-sample", "9/5"], "RIGHT/REVIEWED"),
    (["--reviewer-accuracy", "0.9", "--reviewer-sample", "9/10"], "not both"),
    (["--workload", "0.1:0.9,0.5:0.8", "--policy", "expected_value"], "one global threshold or per-class"),
])
def test_bad_reviewer_options_get_a_clear_message(capsys, extra, fragment):
    code, _, err = cli(capsys, "report", DIGITS, *USE_CASE, *extra)
    assert code == 2 and fragment in err and "Traceback" not in err


def test_reviewers_need_a_use_case(capsys, tmp_path):
    matrix = tmp_path / "m.csv"
    classes = [str(k) for k in range(10)]
    rows = ["true," + ",".join(classes) + ",abstain"]
    rows += [f"{t}," + ",".join("1" if t == p else "-4" for p in classes) + ",0" for t in classes]
    matrix.write_text("\n".join(rows) + "\n")
    code, _, err = cli(capsys, "report", DIGITS, "--value-matrix", matrix, "--reviewer-accuracy", "0.9")
    assert code == 2 and "value matrix" in err


def test_the_policy_json_refuses_bad_reviewers(capsys, tmp_path):
    from valuecore._pipeline.policy_json import PolicyDocument

    document, _, _ = report_json(capsys, tmp_path, "a.json", "--reviewer-accuracy", "0.9")
    assert PolicyDocument.from_dict(document).reviewers == document["reviewers"]
    bad = json.loads(json.dumps(document))
    bad["reviewers"]["accuracy"] = 1.5
    with pytest.raises(ValueError, match="reviewers"):
        PolicyDocument.from_dict(bad)
    bad["reviewers"]["accuracy"] = 0.9
    bad["reviewers"]["workload"] = [{"handoff_rate": 0.5, "accuracy": 0.9}, {"handoff_rate": 0.1, "accuracy": 0.9}]
    with pytest.raises(ValueError, match="strictly increasing"):
        PolicyDocument.from_dict(bad)


@settings(max_examples=100, **SETTINGS)
@given(st.floats(0.0, 50.0), ACCURACIES)
def test_reviewers_who_err_like_the_model_lower_the_penalty(omega, accuracy):
    # v_person_wrong = v_wrong: the VOC curve read at omega' = a omega / (1 + (1 - a) omega) answers for them.
    effective = Reviewers(accuracy=accuracy).effective_use_case(vc.UseCase.from_omega(omega))
    assert effective.omega == pytest.approx(accuracy * omega / (1 + (1 - accuracy) * omega), rel=1e-12, abs=1e-12)


# ------------------------------------------------------------- VOC and verdict with reviewers
OMEGAS = (0.0, 0.3, 1.0, 2.5, 4.0, 9.0, 40.0)


@settings(max_examples=120, **SETTINGS)
@given(ref.cases(max_n=12, max_classes=4), reviewers())
def test_the_voc_curve_with_reviewers_is_the_brute_force_best_at_every_omega(case, r):
    # Oracle: the best threshold on the items themselves for use case 1 / 0 / -omega, hand-offs priced at
    # the rate each threshold produces (the brute force of reference_reviewers, in exact arithmetic).
    run, rr = vc.presort(case.predictions()), case.ref()
    curve = vc.voc_curve(run, "oracle", reviewers=r)
    n_items = rr.total
    if n_items == 0:
        return
    for omega in OMEGAS:
        want = rref.search_threshold(rr, (1, 0, -omega), **ref_args(r)).best_value / n_items
        assert abs(float(curve.value_at(omega)) - float(want)) <= 1e-9 * (1 + omega) * (1 + abs(r.v_person_wrong or 0))


@settings(max_examples=80, **SETTINGS)
@given(ref.cases(max_n=12, max_classes=3), ref.cases(max_n=12, max_classes=3), reviewers())
def test_the_tuned_voc_curve_with_reviewers_applies_the_reviewer_threshold(tune_case, eval_case, r):
    if tune_case.n_classes != eval_case.n_classes:
        return
    tune, evaluated = vc.presort(tune_case.predictions()), vc.presort(eval_case.predictions())
    curve = vc.voc_curve(evaluated, "tuned", tune_run=tune, reviewers=r)
    for omega in (0.37, 2.3, 7.1):  # away from the breaks, where the threshold in force is unique
        fit = fit_reviewer_threshold(tune, vc.UseCase(1, 0, -omega), r)
        got = float(curve.value_at(omega))
        policy = vc.Policy("threshold", threshold=fit.threshold)
        priced = vc.constraints.priced_use_case(r, vc.UseCase(1, 0, -omega), policy, eval_case.predictions())
        want = vc.evaluate(policy, eval_case.predictions(), priced).value_per_item
        if abs(got - want) > 1e-9 * (1 + omega) * (1 + abs(r.v_person_wrong or 0)):
            # Only a tie on the tuning split (two thresholds worth the same there) may pick another one.
            values = reviewer_value_curve(tune, vc.UseCase(1, 0, -omega), r)
            assert np.sum(values >= values.max() - 1e-9 * (1 + omega) * tune.total_weight) > 1


def test_the_verdict_prices_each_models_hand_offs_at_its_own_rate():
    rng = np.random.default_rng(4)
    proba = rng.dirichlet([1.0, 1.0, 1.0], size=400)
    truth = np.array([rng.choice(3, p=row) for row in proba])
    p = vc.Predictions.from_proba(proba, y_true=truth)
    use_case = vc.UseCase(1, 0, -4)
    team = Reviewers(workload=((0.05, 0.95), (0.4, 0.5)))
    runs = {"strict": (vc.Policy("threshold", threshold=0.9), p), "loose": (vc.Policy("threshold", threshold=0.5), p)}
    judged = vc.verdict(runs, use_case, reviewers=team)
    for standing in judged.standings:
        policy = runs[standing.model][0]
        rate = vc.evaluate(policy, p, use_case).n_abstain / p.total_weight
        expected = vc.evaluate(policy, p, team.use_case_at(use_case, rate)).value_per_item
        assert standing.per_item == pytest.approx(expected, rel=1e-12)
    assert judged.baseline_per_item == pytest.approx(float(team.handoff_value(use_case, 1.0)))
    # Perfect reviewers change nothing; a matrix is refused in words.
    assert vc.verdict(runs, use_case, reviewers=Reviewers()) == vc.verdict(runs, use_case)
    with pytest.raises(ValueError, match="use case"):
        vc.verdict(runs, vc.ValueMatrix(p.classes, use_case.for_classes(p.classes).values), reviewers=team)
    made = use_case.for_classes(p.classes)  # a matrix made from the use case is priced as the use case
    assert vc.verdict(runs, made, reviewers=team) == judged


def _section(page: str, key: str) -> str:
    start = page.index(f'<section id="{key}">')
    return page[start:page.index("</section>", start)]


def _shown(runs, entry):
    """A model's confidences on the data the report shows (its tuning and evaluated splits; no recalibration)."""
    splits = runs[entry["model"]].splits
    return np.concatenate([splits[s].confidence for s in (entry["tuned_on"]["split"], entry["evaluation"]["split"])])


def test_the_html_report_has_a_reviewers_section_that_agrees_with_the_json(capsys, tmp_path):
    import html as html_text

    from valuecore import wording

    page, path = tmp_path / "r.html", tmp_path / "w.json"
    code, _, err = cli(capsys, "report", DIGITS, *USE_CASE, "--workload", "0.02:0.95,0.10:0.6",
                       "--json", path, "--html", page)
    assert code == 0, err
    section = html_text.unescape(_section(page.read_text(encoding="utf-8"), "reviewers"))
    assert "price a hand-off as if the person were always right" in section and "<svg" in section
    document = json.loads(path.read_text())
    r = Reviewers.from_dict(document["reviewers"])
    runs = vc.load_runs([str(DIGITS)]).models
    for entry in document["models"]:  # the section's thresholds and values are the JSON's
        # written as every surface writes them: the digits that tell them apart on the data shown
        text = wording.threshold_on_data(entry["policy"]["threshold"], _shown(runs, entry))
        assert f"<td>{entry['model']}</td><td>{text}</td>" in section
        assert wording.money(entry["evaluation"]["value_per_item"], "") in section
    best = max(document["models"], key=lambda e: e["evaluation"]["value_per_item"])["model"]
    assert f"the best is {best}" in section
    assert wording.money(float(r.handoff_value(vc.UseCase(1, 0, -4), 1.0)), "") in section
    # Per-class thresholds: the section's values are those of the JSON's per-class rules.
    code, _, err = cli(capsys, "report", DIGITS, *USE_CASE, "--workload", "0.02:0.95,0.10:0.6",
                       "--policy", "class_thresholds", "--json", path, "--html", page)
    assert code == 0, err
    section = html_text.unescape(_section(page.read_text(encoding="utf-8"), "reviewers"))
    for entry in json.loads(path.read_text())["models"]:
        rule = wording.rule_phrase(vc.Policy.from_dict(entry["policy"]), _shown(runs, entry))
        assert f"<td>{entry['model']}</td><td>{rule}</td>" in section
        assert wording.money(entry["evaluation"]["value_per_item"], "") in section
    # A flat accuracy is priced into every section; without reviewers there is no such section.
    code, _, err = cli(capsys, "report", DIGITS, *USE_CASE, "--reviewer-accuracy", "0.9", "--html", page)
    assert code == 0, err
    assert "every figure is exact for these reviewers" in _section(page.read_text(encoding="utf-8"), "reviewers")
    code, _, err = cli(capsys, "report", DIGITS, *USE_CASE, "--html", page)
    assert code == 0, err
    assert 'id="reviewers"' not in page.read_text(encoding="utf-8")


# ------------------------------------------------------------- per-class thresholds on a workload curve
@settings(max_examples=250, **SETTINGS)
@given(ref.cases(max_n=9, max_classes=3), ref.use_cases(exact=True), reviewers())
def test_per_class_thresholds_for_reviewers_are_the_exhaustive_optimum(case, vals, r):
    from valuecore.constraints import fit_reviewer_class_thresholds

    p = case.predictions()
    run, rr = vc.presort(p), case.ref()
    if not np.all(p.sample_weight == np.round(p.sample_weight)):
        with pytest.raises(ValueError, match="whole numbers"):
            fit_reviewer_class_thresholds(run, vals.engine(case.classes), r)
        return
    fit = fit_reviewer_class_thresholds(run, vals.engine(case.classes), r)
    best, maximisers = rref.search_class_thresholds(rr, vals.data, **ref_args(r))
    chosen = tuple(t for _, t in fit.class_thresholds)
    achieved = rref.class_threshold_value(rr, chosen, vals.data, **ref_args(r))
    scale = Fraction(scale_of(case, vals, r))
    assert best - achieved <= Fraction(REL) * scale  # the thresholds returned reach the optimum
    assert abs(Fraction(fit.value_total) - achieved) <= Fraction(REL) * scale  # and it says what they are worth
    if case.exact and r.flat:
        assert chosen in maximisers
    # The policy it describes decides as the thresholds say.
    policy = vc.Policy("class_thresholds", class_thresholds=fit.class_thresholds)
    handed = float(np.sum(p.sample_weight[policy.decide(p) == p.n_classes]))
    assert fit.handoff_rate == pytest.approx(handed / p.total_weight if p.total_weight > 0 else 0.0, abs=1e-12)


@settings(max_examples=100, **SETTINGS)
@given(ref.cases(max_n=20, weighted=False), ref.use_cases(exact=False), st.sampled_from(PERFECT + (
    Reviewers(accuracy=0.75), Reviewers(accuracy=0.5, v_person_wrong=-2.0))))
def test_per_class_thresholds_for_a_flat_accuracy_are_todays_for_the_priced_use_case(case, vals, r):
    from valuecore.constraints import fit_reviewer_class_thresholds

    p = case.predictions()
    run = vc.presort(p)
    use_case = vals.engine(case.classes)
    fit = fit_reviewer_class_thresholds(run, use_case, r)
    today = vc.fit_policy("class_thresholds", run, r.effective_use_case(use_case))
    want = vc.evaluate(today, p, r.effective_use_case(use_case)).value_total
    assert fit.value_total == pytest.approx(want, rel=1e-9, abs=1e-9 * scale_of(case, vals, r))


def test_a_workload_report_with_per_class_thresholds_is_the_exact_search_and_apply_reads_it_back(capsys, tmp_path):
    from valuecore.constraints import fit_reviewer_class_thresholds

    document, path, _ = report_json(capsys, tmp_path, "c.json", "--workload", "0.02:0.95,0.10:0.6",
                                    "--policy", "class_thresholds")
    r = Reviewers.from_dict(document["reviewers"])
    use_case = vc.UseCase(1, 0, -4)
    runs = vc.load_runs(DIGITS).models
    gains = []
    for entry in document["models"]:
        splits = runs[entry["model"]].splits
        fit = fit_reviewer_class_thresholds(vc.presort(splits["val"]), use_case, r)
        policy = vc.Policy.from_dict(entry["policy"])
        assert policy == vc.Policy("class_thresholds", class_thresholds=fit.class_thresholds)
        rate = vc.evaluate(policy, splits["test"], use_case).n_abstain / splits["test"].total_weight
        want = vc.evaluate(policy, splits["test"], r.use_case_at(use_case, rate)).value_total
        assert entry["evaluation"]["value_total"] == pytest.approx(want, rel=1e-12)
        # On the tuning split it is at least as good as one threshold tuned for the same reviewers.
        gains.append(fit.value_total - fit_reviewer_threshold(vc.presort(splits["val"]), use_case, r).value_total)
    assert min(gains) >= -1e-9
    code, _, err = cli(capsys, "apply", path, DIGITS, "--no-interval", "--json", tmp_path / "applied.json")
    assert code == 0, err
    applied = json.loads((tmp_path / "applied.json").read_text())
    stored = {e["model"]: e["evaluation"]["value_total"] for e in document["models"]}
    assert {m["model"]: m["evaluation"]["value_total"] for m in applied["models"]} == pytest.approx(stored, rel=1e-12)
