"""What the user chose, kept in ``st.session_state`` and mirrored in the URL.

Every page reads the same :class:`Selection`; the sidebar writes it. The URL
query parameters hold the use case, models and settings, so a link
reproduces what someone sees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import streamlit as st

from valuecore import UseCase, ValueMatrix

# Canonical session-state keys (not widget keys: widgets are "<page>_<name>").
DEFAULTS = {
    "v_correct": 1.0,
    "v_abstain": 0.0,
    "v_wrong": -4.0,
    "currency": "$",
    "source": "sample:digits",
    "value_mode": "simple",
    "calibration": "none",
    "policy_kind": "threshold",
}

# URL query parameter -> (session key, parser)
_URL_FIELDS = {
    "vc": ("v_correct", float),
    "va": ("v_abstain", float),
    "vw": ("v_wrong", float),
    "cur": ("currency", str),
    "src": ("source", str),
    "mode": ("value_mode", str),
    "cal": ("calibration", str),
    "tune": ("tune_split", str),
    "eval": ("eval_split", str),
}

CALIBRATION_METHODS = ("none", "temperature", "isotonic")


@dataclass(frozen=True)
class Selection:
    """Everything a page needs to know about the user's choices.

    Attributes
    ----------
    report : valuecore LoadReport
        All loaded models and the problems found in their files.
    models : tuple of str
        The models the user selected (all loaded ones by default).
    use_case : UseCase
    value_matrix : ValueMatrix or None
        Set when the user works with a per-class matrix.
    tune_split, eval_split : str or None
    calibration : str
        Recalibration applied before thresholds: "none", "temperature" or "isotonic".
    currency : str
    """

    report: object
    models: tuple
    use_case: UseCase
    value_matrix: ValueMatrix | None = None
    tune_split: str | None = None
    eval_split: str | None = None
    calibration: str = "none"
    currency: str = "$"
    source_label: str = ""
    notes: tuple = field(default_factory=tuple)

    @property
    def values(self) -> UseCase | ValueMatrix:
        """The value specification in force: the matrix when one is set."""
        return self.value_matrix if self.value_matrix is not None else self.use_case

    @property
    def omega(self) -> float:
        return self.use_case.omega

    def money(self, amount: float | None, digits: int = 2) -> str:
        """Format an amount in the user's currency."""
        if amount is None or (isinstance(amount, float) and math.isnan(amount)):
            return "–"
        sign = "-" if amount < 0 else ""
        return f"{sign}{self.currency}{abs(amount):,.{digits}f}"


def init_state() -> None:
    """Fill session state once per session: defaults, then the URL on top."""
    if st.session_state.get("_state_ready"):
        return
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    params = st.query_params
    for param, (key, parse) in _URL_FIELDS.items():
        if param in params:
            try:
                value = parse(params[param])
            except ValueError:
                continue  # a hand-edited link must not break the app
            if parse is float and not math.isfinite(value):
                continue
            st.session_state[key] = value
    if "models" in params:
        st.session_state["url_models"] = [m for m in params.get_all("models") if m]
    st.session_state["_state_ready"] = True


def write_url(selection: Selection) -> None:
    """Mirror the current choices in the URL (only what changed, to keep reruns cheap)."""
    wanted = {
        "vc": f"{selection.use_case.v_correct:g}",
        "va": f"{selection.use_case.v_abstain:g}",
        "vw": f"{selection.use_case.v_wrong:g}",
        "cur": selection.currency,
        "src": st.session_state.get("source", DEFAULTS["source"]),
        "mode": st.session_state.get("value_mode", "simple"),
        "cal": selection.calibration,
    }
    if selection.tune_split:
        wanted["tune"] = selection.tune_split
    if selection.eval_split:
        wanted["eval"] = selection.eval_split
    params = st.query_params
    for key, value in wanted.items():
        if params.get(key) != value:
            params[key] = value
    models = list(selection.models)
    if params.get_all("models") != models:
        params["models"] = models


def stop_unless_models(selection: Selection) -> None:
    """Explain an empty page and stop it when no run is loaded or no model is selected."""
    if not selection.report.models:
        st.info("No run is loaded. Choose a data source in the sidebar (the Runs page tells what went wrong, if any).")
        st.stop()
    if not selection.models:
        st.info("No model is selected. Pick one or more under 'Models' in the sidebar.")
        st.stop()


def current() -> Selection:
    """The selection the sidebar made on this run."""
    selection = st.session_state.get("selection")
    if selection is None:
        raise RuntimeError("the sidebar has not run yet: pages are run from app.py")
    return selection
