"""The import structure of the whole repository, read from the source with ast (imports inside functions
included): app.py, pages/, dashboard/, valuecore/ and benchmarks/.

- valuecore's subpackages import one way: each imports only the subpackages its ``__init__`` docstring
  declares under "May import:", and those declarations form no circle;
- the presentation modules (``wording``, ``chartspecs``, ``report``) sit above every subpackage but the
  command line, and no module of the core reaches up to a public facade;
- no import circle anywhere in the repository;
- nothing outside the package (app, pages, dashboard, benchmarks, docs) imports a private
  ``valuecore._module`` (tests may, to test them), and the core imports nothing of the app;
- no test module imports another: what tests share lives in ``tests/helpers/``.
"""

from __future__ import annotations

import functools

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "valuecore"
SOURCES = ("app.py", "pages", "dashboard", PACKAGE, "benchmarks")
OUTSIDE = ("app.py", "pages", "dashboard", "benchmarks", "docs", "sample_runs")
# The presentation: numbers into words and charts for the app, the CLI and the report. Public modules
# kept at the top of the package; they may import every subpackage but the command line.
PRESENTATION = ("wording", "chartspecs", "report", "_report_reviewers", "_report_segments")
PRESENTATION_ROOM = "presentation"
COMMAND_LINE = "_cli"


# ------------------------------------------------------------------ the graph
def source_modules(root: Path = ROOT, sources=SOURCES) -> dict[str, Path]:
    """Dotted name -> file of every Python module of ``sources`` (``pages/home.py`` is ``pages.home``)."""
    modules = {}
    for entry in sources:
        path = root / entry
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            parts = list(file.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = file
    return modules


def imported_names(source: str, module: str, is_package: bool) -> list[str]:
    """Absolute dotted names each import statement of ``source`` reaches, with every ``from x import y``
    giving both ``x`` and ``x.y`` (a submodule or a name of x: the caller keeps what is a module).
    ``importlib.import_module("...")`` with a constant name counts too."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            found.append(origin)
            found += [f"{origin}.{alias.name}" for alias in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            found.append(node.args[0].value)
    return found


def _ancestors(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of ``modules`` it imports anywhere in its source.

    A script folder's siblings import each other by bare name (``benchmarks/``: ``from bench_core import x``).
    A module's own parent packages are left out: Python runs them before the module in any case, and
    ``from . import wording`` names the package only to reach its submodule.
    """
    graph = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        folder = name if is_package else name.rpartition(".")[0]
        targets = set()
        for reached in imported_names(path.read_text(encoding="utf-8"), name, is_package):
            sibling = f"{folder}.{reached}" if folder and not folder.startswith(PACKAGE) else None
            for candidate in (reached, sibling):
                if candidate in modules and candidate != name and candidate not in _ancestors(name):
                    targets.add(candidate)
        graph[name] = targets
    return graph


@functools.cache
def repository_graph() -> dict[str, set[str]]:
    """:func:`import_graph` of the whole repository, parsed once per test process (the tests only read it)."""
    return import_graph(source_modules())


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a list of modules, the first repeated at the end) per strongly connected component
    of more than one module; Tarjan's algorithm, iterative."""
    index, low, on_stack, stack, components, counter = {}, {}, set(), [], [], [0]

    def visit(start):
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_one_cycle(graph, component) for component in components]


def _one_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first inside the component)."""
    start = min(component)
    parent, frontier = {start: None}, [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & component):
                if child == start:
                    path = [node]
                    while parent[path[-1]] is not None:
                        path.append(parent[path[-1]])
                    return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, node, start]
                if child not in parent:
                    parent[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError("a strongly connected component without a cycle")


def describe(cycle: list[str]) -> str:
    return " -> ".join(cycle)


# ------------------------------------------------------------------ the rooms of valuecore
def rooms(root: Path = ROOT) -> dict[str, set[str]]:
    """Each subpackage of valuecore -> the rooms it may import, as its ``__init__`` docstring declares
    ("May import: _model, _engine."; "presentation" names the presentation modules)."""
    found = {}
    packages = sorted(p.parent.name for p in (root / PACKAGE).glob("_*/__init__.py"))
    known = {*packages, PRESENTATION_ROOM}
    for name in packages:
        doc = ast.get_docstring(ast.parse((root / PACKAGE / name / "__init__.py").read_text(encoding="utf-8"))) or ""
        declared = doc.partition("May import:")[2].split("\n\n")[0]
        assert declared.strip(), f"{PACKAGE}/{name}/__init__.py does not say what it may import"
        found[name] = set(re.findall(r"[A-Za-z_]+", declared)) & known
    found[PRESENTATION_ROOM] = set(packages) - {COMMAND_LINE}
    return found


def room_of(module: str, root: Path = ROOT) -> str | None:
    """The room of a valuecore module: its subpackage, "presentation", or None for the public surface
    (the package itself, ``__main__`` and the facades that re-export the rooms' names)."""
    parts = module.split(".")
    if parts[0] != PACKAGE or len(parts) == 1:
        return None
    if parts[1] in PRESENTATION:
        return PRESENTATION_ROOM
    return parts[1] if (root / PACKAGE / parts[1]).is_dir() else None


def layering_offences(graph: dict[str, set[str]], allowed: dict[str, set[str]], root: Path = ROOT) -> list[str]:
    """Each import of a valuecore module that leaves its room for one the room does not declare, or that
    reaches up from a room to the public surface."""
    offences = []
    for module in sorted(graph):
        room = room_of(module, root)
        if room is None:
            continue
        for target in sorted(graph[module]):
            if not target.startswith(f"{PACKAGE}."):
                continue
            other = room_of(target, root)
            if other is None:
                offences.append(f"{module} -> {target} (a room reaches up to the public surface)")
            elif other != room and other not in allowed[room]:
                offences.append(f"{module} -> {target} ({room} may not import {other})")
    return offences


def declared_circles(allowed: dict[str, set[str]]) -> list[list[str]]:
    return cycles({room: set(targets) for room, targets in allowed.items()})


# ------------------------------------------------------------------ the tests
def test_no_import_circle_in_the_repository():
    found = cycles(repository_graph())
    assert not found, "import circles:\n" + "\n".join(describe(c) for c in found)


def test_valuecore_imports_one_way_as_its_subpackages_declare():
    allowed = rooms()
    assert {"_model", "_engine", "_stats", "_io", COMMAND_LINE} <= set(allowed)
    assert not declared_circles(allowed), declared_circles(allowed)
    # No exception: the core's results carry numbers and the words are made at the edge (wording, CLI, app).
    offences = layering_offences(repository_graph(), allowed)
    assert not offences, "imports against the declared layers:\n" + "\n".join(offences)


def test_every_module_of_valuecore_lives_in_a_room_or_is_public():
    """The flat row is gone: a private module lives in a subpackage named for what it holds."""
    loose = [p.name for p in (ROOT / PACKAGE).glob("_*.py")
             if p.stem not in ("__init__", "__main__") and p.stem not in PRESENTATION]
    assert not loose, f"private modules outside a subpackage: {loose}"


def test_the_core_imports_nothing_of_the_app():
    graph = repository_graph()
    for module, targets in graph.items():
        if module.startswith(f"{PACKAGE}."):
            assert not {t for t in targets if not t.startswith(PACKAGE)}, (module, targets)
    for path in (ROOT / PACKAGE).rglob("*.py"):
        names = imported_names(path.read_text(encoding="utf-8"), "", False)
        assert not [n for n in names if n.split(".")[0] in ("streamlit", "altair")], path


def test_pages_are_leaves_and_the_entry_point_imports_no_page():
    graph = repository_graph()
    for module, targets in graph.items():
        assert not {t for t in targets if t.startswith("pages.") or t == "app"}, (module, targets)


def test_the_engine_applies_recalibration_through_the_policy_only():
    """Calibration maps the confidences before the engine sees them: the Policy records the mapping and
    applies it; the modules that tune and evaluate rules never import the recalibration maps."""
    graph = repository_graph()
    recalibration = f"{PACKAGE}._model.recalibration"
    for name in ("sorting", "fitting", "twotier", "shortlist", "evaluate", "curves", "voc", "table"):
        assert recalibration not in graph[f"{PACKAGE}._engine.{name}"], name
    assert not {t for t in graph[recalibration] if t.startswith(f"{PACKAGE}._engine")}


def test_the_command_line_is_layered_one_way():
    """The sub-commands share ``_cli.common``, which imports no other module of the command line but the top
    level (``_cli.toplevel``: ``--help`` answered alone, which imports none); ``_cli.parser`` registers them,
    ``_cli.commands`` runs them, and none of them imports it (so no ``COMMAND --help`` loads the commands)."""
    graph = repository_graph()
    cli = {name for name in graph if name.startswith(f"{PACKAGE}._cli.")}
    top = f"{PACKAGE}._cli.toplevel"
    assert f"{PACKAGE}._cli.common" in cli and top in cli
    assert not graph[top] & cli
    assert not graph[f"{PACKAGE}._cli.common"] & (cli - {top})
    for name in cli - {f"{PACKAGE}._cli.commands"}:
        assert f"{PACKAGE}._cli.commands" not in graph[name], f"{name} imports _cli.commands"


# ------------------------------------------------------------------ the checks can fail
def test_the_cycle_check_finds_and_prints_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e2"}, "e2": {"e"}}
    assert sorted(map(describe, cycles(graph))) == ["a -> b -> c -> a", "e -> e2 -> e"]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_function_level_and_relative_imports_are_edges():
    source = (
        "from . import wording\n"
        "from ._sorted import presort\n"
        "def f():\n    from ..x import y\n    import importlib\n    importlib.import_module('valuecore._z')\n"
        "if True:\n    from .sub import _w\n"
    )
    names = imported_names(source, "valuecore.pkg.mod", is_package=False)
    assert {"valuecore.pkg.wording", "valuecore.pkg._sorted", "valuecore.x.y", "valuecore._z",
            "valuecore.pkg.sub._w"} <= set(names)
    assert "valuecore.pkg._inner" in imported_names("from . import _inner", "valuecore.pkg", is_package=True)


def test_the_graph_finds_a_circle_closed_by_an_import_inside_a_function(tmp_path):
    """The shape of the dashboard's old circle: data.py imports home inside a method, home imports the
    views package, whose __init__ imports data."""
    files = {
        "dashboard/__init__.py": "",
        "dashboard/data.py": "class Workspace:\n    def rules(self):\n        from .home import rules\n",
        "dashboard/home.py": "from . import views\n",
        "dashboard/views/__init__.py": "from ..data import Workspace\n",
        "pages/home.py": "from dashboard import home\n",
        "benchmarks/bench_a.py": "def f():\n    from bench_b import g\n",
        "benchmarks/bench_b.py": "from bench_a import f\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    graph = import_graph(source_modules(tmp_path, ("pages", "dashboard", "benchmarks")))
    assert sorted(map(describe, cycles(graph))) == [
        "benchmarks.bench_a -> benchmarks.bench_b -> benchmarks.bench_a",
        "dashboard.data -> dashboard.home -> dashboard.views -> dashboard.data",
    ]


def test_the_layer_check_names_an_import_that_runs_up(tmp_path):
    package = tmp_path / PACKAGE
    for name, doc in {"_model": "May import: nothing inside valuecore.", "_engine": "May import: _model.",
                      "_cli": "May import: _model, _engine, presentation."}.items():
        (package / name).mkdir(parents=True)
        (package / name / "__init__.py").write_text(f'"""Room.\n\n{doc}\n"""\n', encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "_model" / "values.py").write_text("from .. import wording\n", encoding="utf-8")
    (package / "_engine" / "tally.py").write_text("def f():\n    from ..curves import x\n", encoding="utf-8")
    (package / "_engine" / "fit.py").write_text("from .._model import values\nfrom . import tally\n",
                                                encoding="utf-8")
    (package / "wording.py").write_text("", encoding="utf-8")
    (package / "curves.py").write_text("from ._engine.tally import f\n", encoding="utf-8")
    allowed = rooms(tmp_path)
    assert allowed["_model"] == set() and allowed["_cli"] == {"_model", "_engine", PRESENTATION_ROOM}
    graph = import_graph(source_modules(tmp_path, (PACKAGE,)))
    assert layering_offences(graph, allowed, tmp_path) == [
        "valuecore._engine.tally -> valuecore.curves (a room reaches up to the public surface)",
        "valuecore._model.values -> valuecore.wording (_model may not import presentation)",
    ]
    assert declared_circles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]


# ------------------------------------------------------------ nothing outside imports a private module
def outside_files(suffix: str):
    for entry in OUTSIDE:
        path = ROOT / entry
        if path.is_file() and path.suffix == suffix:
            yield path
        elif path.is_dir():
            yield from sorted(path.rglob(f"*{suffix}"))


def private_imports(source: str) -> list[str]:
    """The private valuecore modules (``valuecore._x``, the first private part of the name) ``source`` imports."""
    private = re.compile(rf"{PACKAGE}(?:\.[a-zA-Z]\w*)*\._\w+")
    found = set()
    for name in imported_names(source, "__outside__", is_package=False):
        match = private.match(name)
        if match and name != f"{PACKAGE}.__version__":
            found.add(match.group(0))
    return sorted(found)


def test_no_module_outside_the_package_imports_a_private_one():
    offenders = {}
    for path in outside_files(".py"):
        found = private_imports(path.read_text(encoding="utf-8"))
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    for path in [*outside_files(".md"), ROOT / "README.md"]:
        found = re.findall(rf"^\s*(?:from|import) ({PACKAGE}(?:\.\w+)*\._\w+)", path.read_text(encoding="utf-8"), re.M)
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert not offenders, f"private valuecore modules imported from outside the package: {offenders}"


def test_the_private_import_check_can_fail():
    assert private_imports("from valuecore._runfiles import load_runs") == ["valuecore._runfiles"]
    assert private_imports("import valuecore._engine.sorting as s") == ["valuecore._engine"]
    assert private_imports("from valuecore import _voc, presort") == ["valuecore._voc"]
    assert private_imports("def f():\n    from valuecore._io._runfiles import x") == ["valuecore._io"]
    assert private_imports("from valuecore.runs import _load_one") == ["valuecore.runs._load_one"]
    assert private_imports("import importlib\nimportlib.import_module('valuecore._bands')") == ["valuecore._bands"]
    assert private_imports("from valuecore.runs import load_runs\nimport valuecore as vc\n"
                           "from valuecore import __version__") == []


# ------------------------------------------------------------ the values are asked, never converted
# Values (a UseCase or a ValueMatrix) are made once, at the edge, and below it the code asks them what it
# needs (``for_classes``, ``use_case``, ``as_use_case()``, ``gain_correct``, ``gain_wrong``): no module tests
# their type but these, and nothing brings back a free conversion function.
VALUE_EDGES = (
    "valuecore/_model/",  # the types themselves, and check_values: the one type test where values come in
    "valuecore/_pipeline/policy_json.py",  # the policy JSON's import and export of the values
    "valuecore/_cli/",  # the command line's options and files
    "dashboard/settings.py",  # the sidebar
    "dashboard/data.py",  # the cache keys of every kind of stage input
)
VALUE_TYPES = {"UseCase", "ValueMatrix", "Values"}
RETIRED_CONVERSIONS = {"value_matrix_for", "use_case_of", "value_matrix"}


def value_type_tests(source: str) -> list[str]:
    """Where ``source`` tests a value's type (``isinstance``, ``type(x) is``) or calls a retired conversion."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name in RETIRED_CONVERSIONS:
                found.append(f"line {node.lineno}: {name}()")
            elif name == "isinstance" and len(node.args) == 2:
                kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
                if {getattr(k, "id", getattr(k, "attr", None)) for k in kinds} & VALUE_TYPES:
                    found.append(f"line {node.lineno}: isinstance")
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Call) and \
                getattr(node.left.func, "id", None) == "type" and \
                {getattr(c, "id", getattr(c, "attr", None)) for c in node.comparators} & VALUE_TYPES:
            found.append(f"line {node.lineno}: type() comparison")
    return found


def test_the_values_are_asked_not_converted_outside_the_edges():
    offenders = {}
    for entry in SOURCES:
        for path in [ROOT / entry] if (ROOT / entry).is_file() else sorted((ROOT / entry).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if not name.startswith(VALUE_EDGES):
                found = value_type_tests(path.read_text(encoding="utf-8"))
                if found:
                    offenders[name] = found
    assert not offenders, f"values converted or type-tested outside the edges {VALUE_EDGES}: {offenders}"


def test_the_value_check_can_fail():
    assert value_type_tests("if isinstance(values, vc.UseCase):\n    pass") == ["line 1: isinstance"]
    assert value_type_tests("ok = isinstance(v, (int, ValueMatrix))") == ["line 1: isinstance"]
    assert value_type_tests("m = value_matrix_for(values, classes)\nu = use_case_of(m)") == [
        "line 1: value_matrix_for()", "line 2: use_case_of()"]
    assert value_type_tests("m = values.value_matrix(classes)") == ["line 1: value_matrix()"]
    assert value_type_tests("same = type(values) is vc.UseCase") == ["line 1: type() comparison"]
    assert value_type_tests("m = values.for_classes(classes)\nu = values.use_case\nok = isinstance(x, Mapping)\n"
                            "n = settings.value_matrix") == []


# ------------------------------------------------------------ tests share helpers through one place
TESTS = ROOT / "tests"
HELPERS = "helpers"  # tests/helpers/: what test modules (and the browser benchmarks, docs' screenshots) share


def imported_test_modules(source: str, test_modules: set[str]) -> list[str]:
    """The test modules (``test_*``, by their bare name on the test path) that ``source`` imports anywhere."""
    found = {name.split(".")[0] for name in imported_names(source, "__tests__", is_package=False)}
    return sorted(found & test_modules)


def test_no_test_module_imports_another_test_module():
    """A helper two test modules share lives in tests/helpers/, not in one of them."""
    test_modules = {path.stem for path in TESTS.rglob("test_*.py")}
    assert HELPERS not in test_modules and (TESTS / HELPERS / "__init__.py").is_file()
    offenders = {}
    for path in [*TESTS.rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py"), *(ROOT / "docs").rglob("*.py")]:
        found = imported_test_modules(path.read_text(encoding="utf-8"), test_modules - {path.stem})
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert not offenders, f"test modules imported by others (move the helper to tests/helpers/): {offenders}"


def test_the_test_import_check_can_fail():
    known = {"test_cli", "test_e2e_browser"}
    assert imported_test_modules("from test_cli import run_cli", known) == ["test_cli"]
    assert imported_test_modules("def f():\n    import test_e2e_browser as harness", known) == ["test_e2e_browser"]
    assert imported_test_modules("from helpers.cli import run_cli\nimport reference as ref", known) == []


@pytest.mark.parametrize("module", ["valuecore._engine.sorting", "dashboard.data", "pages.home", "app"])
def test_the_graph_sees_the_repositorys_modules(module):
    assert module in source_modules()


# ---------------------------------------------------------------- the tests mirror the code
# A module's tests are found by its name: tests/<area>/test_<name>.py or test_<name>_<aspect>.py, where <name> is the
# module's own name, its sub-package's (runfiles, aggregate), or the public module that exposes it (runs, monitoring).
# The modules below are tested where a reader would not guess from the name alone; each says where. The check
# proves each pointer: the file exists and uses one of the module's names (or the public call that reaches it, given
# after the file). The list may only shrink.
TESTED_ELSEWHERE = {
    "valuecore.__main__": "tests/cli/test_toplevel.py",
    "valuecore._cli.common": "tests/cli/test_cli.py",
    "valuecore._decide.constrained": ("tests/cli/test_constraints_pipeline.py", "max_handoff_rate"),
    "valuecore._engine.segment_policy": "tests/core/test_segments.py",
    "valuecore._io.aggregate_options": "tests/app/test_settings.py",
    "valuecore._io.eval_logs": ("tests/cli/test_lm_logs_cli.py", "lmeval"),
    "valuecore._io.format": "tests/io/test_runfiles.py",
    "valuecore._io.limits": "tests/io/test_hostile_inputs.py",
    "valuecore._io.paths": "tests/cli/test_hostile_cli.py",
    "valuecore._io.safecsv": "tests/io/test_hostile_inputs.py",
    "valuecore._model.tier_values": "tests/core/test_shortlist.py",
    "valuecore._pipeline.segment_candidates": "tests/core/test_segment_rule.py",
    "valuecore.aggregation": ("tests/io/test_aggregate.py", "valuecore.aggregate"),
    "valuecore.recommendation": "tests/core/test_recommend.py",
    "valuecore.runs": ("tests/io/test_runfiles.py", "load_runs"),
}


def mirror_names(module: str, path: Path) -> set[str]:
    """The names a test module of ``module`` may be called by (without ``test_``)."""
    parts = module.split(".")[1:]
    names = {parts[-1].lstrip("_")}
    if len(parts) > 2:  # valuecore._io.runfiles.parse: the sub-package's name too
        names.add(parts[-2].lstrip("_"))
    if not any(part.startswith("_") for part in parts):
        return names  # a public module is named for itself
    graph = repository_graph()
    names |= {public.split(".")[1] for public, imported in graph.items()
              if public.count(".") == 1 and not public.split(".")[1].startswith("_") and module in imported}
    return names


def module_names(path: Path) -> set[str]:
    """The top-level names a module defines, and its own dotted tail (for modules that define none)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    names |= {target.id for node in tree.body if isinstance(node, ast.Assign) for target in node.targets
              if isinstance(target, ast.Name)}
    return {name for name in names if not name.startswith("_") and len(name) > 3}


def untested_by_name(modules: dict[str, Path], test_files: set[str]) -> list[str]:
    missing = []
    for module, path in sorted(modules.items()):
        if path.name == "__init__.py":
            continue
        names = mirror_names(module, path)
        if not any(stem == f"test_{name}" or stem.startswith(f"test_{name}_") for stem in test_files for name in names):
            missing.append(module)
    return missing


def test_every_module_has_a_test_module_of_its_name_or_says_where_it_is_tested():
    modules = {name: path for name, path in source_modules(sources=(PACKAGE,)).items()}
    test_files = {path.stem for path in TESTS.rglob("test_*.py")}
    missing = untested_by_name(modules, test_files)
    unexplained = [module for module in missing if module not in TESTED_ELSEWHERE]
    assert not unexplained, f"no test module named after: {unexplained} (add tests/<area>/test_<name>.py)"
    # The list only shrinks: a module that gained a test module of its name leaves it.
    assert sorted(set(TESTED_ELSEWHERE) - set(missing)) == [], "now tested by name; take it off TESTED_ELSEWHERE"
    for module, where in TESTED_ELSEWHERE.items():
        where, *through = (where,) if isinstance(where, str) else where
        text = (ROOT / where).read_text(encoding="utf-8")
        names = module_names(modules[module]) | {module, module.rsplit(".", 1)[-1].lstrip("_"), *through}
        if module.endswith("__main__"):
            names.add("python -m valuecore")
        assert any(re.search(rf"\b{re.escape(name)}\b", text) for name in names), (module, where)


def test_the_mirror_check_finds_a_module_without_tests():
    modules = {"valuecore._engine.tally": ROOT / "valuecore/_engine/tally.py",
               "valuecore._io.runfiles.parse": ROOT / "valuecore/_io/runfiles/parse.py"}
    assert untested_by_name(modules, {"test_tally_prefix"}) == ["valuecore._io.runfiles.parse"]
    assert untested_by_name(modules, {"test_tally", "test_runfiles"}) == []
