"""Each page script is a layout: it shows what its view model built and computes nothing itself.

Checked on the source (ast): no page imports pandas or numpy, the core comes in as ``import valuecore as vc``
only, and every page reads its own view model, a module of dashboard/views/ with a ``build``.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "pages").glob("*.py"))
NUMERIC = {"pandas", "numpy"}


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
