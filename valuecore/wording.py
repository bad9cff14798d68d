"""Words and numbers at the edge: one formatting module for the CLI, the dashboard and the report.

The numeric modules return frozen results holding numbers; every sentence a
person reads is built here, so a threshold, an amount or a share reads the
same on every page, in the terminal and in the exported report.

Conventions
-----------
Thresholds
    Written with enough digits to reproduce the decision exactly: the printed
    number accepts the same items as the exact one (``confidence >=
    threshold``). The app, the CLI, the exported tables and the report all
    write the shortest decimal that reads back as the same float (at least 3
    decimals), so a copy of it decides *any* item as the stored policy does,
    and one threshold reads the same everywhere. Given a run's confidences,
    :func:`threshold` can instead round *down* to the fewest decimals that
    let no observed confidence slip in: shorter, but exact only on those
    items. Never ``1.0000`` for ``0.999997``. What a person reads next to
    the data (the app's tables, the CLI's text, the report, the sentences
    here) is :func:`threshold_on_data`: those digits, at most
    ``THRESHOLD_SIGNIFICANT`` (6) significant ones; the exact value goes in a
    tooltip and in the policy JSON. *The data shown* is one set for a model
    on every surface: its (recalibrated) confidences on its tuning split and
    on the evaluated split, so the first page, every other page, the Export
    table, the CLI and the HTML report spell one threshold alike. A threshold
    of exactly 1 (act only on certainty) reads as the shortest ``0.99…9``
    above every lower confidence, or else as ``1``: ``≥ 1.000`` would read
    as "never act", rounded from a confidence no model reaches.
Money
    In the chosen currency: a one-character symbol before the number
    (``-$1,234.50``), a code after it (``1,234.50 EUR``). Two decimals, more
    significant digits for amounts below a cent so that a small per-item
    value does not read as zero (:func:`money`). An estimate and its interval
    (a difference per item, a likely range) has three significant digits
    (:func:`amount`). An amount over a volume of items (a day's, a month's,
    all the evaluated items) is in whole units from 100 up (``$9,400``, not
    ``$9,400.00``): a per-item value times a volume has no meaningful cents
    (:func:`projected`).
Shares
    One decimal everywhere (``94.4%``). A share that is not exactly 0 or 1
    never reads as ``0.0%`` or ``100.0%``: it reads ``<0.1%`` or ``>99.9%``.
Missing numbers
    ``None`` and NaN read as an en dash, never as ``None`` or ``nan``.
Counts
    A (weighted) number of items is whole as it is (``1,234``), else one decimal (``12.5``); a count that
    is not 0 never reads ``0``: below 0.05 it keeps three significant digits (``0.02``).
Very large numbers
    From 10^15 up a count, an amount or a figure of three significant digits reads in three significant
    digits (``1.40e+52``), never its some 50 meaningless digits written out.

What lives here
---------------
Numbers: :func:`number`, :func:`significant`, :func:`money`, :func:`amount`, :func:`projected`, :func:`percent`
(``PERCENT_DIGITS`` decimals), :func:`level` (a confidence level, ``95%``), :func:`count`,
:func:`p_value`, :func:`threshold`, :func:`threshold_on_data`, :func:`threshold_phrase`,
:func:`omega`; ``DASH`` stands for a missing number. Lists: :func:`short_list` (cut after a few),
:func:`names` (``a, b and c``). Labels: ``OMEGA_LABEL`` (the penalty's one name on screen),
``POLICY_LABELS`` and :func:`policy_label` (a policy kind in a menu or a table; :func:`rule_name` in a
sentence), ``NO_PROBA_NOTE`` (why a rule needs probabilities), ``INTERVAL_HEADER`` (the one name of a
column of 95% intervals), ``BEST_POSSIBLE`` (the one name of a threshold tuned on the items it is
judged on), ``CERTIFIED_ON`` (what the error-rate guarantee is tested on).
Sentences: :func:`interval_sentences`, :func:`paired_sentences`,
:func:`verdict_headline`, :func:`verdict_sentences`, :func:`rule_phrase`,
:func:`simpler_rule_sentences`, :func:`recommendation_headline`, :func:`recommendation_reason`,
:func:`rule_name`. ``GLOSSARY`` explains the technical names.
What a likely range means and rests on: :func:`likely_range_sentence` (from
the numbers), :func:`interval_basis` (from an ``Interval``),
:func:`evaluation_basis` (from the policy JSON's ``evaluation``), and
:func:`worst_outcome_name` (what the lowest value is called); a shortlist
policy's tiers in one sentence: :func:`shortlist_tiers`; of the hand-offs, those a language model
declined itself and those of the threshold: :func:`handoffs_by_whom`, and their count in words:
:func:`false_abstentions`.
Thresholds per segment: :func:`segment_rows` (a row of text per segment, under ``SEGMENT_COLUMNS``),
:func:`segment_rule_phrase` (a segment's threshold or per-class thresholds),
:func:`segment_cap_sentence` (what the caps cost), :func:`segment_caps_text` (the caps),
:func:`segment_warning` (a segment too small to say anything), :func:`segments_too_small` (every such segment
in one sentence) and ``SEGMENT_VALUES_NOTE`` (why the
recommendation leaves out thresholds per segment whose segments have values of their own).

Examples
--------
>>> threshold(0.999997)
'0.999997'
>>> threshold(0.6823529411764706, confidences=[0.9, 0.6823529411764706, 0.5])
'0.682'
>>> money(-1234.5, "$"), money(0.91, "EUR"), percent(0.9444)
('-$1,234.50', '0.91 EUR', '94.4%')
"""

from __future__ import annotations

import math
from decimal import ROUND_FLOOR, Decimal

from ._model.choices import NO_PROBA_NOTE  # said where runs are checked; the app and CLI read it here

__all__ = [
    "DASH",
    "PERCENT_DIGITS",
    "GLOSSARY",
    "number",
    "significant",
    "money",
    "amount",
    "projected",
    "percent",
    "p_value",
    "threshold",
    "threshold_phrase",
    "handoffs_by_whom",
    "false_abstentions",
    "omega",
    "OMEGA_LABEL",
    "THRESHOLD_SIGNIFICANT",
    "threshold_on_data",
    "level",
    "count",
    "short_list",
    "names",
    "POLICY_LABELS",
    "policy_label",
    "NO_PROBA_NOTE",
    "interval_sentences",
    "likely_range_sentence",
    "interval_basis",
    "evaluation_basis",
    "worst_outcome_name",
    "paired_sentences",
    "verdict_headline",
    "verdict_sentences",
    "rule_phrase",
    "shortlist_tiers",
    "simpler_rule_sentences",
    "rule_name",
    "recommendation_headline",
    "recommendation_reason",
    "INTERVAL_HEADER",
    "BEST_POSSIBLE",
    "CERTIFIED_ON",
    "SEGMENT_COLUMNS",
    "SEGMENT_VALUES_NOTE",
    "segment_rows",
    "segment_rule_phrase",
    "segment_cap_sentence",
    "segment_caps_text",
    "segment_warning",
    "segments_too_small",
]

DASH = "–"
# The one name of a table's column of 95% intervals (the value per item's, unless its header says otherwise), on
# every page, in the HTML report and in the CLI's tables: "95% low", "95% range" and "likely range (95%)" named
# the same thing three ways.
INTERVAL_HEADER = "95% interval"
# The one name of a threshold (or a curve) tuned on the very items it is scored on: "oracle" on one page and "Best
# possible" on the next named one thing twice.
BEST_POSSIBLE = "best possible"
# What the error-rate guarantee is tested on, in the same words on the Capacity page and in the glossary: the
# glossary once said "items the tuning never saw", but valuecore.constraints.fit_certified tests the tuning split
# itself (its grid of candidates is label-free, so choosing and certifying may share the items).
CERTIFIED_ON = "candidate thresholds are tested one by one, from the safest, on the tuning items"
PERCENT_DIGITS = 1
_MIN_THRESHOLD_DECIMALS = 3
# Beyond six significant digits a threshold is noise to a reader; the exact one is in the tooltip and the JSON.
THRESHOLD_SIGNIFICANT = 6
# The penalty has one name on every screen: the symbol with a plain word before it.
OMEGA_LABEL = "Penalty ω"
# What a rule needing probabilities says about a run that has only the top label.
# The policy kinds as a person picks them (menus, tables, the report's settings).
POLICY_LABELS = {
    "recommended": "Recommended (each model's own)",
    "threshold": "One threshold, tuned",
    "calibrated_threshold": "Calibrated threshold ω/(1+ω)",
    "accept_all": "Accept all (no hand-offs)",
    "class_thresholds": "Per-class thresholds, tuned",
    "calibrated_class_thresholds": "Per-class thresholds, calibrated",
    "expected_value": "Expected-value rule",
    "two_tier": "Two tiers (a person confirms the middle tier)",
    "shortlist": "Shortlist (a person picks from the likeliest classes)",
    "segment_thresholds": "Thresholds per segment",
}


def _missing(x) -> bool:
    return x is None or (isinstance(x, (float, int)) and not isinstance(x, bool) and math.isnan(float(x)))


def _not_finite(x) -> str | None:
    """The text of a missing or infinite number; None for a finite one."""
    if _missing(x):
        return DASH
    if math.isinf(float(x)):
        return "∞" if float(x) > 0 else "−∞"
    return None


# ----------------------------------------------------------------- numbers
# From this size up a number reads in three significant digits (``1.40e+52``), not written out: a float holds
# about 16 digits, so written out its whole part runs on with digits that mean nothing (300 of them for 1e308).
_WRITTEN_OUT_BELOW = 1e15


def _too_large_to_write_out(x: float, decimals: int) -> bool:
    """Whether ``x`` with ``decimals`` decimals would reach ``_WRITTEN_OUT_BELOW`` (rounding up to it counts)."""
    return abs(x) >= _WRITTEN_OUT_BELOW - 0.5 * 10**-decimals


def _scientific(x: float) -> str:
    """A number too large to write out: its zeros stay, so an interval's two ends read alike (``9.60e+99``)."""
    return f"{x:#.3g}"


def significant(x: float) -> str:
    """Three significant digits, thousands written out (no 1.23e+03) below 10^15, ``1.40e+52`` from there;
    ``–`` when missing.

    >>> significant(1234.5), significant(0.012345), significant(-0.0), significant(1.4e52)
    ('1,234', '0.0123', '0', '1.40e+52')
    """
    if (special := _not_finite(x)) is not None:
        return special
    x = float(x)
    if _too_large_to_write_out(x, 0):
        return _scientific(x)
    text = f"{x:,.0f}" if abs(x) >= 999.5 else f"{x:.3g}"  # 999.5 would read 1e+03
    return "0" if text in ("-0", "0.0", "-0.0") else text


def number(x: float, digits: int = 3) -> str:
    """Fixed decimals; ``–`` when missing, ``∞`` for infinity.

    >>> number(0.25), number(float("nan")), number(float("-inf"))
    ('0.250', '–', '−∞')
    """
    if (special := _not_finite(x)) is not None:
        return special
    x = float(x)
    text = f"{x:,.{digits}f}"
    return text[1:] if text.startswith("-") and float(text.replace(",", "")) == 0 else text


def money(x: float, currency: str = "", digits: int = 2) -> str:
    """An amount in the currency: ``$1.50`` for a symbol, ``1.50 EUR`` for a code, ``1.50`` without.

    Amounts smaller than a cent (but not zero) keep three significant digits, and so do amounts from 10^15 up.

    >>> money(0.004, "$"), money(-0.0, "$"), money(None, "$"), money(-1.4e52, "$")
    ('$0.004', '$0.00', '–', '-$1.40e+52')
    """
    if _missing(x):
        return DASH
    x = float(x)
    if math.isinf(x):
        body = "∞"
    elif x != 0 and abs(x) < 0.5 * 10**-digits:
        body = f"{abs(x):.3g}"
    elif _too_large_to_write_out(x, digits):
        body = _scientific(abs(x))
    else:
        body = f"{abs(x):,.{digits}f}"
    negative = x < 0 and body.strip("0.,") != ""
    sign = "-" if negative else ""
    if not currency:
        return sign + body
    if len(currency) == 1 and not currency.isalnum():
        return sign + currency + body
    return f"{sign}{body} {currency}"


# From this size up an amount over a volume of items reads in whole units.
_WHOLE_UNITS_FROM = 100


def projected(x: float, currency: str = "") -> str:
    """An amount over a volume of items (per day, per month, in all): whole units from 100 up, else :func:`money`.

    >>> projected(9400.0, "$"), projected(-1600.0, "$"), projected(939.11, "EUR"), projected(0.4, "$")
    ('$9,400', '-$1,600', '939 EUR', '$0.40')
    """
    if _missing(x) or not math.isfinite(float(x)) or abs(float(x)) < _WHOLE_UNITS_FROM:
        return money(x, currency)
    return money(x, currency, digits=0)


def percent(share: float, digits: int = PERCENT_DIGITS) -> str:
    """A share as a percentage with one precision everywhere; never 100.0% for less than all.

    >>> percent(0.9444), percent(0.99997), percent(0.00001), percent(1.0), percent(None)
    ('94.4%', '>99.9%', '<0.1%', '100.0%', '–')
    """
    if _missing(share):
        return DASH
    share = float(share)
    text = f"{share:.{digits}%}"
    step = 10.0 ** -(digits + 2)
    if 1 - step < share < 1 and text == f"{1:.{digits}%}":
        return f">{1 - step:.{digits}%}"
    if 0 < share < step and text == f"{0:.{digits}%}":
        return f"<{step:.{digits}%}"
    return text


def level(share: float) -> str:
    """A confidence level or a stated rate as people write it: ``95%``, ``99.9%``, ``2.5%`` (no trailing zeros).

    >>> level(0.95), level(0.999), level(0.025), level(None)
    ('95%', '99.9%', '2.5%', '–')
    """
    if _missing(share):
        return DASH
    return f"{float(share) * 100:g}%"


def count(x: float) -> str:
    """A (weighted) number of items: ``1,234``, ``12.5`` for a fractional weight, ``1.23e+15`` from 10^15.

    A fractional count that one decimal would show as ``0.0`` keeps three significant digits: items weighing
    0.02 in all are not "0.0 wrong" beside a sentence that says they rest on 0.02 wrong answers.

    >>> count(1234), count(12.5), count(1e16), count(None), count(0.0213), count(1e-50)
    ('1,234', '12.5', '1.00e+16', '–', '0.0213', '1e-50')
    """
    if (special := _not_finite(x)) is not None:
        return special
    x = float(x)
    if x == 0:
        return "0"  # never "-0"
    if _too_large_to_write_out(x, 0):
        return _scientific(x)
    if abs(x) < 0.05:  # one decimal would read 0.0
        return f"{x:.3g}"
    return f"{x:,.0f}" if x.is_integer() else f"{x:,.1f}"


def short_list(items, limit: int = 6) -> str:
    """A list cut after ``limit`` items: ``a, b, c, … (9 in all)``.

    >>> short_list("abc"), short_list(range(9), limit=3)
    ('a, b, c', '0, 1, 2, … (9 in all)')
    """
    items = [str(i) for i in items]
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f", … ({len(items)} in all)"


def names(items, conjunction: str = "and") -> str:
    """Items in a sentence: ``a``, ``a and b``, ``a, b and c``.

    >>> names(["a"]), names(["a", "b", "c"]), names(["a", "b"], "or")
    ('a', 'a, b and c', 'a or b')
    """
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {conjunction} " + items[-1]


def policy_label(kind: str | None) -> str:
    """A policy kind as a person picks it (``POLICY_LABELS``); an unknown kind as it is."""
    return "No model" if kind is None else POLICY_LABELS.get(kind, kind)


def p_value(p: float) -> str:
    """``p < 0.001``, ``p = 0.043``, or ``p undefined``."""
    if _missing(p) or not math.isfinite(float(p)):
        return "p undefined"
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}"


def omega(value: float) -> str:
    """The penalty ω with three significant digits; ``∞`` when abstaining costs nothing."""
    if _missing(value):
        return DASH
    if not math.isfinite(value):
        return "∞"
    text = f"{value:.3g}"
    return f"{value:.0f}" if "e+" in text else text  # 1000, not 1e+03


# -------------------------------------------------------------- thresholds
def _floor_text(value: float, decimals: int) -> str:
    exact = Decimal(value)  # the float's exact binary value
    # Positional: str() of a Decimal below 1e-6 reads 4.828E-7, which a threshold text never is (people copy it).
    return format(exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_FLOOR), "f")


def threshold(value: float, confidences=None) -> str:
    """The threshold as a decimal that accepts exactly the same items as ``value``.

    Parameters
    ----------
    value : float
        The threshold (act iff ``confidence >= value``).
    confidences : array-like of shape (n,), optional
        The run's confidences. With them the text is the threshold rounded
        down to the fewest decimals (at least 3) such that no confidence lies
        between the printed and the exact threshold; without them, the
        shortest decimal (at least 3 decimals) that reads back as ``value``
        itself, which decides every run like ``value`` does.

    Returns
    -------
    str
        ``–`` for a missing threshold.

    Examples
    --------
    >>> threshold(0.5), threshold(0.999997), threshold(1.0)
    ('0.500', '0.999997', '1')
    >>> threshold(0.68235, confidences=[0.6824, 0.68235, 0.6823])
    '0.68235'
    """
    if _missing(value):
        return DASH
    value = float(value)
    if not math.isfinite(value):
        return "∞" if value > 0 else "−∞"
    if value == 1.0 and confidences is None:
        return "1"  # act only on certainty; "1.000" looks rounded from a confidence no model reaches
    import numpy as np

    # The shortest positional decimal that reads back as the same float (no exponent: people copy it).
    exact = np.format_float_positional(value, unique=True, trim="-")
    decimals_needed = len(exact.partition(".")[2])
    if confidences is not None:
        observed = np.asarray(confidences, dtype=np.float64).ravel()
        below = observed[observed < value]
        # The printed p must satisfy (next lower confidence) < p <= value.
        floor = float(below.max()) if below.size else -math.inf
        if value == 1.0:
            # "≥ 1.000" reads as "never act"; on these items 0.99…9 above every lower confidence acts alike.
            for decimals in range(_MIN_THRESHOLD_DECIMALS, 17):
                if floor < float(text := "0." + "9" * decimals):
                    return text
            return "1"
        for decimals in range(_MIN_THRESHOLD_DECIMALS, decimals_needed):
            text = _floor_text(value, decimals)
            if floor < float(text) <= value:
                return _plain(text)
    return _plain(exact if decimals_needed >= _MIN_THRESHOLD_DECIMALS else f"{value:.{_MIN_THRESHOLD_DECIMALS}f}")


def _plain(text: str) -> str:
    return "0" + text[2:] if text.startswith("-0") and float(text) == 0 else text


def threshold_on_data(value: float, confidences=None) -> str:
    """The threshold with as many digits as tell its decision apart on ``confidences`` and no more.

    At most ``THRESHOLD_SIGNIFICANT`` (6) significant digits: the text acts on the same items of
    ``confidences`` as the exact threshold whenever 6 significant digits can do so (when two confidences
    differ only beyond that, the text is rounded down to 6 significant digits; the exact value belongs in a
    tooltip and in the policy JSON). Without ``confidences`` the exact threshold (:func:`threshold`).

    >>> threshold_on_data(0.5340621214869945, [0.9, 0.5340621214869945, 0.41])
    '0.534'
    >>> threshold_on_data(0.5340621214869945, [0.5340621214869945, 0.53406212])
    '0.534062'
    """
    if confidences is None or _missing(value) or not math.isfinite(float(value)):
        return threshold(value)
    text = threshold(value, confidences)
    digits = text.replace("-", "").replace(".", "").lstrip("0")
    if len(digits) <= THRESHOLD_SIGNIFICANT:
        return text
    value = float(value)
    if value == 1.0:  # no 0.99…9 of six digits stays above the next lower confidence: 1 itself does
        return threshold(value)
    # Round down so the text still acts on every item the exact threshold acts on.
    exponent = math.floor(math.log10(abs(value))) if value else 0
    return _plain(_floor_text(value, max(THRESHOLD_SIGNIFICANT - 1 - exponent, 0)))


def threshold_phrase(value: float | None, confidences=None) -> str:
    """The rule in words: ``act when confidence ≥ 0.682``, ``always hand off``, ``act on every item``.

    >>> threshold_phrase(None), threshold_phrase(0.0), threshold_phrase(0.75)
    ('always hand off', 'act on every item', 'act when confidence ≥ 0.750')
    """
    if _missing(value):
        return "always hand off"
    if float(value) <= 0:
        return "act on every item"
    return f"act when confidence ≥ {threshold_on_data(value, confidences)}"


# -------------------------------------------------------------- intervals
def interval_sentences(interval, currency: str = "") -> tuple[str, str]:
    """Two readings of an :class:`~valuecore.Interval`: the fact on this data, the estimate for new data.

    >>> import valuecore as vc
    >>> interval = vc.uncertainty.mean_interval([1.0, 1.0, 0.0, -4.0, 1.0, 1.0, 1.0, 1.0])
    >>> print(*interval_sentences(interval, "$"), sep="\\n")
    On this data: $0.25 per item.
    Expected on new data from the same distribution: $0.25 per item (95% interval -$1.68 to $0.95).
    """
    on_data = f"On this data: {amount(interval.mean, currency)} per item."
    head = "Expected on new data from the same distribution"
    if not (math.isfinite(interval.low) and math.isfinite(interval.high)):
        return on_data, f"{head}: unknown (too few items for an interval)."
    how = ", percentile bootstrap" if interval.method == "bootstrap" else ""
    return on_data, (
        f"{head}: {amount(interval.mean, currency)} per item ({_level(interval.confidence)} interval "
        f"{amount(interval.low, currency)} to {amount(interval.high, currency)}{how})."
    )


def likely_range_sentence(
    *,
    low: float,
    high: float,
    n_items: float,
    n_acted: float,
    n_worst: float,
    worst_value: float,
    one_more_worst: float,
    confidence: float = 0.95,
    currency: str = "",
    outcome: str = "wrong answer",
) -> str:
    """What a "likely range" of the value per item means and what it rests on, in one sentence.

    Parameters
    ----------
    low, high : float
        The interval (per item).
    n_items, n_acted : float
        Items evaluated, and of them the ones the model acted on (NaN: not known).
    n_worst : float
        Items seen at the worst possible value, ``worst_value`` (per item).
    one_more_worst : float
        How much lower the value per item would be with one more such item.
    outcome : str
        What the worst value is, in the singular ("wrong answer").

    Examples
    --------
    >>> sentence = likely_range_sentence(low=-8.2, high=0.87, n_items=114, n_acted=91, n_worst=0,
    ...                                  worst_value=-1000, one_more_worst=8.78, currency="$")
    >>> for part in sentence.replace(". ", ".|").replace("; ", ";|").split("|"):
    ...     print(part)
    Likely range -$8.2 to $0.87 per item: 95% sure to hold the value per item on new items like these.
    It rests on 0 wrong answers (-$1,000.00 each) seen in 114 items, 91 automated;
    one more would lower the value per item by $8.78.
    """
    if _missing(low) or _missing(high) or not (math.isfinite(low) and math.isfinite(high)):
        return "Likely range: unknown, too few items to say what new items would be worth."
    if low == high:
        return (f"Likely range: none needed, every item is worth {amount(low, currency)} under this rule "
                "whatever its outcome.")
    seen = significant(n_worst)
    plural = "" if seen == "1" else "s"
    where = f"{significant(n_items)} items"
    if not _missing(n_acted) and math.isfinite(n_acted):
        where += f", {significant(n_acted)} automated"
    each = " each" if plural else ""
    return (
        f"Likely range {amount(low, currency)} to {amount(high, currency)} per item: {_level(confidence)} sure "
        "to hold the value per item on new items like these. "
        f"It rests on {seen} {outcome}{plural} ({money(worst_value, currency)}{each}) seen in {where}; "
        f"one more would lower the value per item by {amount(one_more_worst, currency)}."
    )


def interval_basis(interval, currency: str = "", outcome: str = "wrong answer") -> str:
    """:func:`likely_range_sentence` for an :class:`~valuecore.Interval` (its own numbers)."""
    return likely_range_sentence(
        low=interval.low, high=interval.high, n_items=interval.n, n_acted=interval.n_acted,
        n_worst=interval.n_worst, worst_value=interval.worst_value, one_more_worst=interval.one_more_worst,
        confidence=interval.confidence, currency=currency, outcome=outcome,
    )


def false_abstentions(n: float) -> str:
    """"1 false abstention", "2 false abstentions": declines where the model's top choice was right.

    >>> false_abstentions(1), false_abstentions(0), false_abstentions(2)
    ('1 false abstention', '0 false abstentions', '2 false abstentions')
    """
    return f"{count(n)} false abstention{'' if n == 1 else 's'}"


def handoffs_by_whom(evaluation) -> str:
    """Of the hand-offs in the ``evaluation`` object of the policy JSON, those the model itself declined (a
    language model's "I don't know") and those the threshold made, with the false abstentions; "" when the
    run holds no abstention of the model's own.

    >>> handoffs_by_whom({"n_abstain": 7, "n_abstain_by_model": 2, "n_false_abstentions": 1})
    "Of 7 items handed over, 2 were declined by the model itself ('I don't know': handed over whatever the \
threshold) and 5 by the threshold; 1 of the model's declines was a false abstention (its top choice was right)."
    """
    if "n_abstain_by_model" not in evaluation:
        return ""
    handed, own = evaluation["n_abstain"], evaluation["n_abstain_by_model"]
    text = (f"Of {count(handed)} items handed over, {count(own)} {'was' if own == 1 else 'were'} declined by the "
            "model itself ('I don't know': handed over whatever the threshold) and "
            f"{count(handed - own)} by the threshold")
    false = evaluation.get("n_false_abstentions")
    if false is not None:
        were = "was a false abstention" if false == 1 else "were false abstentions"
        text += f"; {count(false)} of the model's declines {were} (its top choice was right)"
    return text + "."


def evaluation_basis(evaluation, values=None, currency: str = "") -> str:
    """:func:`likely_range_sentence` for the ``evaluation`` object of the policy JSON (``ci95``, ``ci95_basis``)."""
    ci = evaluation.get("ci95") or [None, None]
    basis = evaluation.get("ci95_basis") or {}

    def number(found):
        return math.nan if found is None else float(found)

    return likely_range_sentence(
        low=number(ci[0]), high=number(ci[1]), n_items=number(evaluation.get("n")),
        n_acted=number(basis.get("n_acted")), n_worst=number(basis.get("n_worst")),
        worst_value=number(basis.get("worst_value")), one_more_worst=number(basis.get("one_more_worst")),
        currency=currency, outcome=worst_outcome_name(values) if values is not None else "costliest outcome",
    )


def worst_outcome_name(values) -> str:
    """What the lowest value of ``values`` is called: "wrong answer" for a use case whose wrong answer is
    its lowest value, else "costliest outcome"."""
    wrong, abstain, correct = (getattr(values, f"v_{k}", None) for k in ("wrong", "abstain", "correct"))
    if wrong is not None and wrong <= abstain and wrong <= correct:
        return "wrong answer"
    return "costliest outcome"


def amount(x: float, currency: str = "") -> str:
    """Three significant digits in the currency: the precision of a statistical statement.

    Used for estimates and their intervals (a difference per item, a confidence interval), where
    :func:`money`'s cents would hide a small difference or claim more precision than the data holds.

    Trailing zeros stay, so that an interval's two ends read alike ($0.800 to $0.921, not $0.8 to $0.921).

    >>> amount(0.012345, "$"), amount(-1234.5, "EUR"), amount(float("nan"), "$"), amount(0.7999, "$")
    ('$0.0123', '-1,234 EUR', '–', '$0.800')
    >>> amount(0.99, ""), amount(-4, ""), amount(0.0, "$"), amount(-0.0, "EUR")
    ('0.990', '-4.00', '$0.00', '0.00 EUR')
    """
    if _missing(x):
        return DASH
    # Zero has no significant digits: it reads as money does ("$0.00"), not "$0" beside a tile's "$0.00".
    body = "0.00" if float(x) == 0 else significant(abs(x))
    if body != "0" and abs(float(x)) < 999.5:
        kept = f"{abs(float(x)):#.3g}".rstrip(".")  # '#' keeps the zeros; 100 would read '100.'
        body = body if "e" in kept else kept
    sign = "-" if x < 0 and body != "0" else ""
    if not currency:
        return sign + body
    if len(currency) == 1 and not currency.isalnum():
        return sign + currency + body
    return f"{sign}{body} {currency}"


_level = level


def paired_sentences(comparison, names=("A", "B"), currency: str = "") -> tuple[str, str]:
    """Two readings of a :class:`~valuecore.PairedComparison` of A minus B, in words.

    Returns
    -------
    (on_data, on_distribution) : tuple of str
        What is certain on these items, and what is expected on new items
        from the same distribution with the interval and its p-value (below
        ``1 - confidence`` exactly when the interval excludes 0).
    """
    a, b = (str(n) for n in names)
    m = comparison
    items = significant(m.total_weight)
    if m.mean_difference == 0:
        on_data = (f"On these {items} items, {a} and {b} are worth exactly the same ({projected(0.0, currency)} in "
                   "total).")
    else:
        more = "more" if m.mean_difference > 0 else "less"
        on_data = (
            f"On these {items} items, {a} is worth {amount(abs(m.mean_difference), currency)} per item {more} "
            f"than {b} ({projected(m.total_difference, currency)} in total)."
        )
    head = f"On new items from the same distribution, {a} minus {b} is expected to be"
    if not (math.isfinite(m.low) and math.isfinite(m.high)):
        return on_data, (
            f"{head} {amount(m.mean_difference, currency)} per item, but there are too few items to test it."
        )
    level = _level(1 - m.confidence)
    numbers = (
        # "interval", not "CI": the verdict below and the Compare page's tile say "interval" for the same range.
        f"{amount(m.mean_difference, currency)} per item ({_level(m.confidence)} interval {amount(m.low, currency)} to "
        f"{amount(m.high, currency)}, {p_value(m.p_value)})"
    )
    if math.isfinite(m.p_value) and m.p_value < 1 - m.confidence:
        better = a if m.mean_difference > 0 else b
        verdict = f"{better} is better, statistically significant at the {level} level (the interval excludes 0)."
    else:
        verdict = (
            f"at the {level} level the data cannot tell the two apart (the interval includes 0), "
            "which is not evidence that they are equally good."
        )
    return on_data, f"{head} {numbers}: {verdict}"


# ----------------------------------------------------------------- glossary
GLOSSARY = {
    "ω (omega)": "How many correct answers one wrong answer wipes out: (hand-off value − wrong value) / "
    "(correct value − hand-off value). ω = 4 means a mistake costs four times what a right answer earns "
    "over handing the item to a person.",
    "threshold": "The model acts on an item when its confidence is at least the threshold; below it, the item is "
    "handed to a person.",
    "no-model baseline": "Hand every item to a person: the value every model must beat.",
    "share automated (coverage)": "The share of items the model acts on instead of handing them over.",
    "VOC (value operating characteristic)": "The value per item of a model plotted against ω: one curve shows the "
    "model's worth for every ratio of mistake cost to reward.",
    "ω_sup": "The largest ω at which the model is still worth more than handing everything over; beyond it, "
    "the model is useless.",
    BEST_POSSIBLE: "A threshold tuned on the very items it is judged on (the command line's --mode oracle): an "
    "upper bound nobody can reach in production.",
    "ECE (expected calibration error)": "The average gap between the confidence a model states and how often it "
    "is right; 0 means a 90%-confident answer is right 90% of the time.",
    "MCE (maximum calibration error)": "The largest such gap in any confidence bin.",
    "NLL (negative log-likelihood)": "How surprised the model is by the true answers; lower is better.",
    "Brier score": "The mean squared error of the predicted probabilities; lower is better.",
    "VOC area": "The area under a model's VOC curve (counting only where it is above zero) over a range of ω: "
    "how much value the model brings over that whole family of use cases, not just yours.",
    "learn-then-test": "How a guarantee on the error rate is certified: " + CERTIFIED_ON + " (fixed-sequence "
    "testing), each with an exact binomial test; the first that fails stops the walk, so the chosen threshold keeps "
    "its promise with the stated confidence. The candidates are picked from the confidences alone, before any "
    "label is read, which is why the same tuning items can both choose the threshold and back the promise.",
    "dimensionless value": "The value per item on a scale where 0 is handing everything over and 1 is a "
    "perfect model that is always right.",
    "paired comparison": "Two models judged on the same items, item by item; the differences cancel the luck "
    "of which items ended up in the sample.",
    # Named as the tables' columns are (INTERVAL_HEADER), and as the sentences say it (a likely range).
    INTERVAL_HEADER + " (likely range)": "The range of values per item that new data from the same source would "
    "plausibly give (a confidence interval); 95% of such ranges contain the true value. It allows for outcomes "
    "that are rare or were never seen: no wrong answer among a few hundred items does not mean no risk when one "
    "costs a lot.",
}


# ------------------------------------------------------------------ verdict
_names = names


def verdict_headline(verdict, currency: str = "") -> str:
    """One sentence a product manager can repeat: what to deploy, or why nothing should be.

    Parameters
    ----------
    verdict : valuecore.Verdict
    currency : str
    """
    v = verdict
    if v.degenerate == "no_models":
        return "No model could be evaluated on the chosen data."
    if v.degenerate == "pointless":
        return (
            "With these values a correct answer is worth no more than handing the item over, so no model adds value: "
            "keep handing items to people (or revisit the values)."
        )
    if v.degenerate == "all_useless":
        return (
            f"Keep handing items to people: no model earns more than the no-model baseline "
            f"({money(v.baseline_per_item, currency)} per item)."
        )
    # Which model to deploy over every rule is the recommendation's to say (recommendation_headline); this
    # sentence ranks the models under one rule, so it never says "Deploy" (two answers would contradict).
    if v.standings and not v.standings[0].gain_low > 0:
        return (f"{v.best} earns the most on these items, but no model is shown to earn more than handing every "
                "item to a person on new items.")
    if v.contenders:
        level = "is" if len(v.contenders) == 1 else "are"
        return (f"{v.best} earns the most on these items; {_names(v.contenders, 'and')} {level} level with it "
                "within noise.")
    others = len(v.standings) - 1
    if others <= 0:
        return f"{v.best} is the only model judged."
    return (f"{v.best} earns the most, clearly more than "
            + ("the other model." if others == 1 else f"the {significant(others)} other models."))


def rule_phrase(policy, confidences=None) -> str:
    """A fitted policy's rule in words: ``act when confidence ≥ 0.682``, ``per-class thresholds``, ..."""
    if policy is None:
        return "always hand off"
    if policy.kind in ("threshold", "calibrated_threshold"):
        return threshold_phrase(policy.threshold, confidences)
    if policy.kind == "accept_all":
        return "act on every item"
    if policy.kind == "expected_value":
        return "act when acting is worth more than handing over (expected-value rule)"
    if policy.kind == "two_tier":
        middle = policy.assist_threshold
        return threshold_phrase(policy.threshold, confidences) + (
            "" if middle is None else f"; a person confirms from confidence {threshold_on_data(middle, confidences)}")
    if policy.kind == "segment_thresholds":
        return (f"{_rule_words(policy.kind, policy)} ({_segment_thresholds(policy, confidences)}; segments not seen "
                "in tuning are handed off)")
    if policy.kind == "shortlist":
        spec = policy.shortlist
        listed = ("" if spec["list_threshold"] is None else
                  f"; a shortlist of the {spec['k']} likeliest classes" if spec["rule"] == "top_k" else
                  f"; a shortlist of the likeliest classes up to probability {spec['level']:.3g}")
        return threshold_phrase(policy.threshold, confidences) + (
            listed + f" from confidence {threshold_on_data(spec['list_threshold'], confidences)}" if listed else "")
    return "a threshold per predicted class"


def shortlist_tiers(tiers: dict) -> str:
    """The tiers of a shortlist policy on the evaluated split (``evaluation.shortlist``) in one sentence."""
    return (f"{count(tiers['n_auto'])} items acted on alone, {count(tiers['n_listed'])} handed off with a shortlist "
            f"({count(tiers['n_listed_hit'])} of those lists held the answer; {tiers['mean_list_size']:.2g} classes on "
            f"average) and {count(tiers['n_handoff'])} handed off blank.")


_BASIS = {
    "paired": "a paired comparison on the same items",
    "overlap": "overlapping 95% intervals (the runs could not be paired item by item)",
    "mixed": "paired comparisons where the runs hold the same items, overlapping intervals otherwise",
}


def verdict_sentences(verdict, currency: str = "", *, period: str = "", volume: float | None = None,
                      confidences=None) -> list[str]:
    """The verdict's supporting sentences: value, share automated, baseline, ties, how many more items.

    Parameters
    ----------
    verdict : valuecore.Verdict
    currency : str
    period : str
        How the expected volume is counted ("month", "day"), for the value per period.
    volume : float, optional
        Expected number of items per period.
    confidences : array-like, optional
        The best model's confidences on the data shown: its threshold is written with the digits that tell
        its decision apart on them (:func:`threshold_on_data`).
    """
    v = verdict
    sentences = []
    if v.unlabelled:
        sentences.append(
            f"{_names(v.unlabelled)} {'is' if len(v.unlabelled) == 1 else 'are'} left out of the verdict: "
            "the evaluated items have no true labels for them, so their value is an estimate that cannot be tested."
        )
    if v.degenerate in ("no_models", "pointless"):
        return sentences
    if v.degenerate == "all_useless":
        if v.best_per_item < v.baseline_per_item:
            sentences.append(
                f"The best of them, {v.best}, earns {money(v.best_per_item, currency)} per item, "
                f"{money(v.baseline_per_item - v.best_per_item, currency)} less than handing everything over."
            )
        else:
            sentences.append(
                f"The best any model can do here is hand every item over ({money(v.baseline_per_item, currency)} "
                "per item), which needs no model at all."
            )
        return sentences
    gain = v.best_per_item - v.baseline_per_item
    sentences.append(
        f"{v.best} earns {money(v.best_per_item, currency)} per item ({rule_phrase(v.best_policy, confidences)}), "
        f"{money(gain, currency)} more than handing every item to a person, and automates {percent(v.coverage)} "
        "of the items."
    )
    best = v.standings[0] if v.standings else None
    if best is not None and not best.gain_low > 0:
        sentences.append(
            "These items do not show that it earns more than handing items over on new items: all we can be sure "
            f"of is that it {gain_floor(best.gain_low, currency)} (a lucky fit looks the same)."
        )
    if volume is not None and math.isfinite(volume) and volume > 0:
        per = f" per {period}" if period else ""
        sentences.append(
            f"At {significant(volume)} items{per} that is {projected(v.best_per_item * volume, currency)}{per} "
            f"({projected(gain * volume, currency)}{per} more than no model)."
        )
    if v.abstain_pointless:
        sentences.append(
            "Handing items over is never better than a wrong answer with these values, so acting on every item "
            "is as good as any threshold."
        )
    if v.contenders:
        sentences.append(
            f"{_names([v.best, *v.contenders])} cannot be told apart on these items, judged by {_BASIS[v.basis]}; "
            "pick on other grounds (cost to run, explainability) or label more items."
        )
        if v.items_to_separate is not None and math.isfinite(v.items_to_separate):
            sentences.append(
                f"Telling {v.best} and {v.runner_up} apart would take about {significant(v.items_to_separate)} "
                f"labelled items in all (there are {significant(v.n_items)} now), if the gap stays "
                f"{amount(v.runner_up_gap, currency)} per item."
            )
        elif v.items_to_separate is not None:
            sentences.append(
                f"{v.best} and {v.runner_up} are worth exactly the same on these items: more labelled items "
                "would not tell them apart."
            )
    elif v.runner_up is not None:
        sentences.append(
            f"It is ahead of every other model beyond noise (judged by {_BASIS.get(v.basis, 'its intervals')})."
        )
    return sentences


def simpler_rule_sentences(comparison, currency: str = "", labels=None) -> list[str]:
    """Say out loud when a richer rule does not earn its complexity (see :func:`valuecore.simpler_rule`).

    Parameters
    ----------
    comparison : valuecore.RuleComparison
    labels : mapping, optional
        Plain names of the rule kinds.
    """
    labels = labels or {}
    c = comparison
    rich, simple = labels.get(c.rich_kind, c.rich_kind), labels.get(c.simple_kind, c.simple_kind)
    if c.rich_per_item < c.simple_per_item:
        return [
            f"The richer rule ({rich}) earns {amount(c.simple_per_item - c.rich_per_item, currency)} per item less "
            f"than the simpler one ({simple}) on the evaluation items: it fitted the tuning items too closely "
            f"(overfitting). Use the simpler rule."
        ]
    if c.within_noise:
        return [
            f"The richer rule ({rich}) earns {amount(c.rich_per_item - c.simple_per_item, currency)} per item more "
            f"than the simpler one ({simple}), but that gain is within noise ({_level(c.confidence)} interval "
            f"{amount(c.low, currency)} to {amount(c.high, currency)}). Prefer the simpler rule: it is easier to "
            "explain and less likely to have fitted the tuning items by chance."
        ]
    return []


# ------------------------------------------------------------ recommendation
RULE_NAMES = {
    "accept_all": "no hand-offs (act on every item)",
    "threshold": "one threshold",
    "calibrated_threshold": "the calibrated threshold ω/(1+ω)",
    "class_thresholds": "a threshold per class",
    "calibrated_class_thresholds": "a calibrated threshold per class",
    "expected_value": "the expected-value rule",
    "two_tier": "two tiers (a person confirms the middle tier)",
    "shortlist": "a shortlist (a person picks from the likeliest classes in the middle tier)",
    "segment_thresholds": "a threshold per segment",
    "recommended": "each model's recommended rule",
}


def rule_name(kind: str | None) -> str:
    """A policy kind in plain words (``"threshold"`` → ``"one threshold"``)."""
    return "no model" if kind is None else RULE_NAMES.get(kind, kind)


def refitted_note(refit) -> str:
    """A :class:`~valuecore.recommendation.RuleRefitted` in words: which model now holds which rule."""
    return (f"{refit.model}: its policy is the recommended rule, {rule_name(refit.kind)}, "
            f"not {rule_name(refit.previous)}")


# Per-class thresholds are spelled out in a headline for this many classes at most (else: see the policy).
_CLASSES_SPELLED_OUT = 3


def _rule_words(kind: str, policy=None) -> str:
    """``rule_name(kind)``; for thresholds per segment (a ``SegmentRule``) with their column and caps:
    "a threshold per segment of region with caps (hand-off rate within 5.0% of each other)"."""
    if kind != "segment_thresholds" or policy is None:
        return rule_name(kind)
    caps = policy.caps
    what = "per-class thresholds" if policy.policy.class_thresholds is not None else "a threshold"
    return f"{what} per segment of {policy.column}" + (f" with caps ({segment_caps_text(caps)})" if caps else "")


def _segment_thresholds(policy, confidences=None) -> str:
    """Each segment's threshold: "act when confidence ≥ 0.83 in 50_plus, ≥ 0.9 in under_50" ("never in x": x is
    always handed off)."""
    if policy.policy.class_thresholds is not None:
        return "; ".join(f"in {name}: {segment_rule_phrase(None, per_class, confidences)}"
                         for name, per_class in policy.policy.class_thresholds)
    parts = [f"never in {name}" if t is None else f"≥ {threshold_on_data(t, confidences)} in {name}"
             for name, t in policy.policy.thresholds]
    return f"act when confidence {', '.join(parts)}"


def _model_and_rule(model: str, kind: str, policy=None, confidences=None) -> str:
    text = f"{model} with {_rule_words(kind, policy)}"
    if policy is not None and kind == "segment_thresholds":
        if len(policy.policy.thresholds or policy.policy.class_thresholds) <= _CLASSES_SPELLED_OUT:
            text += f" ({_segment_thresholds(policy, confidences)})"
    elif policy is not None and kind in ("threshold", "calibrated_threshold"):
        text += f" ({threshold_phrase(policy.threshold, confidences)})"
    elif policy is not None and policy.class_thresholds and len(policy.class_thresholds) <= _CLASSES_SPELLED_OUT:
        parts = [f"never on a predicted {label}" if t is None else
                 f"on a predicted {label} when confidence ≥ {threshold_on_data(t, confidences)}"
                 for label, t in policy.class_thresholds]
        text += f" (act {', '.join(parts)})"
    return text


def recommendation_headline(recommendation, confidences=None) -> str:
    """What to deploy, in a few words: ``Deploy mlp with one threshold (act when confidence ≥ 0.99).``

    ``confidences``: the recommended model's confidences on the data shown; the threshold is then written
    with the digits that tell its decision apart on them (see :func:`threshold`), not to its last digit.
    """
    r = recommendation
    if r.choice == "no_candidates" and SEGMENT_VALUES_NOTE in r.skipped:
        return "Nothing is recommended: the segments have their own values (see the thresholds per segment below)."
    if r.choice == "no_candidates":
        return "Nothing can be recommended: no model could be judged on labelled items."
    if r.choice == "not_yet":
        return "Not yet: hand every item to a person until a model is shown to earn more."
    if r.model is None:
        return "Deploy no model: hand every item to a person."
    return f"Deploy {_model_and_rule(r.model, r.kind, r.policy, confidences)}."


def gain_floor(low: float, currency: str = "") -> str:
    """The least a rule earns per item more than handing the item over that the data makes us sure of, from the
    lower bound of its gain (``Candidate.gain_low``): "earns at least $0.12 more per item than no model", or
    "loses at most $3.20 per item against no model"."""
    if not math.isfinite(low):
        return "earns anything (too few items to say)"
    if low >= 0:
        return f"earns at least {amount(low, currency)} more per item than no model"
    return f"loses at most {amount(-low, currency)} per item against no model"


def _settle_clause(r) -> str:
    """How many labelled items would settle a "not yet", if the outcomes kept their shares."""
    needed = r.items_to_separate
    if needed is None or not math.isfinite(needed):
        return " No number of labelled items in these shares would show it earns more."
    return (f" About {significant(needed)} labelled items in all (there are {significant(r.n_items)}) would show "
            "whether it earns more, if its results held.")


def standings_columns(recommendation) -> tuple[str, ...]:
    """The headers of :func:`standings_rows`."""
    return ("Model", "Rule", "Value per item", "Acted on", f"Gain, {percent(recommendation.sure, 0)} sure",
            "Against the best here")


def standings_rows(recommendation, currency: str = "") -> list[tuple[str, ...]]:
    """Every (model, rule) judged, best on the evaluated items first, then the no-model row, as text.

    One row per candidate, in the columns of :func:`standings_columns`; the page and the HTML report show
    these rows. "Gain" is the least it earns per item more than handing the item over that the data makes
    us ``recommendation.sure`` sure of on new items: above 0, the rule is shown to earn more than no model;
    negative, it could lose. The last column says what the evaluated items can tell apart: the gap to the
    best here, and whether the data separates it.
    """
    r = recommendation
    rows = []
    best = r.candidates[0] if r.candidates else None
    for c in r.candidates:
        if (c.model, c.kind) == (r.model, r.kind):
            against_best = "recommended"
        elif r.model is None and r.alternative is c and r.choice == "not_yet":
            against_best = "most promising"
        elif c is best or c.difference == 0:
            against_best = "best"
        else:
            gap = amount(-c.difference, currency)
            against_best = f"{gap} (not separated)" if c.contender else f"{gap} (clearly behind)"
        rows.append((c.model, rule_name(c.kind), money(c.per_item, currency), percent(c.coverage),
                     amount(c.gain_low, currency) if math.isfinite(c.gain_low) else "too few items", against_best))
    rows.append(("no model (hand everything over)", "", money(r.baseline_per_item, currency), percent(0.0), "",
                 "the baseline"))
    return rows


def _items_clause(r) -> str:
    if r.items_to_separate is None:
        return ""
    if not math.isfinite(r.items_to_separate):
        return "; they are worth exactly the same on these items, so more labelled items would not separate them"
    return (f"; about {significant(r.items_to_separate)} labelled items in all would tell them apart (there are "
            f"{significant(r.n_items)}), if the gap stays as it is")


def recommendation_reason(recommendation, currency: str = "") -> str:
    """Why this recommendation, in plain words: its value, what separates it from the alternative, how sure.

    Parameters
    ----------
    recommendation : valuecore.Recommendation
    currency : str
    """
    r = recommendation
    if r.model is None:
        if r.choice == "no_candidates" and SEGMENT_VALUES_NOTE in r.skipped:
            return ("The segments have their own values, and the recommendation prices every rule with one set of "
                    "values, so it does not weigh the thresholds per segment; each segment's figures, at its own "
                    "values, are below.")
        if r.choice == "no_candidates":
            return "No model and rule could be judged on labelled items, so nothing can be recommended."
        if r.choice == "pointless":
            return ("With these values no action earns more than handing an item to a person, so no model can "
                    "add value.")
        a = r.alternative
        if r.choice == "not_yet":
            return (f"No model is shown to earn more than handing every item to a person. The most promising, "
                    f"{_model_and_rule(a.model, a.kind)}, earns {amount(a.per_item - a.baseline, currency)} more "
                    f"per item on the {significant(r.n_items)} evaluated items, but on new items we can be "
                    f"{percent(r.sure, 0)} sure only that it {gain_floor(a.gain_low, currency)}: a lucky fit on "
                    f"these items looks the same.{_settle_clause(r)}")
        return (f"No model earns more than handing every item to a person ({money(r.baseline_per_item, currency)} "
                f"per item): the best, {_model_and_rule(a.model, a.kind)}, earns {money(a.per_item, currency)} "
                "per item on the evaluated items.")
    gain = r.per_item - r.baseline_per_item
    head = (f"{r.model} with {_rule_words(r.kind, r.policy)} earns {money(r.per_item, currency)} per item on the "
            f"{significant(r.n_items)} evaluated items, {money(gain, currency)} more than handing every item to a "
            "person")
    a = r.alternative
    if r.choice == "only" or a is None:
        body = ""
    elif r.choice == "clear":
        body = (f", and more than every other model and rule beyond noise (the next, "
                f"{_model_and_rule(a.model, a.kind)}, earns {money(a.per_item, currency)})")
    elif r.choice == "lower_bound":
        own = next((c for c in r.candidates if c.model == r.model and c.kind == r.kind), None)
        sure = percent(r.sure, 0)
        more = ("as much" if r.alternative_gap == 0 else f"{amount(r.alternative_gap, currency)} more per item")
        body = (f"; {_model_and_rule(a.model, a.kind)} earns {more} on these items, but on new items we can be "
                f"{sure} sure only that it {gain_floor(a.gain_low, currency)}, against "
                f"{amount(own.gain_low, currency)} for {r.model}{_items_clause(r)}")
    else:  # highest, level with others no simpler
        gap = "" if r.alternative_gap == 0 else f" ({amount(-r.alternative_gap, currency)} less per item)"
        body = f"; {_model_and_rule(a.model, a.kind)} is level within noise{gap}{_items_clause(r)}"
    tail = ""
    if r.abstain_pointless:
        tail += (" Handing items over is never better than a wrong answer with these values, so acting on every "
                 "item is as good as any threshold.")
    if not r.clears_baseline:
        if math.isfinite(r.low) and math.isfinite(r.high):
            tail += (f" Its likely range ({amount(r.low, currency)} to {amount(r.high, currency)} per item) still "
                    f"includes earning no more than no model ({money(r.baseline_per_item, currency)}).")
        else:
            tail += " Too few items for a likely range: label more before relying on it."
    return head + body + "." + tail


# -------------------------------------------------------------- segments
_CAP_NAMES = {"handoff_gap": "hand-off rate", "error_gap": "error rate", "value_gap": "value per item"}


def segment_caps_text(caps: dict, currency: str = "") -> str:
    """The caps in words: ``hand-off rate within 5.0%, value per item within $0.10``; ``none``.

    >>> segment_caps_text({"handoff_gap": 0.05, "value_gap": 0.1}, "$")
    'hand-off rate within 5.0% of each other, value per item within $0.10 of each other'
    """
    if not caps:
        return "none"
    return ", ".join(f"{_CAP_NAMES[k]} within {money(v, currency) if k == 'value_gap' else percent(v)} of each other"
                     for k, v in caps.items())


def segment_cap_sentence(fit, currency: str = "") -> str:
    """What the caps cost, or that nothing holds them (a ``SegmentFit``).

    Examples: ``The caps cost $0.03 per item (the thresholds within the caps earn $0.41 per item, $0.44 without
    them).``, ``The best thresholds already hold the caps: they cost nothing.``
    """
    caps = fit.caps.as_dict()
    per_class = getattr(fit, "rule", "threshold") == "class_thresholds"
    if not caps:
        return ("No caps: each segment has its own best per-class thresholds." if per_class else
                "No caps: each segment has its own best threshold.")
    if not fit.feasible:
        if per_class and not fit.exact:
            return (f"No choice of per-class thresholds that the search kept holds the caps "
                    f"({segment_caps_text(caps, currency)}); the search is approximate (it kept "
                    f"{count(fit.n_choices)} choices), so one may exist. The thresholds shown are each segment's "
                    "best, which break them.")
        return (f"No choice of thresholds holds the caps ({segment_caps_text(caps, currency)}); the thresholds shown "
                "are each segment's best, which break them.")
    if fit.exact:
        searched = ""
    elif per_class:
        searched = (f" The search is approximate: it kept {count(fit.n_choices)} of the choices of per-class "
                    "thresholds to stay within its budget. These thresholds hold the caps; the best within the caps "
                    "may earn more, but never more than without them.")
    else:
        searched = (" The search thinned the bands to stay within its budget: these thresholds hold the caps, and "
                    "cost at most the figure shown.")
    if fit.cap_cost_per_item <= 0:
        return "The best thresholds already hold the caps: they cost nothing." + searched
    per_item = fit.value_total / fit.n_items
    free = fit.unconstrained_value_total / fit.n_items
    return (f"The caps cost {amount(fit.cap_cost_per_item, currency)} per item (the thresholds within the caps earn "
            f"{amount(per_item, currency)} per item, {amount(free, currency)} without them).{searched}")


def segment_rule_phrase(threshold, class_thresholds=None, confidences=None) -> str:
    """A segment's rule in words: its threshold (:func:`threshold_phrase`), or its per-class thresholds
    (``class_thresholds``: pairs or a mapping class -> threshold or None).

    >>> segment_rule_phrase(0.75), segment_rule_phrase(None, {"a": 0.8, "b": None})
    ('act when confidence ≥ 0.750', 'act on a when confidence ≥ 0.800; never on b')
    >>> segment_rule_phrase(None, {"a": None, "b": None})
    'always hand off'
    """
    if class_thresholds is None:
        return threshold_phrase(threshold, confidences)
    pairs = list(class_thresholds.items() if isinstance(class_thresholds, dict) else class_thresholds)
    if all(_missing(t) for _, t in pairs):
        return "always hand off"
    parts = [f"never on {label}" if _missing(t) else
             f"on {label} when confidence ≥ {threshold_on_data(t, confidences)}" for label, t in pairs]
    return "act " + "; ".join(parts)


def segment_warning(standing) -> str | None:
    """A warning for a segment too small to say anything (a ``SegmentStanding``), else None."""
    if not standing.too_small:
        return None
    return (f"segment {standing.segment!r} is too small to say anything: {count(standing.n_items)} items, "
            f"{count(standing.n_acted)} acted on (fewer than 30); its rates and value are facts about these items only")


def segments_too_small(standings) -> str | None:
    """One sentence for every segment too small to generalise from (``SegmentStanding``s), else None.

    >>> from types import SimpleNamespace as S
    >>> said = segments_too_small([S(segment="1", too_small=True, n_items=58, n_acted=25),
    ...                            S(segment="2", too_small=True, n_items=52, n_acted=20),
    ...                            S(segment="3", too_small=False, n_items=900, n_acted=700)])
    >>> import textwrap; print(textwrap.fill(said, 100))
    segments '1' (58 items, 25 acted on) and '2' (52 items, 20 acted on) are too small to say anything
    about new items (fewer than 30 acted on): their rates and values describe these items only
    """
    small = [s for s in standings if s.too_small]
    if not small:
        return None
    listed = [f"{s.segment!r} ({count(s.n_items)} items, {count(s.n_acted)} acted on)" for s in small]
    if len(listed) == 1:
        return (f"segment {listed[0]} is too small to say anything about new items (fewer than 30 acted on): its "
                "rates and value describe these items only")
    return (f"segments {', '.join(listed[:-1])} and {listed[-1]} are too small to say anything about new items "
            "(fewer than 30 acted on): their rates and values describe these items only")


def segment_rows(evaluation, currency: str = "", confidences=None) -> list[tuple[str, ...]]:
    """One row of text per segment: segment, rule, items, hand-off rate, error rate, value per item, its interval,
    certified error bound (a ``SegmentEvaluation``). ``confidences``: each segment's confidences, so that a
    threshold reads with the digits that tell its decision apart (:func:`threshold_on_data`)."""
    rows = []
    for r in evaluation.segments:
        seen = None if confidences is None else confidences.get(r.segment)
        interval = r.interval
        likely = (f"{amount(interval.low, currency)} to {amount(interval.high, currency)}"
                  if math.isfinite(interval.low) and math.isfinite(interval.high) else "too few items")
        rows.append((r.segment, segment_rule_phrase(r.threshold, r.class_thresholds, seen), count(r.n_items),
                     percent(r.handoff_rate),
                     percent(r.selective_risk), money(r.value_per_item, currency), likely,
                     DASH if r.risk_upper_bound is None else percent(r.risk_upper_bound)))
    return rows


# Why the recommendation leaves thresholds per segment out when segments have their own values.
SEGMENT_VALUES_NOTE = ("thresholds per segment: left out of the recommendation, because some segments have their own "
                       "values and the recommendation prices every rule with one set of values; they are fitted and "
                       "shown below with each segment's own values")

SEGMENT_COLUMNS = ("segment", "rule", "items", "hand-off rate", "error rate", "value per item",
                   INTERVAL_HEADER, "error rate at most (90%)")
