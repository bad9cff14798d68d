"""Shared test configuration: Hypothesis profiles.

``python -m pytest`` (the README's command, and CI) gives the same result on
every run: Hypothesis replays a fixed, derandomised stream of examples and
keeps no example database, so nothing from an earlier run changes the next one
(profile ``repeatable``; ``ci`` is the same profile under its older name).

To look for new edge cases, run the property tests in the ``explore`` profile::

    HYPOTHESIS_PROFILE=explore python -m pytest -p no:cacheprovider \\
        --hypothesis-show-statistics tests/core/test_fitting.py ...

It draws fresh random examples, keeps failures in ``.hypothesis/`` so that
they replay until fixed, and runs every property test with 20 times its own
``max_examples`` (``HYPOTHESIS_EXPLORE_SCALE`` changes the factor; with
``HYPOTHESIS_EXPLORE_LOG=file`` each test's example counts are appended to
that file as it ends, and ``--hypothesis-show-statistics`` prints them). Do it
before each submission. A failure it finds is a real bug or a real test defect:
fix it, and pin the example with ``@example`` so the repeatable run keeps it.
"""

import functools
import gc
import os
import resource
import sys
import time

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

# This process's clocks when the suite's configuration is read (pytest's own start-up comes before): the phases
# each worker reports at the end (pytest_terminal_summary) are measured from here.
_STARTED = time.perf_counter()
_PHASES: dict[str, float] = {}

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile("repeatable", derandomize=True, database=None, **_COMMON)
settings.register_profile("ci", settings.get_profile("repeatable"))
settings.register_profile(
    "explore", derandomize=False, database=DirectoryBasedExampleDatabase(".hypothesis/examples"), **_COMMON
)

# The Spark driver JVMs the tests start (test_aggregate_spark's session, the Ctrl-C test's command) run for
# seconds on little data, so compiling Spark's code at the JIT's top tier and a parallel collector cost more CPU
# than they save. Measured side by side on 2 busy cores: test_aggregate_spark.py took 106 s of CPU for what took
# 189 s without (its JVM 86 s for 170 s), the Ctrl-C Spark test of test_hostile_cli.py 39 s for 64 s. Neither
# flag changes what Java computes. spark-submit reads SPARK_SUBMIT_OPTS for the driver it starts, and every
# child of the test processes inherits it; a value set outside is kept.
os.environ.setdefault("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "repeatable")
if PROFILE not in ("repeatable", "ci", "explore"):
    raise pytest.UsageError(f"HYPOTHESIS_PROFILE={PROFILE!r}: expected 'repeatable', 'ci' or 'explore'")
settings.load_profile(PROFILE)
EXPLORE_SCALE = int(os.environ.get("HYPOTHESIS_EXPLORE_SCALE", "20")) if PROFILE == "explore" else 1


def pytest_addoption(parser):
    parser.addoption("--newest", action="store_true",
                     help="run the tests marked newest (and only them): the suite against today's releases")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``newest`` (they install today's releases and run the suite there) are deselected, not
    skipped, unless ``--newest`` asks for them, and then alone. In the explore profile, multiply each
    property test's own example budget.

    Tests set ``max_examples`` in their ``@settings``, which overrides any
    profile's, so the budget is scaled on the test itself.
    """
    newest = config.getoption("--newest")
    chosen = [item for item in items if (item.get_closest_marker("newest") is not None) == newest]
    if len(chosen) < len(items):
        kept = set(map(id, chosen))
        config.hook.pytest_deselected(items=[item for item in items if id(item) not in kept])
        items[:] = chosen
    if EXPLORE_SCALE == 1:
        return
    scaled = set()  # parametrised items share one function: scale it once
    for item in items:
        test = getattr(item, "obj", None)
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is None or not hasattr(test, "hypothesis") or id(test) in scaled:
            continue
        scaled.add(id(test))
        test._hypothesis_internal_use_settings = settings(
            own, max_examples=own.max_examples * EXPLORE_SCALE, derandomize=False,
            database=settings.default.database,
        )


def pytest_runtest_teardown(item):
    """In the explore profile, append each property test's example counts to a file as it ends.

    (``--hypothesis-show-statistics`` prints them only when the whole session ends.)
    """
    stats = getattr(item, "hypothesis_statistics", None)
    log = os.environ.get("HYPOTHESIS_EXPLORE_LOG")
    if EXPLORE_SCALE == 1 or stats is None or not log:
        return
    # One entry per phase ("reuse" replays the example database, "generate" is the budget).
    lines = stats.splitlines()
    counts = "; ".join(
        f"{lines[k - 2].split('(')[0].strip(' -')}: {line.strip(' -')}"
        for k, line in enumerate(lines) if "passing examples" in line and k >= 2
    )
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"{item.nodeid}\t{counts}\n")


@pytest.fixture(autouse=True)
def _server_folders_allowed_under_tmp(tmp_path_factory, monkeypatch):
    """The operator's setting for tests: server folders may be read under pytest's temporary root only.

    Tests that load ``folder:<tmp_path>`` links rely on it; tests of the refusal set their own roots.
    """
    monkeypatch.setenv("VALUE_DASHBOARD_DATA_ROOTS", str(tmp_path_factory.getbasetemp()))


# One Chromium per test process, shared by every browser test in it (tests/e2e, the HTML report's): Playwright's
# sync API runs one instance per thread, so a test starting its own beside this one failed with "using Playwright
# Sync API inside the asyncio loop" whenever a browser test had run before it in the same worker.
@pytest.fixture(scope="session")
def chromium_executable() -> str:
    from helpers.browser import _need_browser, chromium_path

    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _need_browser("the playwright package is not installed")
    executable = chromium_path()
    if executable is None:
        _need_browser(f"no Chromium at {os.environ.get('CHROMIUM_PATH') or '/usr/bin/chromium'}")
    return executable


@pytest.fixture(scope="session")
def browser(chromium_executable):
    from helpers.browser import chromium

    with chromium(chromium_executable) as launched:
        yield launched


def pytest_collection_finish(session):
    """Leave what collection built out of every later garbage collection; scan the installed packages for
    Streamlit components once per process, not once per AppTest.

    A worker holds about 460,000 objects once it has imported every test module (Streamlit, scikit-learn,
    Hypothesis's strategies, the test items): modules, classes and functions that live until the process
    ends. Each full collection walked them all again, those the automatic collector runs and those the code
    asks for (``dashboard.memory.release_memory`` after a cache drops an entry): moved to the permanent
    generation (``gc.freeze``), a full collection walks only what the tests made since. Objects are freed
    as before when their last reference goes; only a reference cycle among the frozen ones would stay.
    Measured on 2 busy cores, every test collected and 26 run: the full collections' CPU 8.4 s -> 4.1 s.

    Each ``AppTest`` reads the metadata of every installed distribution on its first run (Streamlit's v2
    component discovery: 2.5 to 5.5 s each, measured here at load 4 to 14), though the installed packages
    cannot change during a test run. Each AppTest still registers the very same manifests in its own registry.
    """
    _PHASES["collection_wall"] = time.perf_counter() - _STARTED
    _PHASES["collection_cpu"] = time.process_time()
    gc.collect()
    gc.freeze()
    if "streamlit" not in sys.modules:  # no AppTest in this session: leave Streamlit unimported
        return
    try:  # a Streamlit release without this scanner (the --newest run, say) is simply left as it is
        from streamlit.components.v2 import manifest_scanner

        manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)
    except (ImportError, AttributeError):
        pass


def _cpu_of_reaped_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pytest_sessionfinish(session):
    """A worker hands its phases to the controller (xdist's ``workeroutput``), which prints them."""
    _PHASES["session_wall"] = time.perf_counter() - _STARTED
    _PHASES["session_cpu"] = time.process_time()
    _PHASES["children_cpu"] = _cpu_of_reaped_children()
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["phases"] = dict(_PHASES)


_WORKER_PHASES: dict[str, dict[str, float]] = {}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    phases = getattr(node, "workeroutput", {}).get("phases")
    if phases:
        _WORKER_PHASES[node.gateway.id] = phases


def pytest_terminal_summary(terminalreporter):
    """Where each process's time went, in every run's output (CI's included), so that the suite's wall time on
    CI's machine can be split into collection and tests without a run of one's own.

    Wall seconds from the moment this file was imported, CPU seconds from the process's start; CPU is the
    process's (all its threads: AppTest's script runs, DuckDB's threads) and, apart, that of the child processes it
    has waited for (Streamlit servers,
    ``python -m valuecore`` runs). Processes nobody waits for are in neither (Chromium under Playwright's driver,
    the Spark driver's JVM): on 2 busy cores the browser tests took 225 s of CPU measured by cgroup against 79 s
    counted this way.
    """
    rows = dict(sorted(_WORKER_PHASES.items())) or ({"this process": dict(_PHASES)} if "session_wall" in _PHASES
                                                    else {})
    if not rows or "collection_wall" not in next(iter(rows.values())):
        return
    terminalreporter.section("time per phase")
    for name, phase in rows.items():
        terminalreporter.write_line(
            f"{name}: collection {phase['collection_wall']:.1f} s (CPU {phase['collection_cpu']:.1f} s), "
            f"tests {phase['session_wall'] - phase['collection_wall']:.1f} s "
            f"(CPU {phase['session_cpu'] - phase['collection_cpu']:.1f} s, "
            f"waited-for children {phase['children_cpu']:.1f} s)"
        )
    terminalreporter.write_line(f"load average at the end: {os.getloadavg()[0]:.1f}")
