"""Time each chart of the app on the digits sample: building its spec (``valuecore.chartspecs``) and
serialising it (Streamlit turns the spec into JSON on every rerun), the second of two rounds, in milliseconds.

    python benchmarks/bench_charts.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), *(str(ROOT / "tests" / d) for d in ("", "app", "core"))]

import valuecore as vc  # noqa: E402
from dashboard.views import calibration as calibration_view  # noqa: E402
from dashboard.views import capacity as capacity_view  # noqa: E402
from dashboard.views import compare as compare_view  # noqa: E402
from dashboard.views import monitor as monitor_view  # noqa: E402
from dashboard.views import values_per_class as vpc_view  # noqa: E402
from valuecore import chartspecs as cs  # noqa: E402
from view_selection import selection  # noqa: E402


def inputs() -> dict:
    """name -> a call that draws one chart of the app on the digits sample, as its page does."""
    chosen, ws = selection("digits")
    models = list(chosen.models)
    page = compare_view.build(chosen, ws, model_a="logreg", model_b="mlp", kind="threshold", n_resamples=200, seed=0)
    cap = capacity_view.build(chosen, ws, models[0], capacity_view.Inputs())
    cells = vpc_view.build(chosen, ws, chosen.report.models[models[0]].classes)
    detail = cells.detail(cells.models[0], cells.rules(cells.models[0])[0])
    opts = calibration_view.options(chosen)
    calib = calibration_view.build(chosen, opts, "temperature", 10, "uniform")
    frames = []
    for model in models:
        policy = ws.policy(model, "threshold", chosen.values)
        frame = vc.monitoring.monitor(chosen.report.models[model].splits["test"], policy, chosen.values, n_chunks=8)
        frame.insert(0, "model", model)
        frames.append(frame)
    import pandas as pd

    long = monitor_view.monitor_long(pd.concat(frames, ignore_index=True))
    run = chosen.report.models[models[0]]
    bands = vc.monitoring.monitor_bands(run.splits["val"], run.splits["test"], ws.policy(models[0], "threshold",
                                        chosen.values), chosen.values, n_chunks=8)
    histogram = vc.curves.confidence_histogram(run.splits["test"], bins=20)
    marks = pd.DataFrame({"label": ["tuned", "your threshold"], "threshold": [0.6, 0.5]})
    return {
        "confidence_histogram_spec": lambda: cs.confidence_histogram_spec(histogram, marks),
        "value_interval_spec": lambda: cs.value_interval_spec(page.intervals, models, currency="$"),
        "difference_spec": lambda: cs.difference_spec(page.differences, model_a="logreg", model_b="mlp",
                                                      currency="$", models=models),
        "stability_spec": lambda: cs.stability_spec(page.stability.counts, models, tuned=page.stability.tuned),
        "monitor_spec": lambda: cs.monitor_spec(long, models, measure="value_per_item", by_time=True),
        "monitor_band_spec": lambda: cs.monitor_band_spec(bands.frame, "$"),
        "capacity_spec": lambda: cs.capacity_spec(cap.capacity.chart, 50, "$"),
        "certified_risk_spec": lambda: cs.certified_risk_spec(cap.risk.chart, 0.05),
        "tiers_spec": lambda: cs.tiers_spec(cap.tiers.chart),
        "value_matrix_spec": lambda: cs.value_matrix_spec(cells.cells, currency="$"),
        "confusion_value_spec": lambda: cs.confusion_value_spec(detail.cells, currency="$"),
        "calibration_value_spec": lambda: cs.calibration_value_spec(calib.value_long, models),
        "reliability_spec": lambda: cs.reliability_spec(calib.reliability, models),
    }


def main() -> None:
    calls = inputs()
    # The machine is shared: besides the second round (imports and caches warm, as on a slider move), the
    # best of five, which other processes disturb least.
    print(f"{'chart':40s} {'2nd round: build ms':>20s} {'+json ms':>12s} {'best of 5: +json ms':>23s}")
    for name, call in calls.items():
        rounds = []
        for _ in range(5):
            start = time.perf_counter()
            spec = call()
            built = time.perf_counter()
            json.dumps(spec)
            rounds.append((built - start, time.perf_counter() - start))
        second, best = rounds[1], min(total for _, total in rounds)
        print(f"{name:40s} {1e3 * second[0]:20.1f} {1e3 * second[1]:12.1f} {1e3 * best:23.1f}")


if __name__ == "__main__":
    main()
