"""The quick reproduction: its claims, config, metrics, repeatability."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest

from paperworks.core.claims import INCONCLUSIVE_1_SEED, SlopeClaim
from paperworks.hidden_target_oio.experiments import (
    K_MULTS,
    P_GRID,
    QUICK,
    T_MULTS,
    HiddenTargetOIOConfig,
    HiddenTargetOIOExperiment,
)


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = HiddenTargetOIOExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is HiddenTargetOIOConfig and quick is QUICK and quick != full
    assert full.T0 * T_MULTS[0] == 1000 and full.T0 * T_MULTS[-1] == 64_000  # the issue's T grid
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.T0 = 5  # type: ignore[misc]
    for bad in ({"T0": 0}, {"mu": 0.0}, {"rho": 2.0}, {"step_exponents": (1, 1, 2)}, {"dyn_horizon": 10}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            HiddenTargetOIOConfig(**bad)


def test_claims_use_the_issues_predicates():
    by = {c.key: c for c in HiddenTargetOIOExperiment.claims}
    assert isinstance(by["static_sqrt_T"], SlopeClaim) and by["static_sqrt_T"].band == (0.4, 0.6)
    assert by["regret_inverse_sqrt_p"].band == (-0.65, -0.35) and by["regret_inverse_sqrt_p"].sizes == P_GRID
    assert by["dynamic_sqrt_PT"].band == (0.35, 0.65) and by["dynamic_sqrt_PT"].sizes == K_MULTS
    c = by["beats_maxcosd_small_p"]
    assert c.paired and c.op == "<" and c.threshold == 0.0
    assert by["strongly_convex_log_T"].threshold == 1.5 and by["queue_inequality"].exact


TINY = {"T0": 20, "p_horizon": 300, "dyn_horizon": 300, "K0": 1, "step_exponents": (-4, -2, 0)}


def test_same_seed_gives_the_same_metrics():
    exp = HiddenTargetOIOExperiment().configure(TINY)
    a = exp.run(quick=True, seeds=[3]).per_seed[0]
    b = exp.run(quick=True, seeds=[3]).per_seed[0]
    assert a == b


@pytest.fixture(scope="module")
def report():
    return HiddenTargetOIOExperiment().run(quick=True, seeds=1)


def test_quick_report_structure_and_metrics(report):
    keys = [c.claim.key for c in report.claims]
    assert keys == [c.key for c in HiddenTargetOIOExperiment.claims]
    s = report.per_seed[0]
    assert all(math.isfinite(v) for v in s.values())
    assert s["queue_violations"] == 0 and s["max_infeasibility"] <= 1e-9
    for c in report.claims:
        if not c.claim.exact:
            assert c.verdict == INCONCLUSIVE_1_SEED
    assert len(report.tables) == 5 and "| 0.05 |" in "".join(report.tables.values())


def test_quick_regrets_are_sublinear_and_grow_as_p_falls(report):
    s = report.per_seed[0]
    static = [s[f"static_regret/Tx{m}"] for m in T_MULTS]
    assert all(b > a for a, b in itertools.pairwise(static))  # grows with T ...
    assert static[-1] / static[0] < 64  # ... sublinearly
    assert s["hidden_regret/p0.05"] > s["hidden_regret/p0.4"]  # rarer common demand, more regret
    assert s["sc_regret_over_logT_spread"] < 3
    assert s["dyn_regret/K64"] > s["dyn_regret/K1"]
