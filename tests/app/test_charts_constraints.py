"""The chart specs of the Capacity & guarantees page and of the Monitor bands (valuecore.chartspecs, drawn as
they are by st.vega_lite_chart)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import valuecore as vc
from valuecore.chartspecs import (
    capacity_spec, certified_risk_spec, monitor_band_spec, reviewer_value_spec, tiers_spec,
)
from vegalite import valid


def _datasets(spec: dict) -> list:
    return list(valid(spec).get("datasets", {}).values())


def test_capacity_chart_plots_the_curve_and_marks_the_team():
    curve = pd.DataFrame({"reviews_per_day": [0, 10, 30], "value_per_day": [5.0, 8.0, 9.0],
                          "threshold": [0.1, 0.5, 0.9]})
    spec = capacity_spec(curve, 20, "€")
    assert spec["title"] == "Value against review capacity"
    data = _datasets(spec)
    assert [r["value_text"] for r in data[0]] == ["€5.00", "€8.00", "€9.00"]
    assert data[1] == [{"capacity": 20}]


def test_certified_risk_chart_shows_rate_bound_and_limit():
    table = pd.DataFrame({"threshold": [0.9, 0.8], "coverage": [0.2, 0.4], "error_rate": [0.01, 0.03],
                          "upper_bound": [0.04, 0.06], "certified": [True, False]})
    data = _datasets(certified_risk_spec(table, 0.05))
    assert {r["what"] for r in data[0]} == {"Error rate on the tuning split", "At most, on new items"}
    assert data[1] == [{"max_risk": 0.05}]


def test_tiers_chart_keeps_the_tier_order():
    tiers = pd.DataFrame({"tier": ["Automatic", "Confirmed by a person", "Handed off"],
                          "items_per_day": [800, 150, 50]})
    spec = valid(tiers_spec(tiers))
    assert spec["encoding"]["y"]["sort"] == ["Automatic", "Confirmed by a person", "Handed off"]


def test_band_chart_layers_and_flags():
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.5, 1, 600)
    p = vc.Predictions.from_top_label(["a"] * 600, conf, np.where(rng.uniform(size=600) < conf, "a", "b"),
                                      classes=["a", "b"])
    shifted = vc.Predictions.from_top_label(["a"] * 200, conf[:200] * 0.7, classes=["a", "b"])
    out = vc.monitoring.monitor_bands(p.subset(slice(0, 300)), {"test": p.subset(slice(300, 600)), "prod": shifted},
                           vc.Policy("accept_all"), vc.UseCase(1, 0, -1), n_chunks=2)
    spec = valid(monitor_band_spec(out.frame))
    assert len(spec["layer"]) == 5  # reference band, chunk band, estimate, flags, realised
    flags = [r for d in spec["datasets"].values() for r in d if "status" in r and r["status"] != "ok"]
    assert flags and all(r["split"] == "prod" for r in flags)


def test_reviewer_chart_draws_one_line_per_pricing_and_marks_the_chosen_thresholds():
    # issue 35: the reviewers chart existed only in Altair; it is a spec like every other chart.
    curve = pd.DataFrame({"handoff_rate": [0.0, 0.1, 0.0, 0.1], "value_per_day": [900.0, 850.0, 900.0, 950.0],
                          "pricing": ["with these reviewers"] * 2 + ["as if always right"] * 2})
    chosen = pd.DataFrame({"handoff_rate": [0.0], "value_per_day": [900.0], "pricing": ["today's threshold"]})
    spec = valid(reviewer_value_spec(curve, chosen, "€"))
    assert spec["title"] == "Value against the share handed over"
    line, points = spec["layer"]
    assert line["encoding"]["color"]["scale"]["domain"] == ["with these reviewers", "as if always right"]
    assert line["encoding"]["y"]["title"] == "Value per day (€)" and line["mark"]["interpolate"] == "step-after"
    assert points["mark"]["type"] == "point" and spec["datasets"]["chosen"] == chosen.to_dict("records")
