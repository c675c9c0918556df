"""Rules: the angular mean and the IP-optimising baseline against brute force on the sphere, IP,
invariances, non-unique optima."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.angular_mean import (
    RULES,
    AmbiguousRuleWarning,
    AngularMean,
    aggregate,
    angular_mean,
    arithmetic_mean,
    gaussian_agreement,
    high_disagreement_instance,
    maxmin_slack,
    normalized_mean,
    proportionality_slack,
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
    # majority 0.7 along e1, minority 0.3 exactly opposed: the constructed instance. Every direction
    # at angle 0.3 pi from e1 is a minimiser (a circle in d = 3), so the rule warns.
    thetas = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
    alpha = np.array([0.7, 0.3])
    with pytest.warns(AmbiguousRuleWarning, match="angular_mean: the minimiser is not unique"):
        theta = angular_mean(thetas, alpha)
    agr_ang = gaussian_agreement(theta, thetas)
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


def test_estimator_fit_rank_and_aggregate():
    thetas, alpha = random_instance(4, 3, seed=5)
    est = AngularMean().fit(thetas, sample_weight=alpha)
    np.testing.assert_allclose(est.theta_, aggregate("angular_mean", thetas, alpha))
    assert est.converged_ and est.unique_ and est.n_features_in_ == 3 and est.objective_ >= 0
    X = np.random.default_rng(0).standard_normal((10, 3))
    ranking = est.rank(X)
    assert sorted(ranking.tolist()) == list(range(10))
    scores = est.score_items(X)
    assert np.all(np.diff(scores[ranking]) <= 0)
    np.testing.assert_allclose(est.transform(X)[:, 0], scores)


@pytest.mark.parametrize("d", [2, 3, 6])
def test_antipodal_equal_voters_warn_and_return_a_minimiser(d):
    # two opposed types of weight 1/2: every direction orthogonal to them minimises
    # 0.5 phi^2 + 0.5 (pi - phi)^2 (two points in d = 2, a (d-2)-sphere above)
    u = np.zeros(d)
    u[0] = 1.0
    thetas = np.stack([u, -u])
    with pytest.warns(AmbiguousRuleWarning):
        t = angular_mean(thetas, [0.5, 0.5])
    assert abs(t[0]) < 1e-6  # orthogonal to both voters
    assert objective(t, thetas, np.array([0.5, 0.5])) == pytest.approx(np.pi**2 / 4, abs=1e-10)
    with pytest.warns(AmbiguousRuleWarning):
        est = AngularMean().fit(thetas)
    assert est.unique_ is False
    # the returned minimiser is one of them, the same for the same seed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AmbiguousRuleWarning)
        np.testing.assert_array_equal(angular_mean(thetas, [0.5, 0.5]), t)


def test_spherical_median_of_an_even_circle_is_an_arc():
    # four equal voters on a circle: every point of the arc between the middle two is a median
    phi = np.deg2rad([0.0, 40.0, 120.0, 200.0])
    thetas = np.stack([np.cos(phi), np.sin(phi)], axis=1)
    with pytest.warns(AmbiguousRuleWarning, match="spherical_median"):
        spherical_median(thetas)


def test_no_warning_on_generic_instances():
    with warnings.catch_warnings():
        warnings.simplefilter("error", AmbiguousRuleWarning)
        for seed in range(10):
            thetas, alpha = random_instance(3 + seed % 5, (3, 10, 50)[seed % 3], seed=seed)
            angular_mean(thetas, alpha)
            thetas, alpha = high_disagreement_instance(5, 10, 0.3, seed=seed)
            angular_mean(thetas, alpha)


def fibonacci(n: int, d: int) -> np.ndarray:
    if d == 2:
        phi = np.linspace(0, 2 * np.pi, n, endpoint=False)
        return np.stack([np.cos(phi), np.sin(phi)], axis=1)
    return fibonacci_sphere(n)


def brute_max_min_slack(thetas, alpha, grid):
    u = thetas / np.linalg.norm(thetas, axis=1, keepdims=True)
    return float((1 - np.arccos(np.clip(grid @ u.T, -1, 1)) / np.pi - alpha).min(axis=1).max())


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("d", [2, 3])
def test_maxmin_slack_matches_brute_force(seed, d):
    thetas, alpha = random_instance(2 + seed % 5, d, seed=200 + seed)  # n = 2 in d = 3: off-span optima
    grid = fibonacci(200_000, d)
    ours = float(proportionality_slack(maxmin_slack(thetas, alpha), thetas, alpha).min())
    brute = brute_max_min_slack(thetas, alpha, grid)
    assert ours >= brute - 1e-9  # never worse than the best grid point
    assert ours <= brute + (1e-4 if d == 2 else 5e-3)  # and the grid's resolution bounds the rest


def test_maxmin_slack_goes_off_the_span_for_balanced_voters():
    # three equal voters 120 degrees apart on a great circle of S^2: inside their plane some type
    # gets agreement <= 1/3 - ... ; the pole (orthogonal to all) gives each 1/2, slack 1/2 - 1/3
    phi = np.deg2rad([0.0, 120.0, 240.0])
    thetas = np.stack([np.cos(phi), np.sin(phi), np.zeros(3)], axis=1)
    t = maxmin_slack(thetas)
    assert abs(abs(t[2]) - 1.0) < 1e-6
    np.testing.assert_allclose(proportionality_slack(t, thetas), 0.5 - 1 / 3, atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 6), d=st.integers(2, 8))
def test_maxmin_slack_is_at_least_the_angular_means(seed, n, d):
    # the angular mean is one of its starts and satisfies IP, so the baseline's slack is >= both
    thetas, alpha = random_instance(n, d, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AmbiguousRuleWarning)
        ang = proportionality_slack(angular_mean(thetas, alpha), thetas, alpha).min()
    best = proportionality_slack(maxmin_slack(thetas, alpha), thetas, alpha).min()
    assert best >= ang - 1e-9
    assert best >= -1e-9


def test_every_rule_returns_a_unit_vector_through_aggregate():
    thetas, alpha = random_instance(5, 4, seed=11)
    for rule in RULES:
        t = aggregate(rule, thetas, alpha)
        assert t.shape == (4,) and np.linalg.norm(t) == pytest.approx(1.0)


def test_seeded_determinism():
    thetas, alpha = random_instance(30, 20, seed=9)
    a = angular_mean(thetas, alpha, seed=4)
    b = angular_mean(thetas, alpha, seed=4)
    np.testing.assert_array_equal(a, b)
