"""Start-up cost: ``import valuecore``, ``python -m valuecore --help`` and each ``COMMAND --help``.

Each command runs in a fresh interpreter, ``--repeat`` times, interleaved so
that a burst of load on the shared machine hits every command alike; the
table shows the minimum (the least disturbed run) and the median of the wall
time, and the minimum CPU time, in milliseconds, next to the bare interpreter
and ``import numpy``.
With ``--compare DIR`` the same commands also run against the ``valuecore``
package found in DIR (for instance an older release unpacked with
``git archive <ref> valuecore | tar -x -C DIR``), side by side, with the ratio.

Usage: ``python benchmarks/bench_import.py [--repeat 15] [--compare DIR]`` (``--repeat 20`` for the issue's
median over 20 fresh processes, printed last beside the bare interpreter's)
This is a benchmark, not a test: it asserts nothing about time. For where the
time goes, see ``python -X importtime -c "import valuecore"``.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Each command's own --help (``python -m valuecore COMMAND --help``), as listed by the top-level help.
SUBCOMMANDS = ("validate", "report", "apply", "table", "monitor", "voc", "aggregate")

COMMANDS = {
    "python (nothing)": ["-c", "pass"],
    "import numpy": ["-c", "import numpy"],
    "import valuecore": ["-c", "import valuecore"],
    "python -m valuecore --help": ["-m", "valuecore", "--help"],
    **{f"  {command} --help": ["-m", "valuecore", command, "--help"] for command in SUBCOMMANDS},
    "vc.fit_policy (numeric core)": ["-c", "import valuecore as vc; vc.fit_policy; vc.evaluate; vc.voc_curve"],
}
PACKAGE_COMMANDS = ("import valuecore", "python -m valuecore --help",
                    *(f"  {command} --help" for command in SUBCOMMANDS), "vc.fit_policy (numeric core)")


def run_once(args: list[str], where: Path) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one fresh interpreter, in seconds."""
    env = {**os.environ, "PYTHONPATH": str(where)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=where, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def byte_compile(package: Path) -> None:
    """Write the package's .pyc files first, as ``pip install`` does.

    Not by a first import: with PYTHONDONTWRITEBYTECODE set (as on this project's
    machine) that writes nothing, and every run would compile the package from source.
    """
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)


def measure(repeat: int, places: dict[str, Path]) -> dict[tuple[str, str], list[tuple[float, float]]]:
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    jobs = [(label, name) for label in places for name in COMMANDS if label == "this" or name in PACKAGE_COMMANDS]
    for _ in range(repeat):  # interleaved: each round runs every command once
        for label, name in jobs:
            wall, cpu = run_once(COMMANDS[name], places[label])
            times.setdefault((label, name), []).append((1000 * wall, 1000 * cpu))
    return times


def cell(samples: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in samples], [c for _, c in samples]
    return f"{min(walls):>6.0f} ({statistics.median(walls):>5.0f}) {min(cpus):>4.0f}/{statistics.median(cpus):<4.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--compare", type=Path, help="a directory holding another valuecore package")
    args = parser.parse_args()
    places = {"this": ROOT}
    if args.compare is not None:
        places["compare"] = args.compare.resolve()
    for place in places.values():
        byte_compile(place / "valuecore")
    times = measure(args.repeat, places)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Python {platform.python_version()} | {platform.machine()} | {os.cpu_count()} cores | "
          f"load average {load:.1f} at the end | {args.repeat} runs each, interleaved | package byte-compiled first")
    print("ms per fresh interpreter: wall minimum (wall median) and CPU minimum/median (user + system, which")
    print("a busy machine inflates less than wall time); ratios --compare / this checkout\n")
    header = f"{'command':<30} {'this checkout: wall (med) cpu min/med':>36}"
    if "compare" in places:
        header += f" {'--compare: wall (med) cpu min/med':>34} {'wall ratio':>10} {'cpu med':>8}"
    print(header)
    print("-" * len(header))
    for name in COMMANDS:
        this = times[("this", name)]
        line = f"{name:<30} {cell(this):>36}"
        if ("compare", name) in times:
            other = times[("compare", name)]
            ratio = min(w for w, _ in other) / min(w for w, _ in this)
            cpu_ratio = statistics.median(c for _, c in other) / statistics.median(c for _, c in this)
            line += f" {cell(other):>34} {ratio:>9.1f}x {cpu_ratio:>7.2f}x"
        print(line)
    bare, helped = times[("this", "python (nothing)")], times[("this", "python -m valuecore --help")]
    median_wall = [statistics.median(w for w, _ in t) for t in (bare, helped)]
    median_cpu = [statistics.median(c for _, c in t) for t in (bare, helped)]
    print(f"\n--help, medians of {args.repeat} fresh interpreters: wall {median_wall[1]:.0f} ms beside "
          f"`python -c pass` {median_wall[0]:.0f} ms (+{median_wall[1] - median_wall[0]:.0f} ms); CPU "
          f"{median_cpu[1]:.0f} ms beside {median_cpu[0]:.0f} ms (+{median_cpu[1] - median_cpu[0]:.0f} ms). "
          "Goal: --help within 100 ms.")
    if "compare" in places:
        other = [statistics.median(c for _, c in times[("compare", name)]) for name in PACKAGE_COMMANDS[1:-1]]
        this = [statistics.median(c for _, c in times[("this", name)]) for name in PACKAGE_COMMANDS[1:-1]]
        print(f"Every --help, CPU medians beyond `python -c pass`'s: this checkout {min(this) - median_cpu[0]:.0f}-"
              f"{max(this) - median_cpu[0]:.0f} ms, --compare {min(other) - median_cpu[0]:.0f}-"
              f"{max(other) - median_cpu[0]:.0f} ms.")
    medians = {name: statistics.median(w for w, _ in times[("this", name)]) for name in COMMANDS if "--help" in name}
    slowest = max((name for name in medians if name.startswith("  ")), key=medians.get)
    print(f"The slowest COMMAND --help by its median wall: {slowest.strip()}, {medians[slowest]:.0f} ms.")

if __name__ == "__main__":
    main()
