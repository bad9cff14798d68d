"""The names the command line offers as choices, and one sentence about runs, importable without numpy.

``python -m valuecore --help`` builds its parser from these alone, so it loads
no numpy; the modules that act on them (``fitting``, ``voc``, ``table``)
import them from here.
"""

POLICY_KINDS = (
    "accept_all",
    "threshold",
    "calibrated_threshold",
    "class_thresholds",
    "calibrated_class_thresholds",
    "expected_value",
)
# Kinds that need more than the values: two_tier needs the values of its assisted tier,
# shortlist the values of a hand-off with a shortlist.
TIERED_KINDS = ("two_tier", "shortlist")
ALL_POLICY_KINDS = POLICY_KINDS + TIERED_KINDS
# Not a policy kind but a choice of one per model: the rule the recommendation would choose for it
# (valuecore.recommended_rules). The default of `report --policy` and of the dashboard's pages.
RECOMMENDED_RULE = "recommended"
# A threshold per segment (docs/segments.md): a candidate of the recommendation, and `report --segment`'s
# choice of that rule for every model; its policy JSON entries hold ``segments`` (schema version 3).
SEGMENT_RULE = "segment_thresholds"

VOC_MODES = ("oracle", "tuned", "calibrated", "accept_all")

DEFAULT_KS = (0, 1, 2, 4, 8, 10)

# Why a rule cannot run on a top-label run; ``predictions`` raises it, ``wording`` re-exports it for the app and
# the CLI (so ``wording``, and with it every ``--help``, loads no numpy).
NO_PROBA_NOTE = (
    "needs the full probability vector (proba_<class> columns); this run only has the top label and its confidence"
)
