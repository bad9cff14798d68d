"""The public surface of valuecore: what the docs name exists, the top holds only what a user calls, and
importing stays light (which modules load, never how long). That nothing outside imports a private module:
test_architecture.py."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import valuecore as vc

ROOT = Path(__file__).resolve().parents[2]
SUBMODULES = (
    "aggregation", "calibration", "chartspecs", "cli", "constraints", "curves", "monitoring",
    "policy_json", "recommendation", "report", "runs", "serving", "uncertainty", "wording",
)
HEAVY = ("pandas", "scipy", "sklearn", "pyarrow", "jsonschema")


def named_in(docstring: str) -> set[str]:
    """Names a docstring refers to: :func:`x`, :class:`x` (unqualified) and ``x``."""
    roles = set(re.findall(r":(?:func|class|data|attr):`~?([A-Za-z_][A-Za-z0-9_]*)`", docstring))
    literals = set(re.findall(r"``([A-Za-z_][A-Za-z0-9_]*)``", docstring))
    return roles | literals


@pytest.mark.parametrize("name", SUBMODULES)
def test_each_public_submodule_documents_exactly_what_it_exposes(name):
    module = importlib.import_module(f"valuecore.{name}")
    assert module.__doc__ and module.__doc__.strip(), f"valuecore.{name} has no docstring"
    assert name in vc._SUBMODULES and getattr(vc, name) is module
    exported = set(module.__all__)
    assert len(exported) == len(module.__all__), "repeated names in __all__"
    for export in exported:
        assert hasattr(module, export), f"valuecore.{name}.{export} is in __all__ but missing"
    missing = exported - named_in(module.__doc__)
    assert not missing, f"valuecore.{name} exposes {sorted(missing)} without naming them in its docstring"
    roles = set(re.findall(r":(?:func|class):`([A-Za-z_][A-Za-z0-9_]*)`", module.__doc__))
    assert roles <= exported, f"the docstring of valuecore.{name} names {sorted(roles - exported)}, not exposed"


def test_the_package_docstring_names_every_top_level_name_and_submodule():
    top = [n for n in vc.__all__ if n not in SUBMODULES]
    assert set(vc.__all__) == set(vc._TOP_LEVEL) | set(SUBMODULES)
    missing = set(top) - named_in(vc.__doc__)
    assert not missing, f"the package docstring does not name {sorted(missing)}"
    for name in SUBMODULES:
        assert f"``valuecore.{name}``" in vc.__doc__
    for name in top:
        assert getattr(vc, name) is getattr(importlib.import_module(f"valuecore.{vc._TOP_LEVEL[name]}"), name)
    assert set(vc.__all__) <= set(dir(vc))


# Release 0.2 moved these from the top into the public submodule named (CHANGELOG.md); the old top-level
# names are gone, not deprecated.
MOVED_IN_0_2 = {
    "runs": ("ModelRun", "LoadReport", "LoadProblem", "check_comparable", "load_run_file"),
    "curves": ("SortedRun", "item_gains", "decision_values", "ThresholdCurve", "risk_coverage_curve", "RiskCoverage",
               "confidence_histogram", "discrimination", "VOCCurve", "VOC_MODES"),
    "policy_json": ("Regime", "VALUE_LIMIT", "POLICY_KINDS", "ALL_POLICY_KINDS", "ModelPlan",
                    "AppliedPolicy", "evaluation_record"),
    "recommendation": ("Verdict", "Standing", "simpler_rule", "RuleComparison", "Recommendation", "Candidate"),
}


def test_the_top_holds_at_most_forty_names_and_the_rest_lives_in_its_submodule():
    assert len(vc.__all__) <= 40, sorted(vc.__all__)
    for where, names in MOVED_IN_0_2.items():
        module = importlib.import_module(f"valuecore.{where}")
        for name in names:
            assert name in module.__all__ and name not in vc.__all__, (where, name)
            with pytest.raises(AttributeError, match=f"no attribute '{name}'"):
                getattr(vc, name)
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        vc.nonexistent  # noqa: B018


def test_interval_arguments_have_scipys_names_only():
    values = [1.0, 1.0, 0.0, -4.0, 1.0, 1.0, 1.0, 1.0]
    assert vc.uncertainty.mean_interval(values, confidence_level=0.9).confidence == 0.9
    with pytest.raises(TypeError, match="confidence"):
        vc.uncertainty.mean_interval(values, confidence=0.9)
    with pytest.raises(TypeError, match="batch_size"):
        vc.uncertainty.bootstrap_interval(values, rng=np.random.default_rng(1), batch_size=7)
    assert vc.uncertainty.mean_interval is importlib.import_module("valuecore._stats.uncertainty").mean_interval


def test_policy_interval_takes_an_explicit_rng_for_the_bootstrap():
    p = vc.Predictions.from_proba([[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.3, 0.7]], y_true=[0, 0, 1, 1])
    policy, use_case = vc.Policy("threshold", threshold=0.7), vc.UseCase(10, 0, -40)
    with pytest.raises(TypeError, match="needs an rng"):
        vc.uncertainty.policy_interval(policy, p, use_case, method="bootstrap")
    first = vc.uncertainty.policy_interval(policy, p, use_case, method="bootstrap", rng=np.random.default_rng(0))
    assert first == vc.uncertainty.policy_interval(
        policy, p, use_case, method="bootstrap", rng=np.random.default_rng(0)
    )
    assert vc.uncertainty.policy_interval(policy, p, use_case).method == "bounded"  # the default draws nothing


# nothing outside the package imports a private module: tests/test_architecture.py


# ------------------------------------------------------------ import cost, structurally
def loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sorted(m for m in sys.modules)))"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()
    return {m.split(".")[0] for m in out}


def test_import_valuecore_loads_no_heavy_dependency():
    loaded = loaded_after("import valuecore")
    assert not loaded & {*HEAVY, "numpy"}, sorted(loaded & {*HEAVY, "numpy"})


def test_the_command_line_parser_and_the_numeric_core_load_no_heavy_dependency():
    loaded = loaded_after("from valuecore._cli.commands import build_parser; build_parser()")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    loaded = loaded_after(
        "import valuecore as vc\n"
        "for name in ('presort', 'fit_policy', 'evaluate', 'estimate', 'threshold_curve', 'voc_curve',"
        " 'dominance', 'comparison_table', 'Policy', 'UseCase', 'ValueMatrix'): getattr(vc, name)\n"
        "vc.Policy('threshold', threshold=0.5).decide(vc.Predictions.from_proba([[0.9, 0.1], [0.4, 0.6]]))"
    )
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_help_loads_the_standard_library_and_the_package_only_not_even_numpy():
    help_run = (
        "import io, runpy\nsys.argv = ['valuecore', '--help']\nreal, sys.stdout = sys.stdout, io.StringIO()\n"
        "try:\n    runpy.run_module('valuecore', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "sys.stdout = real"
    )
    extra = loaded_after("import sys\n" + help_run) - loaded_after("pass")
    assert {"valuecore", "argparse"} <= extra  # the check sees what --help loads
    foreign = extra - set(sys.stdlib_module_names) - {"valuecore"}
    assert not foreign, sorted(foreign)


@pytest.mark.heavy
def test_heavy_dependencies_are_imported_where_used_never_at_module_level():
    """Only the modules that are all about frames or files import pandas at the top."""
    allowed = {"pandas": {"_monitor/chunks.py", "_stats/uncertainty.py"},
               "scipy": {"_stats/uncertainty.py"},
               "sklearn": {"_serve/estimator.py"}}  # loaded only by its name in valuecore.serving
    for path in sorted((ROOT / "valuecore").rglob("*.py")):
        where = path.relative_to(ROOT / "valuecore").as_posix()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:  # module level only
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                root = name.split(".")[0]
                if root in HEAVY:
                    assert where in allowed.get(root, ()), f"{where} imports {root} at module level"
    for path in sorted((ROOT / "valuecore").rglob("*.py")):  # one macro F1: Predictions.macro_f1
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            used = getattr(node, "id", None) or getattr(node, "attr", None) or getattr(node, "name", None)
            assert used != "f1_score", f"{path.name} uses scikit-learn's f1_score"
