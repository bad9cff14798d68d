"""The first page's view model (dashboard.views.home), without Streamlit: its numbers are the core's."""

import dataclasses
import shutil

import numpy as np
import pandas as pd
import pytest

import valuecore as vc
from dashboard.data import workspace
from dashboard.safetext import md_text
from dashboard.views import home as view
from dashboard.views import rule_options, shown_confidences
from view_fixtures import SAMPLES, pipeline, selection


@pytest.fixture(scope="module")
def breast_cancer():
    chosen = selection("breast_cancer", values=(1.0, 0.0, -9.0))
    ws = workspace(chosen)
    return chosen, ws, view.build(chosen, ws)


def test_the_recommendation_is_the_cores_over_every_rule_offered(breast_cancer):
    chosen, ws, page = breast_cancer
    kinds, _ = rule_options(ws, chosen.models, chosen.values)
    core = pipeline(chosen)
    expected = vc.recommend(core, chosen.values, chosen.models, kinds=kinds)
    r = page.recommendation
    assert (r.model, r.kind) == (expected.model, expected.kind)
    assert r.per_item == pytest.approx(expected.per_item, abs=1e-12)
    # and that value is the evaluation of the recommended policy on the evaluated split
    evaluated = vc.evaluate(core.policy(r.model, r.kind, chosen.values), core.predictions(r.model, "test"),
                            chosen.values)
    assert r.per_item == pytest.approx(evaluated.value_per_item, abs=1e-12)
    assert page.report_kinds == tuple(kinds) and page.report_kind in kinds


def test_the_tiles_turn_value_per_item_into_value_per_period():
    # A hand-off worth something, so the value and the gain over no model differ.
    chosen = selection("breast_cancer", values=(1.0, 0.25, -9.0))
    page = view.build(chosen, workspace(chosen))
    r = page.recommendation
    assert r.model is not None and r.baseline_per_item == 0.25
    for volume, period in ((10_000.0, "month"), (37.0, "day")):
        numbers = view.per_period(page, chosen.currency, volume, period)
        tiles = {t.label: t.value for _, row in numbers.tile_rows for t in row}
        assert tiles["Value per item"] == vc.wording.money(r.per_item, "$")
        # An amount over a volume has no cents from 100 up ($9,400, not $9,400.00).
        projected = vc.wording.projected
        assert tiles[f"Value per {period}"] == projected(r.per_item * volume, "$")
        assert tiles[f"More than no model, per {period}"] == projected((r.per_item - r.baseline_per_item) * volume,
                                                                       "$")
        assert tiles["No model, per item"] == vc.wording.money(r.baseline_per_item, "$")
        assert numbers.per_period == (
            f"At {vc.wording.significant(volume)} items per {period} that is {projected(r.per_item * volume, '$')} "
            f"per {period} ({projected((r.per_item - r.baseline_per_item) * volume, '$')} per {period} more than no "
            "model)."
        ).replace("$", "\\$").replace("(", "\\(").replace(")", "\\)")  # as md_text escapes them
        assert sum(len(row) for _, row in numbers.tile_rows) == 6
    assert "." not in tiles_of(page, chosen, 10_000.0)["Value per month"]  # $8,xxx: no cents on a month


def tiles_of(page, chosen, volume: float, period: str = "month") -> dict:
    numbers = view.per_period(page, chosen.currency, volume, period)
    return {t.label: t.value for _, row in numbers.tile_rows for t in row}


def test_no_two_tiles_repeat_one_figure_when_a_hand_off_is_worth_nothing(breast_cancer):
    # With a hand-off worth 0, "more than no model per month" was the value per month again.
    chosen, _, page = breast_cancer
    r = page.recommendation
    assert r.baseline_per_item == 0
    tiles = tiles_of(page, chosen, 10_000.0)
    assert len(set(tiles.values())) == len(tiles), tiles
    assert "More than no model, per month" not in tiles
    assert tiles["Hand-offs per month"] == vc.wording.count(round((1 - r.coverage) * 10_000))
    assert view.per_period(page, chosen.currency, 10_000.0, "month").per_period.count("more than no model") == 0


def test_the_candidates_table_lists_every_candidate_and_no_model(breast_cancer):
    _, _, page = breast_cancer
    r = page.recommendation
    assert len(page.candidates) == len(r.candidates) + 1
    says = page.candidates["Against the best here"]
    assert (says == "recommended").sum() == 1
    assert page.candidates.iloc[-1]["Against the best here"] == "the baseline"
    assert page.candidates.iloc[-1]["Model"].startswith("no model")


def test_the_candidates_table_is_made_only_when_asked_for(monkeypatch):
    # A new value builds the page; the table is shown only while its section is open, so it must cost nothing
    # until then, and once made it is kept.
    made = []
    real = view.candidates_frame
    monkeypatch.setattr(view, "candidates_frame", lambda *a: made.append(1) or real(*a))
    chosen = selection("digits", values=(1.0, 0.0, -7.25))
    page = view.build_now(chosen, workspace(chosen))
    assert page.has_candidates and made == []
    first = page.candidates
    assert page.candidates is first and made == [1]
    assert first.iloc[0]["Model"] == page.recommendation.candidates[0].model


@pytest.mark.parametrize("values", [(1.0, 0.0, -9.0), (1.0, -0.2, -15.0), (2.0, 0.5, -1.0)])
def test_the_likely_range_words_are_those_of_the_workspaces_interval(values):
    # The page reads the recommended policy's interval off the recommendation (no second evaluation of the
    # policy per new value); it must say what the workspace's own interval says.
    chosen = selection("breast_cancer", values=values)
    ws = workspace(chosen)
    page = view.build_now(chosen, ws)
    r = page.recommendation
    assert r.model is not None and r.interval is not None
    direct = view.model_range_words(ws, r.model, r.policy, chosen.values, chosen.currency)
    assert direct and page.range_words == md_text(direct)


def test_the_intro_names_no_split_before_any_run():
    chosen = selection("digits", tune=None, evaluate=None)
    intro = view.intro(chosen)
    assert "None" not in intro.caption and "tuned on" not in intro.caption
    assert intro.values_frame is None
    assert "-$4.00" in intro.caption or "−$4.00" in intro.caption


def test_a_value_matrix_in_force_is_shown_as_a_frame():
    matrix = vc.ValueMatrix(("0", "1"), [[1.0, -5.0, 0.0], [-1.0, 2.0, 0.0]])
    chosen = selection("breast_cancer", matrix=matrix)
    intro = view.intro(chosen)
    assert intro.values_frame is not None and intro.values_expanded
    assert intro.values_frame["True class"].tolist() == ["0", "1"]
    assert "Values per class" in intro.caption


def test_files_that_did_not_load_are_counted_in_words(tmp_path):
    (tmp_path / "good.csv").write_text((SAMPLES / "breast_cancer" / "logreg.csv").read_text())
    (tmp_path / "broken.csv").write_text("split,y_true\nval,1\n")
    chosen = selection(str(tmp_path))
    assert view.intro(chosen).problem_note.startswith("1 file could not be loaded (broken.csv)")
    (tmp_path / "broken2.csv").write_text("nothing here\n")
    assert view.intro(selection(str(tmp_path))).problem_note.startswith("2 files could not be loaded")


def test_the_deciding_confidences_write_every_threshold_as_all_the_confidences_do():
    # The page keeps, per threshold, only the highest confidence below it; the texts must not change, for any
    # threshold: every distinct confidence of the splits, points between them, and beyond both ends.
    for folder in ("digits", "breast_cancer"):
        chosen = selection(folder, values=(1.0, 0.0, -4.0))
        ws = workspace(chosen)
        for model in chosen.models:
            every = shown_confidences(ws, model)
            policy = ws.policy(model, "threshold", chosen.values)
            distinct = np.unique(every)
            between = (distinct[:-1] + distinct[1:]) / 2
            for t in [*distinct[::7], *between[::5], float(distinct[0]) / 2, 1.0, float(np.nextafter(distinct[3], 0))]:
                if t <= 0:
                    continue
                moved = dataclasses.replace(policy, threshold=float(t))
                few = view.deciding_confidences(ws, model, moved)
                assert len(few) <= 2  # one threshold: at most one confidence per split
                assert vc.wording.threshold_on_data(t, few) == vc.wording.threshold_on_data(t, every), (model, t)
                assert vc.wording.threshold(t, few) == vc.wording.threshold(t, every), (model, t)
                assert vc.wording.rule_phrase(moved, few) == vc.wording.rule_phrase(moved, every)
            # per-class thresholds are written with the same digits rule, each threshold on its own
            per_class = ws.policy(model, "class_thresholds", chosen.values)
            for shift in range(0, len(distinct) - 3, max(1, len(distinct) // 9)):
                pairs = tuple((label, None if i == 2 else float(distinct[(shift + 3 * i) % len(distinct)]))
                              for i, (label, _) in enumerate(per_class.class_thresholds))
                moved = dataclasses.replace(per_class, class_thresholds=pairs)
                few = view.deciding_confidences(ws, model, moved)
                rec = vc.recommendation.Recommendation(model, "class_thresholds", moved, *([0.0] * 5), False, "only",
                                                       None, 0.0, True, None, 1.0, ())
                assert vc.wording.recommendation_headline(rec, few) == vc.wording.recommendation_headline(rec, every)


def test_the_page_writes_its_threshold_as_every_confidence_would(breast_cancer):
    chosen, ws, page = breast_cancer
    digits = selection("digits", values=(1.0, 0.0, -1.0))
    for chosen, ws, page in (breast_cancer, (digits, workspace(digits), view.build(digits, workspace(digits)))):
        r = page.recommendation
        every = shown_confidences(ws, r.model)
        assert page.headline == md_text(vc.wording.recommendation_headline(r, every))
        volume = 1234.0
        assert view.per_period(page, "$", volume, "week") == view.per_period(
            dataclasses.replace(page, confidences=every), "$", volume, "week")


def same_page(a: view.HomePage, b: view.HomePage) -> bool:
    """Field by field, frames by value."""
    for field in dataclasses.fields(view.HomePage):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, pd.DataFrame) or isinstance(y, pd.DataFrame):
            if not (isinstance(x, pd.DataFrame) and isinstance(y, pd.DataFrame) and x.equals(y)):
                return False
        elif isinstance(x, np.ndarray):
            if not np.array_equal(x, y):
                return False
        elif x != y:
            return False
    return True


@pytest.mark.parametrize("folder,values,calibration", [
    ("digits", (1.0, 0.0, -4.0), "none"), ("digits", (1.0, 0.0, -1000.0), "isotonic"),
    ("breast_cancer", (5.0, -1.0, -30.0), "none"), ("breast_cancer", (1.0, 0.0, 0.0), "temperature"),
])
def test_the_cached_page_is_the_page_built_now(folder, values, calibration):
    chosen = dataclasses.replace(selection(folder, values=values), calibration=calibration)
    ws = workspace(chosen)
    cached = view.build(chosen, ws)
    assert same_page(cached, view.build_now(chosen, workspace(chosen)))
    assert view.build(chosen, workspace(chosen)) is cached  # a rerun with nothing changed reuses it


def test_the_cached_page_follows_every_change_of_runs_values_splits_and_words(tmp_path):
    for run in (SAMPLES / "digits").glob("*.csv"):
        shutil.copy(run, tmp_path / run.name)
    chosen = selection(str(tmp_path), values=(1.0, 0.0, -4.0))
    first = view.build(chosen, workspace(chosen))
    changes = [
        dataclasses.replace(chosen, use_case=vc.UseCase(1.0, 0.0, -9.0)),
        dataclasses.replace(chosen, calibration="isotonic"),
        dataclasses.replace(chosen, tune_split="test"),
        dataclasses.replace(chosen, currency="CHF"),
        dataclasses.replace(chosen, models=chosen.models[:2]),
    ]
    for changed in changes:
        page = view.build(changed, workspace(changed))
        assert page is not first and same_page(page, view.build_now(changed, workspace(changed)))
    # A run file replaced by another's content (same model name) is another workspace: rebuilt, not served stale.
    winner = first.recommendation.model
    other = next(m for m in chosen.models if m != winner)
    shutil.copy(SAMPLES / "digits" / f"{other}.csv", tmp_path / f"{winner}.csv")
    reloaded = selection(str(tmp_path), values=(1.0, 0.0, -4.0))
    page = view.build(reloaded, workspace(reloaded))
    assert page is not first and same_page(page, view.build_now(reloaded, workspace(reloaded)))
    assert page.recommendation.per_item != first.recommendation.per_item or page.candidates is not None and not (
        page.candidates.equals(first.candidates))


def test_not_yet_has_a_value_per_period_too():
    # At a wrong answer of -1000 the answer is "not yet" (every item to a person): the tile read "–".
    chosen = selection("digits", values=(1.0, 0.0, -1000.0))
    page = view.build(chosen, workspace(chosen))
    assert page.recommendation.model is None
    tiles = tiles_of(page, chosen, 10_000.0)
    assert tiles["Value per month"] == vc.wording.projected(0.0, "$")
    assert vc.wording.DASH not in tiles.values()
