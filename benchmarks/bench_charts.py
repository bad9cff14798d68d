"""Time each chart function of the app on the digits sample: building the chart and serialising it
(Streamlit calls ``to_dict`` on every rerun), the second of two rounds, in milliseconds.

    python benchmarks/bench_charts.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), *(str(ROOT / "tests" / d) for d in ("", "app", "core"))]

import valuecore as vc  # noqa: E402
from dashboard.charts import calibration, compare, constraints, matrix, monitor, value  # noqa: E402
from dashboard.views import calibration as calibration_view  # noqa: E402
from dashboard.views import capacity as capacity_view  # noqa: E402
from dashboard.views import compare as compare_view  # noqa: E402
from dashboard.views import values_per_class as vpc_view  # noqa: E402
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

    long = monitor.monitor_long(pd.concat(frames, ignore_index=True))
    run = chosen.report.models[models[0]]
    bands = vc.monitoring.monitor_bands(run.splits["val"], run.splits["test"], ws.policy(models[0], "threshold",
                                        chosen.values), chosen.values, n_chunks=8)
    histogram = vc.curves.confidence_histogram(run.splits["test"], bins=20)
    marks = pd.DataFrame({"label": ["tuned", "your threshold"], "threshold": [0.6, 0.5]})
    return {
        "value.confidence_histogram_chart": lambda: value.confidence_histogram_chart(histogram, marks),
        "compare.value_interval_chart": lambda: compare.value_interval_chart(page.intervals, models, currency="$"),
        "compare.difference_chart": lambda: compare.difference_chart(page.differences, model_a="logreg",
                                                                     model_b="mlp", currency="$", models=models),
        "compare.stability_chart": lambda: compare.stability_chart(page.stability.counts, models,
                                                                   tuned=page.stability.tuned),
        "monitor.monitor_chart": lambda: monitor.monitor_chart(long, models, measure="value_per_item", by_time=True),
        "monitor.band_chart": lambda: monitor.band_chart(bands.frame, "$"),
        "constraints.capacity_chart": lambda: constraints.capacity_chart(cap.capacity.chart, 50, "$"),
        "constraints.certified_risk_chart": lambda: constraints.certified_risk_chart(cap.risk.chart, 0.05),
        "constraints.tiers_chart": lambda: constraints.tiers_chart(cap.tiers.chart),
        "matrix.value_matrix_chart": lambda: matrix.value_matrix_chart(cells.cells, currency="$"),
        "matrix.confusion_value_chart": lambda: matrix.confusion_value_chart(detail.cells, currency="$"),
        "calibration.calibration_value_chart": lambda: calibration.calibration_value_chart(calib.value_long, models),
        "calibration.reliability_chart": lambda: calibration.reliability_chart(calib.reliability, models),
    }


def main() -> None:
    calls = inputs()
    # The machine is shared: besides the second round (imports and caches warm, as on a slider move), the
    # best of five, which other processes disturb least.
    print(f"{'chart':40s} {'2nd round: build ms':>20s} {'+to_dict ms':>12s} {'best of 5: +to_dict ms':>23s}")
    for name, call in calls.items():
        rounds = []
        for _ in range(5):
            start = time.perf_counter()
            chart = call()
            built = time.perf_counter()
            chart.to_dict()
            rounds.append((built - start, time.perf_counter() - start))
        second, best = rounds[1], min(total for _, total in rounds)
        print(f"{name:40s} {1e3 * second[0]:20.1f} {1e3 * second[1]:12.1f} {1e3 * best:23.1f}")


if __name__ == "__main__":
    main()
