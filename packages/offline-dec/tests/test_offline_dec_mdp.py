import numpy as np
import pytest

from paperworks.offline_dec import (
    TabularMDP,
    chain_mdp,
    combination_lock,
    garnet_mdp,
    greedy_policy,
    softmax_policy,
)


def test_dp_evaluation_matches_monte_carlo_rollouts():
    m = garnet_mdp(6, 3, 2, gamma=0.8, rng=3)
    pi = softmax_policy(np.random.default_rng(0).normal(size=(6, 3)), 1.0)
    rng = np.random.default_rng(1)
    episodes, horizon = 20000, 60  # 0.8^60 ~ 2e-6: truncation bias negligible
    s = rng.choice(6, size=episodes, p=m.initial)
    ret = np.zeros(episodes)
    for t in range(horizon):
        a = (pi[s].cumsum(axis=1) < rng.random(episodes)[:, None]).sum(axis=1)
        ret += m.gamma**t * m.sample_rewards(s, a, rng)
        s = (m.transitions[s, a].cumsum(axis=1) < rng.random(episodes)[:, None]).sum(axis=1)
    se = ret.std() / np.sqrt(episodes)
    assert abs(ret.mean() - m.value(pi)) < 4 * se


def test_soft_bellman_fixed_point_closed_form_two_states():
    # action-independent transitions: V = (I - gamma P)^-1 tau log sum_a exp(r(s, a) / tau)
    Ps = np.array([[0.3, 0.7], [0.6, 0.4]])
    P = np.repeat(Ps[:, None, :], 2, axis=1)
    r = np.array([[0.2, -0.5], [1.0, 0.1]])
    tau, gamma = 0.3, 0.85
    m = TabularMDP(P, r, np.array([0.5, 0.5]), gamma)
    v = np.linalg.solve(np.eye(2) - gamma * Ps, tau * np.log(np.exp(r / tau).sum(axis=1)))
    q = m.soft_optimal_q(tau)
    np.testing.assert_allclose(q, r + gamma * (Ps @ v)[:, None], atol=1e-10)
    np.testing.assert_allclose(m.soft_bellman(q, tau), q, atol=1e-10)
    # the soft-optimal policy attains the soft value V(d0)
    assert m.soft_value(softmax_policy(q, tau), tau) == pytest.approx(m.initial @ v, abs=1e-9)


def test_optimal_q_is_bellman_fixed_point_and_dominates():
    for m in (chain_mdp(), combination_lock(rng=0), garnet_mdp(20, 3, rng=0)):
        q = m.optimal_q()
        np.testing.assert_allclose(m.bellman_optimality(q), q, atol=1e-9)
        pi = greedy_policy(q)
        other = softmax_policy(q, 0.5)
        assert m.value(pi) >= m.value(other) - 1e-12


def test_occupancy_is_a_distribution():
    m = garnet_mdp(10, 2, rng=1)
    d = m.occupancy(np.full((10, 2), 0.5))
    assert d.min() >= 0 and d.sum() == pytest.approx(1.0)


def test_bad_mdp_input():
    P = np.full((2, 2, 2), 0.5)
    r = np.zeros((2, 2))
    d0 = np.array([1.0, 0.0])
    with pytest.raises(ValueError, match="transitions"):
        TabularMDP(np.full((2, 2, 2), 0.6), r, d0, 0.9)
    with pytest.raises(ValueError, match="rewards"):
        TabularMDP(P, r + 1.5, d0, 0.9)
    with pytest.raises(ValueError, match="gamma"):
        TabularMDP(P, r, d0, 1.0)
    with pytest.raises(ValueError, match="gamma"):
        TabularMDP(P, r, d0, -0.1)
    with pytest.raises(ValueError, match="initial"):
        TabularMDP(P, r, np.array([0.2, 0.2]), 0.9)
    m = TabularMDP(P, r, d0, 0.9)
    with pytest.raises(ValueError, match="policy"):
        m.value(np.ones((2, 2)))
