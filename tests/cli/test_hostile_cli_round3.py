"""Issue 36, part A, the command line: one writer for every output (only regular files or new paths,
modes kept, usage checked before anything is written, several outputs as one unit, ``-`` as stdout),
exit 2 with one sentence for user input, and contradictory or idle options refused."""

from __future__ import annotations

import os
import signal
import socket
import stat
from pathlib import Path

import pytest
from helpers.cli import cli_run, refused

ROOT = Path(__file__).resolve().parents[2]
CANCER = ROOT / "sample_runs" / "breast_cancer" / "logreg.csv"
QUICK = ("--omega", 2, "--no-interval")


@pytest.fixture
def policy(tmp_path) -> Path:
    path = tmp_path / "policy.json"
    assert cli_run("report", CANCER, *QUICK, "--json", path).returncode == 0
    return path


def output_commands(target, policy_path):
    """Every command option that writes a file, aimed at ``target``."""
    return [
        ("report", CANCER, *QUICK, "--json", target),
        ("report", CANCER, *QUICK, "--html", target),
        ("apply", policy_path, CANCER, "--no-interval", "--json", target),
        ("voc", CANCER, "--points", 3, "--csv", target),
        ("aggregate", CANCER, "--out", target),
    ]


# ------------------------------------------------------------------ targets that are not regular files
def test_a_fifo_is_never_replaced_by_any_output(tmp_path, policy):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link-to-pipe.json"
    link.symlink_to(fifo)
    for target in (fifo, link):
        for args in output_commands(target, policy):
            result = cli_run(*args)
            refused(result, str(target), "not a regular file")
            assert len(result.stderr.strip().splitlines()) == 1, result.stderr
            assert stat.S_ISFIFO(os.stat(fifo).st_mode), f"{args} replaced the FIFO"
    assert link.is_symlink()


def test_sockets_and_folders_behind_links_are_refused(tmp_path, policy):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    try:
        folder_link = tmp_path / "to-folder.json"
        folder_link.symlink_to(tmp_path)
        dangling = tmp_path / "dangling.json"
        dangling.symlink_to(tmp_path / "nowhere" / "x.json")
        for target, words in ((tmp_path / "sock", "socket"), (folder_link, "folder"), (dangling, "points to nothing")):
            for args in output_commands(target, policy)[:4]:
                refused(cli_run(*args), str(target), words)
        assert stat.S_ISSOCK(os.stat(tmp_path / "sock").st_mode) and folder_link.is_symlink()
    finally:
        server.close()


def test_dev_null_is_refused_before_any_work_and_stays_a_device(tmp_path, policy):
    # Only after the same code path refused a FIFO: on a writer that renames over its target this test
    # would replace the machine's /dev/null, so it must never reach that point on such a writer.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused(cli_run("report", CANCER, *QUICK, "--json", fifo), "not a regular file")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    for args in output_commands("/dev/null", policy):
        refused(cli_run(*args), "/dev/null", "character device")
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_an_existing_output_keeps_its_mode(tmp_path, policy):
    for n, args in enumerate(output_commands(tmp_path / "out", policy)[:4]):
        target = tmp_path / f"private-{n}.out"
        target.write_text("old")
        target.chmod(0o600)
        args = (*args[:-1], target)
        assert cli_run(*args).returncode == 0
        assert target.read_text() != "old"
        assert stat.S_IMODE(target.stat().st_mode) == 0o600, args


def test_a_link_to_a_regular_file_is_written_through(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert cli_run("report", CANCER, *QUICK, "--json", link).returncode == 0
    assert link.is_symlink() and '"schema_version"' in real.read_text()


# ------------------------------------------------------------------ usage before writing, outputs as one unit
def test_log_mlflow_without_an_mlflow_source_writes_nothing(tmp_path):
    json_out, html_out = tmp_path / "a.json", tmp_path / "b.html"
    refused(cli_run("report", CANCER, *QUICK, "--json", json_out, "--html", html_out, "--log-mlflow"), "mlflow:")
    assert not json_out.exists() and not html_out.exists()


@pytest.fixture
def old_outputs(tmp_path):
    json_out, html_out = tmp_path / "a.json", tmp_path / "b.html"
    json_out.write_text("old json")
    html_out.write_text("old html")
    return json_out, html_out


def test_an_interrupt_while_the_outputs_are_made_leaves_every_old_file(old_outputs, monkeypatch):
    import valuecore.report

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(valuecore.report, "html_report", interrupted)
    json_out, html_out = old_outputs
    result = cli_run("report", CANCER, *QUICK, "--json", json_out, "--html", html_out)
    assert result.returncode == 130
    assert "nothing was written" in result.stderr
    assert json_out.read_text() == "old json" and html_out.read_text() == "old html"
    assert sorted(p.name for p in json_out.parent.iterdir()) == ["a.json", "b.html"]


def test_an_interrupt_while_the_outputs_are_renamed_is_held_until_all_are_in_place(old_outputs, monkeypatch):
    from valuecore._io import paths as _paths
    real_replace = os.replace
    calls = []

    def replace_then_interrupt(source, target):
        real_replace(source, target)
        calls.append(target)
        if len(calls) == 1:
            # raise_signal delivers to this thread before it returns; os.kill(getpid()) may be taken by
            # another thread of the test process (xdist's, DuckDB's, py4j's) and run the handler later.
            signal.raise_signal(signal.SIGINT)

    # What a fresh `python -m valuecore` has; an earlier test in this worker may have left another handler
    # (a Spark context installs its own).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(_paths.os, "replace", replace_then_interrupt)
        json_out, html_out = old_outputs
        result = cli_run("report", CANCER, *QUICK, "--json", json_out, "--html", html_out)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.returncode == 130
    assert '"schema_version"' in json_out.read_text()
    assert html_out.read_text().lstrip().lower().startswith("<!doctype")
    assert f"interrupted after writing {json_out} and {html_out} whole" in result.stderr


def test_a_failed_rename_says_exactly_which_outputs_were_written(old_outputs, monkeypatch):
    from valuecore._io import paths as _paths
    real_replace = os.replace
    calls = []

    def second_fails(source, target):
        calls.append(target)
        if len(calls) == 2:
            raise PermissionError(13, "Permission denied")
        real_replace(source, target)

    monkeypatch.setattr(_paths.os, "replace", second_fails)
    json_out, html_out = old_outputs
    result = cli_run("report", CANCER, *QUICK, "--json", json_out, "--html", html_out)
    refused(result, f"cannot write the HTML report to {html_out}", "Permission denied",
            f"the policy JSON {json_out} was written")
    assert html_out.read_text() == "old html"
    assert sorted(p.name for p in json_out.parent.iterdir()) == ["a.json", "b.html"]


# ------------------------------------------------------------------ "-" means stdout, for every text output
def test_a_dash_writes_to_stdout_and_never_a_file_named_dash(tmp_path, monkeypatch, policy):
    monkeypatch.chdir(tmp_path)
    html = cli_run("report", CANCER, *QUICK, "--html", "-")
    assert html.returncode == 0 and html.stdout.lstrip().lower().startswith("<!doctype")
    assert "recommendation:" in html.stderr
    table = cli_run("voc", CANCER, "--points", 3, "--csv", "-")
    assert table.returncode == 0 and table.stdout.startswith("model,mode,omega,value,threshold")
    assert "omega_sup" in table.stderr
    applied = cli_run("apply", policy, CANCER, "--no-interval", "--json", "-")
    assert applied.returncode == 0 and applied.stdout.lstrip().startswith("{")
    refused(cli_run("report", CANCER, *QUICK, "--json", "-", "--html", "-"), "--json", "--html", "stdout")
    refused(cli_run("aggregate", CANCER, "--out", "-"), "Parquet", "stdout")
    assert not (tmp_path / "-").exists()


def test_one_file_named_by_two_outputs_is_said_as_such(tmp_path):
    same = tmp_path / "same.out"
    result = cli_run("report", CANCER, *QUICK, "--json", same, "--html", same)
    refused(result, "--json and --html both name", str(same))
    assert "is the input" not in result.stderr and not same.exists()


# ------------------------------------------------------------------ exit 2 and one sentence for user input
def test_a_5000_character_path_is_one_sentence_and_exit_2(tmp_path, policy):
    long = str(tmp_path / ("a" * 5000))
    for args in (("report", long + ".csv", *QUICK), ("validate", long + ".csv"),
                 ("report", CANCER, *QUICK, "--json", long + ".json"),
                 ("report", CANCER, "--value-matrix", long + ".csv"),
                 ("apply", long + ".json", CANCER), ("voc", CANCER, "--csv", long + ".csv"),
                 ("aggregate", CANCER, "--out", long + ".parquet")):
        result = cli_run(*args)
        refused(result, "too long")
        assert len(result.stderr.strip().splitlines()) == 1 and len(result.stderr) < 600, result.stderr[:700]


def test_a_reviewer_sample_beyond_the_stated_limit_is_a_sentence():
    refused(cli_run("report", CANCER, *QUICK, "--reviewer-sample", "99999999999999999999/999999999999999999999"),
            "--reviewer-sample", "at most 1,000,000,000,000")
    refused(cli_run("report", CANCER, *QUICK, "--reviewer-sample", "1/" + "9" * 5000), "--reviewer-sample")
    assert cli_run("report", CANCER, *QUICK, "--reviewer-sample", "900000000000/1000000000000").returncode == 0


@pytest.mark.parametrize("period", ["1ns", "1ms", "100000000D", "1000000000W", "10000000000MS", "1bh"])
def test_a_monitor_period_that_cuts_too_many_or_too_long_periods_is_a_sentence(period, tmp_path):
    import pandas as pd

    run = tmp_path / "years.csv"
    frame = pd.read_csv(CANCER, keep_default_na=False, dtype={"timestamp": str})
    prod = frame["split"] == "prod"
    # A log over two centuries: one business hour a period would be 1.2 million periods.
    frame.loc[prod, "timestamp"] = pd.date_range("1900-01-01", "2100-01-01", periods=int(prod.sum())).astype(str)
    frame.to_csv(run, index=False)
    result = cli_run("monitor", run, "--omega", 2, "--split", "prod", "--period", period)
    refused(result, period)
    assert "period" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_monitor_with_no_labelled_reference_says_why_and_exits_2(tmp_path):
    result = cli_run("monitor", CANCER, "--omega", 2, "--reference-split", "prod")
    refused(result, "logreg skipped", "'prod' has no labels", "no model could be monitored")
    result = cli_run("monitor", CANCER, "--omega", 2, "--reference-split", "nosuch")
    refused(result, "has no split 'nosuch'", "no model could be monitored")
    assert cli_run("monitor", CANCER, "--omega", 2, "--split", "prod", "--chunks", 3).returncode == 0


@pytest.mark.parametrize("options, words", [
    (("--workload", "0:0.9,1:0.8", "--reviewer-accuracy", "0.9"), ("--workload", "--reviewer-accuracy")),
    (("--adapt-method", "bbse"), ("--adapt-method", "--adapt-to")),
    (("--adapt-always",), ("--adapt-always", "--adapt-to")),
    (("--adapt-tuning", "label_free"), ("--adapt-tuning", "--adapt-to")),
    (("--v-person-wrong", "-3"), ("--v-person-wrong", "--reviewer-accuracy")),
    (("--adapt-to", "prod", "--max-risk", "0.1"), ("--adapt-to", "--max-risk")),
])
def test_contradictory_or_idle_options_are_refused_in_one_sentence(options, words):
    result = cli_run("report", CANCER, *QUICK, *options)
    refused(result, *words)
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "weights other than 1" not in result.stderr


def test_a_reviewer_sample_beside_a_workload_curve_is_still_recorded():
    # docs/constraints.md: the sample is recorded, the curve sets the accuracy.
    assert cli_run("report", CANCER, *QUICK, "--workload", "0:0.9,1:0.8", "--reviewer-sample", "9/10").returncode == 0


@pytest.mark.parametrize("method", ["em", "bbse", "bbse_soft"])
def test_adapting_from_a_tuning_split_without_weight_says_so_in_words(tmp_path, method):
    import pandas as pd

    frame = pd.read_csv(CANCER, keep_default_na=False, dtype={"timestamp": str})
    frame["weight"] = (frame["split"] != "val").astype(float)
    run = tmp_path / "zero.csv"
    frame.to_csv(run, index=False)
    # A split of zero weights holds no item: it is left out, in words, and the adaptation goes on without it,
    # as for a file without that split.
    result = cli_run("report", run, *QUICK, "--adapt-to", "prod", "--adapt-method", method)
    assert result.returncode == 0, result.stderr
    assert "split 'val' is left out: all its weights are zero" in result.stderr
    without = tmp_path / "alone" / "zero.csv"  # the same model name
    without.parent.mkdir()
    frame[frame["split"] != "val"].drop(columns="weight").to_csv(without, index=False)
    alone = cli_run("report", without, *QUICK, "--adapt-to", "prod", "--adapt-method", method)
    assert alone.returncode == 0 and alone.stdout.replace(str(without), str(run)) == result.stdout
    for jargon in ("reference_priors", "nan", "SVD", "converge"):
        assert jargon not in result.stderr, result.stderr


def test_a_volume_above_the_stated_limit_is_a_sentence(tmp_path):
    out = tmp_path / "r.html"
    refused(cli_run("report", CANCER, *QUICK, "--volume", "1e308", "--html", out), "--volume", "at most")
    assert not out.exists()
    assert cli_run("report", CANCER, *QUICK, "--volume", "1e12", "--html", out).returncode == 0


@pytest.mark.parametrize("period", ["W", "MS", "ME", "D", "h", "bh", "B", "QE", "2W", "3000000min"])
def test_ordinary_monitor_periods_still_cut_the_log(period):
    result = cli_run("monitor", CANCER, "--omega", 2, "--split", "prod", "--period", period)
    assert result.returncode == 0, result.stderr
    assert "alerts:" in result.stdout


def test_the_hostile_walk_s_findings_are_sentences(tmp_path):
    # An output in a folder that does not exist: refused before any work, not after it.
    refused(cli_run("report", CANCER, *QUICK, "--json", tmp_path / "nope" / "p.json"), "does not exist")
    # A folder given where a file is read; a NUL in a path.
    result = cli_run("report", CANCER, "--value-matrix", tmp_path, "--no-interval")
    refused(result, "is a folder, not a regular file")
    assert "cannot use 3" not in result.stderr
    refused(cli_run("report", CANCER, *QUICK, "--json", "a\x00b.json"), "NUL character")
