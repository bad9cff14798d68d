"""One rule on every page (issue 19.2): by default the pages show each model with its recommended rule.

The default rule is "recommended" (``valuecore.recommended_rules``): the recommended model gets the
recommendation's own rule, so Compare, Capacity & guarantees and Monitor open on the first page's
recommendation, model AND rule; and the Export page writes what ``report`` writes by default.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import valuecore as vc
from valuecore._cli.commands import main

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SAMPLES = ROOT / "sample_runs"
PER_CLASS = ("class_thresholds", "calibrated_class_thresholds")


def start(page: str, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def expected(sample: str, values: vc.UseCase):
    runs = vc.load_runs(SAMPLES / sample).models
    pipeline = vc.Pipeline(runs, "val", "test")
    recommendation = vc.recommend(pipeline, values)
    return pipeline, recommendation, vc.recommended_rules(pipeline, values, recommendation=recommendation)


def test_the_recommended_rule_is_each_models_own_and_the_recommendations_for_its_model():
    values = vc.UseCase(1, 0, -4)
    pipeline, recommendation, rules = expected("breast_cancer", values)
    assert set(rules) == set(pipeline.runs) and rules[recommendation.model] == recommendation.kind
    assert pipeline.policy(recommendation.model, vc.RECOMMENDED_RULE, values) == recommendation.policy
    for model, kind in rules.items():
        assert kind in vc.policy_json.POLICY_KINDS
        if model != recommendation.model:  # the rule it would get alone
            assert kind == vc.recommend(pipeline, values, [model]).kind or not vc.recommend(
                pipeline, values, [model]).model


def test_compare_capacity_and_monitor_open_on_the_recommended_model_and_rule():
    values = vc.UseCase(1, 0, -4)
    pipeline, recommendation, rules = expected("breast_cancer", values)
    assert recommendation.model is not None
    query = {"src": "sample:breast_cancer"}
    compare = start("compare", **query)
    assert compare.selectbox(key="compare_model_a").value == recommendation.model
    assert compare.selectbox(key="compare_policy_kind").value == vc.RECOMMENDED_RULE
    capacity = start("constraints", **query)
    assert capacity.selectbox(key="constraints_model").value == recommendation.model
    assert capacity.toggle(key="constraints_per_class").value == (recommendation.kind in PER_CLASS)
    assert "capclass" not in capacity.query_params  # following the rule, not frozen into the link
    monitor = start("monitor", **query)
    assert monitor.selectbox(key="monitor_policy_kind").value == vc.RECOMMENDED_RULE
    assert monitor.selectbox(key="monitor_bands_model").value == recommendation.model
    value = start("value", **query)
    shown = json.loads(next(c.value for c in value.code if c.language == "json"))
    for model, policy in shown.items():  # the Value page's exact rule per model
        assert policy["kind"] == rules[model], model
    assert shown[recommendation.model] == json.loads(json.dumps(recommendation.policy.to_dict()))


def test_the_export_by_default_is_what_report_writes_by_default(tmp_path, capsys):
    at = start("export", src="sample:digits", vw="-1000")
    exported = json.loads(at.code[0].value)
    out = tmp_path / "cli.json"
    assert main(["report", str(SAMPLES / "digits"), "--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-1000",
                 "--currency", "$", "--json", str(out)]) == 0
    capsys.readouterr()
    cli = json.loads(out.read_text(encoding="utf-8"))
    assert cli["models"] == exported["models"] and cli["recommendation"] == exported["recommendation"]
    # at -1000 the 450 evaluated items show no rule earns: both say "not yet" and name what would settle it
    assert cli["recommendation"]["status"] == "not_yet" and cli["recommendation"]["model"] is None
    settle = cli["recommendation"]["would_settle"]
    kinds = {e["model"]: e["policy"]["kind"] for e in cli["models"]}
    assert kinds[settle["model"]] == settle["policy"] and settle["labelled_items"] > 450
    # an explicit rule is still accepted, and written for every model but the recommended one
    assert main(["report", str(SAMPLES / "digits"), "--omega", "1000", "--policy", "threshold", "--json",
                 str(out)]) == 0
    capsys.readouterr()
    explicit = json.loads(out.read_text(encoding="utf-8"))
    assert {e["policy"]["kind"] for e in explicit["models"]} == {"threshold"}
