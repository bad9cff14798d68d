"""Tests of valuecore._monitor.chunks: chunking, per-chunk monitoring, seed 003's Table 5."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import softmax

import valuecore as vc
from valuecore._monitor.chunks import (
    MONITOR_COLUMNS,
    Chunk,
    calibration_value_table,
    calibration_value_tables,
    chunk_predictions,
    monitor,
    monitor_summary,
)

TIMES = [
    "2024-01-02 09:00",  # 0  Tue
    "2024-01-01 18:00",  # 1  Mon
    "2024-01-02 23:59:59",  # 2  Tue, last second
    "2024-01-04 08:00",  # 3  Thu (Wed 3rd is empty)
    "2024-01-01 00:00",  # 4  Mon, first instant
    "2024-01-08 00:00",  # 5  Mon of the next week
    "2024-01-07 23:00",  # 6  Sun (Fri 5th and Sat 6th are empty)
]


def timed_run(times=TIMES, labels=True):
    n = len(times)
    proba = np.tile([0.8, 0.2], (n, 1))
    return vc.Predictions.from_proba(proba, y_true=[0] * n if labels else None, timestamp=times)


def calibrated_run(n, n_classes, seed, *, labels=True, days=None, start="2024-03-01", weights=False):
    """Labels drawn from the model's own probabilities: a perfectly calibrated model."""
    rng = np.random.default_rng(seed)
    proba = softmax(rng.normal(0.0, 1.5, size=(n, n_classes)), axis=1)
    y = np.minimum((rng.random(n)[:, None] > np.cumsum(proba, axis=1)).sum(axis=1), n_classes - 1)
    timestamp = None
    if days is not None:
        offsets = np.sort(rng.uniform(0, days * 86400, size=n)).astype("timedelta64[s]")
        timestamp = np.datetime64(start) + offsets
    weight = rng.integers(1, 4, size=n).astype(float) if weights else None
    return vc.Predictions.from_proba(proba, y_true=y if labels else None, timestamp=timestamp, sample_weight=weight)


def overconfident_model(n, n_classes, temperature, seed, scale=1.5):
    """Labels drawn from softmax(z); the model reports softmax(z * temperature) (overconfident for T > 1)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0.0, scale, size=(n, n_classes))
    truth = softmax(z, axis=1)
    y = np.minimum((rng.random(n)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1), n_classes - 1)
    return vc.Predictions.from_proba(softmax(z * temperature, axis=1), y_true=y, logits=z * temperature)


def keys_and_rows(chunks):
    return [(c.key, c.rows.tolist()) for c in chunks]


# --------------------------------------------------------------------------
# chunking: hand-checked examples
# --------------------------------------------------------------------------
def test_chunks_by_size_are_consecutive_and_the_last_may_be_smaller():
    run = timed_run()
    chunks = chunk_predictions(run, size=3)
    assert keys_and_rows(chunks) == [("[0:3]", [0, 1, 2]), ("[3:6]", [3, 4, 5]), ("[6:7]", [6])]
    assert [(c.start, c.end) for c in chunks] == [(0, 3), (3, 6), (6, 7)]
    assert all(isinstance(c, Chunk) for c in chunks)
    np.testing.assert_array_equal(chunks[1].predictions.timestamp, run.timestamp[3:6])
    assert keys_and_rows(chunk_predictions(run, size=7)) == [("[0:7]", list(range(7)))]
    assert keys_and_rows(chunk_predictions(run, size=100)) == [("[0:7]", list(range(7)))]
    assert len(chunk_predictions(run, size=1)) == 7


def test_chunks_by_number_follow_array_split():
    run = timed_run()
    assert keys_and_rows(chunk_predictions(run, n_chunks=3)) == [
        ("[0:3]", [0, 1, 2]),
        ("[3:5]", [3, 4]),
        ("[5:7]", [5, 6]),
    ]
    # more chunks than rows: one chunk per row, never an empty chunk
    assert [c.rows.tolist() for c in chunk_predictions(run, n_chunks=10)] == [[i] for i in range(7)]


def test_chunks_by_day_skip_empty_days_and_come_in_time_order():
    chunks = chunk_predictions(timed_run(), period="D")
    assert keys_and_rows(chunks) == [
        ("2024-01-01", [1, 4]),
        ("2024-01-02", [0, 2]),
        ("2024-01-04", [3]),
        ("2024-01-07", [6]),
        ("2024-01-08", [5]),
    ]
    assert chunks[0].start == pd.Timestamp("2024-01-01") and chunks[0].end == pd.Timestamp("2024-01-02")
    assert chunks[2].start == pd.Timestamp("2024-01-04") and chunks[2].end == pd.Timestamp("2024-01-05")
    assert chunks[1].n == 2.0


def test_chunks_by_week_run_monday_to_sunday():
    chunks = chunk_predictions(timed_run(), period="W")
    assert keys_and_rows(chunks) == [
        ("2024-01-01/2024-01-07", [0, 1, 2, 3, 4, 6]),
        ("2024-01-08/2024-01-14", [5]),
    ]
    assert (chunks[0].start, chunks[0].end) == (pd.Timestamp("2024-01-01"), pd.Timestamp("2024-01-08"))


def test_chunks_by_hour_and_by_month():
    hours = chunk_predictions(timed_run(), period="h")
    assert keys_and_rows(hours) == [
        ("2024-01-01 00:00", [4]),
        ("2024-01-01 18:00", [1]),
        ("2024-01-02 09:00", [0]),
        ("2024-01-02 23:00", [2]),
        ("2024-01-04 08:00", [3]),
        ("2024-01-07 23:00", [6]),
        ("2024-01-08 00:00", [5]),
    ]
    assert hours[3].end == pd.Timestamp("2024-01-03 00:00")
    months = chunk_predictions(timed_run(["2024-03-09", "2024-01-31 23:00", "2024-01-01"]), period="MS")
    assert keys_and_rows(months) == [("2024-01-01/2024-01-31", [1, 2]), ("2024-03-01/2024-03-31", [0])]
    assert months[1].end == pd.Timestamp("2024-04-01")


ALIASES = ["D", "2D", "h", "6h", "90min", "W", "2W", "W-WED", "MS", "ME", "QS", "QE", "YS", "B", "2MS", "SMS"]


@pytest.mark.parametrize("alias", ALIASES)
def test_periods_match_pandas_resample(alias):
    """Same groups as ``groupby(pd.Grouper(freq=alias))``, each row inside its chunk's [start, end)."""
    rng = np.random.default_rng(abs(hash(alias)) % 2**32)
    n = 300
    times = np.datetime64("2023-12-27T05:17") + (rng.random(n) * 150 * 86400e9).astype("timedelta64[ns]")
    run = vc.Predictions.from_proba(np.tile([0.7, 0.3], (n, 1)), timestamp=times)
    chunks = chunk_predictions(run, period=alias)
    series = pd.Series(np.arange(n), index=pd.DatetimeIndex(times))
    expected = [sorted(group.tolist()) for _, group in series.groupby(pd.Grouper(freq=alias)) if len(group)]
    assert [c.rows.tolist() for c in chunks] == expected
    for chunk in chunks:
        inside = (times[chunk.rows] >= chunk.start.to_datetime64()) & (times[chunk.rows] < chunk.end.to_datetime64())
        assert inside.all()
    starts = [c.start for c in chunks]
    assert starts == sorted(starts) and len({c.key for c in chunks}) == len(chunks)


# --------------------------------------------------------------------------
# chunking: properties
# --------------------------------------------------------------------------
@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(0, 40 * 24), max_size=40),
    st.sampled_from(
        [("size", 1), ("size", 3), ("size", 50), ("n_chunks", 1), ("n_chunks", 4), ("n_chunks", 60)]
        + [("period", p) for p in ("D", "W", "h", "MS", "3h")]
    ),
)
def test_chunk_rows_partition_the_run(hours, option):
    times = np.datetime64("2024-02-26T00:00") + np.array(hours, dtype="timedelta64[h]")
    n = len(hours)
    weight = np.arange(n, dtype=float) % 3
    run = vc.Predictions.from_proba(np.tile([0.6, 0.4], (n, 1)), timestamp=times, sample_weight=weight)
    chunks = chunk_predictions(run, **{option[0]: option[1]})
    rows = np.concatenate([c.rows for c in chunks]) if chunks else np.zeros(0, int)
    assert sorted(rows.tolist()) == list(range(n))  # every row exactly once
    assert all(c.rows.size > 0 for c in chunks)
    assert sum(c.n for c in chunks) == pytest.approx(run.total_weight)
    for chunk in chunks:
        assert np.all(np.diff(chunk.rows) > 0)
        np.testing.assert_array_equal(chunk.predictions.timestamp, times[chunk.rows])
        np.testing.assert_array_equal(chunk.predictions.sample_weight, weight[chunk.rows])
    if option[0] == "n_chunks":
        expected = [part.tolist() for part in np.array_split(np.arange(n), option[1]) if part.size]
        assert [c.rows.tolist() for c in chunks] == expected
    if option[0] == "period" and n:
        # time order, and rows in different chunks never share a period
        assert all(a.end <= b.start for a, b in zip(chunks, chunks[1:]))


# --------------------------------------------------------------------------
# chunking: errors
# --------------------------------------------------------------------------
def test_chunking_by_period_needs_timestamps():
    run = vc.Predictions.from_proba([[0.9, 0.1], [0.3, 0.7]])
    with pytest.raises(ValueError, match="^chunking by time period needs a timestamp column$"):
        chunk_predictions(run, period="D")
    with pytest.raises(ValueError, match="chunking by time period needs a timestamp column"):
        monitor(run, vc.Policy("accept_all"), vc.UseCase(1, 0, -1), period="D")


def test_chunking_by_period_refuses_missing_timestamps():
    run = vc.Predictions.from_proba([[0.9, 0.1]] * 3, timestamp=["2024-01-01", None, "2024-01-02"])
    with pytest.raises(ValueError, match="missing at rows 1"):
        chunk_predictions(run, period="D")


@pytest.mark.parametrize(
    "options",
    [{}, {"size": 2, "n_chunks": 2}, {"size": 2, "period": "D"}, {"n_chunks": 2, "period": "D"}],
)
def test_exactly_one_chunking_option(options):
    with pytest.raises(ValueError, match="choose exactly one way to chunk"):
        chunk_predictions(timed_run(), **options)
    with pytest.raises(ValueError, match="choose exactly one way to chunk"):
        monitor(timed_run(), vc.Policy("accept_all"), vc.UseCase(1, 0, -1), **options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"size": 0}, "size must be a positive whole number"),
        ({"size": -3}, "size must be a positive whole number"),
        ({"size": 2.5}, "size must be a positive whole number"),
        ({"size": True}, "size must be a positive whole number"),
        ({"n_chunks": 0}, "n_chunks must be a positive whole number"),
        ({"period": "fortnightly"}, "unknown time period 'fortnightly'"),
        ({"period": 7}, "pandas offset alias"),
    ],
)
def test_bad_chunking_options_are_clear_errors(options, message):
    with pytest.raises(ValueError, match=message):
        chunk_predictions(timed_run(), **options)


def test_numpy_integers_are_accepted_and_an_empty_run_has_no_chunks():
    assert len(chunk_predictions(timed_run(), size=np.int64(4))) == 2
    empty = vc.Predictions.from_proba(np.zeros((0, 2)), timestamp=np.zeros(0, dtype="datetime64[ns]"))
    assert chunk_predictions(empty, size=3) == []
    assert chunk_predictions(empty, n_chunks=3) == []
    assert chunk_predictions(empty, period="D") == []


# --------------------------------------------------------------------------
# monitor
# --------------------------------------------------------------------------
def conditional_se(predictions, policy, values):
    """SE of a chunk's realised total when labels follow the (policy-calibrated) probabilities."""
    matrix = values.for_classes(predictions.classes).values
    proba = policy.calibrate(predictions).proba
    v = matrix[:, policy.decide(predictions, values)].T  # (n, C): value of the item's action per true class
    mean = (proba * v).sum(axis=1)
    var = (proba * v**2).sum(axis=1) - mean**2
    return math.sqrt(np.sum(predictions.sample_weight**2 * np.maximum(var, 0.0)))


@pytest.fixture(scope="module")
def two_splits():
    reference = calibrated_run(6000, 3, 1, days=4, start="2024-03-01", weights=True)
    production = calibrated_run(5000, 3, 2, labels=False, days=3, start="2024-03-05")
    return {"reference": reference, "production": production}


def test_monitor_realised_values_are_nan_exactly_where_labels_are_missing(two_splits):
    use_case = vc.UseCase(1.0, 0.0, -2.0)
    policy = vc.Policy("threshold", threshold=0.7)
    frame = monitor(two_splits, policy, use_case, period="D")
    assert list(frame.columns) == list(MONITOR_COLUMNS)
    assert frame["split"].tolist() == ["reference"] * 4 + ["production"] * 3
    assert frame["has_labels"].tolist() == [True] * 4 + [False] * 3
    realised = frame[["realised_value_total", "realised_value_per_item", "realised_coverage"]]
    assert realised.isna().all(axis=1).tolist() == (~frame["has_labels"]).tolist()
    assert realised.notna().all(axis=1).tolist() == frame["has_labels"].tolist()
    estimated = frame[["estimated_value_total", "estimated_value_per_item", "estimated_coverage"]]
    assert estimated.notna().all().all()
    assert frame["chunk"].tolist()[:2] == ["2024-03-01", "2024-03-02"]
    assert frame["chunk"].tolist()[-1] == "2024-03-07"
    assert (frame["time_start"] >= frame["start"]).all() and (frame["time_end"] < frame["end"]).all()
    # chunk totals add up to the split totals
    for name, run in two_splits.items():
        part = frame[frame["split"] == name]
        assert part["n"].sum() == pytest.approx(run.total_weight)
        assert part["n_rows"].sum() == run.n
        assert part["estimated_value_total"].sum() == pytest.approx(vc.estimate(policy, run, use_case).value_total)
    reference = frame[frame["split"] == "reference"]
    assert reference["realised_value_total"].sum() == pytest.approx(
        vc.evaluate(policy, two_splits["reference"], use_case).value_total
    )


@pytest.mark.parametrize("value_kind", ["use_case", "matrix"])
def test_monitor_estimated_is_close_to_realised_on_calibrated_data(two_splits, value_kind):
    reference = two_splits["reference"]
    if value_kind == "use_case":
        values = vc.UseCase(1.0, 0.0, -3.0)
    else:
        values = vc.ValueMatrix(("0", "1", "2"), [[2, -1, -6, 0], [-1, 1, -1, -0.2], [-4, -1, 3, 0]])
    policy = vc.fit_policy("class_thresholds", vc.presort(calibrated_run(3000, 3, 9)), values)
    frame = monitor(reference, policy, values, n_chunks=5)
    assert len(frame) == 5 and frame["has_labels"].all()
    for chunk, row in zip(chunk_predictions(reference, n_chunks=5), frame.itertuples()):
        se = conditional_se(chunk.predictions, policy, values)
        assert abs(row.estimated_value_total - row.realised_value_total) <= 4 * se
        assert row.estimated_value_per_item == pytest.approx(row.estimated_value_total / chunk.n)
        assert row.realised_value_per_item == pytest.approx(row.realised_value_total / chunk.n)
        assert row.realised_coverage == row.estimated_coverage
        assert row.realised_value_total == pytest.approx(vc.evaluate(policy, chunk.predictions, values).value_total)
    summary = monitor_summary(frame)
    assert len(summary) == 1 and summary["split"].iloc[0] == "all"
    total_se = conditional_se(reference, policy, values) / reference.total_weight
    assert abs(summary["estimation_error_per_item"].iloc[0]) <= 4 * total_se


def test_monitor_best_threshold_is_tuned_without_labels_on_each_chunk(two_splits):
    omega = 3.0
    use_case = vc.UseCase.from_omega(omega)
    frame = monitor(two_splits, vc.Policy("threshold", threshold=0.9), use_case, period="D")
    chunks = [c for run in two_splits.values() for c in chunk_predictions(run, period="D")]
    for chunk, best in zip(chunks, frame["estimated_best_threshold"]):
        confidence = chunk.predictions.confidence
        # calibrated probabilities: expected gains turn positive above omega / (1 + omega)
        assert best == confidence[confidence > omega / (1 + omega)].min()


def test_monitor_retune_applies_the_label_free_threshold_of_each_chunk(two_splits):
    use_case = vc.UseCase(1.0, 0.0, -4.0)
    fixed = monitor(two_splits, vc.Policy("threshold", threshold=0.99), use_case, size=2000)
    retuned = monitor(two_splits, vc.Policy("threshold", threshold=0.99), use_case, size=2000, retune=True)
    pd.testing.assert_series_equal(fixed["estimated_best_threshold"], retuned["estimated_best_threshold"])
    assert (retuned["estimated_value_total"] >= fixed["estimated_value_total"] - 1e-9).all()
    chunks = [c for run in two_splits.values() for c in chunk_predictions(run, size=2000)]
    for chunk, row in zip(chunks, retuned.itertuples()):
        applied = vc.Policy("threshold", threshold=row.estimated_best_threshold)
        assert row.estimated_value_total == pytest.approx(vc.estimate(applied, chunk.predictions, use_case).value_total)
        if chunk.predictions.has_labels:
            realised = vc.evaluate(applied, chunk.predictions, use_case).value_total
            assert row.realised_value_total == pytest.approx(realised)


def test_monitor_uses_the_policy_calibration():
    from valuecore._model.recalibration import Calibrator

    run = overconfident_model(3000, 3, 2.0, 5)
    calibration = Calibrator("temperature", {"temperature": 2.0}).to_dict()
    use_case = vc.UseCase(1.0, 0.0, -4.0)
    policy = vc.Policy("threshold", threshold=0.8, calibration=calibration)
    frame = monitor(run, policy, use_case, n_chunks=2)
    for chunk, row in zip(chunk_predictions(run, n_chunks=2), frame.itertuples()):
        assert row.estimated_value_total == pytest.approx(vc.estimate(policy, chunk.predictions, use_case).value_total)
        calibrated = policy.calibrate(chunk.predictions)
        best = vc.fit_policy("threshold", vc.presort(calibrated), use_case, estimate=True).threshold
        assert row.estimated_best_threshold == best
        # the recalibrated model is calibrated again: estimate and reality agree
        se = conditional_se(chunk.predictions, policy, use_case)
        assert se > 10
        assert abs(row.estimated_value_total - row.realised_value_total) <= 4 * se


def test_monitor_per_item_value_counts_abstentions_and_weights():
    run = vc.Predictions.from_proba(
        [[0.9, 0.1], [0.6, 0.4], [0.95, 0.05], [0.55, 0.45]], y_true=[0, 0, 1, 1], sample_weight=[1, 4, 2, 1]
    )
    frame = monitor(run, vc.Policy("threshold", threshold=0.8), vc.UseCase(1, 0, -1), size=2)
    assert frame["n"].tolist() == [5.0, 3.0]
    assert frame["estimated_value_per_item"].tolist() == pytest.approx([0.8 / 5, 2 * 0.9 / 3])
    assert frame["realised_value_per_item"].tolist() == pytest.approx([1 / 5, -2 / 3])
    assert frame["estimated_coverage"].tolist() == pytest.approx([1 / 5, 2 / 3])


def test_monitor_summary_totals_per_split(two_splits):
    use_case = vc.UseCase(1.0, 0.0, -2.0)
    frame = monitor(two_splits, vc.Policy("threshold", threshold=0.7), use_case, period="D")
    summary = monitor_summary(frame)
    assert summary["split"].tolist() == ["reference", "production", "total"]
    by_split = summary.set_index("split")
    for name in ("reference", "production"):
        part = frame[frame["split"] == name]
        assert by_split.loc[name, "n_chunks"] == len(part)
        assert by_split.loc[name, "n"] == pytest.approx(part["n"].sum())
        assert by_split.loc[name, "estimated_value_total"] == pytest.approx(part["estimated_value_total"].sum())
        assert by_split.loc[name, "estimated_value_per_item"] == pytest.approx(
            part["estimated_value_total"].sum() / part["n"].sum()
        )
    reference = two_splits["reference"]
    policy = vc.Policy("threshold", threshold=0.7)
    assert by_split.loc["reference", "realised_value_per_item"] == pytest.approx(
        vc.evaluate(policy, reference, use_case).value_per_item
    )
    assert by_split.loc["reference", "estimated_coverage"] == pytest.approx(
        vc.evaluate(policy, reference, use_case).coverage
    )
    assert math.isnan(by_split.loc["production", "realised_value_total"])
    assert math.isnan(by_split.loc["production", "estimation_error_per_item"])
    assert by_split.loc["total", "n_labelled"] == pytest.approx(reference.total_weight)
    assert by_split.loc["total", "realised_value_total"] == pytest.approx(
        by_split.loc["reference", "realised_value_total"]
    )
    with pytest.raises(ValueError, match="not a monitor"):
        monitor_summary(frame.drop(columns="n"))


def test_monitor_of_an_empty_run_is_an_empty_frame():
    empty = vc.Predictions.from_proba(np.zeros((0, 2)))
    frame = monitor(empty, vc.Policy("accept_all"), vc.UseCase(1, 0, -1), size=10)
    assert frame.empty and list(frame.columns) == list(MONITOR_COLUMNS)
    assert monitor_summary(frame).empty


def test_monitor_rejects_bad_inputs():
    with pytest.raises(TypeError, match="Predictions"):
        monitor([timed_run()], vc.Policy("accept_all"), vc.UseCase(1, 0, -1), size=2)
    with pytest.raises(TypeError, match="every split must be a Predictions"):
        monitor({"a": timed_run(), "b": None}, vc.Policy("accept_all"), vc.UseCase(1, 0, -1), size=2)
    with pytest.raises(TypeError, match="policy must be a Policy"):
        monitor(timed_run(), {"kind": "accept_all"}, vc.UseCase(1, 0, -1), size=2)


# --------------------------------------------------------------------------
# seed 003, Table 5
# --------------------------------------------------------------------------
@pytest.fixture(scope="module", params=[2, 4])
def overconfident_pair(request):
    n_classes = request.param
    tune = overconfident_model(4000, n_classes, 2.5, 10 + n_classes)
    evaluation = overconfident_model(8000, n_classes, 2.5, 20 + n_classes)
    return tune, evaluation


def test_temperature_scaling_keeps_accuracy_and_f1(overconfident_pair):
    table = calibration_value_table(*overconfident_pair)
    assert table["k"].tolist() == list(vc.DEFAULT_KS)
    assert (table["accuracy_before"] == table["accuracy_after"]).all()
    assert (table["macro_f1_before"] == table["macro_f1_after"]).all()
    assert table["accuracy_before"].iloc[0] == overconfident_pair[1].accuracy
    assert table.attrs["calibration"]["method"] == "temperature"
    assert table.attrs["calibration"]["temperature"] == pytest.approx(2.5, rel=0.15)
    # k = 0 accepts everything: value = accuracy, before and after
    first = table.iloc[0]
    assert first["threshold"] == 0.0
    assert first["value_calibrated_before"] == pytest.approx(first["accuracy_before"])
    assert first["value_calibrated_after"] == pytest.approx(first["accuracy_before"])


def test_calibration_raises_the_value_of_the_calibrated_threshold(overconfident_pair):
    tune, evaluation = overconfident_pair
    table = calibration_value_table(tune, evaluation)
    from valuecore._model.recalibration import Calibrator

    calibration = table.attrs["calibration"]
    for row in table.itertuples():
        use_case = vc.UseCase.from_omega(row.k)
        threshold = use_case.calibrated_threshold
        before = vc.Policy("calibrated_threshold", threshold=threshold)
        after = vc.Policy("calibrated_threshold", threshold=threshold, calibration=calibration)
        # the table agrees with evaluating the policies (calibration applied by the policy)
        assert row.value_calibrated_before == pytest.approx(vc.evaluate(before, evaluation, use_case).value_per_item)
        assert row.value_calibrated_after == pytest.approx(vc.evaluate(after, evaluation, use_case).value_per_item)
        # never worse beyond noise (paired per-item differences) ...
        difference = vc.item_values(after, evaluation, use_case) - vc.item_values(before, evaluation, use_case)
        se = difference.std(ddof=1) / math.sqrt(difference.size)
        assert row.value_calibrated_after >= row.value_calibrated_before - 4 * se
        # ... and clearly better for large k, where an overconfident model accepts too much
        if row.k >= 4:
            assert row.value_calibrated_after - row.value_calibrated_before > 4 * se
            assert row.coverage_calibrated_after < row.coverage_calibrated_before
    assert Calibrator.from_dict(calibration).method == "temperature"
    large = table[table["k"] >= 8]
    # seed 003: the negative values of miscalibrated models vanish; a weak model drops to about zero
    assert (large["value_calibrated_before"] < -0.1).all()
    assert (large["value_calibrated_after"] > -0.02).all()


def test_tuned_thresholds_in_the_table(overconfident_pair):
    tune, evaluation = overconfident_pair
    table = calibration_value_table(tune, evaluation, ks=(2, 8))
    for row in table.itertuples():
        use_case = vc.UseCase.from_omega(row.k)
        tuned = vc.fit_policy("threshold", vc.presort(tune), use_case)
        assert row.threshold_tuned_before == tuned.threshold
        assert row.value_tuned_before == pytest.approx(vc.evaluate(tuned, evaluation, use_case).value_per_item)
        # after recalibration the tuned threshold lands near k / (k + 1)
        assert abs(row.threshold_tuned_after - row.threshold) < 0.1
        # tuning compensates for miscalibration: close to the recalibrated calibrated threshold
        assert abs(row.value_tuned_before - row.value_calibrated_after) < 0.05


def test_calibration_value_tables_for_several_models():
    runs = {
        "sharp": (overconfident_model(2000, 3, 3.0, 1), overconfident_model(3000, 3, 3.0, 2)),
        "honest": (overconfident_model(2000, 3, 1.0, 3), overconfident_model(3000, 3, 1.0, 4)),
    }
    tidy = calibration_value_tables(runs, ks=(1, 10))
    assert tidy.columns[0] == "model"
    assert tidy["model"].tolist() == ["sharp", "sharp", "honest", "honest"]
    assert tidy["k"].tolist() == [1, 10, 1, 10]
    single = calibration_value_table(*runs["honest"], ks=(1, 10))
    pd.testing.assert_frame_equal(
        tidy[tidy["model"] == "honest"].drop(columns="model").reset_index(drop=True), single, check_like=False
    )
    assert set(tidy.attrs["calibration"]) == {"sharp", "honest"}
    assert tidy.attrs["calibration"]["honest"]["temperature"] == pytest.approx(1.0, abs=0.15)
    sharp, honest = (tidy[(tidy["model"] == m) & (tidy["k"] == 10)].iloc[0] for m in ("sharp", "honest"))
    assert sharp["value_calibrated_after"] - sharp["value_calibrated_before"] > 0.2
    assert abs(honest["value_calibrated_after"] - honest["value_calibrated_before"]) < 0.05


def test_calibration_value_table_errors():
    labelled = overconfident_model(200, 3, 2.0, 1)
    unlabeled = vc.Predictions.from_proba(labelled.proba)
    with pytest.raises(ValueError, match="evaluation split"):
        calibration_value_table(labelled, unlabeled)
    with pytest.raises(ValueError, match="tuning split"):
        calibration_value_table(unlabeled, labelled)
    other = vc.Predictions.from_proba(labelled.proba, y_true=np.array(["x", "y", "z"])[labelled.y_true], classes="xyz")
    with pytest.raises(ValueError, match="classes"):
        calibration_value_table(labelled, other)
    with pytest.raises(ValueError, match="pair"):
        calibration_value_tables({"m": labelled})


def isotonic_policy():
    from valuecore._model.recalibration import Calibrator

    calibration = Calibrator("isotonic", {"x": [0.3, 0.6, 0.8, 1.0], "y": [0.1, 0.5, 0.7, 0.95]}).to_dict()
    return vc.Policy("threshold", threshold=0.6, calibration=calibration)


def test_monitor_best_threshold_under_isotonic_calibration_maximises_the_estimate():
    """Isotonic changes only the confidence; the label-free best threshold must follow it, not the raw proba."""
    run = calibrated_run(3000, 3, 21, labels=False)
    use_case = vc.UseCase(1.0, 0.0, -1.0)
    policy = isotonic_policy()
    frame = monitor(run, policy, use_case, n_chunks=1)
    best = frame["estimated_best_threshold"].iloc[0]

    def estimated(threshold):
        candidate = vc.Policy("threshold", threshold=threshold, calibration=dict(policy.calibration))
        return vc.estimate(candidate, run, use_case).value_total

    # accepting every item with recalibrated confidence >= t is worth sum(c - (1 - c)) over them
    confidence = np.sort(policy.calibrate(run).confidence)[::-1]
    distinct = np.r_[confidence[1:] != confidence[:-1], True]
    best_value = max(np.cumsum(2 * confidence - 1)[distinct].max(), 0.0)
    assert estimated(None if np.isnan(best) else float(best)) == pytest.approx(best_value)
    assert estimated(0.6) < best_value - 1.0  # the given threshold is not already the best one


def test_monitor_refuses_isotonic_calibration_with_a_per_class_matrix():
    run = calibrated_run(50, 3, 22)
    matrix = vc.ValueMatrix(("0", "1", "2"), [[1, -1, -9, 0], [-1, 1, -1, 0], [-1, -1, 1, 0]])
    with pytest.raises(ValueError, match="isotonic recalibrates only the top-label confidence"):
        monitor(run, isotonic_policy(), matrix, size=10)


@pytest.mark.parametrize("weights", ["unit", "integers", "fractions"])
@pytest.mark.parametrize("method", ["temperature", "isotonic"])
def test_calibration_value_table_is_the_presorted_evaluation_bit_for_bit(weights, method):
    # The evaluation split is counted at the table's thresholds instead of sorted; the
    # figures must be presort's, to the bit (ties: probabilities rounded to 2 decimals).
    rng = np.random.default_rng(31)
    n = 3000
    proba = np.round(softmax(rng.normal(0.0, 2.0, size=(n, 3)), axis=1), 2)
    proba[np.arange(n), proba.argmax(axis=1)] += 1.0 - proba.sum(axis=1)
    y = rng.integers(0, 3, n)
    weight = {"unit": None, "integers": rng.integers(0, 4, n).astype(float),
              "fractions": rng.uniform(0.1, 2.0, n)}[weights]
    tune = vc.Predictions.from_proba(proba[: n // 2], y[: n // 2],
                                     sample_weight=None if weight is None else weight[: n // 2])
    evaluation = vc.Predictions.from_proba(proba[n // 2:], y[n // 2:],
                                           sample_weight=None if weight is None else weight[n // 2:])
    table = calibration_value_table(tune, evaluation, method=method)
    from valuecore._model.recalibration import Calibrator

    calibrator = Calibrator.from_dict(table.attrs["calibration"])
    runs = {"before": (vc.presort(tune), vc.presort(evaluation)),
            "after": (vc.presort(calibrator.apply(tune)), vc.presort(calibrator.apply(evaluation)))}
    for row in table.itertuples():
        use_case = vc.UseCase.from_omega(row.k)
        for when, (tune_run, eval_run) in runs.items():
            tuned = vc.fit_policy("threshold", tune_run, use_case).threshold
            assert getattr(row, f"value_calibrated_{when}") == eval_run.value_at(use_case.calibrated_threshold, row.k)
            assert getattr(row, f"coverage_calibrated_{when}") == eval_run.coverage_at(use_case.calibrated_threshold)
            assert getattr(row, f"value_tuned_{when}") == eval_run.value_at(tuned, row.k)
            threshold_tuned = getattr(row, f"threshold_tuned_{when}")
            assert threshold_tuned == tuned or (tuned is None and math.isnan(threshold_tuned))


@pytest.mark.parametrize("retune", [False, True])
def test_monitor_with_kept_sorted_chunks_is_a_fresh_sort_bit_for_bit(two_splits, monkeypatch, retune):
    # A chunk's presort is kept (issue 33: a new value tunes each chunk's best threshold without sorting it again);
    # every column at several values, the calibrated policy's chunks included, equals a fresh presort per call.
    from valuecore._monitor import chunks

    reference = two_splits["reference"]
    calibrated = vc.Policy("threshold", threshold=0.6,
                           calibration=vc.calibration.fit_calibration(reference, "temperature").to_dict())
    cases = [(vc.Policy("threshold", threshold=0.55), {"period": "D"}), (calibrated, {"n_chunks": 3})]
    values = [vc.UseCase(1.0, 0.0, w) for w in (-2.0, -3.7)]

    def frames():
        return [vc.monitoring.monitor(two_splits, policy, v, retune=retune, **how) for policy, how in cases
                for v in values]

    kept = frames()
    assert chunks._SORTED_CHUNKS  # the chunks' sorted runs are kept, and were used on the second value
    monkeypatch.setattr(chunks, "_sorted", chunks.presort)
    for shown, fresh in zip(kept, frames()):
        pd.testing.assert_frame_equal(shown, fresh, check_exact=True)
        numbers = shown.select_dtypes("number").columns
        assert np.array_equal(shown[numbers].to_numpy(np.float64).view(np.int64),
                              fresh[numbers].to_numpy(np.float64).view(np.int64))


def test_sessions_in_threads_keep_sorted_chunks_without_breaking_each_other(monkeypatch):
    # Streamlit runs each session in a thread of its own, and the kept sorted chunks are shared by all: a store
    # that one thread summed or cut while another added to it raised "dictionary changed size during iteration"
    # (five runs in six of this test before the store got its lock). A tiny switch interval makes threads
    # change hands between any two bytecodes.
    import sys
    import threading

    from valuecore._monitor import chunks

    rng = np.random.default_rng(0)
    labels = np.array(["a", "b"])
    runs = [vc.Predictions.from_proba(rng.dirichlet([1, 1], size=5), labels[rng.integers(0, 2, 5)],
                                      classes=("a", "b")) for _ in range(64)]
    monkeypatch.setattr(chunks, "_SORTED_CHUNKS", {})
    monkeypatch.setattr(chunks, "_KEPT_SORTED_ITEMS", 100)  # 20 runs' worth: the oldest go all the time
    errors = []

    def session(mine):
        try:
            for _ in range(80):
                for run in mine:
                    assert chunks._sorted(run).predictions is run
        except Exception as error:  # noqa: BLE001 - any failure in a thread is reported by the test
            errors.append(error)

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=session, args=(runs[i::4],)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert not errors, errors[:1]
    assert sum(run.predictions.n for run in chunks._SORTED_CHUNKS.values()) <= 100
