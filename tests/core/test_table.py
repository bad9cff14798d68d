"""The comparison table (``valuecore/_engine/table.py``): columns and ranks against the references.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import reference as ref
from helpers.engine_reference import SETTINGS, close, model_family
from hypothesis import given, settings

import valuecore as vc

pytestmark = pytest.mark.heavy  # left out of the quick loop (README); the full suite runs it


@settings(max_examples=40, **SETTINGS)
@given(model_family())
def test_comparison_table_columns_and_ranks(family):
    models, tunes = family
    names = [f"m{k}" for k in range(len(models))]
    ks = (0, 1, 2.5, 4)
    eval_runs = {name: vc.presort(case.predictions()) for name, case in zip(names, models)}
    tune_runs = None if tunes is None else {name: vc.presort(case.predictions()) for name, case in zip(names, tunes)}
    table = vc.comparison_table(eval_runs, tune_runs, ks=ks)
    refs = {name: case.ref() for name, case in zip(names, models)}
    tune_refs = refs if tunes is None else {name: case.ref() for name, case in zip(names, tunes)}
    expected = {}
    for name, r in refs.items():
        row = {"accuracy": ref.accuracy(r), "macro_f1": ref.macro_f1(r)}
        for k in ks:
            omega = Fraction(k)
            if r.n_classes == 2:
                row[f"cost_error_k{k:g}"] = ref.cost_error(r, k)
            threshold, _ = ref.tuned_choice(tune_refs[name], k)
            _, c, w = ref.counts(r, threshold)
            row[f"value_tuned_k{k:g}"] = ref.line_value(c, w, r.total, omega)
            _, c, w = ref.counts(r, k / (k + 1))
            row[f"value_calibrated_k{k:g}"] = ref.line_value(c, w, r.total, omega)
        expected[name] = row
    columns = list(expected[names[0]])
    assert list(table.metrics.columns) == columns
    assert list(table.metrics.index) == names
    for name in names:
        for column in columns:
            assert close(table.metrics.loc[name, column], expected[name][column], 1 + max(ks)), (name, column)
    for column in columns:
        # Rank semantics (1 = best, ties share the best rank, cost error: lower is better),
        # on the table's own figures: exact ties of e.g. macro F1 may round differently.
        scores = {name: float(table.metrics.loc[name, column]) for name in names}
        want = ref.ranks(scores, higher_is_better=not column.startswith("cost_error"))
        assert {name: int(table.ranks.loc[name, column]) for name in names} == want, column
