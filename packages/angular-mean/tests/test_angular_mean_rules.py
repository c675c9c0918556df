"""Rules: the angular mean against brute force on the sphere, IP, invariances, the estimator."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.angular_mean import (
    AngularMean,
    aggregate,
    angular_mean,
    arithmetic_mean,
    gaussian_agreement,
    normalized_mean,
    random_instance,
    spherical_median,
)


def fibonacci_sphere(n: int) -> np.ndarray:
    i = np.arange(n) + 0.5
    z = 1 - 2 * i / n
    r = np.sqrt(1 - z**2)
    phi = np.pi * (1 + 5**0.5) * i
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def objective(t, thetas, alpha, power=2):
    u = thetas / np.linalg.norm(thetas, axis=1, keepdims=True)
    return alpha @ np.arccos(np.clip(u @ (t / np.linalg.norm(t)), -1, 1)) ** power


def brute_force_min(thetas, alpha, grid, power=2):
    u = thetas / np.linalg.norm(thetas, axis=1, keepdims=True)
    f = (np.arccos(np.clip(grid @ u.T, -1, 1)) ** power) @ alpha
    return float(f.min())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("d", [2, 3])
def test_angular_mean_matches_brute_force_on_the_sphere(seed, d):
    thetas, alpha = random_instance(4 + seed % 3, d, seed=seed)
    if d == 2:
        phi = np.linspace(0, 2 * np.pi, 200_000, endpoint=False)
        grid = np.stack([np.cos(phi), np.sin(phi)], axis=1)
        slack = 1e-8
    else:
        grid = fibonacci_sphere(100_000)
        slack = 2e-4
    ours = objective(angular_mean(thetas, alpha), thetas, alpha)
    brute = brute_force_min(thetas, alpha, grid)
    assert ours <= brute + 1e-10
    assert brute <= ours + slack


@pytest.mark.parametrize("seed", range(3))
def test_spherical_median_matches_brute_force_on_the_circle(seed):
    thetas, alpha = random_instance(5, 2, seed=100 + seed)
    phi = np.linspace(0, 2 * np.pi, 200_000, endpoint=False)
    grid = np.stack([np.cos(phi), np.sin(phi)], axis=1)
    ours = objective(spherical_median(thetas, alpha), thetas, alpha, power=1)
    brute = brute_force_min(thetas, alpha, grid, power=1)
    assert ours <= brute + 1e-7
    assert brute <= ours + 1e-4


def test_ip_holds_for_angular_mean_and_fails_for_arithmetic_mean_on_opposed_voters():
    # majority 0.7 along e1, minority 0.3 exactly opposed: the constructed instance
    thetas = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
    alpha = np.array([0.7, 0.3])
    agr_ang = gaussian_agreement(angular_mean(thetas, alpha), thetas)
    agr_ari = gaussian_agreement(arithmetic_mean(thetas, alpha), thetas)
    # the angular mean sits at angle 0.3 pi from the majority: agreement exactly (0.7, 0.3)
    np.testing.assert_allclose(agr_ang, alpha, atol=1e-7)
    assert agr_ari[1] == pytest.approx(0.0, abs=1e-12)
    assert agr_ari[1] < alpha[1]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 7),
    d=st.integers(2, 6),
    conc=st.sampled_from([0.3, 1.0, 3.0]),
)
def test_angular_mean_satisfies_long_run_ip(seed, n, d, conc):
    rng = np.random.default_rng(seed)
    thetas = rng.standard_normal((n, d)) * np.exp(rng.standard_normal((n, 1)))
    alpha = rng.dirichlet(np.full(n, conc))
    agr = gaussian_agreement(angular_mean(thetas, alpha), thetas)
    assert np.all(agr >= alpha - 1e-6)


def test_invariances():
    rng = np.random.default_rng(3)
    thetas, alpha = random_instance(6, 5, seed=3)
    t = angular_mean(thetas, alpha)
    # only directions matter
    t_scaled = angular_mean(thetas * rng.uniform(0.1, 10, size=(6, 1)), alpha)
    np.testing.assert_allclose(t_scaled, t, atol=1e-6)
    # rotation equivariance
    q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    np.testing.assert_allclose(angular_mean(thetas @ q.T, alpha), q @ t, atol=1e-6)
    # one voter (or all weight on one): its own direction
    np.testing.assert_allclose(angular_mean(thetas[:1] * 3.0), thetas[0] / np.linalg.norm(thetas[0]))
    w = np.eye(6)[2]
    np.testing.assert_allclose(angular_mean(thetas, w), thetas[2] / np.linalg.norm(thetas[2]), atol=1e-9)


def test_close_voters_angular_and_normalized_mean_agree():
    rng = np.random.default_rng(0)
    base = rng.standard_normal(8)
    thetas = base + 1e-3 * rng.standard_normal((5, 8))
    alpha = rng.dirichlet(np.ones(5))
    assert np.linalg.norm(angular_mean(thetas, alpha) - normalized_mean(thetas, alpha)) < 1e-5


def test_cov_metric_is_the_whitened_angular_mean():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 4))
    cov = a @ a.T + 0.5 * np.eye(4)
    thetas, alpha = random_instance(5, 4, seed=1)
    t = angular_mean(thetas, alpha, cov=cov)
    chol = np.linalg.cholesky(cov)
    t_white = angular_mean(thetas @ chol, alpha)  # rows L^T theta
    mapped = chol.T @ t
    np.testing.assert_allclose(mapped / np.linalg.norm(mapped), t_white, atol=1e-6)
    agr = gaussian_agreement(t, thetas, cov=cov)
    assert np.all(agr >= alpha - 1e-6)


def test_estimator_fit_predict_and_aggregate():
    thetas, alpha = random_instance(4, 3, seed=5)
    est = AngularMean().fit(thetas, alpha)
    np.testing.assert_allclose(est.theta_, aggregate("angular_mean", thetas, alpha))
    assert est.converged_ and est.n_features_in_ == 3 and est.objective_ >= 0
    X = np.random.default_rng(0).standard_normal((10, 3))
    ranking = est.predict(X)
    assert sorted(ranking.tolist()) == list(range(10))
    scores = est.score_items(X)
    assert np.all(np.diff(scores[ranking]) <= 0)


def test_seeded_determinism():
    thetas, alpha = random_instance(30, 20, seed=9)
    a = angular_mean(thetas, alpha, seed=4)
    b = angular_mean(thetas, alpha, seed=4)
    np.testing.assert_array_equal(a, b)
