"""Tables read like the sentences: a share is a percentage with one decimal (``valuecore.wording.percent``),
never Streamlit's own "percent" format (94% next to 94.4% elsewhere), and never "None"."""

from __future__ import annotations

import pandas as pd
import pytest
import streamlit as st
from hypothesis import given
from hypothesis import strategies as st_

from dashboard.tables import readable
from valuecore.wording import percent

PERCENT = {"Coverage": st.column_config.NumberColumn("Share automated", help="h", format="percent")}


def test_a_percent_column_becomes_the_wording_modules_percentages_and_still_sorts_as_numbers():
    frame, config = readable(pd.DataFrame({"Coverage": [0.9444, 0.5, 1.0, 0.0], "n": [1, 2, 3, 4]}), PERCENT)
    assert frame["Coverage"].tolist() == [94.4, 50.0, 100.0, 0.0]
    assert config["Coverage"]["type_config"]["format"] == "%.1f%%"
    assert config["Coverage"]["label"] == "Share automated" and config["Coverage"]["help"] == "h"
    assert frame["n"].tolist() == [1, 2, 3, 4] and "n" not in config


@pytest.mark.parametrize("share", [0.99997, 0.00001, None, float("nan")])
def test_a_share_that_reads_as_less_than_all_or_is_missing_makes_the_column_text(share):
    frame, config = readable(pd.DataFrame({"Coverage": [0.5, share]}), PERCENT)
    assert frame["Coverage"].tolist() == ["50.0%", percent(share)]
    assert config["Coverage"]["type_config"].get("format") is None  # a text column
    assert "None" not in frame["Coverage"].tolist() and "100.0%" not in frame["Coverage"].tolist()


@given(st_.floats(0, 1))
def test_printf_of_the_shown_number_is_the_wording_modules_text(share):
    frame, config = readable(pd.DataFrame({"Coverage": [share]}), PERCENT)
    shown = frame["Coverage"].iloc[0]
    if isinstance(shown, str):
        assert shown == percent(share)
    else:
        # What the browser prints with "%.1f%%" (sprintf-js: toFixed) for the number stored.
        assert config["Coverage"]["type_config"]["format"] % shown == percent(share)


def test_a_column_of_thresholds_reads_to_its_last_digit_whatever_its_printf_format():
    config = {"Tuned threshold, raw": st.column_config.NumberColumn(format="%.4f")}
    frame = pd.DataFrame({"Tuned threshold, raw": [0.999997, 0.5, None], "Value": [0.123456, 1.0, 2.0]})
    shown, config = readable(frame, config)
    assert shown["Tuned threshold, raw"].tolist() == ["0.999997", "0.500", "–"]
    assert shown["Value"].tolist() == [0.123456, 1.0, 2.0]  # other numbers keep their own format


def test_a_number_format_never_rewrites_text_the_wording_module_wrote():
    # issue 35: the Calibration page's ω/(1+ω), written as every page writes a threshold, came out of a
    # NumberColumn(format="%.4f") as 0.9091 (Streamlit parses text that looks like a number, then formats it).
    config = {"ω/(1+ω)": st.column_config.NumberColumn(format="%.4f", help="the formula")}
    shown, config = readable(pd.DataFrame({"ω/(1+ω)": ["0.909", "0.90909", "–"], "Value": [0.5, 0.25, 1.0]}), config)
    assert shown["ω/(1+ω)"].tolist() == ["0.909", "0.90909", "–"]
    assert config["ω/(1+ω)"]["type_config"]["type"] == "text" and config["ω/(1+ω)"]["help"] == "the formula"
    assert "Value" not in config  # a column of numbers keeps its number format
