"""The quick experiment: its configuration, report structure, verdicts, and seeded determinism."""

import dataclasses
import json
import math

import numpy as np
import pytest

from paperworks.core import HOLDS, INCONCLUSIVE_1_SEED, Progress
from paperworks.truthful_calibration.experiments import (
    QUICK,
    TruthfulCalibrationConfig,
    TruthfulCalibrationExperiment,
)


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = TruthfulCalibrationExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is TruthfulCalibrationConfig
    assert type(full).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        full.truth_n = 1  # type: ignore[misc]
    assert full == TruthfulCalibrationConfig() and quick == QUICK != full


@pytest.mark.parametrize(
    "bad",
    [
        {"truth_n": 0},
        {"truth_reps": 1},
        {"smooth_reps": 400},
        {"multiclass_bins": 6},
        {"datasets": ("mnist",)},
        {"bin_counts": (10,)},
        {"bin_counts": (5, 5, 10)},
        {"test_size": 1.0},
        {"ece_bins": True},
        {"rank_test_sizes": ()},
        {"rank_test_sizes": (20,)},
        {"rank_classes": 1},
    ],
)
def test_config_rejects_bad_settings(bad):
    with pytest.raises(ValueError, match="TruthfulCalibrationConfig"):
        TruthfulCalibrationConfig(**bad)


def test_quick_run_report_structure():
    exp = TruthfulCalibrationExperiment()
    report = exp.run(quick=True, seeds=1)
    assert [c.claim.key for c in report.claims] == [c.key for c in exp.claims]
    assert report.config == json.loads(json.dumps(dataclasses.asdict(exp.config(True))))
    by_key = {c.claim.key: c for c in report.claims}
    for c in report.claims:
        assert c.n == 1 and math.isfinite(c.estimate)
        assert c.estimate == report.per_seed[0][c.claim.metric]
    # exact claims (identities of the construction) are judged on the values; the others need seeds
    assert {k for k, c in by_key.items() if c.claim.exact} == {
        "truth_minimises_truthful",
        "blackwell_exact_order",
    }
    assert by_key["truth_minimises_truthful"].verdict == HOLDS
    assert by_key["blackwell_exact_order"].verdict == HOLDS
    for key in ("nontruthful_gamed", "blackwell", "ranking_robustness", "ece_rankings_flip"):
        assert by_key[key].verdict == INCONCLUSIVE_1_SEED and by_key[key].lo is None
    assert by_key["nontruthful_gamed"].claim.paired and by_key["ranking_robustness"].claim.paired
    s = report.summary
    assert 0.0 <= s["truthful_truth_optimal_frac"].mean <= 1.0
    assert s["truth.tce_classwise.sharpen_T0.5"].mean > s["truth.tce_classwise.truth"].mean
    assert s["truth.ece_width.snap_1"].mean < s["truth.ece_width.truth"].mean
    assert -1.0 <= s["rank.n300.tce_classwise.tau"].mean <= 1.0
    assert 0.0 <= s["ece_width_material_flip_frac"].mean <= s["rank.n3000.ece_width.flip"].mean + 1e-12
    for e in ("tce_classwise", "atb_classwise", "atb_multiclass", "atb_confidence"):  # exact = closed form
        assert s[f"blackwell.{e}.level3.exact"].mean > s[f"blackwell.{e}.level0.exact"].mean > 0
    assert s["blackwell_exact_max_absz"].mean < 10
    assert len(report.tables) == 4 and all("|" in t for t in report.tables.values())
    assert "## Claims" in report.to_markdown()


def test_same_seed_same_result():
    exp = TruthfulCalibrationExperiment()
    quiet = Progress(enabled=False)
    small = dataclasses.replace(
        QUICK,
        truth_n=200,
        truth_reps=6,
        smooth_reps=2,
        blackwell_n=200,
        blackwell_reps=4,
        rank_test_sizes=(300,),
    )
    a = exp._truthfulness(np.random.default_rng(7), small, quiet)
    b = exp._truthfulness(np.random.default_rng(7), small, quiet)
    assert a == b
    c = exp._blackwell(np.random.default_rng(7), small, quiet)
    d = exp._blackwell(np.random.default_rng(7), small, quiet)
    assert c == d
    assert (
        exp._rank_table("iris", 3)["tce_classwise"].tolist()
        == exp._rank_table("iris", 3)["tce_classwise"].tolist()
    )
    e = exp._ranking(5, small, quiet)
    assert e == exp._ranking(5, small, quiet)
