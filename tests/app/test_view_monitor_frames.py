"""The Monitor page's frames made with less pandas are the ones they replaced, bit for bit: the long frame for
its charts (views.monitor.monitor_long, taken in one piece from the keys' rows, not the keys copied per measure
and concatenated), and a frame's estimate put in from the bands' (aligned as they are when the chunks match,
not through an index built and mapped per model)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import valuecore as vc
from dashboard.data import Workspace
from dashboard.settings import Settings
from dashboard.state import Selection
from dashboard.views import monitor as view

ROOT = Path(__file__).resolve().parents[2]
VALUES = vc.UseCase(1, 0, -4)


def concatenated_long(frame: pd.DataFrame) -> pd.DataFrame:
    """monitor_long as it was (main 06c146c): the keys copied per measure and source, concatenated."""
    keys = frame.loc[:, ["model", "chunk", "n"]].copy()
    keys.insert(1, "position", frame.groupby("model", sort=False).cumcount().to_numpy() + 1)
    for column in ("start", "end"):
        keys[column] = frame[column] if column in frame.columns else pd.NaT
    parts = []
    for measure, (estimated, realised, _, _) in vc.chartspecs.MONITOR_MEASURES.items():
        for source, column in zip(vc.chartspecs.MONITOR_SOURCES, (estimated, realised)):
            if column is None or column not in frame.columns:
                continue
            part = keys.copy()
            part["measure"] = measure
            part["source"] = source
            part["amount"] = pd.to_numeric(frame[column], errors="coerce").astype(float)
            parts.append(part)
    if not parts:
        return pd.DataFrame(columns=list(vc.chartspecs.MONITOR_LONG_COLUMNS))
    long = pd.concat(parts, ignore_index=True).dropna(subset=["amount"])
    return long.loc[:, list(vc.chartspecs.MONITOR_LONG_COLUMNS)].reset_index(drop=True)


def assert_same(fast: pd.DataFrame, slow: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    assert fast.dtypes.to_dict() == slow.dtypes.to_dict()
    assert fast.index.equals(slow.index) and type(fast.index) is type(slow.index)
    if fast["amount"].dtype == float:  # a frame without measures has object columns, both ways
        assert np.array_equal(fast["amount"].to_numpy().view(np.int64), slow["amount"].to_numpy().view(np.int64))


def page_frames():
    """The frames the page charts on the breast_cancer sample: production by week and by count, re-tuned,
    and the back-test."""
    report = vc.load_runs([str(ROOT / "sample_runs" / "breast_cancer")])
    selection = Selection(settings=Settings(source="sample:breast_cancer", calibration="none"), report=report,
                          models=tuple(report.models), use_case=VALUES, tune_split="val", eval_split="test",
                          calibration="none")
    ws = Workspace(report, "val", "test", "none")
    page = view.build(selection, ws, "threshold", ["breast_cancer"])
    yield view.production(selection, page, ws, "prod", {"period": "W"}).frame
    yield view.production(selection, page, ws, "prod", {"n_chunks": 5}, retune=True).frame
    yield view.backtest(selection, page, ws, "test", 6).frame


@pytest.mark.parametrize("frame", list(page_frames()), ids=["weeks", "retuned", "backtest"])
def test_the_long_frame_of_the_page_s_frames_is_the_concatenated_one(frame):
    assert not frame.empty
    assert_same(view.monitor_long(frame), concatenated_long(frame))
    assert_same(view.monitor_long(frame.iloc[::-1]), concatenated_long(frame.iloc[::-1]))


def test_the_long_frame_of_odd_frames_is_the_concatenated_one():
    frame = next(page_frames())
    odd = frame.copy()
    odd.loc[odd.index[::3], "realised_value_per_item"] = np.nan
    odd["estimated_coverage"] = odd["estimated_coverage"].astype(object)
    odd.loc[odd.index[1], "estimated_coverage"] = "n/a"  # not a number: dropped
    odd.loc[odd.index[2], "estimated_value_total"] = np.inf  # kept, as dropna keeps it
    cases = [odd, frame.drop(columns=["start", "end"]), frame.drop(columns=[c for c in frame if "realised" in c]),
             frame.iloc[:0], frame.loc[:, ["model", "chunk", "n"]]]
    for case in cases:
        assert_same(view.monitor_long(case), concatenated_long(case))
    with pytest.raises(ValueError, match="needs the columns"):
        view.monitor_long(frame.drop(columns="model"))


def mapped_estimate(frame: pd.DataFrame, estimated: pd.DataFrame) -> None:
    """How estimated_frame put the bands' estimate in (main 06c146c): mapped through the chunks' index."""
    per_item = frame["chunk"].map(estimated.set_index("chunk")["estimated_value_per_item"])
    frame["estimated_value_per_item"] = per_item.where(per_item.notna(), frame["estimated_value_per_item"])
    frame["estimated_value_total"] = frame["estimated_value_per_item"] * frame["n"]


def test_the_bands_estimate_aligned_is_the_mapped_one():
    report = vc.load_runs([str(ROOT / "sample_runs" / "breast_cancer")])
    run = report.models["logreg"]
    policy = vc.fit_policy("threshold", vc.presort(run.splits["val"]), VALUES)
    rng = np.random.default_rng(5)
    for split, how in (("prod", {"period": "W"}), ("test", {"n_chunks": 6})):
        frame = vc.monitoring.monitor(run.splits[split], policy, VALUES, **how)
        estimated = vc.monitoring.monitor_estimates(run.splits["val"], run.splits[split], policy, VALUES, **how)
        noisy = estimated.assign(estimated_value_per_item=estimated["estimated_value_per_item"]
                                 * rng.uniform(0.5, 1.5, len(estimated)))
        noisy.loc[noisy.index[1], "estimated_value_per_item"] = np.nan  # the frame keeps its own there
        for bands in (estimated, noisy, noisy.iloc[::-1], noisy.iloc[1:]):
            fast, slow = frame.copy(), frame.copy()
            view._take_estimate(fast, bands)
            mapped_estimate(slow, bands)
            pd.testing.assert_frame_equal(fast, slow, check_exact=True)
            for column in ("estimated_value_per_item", "estimated_value_total"):
                assert np.array_equal(fast[column].to_numpy().view(np.int64), slow[column].to_numpy().view(np.int64))
        twice = noisy.iloc[[0, 0, 2]]  # a chunk twice: neither way guesses which
        for put in (view._take_estimate, mapped_estimate):
            with pytest.raises(pd.errors.InvalidIndexError):
                put(frame.iloc[:2].copy(), twice)
            with pytest.raises(pd.errors.InvalidIndexError):
                put(frame.copy(), twice)


def estimated_frame_before(ws, model, split, policy, values, how, *, calibration="auto", retune=False,
                           resamples=view.WITH_BANDS):
    """estimated_frame as it was (main 7ba152c): monitor's frame with its own estimate, the bands' put in."""
    frame = vc.monitoring.monitor(ws.predictions(model, split), policy, values, retune=retune, **how).copy()
    frame.insert(0, "model", model)
    if retune and policy.kind in view.RETUNABLE:
        return frame
    try:
        found = view.model_bands(ws, model, split, policy, values, how, calibration, resamples=resamples)
    except ValueError:
        return frame
    mapped_estimate(frame, found if resamples == view.ESTIMATE_ONLY else found.frame)
    return frame


def assert_bits(fast: pd.DataFrame, slow: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    for column in fast.columns:
        if fast[column].dtype == float:
            a, b = fast[column].to_numpy(), slow[column].to_numpy()
            assert np.array_equal(a.view(np.int64), b.view(np.int64)), column


def sample_workspace():
    report = vc.load_runs([str(ROOT / "sample_runs" / "breast_cancer")])
    return report, Workspace(report, "val", "test", "none")


@pytest.mark.parametrize("calibration", ["auto", "none"])
def test_the_frame_without_monitor_s_estimate_is_the_frame_it_was(calibration):
    """The page's frames, now made from monitor's frame without its own estimate wherever the bands' fills every
    chunk: production by week and by count (re-tuned too), the back-test's estimate alone, a model without a
    labelled reference (its own estimate kept), bit for bit."""
    report, ws = sample_workspace()
    for model in ("logreg", "random_forest"):
        policy = ws.policy(model, "threshold", VALUES)
        cases = [("prod", {"period": "W"}, False, view.WITH_BANDS), ("prod", {"n_chunks": 5}, True, view.WITH_BANDS),
                 ("prod", {"n_chunks": 5}, False, view.WITH_BANDS),
                 ("test", {"n_chunks": 6}, False, view.ESTIMATE_ONLY)]
        for split, how, retune, resamples in cases:
            fast, _, _ = view.estimated_frame(ws, model, split, policy, VALUES, how, calibration=calibration,
                                              retune=retune, resamples=resamples)
            slow = estimated_frame_before(ws, model, split, policy, VALUES, how, calibration=calibration,
                                          retune=retune, resamples=resamples)
            assert_bits(fast, slow)
            assert fast["estimated_value_per_item"].notna().all()


def test_a_chunk_the_bands_do_not_estimate_keeps_monitor_s_own_estimate(monkeypatch):
    report, ws = sample_workspace()
    policy = ws.policy("logreg", "threshold", VALUES)
    how = {"n_chunks": 5}
    real = view.model_bands

    def bands_without_one_chunk(*args, **kwargs):
        found = real(*args, **kwargs)
        frame = found.frame.copy()
        frame.loc[frame.index[2], "estimated_value_per_item"] = np.nan
        return replace(found, frame=frame)

    monkeypatch.setattr(view, "model_bands", bands_without_one_chunk)
    fast, _, _ = view.estimated_frame(ws, "logreg", "prod", policy, VALUES, how)
    slow = estimated_frame_before(ws, "logreg", "prod", policy, VALUES, how)
    assert_bits(fast, slow)
    own = vc.monitoring.monitor(ws.predictions("logreg", "prod"), policy, VALUES, **how)
    assert fast["estimated_value_per_item"].iloc[2] == own["estimated_value_per_item"].iloc[2]  # not NaN
    # without a labelled reference split: monitor's own estimate throughout
    monkeypatch.setattr(view, "model_bands", lambda *a, **k: (_ for _ in ()).throw(ValueError("no reference")))
    fast, found, why = view.estimated_frame(ws, "logreg", "prod", policy, VALUES, how)
    assert found is None and why == "no reference"
    assert_bits(fast.drop(columns="model"), own)
