"""Start-up cost: ``import valuecore`` and ``python -m valuecore --help``.

Each command runs in a fresh interpreter, ``--repeat`` times, interleaved so
that a burst of load on the shared machine hits every command alike; the
table shows the minimum (the least disturbed run) and the median of the wall
time, in milliseconds, next to the bare interpreter and ``import numpy``.
With ``--compare DIR`` the same commands also run against the ``valuecore``
package found in DIR (for instance an older release unpacked with
``git archive <ref> valuecore | tar -x -C DIR``), side by side, with the ratio.

Usage: ``python benchmarks/bench_import.py [--repeat 15] [--compare DIR]``
This is a benchmark, not a test: it asserts nothing about time. For where the
time goes, see ``python -X importtime -c "import valuecore"``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COMMANDS = {
    "python (nothing)": ["-c", "pass"],
    "import numpy": ["-c", "import numpy"],
    "import valuecore": ["-c", "import valuecore"],
    "python -m valuecore --help": ["-m", "valuecore", "--help"],
    "vc.fit_policy (numeric core)": ["-c", "import valuecore as vc; vc.fit_policy; vc.evaluate; vc.voc_curve"],
}
PACKAGE_COMMANDS = ("import valuecore", "python -m valuecore --help", "vc.fit_policy (numeric core)")


def wall_time(args: list[str], where: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(where)}
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=where, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(repeat: int, places: dict[str, Path]) -> dict[tuple[str, str], list[float]]:
    times: dict[tuple[str, str], list[float]] = {}
    jobs = [(label, name) for label in places for name in COMMANDS if label == "this" or name in PACKAGE_COMMANDS]
    for _ in range(repeat):  # interleaved: each round runs every command once
        for label, name in jobs:
            times.setdefault((label, name), []).append(1000 * wall_time(COMMANDS[name], places[label]))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--compare", type=Path, help="a directory holding another valuecore package")
    args = parser.parse_args()
    places = {"this": ROOT}
    if args.compare is not None:
        places["compare"] = args.compare.resolve()
    for place in places.values():
        wall_time(COMMANDS["import valuecore"], place)  # write the .pyc files first
    times = measure(args.repeat, places)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Python {platform.python_version()} | {platform.machine()} | {os.cpu_count()} cores | "
          f"load average {load:.1f} at the end | {args.repeat} runs each, interleaved")
    print("wall time per fresh interpreter, ms: minimum (median)\n")
    header = f"{'command':<30} {'this checkout':>18}"
    if "compare" in places:
        header += f" {'--compare':>18} {'min ratio':>10}"
    print(header)
    print("-" * len(header))
    for name in COMMANDS:
        this = times[("this", name)]
        line = f"{name:<30} {min(this):>8.0f} ({statistics.median(this):>6.0f})"
        if ("compare", name) in times:
            other = times[("compare", name)]
            line += f" {min(other):>8.0f} ({statistics.median(other):>6.0f}) {min(other) / min(this):>9.1f}x"
        print(line)


if __name__ == "__main__":
    main()
