"""The import structure of valuecore, read from the source with ast (function-level imports included).

No import cycle inside the package; the engine knows nothing of calibration (calibration maps the
confidences before the engine sees them); the command line is layered one way; and no module outside
the package imports a private one (tests may, to test them).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "valuecore"
OUTSIDE = ("app.py", "pages", "dashboard", "benchmarks", "docs", "sample_runs")
# Tune and evaluate decision rules on confidences already recalibrated.
ENGINE = ("_sorted", "_policies", "_twotier", "_shortlist", "_tier_values")
CALIBRATION = f"{PACKAGE}._calibration"


# ------------------------------------------------------------------ the graph
def package_modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted name -> file of every module of the package (subpackages included)."""
    modules = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
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


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports (anywhere in its source)."""
    graph = {}
    for name, path in modules.items():
        reached = imported_names(path.read_text(encoding="utf-8"), name, path.name == "__init__.py")
        graph[name] = {target for target in reached if target in modules and target != name}
    return graph


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
    return " -> ".join(name.removeprefix(f"{PACKAGE}.") for name in cycle)


# ------------------------------------------------------------------ the package
def test_no_import_cycle_inside_the_package():
    found = cycles(import_graph(package_modules()))
    assert not found, "import cycles inside valuecore:\n" + "\n".join(describe(c) for c in found)


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


def test_the_graph_sees_the_packages_modules_and_their_imports():
    graph = import_graph(package_modules())
    assert "valuecore._policies" in graph and "valuecore.serving" in graph
    assert "valuecore._sorted" in graph["valuecore._policies"]  # a module-level import
    assert "valuecore._calibration" in graph["valuecore._policy"]  # a function-level import


def test_the_engine_knows_nothing_of_calibration():
    """Calibration maps the confidences before the engine sees them: the Policy (``_policy``) records
    the mapping and applies it; the modules that tune and evaluate rules never import calibration."""
    graph = import_graph(package_modules())
    for name in ENGINE:
        assert CALIBRATION not in graph[f"{PACKAGE}.{name}"], f"{name} imports {CALIBRATION}"
    assert not graph[CALIBRATION] & {f"{PACKAGE}.{name}" for name in (*ENGINE[1:], "_policy")}, graph[CALIBRATION]


def test_the_command_line_is_layered_one_way():
    """The sub-commands share ``_cli_common``, which imports no ``_cli*`` module; ``_cli`` registers them."""
    graph = import_graph(package_modules())
    cli = {name for name in graph if name.startswith(f"{PACKAGE}._cli")}
    assert f"{PACKAGE}._cli_common" in cli
    assert not graph[f"{PACKAGE}._cli_common"] & cli
    for name in cli - {f"{PACKAGE}._cli"}:
        assert f"{PACKAGE}._cli" not in graph[name], f"{name} imports _cli"


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
    assert private_imports("import valuecore._sorted as s") == ["valuecore._sorted"]
    assert private_imports("from valuecore import _voc, presort") == ["valuecore._voc"]
    assert private_imports("def f():\n    from valuecore._io._runfiles import x") == ["valuecore._io"]
    assert private_imports("from valuecore.runs import _load_one") == ["valuecore.runs._load_one"]
    assert private_imports("import importlib\nimportlib.import_module('valuecore._bands')") == ["valuecore._bands"]
    assert private_imports("from valuecore.runs import load_runs\nimport valuecore as vc\n"
                           "from valuecore import __version__") == []


# ------------------------------------------------------------ what moved still loads from where it was
def test_pickles_made_before_a_class_moved_still_load():
    """Pickles (an MLflow model's classifier holds a ServingPolicy and its Policy objects) name a class by
    its module: each moved class stays importable from its old module."""
    import pickle

    import valuecore as vc
    from valuecore.constraints import AssistedValues, ShortlistValues
    from valuecore.serving import load_policy

    policy = vc.Policy("two_tier", threshold=0.9, assist_threshold=0.5, calibration={"method": "none"},
                       assisted={"v_confirmed_correct": 1, "v_confirmed_wrong": 0, "cost": 0.1})
    served = load_policy({"schema_version": 2, "use_case": {"v_correct": 1, "v_abstain": 0, "v_wrong": -4},
                          "models": [{"model": "m", "classes": ["no", "yes"], "policy": policy.to_dict()}]})
    moved = {  # class -> (its module now, its module before)
        vc.Policy: ("valuecore._policy", "valuecore._policies"),
        type(policy.calibration): ("valuecore._policy", "valuecore._policies"),
        type(served): ("valuecore._serving", "valuecore.serving"),
        AssistedValues: ("valuecore._tier_values", "valuecore._twotier"),
        ShortlistValues: ("valuecore._tier_values", "valuecore._shortlist"),
    }
    for cls, (now, before) in moved.items():
        assert cls.__module__ == now, cls
    data = pickle.dumps((policy, served, AssistedValues(0.9, -0.5), ShortlistValues(((2, 0.5, 0.0),))), protocol=0)
    old = data
    for cls, (now, before) in moved.items():
        new_name, old_name = f"c{now}\n{cls.__qualname__}\n".encode(), f"c{before}\n{cls.__qualname__}\n".encode()
        assert new_name in old, cls
        old = old.replace(new_name, old_name)
    policy_again, served_again, assisted, shortlist = pickle.loads(old)
    assert policy_again == policy and assisted == AssistedValues(0.9, -0.5)
    assert shortlist == ShortlistValues(((2, 0.5, 0.0),))
    items = [[0.95, 0.05], [0.2, 0.8]]
    assert served_again.decide(items).tolist() == served.decide(items).tolist()
