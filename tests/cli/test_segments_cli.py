"""``report --segment COLUMN`` and ``apply`` of a per-segment policy: the figures printed are the fit's, the
JSON is version 3, and bad input (a missing column, empty labels, caps without segments) exits 2 naming the
file, the column and the rows."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import valuecore as vc
from valuecore.cli import main
from valuecore.constraints import SegmentCaps, fit_segments


def write_run(path, n=240, seed=3, blank_rows=()):
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south"], n)
    confidence = rng.uniform(0.5, 1, n)
    right = rng.uniform(size=n) < confidence - np.where(region == "south", 0.2, 0)
    frame = pd.DataFrame({"y_true": np.where(right, "a", "b"), "proba_a": confidence, "proba_b": 1 - confidence,
                          "region": region, "split": np.where(np.arange(n) < n // 2, "val", "test")})
    frame.loc[list(blank_rows), "region"] = ""
    frame.to_csv(path, index=False)
    return frame


def tuning_split(frame):
    """The run's tuning rows and their predictions, as the report reads them."""
    val = frame[frame.split == "val"]
    return val, vc.Predictions.from_proba(val[["proba_a", "proba_b"]].to_numpy(), y_true=val.y_true,
                                          classes=["a", "b"])


def test_report_prints_each_segment_and_the_caps_cost_and_writes_version_3(tmp_path, capsys):
    frame = write_run(tmp_path / "m.csv")
    out_json = tmp_path / "p.json"
    code = main(["report", str(tmp_path / "m.csv"), "--segment", "region", "--policy", "segment_thresholds",
                 "--omega", "4", "--cap-handoff-gap", "0.02", "--currency", "$", "--json", str(out_json)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    val, p = tuning_split(frame)
    fit = fit_segments(p, val.region.to_numpy(), vc.UseCase.from_omega(4), caps=SegmentCaps(handoff_gap=0.02))
    assert vc.wording.segment_cap_sentence(fit, "$") in captured.out
    for row in vc.wording.segment_rows(fit.evaluation, "$"):
        assert row[0] in captured.out and row[3] in captured.out and row[5] in captured.out
    data = json.loads(out_json.read_text())
    assert data["schema_version"] == 3
    assert data["models"][0]["segments"]["thresholds"] == dict(fit.policy.thresholds)
    assert data["models"][0]["segments"]["cap_cost_per_item"] == pytest.approx(fit.cap_cost_per_item)


def test_too_small_segments_are_warned_about(tmp_path, capsys):
    write_run(tmp_path / "m.csv", n=60)
    assert main(["report", str(tmp_path / "m.csv"), "--segment", "region", "--omega", "1"]) == 0
    assert "too small to say anything" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["--segment", "tier"], "m.csv, column tier: no such column"),
    (["--cap-handoff-gap", "0.1"], "--cap-handoff-gap cap the gaps between segments, and no --segment"),
    (["--segment", "region", "--cap-error-gap", "1.5"], "error_gap is a gap between two shares, at most 1"),
    (["--segment", "region", "--policy", "two_tier"], "does not combine with --policy two_tier"),
    (["--policy", "segment_thresholds"], "--policy segment_thresholds sets a threshold per segment, and no --segment"),
    (["--segment-rule", "class_thresholds"], "--segment-rule class_thresholds says what each segment sets, and no"),
])
def test_bad_segment_options_exit_2_in_words(tmp_path, capsys, argv, message):
    write_run(tmp_path / "m.csv")
    assert main(["report", str(tmp_path / "m.csv"), "--omega", "4", *argv]) == 2
    assert message in capsys.readouterr().err


def test_empty_segment_labels_name_the_file_column_and_rows(tmp_path, capsys):
    write_run(tmp_path / "m.csv", blank_rows=(4, 9))
    assert main(["report", str(tmp_path / "m.csv"), "--omega", "4", "--segment", "region"]) == 2
    assert "m.csv, column region: empty segment labels: every row needs its segment at rows 5, 10" in (
        capsys.readouterr().err)
    report = vc.load_runs([str(tmp_path / "m.csv")], segment_column="region")
    assert not report.models and report.errors[0].rows == (5, 10) and report.errors[0].column == "region"


def test_apply_needs_the_segment_column_and_reads_the_one_the_policy_names(tmp_path, capsys):
    write_run(tmp_path / "m.csv")
    assert main(["report", str(tmp_path / "m.csv"), "--segment", "region", "--policy", "segment_thresholds",
                 "--omega", "4", "--json", str(tmp_path / "p.json")]) == 0
    capsys.readouterr()
    assert main(["apply", str(tmp_path / "p.json"), str(tmp_path / "m.csv")]) == 0
    assert "a threshold per segment" in capsys.readouterr().out
    renamed = pd.read_csv(tmp_path / "m.csv").rename(columns={"region": "area"})
    renamed.to_csv(tmp_path / "other.csv", index=False)
    assert main(["apply", str(tmp_path / "p.json"), str(tmp_path / "other.csv")]) == 2
    assert "column region: no such column" in capsys.readouterr().err


def test_report_segment_recommends_thresholds_per_segment_where_they_earn_more(tmp_path, capsys):
    """`report --segment` weighs each model's thresholds per segment beside its other rules: on segments whose best
    thresholds differ a lot it recommends them, says so, and writes version 3 with that entry's segments."""
    from helpers.segments import frame_far_apart

    frame_far_apart().to_csv(tmp_path / "m.csv", index=False)
    out = tmp_path / "p.json"
    assert main(["report", str(tmp_path / "m.csv"), "--segment", "region", "--omega", "4", "--json", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.startswith("recommendation: Deploy m with a threshold per segment of region (act when confidence")
    data = json.loads(out.read_text())
    assert data["schema_version"] == 3 and data["recommendation"]["policy"] == "segment_thresholds"
    assert data["models"][0]["segments"]["column"] == "region"


def test_per_class_thresholds_per_segment_are_printed_and_written_as_fitted(tmp_path, capsys):
    frame = write_run(tmp_path / "m.csv")
    out_json = tmp_path / "p.json"
    code = main(["report", str(tmp_path / "m.csv"), "--segment", "region", "--policy", "segment_thresholds",
                 "--segment-rule", "class_thresholds",
                 "--omega", "4", "--cap-error-gap", "0.05", "--json", str(out_json)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    val, p = tuning_split(frame)
    fit = fit_segments(p, val.region.to_numpy(), vc.UseCase.from_omega(4), caps=SegmentCaps(error_gap=0.05),
                       rule="class_thresholds")
    assert "per-class thresholds per segment of the column 'region'" in captured.out
    assert vc.wording.segment_cap_sentence(fit) in captured.out
    confidences = {r: p.confidence[val.region.to_numpy() == r] for r in ("north", "south")}
    for row in vc.wording.segment_rows(fit.evaluation, confidences=confidences):
        assert row[1] in captured.out and row[3] in captured.out
    segments = json.loads(out_json.read_text())["models"][0]["segments"]
    assert segments["rule"] == "class_thresholds"
    assert segments["class_thresholds"] == fit.policy.to_dict()["class_thresholds"]


def test_an_approximate_per_class_search_is_said_in_words():
    p = vc.Predictions.from_top_label(["a"] * 6, [0.9, 0.8, 0.6, 0.9, 0.7, 0.6], ["a", "a", "b", "a", "b", "a"],
                                      classes=["a", "b"])
    fit = fit_segments(p, ["x", "x", "x", "y", "y", "y"], vc.UseCase(1, 0, -1), caps=SegmentCaps(handoff_gap=0.0),
                       rule="class_thresholds", max_choices=1)
    assert not fit.exact
    assert "The search is approximate: it kept" in vc.wording.segment_cap_sentence(fit) or (
        "the search is approximate" in vc.wording.segment_cap_sentence(fit))


def test_the_html_report_has_a_section_per_segment_with_the_gaps_beside_the_caps(tmp_path, capsys):
    write_run(tmp_path / "m.csv")
    code = main(["report", str(tmp_path / "m.csv"), "--segment", "region", "--policy", "segment_thresholds",
                 "--segment-rule", "class_thresholds",
                 "--omega", "4", "--cap-handoff-gap", "0.1", "--html", str(tmp_path / "r.html"),
                 "--json", str(tmp_path / "p.json")])
    assert code == 0, capsys.readouterr().err
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    section = page[page.index('<section id="segments">'):]
    section = section[:section.index("</section>")]
    assert "Thresholds per segment of the column &#x27;region&#x27;" in section
    for name in ("north", "south"):
        assert f"<td>{name}</td>" in section
    assert "Hand-off rate</td><td class=\"num\">10.0%</td>" in section  # the cap beside the gap
    assert "<svg" in section
    # the chart's title, the page's subtitle and the model's name under it (a title of a title drew no text)
    drawn = section[section.index("<svg"):]
    assert ">Each segment, measure by measure</text>" in drawn
    assert re.search(r"<tspan>Lines: the value[^<]*bound</tspan><tspan[^>]*>m</tspan>", drawn)
    stored = json.loads((tmp_path / "p.json").read_text())
    assert '&quot;class_thresholds&quot;' in page and stored["models"][0]["segments"]["rule"] == "class_thresholds"


def test_per_class_thresholds_per_segment_can_be_the_recommendation(tmp_path, capsys):
    """With --segment-rule class_thresholds the recommendation weighs per-class thresholds per segment; where
    they win it names them in words and the JSON's entry holds them, as the fit does."""
    from helpers.segments import frame_far_apart

    frame_far_apart().to_csv(tmp_path / "m.csv", index=False)
    out = tmp_path / "p.json"
    assert main(["report", str(tmp_path / "m.csv"), "--segment", "region", "--segment-rule", "class_thresholds",
                 "--omega", "4", "--json", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.startswith("recommendation: Deploy m with per-class thresholds per segment of region (in easy: act on")
    segments = json.loads(out.read_text())["models"][0]["segments"]
    assert segments["rule"] == "class_thresholds" and set(segments["class_thresholds"]) == {"easy", "hard"}


SOUTH_MATRIX = {"classes": ["b", "a"], "value_matrix": [[2, -0.5, 0], [-0.7, 1, -0.1]]}


@pytest.mark.parametrize("policy", ["segment_thresholds", "recommended"])
def test_segment_values_fit_as_fit_segments_does_and_are_recorded(tmp_path, capsys, policy):
    """`--segment-values`: the thresholds printed and written are those of `fit_segments` with the same mapping;
    the policy JSON keeps each segment's values; the recommendation leaves the thresholds per segment out."""
    frame = write_run(tmp_path / "m.csv")
    (tmp_path / "sv.json").write_text(json.dumps({"south": SOUTH_MATRIX}))
    out_json = tmp_path / "p.json"
    code = main(["report", str(tmp_path / "m.csv"), "--segment", "region", "--policy", policy, "--omega", "4",
                 "--segment-values", str(tmp_path / "sv.json"), "--json", str(out_json)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    val, p = tuning_split(frame)
    south = vc.ValueMatrix(("a", "b"), [[1, -0.7, -0.1], [-0.5, 2, 0]])  # SOUTH_MATRIX in the runs' class order
    fit = fit_segments(p, val.region.to_numpy(), {"north": vc.UseCase.from_omega(4), "south": south})
    same_values = fit_segments(p, val.region.to_numpy(), vc.UseCase.from_omega(4))
    assert dict(fit.policy.thresholds) != dict(same_values.policy.thresholds)  # the mapping changes the fit
    confidences = {r: p.confidence[val.region.to_numpy() == r] for r in ("north", "south")}
    for row in vc.wording.segment_rows(fit.evaluation, confidences=confidences):
        assert row[1] in captured.out and row[5] in captured.out
    assert "left out of the recommendation" in captured.err
    data = json.loads(out_json.read_text())
    if policy == "segment_thresholds":
        segments = data["models"][0]["segments"]
        assert segments["thresholds"] == dict(fit.policy.thresholds)
        assert segments["use_cases"]["south"]["value_matrix"] == south.values.tolist()
        assert segments["use_cases"]["north"]["omega"] == 4
        assert data["recommendation"]["model"] is None and "their own values" in data["recommendation"]["reason"]
    else:
        assert data["recommendation"]["policy"] != "segment_thresholds"


@pytest.mark.parametrize(("content", "message"), [
    ({"west": {"v_correct": 1, "v_abstain": 0, "v_wrong": -2}}, "sv.json: no run has the segment 'west'"),
    ({"south": {"v_correct": 1, "v_abstain": 0, "v_wrong": "x"}}, "sv.json, segment 'south': use case v_wrong must"),
    ({"south": {"v_correct": 1, "v_abstain": 0}}, "sv.json, segment 'south': the use case misses ['v_wrong']"),
    ({"north": {"classes": ["a", "c"], "value_matrix": [[1, -1, 0], [-1, 1, 0]]}},
     "sv.json, segment 'north': model m: the value matrix is for classes ['a', 'c']"),
    ([1, 2], "sv.json: the values per segment must be a JSON object"),
])
def test_bad_segment_values_exit_2_naming_the_file_and_segment(tmp_path, capsys, content, message):
    write_run(tmp_path / "m.csv")
    (tmp_path / "sv.json").write_text(json.dumps(content))
    assert main(["report", str(tmp_path / "m.csv"), "--segment", "region", "--omega", "4",
                 "--segment-values", str(tmp_path / "sv.json")]) == 2
    assert message in capsys.readouterr().err


def test_segment_values_need_a_segment_column(tmp_path, capsys):
    write_run(tmp_path / "m.csv")
    assert main(["report", str(tmp_path / "m.csv"), "--omega", "4", "--segment-values", "sv.json"]) == 2
    assert "--segment-values gives values per segment, and no --segment COLUMN" in capsys.readouterr().err


def test_unknown_segment_values_name_a_few_segments_not_all_of_them(tmp_path, capsys):
    """5,000 segments once made a 44 KB line: both lists are cut after ten names of at most 200 characters."""
    n = 5_000
    long_name = "x" * 5_000
    frame = write_run(tmp_path / "m.csv", n=n)
    frame["region"] = [f"s{i}" for i in range(n - 1)] + [long_name]
    frame.to_csv(tmp_path / "m.csv", index=False)
    unknown = {f"nosuch{i}": {"v_correct": 1, "v_abstain": 0, "v_wrong": -2} for i in range(30)}
    (tmp_path / "sv.json").write_text(json.dumps(unknown))
    assert main(["report", str(tmp_path / "m.csv"), "--segment", "region", "--omega", "4",
                 "--segment-values", str(tmp_path / "sv.json")]) == 2
    err = capsys.readouterr().err
    assert "sv.json: no run has the segments 'nosuch0', 'nosuch1', " in err and "… (30 in all)" in err, err[:500]
    assert "(the segments are 's0', 's1', " in err and "… (5000 in all))" in err, err[:500]
    assert len(err) < 1_000, (len(err), err[:500])
    # A name past the cap is cut, not written out: ten names before it leave it out of the list here.
    frame["region"] = [long_name] + ["north"] * (n - 1)
    frame.to_csv(tmp_path / "m.csv", index=False)
    assert main(["report", str(tmp_path / "m.csv"), "--segment", "region", "--omega", "4",
                 "--segment-values", str(tmp_path / "sv.json")]) == 2
    err = capsys.readouterr().err
    assert f"'north', '{'x' * 199}…')" in err and long_name not in err, err[-400:]
