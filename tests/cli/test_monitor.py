"""``python -m valuecore monitor`` (``valuecore/_cli/monitor.py``): the bands, alerts and drift it prints are
``vc.monitoring.monitor_bands``'s, and a missing split is refused in words."""

from __future__ import annotations

from helpers.cli import VALUES, assert_clean_error, run_cli, write_run

import valuecore as vc


def test_cli_monitor_prints_bands_alerts_drift_and_the_backtest(capsys, tmp_path):
    path = write_run(tmp_path / "m.csv", splits=("val", "test", "prod"), unlabeled=("prod",), n=240, seed=7)
    code, out, err = run_cli(capsys, "monitor", path, *VALUES, "--chunks", "4")
    assert code == 0, err
    run = vc.load_runs([str(path)]).models["m"]
    policy = vc.fit_policy("threshold", vc.presort(run.splits["val"]), vc.UseCase(1, 0, -4))
    watched = vc.monitoring.monitor_bands(
        run.splits["val"], run.splits["prod"], policy, vc.UseCase(1, 0, -4), n_chunks=4
    )
    checked = vc.monitoring.monitor_bands(
        run.splits["val"], run.splits["test"], policy, vc.UseCase(1, 0, -4), n_chunks=4
    )
    assert "watching split 'prod'" in out
    assert f"estimate calibrated with: {watched.calibration_text}" in out
    assert f"alerts: {watched.n_alerts} of 4 chunks" in out and f"drift:  {watched.n_drift} of 4 chunks" in out
    for row in watched.frame.itertuples():
        est = vc.wording.amount  # as on the Monitor page
        assert est(row.estimated_value_per_item) in out and f"[{est(row.band_low)}, {est(row.band_high)}]" in out
    covered = int(checked.frame["covered"].astype(bool).sum())
    assert f"back-test on 'test': the 95% band covered the realised value in {covered} of 4 chunks" in out


def test_cli_monitor_refuses_a_missing_split_cleanly(capsys, tmp_path):
    path = write_run(tmp_path / "m.csv", n=60)
    code, out, err = run_cli(capsys, "monitor", path, *VALUES, "--split", "nope")
    assert_clean_error(code, out, err, "has no split 'nope'")
