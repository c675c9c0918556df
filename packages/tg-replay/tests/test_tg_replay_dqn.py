import numpy as np
import pytest

from paperworks.tg_replay import DQNConfig, NumpyDQN


def _huber_loss(agent, theta, batch):
    o, a, r, no, d = batch
    saved = agent.theta.copy()
    agent.theta[...] = theta
    q = agent.q_values(o)
    agent.theta[...] = saved
    qn = agent._forward(agent._unpack(agent.target), no)[2]
    td = q[np.arange(len(a)), a] - (r + agent.config.gamma * (1 - d) * qn.max(axis=1))
    return np.where(np.abs(td) <= 1, 0.5 * td**2, np.abs(td) - 0.5).mean()


def test_manual_backprop_matches_finite_differences():
    agent = NumpyDQN(3, 2, DQNConfig(hidden=6, lr=1e-300, target_every=10**9), seed=2)
    agent.target += 0.05
    rng = np.random.default_rng(0)
    batch = (
        rng.normal(size=(7, 3)),
        rng.integers(0, 2, 7),
        rng.normal(size=7),
        rng.normal(size=(7, 3)),
        (rng.random(7) < 0.3).astype(float),
    )
    theta = agent.theta.copy()
    eye = np.eye(theta.size) * 1e-6
    numeric = np.array(
        [(_huber_loss(agent, theta + e, batch) - _huber_loss(agent, theta - e, batch)) / 2e-6 for e in eye]
    )
    agent.update(*batch)
    np.testing.assert_allclose(agent.grad, numeric, atol=1e-7)


def test_dqn_fits_a_one_step_target_and_is_seeded():
    rng = np.random.default_rng(1)
    obs = rng.normal(size=(64, 2))
    action = rng.integers(0, 2, 64)
    reward = np.where(action == 0, obs[:, 0], -obs[:, 0])
    done = np.ones(64)

    def train():
        agent = NumpyDQN(2, 2, DQNConfig(hidden=16, lr=3e-3), seed=0)
        for _ in range(600):
            td = agent.update(obs, action, reward, obs, done)
        return agent, td

    a1, td1 = train()
    a2, _ = train()
    np.testing.assert_array_equal(a1.theta, a2.theta)
    assert np.abs(td1).mean() < 0.1
    acts = a1.act(obs, 0.0, rng)
    assert np.mean(acts == (obs[:, 0] < 0)) > 0.9


def test_dqn_config_validation():
    with pytest.raises(ValueError, match="gamma"):
        DQNConfig(gamma=1.5)
    with pytest.raises(ValueError, match="lr"):
        DQNConfig(lr=0)
