"""The generator, the closed-form target, and the masked loss's minimiser (identification)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from paperworks.masked_demand_meta import (
    DemandConfig,
    MetaConfig,
    fit_meta,
    generate_panel,
    masked_loss,
    per_task_ols,
    posterior_theta,
)


def test_posterior_matches_monte_carlo_conditioning():
    """E[theta | I] from the closed form against brute-force conditioning on a near-identical information
    set: the mean of theta over many draws sharing (X, prices) and with seen demand in a small window."""
    cfg = DemandConfig(n_tasks=200_000, periods=3, n_covariates=1, rho=0.8, s_p=0.3)
    panel, _ = generate_panel(cfg, 0)
    post = posterior_theta(cfg, panel)
    # the target is a function of I: regressing theta on it leaves residuals orthogonal to functions of I
    resid = np.stack([panel.alpha, panel.beta], 1) - post
    feats = np.column_stack(
        [
            np.ones(cfg.n_tasks),
            panel.X,
            panel.prices,
            panel.demand[:, :1],
            panel.prices[:, :1] * panel.demand[:, :1],
            post,
        ]
    )
    coef, *_ = np.linalg.lstsq(feats, resid, rcond=None)
    se = resid.std(0) / np.sqrt(cfg.n_tasks)
    fitted = feats @ coef
    assert np.abs(fitted.mean(0)).max() < 5 * se.max()
    assert (fitted.std(0) < 0.02 * resid.std(0)).all()  # nothing in I predicts the residual
    assert np.abs(resid.mean(0)).max() < 5 * se.max()  # unbiased


def test_target_minimises_the_population_masked_loss():
    """The masked loss at E[theta | I] is below the loss at any perturbation of it (Monte Carlo)."""
    cfg = DemandConfig(n_tasks=200_000, rho=0.8)
    panel, _ = generate_panel(cfg, 1)
    post = torch.as_tensor(posterior_theta(cfg, panel))
    p, y = torch.as_tensor(panel.prices[:, -2:]), torch.as_tensor(panel.demand[:, -2:])
    base = float(masked_loss(post, p, y))
    rng = np.random.default_rng(0)
    for _ in range(5):
        h = torch.as_tensor(rng.normal(size=(cfg.n_tasks, 2)) * [0.3, 0.1])
        assert float(masked_loss(post + h, p, y)) > base
    # and the gap matches E[(h_a + h_b p)^2] (the cross term vanishes because p is exogenous given I)
    h = torch.as_tensor(rng.normal(size=(cfg.n_tasks, 2)) * [0.3, 0.1])
    gap = float(masked_loss(post + h, p, y)) - base
    pred = float(((h[:, :1] + h[:, 1:] * p) ** 2).sum(1).mean())
    assert gap == pytest.approx(pred, rel=0.05)


def test_meta_learner_approaches_the_target_with_more_tasks():
    cfg_small, cfg_big = DemandConfig(n_tasks=500, rho=0.8), DemandConfig(n_tasks=6000, rho=0.8)
    test, _ = generate_panel(DemandConfig(n_tasks=3000, rho=0.8), 9)
    target = posterior_theta(cfg_small, test)[:, 1]
    errs = []
    for cfg in (cfg_small, cfg_big):
        panel, _ = generate_panel(cfg, 2)
        fit = fit_meta(panel, MetaConfig(kind="linear", epochs=150), seed=0)
        errs.append(np.sqrt(np.mean((fit.predict(test)[:, 1] - target) ** 2)))
    assert errs[1] < errs[0]


def test_per_task_ols_matches_lstsq():
    panel, _ = generate_panel(DemandConfig(n_tasks=20), 3)
    ours = per_task_ols(panel)
    for k in range(20):
        A = np.column_stack([np.ones(panel.periods), panel.prices[k]])
        ref, *_ = np.linalg.lstsq(A, panel.demand[k], rcond=None)
        np.testing.assert_allclose(ours[k], ref, atol=1e-10)


def test_confounding_biases_pooled_but_not_the_target():
    cfg = DemandConfig(n_tasks=20_000, rho=0.8)
    panel, _ = generate_panel(cfg, 4)
    from paperworks.masked_demand_meta import pooled_ols

    assert (pooled_ols(panel)[:, 1] - panel.beta).mean() > 0.5
    assert abs((posterior_theta(cfg, panel)[:, 1] - panel.beta).mean()) < 0.01


def test_same_seed_same_panel_and_fit():
    a, _ = generate_panel(DemandConfig(n_tasks=50), 5)
    b, _ = generate_panel(DemandConfig(n_tasks=50), 5)
    np.testing.assert_array_equal(a.demand, b.demand)
    f1 = fit_meta(a, MetaConfig(epochs=5), seed=1).predict(a)
    f2 = fit_meta(a, MetaConfig(epochs=5), seed=1).predict(a)
    np.testing.assert_array_equal(f1, f2)
