"""Shared test configuration.

Hypothesis explores new random examples on every local run (and keeps the
failures it finds in .hypothesis/). In CI (``CI`` set, as ``.ci/run`` runs) it
uses a fixed derandomised stream instead, so that a submission's result does
not depend on luck; new edge cases are found locally.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
if os.environ.get("CI"):
    settings.load_profile("ci")
