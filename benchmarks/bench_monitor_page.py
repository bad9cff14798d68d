"""Dashboard benchmark: the Monitor page's reruns on the breast_cancer sample (issue 23's leftover of 19).

Not a test: it prints figures and asserts nothing.

A session opens the app on ``sample:breast_cancer`` and moves to the Monitor page (its first visit: the
bootstrap bands of every charted model, the back-test and the class mix are computed once); then it
reruns the page unchanged (what a rerun costs when nothing the page shows changed: a widget elsewhere,
a click that reruns) and after moving one of its own widgets (the number of back-test chunks: the
back-test's frames and charts are computed again, the rest is served from the caches). With ``--profile``
the unchanged reruns are profiled (cProfile, the script thread) and the 25 costliest calls printed.

``--folder F`` instead opens the page on the run files of folder F (``--write-runs N`` first writes there the
five synthetic 10-class runs of N rows that ``bench_app_floor.py`` serves) and types ``--values`` new
wrong-answer values in the sidebar, as ``bench_app_floor.py`` does: the server's share of a new value, wall and
CPU seconds of this process (AppTest runs the page in it), the figure to read where the machine is loaded.
``--root DIR`` runs DIR's dashboard (e.g. ``git archive`` of an earlier commit), for a before-and-after table:
alternate the two roots run by run.

Run: ``python benchmarks/bench_monitor_page.py [--reruns 6] [--profile]``
     ``python benchmarks/bench_monitor_page.py --folder /tmp/runs --write-runs 100000``
     ``python benchmarks/bench_monitor_page.py --folder /tmp/runs [--values 4] [--root DIR] [--profile]``
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

ROOT = Path(__file__).resolve().parent.parent
if "--root" in sys.argv:  # the dashboard timed: DIR's, imported before anything of this checkout
    ROOT = Path(sys.argv[sys.argv.index("--root") + 1]).resolve()
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(ROOT / "app.py")
WRONG_BOX = "sidebar_v_wrong_input"


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=6)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--folder", help="run files to open (synthetic runs with --write-runs)")
    parser.add_argument("--write-runs", type=int, metavar="N", help="write 5 synthetic runs of N rows to --folder")
    parser.add_argument("--values", type=int, default=4, help="new values typed (with --folder)")
    parser.add_argument("--root", help="the checkout whose dashboard is timed")
    args = parser.parse_args(argv)
    if args.folder:
        return new_values(args)
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
        _profiled(lambda: [at.run() for _ in range(args.reruns)], profile)
        pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative").print_stats(25)
    return 0


def _profiled(action, profile):
    """Run ``action`` with ``profile`` on in the script threads AppTest starts meanwhile."""
    run = threading.Thread.run

    def profiled(self, *a, **k):
        profile.enable()
        try:
            return run(self, *a, **k)
        finally:
            profile.disable()

    threading.Thread.run = profiled
    try:
        action()
    finally:
        threading.Thread.run = run


def new_values(args) -> int:
    """The Monitor page on the folder's runs, then a new wrong-answer value at a time: seconds per value."""
    import os

    folder = Path(args.folder).resolve()
    if args.write_runs:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_app import synthetic_runs

        folder.mkdir(parents=True, exist_ok=True)
        synthetic_runs(folder, args.write_runs, same_items=True)
        print(f"wrote 5 synthetic runs of {args.write_runs:,} rows to {folder}")
        return 0
    os.environ["VALUE_DASHBOARD_DATA_ROOTS"] = str(folder)
    at = AppTest.from_file(APP, default_timeout=900)
    at.query_params["src"] = f"folder:{folder}"
    at.run()
    start, cpu = time.perf_counter(), time.process_time()
    at.switch_page("pages/monitor.py").run()
    first = (time.perf_counter() - start, time.process_time() - cpu)
    if at.exception:
        print("the page failed:", [e.value for e in at.exception])
        return 1
    walls, cpus, loads = [], [], [os.getloadavg()[0]]
    profile = cProfile.Profile() if args.profile else None
    for r in range(args.values):  # the values bench_app_floor.py types
        value = -4.0 - 0.5 * (r + 1) - 0.01
        start, cpu = time.perf_counter(), time.process_time()
        action = at.sidebar.number_input(key=WRONG_BOX).set_value(value).run
        _profiled(action, profile) if profile else action()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        if at.exception:
            print("the page failed:", [e.value for e in at.exception])
            return 1
    loads.append(os.getloadavg()[0])
    print(f"{ROOT}: first visit {first[0]:.2f} s ({first[1]:.2f} s CPU); a new value, median of {args.values}: "
          f"{statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU "
          f"(CPU {', '.join(f'{c:.2f}' for c in cpus)}; load {loads[0]:.1f}-{loads[-1]:.1f})")
    if profile:
        pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
