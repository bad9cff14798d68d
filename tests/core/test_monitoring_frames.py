"""valuecore._monitor.chunks' frames made without pandas's per-group work are the same, bit for bit.

``monitor_summary`` sums its columns in numpy (it made a frame per split and per labelled subset and summed
them with pandas); ``monitor`` returns its frame without ``astype`` when the rows already read as int64 and
bool. Each is compared with the path it replaced, kept here as it was.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._monitor.chunks import _MONITOR_DTYPES, _SUMMARY_COLUMNS, MONITOR_COLUMNS, monitor, monitor_summary

def _per_item(total: float, n: float) -> float:
    return total / n if n > 0 else float("nan")

def pandas_monitor_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """monitor_summary as it was (main 06c146c): pandas sums per split and per labelled subset."""
    groups = [(str(split), part) for split, part in frame.groupby("split", sort=False)]
    if len(groups) > 1:
        groups.append(("total", frame))
    rows = []
    for split, part in groups:
        n = float(part["n"].sum())
        labelled = part[part["has_labels"]]
        n_labelled = float(labelled["n"].sum())
        estimated_total = float(part["estimated_value_total"].sum())
        accepted = float((part["estimated_coverage"].fillna(0.0) * part["n"]).sum())
        if len(labelled):
            realised_total = float(labelled["realised_value_total"].sum())
            realised_accepted = float((labelled["realised_coverage"].fillna(0.0) * labelled["n"]).sum())
            estimated_labelled = _per_item(float(labelled["estimated_value_total"].sum()), n_labelled)
            realised_per_item = _per_item(realised_total, n_labelled)
            realised_coverage = _per_item(realised_accepted, n_labelled)
        else:
            realised_total = realised_per_item = realised_coverage = estimated_labelled = float("nan")
        rows.append({
            "split": split, "n_chunks": len(part), "n_rows": int(part["n_rows"].sum()), "n": n,
            "estimated_value_total": estimated_total, "estimated_value_per_item": _per_item(estimated_total, n),
            "estimated_coverage": _per_item(accepted, n), "n_labelled": n_labelled,
            "realised_value_total": realised_total, "realised_value_per_item": realised_per_item,
            "realised_coverage": realised_coverage, "estimated_value_per_item_labelled": estimated_labelled,
            "estimation_error_per_item": estimated_labelled - realised_per_item,
        })
    return pd.DataFrame(rows, columns=list(_SUMMARY_COLUMNS))

def assert_same_bits(fast: pd.DataFrame, slow: pd.DataFrame) -> None:
    assert list(fast.columns) == list(slow.columns)
    assert fast.dtypes.to_dict() == slow.dtypes.to_dict()
    for column in fast.columns:
        a, b = fast[column].to_numpy(), slow[column].to_numpy()
        if a.dtype.kind == "f":
            assert np.array_equal(a.view(np.int64), b.view(np.int64)), column  # -0.0, NaN's bits included
        else:
            assert a.tolist() == b.tolist(), column

@st.composite
def monitor_frames(draw):
    """A monitor()-shaped frame: splits interleaved or not, chunks with and without labels, NaN coverage,
    weights with fractions, up to 300 rows (numpy's pairwise sums change shape at 8 and 128 terms)."""
    n_rows = draw(st.integers(0, 300))
    names = draw(st.lists(st.sampled_from(["val", "prod", "test"]), min_size=1, max_size=3, unique=True))
    split = draw(st.lists(st.sampled_from(names), min_size=n_rows, max_size=n_rows))
    if draw(st.booleans()):
        split = sorted(split, key=names.index)  # each split's chunks together, as monitor() gives them
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1.0, 1e-3, 1e5]))
    n = rng.integers(1, 5000, n_rows).astype(float) * draw(st.sampled_from([1.0, 0.37]))
    has_labels = rng.random(n_rows) < draw(st.sampled_from([0.0, 0.5, 1.0]))
    coverage = rng.random(n_rows)
    coverage[rng.random(n_rows) < 0.2] = np.nan
    realised = rng.normal(0, scale, n_rows) * n
    realised[~has_labels] = np.nan
    realised_coverage = np.where(has_labels, coverage, np.nan)
    frame = pd.DataFrame({column: np.nan for column in MONITOR_COLUMNS}, index=range(n_rows))
    frame = frame.assign(split=split, chunk=[f"[{i}]" for i in range(n_rows)], n_rows=rng.integers(1, 9, n_rows),
                         n=n, estimated_value_total=rng.normal(0, scale, n_rows) * n,
                         estimated_coverage=coverage, realised_value_total=realised,
                         realised_coverage=realised_coverage, has_labels=has_labels)
    return frame[list(MONITOR_COLUMNS)]

@settings(max_examples=150, deadline=None)
@given(monitor_frames())
def test_the_summary_summed_in_numpy_is_pandas_s_bit_for_bit(frame):
    assert_same_bits(monitor_summary(frame), pandas_monitor_summary(frame))

def test_the_summary_of_monitor_frames_is_pandas_s_bit_for_bit():
    rng = np.random.default_rng(7)
    runs = {}
    for name, labels in (("reference", True), ("production", False), ("later", True)):
        proba = rng.dirichlet(np.ones(3), 400)
        runs[name] = vc.Predictions.from_proba(proba, y_true=rng.integers(0, 3, 400) if labels else None,
                                               sample_weight=rng.integers(1, 4, 400).astype(float))
    use_case = vc.UseCase(1.0, 0.0, -3.3)
    for policy in (vc.Policy("threshold", threshold=0.55), vc.Policy("accept_all")):
        for how in ({"n_chunks": 7}, {"size": 37}):
            for splits in (runs, runs["reference"], {"production": runs["production"]}):
                frame = monitor(splits, policy, use_case, **how)
                assert_same_bits(monitor_summary(frame), pandas_monitor_summary(frame))
    frame = monitor(vc.Predictions.from_proba(np.zeros((0, 2))), vc.Policy("accept_all"), use_case, size=3)
    assert_same_bits(monitor_summary(frame), pandas_monitor_summary(frame))

def test_a_split_left_out_of_groupby_counts_only_in_the_total():
    frame = monitor({"a": vc.Predictions.from_proba([[0.9, 0.1], [0.3, 0.7]], y_true=[0, 1]),
                     "b": vc.Predictions.from_proba([[0.6, 0.4]])}, vc.Policy("accept_all"),
                    vc.UseCase(1, 0, -1), size=1)
    frame.loc[1, "split"] = np.nan
    assert_same_bits(monitor_summary(frame), pandas_monitor_summary(frame))
    assert monitor_summary(frame)["split"].tolist() == ["a", "b", "total"]

def test_monitor_s_frame_without_astype_is_the_cast_frame():
    rng = np.random.default_rng(3)
    times = np.datetime64("2024-03-01") + np.sort(rng.integers(0, 20 * 86400, 300)).astype("timedelta64[s]")
    labelled = vc.Predictions.from_proba(rng.dirichlet(np.ones(4), 300), y_true=rng.integers(0, 4, 300),
                                         timestamp=times)
    unlabelled = vc.Predictions.from_proba(rng.dirichlet(np.ones(4), 300), timestamp=times)
    empty = vc.Predictions.from_proba(np.zeros((0, 4)))
    use_case = vc.UseCase(1.0, 0.0, -2.0)
    for run in (labelled, unlabelled, {"ref": labelled, "prod": unlabelled}, empty):
        for how in ({"n_chunks": 5}, {"period": "W"}) if run is not empty else ({"size": 4},):
            frame = monitor(run, vc.Policy("threshold", threshold=0.4), use_case, **how)
            assert frame["n_rows"].dtype == np.int64 and frame["has_labels"].dtype == np.bool_
            assert_same_bits(frame, frame.astype(_MONITOR_DTYPES))
