import numpy as np
import pytest
import torch
from torch import nn

from paperworks.boost_reweight import (
    BoostConfig,
    DialogueTaskConfig,
    InnerConfig,
    check_pool,
    exact_success,
    generate,
    merge,
    train_boost,
    train_weighted,
)

CFG = DialogueTaskConfig()


class Bisection(nn.Module):
    """A hand-written expert for the real environment, reading the policy's observation."""

    def forward(self, x):
        k, n = CFG.n_types, CFG.n_max
        ty = x[:, :k].argmax(1)
        ans = x[:, k : k + n - 1]
        out = torch.full((x.shape[0], CFG.n_actions), -1.0)
        for r in range(x.shape[0]):
            lo, hi = 0, CFG.ranges[int(ty[r])] - 1
            for t in range(1, n):
                if ans[r, t - 1] > 0:
                    hi = min(hi, t - 1)
                elif ans[r, t - 1] < 0:
                    lo = max(lo, t)
            out[r, n - 1 + lo if lo >= hi else (lo + hi + 1) // 2 - 1] = 1.0
        return out


def test_exact_success_of_the_bisection_expert_is_one_and_of_a_constant_guess_is_its_prior():
    assert exact_success(Bisection(), CFG) == pytest.approx(1.0)

    class Guess0(nn.Module):
        def forward(self, x):
            out = torch.zeros(x.shape[0], CFG.n_actions)
            out[:, CFG.n_max - 1] = 1.0
            return out

    expected = np.mean([1 / r for r in CFG.ranges])
    assert exact_success(Guess0(), CFG) == pytest.approx(expected)


def test_generator_truth_and_semantics():
    g = np.random.default_rng(0)
    real = generate(DialogueTaskConfig(real_eps=0.0), 200, g, real=True)
    assert real.success.all() and (real.delta == 0).all()  # the noiseless expert always succeeds
    syn = generate(CFG, 400, g, real=False, delta_probs=(0.25, 0.25, 0.25, 0.25), id_prefix="s")
    assert set(np.unique(syn.delta)) == {0, 1, 2, 3}
    assert np.allclose(syn.realism, 1 - syn.delta / 3) and np.allclose(syn.quality, 1 - syn.eps)
    # quality drives in-sim success; the shifted simulators' experts still succeed in their own sim
    hi, lo = syn.eps < 0.2, syn.eps > 0.8
    assert syn.success[hi].mean() > syn.success[lo].mean() + 0.2
    assert syn.success[(syn.delta == 3) & hi].mean() > 0.6
    # one seed, one pool
    a = generate(CFG, 20, np.random.default_rng(5), real=False)
    b = generate(CFG, 20, np.random.default_rng(5), real=False)
    assert torch.equal(a.obs, b.obs) and torch.equal(a.act, b.act)


def test_check_pool_errors():
    pool = generate(CFG, 6, np.random.default_rng(1), real=True)
    check_pool(pool, CFG.obs_dim, CFG.n_actions)
    with pytest.raises(ValueError, match="vocabular"):
        check_pool(pool, CFG.obs_dim + 1, CFG.n_actions)
    with pytest.raises(ValueError, match="vocabular"):
        check_pool(pool, CFG.obs_dim, 10)
    bad = pool.subset(np.arange(6))
    bad.mask = bad.mask.clone()
    bad.mask[2] = 0
    with pytest.raises(ValueError, match="no agent turns"):
        check_pool(bad, CFG.obs_dim, CFG.n_actions)
    nan = pool.subset(np.arange(6))
    nan.obs = nan.obs.clone()
    nan.obs[0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        check_pool(nan, CFG.obs_dim, CFG.n_actions)
    with pytest.raises(ValueError, match="collide"):
        merge(pool, pool)


def test_training_is_repeatable_and_boost_checks_leakage_and_empty_validation():
    g = np.random.default_rng(2)
    pool = merge(
        generate(CFG, 8, g, real=True, id_prefix="r"), generate(CFG, 24, g, real=False, id_prefix="s")
    )
    kw = {"obs_dim": CFG.obs_dim, "n_actions": CFG.n_actions, "seed": 0}
    ic = InnerConfig(steps=20)
    a = train_weighted(pool, np.ones(len(pool)), ic, **kw)
    b = train_weighted(pool, np.ones(len(pool)), ic, **kw)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    leak = pool.subset(np.flatnonzero(~pool.is_real)[:4])
    with pytest.raises(ValueError, match="synthetic pool"):
        train_boost(pool, leak, ic, BoostConfig(), max_turns=CFG.max_turns, **kw)
    with pytest.raises(ValueError, match="empty"):
        train_boost(pool, pool.subset(np.arange(0)), ic, BoostConfig(), max_turns=CFG.max_turns, **kw)
    with pytest.raises(ValueError, match="temperature"):
        BoostConfig(temperature=0.0)
    with pytest.raises(ValueError, match="weights"):
        train_weighted(pool, np.full(len(pool), np.nan), ic, **kw)


def test_head_stays_near_uniform_when_synthetic_equals_real_and_spreads_under_shift():
    """Identical real and synthetic sources (noiseless experts, so nothing tells trajectories apart): the
    weights stay near uniform; shifted sources of mixed quality spread them."""
    ic, bc = InnerConfig(steps=100), BoostConfig(head_lr=0.003, warmup=10)

    def spread(synthetic_is_real: bool) -> float:
        cfg = DialogueTaskConfig(real_eps=0.0 if synthetic_is_real else 0.1)
        kw = {"obs_dim": cfg.obs_dim, "n_actions": cfg.n_actions, "seed": 0}
        g = np.random.default_rng(11)
        real = generate(cfg, 24, g, real=True, id_prefix="r")
        val = generate(cfg, 24, g, real=True, id_prefix="v")
        if synthetic_is_real:
            syn = generate(cfg, 120, g, real=True, id_prefix="s")
            syn.is_real = np.zeros(len(syn), dtype=bool)
        else:
            syn = generate(cfg, 120, g, real=False, delta_probs=(0.4, 0.2, 0.2, 0.2), id_prefix="s")
        pool = merge(real, syn)
        _, rw, feats = train_boost(pool, val, ic, bc, max_turns=cfg.max_turns, **kw)
        w = rw.weights(feats[torch.as_tensor(~pool.is_real)])
        return float(w.std() / w.mean())

    same, shifted = spread(True), spread(False)
    assert same < 0.15
    assert shifted > 3 * same
