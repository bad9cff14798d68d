"""Write the sample run files: real scikit-learn model outputs, byte-for-byte reproducible.

Usage::

    python sample_runs/make_sample_runs.py [--out DIR] [--small]

Only datasets that ship with scikit-learn are used (no download). Each set is
a folder of run files, one CSV per model, in the format of docs/run-format.md:

``digits/``
    10-class handwritten digits; splits ``val`` and ``test``.
``digits_shifted/``
    The same fitted models on the test images with Gaussian pixel noise (out
    of distribution), plus the clean ``val`` split for tuning.
``breast_cancer/``
    Binary (``benign``/``malignant``, malignant second); splits ``val``,
    ``test`` and an unlabeled ``prod`` split with hourly timestamps whose
    inputs get noisier week after week.
``diabetes/``
    Binary (disease progression a year on ``low``/``high``, split at the
    median; ``high`` second); splits ``val`` and ``test``, each row with two
    real group attributes as segment columns: ``sex`` (coded ``1``/``2`` as
    in the source) and ``age_band`` (``under_50``/``50_plus``). The segments
    hold about 50 rows per split, deliberately small.

The training split is used for fitting only and is not written. ``--small``
writes two models and fewer rows (for tests). ``generated_with.txt`` records
the library versions: the same versions give the same bytes. Existing
``*.csv`` files in the set folders under ``--out`` are removed first,
so a model dropped from this script does not linger.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

SEED = 0
DECIMALS = 6
SMALL_MODELS = ("logreg", "naive_bayes")
SMALL_ROWS = 120  # rows per written split in --small mode
DIGITS_NOISE_SD = 0.3  # pixels scaled to [0, 1]; 0.3 is about 5 of the 16 grey levels
PROD_START = pd.Timestamp("2024-03-04T00:00:00")
PROD_HOURS = 6 * 7 * 24  # six weeks, one prediction per hour
PROD_MAX_NOISE = 0.8  # in units of each feature's training standard deviation
AGE_BAND_FROM = 50  # years; the median age of the 442 diabetes patients
SETS = ("digits", "digits_shifted", "breast_cancer", "diabetes")
FINGERPRINT_FILE = "generated_with.txt"


def make_models(small: bool, standardize: bool) -> dict:
    """Unfitted estimators by model name (file stem), all with fixed seeds and n_jobs=1.

    ``standardize`` puts a StandardScaler in front of the scale-sensitive
    models (features on different scales, as in breast_cancer). Digit pixels
    are already on one [0, 1] scale and are left alone; there Gaussian naive
    Bayes gets a larger variance floor, because a pixel that is blank in every
    training image otherwise has a near-zero variance and a single noisy pixel
    decides the class (accuracy falls to chance on noisy images).
    """
    scaled = (lambda model: make_pipeline(StandardScaler(), model)) if standardize else (lambda model: model)
    models = {
        "logreg": scaled(LogisticRegression(max_iter=5000)),
        "mlp": scaled(MLPClassifier(hidden_layer_sizes=(32,), alpha=1e-3, max_iter=400, random_state=SEED)),
        "random_forest": RandomForestClassifier(n_estimators=200, random_state=SEED, n_jobs=1),
        "naive_bayes": GaussianNB() if standardize else GaussianNB(var_smoothing=1e-2),
        # Platt scaling on 5 unshuffled folds, refit on all training data; this is what
        # SVC(probability=True), deprecated in scikit-learn 1.9, recommends instead.
        "svm_rbf": scaled(CalibratedClassifierCV(SVC(random_state=SEED), method="sigmoid", ensemble=False)),
    }
    if small:
        models = {name: models[name] for name in SMALL_MODELS}
    return models


def round_rows(proba: np.ndarray) -> np.ndarray:
    """Round (n, C) probabilities to DECIMALS and keep each row summing to 1.

    Rounding alone can leave a row off by up to C * 5e-7; absorbing the
    difference in the largest entry keeps the argmax and makes the written
    rows sum to 1 within 1e-12.
    """
    rounded = np.round(proba, DECIMALS)
    rows = np.arange(rounded.shape[0])
    top = np.argmax(rounded, axis=1)
    others = rounded.sum(axis=1) - rounded[rows, top]
    rounded[rows, top] = np.round(1.0 - others, DECIMALS)
    return rounded + 0.0  # turns -0.0 into 0.0 so the text never shows "-0.0"


def run_frame(ids, split: str, y_true, proba: np.ndarray, classes, timestamps=None, segments=None) -> pd.DataFrame:
    """One split of one model as rows of a run file; ``segments`` maps column names to (n,) group values."""
    frame = pd.DataFrame({"id": np.asarray(ids), "split": split})
    if timestamps is not None:
        frame["timestamp"] = timestamps
    for column, values in (segments or {}).items():
        frame[column] = np.asarray(values)
    frame["y_true"] = y_true
    rounded = round_rows(proba)
    for j, label in enumerate(classes):
        frame[f"proba_{label}"] = rounded[:, j]
    return frame


def write_run(frame: pd.DataFrame, path: Path) -> None:
    # Shortest round-trip float text and "\n" endings make the bytes depend on the values only.
    frame.to_csv(path, index=False, lineterminator="\n")


def summarise(set_name: str, model: str, split: str, y_true, proba: np.ndarray, classes) -> dict:
    """Accuracy and a 15-bin top-label ECE, for the printed table and the README."""
    proba = round_rows(proba)
    predicted = np.asarray(classes)[np.argmax(proba, axis=1)]
    confidence = proba.max(axis=1)
    correct = predicted == np.asarray(y_true)
    bins = np.minimum((confidence * 15).astype(int), 14)
    ece = sum(
        abs(correct[bins == b].mean() - confidence[bins == b].mean()) * (bins == b).mean()
        for b in range(15)
        if (bins == b).any()
    )
    return {
        "set": set_name,
        "model": model,
        "split": split,
        "n": len(correct),
        "accuracy": round(float(correct.mean()), 4),
        "mean_confidence": round(float(confidence.mean()), 4),
        "ece": round(float(ece), 4),
    }


def three_way_split(n: int, y, fractions: tuple[float, ...], seed: int) -> list[np.ndarray]:
    """Stratified index sets with the given fractions (summing to 1), sorted."""
    parts = []
    rest = np.arange(n)
    remaining = 1.0
    for fraction in fractions[:-1]:
        taken, rest = train_test_split(
            rest, train_size=fraction / remaining, stratify=np.asarray(y)[rest], random_state=seed
        )
        parts.append(np.sort(taken))
        remaining -= fraction
    parts.append(np.sort(rest))
    return parts


def make_digits(out: Path, small: bool, summary: list) -> None:
    data = load_digits()
    X, y = data.data / 16.0, data.target
    classes = list(range(10))
    train, val, test = three_way_split(len(y), y, (0.5, 0.25, 0.25), SEED)
    if small:
        val, test = val[:SMALL_ROWS], test[:SMALL_ROWS]
    noise = np.random.default_rng(SEED + 1).normal(0.0, DIGITS_NOISE_SD, size=X[test].shape)
    X_test_noisy = np.clip(X[test] + noise, 0.0, 1.0)
    for name, model in make_models(small, standardize=False).items():
        fitted = clone(model).fit(X[train], y[train])
        p_val = fitted.predict_proba(X[val])
        p_test = fitted.predict_proba(X[test])
        p_noisy = fitted.predict_proba(X_test_noisy)
        val_rows = run_frame(val, "val", y[val], p_val, classes)
        write_run(
            pd.concat([val_rows, run_frame(test, "test", y[test], p_test, classes)]),
            out / "digits" / f"{name}.csv",
        )
        write_run(
            pd.concat([val_rows, run_frame(test, "test", y[test], p_noisy, classes)]),
            out / "digits_shifted" / f"{name}.csv",
        )
        summary.append(summarise("digits", name, "test", y[test], p_test, classes))
        summary.append(summarise("digits_shifted", name, "test", y[test], p_noisy, classes))


def text_ids(rows) -> list[str]:
    return [f"bc-{i:03d}" for i in rows]


def make_breast_cancer(out: Path, small: bool, summary: list) -> None:
    data = load_breast_cancer()
    X = data.data
    # scikit-learn codes malignant as 0; as text labels, sorted classes put malignant second.
    y = np.where(data.target == 0, "malignant", "benign")
    classes = ["benign", "malignant"]
    train, val, test, pool = three_way_split(len(y), y, (0.4, 0.2, 0.2, 0.2), SEED)
    hours = SMALL_ROWS if small else PROD_HOURS
    if small:
        val, test = val[:SMALL_ROWS], test[:SMALL_ROWS]
    rng = np.random.default_rng(SEED + 2)
    # Production: held-out patients drawn with replacement, measured with noise that
    # grows linearly over the six weeks (a slowly degrading instrument).
    drawn = rng.choice(pool, size=hours, replace=True)
    drift = PROD_MAX_NOISE * np.arange(hours) / max(hours - 1, 1)
    feature_sd = X[train].std(axis=0)
    X_prod = X[drawn] + rng.normal(size=(hours, X.shape[1])) * feature_sd * drift[:, None]
    X_prod = np.maximum(X_prod, 0.0)  # all 30 features are non-negative measurements
    prod_times = (PROD_START + pd.to_timedelta(np.arange(hours), unit="h")).strftime("%Y-%m-%dT%H:%M:%S")
    prod_ids = [f"prod-{i:05d}" for i in range(hours)]

    for name, model in make_models(small, standardize=True).items():
        fitted = clone(model).fit(X[train], y[train])
        assert list(fitted.classes_) == classes
        p_prod = fitted.predict_proba(X_prod)
        frames = [
            run_frame(text_ids(val), "val", y[val], fitted.predict_proba(X[val]), classes, timestamps=""),
            run_frame(text_ids(test), "test", y[test], fitted.predict_proba(X[test]), classes, timestamps=""),
            run_frame(prod_ids, "prod", "", p_prod, classes, timestamps=prod_times),
        ]
        write_run(pd.concat(frames), out / "breast_cancer" / f"{name}.csv")
        summary.append(summarise("breast_cancer", name, "test", y[test], fitted.predict_proba(X[test]), classes))
        # Production labels are never written; their accuracy is only printed, to
        # check what label-free monitoring should find.
        for week in range(0, hours // (7 * 24)):
            rows = slice(week * 7 * 24, (week + 1) * 7 * 24)
            summary.append(
                summarise("breast_cancer", name, f"prod week {week + 1}", y[drawn][rows], p_prod[rows], classes)
            )


def make_diabetes(out: Path, small: bool, summary: list) -> None:
    """Disease progression above the median, with each patient's sex and age band as segment columns.

    ``load_diabetes(scaled=False)`` gives age in years and sex coded 1 or 2 (the source does not
    say which code is which sex, so the codes are written as they are). The split is stratified
    on label and sex together, so each segment keeps about the same share of each split.
    """
    data = load_diabetes(scaled=False)
    X, progression = data.data, data.target
    y = np.where(progression > np.median(progression), "high", "low")
    classes = ["low", "high"]  # high progression, the case to catch, second as the positive class
    sex = X[:, data.feature_names.index("sex")].astype(int).astype(str)
    age_band = np.where(X[:, data.feature_names.index("age")] < AGE_BAND_FROM, "under_50", "50_plus")
    strata = np.char.add(np.char.add(y.astype(str), "/"), sex)
    train, val, test = three_way_split(len(y), strata, (0.5, 0.25, 0.25), SEED)
    if small:
        val, test = val[:SMALL_ROWS], test[:SMALL_ROWS]

    def frame(rows, split, fitted):
        order = [list(fitted.classes_).index(label) for label in classes]
        proba = fitted.predict_proba(X[rows])[:, order]
        segments = {"sex": sex[rows], "age_band": age_band[rows]}
        return run_frame([f"db-{i:03d}" for i in rows], split, y[rows], proba, classes, segments=segments), proba

    for name, model in make_models(small, standardize=True).items():
        fitted = clone(model).fit(X[train], y[train])
        (val_rows, _), (test_rows, p_test) = frame(val, "val", fitted), frame(test, "test", fitted)
        write_run(pd.concat([val_rows, test_rows]), out / "diabetes" / f"{name}.csv")
        summary.append(summarise("diabetes", name, "test", y[test], p_test, classes))
        for column, values in (("sex", sex), ("age_band", age_band)):
            for group in sorted(set(values[test])):
                rows = test[values[test] == group]
                summary.append(summarise("diabetes", name, f"test {column}={group}", y[rows],
                                         p_test[values[test] == group], classes))


def environment_fingerprint() -> str:
    """Versions that decide the bytes written; other versions may round a few values differently."""
    import platform

    import scipy
    import sklearn

    lines = [
        f"python {'.'.join(platform.python_version_tuple()[:2])}",
        f"numpy {np.__version__}",
        f"scipy {scipy.__version__}",
        f"scikit-learn {sklearn.__version__}",
        f"pandas {pd.__version__}",
        f"machine {platform.machine()}",
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent, help="output folder")
    parser.add_argument("--small", action="store_true", help="two models, fewer rows (for tests)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    for set_name in SETS:
        folder = args.out / set_name
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.csv"):
            stale.unlink()
    summary: list[dict] = []
    # One BLAS thread: multi-threaded reductions may sum in a different order between runs.
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        make_digits(args.out, args.small, summary)
        make_breast_cancer(args.out, args.small, summary)
        make_diabetes(args.out, args.small, summary)
    (args.out / FINGERPRINT_FILE).write_text(environment_fingerprint(), newline="\n")
    with pd.option_context("display.width", 120, "display.max_rows", 200):
        print(pd.DataFrame(summary).to_string(index=False))
    print(f"wrote {args.out} in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
