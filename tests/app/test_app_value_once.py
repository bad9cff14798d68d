"""A new value weighs the models once: ``recommend`` runs once per value on the Value and first pages (issue 33).

The Value page asked for each model's rule under "recommended", which called ``recommend`` once for all the
models and once more for each other model alone: five calls per new value on the sample digits. The rules alone
are now read off the one recommendation; what the page shows is the same, element for element, as when each
model is weighed alone again (the former path, forced here).
"""

from __future__ import annotations

import pytest
import streamlit as st

import valuecore._decide.recommend as recommend_module
from helpers.app import assert_clean, each_new_value, start

WRONG = "sidebar_v_wrong_input"
NEW_VALUES = (-9.0, -25.0)


def _counted(monkeypatch) -> list:
    calls = []
    real = recommend_module.recommend

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(recommend_module, "recommend", counted)
    return calls


def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()


def _shown(at) -> list:
    """Every element of the main area as sent (protobuf bytes), a table's random Styler id taken out."""
    found = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            proto = getattr(child, "proto", None)
            if proto is not None and hasattr(proto, "SerializeToString"):
                if child.type == "dataframe" and proto.arrow_data.styler.uuid:
                    proto = type(proto).FromString(proto.SerializeToString())
                    styler = proto.arrow_data.styler
                    styler.styles = styler.styles.replace(styler.uuid, "")
                    styler.uuid = ""
                found.append((child.type, proto.SerializeToString()))
            walk(child)

    walk(at.main)
    return found


def _page_at_new_values(page: str) -> list:
    at = start(page, src="sample:digits")
    assert_clean(at)
    shown = [_shown(at)]
    for value in NEW_VALUES:
        at.sidebar.number_input(key=WRONG).set_value(value).run()
        assert_clean(at)
        shown.append(_shown(at))
    return shown


@pytest.mark.parametrize("page", ["pages/value.py", "pages/home.py"])
def test_a_new_value_runs_recommend_once(monkeypatch, page):
    _fresh_caches()
    at = start(page, src="sample:digits")
    assert_clean(at)
    calls = _counted(monkeypatch)
    for value in each_new_value(at, NEW_VALUES, calls):
        assert len(calls) == 1, (page, value)


def test_the_value_page_shows_what_weighing_each_model_alone_again_showed(monkeypatch):
    _fresh_caches()
    now = _page_at_new_values("pages/value.py")
    _fresh_caches()
    monkeypatch.setattr(recommend_module, "_rules_alone", lambda *args: None)  # the former path: weighed again
    calls = _counted(monkeypatch)
    before = _page_at_new_values("pages/value.py")
    assert len(calls) > 3 * 2  # the former path did run (more than once per value)
    assert [[kind for kind, _ in elements] for elements in now] == [[kind for kind, _ in e] for e in before]
    assert {"dataframe", "metric", "vega_lite_chart"} <= {kind for kind, _ in now[-1]}
    for at_value_now, at_value_before in zip(now, before):
        assert at_value_now == at_value_before
