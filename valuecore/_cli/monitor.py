"""``python -m valuecore monitor``: label-free value per chunk with bands, alerts and drift.

Registered by :func:`valuecore._cli.parser.build_parser` and run by ``commands``, with which it shares the
helpers of ``_cli.common``; see ``docs/cli.md`` and ``docs/constraints.md`` (section 4).
"""

from __future__ import annotations

import argparse

from .common import (
    CALIBRATION_METHODS,
    UsageError,
    _add_split_options,
    _add_values_options,
    _err,
    _load,
    _out,
    _pct,
    _positive_float,
    _values,
    _whole_number_between,
    one_line,
)
from .toplevel import COMMAND_HELP
from .._model.choices import POLICY_KINDS

__all__ = ["add_monitor_command"]


def _watched_split(run, asked: str | None, reference: str) -> str:
    if asked is not None:
        if asked not in run.splits:
            raise ValueError(f"model {run.model!r} has no split {asked!r} (it has {list(run.splits)})")
        return asked
    unlabelled = [s for s, p in run.splits.items() if not p.has_labels]
    if unlabelled:
        return unlabelled[0]
    others = [s for s in run.splits if s != reference]
    return others[0] if others else reference


def _chunking(args) -> dict:
    if args.period is not None:
        return {"period": args.period}
    return {"n_chunks": args.chunks}


def _cmd_monitor(args) -> int:
    from .. import wording  # here, not at the top: monitor --help needs no wording (nor its decimal)
    from .._monitor.bands import monitor_bands
    from .._pipeline.build import build_policy_document

    values = _values(args)
    models = _load(args.paths)
    document, notes = build_policy_document(
        models, values, kind=args.policy, calibration_method=args.calibration,
        tune_split=args.tune_split, eval_split=args.eval_split, with_interval=False,
    )
    for note in notes:
        _err(f"warning: {one_line(note)}")
    how = _chunking(args)
    monitored = 0
    for entry in document.entries:
        run = models[entry.model]
        reference = args.reference_split or entry.tuned_on.get("split") or entry.evaluation["split"]
        if reference not in run.splits:
            _err(f"warning: {one_line(entry.model)} skipped: it has no split {reference!r} to take as the reference "
                 f"(it has {', '.join(map(repr, run.splits))})")
            continue
        if not run.splits[reference].has_labels:
            _err(f"warning: {one_line(entry.model)} skipped: its reference split {reference!r} has no labels "
                 "(y_true), and the estimate is calibrated on labels: give a labelled split with --reference-split")
            continue
        monitored += 1
        watched = _watched_split(run, args.split, reference)
        result = monitor_bands(run.splits[reference], run.splits[watched], entry.policy, values,
                               calibration=args.estimate_calibration, confidence=args.confidence, **how)
        _out("")
        for line in _band_lines(result, f"{one_line(entry.model)}  ({one_line(run.path)})", watched, reference):
            _out(line)
        backtest = args.eval_split or entry.evaluation["split"]
        if backtest != reference and backtest in run.splits and run.splits[backtest].has_labels:
            # labelled splits rarely carry timestamps: the back-test cuts into consecutive rows
            checked = monitor_bands(run.splits[reference], run.splits[backtest], entry.policy, values,
                                    calibration=args.estimate_calibration, confidence=args.confidence,
                                    n_chunks=args.chunks)
            covered = int(checked.frame["covered"].astype(bool).sum())
            _out(f"back-test on {backtest!r}: the {wording.level(checked.confidence)} band covered the realised "
                 f"value in {covered} of {checked.n_backtest} chunks ({_pct(checked.backtest_coverage)})")
    if not monitored:
        raise UsageError("no model could be monitored (see the warnings above)")
    return 0


def _est(value: float) -> str:
    """An estimate or a band's end, as on the Monitor page: three significant digits (wording.amount)."""
    from .. import wording

    return wording.amount(value)


def _band_lines(result, model: str, watched: str, reference: str) -> list[str]:
    """One model's monitoring table: a row per chunk, then the count of alerts and of drifted chunks."""
    from .. import wording

    lines = [
        f"== {model}, watching split {watched!r}",
        f"estimate calibrated with: {result.calibration_text}",
        f"reference value per item {_est(result.reference_value_per_item)} (split {reference!r})",
        f"{'chunk':<24} {'n':>8} {'estimated':>10} {'band':>21} {'reference band':>21} {'alert':>5} "
        f"{'drift p':>8} {'realised':>9}",
    ]
    for row in result.frame.itertuples():
        band = f"[{_est(row.band_low)}, {_est(row.band_high)}]"
        ref = f"[{_est(row.reference_low)}, {_est(row.reference_high)}]"
        realised = "" if not row.has_labels else _est(row.realised_value_per_item)
        lines.append(
            f"{str(row.chunk)[:24]:<24} {row.n:>8g} {_est(row.estimated_value_per_item):>10} {band:>21} {ref:>21} "
            f"{'ALERT' if row.alert else '-':>5} {row.drift_p_value:>8.3g}{'*' if row.drift else ' '}"
            f"{realised:>9}"
        )
    n = len(result.frame)
    lines.append(f"alerts: {result.n_alerts} of {n} chunks (estimate outside the "
                 f"{wording.level(result.alert_confidence)} reference band)")
    lines.append(f"drift:  {result.n_drift} of {n} chunks (* : confidence distribution differs, KS p < "
                 f"{result.drift_level:g})")
    return lines


def _share(text: str) -> float:
    value = _positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"must be below 1, got {text}")
    return value


_chunks = _whole_number_between(1, 10_000, "chunks")


def add_monitor_command(commands, common) -> None:
    monitor = commands.add_parser(
        "monitor",
        parents=[common],
        help=COMMAND_HELP["monitor"],
        description="Tune the policy as `report` does, then watch a split chunk by chunk: the value per item "
        "estimated from probabilities calibrated on a labelled reference split, the band where the realised "
        "value should fall, an alert when the estimate leaves the reference band, a drift signal on the "
        "confidence distribution, and how often the band covered the truth on the evaluated split.",
        epilog="Example: %(prog)s sample_runs/breast_cancer --omega 4 --split prod --period W",
    )
    monitor.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders of run files")
    _add_values_options(monitor)
    monitor.add_argument("--policy", choices=POLICY_KINDS, default="threshold", metavar="KIND",
                         help="policy kind (default threshold)")
    monitor.add_argument("--calibration", choices=CALIBRATION_METHODS, default="none", metavar="METHOD",
                         help="the policy's recalibration, as in `report` (default none)")
    _add_split_options(monitor)
    monitor.add_argument("--reference-split", metavar="NAME",
                         help="labelled split that calibrates the estimate and sets the reference (default: the "
                         "tuning split)")
    monitor.add_argument("--split", metavar="NAME", help="split to watch (default: the first unlabelled split)")
    group = monitor.add_mutually_exclusive_group()
    group.add_argument("--chunks", type=_chunks, default=8, metavar="N", help="number of chunks (default 8)")
    group.add_argument("--period", metavar="P", help="chunk by time period (pandas offset: D, W, MS); needs "
                       "a timestamp column")
    monitor.add_argument("--estimate-calibration", choices=("auto", "isotonic", "platt", "temperature", "none"),
                         default="auto", help="calibration of the estimate, fitted on the reference split "
                         "(auto: isotonic for a use case or two classes, temperature for a value matrix of more)")
    monitor.add_argument("--confidence", type=_share, default=0.95, metavar="C",
                         help="coverage of the per-chunk band (default 0.95)")


