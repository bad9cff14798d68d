"""Time ``vc.recommend`` for an outcome value it has not seen, over five synthetic 10^6-row runs.

What the first page waits for after a new outcome value (typed or dragged): the
recommendation over every (model, rule) pair. Five seeded 10-class runs
(``bench_app.synthetic_runs``) are written to a temporary folder, loaded once and
tuned once (the pipeline is warmed with a first value, as the dashboard's cached
workspace is); then each round asks for a wrong-answer value not asked before.
Prints the second round and the median of ``--rounds`` rounds in seconds (wall clock), and the median CPU
time of this process (less sensitive to what else the machine runs).

Run: ``python benchmarks/bench_recommend.py [--n 1000000] [--rounds 5] [--profile]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import valuecore as vc  # noqa: E402
from bench_app import synthetic_runs  # noqa: E402


class _SortedOnce(vc.Pipeline):
    """Presorts each split once, as the dashboard's cached workspace does (``dashboard.data.Workspace``)."""

    def __init__(self, runs):
        super().__init__(runs)
        self._sorted_memo: dict = {}

    def sorted(self, model, split):
        if (model, split) not in self._sorted_memo:
            self._sorted_memo[model, split] = super().sorted(model, split)
        return self._sorted_memo[model, split]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one round instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        synthetic_runs(Path(folder), args.n)
        runs = vc.load_runs([folder]).models
    pipeline = _SortedOnce(runs)
    vc.recommend(pipeline, vc.UseCase(1.0, 0.0, -4.0))  # the workspace is warm before a user types
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(vc.recommend, pipeline, vc.UseCase(1.0, 0.0, -3.0625))
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)
        return
    seconds, cpu, chosen = [], [], []
    for i in range(args.rounds):
        # New to the pipeline every round, and each round names a model (no shortcut for "no model").
        values = vc.UseCase(1.0, 0.0, -3.0 - 0.125 * i)
        start, start_cpu = time.perf_counter(), time.process_time()
        recommendation = vc.recommend(pipeline, values)
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        chosen.append(f"{recommendation.model}/{recommendation.kind}/{recommendation.choice}")
    print(f"n={args.n} x 5 runs: recommend for a new value, second round {seconds[1]:.2f} s, "
          f"median of {args.rounds} {statistics.median(seconds):.2f} s "
          f"({', '.join(f'{s:.2f}' for s in seconds)}); CPU median {statistics.median(cpu):.2f} s; "
          f"chose {', '.join(chosen)}")


if __name__ == "__main__":
    main()
