"""The Export page's pick "Thresholds per segment" (offered while a segment column is set, ``segcol``): every
model gets its thresholds per segment with the Segments page's caps, the JSON is byte for byte what
``report --segment COLUMN --policy segment_thresholds --json`` writes, a serving runtime reading it acts on every
item as the CLI's document does, and the pick is kept in the link (``expseg``). With a recalibration set, the
Export page and the first page say that thresholds per segment are fitted without it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from helpers import app as helpers

import valuecore as vc
from valuecore.cli import main

ROOT = Path(__file__).resolve().parents[2]
DIABETES = ROOT / "sample_runs" / "diabetes"
SEG = vc.recommendation.SEGMENT_RULE
COLUMN = "age_band"
LINK = {"src": "sample:diabetes", "vw": "-4"}
CLI_VALUES = ["--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-4", "--currency", "$"]
MENU = "export_policy_kind"
RAW_NOTE = ("Thresholds per segment are fitted on the confidences as given, without the temperature "
            "recalibration set in the sidebar.")


def start(page: str | None = None, **link: str):
    at = helpers.start(page, **link)
    assert not at.exception, [e.value for e in at.exception]
    return at


def pick_segments(at):
    at.selectbox(key=MENU).set_value(SEG).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def cli_json(tmp_path, capsys, *caps: str) -> str:
    out = tmp_path / "cli.json"
    assert main(["report", str(DIABETES), "--segment", COLUMN, "--policy", SEG, *caps, *CLI_VALUES,
                 "--json", str(out)]) == 0
    capsys.readouterr()
    return out.read_text(encoding="utf-8")


def without_settings(text: str) -> str:
    document = json.loads(text)
    document.pop("dashboard_settings")
    return json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def test_the_pick_is_offered_only_while_a_segment_column_is_set():
    at = start("pages/export.py", **LINK, segcol=COLUMN)
    menu = at.selectbox(key=MENU)
    assert f"Thresholds per segment ({COLUMN})" in menu.options
    assert menu.value == vc.RECOMMENDED_RULE  # not picked until the visitor picks it
    plain = start("pages/export.py", **LINK)
    assert not any("segment" in option.lower() for option in plain.selectbox(key=MENU).options)
    # a link asking for the pick without a column: not offered, so the usual JSON (version 2)
    stale = start("pages/export.py", **LINK, expseg="1")
    assert stale.selectbox(key=MENU).value == vc.RECOMMENDED_RULE
    assert json.loads(stale.code[0].value)["schema_version"] == 2


def test_the_picked_export_is_what_report_policy_segment_thresholds_writes(tmp_path, capsys):
    at = pick_segments(start("pages/export.py", **LINK, segcol=COLUMN))
    text = without_settings(at.code[0].value)
    document = json.loads(text)
    assert document["schema_version"] == 3 and all(m["segments"]["column"] == COLUMN for m in document["models"])
    assert len(document["models"]) == 5
    assert text == cli_json(tmp_path, capsys)
    # the pick is in the link, and a link with it opens on it
    assert at.query_params["expseg"] in ("1", ["1"])
    again = start("pages/export.py", **LINK, segcol=COLUMN, expseg="1")
    assert again.selectbox(key=MENU).value == SEG
    assert without_settings(again.code[0].value) == text
    # the other pages keep their rule
    assert json.loads(at.code[0].value)["dashboard_settings"].get("rule", vc.RECOMMENDED_RULE) == vc.RECOMMENDED_RULE


def test_the_pick_takes_the_segments_pages_caps(tmp_path, capsys):
    at = pick_segments(start("pages/export.py", **LINK, segcol=COLUMN, caphandoff="0.05"))
    text = without_settings(at.code[0].value)
    assert json.loads(text)["models"][0]["segments"]["caps"] == {"handoff_gap": 0.05}
    assert text == cli_json(tmp_path, capsys, "--cap-handoff-gap", "0.05")
    uncapped = pick_segments(start("pages/export.py", **LINK, segcol=COLUMN))
    assert without_settings(uncapped.code[0].value) != text


def test_serving_the_export_acts_as_the_cli_document_on_every_test_item(tmp_path, capsys):
    exported = json.loads(pick_segments(start("pages/export.py", **LINK, segcol=COLUMN)).code[0].value)
    cli = json.loads(cli_json(tmp_path, capsys))
    runs = vc.load_runs([str(DIABETES)], segment_column=COLUMN).models
    _, _, fits = vc.policy_json.segment_document(runs, vc.UseCase(1, 0, -4), segment_column=COLUMN)
    for entry in exported["models"]:
        model = entry["model"]
        frame = pd.read_csv(DIABETES / f"{model}.csv", dtype={COLUMN: str}, keep_default_na=False)
        test = frame[frame["split"] == "test"]
        confidences, segments = test[["proba_low", "proba_high"]].to_numpy(), test[COLUMN].to_numpy()
        ours = vc.serving.load_policy(exported, model).decisions(confidences, segments=segments).action
        theirs = vc.serving.load_policy(cli, model).decisions(confidences, segments=segments).action
        np.testing.assert_array_equal(ours, theirs)
        # and both take the fitted thresholds per segment's action
        np.testing.assert_array_equal(ours, fits[model].policy.decide(runs[model].splits["test"],
                                                                      runs[model].segments["test"]))


def test_a_recalibration_is_said_to_be_left_out_of_thresholds_per_segment():
    home = start(**LINK, segcol=COLUMN, cal="temperature")
    assert RAW_NOTE in [i.value for i in home.info]
    export = start("pages/export.py", **LINK, segcol=COLUMN, cal="temperature")
    assert RAW_NOTE in [i.value for i in export.info]
    assert RAW_NOTE in [i.value for i in pick_segments(export).info]
    # no recalibration, or no segment column: nothing to say
    for at in (start(**LINK, segcol=COLUMN), start(**LINK, cal="temperature"),
               start("pages/export.py", **LINK, cal="temperature")):
        assert not any("confidences as given" in i.value for i in at.info)
