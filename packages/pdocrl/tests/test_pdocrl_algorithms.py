"""PDOCRL and the baselines: convergence to the LP optimum with plenty of data, repeatability, validation."""

from __future__ import annotations

import numpy as np
import pytest

from paperworks.pdocrl import (
    CBPL,
    GRIDS,
    PDCA,
    PDOCRL,
    BCQLagrangian,
    COptiDICE,
    PDOCRLConfig,
    Problem,
    collect_dataset,
    garnet_cmdp,
    imputed_counts,
    partial_coverage_behaviour,
    slater_bound,
    solve_lp,
)


@pytest.fixture(scope="module")
def setting():
    m = garnet_cmdp(12, 3, rng=4)
    lp = solve_lp(m)
    mu = partial_coverage_behaviour(lp.policy, noise=0.3, rng=4)
    data = collect_dataset(m, mu, 200_000, rng=5, outcomes="mean")
    return m, lp, data, Problem.of(m, slater_bound(m))


def test_pdocrl_reaches_the_lp_optimum_with_plenty_of_data(setting):
    m, lp, data, problem = setting
    mix = PDOCRL(PDOCRLConfig(iterations=3000, policy_lr=3.0)).fit(data, problem)
    J, Jc = mix.returns(m)
    assert abs(lp.reward - J) < 0.01 and Jc[0] - m.budgets[0] < 0.01
    assert mix.policies.shape == (100, 12, 3) and np.allclose(mix.policies.sum(-1), 1)
    assert (mix.lambdas >= 0).all() and (mix.lambdas <= problem.lambda_bound).all()


def test_same_data_same_result(setting):
    m, _, data, problem = setting
    a = PDOCRL(PDOCRLConfig(iterations=200)).fit(data, problem)
    b = PDOCRL(PDOCRLConfig(iterations=200)).fit(data, problem)
    np.testing.assert_array_equal(a.policies, b.policies)
    d1 = collect_dataset(m, np.full((12, 3), 1 / 3), 100, rng=9)
    d2 = collect_dataset(m, np.full((12, 3), 1 / 3), 100, rng=9)
    np.testing.assert_array_equal(d1.observations, d2.observations)


@pytest.mark.parametrize(
    "make",
    [
        lambda cfg: PDCA(cfg, beta=0.1),
        lambda cfg: CBPL(cfg),
        lambda cfg: BCQLagrangian(cfg, threshold=0.2),
        lambda cfg: COptiDICE(alpha=0.01),
    ],
)
def test_baselines_are_near_optimal_with_plenty_of_data(setting, make):
    m, lp, data, problem = setting
    mix = make(PDOCRLConfig(iterations=1500, policy_lr=3.0)).fit(data, problem)
    J, Jc = mix.returns(m)
    assert lp.reward - J < 0.05 and Jc[0] - m.budgets[0] < 0.05
    assert np.allclose(mix.policies.sum(-1), 1)


def test_imputed_model_is_a_model():
    m = garnet_cmdp(6, 3, rng=0)
    mu = partial_coverage_behaviour(solve_lp(m).policy, noise=0.2, rng=0)
    counts = collect_dataset(m, mu, 300, rng=0).counts(6, 3)
    full = imputed_counts(counts)
    assert full.supported.all()
    np.testing.assert_allclose(full.transitions.sum(-1), 1.0)
    np.testing.assert_allclose(full.reward[counts.supported], counts.reward[counts.supported])


def test_grids_have_the_same_size():
    assert len({len(g.values) for g in GRIDS.values()}) == 1


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"iterations": 0}, "iterations"),
        ({"policy_lr": -1.0}, "policy_lr"),
        ({"dual_lr": -0.5}, "dual_lr"),
        ({"lambda_bound": 0.0}, "lambda_bound"),
        ({"w_bound": -1.0}, "w_bound"),
    ],
)
def test_config_rejects_bad_values(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        PDOCRLConfig(**bad)


def test_problem_and_fit_reject_bad_input(setting):
    m, _, data, _problem = setting
    with pytest.raises(ValueError, match="gamma"):
        Problem(12, 3, m.initial, 1.0, m.budgets, 1.0)
    with pytest.raises(ValueError, match="lambda_bound"):
        Problem(12, 3, m.initial, 0.9, m.budgets, -1.0)
    bad = Problem(12, 3, m.initial, 0.9, np.array([0.1, 0.2]), 1.0)
    with pytest.raises(ValueError, match="budgets"):
        PDOCRL(PDOCRLConfig(iterations=5)).fit(data, bad)
    with pytest.raises(ValueError, match="beta"):
        PDCA(beta=0.0)
    with pytest.raises(ValueError, match="threshold"):
        BCQLagrangian(threshold=1.5)
