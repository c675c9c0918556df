import pytest
import torch

from paperworks.toppo.networks import LNCritic
from paperworks.toppo.popart import MultiHeadValue, PopArt, popart_preserve


def test_popart_preserves_unnormalised_outputs_across_a_statistics_update():
    torch.manual_seed(0)
    critic = LNCritic(7, 3, (16, 16), layer_norm=True, popart=True)
    obs, ids = torch.randn(50, 7), torch.randint(0, 3, (50,))
    before = critic.value(obs, ids).detach()
    for scale in (1.0, 100.0, 0.01):
        targets = scale * torch.randn(40) + 5 * scale
        critic.head.update(targets, torch.randint(0, 3, (40,)))
        after = critic.value(obs, ids).detach()
        torch.testing.assert_close(after, before, rtol=1e-5, atol=1e-5 * (1 + before.abs().max()))
    # the statistics did move, so the normalised outputs changed
    assert not torch.allclose(critic(obs, ids), before)


def test_first_update_takes_batch_moments_and_absent_tasks_keep_theirs():
    head = PopArt(4, 3, beta=0.1)
    y = torch.tensor([1.0, 3.0, 10.0, 30.0])
    head.update(y, torch.tensor([0, 0, 1, 1]))
    torch.testing.assert_close(head.mu, torch.tensor([2.0, 20.0, 0.0]))
    torch.testing.assert_close(head.sigma, torch.tensor([1.0, 10.0, 1.0]))
    head.update(torch.tensor([4.0, 4.0]), torch.tensor([0, 0]))
    assert head.mu[0] == pytest.approx(3.0)  # beta_t = max(beta, 1/t): the mean of the two batch means
    for _ in range(20):
        head.update(torch.tensor([4.0]), torch.tensor([0]))
    before = float(head.mu[0])
    head.update(torch.tensor([14.0]), torch.tensor([0]))
    assert float(head.mu[0]) == pytest.approx(0.9 * before + 0.1 * 14.0)  # then an EMA with beta
    assert head.mu[1] == pytest.approx(20.0)


def test_zero_variance_is_floored():
    head = PopArt(4, 2, sigma_floor=1e-3)
    head.update(torch.full((8,), 7.0), torch.zeros(8, dtype=torch.long))
    assert head.sigma[0] == pytest.approx(1e-3)
    assert torch.isfinite(head.normalise(torch.tensor([7.5]), torch.tensor([0]))).all()


def test_functional_twin_matches_and_bad_input():
    w, b = torch.randn(2, 3), torch.randn(2)
    mu, sig, mu2, sig2 = (
        torch.tensor([0.0, 1.0]),
        torch.tensor([1.0, 2.0]),
        torch.tensor([3.0, -1.0]),
        torch.tensor([4.0, 0.5]),
    )
    nw, nb = popart_preserve(w, b, mu, sig, mu2, sig2)
    h = torch.randn(3)
    torch.testing.assert_close(sig2 * (nw @ h + nb) + mu2, sig * (w @ h + b) + mu)
    head = MultiHeadValue(3, 2)
    with pytest.raises(ValueError, match="task_ids"):
        head(torch.randn(4, 3), torch.tensor([0, 1, 2, 0]))
    with pytest.raises(ValueError, match="task_ids"):
        head(torch.randn(1, 3), torch.tensor([-1]))
    with pytest.raises(TypeError, match="task_ids"):
        head(torch.randn(1, 3), torch.tensor([0.0]))
    with pytest.raises(ValueError, match="h"):
        head(torch.randn(4, 5), torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match="targets"):
        PopArt(3, 2).update(torch.tensor([float("nan")]), torch.tensor([0]))


def test_layer_norm_and_parameter_counts():
    a = LNCritic(9, 5, (64, 64), layer_norm=True, popart=True)
    b = LNCritic(9, 5, (64, 64), layer_norm=False, popart=False)
    na = sum(p.numel() for p in a.parameters())
    nb = sum(p.numel() for p in b.parameters())
    assert na - nb == 2 * (64 + 64)
    assert sum(buf.numel() for buf in a.head.buffers()) == 3 * 5
    assert any(isinstance(m, torch.nn.LayerNorm) for m in a.body)
    assert not any(isinstance(m, torch.nn.LayerNorm) for m in b.body)
