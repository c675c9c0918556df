"""Baselines a demand analyst would use instead, each returning (K, 2) ``(alpha_hat, beta_hat)`` or (K,)
``beta_hat``.

- :func:`pooled_ols`: one regression over every task and period, ``y ~ 1 + X + p + p X`` (slopes vary with
  the covariates only): transfer by pooling.
- :func:`per_task_ols`: ``y ~ 1 + p`` within each task over its T periods (no transfer; unbiased when the
  within-task price variation is exogenous, but few and close prices make it noisy).
- :func:`mixed_model`: statsmodels' random intercept and random price slope per task with fixed effects
  ``1 + X + p + p X`` (the BLUPs); assumes the random effects independent of the prices.
- :func:`linear_dml`: econml's ``LinearDML`` with price as a continuous treatment and the covariates as
  effect modifiers (``beta(X)`` linear in X); residualises on X only, so latent fundamentals stay confounders.
The covariate-only meta-learner and the one that sees the masked outcomes are configurations of
:func:`~.metalearner.fit_meta`.
"""

from __future__ import annotations

import numpy as np

from .generator import DemandPanel

__all__ = ["linear_dml", "mixed_model", "per_task_ols", "pooled_ols"]


def _design(panel: DemandPanel) -> tuple[np.ndarray, np.ndarray]:
    K, T = panel.prices.shape
    Xr = np.repeat(panel.X, T, axis=0)
    p = panel.prices.reshape(-1, 1)
    return np.hstack([np.ones((K * T, 1)), Xr, p, p * Xr]), panel.demand.ravel()


def pooled_ols(panel: DemandPanel) -> np.ndarray:
    """(K, 2) from the pooled regression ``y ~ 1 + X + p + p X`` (module docstring)."""
    D, y = _design(panel)
    coef, *_ = np.linalg.lstsq(D, y, rcond=None)
    d = panel.X.shape[1]
    alpha = coef[0] + panel.X @ coef[1 : 1 + d]
    beta = coef[1 + d] + panel.X @ coef[2 + d :]
    return np.stack([alpha, beta], axis=1)


def per_task_ols(panel: DemandPanel) -> np.ndarray:
    """(K, 2) per-task least squares of demand on price, in closed form for every task at once."""
    p, y = panel.prices, panel.demand
    pc = p - p.mean(axis=1, keepdims=True)
    beta = (pc * (y - y.mean(axis=1, keepdims=True))).sum(1) / (pc**2).sum(1)
    alpha = y.mean(1) - beta * p.mean(1)
    return np.stack([alpha, beta], axis=1)


def mixed_model(panel: DemandPanel) -> np.ndarray:
    """(K, 2) statsmodels MixedLM (random intercept and price slope per task) fixed + random effects."""
    import statsmodels.api as sm

    K, T = panel.prices.shape
    D, y = _design(panel)
    groups = np.repeat(np.arange(K), T)
    exog_re = np.stack([np.ones(K * T), panel.prices.ravel()], axis=1)
    model = sm.MixedLM(y, D, groups=groups, exog_re=exog_re)
    res = model.fit(method=["lbfgs"], reml=True)
    d = panel.X.shape[1]
    fe = np.asarray(res.fe_params)
    re = np.array([np.asarray(res.random_effects[k]) for k in range(K)])
    alpha = fe[0] + panel.X @ fe[1 : 1 + d] + re[:, 0]
    beta = fe[1 + d] + panel.X @ fe[2 + d :] + re[:, 1]
    return np.stack([alpha, beta], axis=1)


def linear_dml(panel: DemandPanel, *, seed: int = 0) -> np.ndarray:
    """(K,) ``beta_hat(X_k)`` from econml's ``LinearDML`` (linear nuisance models, 2-fold cross-fitting)."""
    from econml.dml import LinearDML
    from sklearn.linear_model import LinearRegression

    K, T = panel.prices.shape
    Xr = np.repeat(panel.X, T, axis=0)
    est = LinearDML(model_y=LinearRegression(), model_t=LinearRegression(), cv=2, random_state=seed)
    groups = np.repeat(np.arange(K), T)
    est.fit(panel.demand.ravel(), panel.prices.ravel(), X=Xr, groups=groups)
    return np.asarray(est.const_marginal_effect(panel.X)).reshape(K)
