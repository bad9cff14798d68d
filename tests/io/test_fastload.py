"""The loader's fast paths report exactly what its per-entry checks report."""

import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from valuecore._io import fastload as _fastload
from valuecore._io.runfiles import cells as _cells, parse as _parse, reading as _reading
from valuecore.runs import load_run_file


def _parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _outcome(data: bytes):
    report = load_run_file(data, name="model.parquet")
    run = report.models.get("model")
    splits = {} if run is None else {name: (p.y_pred, p.confidence, p.y_true) for name, p in run.splits.items()}
    return [str(problem) for problem in report.problems], splits, None if run is None else run.sha256


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 300),
    spoil=st.lists(st.sampled_from(["nan", "inf", "negative", "off", "slightly_off", "above_one", "label"]),
                   max_size=3),
    split=st.booleans(),
    float32=st.booleans(),
)  # fmt: skip
def test_fast_checks_load_what_the_entry_checks_load(seed, n, spoil, split, float32):
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(3), n)
    labels = rng.integers(0, 3, n)
    row = int(rng.integers(n))
    for kind in spoil:
        if kind == "label":
            labels[row] = 7
        else:
            value = {"nan": np.nan, "inf": np.inf, "negative": -0.1, "off": proba[row, 0] + 0.5,
                     "slightly_off": proba[row, 0] + 1e-4, "above_one": 1.0 + 1e-7}[kind]  # fmt: skip
            proba[row, int(rng.integers(3))] = value
    frame = pd.DataFrame({f"proba_{c}": proba[:, c].astype(np.float32 if float32 else np.float64) for c in range(3)})
    frame["y_true"] = labels.astype(np.int16)
    if split:
        frame["split"] = rng.choice(["val", "test"], n)
    data = _parquet_bytes(frame)
    fast = _outcome(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_cells, "clean_row_deviations", lambda block: None)
        patch.setattr(_cells, "integer_label_codes", lambda values, classes: None)
        slow = _outcome(data)
    assert fast[0] == slow[0] and fast[2] == slow[2]
    assert fast[1].keys() == slow[1].keys()
    for name in fast[1]:
        for got, expected in zip(fast[1][name], slow[1][name]):
            np.testing.assert_array_equal(got, expected)


def test_the_hash_thread_hands_its_error_to_the_caller():
    def fail():
        raise OSError("gone")

    result = _fastload.in_background(fail)
    with pytest.raises(OSError, match="gone"):
        result()
    assert _fastload.in_background(lambda: "abc")() == "abc"


def test_an_error_of_the_hash_thread_is_reported_not_raised(monkeypatch):
    """Bytes in memory (an upload) above _HASHED_INLINE_BYTES are hashed on a thread while they load; smaller
    ones, and a file on disk, when the digest is asked for (tests/io/test_identity.py)."""
    data = _parquet_bytes(pd.DataFrame({"proba_a": [0.9, 0.2], "proba_b": [0.1, 0.8], "y_true": ["a", "b"]}))

    def failed(data):
        raise MemoryError("no room to hash")

    monkeypatch.setattr(_parse, "_sha256", failed)
    monkeypatch.setattr(_parse, "_HASHED_INLINE_BYTES", 0)
    report = load_run_file(data, name="model.parquet")
    assert not report.ok and "could not be loaded" in str(report.errors[0])


def test_tiles_fill_every_row_and_column():
    rng = np.random.default_rng(0)
    columns = [rng.random(10_000) for _ in range(3)]
    block = np.empty((10_000, 3))
    _fastload.fill_columns(block, columns)
    np.testing.assert_array_equal(block, np.column_stack(columns))


@pytest.mark.parametrize("float32", [False, True])
def test_the_argmax_found_while_checking_is_numpys_on_a_shuffled_file(float32):
    """The loader finds each row's class and confidence from the columns as read (file order) and lays them
    out by model and split; they are numpy's argmax and max of the matrix it keeps, ties to the first."""
    rng = np.random.default_rng(3)
    n = 3 * (1 << 16) + 17  # several batches, the last one short
    proba = rng.dirichlet(np.ones(4), n)
    proba[::5] = 0.25  # four-way ties
    proba[::11, 1] = 0.5
    proba[::11, 2] = 0.5  # two-way ties
    proba[::11, [0, 3]] = 0.0
    proba[7] = [1.0 + 1e-7, 0, 0, 0]  # a hair above 1: read as 1
    dtype = np.float32 if float32 else np.float64
    frame = pd.DataFrame({f"proba_{c}": proba[:, c].astype(dtype) for c in range(4)})
    frame["model"] = rng.choice(["m1", "m2"], n)
    frame["split"] = rng.choice(["val", "test"], n)
    frame["y_pred"] = np.where(np.arange(n) % 13 == 0, 3, proba.argmax(axis=1))  # disagrees now and then
    report = load_run_file(_parquet_bytes(frame), name="runs.parquet")
    assert report.ok, [str(p) for p in report.problems]
    for model, run in report.models.items():
        for split, p in run.splits.items():
            np.testing.assert_array_equal(p.y_pred, np.argmax(p.proba, axis=1))
            np.testing.assert_array_equal(p.confidence, np.minimum(p.proba.max(axis=1).astype(np.float64), 1.0))
            rows = ((frame["model"] == model) & (frame["split"] == split)).to_numpy()
            np.testing.assert_array_equal(p.proba, np.minimum(proba[rows].astype(dtype), 1.0))
    disagree = next(x for x in report.problems if x.column == "y_pred")
    expected = np.flatnonzero((frame["y_pred"].to_numpy() != proba.astype(dtype).argmax(axis=1)))
    assert disagree.row_count == expected.size and disagree.rows == tuple(expected[:5] + 1)


@pytest.mark.parametrize("sum_tolerance", [1e-7, 1e-5, 1e-3])
@pytest.mark.parametrize("warn_tolerance", [1e-8, 1e-6, 1e-4, 1e-2])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 200))
def test_rows_off_by_more_than_either_tolerance_are_named_whichever_is_smaller(
    seed, n, sum_tolerance, warn_tolerance
):
    """A block whose worst row is within both tolerances skips the per-row masks; any other block names
    its rows, also when sum_tolerance < warn_tolerance."""
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(3), n)
    off = rng.choice(n, min(n, 5), replace=False)
    proba[off, 0] += rng.choice([0.0, 3e-8, 3e-6, 3e-4, 3e-3], off.size)
    frame = pd.DataFrame({f"proba_{c}": proba[:, c] for c in range(3)})
    frame["y_true"] = rng.integers(0, 3, n).astype(np.int16)
    report = load_run_file(_parquet_bytes(frame), name="model.parquet", sum_tolerance=sum_tolerance,
                           warn_tolerance=warn_tolerance)  # fmt: skip
    deviation = np.abs(proba.sum(axis=1) - 1.0)
    too_far = np.flatnonzero(deviation > sum_tolerance) + 1
    approximate = np.flatnonzero(deviation > warn_tolerance) + 1
    sums = [p for p in report.problems if "sum to 1" in p.message]
    if too_far.size:
        assert [(p.severity, p.rows, p.row_count) for p in sums] == [("error", tuple(too_far[:5]), too_far.size)]
    elif approximate.size:
        assert [(p.severity, p.rows, p.row_count) for p in sums] == [
            ("warning", tuple(approximate[:5]), approximate.size)
        ]
    else:
        assert sums == []


def _everything(data: bytes):
    """Problems and every array of every split, as the loader returns them."""
    report = load_run_file(data, name="model.parquet")
    arrays = {(model, split): (p.proba, p.logits, p.y_pred, p.confidence, p.y_true)
              for model, run in report.models.items() for split, p in run.splits.items()}  # fmt: skip
    return [str(problem) for problem in report.problems], arrays


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 300),
    row_group=st.integers(1, 120),
    block=st.integers(1, 50),
    spoil=st.lists(st.sampled_from(["nan", "inf", "negative", "off", "slightly_off", "above_one", "null",
                                    "logit_nan", "rows_off", "rows_far"]), max_size=3),
    layout=st.sampled_from(["none", "split", "model_split"]),
    float32=st.booleans(),
)  # fmt: skip
def test_row_groups_decoded_whole_load_what_batches_load(seed, n, row_group, block, spoil, layout, float32):
    """Float columns are decoded a row group at a time when row groups are small, its blocks checked by
    several threads, else batch by batch: both give the same problems (file, column, rows, in file order)
    and the same arrays, bad cells, several row groups, several blocks per row group and files laid out
    by model and split included."""
    rng = np.random.default_rng(seed)
    dtype = np.float32 if float32 else np.float64
    proba = rng.dirichlet(np.ones(3), n)
    logits = rng.normal(size=(n, 3))
    frame = pd.DataFrame({f"proba_{c}": proba[:, c].astype(dtype) for c in range(3)})
    for c in range(3):
        frame[f"logit_{c}"] = logits[:, c]
    for kind in spoil:
        row, column = int(rng.integers(n)), f"proba_{int(rng.integers(3))}"
        if kind in ("rows_off", "rows_far"):  # rows in several blocks, named in file order
            rows = rng.choice(n, min(n, 8), replace=False)
            frame.loc[rows, column] += 1e-4 if kind == "rows_off" else 0.5
            continue
        value = {"nan": np.nan, "inf": np.inf, "negative": -0.1, "off": 0.9, "slightly_off": 1e-4,
                 "above_one": 1.0 + 1e-7, "null": None, "logit_nan": np.nan}[kind]  # fmt: skip
        if kind == "logit_nan":
            column = column.replace("proba", "logit")
        elif kind == "slightly_off":
            value = frame.at[row, column] + value
        frame[column] = frame[column].astype(object if value is None else frame[column].dtype)
        frame.at[row, column] = value
        frame[column] = frame[column].astype(dtype if column.startswith("proba") else np.float64)
    frame["y_true"] = rng.integers(0, 3, n).astype(np.int16)
    if layout != "none":
        frame["split"] = rng.choice(["val", "test"], n)
    if layout == "model_split":
        frame["model"] = rng.choice(["m1", "m2"], n)
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False, row_group_size=row_group)
    data = buffer.getvalue()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_cells, "_CHECK_BLOCK", block)
        patch.setattr(_reading, "_CHECK_BLOCK", block)  # read in blocks of that size, checked in them
        patch.setattr(_reading, "_PLACE_WORKERS", 3)  # blocks checked by threads at once, in any order
        whole = _everything(data)
        patch.setattr(_reading, "_GROUP_BYTES", -1)  # every row group too large: batch by batch,
        patch.setattr(_reading, "_PLACE_WORKERS", 1)  # and one block after another
        batches = _everything(data)
    assert whole[0] == batches[0]
    assert whole[1].keys() == batches[1].keys()
    for key in whole[1]:
        for got, expected in zip(whole[1][key], batches[1][key]):
            np.testing.assert_array_equal(got, expected)


@settings(max_examples=60, deadline=None)
@given(
    labels=st.one_of(st.lists(st.integers(0, 5), min_size=1, max_size=50),
                     st.lists(st.integers(-3, 12), min_size=1, max_size=50)),
    classes=st.one_of(st.integers(1, 8).map(lambda k: list(range(k))),  # labels 0..k-1 (the usual case)
                      st.lists(st.integers(-3, 12), min_size=1, max_size=8, unique=True)),
    dtype=st.sampled_from([np.int8, np.int16, np.int64, np.uint8]),
)
@example(labels=[2, 0, 1, 1], classes=[0, 1, 2], dtype=np.int16)  # each label its own index: the cast
@example(labels=[3, 4, 4], classes=[0, 1, 2, 3, 4], dtype=np.uint8)
@example(labels=[3, 4, 4], classes=[0, 1, 2, 4, 3], dtype=np.int64)  # a table
def test_small_integer_labels_get_their_class_index(labels, classes, dtype):
    """By a cast when every label in the span is its own class index, else by a table: the same codes
    as looking each label up by its text (-1 when it is no class)."""
    from valuecore._model.predictions import _small_integer_codes

    values = np.array(labels)
    if dtype == np.uint8:
        values = np.abs(values)
    lookup = {str(c): i for i, c in enumerate(classes)}
    codes, complete = _small_integer_codes(values.astype(dtype), lookup)
    assert codes.dtype == np.int64
    np.testing.assert_array_equal(codes, [lookup.get(str(v), -1) for v in values])
    assert not complete or codes.min(initial=0) >= 0  # "complete": every label is a class
