"""Value under prior shift: a seeded simulation of the class-mix estimates and of re-tuning for them.

The data are calibrated by construction: C classes, class-conditional
Gaussians N(s e_c, I) in R^C, and the model's probabilities are the exact
Bayes posteriors under the training mix (uniform). The labelled tuning split
follows the training mix; production (10^4 items) follows another mix, its
labels held back to measure the *realised* value.

For each mix and replicate it prints

- the largest error of the EM and BBSE estimates of the production mix, and
  how often each class's 95% interval holds its true share (coverage);
- per omega and rule (``threshold``, ``class_thresholds``), the realised
  value per item on production of the policy tuned on the tuning split as it
  is (unadapted), re-tuned for the EM estimate (adapted), and re-tuned for the
  true mix (oracle re-weighting); the gap adapted - unadapted, its smallest
  value over replicates; the same gap for the policy tuned without labels on
  production itself, its posteriors adjusted to the EM estimate (label-free);
  and the error of the label-free estimate of the value on production with the
  posteriors adjusted to the estimated mix (and without).

Usage: ``python benchmarks/bench_prior_shift.py [--replicates 20] [--seed 2026] [--n-resamples 200]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import valuecore as vc  # noqa: E402
from valuecore.monitoring import (  # noqa: E402
    adjust_predictions,
    estimate_priors,
    estimate_under_priors,
    reweight_to_priors,
)

SEPARATION = 2.0
N_TUNE = 5_000
N_PRODUCTION = 10_000
OMEGAS = (1.0, 4.0, 20.0)
KINDS = ("threshold", "class_thresholds")
MIXES = (
    (0.9, 0.1),
    (0.1, 0.9),
    (0.7, 0.2, 0.1),
    (0.1, 0.1, 0.8),
    (0.5, 0.2, 0.15, 0.1, 0.05),
    (0.05, 0.05, 0.1, 0.2, 0.6),
)


def sample(mix, n: int, rng, *, labelled: bool = True) -> vc.Predictions:
    """n items of class mix ``mix``, with the exact posteriors under the uniform training mix."""
    n_classes = len(mix)
    y = rng.choice(n_classes, size=n, p=np.asarray(mix))
    x = rng.standard_normal((n, n_classes)) + SEPARATION * np.eye(n_classes)[y]
    logits = SEPARATION * x  # log N(x; s e_c, I) up to a term common to every class; uniform priors
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    classes = tuple(f"c{k}" for k in range(n_classes))
    return vc.Predictions.from_proba(proba, y_true=np.asarray(classes)[y] if labelled else None, classes=classes)


def replicate(mix, rng, n_resamples: int = 200) -> tuple[dict, list[dict]]:
    """One replicate: (estimation record, value records per omega and rule)."""
    n_classes = len(mix)
    truth = np.asarray(mix)
    tune = sample(np.full(n_classes, 1 / n_classes), N_TUNE, rng)
    production = sample(mix, N_PRODUCTION, rng)
    unlabelled = vc.Predictions.from_proba(production.proba, classes=production.classes)
    em = estimate_priors(unlabelled, tune, "em")
    bbse = estimate_priors(unlabelled, tune, "bbse", n_resamples=n_resamples, rng=rng)
    estimation = {"classes": n_classes, "mix": mix, "em_error": np.max(np.abs(np.array(em.priors) - truth)),
                  "bbse_error": np.max(np.abs(np.array(bbse.priors) - truth)),
                  "em_covered": np.mean((np.array(em.low) <= truth) & (truth <= np.array(em.high))),
                  "bbse_covered": np.mean((np.array(bbse.low) <= truth) & (truth <= np.array(bbse.high))),
                  "em_iterations": em.iterations, "em_converged": em.converged}
    sorted_tune = vc.presort(tune)
    adapted_tune = vc.presort(reweight_to_priors(tune, em.priors))
    oracle_tune = vc.presort(reweight_to_priors(tune, truth))
    production_adjusted = vc.presort(adjust_predictions(unlabelled, em))
    values = []
    for omega in OMEGAS:
        use_case = vc.UseCase.from_omega(omega)
        for kind in KINDS:
            unadapted = vc.fit_policy(kind, sorted_tune, use_case)
            adapted = vc.fit_policy(kind, adapted_tune, use_case)
            oracle = vc.fit_policy(kind, oracle_tune, use_case)
            label_free = vc.fit_policy(kind, production_adjusted, use_case, estimate=True)
            realised = vc.evaluate(adapted, production, use_case).value_per_item
            values.append({
                "classes": n_classes, "mix": mix, "omega": omega, "rule": kind,
                "unadapted": vc.evaluate(unadapted, production, use_case).value_per_item,
                "adapted": realised,
                "oracle": vc.evaluate(oracle, production, use_case).value_per_item,
                "label_free": vc.evaluate(label_free, production, use_case).value_per_item,
                "estimate_error": estimate_under_priors(adapted, unlabelled, use_case, em).value_per_item - realised,
                "naive_estimate_error": vc.estimate(adapted, unlabelled, use_case).value_per_item - realised,
            })
    return estimation, values


def simulate(replicates: int, seed: int, n_resamples: int = 200, mixes=MIXES) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(estimation frame, value frame), one row per replicate (and omega and rule)."""
    rng = np.random.default_rng(seed)
    estimation, values = [], []
    for mix in mixes:
        for _ in range(replicates):
            record, rows = replicate(mix, rng, n_resamples)
            estimation.append(record)
            values.extend(rows)
    return pd.DataFrame(estimation), pd.DataFrame(values)


def summarise(estimation: pd.DataFrame, values: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    mix_text = lambda frame: frame["mix"].map(lambda m: "/".join(f"{p:g}" for p in m))  # noqa: E731
    estimation = estimation.assign(mix=mix_text(estimation))
    est = estimation.groupby("mix", sort=False).agg(
        classes=("classes", "first"), em_max_error=("em_error", "max"), bbse_max_error=("bbse_error", "max"),
        em_coverage=("em_covered", "mean"), bbse_coverage=("bbse_covered", "mean"),
        em_iterations=("em_iterations", "max"), all_converged=("em_converged", "all"))
    values = values.assign(mix=mix_text(values), gap=values["adapted"] - values["unadapted"],
                           label_free_gap=values["label_free"] - values["unadapted"],
                           abs_estimate_error=values["estimate_error"].abs(),
                           abs_naive_error=values["naive_estimate_error"].abs())
    val = values.groupby(["mix", "omega", "rule"], sort=False).agg(
        unadapted=("unadapted", "mean"), adapted=("adapted", "mean"), oracle=("oracle", "mean"),
        mean_gap=("gap", "mean"), min_gap=("gap", "min"), label_free_mean_gap=("label_free_gap", "mean"),
        label_free_min_gap=("label_free_gap", "min"), estimate_mae=("abs_estimate_error", "mean"),
        naive_mae=("abs_naive_error", "mean"))
    return est.reset_index(), val.reset_index()


def worked_example(seed: int, mix=(0.1, 0.9), n: int = 1000, omega: float = 4.0) -> pd.DataFrame:
    """The breast_cancer sample: the test split resampled to ``mix`` (benign/malignant), labels hidden.

    Per model and rule: the estimated mix (EM, BBSE), and the realised value per item on the resampled
    split of the policy tuned on ``val`` as it is and re-tuned for the EM estimate.
    """
    root = Path(__file__).resolve().parent.parent / "sample_runs" / "breast_cancer"
    runs = vc.load_runs([str(root)]).models
    rng = np.random.default_rng(seed)
    use_case = vc.UseCase.from_omega(omega)
    rows = []
    for name, run in sorted(runs.items()):
        test, tune = run.splits["test"], run.splits["val"]
        picks = np.concatenate([rng.choice(np.flatnonzero(test.y_true == k), size=int(round(share * n)))
                                for k, share in enumerate(mix)])
        production = test.subset(picks)
        unlabelled = vc.Predictions.from_proba(production.proba, classes=production.classes)
        em = estimate_priors(unlabelled, tune, "em")
        bbse = estimate_priors(unlabelled, tune, "bbse", rng=rng)
        for kind in KINDS:
            unadapted = vc.fit_policy(kind, vc.presort(tune), use_case)
            adapted = vc.fit_policy(kind, vc.presort(reweight_to_priors(tune, em.priors)), use_case)
            rows.append({"model": name, "rule": kind, "val_mix": run.classes[1] + f" {em.reference_priors[1]:.2f}",
                         "em": em.priors[1], "em_low": em.low[1], "em_high": em.high[1], "bbse": bbse.priors[1],
                         "unadapted": vc.evaluate(unadapted, production, use_case).value_per_item,
                         "adapted": vc.evaluate(adapted, production, use_case).value_per_item,
                         "estimated": estimate_under_priors(adapted, unlabelled, use_case, em).value_per_item})
    frame = pd.DataFrame(rows)
    return frame.assign(gap=frame["adapted"] - frame["unadapted"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--n-resamples", type=int, default=200)
    parser.add_argument("--example", action="store_true",
                        help="only the worked example on sample_runs/breast_cancer (test resampled to 10/90)")
    args = parser.parse_args(argv)
    if args.example:
        print(f"seed {args.seed}: breast_cancer test split resampled to 1000 items, 10% benign / 90% malignant "
              "(share of malignant shown), omega 4, tuned on val")
        print(worked_example(args.seed).to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        return 0
    est, val = summarise(*simulate(args.replicates, args.seed, args.n_resamples))
    print(f"seed {args.seed}, {args.replicates} replicates per mix, tuning split {N_TUNE} items (uniform mix), "
          f"production {N_PRODUCTION} items, separation {SEPARATION}, BBSE bootstrap {args.n_resamples} resamples")
    print("\nclass-mix estimates (largest error over replicates; share of class intervals holding the truth)")
    print(est.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print("\nrealised value per item on production (mean over replicates); gap = adapted - unadapted")
    print(val.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
