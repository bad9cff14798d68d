"""Issue 24, the command line, loader and aggregation: bounded header checks, outputs that never
replace inputs, models that keep their identity through ``aggregate``, quoted SQL names, links
outside the roots, interrupts, and plain sentences for every refusal."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers.cli import cli_run, refused

import valuecore as vc
from valuecore.aggregation import AggregateRefused, aggregate

ROOT = Path(__file__).resolve().parents[2]
DIGITS = ROOT / "sample_runs" / "digits"
SAMPLE = DIGITS / "logreg.csv"


def peak_rss_mb(code: str) -> tuple[float, subprocess.CompletedProcess]:
    """Run ``code`` in a fresh Python; its peak resident memory in MB.

    VmHWM of the child's own address space: ``ru_maxrss`` would also count the forking pytest
    process, whose high-water mark Linux carries across ``exec``."""
    wrapper = code + (
        "\nhwm = [line for line in open('/proc/self/status') if line.startswith('VmHWM')][0]"
        "\nprint('PEAK', hwm.split()[1])\n"
    )
    done = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, cwd=ROOT, timeout=300)
    peak = [line for line in done.stdout.splitlines() if line.startswith("PEAK")]
    assert peak, done.stderr[-3000:]
    return int(peak[0].split()[1]) / 1024, done


def write_comma_header(path: Path, megabytes: int) -> None:
    with open(path, "wb") as handle:
        for _ in range(megabytes):
            handle.write(b"," * 1_000_000)
        handle.write(b"\na,b\n")


# ------------------------------------------------------------------ H2
def test_a_199_mb_comma_header_is_refused_in_bounded_memory(tmp_path):
    path = tmp_path / "commas.csv"
    write_comma_header(path, 199)
    for command in ("validate", "aggregate"):
        extra = f", '--out', r'{tmp_path / 'agg.parquet'}'" if command == "aggregate" else ""
        peak, done = peak_rss_mb(
            "from valuecore._cli.commands import main\n"
            f"code = main(['{command}', r'{path}'{extra}])\nprint('CODE', code)\n"
        )
        assert "CODE 2" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
        assert "too many columns" in done.stdout + done.stderr
        assert peak < 300, f"{command} peaked at {peak:.0f} MB"
    # An upload is bytes already in memory: refusing its header adds no copy of it.
    peak, done = peak_rss_mb(
        "import valuecore as vc\n"
        f"data = open(r'{path}', 'rb').read()\n"
        "report = vc.runs.load_run_file(data, name='upload.csv')\n"
        "print('MESSAGE', report.errors[0].message)\n"
    )
    assert "too many columns" in done.stdout
    assert peak < 300 + 199, f"the upload's refusal peaked at {peak:.0f} MB with the 199 MB upload held"


@pytest.mark.slow
def test_a_1_gb_comma_header_gives_a_sentence_not_memory_error(tmp_path):
    path = tmp_path / "commas.csv"
    write_comma_header(path, 1000)  # under the 1,024 MB file limit, so the header check must refuse it
    for args in (["validate", path], ["aggregate", path, "--out", tmp_path / "agg.parquet"]):
        done = subprocess.run(
            [sys.executable, "-m", "valuecore", *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=300
        )
        assert done.returncode == 2, done.stderr[-2000:]
        assert "too many columns" in done.stdout + done.stderr
        assert "MemoryError" not in done.stderr and "likely a bug" not in done.stderr


def test_a_long_header_line_without_commas_is_refused_after_a_bounded_read(tmp_path, monkeypatch):
    monkeypatch.setenv("VALUECORE_MAX_COLUMNS", "10")  # header lines up to 10 KiB
    path = tmp_path / "long.csv"
    path.write_bytes(b"y" * 50_000 + b"\na\n")
    report = vc.load_runs(path)
    assert "longer than 10,240 bytes" in report.errors[0].message


# ------------------------------------------------------------------ H3
@pytest.fixture
def run_copy(tmp_path) -> Path:
    path = tmp_path / "run.csv"
    path.write_bytes(SAMPLE.read_bytes())
    return path


def test_no_command_writes_over_one_of_its_inputs(tmp_path, run_copy):
    before = run_copy.read_bytes()
    link = tmp_path / "link.csv"
    link.symlink_to(run_copy)
    hard = tmp_path / "hard.csv"
    os.link(run_copy, hard)
    dotted = tmp_path / "sub" / ".." / "run.csv"
    (tmp_path / "sub").mkdir()
    for target in (run_copy, link, hard, dotted):
        refused(cli_run("report", run_copy, "--omega", 2, "--json", target), "is the input", "write it elsewhere")
        refused(cli_run("report", run_copy, "--omega", 2, "--html", target), "is the input")
        refused(cli_run("voc", run_copy, "--csv", target, "--points", 3), "is the input")
    policy = tmp_path / "policy.json"
    assert cli_run("report", run_copy, "--omega", 2, "--json", policy).returncode == 0
    policy_before = policy.read_bytes()
    refused(cli_run("apply", policy, run_copy, "--json", policy), "is the input")
    assert policy.read_bytes() == policy_before
    assert run_copy.read_bytes() == before
    # A data file inside an input folder would be read by the next command as a run.
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "logreg.csv").write_bytes(before)
    refused(cli_run("voc", folder, "--csv", folder / "voc.csv"), "inside the input folder")
    refused(cli_run("report", run_copy, "--omega", 2, "--json", tmp_path), "is a folder")


def test_aggregate_never_writes_over_its_source(tmp_path):
    log = tmp_path / "log.parquet"
    pd.read_csv(SAMPLE).to_parquet(log)
    before = log.read_bytes()
    refused(cli_run("aggregate", log, "--out", log), "is the input")
    dataset = tmp_path / "logs"
    (dataset / "split=val").mkdir(parents=True)
    pd.read_csv(SAMPLE).to_parquet(dataset / "split=val" / "part-0.parquet")
    refused(cli_run("aggregate", dataset, "--out", dataset / "agg.parquet"), "inside the input folder")
    assert log.read_bytes() == before and not (dataset / "agg.parquet").exists()
    # The library refuses it too, for a file that only the expansion of the folder names, by a link.
    alias = tmp_path / "alias.parquet"
    alias.symlink_to(dataset / "split=val" / "part-0.parquet")
    with pytest.raises(ValueError, match="is the input|inside the input folder"):
        aggregate(str(dataset), alias)


def test_outputs_are_written_whole_through_a_temporary_file(tmp_path, run_copy, monkeypatch):
    from valuecore._io import paths as _paths
    out = tmp_path / "policy.json"
    out.write_text("old")

    def fail(temporary):
        temporary.write_text("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        _paths.write_atomically(out, fail)
    assert out.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["policy.json", "run.csv"]
    assert cli_run("report", run_copy, "--omega", 2, "--json", out).returncode == 0
    assert json.loads(out.read_text())["models"] and oct(out.stat().st_mode & 0o777) != oct(0o600)


# ------------------------------------------------------------------ H4
def report_sections(path: Path) -> dict[str, list[str]]:
    """Per model, the lines of `report` (the file path line left out)."""
    result = cli_run("report", path, "--omega", 2, "--no-interval")
    assert result.returncode == 0, result.stderr
    sections, current = {}, None
    for line in result.stdout.splitlines():
        if line.startswith("== "):
            current = line.split()[1]
            sections[current] = []
        elif current and line.strip() and not line.startswith(("verdict", "ranking")):
            sections[current].append(line)
        elif not line.strip():
            current = None
    return sections


@pytest.mark.heavy
def test_aggregating_a_folder_of_run_files_keeps_its_five_models(tmp_path):
    out = tmp_path / "d.parquet"
    result = cli_run("aggregate", DIGITS, "--out", out)
    assert result.returncode == 0, result.stderr
    direct, through = report_sections(DIGITS), report_sections(out)
    assert sorted(through) == sorted(direct) == ["logreg", "mlp", "naive_bayes", "random_forest", "svm_rbf"]
    for model in direct:
        assert through[model] == direct[model], model
    loaded = vc.load_runs(out).models
    assert {m: r.splits["test"].total_weight for m, r in loaded.items()} == {
        m: float(r.splits["test"].n) for m, r in vc.load_runs(DIGITS).models.items()
    }


def test_two_sources_giving_one_model_name_are_refused(tmp_path):
    frame = pd.read_csv(SAMPLE)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    frame.to_parquet(tmp_path / "a" / "logreg.parquet")
    other = frame.copy()
    other["y_true"] = other["y_true"].sample(frac=1.0, random_state=0).to_numpy()
    other.to_parquet(tmp_path / "b" / "logreg.parquet")
    out = tmp_path / "m.parquet"
    result = cli_run("aggregate", tmp_path / "a" / "logreg.parquet", tmp_path / "b" / "logreg.parquet", "--out", out)
    refused(result, "model name 'logreg'", "blended")
    assert not out.exists()


@pytest.mark.heavy
def test_run_files_of_a_folder_naming_one_model_in_their_model_column_are_refused(tmp_path):
    frame = pd.read_csv(SAMPLE)
    frame["model"] = "champion"
    frame.to_csv(tmp_path / "a.csv", index=False)
    frame.assign(y_true=frame["y_true"].to_numpy()[::-1]).to_csv(tmp_path / "b.csv", index=False)
    assert "already taken" in str(vc.load_runs(tmp_path).errors[0])  # the loader refuses this too
    with pytest.raises(AggregateRefused, match="model name 'champion'"):
        aggregate(str(tmp_path), tmp_path.parent / f"{tmp_path.name}.parquet")


def test_a_source_named_twice_is_counted_once_and_overlaps_are_refused(tmp_path):
    log = tmp_path / "logreg.parquet"
    pd.read_csv(SAMPLE).to_parquet(log)
    link = tmp_path / "again.parquet"
    link.symlink_to(log)
    out = tmp_path / "once.parquet"
    result = aggregate([str(log), str(tmp_path / "." / "logreg.parquet"), str(link)], out)
    assert any("named again; read once" in p.message for p in result.problems)
    weights = vc.load_runs(out).models["logreg"].splits
    assert sum(s.total_weight for s in weights.values()) == len(pd.read_csv(SAMPLE))
    dataset = tmp_path / "logs"
    (dataset / "split=val").mkdir(parents=True)
    (dataset / "split=test").mkdir(parents=True)
    pd.read_csv(SAMPLE).to_parquet(dataset / "split=val" / "part-0.parquet")
    pd.read_csv(SAMPLE).to_parquet(dataset / "split=test" / "part-0.parquet")
    with pytest.raises(AggregateRefused, match="would count twice"):
        aggregate([str(dataset), str(dataset / "split=val" / "part-0.parquet")], tmp_path / "x.parquet")


@pytest.mark.heavy
def test_a_partitioned_log_is_one_model_and_model_names_a_folder(tmp_path):
    dataset = tmp_path / "fraud"
    frame = pd.read_csv(SAMPLE)
    for split, part in frame.groupby("split"):
        (dataset / f"split={split}").mkdir(parents=True)
        part.drop(columns="split").to_parquet(dataset / f"split={split}" / "part-0.parquet")
    aggregate(str(dataset), tmp_path / "one.parquet")
    assert list(vc.load_runs(tmp_path / "one.parquet").models) == ["fraud"]
    aggregate(str(DIGITS), tmp_path / "named.parquet", model="blend_on_purpose")
    assert list(vc.load_runs(tmp_path / "named.parquet").models) == ["blend_on_purpose"]


def test_a_folder_with_files_at_two_depths_is_refused_with_a_sentence(tmp_path):
    frame = pd.read_csv(SAMPLE)
    frame.to_csv(tmp_path / "logreg.csv", index=False)
    (tmp_path / "old").mkdir()
    frame.to_csv(tmp_path / "old" / "mlp.csv", index=False)
    with pytest.raises(AggregateRefused, match="both directly and in sub-folders"):
        aggregate(str(tmp_path), tmp_path.parent / f"{tmp_path.name}-agg.parquet")


# ------------------------------------------------------------------ M1
def make_database(folder: Path, table: str = "preds") -> Path:
    import duckdb

    folder.mkdir(exist_ok=True)
    database = folder / "db.duckdb"
    frame = pd.read_csv(SAMPLE)
    with duckdb.connect(str(database)) as con:
        con.register("frame", frame)
        quoted = table.replace('"', '""')
        con.execute(f'CREATE TABLE "{quoted}" AS SELECT * FROM frame')
    return database


def test_a_table_name_is_never_pasted_into_sql(tmp_path, monkeypatch):
    database = make_database(tmp_path)
    monkeypatch.chdir(tmp_path)
    hostile = f"{database}:preds; COPY (SELECT 'x') TO 'out.csv'"
    refused(cli_run("aggregate", hostile, "--out", tmp_path / "agg.parquet"), "no table named")
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "agg.parquet").exists()
    refused(cli_run("aggregate", f"{database}:missing", "--out", tmp_path / "agg.parquet"), "no table named", "preds")
    odd = make_database(tmp_path / "odd", 'we"ird name')
    assert cli_run("aggregate", f'{odd}:we"ird name', "--out", tmp_path / "ok.parquet").returncode == 0


def test_only_one_statement_runs_per_call():
    from valuecore._io.aggregate.duckdb_engine import _one_statement

    assert _one_statement("SELECT 1") == "SELECT 1"
    with pytest.raises(ValueError, match="one statement"):
        _one_statement("SELECT 1; COPY (SELECT 'x') TO 'out.csv'")


# ------------------------------------------------------------------ M6
def test_links_out_of_the_roots_are_refused_by_loader_and_aggregation(tmp_path):
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (elsewhere / "creds.csv").write_bytes(SAMPLE.read_bytes())
    (root / "linkfile").mkdir()
    (root / "linkfile" / "leak.csv").symlink_to(elsewhere / "creds.csv")
    (root / "own.csv").write_bytes(SAMPLE.read_bytes())
    report = vc.load_runs([root / "linkfile", root / "own.csv"], roots=[root])
    assert list(report.models) == ["own"]
    assert any("outside the allowed folders" in p.message for p in report.errors)
    assert "leak" in vc.load_runs(root / "linkfile").models  # no roots: a command line user's own links
    dataset = root / "log"
    (dataset / "split=val").mkdir(parents=True)
    pd.read_csv(SAMPLE).to_parquet(elsewhere / "outside.parquet")
    (dataset / "split=val" / "part-0.parquet").symlink_to(elsewhere / "outside.parquet")
    with pytest.raises(AggregateRefused, match="outside the allowed folders"):
        aggregate(str(dataset), tmp_path / "agg.parquet", roots=[root])


# ------------------------------------------------------------------ M7
def big_csv_log(path: Path, n: int = 1_000_000) -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 1000, n) / 1000
    frame = pd.DataFrame({"y_true": rng.choice(["a", "b"], n), "proba_a": a, "proba_b": 1 - a,
                          "split": rng.choice(["val", "test"], n)})  # fmt: skip
    # Arrow's writer: a tenth of the CPU of DataFrame.to_csv on these rows (which need no quotes; the
    # header is written as pandas writes it, unquoted).
    import pyarrow as pa
    from pyarrow import csv

    with open(path, "wb") as handle:
        handle.write((",".join(frame.columns) + "\n").encode())
        csv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), handle,
                      csv.WriteOptions(include_header=False, quoting_style="none"))


def start_aggregate(tmp_path, log: Path, *options: str, env=None) -> tuple[subprocess.Popen, int, Path, Path]:
    """``python -m valuecore aggregate`` with stderr on a terminal (so it shows its progress line):
    (process, the terminal's reading end, its spill folder, its output folder)."""
    import pty

    spill, out_folder = tmp_path / "spill", tmp_path / "out"
    spill.mkdir()
    out_folder.mkdir()
    reader, writer = pty.openpty()
    # Ctrl-C's default in the child: a shell starts a background job (this suite, perhaps) with SIGINT
    # ignored, which the child would inherit, and the command honours.
    process = subprocess.Popen(
        [sys.executable, "-m", "valuecore", "aggregate", str(log), "--out", str(out_folder / "agg.parquet"),
         "--temp-dir", str(spill), *options],
        stdout=subprocess.DEVNULL, stderr=writer, cwd=ROOT, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    os.close(writer)
    return process, reader, spill, out_folder


def read_terminal(reader: int, until: str | None = None, deadline: float = 600) -> str:
    """What the command wrote to its terminal: up to the first ``until``, else all of it (until it exits)."""
    import select

    text, ends = "", time.monotonic() + deadline
    while until is None or until not in text:
        assert time.monotonic() < ends, f"waited {deadline} s for {until!r}; the terminal showed {text[-2000:]!r}"
        if select.select([reader], [], [], 1)[0]:
            try:
                chunk = os.read(reader, 65536)
            except OSError:  # EIO: the command exited, its terminal closed
                chunk = b""
            if not chunk:
                assert until is None, f"the command ended before {until!r}: {text[-2000:]!r}; make the log larger"
                return text
            text += chunk.decode(errors="replace")
    return text


@pytest.fixture(scope="module")
def million_row_log(tmp_path_factory) -> Path:
    """The 1,000,000-row log of the signal tests, written once (about 18 s on a busy machine): they only
    read it, and write their spill and output elsewhere."""
    log = tmp_path_factory.mktemp("million-row-log") / "log.csv"
    big_csv_log(log)
    return log


@pytest.mark.heavy
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_aggregate_exits_cleanly_leaving_nothing(tmp_path, million_row_log, signum, code):
    """The signal comes while DuckDB groups the log (its progress line is on the terminal): the query is
    interrupted through DuckDB's own interrupt, the command says so and leaves nothing, at any load."""
    process, terminal, spill, out_folder = start_aggregate(tmp_path, million_row_log)
    try:
        read_terminal(terminal, until="aggregating:")  # the grouping query is running
        process.send_signal(signum)
        shown = read_terminal(terminal)
        process.wait(timeout=120)
    finally:
        process.kill()
        os.close(terminal)
    assert process.returncode == code, shown[-2000:]
    assert "interrupted: nothing was written" in shown, shown[-2000:]
    assert "likely a bug" not in shown and "Traceback" not in shown and "FATAL" not in shown
    assert list(spill.iterdir()) == [] and list(out_folder.iterdir()) == []


@pytest.mark.slow
def test_ctrl_c_during_a_spark_aggregate_cancels_its_jobs_and_leaves_nothing(tmp_path):
    """The Spark engine: Ctrl-C while the grouping job runs (its progress line is on the terminal) cancels this
    aggregation's jobs (by their tag), though starting a Spark context takes SIGINT over; the folder its
    executors write the groups into is removed."""
    log = tmp_path / "log.csv"
    big_csv_log(log, n=300_000)
    temp = tmp_path / "temp"
    temp.mkdir()
    environment = {**os.environ, "TMPDIR": str(temp)}
    process, terminal, _, out_folder = start_aggregate(tmp_path, log, "--engine", "spark", env=environment)
    try:
        read_terminal(terminal, until="aggregating:")
        process.send_signal(signal.SIGINT)
        shown = read_terminal(terminal)
        process.wait(timeout=300)
    finally:
        process.kill()
        os.close(terminal)
    assert process.returncode == 130, shown[-3000:]
    assert "interrupted: nothing was written" in shown, shown[-3000:]
    assert "likely a bug" not in shown and "Traceback" not in shown
    assert list(out_folder.iterdir()) == []
    assert not list(temp.glob("valuecore-spark-groups-*"))


@contextlib.contextmanager
def signals_caught_by_nobody_else():
    """No-op SIGINT and SIGTERM handlers for the test's while: a signal a broken command misses must not stop
    the test runner; the command's own handlers replace these and put them back."""
    previous = {s: signal.signal(s, lambda *_: None) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@pytest.mark.heavy
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("when", ["after the last query", "after the rename"])
def test_a_signal_after_the_last_query_leaves_nothing_or_the_whole_file(tmp_path, monkeypatch, signum, code, when):
    """Before the rename, nothing is left (not exit 0 with the file); after it, the file is whole and stays."""
    from valuecore._io import aggregate as engine
    from valuecore._io import paths as _paths

    if when == "after the last query":  # DuckDB has written the file it will rename
        real_write = engine._DuckDB.write

        def signalled(self, *args):
            real_write(self, *args)
            signal.raise_signal(signum)

        monkeypatch.setattr(engine._DuckDB, "write", signalled)
    else:
        real_replace = os.replace

        def signalled(source, target):
            real_replace(source, target)
            signal.raise_signal(signum)

        monkeypatch.setattr(_paths.os, "replace", signalled)
    out = tmp_path / "agg.parquet"
    with signals_caught_by_nobody_else():
        result = cli_run("aggregate", SAMPLE, "--out", out)
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr and "wrote" not in result.stdout
    if when == "after the rename":
        assert f"interrupted after {out} was written whole" in result.stderr
        assert vc.load_runs(out).models["logreg"].splits["test"].n == 450
    else:
        assert "interrupted: nothing was written" in result.stderr
        assert list(tmp_path.iterdir()) == []


@pytest.mark.heavy
def test_a_stop_interrupts_the_running_query_through_duckdb_and_joins_its_thread(tmp_path, monkeypatch):
    """aggregate(stop=...) set as the grouping query begins (here one that never ends by itself): DuckDB's
    interrupt ends it, asked until the query gives up; no thread is left inside DuckDB; nothing is written."""
    import threading

    from valuecore._io import aggregate as engine

    stop, ended = threading.Event(), {}
    real_execute = engine._DuckDB._execute

    def grouping_never_ends(self, sql, parameters=None):
        if sql.startswith(f"CREATE OR REPLACE TEMP TABLE {engine.GROUPED_TABLE} "):
            stop.set()  # in the engine's worker thread, before the query has begun
            try:
                return real_execute(self, "SELECT count(*) FROM range(1000000000000) t(i) WHERE i % 7 = 3")
            except Exception as error:
                ended["by"] = error
                raise
        return real_execute(self, sql, parameters)

    monkeypatch.setattr(engine._DuckDB, "_execute", grouping_never_ends)
    outcome, threads = {}, threading.active_count()

    def run():
        try:
            aggregate(str(SAMPLE), tmp_path / "agg.parquet", stop=stop, temp_directory=str(tmp_path))
        except BaseException as raised:  # noqa: BLE001 - looked at below
            outcome["raised"] = raised

    caller = threading.Thread(target=run, daemon=True)
    caller.start()
    caller.join(120)
    assert not caller.is_alive(), "the stop did not end the query"
    assert isinstance(outcome.get("raised"), KeyboardInterrupt), outcome
    assert "Interrupted" in str(ended["by"])  # DuckDB's own interrupt
    assert threading.active_count() == threads
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ low
def test_aggregate_options_and_outputs_give_sentences(tmp_path):
    log = tmp_path / "log.parquet"
    pd.read_csv(SAMPLE).to_parquet(log)
    refused(cli_run("aggregate", log, "--out", tmp_path / "a.parquet", "--memory-limit", "lots"), "--memory-limit")
    refused(cli_run("aggregate", log, "--out", tmp_path / "a.parquet", "--temp-dir", "/etc/passwd"), "not a folder")
    refused(cli_run("aggregate", log, "--out", tmp_path), "is a folder")
    refused(cli_run("aggregate", f"{tmp_path / 'none.duckdb'}:t", "--out", tmp_path / "a.parquet"), "no such DuckDB")
    refused(cli_run("validate", ""), "empty path")
    refused(cli_run("aggregate", "", "--out", tmp_path / "a.parquet"), "empty path")


def test_table_on_all_zero_weights_refuses_before_printing(tmp_path):
    path = tmp_path / "zeros.csv"
    path.write_text("y_true,proba_a,proba_b,weight\na,0.9,0.1,0\nb,0.2,0.8,0\n")
    result = cli_run("table", path)
    refused(result, "no item to read", "weights are all zero")
    assert result.stdout == "" and "NA values" not in result.stderr


@pytest.mark.parametrize(
    "data, words",
    [
        (b"y_true,proba_a,proba_b\ra,0.9,0.1\rb,0.2,0.8\r", "carriage return only"),
        (b'"y_\ntrue",proba_a,proba_b\na,0.9,0.1\nb,0.2,0.8\n', "line break inside a quoted column name"),
        ("y_true,proba_a,proba_b\na,0.9,0.1\nb,0.2,0.8\n".encode("utf-16"), "UTF-16"),
        (b"y_true,proba_a,proba_" + b"b" * 200_000 + b"\na,0.9,0.1\n", "column name in the header is longer"),
    ],
)
def test_parser_jargon_becomes_sentences(tmp_path, data, words):
    path = tmp_path / "run.csv"
    path.write_bytes(data)
    for result in (cli_run("validate", path), cli_run("aggregate", path, "--out", tmp_path / "a.parquet")):
        assert result.returncode == 2
        text = result.stdout + result.stderr
        assert words in text, text[-2000:]
        for jargon in ("Length mismatch", "binary data", "field limit", "new-line character", "likely a bug"):
            assert jargon not in text


@pytest.mark.heavy
def test_a_very_long_line_is_a_sentence_in_aggregate(tmp_path):
    path = tmp_path / "run.csv"
    path.write_bytes(b"y_true,proba_a,proba_b\na,0.9,0.1\n" + b"b" * 3_000_000 + b",0.2,0.8\n")
    refused(cli_run("aggregate", path, "--out", tmp_path / "a.parquet"), "line longer than")


def test_a_readme_inside_a_parquet_dataset_is_ignored_and_said(tmp_path):
    dataset = tmp_path / "log"
    (dataset / "split=val").mkdir(parents=True)
    pd.read_csv(SAMPLE).to_parquet(dataset / "split=val" / "part-0.parquet")
    (dataset / "README.txt").write_text("what this log is\n")
    result = aggregate(str(dataset), tmp_path / "agg.parquet")
    assert any("ignored 1 file(s)" in p.message and "README.txt" in p.message for p in result.problems)


def test_nfc_and_nfd_spellings_are_one_class(tmp_path):
    nfc, nfd = unicodedata.normalize("NFC", "é"), unicodedata.normalize("NFD", "é")
    text = f"y_true,proba_{nfc},proba_b\n{nfc},0.9,0.1\n{nfd},0.8,0.2\nb,0.2,0.8\n"
    report = vc.runs.load_run_file(text.encode(), name="accents.csv")
    assert report.ok and report.models["accents"].classes == (nfc, "b")
    twice = vc.runs.load_run_file(f"y_true,proba_{nfc},proba_{nfd}\n{nfc},0.9,0.1\n".encode(), name="x.csv")
    assert "duplicate column" in twice.errors[0].message


def test_parquet_labels_stored_as_binary_are_text(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"y_true": pa.array([b"a", b"b", b"a"], pa.binary()), "proba_a": [0.9, 0.2, 0.6],
                      "proba_b": [0.1, 0.8, 0.4]})  # fmt: skip
    pq.write_table(table, tmp_path / "bin.parquet")
    report = vc.load_runs(tmp_path / "bin.parquet")
    assert report.ok, report.problems
    assert report.models["bin"].classes == ("a", "b")
