"""Each model's rule under the choice "recommended" is read off the one recommendation (issue 33).

``recommended_rules`` gave every model but the recommended one the rule ``recommend`` chooses for it weighed
alone, by calling ``recommend`` once more per model: five calls per new value on the Value page. The
rules are now read off the one recommendation's candidates (``_rules_alone``). Checked here
against that definition, computed as before (``recommend`` per model alone), on the sample runs
with a use case, a value matrix and a capacity; and that ``recommend`` runs once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import valuecore as vc
import valuecore._decide.recommend as recommend_module
from valuecore._decide.recommend import recommend

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"
MALIGNANT_MISSED = vc.ValueMatrix(("benign", "malignant"), [[1, -4, 0], [-50, 1, 0]])


def _runs(name):
    return vc.load_runs([str(SAMPLES / name)]).models


def rules_weighed_alone(pipeline, values, **constraints) -> dict:
    """The definition: the recommended model's rule, else ``recommend`` on the model and its candidates' rules
    alone (its best rule when that recommends none), else its one candidate's rule, else one threshold."""
    r = recommend(pipeline, values, **constraints)
    rules = {}
    for model in pipeline.runs:
        own = [c for c in r.candidates if c.model == model]
        if model == r.model:
            rules[model] = r.kind
        elif len(own) <= 1:
            rules[model] = own[0].kind if own else "threshold"
        else:
            alone = recommend(pipeline, values, [model], kinds=tuple(c.kind for c in own), **constraints)
            rules[model] = alone.kind if alone.model is not None else own[0].kind
    return rules


CASES = [("digits", vc.UseCase(1, 0, w), {}) for w in (-1.0, -4.0, -20.0, -1000.0)] + [
    ("breast_cancer", vc.UseCase(1, 0, w), {}) for w in (-2.0, -9.0, -60.0)] + [
    ("breast_cancer", MALIGNANT_MISSED, {}),
    ("digits", vc.UseCase(1, 0, -4.0), {"max_handoff_rate": 0.1}),
]


@pytest.mark.parametrize(("name", "values", "constraints"), CASES)
def test_each_models_rule_is_the_one_it_gets_weighed_alone(name, values, constraints):
    runs = _runs(name)
    expected = rules_weighed_alone(vc.Pipeline(runs), values, **constraints)
    assert vc.recommended_rules(vc.Pipeline(runs), values, **constraints) == expected


def test_the_cases_hold_models_whose_rule_alone_is_not_their_best_on_these_items():
    """Otherwise "each model's best candidate" would pass the test above too."""
    differs = 0
    for name, values, constraints in CASES[:4]:
        pipeline = vc.Pipeline(_runs(name))
        r = recommend(pipeline, values, **constraints)
        rules = vc.recommended_rules(pipeline, values, recommendation=r, **constraints)
        best = {}
        for c in r.candidates:
            best.setdefault(c.model, c.kind)
        differs += sum(rules[m] != best[m] for m in best if m != r.model)
    assert differs > 0


def test_recommend_runs_once(monkeypatch):
    calls = []
    real = recommend_module.recommend

    def counted(*args, **kwargs):
        calls.append(args[2] if len(args) > 2 else kwargs.get("models"))
        return real(*args, **kwargs)

    monkeypatch.setattr(recommend_module, "recommend", counted)
    rules = vc.recommended_rules(vc.Pipeline(_runs("digits")), vc.UseCase(1, 0, -4.0))
    assert len(rules) == 5 and len(calls) == 1


def test_a_recommendation_at_another_sureness_is_weighed_again(monkeypatch):
    """The rules alone hold at the recommendation's own ``sure``; ``recommended_rules`` weighs at the default."""
    pipeline, values = vc.Pipeline(_runs("digits")), vc.UseCase(1, 0, -4.0)
    other = recommend(pipeline, values, sure=0.6)
    calls = []
    real = recommend_module.recommend
    monkeypatch.setattr(recommend_module, "recommend", lambda *a, **k: calls.append(1) or real(*a, **k))
    vc.recommended_rules(pipeline, values, recommendation=other)
    weighed = {c.model for c in other.candidates if c.model != other.model}
    assert len(calls) == len(weighed) > 0  # each other model weighed alone, as before
