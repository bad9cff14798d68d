"""The first page and the Export page with a segment column set (the Segments page's setting, ``segcol`` in the
link): the recommendation weighs each model's thresholds per segment, says so in plain words, agrees with
``report --segment``, and the Export page writes byte for byte what ``report --segment COLUMN --json`` writes; a
serving runtime reading that file acts on every item as the recommended thresholds per segment do."""

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
LINK = {"src": "sample:diabetes", "vw": "-4"}
CLI_VALUES = ["--v-correct", "1", "--v-abstain", "0", "--v-wrong", "-4", "--currency", "$"]


def start(page: str | None = None, **link: str):
    at = helpers.start(page, **link)
    assert not at.exception, [e.value for e in at.exception]
    return at


def core_recommendation(column: str):
    runs = vc.load_runs([str(DIABETES)], segment_column=column).models
    pipeline = vc.Pipeline(runs)
    rules, _ = vc.recommendation.segment_rules(pipeline, vc.UseCase(1, 0, -4), column=column)
    return runs, vc.recommend(pipeline, vc.UseCase(1, 0, -4), segment_rules=rules)


def cli_json(tmp_path, capsys, column: str) -> str:
    out = tmp_path / "cli.json"
    assert main(["report", str(DIABETES), "--segment", column, *CLI_VALUES, "--json", str(out)]) == 0
    capsys.readouterr()
    return out.read_text(encoding="utf-8")


def test_the_first_page_weighs_and_names_thresholds_per_segment_when_a_column_is_set(tmp_path, capsys):
    _, r = core_recommendation("age_band")
    assert r.kind == SEG  # on this sample at a wrong answer of -4 they are recommended
    at = start(**LINK, segcol="age_band")
    headline = at.subheader[0].value
    assert "a threshold per segment of age" in headline and r.model.replace("_", "") in headline.replace("\\", "") \
        .replace("_", "")
    said = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert f"{r.model} with a threshold per segment of age_band earns" in said  # the reason, in plain words
    # the CLI's recommendation is the page's
    cli = json.loads(cli_json(tmp_path, capsys, "age_band"))
    assert (cli["recommendation"]["model"], cli["recommendation"]["policy"]) == (r.model, SEG)
    assert cli["recommendation"]["reason"] == vc.wording.recommendation_reason(r, "$")
    # no column set: nothing about segments
    plain = start(**LINK)
    assert "segment" not in plain.subheader[0].value


def test_the_export_writes_what_report_segment_writes_and_serving_acts_alike(tmp_path, capsys):
    column = "age_band"
    at = start("pages/export.py", **LINK, segcol=column)
    exported = json.loads(at.code[0].value)
    assert exported["schema_version"] == 3 and exported["recommendation"]["policy"] == SEG
    exported.pop("dashboard_settings")
    text = json.dumps(exported, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    assert text == cli_json(tmp_path, capsys, column)
    # serving that file takes the recommended thresholds per segment's action on every item
    runs, r = core_recommendation(column)
    serving = vc.serving.load_policy(exported)
    frame = pd.read_csv(DIABETES / f"{r.model}.csv", dtype={column: str}, keep_default_na=False)
    test = frame[frame["split"] == "test"]
    decided = serving.decisions(test[["proba_low", "proba_high"]].to_numpy(), segments=test[column].to_numpy())
    np.testing.assert_array_equal(decided.action, r.policy.decide(runs[r.model].splits["test"]))
    # without a segment column the export stays version 2
    plain = json.loads(start("pages/export.py", **LINK).code[0].value)
    assert plain["schema_version"] == 2 and all("segments" not in m for m in plain["models"])


def test_the_exports_note_on_the_refitted_entry_is_in_words():
    at = start("pages/export.py", **LINK, segcol="age_band")
    notes = [w.value for w in at.warning]
    assert not any("RuleRefitted(" in n for n in notes), notes
    assert any("its policy is the recommended rule, a threshold per segment, not one threshold" in n.replace("\\", "")
               for n in notes), notes
