"""Eight sessions typing new outcome values at once, against the server alone (no browser), next to a bare app.

What is measured: the SERVER's share of a round trip, what each user waits for
from the server when every user has a machine of their own. Each session is a
client of Streamlit's own websocket protocol (``/_stcore/stream``, subprotocol
"streamlit", ``BackMsg`` protobufs up, ``ForwardMsg`` down), doing what the
browser's frontend does: it opens the first page with the folder source in the
query string (``?src=folder:<path>``, five synthetic 10-class runs of 10^6 rows,
``bench_app.synthetic_runs``, seed 0, as ``bench_app_roundtrip.py``), keeps the
messages the server marks cacheable and lists their hashes in every rerun
(``ClientState.cached_message_hashes``), resolves the references
(``ForwardMsg.ref_hash``) it then gets instead of repeated elements, and sends a
new wrong-answer value as the browser does for a widget inside a fragment: a
``rerun_script`` with the page's script hash, the query string, the widget's
double value and the ``fragment_id`` the server gave that widget's element
(``Delta.fragment_id``). Every round checks that the run was a fragment run
(``script_finished`` = FINISHED_FRAGMENT_RUN_SUCCESSFULLY).

Two times per round, from the moment the message is sent: until the server has
sent the "Value per month" tile with another number (the first new tile), and
until it has sent ``script_finished`` (the run finished). Every value is new to
the server (``bench_app_browser._values``), unless ``--same-values``: then all
concurrent sessions type the same values (colleagues on one use case), and all
but the first find the answer cached.

Beside them, the server's CPU per run: the user + system time of the server process
(every thread, ``/proc/<pid>/stat``, in 10 ms clock ticks) over the rounds, divided by
the runs. With one Python process the sessions' runs share one interpreter lock, so
N sessions typing at once wait about N times this.

What is NOT measured: the browser. No rendering, no React, no layout; the
client decodes the protobufs in this process (its CPU per run is printed too:
it shares the machine's cores with the server). The browser's share (about 100
ms of Chromium's main thread per full rerun here) is in ``bench_app_roundtrip.py``,
where eight Chromium tabs render on the same two cores as the server. The client sends only the changed widget's
state (the frontend sends every widget's; the server keeps the others' last
values either way), and no heartbeats or context info.

The bare app (one number input, one line repeating it: ``bench_app_browser.BARE_APP``)
is driven the same way in the same run, one session and N at once, as the reference
(its run is a full run: FINISHED_SUCCESSFULLY).

With ``--check-with-browser`` one Chromium session (Playwright) then types new values
on the same server, as ``bench_app_roundtrip.py`` does: its round trips must be longer
than the server's share measured above, and the tile's text the browser shows for a
value must equal what this client read for the same value.

The server's websocket does not set TCP_NODELAY (Streamlit 1.67 on uvicorn; checked with
getsockopt in the server process), so after a run's first small message its next ones wait
until the client acknowledges the first, and a Linux client delays that acknowledgement up
to 40 ms: by default this client behaves as the kernel does (as a browser on the same
machine would), and each round trip includes that wait. With ``--quick-acks`` the client
sets TCP_QUICKACK after every read: the server's own time, without that wait.

With ``--exclude-recommend`` the dashboard's server answers ``valuecore.recommend`` from
``bench_app_roundtrip.py``'s memo (the same ``sitecustomize`` patch, only on this benchmark's
server): what the server costs around the recommendation, printed as "[recommend excluded]".

Goal (issue 23): p90 with eight sessions within 3x one session's. Not a test: prints figures.

Run: ``python benchmarks/bench_app_sessions.py [--n 1000000] [--rounds 8] [--sessions 8] [--together-rounds 3]
[--same-values] [--check-with-browser] [--exclude-recommend] [--quick-acks]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_app_browser import (  # noqa: E402  (it puts tests/e2e and the project on the path)
    BARE_APP,
    CHROMIUM_ARGS,
    HOME,
    PERIOD_TILE,
    RECOMMEND_EXCLUDED,
    ROOT,
    _dashboard_locators,
    _open,
    _p90,
    _round_trips,
    _TEXT_NOW,
    _values,
    chromium_path,
    streamlit_server,
    synthetic_runs,
)

from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

FRAGMENT_RUN = ForwardMsg.ScriptFinishedStatus.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
FULL_RUN = ForwardMsg.ScriptFinishedStatus.FINISHED_SUCCESSFULLY
TIMEOUT_S = 600  # a first load of five 10^6-row runs on a busy machine
QUICK_ACKS = False  # --quick-acks: acknowledge every TCP segment at once (see the docstring)


class App:
    """What to look for in one app: the number box (both words in its label) and the text that shows its effect."""

    def __init__(self, box_words: tuple[str, ...], shown_type: str, shown_words: str, finished: int):
        self.box_words, self.shown_type, self.shown_words, self.finished = box_words, shown_type, shown_words, finished

    def shown_text(self, element) -> str | None:
        """The text the round trip waits for, if ``element`` is the one showing it."""
        if self.shown_type == "metric" and element.WhichOneof("type") == "metric":
            return element.metric.body if self.shown_words in element.metric.label else None
        if self.shown_type == "markdown" and element.WhichOneof("type") == "markdown":
            return element.markdown.body if self.shown_words in element.markdown.body else None
        return None


DASHBOARD = App(("Wrong answer", "exact"), "metric", PERIOD_TILE, FRAGMENT_RUN)
BARE = App((), "markdown", "wrong answer is worth", FULL_RUN)


class Session:
    """One user's session over the websocket, as the frontend keeps it."""

    def __init__(self, app: App, base_url: str, query_string: str):
        self.app, self.base_url, self.query_string = app, base_url, query_string
        self.cache: dict[str, ForwardMsg] = {}
        self.page_script_hash = ""
        self.box_id = self.fragment_id = None
        self.shown = None
        self.socket = None

    async def open(self) -> None:
        ws_url = self.base_url.replace("http://", "ws://") + "/_stcore/stream"
        self.socket = await websockets.connect(ws_url, subprotocols=["streamlit"], origin=self.base_url,
                                               max_size=None, open_timeout=TIMEOUT_S)
        await self._send(None)
        _, _, status = await self._read_run()
        if self.box_id is None or self.shown is None:
            raise RuntimeError(f"the first run showed no box {self.app.box_words} or no {self.app.shown_words!r}")
        if status != FULL_RUN:
            raise RuntimeError(f"the first run ended with {ForwardMsg.ScriptFinishedStatus.Name(status)}")

    async def close(self) -> None:
        await self.socket.close()

    async def _send(self, value: float | None) -> None:
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = self.page_script_hash
        state.cached_message_hashes.extend(self.cache)
        if value is not None:
            widget = state.widget_states.widgets.add()
            widget.id = self.box_id
            widget.double_value = value
            if self.fragment_id:
                state.fragment_id = self.fragment_id
        await self.socket.send(msg.SerializeToString())

    def _element_seen(self, delta) -> None:
        element = delta.new_element
        if element.WhichOneof("type") == "number_input" and all(w in element.number_input.label
                                                                 for w in self.app.box_words):
            self.box_id, self.fragment_id = element.number_input.id, delta.fragment_id

    async def _read_run(self, start: float | None = None):
        """Read until ``script_finished``: (seconds to the first new shown text, seconds to finished, status)."""
        before, first_new = self.shown, None
        while True:
            raw = await asyncio.wait_for(self.socket.recv(), TIMEOUT_S)
            if QUICK_ACKS:  # Linux turns quick acknowledgements off again after a while: set it after every read
                self.socket.transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "ref_hash":  # an element the client said it holds: the server sent only its hash
                msg = self.cache[msg.ref_hash]
                kind = msg.WhichOneof("type")
            elif msg.metadata.cacheable and msg.hash:
                self.cache[msg.hash] = msg
            if kind == "new_session":
                self.page_script_hash = msg.new_session.page_script_hash
            elif kind == "navigation":  # with st.navigation the page shown is named here
                self.page_script_hash = msg.navigation.page_script_hash
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                self._element_seen(msg.delta)
                text = self.app.shown_text(msg.delta.new_element)
                if text is not None:
                    self.shown = text
                    if first_new is None and start is not None and text != before:
                        first_new = time.perf_counter() - start
            elif kind == "script_finished":
                finished = None if start is None else time.perf_counter() - start
                return first_new, finished, msg.script_finished

    async def type_values(self, values) -> list[tuple[float, float]]:
        """(first new text, run finished) in seconds, per value typed."""
        times = []
        for value in values:
            start = time.perf_counter()
            await self._send(value)
            first_new, finished, status = await self._read_run(start)
            if status != self.app.finished:
                raise RuntimeError(f"{value:g}: the run ended with {ForwardMsg.ScriptFinishedStatus.Name(status)}, "
                                   f"expected {ForwardMsg.ScriptFinishedStatus.Name(self.app.finished)}")
            if first_new is None:
                raise RuntimeError(f"{value:g}: the run finished without a new {self.app.shown_words!r}")
            times.append((first_new, finished))
        return times


def _server_cpu_seconds(base_url: str) -> float:
    """CPU time (user + system, every thread) of the streamlit server listening on ``base_url``'s port."""
    port = base_url.rsplit(":", 1)[1]
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(argv) and b"--server.port" in argv \
                and argv[argv.index(b"--server.port") + 1] == port.encode():
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    raise RuntimeError(f"no streamlit server process on port {port}")


def _ms_pair(times) -> str:
    def one(ts):
        ts = sorted(1000 * t for t in ts)
        return f"median {statistics.median(ts):6.0f}  p90 {_p90(ts):6.0f}"

    return (f"first new tile {one(t for t, _ in times)} | run finished {one(f for _, f in times)} ms "
            f"({len(times)})")


async def _one_and_many(app: App, name: str, url: str, query: str, rounds: int, sessions: int,
                        together_rounds: int, same_values: bool, more_urls: tuple[str, ...] = ()) -> tuple[list, list]:
    """One session alone on ``url``, then ``sessions`` at once, dealt in turn to ``url`` and ``more_urls`` (other
    server processes of the same app, as a proxy with sticky sessions deals them)."""
    urls = (url, *more_urls)
    start = time.perf_counter()
    first = Session(app, url, query)
    await first.open()
    print(f"{name}: first session opened in {time.perf_counter() - start:.1f} s")
    cpu, client = _server_cpu_seconds(url), time.process_time()
    alone = await first.type_values(_values(0, rounds))
    cpu, client = (1000 * (_server_cpu_seconds(url) - cpu) / rounds, 1000 * (time.process_time() - client) / rounds)
    print(f"{name}, one session:           {_ms_pair(alone)}; server CPU {cpu:.0f} ms a run (this client's "
          f"{client:.1f} ms)")
    others = [Session(app, urls[(i + 1) % len(urls)], query) for i in range(sessions - 1)]
    for s in others:
        await s.open()
    everyone = [first, *others]
    cpu, client = sum(_server_cpu_seconds(u) for u in urls), time.process_time()
    together = await asyncio.gather(*(s.type_values(_values(1 if same_values else i + 1, together_rounds))
                                      for i, s in enumerate(everyone)))
    every = [t for times in together for t in times]
    cpu, client = (1000 * (sum(_server_cpu_seconds(u) for u in urls) - cpu) / len(every),
                   1000 * (time.process_time() - client) / len(every))
    which = "the same" if same_values else "each its own"
    spread = f", over {len(urls)} server processes" if len(urls) > 1 else ""
    print(f"{name}, {sessions} sessions at once ({which} values{spread}): {_ms_pair(every)}; server CPU "
          f"{cpu:.0f} ms a run (this client's {client:.1f} ms)")
    for label, pick in (("first new tile", 0), ("run finished", 1)):
        ratio = _p90([t[pick] for t in every]) / _p90([t[pick] for t in alone])
        print(f"{name}, p90 {sessions} sessions / p90 one session, {label}: {ratio:.2f}x (goal 3x)")
    for s in everyone:
        await s.close()
    return alone, every


async def _check_with_browser(url: str, query: str, alone: list, rounds: int) -> None:
    """One Chromium session on the same server: longer round trips than the server's share, the same tile text."""
    from playwright.async_api import async_playwright

    values = _values(40, rounds)  # values no session above typed
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                                   args=CHROMIUM_ARGS)
        try:
            context, page = await _open(browser, f"{url}/?{query}", HOME)
            box, shown = _dashboard_locators(page)
            browser_times = await _round_trips(page, box, shown, values)
            browser_text = await page.evaluate(_TEXT_NOW, list(shown))
            await context.close()
        finally:
            await browser.close()
    print(f"check, one Chromium session, same server: median {1000 * statistics.median(browser_times):.0f}  "
          f"p90 {1000 * _p90(browser_times):.0f} ms ({len(browser_times)}); the server's share above: median "
          f"{1000 * statistics.median(f for _, f in alone):.0f} ms to the run's end")
    session = Session(DASHBOARD, url, query)
    await session.open()
    await session.type_values(values[-1:])  # the browser's last value (cached now): only its text is compared
    await session.close()
    same = "the same" if session.shown == browser_text else "DIFFERENT"
    print(f"check, the tile for {values[-1]:g}: browser {browser_text!r}, websocket {session.shown!r}: {same}")
    if statistics.median(browser_times) <= statistics.median(f for _, f in alone):
        print("check: the browser's median round trip is NOT above the server's share: the client misses something")


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _write_inputs(tmp: Path, n: int, exclude_recommend: bool) -> Path:
    """The five runs, the bare app and the server's patch under ``tmp``, the environment for the servers; the runs."""
    folder, patch = tmp / "runs", tmp / "patch"
    for made in (folder, patch):
        made.mkdir()
    synthetic_runs(folder, n, seed=0)
    for path, text in ((tmp / "bare.py", BARE_APP), (patch / "sitecustomize.py", RECOMMEND_EXCLUDED)):
        path.write_text(text)
    os.environ["VALUE_DASHBOARD_DATA_ROOTS"] = str(tmp)  # the folder source reads only inside allowed roots
    if exclude_recommend:  # only the benchmark's servers import the patch (see bench_app_roundtrip.py)
        os.environ["PYTHONPATH"] = os.pathsep.join([str(patch), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag, default, what in (("--n", 1_000_000, "predictions per run (five runs)"),
                                ("--rounds", 8, "values typed in the one session"),
                                ("--sessions", 8, "concurrent sessions"),
                                ("--together-rounds", 3, "values typed per concurrent session"),
                                ("--servers", 1, "dashboard server processes the concurrent sessions are dealt to")):
        parser.add_argument(flag, type=int, default=default, help=what)
    for flag, what in (("--same-values", "the concurrent sessions type the same values"),
                       ("--check-with-browser", "then one Chromium session on the same server: its round trips "
                                                "and the tile's text"),
                       ("--exclude-recommend", "the server answers valuecore.recommend from a memo: what it "
                                               "costs without it"),
                       ("--quick-acks", "acknowledge every TCP segment at once: no wait on the server's Nagle")):
        parser.add_argument(flag, action="store_true", help=what)
    args = parser.parse_args()
    global QUICK_ACKS
    QUICK_ACKS = args.quick_acks
    if args.check_with_browser and chromium_path() is None:
        sys.exit("No Chromium at /usr/bin/chromium (or $CHROMIUM_PATH).")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    acks = "quick ACKs (TCP_QUICKACK)" if QUICK_ACKS else "the kernel's delayed ACKs"
    print(f"commit {commit}; client with {acks}; load average at the start: {_load()}")
    with tempfile.TemporaryDirectory(prefix="bench-sessions-") as tmp:
        folder = _write_inputs(Path(tmp), args.n, args.exclude_recommend)
        query = f"src=folder:{folder}"
        page_name = "[recommend excluded] first page" if args.exclude_recommend else "first page"
        with contextlib.ExitStack() as servers:
            dashboard_url, *more_urls = (servers.enter_context(streamlit_server(timeout=120))
                                         for _ in range(args.servers))
            bare_url = servers.enter_context(streamlit_server(timeout=120, script=str(Path(tmp) / "bare.py")))

            async def measure():
                alone, _ = await _one_and_many(DASHBOARD, page_name, dashboard_url, query, args.rounds,
                                               args.sessions, args.together_rounds, args.same_values,
                                               tuple(more_urls))
                bare, _ = await _one_and_many(BARE, "bare app", bare_url, "", args.rounds, args.sessions,
                                              args.together_rounds, args.same_values)
                ratio = statistics.median(f for _, f in alone) / statistics.median(f for _, f in bare)
                print(f"one session, first page / bare app (medians, run finished): {ratio:.2f}x")
                if args.check_with_browser:
                    await _check_with_browser(dashboard_url, query, alone, args.rounds)

            asyncio.run(measure())
    print(f"load average at the end: {_load()}")


if __name__ == "__main__":
    main()
