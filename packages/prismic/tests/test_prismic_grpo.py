"""GRPO maths against hand computations (DeepSeekMath eq. 3, outcome supervision)."""

import math

import pytest
import torch

from paperworks.prismic import GRPOConfig, GRPOLoss, group_advantages, grpo_loss, k3_kl


def test_group_advantages_by_hand():
    r = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.5, 0.5, 0.5, 0.5], [3.0, 0.0, 0.0, 0.0]])
    a = group_advantages(r, eps=0.0 + 1e-12)
    # group 1: mean 0.5, population std 0.5 -> +-1
    assert torch.allclose(a[0], torch.tensor([1.0, -1.0, -1.0, 1.0]), atol=1e-6)
    # equal rewards -> advantage 0
    assert torch.all(a[1] == 0)
    # group 3: mean 0.75, std sqrt(mean((x-0.75)^2)) = sqrt((2.25^2 + 3 * 0.75^2) / 4)
    std = math.sqrt((2.25**2 + 3 * 0.75**2) / 4)
    assert torch.allclose(a[2], (torch.tensor([3.0, 0, 0, 0]) - 0.75) / std, atol=1e-6)
    assert torch.allclose(a.mean(1), torch.zeros(3), atol=1e-6)


def test_k3_kl_by_hand_and_nonnegative():
    logp = torch.tensor([-0.5, -1.0, -2.0])
    ref = torch.tensor([-0.7, -1.0, -0.1])
    d = ref - logp
    assert torch.allclose(k3_kl(logp, ref), torch.exp(d) - d - 1)
    assert k3_kl(logp, ref)[1] == 0
    assert (k3_kl(-torch.rand(100) * 3, -torch.rand(100) * 3) >= 0).all()


def _loss_by_hand(logp, old, ref, adv, eps, beta):
    """Scalar loops over groups, outputs and tokens: -mean_i 1/|o| sum_t [min(r A, clip(r) A) - beta KL]."""
    b, g, t = logp.shape
    total = 0.0
    for i in range(b):
        for j in range(g):
            s = 0.0
            for k in range(t):
                r = math.exp(logp[i, j, k] - old[i, j, k])
                a = float(adv[i, j])
                clipped = min(max(r, 1 - eps), 1 + eps)
                d = float(ref[i, j, k] - logp[i, j, k])
                s += min(r * a, clipped * a) - beta * (math.exp(d) - d - 1)
            total += s / t
    return -total / (b * g)


def test_grpo_loss_matches_hand_computation():
    gen = torch.Generator().manual_seed(0)
    logp = -torch.rand(2, 3, 4, generator=gen)
    old = -2.0 * torch.rand(2, 3, 4, generator=gen)  # ratios well outside [0.8, 1.2]
    ref = -torch.rand(2, 3, 4, generator=gen)
    adv = torch.randn(2, 3, generator=gen)
    got = grpo_loss(logp, old, ref, adv, clip_eps=0.2, beta=0.04)
    assert got.item() == pytest.approx(_loss_by_hand(logp, old, ref, adv, 0.2, 0.04), rel=1e-5)
    assert GRPOLoss(0.2, 0.04)(logp, old, ref, adv).item() == pytest.approx(got.item())


def test_clipping_stops_the_gradient_only_where_it_should():
    # one token, ratio r = e^{0.5} ~ 1.65 > 1.2: with A > 0 the clipped term is the min -> no gradient;
    # with A < 0 the unclipped term r*A is the min -> gradient -A * r (of -J w.r.t. logp)
    for adv, expect_zero in ((1.0, True), (-1.0, False)):
        logp = torch.tensor([[[0.0]]], requires_grad=True)
        old = torch.tensor([[[-0.5]]])
        loss = grpo_loss(logp, old, logp.detach(), torch.tensor([[adv]]), clip_eps=0.2, beta=0.0)
        loss.backward()
        r = math.exp(0.5)
        if expect_zero:
            assert logp.grad.item() == 0.0
            assert loss.item() == pytest.approx(-1.2 * adv)
        else:
            assert logp.grad.item() == pytest.approx(-adv * r, rel=1e-6)
            assert loss.item() == pytest.approx(-r * adv, rel=1e-6)


def test_on_policy_gradient_is_the_policy_gradient():
    # at ratio 1 and beta 0 the gradient of -J is -A/|o| per token (REINFORCE with group advantages)
    logp = torch.tensor([[[-0.3, -1.2], [-0.7, -0.1]]], requires_grad=True)
    adv = torch.tensor([[1.0, -1.0]])
    grpo_loss(logp, logp.detach(), logp.detach(), adv).backward()
    assert torch.allclose(logp.grad, torch.tensor([[[-0.25, -0.25], [0.25, 0.25]]]))


def test_mask_averages_over_real_tokens_only():
    logp = torch.zeros(1, 2, 3)
    adv = torch.tensor([[1.0, 1.0]])
    mask = torch.tensor([[[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]]])
    assert grpo_loss(logp, logp, logp, adv, mask=mask).item() == pytest.approx(-1.0)


def test_bad_inputs_are_named():
    x = torch.zeros(2, 3, 4)
    with pytest.raises(ValueError, match="advantages"):
        grpo_loss(x, x, x, torch.zeros(2, 4))
    with pytest.raises(ValueError, match="logp_old"):
        grpo_loss(x, torch.zeros(2, 3, 5), x, torch.zeros(2, 3))
    with pytest.raises(ValueError, match="rewards"):
        group_advantages(torch.tensor([[float("nan"), 1.0]]))
    with pytest.raises(ValueError, match="group_size"):
        GRPOConfig(group_size=1)
    with pytest.raises(ValueError, match="clip_eps"):
        GRPOLoss(clip_eps=1.5)
