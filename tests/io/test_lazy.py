"""``LazyModule`` (``valuecore/_io/lazy.py``): the module is imported on the first attribute asked of it, not
before, and every use reads through to the module itself (a monkeypatch on the module is seen)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from valuecore._io.lazy import LazyModule


def test_nothing_is_imported_until_an_attribute_is_asked():
    code = ("import sys; from valuecore._io.lazy import LazyModule; m = LazyModule('fractions');"
            "before = 'fractions' in sys.modules; m.Fraction; print(before, 'fractions' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_attributes_read_through_to_the_module(monkeypatch):
    import json

    lazy = LazyModule("json")
    assert lazy.dumps is json.dumps
    monkeypatch.setattr(json, "dumps", lambda obj: "patched")
    assert lazy.dumps({}) == "patched"
    assert "'json'" in repr(lazy) and "first use" in repr(lazy)


def test_a_missing_module_fails_on_first_use_not_on_creation():
    lazy = LazyModule("no_such_module_here")
    with pytest.raises(ModuleNotFoundError):
        lazy.anything
