"""Environments, the interaction loop and their bad input."""

from __future__ import annotations

import numpy as np
import pytest

from paperworks.squarecb_comb import (
    EnvironmentConfig,
    LinearOracle,
    SemiBanditEnvironment,
    SquareCBComb,
    check_action,
    sample_subset,
    simulate,
)


@pytest.mark.parametrize("kind", ["linear", "misspecified", "nonlinear"])
def test_means_in_range_and_regret_of_the_best_action_is_zero(kind: str) -> None:
    env = SemiBanditEnvironment(EnvironmentConfig(50, 4, 6, kind), seed=2)
    X = env.context()
    assert X.shape == (50, 6) and np.all(X[:, 0] == 1.0)
    mu = env.mean_rewards(X)
    assert mu.shape == (50,) and mu.min() >= 0.05 - 1e-12 and mu.max() <= 0.95 + 1e-12
    best = np.argsort(mu)[-4:]
    assert env.regret(mu, best) == pytest.approx(0.0)
    assert env.regret(mu, best[:2]) == pytest.approx(mu[best[2:]].sum())
    assert env.regret(mu, np.array([], dtype=int)) == pytest.approx(mu[best].sum())
    assert env.rewards(mu, best).shape == (4,)


def test_nonlinear_reward_is_far_from_linear() -> None:
    """A least-squares linear fit on the raw features explains well under half of the mean's variance."""
    r2s = []
    for seed in range(5):
        env = SemiBanditEnvironment(EnvironmentConfig(100, 3, 10, "nonlinear"), seed=seed)
        X = np.vstack([env.context() for _ in range(15)])
        mu = np.concatenate([env.mean_rewards(X[i * 100 : (i + 1) * 100]) for i in range(15)])
        theta = np.linalg.lstsq(X, mu, rcond=None)[0]
        r2s.append(1 - np.mean((X @ theta - mu) ** 2) / mu.var())
        assert mu.std() > 0.1
    assert max(r2s) < 0.6 and np.mean(r2s) < 0.5
    lin = SemiBanditEnvironment(EnvironmentConfig(100, 3, 10, "linear"), seed=0)
    X = lin.context()
    theta = np.linalg.lstsq(X, lin.mean_rewards(X), rcond=None)[0]
    np.testing.assert_allclose(X @ theta, lin.mean_rewards(X), atol=1e-10)  # realisable


def test_simulate_validates_agents_actions() -> None:
    class Bad:
        def act(self, X):
            return np.array([0, 0])

        def learn(self, X, a, y):
            pass

    env = SemiBanditEnvironment(EnvironmentConfig(10, 2, 3), seed=0)
    with pytest.raises(ValueError, match="action of agent 'bad': expected distinct arms"):
        simulate({"bad": Bad()}, env, 3)


ENV = SemiBanditEnvironment(EnvironmentConfig(6, 2, 3), seed=0)
MU = np.full(6, 0.5)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: ENV.rewards(MU, [-1]), ValueError, r"action: expected arm indices in \[0, 6\)"),
        (lambda: ENV.rewards(MU, [6]), ValueError, r"action: expected arm indices in \[0, 6\)"),
        (lambda: ENV.rewards(MU, [1, 1]), ValueError, "action: expected distinct arms"),
        (lambda: ENV.rewards(MU, [0, 1, 2]), ValueError, "action: expected at most m=2"),
        (lambda: ENV.rewards(MU, [0.5]), TypeError, "action: expected an integer array"),
        (lambda: ENV.rewards(MU, [[0, 1]]), ValueError, "action: expected a 1-d array"),
        (lambda: ENV.rewards(MU[:3], [0]), ValueError, r"mu: expected shape \(6,\)"),
        (lambda: ENV.rewards(np.full(6, 1.5), [0]), ValueError, r"mu: expected mean rewards in \[0, 1\]"),
        (lambda: ENV.regret(MU, [7]), ValueError, r"action: expected arm indices in \[0, 6\)"),
        (lambda: ENV.regret(np.full(6, np.nan), [0]), ValueError, "mu: expected finite"),
        (lambda: ENV.mean_rewards(np.ones((5, 3))), ValueError, r"context: expected shape \(6, 3\)"),
        (
            lambda: SemiBanditEnvironment(EnvironmentConfig(6, 2), seed=-1),
            ValueError,
            "seed: expected an int >= 0",
        ),
        (lambda: SemiBanditEnvironment("linear"), TypeError, "config: expected an EnvironmentConfig"),
        (lambda: EnvironmentConfig(5, 6), ValueError, "m: expected an int >= 1 <= 5"),
        (lambda: EnvironmentConfig(5, 2, dim=1), ValueError, "dim: expected an int >= 2"),
        (lambda: EnvironmentConfig(5, 2, kind="cubic"), ValueError, "kind: expected one of"),
        (lambda: EnvironmentConfig(5, 2, misspecification=1.5), ValueError, "misspecification: expected"),
        (lambda: EnvironmentConfig(5, 2, lengthscale=0.0), ValueError, "lengthscale: expected a number > 0"),
        (lambda: EnvironmentConfig(5, 2, n_basis=0), ValueError, "n_basis: expected an int >= 1"),
        (lambda: EnvironmentConfig(5.0, 2), TypeError, "n_arms: expected an int"),
        (lambda: check_action(np.array([True]), 3, 1), TypeError, "action: expected an integer array"),
        (lambda: simulate({}, ENV, 3), ValueError, "agents: expected a non-empty mapping"),
        (lambda: simulate({"a": object()}, ENV, 3), TypeError, "agents: 'a' has no act/learn"),
        (lambda: simulate({"a": SquareCBComb(6, 2)}, ENV, 0), ValueError, "horizon: expected an int >= 1"),
        (lambda: simulate({"a": SquareCBComb(6, 2)}, ENV, 2.0), TypeError, "horizon: expected an int"),
        (
            lambda: simulate({"a": SquareCBComb(6, 2)}, "env", 2),
            TypeError,
            "env: expected a SemiBanditEnvironment",
        ),
        (lambda: sample_subset([0.5, 0.5], rng="x"), TypeError, "rng: expected a numpy Generator"),
        (lambda: sample_subset([0.5, 0.5], rng=-2), ValueError, "rng: expected a non-negative int seed"),
        (lambda: sample_subset([0.5, 1.5]), ValueError, r"q: expected marginals in \[0, 1\]"),
        (lambda: sample_subset([0.5, np.nan]), ValueError, "q: expected finite"),
        (lambda: sample_subset([]), (TypeError, ValueError), "q: expected"),
        (lambda: sample_subset(np.ones((2, 2))), ValueError, "q: expected a 1-d"),
        (lambda: sample_subset([0.5], shuffle="yes"), TypeError, "shuffle: expected a bool"),
        (
            lambda: LinearOracle(3).update(np.ones((2, 3)), np.ones(3)),
            ValueError,
            r"y: expected shape \(2,\)",
        ),
    ],
)
def test_bad_input_battery(call, error, match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_sample_subset_accepts_a_seed_or_none() -> None:
    q = np.array([0.5, 0.5, 1.0])
    np.testing.assert_array_equal(sample_subset(q, 3), sample_subset(q, np.random.default_rng(3)))
    assert sample_subset(q, None).size == 2
