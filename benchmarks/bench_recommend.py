"""Time ``vc.recommend`` for an outcome value it has not seen, over five synthetic 10^6-row runs.

What the first page waits for after a new outcome value (typed or dragged): the
recommendation over every (model, rule) pair. Five seeded 10-class runs
(``bench_app.synthetic_runs``) are written to a temporary folder, loaded once and
tuned once (the pipeline is warmed with a first value, as the dashboard's cached
workspace is); then two series of rounds, each round a value not asked before:

- ``keeps``: the wrong-answer value moves by 2**-20 from the warm value each round,
  which keeps every (model, rule)'s decisions (the script checks the first round and says so);
- ``moves``: the wrong-answer value steps by 0.125 (-3, -3.125, ...), which moves them.

Prints, per series, the median wall time of ``--rounds`` rounds, every round, the
median CPU time of this process, the load average at start and end, and what was
chosen (the same before and after a change). ``--core PATH`` imports ``valuecore``
from another checkout (e.g. the base commit's, run one after the other to compare).
``--same-items`` writes the five runs on the same items (``bench_app_floor.py``'s runs,
as models compared on one test set are): the verdict then pairs the best rule with
each of the 29 others item by item, where runs on different items are compared by
their intervals alone.

Run: ``python benchmarks/bench_recommend.py [--n 1000000] [--rounds 5] [--same-items] [--profile] [--core PATH]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one round instead")
    parser.add_argument("--same-items", action="store_true", help="every run on the same items (paired verdict)")
    parser.add_argument("--core", type=Path, default=ROOT, help="the checkout whose valuecore is timed")
    return parser.parse_args()


ARGS = _arguments()
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ARGS.core.resolve()))

import numpy as np  # noqa: E402
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


# No 4-decimal confidence sits at this value's expected-value cut (4.1 / 5.1), so a change of 2**-20 keeps it.
WARM = -4.1


def _decisions(pipeline, recommendation, values) -> dict:
    """Each candidate's actions on its evaluated split (not timed)."""
    decided = {}
    for c in recommendation.candidates:
        split = pipeline.predictions(c.model, pipeline.plan(c.model).eval_split)
        decided[c.model, c.kind] = c.policy.decide(split, pipeline.values_for(c.model, values))
    return decided


def _series(pipeline, wrongs, before: dict):
    """(wall seconds, CPU seconds, choices, pairs whose decisions moved in the first round), a new value a round."""
    seconds, cpu, chosen, moved = [], [], [], None
    for wrong in wrongs:
        values = vc.UseCase(1.0, 0.0, wrong)
        start, start_cpu = time.perf_counter(), time.process_time()
        recommendation = vc.recommend(pipeline, values)
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        chosen.append(f"{recommendation.model}/{recommendation.kind}/{recommendation.choice}")
        if moved is None:
            after = _decisions(pipeline, recommendation, values)
            moved = sum(not np.array_equal(after[key], before.get(key)) for key in after)
    return seconds, cpu, chosen, moved


def main() -> None:
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        synthetic_runs(Path(folder), ARGS.n, same_items=ARGS.same_items)
        runs = vc.load_runs([folder]).models
    pipeline = _SortedOnce(runs)
    start = time.perf_counter()
    warm = vc.recommend(pipeline, vc.UseCase(1.0, 0.0, WARM))  # the workspace is warm before a user types
    first = time.perf_counter() - start
    if ARGS.profile:
        import cProfile
        import pstats

        for name, wrong in (("keeps", WARM - 2.0**-20), ("moves", -3.0625)):
            profiler = cProfile.Profile()
            profiler.runcall(vc.recommend, pipeline, vc.UseCase(1.0, 0.0, wrong))
            print(f"--- {name} (wrong = {wrong})")
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        return
    warm_decisions = _decisions(pipeline, warm, vc.UseCase(1.0, 0.0, WARM))
    print(f"valuecore from {ARGS.core.resolve()}; n={ARGS.n} x 5 runs"
          f"{' on the same items' if ARGS.same_items else ''}; load average at start "
          f"{' '.join(f'{x:.2f}' for x in load_start)}; the first recommend (fits, presorts) {first:.2f} s")
    for name, wrongs in (("keeps", [WARM - 2.0**-20 * (i + 1) for i in range(ARGS.rounds)]),
                         ("moves", [-3.0 - 0.125 * i for i in range(ARGS.rounds)])):
        seconds, cpu, chosen, moved = _series(pipeline, wrongs, warm_decisions)
        print(f"{name}: recommend for a new value, median of {len(wrongs)} {1000 * statistics.median(seconds):.1f} ms "
              f"({', '.join(f'{1000 * s:.1f}' for s in seconds)}); CPU median {1000 * statistics.median(cpu):.1f} ms; "
              f"first round: {moved} of {len(warm_decisions)} (model, rule) pairs decide otherwise than at the warm "
              f"value; chose {', '.join(sorted(set(chosen)))}")
    print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
