"""A value matrix names its classes as the loader names a run's: in Unicode's composed form (NFC), so "é"
saved as "e" and an accent (as some editors save it) matches the run's "é", and two spellings of one class are
refused as one class named twice."""

from __future__ import annotations

import pytest
from helpers.cli import run_cli


def test_a_value_matrix_naming_a_class_decomposed_matches_the_run(tmp_path, capsys):
    # "é" as "e" + U+0301 (as some editors save it): the loader reads the run's class composed, so must the matrix.
    (tmp_path / "run.csv").write_text("y_true,proba_\u00e9,proba_b\n" + "\u00e9,0.8,0.2\nb,0.3,0.7\n" * 10,
                                      encoding="utf-8")
    (tmp_path / "vm.csv").write_text("true\\predicted,e\u0301,b,abstain\ne\u0301,1,-5,0\nb,-5,1,0\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "report", tmp_path / "run.csv", "--value-matrix", tmp_path / "vm.csv",
                             "--no-interval")
    assert code == 0, err
    (tmp_path / "twice.csv").write_text("t,\u00e9,e\u0301,abstain\n\u00e9,1,-5,0\ne\u0301,-5,1,0\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "report", tmp_path / "run.csv", "--value-matrix", tmp_path / "twice.csv")
    assert code == 2 and "more than once" in err, err


def test_a_value_matrix_made_in_python_reads_its_classes_composed():
    import numpy as np

    import valuecore as vc

    matrix = vc.ValueMatrix(("e\u0301", "b"), np.array([[1.0, -5.0, 0.0], [-5.0, 1.0, 0.0]]))
    assert matrix.classes == ("\u00e9", "b")
    with pytest.raises(ValueError, match="more than once"):
        vc.ValueMatrix(("e\u0301", "\u00e9"), np.zeros((2, 3)))
