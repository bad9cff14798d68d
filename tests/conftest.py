"""Shared test configuration.

Hypothesis explores new random examples on every local run (and keeps the
failures it finds in .hypothesis/). In CI (``CI`` set, as ``.ci/run`` runs) it
uses a fixed derandomised stream instead, so that a submission's result does
not depend on luck; new edge cases are found locally.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _server_folders_allowed_under_tmp(tmp_path_factory, monkeypatch):
    """The operator's setting for tests: server folders may be read under pytest's temporary root only.

    Tests that load ``folder:<tmp_path>`` links rely on it; tests of the refusal set their own roots.
    """
    monkeypatch.setenv("VALUE_DASHBOARD_DATA_ROOTS", str(tmp_path_factory.getbasetemp()))
