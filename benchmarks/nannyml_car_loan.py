"""NannyML's car-loan data: NannyML's CBPE and our monitoring bands side by side.

NannyML is not a dependency of this project (it pins older libraries); run this script in a separate
virtual environment where it is installed, next to the packages valuecore needs::

    python -m venv /tmp/nnvenv && /tmp/nnvenv/bin/pip install nannyml statsmodels
    /tmp/nnvenv/bin/python benchmarks/nannyml_car_loan.py [--chunk-size 5000 1000]

The data are NannyML's bundled synthetic car-loan set (``load_synthetic_car_loan_dataset``: 50,000
labelled reference rows and 50,000 analysis rows whose labels come separately). The value is NannyML's
business value per prediction with the matrix ``[[TN, FP], [FN, TP]] = [[0, -200], [-100, 1000]]``
and the model's own predictions on every item (our ``accept_all`` policy, abstain never used). For
each chunk size it prints, over the analysis chunks: the mean absolute error of the estimated value
per item against the realised one, how many chunks the 95% band (ours, with and without its
calibration-shift term) or NannyML's +-3 sampling-error band covered, and the bands' mean half-width,
for NannyML's CBPE and for our estimate with each calibration.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import valuecore as vc  # noqa: E402

os.environ.setdefault("NML_DISABLE_USAGE_LOGGING", "1")  # NannyML's usage analytics: no network here
BUSINESS_VALUE = [[0.0, -200.0], [-100.0, 1000.0]]  # rows the truth, columns the prediction (NannyML's order)


def load():
    import nannyml as nml
    import pandas as pd

    reference, analysis, targets = nml.load_synthetic_car_loan_dataset()
    analysis = analysis.merge(targets, on="id")
    return reference, analysis, pd


def predictions(frame) -> vc.Predictions:
    """The model's own decisions: NannyML's ``y_pred`` is not the argmax of its (rounded) ``y_pred_proba``."""
    from dataclasses import replace

    positive = frame["y_pred_proba"].to_numpy(dtype=np.float64)
    proba = np.column_stack([1 - positive, positive])
    p = vc.Predictions.from_proba(proba, frame["repaid"].astype(int).astype(str).to_numpy(), classes=["0", "1"])
    y_pred = frame["y_pred"].to_numpy(dtype=np.int64)
    return replace(p, y_pred=y_pred, confidence=proba[np.arange(p.n), y_pred])


def nannyml_figures(reference, analysis, chunk_size: int):
    import nannyml as nml

    common = dict(y_pred_proba="y_pred_proba", y_pred="y_pred", y_true="repaid", problem_type="classification_binary",
                  metrics=["business_value"], business_value_matrix=BUSINESS_VALUE,
                  normalize_business_value="per_prediction", chunk_size=chunk_size)
    cbpe = nml.CBPE(**common).fit(reference)
    estimated = cbpe.estimate(analysis).filter(period="analysis").to_df()
    common.pop("y_pred_proba")
    realised = nml.PerformanceCalculator(y_pred_proba="y_pred_proba", **common).fit(reference)
    realised = realised.calculate(analysis).filter(period="analysis").to_df()
    value = estimated[("business_value", "value")].to_numpy()
    low = estimated[("business_value", "lower_confidence_boundary")].to_numpy()
    high = estimated[("business_value", "upper_confidence_boundary")].to_numpy()
    truth = realised[("business_value", "value")].to_numpy()
    return value, low, high, truth


def ours(reference, analysis, chunk_size: int, calibration: str):
    matrix = vc.ValueMatrix(("0", "1"), np.column_stack([np.asarray(BUSINESS_VALUE), [0.0, 0.0]]))
    out = vc.monitoring.monitor_bands(predictions(reference), predictions(analysis), vc.Policy("accept_all"), matrix,
                                      size=chunk_size, calibration=calibration)
    frame = out.frame
    return (frame["estimated_value_per_item"].to_numpy(), frame["band_low"].to_numpy(),
            frame["band_high"].to_numpy(), frame["realised_value_per_item"].to_numpy(), out)


def main(argv=None) -> int:
    import nannyml as nml
    import pandas as pd
    import sklearn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk-size", type=int, nargs="+", default=[5000, 1000])
    parser.add_argument("--calibration", nargs="+", default=["auto", "platt", "temperature", "none"],
                        choices=["auto", "isotonic", "platt", "temperature", "none"])
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    reference, analysis, _ = load()
    positive = analysis["y_pred_proba"].to_numpy()
    agree = np.mean((positive >= 0.5) == analysis["y_pred"].to_numpy().astype(bool))
    print(f"nannyml {nml.__version__}, pandas {pd.__version__}, numpy {np.__version__}, scikit-learn "
          f"{sklearn.__version__}; car loan: {len(reference)} reference rows, {len(analysis)} analysis rows; "
          f"y_pred equals y_pred_proba >= 0.5 on {100 * agree:.2f}% of rows\n")
    print("| chunk size | chunks | method | mean abs. error per item | band covered the realised value "
          "| mean band half-width |")
    print("|---:|---:|---|---:|---:|---:|")
    for size in args.chunk_size:
        value, low, high, truth = nannyml_figures(reference, analysis, size)
        n = len(truth)
        covered = int(np.sum((low <= truth) & (truth <= high)))
        print(f"| {size:,} | {n} | NannyML CBPE (isotonic), +-3 sampling errors | "
              f"{np.mean(np.abs(value - truth)):.2f} | {covered} of {n} | {np.mean(high - low) / 2:.2f} |")
        for calibration in args.calibration:
            value, low, high, truth, out = ours(reference, analysis, size, calibration)
            name = out.calibration["method"] + (" of P(positive)" if out.calibration.get("positive_class") else "")
            name += " (default)" if calibration == "auto" else ""
            # the 95% band, and without its calibration-shift term (the band before issue 19's last step)
            shift = out.frame["calibration_shift"].to_numpy()
            bands = (("95% band", low, high), ("95% band without the calibration-shift term", low + shift,
                                                high - shift))
            for label, lo, hi in bands:
                covered = int(np.sum((lo - 1e-12 <= truth) & (truth <= hi + 1e-12)))
                print(f"| {size:,} | {len(truth)} | ours, {name}, {label} | {np.mean(np.abs(value - truth)):.2f} "
                      f"| {covered} of {len(truth)} | {np.mean(hi - lo) / 2:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
