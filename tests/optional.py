"""Optional engines (DuckDB, PySpark with Java, MLflow, inspect_ai): skipped cleanly where missing, required in CI.

A test module that needs one calls :func:`need` at import time. On a machine
without it the module is skipped with the reason and the install line; with
``REQUIRE_ENGINES=1`` (``.ci/run`` sets it) a missing engine fails the run
instead, so CI never passes by skipping.
"""

from __future__ import annotations

import importlib.util
import os
import shutil

import pytest

INSTALL = {
    "duckdb": "pip install -r requirements-spark.txt",
    "pyspark": "pip install -r requirements-spark.txt (and a Java runtime: apt-get install default-jre-headless)",
    "mlflow": "pip install -r requirements-mlflow.txt",
    "inspect_ai": "pip install -r requirements-inspect.txt",
}


def missing(module: str, *, java: bool = False) -> str | None:
    """Why ``module`` (and Java, if asked) cannot be used here, or None when it can."""
    install = INSTALL.get(module, f"pip install {module}")
    if importlib.util.find_spec(module) is None:
        return f"{module} is not installed ({install})"
    if java and shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return f"{module} needs a Java runtime and none was found ({install})"
    return None


def need(module: str, *, java: bool = False) -> None:
    """Skip the calling test module when ``module`` is missing; fail instead under ``REQUIRE_ENGINES=1``."""
    reason = missing(module, java=java)
    if reason is None:
        return
    if os.environ.get("REQUIRE_ENGINES") == "1":
        pytest.fail(f"{reason}, and REQUIRE_ENGINES=1 says these tests must run", pytrace=False)
    pytest.skip(reason, allow_module_level=True)
