"""The mathematics against independent routes: autograd, Monte Carlo, closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import paperworks.ddpm_convergence as dc
from paperworks.ddpm_convergence.laws import gaussian_kl


def _torch_log_density(target: dc.GaussianMixture, x: torch.Tensor, ab: float) -> torch.Tensor:
    """The closed-form log-density of the noised mixture, written with torch.distributions."""
    mu = math.sqrt(ab) * torch.tensor(target.means)
    cov = ab * torch.tensor(target.covs) + (1 - ab) * torch.eye(target.d, dtype=torch.float64)
    comps = torch.distributions.MultivariateNormal(mu, covariance_matrix=cov)
    logw = torch.tensor(target.weights).log()
    return torch.logsumexp(comps.log_prob(x[:, None, :]) + logw, dim=1)


TARGETS = [
    dc.gaussian(np.array([0.5, -1.0, 2.0]), np.array([[1.0, 0.3, 0.0], [0.3, 0.5, 0.1], [0.0, 0.1, 2.0]])),
    dc.axis_mixture(4, 2.0, 0.25),
    dc.GaussianMixture(
        np.array([0.2, 0.5, 0.3]),
        np.array([[1.0, 0.0], [-1.0, 1.0], [0.0, -2.0]]),
        np.array([[[0.5, 0.1], [0.1, 0.3]], [[1.0, -0.2], [-0.2, 0.4]], [[0.2, 0.0], [0.0, 0.2]]]),
    ),
]


@pytest.mark.parametrize("target", TARGETS, ids=["gaussian", "axis-mixture", "full-cov-mixture"])
@pytest.mark.parametrize("ab", [0.999, 0.5, 0.01])
def test_score_and_jacobian_match_autograd_of_the_log_density(target, ab) -> None:
    x = torch.tensor(target.sample(64, 0, alpha_bar=ab), requires_grad=True)
    logp = _torch_log_density(target, x, ab)
    np.testing.assert_allclose(target.log_density(x.detach().numpy(), ab), logp.detach().numpy(), rtol=1e-10)
    (grad,) = torch.autograd.grad(logp.sum(), x, create_graph=True)
    np.testing.assert_allclose(
        target.score(x.detach().numpy(), ab), grad.detach().numpy(), rtol=1e-8, atol=1e-10
    )
    hess = torch.stack(
        [torch.autograd.grad(grad[:, i].sum(), x, retain_graph=True)[0] for i in range(target.d)], 1
    )
    np.testing.assert_allclose(
        target.score_jacobian(x.detach().numpy(), ab), hess.numpy(), rtol=1e-7, atol=1e-9
    )
    model = dc.ExactScoreModel(target, dc.li_yan_schedule(50))
    t = 10
    ab_t = model.schedule.alpha_bar(t)
    xt = x.detach()
    np.testing.assert_allclose(
        model.score(xt, t).numpy(), target.score(xt.numpy(), ab_t), rtol=1e-10, atol=1e-12
    )


def test_gaussian_output_covariance_matches_monte_carlo_sampling() -> None:
    target = TARGETS[0]
    sch = dc.li_yan_schedule(30)
    for method in dc.METHODS:
        law = dc.gaussian_output_law(target, sch, method)
        y = dc.sample(target, sch, 40_000, method=method, rng=1)
        se_mean = np.sqrt(np.diag(law.cov) / y.shape[0])
        assert np.all(np.abs(y.mean(0) - law.mean) < 5 * se_mean)
        emp = np.cov(y.T)
        se_cov = np.sqrt((law.cov**2 + np.outer(np.diag(law.cov), np.diag(law.cov))) / y.shape[0])
        assert np.all(np.abs(emp - law.cov) < 5 * se_cov)
    # the output law is not the target at small T (a test that cannot pass trivially)
    assert dc.gaussian_output_law(target, sch).kl > 1e-3


def test_closed_form_kl_agrees_with_the_full_matrix_formula_and_is_stable_when_tiny() -> None:
    target = TARGETS[0]
    law = dc.gaussian_output_law(target, dc.li_yan_schedule(400))
    full = gaussian_kl(law.target_mean, law.target_cov, law.mean, law.cov)
    assert law.kl == pytest.approx(full, rel=1e-6)
    assert 0 < law.kl < 1e-3
    assert gaussian_kl(np.zeros(2), np.eye(2), np.zeros(2), np.eye(2) * (1 + 1e-9)) == pytest.approx(
        2 * 0.25e-18, rel=1e-3
    )


def test_grid_propagation_matches_the_gaussian_closed_form() -> None:
    for sch in (dc.li_yan_schedule(100), dc.linear_schedule(100), dc.cosine_schedule(100)):
        for method in dc.METHODS:
            exact = dc.gaussian_output_law(dc.gaussian(np.array([0.7]), 0.3), sch, method).kl
            grid = dc.grid_law(dc.mixture_1d([1.0], [0.7], [0.3]), sch, method, tol=1e-9)
            assert grid.kl == pytest.approx(exact, rel=1e-5), (sch.name, method)
            assert grid.mass == pytest.approx(1.0, abs=1e-5)


def test_grid_propagation_matches_monte_carlo_histograms() -> None:
    target = dc.mixture_1d([0.3, 0.7], [2.0, -1.0], [0.2, 0.5])
    sch = dc.li_yan_schedule(20)
    for method in dc.METHODS:
        law = dc.grid_law(target, sch, method, tol=1e-8)
        y = dc.sample(target, sch, 100_000, method=method, rng=2)[:, 0]
        edges = np.linspace(-4, 4, 41)
        counts, _ = np.histogram(y, edges)
        cdf = np.concatenate([[0.0], np.cumsum(law.p) * law.dx])
        prob = np.diff(np.interp(edges, np.concatenate([[law.x[0] - law.dx], law.x]) + law.dx / 2, cdf))
        expected = prob * y.size
        z = (counts - expected) / np.sqrt(np.maximum(expected, 1))
        assert np.abs(z).max() < 5, (method, np.abs(z).max())
        # and the output is visibly not the target (the test can fail)
        assert law.tv > 0.01


def test_product_targets_kl_is_d_times_kl1_and_matches_the_d_dim_gaussian() -> None:
    sch = dc.li_yan_schedule(80)
    factor = dc.mixture_1d([1.0], [0.0], [0.4])
    for d in (1, 3, 17):
        assert dc.product_kl(factor, d, sch) == pytest.approx(d * dc.grid_law(factor, sch).kl, rel=1e-12)
        exact = dc.gaussian_output_law(dc.gaussian(np.zeros(d), 0.4), sch).kl
        assert dc.product_kl(factor, d, sch) == pytest.approx(exact, rel=1e-5)


def test_axis_mixture_law_matches_monte_carlo_in_several_dimensions() -> None:
    target = dc.axis_mixture(5, 1.5, 0.3)
    sch = dc.li_yan_schedule(15)
    law = dc.axis_mixture_law(target, sch)
    y = dc.sample(target, sch, 100_000, rng=3)
    assert np.var(y[:, 1:], axis=0).mean() == pytest.approx(law.perp_var, rel=0.01)
    mean_along = float(np.sum(law.along.x * law.along.p) * law.along.dx)
    sd_along = math.sqrt(float(np.sum(law.along.x**2 * law.along.p) * law.along.dx))
    assert abs(y[:, 0].mean() - mean_along) < 5 * sd_along / math.sqrt(y.shape[0])
    # KL adds over the two parts; identity covariance makes the complement exact
    assert law.kl == pytest.approx(law.kl_along + 4 * law.kl_per_perp_direction)
    one = dc.axis_mixture_law(dc.axis_mixture(1, 1.5, 1.0), sch).kl
    many = dc.axis_mixture_law(dc.axis_mixture(50, 1.5, 1.0), sch).kl
    assert many == one
    # TV of the joint law: between the 1-D TV and the TV bound from KL (Pinsker)
    tv = law.tv()
    assert law.along.tv <= tv + 1e-9 and tv <= math.sqrt(law.kl / 2)


def test_steps_for_tv_finds_the_smallest_T() -> None:
    def tv(T: int) -> float:
        return 3.0 / T

    assert dc.steps_for_tv(0.1, tv, T_lo=2) == (30, pytest.approx(0.1))
    assert dc.steps_for_tv(0.099, tv, T_lo=2)[0] == 31
    with pytest.raises(ValueError, match="still above eps"):
        dc.steps_for_tv(1e-9, tv, T_lo=2, T_hi=64)


def test_smoothness_proxy_grows_with_the_mixture_separation_and_is_seeded() -> None:
    sch = dc.li_yan_schedule(100)
    gauss = dc.smoothness_proxy(dc.gaussian(np.zeros(3), 0.25), sch, 500, 0, 16)
    near = dc.smoothness_proxy(dc.axis_mixture(3, 1.0, 0.25), sch, 500, 0, 16)
    far = dc.smoothness_proxy(dc.axis_mixture(3, 4.0, 0.25), sch, 500, 0, 16)
    assert gauss.value <= 1 + 1e-9 and gauss.q99 <= 1 + 1e-9
    assert far.q99 > near.q99 > 1.5
    again = dc.smoothness_proxy(dc.axis_mixture(3, 1.0, 0.25), sch, 500, 0, 16)
    assert again.value == near.value and again.q99 == near.q99
    # the structured (rank-K) route equals the full Jacobian's eigenvalues
    full = dc.GaussianMixture(np.array([0.5, 0.5]), np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([0.3, 0.5]))
    assert dc.smoothness_proxy(full, sch, 300, 0, 8).value <= 1.0 + 1e-9
