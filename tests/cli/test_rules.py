"""The report's lines for a rule's tiers and constraint records (``valuecore/_cli/rules.py``): one line per fact,
each record's state in words, and nothing for a rule with no tiers or records."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import valuecore as vc
from valuecore._cli.rules import describe_constraints, describe_tiers

CAPACITY = {"type": "review_capacity", "max_handoff_rate": 0.1, "handoff_rate": 0.1, "binding": True,
            "value_per_extra_handoff": 0.25, "exact": True}
RISK = {"type": "certified_risk", "max_risk": 0.05, "confidence": 0.9, "certified_upper_bound": 0.04,
        "n_accepted": 120, "n_wrong": 2, "method": "clopper_pearson"}
MONITORING = {"reference_split": "test", "reference_value_per_item": 0.5, "reference_sd_per_item": 1.2,
              "alert_z": 3.0, "reference_mean_sd": 0.01}


def entry(policy, constraints=(), monitoring=None, evaluation=None):
    return SimpleNamespace(policy=policy, constraints=list(constraints), monitoring=monitoring, evaluation=evaluation)


def test_a_plain_threshold_with_no_records_has_no_lines():
    policy = vc.Policy("threshold", threshold=0.8)
    assert describe_tiers(policy, None) == []
    assert describe_constraints(entry(policy)) == []


@pytest.mark.parametrize("binding, state", [(True, "; binding"), (False, "not binding (the best policy fits)")])
def test_review_capacity_says_whether_it_binds(binding, state):
    lines = describe_constraints(entry(vc.Policy("threshold", threshold=0.8), [dict(CAPACITY, binding=binding)]))
    assert len(lines) == 2
    assert lines[0].startswith("review capacity") and lines[0].endswith(state)
    assert lines[1].startswith("value of capacity") and "exact only at hull vertices" not in lines[1]
    inexact = describe_constraints(entry(vc.Policy("threshold", threshold=0.8), [dict(CAPACITY, exact=False)]))
    assert inexact[1].endswith("per-class answer exact only at hull vertices")


def test_certified_risk_names_its_bound_or_says_nothing_is_certified():
    policy = vc.Policy("threshold", threshold=0.8)
    certified = describe_constraints(entry(policy, [RISK]))
    assert [line.split()[0:2] for line in certified] == [["certified", "risk"], ["certification", "method"]]
    assert "certified bound" in certified[0] and "(2 wrong)" in certified[0] and "clopper_pearson" in certified[1]
    nothing = describe_constraints(entry(policy, [dict(RISK, certified_upper_bound=None)]))
    assert nothing[0].endswith("nothing certified, so always abstain")


def test_the_monitoring_reference_comes_first_and_names_its_split():
    lines = describe_constraints(entry(vc.Policy("threshold", threshold=0.8), [CAPACITY], monitoring=MONITORING))
    assert lines[0].startswith("monitoring reference  split 'test'") and len(lines) == 3
