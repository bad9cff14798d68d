"""The decision rules the pages offer: which apply to the selected models and values, and why others do not.

Below the workspace (``dashboard.data`` weighs the rule "recommended" over these) and the views (every page
offers this one list). Nothing here draws.
"""

from __future__ import annotations

import valuecore as vc

from .datasets import aggregated_models, per_item_note
from .safetext import md_text

VALUE_PAGE_KINDS = ("threshold", "calibrated_threshold", "accept_all", "class_thresholds",
                    "calibrated_class_thresholds", "expected_value")
NEEDS_PROBA = frozenset({"expected_value"})
NEEDS_ONE_OMEGA = frozenset({"calibrated_threshold"})

short_list = vc.wording.short_list


def rule_options(ws, models, values) -> tuple[list[str], list[str]]:
    """The decision rules that apply to these models and values (of the workspace ``ws``), and a note per rule
    left out.

    Every page that offers a rule offers these (one setting, one list): first "recommended", each model the
    rule the recommendation would choose for it (``Workspace.policy`` resolves it), then the kinds.
    """
    options, notes = list(VALUE_PAGE_KINDS), []
    if values.use_case is None:
        options = [k for k in options if k not in NEEDS_ONE_OMEGA]
        notes.append("The calibrated threshold ω/(1+ω) needs one penalty ω, and a value matrix has none: it is not "
                     "offered while the matrix is in force (per-class calibrated thresholds are).")
    aggregated = aggregated_models(ws.report, models)
    if aggregated:  # each item's own probability vector is gone: the rule is not offered at all
        options = [k for k in options if k not in NEEDS_PROBA]
        notes.append(md_text(per_item_note(aggregated, "the expected-value rule")) + " It is not offered.")
        models = [m for m in models if m not in aggregated]
    with_proba = [m for m in models if ws.has_proba(m)]
    if not with_proba:
        options = [k for k in options if k not in NEEDS_PROBA]
    if models and len(with_proba) < len(models):
        top_label = [m for m in models if m not in with_proba]
        notes.append(f"{md_text(short_list(top_label))}: top label only, so the expected-value rule "
                     + ("is not offered." if not with_proba else "is not available for them.")
                     + " It needs one probability column per class.")
    return [vc.RECOMMENDED_RULE, *options], notes
