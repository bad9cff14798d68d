"""Each page script is a layout: it shows what its view model built and computes nothing itself.

Checked on the source (ast): no page imports pandas or numpy, the core comes in as ``import valuecore as vc``
only, and every page reads its own view model, a module of dashboard/views/ with a ``build``. The page scripts
are the files app.py registers; every other file of pages/ is named for one of app.py's URL paths and only
hands the run to app.py (a fresh server's first request, see dashboard.hand_over_to_the_frame).
"""

import ast
from pathlib import Path

import pytest

from helpers.app import pages_in_app

ROOT = Path(__file__).resolve().parents[2]
NUMERIC = {"pandas", "numpy"}


def registered(app: Path = ROOT / "app.py") -> tuple[set[str], set[str]]:
    """The page scripts (``pages/x.py``) and the URL paths (the default page's aside) app.py's pages name."""
    pages = pages_in_app(app)
    return {page["file"] for page in pages}, {page["url_path"] for page in pages
                                              if not page.get("default") and "url_path" in page}


SCRIPTS, URL_PATHS = registered()
PAGES = sorted(ROOT / script for script in SCRIPTS)
HANDOVERS = sorted(set((ROOT / "pages").glob("*.py")) - set(PAGES))


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_there_are_pages():
    assert len(PAGES) >= 10
    assert all(page.is_file() for page in PAGES), PAGES


def test_each_url_path_has_a_file_that_hands_over_to_app_py():
    # Streamlit's folder navigation answers a fresh server's first request with the file named like the path;
    # a path with no such file gets a "Page not found" dialog (tests/e2e: the deep-link test).
    assert {handover.stem for handover in HANDOVERS} == URL_PATHS


@pytest.mark.parametrize("handover", HANDOVERS, ids=lambda p: p.name)
def test_a_handover_file_only_hands_over(handover):
    tree = ast.parse(handover.read_text(encoding="utf-8"))
    calls = [node.value.func.id for node in tree.body if isinstance(node, ast.Expr)
             and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)]
    assert calls == ["hand_over_to_the_frame"], f"{handover.name}: a handover file only calls hand_over_to_the_frame()"
    assert imported_modules(handover) == {"dashboard"}, handover.name


def test_the_url_path_check_can_fail(tmp_path):
    app = tmp_path / "app.py"
    app.write_text('pages = [st.Page("pages/home.py", default=True, url_path="start"), '
                   'page("pages/value.py", url_path="value-and-thresholds", visibility="hidden")]\n')
    assert registered(app) == ({"pages/home.py", "pages/value.py"}, {"value-and-thresholds"})


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_imports_neither_pandas_nor_numpy(page):
    numeric = {m for m in imported_modules(page) if m.split(".")[0] in NUMERIC}
    assert not numeric, f"{page.name} imports {sorted(numeric)}: the frame belongs in its view model"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_takes_the_core_only_through_its_public_name(page):
    core = {m for m in imported_modules(page) if m.split(".")[0] == "valuecore"}
    assert core <= {"valuecore"}, f"{page.name} imports {sorted(core)}: pages use `import valuecore as vc`"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_reads_its_own_view_model(page):
    import importlib

    tree = ast.parse(page.read_text(encoding="utf-8"))
    views = [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             and node.module == "dashboard.views" for alias in node.names if alias.asname == "view"]
    assert len(views) == 1, f"{page.name}: expected `from dashboard.views import <page> as view`"
    assert callable(getattr(importlib.import_module(f"dashboard.views.{views[0]}"), "build", None)), views[0]


def test_the_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy as np\nfrom valuecore._engine.sorting import presort\n")
    assert {"numpy", "valuecore._engine.sorting"} <= imported_modules(bad)


# ------------------------------------------------------------------ top-level branches
MAX_TOP_LEVEL_BRANCHES = 15


def top_level_branches(source: str) -> int:
    """The branches a reader follows down a script's top level: each ``if``, ``elif``, ``else``, ``for``,
    ``while``, ``try``, ``except``, ``finally`` and ``with`` outside a function or class (nested ones too)."""
    count = 0

    def visit(statements):
        nonlocal count
        for node in statements:
            if isinstance(node, ast.If):
                count += 1
                visit(node.body)
                is_elif = len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)
                count += bool(node.orelse) and not is_elif
                visit(node.orelse)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                count += 1 + bool(node.orelse)
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                count += 1 + len(node.handlers) + bool(node.orelse) + bool(node.finalbody)
                for block in (node.body, *[h.body for h in node.handlers], node.orelse, node.finalbody):
                    visit(block)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                count += 1
                visit(node.body)

    visit(ast.parse(source).body)
    return count


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_reads_top_down_with_few_branches(page):
    branches = top_level_branches(page.read_text(encoding="utf-8"))
    assert branches <= MAX_TOP_LEVEL_BRANCHES, (
        f"{page.name} has {branches} top-level branches (at most {MAX_TOP_LEVEL_BRANCHES}): "
        "move the decisions into its view model")


def test_the_branch_count_can_fail():
    source = ("if a:\n    pass\nelif b:\n    pass\nelse:\n    for x in y:\n        pass\n"
              "try:\n    pass\nexcept E:\n    pass\nwith c:\n    pass\ndef f():\n    if d:\n        pass\n")
    assert top_level_branches(source) == 7  # if, elif, else, for, try, except, with; f's `if` is not top level
