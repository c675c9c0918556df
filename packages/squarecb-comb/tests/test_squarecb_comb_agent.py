"""The agent and the baselines: act/learn contract, bad input, determinism, learning."""

from __future__ import annotations

import numpy as np
import pytest

from paperworks.squarecb_comb import (
    CombLinTS,
    CombLinUCB,
    EnvironmentConfig,
    EpsilonGreedyTopM,
    LinearOracle,
    PerArmSquareCB,
    SemiBanditEnvironment,
    SquareCBComb,
    gamma_schedule,
    inverse_gap_weighting,
    simulate,
)

A, M, D = 30, 4, 5


def _agents(seed: int) -> dict:
    return {
        "ours": SquareCBComb(A, M, LinearOracle(D), seed=seed),
        "eps": EpsilonGreedyTopM(A, M, LinearOracle(D), seed=seed),
        "ucb": CombLinUCB(A, M, D, seed=seed),
        "ts": CombLinTS(A, M, D, seed=seed),
        "perarm": PerArmSquareCB(A, M, LinearOracle(D), seed=seed),
    }


@pytest.mark.parametrize("name", ["ours", "eps", "ucb", "ts", "perarm"])
def test_act_returns_valid_actions(name: str) -> None:
    agent = _agents(0)[name]
    env = SemiBanditEnvironment(EnvironmentConfig(A, M, D), seed=0)
    for _ in range(50):
        X = env.context()
        a = agent.act(X)
        assert a.dtype == np.int64 and a.ndim == 1 and a.size <= M
        assert np.all(np.diff(a) > 0) and a.min() >= 0 and a.max() < A
        agent.learn(X, a, env.rewards(env.mean_rewards(X), a))


def test_ours_marginals_and_schedule() -> None:
    agent = SquareCBComb(A, M, LinearOracle(D), gamma_scale=2.0, seed=0)
    X = SemiBanditEnvironment(EnvironmentConfig(A, M, D), seed=0).context()
    agent.act(X)
    assert agent.last_gamma_ == pytest.approx(2.0 * np.sqrt((A + M / 2) / M))
    assert agent.last_marginals_.sum() == pytest.approx(M)
    # an untrained oracle predicts zeros for every arm: uniform marginals m / A
    np.testing.assert_allclose(agent.last_marginals_, M / A)
    assert gamma_schedule(4, A, M, 2.0) == pytest.approx(2 * agent.last_gamma_)


def test_per_arm_igw_is_a_distribution_favouring_the_greedy_arm() -> None:
    p = inverse_gap_weighting(np.array([0.1, 0.9, 0.5]), 10.0)
    assert p.sum() == pytest.approx(1.0) and np.argmax(p) == 1
    np.testing.assert_allclose(p[[0, 2]], [1 / (3 + 8.0), 1 / (3 + 4.0)])


def test_seeded_runs_are_identical() -> None:
    runs = []
    for _ in range(2):
        env = SemiBanditEnvironment(EnvironmentConfig(A, M, D), seed=5)
        runs.append(simulate(_agents(3), env, 80))
    for name in runs[0]:
        np.testing.assert_array_equal(runs[0][name].cumulative_regret, runs[1][name].cumulative_regret)


def test_ours_learns_and_beats_uniform_random() -> None:
    env = SemiBanditEnvironment(EnvironmentConfig(A, M, D), seed=1)
    T = 1500
    res = simulate({"ours": SquareCBComb(A, M, LinearOracle(D), seed=0)}, env, T)["ours"]
    per_round = np.diff(np.concatenate([[0.0], res.cumulative_regret]))
    # expected regret of a uniformly random m-subset on the same environment (Monte Carlo)
    env2 = SemiBanditEnvironment(EnvironmentConfig(A, M, D), seed=1)
    mus = [env2.mean_rewards(env2.context()) for _ in range(300)]
    uniform = np.mean([np.sort(mu)[-M:].sum() - M * mu.mean() for mu in mus])
    assert per_round[-300:].mean() < 0.3 * uniform
    assert per_round[-300:].mean() < per_round[:100].mean()


@pytest.mark.parametrize("name", ["ours", "eps", "ucb", "ts", "perarm"])
def test_bad_input_is_rejected(name: str) -> None:
    agent = _agents(0)[name]
    X = np.random.default_rng(0).normal(size=(A, D))
    agent.act(X)
    with pytest.raises(ValueError, match=r"context: expected arm features of shape \(n_arms=30, d\)"):
        agent.act(X[:5])
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="context: expected finite"):
        agent.act(bad)
    with pytest.raises(ValueError, match=r"action: arm indices must lie in \[0, 30\)"):
        agent.learn(X, np.array([0, 30]), np.zeros(2))
    with pytest.raises(ValueError, match="action: expected at most m=4"):
        agent.learn(X, np.arange(5), np.zeros(5))
    with pytest.raises(ValueError, match="action: expected distinct"):
        agent.learn(X, np.array([1, 1]), np.zeros(2))
    with pytest.raises(ValueError, match=r"rewards: expected one reward per played arm, shape \(2,\)"):
        agent.learn(X, np.array([1, 2]), np.zeros(3))
    with pytest.raises(ValueError, match="rewards: expected finite"):
        agent.learn(X, np.array([1, 2]), np.array([0.0, np.inf]))
    with pytest.raises(ValueError, match="action: expected a 1-D array of integer"):
        agent.learn(X, np.array([1.0, 2.0]), np.zeros(2))


def test_m_larger_than_arm_set_is_rejected() -> None:
    with pytest.raises(ValueError, match="m: expected at most n_arms=5"):
        SquareCBComb(5, 6)
    with pytest.raises(ValueError, match="m: expected at most n_arms=5"):
        CombLinUCB(5, 6, 3)
    with pytest.raises(ValueError, match="m: expected at most n_arms=5"):
        EnvironmentConfig(5, 6)
    with pytest.raises(ValueError, match="gamma_scale"):
        SquareCBComb(5, 2, gamma_scale=0.0)
    with pytest.raises(TypeError, match="oracle: expected a RegressionOracle"):
        SquareCBComb(5, 2, oracle="linear")
