"""Dashboard benchmark: the Monitor page's reruns on the breast_cancer sample (issue 23's leftover of 19).

Not a test: it prints figures and asserts nothing.

A session opens the app on ``sample:breast_cancer`` and moves to the Monitor page (its first visit: the
bootstrap bands of every charted model, the back-test and the class mix are computed once); then it
reruns the page unchanged (what a rerun costs when nothing the page shows changed: a widget elsewhere,
a click that reruns) and after moving one of its own widgets (the number of back-test chunks: the
back-test's frames and charts are computed again, the rest is served from the caches). With ``--profile``
the unchanged reruns are profiled (cProfile, the script thread) and the 25 costliest calls printed.

Run: ``python benchmarks/bench_monitor_page.py [--reruns 6] [--profile]``
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import threading
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=6)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params["src"] = "sample:breast_cancer"
    at.run()
    first = timed(lambda: at.switch_page("pages/monitor.py").run())
    if at.exception:
        print("the page failed:", [e.value for e in at.exception])
        return 1
    unchanged = [timed(at.run) for _ in range(args.reruns)]
    moved = [timed(lambda n=n: at.slider(key="monitor_backtest_chunks").set_value(n).run())
             for n in range(6, 6 + args.reruns)]
    print("| what | seconds (median) | all |")
    print("| --- | --- | --- |")
    print(f"| first visit of the Monitor page | {first:.2f} | |")
    for label, times in (("rerun, nothing changed", unchanged), ("back-test chunks moved", moved)):
        print(f"| {label} | {statistics.median(times):.2f} | {', '.join(f'{t:.2f}' for t in times)} |")
    if args.profile:
        profile = cProfile.Profile()
        run = threading.Thread.run

        def profiled(self, *a, **k):  # AppTest runs the script in a thread of its own
            profile.enable()
            try:
                return run(self, *a, **k)
            finally:
                profile.disable()

        threading.Thread.run = profiled
        for _ in range(args.reruns):
            at.run()
        threading.Thread.run = run
        pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
