"""Typing a new outcome value on the first page, in Chromium, next to a bare Streamlit app in the same run.

Five synthetic 10-class runs of 10^6 predictions each (``bench_app.synthetic_runs``,
seeded, written to a temporary folder that is deleted afterwards) are opened on
the first page through the folder source. Each round types a new wrong-answer
value in the sidebar's box, presses Enter and waits until the "Value per month"
tile shows another number: the round trip a user waits for. Every value typed is
new to the server (no cached answer). The bare app is one number input and one
line of text that repeats it; it is timed the same way, in the same run.

A new expected volume (the box on the page, not in the sidebar) is timed too:
it changes the tiles only, and reruns only their fragment (``st.fragment``).

Then eight sessions type at once (each its own values, the worst case: every
round is a new computation; with ``--same-values`` they all type the same ones,
as colleagues looking at one use case do, and share the cached answer) and the
p90 of their round trips is set against the p90 of one session alone.

With ``--others-without-browser`` the eight sessions are one Chromium tab and seven
clients of Streamlit's websocket protocol (``bench_app_sessions.Session``: no
rendering, about 2 ms of CPU a run), which type their own new values without a
pause for as long as the tab types its ``--rounds`` values; the p90 is the tab's.
Eight Chromium tabs on this machine's two cores render each other's reruns as
well as the server's (about 100 ms of CPU each per rerun); users on machines of
their own share only the server, which this measures.

With ``--floor`` the same rounds are also typed into ``bench_app_floor.py``'s floor app
(the page's elements for a new value, its select sliders included, nothing
computed), interleaved: what Streamlit and Chromium cost before any work of ours.

Goals (issue 23): the first page within 1.5x the bare round trip (median), and
p90 with eight sessions within 3x one session's. Not a test: prints the figures.

With ``--exclude-recommend`` the dashboard's server answers ``valuecore.recommend`` from
a memo: the first answer for each (models, rules) is computed in full; later ones
keep its model and rule, refit that one policy for the new values and evaluate
it (the headline, the tiles and the likely range then change, as they must for
the round trip to end). This is NOT the dashboard's round trip: it is what the
page costs around the recommendation (sidebar, view model, layout, Streamlit,
the browser), printed as "recommend excluded". The patch lives only in this
benchmark (a ``sitecustomize`` module on the server's PYTHONPATH).

Run: ``python benchmarks/bench_app_roundtrip.py [--n 1000000] [--rounds 5] [--sessions 8] [--together-rounds 3]
[--exclude-recommend] [--others-without-browser]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_app_browser import (  # noqa: E402  (it puts tests/e2e and the project on the path)
    BARE_APP,
    _bare_locators,
    CHROMIUM_ARGS,
    chromium_path,
    _dashboard_locators,
    FLOOR_APP,
    HOME,
    _idle,
    _ms,
    _open,
    _p90,
    RECOMMEND_EXCLUDED,
    ROOT,
    _round_trips,
    streamlit_server,
    synthetic_runs,
    _values,
    _volume_locators,
)

_LABEL = ""  # "[recommend excluded] " with --exclude-recommend, on every figure it prints


async def _with_others_typing(page, dashboard_url: str, others: int, rounds: int) -> tuple[list[float], list]:
    """The tab's round trips for ``rounds`` new values while ``others`` websocket sessions type their own."""
    from bench_app_sessions import DASHBOARD, Session

    query = dashboard_url.split("/?", 1)[1]
    clients = [Session(DASHBOARD, dashboard_url.split("/?", 1)[0], query) for _ in range(others)]
    for client in clients:
        await client.open()
    done = asyncio.Event()

    async def keep_typing(client, session):
        times, r = [], 0
        while not done.is_set():
            r += 1
            times += await client.type_values([-4.0 - 0.5 * r - 0.01 * session])  # new to the server every time
        return times

    typing = [asyncio.create_task(keep_typing(c, s + 2)) for s, c in enumerate(clients)]
    await asyncio.sleep(0.5)  # every client is in its stride before the tab starts
    mine = await _round_trips(page, *_dashboard_locators(page), _values(1, rounds))
    done.set()
    theirs = [t for times in await asyncio.gather(*typing) for t in times]
    for client in clients:
        await client.close()
    return mine, theirs


async def _measure(dashboard_url: str, bare_url: str, rounds: int, sessions: int, together_rounds: int,
                   same_values: bool = False, others_without_browser: bool = False,
                   floor_url: str | None = None) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                                   args=CHROMIUM_ARGS)
        try:
            start = time.perf_counter()
            context, page = await _open(browser, dashboard_url, HOME)
            await _idle(page)
            print(f"first page opened (runs loaded, every rule weighed) in {time.perf_counter() - start:.1f} s")
            bare_context, bare_page = await _open(browser, bare_url, "wrong answer is worth")
            if floor_url is not None:
                floor_context, floor_page = await _open(browser, floor_url, HOME)
            # Interleaved, so all see the same load on the machine.
            dashboard, volume, bare, floor = [], [], [], []
            for r, value in enumerate(_values(0, rounds)):
                dashboard += await _round_trips(page, *_dashboard_locators(page), [value])
                volume += await _round_trips(page, *_volume_locators(page), [10_000 + 137 * (r + 1)])
                bare += await _round_trips(bare_page, *_bare_locators(bare_page), [value])
                if floor_url is not None:
                    floor += await _round_trips(floor_page, *_dashboard_locators(floor_page), [value])
            print(f"{_LABEL}one session, first page, a new outcome value: {_ms(dashboard)}")
            print(f"{_LABEL}one session, first page, a new volume:        {_ms(volume)}")
            print(f"one session, bare app:                        {_ms(bare)}")
            ratio = statistics.median(dashboard) / statistics.median(bare)
            print(f"{_LABEL}first page / bare (medians): {ratio:.2f}x (goal 1.5x); a new volume: "
                  f"{statistics.median(volume) / statistics.median(bare):.2f}x")
            if floor_url is not None:
                print(f"one session, floor app (the page's elements, nothing computed): {_ms(floor)}")
                print(f"{_LABEL}first page / floor app (medians): "
                      f"{statistics.median(dashboard) / statistics.median(floor):.2f}x; floor / bare: "
                      f"{statistics.median(floor) / statistics.median(bare):.2f}x")
                await floor_context.close()
            await bare_context.close()
            if sessions < 2:
                await context.close()
                return

            if others_without_browser:
                mine, theirs = await _with_others_typing(page, dashboard_url, sessions - 1, rounds)
                print(f"{_LABEL}this tab while {sessions - 1} websocket sessions type their own values: {_ms(mine)}")
                print(f"{_LABEL}  the websocket sessions, to their run's end: {_ms([f for _, f in theirs])}")
                print(f"{_LABEL}p90 with {sessions} sessions / p90 one session (this tab): "
                      f"{_p90(mine) / _p90(dashboard):.2f}x (goal 3x); medians "
                      f"{statistics.median(mine) / statistics.median(dashboard):.2f}x")
                await context.close()
                return
            opened = [await _open(browser, dashboard_url, HOME) for _ in range(sessions - 1)]
            pages = [page] + [p for _, p in opened]
            together = await asyncio.gather(*(
                _round_trips(p, *_dashboard_locators(p), _values(1 if same_values else s + 1, together_rounds))
                for s, p in enumerate(pages)))
            every = [t for times in together for t in times]
            which = "the same" if same_values else "each its own"
            print(f"{_LABEL}{sessions} sessions at once ({which} values): {_ms(every)}")
            print(f"{_LABEL}p90 {sessions} sessions / p90 one session: {_p90(every) / _p90(dashboard):.2f}x (goal 3x)")
            for c, _ in opened:
                await c.close()
            await context.close()
        finally:
            await browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="predictions per run (five runs)")
    parser.add_argument("--rounds", type=int, default=5, help="values typed in the one session")
    parser.add_argument("--sessions", type=int, default=8, help="concurrent sessions")
    parser.add_argument("--together-rounds", type=int, default=3, help="values typed per concurrent session")
    parser.add_argument("--same-values", action="store_true", help="the concurrent sessions type the same values")
    parser.add_argument("--floor", action="store_true",
                        help="also time bench_app_floor.py's app (the page's elements, nothing computed)")
    parser.add_argument("--others-without-browser", action="store_true",
                        help="the other sessions are websocket clients (no rendering) typing while this tab does")
    parser.add_argument("--exclude-recommend", action="store_true",
                        help="the server answers valuecore.recommend from a memo: what the page costs without it")
    args = parser.parse_args()
    if chromium_path() is None:
        sys.exit("No Chromium at /usr/bin/chromium (or $CHROMIUM_PATH).")
    print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench-roundtrip-") as tmp:
        folder = Path(tmp) / "runs"
        folder.mkdir()
        synthetic_runs(folder, args.n, seed=0)
        (Path(tmp) / "bare.py").write_text(BARE_APP)
        os.environ["VALUE_DASHBOARD_DATA_ROOTS"] = tmp  # the folder source reads only inside allowed roots
        if args.exclude_recommend:
            global _LABEL
            _LABEL = "[recommend excluded] "
            patch = Path(tmp) / "patch"
            patch.mkdir()
            (patch / "sitecustomize.py").write_text(RECOMMEND_EXCLUDED)
            os.environ["PYTHONPATH"] = os.pathsep.join([str(patch), str(ROOT), os.environ.get("PYTHONPATH", "")])
            print("RECOMMEND EXCLUDED: the dashboard's server answers valuecore.recommend from a memo (one policy "
                  "refitted and evaluated per new value); these figures are the page without the recommendation.")
        (Path(tmp) / "floor.py").write_text(FLOOR_APP.format(root=str(ROOT), variant="select sliders"))
        with contextlib.ExitStack() as servers:
            dashboard_url, bare_url = (servers.enter_context(streamlit_server(timeout=120, script=script))
                                       for script in ("app.py", str(Path(tmp) / "bare.py")))
            floor_url = (servers.enter_context(streamlit_server(timeout=120, script=str(Path(tmp) / "floor.py")))
                         if args.floor else None)
            asyncio.run(_measure(f"{dashboard_url}/?src=folder:{folder}", bare_url, args.rounds, args.sessions,
                                 args.together_rounds, args.same_values, args.others_without_browser, floor_url))
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
