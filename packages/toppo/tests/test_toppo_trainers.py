import numpy as np
import pytest
import torch

from paperworks.core import torch_threads
from paperworks.toppo.ppo import MultiTaskPPO, PPOConfig
from paperworks.toppo.sac import MultiTaskSAC, SACConfig, TwinQ
from paperworks.toppo.tasks import DEFAULT_TASKS

SMALL = dict(n_per_task=2, n_steps=16, minibatches=2, epochs=1)


@pytest.mark.parametrize(
    "cfg",
    [
        PPOConfig(**SMALL),
        PPOConfig.vanilla(**SMALL),
        PPOConfig(actor_combiner="cagrad", critic_combiner="pcgrad", **SMALL),
    ],
)
def test_ppo_runs_records_diagnostics_and_repeats(cfg):
    with torch_threads(1):
        runs = [
            MultiTaskPPO(DEFAULT_TASKS, cfg, seed=3).train(320, eval_at=(0.5, 1.0), eval_episodes=1)
            for _ in range(2)
        ]
    assert set(runs[0]["eval"]) == {0.5, 1.0}
    np.testing.assert_array_equal(runs[0]["eval"][1.0], runs[1]["eval"][1.0])
    d = runs[0]["diagnostics"][0]
    assert d["condition_number"] >= 1 and -1 <= d["mean_cosine"] <= 1


def test_sac_runs_and_repeats():
    cfg = SACConfig(n_per_task=2, batch_size=16, learning_starts=20, buffer_size=1000, gradient_steps=3)
    with torch_threads(1):
        a = MultiTaskSAC(DEFAULT_TASKS, cfg, seed=1).train(100, eval_episodes=1)
        b = MultiTaskSAC(DEFAULT_TASKS, cfg, seed=1).train(100, eval_episodes=1)
    # 10 vector steps of 10 environments; updates from the second (20 steps stored) on, 3 per vector step
    assert a["updates"] == 3 * 9
    np.testing.assert_array_equal(a["eval"][1.0], b["eval"][1.0])


def test_twin_q_members_are_independent_mlps():
    torch.manual_seed(0)
    q = TwinQ(5, (8, 8))
    obs, act = torch.randn(7, 5), torch.randn(7, 1)
    out = q(obs, act)
    x = torch.cat([obs, act], -1)
    for j in range(2):
        h = x
        for layer, (w, b) in enumerate(zip(q.w, q.b, strict=True)):
            h = h @ w[j] + b[j, 0]
            h = torch.relu(h) if layer < 2 else h
        torch.testing.assert_close(out[j], h.squeeze(-1))
    assert not torch.allclose(out[0], out[1])


def test_sac_fused_losses_reach_only_their_own_parameters():
    """One backward of the summed losses = each loss's gradient on its own parameters: the actor's loss
    must not move the critics (detached weights), the critics' loss must not move the actor."""
    cfg = SACConfig(n_per_task=2, batch_size=32, learning_starts=20, buffer_size=1000)
    with torch_threads(1):
        agent = MultiTaskSAC(DEFAULT_TASKS, cfg, seed=0)
        agent.train(60, eval_at=(), eval_episodes=1)
        batch = torch.as_tensor(agent._buf[:32])
        torch.manual_seed(5)
        q_loss, actor_loss, alpha_loss = agent.losses(batch)
        q_params, a_params = list(agent.q.parameters()), list(agent.actor.parameters())

        def grads(loss, params):
            return torch.autograd.grad(loss, params, allow_unused=True, retain_graph=True)

        assert all(g is None for g in grads(actor_loss, q_params))
        assert all(g is None for g in grads(q_loss, a_params))
        assert all(g is None for g in grads(alpha_loss, a_params + q_params))
        g_actor = torch.autograd.grad(actor_loss, a_params, retain_graph=True)
        agent.opt.zero_grad()
        (q_loss + actor_loss + alpha_loss).backward()
        for p, g in zip(a_params, g_actor, strict=True):
            torch.testing.assert_close(p.grad, g)
        assert agent.log_alpha.grad is not None and agent.log_alpha.grad.abs().sum() > 0


def test_sac_log_prob_matches_torch_distributions():
    from torch.distributions import Normal, TanhTransform, TransformedDistribution

    torch.manual_seed(0)
    agent = MultiTaskSAC(DEFAULT_TASKS, SACConfig(n_per_task=1), seed=0)
    obs = torch.randn(64, agent.env.obs_dim)
    torch.manual_seed(1)
    a, logp = agent.actor(obs)
    mu, log_std = agent.actor.head(agent.actor.body(obs)).chunk(2, -1)
    dist = TransformedDistribution(Normal(mu, log_std.clamp(-5, 2).exp()), [TanhTransform()])
    keep = a.abs().squeeze(-1) < 0.999  # away from the saturated ends where atanh is ill-conditioned
    ref = dist.log_prob(a).sum(-1)
    torch.testing.assert_close(logp[keep], ref[keep], rtol=1e-4, atol=1e-4)


def test_configs_and_bad_input():
    assert PPOConfig().without("popart").popart is False
    assert PPOConfig().without("combiners").critic_combiner == "mean"
    with pytest.raises(ValueError, match="module"):
        PPOConfig().without("entropy")
    with pytest.raises(ValueError, match="actor_combiner"):
        PPOConfig(actor_combiner="mgda")
    with pytest.raises(ValueError, match="gamma"):
        PPOConfig(gamma=1.5)
    with pytest.raises(ValueError, match="lr"):
        SACConfig(lr=0.0)
    with pytest.raises(TypeError, match="config"):
        MultiTaskPPO(DEFAULT_TASKS, SACConfig())
    with pytest.raises(ValueError, match="total_steps"):
        MultiTaskPPO(DEFAULT_TASKS, PPOConfig(**SMALL)).train(0)
