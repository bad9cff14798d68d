"""The user's settings: everything that changes a number anywhere in the dashboard, as one frozen value.

:class:`Settings` is pure data (no Streamlit). It converts exactly

* to and from URL query parameters (:meth:`Settings.to_query`,
  :meth:`Settings.from_query`): floats are written with ``repr`` so every
  value comes back bit for bit; lists, pairs and the value matrix are JSON
  (which escapes any class or model name safely); a setting at its default
  is left out of the link. An unknown or invalid parameter is refused with a
  note and the default is used, never an exception;
* to and from the policy JSON (:func:`document_with_settings`,
  :func:`settings_from_document`): the document's own entries give the
  values or matrix, the decision rule, the recalibration, the splits and the
  models; a ``dashboard_settings`` block (the query parameters) adds what a
  policy does not say (currency, page-level choices). The data source is
  never taken from a document or replaced by one: the server reads only
  what the visitor chose in the sidebar.

``dashboard.state`` is the only module that keeps a :class:`Settings` in the
session; read its docstring for the rules.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields, replace
from typing import Any, Mapping

import valuecore as vc

from .limits import clamp_value

CALIBRATION_METHODS = ("none", "temperature", "isotonic")
KINDS = ("threshold", "calibrated_threshold", "accept_all", "class_thresholds", "calibrated_class_thresholds",
         "expected_value")
# The pages' rule: a kind, or "recommended" (each model the rule the recommendation would choose for it,
# valuecore.recommended_rules), the default, as for `report`. A literal choice, not a default that depends
# on the data: so a link leaves it out only when it is in force, and reproduces the page wherever it opens.
RULES = (vc.RECOMMENDED_RULE, *KINDS)
VOC_MODES = ("tuned", "oracle", "calibrated", "accept_all")
CHUNKINGS = ("period", "count")
PERIODS = ("D", "W", "MS")
BIN_STRATEGIES = ("uniform", "quantile")
HOME_PERIODS = ("month", "week", "day", "year")  # dashboard.views.home.PERIODS (a test keeps them equal)
PROMISE_CONFIDENCES = (0.8, 0.9, 0.95, 0.99)
LIST_RULES = ("top_k", "cumulative")  # a shortlist of a fixed length, or one that grows with doubt
COMPARE_RESAMPLES = (500, 1000, 2000, 5000, 10000)  # the Compare page's slider offers exactly these
VOC_OMEGA_MAX, VOC_OMEGA_STEP = 100.0, 0.5  # the VOC page's ω-range slider
VOC_AREA_MAX = 1e6  # a cell of the VOC page's range table (the integrals stay finite)
# A currency is printed next to amounts in markdown: no character there may start a link, emphasis or code.
_CURRENCY_FORBIDDEN = set("\\`*_{}[]()<>#!|:~&^=+")
VOC_AREA_ROWS = 20  # rows of the VOC page's range table a link may hold
SETTINGS_BLOCK = "dashboard_settings"  # the policy JSON's extra object (the query parameters)


class _Invalid(ValueError):
    pass


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Invalid("not a finite number")
    return value


def _json(text: str):
    def refuse(name):
        raise _Invalid(f"{name} is not a number")

    try:
        return json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as error:
        raise _Invalid(f"not valid JSON ({error.msg})") from None


def _names(text: str) -> tuple[str, ...]:
    # A hand-edited link ("m=logreg") is told what to write, not that it is "not valid JSON (Expecting value)".
    expected = 'expected a JSON list of names, such as ["logreg","mlp"]'
    try:
        data = _json(text)
    except _Invalid:
        raise _Invalid(expected) from None
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        raise _Invalid(expected)
    return tuple(data)


def _pair_of(kind):
    def parse(text: str):
        data = _json(text)
        if not isinstance(data, list) or len(data) != 2:
            raise _Invalid("expected a JSON list of two items")
        if kind is float:
            if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in data):
                raise _Invalid("expected two numbers")
            low, high = float(data[0]), float(data[1])
            if not (math.isfinite(low) and math.isfinite(high) and 0 <= low < high):
                raise _Invalid("expected 0 ≤ from < to")
            # Snapped to what the slider shows (0 to 100 in steps of 0.5): a wider range drew no chart.
            low, high = (round(min(x, VOC_OMEGA_MAX) / VOC_OMEGA_STEP) * VOC_OMEGA_STEP for x in (low, high))
            if not low < high:
                raise _Invalid(f"expected 0 ≤ from < to ≤ {VOC_OMEGA_MAX:g}")
            return (low, high)
        if not all(isinstance(x, str) for x in data):
            raise _Invalid("expected two names")
        return (data[0], data[1])

    return parse


def _number_in(low: float, high: float, read=_finite, words: str = "a number"):
    def parse(text: str):
        value = read(text)
        if not low <= value <= high:
            show = "{:,}" if read is int else "{:g}"
            raise _Invalid(f"expected {words} from {show.format(low)} to {show.format(high)}")
        return value

    return parse


def _number_among(options, read=_finite):
    def parse(text: str) -> float:
        value = read(text)
        if value not in options:
            raise _Invalid(f"expected one of {', '.join(f'{o:g}' for o in options)}")
        return value

    return parse


def _area_rows(text: str):
    """The VOC page's range rows: [[from, to], ...], each a number >= 0 or null (an empty cell)."""
    data = _json(text)
    if not isinstance(data, list) or len(data) > VOC_AREA_ROWS:
        raise _Invalid(f"expected a JSON list of at most {VOC_AREA_ROWS} rows")
    rows = []
    for row in data:
        if not isinstance(row, list) or len(row) != 2:
            raise _Invalid("expected rows of two items")
        for cell in row:
            if cell is not None and (isinstance(cell, bool) or not isinstance(cell, (int, float))
                                     or not math.isfinite(cell) or not 0 <= cell <= VOC_AREA_MAX):
                raise _Invalid(f"expected numbers from 0 to {VOC_AREA_MAX:g} or null")
        rows.append(tuple(None if c is None else float(c) for c in row))
    return tuple(rows)


def _matrix(text: str):
    data = _json(text)
    if not isinstance(data, dict) or set(data) != {"classes", "values"}:
        raise _Invalid('expected {"classes": [...], "values": [[...], ...]}')
    classes, values = data["classes"], data["values"]
    if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
        raise _Invalid("classes must be a list of names")
    try:
        matrix = vc.ValueMatrix(tuple(classes), values)
    except (ValueError, TypeError) as error:
        raise _Invalid(str(error)) from None
    return _matrix_tuple(matrix)


def _matrix_tuple(matrix: vc.ValueMatrix):
    return (tuple(matrix.classes), tuple(tuple(float(x) for x in row) for row in matrix.values))


def _choice(options):
    def parse(text: str) -> str:
        if text not in options:
            raise _Invalid(f"expected one of {', '.join(options)}")
        return text

    return parse


def _int_in(low: int, high: int):
    return _number_in(low, high, read=int, words="a whole number")


def _text(limit: int):
    def parse(text: str) -> str:
        if len(text) > limit:
            raise _Invalid(f"longer than {limit} characters")
        return text

    return parse


def _amount(text: str) -> float:
    """A value inside the range the core computes exactly (dashboard.limits): a larger one is refused."""
    value, limit = _finite(text), vc.policy_json.VALUE_LIMIT
    if abs(value) > limit or 0 < abs(value) < 1 / limit:
        raise _Invalid(f"expected a value from -{limit:g} to {limit:g}, and 0 or at least {1 / limit:g} in size")
    return value


def _currency(text: str) -> str:
    text = _text(5)(text)
    if any(c in _CURRENCY_FORBIDDEN or not c.isprintable() for c in text):
        raise _Invalid("expected a currency sign such as $, €, CHF")
    return text


def _bool(text: str) -> bool:
    if text not in ("0", "1"):
        raise _Invalid("expected 0 or 1")
    return text == "1"


def _write_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _write(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    return _write_json([list(v) if isinstance(v, tuple) else v for v in value])


def _write_matrix(value) -> str:
    classes, rows = value
    return _write_json({"classes": list(classes), "values": [list(r) for r in rows]})


@dataclass(frozen=True)
class Settings:
    """Everything the user chose that changes a number or what a page shows.

    Attributes
    ----------
    source : str
        ``"sample:<name>"``, ``"upload"`` or ``"folder:<path>"`` (a path the
        server operator allows; see the sidebar).
    models : tuple of str or None
        The selected models, in order; None selects every loaded model.
    v_correct, v_abstain, v_wrong : float
        The three outcome values (used when ``matrix`` is None).
    matrix : (classes, rows) or None
        A per-class value matrix: class names, and rows (true class) of
        values (predicted class, then abstain). When set, it replaces the
        three values everywhere.
    currency : str
    rule : str
        The decision rule: a ``valuecore`` policy kind, or ``"recommended"`` (each model the rule the
        recommendation would choose for it; the default, as for ``report``).
    tune_split, eval_split : str or None
        None picks the default split.
    calibration : {"none", "temperature", "isotonic"}
    voc_mode, voc_range : the VOC page's threshold mode and ω range (None: from ω).
    compare_pair, compare_resamples, compare_seed : the Compare page's models (None: the recommended one and its
        closest rival) and bootstrap.
    monitor_split, monitor_chunking, monitor_period, monitor_chunks, monitor_retune,
    backtest_split, backtest_chunks : the Monitor page.
    calibration_examined, calibration_bins, calibration_strategy : the Calibration page.
    what_if : float or None
        The Value page's "what if I pick the threshold" threshold (None: off).
    value_show_tuning, value_hist_model : the Value page's tuning-split curves and histogram model (None: the best).
    voc_bands, voc_areas : the VOC page's bootstrap bands and its table of ω ranges (rows of from, to; None
        is an empty cell).
    constraints_* : the Capacity & guarantees page (model None: the recommended one; per class None: as the
        pages' rule for that model; the two-tier and shortlist values None: from the three values; list size
        None: two classes, or fewer when the run has fewer).
    monitor_bands_model, monitor_bands_split : the Monitor page's bands (None: the model that alerts most on the
        production split, or the recommended one; the production split).
    reviewers_* : that page's reviewers panel: the share handed over and the reviewers' accuracy when they see
        few items (``_low``) and many (``_high``), and the value of their mistake (None: the wrong answer's).
    matrix_classes, matrix_model, matrix_rule : the Cost matrix page's class set, model and rule in detail
        (None: the first one offered).
    home_volume, home_period : the Start page's expected items per period.
    segment_column, segment_model : the Segments page's segment column and model (None: the first column the
        runs carry; the recommended model).
    segment_cap_handoff, segment_cap_error, segment_cap_value : that page's caps on the gap between segments in
        hand-off rate, selective error rate (shares) and value per item (in the currency); None: no cap.
    export_segment_rule : the Export page's rule is thresholds per segment for every model (offered while a
        segment column is set; ``rule`` is kept for the other pages).
    """

    source: str = "sample:digits"
    models: tuple[str, ...] | None = None
    v_correct: float = 1.0
    v_abstain: float = 0.0
    v_wrong: float = -4.0
    matrix: tuple | None = None
    currency: str = "$"
    rule: str = vc.RECOMMENDED_RULE
    tune_split: str | None = None
    eval_split: str | None = None
    calibration: str = "none"
    voc_mode: str = "tuned"
    voc_range: tuple[float, float] | None = None
    compare_pair: tuple[str, str] | None = None
    compare_resamples: int = 2000
    compare_seed: int = 0
    monitor_split: str | None = None
    monitor_chunking: str = "period"
    monitor_period: str = "W"
    monitor_chunks: int = 10
    monitor_retune: bool = False
    backtest_split: str | None = None
    backtest_chunks: int = 5
    calibration_examined: str | None = None
    calibration_bins: int = 15
    calibration_strategy: str = "uniform"
    what_if: float | None = None
    value_show_tuning: bool = False
    value_hist_model: str | None = None
    voc_bands: bool = False
    voc_areas: tuple = ((0.0, 1.0), (1.0, 10.0))
    constraints_model: str | None = None
    constraints_volume: float = 1000.0
    constraints_capacity: float = 30.0
    constraints_reviewer: float = 10.0
    constraints_per_class: bool | None = None
    constraints_max_risk: float = 0.05
    constraints_confidence: float = 0.9
    constraints_v_ok: float | None = None
    constraints_v_bad: float | None = None
    constraints_cost: float | None = None
    constraints_weights_are_copies: bool = False
    constraints_list_size: int | None = None
    constraints_list_in: float | None = None
    constraints_list_out: float | None = None
    constraints_list_rule: str = "top_k"
    monitor_bands_model: str | None = None
    monitor_bands_split: str | None = None
    reviewers_rate_low: float = 0.02
    reviewers_acc_low: float = 0.95
    reviewers_rate_high: float = 0.10
    reviewers_acc_high: float = 0.60
    reviewers_v_wrong: float | None = None
    matrix_classes: tuple[str, ...] | None = None
    matrix_model: str | None = None
    matrix_rule: str | None = None
    home_volume: int = 10_000
    home_period: str = "month"
    segment_column: str | None = None
    segment_model: str | None = None
    segment_cap_handoff: float | None = None
    segment_cap_error: float | None = None
    segment_cap_value: float | None = None
    export_segment_rule: bool = False

    def __post_init__(self):
        # Widgets may hand over ints for float settings: stored as floats, a link brings back the same type.
        for name in _FLOAT_FIELDS:
            if getattr(self, name) is not None:
                object.__setattr__(self, name, float(getattr(self, name)))
        for name in ("models", "matrix_classes"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "voc_areas", tuple(tuple(None if c is None else float(c) for c in row)
                                                    for row in self.voc_areas))

    # ----------------------------------------------------------- values
    @property
    def use_case(self) -> vc.UseCase:
        return vc.UseCase(self.v_correct, self.v_abstain, self.v_wrong)

    @property
    def value_matrix(self) -> vc.ValueMatrix | None:
        if self.matrix is None:
            return None
        classes, rows = self.matrix
        # A cell is read within the range every page computes, intervals and the recommendation included, by
        # the sidebar's rule (``limits.clamp_value``: amounts below 1e-100 read as 0): a Values-per-class cell
        # of -5e-324 stopped every page that recommends a rule.
        return vc.ValueMatrix(classes, [[clamp_value(v)[0] for v in r] for r in rows])

    def with_values(self, values) -> Settings:
        """These settings with a UseCase (the matrix dropped) or a ValueMatrix in force."""
        return replace(self, **values_changes(values))

    # -------------------------------------------------------------- URL
    def to_query(self) -> dict[str, str]:
        """Query parameters of the settings that differ from the defaults."""
        out = {}
        for name, (key, _, write) in _FIELDS.items():
            value, default = getattr(self, name), _DEFAULTS[name]
            # repr, not ==: -0.0 == 0.0, and a link must bring back the very same bits
            if value is not None and (type(value) is not type(default) or repr(value) != repr(default)):
                out[key] = write(value)
        return out

    @classmethod
    def from_query(cls, params: Mapping[str, Any]) -> tuple[Settings, list[str]]:
        """Settings from query parameters, and a note per parameter refused (the default is used)."""
        changes, notes = {}, []
        by_key = {key: (name, parse) for name, (key, parse, _) in _FIELDS.items()}
        for key, raw in params.items():
            if isinstance(raw, (list, tuple)):
                raw = raw[-1] if raw else ""
            if key not in by_key:
                notes.append(f"The link parameter {key!r} is not known here; it was ignored.")
                continue
            name, parse = by_key[key]
            try:
                changes[name] = parse(str(raw))
            except (ValueError, TypeError, OverflowError) as error:
                reason = str(error) if isinstance(error, _Invalid) else "not readable"
                notes.append(f"The link's {key}={str(raw)[:40]!r} was refused ({reason}); the default is used.")
        return cls(**changes), notes


def values_changes(values) -> dict:
    """The settings fields that put a UseCase (dropping any matrix) or a ValueMatrix in force."""
    use_case = values.use_case
    if use_case is None:
        return {"matrix": _matrix_tuple(values)}
    return {"v_correct": float(use_case.v_correct), "v_abstain": float(use_case.v_abstain),
            "v_wrong": float(use_case.v_wrong), "matrix": None}


_DEFAULTS = {f.name: f.default for f in fields(Settings)}
_FLOAT_FIELDS = ("v_correct", "v_abstain", "v_wrong", "what_if", "constraints_volume", "constraints_capacity",
                 "constraints_reviewer", "constraints_max_risk", "constraints_confidence", "constraints_v_ok",
                 "constraints_v_bad", "constraints_cost", "constraints_list_in", "constraints_list_out",
                 "reviewers_rate_low", "reviewers_acc_low",
                 "reviewers_rate_high", "reviewers_acc_high", "reviewers_v_wrong", "segment_cap_handoff",
                 "segment_cap_error", "segment_cap_value")

# field -> (query key, parser, writer)
_FIELDS = {
    "source": ("src", _text(4096), _write),
    "models": ("m", _names, _write),
    "v_correct": ("vc", _finite, _write),
    "v_abstain": ("va", _finite, _write),
    "v_wrong": ("vw", _finite, _write),
    "matrix": ("vm", _matrix, _write_matrix),
    "currency": ("cur", _currency, _write),
    "rule": ("rule", _choice(RULES), _write),
    "tune_split": ("tune", _text(200), _write),
    "eval_split": ("eval", _text(200), _write),
    "calibration": ("cal", _choice(CALIBRATION_METHODS), _write),
    "voc_mode": ("voc", _choice(VOC_MODES), _write),
    "voc_range": ("vocr", _pair_of(float), _write),
    "compare_pair": ("pair", _pair_of(str), _write),
    "compare_resamples": ("boot", _number_among(COMPARE_RESAMPLES, read=int), _write),
    "compare_seed": ("seed", _int_in(0, 2**31 - 1), _write),
    "monitor_split": ("mon", _text(200), _write),
    "monitor_chunking": ("chunk", _choice(CHUNKINGS), _write),
    "monitor_period": ("period", _choice(PERIODS), _write),
    "monitor_chunks": ("nchunk", _int_in(2, 40), _write),
    "monitor_retune": ("retune", _bool, _write),
    "backtest_split": ("bt", _text(200), _write),
    "backtest_chunks": ("btchunk", _int_in(2, 20), _write),
    "calibration_examined": ("calx", _choice(CALIBRATION_METHODS), _write),
    "calibration_bins": ("bins", _int_in(5, 30), _write),
    "calibration_strategy": ("binning", _choice(BIN_STRATEGIES), _write),
    "what_if": ("whatif", _number_in(0.0, 1.0), _write),  # the Value page's slider: 0 to 1
    "value_show_tuning": ("showtune", _bool, _write),
    "value_hist_model": ("hist", _text(200), _write),
    "voc_bands": ("bands", _bool, _write),
    "voc_areas": ("areas", _area_rows, _write),
    "constraints_model": ("cmodel", _text(200), _write),
    "constraints_volume": ("perday", _number_in(1.0, 1e15), _write),
    "constraints_capacity": ("capacity", _number_in(0.0, 1e15), _write),
    "constraints_reviewer": ("reviewer", _number_in(1.0, 1e15), _write),
    "constraints_per_class": ("capclass", _bool, _write),
    "constraints_max_risk": ("maxrisk", _number_in(0.0, 0.3), _write),
    "constraints_confidence": ("sure", _number_among(PROMISE_CONFIDENCES), _write),
    "constraints_v_ok": ("vok", _amount, _write),
    "constraints_v_bad": ("vbad", _amount, _write),
    "constraints_cost": ("vconfirm", _number_in(0.0, 1e15), _write),
    "constraints_weights_are_copies": ("copies", _bool, _write),
    "constraints_list_size": ("listk", _int_in(1, 10**6), _write),
    "constraints_list_in": ("listin", _amount, _write),
    "constraints_list_out": ("listout", _amount, _write),
    "constraints_list_rule": ("listrule", _choice(LIST_RULES), _write),
    "monitor_bands_model": ("bmodel", _text(200), _write),
    "monitor_bands_split": ("bsplit", _text(200), _write),
    # The reviewers panel's boxes: shares from 0 to 1 (valuecore.constraints.Reviewers refuses others).
    "reviewers_rate_low": ("rvrate1", _number_in(0.0, 1.0), _write),
    "reviewers_acc_low": ("rvacc1", _number_in(0.0, 1.0), _write),
    "reviewers_rate_high": ("rvrate2", _number_in(0.0, 1.0), _write),
    "reviewers_acc_high": ("rvacc2", _number_in(0.0, 1.0), _write),
    "reviewers_v_wrong": ("rvwrong", _amount, _write),
    "matrix_classes": ("mclasses", _names, _write),
    "matrix_model": ("mmodel", _text(200), _write),
    "matrix_rule": ("mrule", _choice(KINDS), _write),
    "home_volume": ("volume", _int_in(1, 10**12), _write),
    "home_period": ("per", _choice(HOME_PERIODS), _write),
    "segment_column": ("segcol", _text(200), _write),
    "segment_model": ("segmodel", _text(200), _write),
    # The Segments page's caps: gaps between two shares (0 to 1), and between two values per item.
    "segment_cap_handoff": ("caphandoff", _number_in(0.0, 1.0), _write),
    "segment_cap_error": ("caperror", _number_in(0.0, 1.0), _write),
    "segment_cap_value": ("capvalue", _number_in(0.0, 1e15), _write),
    "export_segment_rule": ("expseg", _bool, _write),
}
QUERY_KEYS = frozenset(key for key, _, _ in _FIELDS.values())


# ----------------------------------------------------------- policy JSON
def document_with_settings(document: vc.policy_json.PolicyDocument, settings: Settings) -> dict:
    """The policy JSON (as a dict) with the settings it was made with (``dashboard_settings``)."""
    data = document.to_dict()
    data[SETTINGS_BLOCK] = settings.to_query()
    return data


def settings_from_document(data: Mapping, current: Settings) -> tuple[Settings, list[str]]:
    """The settings a policy JSON records, applied over ``current``; and notes on what could not be.

    The entries say the values or matrix, the rule (that of the entries other
    than the recommended model's, when the document recommends one; "recommended"
    when they differ; the block's when there is one), the
    recalibration, the splits and the models; the ``dashboard_settings`` block, when present,
    the rest. ``current.source`` is always kept. Raises ValueError when the
    document is not valid (see :meth:`valuecore.PolicyDocument.from_dict`).
    """
    document = vc.policy_json.PolicyDocument.from_dict(data)
    notes: list[str] = []
    block = data.get(SETTINGS_BLOCK) if isinstance(data, Mapping) else None
    if block is not None and not isinstance(block, Mapping):
        notes.append(f"The document's {SETTINGS_BLOCK} is not an object; it was ignored.")
        block = None
    base = current
    if block:
        from_block, block_notes = Settings.from_query({k: v for k, v in block.items() if k != "src"})
        notes += block_notes
        base = from_block
    restored = replace(base, source=current.source).with_values(document.values)
    entries = document.entries
    # The recommended model's entry may hold another rule (the recommended one): the others say the rule in force.
    chosen = (document.recommendation or {}).get("model")
    kinds = {e.policy.kind for e in entries if e.model != chosen} or {e.policy.kind for e in entries}
    if block:
        pass  # the block holds the rule the document was made with (left out when it is "recommended")
    elif len(kinds) == 1:
        restored = replace(restored, rule=next(iter(kinds)))
    elif document.recommendation is not None:
        restored = replace(restored, rule=vc.RECOMMENDED_RULE)  # each model its own rule: what it stands for
    else:
        notes.append(f"The models use different decision rules ({', '.join(sorted(kinds))}); "
                     f"the rule '{restored.rule}' is used.")
    if not block:
        fitted = {e.policy.calibration.get("method", "none") for e in entries} - {"none"}
        if len(fitted) == 1 and (method := next(iter(fitted))) in CALIBRATION_METHODS:
            restored = replace(restored, calibration=method)
        elif not fitted:
            restored = replace(restored, calibration="none")
        else:
            notes.append(f"The recalibration ({', '.join(sorted(fitted))}) cannot be chosen here; "
                         f"'{restored.calibration}' is used.")
        evaluated = {(e.evaluation or {}).get("split") for e in entries} - {None}
        if len(evaluated) == 1:
            restored = replace(restored, eval_split=next(iter(evaluated)))
        tuned = {e.tuned_on.get("split") for e in entries} - {None} - evaluated
        if len(tuned) == 1:
            restored = replace(restored, tune_split=next(iter(tuned)))
        restored = replace(restored, models=tuple(document.models))
    return restored, notes
