"""The NPG step against the exact natural gradient (Fisher solve) and compatible least squares."""

import numpy as np

from paperworks.mlmc_npg import (
    compatible_npg_direction,
    fisher_matrix,
    log_policy_features,
    npg_step,
    policy_gradient,
    random_mdp,
    softmax_policy,
)


def _setup(seed=0):
    mdp = random_mdp(5, 3, 2, 0.7, rng=seed)
    theta = np.random.default_rng(seed).standard_normal((5, 3))
    pi = softmax_policy(theta)
    ev = mdp.evaluate(pi)
    w = np.array([0.7, 1.3])
    return mdp, theta, pi, ev, w


def test_policy_gradient_matches_finite_differences():
    mdp, theta, pi, ev, w = _setup(1)
    g = policy_gradient(pi, ev.occupancy, ev.advantage @ w, mdp.gamma)
    h = 1e-6
    fd = np.zeros_like(theta)
    for i in np.ndindex(theta.shape):
        e = np.zeros_like(theta)
        e[i] = h
        fd[i] = (mdp.returns(softmax_policy(theta + e)) @ w - mdp.returns(softmax_policy(theta - e)) @ w) / (
            2 * h
        )
    assert np.allclose(g, fd, atol=1e-6)


def test_tabular_npg_step_is_the_natural_gradient():
    mdp, theta, pi, ev, w = _setup(2)
    g = policy_gradient(pi, ev.occupancy, ev.advantage @ w, mdp.gamma).ravel()
    F = fisher_matrix(pi, ev.occupancy)
    natural = np.linalg.lstsq(F, g, rcond=None)[0]  # minimum-norm F^+ g
    step = (npg_step(theta, w, ev.advantage, 1.0, mdp.gamma) - theta).ravel()
    assert np.allclose(F @ step, g, atol=1e-10)  # the closed form solves F x = grad
    # it differs from F^+ g only by a per-state constant (the null space of F)
    diff = (step - natural).reshape(5, 3)
    assert np.allclose(diff - diff.mean(axis=1, keepdims=True), 0.0, atol=1e-8)
    # and the Fisher matrix is E[phi phi^T]
    S, A = pi.shape
    s = np.repeat(np.arange(S), A)
    a = np.tile(np.arange(A), S)
    phi = log_policy_features(pi, s, a)
    weights = (ev.occupancy[:, None] * pi).ravel()
    assert np.allclose((phi * weights[:, None]).T @ phi, F)


def test_compatible_least_squares_recovers_the_advantage_direction():
    _mdp, _theta, pi, ev, w = _setup(3)
    rng = np.random.default_rng(0)
    n = 200_000
    s = rng.choice(5, size=n, p=ev.occupancy)
    a = (rng.random(n)[:, None] > np.cumsum(pi[s], axis=1)).sum(axis=1)
    y = (ev.advantage @ w)[s, a] + rng.standard_normal(n) * 0.1
    u = compatible_npg_direction(log_policy_features(pi, s, a), y, ridge=1e-8).reshape(5, 3)
    target = ev.advantage @ w
    both = (u - u.mean(1, keepdims=True)) - (target - target.mean(1, keepdims=True))
    assert np.abs(both).max() < 0.05
