"""The agents: act/learn contract, one base class, bad input, determinism, learning."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from paperworks.squarecb_comb import (
    CombinatorialAgent,
    CombLinTS,
    CombLinUCB,
    EnvironmentConfig,
    EpsilonGreedyTopM,
    LinearOracle,
    MLPOracle,
    PerSlotIGW,
    RandomFeaturesOracle,
    SemiBanditEnvironment,
    SquareCBComb,
    gamma_schedule,
    inverse_gap_weighting,
    simulate,
)

A, M, D = 30, 4, 5
NAMES = ["ours", "ours_igw", "ours_null", "eps", "slot", "ucb", "ts", "ucb_rff", "ts_rff"]


def _agents(seed: int) -> dict:
    return {
        "ours": SquareCBComb(A, M, LinearOracle(D), seed=seed),
        "ours_igw": SquareCBComb(A, M, LinearOracle(D), exploration="igw", seed=seed),
        "ours_null": SquareCBComb(A, M, LinearOracle(D), exploration="igw", null_arm=True, seed=seed),
        "eps": EpsilonGreedyTopM(A, M, LinearOracle(D), seed=seed),
        "slot": PerSlotIGW(A, M, LinearOracle(D), seed=seed),
        "ucb": CombLinUCB(A, M, LinearOracle(D), seed=seed),
        "ts": CombLinTS(A, M, LinearOracle(D), seed=seed),
        "ucb_rff": CombLinUCB(A, M, RandomFeaturesOracle(D, 32), seed=seed),
        "ts_rff": CombLinTS(A, M, RandomFeaturesOracle(D, 32), seed=seed),
    }


def test_every_agent_shares_one_base_class() -> None:
    for agent in _agents(0).values():
        assert isinstance(agent, CombinatorialAgent)
        assert type(agent).learn is CombinatorialAgent.learn


@pytest.mark.parametrize("name", NAMES)
def test_act_returns_valid_actions(name: str) -> None:
    agent = _agents(0)[name]
    env = SemiBanditEnvironment(EnvironmentConfig(A, M, D), seed=0)
    for _ in range(40):
        X = env.context()
        a = agent.act(X)
        assert a.dtype == np.int64 and a.ndim == 1 and a.size <= M
        assert np.all(np.diff(a) > 0) and (a.size == 0 or (a.min() >= 0 and a.max() < A))
        agent.learn(X, a, env.rewards(env.mean_rewards(X), a))
    assert agent.t_ == 40


def test_default_oracle_is_linear_on_the_first_context() -> None:
    for cls in (SquareCBComb, EpsilonGreedyTopM, PerSlotIGW, CombLinUCB, CombLinTS):
        agent = cls(A, M, seed=0)
        agent.act(np.ones((A, 3)))
        assert isinstance(agent.oracle, LinearOracle) and agent.oracle.dim == 3 and agent.dim == 3


def test_ours_marginals_and_schedule() -> None:
    agent = SquareCBComb(A, M, LinearOracle(D), gamma_scale=2.0, seed=0)
    X = SemiBanditEnvironment(EnvironmentConfig(A, M, D), seed=0).context()
    agent.act(X)
    assert agent.last_gamma_ == pytest.approx(2.0 * np.sqrt((A + M / 2) / M))
    assert agent.last_marginals_.sum() == pytest.approx(M)
    # an untrained oracle predicts zeros for every arm: uniform marginals m / A
    np.testing.assert_allclose(agent.last_marginals_, M / A)
    assert gamma_schedule(4, A, M, 2.0) == pytest.approx(2 * agent.last_gamma_)
    np.testing.assert_allclose(
        gamma_schedule(np.array([1, 4]), A, M, 2.0), np.array([1.0, 2.0]) * agent.last_gamma_
    )


def test_igw_exploration_at_m1_plays_squarecbs_distribution() -> None:
    """exploration='igw' with m = 1: the played arm's frequencies follow SquareCB's closed form."""
    r = np.array([0.9, 0.5, 0.45, 0.1, 0.3])
    X = np.column_stack([r, np.zeros(5)])
    oracle = LinearOracle(2)
    oracle.theta_ = np.array([1.0, 0.0])  # predictions = r
    agent = SquareCBComb(5, 1, oracle, gamma=8.0, exploration="igw", seed=0)
    n = 4000
    counts = np.bincount(np.concatenate([agent.act(X) for _ in range(n)]), minlength=5)
    p = inverse_gap_weighting(r, 8.0)
    assert stats.chisquare(counts, n * p).pvalue > 1e-3


def test_per_slot_igw_first_slot_is_squarecb_and_slots_are_distinct() -> None:
    r = np.array([0.9, 0.5, 0.45, 0.1, 0.3])
    X = np.column_stack([r, np.zeros(5)])
    oracle = LinearOracle(2)
    oracle.theta_ = np.array([1.0, 0.0])
    agent = PerSlotIGW(5, 1, oracle, gamma_scale=8.0, gamma_exponent=0.0, seed=0)  # gamma = 8 always
    n = 4000
    counts = np.bincount(np.concatenate([agent.act(X) for _ in range(n)]), minlength=5)
    assert stats.chisquare(counts, n * inverse_gap_weighting(r, 8.0)).pvalue > 1e-3
    agent = PerSlotIGW(5, 3, oracle, seed=0)
    for _ in range(50):
        a = agent.act(X)
        assert a.size == 3 and np.unique(a).size == 3
    assert agent.n_decisions_ == 150 and agent.last_gamma_ == pytest.approx(10.0 * 150**0.5)


def test_seeded_runs_are_identical() -> None:
    runs = []
    for _ in range(2):
        env = SemiBanditEnvironment(EnvironmentConfig(A, M, D), seed=5)
        runs.append(simulate(_agents(3), env, 60))
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


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_is_rejected(name: str) -> None:
    agent = _agents(0)[name]
    X = np.random.default_rng(0).normal(size=(A, D))
    agent.act(X)
    with pytest.raises(ValueError, match=r"context: expected arm features of shape \(n_arms=30, d\)"):
        agent.act(X[:5])
    with pytest.raises(ValueError, match="context: expected d=5 features per arm"):
        agent.act(X[:, :3])
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="context: expected finite"):
        agent.act(bad)
    with pytest.raises(ValueError, match=r"action: expected arm indices in \[0, 30\)"):
        agent.learn(X, np.array([0, 30]), np.zeros(2))
    with pytest.raises(ValueError, match=r"action: expected arm indices in \[0, 30\)"):
        agent.learn(X, np.array([-1]), np.zeros(1))
    with pytest.raises(ValueError, match="action: expected at most m=4"):
        agent.learn(X, np.arange(5), np.zeros(5))
    with pytest.raises(ValueError, match="action: expected distinct"):
        agent.learn(X, np.array([1, 1]), np.zeros(2))
    with pytest.raises(ValueError, match=r"rewards: expected one reward per played arm, shape \(2,\)"):
        agent.learn(X, np.array([1, 2]), np.zeros(3))
    with pytest.raises(ValueError, match="rewards: expected finite"):
        agent.learn(X, np.array([1, 2]), np.array([0.0, np.inf]))
    with pytest.raises(TypeError, match="action: expected an integer array"):
        agent.learn(X, np.array([1.0, 2.0]), np.zeros(2))


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: SquareCBComb(5, 6), ValueError, "m: expected an int >= 1 <= 5"),
        (lambda: CombLinUCB(5, 6), ValueError, "m: expected an int >= 1 <= 5"),
        (lambda: PerSlotIGW(5, 0), ValueError, "m: expected an int >= 1"),
        (lambda: SquareCBComb(0, 1), ValueError, "n_arms: expected an int >= 1"),
        (lambda: SquareCBComb(5.0, 1), TypeError, "n_arms: expected an int"),
        (lambda: SquareCBComb(5, 2, gamma_scale=0.0), ValueError, "gamma_scale: expected a number > 0"),
        (lambda: SquareCBComb(5, 2, gamma_scale=np.nan), ValueError, "gamma_scale: expected a finite"),
        (lambda: SquareCBComb(5, 2, gamma=-1.0), ValueError, "gamma: expected a number > 0"),
        (lambda: SquareCBComb(5, 2, exploration="ucb"), ValueError, "exploration: expected one of"),
        (lambda: SquareCBComb(5, 2, null_arm=True), ValueError, "null_arm: expected False"),
        (lambda: SquareCBComb(5, 2, oracle="linear"), TypeError, "oracle: expected a RegressionOracle"),
        (lambda: SquareCBComb(5, 2, seed=-1), ValueError, "seed: expected an int >= 0"),
        (lambda: SquareCBComb(5, 2, seed=1.5), TypeError, "seed: expected an int"),
        (lambda: EpsilonGreedyTopM(5, 2, epsilon=2.0), ValueError, r"epsilon: expected a number in \[0, 1\]"),
        (lambda: PerSlotIGW(5, 2, gamma_scale=-1.0), ValueError, "gamma_scale: expected a number > 0"),
        (lambda: PerSlotIGW(5, 2, gamma_exponent=-0.5), ValueError, "gamma_exponent: expected a number >= 0"),
        (lambda: CombLinUCB(5, 2, alpha=-1.0), ValueError, "alpha: expected a number >= 0"),
        (lambda: CombLinTS(5, 2, v=np.inf), ValueError, "v: expected a finite"),
        (lambda: CombLinUCB(5, 2, MLPOracle(3)), TypeError, "oracle: expected a LinearOracle or a Random"),
        (lambda: gamma_schedule(0, 5, 2), ValueError, "t: expected rounds >= 1"),
        (lambda: gamma_schedule(-3, 5, 2), ValueError, "t: expected rounds >= 1"),
        (lambda: gamma_schedule(np.nan, 5, 2), ValueError, "t: expected finite"),
        (lambda: gamma_schedule(1, 5, 6), ValueError, "m: expected an int >= 1 <= 5"),
        (lambda: gamma_schedule(1, 5, 2, -1.0), ValueError, "gamma_scale: expected a number > 0"),
        (lambda: SquareCBComb(5, 2).gamma_at(0), ValueError, "t: expected an int >= 1"),
    ],
)
def test_bad_construction(make, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        make()
