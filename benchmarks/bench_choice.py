"""The choice study's tables: how often a chooser's model loses money on new items, its regret, what caution costs.

Seeded scenarios with known truth (``benchmarks/choice_study.py`` describes the generator and the scoring):
per cell (values x split size) and chooser, the share of scenarios whose choice loses money on 100,000 new
items (true value below handing every item over by more than 2 standard errors), the worst loss per item,
the mean regret against the best choice made on the new items (with its standard error over scenarios, and
as a multiple of the naive analyst's in the same scenarios), the share answered "no model", and the cost of
caution: the scenarios where it said no model while the oracle earned beyond 2 standard errors, and the
mean gain per item lost in those. Then the same over all cells, the use cases, the matrices, and the costly
cells (use cases with omega >= 20, and the rare costly matrices). The columns:

``scen`` scenarios; ``loses`` share losing money; ``worst`` the lowest true value minus the baseline;
``regret`` mean regret per item and ``±se`` its standard error over scenarios; ``/naive`` mean regret over
the naive analyst's; ``none`` share answering no model; ``miss`` no model where the oracle earned; ``lost``
mean oracle gain over the baseline in those; ``>orc`` choices beating the oracle beyond noise (must be 0);
``served`` scenarios whose policy JSON, read by the serving runtime, acted otherwise on some new item than
the recommendation in memory, out of those checked.

Run: ``python benchmarks/bench_choice.py [--quick] [--seeds N] [--workers W] [--choosers product,naive,...]
[--csv PATH] [--rows-csv PATH]``. A chooser is a name of ``choice_study.CHOOSERS`` or ``module:function``
(``benchmarks/`` is on the path). The default grid (30 cells x 20 seeds) takes about 8 minutes of CPU on one
core (25 minutes wall on the shared 2-core machine of 2026-11-29), ``--quick`` (11 cells x 5 seeds) under a
minute of CPU.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # one core per process: --workers says how many

import argparse  # noqa: E402
import csv  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import choice_study as cs  # noqa: E402

QUICK = {"omegas": (0, 4, 20, 1000), "sizes": (300, 1000), "costly": (100, 1000), "matrix_sizes": (300,),
         "seeds": 5}


def _numbers(text: str, kind=float) -> tuple:
    return tuple(kind(x) for x in text.split(",") if x.strip())


def _arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a small grid: omega 0, 4, 20, 1000 at n 300 and 1000, the matrices at n 300, 5 seeds")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per cell (default 20; 5 with --quick)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--omegas", default=None, help="use-case omegas, comma-separated (default 0,1,4,20,100,1000)")
    parser.add_argument("--sizes", default=None, help="split sizes (default 300,1000,3000)")
    parser.add_argument("--costly", default=None, help="costs of the rare class's confusion (default 20,100,1000; "
                                                       "empty for none)")
    parser.add_argument("--no-binary", action="store_true", help="leave out the binary asymmetric matrix")
    parser.add_argument("--choosers", default="product,naive,best_on_test",
                        help=f"comma-separated: {', '.join(cs.CHOOSERS)} or module:function")
    parser.add_argument("--n-new", type=int, default=cs.N_NEW, help="new items per scenario (the truth)")
    parser.add_argument("--calibration", default="none", help="the pipeline's recalibration (as report --calibration)")
    parser.add_argument("--serve-every", type=int, default=1,
                        help="check the JSON/serving path on scenarios whose seed is a multiple of this (0: never)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--worst", type=int, default=5, help="list this many worst choices of the first chooser")
    parser.add_argument("--csv", type=Path, help="write the summary table here")
    parser.add_argument("--rows-csv", type=Path, help="write one row per scenario and chooser here")
    return parser.parse_args(argv)


def _cells(args) -> list:
    if args.quick:
        cells = cs.default_cells(_numbers(args.omegas) if args.omegas else QUICK["omegas"],
                                 _numbers(args.sizes, int) if args.sizes else QUICK["sizes"], costly=(), binary=False)
        matrix_sizes = _numbers(args.sizes, int) if args.sizes else QUICK["matrix_sizes"]
        costly = _numbers(args.costly) if args.costly is not None else QUICK["costly"]
        cells += [cs.Cell("rare_costly", float(c), n) for c in costly for n in matrix_sizes]
        if not args.no_binary:
            cells += [cs.Cell("binary_asymmetric", math.nan, n) for n in matrix_sizes]
        return cells
    return cs.default_cells(_numbers(args.omegas) if args.omegas else cs.OMEGAS,
                            _numbers(args.sizes, int) if args.sizes else cs.SIZES,
                            _numbers(args.costly) if args.costly is not None else cs.COSTLY,
                            binary=not args.no_binary)


def _write_csv(path: Path, rows: list, fields) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(fields), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def _worst_lines(rows: list, chooser: str, k: int) -> list:
    mine = sorted((r for r in rows if r["chooser"] == chooser), key=lambda r: r["value"] - r["baseline"])[:k]
    lines = [f"the {len(mine)} worst choices of {chooser} (true value minus baseline per item):"]
    for r in mine:
        lines.append(
            f"  {r['cell']:<12} n={r['n']:<5} seed={r['seed']:<3} K={r['n_classes']:<2} rare={int(r['rare'])} "
            f"{r['model'] or 'no model'}/{r['rule'] or '-'} ({r['note'] or '-'}): {r['value'] - r['baseline']:+.4f} "
            f"± {r['se']:.4f}; oracle {r['oracle'] - r['baseline']:+.4f} ({r['oracle_name']})")
    return lines


def main(argv=None) -> int:
    args = _arguments(argv)
    seeds = args.seeds if args.seeds is not None else (QUICK["seeds"] if args.quick else 20)
    choosers = [c.strip() for c in args.choosers.split(",") if c.strip()]
    for name in choosers:
        cs.resolve_chooser(name)  # an unknown name fails before any work
    cells = _cells(args)
    load_start = os.getloadavg()
    start, start_cpu = time.perf_counter(), time.process_time()

    def progress(done, total):
        if done % 25 == 0 or done == total:
            print(f"  {done}/{total} scenarios, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)

    rows = cs.run_grid(cells, range(args.first_seed, args.first_seed + seeds), choosers, n_new=args.n_new,
                       calibration=args.calibration, serve_every=args.serve_every, workers=args.workers,
                       progress=progress)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    summary = cs.summarize(rows, choosers)
    print(f"choice study: {len(cells)} cells x {seeds} seeds ({args.first_seed}..{args.first_seed + seeds - 1}), "
          f"{args.n_new:,} new items each, calibration {args.calibration}, choosers {', '.join(choosers)}")
    print(cs.format_table(summary))
    print()
    for line in _worst_lines(rows, choosers[0], args.worst):
        print(line)
    seconds = {name: sum(r["seconds"] for r in rows if r["chooser"] == name) for name in choosers}
    print()
    print(f"elapsed {elapsed:.0f} s wall, {cpu:.0f} s CPU in this process, {args.workers} worker(s); CPU in the "
          f"choosers: {', '.join(f'{k} {v:.0f} s' for k, v in seconds.items())} (the first to ask for the "
          "recommendation pays for it)")
    print(f"load average at start {' '.join(f'{x:.2f}' for x in load_start)}, "
          f"at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.csv:
        _write_csv(args.csv, summary, cs.SUMMARY_FIELDS)
    if args.rows_csv:
        _write_csv(args.rows_csv, rows, cs.ROW_FIELDS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
