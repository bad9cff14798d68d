"""What a small run file costs besides its cells: no Arrow threads for a file of a few blocks, pandas's C
reader for CSV (the byte-order mark cut by the loader), no evaluation-log readers imported with the run
files' loader, and no dataclass made on the way from a file to a plain threshold beyond those it uses (each
costs about 1 ms of a fresh process when its module is imported). Each keeps the loaded predictions exactly
as they were."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import valuecore.runs as runs
from valuecore._io.runfiles import reading
from valuecore.runs import load_run_file


def write(path, n: int) -> None:
    rng = np.random.default_rng(n)
    proba = rng.dirichlet(np.ones(3), size=n)
    pq.write_table(pa.table({**{f"proba_{k}": proba[:, k] for k in range(3)},
                             "y_true": rng.integers(0, 3, n)}), path)


THREADED_FROM = reading._THREADED_BLOCKS * reading._CHECK_BLOCK + 1  # rows


@pytest.mark.parametrize("n, threaded", [(1000, False), (reading._CHECK_BLOCK + 1, False), (100_000, False),
                                         (THREADED_FROM - 1, False), (THREADED_FROM, True)])
def test_arrow_threads_only_beyond_a_few_blocks(tmp_path, monkeypatch, n, threaded):
    path = tmp_path / "run.parquet"
    write(path, n)
    asked = []
    for name in ("read", "read_row_group"):
        original = getattr(pq.ParquetFile, name)

        def recording(self, *args, _original=original, **kwargs):
            asked.append(kwargs.get("use_threads", True))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(pq.ParquetFile, name, recording)
    got = load_run_file(path).models["run"].splits["all"]
    monkeypatch.undo()
    assert asked and set(asked) == {threaded}
    table = pq.read_table(path)
    proba = np.column_stack([table.column(f"proba_{k}").to_numpy() for k in range(3)])
    assert np.array_equal(got.proba, proba)
    assert np.array_equal(got.y_true, table.column("y_true").to_numpy())


CSV = "y_true,proba_é,proba_b\né,0.25,0.75\nb,0.6,0.4\nb, 0.5,0.5\n"


def test_csv_with_a_byte_order_mark_loads_as_without(tmp_path):
    plain, marked = tmp_path / "plain" / "run.csv", tmp_path / "marked" / "run.csv"
    for path, data in ((plain, CSV.encode()), (marked, b"\xef\xbb\xbf" + CSV.encode())):
        path.parent.mkdir()
        path.write_bytes(data)
    a = load_run_file(plain)
    b = load_run_file(marked)
    assert a.ok and b.ok, (a.problems, b.problems)
    p, q = (r.models["run"].splits["all"] for r in (a, b))
    assert p.classes == q.classes == ("é", "b")
    assert np.array_equal(p.proba, q.proba) and np.array_equal(p.y_true, q.y_true)


@pytest.mark.parametrize("data", [
    "y_true,proba_a,proba_b\n\xe9,0.5,0.5\n".encode("latin-1"),
    "y_true,proba_a,proba_b\na,0.5\xe9,0.5\n".encode("latin-1"),
    b"\xef\xbb\xbf" + "y_true,proba_a,proba_b\na,0.5,0.5\nb,\xe9,0.5\n".encode("latin-1"),
])
def test_csv_that_is_not_utf8_is_named(tmp_path, data):
    path = tmp_path / "run.csv"
    path.write_bytes(data)
    report = load_run_file(path)
    assert not report.ok and "not UTF-8" in str(report.problems[0])


def test_run_files_load_without_the_evaluation_log_readers():
    code = ("import sys, valuecore.runs as r; from valuecore.runs import load_run_file; "
            "print(sorted(m for m in sys.modules if m.endswith(('lm_logs', 'eval_logs', 'inspect_logs'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_csv_header_is_read_without_the_utf8_sig_codec(tmp_path):
    # The header's byte-order mark is cut by hand: the "utf-8-sig" codec is a module imported on first use.
    path = tmp_path / "run.csv"
    path.write_bytes(b"\xef\xbb\xbf" + CSV.encode())
    code = ("import sys; from valuecore.runs import load_run_file; r = load_run_file(sys.argv[1]); "
            "print(r.ok, r.models['run'].classes, 'encodings.utf_8_sig' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True ('é', 'b') False"


@pytest.mark.parametrize("line", [b"\xef\xbb\xbfy_true,proba_a,proba_b\n",
                                  b"\xef\xbb\xbf\xef\xbb\xbfy_true,proba_a,proba_b\n",
                                  b"y_true,proba_a,proba_b\n", b"y_true,\xef\xbb\xbfproba_a,proba_b\n"])
def test_a_csv_header_reads_as_with_the_utf8_sig_codec(line):
    from valuecore._io.format import _FileProblems, csv_header

    expected = [name.strip() for name in line.decode("utf-8-sig").rstrip("\n").split(",")]
    assert csv_header(line, _FileProblems("run.csv")) == expected  # one leading mark cut, a second one kept


def test_a_plain_threshold_is_fitted_without_the_tier_values():
    code = ("import sys, valuecore as vc; "
            "p = vc.Predictions.from_proba([[.9, .1], [.3, .7], [.6, .4]], y_true=[0, 1, 1]); "
            "vc.fit_policy('threshold', vc.presort(p), vc.UseCase(1, 0, -4)); "
            "print('valuecore._model.tier_values' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_evaluation_log_names_still_come_from_runs():
    from valuecore._io import eval_logs, lm_logs

    assert runs.read_evaluation_log is eval_logs.read_log_source
    assert runs.is_evaluation_log is lm_logs.is_log_source
    assert runs.split_evaluation_log is lm_logs.split_log_source
    assert runs.abstention_counts is lm_logs.abstention_counts
    assert {"read_evaluation_log", "abstention_counts"} <= set(runs.__all__) & set(dir(runs))
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        runs.missing  # noqa: B018


# The dataclasses a fresh process makes from a run file (CSV and Parquet) to a fitted plain threshold. The
# expected-value rule's working arrays (``_engine.policy._EvScreen``, ``_EvPlan``), the loader's encoded
# labels (``_model.predictions.ClassCodes``), its private records (``_io.format._RunKind``,
# ``_io.runfiles.parse._ParsedColumns``, ``_io.runfiles.reading._Layout``, ``_Table``) and the sorted keys'
# counts (``_engine.bitsort.DescendingCounts``) were on this list and are plain classes now; a dataclass added to
# the path fails here, to be made elsewhere or on first use, or added to this list knowingly.
THRESHOLD_PATH_DATACLASSES = {
    "valuecore._engine.policy.Policy",
    "valuecore._engine.sorting.SortedRun", "valuecore._io.columns.ColumnSpec", "valuecore._io.columns.RowRule",
    "valuecore._io.format.LoadProblem", "valuecore._io.runfiles.results.LoadReport",
    "valuecore._io.runfiles.results.ModelRun", "valuecore._model.predictions.Predictions",
    "valuecore._model.values.Regime", "valuecore._model.values.UseCase", "valuecore._model.values.ValueMatrix",
}

DATACLASSES_MADE = """
import dataclasses, inspect, sys
import valuecore as vc
from valuecore.runs import load_run_file
for path in sys.argv[1:]:
    run = load_run_file(path).models["run"].splits["all"]
    print(vc.fit_policy("threshold", vc.presort(run), vc.UseCase(1, 0, 0)).threshold)
print(sorted(f"{name}.{c.__qualname__}" for name, module in list(sys.modules.items()) if name.startswith("valuecore")
             for c in vars(module).values()
             if inspect.isclass(c) and c.__module__ == name and dataclasses.is_dataclass(c)))
"""


def test_a_plain_threshold_from_a_small_file_makes_only_the_dataclasses_it_uses(tmp_path):
    parquet, csv = tmp_path / "parquet" / "run.parquet", tmp_path / "csv" / "run.csv"
    for path in (parquet, csv):
        path.parent.mkdir()
    write(parquet, 1000)
    pq.read_table(parquet).to_pandas().to_csv(csv, index=False)
    out = subprocess.run([sys.executable, "-c", DATACLASSES_MADE, str(csv), str(parquet)], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    made = set(eval(out[-1]))  # noqa: S307 - a list of names printed by the child above
    assert out[0] == out[1] != "None"  # the same threshold from either file
    assert made <= THRESHOLD_PATH_DATACLASSES, sorted(made - THRESHOLD_PATH_DATACLASSES)
    assert {"valuecore._engine.policy.Policy", "valuecore._model.predictions.Predictions"} <= made  # it looked


def test_a_small_plain_csv_loads_without_arrow_text(tmp_path):
    # pandas's first text handed to Arrow makes Arrow check pandas's version with a pattern it compiles then
    # (5-10 ms of a fresh process): a small plain CSV's labels and names stay Python text, and load as before.
    rng = np.random.default_rng(3)
    proba = rng.dirichlet(np.ones(3), size=300)
    path = tmp_path / "run.csv"
    path.write_text("y_true,proba_a,proba_b,proba_c\n" + "".join(
        f"{'abc'[y]},{p[0]:.4f},{p[1]:.4f},{1 - float(f'{p[0]:.4f}') - float(f'{p[1]:.4f}'):.4f}\n"
        for y, p in zip(np.where(rng.random(300) < 0.8, proba.argmax(axis=1), 0), proba)))
    code = ("import sys, valuecore as vc; from valuecore.runs import load_run_file; "
            "run = load_run_file(sys.argv[1]).models['run'].splits['all']; "
            "print(vc.fit_policy('threshold', vc.presort(run), vc.UseCase(1, 0, -4)).threshold, "
            "'pyarrow.vendored.version' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True).stdout
    threshold, arrow_text = out.split()
    assert arrow_text == "False"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("valuecore._io.plaincsv.PLAIN_CSV_BYTES", -1)
        run = load_run_file(path).models["run"].splits["all"]
    assert threshold == repr(vc_threshold(run)) != "None"


def vc_threshold(run) -> float:
    import valuecore as vc

    return vc.fit_policy("threshold", vc.presort(run), vc.UseCase(1, 0, -4)).threshold
