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

``--first-fit`` times instead what a small run's first ``fit_policy`` costs in a fresh interpreter: a
1,000-row CSV run file is loaded first (so the loader's modules are imported, as on the way from a file), then
the CPU time (``time.process_time``) of importing ``valuecore._engine.fitting`` and of that import plus
``presort`` plus ``fit_policy("threshold", ...)``, inside the child; fresh interpreters, this checkout's and
``--compare``'s in turn, the same file, the thresholds checked equal.
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


FIRST_FIT = """
import sys, time
import valuecore as vc
from valuecore.runs import load_run_file
run = load_run_file(sys.argv[1]).models["run"].splits["all"]
started = time.process_time()
fit_policy = vc.fit_policy  # its first use imports the fitting modules (valuecore's lazy attributes)
imported = time.process_time()
policy = vc.fit_policy("threshold", vc.presort(run), vc.UseCase(1, 0, -4))
fitted = time.process_time()
print((imported - started) * 1e3, (fitted - started) * 1e3, repr(policy.threshold))
"""


def first_fit(repeat: int, places: dict[str, Path]) -> None:
    """The ``--first-fit`` table: CPU ms of the first fit's imports, and with presort and the fit."""
    import tempfile

    import numpy as np

    rng = np.random.default_rng(3)
    proba = np.round(rng.dirichlet(np.ones(3), size=1000), 4)
    proba[:, 2] = np.round(1 - proba[:, 0] - proba[:, 1], 4)
    y_true = np.where(rng.random(1000) < 0.8, proba.argmax(axis=1), 0)
    samples = {label: ([], []) for label in places}
    thresholds = set()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.csv"
        path.write_text("y_true,proba_a,proba_b,proba_c\n" + "".join(
            f"{'abc'[y]},{p[0]:.4f},{p[1]:.4f},{p[2]:.4f}\n" for y, p in zip(y_true, proba)))
        for _ in range(repeat):
            for label, where in places.items():
                env = {**os.environ, "PYTHONPATH": str(where)}
                out = subprocess.run([sys.executable, "-c", FIRST_FIT, str(path)], cwd=where, env=env, check=True,
                                     capture_output=True, text=True).stdout.split()
                samples[label][0].append(float(out[0]))
                samples[label][1].append(float(out[1]))
                thresholds.add(out[2])
    assert len(thresholds) == 1, f"the checkouts chose other thresholds: {thresholds}"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"first fit_policy of a 1,000-row CSV run, CPU ms inside fresh interpreters ({repeat} each, in turn; "
          f"load {load:.1f} at the end; threshold {thresholds.pop()})")
    print(f"{'checkout':<10} {'import fitting: med (min-max)':>30} {'+ presort + fit: med (min-max)':>32}")
    for label, (imports, fits) in samples.items():
        print(f"{label:<10} {statistics.median(imports):>12.2f} ({min(imports):.2f}-{max(imports):.2f})"
              f"{statistics.median(fits):>18.2f} ({min(fits):.2f}-{max(fits):.2f})")


def cell(samples: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in samples], [c for _, c in samples]
    return f"{min(walls):>6.0f} ({statistics.median(walls):>5.0f}) {min(cpus):>4.0f}/{statistics.median(cpus):<4.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--compare", type=Path, help="a directory holding another valuecore package")
    parser.add_argument("--first-fit", action="store_true", help="time a small run's first fit_policy instead")
    args = parser.parse_args()
    places = {"this": ROOT}
    if args.compare is not None:
        places["compare"] = args.compare.resolve()
    for place in places.values():
        byte_compile(place / "valuecore")
    if args.first_fit:
        first_fit(args.repeat, places)
        return
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
