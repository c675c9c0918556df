"""The quick experiment: report structure, sanity and seeded determinism."""

import math

import numpy as np

from paperworks.core import Progress
from paperworks.truthful_calibration.experiments import TruthfulCalibrationExperiment


def test_quick_run_report_structure():
    exp = TruthfulCalibrationExperiment()
    report = exp.run(quick=True, seeds=1)
    assert [c.claim.key for c in report.claims] == [c.key for c in exp.claims]
    assert all(c.measured is not None and math.isfinite(c.measured.mean) for c in report.claims)
    s = report.summary
    assert 0.0 <= s["truthful_truth_optimal_frac"].mean <= 1.0
    assert s["truth.tce_classwise.sharpen_T0.5"].mean > s["truth.tce_classwise.truth"].mean
    assert s["truth.ece_width.snap_1"].mean < s["truth.ece_width.truth"].mean
    assert -1.0 <= s["tce_classwise_tau"].mean <= 1.0
    assert len(report.tables) == 3 and all("|" in t for t in report.tables.values())
    assert "## Claims" in report.to_markdown()


def test_same_seed_same_result():
    exp = TruthfulCalibrationExperiment()
    quiet = Progress(enabled=False)
    a = exp._truthfulness(np.random.default_rng(7), True, quiet)
    b = exp._truthfulness(np.random.default_rng(7), True, quiet)
    assert a == b
    c = exp._blackwell(np.random.default_rng(7), True, quiet)
    d = exp._blackwell(np.random.default_rng(7), True, quiet)
    assert c == d
    assert (
        exp._rank_table("iris", 3)["tce_classwise"].tolist()
        == exp._rank_table("iris", 3)["tce_classwise"].tolist()
    )
