"""The quick reproduction: its claims, config, metrics and report."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest

from paperworks.core.claims import SlopeClaim
from paperworks.ddpm_convergence.experiments import (
    D_SIZES,
    INV_EPS,
    QUICK,
    T_SIZES,
    DDPMConvergenceConfig,
    DDPMConvergenceExperiment,
)


def test_config_quick_and_full_are_one_frozen_dataclass() -> None:
    exp = DDPMConvergenceExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is DDPMConvergenceConfig and quick is QUICK and quick != full
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.T_ref = 100  # type: ignore[misc]
    for bad in ({"T_ref": 123}, {"c1": 1.0}, {"gauss_spectrum": (2.0, 1.0)}, {"n_mc": 0}, {"grid_tol": 2.0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            DDPMConvergenceConfig(**bad)


def test_claim_declarations_carry_the_issue_bands() -> None:
    by = {c.key: c for c in DDPMConvergenceExperiment.claims}
    assert isinstance(by["kl_rate_T"], SlopeClaim) and by["kl_rate_T"].band == (-2.3, -1.7)
    assert by["kl_rate_T"].sizes == T_SIZES and by["kl_rate_d"].sizes == D_SIZES
    assert by["kl_rate_d"].band == (0.8, 1.2) and by["T_for_tv_eps"].band == (0.8, 1.2)
    assert by["T_for_tv_eps"].sizes == INV_EPS
    assert by["ddim_ddpm_same_d"].threshold == 0.2 and by["lower_bound_gaussian"].threshold == 1.5
    assert by["product_linear_in_d"].exact and by["identity_mixture_d_free"].exact


@pytest.fixture(scope="module")
def quick_run():
    exp = DDPMConvergenceExperiment()
    return exp, exp.run(quick=True)


def test_quick_run_metrics_and_claims(quick_run) -> None:
    _, rep = quick_run
    assert rep.seeds == [0, 1]
    for rec in rep.per_seed:
        assert all(math.isfinite(v) for v in rec.values())
    s0, s1 = rep.per_seed
    # deterministic part identical across seeds; only the L proxy moves
    assert s0["kl_T/T200"] == s1["kl_T/T200"] and s0["L_q99/d4"] != s1["L_q99/d4"]
    kls = [s0[f"kl_T/T{T}"] for T in T_SIZES]
    assert all(a > b for a, b in itertools.pairwise(kls))
    verdicts = {r.claim.key: r for r in rep.claims}
    assert -2.3 <= verdicts["kl_rate_T"].estimate <= -1.7
    assert 0.5 < verdicts["kl_rate_d"].estimate < 1.2
    assert verdicts["product_linear_in_d"].verdict == "holds"
    assert verdicts["identity_mixture_d_free"].verdict == "holds"
    for k in INV_EPS:
        assert s0[f"tv_at_T_tv/inv_eps{k}"] <= 1 / k
    tables = DDPMConvergenceExperiment().tables(rep.per_seed, True)
    assert len(tables) == 3 and all("|" in t for t in tables.values())


def test_two_runs_with_one_seed_agree(quick_run) -> None:
    """The exact laws have no randomness (cached across seeds); the seeded L proxy repeats."""
    exp, rep = quick_run
    again = exp.run_seed(rep.seeds[0], quick=True, progress=_quiet())
    assert again == rep.per_seed[0]


def _quiet():
    from paperworks.core import Progress

    return Progress(enabled=False)
