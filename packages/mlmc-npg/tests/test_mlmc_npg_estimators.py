"""Plug-in and MLMC weight estimators against closed forms for Gaussian return estimates."""

import math

import numpy as np
import pytest

from paperworks.mlmc_npg import (
    GaussianReturns,
    MLMCEstimator,
    exponential_utility,
    kinked_utility,
    mlmc_max_level,
    plugin_weights,
)

KAPPA = 1.5
MU = np.array([0.4, 1.0])
SD = np.array([0.8, 0.5])


def exp_plugin_mean(B: float) -> np.ndarray:
    """E[kappa exp(-kappa J_hat_B)] for J_hat_B ~ N(mu, sd^2 / B): the log-normal mean."""
    return KAPPA * np.exp(-KAPPA * MU + 0.5 * KAPPA**2 * SD**2 / B)


def test_plugin_bias_matches_closed_form_smooth():
    f = exponential_utility(2, KAPPA)
    est = plugin_weights(f, GaussianReturns(MU, SD), 8, rng=0, calls=200_000)
    se = est.weights.std(axis=0) / math.sqrt(200_000)
    assert np.all(np.abs(est.weights.mean(axis=0) - exp_plugin_mean(8)) < 4 * se)
    assert np.all(exp_plugin_mean(8) > f.grad(MU))  # a real bias, of order 1/B


@pytest.mark.parametrize("B", [4, 16, 64])
def test_plugin_bias_at_the_kink_matches_closed_form(B):
    # J_hat ~ N(c, sd^2/B): E[(c - J_hat)_+] = sd / sqrt(2 pi B), so bias = kappa sd / sqrt(2 pi B)
    f = kinked_utility(MU, kappa=KAPPA)
    n = 400_000
    est = plugin_weights(f, GaussianReturns(MU, SD), B, rng=B, calls=n)
    bias = est.weights.mean(axis=0) - f.grad(MU)
    exact = KAPPA * SD / math.sqrt(2 * math.pi * B)
    se = est.weights.std(axis=0) / math.sqrt(n)
    assert np.all(np.abs(bias - exact) < 4 * se)
    assert est.rollouts == n * B


def test_untruncated_mlmc_is_unbiased():
    f = exponential_utility(2, KAPPA)
    n = 400_000
    est = MLMCEstimator(f, max_level=None)(GaussianReturns(MU, SD), rng=1, calls=n)
    se = est.weights.std(axis=0) / math.sqrt(n)
    assert np.all(np.abs(est.weights.mean(axis=0) - f.grad(MU)) < 4 * se)
    # the plug-in at the same sample size as the base level is visibly biased
    assert np.all(exp_plugin_mean(1) - f.grad(MU) > 20 * se)


@pytest.mark.parametrize("L", [1, 3, 6])
def test_truncated_mlmc_mean_is_the_plugin_at_2_to_the_L_max(L):
    f = exponential_utility(2, KAPPA)
    n = 300_000
    mlmc = MLMCEstimator(f, max_level=L)
    est = mlmc(GaussianReturns(MU, SD), rng=L, calls=n)
    se = est.weights.std(axis=0) / math.sqrt(n)
    target = exp_plugin_mean(2**L)  # telescoping: E = E grad f(J_hat_{2^L})
    assert np.all(np.abs(est.weights.mean(axis=0) - target) < 4 * se)
    bound = np.abs(target - f.grad(MU))  # its bias bound: the plug-in's at 2^L_max rollouts
    assert np.all(np.abs(est.weights.mean(axis=0) - f.grad(MU)) < bound + 4 * se)
    if 2**L > mlmc.expected_cost:  # beyond L = 2 the MLMC bias beats the plug-in's at equal cost
        assert np.all(bound < np.abs(exp_plugin_mean(mlmc.expected_cost) - f.grad(MU)))


def test_mlmc_expected_cost_and_levels():
    f = kinked_utility([0.0, 0.0])
    mlmc = MLMCEstimator(f, max_level=5)
    p = mlmc.level_probabilities
    assert p.shape == (5,) and math.isclose(p.sum(), 1.0) and np.allclose(p[:-1] / p[1:], 2.0)
    assert math.isclose(mlmc.expected_cost, 1 + 5 / (1 - 2**-5))
    assert math.isclose(mlmc.expected_cost, 1 + float(p @ 2.0 ** np.arange(1, 6)))
    calls = 100_000
    est = mlmc(lambda n, g: g.standard_normal((n, 2)), rng=0, calls=calls)  # no half_means shortcut
    assert abs(est.rollouts / calls - mlmc.expected_cost) < 0.05 * mlmc.expected_cost
    assert math.isinf(MLMCEstimator(f, None).expected_cost)


def test_max_level_tied_to_the_budget():
    assert [mlmc_max_level(b) for b in (1, 2, 3, 4, 5, 256, 4096)] == [1, 2, 3, 3, 4, 9, 13]
    assert [mlmc_max_level(b, offset=0) for b in (1, 2, 4096)] == [1, 1, 12]
    for b in (1, 7, 100, 4096):  # truncation bias = the plug-in's at >= 2^offset * b rollouts
        level = mlmc_max_level(b, 1)
        assert 2 ** (level - 1) < 2 * b <= 2**level
    with pytest.raises(ValueError, match="batch"):
        mlmc_max_level(0)
    with pytest.raises(ValueError, match="offset"):
        mlmc_max_level(4, offset=-1)


def test_estimators_are_seeded():
    f = exponential_utility(2)
    s = GaussianReturns(MU, SD)
    a = MLMCEstimator(f, 6)(s, rng=3, calls=10).weights
    b = MLMCEstimator(f, 6)(s, rng=3, calls=10).weights
    assert np.array_equal(a, b)


def test_bad_inputs():
    f = exponential_utility(2)
    with pytest.raises(ValueError, match="max_level"):
        MLMCEstimator(f, max_level=0)
    with pytest.raises(TypeError, match="f: expected a ConcaveScalarization"):
        MLMCEstimator(lambda j: j, 3)
    with pytest.raises(ValueError, match="sampler: expected an array of shape"):
        plugin_weights(f, lambda n, g: np.zeros((n, 3)), 3, rng=0)
    with pytest.raises(ValueError, match="batch"):
        plugin_weights(f, GaussianReturns(MU, SD), 0)
    with pytest.raises(ValueError, match="sd"):
        GaussianReturns(MU, [-1.0, 1.0])
