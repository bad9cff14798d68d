"""One owner of the session state: only dashboard/state.py names it (issue 23).

Uploads, the Export page's restore status, widget values read in callbacks and the
clean-up of ended sessions all go through the named functions of ``dashboard.state``;
any other module of the app that names the session state fails here, with the file
and line.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OWNER = ROOT / "dashboard" / "state.py"
SESSION_STATE = re.compile(r"session_state")


def app_files() -> list[Path]:
    """app.py and every Python file under pages/ and dashboard/."""
    files = [ROOT / "app.py"]
    for folder in ("pages", "dashboard"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return files


def mentions(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line: text`` of every line of ``path`` naming the session state."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [f"{path.relative_to(root)}:{number}: {line.strip()}"
            for number, line in enumerate(lines, start=1) if SESSION_STATE.search(line)]


def test_only_dashboard_state_names_the_session_state():
    files = app_files()
    assert OWNER in files and len(files) > 20  # the walk found the app, not an empty folder
    found = [hit for path in files if path != OWNER for hit in mentions(path)]
    assert not found, "only dashboard/state.py may touch st.session_state:\n" + "\n".join(found)


def test_the_check_sees_a_mention(tmp_path):
    # The check can fail: a page naming the session state is found, with its line.
    page = tmp_path / "page.py"
    page.write_text("import streamlit as st\nx = st.session_state.get('k')\n", encoding="utf-8")
    assert mentions(page, tmp_path) == ["page.py:2: x = st.session_state.get('k')"]
    assert mentions(OWNER)  # the owner does use it

