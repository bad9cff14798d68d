"""The optional-engine gate: a missing engine skips its tests locally and fails them under REQUIRE_ENGINES=1."""

import pytest

from optional import missing, need


def test_an_installed_engine_passes_the_gate():
    assert missing("json") is None
    need("json")  # returns: nothing to skip


def test_a_missing_engine_skips_with_the_install_line(monkeypatch):
    monkeypatch.delenv("REQUIRE_ENGINES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        need("no_such_engine_here")


def test_under_require_engines_a_missing_engine_fails(monkeypatch):
    monkeypatch.setenv("REQUIRE_ENGINES", "1")
    with pytest.raises(pytest.fail.Exception, match="REQUIRE_ENGINES=1"):
        need("no_such_engine_here")


def test_java_is_asked_for_when_spark_needs_it(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert "Java" in missing("json", java=True)
