"""A Parquet run read from disk, or a larger CSV one, is hashed when its SHA-256 is first asked for, and only from
the bytes loaded."""

import dataclasses
import hashlib
import io
import os
import pickle
import threading
import time
import types
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest

from valuecore._io import identity as _identity
from valuecore._io.runfiles import parse as _parse
from valuecore._io.runfiles import reading as _reading
from valuecore.runs import ModelRun, file_sha256, load_run_file, load_runs

FRAME = pd.DataFrame({"proba_a": [0.9, 0.2, 0.6], "proba_b": [0.1, 0.8, 0.4], "y_true": ["a", "b", "b"]})


def _write(path, frame=FRAME):
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    path.write_bytes(buffer.getvalue())
    return path


def past_the_clock_tick(path):
    """Wait until a write gets later times than ``path``'s last one (file systems stamp in ticks of a few ms).

    Waits for that state, probed with a file beside ``path``, not for a fixed delay that load can outlast.
    """
    stamp = path.stat()
    probe = path.with_name(path.name + ".tick")
    deadline = time.monotonic() + 60
    while True:
        probe.write_bytes(b"")
        now = probe.stat()
        if now.st_mtime_ns > stamp.st_mtime_ns and now.st_ctime_ns > stamp.st_ctime_ns:
            break
        assert time.monotonic() < deadline, "the file system's clock did not move in 60 s"
        time.sleep(0.001)
    probe.unlink()


@pytest.fixture
def hashes(monkeypatch):
    """How many times a file on disk was hashed (the memo of digests emptied first)."""
    monkeypatch.setattr(_identity, "_known", type(_identity._known)())
    calls = []
    real = hashlib.sha256

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(_identity, "hashlib", types.SimpleNamespace(sha256=counted))
    return calls


def test_loading_does_not_hash_and_the_digest_is_the_files(tmp_path, hashes):
    path = _write(tmp_path / "model.parquet")
    report = load_run_file(path)
    assert report.ok and hashes == []
    run = report.models["model"]
    assert run.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert run.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() and len(hashes) == 1  # computed once


def test_models_of_one_file_and_copies_of_a_run_share_one_hash(tmp_path, hashes):
    frame = pd.concat([FRAME.assign(model="m1"), FRAME.assign(model="m2")])
    path = _write(tmp_path / "two.parquet", frame)
    report = load_runs([path])
    first, second = report.models["m1"], report.models["m2"]
    assert first.sha256 == second.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert dataclasses.replace(first, path="shown").sha256 == first.sha256
    assert pickle.loads(pickle.dumps(second)).sha256 == first.sha256
    assert len(hashes) == 1


@pytest.mark.parametrize("change", ["rewrite", "same_bytes", "delete", "replace", "fifo"])
def test_a_file_changed_after_loading_gets_no_digest(tmp_path, change):
    path = _write(tmp_path / "model.parquet")
    run = load_run_file(path).models["model"]
    past_the_clock_tick(path)  # a write within the tick would keep the times
    if change == "rewrite":  # other numbers, same size
        _write(path, FRAME.assign(proba_a=[0.8, 0.3, 0.5], proba_b=[0.2, 0.7, 0.5]))
    elif change == "same_bytes":  # even the same bytes written again: ctime moved, the load cannot vouch
        path.write_bytes(path.read_bytes())
    elif change == "delete":
        path.unlink()
    elif change == "replace":
        other = _write(tmp_path / "other.parquet", FRAME.assign(y_true=["b", "b", "a"]))
        os.replace(other, path)
    else:
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs on this system")
        path.unlink()
        os.mkfifo(path)
    outcome = {}

    def read():
        try:
            outcome["digest"] = run.sha256
        except ValueError as error:
            outcome["error"] = str(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)  # a FIFO must not make it wait for a writer
    assert not reader.is_alive()
    assert "digest" not in outcome
    assert outcome["error"].startswith("model.parquet: the file changed or went away after it was loaded")
    assert str(tmp_path) not in outcome["error"]  # a server's folders are never shown


def test_a_file_changed_while_being_read_is_refused(tmp_path, monkeypatch):
    path = _write(tmp_path / "model.parquet")
    real = _parse._parse_columns

    def rewrite_meanwhile(*args, **kwargs):
        parsed = real(*args, **kwargs)
        _write(path, FRAME.assign(proba_a=[0.8, 0.3, 0.5], proba_b=[0.2, 0.7, 0.5]))
        return parsed

    monkeypatch.setattr(_parse, "_parse_columns", rewrite_meanwhile)
    report = load_run_file(path)
    assert not report.models
    assert [str(p) for p in report.errors] == [f"{path}: changed while it was being read; load it again"]


@pytest.mark.parametrize("change", ["rewrite", "same_bytes", "delete"])
def test_a_csv_file_streamed_from_disk_is_hashed_when_asked_and_only_unchanged(tmp_path, monkeypatch, hashes, change):
    # A CSV file above reading.STREAMED_CSV_BYTES (here: any) is read from disk by pandas, never held whole, and
    # hashed as a Parquet file is.
    monkeypatch.setattr(_reading, "STREAMED_CSV_BYTES", -1)
    path = tmp_path / "model.csv"
    FRAME.to_csv(path, index=False)
    run = load_run_file(path).models["model"]
    assert hashes == []
    assert run.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() and len(hashes) == 1
    changed = load_run_file(path).models["model"]
    monkeypatch.setattr(_identity, "_known", type(_identity._known)())
    past_the_clock_tick(path)
    if change == "rewrite":
        FRAME.assign(proba_a=[0.8, 0.3, 0.5], proba_b=[0.2, 0.7, 0.5]).to_csv(path, index=False)
    elif change == "same_bytes":
        path.write_bytes(path.read_bytes())
    else:
        path.unlink()
    with pytest.raises(ValueError, match="model.csv: the file changed or went away after it was loaded"):
        changed.sha256


def test_a_csv_file_streamed_and_changed_while_being_read_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(_reading, "STREAMED_CSV_BYTES", -1)
    path = tmp_path / "model.csv"
    FRAME.to_csv(path, index=False)
    real = _parse._parse_columns

    def rewrite_meanwhile(*args, **kwargs):
        parsed = real(*args, **kwargs)
        FRAME.assign(proba_a=[0.8, 0.3, 0.5], proba_b=[0.2, 0.7, 0.5]).to_csv(path, index=False)
        return parsed

    monkeypatch.setattr(_parse, "_parse_columns", rewrite_meanwhile)
    report = load_run_file(path)
    assert not report.models
    assert [str(p) for p in report.errors] == [f"{path}: changed while it was being read; load it again"]


def test_bytes_and_small_csv_files_are_hashed_when_asked_for(tmp_path, hashes):
    """Bytes, and a CSV file up to reading.STREAMED_CSV_BYTES, are held in memory: hashed when the digest is
    first asked for, once, and a pickled run carries the digest, not the bytes."""
    data = _write(tmp_path / "model.parquet").read_bytes()
    csv = tmp_path / "model.csv"
    FRAME.to_csv(csv, index=False)
    runs = [load_run_file(data, name="model.parquet").models["model"], load_run_file(csv).models["model"]]
    assert hashes == []
    assert runs[0].sha256 == hashlib.sha256(data).hexdigest()
    assert runs[1].sha256 == hashlib.sha256(csv.read_bytes()).hexdigest()
    assert runs[1].sha256 == hashlib.sha256(csv.read_bytes()).hexdigest()
    assert hashes == [1, 1]
    unread = load_run_file(data, name="model.parquet").models["model"]
    shipped = pickle.dumps(unread)
    assert len(hashes) == 3 and data not in shipped and pickle.loads(shipped).sha256 == runs[0].sha256


def test_a_digest_of_bytes_read_by_two_threads_at_once_is_the_same():
    for _ in range(200):
        digest = _identity.BytesDigest(b"y_true,proba_a\n" * 1000)
        with ThreadPoolExecutor(4) as pool:
            found = set(pool.map(lambda _: digest.hexdigest(), range(8)))
        assert found == {hashlib.sha256(b"y_true,proba_a\n" * 1000).hexdigest()}


def test_a_digest_given_as_text_or_none_is_kept_as_given():
    assert ModelRun("m", "m.csv", "abc", ("a", "b")).sha256 == "abc"
    assert ModelRun(model="m", path="m.csv", sha256=None, classes=("a",)).sha256 is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        ModelRun("m", "m.csv", "abc", ("a", "b")).sha256 = "def"
    with pytest.raises(TypeError):
        ModelRun("m", "m.csv")


def test_file_sha256_and_the_loader_share_what_they_remember(tmp_path, hashes):
    path = _write(tmp_path / "model.parquet")
    digest = file_sha256(path)
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert load_run_file(path).models["model"].sha256 == digest and len(hashes) == 1  # read once for both
    past_the_clock_tick(path)
    _write(path, FRAME.assign(y_true=["b", "b", "a"]))
    assert file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest() != digest  # a rewrite is hashed anew
    with pytest.raises(ValueError, match="not a regular file"):
        file_sha256(tmp_path)
    with pytest.raises(OSError):
        file_sha256(tmp_path / "missing.parquet")
