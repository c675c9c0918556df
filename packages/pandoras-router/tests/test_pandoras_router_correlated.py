"""The correlated-error model against other routes: Gaussian conditioning, a convex hull, Monte Carlo."""

import numpy as np
import pytest

from paperworks.pandoras_router import (
    correlated_value_of_information,
    factor_covariance,
    factor_posterior,
    pairwise_preposterior_std,
    pandoras_route,
    value_of_information,
)
from paperworks.pandoras_router.correlated import factor_one_step_gain


def _state(rng, n=60, k=5):
    m = rng.normal(0.0, 0.3, (n, k))
    s = rng.uniform(0.1, 0.5, (n, k))
    lam = rng.uniform(-0.3, 0.95, (n, k))
    tau = rng.uniform(0.02, 0.3, (n, k))
    y = m + rng.normal(0.0, 0.4, (n, k))
    return m, s, lam, tau, y


def _condition(mean, cov, tau, idx, y):
    """Posterior mean and covariance by the textbook formula (the reference route)."""
    if idx.size == 0:
        return mean, cov
    cyy = cov[np.ix_(idx, idx)] + np.diag(tau[idx] ** 2)
    gain = cov[:, idx] @ np.linalg.inv(cyy)
    return mean + gain @ (y[idx] - mean[idx]), cov - gain @ cov[idx, :]


def _draw(rng, m, s, lam, draws):
    """Values V = m + e with e of the one-factor law (C1), drawn from its definition."""
    z0 = rng.standard_normal((draws, 1))
    z = rng.standard_normal((draws, m.shape[0]))
    return m + s * (lam * z0 + np.sqrt(1 - lam * lam) * z)


def _hull_expected_max(a, b):
    """E[max_i (a_i + b_i Z)] by numerical integration on a fine grid (a third route)."""
    z = np.linspace(-9, 9, 200_001)
    dens = np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)
    return float(np.trapezoid((a[:, None] + b[:, None] * z).max(axis=0) * dens, z))


def test_factor_covariance_is_one_factor():
    s, lam = np.array([0.2, 0.5, 0.3]), np.array([0.9, 0.5, -0.4])
    cov = factor_covariance(s, lam)
    assert np.allclose(np.diag(cov), s**2)
    corr = cov / np.outer(s, s)
    assert np.allclose(corr[0, 1], 0.45) and np.allclose(corr[1, 2], -0.2)
    assert np.linalg.eigvalsh(cov).min() > 0
    with pytest.raises(ValueError, match=r"loading: expected loadings with \|loading\| < 1"):
        factor_covariance(s, np.array([1.0, 0.0, 0.0]))


def test_factor_posterior_equals_full_gaussian_conditioning():
    rng = np.random.default_rng(0)
    m, s, lam, tau, y = _state(rng)
    mask = rng.random(m.shape) < 0.5
    mu = factor_posterior(m, s, lam, tau, y, mask)
    cov = factor_covariance(s, lam)
    for i in range(m.shape[0]):
        ref, _ = _condition(m[i], cov[i], tau[i], np.flatnonzero(mask[i]), y[i])
        np.testing.assert_allclose(mu[i], ref, atol=1e-12)
    # independent errors: eq. (1) on the inspected, the cheap estimate elsewhere
    indep = factor_posterior(m, s, np.zeros_like(lam), tau, y, mask)
    w = s * s / (s * s + tau * tau)
    np.testing.assert_allclose(indep, np.where(mask, m + w * (y - m), m), atol=1e-12)


def test_pairwise_preposterior_std_against_monte_carlo():
    """(C4): before Y_k is read, mu'_k - mu'_j is N(mu_k - mu_j, sigma_kj^2)."""
    rng = np.random.default_rng(1)
    s, lam, tau = np.array([0.3, 0.25, 0.4]), np.array([0.8, 0.6, 0.3]), np.array([0.1, 0.1, 0.1])
    m = np.array([0.1, 0.15, -0.05])
    cov = factor_covariance(s, lam)
    k, j = 0, 1
    draws = 200_000
    V = _draw(rng, m, s, lam, draws)
    Y = V[:, k] + tau[k] * rng.standard_normal(draws)
    post = m + np.outer((Y - m[k]) / (cov[k, k] + tau[k] ** 2), cov[:, k])
    diff = post[:, k] - post[:, j]
    sigma = pairwise_preposterior_std(np.array(cov[k, k]), np.array(cov[k, j]), np.array(tau[k]))
    assert abs(diff.mean() - (m[k] - m[j])) < 3e-3
    assert diff.std() == pytest.approx(float(sigma), rel=1e-2)
    # ... and the independent preposterior std (eq. 2) is larger: a common error does not tell k from j
    assert sigma < s[k] ** 2 / np.sqrt(s[k] ** 2 + tau[k] ** 2)
    # (C5): the pairwise value of information is E[max(mu'_k, mu'_j)] - max(m_k, m_j) - c
    c = 0.01
    voi = value_of_information(np.array([m[k]]), np.array([float(sigma)]), np.array([c]), np.array([m[j]]))
    mc = np.maximum(post[:, k], post[:, j]).mean() - max(m[k], m[j]) - c
    se = np.maximum(post[:, k], post[:, j]).std() / np.sqrt(draws)
    assert abs(voi[0] - mc) < 4 * se


@pytest.mark.parametrize("seed", range(4))
def test_exact_one_step_value_against_monte_carlo(seed):
    rng = np.random.default_rng(10 + seed)
    K = 4 + seed
    m = rng.normal(0.0, 0.2, K)
    s, lam, tau = rng.uniform(0.1, 0.5, K), rng.uniform(-0.2, 0.9, K), rng.uniform(0.02, 0.2, K)
    cov = factor_covariance(s, lam)
    k = int(rng.integers(K))
    outside = float(m.max() + 0.05) if seed % 2 else -np.inf
    exact = correlated_value_of_information(m, cov, tau, k, 0.0, outside)
    draws = 200_000
    V = _draw(rng, m, s, lam, draws)
    Y = V[:, k] + tau[k] * rng.standard_normal(draws)
    post = m + np.outer((Y - m[k]) / (cov[k, k] + tau[k] ** 2), cov[:, k])
    best = np.maximum(post.max(axis=1), outside)
    mc = best.mean() - max(m.max(), outside)
    assert abs(exact - mc) < 4 * best.std() / np.sqrt(draws) + 1e-6
    # the pairwise closed form against the best other option is a lower bound of the exact value
    others = np.delete(np.arange(K), k)
    j = others[np.argmax(m[others])]
    alt, cov_kj = (m[j], cov[k, j]) if m[j] >= outside else (outside, 0.0)
    sigma = pairwise_preposterior_std(np.array(cov[k, k]), np.array(cov_kj), np.array(tau[k]))
    pair = value_of_information(np.array([m[k]]), np.array([float(sigma)]), np.array([0.0]), np.array([alt]))[
        0
    ]
    assert pair <= exact + 1e-12


def test_exact_value_beats_the_pairwise_bound_when_others_move_apart():
    """Reading k moves the third option (sharing k's common error) but not the second: the exact
    value (C6) sees the third overtake the second, the pairwise bound (C5) does not; Monte Carlo
    sides with the exact value, many standard errors away from the bound."""
    m, s, lam, tau = (
        np.array([0.0, 0.05, 0.04]),
        np.array([0.3, 0.1, 0.3]),
        np.array([0.9, 0.0, 0.9]),
        np.full(3, 0.05),
    )
    cov = factor_covariance(s, lam)
    exact = correlated_value_of_information(m, cov, tau, 0, 0.0)
    sigma = pairwise_preposterior_std(np.array(cov[0, 0]), np.array(cov[0, 1]), np.array(tau[0]))
    pair = value_of_information(m[:1], np.array([float(sigma)]), np.array([0.0]), m[1:2])[0]
    rng = np.random.default_rng(0)
    draws = 200_000
    V = _draw(rng, m, s, lam, draws)
    Y = V[:, 0] + tau[0] * rng.standard_normal(draws)
    best = (m + np.outer((Y - m[0]) / (cov[0, 0] + tau[0] ** 2), cov[:, 0])).max(axis=1)
    se = best.std() / np.sqrt(draws)
    assert abs(best.mean() - m.max() - exact) < 4 * se
    assert exact - pair > 8 * se


def test_exact_and_pairwise_agree_for_two_specialists():
    m, s, lam, tau = np.array([0.2, 0.25]), np.array([0.3, 0.2]), np.array([0.7, 0.5]), np.array([0.1, 0.05])
    cov = factor_covariance(s, lam)
    exact = correlated_value_of_information(m, cov, tau, 0, 0.004)
    sigma = pairwise_preposterior_std(np.array(cov[0, 0]), np.array(cov[0, 1]), np.array(tau[0]))
    pair = value_of_information(m[:1], np.array([float(sigma)]), np.array([0.004]), m[1:])[0]
    assert exact == pytest.approx(pair, abs=1e-12)


def test_vectorised_gain_matches_the_hull_and_a_grid_integral():
    rng = np.random.default_rng(3)
    m, s, lam, tau, y = _state(rng, n=40, k=6)
    mask = rng.random(m.shape) < 0.3
    a, d = s * lam, s * s * (1 - lam * lam)
    mu = factor_posterior(m, s, lam, tau, y, mask)
    v = 1.0 / (1.0 + np.where(mask, a * a / (d + tau * tau), 0.0).sum(axis=1))
    coef = np.where(mask, (1 - d / (d + tau * tau)) * a, a)
    outside = np.where(rng.random(m.shape[0]) < 0.5, -np.inf, rng.normal(0, 0.3, m.shape[0]))
    var = a * a * v[:, None] + d
    scale = np.sqrt(var + tau * tau)
    gain = factor_one_step_gain(mu, coef, outside, var / scale, a * v[:, None] / scale, ~mask)
    cov = factor_covariance(s, lam)
    for i in range(m.shape[0]):
        _, P = _condition(m[i], cov[i], tau[i], np.flatnonzero(mask[i]), y[i])
        for k in np.flatnonzero(~mask[i]):
            ref = correlated_value_of_information(mu[i], P, tau[i], int(k), 0.0, outside[i])
            assert gain[i, k] == pytest.approx(ref, abs=1e-12)
    assert np.isnan(gain[mask]).all()
    # one case by brute-force integration of the upper envelope
    i, k = 0, int(np.flatnonzero(~mask[0])[0])
    _, P = _condition(m[0], cov[0], tau[0], np.flatnonzero(mask[0]), y[0])
    slopes = P[:, k] / np.sqrt(P[k, k] + tau[0, k] ** 2)
    a_lines, b_lines = mu[0], slopes
    if np.isfinite(outside[0]):
        a_lines, b_lines = np.append(a_lines, outside[0]), np.append(b_lines, 0.0)
    grid = _hull_expected_max(a_lines, b_lines) - a_lines.max()
    assert gain[i, k] == pytest.approx(grid, abs=1e-7)


def test_one_factor_router_reduces_to_the_independent_rule():
    rng = np.random.default_rng(4)
    m, s, _, tau, y = _state(rng, n=300, k=5)
    cost = rng.uniform(0.005, 0.05, 5)
    a = pandoras_route(m, s, tau, cost, y)
    b = pandoras_route(m, s, tau, cost, y, loading=np.zeros(5))
    assert np.array_equal(a.choice, b.choice) and np.array_equal(a.order, b.order)
    np.testing.assert_allclose(a.value, b.value, atol=1e-12)
    np.testing.assert_allclose(a.voi[a.inspected], b.voi[b.inspected], atol=1e-12)


def test_correlated_router_keeps_the_exact_posterior_and_reads_only_worthwhile_boxes():
    rng = np.random.default_rng(5)
    m, s, lam, tau, y = _state(rng, n=200, k=6)
    cost = np.full(6, 0.01)
    calls = []

    def expensive(rows, cols):
        calls.append(rows.size)
        return y[rows, cols]

    res = pandoras_route(m, s, tau, cost, expensive, loading=lam)
    assert sum(calls) == int(res.inspected.sum())
    # final beliefs are the batch posterior of what was read (sequential rank-one updates are exact)
    np.testing.assert_allclose(res.value, factor_posterior(m, s, lam, tau, y, res.inspected), atol=1e-12)
    assert np.array_equal(res.choice, np.argmax(res.value, axis=1))
    # every reading had a positive net one-step value when it was made; every query stopped at none
    assert (res.voi[res.inspected] > 0).all() and np.isnan(res.voi[~res.inspected]).all()
    cov = factor_covariance(s, lam)
    for i in range(40):
        _, P = _condition(m[i], cov[i], tau[i], np.flatnonzero(res.inspected[i]), y[i])
        for k in np.flatnonzero(~res.inspected[i]):
            assert correlated_value_of_information(res.value[i], P, tau[i], int(k), 0.01) <= 1e-12


def test_correlation_saves_reads_a_common_error_cannot_pay_for():
    """Strongly correlated errors with equal loadings: a reading mostly reveals the common part, which
    does not change the ranking, so the correlated Router reads less than the independent one."""
    rng = np.random.default_rng(6)
    n, K = 2000, 5
    s, lam, tau, cost = np.full(K, 0.3), np.full(K, 0.9), np.full(K, 0.05), np.full(K, 0.01)
    m = rng.normal(0.0, 0.2, (n, K))
    V = _draw(rng, np.zeros(K), s, lam, n) + m
    Y = V + tau * rng.standard_normal((n, K))
    corr = pandoras_route(m, s, tau, cost, Y, loading=lam)
    indep = pandoras_route(m, s, tau, cost, Y)
    assert corr.n_inspections.mean() < 0.7 * indep.n_inspections.mean()
    # ... and, judged on the truth, it loses (almost) nothing net of cost: it is the right model here
    net = lambda r: (V[np.arange(n), r.choice] - r.estimation_cost).mean()  # noqa: E731
    assert net(corr) > net(indep) - 0.002
