"""Class-mix estimation and re-tuning with many classes (issue 36): CPU seconds, in one process.

Runs of ``C`` classes, class-conditional Gaussians N(2 e_c, I) with their exact Bayes posteriors: a
labelled tuning split (uniform mix), a labelled test split and an unlabelled production split (a
Dirichlet(1) mix). For each ``C`` it times what ``report --adapt-to prod`` adds to ``report``: the
EM estimate with its interval (``estimate_priors``), and the adapted pipeline's document of the
recommended rule; then the Monitor page's class-mix table (``mix_table``, 6 chunks) on 300 + 300
items. CPU time (``time.process_time``) of this process, first calls excluded (imports). The document is
``adapted_policy_document`` of one threshold, as ``report --adapt-to`` builds it before the recommendation.

Usage: ``python benchmarks/bench_class_mix.py [--classes 20,100,200] [--rows 150,125,125]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import valuecore as vc  # noqa: E402
from valuecore.monitoring import estimate_priors  # noqa: E402


def split(n: int, mix, rng, labelled: bool = True) -> vc.Predictions:
    n_classes = len(mix)
    y = rng.choice(n_classes, size=n, p=mix)
    logits = 2.0 * (rng.standard_normal((n, n_classes)) + 2.0 * np.eye(n_classes)[y])
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    classes = tuple(f"c{k}" for k in range(n_classes))
    return vc.Predictions.from_proba(proba, y_true=np.asarray(classes)[y] if labelled else None, classes=classes)


def run_of(n_classes: int, rows, rng) -> vc.runs.ModelRun:
    uniform = np.full(n_classes, 1 / n_classes)
    splits = {"val": split(rows[0], uniform, rng), "test": split(rows[1], uniform, rng),
              "prod": split(rows[2], rng.dirichlet(np.ones(n_classes)), rng, labelled=False)}
    return vc.runs.ModelRun("model", "model.csv", None, splits["val"].classes, splits)


def seconds(work) -> tuple[float, object]:
    start = time.process_time()
    out = work()
    return time.process_time() - start, out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", default="20,100,200")
    parser.add_argument("--rows", default="150,125,125", help="rows of val, test, prod")
    args = parser.parse_args(argv)
    rows = [int(r) for r in args.rows.split(",")]
    values = vc.UseCase(1.0, 0.0, -4.0)
    from dashboard.views.monitor import mix_table
    from valuecore.monitoring import adapted_policy_document

    warm = run_of(3, rows, np.random.default_rng(0))  # imports and first calls, not timed
    estimate_priors(warm.splits["prod"], warm.splits["val"])
    print(f"rows {rows} (val, test, prod); CPU seconds")
    print(f"{'classes':>8} {'EM steps':>9} {'estimate':>9} {'adapted document':>17} {'Monitor mix table':>18}")
    for n_classes in (int(c) for c in args.classes.split(",")):
        rng = np.random.default_rng(n_classes)
        run = run_of(n_classes, rows, rng)
        estimating, estimate = seconds(lambda: estimate_priors(run.splits["prod"], run.splits["val"]))
        documenting, _ = seconds(lambda: adapted_policy_document({"model": run}, values, "prod", tune_split="val",
                                                                 eval_split="test", with_interval=False, rng=0))
        reference, watched = split(300, np.full(n_classes, 1 / n_classes), rng), split(
            300, rng.dirichlet(np.ones(n_classes)), rng, labelled=False)
        policy = vc.fit_policy("class_thresholds", vc.presort(reference), values)
        tabling, _ = seconds(lambda: mix_table(reference, watched, policy, values, "class_thresholds", 6))
        print(f"{n_classes:>8} {estimate.iterations:>9} {estimating:>9.2f} {documenting:>17.2f} {tabling:>18.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
