"""The suite against today's releases of every requirement, instead of constraints.txt's.

Not run by default: ``python -m pytest --newest -n 0`` runs the two marked ``newest`` (and only
them, in one process so that they share one environment). They install the requirement files
without their ``-c constraints.txt`` line into a fresh virtual environment, name each package whose
newest release differs from the pinned one, and run the whole suite there; a failure names those
packages. When both pass, ``pip freeze`` of that
environment is the next ``constraints.txt``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pinned(lines) -> dict[str, str]:
    """{package: version} of ``name==version`` lines (comments and options ignored) whose environment marker, if
    any, holds for this Python (``soupsieve==2.10 ; python_full_version < "3.11.5"``)."""
    from packaging.requirements import Requirement

    found = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if "==" in line and not line.startswith("-"):
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate():
                (version,) = (spec.version for spec in requirement.specifier)
                found[re.sub(r"[-_.]+", "-", requirement.name).lower()] = version  # PEP 503 names
    return found


def changes(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """``name old -> new`` for every package whose version differs, appeared or went."""
    return [f"{name} {old.get(name, '(not pinned)')} -> {new.get(name, '(not installed)')}"
            for name in sorted(old.keys() | new.keys()) if old.get(name) != new.get(name)]


def test_changes_name_each_package_that_moved():
    assert changes({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "2.1", "d": "4"}) == [
        "b 2 -> 2.1", "c 3 -> (not installed)", "d (not pinned) -> 4"]
    assert pinned(["# x==1", "-c constraints.txt", "Foo_Bar==1.0  # why", "baz>=2"]) == {"foo-bar": "1.0"}
    assert pinned(['soupsieve==4.1.3 ; python_version >= "3.0"', 'soupsieve==2.10 ; python_version < "3.0"']) == {
        "soupsieve": "4.1.3"}
    assert pinned(['a==1 ; python_version >= "3.0"', 'a==2 ; python_version < "3.0"', "b==3.0.post1"]) == {
        "a": "1", "b": "3.0.post1"}


def test_every_package_is_pinned_once_for_this_python():
    """Each pinned package is pinned once for any one Python (a marker chooses between two pins of one)."""
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    names = [re.sub(r"[-_.]+", "-", line.split("==")[0].strip()).lower() for line in lines
             if "==" in line.split("#")[0] and not line.startswith("-")]
    assert len(set(names)) == len(pinned(lines))


@pytest.fixture(scope="module")
def newest(tmp_path_factory):
    """(python of a fresh environment with today's releases, what moved against constraints.txt)."""
    folder = tmp_path_factory.mktemp("newest")
    for path in ROOT.glob("requirements*.txt"):
        kept = [line for line in path.read_text().splitlines() if not line.lstrip().startswith("-c")]
        (folder / path.name).write_text("\n".join(kept) + "\n")
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
    python = str(folder / "venv" / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "-r", str(folder / "requirements-dev.txt")], check=True)
    frozen = subprocess.run([python, "-m", "pip", "freeze"], check=True, capture_output=True, text=True).stdout
    recorded = pinned((ROOT / "constraints.txt").read_text().splitlines())
    return python, changes(recorded, pinned(frozen.splitlines()))


@pytest.mark.newest
def test_the_suite_passes_with_the_newest_releases(newest):
    python, moved = newest
    run = subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", "-q"], cwd=ROOT,
                         capture_output=True, text=True)
    summary = [line for line in run.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert run.returncode == 0, (
        f"with today's releases ({'; '.join(moved) or 'the same versions as constraints.txt'}) the suite fails:\n"
        + "\n".join(summary or run.stdout.splitlines()[-30:])
    )


@pytest.mark.newest
def test_constraints_pin_the_newest_releases(newest):
    """Fails while a newer release exists, naming it: try it (the test above), then record it."""
    _, moved = newest
    assert moved == [], "newer releases than constraints.txt: " + "; ".join(moved)
