"""The dashboard's Settings: exact round trips through the URL and through the policy JSON (Hypothesis).

* settings -> query parameters -> (a real URL, encoded and decoded) -> settings
  is the identity, floats bit for bit (-0.0, subnormals, 17 digits), value
  matrices and awkward model and class names included;
* settings -> policy JSON -> import -> settings is the identity (the data
  source is the importer's own, never the document's);
* any query string at all gives settings and notes, never an exception; a
  refused parameter falls back to its default and is named in a note.
"""

from __future__ import annotations

import json
import math
import urllib.parse
from dataclasses import fields, replace

from hypothesis import given, settings as hypothesis_settings, strategies as st
import pytest

import valuecore as vc
from valuecore._model.values import check_value_range
from dashboard.settings import (
    COMPARE_RESAMPLES,
    VOC_AREA_MAX,
    VOC_OMEGA_STEP,
    BIN_STRATEGIES,
    CALIBRATION_METHODS,
    CHUNKINGS,
    HOME_PERIODS,
    PERIODS,
    PROMISE_CONFIDENCES,
    QUERY_KEYS,
    KINDS,
    RULES,
    SETTINGS_BLOCK,
    VOC_AREA_ROWS,
    VOC_MODES,
    Settings,
    _CURRENCY_FORBIDDEN,
    document_with_settings,
    settings_from_document,
)

AWKWARD = st.text(
    alphabet=st.sampled_from(list("abcXYZ019 ,;&=?#%+\"'\\/[]{}:é漢🙂\t") + ["\u200b"]), min_size=1, max_size=10
)
FLOATS = st.floats(allow_nan=False, allow_infinity=False, width=64)
# A value matrix holds amounts the core computes exactly (valuecore.policy_json.VALUE_LIMIT): larger ones are
# refused in words (tests/io/test_hostile_inputs.py), so a round trip is only asked of these.
MATRIX_FLOATS = st.floats(min_value=-1e100, max_value=1e100, width=64).filter(lambda x: x == 0 or abs(x) >= 1e-100)
SPLITS = st.none() | AWKWARD
NAMES = st.none() | AWKWARD  # a model chosen on a page (None: the page's default)
SHARES = st.floats(min_value=0.0, max_value=1.0)  # the reviewers panel's shares and accuracies
CELLS = st.none() | st.floats(min_value=0.0, max_value=VOC_AREA_MAX)  # a cell of the VOC range table (None: empty)


@st.composite
def matrices(draw):
    classes = draw(st.lists(AWKWARD, min_size=2, max_size=4, unique=True))
    row = st.tuples(*[MATRIX_FLOATS] * (len(classes) + 1))
    rows = draw(st.lists(row, min_size=len(classes), max_size=len(classes)))
    return (tuple(classes), tuple(tuple(float(x) for x in row) for row in rows))


@st.composite
def ranges(draw):
    # what the VOC page's slider can show: 0 to 100 in steps of 0.5
    low = draw(st.integers(0, 199))
    high = draw(st.integers(low + 1, 200))
    return (low * VOC_OMEGA_STEP, high * VOC_OMEGA_STEP)


SETTINGS = st.builds(
    Settings,
    source=st.sampled_from(["sample:digits", "sample:breast_cancer", "upload"]) | AWKWARD,
    models=st.none() | st.lists(AWKWARD, max_size=4, unique=True).map(tuple),
    v_correct=FLOATS,
    v_abstain=FLOATS,
    v_wrong=FLOATS,
    matrix=st.none() | matrices(),
    currency=st.text(max_size=5).filter(lambda t: all(c.isprintable() and c not in _CURRENCY_FORBIDDEN for c in t)),
    rule=st.sampled_from(RULES),
    tune_split=SPLITS,
    eval_split=SPLITS,
    calibration=st.sampled_from(CALIBRATION_METHODS),
    voc_mode=st.sampled_from(VOC_MODES),
    voc_range=st.none() | ranges(),
    compare_pair=st.none() | st.tuples(AWKWARD, AWKWARD),
    compare_resamples=st.sampled_from(COMPARE_RESAMPLES),
    compare_seed=st.integers(0, 2**31 - 1),
    monitor_split=SPLITS,
    monitor_chunking=st.sampled_from(CHUNKINGS),
    monitor_period=st.sampled_from(PERIODS),
    monitor_chunks=st.integers(2, 40),
    monitor_retune=st.booleans(),
    backtest_split=SPLITS,
    backtest_chunks=st.integers(2, 20),
    calibration_examined=st.none() | st.sampled_from(CALIBRATION_METHODS),
    calibration_bins=st.integers(5, 30),
    calibration_strategy=st.sampled_from(BIN_STRATEGIES),
    what_if=st.none() | st.floats(min_value=0.0, max_value=1.0),
    value_show_tuning=st.booleans(),
    value_hist_model=NAMES,
    voc_bands=st.booleans(),
    voc_areas=st.lists(st.tuples(CELLS, CELLS), max_size=VOC_AREA_ROWS).map(tuple),
    constraints_model=NAMES,
    constraints_volume=st.floats(min_value=1.0, max_value=1e15),
    constraints_capacity=st.floats(min_value=0.0, max_value=1e15),
    constraints_reviewer=st.floats(min_value=1.0, max_value=1e15),
    constraints_per_class=st.none() | st.booleans(),
    constraints_max_risk=st.floats(min_value=0.0, max_value=0.3),
    constraints_confidence=st.sampled_from(PROMISE_CONFIDENCES),
    constraints_v_ok=st.none() | MATRIX_FLOATS,
    constraints_v_bad=st.none() | MATRIX_FLOATS,
    constraints_cost=st.none() | st.floats(min_value=0.0, max_value=1e15),
    reviewers_rate_low=SHARES,
    reviewers_acc_low=SHARES,
    reviewers_rate_high=SHARES,
    reviewers_acc_high=SHARES,
    reviewers_v_wrong=st.none() | MATRIX_FLOATS,
    matrix_classes=st.none() | st.lists(AWKWARD, min_size=1, max_size=4, unique=True).map(tuple),
    matrix_model=NAMES,
    matrix_rule=st.none() | st.sampled_from(KINDS),
    home_volume=st.integers(1, 10**12),
    home_period=st.sampled_from(HOME_PERIODS),
)


def same_bits(a: Settings, b: Settings) -> bool:
    """Equal field by field, floats compared by their repr (so -0.0 is not 0.0)."""
    return repr(a) == repr(b)


def through_a_browser(query: dict[str, str]) -> dict[str, list[str]]:
    """Encode the parameters into a URL and read them back, as a browser and Streamlit do."""
    url = "http://127.0.0.1:8501/value-and-thresholds?" + urllib.parse.urlencode(query)
    return urllib.parse.parse_qs(urllib.parse.urlsplit(url).query, keep_blank_values=True)


@pytest.mark.heavy
@hypothesis_settings(max_examples=150, deadline=None)
@given(SETTINGS)
def test_settings_round_trip_through_the_url_bit_for_bit(settings):
    query = settings.to_query()
    assert set(query) <= QUERY_KEYS
    back, notes = Settings.from_query(through_a_browser(query))
    assert notes == []
    assert same_bits(back, settings)


def test_floats_in_a_link_keep_every_digit():
    settings = Settings(v_wrong=-4.1234567, v_abstain=-0.0, v_correct=5e-324)
    query = settings.to_query()
    assert query["vw"] == "-4.1234567" and query["va"] == "-0.0"
    back, _ = Settings.from_query(through_a_browser(query))
    assert same_bits(back, settings)
    assert math.copysign(1.0, back.v_abstain) == -1.0


def test_defaults_make_an_empty_link():
    assert Settings().to_query() == {}
    assert Settings.from_query({}) == (Settings(), [])


@hypothesis_settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(QUERY_KEYS)) | st.text(max_size=6), st.text(max_size=40),
                       max_size=8))
def test_any_link_gives_settings_and_notes_never_an_exception(params):
    settings, notes = Settings.from_query(params)
    assert isinstance(settings, Settings)
    for key in params:
        if key not in QUERY_KEYS:
            assert any(repr(key) in note for note in notes)
    # What was accepted survives a second trip unchanged.
    again, more = Settings.from_query(settings.to_query())
    assert more == [] and same_bits(again, settings)


def test_refused_parameters_are_named_and_fall_back_to_the_default():
    settings, notes = Settings.from_query({"vw": "nan", "rule": "bogus", "vm": '{"classes": ["a"]}', "cur": "dollars",
                                           "vocr": "[5, 1]", "vc": "2"})
    assert settings == Settings(v_correct=2.0)
    assert len(notes) == 5
    for key in ("vw=", "rule=", "vm=", "cur=", "vocr="):
        assert any(key in note for note in notes)


# ------------------------------------------------------------ policy JSON
def _calibration(method: str) -> dict:
    return {
        "none": {"method": "none"},
        "temperature": {"method": "temperature", "temperature": 1.5, "use_logits": True},
        "isotonic": {"method": "isotonic", "x": [0.0, 1.0], "y": [0.0, 1.0]},
    }[method]


def document_for(settings: Settings) -> dict:
    """A policy JSON as the Export page writes it for these settings (policies made up, not fitted)."""
    values = settings.value_matrix if settings.matrix is not None else settings.use_case
    classes = settings.matrix[0] if settings.matrix is not None else ("a", "b")
    models = settings.models or ("only model",)
    kind = "threshold" if settings.rule == vc.RECOMMENDED_RULE else settings.rule
    extra = {}
    if kind in ("threshold", "calibrated_threshold"):
        extra["threshold"] = 0.5
    elif kind in ("class_thresholds", "calibrated_class_thresholds"):
        extra["class_thresholds"] = tuple((c, 0.75) for c in classes)
    policy = vc.Policy(kind, calibration=_calibration(settings.calibration), **extra)
    entries = tuple(vc.policy_json.PolicyEntry(m, None, classes, policy, {"split": settings.tune_split, "n": 1}, None)
                    for m in models)
    return document_with_settings(vc.policy_json.PolicyDocument(values, entries), settings)


@pytest.mark.heavy
@hypothesis_settings(max_examples=100, deadline=None)
@given(SETTINGS, SETTINGS)
def test_settings_round_trip_through_the_policy_json(settings, importer):
    text = json.dumps(document_for(settings), allow_nan=False, ensure_ascii=False)
    vc.policy_json.validate_policy_document(json.loads(text))
    restored, notes = settings_from_document(json.loads(text), importer)
    assert notes == []
    assert restored.source == importer.source  # a document never chooses what the server reads
    assert same_bits(restored, replace(settings, source=importer.source))


def test_a_document_without_the_settings_block_restores_what_its_entries_record():
    settings = Settings(v_wrong=-7.25, rule="class_thresholds", calibration="temperature", tune_split="val",
                        models=("x", "y"))
    data = document_for(settings)
    del data[SETTINGS_BLOCK]
    restored, notes = settings_from_document(data, Settings(currency="€", source="upload"))
    assert notes == []
    for name in ("v_correct", "v_abstain", "v_wrong", "matrix", "rule", "calibration", "tune_split", "models"):
        assert getattr(restored, name) == getattr(settings, name), name
    assert restored.currency == "€" and restored.source == "upload"


def test_every_field_has_a_link_parameter():
    settings = Settings(models=("m",), matrix=(("a", "b"), ((1.0, 2.0, 3.0), (4.0, 5.0, 6.0))), tune_split="t",
                        eval_split="e", voc_range=(1.0, 2.0), compare_pair=("a", "b"), monitor_split="p",
                        backtest_split="q", calibration_examined="isotonic", what_if=0.5, source="upload",
                        currency="€", rule="expected_value", calibration="isotonic", voc_mode="oracle",
                        compare_resamples=500, compare_seed=3, monitor_chunking="count", monitor_period="D",
                        monitor_chunks=3, monitor_retune=True, backtest_chunks=3, calibration_bins=6,
                        calibration_strategy="quantile", v_correct=2.0, v_abstain=1.0, v_wrong=-1.0,
                        value_show_tuning=True, value_hist_model="m", voc_bands=True, voc_areas=((2.0, None),),
                        constraints_model="m", constraints_volume=5.0, constraints_capacity=1.0,
                        constraints_reviewer=2.0, constraints_per_class=True, constraints_max_risk=0.1,
                        constraints_confidence=0.99, constraints_v_ok=3.0, constraints_v_bad=-2.0,
                        constraints_cost=0.25, constraints_weights_are_copies=True, constraints_list_size=3,
                        constraints_list_in=0.6, constraints_list_out=-0.5, constraints_list_rule="cumulative",
                        monitor_bands_model="m", monitor_bands_split="p",
                        reviewers_rate_low=0.05, reviewers_acc_low=0.99,
                        reviewers_rate_high=0.5, reviewers_acc_high=0.7, reviewers_v_wrong=-9.0,
                        matrix_classes=("a", "b"), matrix_model="m",
                        matrix_rule="expected_value", home_volume=7, home_period="day",
                        segment_column="region", segment_model="m", segment_cap_handoff=0.05,
                        segment_cap_error=0.0, segment_cap_value=0.25, export_segment_rule=True)
    assert all(getattr(settings, f.name) != f.default for f in fields(Settings))
    assert len(settings.to_query()) == len(fields(Settings))


def test_page_choices_out_of_range_are_refused_with_a_note():
    params = {"sure": "0.5", "maxrisk": "0.9", "areas": "[[-1, 2]]", "per": "fortnight", "volume": "0",
              "bands": "yes", "mrule": "magic", "perday": "inf", "vconfirm": "-1",
              "areas ": "[]", "mclasses": '"a"'}
    settings, notes = Settings.from_query(params)
    assert settings == Settings()
    assert len(notes) == len(params)
    for key in params:
        assert any(f"{key}=" in note or repr(key) in note for note in notes), key
    too_many = "[" + ",".join(["[0, 1]"] * (VOC_AREA_ROWS + 1)) + "]"
    assert Settings.from_query({"areas": too_many})[0] == Settings()


def test_empty_cells_of_the_voc_range_table_survive_a_link():
    settings = Settings(voc_areas=((None, None), (0.5, None), (None, 3.0), (-0.0, 1e-300)))
    back, notes = Settings.from_query(through_a_browser(settings.to_query()))
    assert notes == [] and same_bits(back, settings)


def test_the_pages_own_option_lists_are_the_ones_a_link_accepts():
    from dashboard.views import home

    assert HOME_PERIODS == home.PERIODS


def test_a_recommended_entry_with_another_rule_does_not_change_the_rule_restored():
    """The export writes the recommended model with the recommended rule; the import reads the rule of the rest."""
    settings = Settings(rule="threshold", models=("x", "y", "z"))
    data = document_for(settings)
    document = vc.policy_json.PolicyDocument.from_dict(data)
    per_class = vc.Policy("class_thresholds", class_thresholds=(("a", 0.75), ("b", 0.75)))
    entries = tuple(replace(e, policy=per_class) if e.model == "y" else e for e in document.entries)
    recommendation = {"model": "y", "policy": "class_thresholds", "reason": "y earns the most."}
    stated = replace(document, entries=entries, recommendation=recommendation)
    data = document_with_settings(stated, settings)
    del data[SETTINGS_BLOCK]
    text = json.dumps(data, allow_nan=False)
    restored, notes = settings_from_document(json.loads(text), Settings(source="upload", rule="expected_value"))
    assert notes == [] and restored.rule == "threshold" and restored.models == ("x", "y", "z")
    assert vc.policy_json.PolicyDocument.from_json(text).recommendation == recommendation
    # without the recommendation, the same entries are two rules: said, and the current one kept
    del data["recommendation"]
    restored, notes = settings_from_document(data, Settings(source="upload", rule="expected_value"))
    assert restored.rule == "expected_value" and any("different decision rules" in n for n in notes)


def test_a_document_whose_models_hold_their_own_rules_restores_the_rule_recommended():
    """report's default writes each model's recommended rule: read back without a settings block, that is the
    rule "recommended" (not a note that the models differ)."""
    settings = Settings(rule="threshold", models=("x", "y", "z"))
    document = vc.policy_json.PolicyDocument.from_dict(document_for(settings))
    per_class = vc.Policy("class_thresholds", class_thresholds=(("a", 0.75), ("b", 0.75)))
    own = {"y": per_class, "z": vc.Policy("accept_all")}
    entries = tuple(replace(e, policy=own[e.model]) if e.model in own else e for e in document.entries)
    recommendation = {"model": "x", "policy": "threshold", "reason": "x earns the most."}
    data = replace(document, entries=entries, recommendation=recommendation).to_dict()
    restored, notes = settings_from_document(data, Settings(source="upload", rule="expected_value"))
    assert notes == [] and restored.rule == vc.RECOMMENDED_RULE
    # with the block, the block says the rule (left out when it is the default)
    data[SETTINGS_BLOCK] = Settings(rule="accept_all").to_query()
    assert settings_from_document(data, Settings(source="upload"))[0].rule == "accept_all"
    data[SETTINGS_BLOCK] = Settings().to_query()
    assert "rule" not in data[SETTINGS_BLOCK]
    assert settings_from_document(data, Settings(source="upload", rule="threshold"))[0].rule == vc.RECOMMENDED_RULE


# ------------------------------------------------------- the reviewers panel
REVIEWER_KEYS = {"reviewers_rate_low": "rvrate1", "reviewers_acc_low": "rvacc1", "reviewers_rate_high": "rvrate2",
                 "reviewers_acc_high": "rvacc2", "reviewers_v_wrong": "rvwrong"}


@hypothesis_settings(max_examples=100, deadline=None)
@given(SHARES, SHARES, SHARES, SHARES, st.none() | MATRIX_FLOATS)
def test_the_reviewers_panel_round_trips_through_the_url(rate_low, acc_low, rate_high, acc_high, v_wrong):
    settings = Settings(reviewers_rate_low=rate_low, reviewers_acc_low=acc_low, reviewers_rate_high=rate_high,
                        reviewers_acc_high=acc_high, reviewers_v_wrong=v_wrong)
    query = settings.to_query()
    # a setting at its default stays out of the link, any other is in it under its own key
    for name, key in REVIEWER_KEYS.items():
        differs = repr(getattr(settings, name)) != repr(getattr(Settings(), name))
        assert (key in query) == (differs and getattr(settings, name) is not None), name
    back, notes = Settings.from_query(through_a_browser(query))
    assert notes == [] and same_bits(back, settings)


def test_hostile_reviewer_values_in_a_link_are_refused_with_a_note():
    params = {"rvrate1": "nan", "rvacc1": "1.5", "rvrate2": "-0.1", "rvacc2": "9" * 100_000,
              "rvwrong": "1e400"}
    settings, notes = Settings.from_query(params)
    assert settings == Settings()
    assert len(notes) == len(params)
    for key in params:
        assert any(f"{key}=" in note for note in notes), key
    assert all(len(note) < 200 for note in notes)  # a huge value is not echoed whole
    assert Settings.from_query({"rvwrong": str(-10 * vc.policy_json.VALUE_LIMIT)})[0] == Settings()
    assert Settings.from_query({"rvacc2": "inf", "rvrate1": "0x1p-3"})[0] == Settings()
    # in range, it is taken as is
    assert Settings.from_query({"rvacc2": "0.25", "rvwrong": "-0.0"}) == (
        Settings(reviewers_acc_high=0.25, reviewers_v_wrong=-0.0), [])


def test_a_hand_edited_list_of_models_is_told_what_to_write():
    for raw in ("logreg", '"logreg"', "[1, 2]", "{}"):
        settings, notes = Settings.from_query({"m": raw})
        assert settings.models == Settings().models and len(notes) == 1, raw
        assert 'expected a JSON list of names, such as ["logreg","mlp"]' in notes[0] and "Expecting" not in notes[0]
    assert Settings.from_query({"m": '["logreg","mlp"]'})[0].models == ("logreg", "mlp")


def test_a_matrix_cell_too_small_for_any_interval_reads_as_zero():
    """The sidebar's rule (amounts below 1e-100 read as 0) holds for a value-matrix cell: a cell of -5e-324 (the
    random walk's) stopped every page that recommends a rule, since a recommendation weighs rules by intervals."""
    settings = Settings(matrix=(("a", "b"), ((1.0, -5e-324, 0.0), (-4.0, 1.0, 1e-101))))
    assert settings.value_matrix.values.tolist() == [[1.0, 0.0, 0.0], [-4.0, 1.0, 0.0]]
    check_value_range(settings.value_matrix, interval=True)  # what a recommendation asks of it
