"""Fisher consistency: minimising the population PENEX risk recovers P(y|x) through the read-out."""

import math

import pytest
import torch

from paperworks.penex import penex_log_probabilities, penex_loss, penex_minimiser, penex_probabilities


def population_risk(f, p, alpha, rho):
    """E_{y ~ p(.|x)} PENEX(f(x), y), summed over x: rows of f and p are the points x."""
    k = p.shape[1]
    ys = torch.arange(k)
    total = 0.0
    for j in range(k):  # expectation over the label, weighted by p(j|x)
        per = penex_loss(f, ys[j].expand(f.shape[0]), sensitivity=alpha, penalty=rho, reduction="none")
        total = total + (p[:, j] * per).sum()
    return total


@pytest.mark.parametrize(("alpha", "rho"), [(1.0, 1.0), (0.1, 0.01), (0.5, 0.1), (2.0, 3.0)])
def test_minimising_population_risk_recovers_conditional(alpha, rho):
    g = torch.Generator().manual_seed(7)
    p = torch.softmax(torch.randn(5, 4, generator=g, dtype=torch.float64) * 1.5, dim=1)
    rho_ = rho
    f = torch.zeros(5, 4, dtype=torch.float64, requires_grad=True)
    for _ in range(60):  # Newton steps: the implementation's gradient, the formula's (diagonal) curvature
        f.grad = None
        population_risk(f, p, alpha, rho_).backward()
        with torch.no_grad():
            curvature = alpha**2 * p * torch.exp(-alpha * f) + rho_ * torch.exp(f)
            f -= f.grad / curvature
    assert float(f.grad.abs().max()) < 1e-9
    recovered = penex_probabilities(f.detach(), alpha)
    assert torch.allclose(recovered, p, atol=1e-6)
    # the plain softmax of the same logits is miscalibrated (too flat) unless alpha -> 0
    assert not torch.allclose(torch.softmax(f.detach(), 1), p, atol=1e-2)
    # and the numerical minimiser equals the closed form
    assert torch.allclose(f.detach(), penex_minimiser(p, alpha, rho), atol=1e-6)


def test_minimiser_with_rho_equal_alpha_gives_log_probabilities():
    p = torch.tensor([[0.7, 0.2, 0.1]], dtype=torch.float64)
    f = penex_minimiser(p, sensitivity=1.5, penalty=1.5)
    assert torch.allclose((1 + 1.5) * f, torch.log(p))
    # another rho shifts every logit by log(alpha / rho) / (1 + alpha): the read-out is unchanged
    g = penex_minimiser(p, 1.5, 0.2)
    assert torch.allclose(g - f, torch.full_like(f, math.log(1.5 / 0.2) / 2.5))
    assert torch.allclose(penex_probabilities(g, 1.5), p)


def test_readout_shapes_and_log_probabilities():
    f = torch.randn(3, 4, 2)
    p = penex_probabilities(f, 0.5)
    assert p.shape == f.shape and torch.allclose(p.sum(1), torch.ones(3, 2))
    assert torch.allclose(penex_log_probabilities(f, 0.5).exp(), p, atol=1e-6)
    v = penex_probabilities(torch.tensor([0.0, math.log(2.0) / 2]), 1.0)
    assert torch.allclose(v, torch.tensor([1 / 3, 2 / 3]))


def test_readout_needs_the_sensitivity():
    with pytest.raises(TypeError):
        penex_probabilities(torch.ones(2, 2))  # no hidden default alpha
