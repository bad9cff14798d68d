"""Streamlit glue for the dashboard: settings, the state protocol, cached data, sidebar and charts.

Start with ``dashboard/state.py``: its docstring states the rules for the
user's settings (one frozen value, read from the link, changed in one place).
Pages in ``pages/`` only lay out widgets; numbers come from ``valuecore``
(one pipeline, its stages kept by the cache ``dashboard.data.StageCache`` hands it) and charts are the
Vega-Lite specs of ``valuecore.chartspecs`` (the ones the HTML report draws), drawn by ``st.vega_lite_chart``.
"""

from functools import lru_cache
from pathlib import Path
from types import CodeType, ModuleType

ENTRY_POINT = Path(__file__).resolve().parent.parent / "app.py"


def run_script(path: str | Path) -> None:
    """Run a Streamlit script file here, in the current run and container, as Streamlit runs a page file:
    in a fresh ``__main__`` module whose ``__file__`` is the script's. Its widgets' ids carry the script
    hash of where it is called, so a script run the same way on every run keeps its widgets."""
    path = Path(path).resolve()
    module = ModuleType("__main__")
    module.__dict__["__file__"] = str(path)
    exec(_compiled(str(path), path.stat().st_mtime_ns), module.__dict__)  # noqa: S102


@lru_cache(maxsize=64)
def _compiled(path: str, modified_ns: int) -> CodeType:
    """The script's code, compiled again only when the file changes (a fragment rerun runs its page anew)."""
    return compile(Path(path).read_text(encoding="utf-8"), path, "exec")


def hand_over_to_the_frame() -> None:
    """Run app.py, the frame, from a page file that Streamlit's folder navigation runs alone.

    A folder named ``pages/`` makes Streamlit answer a server's first run (and every AppTest run) with its
    legacy navigation over the folder's file names, and say "Page not found" for any other path, before
    app.py runs. The thin files named for the app's URL paths (``pages/capacity.py`` for /capacity) hand the
    run to app.py, whose ``st.navigation`` then opens the page the link names, with the frame around it.
    """
    run_script(ENTRY_POINT)
