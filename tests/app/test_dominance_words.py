"""The dominance sentence for a leader that holds at a single omega (issue 15)."""

import valuecore as vc
from dashboard.views import voc as views


def test_a_point_segment_reads_as_a_single_omega():
    steady = vc.presort(vc.Predictions.from_top_label(["0", "0"], [0.9, 0.1], ["0", "1"], classes=["0", "1"]))
    zeros = vc.presort(vc.Predictions.from_top_label(["0"] * 4, [0.0, 0.0, 0.0, 0.5], ["0"] * 4, classes=["0", "1"]))
    result = vc.dominance(vc.voc_curve(steady, "oracle"), vc.voc_curve(zeros, "calibrated"), 2.0)
    assert result.segments == ((0.0, 0.0, "b"), (0.0, 2.0, "a"))
    assert views.dominance_sentence("m1", "m2", result) == "**m1** is below **m2** at ω = 0, above after."
