"""The headline experiment: the issue's predicates, the quick run (one seed), its figure."""

from __future__ import annotations

import dataclasses
import math

import pytest

from paperworks.core.claims import HOLDS, SlopeClaim
from paperworks.pdocrl.experiments import QUICK, PDOCRLExperiment, PDOCRLExperimentConfig


def test_config_and_claims_are_the_issues():
    exp = PDOCRLExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is PDOCRLExperimentConfig and quick is QUICK
    assert full.sizes == (250, 1000, 4000, 16000) and quick.sizes == full.sizes
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.iterations = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="sizes"):
        PDOCRLExperimentConfig(sizes=(1000, 250, 4000))
    by_key = {c.key: c for c in PDOCRLExperiment.claims}
    for key in ("subopt_rate", "violation_rate"):
        assert isinstance(by_key[key], SlopeClaim) and by_key[key].band == (-0.65, -0.35)
    assert by_key["partial_coverage"].paired and by_key["partial_coverage"].op == "<"
    assert by_key["competitive_garnet"].threshold == 0.9 and by_key["competitive_grid"].threshold == 0.9
    assert (
        by_key["stronger_class_optimal"].threshold == 0.05
        and by_key["naive_solver_spurious"].threshold == 0.45
    )
    assert by_key["spurious_saddle_exists"].exact


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    exp = PDOCRLExperiment()
    report = exp.run(quick=True, seeds=1)
    folder = tmp_path_factory.mktemp("figs")
    return report, folder, exp.figures(report, folder)


def test_quick_run(quick_run):
    report, _, _ = quick_run
    s = report.per_seed[0]
    assert all(math.isfinite(v) for v in s.values())
    by_key = {c.claim.key: c for c in report.claims}
    assert by_key["spurious_saddle_exists"].verdict == HOLDS
    assert s["example/naive_subopt"] >= 0.45 and s["example/pdocrl_subopt"] <= 0.05
    assert s["subopt/n16000"] < s["subopt/n250"]  # more data, smaller error
    for env in ("garnet", "grid"):
        assert 0.8 < s[f"{env}/PDOCRL/normalised"] <= 1.05


def test_figure_is_written(quick_run):
    pytest.importorskip("matplotlib")
    _, folder, names = quick_run
    assert names and all((folder / n).stat().st_size > 10_000 for n in names)
