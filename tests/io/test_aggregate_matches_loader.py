"""The aggregate of a source loads to the counts the in-memory loader gives the source itself, or both refuse it.

The loader (``vc.load_runs``) is the reference: per model, its classes and the summed weight of every (split,
true class, predicted class, confidence) must come back from ``aggregate`` then ``load_runs`` of its file. Each
case here is one the aggregate once got silently wrong (a hostile-input hunt, issue 33)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import valuecore as vc
from valuecore._io.aggregate import AggregateRefused, aggregate


def loaded_counts(report, period: str | None = None) -> dict:
    """Per model: its classes, and the weight of each (split, true class, predicted class, confidence), and of
    its time's ``period`` ("day"; its first day in UTC) when one is given."""
    counts = {}
    for name, run in report.models.items():
        tally: Counter = Counter()
        for split, pred in run.splits.items():
            true = [None] * pred.n if pred.y_true is None else [run.classes[i] for i in pred.y_true]
            predicted = [run.classes[i] for i in pred.y_pred]
            times = [None] * pred.n if period is None or pred.timestamp is None else (
                pred.timestamp.astype("datetime64[D]").tolist())  # fmt: skip
            for t, p, c, w, day in zip(true, predicted, pred.confidence.tolist(), pred.sample_weight.tolist(), times):
                tally[(split, t, p, c, day)] += w
        counts[name] = (tuple(run.classes), dict(tally))
    return counts


def errors(report_or_problems) -> list:
    problems = getattr(report_or_problems, "problems", report_or_problems)
    return [p for p in problems if p.severity == "error"]


def aggregate_then_load(source, tmp_path: Path, **options):
    """The aggregate's file loaded, or the aggregate's refusal."""
    out = tmp_path / f"aggregate_{len(list(tmp_path.glob('aggregate_*')))}.parquet"
    try:
        aggregate([str(source)], out, **options)
    except AggregateRefused as refused:
        return refused
    return vc.load_runs(out)


def assert_aggregate_loads_as_the_source(source, tmp_path: Path, **options):
    """Both load alike, or both refuse (naming the same columns); returns the loader's report."""
    raw = vc.load_runs(source)
    result = aggregate_then_load(source, tmp_path, **options)
    if isinstance(result, AggregateRefused):
        assert errors(raw), f"the loader reads {source}, the aggregate refuses it: {result}"
        assert {p.column for p in errors(raw)} & {p.column for p in errors(result.problems)}, (errors(raw), result)
        return raw
    assert not errors(raw), f"the loader refuses {source}, the aggregate wrote it: {errors(raw)}"
    assert not errors(result), errors(result)
    assert loaded_counts(result, options.get("period")) == loaded_counts(raw, options.get("period"))
    return raw


def _run_frames():
    return {
        "m[1]": pd.DataFrame({"y_true": ["a", "b"], "proba_a": [0.9, 0.2], "proba_b": [0.1, 0.8]}),
        "m1": pd.DataFrame({"y_true": ["a", "b", "a"], "proba_a": [0.1, 0.8, 0.5], "proba_b": [0.9, 0.2, 0.5]}),
        "m?": pd.DataFrame({"y_true": ["b", "b"], "proba_a": [0.3, 0.4], "proba_b": [0.7, 0.6]}),
        "m*": pd.DataFrame({"y_true": ["a"] * 4, "proba_a": [0.6, 0.7, 0.2, 0.1], "proba_b": [0.4, 0.3, 0.8, 0.9]}),
    }


@pytest.mark.parametrize("names", [("m1", "m[1]"), tuple(_run_frames())])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_folder_with_glob_characters_in_file_names_aggregates_each_file_once(names, suffix, tmp_path):
    """m1 and m[1] are two run files: DuckDB read every path as a glob, so m1 counted twice and m[1] vanished."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in names:
        path, frame = folder / f"{name}{suffix}", _run_frames()[name]
        frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path, index=False)
    raw = assert_aggregate_loads_as_the_source(folder, tmp_path)
    assert sorted(raw.models) == sorted(names)


@pytest.mark.parametrize("folder", ["exp[1]", "exp*", "exp?"])
def test_a_named_file_whose_path_holds_glob_characters_is_that_file(folder, tmp_path):
    """``aggregate 'exp[1]/preds.csv'`` read exp1/preds.csv, another experiment's file; with none beside it, it
    refused the existing file as naming none."""
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "preds.csv").write_text("y_true,proba_a,proba_b\na,0.9,0.1\nb,0.2,0.8\n")
    (tmp_path / "exp1").mkdir()
    (tmp_path / "exp1" / "preds.csv").write_text("y_true,proba_a,proba_b\na,0.1,0.9\nb,0.8,0.2\na,0.5,0.5\n")
    named = tmp_path / folder / "preds.csv"
    assert_aggregate_loads_as_the_source(named, tmp_path)
    loaded = aggregate_then_load(named, tmp_path)
    assert list(loaded.models) == ["preds"]  # named after the file, as the loader names it
    assert_aggregate_loads_as_the_source(tmp_path / folder, tmp_path)  # the folder itself


def test_a_glob_still_reads_the_files_it_matches(tmp_path):
    for name, frame in _run_frames().items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    out = tmp_path / "glob.parquet"
    aggregate([str(tmp_path / "m1*.csv")], out, model="m")  # matches m1.csv alone
    assert loaded_counts(vc.load_runs(out))["m"][1] == loaded_counts(vc.load_runs(tmp_path / "m1.csv"))["m1"][1]


def test_duckdb_refuses_a_file_it_cannot_read_as_itself(tmp_path):
    """DuckDB's globs match no path holding a backslash: such a path with a glob character is refused by name,
    never read as another file."""
    folder = tmp_path / "a\\b"
    folder.mkdir()
    _run_frames()["m1"].to_csv(folder / "m[1].csv", index=False)
    with pytest.raises(AggregateRefused, match="backslash") as refused:
        aggregate([str(folder / "m[1].csv")], tmp_path / "out.parquet")
    assert refused.value.problems[0].file == str(folder / "m[1].csv")
    assert not errors(vc.load_runs(folder / "m[1].csv"))  # the loader reads it


# Spellings of labels around the integer classes: the loader reads a label as the class it spells, or else as
# the integer class of a whole number written with a point (1.0, +01.); "01", "+1", "1e0" name no class 1.
LABEL_SPELLINGS = ["0", "1", "01", "2", "10", "1.0", "01.0", "+1.", "1.", "-0.0", "2.00", "+1", "1e0", " 1 ", "0x1",
                   "1.5", "+0", "١.0"]  # fmt: skip
CLASS_SPELLINGS = ["0", "1", "01", "2", "10", "-1", "a"]


def _csv(path: Path, header: list[str], rows: list[list]) -> Path:
    path.write_text("\n".join(",".join(map(str, row)) for row in [header, *rows]) + "\n", encoding="utf-8")
    return path


@st.composite
def probability_runs(draw, labels=LABEL_SPELLINGS, classes=CLASS_SPELLINGS):
    """(header, rows) of a probability run: its classes, and labels spelled any way."""
    chosen = draw(st.lists(st.sampled_from(classes), min_size=2, max_size=3, unique=True))
    n = draw(st.integers(2, 12))
    rows = []
    for _ in range(n):
        p = draw(st.integers(0, 10)) / 10
        cells = [p, round(1 - p, 1)] + [0.0] * (len(chosen) - 2)
        rows.append([draw(st.sampled_from(labels + chosen)), *cells])
    return ["y_true", *(f"proba_{c}" for c in chosen)], rows


@st.composite
def top_label_runs(draw, labels=LABEL_SPELLINGS):
    n = draw(st.integers(2, 12))
    rows = [[draw(st.sampled_from(labels)), draw(st.sampled_from(labels)), draw(st.integers(0, 10)) / 10]
            for _ in range(n)]  # fmt: skip
    return ["y_true", "y_pred", "confidence"], rows


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run=st.one_of(probability_runs(), top_label_runs()))
@example(run=(["y_true", "proba_1", "proba_01"], [["01", 0.2, 0.8], ["1", 0.7, 0.3]]))  # hunt48 r8
@example(run=(["y_true", "proba_0", "proba_1"], [["0", 0.9, 0.1], ["+1", 0.2, 0.8]]))
@example(run=(["y_true", "y_pred", "confidence"], [["1", "1.0", 0.9], ["1.", "1", 0.6]]))  # one class: refused
# Found by exploration: "+0" and "0" are two classes of one number; the loader ordered them as a set iterates,
# which changes with the process's str hash salt, the aggregate in text order.
@example(run=(["y_true", "y_pred", "confidence"], [["+0", "2.00", 0.0], ["0", "0", 0.0]]))
def test_labels_name_the_classes_the_loader_reads_them_as(run, tmp_path_factory):
    """A label is a class when its text is the class's, or when it writes a whole number with a point and the
    class is that integer: the aggregate compared the labels' values, so '01' went into class 1 and '+1' or
    '1e0' were class 1 where the loader refuses them."""
    folder = tmp_path_factory.mktemp("labels")
    assert_aggregate_loads_as_the_source(_csv(folder / "m.csv", *run), folder)


# One name in Unicode's composed and decomposed forms (and the Angstrom sign, whose NFC is "Å"): the loader
# reads each as its NFC form, so both spellings are one class, one model, one split.
UNICODE_NAMES = ["\u00e9", "e\u0301", "\u00c5", "A\u030a", "\u212b", "a"]


@st.composite
def unicode_runs(draw):
    """(header, rows) of a probability run with classes, labels, models and splits spelled in either form."""
    classes = draw(st.lists(st.sampled_from(UNICODE_NAMES), min_size=2, max_size=2, unique=True))
    columns = ["y_true", *(f"proba_{c}" for c in classes)]
    extra = draw(st.sampled_from([[], ["model"], ["split"], ["model", "split"]]))
    rows = []
    for _ in range(draw(st.integers(2, 10))):
        p = draw(st.integers(0, 10)) / 10
        rows.append([draw(st.sampled_from(UNICODE_NAMES[:5])), p, round(1 - p, 1),
                     *(draw(st.sampled_from(UNICODE_NAMES)) for _ in extra)])  # fmt: skip
    return columns + extra, rows


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run=unicode_runs(), parquet=st.booleans())
@example(run=(["y_true", "proba_\u00e9", "proba_b"], [["e\u0301", 0.8, 0.2], ["b", 0.3, 0.7]]), parquet=False)  # r1
def test_names_in_either_unicode_form_are_one_name_as_the_loader_reads_them(run, parquet, tmp_path_factory):
    """The loader reads labels, class names, models and splits in their composed form (NFC); the aggregate
    compared them as written, so a decomposed label was "not among the classes" of its own composed class."""
    folder = tmp_path_factory.mktemp("nfc")
    header, rows = run
    path = _csv(folder / "m.csv", header, rows)
    if parquet:
        pd.read_csv(path, dtype={c: str for c in ("y_true", "model", "split")}).to_parquet(folder / "m.parquet")
        path.unlink()
        path = folder / "m.parquet"
    assert_aggregate_loads_as_the_source(path, folder)


def test_run_files_named_alike_in_either_unicode_form_are_one_model(tmp_path):
    """é.csv and e\\u0301.csv (as macOS writes names) are one model "é", as docs/run-format.md says: the loader
    loads the first and refuses the second as a model name already taken; the aggregate, which blended both
    files' rows into one model, refuses them as two sources of one model."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for name, p in (("\u00e9", 0.9), ("e\u0301", 0.3)):
        _csv(folder / f"{name}.csv", ["y_true", "proba_a", "proba_b"], [["a", p, round(1 - p, 1)], ["b", 0.5, 0.5]])
    loaded = vc.load_runs(folder)
    assert list(loaded.models) == ["\u00e9"]
    first, second = sorted(folder.glob("*.csv"))
    apart = " (their names 'e\\u0301' and '\\xe9' differ only in Unicode form, and are one name)"
    assert [(p.file, p.message) for p in errors(loaded)] == [(str(second), f"model name 'é' is already taken by "
                                                               f"{first}; this one was not loaded (rename the file or "
                                                               "the model column values)" + apart)]  # fmt: skip
    with pytest.raises(AggregateRefused, match="gives the model name 'é'") as refused:
        aggregate([str(folder)], tmp_path / "out.parquet")
    assert [p.message.endswith(apart) for p in errors(refused.value.problems)] == [True]


TIMES = ["2024-05-01T23:30:00-05:00", "2024-05-01T01:00:00+09:00", "2024-05-01", "2024-05-01T13:00:00Z",
         " 2024-05-02 ", "2024-04-30T23:59:59", "9999-12-31", "1600-01-01", "2262-04-10T12:00:00", ""]


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(times=st.lists(st.sampled_from(TIMES), min_size=2, max_size=8), split=st.booleans())
@example(times=["2024-05-01T23:30:00-05:00", "2024-05-01T01:00:00+09:00"], split=False)  # hunt48 r9
@example(times=["9999-12-31", "2024-01-01"], split=False)
@example(times=["", "2024-01-01", "", "2024-01-02"], split=True)
@example(times=["", "2024-01-01"], split=False)
def test_periods_are_utc_days_and_refused_times_are_refused(times, split, tmp_path_factory):
    """``--period day`` buckets times in UTC, as the loader converts them (a TIMESTAMP cast dropped the offset:
    23:30-05:00 fell on May 1, not May 2); times the loader refuses (outside nanoseconds' range, or missing in
    part of a split) are refused, not written into a file the loader then refuses."""
    folder = tmp_path_factory.mktemp("times")
    rows = [[*(["val" if i % 2 else "test"] if split else []), "ab"[i % 2], 0.9 - 0.1 * (i % 3), 0.1 + 0.1 * (i % 3),
             t] for i, t in enumerate(times)]  # fmt: skip
    header = [*(["split"] if split else []), "y_true", "proba_a", "proba_b", "timestamp"]
    assert_aggregate_loads_as_the_source(_csv(folder / "m.csv", header, rows), folder, period="day")


@pytest.mark.parametrize("stamps", [["2024-05-01T23:30:00-05:00", "2024-05-01T01:00:00+09:00"],
                                    ["9999-05-01T23:30:00-05:00", "2024-05-01T01:00:00+09:00"],
                                    [None, "2024-05-01T01:00:00+09:00"]])  # fmt: skip
def test_parquet_times_with_an_offset_or_out_of_range_read_as_the_loader_reads_them(stamps, tmp_path):
    """Typed times: the checks are counted in the grouping (a time missing in part of a split, too)."""
    stamps = pd.Series(stamps)
    frame = pd.DataFrame({"y_true": ["a", "b"], "proba_a": [0.9, 0.2], "proba_b": [0.1, 0.8]})
    frame["timestamp"] = pd.to_datetime(stamps, utc=True, format="ISO8601").dt.as_unit("us")
    frame.to_parquet(tmp_path / "m.parquet")
    assert_aggregate_loads_as_the_source(tmp_path / "m.parquet", tmp_path, period="day")


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(truths=st.lists(st.sampled_from([True, False, None]), min_size=2, max_size=10),
       classes=st.sampled_from([("False", "True"), ("0", "1"), ("false", "true")]), top_label=st.booleans(),
       split=st.booleans())  # fmt: skip
@example(truths=[True, False], classes=("False", "True"), top_label=False, split=False)  # hunt48 r3
@example(truths=[True, False, True], classes=("False", "True"), top_label=True, split=True)
def test_parquet_truths_are_the_loaders_true_and_false(truths, classes, top_label, split, tmp_path_factory):
    """A Parquet bool cell is "True" or "False" to the loader (Python's str) and was "true" or "false" to the
    aggregate: classes proba_True/proba_False refused their own labels, and a top-label run's classes changed."""
    folder = tmp_path_factory.mktemp("truths")
    n = len(truths)
    frame = pd.DataFrame({"y_true": pd.array(truths, dtype="boolean")})
    if top_label:
        frame["y_pred"] = pd.array([not t for t in truths[::-1]], dtype="boolean")
        frame["confidence"] = [0.5 + 0.05 * (i % 4) for i in range(n)]
    else:
        for k, c in enumerate(classes):
            frame[f"proba_{c}"] = [0.3 if (i + k) % 2 else 0.7 for i in range(n)]
    if split:
        frame["split"] = pd.array([i % 2 == 0 for i in range(n)], dtype="boolean")
    frame.to_parquet(folder / "m.parquet")
    assert_aggregate_loads_as_the_source(folder / "m.parquet", folder)


# Number cells of a CSV: the loader (pandas) reads ASCII spellings only; DuckDB's cast (and its TRIM) also read
# an underscore between digits and non-ASCII spaces around a number.
NUMBER_SPELLINGS = ["1", " 2 ", "\t3", "+2", "2.", "1e0", "0001", "1_000", "2\u00a0", "\u30002", "2\u2003", "\u20282",
                    "2\x85", "inf", "nan", "", "NA", "1__0", "_1", "２", "1 000"]  # fmt: skip


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(weights=st.lists(st.sampled_from(NUMBER_SPELLINGS), min_size=2, max_size=6),
       probability=st.sampled_from(NUMBER_SPELLINGS[:1] + NUMBER_SPELLINGS[7:14]), top_label=st.booleans())
@example(weights=["1", "1", "1_000"], probability="1", top_label=False)  # hunt48 r6
@example(weights=["1", "2\u00a0"], probability="1", top_label=True)
@example(weights=["1", "1"], probability="\u30002", top_label=False)
def test_number_cells_are_numbers_as_the_loader_reads_them(weights, probability, top_label, tmp_path_factory):
    """'1_000', '2\\u00a0' or '\\u30002' are "values that are not numbers" to the loader: the aggregate read them
    as 1000 and 2 and wrote them."""
    folder = tmp_path_factory.mktemp("numbers")
    if top_label:
        header = ["y_true", "y_pred", "confidence", "weight"]
        rows = [["ab"[i % 2], "ab"[i // 2 % 2], probability if i == 0 else 0.7, w] for i, w in enumerate(weights)]
    else:
        header = ["y_true", "proba_a", "proba_b", "weight"]
        rows = [["ab"[i % 2], 0 if i == 0 else 0.4, probability if i == 0 else 0.6, w] for i, w in enumerate(weights)]
    assert_aggregate_loads_as_the_source(_csv(folder / "m.csv", header, rows), folder)


PREDICTION_CASES = {
    "y_pred naming no class": "y_true,proba_a,proba_b,y_pred\na,0.9,0.1,a\nb,0.2,0.8,zzz\n",
    "logit_ columns of other classes": "y_true,proba_a,proba_b,logit_a,logit_c\na,0.9,0.1,1,2\nb,0.2,0.8,1,2\n",
    "logits that are no numbers": "y_true,proba_a,proba_b,logit_a,logit_b\na,0.9,0.1,x,2\nb,0.2,0.8,1,inf\n",
    "a y_pred and logits the loader reads": "y_true,proba_a,proba_b,y_pred,logit_a,logit_b\na,0.9,0.1,b,1,2\n"
                                            "b,0.2,0.8,b,-1,0\n",
}


@pytest.mark.parametrize("parquet", [False, True])
@pytest.mark.parametrize("case", list(PREDICTION_CASES))
def test_a_probability_runs_y_pred_and_logits_are_checked_as_the_loader_checks_them(case, parquet, tmp_path):
    """The aggregate keeps neither a probability run's y_pred nor its logits, but the loader refuses a file
    whose y_pred names no class, or whose logit_ columns name other classes or hold no numbers: so must the
    aggregate, with the loader's messages (file, column, rows)."""
    path = tmp_path / "m.csv"
    path.write_text(PREDICTION_CASES[case])
    if parquet:
        pd.read_csv(path, dtype={"y_pred": str, "logit_a": str}).to_parquet(tmp_path / "m.parquet")
        path = tmp_path / "m.parquet"
    assert_aggregate_loads_as_the_source(path, tmp_path)
    result = aggregate_then_load(path, tmp_path)
    if isinstance(result, AggregateRefused):
        shown = {(p.file, p.column, p.message, p.rows) for p in errors(result.problems)}
        assert shown == {(p.file, p.column, p.message, p.rows) for p in errors(vc.load_runs(path))}


@pytest.mark.parametrize("given, loaded", [(" m\t", "m"), ("e\u0301", "\u00e9"), ("m", "m")])
def test_a_model_named_on_the_command_line_is_written_as_the_loader_reads_a_model_cell(tmp_path, given, loaded):
    source = tmp_path / "run.csv"
    source.write_text("y_true,proba_a,proba_b\na,0.9,0.1\nb,0.2,0.8\n")
    aggregate(str(source), tmp_path / "agg.parquet", model=given)
    report = vc.load_runs([str(tmp_path / "agg.parquet")])
    assert report.ok and list(report.models) == [loaded], [str(p) for p in report.problems]


@pytest.mark.parametrize("given", ["", " ", "\t\u3000"])
def test_an_empty_model_name_is_refused_before_anything_is_written(tmp_path, given):
    # It was written, and the aggregate then refused by the loader ("model is empty at rows 1, 2").
    source = tmp_path / "run.csv"
    source.write_text("y_true,proba_a,proba_b\na,0.9,0.1\nb,0.2,0.8\n")
    with pytest.raises(ValueError, match="--model gives an empty model name"):
        aggregate(str(source), tmp_path / "agg.parquet", model=given)
    assert not (tmp_path / "agg.parquet").exists()


def test_classes_of_one_number_are_ordered_alike_in_every_process():
    """"+0" and "0" were ordered as a set of str iterates, which the process's hash salt decides."""
    import os
    import subprocess
    import sys

    code = ("from valuecore.runs import load_run_file; "
            "report = load_run_file(b'y_true,y_pred,confidence\\n+0,2.00,0.0\\n0,0,0.0\\n', name='m.csv'); "
            "print(report.models['m'].classes)")
    root = str(Path(__file__).resolve().parents[2])
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                           env=dict(os.environ, PYTHONHASHSEED=str(seed), PYTHONPATH=root)).stdout
            for seed in range(8)}
    assert seen == {"('+0', '0', '2')\n"}
