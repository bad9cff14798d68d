"""The serving runtime holds every value it reads of a policy document to the schema's bounds, without jsonschema
(``valuecore/_serve/policy_bounds.py``): a document the schema refuses there is refused by ``load_policy`` at
load time, with a ValueError naming the key, and a document the schema and ``apply``'s reader take still loads.

The documents are real exports (``build_policy_document`` for each rule and calibration, ``report --json`` with
a recommendation, monitoring and a review capacity, ``report --segment`` with both segment rules), mutated at
one key the runtime reads; jsonschema (installed here) is the referee."""

from __future__ import annotations

import copy
import json
import math
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

import valuecore as vc
from valuecore.cli import main
from valuecore.policy_json import ALL_POLICY_KINDS, PolicyDocument, build_policy_document, policy_schema
from valuecore.serving import load_policy

from helpers.serving import ASSISTED
from segment_fixtures import segment_case

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"
SCHEMA = Draft202012Validator(policy_schema())
HUGE = 10**400  # a dict holds it (a JSON file's reader refuses it)


# ------------------------------------------------------------------ real documents
def exported_documents(folder) -> dict[str, dict]:
    """Every document the repository writes for the breast-cancer runs (each rule with each calibration it takes,
    a value matrix, a recommendation with monitoring and a review capacity) and for a run with segments (both
    segment rules), as a server reads them: parsed JSON."""
    runs = vc.load_runs([f"{SAMPLES}/breast_cancer"]).models
    documents = {}
    for kind in ALL_POLICY_KINDS:
        for method in ("none", "temperature", "isotonic", "platt"):
            extra = {"assisted": ASSISTED} if kind == "two_tier" else {}
            if kind == "shortlist":
                extra = {"shortlist_values": {"1": [0.5, -1.0], "2": [0.25, -0.5]}}
            try:
                document, _ = build_policy_document({"logreg": runs["logreg"]}, vc.UseCase(1, 0, -4), kind=kind,
                                                    calibration_method=method, with_interval=False, **extra)
            except ValueError:  # isotonic with the expected-value rule or a shortlist: refused, as documented
                continue
            documents[f"{kind}+{method}"] = json.loads(document.to_json())
    matrix = vc.ValueMatrix(("benign", "malignant"), [[1, -3, 0], [-10, 2, -0.5]])
    document, _ = build_policy_document({"svm_rbf": runs["svm_rbf"]}, matrix, kind="expected_value",
                                        calibration_method="temperature", with_interval=False)
    documents["value matrix"] = json.loads(document.to_json())
    report = folder / "report.json"
    assert main(["report", f"{SAMPLES}/breast_cancer", "--omega", "4", "--monitoring", "--max-handoff-rate", "0.2",
                 "--policy", "threshold", "--no-interval", "--json", str(report)]) == 0
    documents["report"] = json.loads(report.read_text(encoding="utf-8"))
    for rule in ("threshold", "class_thresholds"):
        (folder / rule).mkdir()
        _, _, path, _ = segment_case(folder / rule, options=("--segment-rule", rule))
        documents[f"segments {rule}"] = json.loads(path.read_text(encoding="utf-8"))
    return documents


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    return exported_documents(tmp_path_factory.mktemp("exports"))


# ------------------------------------------------------------------ what the runtime reads
# Keys the runtime never reads (they are checked for their JSON type only): where they are.
UNREAD_TOP = {"generated_by", "accept_rule", "reviewers"}
UNREAD_ENTRY = {"run_sha256", "tuned_on", "evaluation", "notes", "constraints", "monitoring", "prior_shift"}
UNREAD_SEGMENTS = {"caps", "feasible", "exact", "cap_cost_per_item", "unconstrained_thresholds",
                   "unconstrained_class_thresholds", "tuning"}
# Keys of a policy the runtime reads as null (calibration: method none) when absent, as docs/serving.md's documents
# rely on: deleting them is no mutation to refuse.
ABSENT_AS_NULL = {"threshold", "class_thresholds", "assist_threshold", "calibration"}


def is_read(path: tuple) -> bool:
    if not path or path[0] in UNREAD_TOP or "omega" in path:  # omega: derived from the values, ignored
        return False
    if path[0] == "models" and len(path) > 2:
        if path[2] in UNREAD_ENTRY:
            return False
        if path[2] == "segments" and len(path) > 3 and path[3] in UNREAD_SEGMENTS:
            return False
    return True


def read_paths(document, path=()) -> list[tuple]:
    """The path of each value the runtime reads, objects and lists included."""
    found = [path] if path and is_read(path) else []
    children = (document.items() if isinstance(document, dict) else
                enumerate(document) if isinstance(document, list) else ())
    for key, child in children:
        if is_read((*path, key)):
            found += read_paths(child, (*path, key))
    return found


def shown(path: tuple) -> str:
    """A path as the messages write it: ``models[0].policy.calibration.temperature``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


# ------------------------------------------------------------------ mutations
REPLACEMENTS = ["0.5", "", True, None, 0, -1, 2, 0.5, 1.5, 2.0, 1e-7, 1e-320, 1e7, -1e7, 1e308, math.nan, math.inf,
                -math.inf, HUGE, -HUGE, [], [0.5], [0.5, 0.5, 0.5], {}, {"x": 1},
                # the words of the schema's enums, each in the wrong place somewhere
                "threshold", "two_tier", "shortlist", "class_thresholds", "expected_value", "temperature", "platt",
                "isotonic", "none", "cumulative", "top_k", "abstain", "not_yet", "deploy"]
DELETE, EXTRA_KEY, DROP_FIRST = "delete the key", "add a key", "drop the first element"
MUTATIONS = [*range(len(REPLACEMENTS)), DELETE, EXTRA_KEY, DROP_FIRST]


def mutated(document: dict, path: tuple, mutation) -> dict | None:
    """``document`` with the value at ``path`` changed; None when the mutation does not apply there."""
    document = copy.deepcopy(document)
    *parents, last = path
    holder = document
    for key in parents:
        holder = holder[key]
    if mutation == DELETE:
        if not isinstance(holder, dict) or (len(path) == 4 and path[2] == "policy" and last in ABSENT_AS_NULL):
            return None
        del holder[last]
    elif mutation == EXTRA_KEY:
        if not isinstance(holder[last], dict):
            return None
        holder[last]["extra"] = 1
    elif mutation == DROP_FIRST:
        if not isinstance(holder[last], list) or not holder[last]:
            return None
        del holder[last][0]
    else:
        holder[last] = copy.deepcopy(REPLACEMENTS[mutation])
    return document


def apply_reads(document: dict) -> bool:
    """Whether ``apply``'s reader takes the document: the schema, then the reading (finite numbers, a threshold for
    each class, ...). A document whose numbers are NaN or infinite is none a JSON file can hold."""
    try:
        PolicyDocument.from_dict(copy.deepcopy(document))
    except ValueError:
        return False
    return True


# What the runtime refuses beyond the schema and apply's reader, as apply does when the values meet a run: values
# no run's sums hold (VALUE_LIMIT).
BEYOND_THE_SCHEMA = re.compile(r"invalid policy document at use_case: the values of the use case must be at most "
                               r"1e\+100 in magnitude")
PATH_NAMED = re.compile(r"invalid policy document at ([^:]+):")


def check_the_runtime(document: dict, path: tuple) -> None:
    """The runtime refuses, naming the key (or the object holding it), what the schema refuses; refuses with a
    ValueError what apply refuses; and takes what both take."""
    schema_takes = SCHEMA.is_valid(document)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a document recommending no model says so
        if schema_takes and apply_reads(document):
            several = len(document["models"]) > 1 and "recommendation" not in document  # then name one
            try:
                load_policy(copy.deepcopy(document), document["models"][0]["model"] if several else None)
            except ValueError as refused:
                assert BEYOND_THE_SCHEMA.match(str(refused)), (shown(path), str(refused))
            return
        with pytest.raises(ValueError) as refused:
            load_policy(copy.deepcopy(document))
    if schema_takes:
        return  # refused by apply's reading too (e.g. a class without its threshold): in its words
    if path == ("schema_version",):
        assert str(refused.value).startswith("schema_version ")
        return
    named = PATH_NAMED.search(str(refused.value))
    assert named, (shown(path), str(refused.value))
    key, parent = shown(path), shown(path[:-1])
    assert key.startswith(named.group(1)) or named.group(1).startswith(parent), (key, str(refused.value))


def test_the_exported_documents_are_valid_and_load(documents):
    assert len(documents) >= 30
    for name, document in documents.items():
        assert SCHEMA.is_valid(document), name
        load_policy(document, document["models"][0]["model"])


@settings(max_examples=400)
@given(data=st.data())
def test_a_read_value_the_schema_refuses_is_refused_at_load_naming_its_key(documents, data):
    name = data.draw(st.sampled_from(sorted(documents)))
    path = data.draw(st.sampled_from(read_paths(documents[name])))
    document = mutated(documents[name], path, data.draw(st.sampled_from(MUTATIONS)))
    if document is not None:
        check_the_runtime(document, path)


# ------------------------------------------------------------------ each check, on a small document
BASE = {"schema_version": 3, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
        "models": [{"model": "m", "classes": ["a", "b", "c"], "run_sha256": None, "tuned_on": {"split": "val", "n": 3},
                    "evaluation": None,
                    "policy": {"kind": "threshold", "threshold": 0.5, "class_thresholds": None,
                               "calibration": {"method": "none"}}}]}
TEMPERATURE = {"method": "temperature", "temperature": 1.5, "use_logits": False}
PLATT = {"method": "platt", "a": 1.5, "b": -0.25, "use_logits": False}
ISOTONIC = {"method": "isotonic", "x": [0.2, 0.9], "y": [0.3, 0.8]}
SHORTLIST = {"rule": "top_k", "k": 2, "level": None, "list_threshold": 0.3, "values": {"2": [0.5, -0.1]}}
SEGMENTS = {"column": "region", "unseen": "abstain", "thresholds": {"north": 0.6, "south": None},
            "use_cases": {"north": {"v_correct": 1, "v_abstain": 0, "v_wrong": -9}}}
CLASS_SEGMENTS = {"column": "region", "unseen": "abstain", "rule": "class_thresholds",
                  "class_thresholds": {"north": {"a": 0.6, "b": None}}}


def policy(**keys):
    return lambda d: d["models"][0]["policy"].update(keys)


def calibration(base, **keys):
    return policy(calibration={**base, **keys})


def without(record: dict, key: str) -> dict:
    return {k: v for k, v in record.items() if k != key}


def two_tier(**assisted):
    return policy(kind="two_tier", threshold=0.9, assist_threshold=0.6, assisted=assisted)


def shortlist(**keys):
    return policy(kind="shortlist", threshold=0.9, shortlist={**SHORTLIST, **keys})


def segments(record):
    def change(d):
        d["models"][0]["policy"]["threshold"] = None
        d["models"][0]["segments"] = record
    return change


def entry(**keys):
    return lambda d: d["models"][0].update(keys)


def top(**keys):
    return lambda d: d.update(keys)


AT = r"invalid policy document at "
P = AT + r"models\[0\]\.policy"
S = AT + r"models\[0\]\.segments"
# Each check, with a value it refuses. The base (2c43ae7) took those marked "silently" (read as something else, or
# ignored), crashed on those marked with an error, and refused the others in words that named no key.
CHECKS = {
    # the model and the rule
    "empty model name": (entry(model=""), AT + r"models\[0\]\.model: must not be empty"),  # silently
    "unknown kind": (policy(kind="best"), P + r"\.kind: unknown policy kind 'best'; expected one of"),  # no key
    "a kind without a global threshold": (policy(kind="accept_all"),
                                          P + r"\.threshold: a accept_all policy takes no global threshold"),
    "class thresholds for one threshold": (policy(class_thresholds={"a": 0.5, "b": 0.5, "c": 0.5}),
                                           P + r"\.class_thresholds: a threshold policy takes no class_thresholds"),
    "no class thresholds": (policy(kind="class_thresholds", threshold=None),
                            P + r"\.class_thresholds: must be an object giving each class its threshold"),
    # the calibration
    "calibration without a method": (policy(calibration={}),  # silently: no recalibration
                                     P + r"\.calibration: 'method' is a required property"),
    "unknown method": (calibration({"method": "beta"}), P + r"\.calibration\.method: unknown calibration method"),
    "a parameter of none": (calibration({"method": "none"}, temperature=2.0),  # silently ignored
                            P + r"\.calibration: a none calibration takes no \['temperature'\]; it takes"),
    "a parameter of another method": (calibration(PLATT, temperature=2.0),
                                      P + r"\.calibration: a platt calibration takes no \['temperature'\]"),
    "no temperature": (calibration({"method": "temperature"}),
                       P + r"\.calibration: 'temperature' is a required property"),
    "temperature 0": (calibration(TEMPERATURE, temperature=0),
                      P + r"\.calibration\.temperature: 0 is not a temperature from 1e-06 to 1e\+06 \(positive"),
    "temperature below the bound": (calibration(TEMPERATURE, temperature=1e-7),
                                    P + r"\.calibration\.temperature: 1e-07 is not a temperature from 1e-06"),
    "temperature above the bound": (calibration(TEMPERATURE, temperature=2e6),
                                    P + r"\.calibration\.temperature: 2000000\.0 is not a temperature from 1e-06"),
    "negative temperature": (calibration(TEMPERATURE, temperature=-2), P + r"\.calibration\.temperature: -2 is not"),
    "NaN temperature": (calibration(TEMPERATURE, temperature=math.nan), P + r"\.calibration\.temperature: nan is not"),
    "infinite temperature": (calibration(TEMPERATURE, temperature=math.inf),
                             P + r"\.calibration\.temperature: inf is not"),
    "temperature as text": (calibration(TEMPERATURE, temperature="1.5"),
                            P + r"\.calibration\.temperature: '1\.5' is not a temperature"),
    "temperature true": (calibration(TEMPERATURE, temperature=True), P + r"\.calibration\.temperature: True is not"),
    "400-digit temperature": (calibration(TEMPERATURE, temperature=HUGE),
                              P + r"\.calibration\.temperature: 1000000.*… is not a temperature"),
    "use_logits as text": (calibration(TEMPERATURE, use_logits="yes"),
                           P + r"\.calibration\.use_logits: must be true or false, got 'yes'"),
    "Platt's a as text": (calibration(PLATT, a="1.5"), P + r"\.calibration\.a: '1\.5' is not a number from -1e\+06"),
    "Platt's b true": (calibration(PLATT, b=False), P + r"\.calibration\.b: False is not a number"),
    "Platt's a beyond the bound": (calibration(PLATT, a=-2e6), P + r"\.calibration\.a: -2000000\.0 is not a number"),
    "400-digit Platt b": (calibration(PLATT, b=-HUGE), P + r"\.calibration\.b: -1000000.*… is not a number"),
    "NaN Platt a": (calibration(PLATT, a=math.nan), P + r"\.calibration\.a: nan is not a number"),
    "no Platt b": (calibration(without(PLATT, "b")), P + r"\.calibration: 'b' is a required property"),
    "isotonic x not a list": (calibration(ISOTONIC, x=0.5), P + r"\.calibration\.x: must be a non-empty list"),
    "isotonic y empty": (calibration(ISOTONIC, y=[]), P + r"\.calibration\.y: must be a non-empty list"),
    "isotonic x above 1": (calibration(ISOTONIC, x=[0.2, 1.5]), P + r"\.calibration\.x\[1\]: 1\.5 is not a number in"),
    "400-digit isotonic y": (calibration(ISOTONIC, y=[0.3, HUGE]),  # OverflowError
                             P + r"\.calibration\.y\[1\]: 1000000.*… is not"),
    "positive_class as a number": (calibration(ISOTONIC, positive_class=1),
                                   P + r"\.calibration\.positive_class: must be true or false, got 1"),
    # the assisted tier
    "no assisted tier": (policy(kind="two_tier", threshold=0.9, assist_threshold=0.6),
                         P + r": 'assisted' is a required property"),
    "assisted tier as a list": (policy(kind="two_tier", threshold=0.9, assist_threshold=0.6, assisted=[1, 2, 3]),
                                P + r"\.assisted: must be an object"),
    "assisted tier without a cost": (two_tier(v_confirmed_correct=0.5, v_confirmed_wrong=-1),  # silently: cost 0
                                     P + r"\.assisted: 'cost' is a required property"),
    "400-digit assisted value": (two_tier(v_confirmed_correct=HUGE, v_confirmed_wrong=-1, cost=0.1),  # OverflowError
                                 P + r"\.assisted\.v_confirmed_correct: 1000000.*… is not a finite number"),
    "assisted value as text": (two_tier(v_confirmed_correct=0.5, v_confirmed_wrong="-1", cost=0.1),
                               P + r"\.assisted\.v_confirmed_wrong: '-1' is not a finite number"),
    # the shortlist
    "no shortlist": (policy(kind="shortlist", threshold=0.9), P + r": 'shortlist' is a required property"),
    "shortlist without a rule": (policy(kind="shortlist", threshold=0.9, shortlist=without(SHORTLIST, "rule")),
                                 P + r"\.shortlist: 'rule' is a required property"),  # silently: top_k
    "shortlist with another key": (shortlist(size=3),  # silently ignored
                                   P + r"\.shortlist: a shortlist takes no \['size'\]; it takes"),
    "unknown shortlist rule": (shortlist(rule="best"), P + r"\.shortlist\.rule: 'best' is not one of"),
    "shortlist k of 0": (shortlist(k=0), P + r"\.shortlist\.k: 0 is not a whole number from 1 to the 3 classes"),
    "400-digit shortlist k": (shortlist(k=HUGE), P + r"\.shortlist\.k: 1000000.*… is not a whole number"),
    "shortlist level above 1": (shortlist(rule="cumulative", k=None, level=1.5),
                                P + r"\.shortlist\.level: 1\.5 is not a number above 0 and at most 1"),
    "400-digit list threshold": (shortlist(list_threshold=HUGE),  # OverflowError
                                 P + r"\.shortlist\.list_threshold: 1000000.*… is not a number in \[0, 1\]"),
    "shortlist size as words": (shortlist(values={" 2": [0.5, -0.1]}),  # silently: size 2
                                P + r"\.shortlist\.values: ' 2' is not a list size"),
    "shortlist values empty": (shortlist(k=None, list_threshold=None, values={}),
                               P + r"\.shortlist\.values: must give the values of at least one list size"),
    "shortlist value pair of 3": (shortlist(values={"2": [0.5, -0.1, 0]}), P + r"\.shortlist\.values\.2: must be"),
    "400-digit shortlist value": (shortlist(values={"2": [0.5, -HUGE]}),  # OverflowError
                                  P + r"\.shortlist\.values\.2\[1\]: -1000000.*… is not a finite number"),
    # the thresholds per segment
    "segments without unseen": (segments(without(SEGMENTS, "unseen")),  # silently: abstain
                                S + r": 'unseen' is a required property"),
    "segment column empty": (segments({**SEGMENTS, "column": ""}), S + r"\.column: must be a non-empty string"),
    "unknown segment rule": (segments({**SEGMENTS, "rule": "best"}), S + r"\.rule: 'best' is not one of"),
    "segments without thresholds": (segments(without(SEGMENTS, "thresholds")),
                                    S + r": 'thresholds' is a required property"),
    "segments with no segment": (segments({**SEGMENTS, "thresholds": {}}),  # silently: every item handed off
                                 S + r"\.thresholds: must name at least one segment"),
    "segment threshold NaN": (segments({**SEGMENTS, "thresholds": {"north": math.nan}}),
                              S + r"\.thresholds\.north: nan is not a number in \[0, 1\] or null"),
    "both kinds of segment thresholds": (segments({**CLASS_SEGMENTS, "thresholds": {"north": 0.5}}),
                                         S + r"\.thresholds: a segment rule 'class_thresholds' takes class_thresholds"),
    "class thresholds of a segment as pairs": (  # silently
        segments({**CLASS_SEGMENTS, "class_thresholds": {"north": [["a", 0.6]]}}),
        S + r"\.class_thresholds\.north: must be an object"),
    "a class threshold of a segment above 1": (
        segments({**CLASS_SEGMENTS, "class_thresholds": {"north": {"a": 1.5}}}),
        S + r"\.class_thresholds\.north\.a: 1\.5 is not in \[0, 1\]"),
    "segment use cases as a list": (segments({**SEGMENTS, "use_cases": [1]}),  # AttributeError
                                    S + r"\.use_cases: must be an object"),
    "a segment's use case without v_wrong": (
        segments({**SEGMENTS, "use_cases": {"north": {"v_correct": 1, "v_abstain": 0}}}),
        S + r"\.use_cases\.north: the use case misses \['v_wrong'\]"),
    # the recommendation
    "recommendation null": (top(recommendation=None), AT + r"recommendation: must be an object"),  # silently
    "recommendation's reason a number": (top(recommendation={"model": None, "policy": None, "reason": 5}),
                                         AT + r"recommendation\.reason: must be a string, got 5"),  # silently
    "400-digit schema_version": (top(schema_version=HUGE), r"^schema_version 1000000.*… is not supported"),
}


def small_document(change) -> dict:
    document = copy.deepcopy(BASE)
    change(document)
    return document


@pytest.mark.parametrize("name", CHECKS)
def test_each_check_refuses_naming_the_key_what_the_schema_refuses(name):
    change, message = CHECKS[name]
    document = small_document(change)
    with pytest.raises(ValueError, match=message):
        load_policy(document)
    assert not SCHEMA.is_valid(document) or not apply_reads(document), "the schema and apply take it"


def test_values_no_run_holds_are_refused_at_load_naming_the_use_case():
    """Beyond the schema (any number) and apply's reader: values above VALUE_LIMIT, which apply refuses when they
    meet a run, and the runtime at load (on the base, in words that named no key)."""
    document = small_document(lambda d: d["use_case"].update(v_wrong=-1e300))
    assert SCHEMA.is_valid(document) and apply_reads(document)
    with pytest.raises(ValueError, match=BEYOND_THE_SCHEMA.pattern + r"; got -1e\+300"):
        load_policy(document)


def test_the_small_documents_are_valid_before_each_change():
    """Each change above breaks a document the schema, apply and the runtime all take."""
    for change in (policy(calibration=TEMPERATURE), policy(calibration=PLATT, kind="threshold"),
                   policy(calibration=ISOTONIC), two_tier(v_confirmed_correct=0.5, v_confirmed_wrong=-1, cost=0.1),
                   shortlist(), segments(SEGMENTS), segments(CLASS_SEGMENTS),
                   top(recommendation={"model": "m", "policy": "threshold", "reason": "r"})):
        document = small_document(change)
        if "platt" in json.dumps(document):
            document["models"][0]["classes"] = ["a", "b"]  # Platt: binary only
        assert SCHEMA.is_valid(document) and apply_reads(document), document
        load_policy(document)


def test_the_values_of_a_tier_are_refused_in_words_when_no_float_holds_them():
    """Read by apply too (PolicyDocument): a 400-digit value of the assisted tier or of a shortlist is a ValueError
    naming the value, not an OverflowError."""
    for change, words in ((two_tier(v_confirmed_correct=0.5, v_confirmed_wrong=-HUGE, cost=0.1),
                           "v_confirmed_wrong of the assisted tier must be a finite number, got -1000000"),
                          (shortlist(values={"2": [HUGE, 0.0]}), "must be a finite number, got 1000000")):
        with pytest.raises(ValueError, match=words):
            PolicyDocument.from_dict(small_document(change))
