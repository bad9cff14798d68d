"""A seeded, bounded random walk over every page with legal and extreme settings (issue 10).

Each step picks a page and one change a visitor can make: a value of a correct
answer, a hand-off or a wrong answer anywhere from -1e308 to 1e308 (and tiny
ones), degenerate orderings of the three values, the value mode, the
recalibration, the models, the data source (sample runs, or a folder of runs
with huge or tiny weights and all-equal confidences). After every step the page
must show no exception element, and no table may show ``None`` or ``nan``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from helpers.app import pages_in_app

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_runs" / "breast_cancer"
PAGES = sorted({page["file"] for page in pages_in_app()})  # the page scripts, not the hand-over files
STEPS = 14

EXTREME_VALUES = (1e308, -1e308, 1e100, -1e100, 1e-300, -5e-324, 0.0, 1.0, -1.0, -4.0, 50.0, 7.5, -1e6)
DEGENERATE_ORDERINGS = (
    (0.0, 0.0, 0.0),  # nothing matters
    (1.0, 1.0, 1.0),
    (-1.0, 0.0, 1.0),  # inverted: wrong is worth more than correct
    (1.0, 2.0, 0.0),  # abstaining always pays
    (1.0, 0.0, 1.0),  # wrong as good as correct
    (1e308, 0.0, -1e308),
)


def extreme_folder(root: Path) -> Path:
    """Runs that stress the arithmetic: huge and tiny weights, all confidences equal, one class only seen."""
    folder = root / "extreme"
    folder.mkdir()
    base = pd.read_csv(SAMPLE / "logreg.csv")
    huge = base.copy()
    huge["weight"] = 1e50
    huge.to_csv(folder / "huge_weights.csv", index=False)
    tiny = base.copy()
    tiny["weight"] = np.where(np.arange(len(base)) % 2 == 0, 1e-50, 3e-50)
    tiny.to_csv(folder / "tiny_weights.csv", index=False)
    flat = base.copy()
    proba_columns = [c for c in base.columns if c.startswith("proba_")]
    flat[proba_columns] = 1.0 / len(proba_columns)  # every confidence equal: one distinct threshold
    flat.to_csv(folder / "all_equal.csv", index=False)
    return folder


def table_texts(at: AppTest) -> list[str]:
    """Every cell of every table on the page, as the visitor reads it."""
    cells = []
    for frame in list(at.dataframe) + list(at.table):
        value = frame.value
        if not isinstance(value, pd.DataFrame):
            continue
        for column in value.columns:
            for cell in value[column].tolist():
                if cell is None or (isinstance(cell, float) and math.isnan(cell)):
                    cells.append("None")
                else:
                    cells.append(str(cell))
    return cells


def check(at: AppTest, where: str) -> None:
    assert not at.exception, (where, [e.value for e in at.exception])
    bad = [cell for cell in table_texts(at) if cell.strip() in ("None", "nan", "NaN", "<NA>", "NaT")]
    assert not bad, (where, bad[:5])


@pytest.mark.parametrize("seed", [0, 1])
def test_random_walk_over_every_page(seed, tmp_path):
    rng = np.random.default_rng(seed)
    folder = extreme_folder(tmp_path)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["src"] = "sample:breast_cancer"
    at.run()
    check(at, "start")
    for step in range(STEPS):
        page = PAGES[rng.integers(len(PAGES))]
        action = rng.integers(7)
        where = f"seed {seed} step {step}: {page}, action {action}"
        three_values = any(n.key == "sidebar_v_correct_input" for n in at.sidebar.number_input)
        if action in (0, 1) and not three_values:
            action = 2  # a matrix is in force: its way back replaces the value inputs
        if action == 0:
            name = ("v_correct", "v_abstain", "v_wrong")[rng.integers(3)]
            value = float(EXTREME_VALUES[rng.integers(len(EXTREME_VALUES))])
            at.sidebar.number_input(key=f"sidebar_{name}_input").set_value(value)
            where += f" {name}={value:g}"
        elif action == 1:
            ordering = DEGENERATE_ORDERINGS[rng.integers(len(DEGENERATE_ORDERINGS))]
            for name, value in zip(("v_correct", "v_abstain", "v_wrong"), ordering):
                at.sidebar.number_input(key=f"sidebar_{name}_input").set_value(value)
                at.run()
            where += f" values={ordering}"
        elif action == 2:
            # Values come from a matrix once the Cost matrix page puts one in force (the binary preset,
            # with an extreme cell); the sidebar's button goes back to the three values.
            back = [b for b in at.sidebar.button if b.key == "sidebar_use_three_values"]
            if back and rng.random() < 0.5:
                back[0].click()
                where += " values=three"
            elif at.sidebar.multiselect(key="sidebar_models").value:
                at.switch_page("pages/cost_matrix.py").run()
                check(at, where + " (cost matrix)")
                submit = [b for b in at.button if str(b.label).startswith("Use these values")]
                if submit:
                    value = float(EXTREME_VALUES[rng.integers(len(EXTREME_VALUES))])
                    at.number_input(key="cost_matrix_fp").set_value(value)
                    submit[0].click()
                    where += f" matrix with FP={value:g}"
        elif action == 3:
            method = ("none", "temperature", "isotonic")[rng.integers(3)]
            at.sidebar.selectbox(key="sidebar_calibration").set_value(method)
            where += f" calibration={method}"
        elif action == 4:
            models = at.sidebar.multiselect(key="sidebar_models")
            options = list(models.options)
            chosen = [m for m in options if rng.random() < 0.6] or options[:1]
            models.set_value(chosen)
            where += f" models={chosen}"
        elif action == 5:
            source = at.sidebar.selectbox(key="sidebar_source")
            if rng.random() < 0.5:
                source.set_value("folder").run()
                at.sidebar.text_input(key="sidebar_folder").set_value(str(folder))
                where += " source=extreme folder"
            else:
                source.set_value("sample:breast_cancer")
                where += " source=breast_cancer"
        at.run()
        check(at, where + " (sidebar)")
        at.switch_page(page).run()
        check(at, where)
