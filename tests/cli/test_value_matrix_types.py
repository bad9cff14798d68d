"""A value matrix's values are numbers, read as the policy schema and the run files' loader read numbers: in JSON
a JSON number (true/false and text such as "1" are not, as a use case's "1" is not); in a CSV cell a plain ASCII
decimal, as a run file's number cell ("1_000" and the full-width "１", which Python's float() reads, are not). A
ragged matrix, a dict, or classes given as a string are refused naming what is wrong, never in numpy's words."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from helpers.cli import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from valuecore._cli.common import value_matrix_from_csv
from valuecore.serving import load_policy

RUN = "sample_runs/breast_cancer/logreg.csv"
CLASSES = ["benign", "malignant"]

BAD_JSON = {
    "text": ([["1", "0", "-1"], ["0", "1", "0"]], CLASSES,
             r"row 0 \(true class 'benign'\), column 0 \('benign'\): '1' is not a number"),
    "true/false": ([[1, 0, -1], [0, True, 0]], CLASSES,
                   r"row 1 \(true class 'malignant'\), column 1 \('malignant'\): True is not a number"),
    "a huge integer": ([[1, 0, -1], [0, 1, 10**400]], CLASSES,
                       r"row 1 \(true class 'malignant'\), column 2 \('abstain'\): 1000000.*… is not a finite number"),
    "ragged": ([[1, 0], [0, 1, 0]], CLASSES,
               r"must have shape \(2, 3\) .*; row 0 \(true class 'benign'\) has 2 values"),
    "a row not a list": ([{"a": 1}, [0, 1, 0]], CLASSES, r"must have shape \(2, 3\) .*; row 0 \(true class "
                                                        r"'benign'\) is a dict, not a list of numbers"),
    "a dict": ({"a": 1}, CLASSES, r"the value matrix must be a list of rows, one per true class, got dict"),
    "too few rows": ([[1, 0, -1]], CLASSES, r"a value matrix for 2 classes must have shape \(2, 3\) .*, got 1 rows"),
    "classes as a string": ([[1, 0, -1], [0, 1, 0]], "benign",
                            r"the value matrix's classes must be a list of class names .*got 'benign'"),
    "a class not a string": ([[1, 0, -1], [0, 1, 0]], ["benign", 2],
                             r"the value matrix's classes must be a list of class names"),
}


def _use_case(matrix, classes) -> dict:
    return {"classes": classes, "value_matrix": matrix}


@pytest.mark.parametrize("name", BAD_JSON)
def test_the_serving_runtime_refuses_a_value_matrix_of_no_numbers(name):
    matrix, classes, message = BAD_JSON[name]
    document = {"schema_version": 2, "use_case": _use_case(matrix, classes),
                "models": [{"model": "m", "classes": CLASSES,
                            "policy": {"kind": "expected_value", "threshold": None, "class_thresholds": None,
                                       "calibration": {"method": "none"}}}]}
    with pytest.raises(ValueError, match="invalid policy document at use_case: .*" + message):
        load_policy(document)


@pytest.mark.parametrize("name", [n for n in BAD_JSON if n != "a huge integer"])  # no JSON file holds that one
def test_the_command_line_refuses_a_value_matrix_of_no_numbers(name, tmp_path, capsys):
    matrix, classes, message = BAD_JSON[name]
    path = tmp_path / "vm.json"
    path.write_text(json.dumps(_use_case(matrix, classes)), encoding="utf-8")
    code, out, err = run_cli(capsys, "report", RUN, "--value-matrix", path, "--no-interval")
    assert code == 2, (out, err)
    assert "Traceback" not in err
    import re

    assert re.search(f"{re.escape(str(path))}: .*{message}", err), err


@pytest.mark.parametrize("cell", ["1_000", "\uff11", "\u0661", "0x10", "1e400", "nan", "True"])
def test_a_csv_cell_is_a_number_as_a_run_files_cell_is(cell, tmp_path, capsys):
    path = tmp_path / "vm.csv"
    path.write_text(f"true,benign,malignant,abstain\nbenign,{cell},-1,0\nmalignant,-1,1,0\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "report", RUN, "--value-matrix", path, "--no-interval")
    assert code == 2, (out, err)
    assert f"row 2 (true class 'benign'), column 'benign': {cell!r} is not a finite number" in err, err


def test_the_loader_refuses_those_cells_too(tmp_path):
    """The rule is the loader's own: a run file with such a probability cell is refused as not a number."""
    import valuecore as vc

    for cell in ["1_000", "\uff11"]:
        path = tmp_path / "run.csv"
        path.write_text(f"y_true,proba_a,proba_b\na,{cell},0\nb,0,1\n", encoding="utf-8")
        report = vc.load_runs([path])
        assert not report.models
        assert [(p.column, p.message) for p in report.problems] == [("proba_a", "values that are not numbers")]


DECIMALS = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e100, max_value=1e100)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(DECIMALS, min_size=6, max_size=6),
       spelling=st.sampled_from(["{!r}", "{:.17g}", "{:e}", "{:.3f}", "{:+.5E}"]))
def test_a_csv_value_is_read_as_float_reads_it_bit_for_bit(values, spelling):
    cells = [spelling.format(v) for v in values]
    text = f"t,a,b,abstain\na,{cells[0]},{cells[1]},{cells[2]}\nb,{cells[3]},{cells[4]},{cells[5]}\n"
    read = value_matrix_from_csv(text).values
    expected = np.array([float(c) for c in cells]).reshape(2, 3)
    assert read.tobytes() == expected.tobytes()


def test_a_negative_zero_cell_stays_negative_zero():
    read = value_matrix_from_csv("t,a,b,abstain\na,1,-0,0\nb,-1,1,0\n").values
    assert math.copysign(1.0, read[0, 1]) == -1.0


def test_a_well_typed_matrix_still_decides():
    matrix = [[1, -2, 0], [-2.5, 1.5, 0]]
    document = {"schema_version": 2, "use_case": _use_case(matrix, CLASSES),
                "models": [{"model": "m", "classes": CLASSES,
                            "policy": {"kind": "expected_value", "threshold": None, "class_thresholds": None,
                                       "calibration": {"method": "none"}}}]}
    policy = load_policy(document)
    assert policy.values.values.tolist() == [[1.0, -2.0, 0.0], [-2.5, 1.5, 0.0]]
    assert policy.decide([[0.9, 0.1], [0.1, 0.9], [0.55, 0.45]]).tolist() == ["benign", "malignant", "abstain"]
