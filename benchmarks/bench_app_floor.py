"""What Streamlit and the browser cost for each page's elements alone, with nothing computed.

Issue 33: a new outcome value shows each page within 1.2x its floor (the first page)
and 1.5x (every other page), the floor being the same elements drawn with nothing
computed. By default this script times, in Chromium, side by side and interleaved in
one run, every page of the dashboard and its floor:

- "page": the dashboard itself (app.py) on five synthetic runs (``--n`` rows each,
  read from a folder), opened at the page's URL;
- "floor": app.py with every page script replaced by a replay of that page's elements
  as AppTest recorded them beforehand at each value the benchmark types (every block
  and element of the main area, the charts with their data, the tables, the widgets,
  whole as protobuf messages sent through Streamlit's own ``_enqueue``): the same
  frame (sidebar, outcome values, the fragment) and the same elements per value, and
  nothing of the page computed (a dict lookup by the value in force).

Each round types a new wrong-answer value in the sidebar box, presses Enter and waits
until the page is drawn and still: the app ran and is idle and nothing in the document
changed for 600 ms; the time is that of the document's last change. Medians per page,
with the load average over the page's rounds, and beside them the CPU each round used
in the app's server process (all threads) and in Chromium (every process of it, its
600 ms of stillness included): on two cores at load 5-20 the wall times follow them.

``--first-page-variants`` runs the older comparison instead: the bare app (one number
input, one line of text) beside four hand-made replicas of the first page's elements
(``bench_app_browser.FLOOR_APP``): "select sliders" (the sidebar's values and the page
in one ``st.fragment``, the tiles in a nested one, texts that follow the typed value),
"numeric sliders" (``st.slider(-10, 10, step=0.01)`` in place of the select sliders),
"no sliders", and "minimal" (the three boxes, the title, the caption, the headline and
one tile); there a round ends when the "Value per month" tile shows another number.

Not a test: prints the figures.

``--compare DIR`` adds a second checkout's dashboard (e.g. ``git archive`` of an earlier commit unpacked in DIR)
and its own floor (recorded from DIR's pages by this script run in a subprocess with DIR as its root): the four
apps alternate value by value, so the before and after ratios are measured at the same load.

Run: ``python benchmarks/bench_app_floor.py [--n 200000] [--rounds 7] [--pages value,voc] [--compare DIR]``
     ``python benchmarks/bench_app_floor.py --first-page-variants [--rounds 9]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The checkout whose dashboard is timed: this one, or the one --compare names (its recording runs in a subprocess).
ROOT = Path(os.environ.get("BENCH_FLOOR_ROOT") or Path(__file__).resolve().parent.parent).resolve()
sys.path[:0] = [str(ROOT / "tests" / d) for d in ("", "e2e", "app", "core", "io", "cli", "serving")]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from bench_app_browser import (  # noqa: E402
    BARE_APP,
    FLOOR_APP,
    TIMEOUT_MS,
    _bare_locators,
    _dashboard_locators,
    _ms,
    _open,
    _round_trips,
    _values,
    chromium_path,
    CHROMIUM_ARGS,
    streamlit_server,
    synthetic_runs,
)

VARIANTS = ("select sliders", "numeric sliders", "no sliders", "minimal")


async def _variants(urls: dict[str, str], rounds: int) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                                   args=CHROMIUM_ARGS)
        try:
            pages = {}
            for name, url in urls.items():
                ready = "wrong answer is worth" if name == "bare" else "Which model should we deploy?"
                pages[name] = (await _open(browser, url, ready))[1]
            times = {name: [] for name in urls}
            for value in _values(0, rounds):  # interleaved: every app sees the same load
                for name, page in pages.items():
                    locate = _bare_locators if name == "bare" else _dashboard_locators
                    times[name] += await _round_trips(page, *locate(page), [value])
            bare = statistics.median(times["bare"])
            for name, found in times.items():
                label = "bare app" if name == "bare" else f"floor, {name}"
                ratio = "" if name == "bare" else f"  -> {statistics.median(found) / bare:.2f}x the bare app"
                print(f"{label:<24} {_ms(found)}{ratio}")
        finally:
            await browser.close()



# ---- every page beside its floor (issue 33)

# (title, script, url path) of every page, as app.py lists them.
PAGES = {
    "home": ("Start here", "pages/home.py", ""),  # the default page: served at "/" only
    "runs": ("Runs", "pages/runs.py", "loaded-runs"),
    "value": ("Value & thresholds", "pages/value.py", "value-and-thresholds"),
    "voc": ("VOC curves", "pages/voc.py", "voc-curves"),
    "cost_matrix": ("Values per class", "pages/cost_matrix.py", "values-per-class"),
    "constraints": ("Capacity & guarantees", "pages/constraints.py", "capacity"),
    "segments": ("Segments", "pages/segments.py", "segments-by-group"),
    "calibration": ("Calibration", "pages/calibration.py", "calibration-check"),
    "compare": ("Compare two models", "pages/compare.py", "compare-models"),
    "monitor": ("Monitor (no labels)", "pages/monitor.py", "monitor-production"),
    "export": ("Export policy", "pages/export.py", "export-policy"),
    "how_value_works": ("How value works", "pages/how_value_works.py", "how-value-works"),
}
WRONG_BOX = "sidebar_v_wrong_input"
MAIN = 0  # the main area's root container in a delta path

# The floor app's helper, next to its app.py: replays a page's recorded elements for the value in force.
REPLAY_MODULE = '''"""Draw a page's recorded elements for the wrong-answer value in force; nothing computed."""
import pickle

import streamlit as st
import streamlit.delta_generator as delta_generator

from dashboard import state

_SEND = delta_generator._enqueue_message

_RECORDINGS = {{}}


def _recording(name):
    if name not in _RECORDINGS:
        with open({folder!r} + "/" + name + ".pickle", "rb") as file:
            _RECORDINGS[name] = pickle.load(file)
    return _RECORDINGS[name]


def _draw(dg, children):
    for kind, payload, grandchildren in children:
        if kind == "block":
            _draw(dg._block(payload), grandchildren)
        else:  # the whole element as recorded, its width and height too
            def send(message, element=payload):
                message.delta.new_element.CopyFrom(element)
                _SEND(message)

            delta_generator._enqueue_message = send
            try:
                dg._enqueue(kind, getattr(payload, kind))
            finally:
                delta_generator._enqueue_message = _SEND


def page(name):
    by_value = _recording(name)
    # Where the frame runs the page: its fragment's container, not the main area's root (the page's elements
    # were recorded there, under the fragment's block; drawn from the root's cursor, past that block, they were
    # all left out). What the frame drew before the page in that container stays.
    here = st._main._active_dg
    cursor = here._cursor
    parent, first = (tuple(cursor.parent_path), cursor.index) if cursor is not None else ((0,), 0)
    children = list(by_value[state.get().v_wrong])
    for step in parent[1:]:
        children = list(enumerate(dict(children)[step][2]))
    _draw(here, [child for index, child in children if index >= first])
'''


def _nodes(messages) -> dict[tuple[int, ...], tuple[str, object]]:
    """The last delta at each path of the main area: path -> (element type or "block", its proto)."""
    from streamlit.proto.Block_pb2 import Block

    found = {}
    for message in messages:
        if not message.HasField("delta") or message.metadata.delta_path[0] != MAIN:
            continue
        path = tuple(message.metadata.delta_path)
        delta = message.delta
        kind = delta.WhichOneof("type")
        if kind == "new_element":
            found[path] = (delta.new_element.WhichOneof("type"), delta.new_element)
        elif kind == "add_block":
            block = Block()
            block.CopyFrom(delta.add_block)
            if block.WhichOneof("type") == "expandable" and block.expandable.id:
                # An expander with a key is a widget that the floor's session never registers; the floors that
                # did not come to rest within 180 s were those of pages holding one (Value, Start here), the
                # likely cause. Without the id it is drawn alike: closed, holding what it held.
                block.expandable.ClearField("id")
            found[path] = ("block", block)
    # a path drawn anew drops what was drawn below the old one
    return {path: node for path, node in found.items()
            if all(found.get(path[:i], ("block",))[0] == "block" for i in range(2, len(path)))}


def _tree(nodes: dict, prefix: tuple[int, ...]) -> list:
    """(index, (kind, proto, children)) of the direct children of ``prefix``, in order."""
    children = sorted(path for path in nodes if len(path) == len(prefix) + 1 and path[:len(prefix)] == prefix)
    return [(path[-1], (nodes[path][0], nodes[path][1], [child for _, child in _tree(nodes, path)]))
            for path in children]


def record(folder: str, names: list[str], values: list[float], out: Path) -> dict[str, float]:
    """Run every page in AppTest at every value; pickle its main area's elements per value. Seconds per page."""
    from streamlit.testing.v1 import AppTest, local_script_runner

    messages = []
    parse = local_script_runner.parse_tree_from_messages

    def keep(found):
        messages[:] = list(found)
        return parse(found)

    local_script_runner.parse_tree_from_messages = keep
    os.chdir(ROOT)  # the frame runs the page scripts by their paths relative to the working directory
    seconds = {}
    try:
        for name in names:
            start = time.perf_counter()
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
            at.query_params["src"] = f"folder:{folder}"
            at.run()
            at.switch_page(PAGES[name][1]).run()
            by_value = {}
            for value in values:
                if value != at.sidebar.number_input(key=WRONG_BOX).value:
                    at.sidebar.number_input(key=WRONG_BOX).set_value(value).run()
                if at.exception:
                    raise RuntimeError(f"{name} at {value}: {[e.value for e in at.exception]}")
                by_value[value] = _tree(_nodes(messages), (MAIN,))
            with open(out / f"{name}.pickle", "wb") as file:
                pickle.dump(by_value, file)
            seconds[name] = time.perf_counter() - start
    finally:
        local_script_runner.parse_tree_from_messages = parse
    return seconds


# The frame runs each page's script by its path relative to the working directory (dashboard.run_script), and the
# servers start in this checkout: an app served from elsewhere (a floor, the --compare checkout) first moves there,
# or it runs this checkout's page scripts (as every floor did from the frame's change to run_script until this line).
IN_PLACE = "import os\nimport sys\nos.chdir({where!r})\nsys.path.insert(0, {root!r})\n"


def _in_place(frame: str, where: Path, root: Path) -> str:
    """The frame's source with :data:`IN_PLACE` after its docstring: put before it, the docstring was no longer
    one, and Streamlit's magic drew it in the main area ("Value dashboard: judge classifiers...", an element more
    than the page in every floor and --compare page)."""
    import ast

    body = ast.parse(frame).body
    lines = frame.splitlines(keepends=True)
    docstring = body[0].end_lineno if body and isinstance(body[0], ast.Expr) and isinstance(
        getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str) else 0
    return "".join(lines[:docstring]) + IN_PLACE.format(where=str(where), root=str(root)) + "".join(lines[docstring:])


def floor_app(recordings: Path, where: Path, root: Path = ROOT) -> Path:
    """app.py with every page replaced by the replay of its recording; the frame (sidebar, values) as it is."""
    (where / "pages").mkdir(parents=True)
    (where / "floor_replay.py").write_text(REPLAY_MODULE.format(folder=str(recordings)))
    frame = (root / "app.py").read_text()
    (where / "app.py").write_text(_in_place(frame, where, root))
    for name, (_, script, _) in PAGES.items():
        (where / script).write_text(f"import floor_replay\n\nfloor_replay.page({name!r})\n")
    return where / "app.py"


def app_elsewhere(root: Path, where: Path) -> Path:
    """The checkout ``root``'s app.py, served so that it runs ``root``'s own page scripts and modules."""
    where.mkdir(parents=True)
    (where / "pages").symlink_to(root / "pages")
    (where / "app.py").write_text(_in_place((root / "app.py").read_text(), root, root))
    return where / "app.py"


# A page is drawn and still when its script has run (the app's run state changed since Enter), it is not running
# and nothing in the document changed for QUIET_MS; the time is that of the last change.
WATCH = """() => {
  window.__last = performance.now(); window.__ran = false;
  if (!window.__observer) {
    window.__observer = new MutationObserver(records => {
      window.__last = performance.now();
      if (records.some(r => r.attributeName === 'data-test-script-state')) window.__ran = true;
    });
    window.__observer.observe(document.body, {subtree: true, childList: true, attributes: true,
                                              characterData: true});
  }
  return performance.now();
}"""
STILL = """(quiet) => {
  const app = document.querySelector('[data-testid="stApp"]');
  return window.__ran && app.getAttribute('data-test-script-state') === 'notRunning'
    && !document.querySelector('[data-testid="stStatusWidget"]') && performance.now() - window.__last > quiet;
}"""
QUIET_MS = 600
# A round that never comes to rest (seen under load 20: the app's connection lost, its status shown for good)
# leaves its page out of the table, said, rather than stopping the run.
ROUND_TIMEOUT_MS = 180_000


# Whether the app ran is told by the server's "script finished" message on the page's websocket, not by the
# document: a run of a few milliseconds (a floor's) can leave the app's run state attribute unchanged (both of
# its changes drawn in one frame), and a round waiting for that change never ended (the floors left out after
# 180 s in the second pass).
FINISHED: dict = {}  # page -> number of "script finished" messages it has received


async def _open_watched(browser, url: str, ready: str):
    """:func:`_open`, with the page's "script finished" messages counted in ``FINISHED``."""
    from playwright.async_api import expect
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    FINISHED[page] = 0

    def received(payload):
        if isinstance(payload, bytes):
            message = ForwardMsg()
            message.ParseFromString(payload)
            if message.WhichOneof("type") == "script_finished":
                FINISHED[page] += 1

    page.on("websocket", lambda socket: socket.on("framereceived", received))
    await page.goto(url, timeout=TIMEOUT_MS)
    await expect(page.get_by_text(ready).first).to_be_visible(timeout=TIMEOUT_MS)
    return context, page


def server_pid(url: str) -> int | None:
    """The process id of the Streamlit server answering at ``url`` (found by its port), None if not found."""
    port = url.rsplit(":", 1)[1].split("/")[0]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(words) and b"--server.port" in words and port.encode() in words:
            return int(entry.name)
    return None


def server_cpu(pid: int | None) -> float:
    """CPU seconds the server has used, all its threads (user + system); NaN where /proc cannot tell."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, TypeError):
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def browser_cpu() -> float:
    """CPU seconds used by this benchmark's Chromium (every process of it: browser, renderers, GPU), so far."""
    parents, names = {}, {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                names[int(entry.name)] = (entry / "cmdline").read_bytes()
            except (OSError, IndexError, ValueError):
                continue
    mine, grew = {os.getpid()}, True
    while grew:
        found = {pid for pid, parent in parents.items() if parent in mine} - mine
        mine |= found
        grew = bool(found)
    return sum(server_cpu(pid) for pid in mine if b"chrom" in names.get(pid, b""))


# The server's and Chromium's CPU per new value beside the wall times: which of the two a page's excess over its
# floor comes from (issue 33's fifth pass: against a floor that drew nothing, Chromium's 690 ms against 200 gave it
# away; against the real floor, 570 against 500, the server's 110 ms against 20 is what is left).
SERVER_PIDS: dict = {}  # page -> its server's process id


async def _still_after_enter(page, value: float) -> float:
    """Seconds from Enter in the wrong-answer box until the page is drawn and still."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    box = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"]').filter(
        has_text="Wrong answer").locator("input")
    await box.fill(f"{value:g}")
    start = await page.evaluate(WATCH)
    runs = FINISHED[page]
    cpu, drawing = server_cpu(SERVER_PIDS.get(page)), browser_cpu()
    await box.press("Enter")
    waited = 0
    while FINISHED[page] == runs:
        if waited > ROUND_TIMEOUT_MS:
            raise PlaywrightTimeout(f"no run finished within {ROUND_TIMEOUT_MS} ms")
        await page.wait_for_timeout(10)
        waited += 10
    await page.wait_for_function(STILL.replace("window.__ran && ", ""), arg=QUIET_MS, polling="raf",
                                 timeout=ROUND_TIMEOUT_MS)
    CPU_USED.setdefault(page, []).append(server_cpu(SERVER_PIDS.get(page)) - cpu)
    BROWSER_CPU_USED.setdefault(page, []).append(browser_cpu() - drawing)
    return (await page.evaluate("() => window.__last") - start) / 1000


CPU_USED: dict = {}  # page -> the server's CPU seconds per round, until the page was still
BROWSER_CPU_USED: dict = {}  # page -> Chromium's CPU seconds per round (its 600 ms of stillness included)


async def _pages_beside_floors(urls: dict[str, str], folder: str, names: list[str], values: list[float]) -> list:
    from playwright.async_api import TimeoutError as PlaywrightTimeout
    from playwright.async_api import async_playwright

    rows = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                                   args=CHROMIUM_ARGS)
        try:
            for url in urls.values():  # a fresh server answers its first deep link with "Page not found"
                context, _ = await _open(browser, f"{url}/?src=folder:{folder}", "Wrong answer")
                await context.close()
            for name in names:
                title, _, url_path = PAGES[name]
                load = os.getloadavg()[0]
                opened = {}
                for app, url in urls.items():
                    context, page = await _open_watched(browser, f"{url}/{url_path}?src=folder:{folder}",
                                                        "Wrong answer")
                    await page.evaluate(WATCH)
                    await page.wait_for_function(STILL.replace("window.__ran && ", ""), arg=QUIET_MS,
                                                 polling="raf", timeout=TIMEOUT_MS)
                    SERVER_PIDS[page] = server_pid(url)
                    opened[app] = (context, page)
                # The floor must draw what the page draws: the main area's elements counted in both (a floor that
                # drew nothing of its page, as from the page's move into the frame's fragment until this pass, is
                # seen here at once).
                drawn = {app: await page.locator('[data-testid="stMain"] [data-testid="stElementContainer"]').count()
                         for app, (_, page) in opened.items()}
                unlike = len(set(drawn.values())) > 1
                print(f"{title:<24} elements in the main area: "
                      + ", ".join(f"{app} {count}" for app, count in drawn.items())
                      + ("  NOT THE SAME: the ratio below compares unlike pages" if unlike else ""), flush=True)
                times = {app: [] for app in urls}
                try:
                    for value in values[1:]:  # interleaved: the page and its floor see the same load
                        for app, (_, page) in opened.items():
                            times[app].append(await _still_after_enter(page, value))
                except PlaywrightTimeout:
                    print(f"{title:<24} left out: a round did not come to rest within {ROUND_TIMEOUT_MS // 1000} s "
                          f"({times})", flush=True)
                    continue
                finally:
                    for context, _ in opened.values():
                        await context.close()
                medians = {app: 1000 * statistics.median(found) for app, found in times.items()}
                medians.update({f"{app} cpu": 1000 * statistics.median(CPU_USED.get(page, [float("nan")]))
                                for app, (_, page) in opened.items()})
                medians.update({f"{app} browser": 1000 * statistics.median(BROWSER_CPU_USED.get(page, [float("nan")]))
                                for app, (_, page) in opened.items()})
                load = f"{load:.1f}-{os.getloadavg()[0]:.1f}"
                rows.append((title, medians, load))
                for app, found in times.items():
                    ratio = (f"  -> {medians[app] / medians[app.replace('page', 'floor')]:.2f}x its floor"
                             if app.endswith("page") else "")
                    print(f"{title if app == 'page' else '':<24} {app:<14} {_ms(found)}{ratio}"
                          f"  CPU median: server {medians[app + ' cpu']:4.0f} ms, Chromium "
                          f"{medians[app + ' browser']:4.0f} ms", flush=True)
                print(f"{'':<24} (load {load})", flush=True)
        finally:
            await browser.close()
    return rows


def record_elsewhere(root: Path, folder: Path, names: list[str], values: list[float], out: Path) -> None:
    """:func:`record` of the checkout ``root``'s pages: this script run with ``root`` as its root."""
    out.mkdir()
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--record-into", str(out), "--folder", str(folder),
                    "--values=" + ",".join(repr(v) for v in values), "--pages", ",".join(names)],
                   env={**os.environ, "BENCH_FLOOR_ROOT": str(root)}, check=True, cwd=root)


def pages_beside_floors(n: int, names: list[str], rounds: int, compare: Path | None = None) -> None:
    values = [-4.0] + [-4.0 - 0.5 * (r + 1) - 0.01 for r in range(rounds)]
    with tempfile.TemporaryDirectory(prefix="bench-floors-") as tmp:
        tmp = Path(tmp)
        folder = tmp / "runs"
        folder.mkdir()
        os.environ["VALUE_DASHBOARD_DATA_ROOTS"] = str(folder)  # the servers inherit it
        start = time.perf_counter()
        synthetic_runs(folder, n, same_items=True)  # the Compare page pairs items
        print(f"wrote 5 synthetic runs of {n:,} rows in {time.perf_counter() - start:.0f} s", flush=True)
        (tmp / "recordings").mkdir()
        seconds = record(str(folder), names, values, tmp / "recordings")
        print("recorded every page at every value (AppTest, s): "
              + ", ".join(f"{name} {s:.0f}" for name, s in seconds.items()), flush=True)
        scripts = {"page": str(ROOT / "app.py"), "floor": str(floor_app(tmp / "recordings", tmp / "floor"))}
        if compare is not None:
            record_elsewhere(compare, folder, names, values, tmp / "recordings-compared")
            scripts["compared page"] = str(app_elsewhere(compare, tmp / "compared"))
            scripts["compared floor"] = str(floor_app(tmp / "recordings-compared", tmp / "floor-compared", compare))
        servers = [streamlit_server(timeout=120, script=script) for script in scripts.values()]
        urls = {app: server.__enter__() for app, server in zip(scripts, servers)}
        try:
            rows = asyncio.run(_pages_beside_floors(urls, str(folder), names, values))
        finally:
            for server in reversed(servers):
                server.__exit__(None, None, None)
    print(f"\n{'page':<24} {'new value':>9} {'floor':>7} {'ratio':>6} {'CPU':>5} {'floor':>5} {'ratio':>6}  load   "
          f"(medians of {rounds}, ms; server CPU per value; {n:,} rows a run)")
    for title, medians, load in rows:
        line = (f"{title:<24} {medians['page']:9.0f} {medians['floor']:7.0f} {medians['page'] / medians['floor']:5.2f}x"
                f" {medians['page cpu']:5.0f} {medians['floor cpu']:5.0f} "
                f"{medians['page cpu'] / max(medians['floor cpu'], 1e-9):5.1f}x")
        if "compared page" in medians:
            line += (f"   compared: {medians['compared page']:6.0f} {medians['compared floor']:6.0f} "
                     f"{medians['compared page'] / medians['compared floor']:5.2f}x"
                     f" CPU {medians['compared page cpu']:4.0f} {medians['compared floor cpu']:4.0f}")
        print(f"{line}  {load}")


def first_page_variants(rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        scripts = {"bare": Path(tmp) / "bare.py"}
        scripts["bare"].write_text(BARE_APP)
        for i, variant in enumerate(VARIANTS):
            scripts[variant] = Path(tmp) / f"floor_{i}.py"
            scripts[variant].write_text(FLOOR_APP.format(root=str(ROOT), variant=variant))
        servers = [streamlit_server(timeout=120, script=str(path)) for path in scripts.values()]
        urls = {name: server.__enter__() for name, server in zip(scripts, servers)}
        try:
            asyncio.run(_variants(urls, rounds))
        finally:
            for server in reversed(servers):
                server.__exit__(None, None, None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="values typed in each app")
    parser.add_argument("--n", type=int, default=200_000, help="rows per synthetic run file")
    parser.add_argument("--pages", default=",".join(PAGES), help=f"comma-separated, among {','.join(PAGES)}")
    parser.add_argument("--first-page-variants", action="store_true",
                        help="the bare app beside four replicas of the first page instead")
    parser.add_argument("--compare", type=Path, metavar="DIR",
                        help="another checkout's dashboard and its floor too (e.g. an earlier commit, git archive)")
    parser.add_argument("--record-into", type=Path, help=argparse.SUPPRESS)  # the subprocess of --compare
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--values", help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = [p for p in args.pages.split(",") if p]
    if set(names) - set(PAGES):
        parser.error(f"unknown pages {sorted(set(names) - set(PAGES))}")
    if args.record_into is not None:
        from streamlit import logger

        logger.set_log_level("error")
        values = [float(v) for v in args.values.split(",")]
        seconds = record(args.folder, names, values, args.record_into)
        print(f"recorded {ROOT}'s pages (AppTest, s): " + ", ".join(f"{name} {s:.0f}" for name, s in seconds.items()),
              flush=True)
        return
    if args.compare is not None and not (args.compare / "app.py").is_file():
        parser.error(f"--compare {args.compare}: no app.py there")
    if chromium_path() is None:
        sys.exit("No Chromium at /usr/bin/chromium (or $CHROMIUM_PATH).")
    from streamlit import logger

    logger.set_log_level("error")  # not the bare-mode notices of every cache call made outside a session
    print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.first_page_variants:
        first_page_variants(args.rounds)
    else:
        pages_beside_floors(args.n, names, args.rounds, args.compare.resolve() if args.compare else None)
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
