"""The command line's parser: every command with its options, importable without the commands.

``python -m valuecore COMMAND --help`` is answered from here (``parse_command_line``), so it imports
argparse, the argument types and option groups (``common``, ``segments``, ``reviewers``, ``monitor``,
``aggregate``), and neither ``commands`` (the commands, with their imports) nor anything numeric.
``commands.main`` parses with the same :func:`parse_command_line`, then runs the command named.
"""

from __future__ import annotations

import argparse
import re
import sys

from .._model.choices import ALL_POLICY_KINDS, DEFAULT_KS, RECOMMENDED_RULE, SEGMENT_RULE, VOC_MODES
from .aggregate import add_aggregate_command
from .common import (
    CALIBRATION_METHODS,
    EXIT_OK,
    EXIT_USAGE,
    _add_split_options,
    _add_values_options,
    _finite_float,
    _ks,
    _points,
    _positive_float,
)
from .monitor import add_monitor_command
from .reviewers import add_reviewer_options
from .segments import add_apply_segment_option, add_segment_options
from .toplevel import COMMAND_HELP, HelpParser, top_level_parser

__all__ = ["build_parser", "parse_command_line"]


def parse_command_line(argv: list[str]) -> argparse.Namespace | int:
    """The parsed arguments of a command, or the exit code when there is none to run.

    The code is argparse's after ``--help`` or ``--version`` (0) or a usage error it printed (2), and 2
    with the help on stderr when no command is named.
    """
    parser = build_parser()
    argv = _attach_negative_values(parser, list(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help, --version, or a usage error (already printed)
        return exc.code if isinstance(exc.code, int) else (EXIT_OK if exc.code is None else EXIT_USAGE)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return args


_NUMBER = re.compile(r"-(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|-(?:inf|infinity|nan)", re.IGNORECASE)


def _value_options(parser: argparse.ArgumentParser) -> set[str]:
    """Long options (of the parser and its subcommands) that take a value."""
    names: set[str] = set()
    for action in parser._actions:  # argparse has no public listing of its actions
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                names |= _value_options(sub)
        elif action.nargs != 0 and action.option_strings:
            names.update(o for o in action.option_strings if o.startswith("--"))
    return names


def _attach_negative_values(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``--v-wrong -1e3`` as ``--v-wrong=-1e3``: argparse would read ``-1e3`` as an unknown option.

    Only a number right after an option that takes a value is attached, so every form works:
    ``--v-wrong -4``, ``--v-wrong -1e3``, ``--v-wrong -.5``, ``--v-wrong=-1e3``, ``--k -1``
    (refused as a cost factor, in words).
    """
    options = _value_options(parser)
    out: list[str] = []
    for token in argv:
        numbers = token.split(",")  # --k takes a comma-separated list
        if out and out[-1] in options and _NUMBER.fullmatch(numbers[0]) and all(
            _NUMBER.fullmatch(n) or _NUMBER.fullmatch("-" + n) for n in numbers[1:]
        ):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def _add_constraint_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("constraints and tiers (see docs/constraints.md)")
    group.add_argument("--max-handoff-rate", type=_finite_float, metavar="R",
                       help="review capacity: hand off at most this share of items (0 to 1); policy threshold or "
                       "class_thresholds")
    group.add_argument("--max-risk", type=_finite_float, metavar="A",
                       help="certified risk: wrong answers among accepted items at most A (0 to 1), guaranteed with "
                       "--risk-confidence; policy threshold")
    group.add_argument("--risk-confidence", type=_finite_float, metavar="C",
                       help="confidence of the --max-risk guarantee, 1 - delta (default 0.9)")
    group.add_argument("--weights-are-copies", action="store_true",
                       help="--max-risk: a run's whole-number weight k stands for k independent items (e.g. an "
                       "aggregated log); without it a run weighted otherwise than 1 is refused")
    group.add_argument("--v-confirmed-correct", type=_finite_float, metavar="X",
                       help="two_tier: value of a correct answer confirmed by a person")
    group.add_argument("--v-confirmed-wrong", type=_finite_float, metavar="Z",
                       help="two_tier: value of a wrong answer put to a person")
    group.add_argument("--assist-cost", type=_finite_float, metavar="K", default=None,
                       help="two_tier: cost of a person's confirmation per item (default 0)")
    group.add_argument("--shortlist-values", metavar="K:IN:OUT,...",
                       help="shortlist: value of a hand-off with the K most probable classes when they hold the "
                       "true class (IN) and when not (OUT), per K, e.g. 2:0.6:-0.1,3:0.5:-0.1")
    group.add_argument("--shortlist-rule", choices=("top_k", "cumulative"), default=None,
                       help="shortlist: the K most probable classes (top_k, default) or the fewest whose "
                       "probabilities reach a tuned level (cumulative)")
    group.add_argument("--monitoring", action="store_true",
                       help="record in the policy JSON the reference a serving system needs for label-free alerts")


# The most items per period --volume takes: the dashboard's bound; beyond it the figures are no longer amounts.
MAX_VOLUME = 1e12


def _volume(text: str) -> float:
    value = _positive_float(text)
    if value > MAX_VOLUME:
        raise argparse.ArgumentTypeError(f"at most {MAX_VOLUME:,.0f} items per period, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The whole parser: every command with its options (the commands themselves are ``commands``'s)."""
    common = HelpParser(add_help=False)  # add_argument formats each option once: without shutil, as every parser
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of unexpected errors"
    )
    parser, commands = top_level_parser()

    validate = commands.add_parser(
        "validate",
        parents=[common],
        help=COMMAND_HELP["validate"],
        description="Check run files (CSV or Parquet) and folders of them; show the models, classes, splits "
        "and rows found, or the problems. Exits 2 when any file has an error.",
    )
    validate.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders of run files")

    report = commands.add_parser(
        "report",
        parents=[common],
        help=COMMAND_HELP["report"],
        description="For each model: fit the calibration and tune the policy on the tuning split, evaluate "
        "it on the evaluated split (value total, per item, dimensionless, coverage, selective accuracy, "
        "95% interval), and optionally write the policy JSON for a serving system.",
        epilog="Example: %(prog)s sample_runs/digits --v-correct 1 --v-abstain 0 --v-wrong -4 --json policy.json",
    )
    report.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders of run files")
    _add_values_options(report)
    report.add_argument(
        "--policy", choices=(RECOMMENDED_RULE, *ALL_POLICY_KINDS, SEGMENT_RULE), default=RECOMMENDED_RULE,
        metavar="KIND",
        help=f"policy kind, one of {', '.join(ALL_POLICY_KINDS)}, or {SEGMENT_RULE} (with --segment): every model "
        f"gets it, and the recommendation weighs only it. Default {RECOMMENDED_RULE}: the recommendation weighs "
        "every rule (with --segment, thresholds per segment too), its model gets the rule recommended and every "
        "other model the rule the recommendation would choose for it alone",
    )  # fmt: skip
    report.add_argument(
        "--calibration", choices=CALIBRATION_METHODS, default="none", metavar="METHOD",
        help=f"recalibration fitted on the tuning split, one of {', '.join(CALIBRATION_METHODS)} (default none)",
    )  # fmt: skip
    _add_split_options(report)
    _add_constraint_options(report)
    add_segment_options(report)
    add_reviewer_options(report)
    report.add_argument("--json", metavar="OUT.json", help="write the policy JSON here ('-' for stdout)")
    report.add_argument("--no-interval", action="store_true", help="skip the confidence intervals")
    report.add_argument("--html", metavar="REPORT.html",
                        help="also write a self-contained HTML report to share (opens offline, charts inline)")
    report.add_argument("--currency", default="", metavar="SYMBOL", help="currency of the values in the HTML report")
    report.add_argument("--volume", type=_volume, metavar="N",
                        help=f"expected items per period, for the value per period in the HTML report (at most "
                        f"{MAX_VOLUME:.0e}, as on the dashboard's first page)")
    report.add_argument("--period", default="month", metavar="PERIOD", help="the period of --volume (default month)")
    report.add_argument("--log-mlflow", action="store_true",
                        help="log the policy JSON and the HTML report to the MLflow run(s) named as mlflow:RUN")
    report.add_argument("--adapt-to", metavar="SPLIT",
                        help="re-tune for the class mix of this (unlabelled) split, estimated from the "
                        "probabilities; recorded as prior_shift in the policy JSON")
    report.add_argument("--adapt-method", choices=("em", "bbse", "bbse_soft"), default=None,
                        help="how --adapt-to estimates the class mix (default em, the most accurate; bbse "
                        "on hard predictions, bbse_soft on probabilities)")
    report.add_argument("--adapt-tuning", choices=("reweight", "label_free"), default=None,
                        help="--adapt-to re-weights the tuning split (default), or tunes without labels on the "
                        "adapted split, its probabilities adjusted to the estimated mix")
    report.add_argument("--adapt-always", action="store_true",
                        help="use the re-weighted rule even when its estimated gain is within noise (by default "
                        "the rule as tuned is kept then)")

    apply = commands.add_parser(
        "apply",
        parents=[common],
        help=COMMAND_HELP["apply"],
        description="Evaluate each model's stored policy (its thresholds, calibration parameters and rule: nothing "
        "is refitted) on run files: value, coverage and the confusion matrix with an abstain column. On the runs "
        "the policy was exported from, this reproduces the export's evaluation exactly; on newly labelled data it "
        "checks a deployed policy.",
        epilog="Example: %(prog)s policy.json sample_runs/digits --split test --json check.json",
    )
    apply.add_argument("policy", metavar="POLICY.json",
                       help="a policy JSON written by 'report --json' or the dashboard")
    apply.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders of run files")
    apply.add_argument("--split", metavar="NAME", help="split to evaluate on (default: the split each policy "
                       "was evaluated on when exported)")
    apply.add_argument("--json", metavar="OUT.json", help="write the evaluation here ('-' for stdout)")
    apply.add_argument("--no-interval", action="store_true", help="skip the confidence intervals")
    add_apply_segment_option(apply)

    table = commands.add_parser(
        "table",
        parents=[common],
        help=COMMAND_HELP["table"],
        description="The comparison table of seed 003: accuracy, macro F1, cost-sensitive error (binary runs) "
        "and the dimensionless value per item at each cost factor k = omega, with each model's rank.",
    )
    table.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders of run files")
    table.add_argument(
        "--k", type=_ks, default=DEFAULT_KS, metavar="K,K,...",
        help=f"cost factors (omega), comma separated (default {','.join(str(k) for k in DEFAULT_KS)})",
    )  # fmt: skip
    fmt = table.add_mutually_exclusive_group()
    fmt.add_argument("--csv", dest="format", action="store_const", const="csv", help="CSV (one row per model)")
    fmt.add_argument("--markdown", dest="format", action="store_const", const="markdown", help="a Markdown table")
    table.set_defaults(format="text")
    _add_split_options(table)

    add_monitor_command(commands, common)

    voc = commands.add_parser(
        "voc",
        parents=[common],
        help=COMMAND_HELP["voc"],
        description="VOC curves (dimensionless value per item against the penalty omega) as a tidy table "
        "(model, mode, omega, value, threshold), and omega_sup per model.",
    )
    voc.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders of run files")
    voc.add_argument("--omega-max", type=_positive_float, default=10.0, metavar="W", help="largest omega (default 10)")
    voc.add_argument("--points", type=_points, default=101, metavar="N", help="number of omegas from 0 (default 101)")
    voc.add_argument(
        "--mode", choices=VOC_MODES, default="oracle",
        help="oracle: tuned on the evaluated data (upper bound, default); tuned: tuned on the tuning split; "
        "calibrated: threshold omega/(1+omega); accept_all: no abstention",
    )  # fmt: skip
    _add_split_options(voc)
    voc.add_argument("--csv", metavar="OUT.csv", help="write the tidy table to this CSV file instead of printing it")

    add_aggregate_command(commands, common)
    return parser
