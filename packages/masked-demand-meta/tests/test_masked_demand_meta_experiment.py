"""The headline experiment: the issue's predicates, the quick run, its figure."""

from __future__ import annotations

import dataclasses
import math

import pytest

from paperworks.masked_demand_meta.experiments import QUICK, MaskedDemandConfig, MaskedDemandExperiment


def test_config_and_claims():
    exp = MaskedDemandExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is MaskedDemandConfig and quick is QUICK
    assert full.rhos == (0.0, 0.4, 0.8) and full.n_tasks == 2000 and full.periods == 6
    assert full.reveal_tasks == (500, 8000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.n_tasks = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="rhos"):
        MaskedDemandConfig(rhos=(0.4, 0.0, 0.8))
    by_key = {c.key: c for c in MaskedDemandExperiment.claims}
    for b in ("pooled", "per_task", "covariate", "dml"):
        assert by_key[f"beats_{b}"].paired and by_key[f"beats_{b}"].op == "<"
    assert by_key["dcmoml_flat_in_rho"].threshold == 0.2
    assert by_key["rho0_matches_covariate"].threshold == 1.1


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    exp = MaskedDemandExperiment()
    report = exp.run(quick=True, seeds=1)
    folder = tmp_path_factory.mktemp("figs")
    return report, folder, exp.figures(report, folder)


def test_quick_run(quick_run):
    report, _, _ = quick_run
    s = report.per_seed[0]
    assert all(math.isfinite(v) for v in s.values())
    assert s["rmse/dcmoml/rho0.8"] < s["rmse/pooled/rho0.8"]
    assert s["bias/pooled/rho0.8"] > s["bias/pooled/rho0"]
    assert s["oracle_rmse/rho0.8"] <= s["rmse/dcmoml/rho0.8"]  # nothing beats the exact target


def test_figure_is_written(quick_run):
    pytest.importorskip("matplotlib")
    _, folder, names = quick_run
    assert names and all((folder / n).stat().st_size > 10_000 for n in names)
