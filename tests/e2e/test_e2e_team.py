"""End to end: the dashboard started as the README's "Run it for your team" says (issue 10).

``streamlit run app.py -- --data-root ALLOWED`` with the project's config: the
server listens on loopback only, a link with ``src=folder:`` outside the allowed
root gets a plain refusal and shows nothing of that folder, and a folder inside
it loads. Uses the harness of ``test_e2e_browser`` (Debian's Chromium through
Playwright; skipped without it unless ``REQUIRE_BROWSER=1``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import helpers.browser as harness  # noqa: E402  (server and browser harness)

ROOT = harness.ROOT
SAMPLE = ROOT / "sample_runs" / "breast_cancer" / "logreg.csv"
REFUSAL_START = "This folder cannot be read."

pytestmark = pytest.mark.e2e


@contextlib.contextmanager
def team_server(data_root: Path, timeout: float = 60.0):
    """The README's command, on a free port (the address comes from .streamlit/config.toml)."""
    port = harness.free_port()
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.port", str(port),
        "--server.headless", "true",
        "--server.fileWatcherType", "none",
        "--", "--data-root", str(data_root),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "VALUE_DASHBOARD_DATA_ROOTS"}
    with tempfile.TemporaryDirectory(prefix="e2e-team-") as tmp:
        log_path = Path(tmp) / "server.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, env=env)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + timeout
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"streamlit exited with {process.returncode}:\n" + harness._tail(log_path))
                with contextlib.suppress(OSError):
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                        if response.read().strip() == b"ok":
                            break
                if time.monotonic() > deadline:
                    raise RuntimeError("streamlit did not start:\n" + harness._tail(log_path))
                time.sleep(0.2)
            yield url, port
        finally:
            harness.stop(process)


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a TCP socket listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local, state = fields[1], fields[3]
                address, port_hex = local.rsplit(":", 1)
                if state == "0A" and int(port_hex, 16) == port:  # 0A: LISTEN
                    found.add(address)
    return found


@pytest.fixture(scope="module")
def folders():
    with tempfile.TemporaryDirectory(prefix="e2e-roots-") as tmp:
        base = Path(tmp)
        allowed, secret = base / "allowed", base / "secret"
        (allowed / "runs").mkdir(parents=True)
        secret.mkdir()
        (allowed / "runs" / "teamrun.csv").write_bytes(SAMPLE.read_bytes())
        (secret / "credentials.csv").write_text("username,password,api_key\nroot,hunter2,TOPSECRET-LABEL-42\n")
        (secret / "hiddenmodel.csv").write_bytes(SAMPLE.read_bytes())
        yield allowed, secret


@pytest.fixture(scope="module")
def team(chromium_executable, folders):
    allowed, _ = folders
    with team_server(allowed) as started:
        yield started


def test_the_server_listens_on_loopback_only(team):
    _, port = team
    addresses = listening_addresses(port)
    if not Path("/proc/net/tcp").exists():
        pytest.skip("no /proc/net/tcp to read the listening sockets from")
    loopback = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1 and ::1 as /proc writes them
    assert addresses and addresses <= loopback, addresses


def test_a_folder_outside_the_allowed_root_is_refused_in_the_browser(team, folders, page):
    from playwright.sync_api import expect

    url, _ = team
    allowed, secret = folders
    for target in (secret, allowed / ".." / "secret", Path("/etc")):
        with harness.step(page, f"refused-{target.name}"):
            page.goto(f"{url}/?src=" + urllib.parse.quote(f"folder:{target}"))
            expect(page.get_by_text(REFUSAL_START).first).to_be_visible()
            harness.wait_for_app(page)
            body = page.inner_text("body")
            for leak in ("credentials", "password", "api_key", "TOPSECRET", "hiddenmodel", "hunter2", str(secret)):
                assert leak not in body, (target, leak)
    with harness.step(page, "allowed"):
        page.goto(f"{url}/?src=" + urllib.parse.quote(f"folder:{allowed / 'runs'}"))
        expect(page.get_by_text("teamrun").first).to_be_visible()
        harness.wait_for_app(page)
        assert REFUSAL_START not in page.inner_text("body")
