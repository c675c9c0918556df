"""The headline experiment: frozen config, the issue's predicates, the quick run and its figure."""

import dataclasses
import math

import pytest

from paperworks.bace.experiments import QUICK, BACEExperiment, BACEExperimentConfig


def test_config_is_one_frozen_dataclass():
    exp = BACEExperiment()
    assert exp.config(True) is QUICK and exp.config(False) == BACEExperimentConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        QUICK.n_steps = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="snr_levels"):
        BACEExperimentConfig(snr_levels=(1.0, 2.0))


def test_claims_are_the_issues_predicates():
    c = {x.key: x for x in BACEExperiment.claims}
    assert (c["edge_recovery"].op, c["edge_recovery"].threshold) == (">=", 0.9)
    assert c["edge_vs_granger"].baseline == "auroc_mean_granger" and c["edge_vs_granger"].threshold == 0
    assert c["adapt_vs_shared"].paired and c["adapt_vs_shared"].op == ">"
    assert (c["forecast_comparable"].op, c["forecast_comparable"].threshold) == ("<=", 1.05)
    assert (c["reliability"].op, c["reliability"].threshold) == (">=", 0.8)


def test_quick_run_and_figure(tmp_path):
    exp = BACEExperiment()
    report = exp.run(quick=True, seeds=1)
    s = report.per_seed[0]
    assert all(math.isfinite(v) for v in s.values())
    assert {r.claim.key for r in report.claims} == {c.key for c in exp.claims}
    assert 0.0 <= s["auroc_min_bace"] <= 1.0 and s["mse_ratio_bace"] > 0
    assert exp.tables(report.per_seed, True)
    pytest.importorskip("matplotlib")
    names = exp.figures(report, tmp_path)
    assert names and (tmp_path / names[0]).stat().st_size > 10_000
